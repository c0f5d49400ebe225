/* roofline.c — the roofline bound of a workload on a design; see roofline.h. */
#include <config.h>

#include <math.h>

#include <stdlib.h>
#include <string.h>

#include "nestmap/alloc.h"
#include "nestmap/fusion.h"
#include "nestmap/mapping.h"
#include "nestmap/model.h"
#include "nestmap/roofline.h"
#include "nestmap/search.h"
#include "nestmap/estimate.h"
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

/* nm_roofline_of with the data spaces in `skip` left out of the traffic. */
static void roofline_of(nm_roofline *r, const nm_arch *arch, const nm_workload *wl,
                        uint32_t skip, const nm_chain_op *mask);

void nm_roofline_of(nm_roofline *r, const nm_arch *arch, const nm_workload *wl)
{
    roofline_of(r, arch, wl, 0, NULL);
}

void nm_roofline_op(nm_roofline *r, const nm_arch *arch, const nm_chain *c, int i)
{
    const nm_chain_op *op = &c->op[i];
    uint32_t skip = 0;
    for (int ds = 0; ds < op->wl.nds; ds++) {
        const char *name = op->wl.ds[ds].name;
        int inner = op->producer[ds] >= 0; /* another operation writes it */
        /* ... or reads what this one writes, or read it before */
        for (int j = 0; j < c->nops && !inner; j++) {
            if (j == i)
                continue;
            int k = nm_workload_ds(&c->op[j].wl, name);
            inner = k >= 0 && (ds == op->out ? c->op[j].producer[k] == i : j < i);
        }
        if (inner)
            skip |= 1u << ds;
    }
    roofline_of(r, arch, &op->wl, skip, op->masked ? op : NULL);
    /* the operation's own energy per point (nm_arith_op_energy) */
    const char *how;
    r->energy_pj += r->effectual_macs *
                    (nm_arith_op_energy(&arch->arith, op->kind, &how) - arch->arith.e_compute);
}

void nm_roofline_chain_bound(const nm_arch *arch, const nm_chain *c, nm_bound_sum *s)
{
    for (int i = 0; i < c->nops; i++) {
        nm_roofline r;
        nm_roofline_op(&r, arch, c, i);
        nm_bound_sum_add(s, 1.0, &r, nm_metric_value(s->metric, r.energy_pj, r.bound_cycles,
                                                      r.words_in + r.words_out));
    }
}

double nm_roofline_chain_gap(const nm_arch *arch, const nm_chain *c, int metric,
                             const nm_fused_sum *total, double *lb)
{
    nm_bound_sum bs;
    nm_bound_sum_init(&bs, (nm_metric)metric);
    nm_roofline_chain_bound(arch, c, &bs);
    *lb = nm_bound_sum_value(&bs);
    double score = nm_metric_value((nm_metric)metric, total->energy, (double)total->cycles,
                                   (double)total->backing);
    return *lb > 0 ? score / *lb : 0.0;
}

/* n words of data space ds in the outermost level's words (its
 * tensor_datawidth there), and the words of one of its vector accesses:
 * how the roofline moves each tensor once. */
static double top_words(const nm_level *top, const nm_workload *wl, int ds, double n)
{
    int b = nm_level_ds_bits(top, wl, ds);
    return b == top->word_bits ? n : n * b / top->word_bits;
}

static double top_block(const nm_level *top)
{
    return top->block_size > 0 ? (double)top->block_size : 1.0;
}

enum { CURVE_DIVISORS = 256 }; /* divisors of a dimension a split takes */

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

/* Steps idx (n digits, digit d below ndiv[d]) to the next split; 0 after
 * the last. */
static int next_split(int *idx, const int *ndiv, int n)
{
    for (int d = n - 1; d >= 0; d--) {
        if (++idx[d] < ndiv[d])
            return 1;
        idx[d] = 0;
    }
    return 0;
}

/* ---- refetches (roofline.h) ---- */

uint32_t nm_roofline_clean_spaces(const nm_workload *wl, const int64_t *box, int unit)
{
    uint32_t clean = 0;
    for (int ds = 0; ds < wl->nds; ds++) {
        const nm_dataspace *D = &wl->ds[ds];
        uint32_t seen = 0;
        int ok = 1;
        for (int r = 0; ok && r < D->nranks; r++) {
            int k = 0;
            for (int i = 0; i < D->rank[r].nterms; i++) {
                int d = D->rank[r].term[i].dim;
                if (D->rank[r].term[i].coef == 0 || box[d] <= 1)
                    continue;
                ok &= !k++ && !((seen >> d) & 1u) && (!unit || D->rank[r].term[i].coef == 1);
                seen |= 1u << d;
            }
        }
        clean |= (uint32_t)ok << ds;
    }
    return clean;
}

double nm_roofline_refetches(uint32_t irrelevant, int n, const int8_t *dim, const int64_t *factor)
{
    double g = 1.0;
    int in_place = 1; /* below the tensor's innermost loop of its own */
    for (int i = 0; i < n; i++) {
        if (factor[i] <= 1)
            continue;
        int ignored = (irrelevant >> dim[i]) & 1u;
        if (in_place && ignored)
            continue;
        in_place = 0;
        if (ignored)
            g *= (double)factor[i];
    }
    return g;
}

/* The product of outer[d] over the dimensions in mask. */
static double product_over(uint32_t mask, const int64_t *outer)
{
    double p = 1.0;
    for (; mask; mask &= mask - 1)
        p *= (double)outer[__builtin_ctz(mask)];
    return p;
}

/* Calls each(ctx, g, below) with the tensors' G in every order in which
 * they stop being left in place (nm_roofline_least_refetch), below[i] the
 * loops under the i-th to stop and below[n] every loop (bit d). */
static void refetch_orders(int n, const uint32_t *irrelevant, const int64_t *outer, int nd,
                           void (*each)(void *, const double *, const uint32_t *), void *ctx)
{
    uint32_t below[NM_MAX_DS + 1] = {0};
    for (int d = 0; d < nd; d++)
        below[n] |= (uint32_t)(outer[d] > 1) << d;
    int8_t perm[NM_MAX_DS];
    for (int i = 0; i < n; i++)
        perm[i] = (int8_t)i;
    do {
        /* perm[i] stops being left in place i-th: the loops below it are
         * those it and every tensor after it ignore */
        for (int i = n - 1; i >= 0; i--)
            below[i] = below[i + 1] & irrelevant[perm[i]];
        double g[NM_MAX_DS];
        for (int i = 0; i < n; i++)
            g[perm[i]] = product_over(irrelevant[perm[i]] & below[n] & ~below[i], outer);
        each(ctx, g, below);
    } while (nm_mapping_next_order(perm, n));
}

struct least_refetch {
    int n, nd;
    const double *weight;
    double least, *g;
    int8_t *order;
};

static void least_refetch_each(void *ctx, const double *g, const uint32_t *below)
{
    struct least_refetch *l = ctx;
    double v = 0.0;
    for (int i = 0; i < l->n; i++)
        v += l->weight[i] * g[i];
    if (!(v < l->least))
        return;
    l->least = v;
    if (l->g)
        memcpy(l->g, g, (size_t)l->n * sizeof *g);
    if (l->order) { /* below[0], what each next one adds, the other loops, the rest */
        uint32_t placed = 0;
        int k = 0;
        for (int i = 0; i <= l->n + 1; i++) {
            uint32_t add = (i <= l->n ? below[i] : ~0u) & ~placed;
            for (int d = 0; d < l->nd; d++)
                if ((add >> d) & 1u)
                    l->order[k++] = (int8_t)d;
            placed |= add;
        }
    }
}

double nm_roofline_least_refetch(int n, const uint32_t *irrelevant, const double *weight,
                                 const int64_t *outer, int nd, double *g, int8_t *order)
{
    struct least_refetch l = {n, nd, weight, INFINITY, g, order};
    if (n <= 0) {
        for (int d = 0; order && d < nd; d++)
            order[d] = (int8_t)d;
        return 0.0;
    }
    refetch_orders(n, irrelevant, outer, nd, least_refetch_each, &l);
    return l.least;
}

/* The refetch front of one level's instance: over every split of its
 * share `box` whose tiles (multiples of the fan-outs below it, `below`)
 * of the tensors in `set` fit its capacity, and every order of the loops
 * above, the G of each clean tensor of the set (in ds order) no other
 * split and order beats on all of them.  Two points merge into their
 * least on each (a point below both: the front's least of any weighted
 * sum only falls) when the front outgrows its room. */
enum { FRONT_ROOM = 64, FRONT_SLOTS = 1024, FRONT_PROBES = 16, FRONT_SPLITS = 1 << 17 };
/* the splits one bound may weigh over all its fronts; past them a front
 * bounds nothing (a floor of 0 more) */
#define FRONT_WORK 1e6

/* A coupled front (virt not 0) weighs beside the tensors the level keeps
 * those in virt, kept innermost at the lower levels vlevel[ds] (whose
 * share is vbox[ds]) and not at this one: the loops above this level are
 * above theirs too.  Such a tensor takes none of this level's capacity;
 * either no loop between its level and this one runs over a dimension it
 * has, and then its tile there spans this level's tile over those
 * dimensions (which must fit its level's capacity) and it is left in place
 * by the loops above as the tensors here are, or one does, and then every
 * loop above over a dimension it ignores refetches it. */
