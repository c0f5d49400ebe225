/* sparse.c — densities, gating and skipping (see sparse.h).
 *
 * Semantics learnt from Timeloop's sparse model (NVlabs/timeloop at commit
 * 4cf6d4c: src/sparse-analysis/storage-gs-analyzer.cpp,
 * storage-optimization-combiner.cpp, compute-gs-analyzer.cpp and
 * src/workload/density-models/) and pinned by the conformance corpus
 * (../shared/conformance/sparse, whose README describes them field by
 * field).  Written here; the rounding (which counts are floored, which
 * ceiled, which probabilities are rounded to six decimals) is Timeloop's,
 * since the counts must equal its.
 */
#include "nestmap/sparse.h"

#include "sparse_int.h"

#include <math.h>
#include <string.h>
#include <strings.h>

#include "nestmap/alloc.h"
#include "nestmap/text.h"

/* ---- density models ---- */

uint64_t nm_density_nnz(const nm_density *dm, uint64_t N)
{
    if (dm->kind == NM_DENSITY_BANDED)
        return dm->nnz;
    return (uint64_t)ceil(dm->d * (double)N);
}

nm_dtile nm_dtile_box(const nm_dataspace *ds, const int64_t *ext)
{
    nm_dtile t = {1, 0, 0};
    int64_t e[NM_MAX_RANKS];
    for (int r = 0; r < ds->nranks; r++) {
        e[r] = 1;
        for (int k = 0; k < ds->rank[r].nterms; k++)
            e[r] += ds->rank[r].term[k].coef * (ext[ds->rank[r].term[k].dim] - 1);
        t.n *= (uint64_t)e[r];
    }
    if (ds->nranks == 2) {
        t.rows = e[0];
        t.cols = e[1];
    }
    return t;
}

double nm_density_p_empty(const nm_density *dm, const nm_dtile *t, uint64_t N)
{
    if (t->n == 0)
        return 1.0;
    if (dm->kind == NM_DENSITY_FIXED) {
        /* s*d nonzeros, floor with probability 1 - frac, ceil with frac:
         * empty only when the floor is 0 */
        double exact = (double)t->n * dm->d;
        return floor(exact) == 0.0 ? 1.0 - (exact - floor(exact)) : 0.0;
    }
    if (dm->kind == NM_DENSITY_BANDED)
        return nm_band_p_empty(dm, t->rows, t->cols);
    return nm_hyper_p0(t->n, N, nm_density_nnz(dm, N));
}

double nm_density_expected(const nm_density *dm, uint64_t n, uint64_t N)
{
    if (dm->kind == NM_DENSITY_FIXED)
        return (double)n * dm->d;
    return N ? (double)n * (double)nm_density_nnz(dm, N) / (double)N : 0.0;
}

int nm_sparse_removes(const nm_arch *arch, const nm_workload *wl)
{
    if (!arch->sparse.active)
        return 0;
    for (int ds = 0; ds < wl->nds; ds++) {
        uint64_t N = nm_workload_ds_size(wl, ds);
        if (nm_density_expected(&wl->density[ds], N, N) < (double)N)
            return 1;
    }
    return 0;
}

const char *nm_density_name(const nm_density *dm)
{
    static const char *const name[] = {"fixed_structured", "hypergeometric", "banded"};
    return name[dm->kind];
}

/* ---- parsing ---- */

static nm_status unknown_tensor(nm_error *err, const nm_ynode *at, const nm_workload *wl,
                                const char *name, const char *what)
{
    const char *cands[NM_MAX_DS];
    for (int i = 0; i < wl->nds; i++)
        cands[i] = wl->ds[i].name;
    const char *s = nm_text_suggest(name, cands, (size_t)wl->nds);
    if (s)
        return nm_yerror(err, at, "%s '%s' is not a data space of the problem; did you mean "
                         "'%s'?", what, name, s);
    return nm_yerror(err, at, "%s '%s' is not a data space of the problem", what, name);
}

static nm_status tensor(const nm_ynode *n, const nm_workload *wl, const char *what, int *out,
                        nm_error *err)
{
    const char *s;
    nm_status st = nm_yget_str(n, what, &s, err);
    if (st != NM_OK)
        return st;
    *out = nm_workload_ds(wl, s);
    return *out < 0 ? unknown_tensor(err, n, wl, s, what) : NM_OK;
}

/* A banded density (Timeloop's: a square two-rank tensor; band_width, 0
 * when absent, elements each side of the diagonal; its density follows). */
static nm_status parse_band(nm_density *dm, const nm_ynode *v, const nm_ynode *dn,
                            const nm_workload *wl, int ds, nm_error *err)
{
    const nm_dataspace *dsp = &wl->ds[ds];
    nm_dtile whole = nm_dtile_box(dsp, wl->bound);
    const int64_t side[2] = {whole.rows, whole.cols};
    if (dsp->nranks != 2)
        return nm_yerror(err, dn, "a banded density needs a two-rank (matrix) tensor; '%s' "
                         "has %d ranks", dsp->name, dsp->nranks);
    if (side[0] != side[1])
        return nm_yerror(err, dn, "a banded density needs a square tensor (Timeloop's "
                         "model); '%s' is %lld x %lld", dsp->name, (long long)side[0],
                         (long long)side[1]);
    int64_t band = 0;
    const nm_ynode *bw = nm_ymap_get(v, "band_width");
    nm_status st;
    if (bw && !nm_yis_null(bw) && (st = nm_yget_int(bw, "band_width", &band, err)) != NM_OK)
        return st;
    if (band < 0)
        return nm_yerror(err, bw, "band_width must be 0 (a diagonal) or more, not %lld",
                         (long long)band);
    dm->kind = NM_DENSITY_BANDED;
    dm->band = band;
    dm->side = side[0];
    dm->nnz = nm_band_total(side[0], band);
    dm->d = (double)dm->nnz / ((double)side[0] * (double)side[0]);
    dm->given = 1;
    const nm_ynode *dv = nm_ymap_get(v, "density");
    double given;
    if (dv && !nm_yis_null(dv)) {
        if ((st = nm_yget_num(dv, "a density", &given, err)) != NM_OK)
            return st;
        if (fabs(given - dm->d) > 5e-7)
            return nm_yerror(err, dv, "a banded density follows from band_width: %lld "
                             "each side of the diagonal of '%s' (%lld x %lld) holds %llu "
                             "nonzeros, density %.6g, not %g; drop 'density'",
                             (long long)band, dsp->name, (long long)side[0],
                             (long long)side[0], (unsigned long long)dm->nnz, dm->d, given);
    }
    return NM_OK;
}

