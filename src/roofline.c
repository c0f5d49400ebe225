/* roofline.c — the roofline bound of a workload on a design; see roofline.h. */
#include <config.h>

#include <math.h>

#include <stdlib.h>
#include <string.h>

#include "nestmap/alloc.h"
#include "nestmap/mapping.h"
#include "nestmap/model.h"
#include "nestmap/roofline.h"
#include "nestmap/yaml.h"

double nm_roofline_memory_cycles(const nm_level *top, double in_words, double out_words,
                                 const char **note)
{
    /* Bandwidth in words per cycle per instance, times the instances. */
    double inst = (double)top->instances;
    if (top->has_shared_bw) {
        *note = "shared bandwidth";
        return (in_words + out_words) / (top->shared_bw * inst);
    }
    if (top->has_read_bw || top->has_write_bw) {
        double rd = top->has_read_bw ? in_words / (top->read_bw * inst) : 0.0;
        double wr = top->has_write_bw ? out_words / (top->write_bw * inst) : 0.0;
        *note = "read and write bandwidth";
        return rd > wr ? rd : wr;
    }
    *note = "no read/write/shared bandwidth given for the outermost level";
    return NAN;
}

void nm_roofline_of(nm_roofline *r, const nm_arch *arch, const nm_workload *wl)
{
    const nm_level *top = &arch->level[arch->nlevels - 1];
    r->macs = r->effectual_macs = (double)nm_workload_macs(wl);
    r->words_in = r->words_out = 0;
    /* Each tensor at its own width (tensor_datawidth): its bytes, and
     * bandwidth and rows in the outermost level's words. */
    double bits = 0.0, lw_in = 0.0, lw_out = 0.0;
    for (int ds = 0; ds < wl->nds; ds++) {
        double n = (double)nm_workload_held_words(wl, ds);
        int b = nm_level_ds_bits(top, wl, ds);
        double lw = b == top->word_bits ? n : n * b / top->word_bits;
        bits += n * b;
        if (wl->ds[ds].read_write) {
            r->words_out += n;
            lw_out += lw;
        } else {
            r->words_in += n;
            lw_in += lw;
        }
    }
    r->bytes = bits / 8.0;
    nm_count units = (nm_count)arch->arith.instances;
    r->compute_cycles_exact = (nm_workload_macs(wl) + units - 1) / units;
    r->compute_cycles = ceil(r->macs / (double)arch->arith.instances);
    r->mem_cycles = nm_roofline_memory_cycles(top, lw_in, lw_out, &r->bw_note);
    double b = top->block_size > 0 ? (double)top->block_size : 1.0;
    r->energy_pj = r->macs * arch->arith.e_compute + lw_in * top->e_read / b +
                   lw_out * top->e_update / b;
    if (arch->sparse.active) {
        /* Sparse optimizations may skip computes and traffic: what stays
         * is at least every compute whose operands are both nonzero (a
         * storage level's gating or skipping removes computes only where
         * an operand is empty; compute gating keeps them busy), each
         * costing a compute; and at the outermost level, each tensor once,
         * only its nonzeros where some level holds it in a representation
         * format, unless that level gates or skips (then no traffic
         * bound). */
        const nm_sparse *sp = &arch->sparse;
        double eff = r->macs;
        r->words_in = r->words_out = 0.0;
        for (int ds = 0; ds < wl->nds; ds++) {
            uint64_t N = nm_workload_ds_size(wl, ds);
            double d = nm_density_expected(&wl->density[ds], 1, N);
            if (!wl->ds[ds].read_write)
                eff *= d;
            int repr = 0;
            for (int s = 0; s < arch->nlevels; s++)
                repr |= sp->repr[s][ds].nranks > 0;
            double n = (double)nm_workload_held_words(wl, ds) * (repr ? d : 1.0);
            if (wl->ds[ds].read_write)
                r->words_out += n;
            else
                r->words_in += n;
        }
        /* (Timeloop rounds operand densities to six decimals: a margin) */
        eff = floor(eff * (1.0 - 1e-5));
        r->effectual_macs = eff;
        r->compute_cycles = ceil(eff / (double)arch->arith.instances);
        r->compute_cycles_exact = (nm_count)r->compute_cycles;
        r->bytes = (r->words_in + r->words_out) * (top->word_bits / 8.0);
        r->mem_cycles = nm_roofline_memory_cycles(top, r->words_in, r->words_out, &r->bw_note);
        for (int g = 0; g < sp->ngroups; g++)
            if (sp->group[g].level == arch->nlevels - 1) {
                r->mem_cycles = NAN;
                r->bw_note = "none: the outermost level gates or skips";
            }
        r->energy_pj = eff * arch->arith.e_compute;
    }
    if (isnan(r->mem_cycles)) {
        r->bound_cycles = r->compute_cycles;
        r->binding = NM_ROOF_COMPUTE_ONLY;
    } else {
        r->bound_cycles = fmax(r->compute_cycles, ceil(r->mem_cycles));
        r->binding = r->compute_cycles >= r->mem_cycles ? NM_ROOF_COMPUTE : NM_ROOF_MEMORY;
    }
}