typedef struct refetch_front {
    int used, level;
    uint64_t epoch;                 /* the spatial choice it was built for (operand_walk's) */
    uint32_t set, virt;
    int64_t box[NM_MAX_DIMS], below[NM_MAX_DIMS];
    int8_t vlevel[NM_MAX_DS];
    int64_t (*vbox)[NM_MAX_DIMS];   /* NM_MAX_DS, a coupled front's only; owned */
    uint64_t vmin[NM_MAX_DS];       /* the least words it takes at its level: a tile
                                     * spanning the fan-outs below that level */
    int n;                          /* clean tensors of set | virt */
    int8_t ds[NM_MAX_DS];
    int npts;                       /* 0: no bound (no split fits, or too many) */
    double (*g)[NM_MAX_DS];         /* FRONT_ROOM while it is built; owned */
} refetch_front;

static void front_add(void *ctx, const double *g, const uint32_t *below)
{
    (void)below;
    refetch_front *f = ctx;
    int k = 0;
    for (int i = 0; i < f->npts; i++) {
        int le = 1, ge = 1;
        for (int t = 0; t < f->n; t++) {
            le &= f->g[i][t] <= g[t];
            ge &= f->g[i][t] >= g[t];
        }
        if (le)
            return; /* as good on every tensor already */
        if (!ge)    /* not beaten by g: stays */
            memcpy(f->g[k++], f->g[i], sizeof f->g[i]);
    }
    f->npts = k;
    if (f->npts == FRONT_ROOM) { /* merge neighbours pairwise */
        int m = 0;
        for (int i = 0; i + 1 < f->npts; i += 2, m++)
            for (int t = 0; t < f->n; t++)
                f->g[m][t] = fmin(f->g[i][t], f->g[i + 1][t]);
        f->npts = m;
    }
    memcpy(f->g[f->npts++], g, sizeof f->g[0]);
}

/* A coupled front's split: the loops above `outer`; its points for each
 * choice of the coupled tensors left in place below (those whose tiles at
 * their levels, spanning this level's tile `tile`, fit). */
struct coupled_add {
    refetch_front *f;
    int m;                        /* the tensors ordered: f's indices idx[] */
    int8_t idx[NM_MAX_DS];
    double g[NM_MAX_DS];          /* every tensor's G, in f's order */
};

static void coupled_add_each(void *ctx, const double *g, const uint32_t *below)
{
    struct coupled_add *a = ctx;
    for (int i = 0; i < a->m; i++)
        a->g[a->idx[i]] = g[i];
    front_add(a->f, a->g, below);
}

/* Whether the coupled tensors in `in` (bit i of f's), need[i] words each,
 * fit the levels they are kept at, beside the least tiles there of the
 * other coupled ones (vmask). */
static int coupled_fit(const refetch_front *f, const nm_arch *arch, const uint64_t *need,
                       uint32_t in, uint32_t vmask)
{
    uint64_t used[NM_MAX_LEVELS] = {0};
    for (uint32_t m = vmask; m; m &= m - 1) {
        int i = __builtin_ctz(m), ds = f->ds[i], v = f->vlevel[ds];
        used[v] += (in >> i) & 1u ? need[i] : f->vmin[ds];
        if (arch->level[v].has_size && used[v] > (uint64_t)arch->level[v].effective_size)
            return 0;
    }
    return 1;
}

/* Each coupled tensor's (bit i of vmask) tile at its level, spanning this
 * level's tile `tile`, in words, into need[i]. */
static void coupled_need(const refetch_front *f, const nm_model *mdl, uint32_t vmask,
                         const int64_t *tile, uint64_t *need)
{
    const nm_workload *wl = mdl->wl;
    for (uint32_t v = vmask; v; v &= v - 1) {
        int i = __builtin_ctz(v), ds = f->ds[i];
        int64_t t[NM_MAX_DIMS];
        for (int d = 0; d < wl->ndims; d++)
            t[d] = tile[d] / (f->box[d] / f->vbox[ds][d]);
        need[i] = nm_model_tile_words(mdl, f->vlevel[ds], ds,
                                      (uint64_t)nm_model_distinct_at_least(wl, ds, t));
    }
}

/* The words the tensors in f's set need at its level for tiles `tile`. */
static uint64_t set_need(const refetch_front *f, const nm_model *mdl, const int64_t *tile)
{
    uint64_t need = 0;
    for (int ds = 0; ds < mdl->wl->nds; ds++)
        if ((f->set >> ds) & 1u)
            need += nm_model_tile_words(mdl, f->level, ds,
                                        (uint64_t)nm_model_distinct_at_least(mdl->wl, ds, tile));
    return need;
}

static void coupled_split(refetch_front *f, const nm_model *mdl, const uint32_t *irr,
                          uint32_t vmask, const int64_t *tile, const int64_t *outer)
{
    const nm_workload *wl = mdl->wl;
    int nd = wl->ndims < NM_MAX_DIMS ? wl->ndims : NM_MAX_DIMS; /* (it is at most) */
    uint32_t loops = 0;
    for (int d = 0; d < nd; d++)
        loops |= (uint32_t)(outer[d] > 1) << d;
    uint64_t need[NM_MAX_DS];
    coupled_need(f, mdl, vmask, tile, need);
    /* vmask: the coupled tensors among f's (bit i); each subset `in` of
     * them left in place below that fits and that no one more could join:
     * one left in place does at least as well as refetched by every loop it
     * ignores (first in an order to stop being in place, it leaves the
     * others' G as they were) */
    for (uint32_t in = vmask;; in = (in - 1) & vmask) {
        int keep = coupled_fit(f, mdl->arch, need, in, vmask);
        for (uint32_t out = vmask & ~in; keep && out; out &= out - 1)
            keep = !coupled_fit(f, mdl->arch, need, in | (out & -out), vmask);
        if (keep) {
            struct coupled_add a = {.f = f, .m = 0};
            uint32_t order_irr[NM_MAX_DS];
            for (int i = 0; i < f->n; i++) {
                if (((vmask >> i) & 1u) && !((in >> i) & 1u)) {
                    a.g[i] = product_over(irr[i] & loops, outer);
                    continue;
                }
                order_irr[a.m] = irr[i];
                a.idx[a.m++] = (int8_t)i;
            }
            refetch_orders(a.m, order_irr, outer, nd, coupled_add_each, &a);
        }
        if (!in || (keep && in == vmask)) /* (all fit: every other subset joins more) */
            break;
    }
}

static void front_build(refetch_front *f, const nm_model *mdl, double *work)
{
    const nm_workload *wl = mdl->wl;
    const nm_level *L = &mdl->arch->level[f->level];
    int nd = wl->ndims;
    uint32_t clean = nm_roofline_clean_spaces(wl, f->box, 0) & (f->set | f->virt), dims = 0,
             irr[NM_MAX_DS], vmask = 0;
    f->n = f->npts = 0;
    for (int ds = 0; ds < wl->nds; ds++) {
        if ((f->set >> ds) & 1u)
            dims |= mdl->ds_dims[ds];
        if ((clean >> ds) & 1u && (f->virt >> ds) & 1u) {
            dims |= mdl->ds_dims[ds];
            vmask |= 1u << f->n;
        }
        if ((clean >> ds) & 1u) {
            irr[f->n] = ~mdl->ds_dims[ds];
            f->ds[f->n++] = (int8_t)ds;
        }
    }
    /* one clean tensor alone is left in place by the loops it ignores
     * whatever the split: G 1 */
    if (f->n < 2 || !L->has_size)
        return;
    /* each dimension a tensor of the set has: every tile that is a multiple
     * of the fan-outs below; the others whole (a loop over them above
     * only refetches) */
    int64_t div[NM_MAX_DIMS][CURVE_DIVISORS];
    int ndiv[NM_MAX_DIMS], idx[NM_MAX_DIMS] = {0};
    double splits = 1.0;
    for (int d = 0; d < nd; d++) {
        int64_t q = f->box[d] / f->below[d];
        if (!((dims >> d) & 1u) || q <= 1) {
            div[d][0] = 1;
            ndiv[d] = 1;
        } else if ((ndiv[d] = divisors_of(q, div[d], CURVE_DIVISORS)) < 0) {
            return;
        }
        splits *= ndiv[d];
    }
    /* the whole share fits: no loop above, nothing fetched again (the
     * coupled tensors neither), and no split does better */
    if (set_need(f, mdl, f->box) <= (uint64_t)L->effective_size) {
        double one[NM_MAX_DS];
        for (int i = 0; i < f->n; i++)
            one[i] = 1.0;
        front_add(f, one, NULL);
        return;
    }
    if (splits > FRONT_SPLITS || *work + splits > FRONT_WORK)
        return;
    *work += splits;
    int fits = 0;
    do {
        int64_t tile[NM_MAX_DIMS], outer[NM_MAX_DIMS];
        for (int d = 0; d < nd; d++) {
            outer[d] = div[d][idx[d]];
            tile[d] = f->box[d] / outer[d];
        }
        if (set_need(f, mdl, tile) > (uint64_t)L->effective_size)
            continue;
        fits = 1;
        if (vmask)
            coupled_split(f, mdl, irr, vmask, tile, outer);
        else
            refetch_orders(f->n, irr, outer, nd, front_add, f);
    } while (next_split(idx, ndiv, nd));
    if (!fits)
        f->npts = 0;
}

