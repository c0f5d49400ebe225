/* arch.c — the `architecture:` section in Timeloop's core form
 * (subtree/local) and in the v0.4 `nodes:` form (!Container, !Component,
 * !Parallel), flattened into storage levels plus one arithmetic level.
 *
 * Attribute semantics follow Timeloop's buffer model: word_bits from
 * datawidth (default 16); block_size (words per vector access) from width,
 * cluster_size and word_bits; size = depth * block_size words; effective
 * size = size / multiple_buffering. */
#include <config.h>

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "nestmap/arch.h"
#include "nestmap/compound.h"
#include "nestmap/energy.h"
#include "nestmap/estimate.h"
#include "nestmap/text.h"
#include "nestmap/workload.h"

#define DEFAULT_WORD_BITS 16 /* Timeloop's default when no datawidth is given */

int nm_arch_level(const nm_arch *arch, const char *name)
{
    for (int i = 0; i < arch->nlevels; i++)
        if (!strcmp(arch->level[i].name, name))
            return i;
    for (int i = 0; i < arch->nlevels; i++)
        if (arch->level[i].container[0] && !strcmp(arch->level[i].container, name))
            return i;
    return -1;
}

int nm_arch_target(const nm_arch *arch, const char *name, int spatial)
{
    if (spatial)
        for (int i = 0; i < arch->nlevels; i++)
            if (!strcmp(arch->level[i].container, name))
                return i;
    return nm_arch_level(arch, name);
}

const char *nm_arch_suggest_level(const nm_arch *arch, const char *name)
{
    const char *cands[NM_MAX_LEVELS];
    for (int i = 0; i < arch->nlevels; i++)
        cands[i] = arch->level[i].name;
    return nm_text_suggest(name, cands, (size_t)arch->nlevels);
}

/* Splits "PE[0..167]" into "PE" and a count of 168 (1 without a range). */
static nm_status split_name(const nm_ynode *n, char *base, int64_t *count, nm_error *err)
{
    const char *s = n->str;
    const char *br = strchr(s, '[');
    size_t len = br ? (size_t)(br - s) : strlen(s);
    if (len == 0)
        return nm_yerror(err, n, "component name is empty");
    if (len >= NM_NAME_MAX)
        return nm_yerror(err, n, "name '%s' is longer than %d characters", s, NM_NAME_MAX - 1);
    memcpy(base, s, len);
    base[len] = '\0';
    *count = 1;
    if (!br)
        return NM_OK;
    long long lo, hi;
    int used = 0;
    if (sscanf(br, "[%lld..%lld]%n", &lo, &hi, &used) != 2 || br[used] != '\0' || hi < lo ||
        lo < 0 || hi - lo >= NM_MAX_FANOUT)
        return nm_yerror(err, n, "name '%s': a range must look like [0..15]", s);
    *count = hi - lo + 1;
    return NM_OK;
}

static int is_storage_class(const char *cls)
{
    static const char *const k[] = {"DRAM", "SRAM", "regfile", "smartbuffer", "storage",
                                    "buffer", "register", "fifo", "cache"};
    return nm_text_has_any(cls, k, sizeof k / sizeof *k);
}

static int is_compute_class(const char *cls)
{
    static const char *const k[] = {"mac", "compute", "multiplier", "adder", "alu"};
    return nm_text_has_any(cls, k, sizeof k / sizeof *k);
}

/* Attributes that change the model.  A misspelling of one of these is an
 * error with a suggestion. */
static const char *const model_attrs[] = {
    "depth", "width", "datawidth", "word_bits", "word_width", "block_size", "n_words",
    "cluster_size", "entries", "memory_depth", "memory_width", "data_storage_depth",
    "data_storage_width", "sizeKB", "multiple_buffering", "min_utilization", "meshX", "meshY",
    "instances", "read_bandwidth", "write_bandwidth", "shared_bandwidth", "bandwidth",
    "vector_access_energy", "addr_gen_energy", "energy", "technology", "multiplier_width",
    "adder_width", "exponent", "mantissa", "role",
    /* networks between levels (noc.h) */
    "network_read", "network_fill", "network_update", "network_drain", "network_operand",
    "network_result", "energy_per_hop", "router_energy", "wire_energy", "tile_width",
    "energy-per-ingress", "network_word_bits", "network_type", "reduction_supported",
    "hop_count", "decompression_supported", "compression_supported", "tensor_datawidth", NULL};

/* Attributes Timeloop and Accelergy (and its plug-ins) use for estimation
 * or bookkeeping; they do not change the model and are accepted quietly. */
static const char *const estimation_attrs[] = {
    "global_cycle_seconds", "has_power_gating", "power_gated_at", "n_banks",
    "num_banks", "n_ports", "num_ports", "nports", "allow_overbooking",
    "type", "update_fifo_depth", "version", "latency",
    "action_latency_cycles", "cycle_seconds", "area", "area_share", "n_rdwr_ports",
    "n_rd_ports", "n_wr_ports", "metadata_datawidth", "metadata_word_bits",
    "metadata_block_size", "metadata_storage_width", "metadata_storage_depth", "metadata_depth",
    "metadata_width", "leakage_power", "resolution", "voltage",
    "n_rows", "n_columns", "subclass", "n_instances", "ports", NULL};

static nm_status metadata_attrs(nm_level *L, nm_error *err);

static int in_list(const char *k, const char *const *list)
{
    for (; *list; list++)
        if (nm_text_key_equal(k, *list))
            return 1;
    return 0;
}

int nm_arch_attr_known(const char *key, const char **suggest)
{
    if (in_list(key, model_attrs) || in_list(key, estimation_attrs))
        return 1;
    size_t nmodel = 0;
    while (model_attrs[nmodel])
        nmodel++;
    *suggest = nm_text_suggest(key, model_attrs, nmodel);
    if (!*suggest) {
        size_t nest = 0;
        while (estimation_attrs[nest])
            nest++;
        *suggest = nm_text_suggest(key, estimation_attrs, nest);
    }
    return 0;
}

static nm_status check_attrs(const nm_ynode *attrs, const char *comp, nm_ydoc *doc, nm_error *err)
{
    size_t nmodel = 0;
    while (model_attrs[nmodel])
        nmodel++;
    for (size_t i = 0; i < attrs->n; i++) {
        const nm_ynode *k = nm_ymap_key(attrs, i);
        if (in_list(k->str, model_attrs) || in_list(k->str, estimation_attrs))
            continue;
        const char *s = nm_text_suggest(k->str, model_attrs, nmodel);
        if (s)
            return nm_yerror(err, k, "unknown attribute '%s' of '%s'; did you mean '%s'?",
                             k->str, comp, s);
        /* Accelergy plug-ins accept arbitrary attributes; they do not change
         * the model, but the user should know they were not used. */
        if (nm_ydoc_warn(doc, k, "attribute '%s' of '%s' is not used by nestmap's model",
                         k->str, comp) != NM_OK)
            return nm_error_set(err, NM_ERR_NOMEM, NULL, 0, 0, "out of memory");
    }
    return NM_OK;
}

static nm_status get_u32(const nm_ynode *attrs, const char *key, int *out, int *found,
                         nm_error *err)
{
    const nm_ynode *n = nm_ymap_get(attrs, key);
    *found = 0;
    if (!n || nm_yis_null(n))
        return NM_OK;
    int64_t v;
    char what[96];
    snprintf(what, sizeof what, "attribute '%s'", key);
    nm_status st = nm_yget_pos(n, what, &v, err);
    if (st != NM_OK)
        return st;
    if (v > (1 << 30))
        return nm_yerror(err, n, "%s is too large (%lld)", what, (long long)v);
    *out = (int)v;
    *found = 1;
    return NM_OK;
}


/* A bandwidth in words per cycle: positive and finite when given.  Written
 * in bytes per second ("400GB/s", nestmap's extension), it becomes words
 * per cycle with the level's word width and the design's clock. */