const char *nm_roofline_binding_name(nm_roof_binding b)
{
    return b == NM_ROOF_COMPUTE_ONLY ? "compute (memory unbounded)"
           : b == NM_ROOF_COMPUTE   ? "compute"
                                    : "memory bandwidth";
}

/* ---- the attainable-traffic curve (roofline.h) ---- */

/* Two levels and one arithmetic unit: the backing store, and the buffer
 * that holds a tile of every tensor; no capacity, bandwidth or energy (the
 * curve counts words). */
static const char curve_arch[] =
    "architecture:\n"
    "  version: '0.4'\n"
    "  subtree:\n"
    "  - name: curve\n"
    "    local:\n"
    "    - {name: Backing, class: DRAM, attributes: {width: 16, datawidth: 16}}\n"
    "    - {name: Buffer, class: SRAM, attributes: {width: 16, datawidth: 16}}\n"
    "    - {name: MAC, class: intmac, attributes: {datawidth: 16}}\n";

/* The divisors of n into out; -1 when it has more than cap. */
static int divisors_of(int64_t n, int64_t *out, int cap)
{
    int k = 0;
    for (int64_t d = 1; d * d <= n; d++)
        if (n % d == 0) {
            if (k + 2 > cap)
                return -1;
            out[k++] = d;
            if (d != n / d)
                out[k++] = n / d;
        }
    return k;
}

static int by_capacity(const void *x, const void *y)
{
    const nm_curve_point *a = x, *b = y;
    if (a->capacity != b->capacity)
        return a->capacity < b->capacity ? -1 : 1;
    if (a->traffic != b->traffic)
        return a->traffic < b->traffic ? -1 : 1;
    /* ties by the tiling, so the one shown does not depend on the sort */
    int c = memcmp(a->outer, b->outer, sizeof a->outer);
    return c ? c : memcmp(a->order, b->order, sizeof a->order);
}

enum { CURVE_DIVISORS = 256, CURVE_KEEP = 1 << 16 };

/* Keeps the staircase of pts[0..n): by capacity, each point moving less
 * than every point before it; returns how many remain. */
static uint64_t staircase(nm_curve_point *pts, uint64_t n)
{
    qsort(pts, n, sizeof *pts, by_capacity);
    uint64_t k = 0;
    for (uint64_t i = 0; i < n; i++) {
        if (k && pts[i].traffic >= pts[k - 1].traffic)
            continue;
        pts[k++] = pts[i];
    }
    return k;
}