nm_status nm_sparse_parse_densities(nm_density *dens, const nm_workload *wl,
                                    const nm_ynode *node, nm_error *err)
{
    for (int i = 0; i < NM_MAX_DS; i++)
        dens[i] = (nm_density){NM_DENSITY_FIXED, 1.0, 0, 0, 0, 0};
    if (!node || nm_yis_null(node))
        return NM_OK;
    nm_status st = nm_yexpect(node, NM_Y_MAP, "densities", err);
    if (st != NM_OK)
        return st;
    for (size_t i = 0; i < node->n; i++) {
        const nm_ynode *k = nm_ymap_key(node, i), *v = nm_ymap_val(node, i);
        int ds = nm_workload_ds(wl, k->str);
        if (ds < 0)
            return unknown_tensor(err, k, wl, k->str, "density for");
        nm_density *dm = &dens[ds];
        const nm_ynode *dv = v;
        if (v->kind == NM_Y_MAP) {
            /* (timeloopfe writes band_width and workload_tensor_size, 0 when
             * unset, into every density) */
            static const char *const keys[] = {"distribution", "density", "band_width",
                                               "workload_tensor_size", NULL};
            if ((st = nm_ycheck_keys(v, keys, "a density", err)) != NM_OK)
                return st;
            const nm_ynode *dn = nm_ymap_get(v, "distribution");
            dv = nm_ymap_get(v, "density");
            const nm_ynode *ws = nm_ymap_get(v, "workload_tensor_size");
            int64_t wts = 0;
            if (ws && !nm_yis_null(ws) &&
                (st = nm_yget_int(ws, "workload_tensor_size", &wts, err)) != NM_OK)
                return st;
            if (wts < 0)
                return nm_yerror(err, ws, "workload_tensor_size must be 0 (the tensor's) or "
                                 "more");
            if (wts > 0 && (uint64_t)wts != nm_workload_ds_size(wl, ds))
                return nm_yerror(err, ws, "workload_tensor_size %lld differs from the size of "
                                 "'%s' (%llu); nestmap takes the tensor's", (long long)wts,
                                 wl->ds[ds].name,
                                 (unsigned long long)nm_workload_ds_size(wl, ds));
            if (!dv && !(dn && dn->kind == NM_Y_SCALAR &&
                         (!strcmp(dn->str, "banded") || !strcmp(dn->str, "diagonal"))))
                return nm_yerror(err, v, "density of '%s' has no 'density' value",
                                 wl->ds[ds].name);
            if (dn) {
                const char *s;
                if ((st = nm_yget_str(dn, "a distribution", &s, err)) != NM_OK)
                    return st;
                if (!strcmp(s, "fixed_structured") || !strcmp(s, "fixed"))
                    dm->kind = NM_DENSITY_FIXED;
                else if (!strcmp(s, "hypergeometric"))
                    dm->kind = NM_DENSITY_HYPERGEOMETRIC;
                else if (!strcmp(s, "banded") || !strcmp(s, "diagonal")) {
                    if ((st = parse_band(dm, v, dn, wl, ds, err)) != NM_OK)
                        return st;
                    continue;
                }
                else if (!strcmp(s, "uniform") || !strcmp(s, "random"))
                    return nm_yerror(err, dn, "unknown density distribution '%s'; nonzeros "
                                     "placed uniformly at random are 'hypergeometric'", s);
                else
                    return nm_yerror(err, dn, "unknown density distribution '%s' (Timeloop's "
                                     "are fixed_structured, hypergeometric and banded)", s);
            }
        }
        if ((st = nm_yget_num(dv, "a density", &dm->d, err)) != NM_OK)
            return st;
        if (!(dm->d >= 0.0 && dm->d <= 1.0))
            return nm_yerror(err, dv, "density of '%s' must be between 0 and 1 (got %g)",
                             wl->ds[ds].name, dm->d);
        dm->given = 1;
    }
    return NM_OK;
}

/* One option {target, condition_on: [...]} (or a group written flat). */
static nm_status parse_option(const nm_ynode *o, const nm_workload *wl, nm_saf_option *opt,
                              nm_error *err)
{
    const nm_ynode *t = nm_ymap_get(o, "target"), *c = nm_ymap_get(o, "condition_on");
    if (!t || !c)
        return nm_yerror(err, o, "an action optimization needs a 'target' and a "
                         "'condition_on' list");
    nm_status st = tensor(t, wl, "target", &opt->target, err);
    if (st != NM_OK)
        return st;
    if (c->kind != NM_Y_SEQ)
        return nm_yerror(err, c, "condition_on must be a list of data spaces");
    opt->ncond = 0;
    for (size_t i = 0; i < c->n; i++) {
        int ds;
        if ((st = tensor(c->items[i], wl, "condition_on", &ds, err)) != NM_OK)
            return st;
        if (opt->ncond >= NM_MAX_DS)
            return nm_yerror(err, c->items[i], "too many condition_on entries");
        opt->cond[opt->ncond++] = (int8_t)ds;
    }
    return NM_OK;
}

static nm_status parse_actions(nm_sparse *sp, int level, const nm_ynode *list,
                               const nm_workload *wl, nm_error *err)
{
    if (list->kind != NM_Y_SEQ)
        return nm_yerror(err, list, "action_optimization must be a list");
    nm_status st;
    for (size_t i = 0; i < list->n; i++) {
        const nm_ynode *e = list->items[i];
        static const char *const keys[] = {"type", "options", "target", "condition_on", NULL};
        if ((st = nm_yexpect(e, NM_Y_MAP, "an action optimization", err)) != NM_OK ||
            (st = nm_ycheck_keys(e, keys, "an action optimization", err)) != NM_OK)
            return st;
        const nm_ynode *tn = nm_ymap_get(e, "type");
        if (!tn)
            return nm_yerror(err, e, "an action optimization needs a 'type' (gating or skipping)");
        const char *type;
        if ((st = nm_yget_str(tn, "type", &type, err)) != NM_OK)
            return st;
        if (sp->ngroups >= NM_MAX_SAF_GROUPS)
            return nm_yerror(err, e, "more than %d action optimizations", NM_MAX_SAF_GROUPS);
        nm_saf_group *g = &sp->group[sp->ngroups];
        memset(g, 0, sizeof *g);
        g->level = level;
        if (!strcmp(type, "gating"))
            g->type = NM_SAF_GATE;
        else if (!strcmp(type, "skipping"))
            g->type = NM_SAF_SKIP;
        else if (!strcmp(type, "skipping_spatial"))
            g->type = NM_SAF_SPATIAL;
        else {
            static const char *const types[] = {"gating", "skipping", "skipping_spatial"};
            const char *sug = nm_text_suggest(type, types, 3);
            if (sug)
                return nm_yerror(err, tn, "unknown action optimization type '%s'; did you mean "
                                 "'%s'?", type, sug);
            return nm_yerror(err, tn, "unknown action optimization type '%s' (gating, "
                             "skipping or skipping_spatial)", type);
        }
        const nm_ynode *opts = nm_ymap_get(e, "options");
        if (opts) {
            if (opts->kind != NM_Y_SEQ || opts->n == 0)
                return nm_yerror(err, opts, "options must be a non-empty list");
            if (opts->n > NM_MAX_SAF_OPTIONS)
                return nm_yerror(err, opts, "at most %d options in one group",
                                 NM_MAX_SAF_OPTIONS);
            for (size_t j = 0; j < opts->n; j++) {
                static const char *const okeys[] = {"target", "condition_on", NULL};
                if ((st = nm_yexpect(opts->items[j], NM_Y_MAP, "an option", err)) != NM_OK ||
                    (st = nm_ycheck_keys(opts->items[j], okeys, "an option", err)) != NM_OK ||
                    (st = parse_option(opts->items[j], wl, &g->opt[g->nopt++], err)) != NM_OK)
                    return st;
            }
        } else if ((st = parse_option(e, wl, &g->opt[g->nopt++], err)) != NM_OK) {
            return st;
        }
        if (g->type == NM_SAF_SPATIAL && g->nopt != 1)
            return nm_yerror(err, opts, "skipping_spatial takes one option (Timeloop's model "
                             "has no choice among spatial ones)");
        sp->ngroups++;
    }
    return NM_OK;
}

/* Timeloop's word bits of a metadata or payload unit: the level's
 * metadata_datawidth when not given; a width that does not divide the
 * metadata store's is raised until it does (with a warning there). */
static nm_status unit_bits(const nm_level *L, const nm_ynode *given, int dflt, int *out,
                           nm_error *err)
{
    int64_t v = dflt;
    if (given) {
        nm_status st = nm_yget_int(given, "word bits", &v, err);
        if (st != NM_OK)
            return st;
        if (v < 0 || v > 4096)
            return nm_yerror(err, given, "word bits must be between 0 and 4096 (got %lld)",
                             (long long)v);
    }
    if (v < 0)
        v = L->md_word_bits;
    else if (v != 0 && L->md_width % v != 0)
        for (int64_t w = v; w < 2 * v; w++)
            if (L->md_width % w == 0) {
                v = w;
                break;
            }
    if (v > L->md_width)
        return nm_yerror(err, given ? given : L->node, "a format's word bits (%lld) exceed the "
                         "metadata storage width of '%s' (%d bits; metadata_storage_width)",
                         (long long)v, L->name, L->md_width);
    *out = (int)v;
    return NM_OK;
}