typedef struct candidate {
    double metric, energy;        /* the choice's bound without the refetches */
    size_t index;                 /* in the order the choices came */
    int weighed;                  /* with them too (weigh_candidates) */
} candidate;

struct operand_walk {
    nm_model mdl;
    nm_roofline r;
    int metric;
    uint32_t keep_at[NM_MAX_DS];
    uint32_t must[NM_MAX_DS];     /* the levels that must keep it (bit s) */
    uint32_t may[NM_MAX_DS];      /* the levels that may keep it (bit s) */
    /* the spatial choice's share of each level's instance, and the
     * fan-outs at and below it (tiles are multiples of those) */
    int64_t box[NM_MAX_LEVELS][NM_MAX_DIMS], below[NM_MAX_LEVELS][NM_MAX_DIMS];
    uint32_t clean[NM_MAX_LEVELS]; /* the data spaces clean on each level's share */
    refetch_front *front;         /* FRONT_SLOTS, by level, set, box and below */
    refetch_front *coupled_front; /* FRONT_SLOTS more for the coupled ones */
    refetch_front none;           /* no front: npts 0 */
    uint64_t epoch;               /* the spatial choices weighed so far */
    double work;                  /* splits weighed by the fronts built (FRONT_WORK) */
    double coupled_work;          /* ... by the coupled fronts built (FRONT_WORK) */
    /* this spatial choice's fronts looked up so far, by level and set */
    const refetch_front *cur[NM_MAX_LEVELS][1u << NM_MAX_DS];
    double room[FRONT_ROOM][NM_MAX_DS];
    double once[NM_MAX_DS];       /* the roofline's energy for each tensor at the top */
    double top_in, top_out;       /* the top's words, each tensor once (roofline_of's) */
    nm_operand_bound *b;          /* where operand_assignments takes the least */
    int refused;                  /* the design has no operand floor (M:N network) */
    /* The refetch fronts cost more than the rest; they only raise a
     * choice's bound, so every choice is weighed without them first and
     * kept as a candidate, and then weighed with them from the lowest
     * bound up only while it could still be the least (weigh_candidates),
     * the choices enumerated again to reach them: the fronts' room and
     * FRONT_WORK go to the choices that could bound the space.  A choice
     * not kept (no memory) keeps its bound without them, in `done`. */
    int refetches;                /* operand_assignments weighs the refetches: 1 each
                                   * level alone, 2 the coupled fronts too */
    candidate *cand;
    size_t ncand, capcand;
    uint8_t *want;                /* by choice: weigh it with them on this pass (as
                                   * `refetches`; 0 not) */
    uint64_t seen;                /* choices enumerated so far on this pass */
    uint64_t nchoices;            /* on the first */
    const nm_mapspace *ms;
    uint64_t budget;
    nm_operand_bound done;
};

static void operand_assignments(struct operand_walk *w, const nm_operand_cost *c,
                                uint32_t spared, double base, double floor_cycles);

static uint64_t front_hash(int level, uint32_t set, uint32_t virt, const int8_t *vlevel,
                           const int64_t *box, const int64_t *below, int nd)
{
    uint64_t h = 1469598103934665603ull ^ (uint64_t)level ^ ((uint64_t)set << 8) ^
                 ((uint64_t)virt << 20);
    for (uint32_t v = virt; v; v &= v - 1)
        h = (h ^ (uint64_t)(uint8_t)vlevel[__builtin_ctz(v)]) * 1099511628211ull;
    for (int d = 0; d < nd; d++) {
        h = (h ^ (uint64_t)box[d]) * 1099511628211ull;
        h = (h ^ (uint64_t)below[d]) * 1099511628211ull;
    }
    return h;
}

/* The least words data space ds takes at level v for the spatial choice
 * being weighed: a tile spanning the fan-outs at and below v. */
static uint64_t least_tile(const struct operand_walk *w, int ds, int v)
{
    return nm_model_tile_words(&w->mdl, v, ds,
                               (uint64_t)nm_model_distinct_at_least(w->mdl.wl, ds, w->below[v]));
}

/* Whether front x is level s's with set and virt coupled at the levels
 * inner[] gives, for the spatial choice being weighed. */
static int front_is(const struct operand_walk *w, const refetch_front *x, int s, uint32_t set,
                    uint32_t virt, const int8_t *inner)
{
    size_t bytes = (size_t)w->mdl.wl->ndims * sizeof(int64_t);
    if (x->level != s || x->set != set || x->virt != virt || memcmp(x->box, w->box[s], bytes) ||
        memcmp(x->below, w->below[s], bytes))
        return 0;
    for (uint32_t v = virt; v; v &= v - 1) {
        int ds = __builtin_ctz(v);
        if (x->vlevel[ds] != inner[ds] || memcmp(x->vbox[ds], w->box[inner[ds]], bytes) ||
            x->vmin[ds] != least_tile(w, ds, inner[ds]))
            return 0;
    }
    return 1;
}

/* The refetch front of level s keeping the tensors in set, coupled with
 * those in virt kept innermost at inner[] below it (virt 0: none), for the
 * spatial choice being weighed: built once per level, tensors and shares.
 * The coupled fronts have slots and FRONT_WORK of their own, so that they
 * never leave the others unbuilt. */
static const refetch_front *front_of(struct operand_walk *w, int s, uint32_t set, uint32_t virt,
                                     const int8_t *inner)
{
    int nd = w->mdl.wl->ndims;
    size_t bytes = (size_t)nd * sizeof(int64_t);
    uint64_t h = front_hash(s, set, virt, inner, w->box[s], w->below[s], nd);
    refetch_front *table = virt ? w->coupled_front : w->front, *f = NULL, *old = NULL;
    for (int k = 0; table && k < FRONT_PROBES && !f; k++) {
        refetch_front *x = &table[(h + (uint64_t)k) % FRONT_SLOTS];
        if (!x->used)
            f = x;
        else if (front_is(w, x, s, set, virt, inner))
            return x;
        else if (x->epoch != w->epoch && (!old || x->epoch < old->epoch))
            old = x;
    }
    if (!f && old) { /* the slots around full: the oldest built for another choice
                      * (this one's, in w->cur, stay) gives way */
        nm_free(old->g);
        nm_free(old->vbox);
        memset(old, 0, sizeof *old);
        f = old;
    }
    if (!f) /* all this choice's: no front (a floor of 0 more there) */
        return &w->none;
    f->used = 1;
    f->epoch = w->epoch;
    f->level = s;
    f->set = set;
    f->virt = virt;
    memcpy(f->box, w->box[s], bytes);
    memcpy(f->below, w->below[s], bytes);
    if (virt && !(f->vbox = nm_calloc(NM_MAX_DS, sizeof *f->vbox))) {
        f->used = 0;
        return &w->none;
    }
    for (uint32_t v = virt; v; v &= v - 1) {
        int ds = __builtin_ctz(v);
        f->vlevel[ds] = inner[ds];
        memcpy(f->vbox[ds], w->box[inner[ds]], bytes);
        f->vmin[ds] = least_tile(w, ds, inner[ds]);
    }
    f->g = w->room;
    front_build(f, &w->mdl, virt ? &w->coupled_work : &w->work);
    f->g = f->npts ? nm_calloc((size_t)f->npts, sizeof *f->g) : NULL;
    if (f->g)
        memcpy(f->g, w->room, (size_t)f->npts * sizeof *f->g);
    else
        f->npts = 0;
    return f;
}

/* What a refetch of data space ds at level s costs past the footprint, per
 * element of the share its instances' footprint counts: the fill there
 * and the read out of its parent (an output: the update), the top above
 * its outermost outer[ds], else the first level above that may keep it:
 * the cheapest of those up to the first that must, or the outermost. */
static double refetch_cost(const struct operand_walk *w, const nm_operand_cost *c,
                           const int8_t *outer, int ds, int s)
{
    const nm_arch *arch = w->mdl.arch;
    int top = arch->nlevels - 1, rw = w->mdl.wl->ds[ds].read_write;
    double parent = INFINITY;
    for (int p = s == outer[ds] ? top : s + 1; p <= top; p++) {
        if (p < outer[ds] && !((w->may[ds] >> p) & 1u))
            continue;
        const nm_level *P = &arch->level[p];
        parent = fmin(parent, c->foot_scale[ds][p] * (rw ? P->e_update : P->e_read));
        if (p >= outer[ds] || ((w->must[ds] >> p) & 1u))
            break;
    }
    return c->foot_scale[ds][s] * arch->level[s].e_fill + parent;
}

/* The least over front f's points of the refetches' energy past the
 * footprint, each tensor's G - 1 times cost[ds]. */
static double front_least(const refetch_front *f, const double *cost)
{
    double least = INFINITY;
    for (int k = 0; k < f->npts; k++) {
        double v = 0.0;
        for (int i = 0; i < f->n; i++)
            v += cost[f->ds[i]] * (f->g[k][i] - 1.0);
        least = fmin(least, v);
    }
    return f->npts ? least : 0.0;
}

/* The words the top serves past each tensor's once: read for the inputs,
 * updated for the outputs, and both (a shared bandwidth). */
typedef struct top_refetch {
    double in, out, both;
} top_refetch;

/* The least over front f's points of the words its refetches take from
 * the top, each tensor's G - 1 times words[ds] (0 where its refetches come
 * from a level below the top): each of in, out and both least alone. */