static nm_status get_bw(const nm_ynode *attrs, const char *key, const nm_level *L,
                        const nm_arch *arch, nm_ydoc *doc, double *out, int *found,
                        nm_error *err)
{
    const nm_ynode *n = nm_ymap_get(attrs, key);
    double bps;
    if (n && n->kind == NM_Y_SCALAR && !strcmp(n->str, "unlimited")) {
        *found = 0; /* said outright: no limit (nestmap's extension) */
        return NM_OK;
    }
    if (n && n->kind == NM_Y_SCALAR && nm_text_unit_value(n->str, "B/s", &bps)) {
        /* Without a clock, Timeloop's (and nestmap's) default of 1 GHz,
         * the one its seconds are reported at, said aloud. */
        if (!arch->clock_given && doc &&
            nm_ydoc_warn(doc, n, "'%s' of '%s': %s becomes words per cycle at the default "
                         "clock of 1 GHz; give global_cycle_seconds for the design's own", key,
                         L->name, n->str) != NM_OK)
            return nm_error_set(err, NM_ERR_NOMEM, NULL, 0, 0, "out of memory");
        *out = bps * arch->cycle_seconds * 8.0 / L->word_bits;
        *found = 1;
        return NM_OK;
    }
    nm_status st = nm_yget_attr_num(attrs, key, out, found, err);
    if (st == NM_OK && *found && !(*out > 0.0 && isfinite(*out)))
        return nm_yerror(err, nm_ymap_get(attrs, key),
                         "attribute '%s' must be a positive number of words per cycle (got %g) "
                         "or bytes per second (400GB/s); leave it out for no limit", key, *out);
    return st;
}

/* A depth written in bytes ("64KiB", nestmap's extension) as rows of the
 * level's block of words; *found 0 when the depth is not written so. */
static nm_status get_depth_bytes(const nm_ynode *attrs, const char *const *keys,
                                 const nm_level *L, int *depth, int *found, nm_error *err)
{
    *found = 0;
    for (; *keys; keys++) {
        const nm_ynode *n = nm_ymap_get(attrs, *keys);
        double bytes;
        if (!n || n->kind != NM_Y_SCALAR || !nm_text_unit_value(n->str, "B", &bytes))
            continue;
        double row_bits = (double)L->word_bits * L->block_size;
        double rows = bytes * 8.0 / row_bits;
        if (rows != floor(rows) || rows < 1 || rows > (double)(1 << 30))
            return nm_yerror(err, n, "'%s': %s is not a whole number of rows of %d x %d-bit "
                             "words (%g rows)", L->name, n->str, L->block_size, L->word_bits,
                             rows);
        *depth = (int)rows;
        *found = 1;
        return NM_OK;
    }
    return NM_OK;
}

/* First of several synonyms that is present. */
static nm_status get_u32_any(const nm_ynode *attrs, const char *const *keys, int *out,
                             int *found, nm_error *err)
{
    for (; *keys; keys++) {
        nm_status st = get_u32(attrs, *keys, out, found, err);
        if (st != NM_OK || *found)
            return st;
    }
    return NM_OK;
}

/* Mesh: meshX/meshY attributes; without them, defx columns (the enclosing
 * containers' meshX in the v0.4 form, all instances in one row otherwise). */
static nm_status mesh(const nm_ynode *at, const nm_ynode *attrs, int64_t instances, int64_t defx,
                      int64_t *mx, int64_t *my, nm_error *err)
{
    int x = 0, y = 0, fx, fy;
    nm_status st;
    if ((st = get_u32(attrs, "meshX", &x, &fx, err)) != NM_OK ||
        (st = get_u32(attrs, "meshY", &y, &fy, err)) != NM_OK)
        return st;
    if (!fx && !fy) {
        *mx = defx;
        *my = instances / defx;
    } else if (fx && !fy) {
        *mx = x;
        *my = instances / x;
    } else if (!fx && fy) {
        *my = y;
        *mx = instances / y;
    } else {
        *mx = x;
        *my = y;
    }
    if (*mx * *my != instances)
        return nm_yerror(err, at, "meshX x meshY (%lld x %lld) does not equal the %lld instances",
                         (long long)*mx, (long long)*my, (long long)instances);
    return NM_OK;
}

/* `tensor_datawidth: {NAME: BITS, ...}` (arch.h). */
static nm_status tensor_widths(nm_level *L, const nm_ynode *n, nm_error *err)
{
    L->ntw = 0;
    if (!n || nm_yis_null(n))
        return NM_OK;
    if (n->kind != NM_Y_MAP)
        return nm_yerror(err, n, "tensor_datawidth is a mapping of tensor names to their bits "
                         "(tensor_datawidth: {Outputs: 32})");
    if (n->n > NM_MAX_DS)
        return nm_yerror(err, n, "tensor_datawidth names more than %d tensors", NM_MAX_DS);
    for (size_t i = 0; i < n->n; i++) {
        const nm_ynode *k = n->items[2 * i], *v = n->items[2 * i + 1];
        if (!k->str || !k->str[0] || strlen(k->str) >= NM_NAME_MAX)
            return nm_yerror(err, k, "tensor_datawidth: a key is a tensor's name");
        int64_t bits;
        char what[NM_NAME_MAX + 32];
        snprintf(what, sizeof what, "the datawidth of '%s'", k->str);
        nm_status st = nm_yget_pos(v, what, &bits, err);
        if (st != NM_OK)
            return st;
        if (bits > 4096)
            return nm_yerror(err, v, "%s is too large (%lld bits)", what, (long long)bits);
        struct nm_tensor_width *t = &L->tw[L->ntw++];
        snprintf(t->name, sizeof t->name, "%s", k->str);
        t->bits = (int)bits;
        t->at = k;
    }
    return NM_OK;
}

int nm_level_ds_bits(const nm_level *L, const nm_workload *wl, int ds)
{
    for (int i = 0; i < L->ntw; i++)
        if (!strcmp(L->tw[i].name, wl->ds[ds].name))
            return L->tw[i].bits;
    return L->word_bits;
}

nm_status nm_arch_check_widths(const nm_arch *arch, const nm_workload *wl, nm_error *err)
{
    for (int s = 0; s < arch->nlevels; s++) {
        const nm_level *L = &arch->level[s];
        for (int i = 0; i < L->ntw; i++) {
            const char *name = L->tw[i].name;
            int known = 0;
            const char *cands[2 * NM_MAX_DS];
            size_t nc = 0;
            for (int ds = 0; ds < wl->nds; ds++) {
                known |= !strcmp(wl->ds[ds].name, name);
                cands[nc++] = wl->ds[ds].name;
            }
            for (int a = 0; a < wl->nabsent; a++)
                known |= !strcmp(wl->absent[a], name);
            if (!known) {
                const char *sug = nm_text_suggest(name, cands, nc);
                return nm_yerror(err, L->tw[i].at, "tensor_datawidth of %s: the workload has no "
                                 "tensor '%s'%s%s%s", L->name, name, sug ? "; did you mean '" : "",
                                 sug ? sug : "", sug ? "'?" : "");
            }
            if (arch->sparse.active)
                return nm_yerror(err, L->tw[i].at, "tensor_datawidth of %s: not with sparse "
                                 "optimizations (a representation format's payload_word_bits "
                                 "sets a tensor's width there)", L->name);
        }
    }
    return NM_OK;
}