static nm_status parse_rank(nm_rank_format *rf, const nm_level *L, const nm_ynode *n,
                            const nm_workload *wl, nm_error *err)
{
    static const char *const keys[] = {"format", "metadata_word_bits", "payload_word_bits",
                                       "flattened_rankIDs", NULL};
    nm_status st;
    if ((st = nm_yexpect(n, NM_Y_MAP, "a rank", err)) != NM_OK ||
        (st = nm_ycheck_keys(n, keys, "a rank", err)) != NM_OK)
        return st;
    const nm_ynode *fn = nm_ymap_get(n, "format");
    if (!fn)
        return nm_yerror(err, n, "a rank needs a 'format' (UOP, UB, CP, B or RLE)");
    const char *f;
    if ((st = nm_yget_str(fn, "format", &f, err)) != NM_OK)
        return st;
    static const char *const names[] = {"UOP", "UB", "CP", "B", "RLE"};
    rf->fmt = -1;
    for (int i = 0; i < 5; i++)
        if (!strcasecmp(f, names[i]))
            rf->fmt = (int8_t)i;
    if (rf->fmt < 0)
        return nm_yerror(err, fn, "unknown rank format '%s' (UOP, UB, CP, B or RLE)", f);
    /* (Timeloop's UB takes the level's metadata_datawidth whatever the rank
     * says; B's metadata is a bit unless given) */
    int ub = rf->fmt == NM_FMT_UB;
    if ((st = unit_bits(L, ub ? NULL : nm_ymap_get(n, "metadata_word_bits"),
                        rf->fmt == NM_FMT_B ? 1 : -1, &rf->md_bits, err)) != NM_OK ||
        (st = unit_bits(L, ub ? NULL : nm_ymap_get(n, "payload_word_bits"), -1, &rf->pl_bits,
                        err)) != NM_OK)
        return st;
    const nm_ynode *fl = nm_ymap_get(n, "flattened_rankIDs");
    rf->ngroups = 0;
    if (fl && !nm_yis_null(fl)) {
        if (fl->kind != NM_Y_SEQ)
            return nm_yerror(err, fl, "flattened_rankIDs must be a list of lists of dimensions");
        if (fl->n > NM_MAX_FLAT_GROUPS)
            return nm_yerror(err, fl->items[NM_MAX_FLAT_GROUPS], "at most %d groups of "
                             "flattened_rankIDs in one rank", NM_MAX_FLAT_GROUPS);
        for (size_t i = 0; i < fl->n; i++) {
            const nm_ynode *g = fl->items[i];
            if (g->kind != NM_Y_SEQ)
                return nm_yerror(err, g, "flattened_rankIDs must be a list of lists of "
                                 "dimensions");
            uint32_t mask = 0;
            for (size_t j = 0; j < g->n; j++) {
                const char *dn;
                if ((st = nm_yget_str(g->items[j], "a dimension", &dn, err)) != NM_OK)
                    return st;
                int d = nm_workload_dim(wl, dn);
                if (d < 0 && nm_workload_unit_dim(wl, dn))
                    continue; /* a stand-in dimension of size 1 (a depthwise layer's M) */
                if (d < 0)
                    return nm_yerror(err, g->items[j], "'%s' is not a dimension of the "
                                     "problem", dn);
                mask |= 1u << d;
            }
            rf->group[rf->ngroups++] = mask;
        }
    }
    return NM_OK;
}

/* representation_format: {data_spaces: [{name, ranks: [...]}]} of a level. */
static nm_status parse_formats(nm_sparse *sp, const nm_level *L, int level, const nm_ynode *n,
                               const nm_workload *wl, nm_error *err)
{
    static const char *const keys[] = {"data_spaces", NULL};
    nm_status st;
    if ((st = nm_yexpect(n, NM_Y_MAP, "representation_format", err)) != NM_OK ||
        (st = nm_ycheck_keys(n, keys, "representation_format", err)) != NM_OK)
        return st;
    const nm_ynode *list = nm_ymap_get(n, "data_spaces");
    if (!list || nm_yis_null(list))
        return NM_OK;
    if (list->kind != NM_Y_SEQ)
        return nm_yerror(err, list, "representation_format data_spaces must be a list");
    for (size_t i = 0; i < list->n; i++) {
        const nm_ynode *e = list->items[i];
        static const char *const dkeys[] = {"name", "ranks", "rank_application_order",
                                            "compression_rate", NULL};
        if ((st = nm_yexpect(e, NM_Y_MAP, "a data space's format", err)) != NM_OK ||
            (st = nm_ycheck_keys(e, dkeys, "a data space's format", err)) != NM_OK)
            return st;
        const nm_ynode *nn = nm_ymap_get(e, "name"), *ranks = nm_ymap_get(e, "ranks");
        if (!nn)
            return nm_yerror(err, e, "a data space's format needs a 'name'");
        int ds;
        if ((st = tensor(nn, wl, "format for", &ds, err)) != NM_OK)
            return st;
        if (!ranks || ranks->kind != NM_Y_SEQ || ranks->n == 0)
            return nm_yerror(err, ranks ? ranks : e, "the format of '%s' needs a list of "
                             "'ranks'", wl->ds[ds].name);
        if (ranks->n > NM_MAX_FMT_RANKS)
            return nm_yerror(err, ranks->items[NM_MAX_FMT_RANKS], "the format of '%s' has %zu "
                             "ranks; nestmap models up to %d", wl->ds[ds].name, ranks->n,
                             NM_MAX_FMT_RANKS);
        const nm_ynode *order = nm_ymap_get(e, "rank_application_order");
        int i2o = 0;
        if (order) {
            const char *o;
            if ((st = nm_yget_str(order, "rank_application_order", &o, err)) != NM_OK)
                return st;
            if (!strcmp(o, "inner_to_outer"))
                i2o = 1;
            else if (strcmp(o, "outer_to_inner"))
                return nm_yerror(err, order, "rank_application_order '%s': outer_to_inner "
                                 "(Timeloop's default) or inner_to_outer", o);
        }
        nm_repr *rp = &sp->repr[level][ds];
        memset(rp, 0, sizeof *rp);
        rp->inner_to_outer = i2o;
        rp->nranks = (int)ranks->n;
        /* written outermost first; rank 0 is the innermost */
        for (int r = 0; r < rp->nranks; r++)
            if ((st = parse_rank(&rp->rank[r], L, ranks->items[ranks->n - 1 - (size_t)r], wl,
                                 err)) != NM_OK)
                return st;
        for (int r = 0; r < rp->nranks; r++)
            rp->compressed |= rp->rank[r].fmt >= NM_FMT_CP;
        for (int r = 1; r < rp->nranks; r++)
            if (rp->rank[r].fmt >= NM_FMT_CP && rp->rank[r - 1].fmt < NM_FMT_CP)
                return nm_yerror(err, ranks->items[ranks->n - 1 - (size_t)r],
                                 "a compressed rank above an uncompressed one is not a format "
                                 "Timeloop models (compress the inner ranks)");
    }
    return NM_OK;
}

static nm_status parse_compute(nm_sparse *sp, const nm_ynode *list, nm_error *err)
{
    if (list->kind != NM_Y_SEQ)
        return nm_yerror(err, list, "compute_optimization must be a list");
    for (size_t i = 0; i < list->n; i++) {
        const nm_ynode *e = list->items[i], *tn;
        const char *type;
        static const char *const keys[] = {"type", NULL};
        nm_status st;
        if ((st = nm_yexpect(e, NM_Y_MAP, "a compute optimization", err)) != NM_OK ||
            (st = nm_ycheck_keys(e, keys, "a compute optimization", err)) != NM_OK)
            return st;
        if (!(tn = nm_ymap_get(e, "type")))
            return nm_yerror(err, e, "a compute optimization needs a 'type'");
        if ((st = nm_yget_str(tn, "type", &type, err)) != NM_OK)
            return st;
        if (!strcmp(type, "gating") || !strcmp(type, "gate_on_zero_operand"))
            sp->compute_gate = 1;
        else if (!strcmp(type, "skipping") || !strcmp(type, "skip_on_not_aligned_operands"))
            sp->compute_skip = 1;
        else
            return nm_yerror(err, tn, "unknown compute optimization type '%s' (gating or "
                             "skipping)", type);
    }
    return NM_OK;
}