static top_refetch front_least_words(const refetch_front *f, const nm_workload *wl,
                                     const double *words)
{
    top_refetch t = {INFINITY, INFINITY, INFINITY};
    for (int k = 0; k < f->npts; k++) {
        double in = 0.0, out = 0.0;
        for (int i = 0; i < f->n; i++) {
            double v = words[f->ds[i]] * (f->g[k][i] - 1.0);
            *(wl->ds[f->ds[i]].read_write ? &out : &in) += v;
        }
        t.in = fmin(t.in, in);
        t.out = fmin(t.out, out);
        t.both = fmin(t.both, in + out);
    }
    return f->npts ? t : (top_refetch){0.0, 0.0, 0.0};
}

static void top_refetch_add(top_refetch *t, top_refetch a)
{
    t->in += a.in;
    t->out += a.out;
    t->both += a.both;
}

static void top_refetch_max(top_refetch *t, top_refetch a)
{
    t->in = fmax(t->in, a.in);
    t->out = fmax(t->out, a.out);
    t->both = fmax(t->both, a.both);
}

static void top_refetch_min(top_refetch *t, top_refetch a)
{
    t->in = fmin(t->in, a.in);
    t->out = fmin(t->out, a.out);
    t->both = fmin(t->both, a.both);
}

/* The words a refetch of ds at level s takes from the top: the top's
 * footprint when no level between keeps it (s its outermost below the
 * top), else none the floor can be sure of. */
static double top_refetch_words(const nm_operand_cost *c, const int8_t *outer, int ds, int s,
                                int top)
{
    return s == outer[ds] ? c->foot_words[ds][top] : 0.0;
}

/* The cycles the top's bandwidth takes for its words, each tensor once and
 * the refetches t past them (nm_roofline_memory_cycles; a shared bandwidth
 * takes both together; 0 without a bandwidth). */
static double top_cycles(const struct operand_walk *w, top_refetch t)
{
    const nm_level *top = &w->mdl.arch->level[w->mdl.arch->nlevels - 1];
    const char *note;
    double cycles =
        top->has_shared_bw
            ? nm_roofline_memory_cycles(top, w->top_in + w->top_out + t.both, 0.0, &note)
            : nm_roofline_memory_cycles(top, w->top_in + t.in, w->top_out + t.out, &note);
    if (isnan(cycles))
        return 0.0;
    /* the model's cycles are whole; this is at most a rounding below them */
    return ceil(cycles * (1 - 1e-12));
}

/* The refetch floor (roofline.h) when each data space ds is innermost at
 * inner[ds] (-1: kept nowhere) and outermost below the top at outer[ds]
 * (the top itself when inner[ds] is): at each level below the top with a
 * capacity, the tensors it keeps (their innermost and outermost, and
 * those the constraints make keep it) fill each element G times, not the
 * once the footprint counts, and their parent reads them out (an output:
 * takes its updates) as often (refetch_cost); the least over the level's
 * refetch front of those accesses' energy past the footprint's, summed
 * over the levels.  Or, at most as low, at a level u with the tensors
 * kept innermost below it and not at u coupled to its front: their
 * refetches at their levels and u's own, the least over the coupled
 * front, with the other levels' above u; the floor is the highest (with
 * `coupled`; else the sum alone).  The words those refetches take from
 * the top, weighed the same way (each least on its own), into *t. */
static double refetch_floor(struct operand_walk *w, const nm_operand_cost *c, const int8_t *inner,
                            const int8_t *outer, int coupled, top_refetch *t)
{
    const nm_arch *arch = w->mdl.arch;
    const nm_workload *wl = w->mdl.wl;
    int top = arch->nlevels - 1;
    double level_e[NM_MAX_LEVELS] = {0}, cost[NM_MAX_DS], words[NM_MAX_DS], sum = 0.0;
    top_refetch level_t[NM_MAX_LEVELS] = {{0}}, tsum = {0};
    uint32_t kept[NM_MAX_LEVELS] = {0};
    for (int s = 0; s < top; s++) {
        for (int ds = 0; ds < wl->nds; ds++)
            if (inner[ds] == s || outer[ds] == s ||
                (inner[ds] >= 0 && inner[ds] < s && s < outer[ds] && ((w->must[ds] >> s) & 1u)))
                kept[s] |= 1u << ds;
        uint32_t set = kept[s];
        if (__builtin_popcount(set & w->clean[s]) < 2 || !arch->level[s].has_size)
            continue; /* (one clean tensor alone: G 1) */
        const refetch_front *f = w->cur[s][set];
        if (!f)
            f = w->cur[s][set] = front_of(w, s, set, 0, inner);
        if (!f->npts)
            continue;
        for (int i = 0; i < f->n; i++) {
            cost[f->ds[i]] = refetch_cost(w, c, outer, f->ds[i], s);
            words[f->ds[i]] = top_refetch_words(c, outer, f->ds[i], s, top);
        }
        sum += level_e[s] = front_least(f, cost);
        top_refetch_add(&tsum, level_t[s] = front_least_words(f, wl, words));
    }
    double floor = sum, above = 0.0;
    top_refetch tabove = {0};
    *t = tsum;
    for (int u = top - 1; coupled && u > 0; u--) {
        if (u < top - 1) { /* the levels above u, each alone */
            above += level_e[u + 1];
            top_refetch_add(&tabove, level_t[u + 1]);
        }
        uint32_t virt = 0;
        for (int ds = 0; ds < wl->nds; ds++)
            if (inner[ds] >= 0 && inner[ds] < u && !((kept[u] >> ds) & 1u) &&
                ((w->clean[u] >> ds) & 1u))
                virt |= 1u << ds;
        if (!virt || !kept[u] || !arch->level[u].has_size ||
            __builtin_popcount((kept[u] | virt) & w->clean[u]) < 2)
            continue;
        const refetch_front *f = front_of(w, u, kept[u], virt, inner);
        if (!f->npts)
            continue;
        for (int i = 0; i < f->n; i++) {
            int ds = f->ds[i], at = (virt >> ds) & 1u ? inner[ds] : u;
            cost[ds] = refetch_cost(w, c, outer, ds, at);
            words[ds] = top_refetch_words(c, outer, ds, at, top);
        }
        floor = fmax(floor, front_least(f, cost) + above);
        top_refetch ct = front_least_words(f, wl, words);
        top_refetch_add(&ct, tabove);
        top_refetch_max(t, ct);
    }
    return floor;
}

/* Weighs spatial choice f, its bound the least over the levels each
 * tensor may have innermost, into *w->b (with the refetches when
 * w->refetches); 0 when the design has no operand floor. */
static int weigh_choice(struct operand_walk *w, const int64_t f[][NM_MAX_DIMS])
{
    const nm_arch *arch = w->mdl.arch;
    const nm_workload *wl = w->mdl.wl;
    int S = arch->nlevels, top = S - 1;
    nm_operand_cost all;
    if (!nm_model_operands(&w->mdl, f, w->keep_at, &all))
        return 0;
    nm_model_hop_costs(&w->mdl, f, NULL, &all);
    double units = 1.0;
    for (int s = 0; s < S; s++)
        for (int d = 0; d < wl->ndims; d++)
            units *= (double)f[s][d];
    double steps = w->r.macs / units; /* temporal iterations */
    double base = w->r.energy_pj, inst = 1.0;
    for (int s = top; s >= 0; s--) {
        base += arch->level[s].e_leak * steps * inst;
        for (int d = 0; d < wl->ndims; d++)
            inst *= (double)f[s][d];
    }
    for (int s = 0; s < S; s++)
        for (int d = 0; d < wl->ndims; d++)
            w->below[s][d] = (s ? w->below[s - 1][d] : 1) * f[s][d];
    for (int s = 0; s < S; s++)
        for (int d = 0; d < wl->ndims; d++)
            w->box[s][d] = wl->bound[d] / (w->below[top][d] / w->below[s][d]);
    memset(w->cur, 0, sizeof w->cur);
    w->epoch++;
    for (int s = 0; s < S; s++)
        w->clean[s] = nm_roofline_clean_spaces(wl, w->box[s], 0);
    double floor_cycles = fmax(w->r.bound_cycles, ceil(steps));
    /* below a fan-out of level 0: each set of tensors the innermost loop
     * may spare (none spared when there is no such fan-out) */
    if (!all.nspared)
        operand_assignments(w, &all, 0, base, floor_cycles);
    for (int k = 0; k < all.nspared; k++)
        operand_assignments(w, &all, all.spared[k], base, floor_cycles);
    return 1;
}

/* One spatial choice f (nm_mapspace_spatial_each), weighed without the
 * refetches: its bound kept as a candidate, or, with no memory for it, as
 * it is. */
static void operand_choice(void *ctx, const int64_t f[][NM_MAX_DIMS])
{
    struct operand_walk *w = ctx;
    nm_operand_bound one = {INFINITY, INFINITY, INFINITY, 0};
    nm_operand_bound *all = w->b;
    w->b = &one;
    w->refetches = 0;
    if (!weigh_choice(w, f))
        w->refused = 1;
    w->b = all;
    all->cycles = fmin(all->cycles, one.cycles);
    if (w->ncand == w->capcand) {
        size_t cap = w->capcand ? 2 * w->capcand : 64;
        candidate *c = nm_realloc_array(w->cand, cap, sizeof *c);
        if (c) {
            w->cand = c;
            w->capcand = cap;
        }
    }
    if (w->ncand == w->capcand) {
        w->done.metric = fmin(w->done.metric, one.metric);
        w->done.energy = fmin(w->done.energy, one.energy);
    } else {
        w->cand[w->ncand] = (candidate){one.metric, one.energy, w->seen, 0};
        w->ncand++;
    }
    w->seen++;
}