static nm_status parse_storage(nm_level *L, const nm_arch *arch, nm_ydoc *doc,
                               const nm_ynode *attrs, nm_error *err)
{
    nm_status st;
    int found, v;
    static const char *const wb_keys[] = {"word_bits", "word_width", "datawidth", NULL};
    L->word_bits = DEFAULT_WORD_BITS;
    if ((st = get_u32_any(attrs, wb_keys, &v, &found, err)) != NM_OK)
        return st;
    if (found)
        L->word_bits = v;
    if ((st = tensor_widths(L, nm_ymap_get(attrs, "tensor_datawidth"), err)) != NM_OK)
        return st;
    static const char *const bs_keys[] = {"block_size", "n_words", NULL};
    int block_given = 0, cluster_given = 0, width = 0, width_given = 0;
    L->block_size = 1;
    L->cluster_size = 1;
    if ((st = get_u32_any(attrs, bs_keys, &v, &block_given, err)) != NM_OK)
        return st;
    if (block_given)
        L->block_size = v;
    if ((st = get_u32(attrs, "cluster_size", &v, &cluster_given, err)) != NM_OK)
        return st;
    if (cluster_given)
        L->cluster_size = v;
    static const char *const w_keys[] = {"width", "memory_width", "data_storage_width", NULL};
    if ((st = get_u32_any(attrs, w_keys, &width, &width_given, err)) != NM_OK)
        return st;
    if (width_given) {
        const nm_ynode *wn = nm_ymap_get(attrs, "width");
        if (width % (L->word_bits * L->block_size) != 0)
            return nm_yerror(err, wn ? wn : attrs,
                             "'%s': width %d is not a multiple of word bits x block size (%d x %d)",
                             L->name, width, L->word_bits, L->block_size);
        if (block_given && cluster_given) {
            if (L->block_size * L->word_bits * L->cluster_size != width)
                return nm_yerror(err, wn ? wn : attrs,
                                 "'%s': block_size x word bits x cluster_size (%d x %d x %d) "
                                 "must equal the width %d",
                                 L->name, L->block_size, L->word_bits, L->cluster_size, width);
        } else if (cluster_given) {
            L->block_size = width / L->cluster_size / L->word_bits;
            if (L->block_size < 1)
                return nm_yerror(err, wn ? wn : attrs,
                                 "'%s': width %d is narrower than cluster_size x word bits",
                                 L->name, width);
        } else if (block_given) {
            L->cluster_size = width / (L->word_bits * L->block_size);
        } else {
            L->block_size = width / L->word_bits;
            L->cluster_size = 1;
        }
    }
    if (L->instances % L->cluster_size != 0)
        return nm_yerror(err, attrs, "'%s': %lld instances are not a multiple of cluster_size %d",
                         L->name, (long long)L->instances, L->cluster_size);

    int depth = 0, dfound = 0, entries = 0, efound = 0, kb = 0, kbfound = 0;
    static const char *const d_keys[] = {"depth", "memory_depth", "data_storage_depth", NULL};
    if ((st = get_depth_bytes(attrs, d_keys, L, &depth, &dfound, err)) != NM_OK)
        return st;
    if ((st = get_u32(attrs, "entries", &entries, &efound, err)) != NM_OK ||
        (!dfound && (st = get_u32_any(attrs, d_keys, &depth, &dfound, err)) != NM_OK) ||
        (st = get_u32(attrs, "sizeKB", &kb, &kbfound, err)) != NM_OK)
        return st;
    if (efound) {
        L->has_size = 1;
        L->size = entries;
    } else if (dfound) {
        L->has_size = 1;
        L->size = (int64_t)depth * L->block_size;
    } else if (kbfound) {
        L->has_size = 1;
        L->size = (int64_t)kb * 1024 * 8 / L->word_bits;
    }
    double d;
    L->multiple_buffering = 1.0;
    if ((st = nm_yget_attr_num(attrs, "multiple_buffering", &d, &found, err)) != NM_OK)
        return st;
    if (found) {
        if (d < 1.0)
            return nm_yerror(err, nm_ymap_get(attrs, "multiple_buffering"),
                             "multiple_buffering must be at least 1 (got %g)", d);
        L->multiple_buffering = d;
    }
    if (L->has_size)
        L->effective_size = (int64_t)((double)L->size / L->multiple_buffering);
    if ((st = nm_yget_attr_num(attrs, "min_utilization", &d, &found, err)) != NM_OK)
        return st;
    L->min_utilization = found ? d : 0.0;
    if ((st = get_bw(attrs, "bandwidth", L, arch, doc, &d, &found, err)) != NM_OK)
        return st;
    if (found) { /* Timeloop: deprecated, split evenly between reads and writes */
        L->has_read_bw = L->has_write_bw = 1;
        L->read_bw = L->write_bw = d / 2;
    }
    if ((st = get_bw(attrs, "read_bandwidth", L, arch, doc, &d, &found, err)) != NM_OK)
        return st;
    if (found) {
        L->has_read_bw = 1;
        L->read_bw = d;
    }
    if ((st = get_bw(attrs, "write_bandwidth", L, arch, doc, &d, &found, err)) != NM_OK)
        return st;
    if (found) {
        L->has_write_bw = 1;
        L->write_bw = d;
    }
    if ((st = get_bw(attrs, "shared_bandwidth", L, arch, doc, &d, &found, err)) != NM_OK)
        return st;
    if (found) {
        L->has_shared_bw = 1;
        L->shared_bw = d;
    }
    L->bw_stated = L->has_read_bw || L->has_write_bw || L->has_shared_bw;
    for (int k = 0; !L->bw_stated && k < 4; k++) {
        static const char *const bw_keys[] = {"bandwidth", "read_bandwidth", "write_bandwidth",
                                              "shared_bandwidth"};
        const nm_ynode *b = nm_ymap_get(attrs, bw_keys[k]);
        L->bw_stated = b && b->kind == NM_Y_SCALAR && !strcmp(b->str, "unlimited");
    }
    if ((st = nm_yget_attr_num(attrs, "addr_gen_energy", &d, &found, err)) != NM_OK)
        return st;
    L->addr_gen_energy = found ? d : 0.0;
    if ((st = nm_yget_attr_num(attrs, "vector_access_energy", &d, &found, err)) != NM_OK)
        return st;
    if (found) {
        L->e_read = L->e_fill = L->e_update = d;
        L->vector_access_energy = d / L->cluster_size;
        L->esrc = NM_ESRC_USER;
    }
    const nm_ynode *tech = nm_ymap_get(attrs, "technology");
    L->is_dram = strstr(L->cls, "DRAM") != NULL ||
                 (tech && tech->kind == NM_Y_SCALAR && !strcmp(tech->str, "DRAM"));
    const nm_ynode *type = nm_ymap_get(attrs, "type");
    if (L->is_dram && type && !nm_yis_null(type)) {
        const char *t;
        nm_status tst = nm_yget_str(type, "DRAM type", &t, err);
        if (tst != NM_OK)
            return tst;
        snprintf(L->dram_type, sizeof L->dram_type, "%s", t);
        L->type_node = type;
    }
    L->dummy = strstr(L->cls, "dummy") != NULL;
    return NM_OK;
}

/* State while flattening the component tree (outermost first). */
struct flat {
    nm_arch *arch;
    nm_arch_hints hints;
    nm_ydoc *doc;
    int nstore;
    nm_level store[NM_MAX_LEVELS]; /* outermost first; reversed at the end */
    int have_arith;
    int nscope;                             /* enclosing subtrees / containers */
    const nm_ynode *scope[NM_MAX_SCOPES];   /* their `attributes` maps, outermost first */
    nm_ynode *constraints;                  /* v0.4 inline constraints as targets, or NULL */
    int nnets;                              /* explicit networks (class XY_NoC or Legacy) */
    nm_noc nets[NM_MAX_LEVELS * 2];
};

/* Accelergy hands an enclosing subtree's (or container's) attributes down
 * to its components: technology, datawidth, the clock, anything a plug-in
 * reads.  nestmap keeps the enclosing scopes' attribute maps on a stack;
 * a component's own attributes win, then the nearest scope's.  The clock
 * (`global_cycle_seconds`) is taken from the outermost scope that gives one.
 * Sets *saved to the depth to restore on leaving the scope. */