/* One target's optimizations (t: a map with action_optimization,
 * representation_format and compute_optimization) at storage level `level`
 * (or the arithmetic level when arith). */
static nm_status parse_target(nm_sparse *sp, const nm_arch *arch, const nm_workload *wl,
                              int level, int arith, const char *name, const nm_ynode *t,
                              nm_error *err)
{
    nm_status st;
    const nm_ynode *x;
    if ((x = nm_ymap_get(t, "representation_format")) && !nm_yis_null(x)) {
        if (arith)
            return nm_yerror(err, x, "'%s' is the arithmetic level: representation "
                             "formats belong to storage levels", name);
        if ((st = parse_formats(sp, &arch->level[level], level, x, wl, err)) != NM_OK)
            return st;
        sp->active = sp->formats = 1;
    }
    if ((x = nm_ymap_get(t, "action_optimization")) && !nm_yis_null(x)) {
        if (arith)
            return nm_yerror(err, x, "'%s' is the arithmetic level: give it "
                             "compute_optimization, and action_optimization to storage "
                             "levels", name);
        if ((st = parse_actions(sp, level, x, wl, err)) != NM_OK)
            return st;
        sp->active = 1;
    }
    if ((x = nm_ymap_get(t, "compute_optimization")) && !nm_yis_null(x)) {
        if (!arith)
            return nm_yerror(err, x, "compute_optimization belongs to the arithmetic level "
                             "'%s', not to '%s'", arch->arith.name, name);
        if ((st = parse_compute(sp, x, err)) != NM_OK)
            return st;
        sp->active = 1;
    }
    return NM_OK;
}

/* A v0.4 component's own `sparse_optimizations:` (timeloopfe makes it a
 * target of the component's name). */
static nm_status parse_inline(nm_sparse *sp, const nm_arch *arch, const nm_workload *wl,
                              const nm_ynode *comp, int level, int arith, const char *name,
                              nm_error *err)
{
    const nm_ynode *n = comp && comp->kind == NM_Y_MAP ? nm_ymap_get(comp, "sparse_optimizations")
                                                       : NULL;
    if (!n || nm_yis_null(n))
        return NM_OK;
    static const char *const keys[] = {"action_optimization", "representation_format",
                                       "compute_optimization", NULL};
    nm_status st;
    if ((st = nm_yexpect(n, NM_Y_MAP, "sparse_optimizations", err)) != NM_OK ||
        (st = nm_ycheck_keys(n, keys, "a component's sparse_optimizations", err)) != NM_OK)
        return st;
    sp->given = 1;
    return parse_target(sp, arch, wl, level, arith, name, n, err);
}

nm_status nm_sparse_parse(nm_sparse *sp, const nm_arch *arch, const nm_workload *wl,
                          const nm_ynode *node, nm_error *err)
{
    memset(sp, 0, sizeof *sp);
    nm_status st;
    for (int s = 0; s < arch->nlevels; s++)
        if ((st = parse_inline(sp, arch, wl, arch->level[s].node, s, 0, arch->level[s].name,
                               err)) != NM_OK)
            return st;
    if ((st = parse_inline(sp, arch, wl, arch->arith.node, -1, 1, arch->arith.name, err)) !=
        NM_OK)
        return st;
    const nm_ynode *targets = NULL;
    if (node && !nm_yis_null(node)) {
        sp->given = 1;
        static const char *const keys[] = {"version", "targets", NULL};
        if ((st = nm_yexpect(node, NM_Y_MAP, "sparse_optimizations", err)) != NM_OK ||
            (st = nm_ycheck_keys(node, keys, "sparse_optimizations", err)) != NM_OK)
            return st;
        targets = nm_ymap_get(node, "targets");
    }
    if (targets && !nm_yis_null(targets) && targets->kind != NM_Y_SEQ)
        return nm_yerror(err, targets, "sparse_optimizations targets must be a list");
    for (size_t i = 0; targets && targets->kind == NM_Y_SEQ && i < targets->n; i++) {
        const nm_ynode *t = targets->items[i];
        static const char *const tkeys[] = {"name", "target", "action_optimization",
                                            "representation_format", "compute_optimization",
                                            NULL};
        if ((st = nm_yexpect(t, NM_Y_MAP, "a sparse optimization target", err)) != NM_OK ||
            (st = nm_ycheck_keys(t, tkeys, "a sparse optimization target", err)) != NM_OK)
            return st;
        const nm_ynode *nn = nm_ymap_get(t, "name");
        if (!nn)
            nn = nm_ymap_get(t, "target");
        if (!nn)
            return nm_yerror(err, t, "a sparse optimization target needs a 'name'");
        const char *name;
        if ((st = nm_yget_str(nn, "a target name", &name, err)) != NM_OK)
            return st;
        int level = nm_arch_level(arch, name);
        int arith = !strcmp(name, arch->arith.name);
        if (level < 0 && !arith) {
            const char *s = nm_arch_suggest_level(arch, name);
            if (s)
                return nm_yerror(err, nn, "sparse optimization target '%s' is not a level of the "
                                 "architecture; did you mean '%s'?", name, s);
            return nm_yerror(err, nn, "sparse optimization target '%s' is not a level of the "
                             "architecture", name);
        }
        if ((st = parse_target(sp, arch, wl, level, arith, name, t, err)) != NM_OK)
            return st;
    }
    if (!sp->active)
        return NM_OK;
    /* The computes are classified by their two operands (Timeloop's sparse
     * model handles two). */
    int nops = 0, nout = 0;
    for (int ds = 0; ds < wl->nds; ds++) {
        if (wl->ds[ds].read_write) {
            nout++;
        } else if (nops++ == 0) {
            sp->op_a = ds;
        } else {
            sp->op_b = ds;
        }
    }
    if (nops != 2 || nout != 1)
        return nm_yerror(err, node, "sparse optimizations need a problem with two operands and "
                         "one output, as Timeloop's sparse model does (this one has %d and %d)",
                         nops, nout);
    /* Timeloop applies every gating group (levels inner to outer) before any
     * skipping group; keep the written order within a level. */
    for (int i = 1; i < sp->ngroups; i++) {
        nm_saf_group g = sp->group[i];
        int j = i;
        while (j > 0 && (sp->group[j - 1].type > g.type ||
                         (sp->group[j - 1].type == g.type && sp->group[j - 1].level > g.level))) {
            sp->group[j] = sp->group[j - 1];
            j--;
        }
        sp->group[j] = g;
    }
    return NM_OK;
}

/* ---- the analysis ---- */

void nm_cnest_build(nm_cnest *c, const nm_arch *arch, const nm_workload *wl,
                    const nm_mapping *m)
{
    c->n = 0;
    for (int s = 0; s < arch->nlevels; s++) {
        const nm_level_map *lm = &m->level[s];
        c->first[s] = c->n;
        if (arch->level[s].fanoutX * arch->level[s].fanoutY > 1)
            for (int i = 0; i < wl->ndims; i++) {
                int d = lm->sorder[i];
                c->dim[c->n] = (int8_t)d;
                c->f[c->n] = lm->sfactor[d];
                c->spatial[c->n] = (int8_t)(i < lm->split ? 1 : 2); /* X, Y */
                c->level[c->n++] = (int8_t)s;
            }
        for (int i = 0; i < wl->ndims; i++) {
            int d = lm->torder[i];
            c->dim[c->n] = (int8_t)d;
            c->f[c->n] = lm->tfactor[d];
            c->spatial[c->n] = 0;
            c->level[c->n++] = (int8_t)s;
        }
        c->last[s] = c->n - 1;
    }
}

void nm_cnest_mold(const nm_cnest *c, int i, int ndims, int64_t *ext)
{
    for (int d = 0; d < ndims; d++)
        ext[d] = 1;
    for (int j = 0; j <= i; j++)
        ext[c->dim[j]] *= c->f[j];
}