/* On the passes after the first: the choices wanted weighed with the
 * refetches into *w->b (the least cycles stay the first pass's, over
 * every choice). */
static void refetch_choice(void *ctx, const int64_t f[][NM_MAX_DIMS])
{
    struct operand_walk *w = ctx;
    if (w->seen < w->nchoices && (w->refetches = w->want[w->seen++]))
        weigh_choice(w, f);
}

/* Candidates by their bound without the refetches, then as they came. */
static int candidate_cmp(const void *a, const void *b)
{
    const candidate *x = a, *y = b;
    if (x->metric != y->metric)
        return x->metric < y->metric ? -1 : 1;
    return (x->index > y->index) - (x->index < y->index);
}

/* The refetches only raise a choice's bound: the candidates weighed with
 * them from the lowest bound without, while one could still give the
 * least metric (with the coupled fronts) or the least energy (each level
 * alone) so far, a batch per pass over the choices, each batch twice the
 * last. */
enum { WEIGH_BATCH = 16 };

static void weigh_candidates(struct operand_walk *w)
{
    nm_operand_bound *all = w->b;
    all->metric = w->done.metric;
    all->energy = w->done.energy;
    qsort(w->cand, w->ncand, sizeof *w->cand, candidate_cmp);
    w->nchoices = w->seen; /* (the same choices come again) */
    w->want = w->ncand ? nm_calloc(w->nchoices, 1) : NULL;
    for (size_t batch = WEIGH_BATCH; w->want; batch *= 2) {
        memset(w->want, 0, (size_t)w->nchoices);
        size_t picked = 0;
        for (size_t i = 0; i < w->ncand && picked < batch; i++) {
            candidate *c = &w->cand[i];
            if (c->weighed || !(c->metric < all->metric || c->energy < all->energy))
                continue;
            w->want[c->index] = c->metric < all->metric ? 2 : 1;
            c->weighed = 1;
            picked++;
        }
        if (!picked)
            break;
        w->seen = 0;
        nm_mapspace_spatial_each(w->ms, w->budget, refetch_choice, w);
    }
    for (size_t i = 0; i < w->ncand; i++) {
        if (w->want && w->cand[i].weighed)
            continue;
        all->metric = fmin(all->metric, w->cand[i].metric); /* (no memory: as it was) */
        all->energy = fmin(all->energy, w->cand[i].energy);
    }
    nm_free(w->want);
    w->want = NULL;
}

/* The least refetch floor over every level each tensor may have
 * outermost below the top, from its innermost inner[ds] up: one that may
 * keep it, at or above every level below the top that must; with the
 * coupled fronts when `coupled`.  The least words they take from the top
 * into *t (each of its three least alone). */
static double least_refetch_floor(struct operand_walk *w, const nm_operand_cost *c,
                                  const int8_t *inner, int coupled, top_refetch *t)
{
    const nm_workload *wl = w->mdl.wl;
    int top = w->mdl.arch->nlevels - 1, nds = wl->nds;
    uint32_t choice[NM_MAX_DS];
    int8_t outer[NM_MAX_DS];
    for (int ds = 0; ds < nds; ds++) {
        choice[ds] = 0;
        if (inner[ds] >= 0 && inner[ds] < top) {
            uint32_t must = w->must[ds] & ((1u << top) - 1u);
            int low = must ? 31 - __builtin_clz(must) : inner[ds];
            if (low < inner[ds])
                low = inner[ds];
            choice[ds] = (w->may[ds] | (1u << inner[ds])) & ((1u << top) - 1u) &
                         ~((1u << low) - 1u);
        }
        outer[ds] = choice[ds] ? (int8_t)__builtin_ctz(choice[ds]) : (int8_t)top;
    }
    double least = INFINITY;
    *t = (top_refetch){INFINITY, INFINITY, INFINITY};
    for (;;) {
        top_refetch one;
        least = fmin(least, refetch_floor(w, c, inner, outer, coupled, &one));
        top_refetch_min(t, one);
        int ds = 0;
        for (; ds < nds; ds++) {
            if (!choice[ds])
                continue;
            uint32_t higher = choice[ds] & ~((2u << outer[ds]) - 1u);
            if (higher) {
                outer[ds] = (int8_t)__builtin_ctz(higher);
                break;
            }
            outer[ds] = (int8_t)__builtin_ctz(choice[ds]);
        }
        if (ds == nds)
            break;
    }
    return least;
}

/* Every assignment of innermost levels (the product of each tensor's
 * choices) with the floor c, the tensors in spared left out: the least of
 * the metric, energy and cycles into w->b. */
static void operand_assignments(struct operand_walk *w, const nm_operand_cost *c,
                                uint32_t spared, double base, double floor_cycles)
{
    const nm_workload *wl = w->mdl.wl;
    int nds = wl->nds;
    int8_t at[NM_MAX_DS], counted[NM_MAX_DS];
    for (int ds = 0; ds < nds; ds++) /* (a spared tensor costs nothing where it is) */
        at[ds] = w->keep_at[ds] && !((spared >> ds) & 1u) ? (int8_t)__builtin_ctz(w->keep_at[ds])
                                                           : -1;
    nm_operand_bound *b = w->b;
    for (;;) {
        double energy = base + nm_model_operand_energy(&w->mdl, c, at, spared, 0, w->once,
                                                       counted);
        /* the footprints at the levels keeping each tensor: a spared one's
         * innermost unknown, from the outermost it may have */
        int8_t inner[NM_MAX_DS];
        double rd[NM_MAX_LEVELS] = {0}, wr[NM_MAX_LEVELS] = {0};
        for (int ds = 0; ds < nds; ds++)
            inner[ds] = at[ds] >= 0 || !w->keep_at[ds]
                            ? at[ds]
                            : (int8_t)(31 - __builtin_clz(w->keep_at[ds]));
        energy += nm_model_kept_floor(&w->mdl, c, inner, w->must, spared, rd, wr);
        double words[NM_MAX_DS];
        nm_model_hop_words(&w->mdl, c, at, w->may, words); /* (spared: -1) */
        energy += nm_model_hop_floor(&w->mdl, c, words);
        double cycles = fmax(floor_cycles,
                             nm_model_operand_cycles_plus(&w->mdl, c, counted, rd, wr));
        /* the refetches, and the cycles the top takes to serve them past
         * each tensor's once, weighed only where the rest could still
         * lower the least so far (they only raise it): first each level
         * alone, then the coupled fronts */
        double lla = w->r.words_in + w->r.words_out, rf = 0.0, cy = cycles;
        double v = nm_metric_value((nm_metric)w->metric, energy, cycles, lla);
        for (int coupled = 0; coupled < w->refetches; coupled++) {
            if (!(v < b->metric || energy + rf < b->energy))
                break;
            top_refetch t;
            rf = least_refetch_floor(w, c, inner, coupled, &t);
            cy = fmax(cycles, top_cycles(w, t));
            v = nm_metric_value((nm_metric)w->metric, energy + rf, cy, lla);
        }
        cycles = cy;
        energy += rf;
        b->metric = fmin(b->metric, v);
        b->energy = fmin(b->energy, energy);
        b->cycles = fmin(b->cycles, cycles);
        /* the next assignment: each tensor's next level that may be innermost */
        int ds = 0;
        for (; ds < nds; ds++) {
            if (at[ds] < 0)
                continue;
            uint32_t higher = w->keep_at[ds] & ~((2u << at[ds]) - 1);
            if (higher) {
                at[ds] = (int8_t)__builtin_ctz(higher);
                break;
            }
            at[ds] = (int8_t)__builtin_ctz(w->keep_at[ds]);
        }
        if (ds == nds)
            break;
    }
}