static nm_status enter_scope(struct flat *fl, const nm_ynode *scope, int *saved, nm_error *err)
{
    *saved = fl->nscope;
    const nm_ynode *attrs = nm_ymap_get(scope, "attributes");
    if (!attrs || attrs->kind != NM_Y_MAP)
        return NM_OK;
    if (fl->nscope >= NM_MAX_SCOPES)
        return nm_yerror(err, scope, "more than %d nested subtrees or containers", NM_MAX_SCOPES);
    fl->scope[fl->nscope++] = attrs;
    const nm_ynode *c = nm_ymap_get(attrs, "global_cycle_seconds");
    if (c && !nm_yis_null(c) && !fl->arch->clock_given) {
        double v;
        nm_status st = NM_OK;
        if (c->kind == NM_Y_SCALAR && nm_text_unit_value(c->str, "Hz", &v))
            return nm_yerror(err, c, "global_cycle_seconds is the clock's period, not its "
                             "frequency: for %s write %gns", c->str, 1e9 / v);
        if (c->kind != NM_Y_SCALAR || !nm_text_unit_value(c->str, "s", &v)) /* 1ns */
            st = nm_yget_num(c, "global_cycle_seconds", &v, err);
        if (st != NM_OK)
            return st;
        if (!(v > 0 && v < 1))
            return nm_yerror(err, c, "global_cycle_seconds must be a clock period in seconds, "
                             "e.g. 1e-9 or 1ns for 1 GHz (got %g)", v);
        fl->arch->cycle_seconds = v;
        fl->arch->clock_given = 1;
    }
    return NM_OK;
}

/* Attributes a scope describes itself with, not its components. */
static int scope_only(const char *key)
{
    static const char *const k[] = {"meshX", "meshY", "instances", "n_instances", NULL};
    for (const char *const *p = k; *p; p++)
        if (nm_text_key_equal(key, *p))
            return 1;
    return 0;
}

/* The attributes component `own` has in effect: its own, then those its
 * enclosing scopes hand down (nearest first).  The result lives in doc's
 * arena and points at the original nodes, so errors keep their places. */
static nm_status effective_attrs(struct flat *fl, const nm_ynode *own, const nm_ynode **out,
                                 nm_error *err)
{
    size_t cap = own->n;
    for (int i = 0; i < fl->nscope; i++)
        cap += fl->scope[i]->n;
    if (cap == own->n) {
        *out = own;
        return NM_OK;
    }
    nm_ynode *m = nm_arena_alloc(fl->doc->arena, sizeof *m);
    nm_ynode **items = m ? nm_arena_alloc(fl->doc->arena, (2 * cap + 1) * sizeof *items) : NULL;
    if (!items)
        return nm_error_set(err, NM_ERR_NOMEM, NULL, 0, 0, "out of memory");
    *m = *own;
    m->items = items;
    m->n = 0;
    for (size_t i = 0; i < own->n; i++) {
        items[2 * m->n] = own->items[2 * i];
        items[2 * m->n + 1] = own->items[2 * i + 1];
        m->n++;
    }
    for (int sc = fl->nscope - 1; sc >= 0; sc--) {
        const nm_ynode *a = fl->scope[sc];
        for (size_t i = 0; i < a->n; i++) {
            const nm_ynode *k = nm_ymap_key(a, i);
            if (scope_only(k->str) || nm_ymap_get(m, k->str))
                continue;
            items[2 * m->n] = a->items[2 * i];
            items[2 * m->n + 1] = a->items[2 * i + 1];
            m->n++;
        }
    }
    *out = m;
    return NM_OK;
}

/* Whether component `base` of class cls is storage or compute: by the
 * class name, else its `role` attribute, else what its compound class or
 * ERT entry says its actions are.  A class nothing places is an error with
 * a "did you mean" over the built-in and compound classes. */
static nm_status role(struct flat *fl, const char *base, const char *cls,
                      const nm_ynode *cls_node, const nm_ynode *attrs, int *storage,
                      int *compute, nm_error *err)
{
    *storage = is_storage_class(cls);
    *compute = !*storage && is_compute_class(cls);
    if (*storage || *compute)
        return NM_OK;
    const nm_ynode *r = nm_ymap_get(attrs, "role");
    if (r && !nm_yis_null(r)) {
        if (r->kind == NM_Y_SCALAR && (!strcmp(r->str, "storage") || !strcmp(r->str, "compute"))) {
            *compute = !strcmp(r->str, "compute");
            *storage = !*compute;
            return NM_OK;
        }
        return nm_yerror(err, r, "role must be 'storage' or 'compute' (got '%s')", r->str);
    }
    const nm_ynode *def = nm_compound_find(fl->hints.compound, cls);
    int c = def ? nm_compound_is_compute(def) : nm_energy_ert_role(fl->hints.ert, base);
    if (c >= 0) {
        *compute = c;
        *storage = !c;
        return NM_OK;
    }
    if (def || c == -2) /* defined, but its actions do not say */
        return nm_yerror(err, cls_node, "component '%s': say whether class '%s' stores or "
                         "computes with the attribute role: storage or role: compute", base,
                         cls);
    const char *guess = nm_compound_suggest(fl->hints.compound, cls);
    if (!guess)
        guess = nm_estimate_suggest(cls);
    if (guess)
        return nm_yerror(err, cls_node, "component '%s': unknown class '%s'; did you mean '%s'?",
                         base, cls, guess);
    return nm_yerror(err, cls_node,
                     "component '%s': class '%s' is neither built in (storage: DRAM, SRAM, "
                     "regfile, smartbuffer, storage; compute: mac, intmac, fpmac, compute) nor "
                     "defined in compound_components, and no ERT entry gives its actions",
                     base, cls);
}

/* An explicit network (noc.h): kept until finish() joins it to the levels
 * that name it. */
static nm_status add_network(struct flat *fl, const nm_ynode *comp, const char *base,
                             const char *cls, const nm_ynode *attrs, nm_error *err)
{
    if (fl->nnets >= (int)(sizeof fl->nets / sizeof *fl->nets))
        return nm_yerror(err, comp, "more than %d networks", (int)(sizeof fl->nets /
                                                                   sizeof *fl->nets));
    for (int i = 0; i < fl->nnets; i++)
        if (!strcmp(fl->nets[i].name, base))
            return nm_yerror(err, comp, "two networks are called '%s'", base);
    nm_noc *net = &fl->nets[fl->nnets];
    memset(net, 0, sizeof *net);
    nm_status st = nm_noc_parse(net, attrs, DEFAULT_WORD_BITS, err);
    if (st != NM_OK)
        return st;
    snprintf(net->name, sizeof net->name, "%s", base);
    snprintf(net->cls, sizeof net->cls, "%s", cls);
    net->node = comp;
    net->explicit_net = 1;
    fl->nnets++;
    return NM_OK;
}