nm_status nm_roofline_curve(const nm_workload *wl, uint64_t budget, nm_curve *c, nm_error *err)
{
    memset(c, 0, sizeof *c);
    int nd = wl->ndims;
    int64_t (*div)[CURVE_DIVISORS] = nm_calloc((size_t)(nd ? nd : 1), sizeof *div);
    int ndiv[NM_MAX_DIMS];
    if (!div)
        return nm_error_set(err, NM_ERR_NOMEM, NULL, 0, 0, "out of memory");
    /* The mappings: every split, times the orders of its outer loops. */
    uint64_t splits = 1;
    for (int d = 0; d < nd; d++) {
        ndiv[d] = divisors_of(wl->bound[d], div[d], CURVE_DIVISORS);
        if (ndiv[d] < 0) {
            nm_free(div);
            return nm_error_set(err, NM_ERR_INPUT, NULL, 0, 0, "%s: dimension %s (%lld) has "
                                "too many divisors for the curve (it takes up to %d)", wl->name,
                                wl->dim[d], (long long)wl->bound[d], CURVE_DIVISORS - 2);
        }
        splits = splits > UINT64_MAX / (uint64_t)ndiv[d] ? UINT64_MAX : splits * (uint64_t)ndiv[d];
    }
    /* (counted exactly: the orders depend on how many outer loops a split
     * has, so per dimension whether its factor is 1) */
    long double total = 0.0L;
    {
        /* poly[k]: splits with k outer loops */
        long double poly[NM_MAX_DIMS + 1] = {1.0L};
        for (int d = 0; d < nd; d++) {
            long double next[NM_MAX_DIMS + 1] = {0};
            for (int k = 0; k <= d; k++) {
                next[k] += poly[k];                        /* factor 1: no outer loop */
                next[k + 1] += poly[k] * (ndiv[d] - 1);    /* an outer loop */
            }
            memcpy(poly, next, sizeof poly);
        }
        long double fact = 1.0L;
        for (int k = 0; k <= nd; k++) {
            if (k > 1)
                fact *= k;
            total += poly[k] * fact;
        }
    }
    if (total > (long double)budget) {
        nm_free(div);
        return nm_error_set(err, NM_ERR_INPUT, NULL, 0, 0,
                            "%s has %.3Lg single-buffer mappings (%llu splits of its loops, each "
                            "in every order), more than the %llu the curve may evaluate: raise "
                            "--curve-budget, or take a smaller layer", wl->name, total,
                            (unsigned long long)splits, (unsigned long long)budget);
    }
    nm_ydoc doc;
    nm_ydoc_init(&doc);
    nm_arch arch;
    nm_status st = nm_ydoc_load_string(&doc, "<the curve's buffer>", curve_arch,
                                       sizeof curve_arch - 1, err);
    if (st == NM_OK)
        st = nm_arch_parse(&arch, nm_ymap_get(doc.root, "architecture"), NULL, &doc, err);
    nm_model mdl;
    int have_model = st == NM_OK && (st = nm_model_init(&mdl, &arch, wl, err)) == NM_OK;
    /* every split's least traffic, cut back to the staircase whenever the
     * array fills (the staircase of a staircase and more points is the
     * staircase of all of them), so memory stays small */
    uint64_t room = splits < CURVE_KEEP ? (splits ? splits : 1) : CURVE_KEEP;
    nm_curve_point *pts = NULL;
    uint64_t npts = 0;
    if (st == NM_OK && !(pts = nm_calloc(room, sizeof *pts)))
        st = nm_error_set(err, NM_ERR_NOMEM, NULL, 0, 0, "out of memory");
    int idx[NM_MAX_DIMS] = {0};
    nm_stats stats;
    for (uint64_t sp = 0; st == NM_OK && sp < splits; sp++) {
        if (npts == room) {
            npts = staircase(pts, npts);
            if (npts > room / 2) { /* a long staircase: room for more */
                nm_curve_point *more = nm_realloc_array(pts, 2 * room, sizeof *pts);
                if (!more) {
                    st = nm_error_set(err, NM_ERR_NOMEM, NULL, 0, 0, "out of memory");
                    break;
                }
                pts = more;
                room *= 2;
            }
        }
        nm_mapping m;
        nm_mapping_init(&m, &arch, wl);
        nm_curve_point *pt = &pts[npts];
        memset(pt, 0, sizeof *pt); /* (ties compare whole arrays) */
        int8_t outer[NM_MAX_DIMS];
        for (int d = 0; d < nd; d++) {
            int64_t f = div[d][idx[d]];
            pt->outer[d] = f;
            m.level[1].tfactor[d] = f;
            m.level[0].tfactor[d] = wl->bound[d] / f;
            if (f > 1)
                outer[pt->nouter++] = (int8_t)d;
        }
        /* every order of the outer loops (the buffer's own order moves no
         * backing-store word); the least traffic the split reaches */
        int8_t perm[NM_MAX_DIMS];
        memcpy(perm, outer, sizeof perm);
        pt->traffic = INFINITY;
        do {
            int8_t order[NM_MAX_DIMS] = {0};
            int k = 0;
            for (int i = 0; i < pt->nouter; i++)
                order[k++] = perm[i];
            for (int d = 0; d < nd; d++)
                if (pt->outer[d] == 1)
                    order[k++] = (int8_t)d;
            memcpy(m.level[1].torder, order, sizeof order);
            c->evaluated++;
            if (!nm_model_eval(&mdl, &m, &stats, NULL))
                continue; /* (never: nothing is bounded) */
            double traffic = (double)stats.last_level_accesses;
            if (traffic < pt->traffic) {
                pt->traffic = traffic;
                memcpy(pt->order, order, sizeof pt->order);
                double cap = 0.0;
                for (int ds = 0; ds < wl->nds; ds++)
                    cap += (double)stats.level[0].ds[ds].utilized_capacity;
                pt->capacity = cap;
            }
        } while (nm_mapping_next_order(perm, pt->nouter));
        if (pt->traffic < INFINITY)
            npts++;
        for (int d = nd - 1; d >= 0; d--) { /* the next split */
            if (++idx[d] < ndiv[d])
                break;
            idx[d] = 0;
        }
    }
    if (have_model)
        nm_model_fini(&mdl);
    nm_ydoc_fini(&doc);
    nm_free(div);
    if (st != NM_OK) {
        nm_free(pts);
        return st;
    }
    uint64_t n = staircase(pts, npts);
    c->n = (int)n;
    c->pt = pts;
    c->compulsory = n ? pts[n - 1].traffic : 0.0;
    return NM_OK;
}

void nm_curve_fini(nm_curve *c)
{
    nm_free(c->pt);
    memset(c, 0, sizeof *c);
}

double nm_curve_at(const nm_curve *c, double capacity)
{
    double best = INFINITY;
    for (int i = 0; i < c->n && c->pt[i].capacity <= capacity; i++)
        best = c->pt[i].traffic;
    return best;
}