int nm_roofline_operand_bound(const nm_mapspace *ms, int metric, uint64_t budget,
                              nm_operand_bound *b)
{
    const nm_arch *arch = ms->arch;
    const nm_workload *wl = ms->wl;
    b->metric = b->energy = b->cycles = INFINITY;
    b->choices = 0;
    if (nm_sparse_removes(arch, wl) || ms->imperfect)
        return 0;
    struct operand_walk *w = nm_calloc(1, sizeof *w);
    nm_error err;
    if (!w)
        return 0;
    if (nm_model_init(&w->mdl, arch, wl, &err) != NM_OK) {
        nm_free(w);
        return 0;
    }
    w->metric = metric;
    w->b = b;
    nm_roofline_of(&w->r, arch, wl);
    const nm_level *top = &arch->level[arch->nlevels - 1];
    for (int ds = 0; ds < wl->nds; ds++) {
        /* the levels that may be its innermost: up from the arithmetic,
         * past those that may bypass it, to the first that must keep it */
        for (int s = 0; s < arch->nlevels; s++) {
            const nm_level_space *ls = &ms->level[s];
            if ((ls->bypass >> ds) & 1u)
                continue;
            w->keep_at[ds] |= 1u << s;
            if ((ls->keep >> ds) & 1u)
                break;
        }
        for (int s = 0; s < arch->nlevels; s++) {
            if ((ms->level[s].keep >> ds) & 1u)
                w->must[ds] |= 1u << s;
            if (!((ms->level[s].bypass >> ds) & 1u))
                w->may[ds] |= 1u << s;
        }
        /* as roofline_of counts it: the words it holds, at the top's width */
        double lw = top_words(top, wl, ds, (double)nm_workload_held_words(wl, ds));
        w->once[ds] = lw * (wl->ds[ds].read_write ? top->e_update : top->e_read) /
                      top_block(top);
        *(wl->ds[ds].read_write ? &w->top_out : &w->top_in) += lw;
    }
    w->front = nm_calloc(FRONT_SLOTS, sizeof *w->front);
    w->coupled_front = nm_calloc(FRONT_SLOTS, sizeof *w->coupled_front);
    w->done.metric = w->done.energy = INFINITY;
    w->ms = ms;
    w->budget = budget;
    b->choices = nm_mapspace_spatial_each(ms, budget, operand_choice, w);
    int ok = b->choices > 0 && !w->refused;
    if (ok)
        weigh_candidates(w);
    nm_free(w->cand);
    for (int k = 0; k < FRONT_SLOTS; k++) {
        nm_free(w->front ? w->front[k].g : NULL);
        if (w->coupled_front) {
            nm_free(w->coupled_front[k].g);
            nm_free(w->coupled_front[k].vbox);
        }
    }
    nm_free(w->front);
    nm_free(w->coupled_front);
    nm_model_fini(&w->mdl);
    nm_free(w);
    if (!ok || !(b->metric < INFINITY))
        b->metric = b->energy = b->cycles = INFINITY;
    return ok && b->metric < INFINITY;
}

/* The points of the plane of rows and keys that a causal mask leaves (op's,
 * fusion.h): a row m sees min(keys, m + offset + 1) keys. */
static nm_count causal_points(const nm_chain_op *op)
{
    int64_t rows = op->wl.bound[op->mask_m], keys = op->wl.bound[op->mask_n];
    nm_count t = 0;
    for (int64_t m = 0; m < rows; m++)
        t += (nm_count)(m + op->mask_offset + 1 < keys ? m + op->mask_offset + 1 : keys);
    return t;
}

/* Whether data space ds of wl has indices a and b. */
static int has_dims(const nm_workload *wl, int ds, int a, int b)
{
    int got = 0;
    for (int r = 0; r < wl->ds[ds].nranks; r++)
        for (int t = 0; t < wl->ds[ds].rank[r].nterms; t++) {
            int d = wl->ds[ds].rank[r].term[t].dim;
            got |= (d == a) | (d == b) << 1;
        }
    return got == 3;
}

/* (mask: a masked operation, whose computes, and tensors over its rows and
 * keys, are at least the part of them the mask leaves: a group stepping
 * through the keys computes the steps the diagonal crosses whole, and no
 * mapping computes less than the points it leaves) */