static nm_status add_component(struct flat *fl, const nm_ynode *comp, const nm_ynode *name_node,
                               const char *base, int64_t instances, int64_t defx,
                               const nm_ynode *cls_node, const nm_ynode *attrs, nm_error *err)
{
    const char *cls = "";
    nm_status st;
    /* Mappings and constraints name levels: a name must be unique. */
    for (int l = 0; l < fl->nstore; l++)
        if (!strcmp(fl->store[l].name, base))
            return nm_yerror(err, name_node ? name_node : comp,
                             "a second component named '%s': mappings and constraints "
                             "name levels, so each name must be unique", base);
    if (!cls_node)
        return nm_yerror(err, comp, "component '%s' has no 'class'", base);
    if ((st = nm_yget_str(cls_node, "class", &cls, err)) != NM_OK)
        return st;
    static const nm_ynode empty_map = {.kind = NM_Y_MAP, .str = ""};
    if (!attrs || nm_yis_null(attrs))
        attrs = &empty_map;
    else if ((st = nm_yexpect(attrs, NM_Y_MAP, "attributes", err)) != NM_OK)
        return st;
    if ((st = check_attrs(attrs, base, fl->doc, err)) != NM_OK)
        return st;
    if ((st = effective_attrs(fl, attrs, &attrs, err)) != NM_OK)
        return st;
    if (!strcmp(cls, "XY_NoC") || !strcmp(cls, "Legacy"))
        return add_network(fl, comp, base, cls, attrs, err);
    if (strstr(cls, "ReductionTree") || strstr(cls, "SimpleMulticast"))
        return nm_yerror(err, cls_node, "component '%s': network class '%s' is not modelled "
                         "(nestmap models Timeloop's legacy networks: class XY_NoC or Legacy)",
                         base, cls);
    if (fl->have_arith)
        return nm_yerror(err, comp, "component '%s' comes after the arithmetic level '%s'; "
                         "storage levels must be listed outermost first, compute last",
                         base, fl->arch->arith.name);
    /* An explicit instance count must agree with the name's range. */
    const nm_ynode *inst_n = nm_ymap_get(attrs, "instances");
    if (inst_n && !nm_yis_null(inst_n)) {
        int64_t v;
        if ((st = nm_yget_pos(inst_n, "attribute 'instances'", &v, err)) != NM_OK)
            return st;
        if (instances != 1 && v != instances)
            return nm_yerror(err, inst_n, "'%s': instances %lld disagrees with the %lld its "
                             "name and enclosing subtrees give", base, (long long)v,
                             (long long)instances);
        if (v > NM_MAX_FANOUT)
            return nm_yerror(err, inst_n, "more than %d instances", NM_MAX_FANOUT);
        instances = v;
        if (defx == 1)
            defx = v;
    }
    int storage, compute;
    if ((st = role(fl, base, cls, cls_node, attrs, &storage, &compute, err)) != NM_OK)
        return st;
    if (strlen(cls) >= NM_NAME_MAX)
        return nm_yerror(err, cls_node, "class name is too long");
    int64_t mx, my;
    if ((st = mesh(name_node, attrs, instances, defx, &mx, &my, err)) != NM_OK)
        return st;
    /* Accelergy's `subclass` (beside `class`, or among the attributes)
     * names the primitive a generic `storage`/`compute` is made of. */
    const nm_ynode *own_tech = nm_ymap_get(attrs, "technology");
    if (own_tech && nm_yis_null(own_tech))
        own_tech = NULL;
    char subclass[NM_NAME_MAX] = "";
    const nm_ynode *sub = nm_ymap_get(comp, "subclass");
    if (!sub)
        sub = nm_ymap_get(attrs, "subclass");
    if (sub && !nm_yis_null(sub)) {
        const char *s;
        if ((st = nm_yget_str(sub, "subclass", &s, err)) != NM_OK)
            return st;
        if (strlen(s) >= NM_NAME_MAX)
            return nm_yerror(err, sub, "subclass name is too long");
        snprintf(subclass, sizeof subclass, "%s", s);
    }
    if (compute) {
        nm_arith *A = &fl->arch->arith;
        snprintf(A->name, NM_NAME_MAX, "%s", base);
        snprintf(A->cls, NM_NAME_MAX, "%s", cls);
        snprintf(A->subclass, NM_NAME_MAX, "%s", subclass);
        A->node = comp;
        A->cls_node = cls_node;
        A->attrs = attrs;
        A->tech = own_tech;
        A->instances = instances;
        A->meshX = mx;
        A->meshY = my;
        int v, found;
        static const char *const wb_keys[] = {"word_bits", "word_width", "datawidth", NULL};
        A->word_bits = DEFAULT_WORD_BITS;
        if ((st = get_u32_any(attrs, wb_keys, &v, &found, err)) != NM_OK)
            return st;
        if (found)
            A->word_bits = v;
        /* Operand widths for the built-in estimates: multiplier and adder
         * widths, else exponent + mantissa (floating point), else the
         * datapath width (datawidth, else `width`). */
        int mw = 0, aw = 0, ex = 0, ma = 0, w = 0, fw;
        if ((st = get_u32(attrs, "multiplier_width", &mw, &fw, err)) != NM_OK ||
            (st = get_u32(attrs, "adder_width", &aw, &fw, err)) != NM_OK ||
            (st = get_u32(attrs, "exponent", &ex, &fw, err)) != NM_OK ||
            (st = get_u32(attrs, "mantissa", &ma, &fw, err)) != NM_OK ||
            (!found && (st = get_u32(attrs, "width", &w, &fw, err)) != NM_OK))
            return st;
        int datapath = ex && ma ? ex + ma : w ? w : A->word_bits;
        A->mult_bits = mw ? mw : datapath;
        A->adder_bits = aw ? aw : datapath;
        if (A->mult_bits > 1024 || A->adder_bits > 1024)
            return nm_yerror(err, attrs, "'%s': operands wider than 1024 bits", base);
        double e;
        if ((st = nm_yget_attr_num(attrs, "energy", &e, &found, err)) != NM_OK)
            return st;
        if (found) {
            A->e_compute = e;
            A->esrc = NM_ESRC_USER;
        }
        fl->have_arith = 1;
        return NM_OK;
    }
    if (fl->nstore >= NM_MAX_LEVELS)
        return nm_yerror(err, comp, "more than %d storage levels", NM_MAX_LEVELS);
    for (int i = 0; i < fl->nstore; i++)
        if (!strcmp(fl->store[i].name, base))
            return nm_yerror(err, name_node, "two components are called '%s'", base);
    nm_level *L = &fl->store[fl->nstore];
    memset(L, 0, sizeof *L);
    snprintf(L->name, NM_NAME_MAX, "%s", base);
    snprintf(L->cls, NM_NAME_MAX, "%s", cls);
    snprintf(L->subclass, NM_NAME_MAX, "%s", subclass);
    L->node = comp;
    L->cls_node = cls_node;
    L->attrs = attrs;
    L->tech = own_tech;
    L->instances = instances;
    L->meshX = mx;
    L->meshY = my;
    if ((st = parse_storage(L, fl->arch, fl->doc, attrs, err)) != NM_OK)
        return st;
    fl->nstore++;
    return NM_OK;
}

/* ---- core form: subtree/local ---- */

static nm_status walk_subtree(struct flat *fl, const nm_ynode *tree, int64_t outer, int depth,
                              nm_error *err)
{
    static const char *const tkeys[] = {"name", "attributes", "local", "subtree", "version",
                                        NULL};
    static const char *const lkeys[] = {"name", "class", "subclass", "attributes",
                                        "required_actions", "enabled", "actions", NULL};
    nm_status st = nm_yexpect(tree, NM_Y_MAP, "a subtree", err);
    if (st != NM_OK || (st = nm_ycheck_keys(tree, tkeys, "a subtree", err)) != NM_OK)
        return st;
    if (depth > 32)
        return nm_yerror(err, tree, "subtrees nested too deeply");
    int64_t count = 1;
    char base[NM_NAME_MAX];
    const nm_ynode *tn = nm_ymap_get(tree, "name");
    if (tn && (st = split_name(tn, base, &count, err)) != NM_OK)
        return st;
    outer *= count;
    if (outer > NM_MAX_FANOUT)
        return nm_yerror(err, tn ? tn : tree, "more than %d instances", NM_MAX_FANOUT);
    int saved_scope;
    if ((st = enter_scope(fl, tree, &saved_scope, err)) != NM_OK)
        return st;
    const nm_ynode *local = nm_ymap_get(tree, "local");
    if (local && !nm_yis_null(local)) {
        if ((st = nm_yexpect(local, NM_Y_SEQ, "local", err)) != NM_OK)
            return st;
        for (size_t i = 0; i < local->n; i++) {
            const nm_ynode *c = local->items[i];
            if ((st = nm_yexpect(c, NM_Y_MAP, "a component", err)) != NM_OK ||
                (st = nm_ycheck_keys(c, lkeys, "a component", err)) != NM_OK)
                return st;
            const nm_ynode *en = nm_ymap_get(c, "enabled");
            int enabled = 1;
            if (en && (st = nm_yget_bool(en, "enabled", &enabled, err)) != NM_OK)
                return st;
            if (!enabled)
                continue;
            const nm_ynode *cn = nm_ymap_get(c, "name");
            if (!cn)
                return nm_yerror(err, c, "component has no 'name'");
            if ((st = nm_yexpect(cn, NM_Y_SCALAR, "a component name", err)) != NM_OK)
                return st;
            int64_t n = 1;
            if ((st = split_name(cn, base, &n, err)) != NM_OK)
                return st;
            /* Each instance of the enclosing subtrees holds the component's
             * own range (Timeloop's tree form: subtree counts times the
             * local name's range). */
            if (n > NM_MAX_FANOUT / outer)
                return nm_yerror(err, cn, "more than %d instances", NM_MAX_FANOUT);
            int64_t inst = outer * n;
            if ((st = add_component(fl, c, cn, base, inst, inst, nm_ymap_get(c, "class"),
                                    nm_ymap_get(c, "attributes"), err)) != NM_OK)
                return st;
        }
    }
    const nm_ynode *sub = nm_ymap_get(tree, "subtree");
    if (sub && !nm_yis_null(sub)) {
        if ((st = nm_yexpect(sub, NM_Y_SEQ, "subtree", err)) != NM_OK)
            return st;
        for (size_t i = 0; i < sub->n; i++)
            if ((st = walk_subtree(fl, sub->items[i], outer, depth + 1, err)) != NM_OK)
                return st;
    }
    fl->nscope = saved_scope;
    return NM_OK;
}