uint64_t nm_ds_box(const nm_dataspace *ds, const int64_t *ext)
{
    return nm_dtile_box(ds, ext).n;
}

int nm_ds_uses(const nm_dataspace *ds, int dim)
{
    for (int r = 0; r < ds->nranks; r++)
        for (int t = 0; t < ds->rank[r].nterms; t++)
            if (ds->rank[r].term[t].dim == dim && ds->rank[r].term[t].coef != 0)
                return 1;
    return 0;
}

/* What one option would do: the probability that the target's access is
 * ineffectual, the level that holds the target (*tl) and the read energy
 * that probability saves there.  0 when the target has no level at or above
 * the named one. */
static int impact(const nm_arch *arch, const nm_workload *wl, const nm_cnest *c,
                  const struct nm_sparse_ws *ws, int L, const nm_saf_option *o, double *p,
                  int *tl, double *savings)
{
    int S = arch->nlevels, nd = wl->ndims, T = o->target;
    const nm_dataspace *tds = &wl->ds[T];
    int t = L;
    while (t < S && !ws->t[t][T].shape)
        t++;
    if (t == S)
        return 0;
    int child = ws->t[t][T].child;
    /* The target loop: the innermost loop above the child whose step brings
     * a new target tile; with no child, the fan-out to the arithmetic units
     * (or one compute, when level 0 has no fan-out). */
    int tloop = -1, scalar = 0;
    for (int l = child + 1; l <= t && tloop < 0; l++)
        for (int i = c->first[l]; i <= c->last[l] && tloop < 0; i++) {
            if (child >= 0) {
                if (c->f[i] > 1 && nm_ds_uses(tds, c->dim[i]))
                    tloop = i;
            } else if (i + 1 > c->last[l] || !c->spatial[i + 1]) {
                tloop = i;
                scalar = !c->spatial[i];
            } else if (c->f[i] > 1 && nm_ds_uses(tds, c->dim[i])) {
                tloop = i;
            }
        }
    if (tloop < 0)
        tloop = c->last[t];
    int64_t text[NM_MAX_DIMS], cext[NM_MAX_DIMS];
    nm_cnest_mold(c, scalar ? -1 : tloop, nd, text);
    memcpy(cext, text, sizeof cext);
    /* The condition granule grows by the fan-outs above the target loop up
     * to the target's level (and, for a spatial target loop, by the
     * temporal loops of other dimensions before the next of its own). */
    int rel[NM_MAX_LOOPS], nrel = 0;
    rel[nrel++] = tloop;
    int is_spatial = c->spatial[tloop], located = !is_spatial;
    for (int i = tloop + 1; i <= c->last[t]; i++) {
        if (c->f[i] <= 1)
            continue;
        int d = c->dim[i];
        int extra = !located && !c->spatial[i] && child >= 0 && !nm_ds_uses(tds, d);
        if (c->spatial[i] || extra) {
            cext[d] *= c->f[i];
            rel[nrel++] = i;
        }
        if (is_spatial && !c->spatial[i] && (child < 0 || nm_ds_uses(tds, d)))
            located = 1;
    }
    double effectual = 1.0;
    for (int k = 0; k < o->ncond; k++) {
        int C = o->cond[k];
        const nm_dataspace *cds = &wl->ds[C];
        double cofac[NM_MAX_DIMS], agg = 1.0;
        int co[NM_MAX_DIMS] = {0}, seen = 0, ineffective = 0;
        for (int d = 0; d < nd; d++)
            cofac[d] = 1.0;
        for (int r = 0; r < nrel && !scalar; r++) {
            int d = c->dim[rel[r]];
            if (is_spatial && seen && nm_ds_uses(cds, d)) {
                ineffective = 1;
                break;
            }
            if (nm_ds_uses(tds, d) && nm_ds_uses(cds, d)) {
                cofac[d] *= (double)c->f[rel[r]];
                agg *= (double)c->f[rel[r]];
                co[d] = seen = 1;
            }
        }
        if (ineffective)
            continue;
        int64_t te[NM_MAX_DIMS], ce[NM_MAX_DIMS];
        memcpy(te, text, sizeof te);
        memcpy(ce, cext, sizeof ce);
        double gran = (double)nm_ds_box(tds, te);
        double scaling = ceil((double)arch->level[t].block_size / (gran / agg));
        for (int d = 0; d < nd; d++) {
            if (!co[d])
                continue;
            double eff = cofac[d] / scaling;
            te[d] = (int64_t)ceil((double)te[d] / eff);
            ce[d] = (int64_t)ceil((double)ce[d] / eff);
            scaling /= cofac[d];
        }
        if (scaling > 1.0) {
            int d = c->dim[tloop];
            ce[d] = (int64_t)((double)ce[d] * scaling);
            te[d] = (int64_t)((double)te[d] * scaling);
        }
        nm_dtile n = nm_dtile_box(cds, ce);
        effectual *= 1.0 - nm_density_p_empty(&wl->density[C], &n, nm_workload_ds_size(wl, C));
    }
    *p = 1.0 - effectual;
    *tl = t;
    /* what a read of the target costs there: its expected nonzeros, and its
     * metadata counted in data words (Timeloop's integer ratio of the bits) */
    const nm_level *TL = &arch->level[t];
    const nm_sp_tile *tt = &ws->t[t][T], *mt = &ws->t[child < 0 ? t : child][T];
    double occ = tt->occupancy, md = 0.0;
    for (int r = 0; mt->md && r < mt->nr; r++)
        md += mt->occ[r][0] + mt->occ[r][1];
    occ += md * (double)(TL->md_word_bits / TL->word_bits);
    *savings = TL->e_read / (double)TL->block_size * occ * *p;
    return 1;
}

/* Part of a level's own reads and updates becomes gated or skipped (type
 * 0 or 1), with the metadata the child's ranks read, and the temporal
 * reductions follow the updates. */
static void apply_local(nm_ds_stats *d, nm_fmt_stats *f, int franks, double p, int type,
                        int rw)
{
    double r = (double)d->actual[NM_ACC_READ], u = (double)d->actual[NM_ACC_UPDATE];
    uint64_t dr = (uint64_t)(rw ? ceil(r * p) : floor(r * p));
    uint64_t du = (uint64_t)floor(u * p);
    uint64_t *to = type == NM_SAF_GATE ? d->gated : d->skipped;
    to[NM_ACC_READ] += dr;
    to[NM_ACC_UPDATE] += du;
    d->actual[NM_ACC_READ] -= dr;
    d->actual[NM_ACC_UPDATE] -= du;
    int h = type == NM_SAF_GATE ? 1 : 2;
    for (int k = 0; k < franks && k < NM_MAX_FMT_RANKS; k++)
        for (int x = 0; x < 2; x++) {
            const int kinds[2] = {NM_ACC_READ, NM_ACC_UPDATE};
            for (int j = 0; j < 2; j++) {
                uint64_t *a = &f->acc[0][kinds[j]][k][x];
                uint64_t dd = (uint64_t)floor((double)*a * p);
                *a -= dd;
                f->acc[h][kinds[j]][k][x] += dd;
            }
        }
    if (rw && d->updates)
        d->temporal_reductions = (uint64_t)ceil((double)d->temporal_reductions *
                                                (double)d->actual[NM_ACC_UPDATE] /
                                                (double)d->updates);
}

static double round6(double x)
{
    return round(x * 1e6) / 1e6;
}

/* The computes that remain, split by what their operands hold: exists and
 * nonzero, exists and zero, or absent (an operand with metadata at its
 * innermost level skips its zeros). */