static void roofline_of(nm_roofline *r, const nm_arch *arch, const nm_workload *wl,
                        uint32_t skip, const nm_chain_op *mask)
{
    const nm_level *top = &arch->level[arch->nlevels - 1];
    nm_count macs = nm_workload_macs(wl), plane = 1, left = 1;
    if (mask) {
        plane = (nm_count)(wl->bound[mask->mask_m] * wl->bound[mask->mask_n]);
        left = causal_points(mask);
        macs = macs / plane * left;
    }
    r->macs = r->effectual_macs = (double)macs;
    r->words_in = r->words_out = 0;
    /* Each tensor at its own width (tensor_datawidth): its bytes, and
     * bandwidth and rows in the outermost level's words. */
    double bits = 0.0, lw_in = 0.0, lw_out = 0.0;
    for (int ds = 0; ds < wl->nds; ds++) {
        if ((skip >> ds) & 1u)
            continue;
        double n = (double)nm_workload_held_words(wl, ds);
        if (mask && has_dims(wl, ds, mask->mask_m, mask->mask_n))
            n = n / (double)plane * (double)left;
        double lw = top_words(top, wl, ds, n);
        bits += n * nm_level_ds_bits(top, wl, ds);
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
    r->compute_cycles_exact = (macs + units - 1) / units;
    r->compute_cycles = ceil(r->macs / (double)arch->arith.instances);
    r->mem_cycles = nm_roofline_memory_cycles(top, lw_in, lw_out, &r->bw_note);
    double b = top_block(top);
    r->energy_pj = r->macs * arch->arith.e_compute + lw_in * top->e_read / b +
                   lw_out * top->e_update / b;
    if (nm_sparse_removes(arch, wl)) {
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
            if ((skip >> ds) & 1u)
                continue;
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

enum { CURVE_KEEP = 1 << 16 };

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

/* Single-buffer mappings of loops with ndiv[i] choices of outer factor
 * each (one of them 1: no outer loop), each split in every order of its
 * outer loops; counted exactly (the orders depend on how many outer loops
 * a split has). */
static long double mappings_count(int n, const int *ndiv)
{
    long double poly[NM_MAX_DIMS + 1] = {1.0L}; /* poly[k]: splits with k outer loops */
    for (int d = 0; d < n; d++) {
        long double next[NM_MAX_DIMS + 1] = {0};
        for (int k = 0; k <= d; k++) {
            next[k] += poly[k];                     /* factor 1: no outer loop */
            next[k + 1] += poly[k] * (ndiv[d] - 1); /* an outer loop */
        }
        memcpy(poly, next, sizeof poly);
    }
    long double total = 0.0L, fact = 1.0L;
    for (int k = 0; k <= n; k++) {
        if (k > 1)
            fact *= k;
        total += poly[k] * fact;
    }
    return total;
}

/* Points being gathered, cut back to the staircase whenever the array
 * fills (the staircase of a staircase and more points is the staircase of
 * all of them), so memory stays small. */
typedef struct collector {
    nm_curve_point *pts;
    uint64_t n, room;
} collector;

static nm_status collector_init(collector *k, uint64_t expect, nm_error *err)
{
    k->n = 0;
    k->room = expect < CURVE_KEEP ? (expect ? expect : 1) : CURVE_KEEP;
    if (!(k->pts = nm_calloc(k->room, sizeof *k->pts)))
        return nm_error_set(err, NM_ERR_NOMEM, NULL, 0, 0, "out of memory");
    return NM_OK;
}

/* The next free point, zeroed (ties compare whole arrays); NULL when out
 * of memory.  It counts once k->n is moved past it. */
static nm_curve_point *collector_slot(collector *k, nm_error *err)
{
    if (k->n == k->room) {
        k->n = staircase(k->pts, k->n);
        if (k->n > k->room / 2) { /* a long staircase: room for more */
            nm_curve_point *more = nm_realloc_array(k->pts, 2 * k->room, sizeof *more);
            if (!more) {
                nm_error_set(err, NM_ERR_NOMEM, NULL, 0, 0, "out of memory");
                return NULL;
            }
            k->pts = more;
            k->room *= 2;
        }
    }
    nm_curve_point *p = &k->pts[k->n];
    memset(p, 0, sizeof *p);
    return p;
}

/* Hands the staircase of what was gathered to *c. */
static void collector_done(collector *k, nm_curve *c)
{
    uint64_t n = staircase(k->pts, k->n);
    c->n = (int)n;
    c->pt = k->pts;
    c->compulsory = n ? k->pts[n - 1].traffic : 0.0;
    k->pts = NULL;
}

/* The divisors of each of the n bounds into div (CURVE_DIVISORS each) and
 * ndiv; an error naming the one with too many. */
static nm_status curve_divisors(const char *what, char names[][NM_NAME_MAX], const int64_t *bound,
                                int n, int64_t (*div)[CURVE_DIVISORS], int *ndiv, nm_error *err)
{
    for (int d = 0; d < n; d++) {
        ndiv[d] = divisors_of(bound[d], div[d], CURVE_DIVISORS);
        if (ndiv[d] < 0)
            return nm_error_set(err, NM_ERR_INPUT, NULL, 0, 0, "%s: dimension %s (%lld) has "
                                "too many divisors for the curve (it takes up to %d)", what,
                                names[d], (long long)bound[d], CURVE_DIVISORS - 2);
    }
    return NM_OK;
}

static nm_status curve_budget(const char *what, long double total, uint64_t budget,
                              nm_error *err)
{
    if (total <= (long double)budget)
        return NM_OK;
    return nm_error_set(err, NM_ERR_INPUT, NULL, 0, 0,
                        "%s has %.3Lg single-buffer mappings (each loop split in two, the outer "
                        "loops in every order), more than the %llu the curve may evaluate: "
                        "raise --curve-budget, or take a smaller problem", what, total,
                        (unsigned long long)budget);
}

/* The design of one buffer the curves count on. */
static nm_status curve_design(nm_ydoc *doc, nm_arch *arch, nm_error *err)
{
    nm_status st = nm_ydoc_load_string(doc, "<the curve's buffer>", curve_arch,
                                       sizeof curve_arch - 1, err);
    if (st == NM_OK)
        st = nm_arch_parse(arch, nm_ymap_get(doc->root, "architecture"), NULL, doc, err);
    return st;
}

nm_status nm_roofline_curve(const nm_workload *wl, uint64_t budget, nm_curve *c, nm_error *err)
{
    memset(c, 0, sizeof *c);
    int nd = wl->ndims;
    int64_t (*div)[CURVE_DIVISORS] = nm_calloc((size_t)(nd ? nd : 1), sizeof *div);
    int ndiv[NM_MAX_DIMS];
    if (!div)
        return nm_error_set(err, NM_ERR_NOMEM, NULL, 0, 0, "out of memory");
    char names[NM_MAX_DIMS][NM_NAME_MAX];
    for (int d = 0; d < nd; d++)
        snprintf(names[d], NM_NAME_MAX, "%s", wl->dim[d]);
    nm_status st = curve_divisors(wl->name, names, wl->bound, nd, div, ndiv, err);
    int clean = nm_roofline_clean_spaces(wl, wl->bound, 1) == (1u << wl->nds) - 1u;
    uint64_t splits = 1;
    for (int d = 0; st == NM_OK && d < nd; d++)
        splits = splits > UINT64_MAX / (uint64_t)ndiv[d] ? UINT64_MAX : splits * (uint64_t)ndiv[d];
    if (st == NM_OK)
        st = curve_budget(wl->name, clean ? (long double)splits : mappings_count(nd, ndiv),
                          budget, err);
    if (st != NM_OK) {
        nm_free(div);
        return st;
    }
    nm_ydoc doc;
    nm_arch arch;
    nm_ydoc_init(&doc);
    st = curve_design(&doc, &arch, err);
    nm_model mdl;
    int have_model = st == NM_OK && (st = nm_model_init(&mdl, &arch, wl, err)) == NM_OK;
    collector col = {0};
    if (st == NM_OK)
        st = collector_init(&col, splits, err);
    /* clean tensors (roofline.h): each one's words at a refetch */
    uint32_t irr[NM_MAX_DS];
    double weight[NM_MAX_DS];
    for (int ds = 0; ds < wl->nds; ds++) {
        irr[ds] = have_model ? ~mdl.ds_dims[ds] : 0;
        weight[ds] = (double)nm_workload_ds_size(wl, ds) * (wl->ds[ds].read_write ? 2 : 1);
    }
    int idx[NM_MAX_DIMS] = {0};
    nm_stats stats;
    for (int more = 1; st == NM_OK && more; more = next_split(idx, ndiv, nd)) {
        nm_curve_point *pt = collector_slot(&col, err);
        if (!pt) {
            st = NM_ERR_NOMEM;
            break;
        }
        nm_mapping m;
        nm_mapping_init(&m, &arch, wl);
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
         * backing-store word); the least traffic the split reaches.  With
         * every tensor clean, the order the refetches (roofline.h) find
         * least, input words read G times and output words updated G
         * times and read back G - 1: the least of all. */
        int8_t perm[NM_MAX_DIMS];
        memcpy(perm, outer, sizeof perm);
        pt->traffic = INFINITY;
        do {
            int8_t order[NM_MAX_DIMS] = {0};
            int k = 0;
            if (clean) {
                nm_roofline_least_refetch(wl->nds, irr, weight, pt->outer, nd, NULL, order);
            } else {
                for (int i = 0; i < pt->nouter; i++)
                    order[k++] = perm[i];
                for (int d = 0; d < nd; d++)
                    if (pt->outer[d] == 1)
                        order[k++] = (int8_t)d;
            }
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
        } while (!clean && nm_mapping_next_order(perm, pt->nouter));
        if (pt->traffic < INFINITY)
            col.n++;
    }
    if (have_model)
        nm_model_fini(&mdl);
    nm_ydoc_fini(&doc);
    nm_free(div);
    if (st != NM_OK) {
        nm_free(col.pts);
        return st;
    }
    collector_done(&col, c);
    return NM_OK;
}

/* ---- a chain's curve ---- */

/* The points of ops a..b of c (a chain rewritten to recompute halos
 * along the last operation's split_dim[] in split_steps[] steps, or as
 * written when nsplit is 0) as one group fused at the buffer, into col:
 * every split of the loops they may share (nm_fused_shareable; the steps'
 * whole) in every order, each (split, order) its own point, as the words
 * the group needs depend on the order; the outer loops recorded over
 * operation a's dimensions as written (w0dims of them). */
static nm_status group_points(const nm_chain *c, int a, int b, int nsplit, const int8_t *split_dim,
                              const int64_t *split_steps, int retain, int w0dims,
                              nm_fused_model *fmdl,
                              nm_fused_map *fm, nm_fused_stats *st, collector *col,
                              uint64_t *evaluated, nm_error *err)
{
    const nm_arch *arch = fmdl->arch;
    const nm_workload *w0 = &c->op[a].wl;
    int nops = b - a + 1;
    char names[NM_MAX_DIMS][NM_NAME_MAX];
    int64_t bound[NM_MAX_DIMS];
    int nsh = nm_fused_shareable(c, a, nops, names, bound, NM_MAX_DIMS);
    int64_t (*div)[CURVE_DIVISORS] = nm_calloc((size_t)(nsh ? nsh : 1), sizeof *div);
    int ndiv[NM_MAX_DIMS];
    if (!div)
        return nm_error_set(err, NM_ERR_NOMEM, NULL, 0, 0, "out of memory");
    nm_status s = curve_divisors(c->name, names, bound, nsh, div, ndiv, err);
    for (int j = 0; j < nsh && s == NM_OK; j++)
        if (nm_workload_dim(w0, names[j]) >= w0dims) { /* the steps: all of them outside */
            div[j][0] = bound[j];
            ndiv[j] = 1;
        }
    memset(fm, 0, sizeof *fm);
    fm->ngroups = 1;
    fm->group[0].first = a;
    fm->group[0].nops = nops;
    fm->group[0].level = 0; /* the buffer */
    if (retain) {
        fm->group[0].nsplit = 1;
        fm->group[0].split[0].retain = 1;
    }
    for (int i = a; i <= b; i++)
        fm->onchip[i] = nm_fused_onchip(c, a, nops, i);
    int idx[NM_MAX_DIMS] = {0};
    for (int more = 1; s == NM_OK && more; more = next_split(idx, ndiv, nsh)) {
        int64_t f[NM_MAX_DIMS];
        int8_t perm[NM_MAX_DIMS];
        int nout = 0;
        for (int j = 0; j < nsh; j++) {
            f[j] = div[j][idx[j]];
            if (f[j] > 1)
                perm[nout++] = (int8_t)j;
        }
        do {
            int8_t order[NM_MAX_DIMS]; /* into names, innermost first */
            int k = 0;
            for (int j = 0; j < nout; j++)
                order[k++] = perm[j];
            for (int j = 0; j < nsh; j++)
                if (f[j] == 1)
                    order[k++] = (int8_t)j;
            int ok = 1;
            double traffic = 0.0;
            for (int i = a; i <= b && ok; i++) {
                nm_fused_canonical(arch, c, i, &fm->group[0], names, nsh, f, order,
                                   fm->onchip[i], &fm->map[i]);
                ok = nm_model_eval(&fmdl->op[i], &fm->map[i], &st->op[i], NULL);
            }
            st->valid = ok;
            char why[NM_ERROR_MSG_MAX];
            if (ok && retain && !nm_fused_retain_ok(arch, c, &fm->group[0], fm->map, why,
                                                    sizeof why))
                continue; /* (an order the steps cannot retain in) */
            if (ok) /* (the steps a causal mask covers skipped, where they are) */
                ok = nm_fused_causal(fmdl, fm, st);
            if (ok && retain) /* (each producer's first step computes its head too) */
                ok = nm_fused_first_steps(fmdl, fm, st);
            for (int i = a; i <= b && ok; i++)
                traffic += (double)st->op[i].last_level_accesses;
            (*evaluated)++;
            if (!ok)
                continue; /* (never: nothing is bounded) */
            nm_curve_point *pt = collector_slot(col, err);
            if (!pt) {
                s = NM_ERR_NOMEM;
                break;
            }
            memset(pt, 0, sizeof *pt);
            pt->capacity = (double)nm_fused_group_peak(fmdl, fm, 0, st, 0);
            pt->traffic = traffic;
            for (int d = 0; d < w0dims; d++)
                pt->outer[d] = 1;
            for (int j = 0; j < nsh; j++) {
                int d = nm_workload_dim(w0, names[j]);
                if (d < w0dims)
                    pt->outer[d] = f[j];
            }
            for (int j = 0; j < nout; j++) {
                int d = nm_workload_dim(w0, names[order[j]]);
                if (d < w0dims)
                    pt->order[pt->nouter++] = (int8_t)d;
            }
            pt->nsplit = nsplit;
            pt->retain = retain;
            for (int k2 = 0; k2 < nsplit; k2++) {
                pt->split_dim[k2] = split_dim[k2];
                pt->split_steps[k2] = split_steps[k2];
            }
            col->n++;
        } while (nm_mapping_next_order(perm, nout));
    }
    nm_free(div);
    return s;
}

/* The curve of ops a..b as one group fused at the buffer: its points as
 * written (group_points), and with every recomputing split of its halos
 * (each number of steps dividing the rows, columns, or both). */
static nm_status range_curve(const nm_chain *c, int a, int b, nm_fused_model *fmdl,
                             nm_fused_map *fm, nm_fused_stats *st, nm_curve *out, nm_error *err)
{
    collector col = {0};
    nm_status s = collector_init(&col, 1024, err);
    uint64_t evaluated = 0;
    int w0dims = c->op[a].wl.ndims;
    if (s == NM_OK)
        s = group_points(c, a, b, 0, NULL, NULL, 0, w0dims, fmdl, fm, st, &col, &evaluated, err);
    int dims[NM_MAX_SPLITS];
    int nh = s == NM_OK ? nm_chain_halo_dims(c, a, b - a + 1, dims) : 0;
    if (nh < 0) {
        s = nm_error_set(err, NM_ERR_NOMEM, NULL, 0, 0, "out of memory");
        nh = 0;
    }
    int64_t div[NM_MAX_SPLITS][CURVE_DIVISORS];
    int ndiv[NM_MAX_SPLITS] = {1, 1};
    div[0][0] = div[1][0] = 1;
    for (int h = 0; h < nh; h++)
        if ((ndiv[h] = divisors_of(c->op[b].wl.bound[dims[h]], div[h], CURVE_DIVISORS)) < 0)
            ndiv[h] = 1; /* (too many to try: as written only) */
    nm_chain *v = nh ? nm_calloc(1, sizeof *v) : NULL;
    nm_fused_model *vm = nh ? nm_calloc(1, sizeof *vm) : NULL;
    if (nh && (!v || !vm))
        s = nm_error_set(err, NM_ERR_NOMEM, NULL, 0, 0, "out of memory");
    for (int i0 = 0; s == NM_OK && i0 < ndiv[0]; i0++)
        for (int i1 = 0; s == NM_OK && i1 < (nh > 1 ? ndiv[1] : 1); i1++) {
            int8_t sd[NM_MAX_SPLITS];
            int64_t ss[NM_MAX_SPLITS];
            int ns = 0;
            if (nh > 0 && div[0][i0] > 1) {
                sd[ns] = (int8_t)dims[0];
                ss[ns++] = div[0][i0];
            }
            if (nh > 1 && div[1][i1] > 1) {
                sd[ns] = (int8_t)dims[1];
                ss[ns++] = div[1][i1];
            }
            if (ns == 0)
                continue; /* (as written: above) */
            /* halos recomputed, and (one split) retained */
            for (int retain = 0; s == NM_OK && retain < (ns == 1 ? 2 : 1); retain++) {
                *v = *c;
                char step[NM_NAME_MAX], why[NM_ERROR_MSG_MAX];
                int ok = 1;
                for (int k = 0; k < ns && ok; k++)
                    ok = (retain ? nm_chain_retain : nm_chain_recompute)(
                             v, a, b - a + 1, c->op[b].wl.dim[sd[k]], ss[k], step, why,
                             sizeof why) == NM_OK;
                if (!ok)
                    continue;
                if ((s = nm_fused_model_init(vm, fmdl->arch, v, err)) != NM_OK)
                    break;
                s = group_points(v, a, b, ns, sd, ss, retain, w0dims, vm, fm, st, &col,
                                 &evaluated, err);
                nm_fused_model_fini(vm);
            }
        }
    nm_free(v);
    nm_free(vm);
    if (s != NM_OK) {
        nm_free(col.pts);
        return s;
    }
    collector_done(&col, out);
    out->evaluated = evaluated;
    return NM_OK;
}

/* The index of the last point of c at or below capacity, or -1. */
static int curve_index(const nm_curve *c, double capacity)
{
    int lo = 0, hi = c->n; /* the first point above capacity */
    while (lo < hi) {
        int mid = (lo + hi) / 2;
        if (c->pt[mid].capacity <= capacity)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo - 1;
}

static int by_value(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return a < b ? -1 : a > b;
}

/* The chain's staircase from its groups' curves: at each capacity one of
 * them starts at, the least total over the cuts of the chain into groups
 * (each group runs with the whole buffer, one after the other). */
static nm_status chain_staircase(nm_chain_curve *cc, nm_error *err)
{
    int n = cc->nops;
    uint64_t nb = 0;
    for (int a = 0; a < n; a++)
        for (int b = a; b < n; b++)
            nb += (uint64_t)cc->range[a][b].n;
    double *cap = nm_calloc(nb ? nb : 1, sizeof *cap);
    nm_chain_curve_point *pts = nm_calloc(nb ? nb : 1, sizeof *pts);
    if (!cap || !pts) {
        nm_free(cap);
        nm_free(pts);
        return nm_error_set(err, NM_ERR_NOMEM, NULL, 0, 0, "out of memory");
    }
    uint64_t k = 0;
    for (int a = 0; a < n; a++)
        for (int b = a; b < n; b++)
            for (int i = 0; i < cc->range[a][b].n; i++)
                cap[k++] = cc->range[a][b].pt[i].capacity;
    qsort(cap, nb, sizeof *cap, by_value);
    int np = 0;
    for (uint64_t i = 0; i < nb; i++) {
        if (i && cap[i] == cap[i - 1])
            continue;
        /* best[j]: the least traffic of ops 0..j-1; from[j]: where its last
         * group begins */
        double best[NM_MAX_OPS + 1];
        int from[NM_MAX_OPS + 1], at[NM_MAX_OPS + 1];
        best[0] = 0.0;
        for (int j = 1; j <= n; j++) {
            best[j] = INFINITY;
            for (int a = 0; a < j; a++) {
                const nm_curve *r = &cc->range[a][j - 1];
                int p = curve_index(r, cap[i]);
                if (p < 0 || best[a] == INFINITY)
                    continue;
                double t = best[a] + r->pt[p].traffic;
                if (t < best[j]) {
                    best[j] = t;
                    from[j] = a;
                    at[j] = p;
                }
            }
        }
        if (best[n] == INFINITY || (np && best[n] >= pts[np - 1].traffic))
            continue;
        nm_chain_curve_point *q = &pts[np++];
        q->capacity = cap[i];
        q->traffic = best[n];
        q->cut = 0;
        for (int j = n; j > 0; j = from[j]) {
            q->cut |= 1u << from[j];
            q->pt[from[j]] = at[j];
        }
    }
    nm_free(cap);
    cc->n = np;
    cc->pt = pts;
    cc->compulsory = np ? pts[np - 1].traffic : 0.0;
    return NM_OK;
}

nm_status nm_roofline_chain_curve(const nm_chain *c, uint64_t budget, nm_chain_curve *cc,
                                  nm_error *err)
{
    memset(cc, 0, sizeof *cc);
    cc->nops = c->nops;
    /* the count first, so that nothing runs past the budget */
    long double total = 0.0L;
    for (int a = 0; a < c->nops; a++)
        for (int b = a; b < c->nops; b++) {
            char names[NM_MAX_DIMS][NM_NAME_MAX];
            int64_t bound[NM_MAX_DIMS], (*div)[CURVE_DIVISORS];
            int nsh, ndiv[NM_MAX_DIMS];
            if (a == b) {
                const nm_workload *wl = &c->op[a].wl;
                nsh = wl->ndims;
                for (int d = 0; d < nsh; d++) {
                    snprintf(names[d], NM_NAME_MAX, "%s", wl->dim[d]);
                    bound[d] = wl->bound[d];
                }
            } else if (nm_fused_leaks(c, a, b - a + 1) >= 0) {
                continue;
            } else {
                nsh = nm_fused_shareable(c, a, b - a + 1, names, bound, NM_MAX_DIMS);
            }
            if (!(div = nm_calloc((size_t)(nsh ? nsh : 1), sizeof *div)))
                return nm_error_set(err, NM_ERR_NOMEM, NULL, 0, 0, "out of memory");
            nm_status st = curve_divisors(a == b ? c->op[a].name : c->name, names, bound, nsh,
                                          div, ndiv, err);
            nm_free(div);
            if (st != NM_OK)
                return st;
            total += mappings_count(nsh, ndiv);
        }
    nm_status st = curve_budget(c->name, total, budget, err);
    if (st != NM_OK)
        return st;
    nm_ydoc doc;
    nm_arch arch;
    nm_fused_model fmdl;
    nm_ydoc_init(&doc);
    nm_fused_map *fm = nm_calloc(1, sizeof *fm);
    nm_fused_stats *fs = nm_calloc(1, sizeof *fs);
    if (!fm || !fs)
        st = nm_error_set(err, NM_ERR_NOMEM, NULL, 0, 0, "out of memory");
    if (st == NM_OK)
        st = curve_design(&doc, &arch, err);
    int have_model = st == NM_OK && (st = nm_fused_model_init(&fmdl, &arch, c, err)) == NM_OK;
    for (int a = 0; st == NM_OK && a < c->nops; a++)
        for (int b = a; st == NM_OK && b < c->nops; b++) {
            nm_curve *r = &cc->range[a][b];
            if (a == b && !c->op[a].masked)
                st = nm_roofline_curve(&c->op[a].wl, budget, r, err);
            else if (nm_fused_leaks(c, a, b - a + 1) < 0) /* (a masked operation alone:
                                                           * its steps may skip) */
                st = range_curve(c, a, b, &fmdl, fm, fs, r, err);
            cc->evaluated += r->evaluated;
        }
    if (have_model)
        nm_fused_model_fini(&fmdl);
    nm_ydoc_fini(&doc);
    nm_free(fm);
    nm_free(fs);
    if (st == NM_OK)
        st = chain_staircase(cc, err);
    if (st != NM_OK)
        nm_chain_curve_fini(cc);
    return st;
}

void nm_chain_curve_fini(nm_chain_curve *cc)
{
    for (int a = 0; a < NM_MAX_OPS; a++)
        for (int b = 0; b < NM_MAX_OPS; b++)
            nm_curve_fini(&cc->range[a][b]);
    nm_free(cc->pt);
    memset(cc, 0, sizeof *cc);
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