/* ---- v0.4 nodes form ---- */

/* timeloopfe's inline constraints: `constraints: {temporal: {...}, spatial:
 * {...}, dataspace: {...}}` on a node become architecture_constraints
 * targets ({target, type, ...}), kept in fl->constraints in the order
 * written.  `which` picks the kinds taken here: a fan-out's level takes the
 * spatial one, its component the rest.  The new entries share the written
 * nodes, so errors point at what the user wrote. */
enum { CK_SPATIAL = 1, CK_OTHER = 2 };

static nm_status read_constraints(struct flat *fl, const nm_ynode *node, const char *target,
                                  unsigned which, nm_error *err)
{
    static const char *const kinds[] = {"temporal", "spatial", "dataspace", "utilization", NULL};
    const nm_ynode *c = nm_ymap_get(node, "constraints");
    nm_status st;
    if (!c || nm_yis_null(c))
        return NM_OK;
    if ((st = nm_yexpect(c, NM_Y_MAP, "constraints", err)) != NM_OK ||
        (st = nm_ycheck_keys(c, kinds, "constraints", err)) != NM_OK)
        return st;
    for (size_t i = 0; i < c->n; i++) {
        const nm_ynode *k = nm_ymap_key(c, i), *v = nm_ymap_val(c, i);
        unsigned kind = nm_text_key_equal(k->str, "spatial") ? CK_SPATIAL : CK_OTHER;
        if (!(which & kind) || nm_yis_null(v))
            continue;
        if ((st = nm_yexpect(v, NM_Y_MAP, k->str, err)) != NM_OK)
            return st;
        if (nm_ymap_get(v, "target") || nm_ymap_get(v, "type"))
            return nm_yerror(err, v, "a constraint written on a node takes its target and type "
                             "from where it stands: drop 'target' and 'type'");
        nm_ynode *e = nm_ydoc_map_copy(fl->doc, v);
        nm_ynode *tn = e ? nm_ydoc_scalar(fl->doc, k, NULL, target) : NULL;
        nm_ynode *ty = tn ? nm_ydoc_scalar(fl->doc, k, NULL,
                                           kind == CK_SPATIAL ? "spatial" : k->str) : NULL;
        if (!fl->constraints && ty)
            fl->constraints = nm_ydoc_seq(fl->doc, c);
        if (!ty || !fl->constraints)
            return nm_error_set(err, NM_ERR_NOMEM, NULL, 0, 0, "out of memory");
        if (nm_ymap_set(fl->doc, e, "target", tn) != NM_OK ||
            nm_ymap_set(fl->doc, e, "type", ty) != NM_OK ||
            nm_yseq_append(fl->doc, fl->constraints, e) != NM_OK)
            return nm_error_set(err, NM_ERR_NOMEM, NULL, 0, 0, "out of memory");
    }
    return NM_OK;
}

/* Constraints a container holds that no level can take: timeloopfe keeps
 * only the spatial ones of a container with a fan-out, and drops the rest
 * with no word.  nestmap says so. */
static nm_status unused_constraints(struct flat *fl, const nm_ynode *node, const char *name,
                                    int fanout, nm_error *err)
{
    const nm_ynode *c = nm_ymap_get(node, "constraints");
    if (!c || c->kind != NM_Y_MAP)
        return NM_OK;
    for (size_t i = 0; i < c->n; i++) {
        const nm_ynode *k = nm_ymap_key(c, i);
        if ((fanout && nm_text_key_equal(k->str, "spatial")) || nm_yis_null(nm_ymap_val(c, i)))
            continue;
        if (nm_ydoc_warn(fl->doc, k, "container '%s': %s constraints have no level to "
                         "constrain (%s), and timeloopfe drops them too; put them on a "
                         "component", name, k->str,
                         fanout ? "a container stands only for its fan-out"
                                : "it has no fan-out") != NM_OK)
            return nm_error_set(err, NM_ERR_NOMEM, NULL, 0, 0, "out of memory");
    }
    return NM_OK;
}

/* A fan-out in the v0.4 form (a container's `spatial`, or a component's)
 * is a level of its own, as timeloopfe writes it for Timeloop: a dummy
 * storage level `inter_<name>_spatial` with the instances above the
 * fan-out, keeping no data, whose spatial loops spread over the fan-out.
 * Mappings and constraints name it by either name. */
static nm_status add_fanout_level(struct flat *fl, const nm_ynode *node, const nm_ynode *name_node,
                                  const char *name, int64_t outer, int64_t outer_x,
                                  nm_error *err)
{
    char dname[NM_NAME_MAX];
    if (snprintf(dname, sizeof dname, "inter_%s_spatial", name) >= (int)sizeof dname)
        return nm_yerror(err, name_node, "name '%s' is too long for its fan-out level "
                         "inter_%s_spatial", name, name);
    nm_ynode *cls = nm_ydoc_scalar(fl->doc, node, NULL, "dummy_storage");
    if (!cls)
        return nm_error_set(err, NM_ERR_NOMEM, NULL, 0, 0, "out of memory");
    nm_status st = add_component(fl, node, name_node, dname, outer, outer_x, cls, NULL, err);
    if (st != NM_OK)
        return st;
    snprintf(fl->store[fl->nstore - 1].container, NM_NAME_MAX, "%s", name);
    return read_constraints(fl, node, dname, CK_SPATIAL, err);
}

/* The fan-out a node's `spatial` (or, for a container, `attributes`) gives:
 * meshX x meshY. */
static nm_status node_fanout(const nm_ynode *n, int with_attrs, int64_t *x, int64_t *y,
                             nm_error *err)
{
    *x = *y = 1;
    for (int k = 0; k < 1 + with_attrs; k++) {
        const nm_ynode *src = nm_ymap_get(n, k ? "attributes" : "spatial");
        if (!src || nm_yis_null(src))
            continue;
        nm_status st = nm_yexpect(src, NM_Y_MAP, k ? "attributes" : "spatial", err);
        if (st != NM_OK)
            return st;
        if (!k) {
            static const char *const skeys[] = {"meshX", "meshY", NULL};
            if ((st = nm_ycheck_keys(src, skeys, "spatial", err)) != NM_OK)
                return st;
        }
        int v, fx, fy;
        if ((st = get_u32(src, "meshX", &v, &fx, err)) != NM_OK)
            return st;
        if (fx)
            *x *= v;
        if ((st = get_u32(src, "meshY", &v, &fy, err)) != NM_OK)
            return st;
        if (fy)
            *y *= v;
    }
    return NM_OK;
}