static void classify_computes(const nm_sparse *sp, const nm_workload *wl, const int *saf,
                              const double *cond_p, const int *md, double total,
                              nm_stats *out)
{
    int op[2] = {sp->op_a, sp->op_b};
    double dens[2], st[2][3]; /* [operand][nonzero, zero, absent] */
    for (int i = 0; i < 2; i++)
        dens[i] = round6(round6(nm_density_expected(&wl->density[op[i]], 1,
                                                    nm_workload_ds_size(wl, op[i]))));
    for (int i = 0; i < 2; i++) {
        /* a storage optimization on the other operand's innermost level
         * already removed the computes where this one met an empty
         * condition: among those left this operand is denser */
        int other = op[1 - i];
        double nz = saf[other] ? dens[i] / (1.0 - cond_p[other]) : dens[i];
        nz = fmin(fmax(nz, 0.0), 1.0);
        st[i][0] = nz;
        st[i][1] = md[op[i]] ? 0.0 : 1.0 - nz;
        st[i][2] = md[op[i]] ? 1.0 - nz : 0.0;
    }
    double random = 0.0, gated = 0.0, skipped = 0.0, none = 0.0;
    for (int a = 0; a < 3; a++)
        for (int b = 0; b < 3; b++) {
            double x = total * st[0][a] * st[1][b];
            if (a == 2 && b == 2)
                none += x;                        /* both absent: never issued */
            else if (a == 0 && b == 0)
                random += x;
            else if ((a == 2 || b == 2) && sp->compute_skip)
                skipped += x;                     /* an operand absent */
            else if (sp->compute_gate)
                gated += x;                       /* a zero (or absent) operand */
            else
                random += x;
        }
    (void)random;
    uint64_t g = (uint64_t)floor(gated), k = (uint64_t)floor(skipped);
    out->gated_computes = g;
    out->skipped_computes = k;
    out->computes = (uint64_t)total - g - k - (uint64_t)floor(none);
}

/* ---- spatial skipping ---- */

/* The elements a fan-out of f siblings sends that hold nonzeros at most:
 * of the fiber (the tile with the fan-out's loop), its largest nonzero
 * count, at most its number of element tiles (Timeloop's
 * GetMaxNumElementByConfidence). */
static uint64_t fiber_elements(const nm_density *dm, const nm_dtile *fiber,
                               const nm_dtile *elem, uint64_t N)
{
    if (dm->kind == NM_DENSITY_BANDED)
        return nm_band_elements(dm, fiber, elem);
    uint64_t n = elem->n ? fiber->n / elem->n : 0, occ = nm_density_max_occupancy(dm, fiber, N);
    return occ < n ? occ : n;
}

/* The spatial loops of level U over tensor ds shrink the expansion of the
 * level below by the share of their siblings a nonempty tile reaches; the
 * first gives the average share (1 - P(its element tile empty)).  ext is
 * the mold of each loop's element tile; `grow` (or NULL) widens it first
 * (skipping: temporal loops of other dimensions). */
typedef void (*grow_fn)(const nm_cnest *c, const nm_workload *wl, int i, int64_t *ext,
                        const void *arg);

static double shrink_fanout(const nm_cnest *c, const nm_workload *wl, int U, int ds,
                            uint64_t *x, uint64_t *y, grow_fn grow, const void *arg)
{
    const nm_dataspace *dsp = &wl->ds[ds];
    const nm_density *dm = &wl->density[ds];
    uint64_t N = nm_workload_ds_size(wl, ds);
    double eff = 1.0;
    int first = 1;
    for (int i = c->first[U]; i <= c->last[U]; i++) {
        if (!c->spatial[i] || c->f[i] <= 1 || !nm_ds_uses(dsp, c->dim[i]))
            continue;
        int64_t ext[NM_MAX_DIMS];
        nm_cnest_mold(c, i - 1, wl->ndims, ext);
        if (grow)
            grow(c, wl, i, ext, arg);
        nm_dtile e = nm_dtile_box(dsp, ext);
        if (first) {
            eff = 1.0 - nm_density_p_empty(dm, &e, N);
            first = 0;
        }
        ext[c->dim[i]] *= c->f[i];
        nm_dtile fiber = nm_dtile_box(dsp, ext);
        double r = (double)fiber_elements(dm, &fiber, &e, N) / (double)c->f[i];
        if (c->spatial[i] == 1)
            *x = (uint64_t)((double)*x * r);
        else
            *y = (uint64_t)((double)*y * r);
    }
    return eff;
}

/* Skipping the target T below level L: the condition's element tile grows
 * by the temporal loops of T's levels up to the first over T's dimensions. */
struct grow_arg {
    int L, T, C, S;
    const struct nm_sparse_ws *ws;
};

static void grow_cond(const nm_cnest *c, const nm_workload *wl, int i, int64_t *ext,
                      const void *p)
{
    const struct grow_arg *g = p;
    const nm_dataspace *t = &wl->ds[g->T], *cd = &wl->ds[g->C];
    if (!(nm_ds_uses(t, c->dim[i]) && nm_ds_uses(cd, c->dim[i])))
        return;
    int tl = g->L;
    while (!g->ws->t[tl][g->T].shape && tl < g->S - 1)
        tl++;
    for (int l = g->L; l <= tl; l++)
        for (int j = c->first[l]; j <= c->last[l]; j++) {
            if (c->spatial[j] || c->f[j] <= 1)
                continue;
            if (nm_ds_uses(t, c->dim[j]))
                return;
            ext[c->dim[j]] *= c->f[j];
        }
}

/* Timeloop's spatial skipping: every tensor with metadata shrinks the
 * fan-outs over it to what its nonempty tiles reach; each skipping_spatial
 * group shrinks its target's by its conditions'; the reductions carry down
 * to the levels below.  Fills ws->spatial.  Then Timeloop's check (its
 * SummarizeAndPropagateSpatialCapacityReduction): for each tensor and each
 * level below the outermost, the expansion there over the one above, in
 * whole numbers, must not exceed the level's fan-out along X and Y; the
 * expansions are rounded down level by level, so a reduction can leave a
 * level above with fewer than its share.  Returns 0 with out->invalid set
 * when one does. */