static nm_status walk_nodes(struct flat *fl, const nm_ynode *nodes, int64_t outer, int64_t outer_x,
                            int depth, nm_error *err)
{
    static const char *const ckeys[] = {"name", "class", "subclass", "attributes",
                                        "required_actions", "enabled", "spatial",
                                        "constraints", "actions", "sparse_optimizations",
                                        NULL};
    static const char *const kkeys[] = {"name", "attributes", "spatial", "constraints",
                                        "nodes", NULL};
    nm_status st = nm_yexpect(nodes, NM_Y_SEQ, "nodes", err);
    if (st != NM_OK)
        return st;
    if (depth > 32)
        return nm_yerror(err, nodes, "nodes nested too deeply");
    int saved_scope = fl->nscope;
    for (size_t i = 0; i < nodes->n; i++) {
        const nm_ynode *n = nodes->items[i];
        if ((st = nm_yexpect(n, NM_Y_MAP, "a node", err)) != NM_OK)
            return st;
        const char *tag = n->tag ? n->tag : "";
        if (!strcmp(tag, "!Container") || !strcmp(tag, "!Hierarchical")) {
            if ((st = nm_ycheck_keys(n, kkeys, "a container", err)) != NM_OK)
                return st;
            /* A container with a spatial mesh multiplies everything below
             * it, through a fan-out level of its own. */
            int64_t x, y;
            if ((st = node_fanout(n, 1, &x, &y, err)) != NM_OK)
                return st;
            const nm_ynode *cn = nm_ymap_get(n, "name");
            const char *cname = cn && cn->kind == NM_Y_SCALAR ? cn->str : "";
            if (x * y > 1) {
                if (!cname[0])
                    return nm_yerror(err, n, "a container with a fan-out needs a 'name': "
                                     "mappings name its spatial loops by it");
                if ((st = add_fanout_level(fl, n, cn, cname, outer, outer_x, err)) != NM_OK)
                    return st;
            }
            if ((st = unused_constraints(fl, n, cname, x * y > 1, err)) != NM_OK)
                return st;
            outer *= x * y;
            outer_x *= x;
            if (outer > NM_MAX_FANOUT)
                return nm_yerror(err, n, "more than %d instances", NM_MAX_FANOUT);
            /* A container encloses what follows it in the list (and what it
             * lists under its own `nodes`): its attributes stay in scope
             * until this list ends. */
            const nm_ynode *inner = nm_ymap_get(n, "nodes");
            int ignored;
            if ((st = enter_scope(fl, n, &ignored, err)) != NM_OK)
                return st;
            if (inner && (st = walk_nodes(fl, inner, outer, outer_x, depth + 1, err)) != NM_OK)
                return st;
        } else if (!strcmp(tag, "!Component")) {
            if ((st = nm_ycheck_keys(n, ckeys, "a component", err)) != NM_OK)
                return st;
            const nm_ynode *cn = nm_ymap_get(n, "name");
            if (!cn)
                return nm_yerror(err, n, "component has no 'name'");
            char base[NM_NAME_MAX];
            int64_t cnt;
            if ((st = nm_yexpect(cn, NM_Y_SCALAR, "a component name", err)) != NM_OK ||
                (st = split_name(cn, base, &cnt, err)) != NM_OK)
                return st;
            const nm_ynode *attrs = nm_ymap_get(n, "attributes");
            /* A component's own `spatial` puts a fan-out level above it;
             * the component and what follows it are that many. */
            int64_t x, y;
            if ((st = node_fanout(n, 0, &x, &y, err)) != NM_OK)
                return st;
            if (x * y > 1) {
                if ((st = add_fanout_level(fl, n, cn, base, outer, outer_x, err)) != NM_OK)
                    return st;
                outer *= x * y;
                outer_x *= x;
                if (outer > NM_MAX_FANOUT)
                    return nm_yerror(err, n, "more than %d instances", NM_MAX_FANOUT);
            }
            /* In the v0.4 form the enclosing containers set the mesh. */
            if ((st = add_component(fl, n, cn, base, outer, outer_x, nm_ymap_get(n, "class"),
                                    attrs, err)) != NM_OK)
                return st;
            if (fl->have_arith && !strcmp(fl->arch->arith.name, base)) {
                if (nm_ymap_get(n, "constraints") &&
                    !nm_yis_null(nm_ymap_get(n, "constraints")))
                    return nm_yerror(err, nm_ymap_get(n, "constraints"), "constraints on the "
                                     "arithmetic level '%s' constrain nothing: mappings target "
                                     "storage levels", base);
            } else if ((st = read_constraints(fl, n, base, x * y > 1 ? CK_OTHER :
                                              CK_OTHER | CK_SPATIAL, err)) != NM_OK) {
                return st;
            }
        } else if (!strcmp(tag, "!Nothing")) {
            /* timeloopfe's placeholder: a node that is not there. */
            continue;
        } else if (!strcmp(tag, "!Parallel")) {
            /* Sibling buffers that each hold some of the data spaces (an
             * input buffer beside a weight buffer).  nestmap places them as
             * consecutive levels of the one chain; the mapping's keep/bypass
             * says which data space each holds, and a bypassed level is
             * transparent to the others, so the counts are those of
             * siblings. */
            static const char *const pkeys[] = {"name", "nodes", "attributes", NULL};
            if ((st = nm_ycheck_keys(n, pkeys, "a !Parallel node", err)) != NM_OK)
                return st;
            const nm_ynode *inner = nm_ymap_get(n, "nodes");
            if (!inner)
                return nm_yerror(err, n, "a !Parallel node needs 'nodes' listing its siblings");
            if ((st = walk_nodes(fl, inner, outer, outer_x, depth + 1, err)) != NM_OK)
                return st;
        } else {
            return nm_yerror(err, n, "node needs a tag: !Container, !Component, !Parallel or "
                             "!Nothing (got '%s')",
                             n->tag ? n->tag : "no tag");
        }
    }
    fl->nscope = saved_scope;
    return NM_OK;
}

/* The name attribute `key` of a component, or NULL. */
static nm_status net_name(const nm_ynode *attrs, const char *key, const nm_ynode **at,
                          const char **name, nm_error *err)
{
    *name = NULL;
    *at = nm_ymap_get(attrs, key);
    if (!*at || nm_yis_null(*at))
        return NM_OK;
    return nm_yget_str(*at, key, name, err);
}

/* Level i's networks to its child: the ones it names (network_read,
 * network_update), which the child must name too (network_fill and
 * network_drain, or the arithmetic's network_operand and network_result),
 * else one inferred from its own attributes, as Timeloop connects them
 * (topology.cpp). */
static nm_status join_networks(struct flat *fl, int i, nm_error *err)
{
    nm_arch *arch = fl->arch;
    nm_level *L = &arch->level[i];
    const nm_ynode *child_attrs = i ? arch->level[i - 1].attrs : arch->arith.attrs;
    const char *child = i ? arch->level[i - 1].name : arch->arith.name;
    static const char *const outer_key[2] = {"network_read", "network_update"};
    static const char *const inner_key[2][2] = {{"network_fill", "network_drain"},
                                                {"network_operand", "network_result"}};
    nm_status st;
    L->nnet = 0;
    for (int dir = 0; dir < 2; dir++) {
        const nm_ynode *oat, *iat;
        const char *oname, *iname;
        const char *ikey = inner_key[i == 0][dir];
        if ((st = net_name(L->attrs, outer_key[dir], &oat, &oname, err)) != NM_OK ||
            (st = net_name(child_attrs, ikey, &iat, &iname, err)) != NM_OK)
            return st;
        if (!oname && iname)
            return nm_yerror(err, iat, "'%s' names network '%s' as its %s, but '%s' names no "
                             "%s", child, iname, ikey, L->name, outer_key[dir]);
        if (!oname) {
            if (dir == 1)
                break; /* the read network serves both ways */
            nm_noc *net = &L->net[0];
            memset(net, 0, sizeof *net);
            if ((st = nm_noc_parse(net, L->attrs, DEFAULT_WORD_BITS, err)) != NM_OK)
                return st;
            char name[sizeof net->name];
            snprintf(name, sizeof name, "%s <==> %s", L->name, child);
            memcpy(net->name, name, sizeof name);
            net->node = L->node;
            L->nnet = 1;
            continue;
        }
        const nm_noc *found = NULL;
        for (int n = 0; n < fl->nnets && !found; n++)
            if (!strcmp(fl->nets[n].name, oname))
                found = &fl->nets[n];
        if (!found)
            return nm_yerror(err, oat, "network '%s' not found: no component of class XY_NoC "
                             "or Legacy is called so", oname);
        if (!iname)
            return nm_yerror(err, oat, "'%s' names network '%s' as its %s, but its child '%s' "
                             "names no %s", L->name, oname, outer_key[dir], child, ikey);
        if (strcmp(iname, oname))
            return nm_yerror(err, iat, "'%s' names network '%s' as its %s, but '%s' names '%s' "
                             "as its %s: both ends must name the same network", child, iname,
                             ikey, L->name, oname, outer_key[dir]);
        if (dir == 1 && L->nnet == 1 && !strcmp(L->net[0].name, found->name))
            break; /* the same network both ways */
        L->net[dir] = *found;
        L->nnet = dir + 1;
    }
    L->net[0].directions = NM_NOC_READ_FILL | (L->nnet == 1 ? NM_NOC_UPDATE_DRAIN : 0);
    if (L->nnet == 2)
        L->net[1].directions = NM_NOC_UPDATE_DRAIN;
    L->reduces = !L->is_dram;
    const nm_ynode *r = nm_ymap_get(L->attrs, "reduction_supported");
    if (r && !nm_yis_null(r) &&
        (st = nm_yget_bool(r, "attribute 'reduction_supported'", &L->reduces, err)) != NM_OK)
        return st;
    return metadata_attrs(L, err);
}

/* A count attribute that may be 0 (metadata widths): the first of keys given. */
static nm_status get_count(const nm_ynode *attrs, const char *const *keys, int64_t *out,
                           nm_error *err)
{
    for (; *keys; keys++) {
        const nm_ynode *n = nm_ymap_get(attrs, *keys);
        if (!n || nm_yis_null(n))
            continue;
        char what[96];
        snprintf(what, sizeof what, "attribute '%s'", *keys);
        nm_status st = nm_yget_int(n, what, out, err);
        if (st != NM_OK)
            return st;
        if (*out < 0 || *out > (1 << 30))
            return nm_yerror(err, n, "%s must be between 0 and 2^30 (got %lld)", what,
                             (long long)*out);
        return NM_OK;
    }
    return NM_OK;
}

/* The metadata store and its (de)compression (sparse.h), as Timeloop's
 * buffer specs read them; all 0 by default. */
static nm_status metadata_attrs(nm_level *L, nm_error *err)
{
    static const char *const bits[] = {"metadata_datawidth", "metadata_word_bits", NULL};
    static const char *const width[] = {"metadata_storage_width", "metadata_width", NULL};
    static const char *const depth[] = {"metadata_storage_depth", "metadata_depth", NULL};
    int64_t v = 0;
    nm_status st = get_count(L->attrs, bits, &v, err);
    if (st != NM_OK)
        return st;
    L->md_word_bits = (int)v;
    v = 0;
    if ((st = get_count(L->attrs, width, &v, err)) != NM_OK)
        return st;
    L->md_width = (int)v;
    L->md_depth = 0;
    if ((st = get_count(L->attrs, depth, &L->md_depth, err)) != NM_OK)
        return st;
    static const char *const flags[] = {"decompression_supported", "compression_supported"};
    int *to[] = {&L->decompression_supported, &L->compression_supported};
    for (int i = 0; i < 2; i++) {
        const nm_ynode *n = nm_ymap_get(L->attrs, flags[i]);
        char what[96];
        snprintf(what, sizeof what, "attribute '%s'", flags[i]);
        if (n && !nm_yis_null(n) && (st = nm_yget_bool(n, what, to[i], err)) != NM_OK)
            return st;
    }
    return NM_OK;
}

static nm_status finish(struct flat *fl, const nm_ynode *node, nm_error *err)
{
    nm_arch *arch = fl->arch;
    if (fl->nstore == 0)
        return nm_yerror(err, node, "the architecture has no storage level");
    if (!fl->have_arith)
        return nm_yerror(err, node, "the architecture has no arithmetic level (class intmac, "
                         "fpmac, mac or compute)");
    arch->nlevels = fl->nstore;
    for (int i = 0; i < fl->nstore; i++)
        arch->level[i] = fl->store[fl->nstore - 1 - i];
    arch->constraints = fl->constraints;
    /* A container's name stands for its fan-out level: it must name
     * nothing else (a component with its own `spatial` sits right inside
     * its fan-out level and shares its name). */
    for (int i = 0; i < arch->nlevels; i++) {
        const char *c = arch->level[i].container;
        if (!c[0])
            continue;
        for (int j = 0; j < arch->nlevels; j++) {
            const nm_level *o = &arch->level[j];
            if (j != i && (!strcmp(o->container, c) || (!strcmp(o->name, c) && j != i - 1)))
                return nm_yerror(err, o->node, "'%s' names both a container and another "
                                 "component: mappings and constraints name levels, so each "
                                 "name must be unique", c);
        }
        if (!strcmp(arch->arith.name, c))
            return nm_yerror(err, arch->level[i].node, "a container and the arithmetic level "
                             "are both called '%s'", c);
    }
    /* Fan-out of level i: child instances over own, per axis. */
    for (int i = 0; i < arch->nlevels; i++) {
        nm_level *L = &arch->level[i];
        int64_t cx = i == 0 ? arch->arith.meshX : arch->level[i - 1].meshX;
        int64_t cy = i == 0 ? arch->arith.meshY : arch->level[i - 1].meshY;
        const char *child = i == 0 ? arch->arith.name : arch->level[i - 1].name;
        if (cx % L->meshX || cy % L->meshY)
            return nm_yerror(err, L->node,
                             "'%s' (mesh %lldx%lld) does not evenly divide its child '%s' "
                             "(mesh %lldx%lld)",
                             L->name, (long long)L->meshX, (long long)L->meshY, child,
                             (long long)cx, (long long)cy);
        L->fanoutX = cx / L->meshX;
        L->fanoutY = cy / L->meshY;
    }
    for (int i = 0; i < arch->nlevels; i++) {
        nm_status st = join_networks(fl, i, err);
        if (st != NM_OK)
            return st;
    }
    nm_arch_noc_update(arch);
    return NM_OK;
}

void nm_arch_noc_update(nm_arch *arch)
{
    arch->noc = 0;
    for (int i = 0; i < arch->nlevels; i++)
        for (int n = 0; n < arch->level[i].nnet; n++)
            arch->noc |= nm_noc_charged(&arch->level[i].net[n]);
}

nm_status nm_arch_parse(nm_arch *arch, const nm_ynode *node, const nm_arch_hints *hints,
                        nm_ydoc *doc, nm_error *err)
{
    memset(arch, 0, sizeof *arch);
    arch->cycle_seconds = 1e-9;
    nm_status st = nm_yexpect(node, NM_Y_MAP, "architecture", err);
    if (st != NM_OK)
        return st;
    static const char *const keys[] = {"version", "subtree", "nodes", "local", "name",
                                       "attributes", NULL};
    if ((st = nm_ycheck_keys(node, keys, "architecture", err)) != NM_OK)
        return st;
    struct flat *fl = nm_calloc(1, sizeof *fl);
    if (!fl)
        return nm_error_set(err, NM_ERR_NOMEM, NULL, 0, 0, "out of memory");
    fl->arch = arch;
    fl->doc = doc;
    if (hints)
        fl->hints = *hints;
    const nm_ynode *nodes = nm_ymap_get(node, "nodes");
    int top_scope;
    if ((st = enter_scope(fl, node, &top_scope, err)) != NM_OK) {
        nm_free(fl);
        return st;
    }
    if (nodes)
        st = walk_nodes(fl, nodes, 1, 1, 0, err);
    else if (nm_ymap_get(node, "subtree") || nm_ymap_get(node, "local"))
        st = walk_subtree(fl, node, 1, 0, err);
    else
        st = nm_yerror(err, node, "architecture needs 'subtree' (Timeloop's core form) or "
                       "'nodes' (the v0.4 form)");
    if (st == NM_OK)
        st = finish(fl, node, err);
    nm_free(fl);
    return st;
}