static int spatial_skipping(const nm_sparse *sp, const nm_arch *arch, const nm_workload *wl,
                            const nm_cnest *c, nm_stats *out, struct nm_sparse_ws *ws)
{
    nm_sp_spatial *z = &ws->spatial;
    int S = arch->nlevels;
    z->on = 1;
    /* the fan-outs' products above each level, along X and Y */
    uint64_t ox[NM_MAX_LEVELS + 1], oy[NM_MAX_LEVELS + 1], repl[NM_MAX_LEVELS];
    ox[S] = oy[S] = 1;
    for (int s = S - 1; s >= 0; s--) {
        ox[s] = ox[s + 1];
        oy[s] = oy[s + 1];
        for (int i = c->first[s]; i <= c->last[s]; i++) {
            if (c->spatial[i] == 1)
                ox[s] *= (uint64_t)c->f[i];
            else if (c->spatial[i] == 2)
                oy[s] *= (uint64_t)c->f[i];
        }
    }
    /* (ox[s + 1] for storage level s; ox[0] for the arithmetic) */
    uint64_t crepl = ox[0] * oy[0]; /* the arithmetic units the nest uses */
    for (int s = 0; s < S; s++) {
        repl[s] = 0;
        for (int ds = 0; ds < wl->nds; ds++)
            if (out->level[s].ds[ds].utilized_instances > repl[s])
                repl[s] = out->level[s].ds[ds].utilized_instances;
    }
    for (int ds = 0; ds < wl->nds; ds++) {
        for (int s = 0; s < S; s++) {
            z->sx[ds][s] = ox[s + 1];
            z->sy[ds][s] = oy[s + 1];
            z->savg[ds][s] = (double)repl[s];
        }
        z->x[ds][0] = ox[0];
        z->y[ds][0] = oy[0];
        z->ratio[ds][0] = 1.0;
        z->mask[ds][0] = 0;
        for (int U = 0; U < S; U++) {
            int lin = U;
            while (!ws->t[lin][ds].shape && lin < S - 1)
                lin++;
            if (ws->t[lin][ds].shape && ws->t[lin][ds].md) {
                double eff = shrink_fanout(c, wl, U, ds, &z->x[ds][U], &z->y[ds][U], NULL, NULL);
                z->ratio[ds][U] = eff;
                z->mask[ds][U] = eff != 1.0;
            }
            z->x[ds][U + 1] = z->sx[ds][U];
            z->y[ds][U + 1] = z->sy[ds][U];
            z->ratio[ds][U + 1] = 1.0;
            z->mask[ds][U + 1] = 0;
        }
        for (int a = S; a >= 0; a--) {
            if (a == 0) {
                z->cx = z->x[ds][0];
                z->cy = z->y[ds][0];
                z->cavg = z->ratio[ds][0];
                continue;
            }
            double xr = (double)z->x[ds][a] / (double)z->sx[ds][a - 1];
            double yr = (double)z->y[ds][a] / (double)z->sy[ds][a - 1];
            if (xr == 1.0 && yr == 1.0)
                continue;
            z->sx[ds][a - 1] = z->x[ds][a];
            z->sy[ds][a - 1] = z->y[ds][a];
            z->savg[ds][a - 1] = (double)repl[a - 1] * z->ratio[ds][a - 1];
            int cross = 0;
            for (int in = a - 1; in >= 0; in--) {
                z->x[ds][in] = (uint64_t)((double)z->x[ds][in] * xr);
                z->y[ds][in] = (uint64_t)((double)z->y[ds][in] * yr);
                cross |= z->mask[ds][in];
                if (!cross)
                    z->ratio[ds][in] *= z->ratio[ds][a];
            }
        }
    }
    /* each group: its target's fan-out below the level, by its conditions
     * (those with metadata at or above it) */
    int spmask[NM_MAX_LEVELS][NM_MAX_DS];
    memset(spmask, 0, sizeof spmask);
    for (int g = 0; g < sp->ngroups; g++) {
        const nm_saf_group *G = &sp->group[g];
        if (G->type != NM_SAF_SPATIAL)
            continue;
        const nm_saf_option *o = &G->opt[0];
        int L = G->level, T = o->target;
        int child = L - 1;
        while (child >= 0 && !ws->t[child][T].shape)
            child--;
        double agg = 1.0;
        for (int k = 0; k < o->ncond; k++) {
            int C = o->cond[k], lc = L;
            while (lc < S && !ws->t[lc][C].shape)
                lc++;
            if (lc == S || !ws->t[lc][C].md)
                continue;
            struct grow_arg ga = {L, T, C, S, ws};
            /* shrinks T's expansion by C's siblings */
            uint64_t x = z->x[T][L], y = z->y[T][L];
            double r = shrink_fanout(c, wl, L, C, &x, &y, child >= 0 ? grow_cond : NULL, &ga);
            z->x[T][L] = x;
            z->y[T][L] = y;
            agg *= r;
        }
        z->ratio[T][L] = agg;
        spmask[L][T] = 1;
    }
    /* the reductions carry to the levels below, and set each level's and
     * the arithmetic's instances */
    for (int ds = 0; ds < wl->nds; ds++) {
        uint64_t origx[NM_MAX_LEVELS], origy[NM_MAX_LEVELS];
        for (int s = 0; s < S; s++) {
            origx[s] = z->sx[ds][s];
            origy[s] = z->sy[ds][s];
        }
        for (int a = S; a >= 0; a--) {
            uint64_t px = z->x[ds][a], py = z->y[ds][a];
            double pr = z->ratio[ds][a], xr = 1.0, yr = 1.0;
            if (a) {
                int s = a - 1;
                z->sx[ds][s] = px;
                z->sy[ds][s] = py;
                z->savg[ds][s] = (double)repl[s] * pr;
                xr = (double)px / (double)origx[s];
                yr = (double)py / (double)origy[s];
            } else if (ds == 0) {
                z->cx = px;
                z->cy = py;
                z->cavg = (double)crepl * pr;
            } else {
                z->cx = px > z->cx ? px : z->cx;
                z->cy = py > z->cy ? py : z->cy;
                z->cavg = fmax(z->cavg, (double)crepl * pr);
            }
            if (a < S)
                z->prob[a][ds] = 1.0 - pr;
            if (xr == 1.0 && yr == 1.0)
                continue;
            int cross = 0;
            for (int in = a - 1; in >= 0; in--) {
                cross |= spmask[in][ds];
                if (!cross)
                    z->ratio[ds][in] *= pr;
                z->x[ds][in] = (uint64_t)((double)z->x[ds][in] * xr);
                z->y[ds][in] = (uint64_t)((double)z->y[ds][in] * yr);
            }
        }
    }
    return nm_sparse_fanout_ok(arch, wl->nds, z, &out->invalid);
}

int nm_sparse_fanout_ok(const nm_arch *arch, int nds, const nm_sp_spatial *z, nm_invalid *inv)
{
    for (int ds = 0; ds < nds; ds++)
        for (int a = arch->nlevels - 1; a >= 0; a--) {
            const nm_level *L = &arch->level[a];
            /* (a level left with none above it: Timeloop divides by zero) */
            uint64_t fx = z->x[ds][a + 1] ? z->x[ds][a] / z->x[ds][a + 1] : 0;
            uint64_t fy = z->y[ds][a + 1] ? z->y[ds][a] / z->y[ds][a + 1] : 0;
            if (fx > (uint64_t)L->fanoutX || fy > (uint64_t)L->fanoutY) {
                int X = fx > (uint64_t)L->fanoutX;
                *inv = (nm_invalid){NM_INV_SKIP_FANOUT, a, ds, X ? 'X' : 'Y', X ? fx : fy,
                                    (uint64_t)(X ? L->fanoutX : L->fanoutY)};
                return 0;
            }
        }
    return 1;
}

struct nm_sparse_ws *nm_sparse_ws_new(void)
{
    return nm_calloc(1, sizeof(struct nm_sparse_ws));
}

void nm_sparse_ws_free(struct nm_sparse_ws *ws)
{
    if (ws)
        nm_band_pdf_fini(&ws->band);
    nm_free(ws);
}

const nm_sparse_detail *nm_sparse_ws_detail(const struct nm_sparse_ws *ws)
{
    return &ws->det;
}

int nm_sparse_apply(const nm_sparse *sp, const nm_arch *arch, const nm_workload *wl,
                    const nm_mapping *m, nm_stats *out, struct nm_sparse_ws *ws)
{
    int S = arch->nlevels;
    out->sparse = 1;
    out->spatial_skip = 0;
    out->algorithmic_computes = out->computes;
    out->gated_computes = out->skipped_computes = 0;
    for (int s = 0; s < S; s++)
        for (int ds = 0; ds < wl->nds; ds++) {
            nm_ds_stats *d = &out->level[s].ds[ds];
            d->actual[NM_ACC_READ] = d->reads;
            d->actual[NM_ACC_FILL] = d->fills;
            d->actual[NM_ACC_UPDATE] = d->updates;
            memset(d->gated, 0, sizeof d->gated);
            memset(d->skipped, 0, sizeof d->skipped);
            d->avg_instances = (double)d->utilized_instances;
            d->tile_shape = d->utilized_capacity;
            d->meta_words[0] = d->meta_words[1] = 0;
            d->meta_energy = 0.0;
            d->decompressions = d->compressions = 0;
            d->vec_ratio = 1.0;
        }
    if (!sp->active || !ws)
        return 1;

    nm_cnest *cn = &ws->c;
    nm_cnest_build(cn, arch, wl, m);
    if (!nm_sparse_formats(sp, arch, wl, cn, out, ws))
        return 0;

    /* A tensor with metadata moves only its expected nonzeros. */
    for (int s = 0; s < S; s++)
        for (int ds = 0; ds < wl->nds; ds++) {
            const nm_sp_tile *t = &ws->t[s][ds];
            if (!t->shape || !t->md)
                continue;
            nm_ds_stats *d = &out->level[s].ds[ds];
            double zero = 1.0 - t->density;
            const uint64_t alg[3] = {d->reads, d->fills, d->updates};
            for (int k = 0; k < 3; k++)
                if (k != NM_ACC_UPDATE || wl->ds[ds].read_write)
                    d->actual[k] = alg[k] - (uint64_t)floor((double)alg[k] * zero);
        }

    /* Each group's best option marks its target's level with a type and the
     * probability that an access there is ineffectual; a later group on the
     * same tensor and level replaces it when that probability is higher. */
    int8_t type[NM_MAX_LEVELS][NM_MAX_DS];
    double prob[NM_MAX_LEVELS][NM_MAX_DS];
    memset(type, -1, sizeof type);
    int spatial = 0;
    for (int g = 0; g < sp->ngroups; g++) {
        const nm_saf_group *G = &sp->group[g];
        if (G->type == NM_SAF_SPATIAL) {
            spatial = 1;
            continue;
        }
        double best = 0.0, bp = 0.0;
        int bt = -1, btl = -1;
        for (int k = 0; k < G->nopt; k++) {
            double p, sav;
            int tl;
            if (!impact(arch, wl, cn, ws, G->level, &G->opt[k], &p, &tl, &sav))
                continue;
            if (sav >= best || bt < 0) {
                best = sav;
                bp = p;
                bt = G->opt[k].target;
                btl = tl;
            }
        }
        if (bt < 0)
            continue;
        if (type[btl][bt] < 0 || prob[btl][bt] < bp) {
            type[btl][bt] = (int8_t)G->type;
            prob[btl][bt] = bp;
        }
    }

    ws->spatial.on = 0;
    if (spatial) {
        if (!spatial_skipping(sp, arch, wl, cn, out, ws))
            return 0;
        for (int g = 0; g < sp->ngroups; g++) {
            const nm_saf_group *G = &sp->group[g];
            if (G->type != NM_SAF_SPATIAL)
                continue;
            type[G->level][G->opt[0].target] = NM_SAF_SPATIAL;
            prob[G->level][G->opt[0].target] = ws->spatial.prob[G->level][G->opt[0].target];
        }
    }

    /* Propagation down each tensor's chain: the levels below an optimized
     * one lose those accesses outright, down to the next optimized level,
     * which applies what its own probability adds; the innermost one of an
     * operand removes computes. */
    double computes = (double)out->algorithmic_computes;
    int saf[NM_MAX_DS] = {0}, md[NM_MAX_DS] = {0};
    double cond_p[NM_MAX_DS] = {0};
    for (int ds = 0; ds < wl->nds; ds++) {
        int rw = wl->ds[ds].read_write;
        double acc[NM_MAX_LEVELS][3];
        int done[NM_MAX_LEVELS] = {0};
        for (int s = 0; s < S; s++)
            for (int a = 0; a < 3; a++)
                acc[s][a] = (double)out->level[s].ds[ds].actual[a];
        for (int l = S - 1; l >= 0; l--) {
            if (type[l][ds] < 0)
                continue;
            double p = prob[l][ds];
            int j;
            for (j = l - 1; j >= 0; j--) {
                for (int a = 0; a < 3; a++)
                    acc[j][a] -= floor(acc[j][a] * p);
                nm_fmt_stats *fj = &ws->det.f[j][ds];
                /* Timeloop scales the first rank's metadata fills and reads
                 * below, and only when the optimized level has one rank */
                if (ws->t[j][ds].md && ws->det.f[l][ds].nranks == 1)
                    for (int k = 0; k < 2; k++)
                        for (int x = 0; x < 2; x++) {
                            uint64_t *v = &fj->acc[0][k == 0 ? NM_ACC_FILL : NM_ACC_READ][0][x];
                            *v -= (uint64_t)floor((double)*v * p);
                        }
                if (type[j][ds] >= 0) {
                    nm_ds_stats *d = &out->level[j].ds[ds];
                    for (int a = 0; a < 3; a++)
                        d->actual[a] = (uint64_t)acc[j][a];
                    /* (Timeloop reloads the metadata reads from the updates here) */
                    memcpy(fj->acc[0][NM_ACC_READ], fj->acc[0][NM_ACC_UPDATE],
                           sizeof fj->acc[0][NM_ACC_READ]);
                    int ch = ws->t[j][ds].child;
                    int franks = ch >= 0 ? ws->det.f[ch][ds].nranks : ws->det.f[j][ds].nranks;
                    if (type[j][ds] != NM_SAF_SPATIAL)
                        /* what the level's own probability adds to the one
                         * above; none when the one above is larger (Timeloop
                         * then counts a negative share: its
                         * bug_negative_gated_count) */
                        apply_local(d, fj, franks,
                                    fmax(0.0, 1.0 - (1.0 - prob[j][ds]) / (1.0 - p)),
                                    type[j][ds], rw);
                    done[j] = 1;
                    break;
                }
            }
            if (!done[l]) {
                nm_ds_stats *d = &out->level[l].ds[ds];
                for (int a = 0; a < 3; a++)
                    d->actual[a] = (uint64_t)acc[l][a];
                int ch = ws->t[l][ds].child;
                int franks = ch >= 0 ? ws->det.f[ch][ds].nranks : ws->det.f[l][ds].nranks;
                if (type[l][ds] != NM_SAF_SPATIAL)
                    apply_local(d, &ws->det.f[l][ds], franks, p, type[l][ds], rw);
                done[l] = 1;
            }
            if (j < 0 && !rw) {
                computes -= floor(computes * p);
                saf[ds] = 1;
                cond_p[ds] = round6(p);
            }
        }
        for (int s = 0; s < S; s++) {
            if (type[s][ds] >= 0)
                continue;
            nm_ds_stats *d = &out->level[s].ds[ds];
            for (int a = 0; a < 3; a++)
                d->actual[a] = (uint64_t)acc[s][a];
            d->temporal_reductions =
                d->updates == 0 ? 0
                                : (uint64_t)ceil((double)d->temporal_reductions *
                                                 (double)d->actual[NM_ACC_UPDATE] /
                                                 (double)d->updates);
        }
        /* an uncompressed level under a compressed one decompresses each
         * fill, and compresses what its parent takes back as updates */
        for (int s = 0; s < S; s++) {
            const nm_sp_tile *t = &ws->t[s][ds];
            if (!t->shape || sp->repr[s][ds].compressed || t->parent < 0 ||
                !sp->repr[t->parent][ds].compressed)
                continue;
            nm_ds_stats *d = &out->level[s].ds[ds];
            if (rw)
                d->compressions += out->level[t->parent].ds[ds].actual[NM_ACC_UPDATE];
            d->decompressions += d->actual[NM_ACC_FILL];
        }
        for (int s = 0; s < S; s++)
            if (ws->t[s][ds].shape) {
                md[ds] = ws->t[s][ds].md;
                break;
            }
    }
    classify_computes(sp, wl, saf, cond_p, md, computes, out);

    /* Address generation follows what reaches the storage: actual and gated
     * accesses (skipped ones generate none). */
    for (int s = 0; s < S; s++)
        for (int ds = 0; ds < wl->nds; ds++) {
            nm_ds_stats *d = &out->level[s].ds[ds];
            if (!d->address_generations)
                continue;
            int k = wl->ds[ds].read_write ? NM_ACC_UPDATE : NM_ACC_READ;
            d->address_generations = d->actual[k] + d->gated[k] + d->actual[NM_ACC_FILL] +
                                     d->gated[NM_ACC_FILL];
        }
    if (!nm_sparse_metadata_costs(sp, arch, wl, out, ws))
        return 0;
    if (ws->spatial.on) { /* the instances spatial skipping leaves */
        const nm_sp_spatial *z = &ws->spatial;
        out->spatial_skip = 1;
        out->arith_utilized = z->cx * z->cy;
        out->arith_avg = z->cavg;
        for (int s = 0; s < S; s++)
            for (int ds = 0; ds < wl->nds; ds++) {
                nm_ds_stats *d = &out->level[s].ds[ds];
                if (!ws->t[s][ds].shape)
                    continue;
                d->utilized_instances = z->sx[ds][s] * z->sy[ds][s];
                d->avg_instances = z->savg[ds][s];
            }
    }
    return 1;
}
