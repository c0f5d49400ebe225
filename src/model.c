/* model.c — one mapping evaluated: validity, accounting, energy, cycles.
 *
 * The nest analysis (nest.c) gives, per level and data space, the tile each
 * instance holds and the accesses it receives from below.  This file turns
 * those into reads, fills and updates following Timeloop's conventions:
 *
 *  - a level that bypasses a data space disappears from that data space's
 *    chain: its children's requests go to the next level out;
 *  - fills of a level are its share of its parent's reads (a multicast read
 *    counts once at the parent but fills every receiver);
 *  - outputs are read-modify-write: each element's first write needs no
 *    read, so reads = temporal reductions = updates - partition size, and
 *    inner levels' fills exclude the partition's first fill;
 *  - transfers between spatial neighbours charge the receiving level.
 */
#include <config.h>

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "nestmap/alloc.h"
#include "nestmap/model.h"
#include "nestmap/roofline.h"

/* The shape (tile sizes, instances in use) of the last valid mapping with
 * perfect factors, which checks passed: it holds for any mapping that
 * differs from it only in temporal loop orders. */
struct nm_shape_memo {
    int valid;
    nm_mapping m;
    nm_nest_result nr;
    nm_stats floor; /* scratch of nm_model_floor */
};

nm_status nm_model_init(nm_model *mdl, const nm_arch *arch, const nm_workload *wl, nm_error *err)
{
    mdl->arch = arch;
    mdl->wl = wl;
    mdl->sparse = arch->sparse.active ? &arch->sparse : NULL;
    mdl->split = arch->sparse.given || wl->has_density;
    mdl->spws = NULL;
    mdl->ws = NULL;
    mdl->shape = NULL;
    if (!nm_workload_fits64(wl)) {
        char macs[48];
        return nm_error_set(err, NM_ERR_INPUT, NULL, 0, 0,
                            "%s has %s multiply-accumulates; the cost model counts accesses in "
                            "64 bits and takes layers of up to 2^60 (1.2e18): split the layer, "
                            "or take its roofline with nestmap bound", wl->name,
                            nm_count_text(nm_workload_macs(wl), macs, sizeof macs));
    }
    nm_status st = nm_arch_check_widths(arch, wl, err);
    if (st != NM_OK)
        return st;
    mdl->macs = 1.0;
    for (int d = 0; d < wl->ndims; d++)
        mdl->macs *= (double)wl->bound[d];
    mdl->ds_plain = 0;
    for (int ds = 0; ds < wl->nds; ds++) {
        int plain = 1; /* every axis one index, coefficient 1 */
        mdl->ds_dims[ds] = 0;
        for (int r = 0; r < wl->ds[ds].nranks; r++) {
            const nm_axis *a = &wl->ds[ds].rank[r];
            plain &= a->nterms == 0 || (a->nterms == 1 && a->term[0].coef == 1);
            for (int i = 0; i < a->nterms; i++)
                if (a->term[i].coef)
                    mdl->ds_dims[ds] |= 1u << a->term[i].dim;
        }
        mdl->ds_plain |= (unsigned)plain << ds;
    }
    mdl->wide = 0;
    mdl->bw_limited = 0;
    for (int s = 0; s < arch->nlevels; s++)
        mdl->bw_limited |= arch->level[s].has_read_bw || arch->level[s].has_write_bw ||
                           arch->level[s].has_shared_bw;
    for (int s = 0; s < arch->nlevels; s++)
        for (int ds = 0; ds < wl->nds; ds++) {
            mdl->ds_bits[s][ds] = nm_level_ds_bits(&arch->level[s], wl, ds);
            if (mdl->ds_bits[s][ds] != arch->level[s].word_bits)
                mdl->wide |= 1u << s;
        }
    mdl->ws = nm_nest_ws_new(arch, wl);
    mdl->shape = nm_calloc(1, sizeof *mdl->shape);
    mdl->sparse_bound = nm_sparse_removes(arch, wl);
    if (arch->sparse.active)
        mdl->spws = nm_sparse_ws_new();
    if (mdl->sparse_bound) {
        nm_roofline r;
        nm_roofline_of(&r, arch, wl);
        mdl->sparse_energy = r.energy_pj;
        mdl->sparse_cycles = r.compute_cycles;
    }
    if (!mdl->ws || !mdl->shape || (arch->noc && !nm_nest_ws_noc(mdl->ws, 1)) ||
        (arch->sparse.active && !mdl->spws)) {
        nm_model_fini(mdl);
        return nm_error_set(err, NM_ERR_NOMEM, NULL, 0, 0, "out of memory");
    }
    /* Floor plan (Timeloop's Topology::FloorPlan): a level's tile is the
     * level and its fan-out's tiles; a network hops the width of a child
     * tile. */
    double tile = arch->arith.area;
    for (int s = 0; s < arch->nlevels; s++) {
        const nm_level *L = &arch->level[s];
        mdl->noc_width[s] = sqrt(tile);
        tile = L->area + (double)(L->fanoutX * L->fanoutY) * tile;
    }
    return NM_OK;
}

void nm_model_fini(nm_model *mdl)
{
    if (!mdl)
        return;
    nm_nest_ws_free(mdl->ws);
    mdl->ws = NULL;
    nm_free(mdl->shape);
    mdl->shape = NULL;
    nm_sparse_ws_free(mdl->spws);
    mdl->spws = NULL;
}

void nm_model_forget(nm_model *mdl)
{
    nm_nest_ws_forget(mdl->ws);
    mdl->shape->valid = 0;
}

/* Whether a and b differ at most in their temporal loop orders. */
static int same_but_orders(const nm_mapping *a, const nm_mapping *b, int nlevels)
{
    for (int s = 0; s < nlevels; s++) {
        const nm_level_map *x = &a->level[s], *y = &b->level[s];
        if (memcmp(x->tfactor, y->tfactor, sizeof x->tfactor) ||
            memcmp(x->tresidual, y->tresidual, sizeof x->tresidual) ||
            memcmp(x->sfactor, y->sfactor, sizeof x->sfactor) ||
            memcmp(x->sresidual, y->sresidual, sizeof x->sresidual) ||
            memcmp(x->sorder, y->sorder, sizeof x->sorder) || x->split != y->split ||
            x->keep != y->keep || x->no_link != y->no_link ||
            x->no_multicast != y->no_multicast || x->no_temporal_reuse != y->no_temporal_reuse)
            return 0;
    }
    return 1;
}

static int invalid(nm_stats *out, nm_invalid_kind kind, int level, int index, char axis,
                   uint64_t got, uint64_t limit)
{
    out->invalid = (nm_invalid){kind, level, index, axis, got, limit};
    return 0;
}

/* a*b + c, or UINT64_MAX where that overflows */
static uint64_t sat_mul_add(uint64_t a, uint64_t b, uint64_t c)
{
    if (b && a > (UINT64_MAX - c) / b)
        return UINT64_MAX;
    return a * b + c;
}

/* Factors must compose to the bounds; checked first, since the nest's
 * extents are products of factors.  With residuals the rule is Timeloop's
 * (mapping/parser.cpp), outermost loop first:
 *     ((((r3-1)*f2 + (r2-1))*f1 + (r1-1))*f0 + r0 = bound
 * where a level's spatial loop (its fan-out) sits inside its temporal one
 * and, with a residual, uses only that many siblings in its last instance.
 * This is the plain product when every residual equals its factor.  A
 * residual must not sit under a spatial loop of its own dimension (only
 * the last sibling would run it there).  Values stop growing past the
 * bound, so nothing overflows whatever the factors. */
static int check_factors(const nm_model *mdl, const nm_mapping *m, nm_stats *out)
{
    const nm_arch *arch = mdl->arch;
    const nm_workload *wl = mdl->wl;
    uint8_t nres[NM_MAX_LEVELS] = {0}; /* spatial residuals per fan-out */
    for (int d = 0; d < wl->ndims; d++) {
        uint64_t p = 0, bound = (uint64_t)wl->bound[d]; /* p: the last index so far */
        int spatial_above = -1;
        for (int s = arch->nlevels - 1; s >= 0 && p < bound; s--) {
            const nm_level_map *lm = &m->level[s];
            uint64_t t = (uint64_t)lm->tfactor[d], f = (uint64_t)lm->sfactor[d];
            uint64_t r = (uint64_t)nm_level_residual(lm, d);
            uint64_t rs = (uint64_t)nm_level_sresidual(lm, d); /* f, or fewer (spatial residual) */
            /* (p * t > bound for p > bound / t: no division, which costs as
             * much as the rest of the loop) */
            uint64_t pt, pf;
            if (t == 0 || f == 0 || r == 0 || r > t || r > bound || rs > bound ||
                __builtin_mul_overflow(p, t, &pt) || pt > bound ||
                (rs != f && (rs == 0 || rs > f))) {
                p = bound;
                break;
            }
            if (r != t && spatial_above >= 0)
                return invalid(out, NM_INV_RESIDUAL, s, d, 0, (uint64_t)spatial_above, 0);
            p = pt + (r - 1);
            if (p >= bound || __builtin_mul_overflow(p, f, &pf) || pf > bound) {
                p = bound;
                break;
            }
            if (rs != f) {
                if (spatial_above >= 0)
                    return invalid(out, NM_INV_RESIDUAL, s, d, 0, (uint64_t)spatial_above, 0);
                nres[s]++;
            }
            p = pf + (rs - 1);
            if (f > 1)
                spatial_above = s;
        }
        if (p >= bound || p + 1 != bound) {
            /* report the plain product, as users think of it */
            uint64_t q = 1;
            for (int s = 0; s < arch->nlevels && q <= bound; s++) {
                uint64_t t = (uint64_t)m->level[s].tfactor[d], f = (uint64_t)m->level[s].sfactor[d];
                q = (t == 0 || f == 0 || t > bound / f || q > bound / (t * f)) ? bound + 1
                                                                               : q * t * f;
            }
            /* with well-formed residuals, what they cover, saturating */
            int residual = 0, wellformed = 1;
            uint64_t c = 0;
            for (int s = arch->nlevels - 1; s >= 0; s--) {
                const nm_level_map *lm = &m->level[s];
                uint64_t t = (uint64_t)lm->tfactor[d], f = (uint64_t)lm->sfactor[d];
                uint64_t r = (uint64_t)nm_level_residual(lm, d);
                uint64_t rs = (uint64_t)nm_level_sresidual(lm, d);
                residual |= r != t || rs != f;
                wellformed &= r >= 1 && r <= t && rs >= 1 && rs <= f;
                if (wellformed)
                    c = sat_mul_add(sat_mul_add(c, t, r - 1), f, rs - 1);
            }
            if (residual && wellformed)
                return invalid(out, NM_INV_FACTORS, -1, d, 'r', c == UINT64_MAX ? c : c + 1,
                               bound);
            return invalid(out, NM_INV_FACTORS, -1, d, 0, p >= bound ? q : p + 1, bound);
        }
    }
    for (int s = 0; s < arch->nlevels; s++) /* (the loop above saw every level) */
        if (nres[s] > NM_MAX_FAN_RESIDUALS)
            return invalid(out, NM_INV_FAN_RESIDUALS, s, -1, 0, nres[s], NM_MAX_FAN_RESIDUALS);
    return 1;
}

static uint64_t ceil_div(uint64_t a, uint64_t b)
{
    return b == 1 ? a : a / b + (a % b != 0);
}

/* n words of `bits` bits in words of W bits (tensor_datawidth), rounded up. */
static uint64_t in_words(uint64_t n, int bits, int W)
{
    unsigned __int128 x = (unsigned __int128)n * (unsigned)bits + (unsigned)(W - 1);
    x /= (unsigned)W;
    return x > UINT64_MAX ? UINT64_MAX : (uint64_t)x;
}

/* Vector accesses (rows of b words of W bits) that n words of data space
 * ds take at level s with tensor_datawidth: the rows its n x bits bits
 * fill (a level without it takes ceil(n / b): the callers test mdl->wide
 * first, keeping the usual path as it was). */
__attribute__((noinline)) static uint64_t vectors(const nm_model *mdl, int s, int ds,
                                                 uint64_t n, uint64_t b)
{
    int bits = mdl->ds_bits[s][ds], W = mdl->arch->level[s].word_bits;
    unsigned __int128 x = (unsigned __int128)n * (unsigned)bits;
    unsigned __int128 row = (unsigned __int128)b * (unsigned)W;
    x = (x + row - 1) / row;
    return x > UINT64_MAX ? UINT64_MAX : (uint64_t)x;
}

/* nm_model_tile_words, for the checks' loop (hot: inlined there). */
static inline uint64_t tile_words(const nm_model *mdl, int s, int ds, uint64_t t)
{
    const nm_workload *wl = mdl->wl;
    /* a tile with metadata holds its nonzeros (sparse.h) */
    if (mdl->arch->sparse.repr[s][ds].nranks && t)
        t = nm_density_capacity(&wl->density[ds], t, nm_workload_ds_size(wl, ds));
    if ((mdl->wide >> s) & 1u) /* in the level's words */
        t = in_words(t, mdl->ds_bits[s][ds], mdl->arch->level[s].word_bits);
    return t;
}

uint64_t nm_model_tile_words(const nm_model *mdl, int s, int ds, uint64_t t)
{
    return tile_words(mdl, s, ds, t);
}

/* Checks that need no analysis, in the order Timeloop reports them. */
static int check(const nm_model *mdl, const nm_mapping *m, const nm_nest_result *shape,
                 nm_stats *out)
{
    const nm_arch *arch = mdl->arch;
    const nm_workload *wl = mdl->wl;
    for (int s = 0; s < arch->nlevels; s++) {
        if (arch->level[s].fanoutX * arch->level[s].fanoutY > 1)
            continue;
        for (int d = 0; d < wl->ndims; d++)
            if (m->level[s].sfactor[d] > 1)
                return invalid(out, NM_INV_NO_FANOUT, s, d, 0, (uint64_t)m->level[s].sfactor[d], 1);
    }
    for (int ds = 0; ds < wl->nds; ds++) {
        int kept = 0;
        for (int s = 0; s < arch->nlevels; s++)
            kept |= (int)((m->level[s].keep >> ds) & 1u);
        if (!kept)
            return invalid(out, NM_INV_BYPASS_ALL, -1, ds, 0, 0, 0);
    }
    for (int s = 0; s < arch->nlevels; s++) {
        const nm_level *L = &arch->level[s];
        if (!L->has_size)
            continue;
        uint64_t need = 0;
        for (int ds = 0; ds < wl->nds; ds++)
            if ((m->level[s].keep >> ds) & 1u)
                need += tile_words(mdl, s, ds, shape->tile[s][ds].size);
        if (need > (uint64_t)L->effective_size)
            return invalid(out, NM_INV_CAPACITY, s, -1, 0, need, (uint64_t)L->effective_size);
        if ((double)need < (double)L->effective_size * L->min_utilization)
            return invalid(out, NM_INV_MIN_UTIL, s, -1, 0, need, (uint64_t)L->effective_size);
    }
    const nm_arith *A = &arch->arith;
    if (shape->arith_x * shape->arith_y > (uint64_t)A->instances)
        return invalid(out, NM_INV_ARITH, -1, -1, 0, shape->arith_x * shape->arith_y,
                       (uint64_t)A->instances);
    if (shape->arith_x > (uint64_t)A->meshX)
        return invalid(out, NM_INV_ARITH, -1, -1, 'X', shape->arith_x, (uint64_t)A->meshX);
    if (shape->arith_y > (uint64_t)A->meshY)
        return invalid(out, NM_INV_ARITH, -1, -1, 'Y', shape->arith_y, (uint64_t)A->meshY);
    for (int s = 0; s < arch->nlevels; s++) {
        const nm_level *L = &arch->level[s];
        if (shape->replication[s] > (uint64_t)L->instances)
            return invalid(out, NM_INV_INSTANCES, s, -1, 0, shape->replication[s],
                           (uint64_t)L->instances);
        if (shape->xexp[s] > (uint64_t)L->meshX)
            return invalid(out, NM_INV_INSTANCES, s, -1, 'X', shape->xexp[s], (uint64_t)L->meshX);
        if (shape->yexp[s] > (uint64_t)L->meshY)
            return invalid(out, NM_INV_INSTANCES, s, -1, 'Y', shape->yexp[s], (uint64_t)L->meshY);
    }
    return 1;
}

static uint64_t round_count(double x)
{
    return x <= 0.0 ? 0 : (uint64_t)llround(x);
}


/* Per level, what the network to its child carries of one data space
 * (account() fills it). */
typedef struct noc_in {
    double acc;       /* accesses as the network sees them (bypass applied) */
    double link, partition;
    double dist_acc;  /* distributed multicast on the child's behalf: the child's
                       * accesses (0: none) */
    double own_acc;   /* > 0: the accesses before distribution divided the level's */
} noc_in;

static void noc_charge(const nm_model *mdl, const nm_nest_result *nr, int ds, const noc_in *in,
                       int exact, nm_stats *out, nm_noc_stats *detail);
static void noc_traffic(const nm_model *mdl, const nm_nest_result *nr, int s, int ds,
                        const noc_in *in, int exact, nm_noc_traffic *t);

/* Distributed multicast (Timeloop's DistributeTiles, tiling.cpp): below a
 * level whose fan-out multicasts a data space m ways, a child whose own
 * network is M:N may hold 1/m of the tile each, the m siblings sharing out
 * what one held: the parent scatters to all of them, and the child's
 * accesses travel the parent's network as a distributed multicast.  Only
 * the first such child does it, and only when the parent's and the child's
 * networks each carry the data at one multicast factor (else Timeloop
 * stops: 0 here, with out->invalid set).  Divides the child's counts (as
 * Timeloop rounds them: partition size up, the others to a half) and
 * marks the parent's network in dist. */
static int distribute(const nm_model *mdl, const nm_nest_result *nr, int ds, double *ca,
                      double *w, double *pas, double *ps, noc_in *dist, nm_stats *out)
{
    const nm_arch *arch = mdl->arch;
    for (int s = 0; s + 1 < arch->nlevels; s++) {
        if (arch->level[s].nnet < 1 || arch->level[s].net[0].type != NM_NOC_M_N)
            continue;
        nm_noc_traffic o, i;
        noc_in raw_o = {.acc = nr->tile[s + 1][ds].accesses};
        noc_in raw_i = {.acc = nr->tile[s][ds].accesses};
        noc_traffic(mdl, nr, s + 1, ds, &raw_o, 1, &o);
        noc_traffic(mdl, nr, s, ds, &raw_i, 1, &i);
        if (o.nb != 1 || i.nb != 1)
            return invalid(out, NM_INV_MULTICAST, s, ds, 0, 0, 0);
        double m = (double)o.b[0].m;
        if (o.b[0].m <= 1)
            continue;
        if (ps[s] > 0)
            ps[s] = 1.0 + floor((ps[s] - 1.0) / m);
        dist[s].own_acc = ca[s]; /* the network keeps the undivided accesses */
        ca[s] = 1.0 + (ca[s] - 1.0) / m;
        pas[s] = 1.0 + (pas[s] - 1.0) / m;
        dist[s + 1].dist_acc = i.b[0].acc;
        w[s + 1] = o.b[0].acc; /* each receiver reached alone now */
        break;
    }
    return 1;
}

/* Reads, fills and updates of one data space at every level; the networks'
 * energy too when the design charges it (exact: the tiles come from an
 * analysis, whose multicast signatures hold), with what each carries into
 * detail when not NULL. */
static int account(const nm_model *mdl, const nm_mapping *m, const nm_nest_result *nr, int ds,
                   int exact, nm_stats *out, nm_noc_stats *detail)
{
    noc_in noc[NM_MAX_LEVELS];
    const nm_arch *arch = mdl->arch;
    int S = arch->nlevels;
    if (S < 1) /* (parsing guarantees a level; this tells the compiler) */
        return 1;
    int track = arch->noc; /* what the networks carry (hot path: not) */
    if (track)
        memset(noc, 0, sizeof noc);
    double ca[NM_MAX_LEVELS], w[NM_MAX_LEVELS], pas[NM_MAX_LEVELS], lt[NM_MAX_LEVELS];
    double peer[NM_MAX_LEVELS], ps[NM_MAX_LEVELS];
    uint64_t size[NM_MAX_LEVELS], F[NM_MAX_LEVELS];
    int kept[NM_MAX_LEVELS];
    for (int s = 0; s < S; s++) {
        const nm_tile *t = &nr->tile[s][ds];
        size[s] = t->size;
        ca[s] = t->accesses;
        w[s] = t->weighted;
        lt[s] = t->link;
        F[s] = t->fanout;
        peer[s] = 0.0;
        kept[s] = (int)((m->level[s].keep >> ds) & 1u);
    }
    /* Partition: the part of the whole tensor one instance is responsible
     * for, split by each fan-out on the way in.  Below a spatial residual
     * the instances hold unequal parts: the mean, which the padded tiles
     * of the fan-out give when not rounded down. */
    uint64_t p = size[S - 1];
    double pm = (double)p;
    ps[S - 1] = pm;
    for (int s = S - 2; s >= 0; s--) {
        uint64_t denom = F[s + 1] > 1 ? nr->tile[s + 1][ds].inner_size : size[s];
        if (denom && denom != size[s]) { /* (a division on the hot path otherwise) */
            p = p * size[s] / denom;
            if (nr->uneven)
                pm = pm * (double)size[s] / (double)denom;
        }
        if (nr->uneven && F[s + 1] > 1)
            pm *= nr->used[s + 1];
        ps[s] = nr->uneven ? pm : (double)p;
    }
    /* Share of the parent's reads that lands in one instance. */
    for (int s = 0; s < S - 1; s++)
        pas[s] = w[s + 1] / (double)F[s + 1];
    pas[S - 1] = 0.0;
    if (arch->noc && exact && !distribute(mdl, nr, ds, ca, w, pas, ps, noc, out))
        return 0;
    /* Bypass: the next level out now serves what the bypassed level received. */
    for (int s = 0; s < S; s++) {
        if (size[s] == 0 || kept[s])
            continue;
        int outer = s + 1;
        while (outer < S && size[outer] == 0)
            outer++;
        if (outer < S && w[outer] > 0.0) {
            double f = ca[s] * (double)F[outer] / w[outer];
            /* the outer level's accesses are what its network delivers
             * (also where distribution divided its own) */
            if (track && noc[outer].own_acc > 0.0) {
                ca[outer] = noc[outer].own_acc;
                noc[outer].own_acc = 0.0;
            }
            ca[outer] *= f;
            w[outer] *= f;
            lt[outer] = 0.0;
        }
        /* Timeloop keeps a bypassed level's network counts (tiling.cpp,
         * CollapseTiles), without its partition. */
        if (track) {
            noc[s].acc = noc[s].own_acc > 0 ? noc[s].own_acc : ca[s];
            noc[s].link = lt[s];
            noc[s].partition = 0.0;
        }
        size[s] = ps[s] = 0;
        ca[s] = w[s] = pas[s] = 0.0;
        if (outer == S)
            break;
    }
    for (int s = S - 1; s >= 0; s--) {
        if (kept[s]) {
            pas[s] = 0.0; /* the outermost keeper is filled by nobody */
            break;
        }
        size[s] = ps[s] = 0;
        ca[s] = w[s] = pas[s] = lt[s] = 0.0;
        if (track) /* ... not above the outermost keeper */
            noc[s].acc = noc[s].link = noc[s].partition = 0.0;
    }
    for (int s = 0; track && s < S; s++)
        if (kept[s])
        {
            noc[s].acc = noc[s].own_acc > 0 ? noc[s].own_acc : ca[s];
            noc[s].link = lt[s];
            noc[s].partition = ps[s];
        }
    for (int s = S - 1; s > 0; s--)
        if (lt[s] != 0.0)
            peer[s - 1] += lt[s] / (double)nr->replication[s - 1];

    int rw = mdl->wl->ds[ds].read_write;
    int outermost_seen = 0;
    for (int s = S - 1; s >= 0; s--) {
        nm_ds_stats *d = &out->level[s].ds[ds];
        memset(d, 0, sizeof *d);
        d->kept = kept[s];
        d->utilized_instances = nr->replication[s];
        if (size[s] == 0)
            continue;
        int outermost = !outermost_seen;
        outermost_seen = 1;
        d->partition_size = round_count(ps[s]);
        d->utilized_capacity = size[s];
        if (rw) {
            d->updates = round_count(ca[s]);
            d->reads = round_count(ca[s] + peer[s] - ps[s]);
            d->temporal_reductions = d->reads;
            d->fills = round_count(pas[s] + peer[s] - (outermost ? 0.0 : ps[s]));
            d->address_generations = d->updates + d->fills;
        } else {
            d->reads = round_count(ca[s] + peer[s]);
            double f = pas[s] + peer[s];
            d->fills = nr->uneven ? round_count(f) : f <= 0.0 ? 0 : (uint64_t)(f + 1e-9);
            d->address_generations = d->reads + d->fills;
        }
    }
    if (track)
        noc_charge(mdl, nr, ds, noc, exact, out, detail);
    return 1;
}

/* The traffic of data space ds on the network below level s: the tile's
 * accesses in the buckets of its multicast signatures (the calls without
 * links and those with), scaled as bypass scaled the accesses (Timeloop
 * scales the ingresses, not the hops). */
static void noc_traffic(const nm_model *mdl, const nm_nest_result *nr, int s, int ds,
                        const noc_in *in, int exact, nm_noc_traffic *t)
{
    const nm_tile *tile = &nr->tile[s][ds];
    const nm_tile_noc *tn = &nr->noc[s][ds];
    memset(t, 0, sizeof *t);
    t->acc = in->acc;
    t->link = in->link;
    t->partition = in->partition;
    t->fanout = tile->fanout;
    t->instances = (double)nr->replication[s];
    t->hop_scale = 1.0;
    if (in->acc <= 0.0)
        return;
    double f = tile->accesses > 0.0 ? in->acc / tile->accesses : 0.0;
    t->hop_scale = exact ? f : 1.0;
    if (!exact || tile->fanout <= 1) {
        t->nb = 1;
        t->b[0].m = t->b[0].s = 1;
        t->b[0].acc = in->acc;
        t->hops = t->b[0].hops = exact ? tn->hop : 0.0;
        return;
    }
    t->hops = tn->hop;
    t->rt = tn->rt * f;
    if (nm_nest_noc_mixed(mdl->ws, s, ds)) { /* totals only */
        t->nb = -1;
        return;
    }
    for (int k = 0; k < NM_NOC_SLOTS; k++) {
        const nm_noc_sig *sig = nm_nest_noc_sig(mdl->ws, s, ds, k);
        if (!sig || tn->sz[k] <= 0.0)
            continue;
        for (int i = 0; i < sig->n; i++) {
            const struct nm_noc_bucket *b = &sig->b[i];
            int j = 0;
            while (j < t->nb && !(t->b[j].m == b->m && t->b[j].s == b->s))
                j++;
            if (j == t->nb) {
                if (t->nb == NM_NOC_MAX_BUCKETS) {
                    t->nb = -1;
                    return;
                }
                t->nb++;
                t->b[j].m = b->m;
                t->b[j].s = b->s;
            }
            /* per call: the delta to each of s groups; hops summed per group */
            t->b[j].acc += tn->sz[k] * (double)b->s * f;
            t->b[j].hops += tn->sz[k] * b->hops;
            t->b[j].uhops += tn->sz[k] * b->uhops;
        }
    }
    if (in->dist_acc > 0.0 && t->nb == 1 && f > 0.0) {
        /* the multicast turns into a scatter to every receiver, each
         * reached alone, and the child's accesses ride along, multicast */
        double acc0 = t->b[0].acc / f, hops0 = t->b[0].hops;
        t->b[1] = t->b[0];
        t->b[1].acc = in->dist_acc;
        t->b[1].hops = hops0 * in->dist_acc / acc0;
        t->b[1].distributed = 1;
        t->b[0].s *= t->b[0].m;
        t->b[0].m = 1;
        t->b[0].hops = t->b[0].uhops;
        t->nb = 2;
    }
}

/* The networks' energy of data space ds into out, and what each network
 * carries into detail when not NULL. */
static void noc_charge(const nm_model *mdl, const nm_nest_result *nr, int ds, const noc_in *in,
                       int exact, nm_stats *out, nm_noc_stats *detail)
{
    const nm_arch *arch = mdl->arch;
    int rw = mdl->wl->ds[ds].read_write;
    for (int s = 0; s < arch->nlevels; s++) {
        const nm_level *L = &arch->level[s];
        nm_noc_traffic t;
        noc_traffic(mdl, nr, s, ds, &in[s], exact, &t);
        for (int n = 0; n < L->nnet; n++) {
            double e = nm_noc_energy(&L->net[n], mdl->noc_width[s], &t, rw, L->reduces,
                                     detail ? &detail->ds[s][n][ds] : NULL);
            out->level[s].noc_energy += e;
            out->level[s].ds[ds].noc_energy += e;
            if (detail)
                detail->energy[s][n] += e;
        }
    }
}

int nm_model_noc_stats(nm_model *mdl, const nm_mapping *m, nm_stats *st, nm_noc_stats *noc)
{
    memset(noc, 0, sizeof *noc);
    nm_model_forget(mdl);
    int valid = nm_model_eval(mdl, m, st, NULL);
    st->noc = noc;
    if (!valid || !mdl->arch->noc)
        return valid;
    /* account() again on the analysis just made, into scratch stats,
     * with each network's detail */
    nm_stats *scratch = &mdl->shape->floor;
    for (int s = 0; s < mdl->arch->nlevels; s++)
        scratch->level[s].noc_energy = 0.0;
    for (int ds = 0; ds < mdl->wl->nds; ds++)
        account(mdl, m, &mdl->shape->nr, ds, 1, scratch, noc);
    return valid;
}

int nm_model_precheck(nm_model *mdl, const nm_mapping *m, nm_stats *out)
{
    nm_nest nest;
    nm_nest_result nr;
    memset(&out->invalid, 0, sizeof out->invalid);
    if (!check_factors(mdl, m, out))
        return 0;
    nm_nest_build(&nest, m, mdl->arch, mdl->wl);
    nm_nest_shape(&nest, mdl->wl, &nr);
    return check(mdl, m, &nr, out);
}

/* Cycles, energy, area and the totals of a mapping whose accesses are
 * accounted in out (nm_model_eval, and nm_model_floor on floors); with
 * given, its computes and compute cycles too (nm_model_finish_counts). */
static void finish_counts(const nm_model *mdl, const nm_nest_result *shape, nm_stats *out,
                          int given);

static void finish(const nm_model *mdl, const nm_nest_result *shape, nm_stats *out)
{
    finish_counts(mdl, shape, out, 0);
}

void nm_model_finish_counts(nm_model *mdl, const nm_mapping *m, nm_stats *out)
{
    const struct nm_shape_memo *sm = mdl->shape;
    if (sm && sm->valid && same_but_orders(m, &sm->m, mdl->arch->nlevels)) {
        finish_counts(mdl, &sm->nr, out, 1); /* (the shape of the mapping just evaluated) */
        return;
    }
    nm_nest nest;
    nm_nest_result nr;
    nm_nest_build(&nest, m, mdl->arch, mdl->wl);
    nm_nest_shape(&nest, mdl->wl, &nr);
    finish_counts(mdl, &nr, out, 1);
}

static void finish_counts(const nm_model *mdl, const nm_nest_result *shape, nm_stats *out,
                          int given)
{
    const nm_arch *arch = mdl->arch;
    const nm_workload *wl = mdl->wl;
    uint64_t arith_used = shape->arith_x * shape->arith_y;
    if (!(mdl->sparse && out->spatial_skip)) {
        out->arith_utilized = arith_used;
        out->arith_avg = (double)arith_used;
    }
    const nm_arith *A = &arch->arith;
    if (mdl->sparse) {
        /* Sparse: the computes performed and gated take a cycle of a unit
         * in use; skipped ones none (Timeloop's arithmetic.cpp) */
        uint64_t busy = out->computes + out->gated_computes;
        if (out->spatial_skip) { /* Timeloop: over the units used on average */
            arith_used = out->arith_utilized;
            double c = ceil((double)busy / out->arith_avg);
            out->compute_cycles = c > 0 ? (uint64_t)c : 0;
        } else {
            out->compute_cycles = busy / arith_used + (busy % arith_used != 0);
        }
        if (out->compute_cycles == 0)
            out->compute_cycles = 1;
        /* gated and skipped computes: the ERT's energies (with Timeloop's
         * fall-backs); without an ERT, nothing (clock-gated units) */
        out->compute_energy = (double)out->computes * A->e_compute +
                              (double)out->gated_computes * (A->gs_given ? A->e_gated : 0.0) +
                              (double)out->skipped_computes * (A->gs_given ? A->e_skipped : 0.0);
    } else {
        if (!given) {
            out->computes = shape->computes; /* the layer's operations */
            /* computes / units in use; with residuals Timeloop counts partial
             * tiles as full ones here (arithmetic.cpp), and so does utilization */
            out->compute_cycles = shape->temporal_steps;
        }
        out->compute_energy = (double)out->computes * A->e_compute;
    }

    uint64_t cycles = out->compute_cycles;
    for (int s = 0; s < arch->nlevels; s++) {
        const nm_level *L = &arch->level[s];
        nm_level_stats *ls = &out->level[s];
        /* Bandwidth needed per instance over the unthrottled run, with
         * Timeloop's arithmetic (BufferLevel::ComputePerformance): each data
         * space's accesses are spread over the instances it uses
         * (ceil(accesses / (fan-out / utilized instances))), turned into
         * words per compute cycle, and summed in data-space order.  The same
         * order of rounding matters: a level whose accesses divide its
         * bandwidth exactly must come out at exactly that many cycles.
         * Below a partly used fan-out the counts are the mean instance's
         * (Timeloop's per-instance statistics are means too), so a busier
         * instance may need more than this; no corpus case is throttled
         * there to pin it.  A level with no bandwidth limit needs none of it
         * (hot path). */
        double need_r = 0.0, need_w = 0.0;
        double fan = (double)(shape->xexp[s] * shape->yexp[s]);
        int limited = L->has_read_bw || L->has_write_bw || L->has_shared_bw;
        int wide = (mdl->wide >> s) & 1u; /* tensor_datawidth at this level */
        for (int ds = 0; limited && ds < wl->nds; ds++) {
            const nm_ds_stats *d = &ls->ds[ds];
            uint64_t rd = d->reads, wr = d->fills + d->updates;
            double inst = (double)d->utilized_instances;
            if (mdl->sparse) { /* skipped accesses take no bandwidth; metadata does */
                rd = d->actual[NM_ACC_READ] + d->gated[NM_ACC_READ] + d->meta_words[0];
                wr = d->actual[NM_ACC_FILL] + d->gated[NM_ACC_FILL] +
                     d->actual[NM_ACC_UPDATE] + d->gated[NM_ACC_UPDATE] + d->meta_words[1];
                inst = d->avg_instances;
            }
            if (rd == 0 && wr == 0)
                continue;
            if (wide) { /* bandwidth is in the level's words */
                rd = in_words(rd, mdl->ds_bits[s][ds], L->word_bits);
                wr = in_words(wr, mdl->ds_bits[s][ds], L->word_bits);
            }
            double ratio = inst > 0.0 ? fan / inst : 1.0;
            need_r += (double)(uint64_t)ceil((double)rd / ratio) / (double)out->compute_cycles;
            need_w += (double)(uint64_t)ceil((double)wr / ratio) / (double)out->compute_cycles;
        }
        double slow = 1.0;
        if (L->has_read_bw && L->read_bw < need_r)
            slow = fmin(slow, L->read_bw / need_r);
        if (L->has_write_bw && L->write_bw < need_w)
            slow = fmin(slow, L->write_bw / need_w);
        if (L->has_shared_bw && L->shared_bw < need_r + need_w)
            slow = fmin(slow, L->shared_bw / (need_r + need_w));
        ls->throttling = slow;
        /* Saturates rather than wrap: a bandwidth of 1e-12 words per cycle
         * is legal and slows past 2^64 cycles. */
        double c = ceil((double)out->compute_cycles / slow);
        ls->cycles = c < 18446744073709549568.0 ? (uint64_t)c : UINT64_MAX;
        if (ls->cycles > cycles)
            cycles = ls->cycles;
    }
    out->cycles = cycles;

    double energy = out->compute_energy;
    double noc = 0.0;
    double output_size = 0.0;
    out->compute_area = arch->arith.area * (double)arch->arith.instances;
    out->area = out->compute_area;
    for (int s = 0; s < arch->nlevels; s++) {
        const nm_level *L = &arch->level[s];
        nm_level_stats *ls = &out->level[s];
        uint64_t clusters = (uint64_t)(L->instances / L->cluster_size);
        uint64_t xy = shape->xexp[s] * shape->yexp[s];
        uint64_t used_clusters = xy < clusters ? xy : clusters;
        /* Accesses are counted per cluster of instances that share a vector
         * access; energy is then spread over the instances in use. */
        double cluster_util = (double)xy / (double)used_clusters;
        double e = 0.0, addr = 0.0;
        int wide = (mdl->wide >> s) & 1u; /* tensor_datawidth at this level */
        for (int ds = 0; ds < wl->nds; ds++) {
            nm_ds_stats *d = &ls->ds[ds];
            if (mdl->sparse && out->spatial_skip && d->utilized_instances) {
                /* each data space's own instances (spatial skipping) */
                xy = d->utilized_instances;
                used_clusters = xy < clusters ? xy : clusters;
                cluster_util = (double)xy / (double)used_clusters;
            }
            d->utilized_clusters = used_clusters;
            uint64_t b = (uint64_t)L->block_size;
            double ce;
            if (mdl->sparse) {
                const double eact[3] = {L->e_read, L->e_fill, L->e_update};
                ce = d->meta_energy;
                for (int k = 0; k < 3; k++) {
                    const uint64_t n[3] = {d->actual[k], d->gated[k], d->skipped[k]};
                    const double en[3] = {eact[k], L->e_gated[k], L->e_skipped[k]};
                    for (int h = 0; h < 3; h++)
                        if (n[h]) /* (a compressed tile's ratio may be infinite at 0) */
                            ce += (double)ceil_div(n[h], b) * d->vec_ratio * en[h];
                }
            } else if (!wide) {
                ce = (double)ceil_div(d->reads, b) * L->e_read +
                     (double)ceil_div(d->fills, b) * L->e_fill +
                     (double)ceil_div(d->updates, b) * L->e_update;
            } else {
                ce = (double)vectors(mdl, s, ds, d->reads, b) * L->e_read +
                     (double)vectors(mdl, s, ds, d->fills, b) * L->e_fill +
                     (double)vectors(mdl, s, ds, d->updates, b) * L->e_update;
            }
            d->energy_per_instance = d->utilized_instances ? ce / cluster_util : 0.0;
            d->energy = d->energy_per_instance *
                        (mdl->sparse ? d->avg_instances : (double)d->utilized_instances);
            e += d->energy;
            addr += (double)d->address_generations * L->addr_gen_energy * (double)used_clusters;
        }
        double leaking = shape->replication[s] > 1 ? (double)shape->replication[s] : 1.0;
        if (mdl->sparse && out->spatial_skip) { /* the most instances a data space uses */
            leaking = 1.0;
            for (int ds = 0; ds < wl->nds; ds++)
                leaking = fmax(leaking, ls->ds[ds].avg_instances);
        }
        ls->leakage = L->e_leak * (double)cycles * leaking;
        ls->energy = e + addr + ls->leakage;
        energy += ls->energy + ls->noc_energy;
        noc += ls->noc_energy;
        ls->area = L->area * (double)L->instances;
        out->area += ls->area;
    }
    for (int ds = 0; ds < wl->nds; ds++) {
        if (!wl->ds[ds].read_write)
            continue;
        for (int s = arch->nlevels - 1; s >= 0; s--) {
            if (out->level[s].ds[ds].utilized_capacity > 0) {
                output_size += (double)out->level[s].ds[ds].utilized_capacity;
                break;
            }
        }
    }
    out->energy = energy;
    out->noc_energy = noc;
    /* units busy: gated computes hold a unit too (Timeloop's IdealCycles) */
    double busy = (double)out->computes + (mdl->sparse ? (double)out->gated_computes : 0.0);
    out->utilization = busy / (double)arch->arith.instances / (double)cycles;
    out->total_ops = 2.0 * (double)out->computes - output_size;
    uint64_t lla = 0;
    const nm_level_stats *top = &out->level[arch->nlevels - 1];
    for (int ds = 0; ds < wl->nds; ds++)
        lla += top->ds[ds].utilized_instances *
               (top->ds[ds].reads + top->ds[ds].updates + top->ds[ds].fills);
    out->last_level_accesses = lla;
}

/* Whether some level's network is M:N: distributed multicast then divides
 * a level's own accesses, below what the bounds assume a level serves. */
static int distributes(const nm_arch *arch)
{
    for (int s = 0; s < arch->nlevels; s++)
        if (arch->level[s].nnet >= 1 && arch->level[s].net[0].type == NM_NOC_M_N)
            return 1;
    return 0;
}

/* Distinct elements of data space ds that a box of iterations e[] (e[d]
 * along dimension d) reads at least, wherever the box's points lie along
 * each dimension: an axis of one term takes e[d] values, one of several
 * at least the sum of theirs less one each (|A + B| >= |A| + |B| - 1 for
 * sets of integers); axes over distinct dimensions multiply, others give
 * the largest. */
double nm_model_distinct_at_least(const nm_workload *wl, int ds, const int64_t *e)
{
    const nm_dataspace *D = &wl->ds[ds];
    double product = 1.0, largest = 1.0;
    uint32_t seen = 0;
    int disjoint = 1;
    for (int r = 0; r < D->nranks; r++) {
        const nm_axis *a = &D->rank[r];
        double v = 0.0;
        int k = 0;
        for (int i = 0; i < a->nterms; i++) {
            int d = a->term[i].dim;
            if (a->term[i].coef == 0 || e[d] <= 1)
                continue;
            disjoint &= !((seen >> d) & 1u);
            seen |= 1u << d;
            v += (double)e[d];
            k++;
        }
        v = k ? v - (k - 1) : 1.0;
        product *= v;
        largest = fmax(largest, v);
    }
    return disjoint ? product : largest;
}

static int distributes(const nm_arch *arch);

/* The data spaces an innermost temporal loop over dimension d spares
 * below a fan-out of level 0: those d does not index, and those it indexes
 * through a window (an axis summing it with others: the box slides, and
 * only its edge is new). */
static uint32_t spared_by(const nm_workload *wl, int d)
{
    uint32_t set = 0;
    for (int ds = 0; ds < wl->nds; ds++) {
        const nm_dataspace *sp = &wl->ds[ds];
        int firm = 0, window = 0;
        for (int r = 0; r < sp->nranks; r++)
            for (int k = 0; k < sp->rank[r].nterms; k++)
                if (sp->rank[r].term[k].dim == d) {
                    firm |= sp->rank[r].nterms == 1;
                    window |= sp->rank[r].nterms > 1;
                }
        if (!firm || window)
            set |= 1u << ds;
    }
    return set;
}

/* c's footprints of data space ds at every level, the fan-outs at and
 * below each level being ext[s] (nm_model_operands). */
static void footprints(const nm_model *mdl, const int64_t ext[][NM_MAX_DIMS], int ds,
                       nm_operand_cost *c)
{
    const nm_arch *arch = mdl->arch;
    const nm_workload *wl = mdl->wl;
    int S = arch->nlevels, nd = wl->ndims;
    for (int s = 0; s < S; s++) {
        /* an instance's share: each dimension's bound over the fan-outs
         * above s (perfect factors divide it) */
        int64_t box[NM_MAX_DIMS];
        double inst = 1.0;
        for (int d = 0; d < nd; d++) {
            int64_t above = ext[S - 1][d] / ext[s][d];
            box[d] = wl->bound[d] / above;
            inst *= (double)above;
        }
        const nm_level *L = &arch->level[s];
        double foot = nm_model_distinct_at_least(wl, ds, box);
        double w = (double)mdl->ds_bits[s][ds] / L->word_bits; /* level words per word */
        double clusters = floor((double)L->instances / L->cluster_size);
        double share = fmin(inst, clusters) / inst; /* instances sharing a vector access */
        c->foot_words[ds][s] = w * foot;
        c->foot_scale[ds][s] = w * share / (double)L->block_size * inst * foot;
    }
}

double nm_model_kept_floor(const nm_model *mdl, const nm_operand_cost *c, const int8_t *inner,
                           const uint32_t *must, uint32_t spared, double *rd, double *wr)
{
    const nm_arch *arch = mdl->arch;
    int top = arch->nlevels - 1;
    double e = 0.0;
    for (int ds = 0; ds < mdl->wl->nds; ds++) {
        int a = inner[ds], rw = mdl->wl->ds[ds].read_write;
        for (int s = a < 0 ? top : a; s < top; s++) {
            const nm_level *L = &arch->level[s];
            double fw = c->foot_words[ds][s], sc = c->foot_scale[ds][s];
            if (s == a) {
                if (fw > 0.0) { /* the operands' own, past the counts */
                    double had = (spared >> ds) & 1u ? 0.0 : rw ? c->wr[ds][a] : c->rd[ds][a];
                    double more = fmax(0.0, fw - had);
                    e += sc * (rw ? L->e_update : L->e_read) * (more / fw);
                    (rw ? wr : rd)[a] += more;
                }
                if (!rw) { /* its fills */
                    e += sc * L->e_fill;
                    wr[s] += fw;
                }
            } else if ((must[ds] >> s) & 1u) {
                if (!rw) { /* fills, and reads passing each element down */
                    e += sc * (L->e_fill + L->e_read);
                    rd[s] += fw;
                } else { /* each element updated once coming up */
                    e += sc * L->e_update;
                }
                wr[s] += fw;
            }
        }
    }
    return e;
}

/* The level the innermost fan-out of the spatial choice sf leaves, when
 * its one network charges each word's hops per access (hop_count:
 * access; Timeloop's count charges a bypassed child's re-reads none) or
 * routers or ingresses; else -1. */
static int hop_level(const nm_model *mdl, const int64_t sf[][NM_MAX_DIMS])
{
    const nm_arch *arch = mdl->arch;
    for (int s = 0; s < arch->nlevels; s++) {
        int active = 0;
        for (int d = 0; d < mdl->wl->ndims; d++)
            active |= sf[s][d] > 1;
        if (!active)
            continue;
        const nm_level *L = &arch->level[s];
        const nm_noc *net = &L->net[0];
        int hops = net->hops_per_access && nm_noc_hop_energy(net, mdl->noc_width[s]) > 0.0;
        int more = (net->has_router && net->router_energy > 0.0) ||
                   (net->has_ingress && net->ingress_energy > 0.0);
        return arch->noc && L->nnet == 1 && (hops || more) ? s : -1;
    }
    return -1;
}

/* The arrangements of level s's fan-out nm_model_hop_costs weighs, as the
 * dimensions along X then Y (the fan-out's spatial loops, innermost
 * first) and how many are along X: m's own when m is not NULL, else every
 * order and split within the mesh's sides; returns how many (-1: more
 * than NM_HOP_ARRANGEMENTS). */
static int hop_arrangements(const nm_model *mdl, const int64_t sf[][NM_MAX_DIMS], int s,
                            const nm_mapping *m, int8_t (*dims)[NM_MAX_DIMS], int8_t *nx,
                            int *k)
{
    const nm_workload *wl = mdl->wl;
    const nm_level *L = &mdl->arch->level[s];
    int8_t dim[NM_MAX_DIMS], perm[NM_MAX_DIMS];
    *k = 0;
    if (m) { /* its spatial order, the first `split` places along X */
        const nm_level_map *lm = &m->level[s];
        nx[0] = 0;
        for (int i = 0; i < wl->ndims; i++) {
            int d = lm->sorder[i];
            if (sf[s][d] <= 1)
                continue;
            dims[0][(*k)++] = (int8_t)d;
            nx[0] += i < lm->split;
        }
        return 1;
    }
    for (int d = 0; d < wl->ndims; d++)
        if (sf[s][d] > 1)
            dim[(*k)++] = (int8_t)d;
    if (*k > 4) /* (4 dimensions: 4! orders, 5 splits) */
        return -1;
    for (int i = 0; i < *k; i++)
        perm[i] = (int8_t)i;
    int n = 0;
    do {
        int8_t order[NM_MAX_DIMS];
        for (int i = 0; i < *k; i++)
            order[i] = dim[perm[i]];
        for (int split = 0; split <= *k; split++) {
            int64_t x, y;
            if (!nm_mapping_fanout_sides(L, *k, sf[s], order, split, &x, &y))
                continue;
            memcpy(dims[n], order, (size_t)*k);
            nx[n++] = (int8_t)split;
        }
    } while (nm_mapping_next_order(perm, *k));
    return n;
}

void nm_model_hop_costs(const nm_model *mdl, const int64_t sf[][NM_MAX_DIMS],
                        const nm_mapping *m, nm_operand_cost *c)
{
    const nm_arch *arch = mdl->arch;
    const nm_workload *wl = mdl->wl;
    int s = c->hop_level, k;
    c->narr = 0;
    if (s < 0)
        return;
    const nm_level *L = &arch->level[s];
    const nm_noc *net = &L->net[0];
    int8_t dims[NM_HOP_ARRANGEMENTS][NM_MAX_DIMS], nx[NM_HOP_ARRANGEMENTS];
    int narr = hop_arrangements(mdl, sf, s, m, dims, nx, &k);
    if (narr == 0)
        return;
    /* too many arrangements to weigh: one, in which a word reaching a class
     * of n units makes n - 1 hops at least (one into each unit but the
     * nearest, wherever they lie) */
    int placed = narr > 0;
    narr = placed ? narr : 1;
    /* the data spaces weighed: no axis over a fanned-out dimension with
     * another term (the receivers needing a word are a class), in the
     * network's words; each instance of s sends to its classes */
    double inst = 1.0;
    for (int t = s + 1; t < arch->nlevels; t++)
        for (int d = 0; d < wl->ndims; d++)
            inst *= (double)sf[t][d];
    uint32_t eligible = 0, windowed = 0;
    for (int ds = 0; ds < wl->nds; ds++) {
        int ok = mdl->ds_bits[s][ds] == L->word_bits && net->word_bits == L->word_bits;
        int window = 0; /* a window axis over one fanned-out dimension */
        const nm_dataspace *D = &wl->ds[ds];
        for (int r = 0; ok && r < D->nranks; r++) {
            int terms = 0, fanned = 0;
            for (int t = 0; t < D->rank[r].nterms; t++) {
                if (!D->rank[r].term[t].coef)
                    continue;
                terms++;
                fanned += sf[s][D->rank[r].term[t].dim] > 1;
            }
            ok = fanned <= 1;
            window |= fanned && terms > 1;
        }
        eligible |= (uint32_t)ok << ds;
        windowed |= (uint32_t)(ok && window) << ds;
        c->hop_classes[ds] = 0.0;
        if (ok && !window) {
            c->hop_classes[ds] = inst;
            for (int d = 0; d < wl->ndims; d++)
                if ((mdl->ds_dims[ds] >> d) & 1u)
                    c->hop_classes[ds] *= (double)sf[s][d];
        }
    }
    double eph = net->hops_per_access ? nm_noc_hop_energy(net, mdl->noc_width[s]) : 0.0;
    double per_word = (net->has_router ? net->router_energy : 0.0) +
                      (net->has_ingress ? net->ingress_energy : 0.0);
    for (int a = 0; a < narr; a++) {
        int64_t f[NM_MAX_DIMS];
        for (int i = 0; placed && i < k; i++)
            f[i] = sf[s][dims[a][i]];
        for (int ds = 0; ds < wl->nds; ds++) {
            c->hop_pj[a][ds] = 0.0;
            if (!((eligible >> ds) & 1u))
                continue;
            double hops = -1.0, share = 1.0; /* share: the units of a class */
            uint32_t rel = 0;
            for (int i = 0; placed && i < k; i++)
                rel |= (uint32_t)((mdl->ds_dims[ds] >> dims[a][i]) & 1u) << i;
            for (int d = 0; d < wl->ndims; d++)
                share *= (mdl->ds_dims[ds] >> d) & 1u ? 1.0 : (double)sf[s][d];
            if ((windowed >> ds) & 1u) {
                /* a window along a fanned-out dimension: at each step the
                 * units still need one word per class, but a neighbour
                 * holding it may pass it on over a link, one hop (no
                 * ingress) for each unit it reaches: n - 1 hops a class */
                c->hop_pj[a][ds] = eph * (share - 1.0);
                continue;
            }
            if (eph > 0.0 && placed)
                hops = nm_noc_class_hops(L->fanoutX, L->fanoutY, k, f, nx[a], rel);
            if (hops < 0.0) /* not placed (too large): n - 1 hops for n units */
                hops = share - 1.0;
            c->hop_pj[a][ds] = eph * hops + per_word;
        }
    }
    c->narr = narr;
}

void nm_model_hop_words(const nm_model *mdl, const nm_operand_cost *c, const int8_t *at,
                        const uint32_t *keeps, double *words)
{
    int h = c->hop_level;
    for (int ds = 0; ds < mdl->wl->nds; ds++) {
        int b = at[ds];
        words[ds] = 0.0;
        if (h < 0 || b < 0 || b > h)
            continue;
        if (b == h) { /* read there */
            words[ds] = c->hop_words[ds];
            continue;
        }
        /* kept at b, nothing between b and h keeping it: each instance of
         * b takes in its footprint (an output's: sends it out) through h's
         * network, each class's once at least */
        uint32_t between = ((1u << h) - 1u) & ~((2u << b) - 1u);
        if (!(keeps[ds] & between) && mdl->ds_bits[b][ds] == mdl->arch->level[b].word_bits)
            words[ds] = c->hop_classes[ds] * c->foot_words[ds][b];
    }
}

double nm_model_hop_floor(const nm_model *mdl, const nm_operand_cost *c, const double *words)
{
    double least = c->narr > 0 ? INFINITY : 0.0;
    for (int a = 0; a < c->narr; a++) {
        double e = 0.0;
        for (int ds = 0; ds < mdl->wl->nds; ds++)
            e += words[ds] * c->hop_pj[a][ds];
        least = fmin(least, e);
    }
    return least;
}

int nm_model_operands(const nm_model *mdl, const int64_t sf[][NM_MAX_DIMS],
                      const uint32_t keep_at[], nm_operand_cost *c)
{
    const nm_arch *arch = mdl->arch;
    if (mdl->sparse_bound || distributes(arch))
        return 0;
    const nm_workload *wl = mdl->wl;
    int S = arch->nlevels, nd = wl->ndims;
    /* Without a fan-out right below level 0, level 0 serves every step,
     * and the levels above scale that (the bypass).  Below one, Timeloop's
     * deltas leave a unit's operand in place while the innermost temporal
     * loop runs over a dimension the tensor ignores, and a window sliding
     * along it renews only its edge: the tensors it indexes alone on an
     * axis change at every step, the others are spared (spared_by). */
    int sure = 1;
    for (int d = 0; d < nd; d++)
        sure &= sf[0][d] == 1;
    c->nspared = 0;
    /* ext[s][d]: dimension d's spatial iterations at and below level s */
    int64_t ext[NM_MAX_LEVELS][NM_MAX_DIMS];
    for (int s = 0; s < S; s++)
        for (int d = 0; d < nd; d++)
            ext[s][d] = (s ? ext[s - 1][d] : 1) * sf[s][d];
    double units = 1.0;
    for (int d = 0; d < nd; d++)
        units *= (double)ext[S - 1][d];
    if (!sure) {
        /* each dimension with temporal iterations may be the innermost
         * loop's; it spares the tensors it does not index */
        for (int d = 0; d < nd; d++) {
            if (wl->bound[d] / ext[S - 1][d] <= 1)
                continue;
            uint32_t set = spared_by(wl, d);
            int k = 0;
            while (k < c->nspared && c->spared[k] != set)
                k++;
            if (k == c->nspared)
                c->spared[c->nspared++] = set;
        }
        /* a set inside another spares less: the least floor is the other's */
        int n = 0;
        for (int i = 0; i < c->nspared; i++) {
            int inside = 0;
            for (int j = 0; j < c->nspared && !inside; j++)
                inside = j != i && (c->spared[i] & ~c->spared[j]) == 0 &&
                         c->spared[i] != c->spared[j];
            if (!inside)
                c->spared[n++] = c->spared[i];
        }
        c->nspared = n;
    }
    c->hop_level = hop_level(mdl, sf);
    c->narr = 0;
    memset(c->hop_words, 0, sizeof c->hop_words);
    for (int ds = 0; ds < wl->nds; ds++) {
        uint32_t relevant = mdl->ds_dims[ds];
        for (int s = 0; s < S; s++) {
            c->energy[ds][s] = c->rd[ds][s] = c->wr[ds][s] = 0.0;
            if (!((keep_at[ds] >> s) & 1u))
                continue;
            /* below s: the fan-outs the operands cross (ext[s]); above:
             * the instances of s in use, and how many of them hold the
             * same part of an output (its irrelevant dimensions) */
            double below = 1.0, same = 1.0;
            for (int d = 0; d < nd; d++) {
                below *= (double)ext[s][d];
                if (!((relevant >> d) & 1u))
                    same *= (double)(ext[S - 1][d] / ext[s][d]);
            }
            double inst = units / below;
            /* each step of the temporal loops, the instance sends every
             * distinct element its fan-out's units use (one read for all
             * that share it): nothing below keeps one for the next step */
            double words = mdl->macs * nm_model_distinct_at_least(wl, ds, ext[s]) / below;
            double reads = words;
            double upd = 0.0;
            if (wl->ds[ds].read_write) {
                /* every step updates; all but an instance's first writes of
                 * its part read first (each axis one index: the fan-outs
                 * above split the tensor evenly) */
                double n = (double)nm_workload_ds_size(wl, ds);
                double parts = (mdl->ds_plain >> ds) & 1u ? n * same : n * inst;
                upd = words;
                reads = fmax(0.0, words - parts);
            }
            const nm_level *L = &arch->level[s];
            double w = (double)mdl->ds_bits[s][ds] / L->word_bits; /* level words per word */
            double clusters = floor((double)L->instances / L->cluster_size);
            double share = fmin(inst, clusters) / inst; /* instances sharing a vector access */
            c->energy[ds][s] = w * share / (double)L->block_size *
                               (reads * L->e_read + upd * L->e_update);
            c->rd[ds][s] = w * reads / inst;
            c->wr[ds][s] = w * upd / inst;
            if (s == c->hop_level)
                c->hop_words[ds] = wl->ds[ds].read_write ? upd : reads;
        }
        footprints(mdl, ext, ds, c);
    }
    return 1;
}

double nm_model_operand_energy(const nm_model *mdl, const nm_operand_cost *c, const int8_t *at,
                               uint32_t spared, uint32_t skip, const double *once, int8_t *in)
{
    int top = mdl->arch->nlevels - 1;
    double e = 0.0;
    for (int ds = 0; ds < mdl->wl->nds; ds++) {
        in[ds] = (spared >> ds) & 1u ? -1 : at[ds];
        if (in[ds] < 0 || ((skip >> ds) & 1u))
            continue;
        if (at[ds] < top)
            e += c->energy[ds][at[ds]];
        else if (once)
            e += fmax(0.0, c->energy[ds][top] - once[ds]);
    }
    return e;
}

uint32_t nm_model_spared(const nm_model *mdl, const nm_mapping *m)
{
    const nm_workload *wl = mdl->wl;
    int inner = -1; /* the innermost temporal loop's dimension */
    for (int s = 0; inner < 0 && s < mdl->arch->nlevels; s++)
        for (int k = 0; inner < 0 && k < wl->ndims; k++) {
            int d = m->level[s].torder[k];
            if (m->level[s].tfactor[d] > 1)
                inner = d;
        }
    return inner >= 0 ? spared_by(wl, inner) : 0;
}

double nm_model_operand_cycles(const nm_model *mdl, const nm_operand_cost *c, const int8_t *at)
{
    return nm_model_operand_cycles_plus(mdl, c, at, NULL, NULL);
}

double nm_model_operand_cycles_plus(const nm_model *mdl, const nm_operand_cost *c,
                                    const int8_t *at, const double *xrd, const double *xwr)
{
    const nm_arch *arch = mdl->arch;
    double rd[NM_MAX_LEVELS] = {0}, wr[NM_MAX_LEVELS] = {0}, cycles = 0.0;
    for (int s = 0; xrd && s < arch->nlevels; s++) {
        rd[s] = xrd[s];
        wr[s] = xwr[s];
    }
    for (int ds = 0; ds < mdl->wl->nds; ds++)
        if (at[ds] >= 0) {
            rd[at[ds]] += c->rd[ds][at[ds]];
            wr[at[ds]] += c->wr[ds][at[ds]];
        }
    for (int s = 0; s < arch->nlevels; s++) {
        const nm_level *L = &arch->level[s];
        if (L->has_read_bw)
            cycles = fmax(cycles, rd[s] / L->read_bw);
        if (L->has_write_bw)
            cycles = fmax(cycles, wr[s] / L->write_bw);
        if (L->has_shared_bw)
            cycles = fmax(cycles, (rd[s] + wr[s]) / L->shared_bw);
    }
    /* the model's cycles are whole; this is at most a rounding below them */
    return ceil(cycles * (1 - 1e-12));
}

/* Whether m's factors are perfect: no residual, each dimension's factors
 * multiplying to its bound. */
static int perfect(const nm_mapping *m, int nlevels, const nm_workload *wl)
{
    for (int d = 0; d < wl->ndims; d++) {
        int64_t p = 1;
        for (int s = 0; s < nlevels; s++) {
            const nm_level_map *lm = &m->level[s];
            if (lm->tresidual[d] || lm->sresidual[d])
                return 0;
            p *= lm->tfactor[d] * lm->sfactor[d];
        }
        if (p != wl->bound[d])
            return 0;
    }
    return 1;
}

/* nm_model_bound on the nest of m and its shape. */
static void bound_of(const nm_model *mdl, const nm_mapping *m, const nm_nest_result *shape,
                     double *energy, double *cycles, double *lla)
{
    const nm_arch *arch = mdl->arch;
    const nm_workload *wl = mdl->wl;
    uint64_t computes = shape->computes;
    double e = (double)computes * arch->arith.e_compute;
    for (int s = 0; s < arch->nlevels; s++) {
        const nm_level *L = &arch->level[s];
        uint64_t leaking = shape->replication[s] > 1 ? shape->replication[s] : 1;
        e += L->e_leak * (double)shape->temporal_steps * (double)leaking;
    }
    /* The innermost level keeping a tensor serves every operand access of
     * the arithmetic when no fan-out lies between them: for that level the
     * reads (read-only) or updates (outputs, whose reads are updates minus
     * the first writes) are fixed by the factorization alone. */
    int spread = distributes(arch); /* a spatial loop at or below the level (or M:N:
                                     * no level's reads are sure) */
    uint32_t top_counted = 0;    /* tensors already bounded at the outermost level */
    uint32_t counted = 0;        /* tensors whose innermost level is bounded below */
    for (int s = 0; s < arch->nlevels; s++) {
        for (int d = 0; d < wl->ndims; d++)
            spread |= m->level[s].sfactor[d] > 1;
        if (spread)
            break;
        const nm_level *L = &arch->level[s];
        uint64_t clusters = (uint64_t)(L->instances / L->cluster_size);
        uint64_t xy = shape->xexp[s] * shape->yexp[s];
        uint64_t used = xy < clusters ? xy : clusters;
        double per_instance_to_total = (double)shape->replication[s] * (double)used / (double)xy;
        uint64_t b = (uint64_t)L->block_size;
        int wide = (mdl->wide >> s) & 1u; /* tensor_datawidth at this level */
        for (int ds = 0; ds < wl->nds; ds++) {
            if (!((m->level[s].keep >> ds) & 1u))
                continue;
            int innermost = 1;
            for (int t = 0; t < s; t++)
                innermost &= !((m->level[t].keep >> ds) & 1u);
            if (!innermost)
                continue;
            uint64_t steps = shape->steps;
            double ce;
            if (wl->ds[ds].read_write) {
                /* partition: what this instance holds over the run */
                uint64_t part = shape->tile[arch->nlevels - 1][ds].size;
                for (int t = arch->nlevels - 2; t >= s; t--) {
                    uint64_t denom = shape->tile[t + 1][ds].fanout > 1 ? shape->tile[t + 1][ds].inner_size
                                                                  : shape->tile[t][ds].size;
                    if (denom)
                        part = part * shape->tile[t][ds].size / denom;
                }
                uint64_t reads = steps > part ? steps - part : 0;
                ce = wide ? (double)vectors(mdl, s, ds, steps, b) * L->e_update +
                                (double)vectors(mdl, s, ds, reads, b) * L->e_read
                          : (double)ceil_div(steps, b) * L->e_update +
                                (double)ceil_div(reads, b) * L->e_read;
            } else {
                ce = (double)(wide ? vectors(mdl, s, ds, steps, b) : ceil_div(steps, b)) *
                     L->e_read;
            }
            e += ce * per_instance_to_total;
            counted |= 1u << ds;
            if (s == arch->nlevels - 1)
                top_counted |= 1u << ds;
        }
    }
    /* The outermost level (one instance) sends every read-only element and
     * receives every output element at least once. */
    const nm_level *top = &arch->level[arch->nlevels - 1];
    int T = arch->nlevels - 1;
    double once[NM_MAX_DS] = {0}, moved = 0.0;
    for (int ds = 0; ds < wl->nds && top->instances == 1; ds++) {
        uint64_t n = nm_workload_ds_size(wl, ds);
        moved += (double)n;
        if ((top_counted >> ds) & 1u) /* bounded more tightly above */
            continue;
        int top_wide = (mdl->wide >> T) & 1u;
        double vec = (double)(top_wide ? vectors(mdl, T, ds, n, (uint64_t)top->block_size)
                                       : ceil_div(n, (uint64_t)top->block_size));
        once[ds] = vec * (wl->ds[ds].read_write ? top->e_update : top->e_read);
        e += once[ds];
    }
    /* Past a fan-out, the operand floor (nm_model_operands) for the
     * tensors left (at the outermost level, what it adds to once), and
     * every level's bandwidth for them all: with perfect factors, on a
     * design whose networks all multicast from one source.  Below a
     * fan-out of level 0 the loop order decides which tensors are spared:
     * the least over the sets an order of m's loops may spare. */
    nm_operand_cost op;
    double bw_cycles = 0.0;
    if ((counted != (1u << wl->nds) - 1 || mdl->bw_limited) && perfect(m, arch->nlevels, wl)) {
        uint32_t keep_at[NM_MAX_DS];
        int64_t sf[NM_MAX_LEVELS][NM_MAX_DIMS];
        int8_t at[NM_MAX_DS], in[NM_MAX_DS];
        for (int s = 0; s < arch->nlevels; s++)
            memcpy(sf[s], m->level[s].sfactor, sizeof sf[s]);
        uint32_t kept[NM_MAX_DS] = {0};
        for (int ds = 0; ds < wl->nds; ds++) {
            int s = 0;
            while (s < T && !((m->level[s].keep >> ds) & 1u))
                s++;
            keep_at[ds] = 1u << s;
            at[ds] = (int8_t)s;
            for (int t = 0; t < arch->nlevels; t++)
                kept[ds] |= (uint32_t)((m->level[t].keep >> ds) & 1u) << t;
        }
        if (nm_model_operands(mdl, (const int64_t(*)[NM_MAX_DIMS])sf, keep_at, &op)) {
            double least = INFINITY; /* (not on M:N networks) */
            bw_cycles = INFINITY;
            /* the hops of m's own arrangement (its loop orders are what
             * the bound is on; the levels below the hop level, where the
             * counted tensors are, have no fan-out) */
            nm_model_hop_costs(mdl, (const int64_t(*)[NM_MAX_DIMS])sf, m, &op);
            for (int k = 0; k < (op.nspared ? op.nspared : 1); k++) {
                uint32_t spared = op.nspared ? op.spared[k] : 0;
                double ek = nm_model_operand_energy(mdl, &op, at, spared, counted,
                                                    top->instances == 1 ? once : NULL, in);
                double words[NM_MAX_DS];
                nm_model_hop_words(mdl, &op, in, kept, words);
                least = fmin(least, ek + nm_model_hop_floor(mdl, &op, words));
                bw_cycles = fmin(bw_cycles, nm_model_operand_cycles(mdl, &op, in));
            }
            e += least;
        }
    }
    *energy = e;
    *cycles = fmax((double)shape->temporal_steps, bw_cycles);
    *lla = moved;
}

/* Sparse optimizations remove accesses and computes that the dense bounds
 * count, so those would not be lower bounds: where they can remove some
 * (nm_sparse_removes), the bound is the roofline's (every compute on two
 * nonzero operands; roofline.c), the same for every mapping. */
static int no_sparse_bound(const nm_model *mdl, double *energy, double *cycles, double *lla)
{
    if (!mdl->sparse_bound)
        return 0;
    *energy = mdl->sparse_energy;
    *cycles = mdl->sparse_cycles;
    *lla = 0.0;
    return 1;
}

void nm_model_bound(nm_model *mdl, const nm_mapping *m, double *energy, double *cycles,
                    double *lla)
{
    if (no_sparse_bound(mdl, energy, cycles, lla))
        return;
    nm_nest nest;
    nm_nest_result nr;
    nm_nest_build(&nest, m, mdl->arch, mdl->wl);
    nm_nest_shape(&nest, mdl->wl, &nr);
    bound_of(mdl, m, &nr, energy, cycles, lla);
}

/* Runs account() and finish() on the tiles in nr; keeps the least of each
 * figure in *e, *c, *l. */
static void floor_figures(nm_model *mdl, const nm_mapping *m, const nm_nest_result *nr,
                          double *e, double *c, double *l)
{
    nm_stats *fl = &mdl->shape->floor;
    for (int s = 0; s < mdl->arch->nlevels; s++)
        fl->level[s].noc_energy = 0.0;
    for (int ds = 0; ds < mdl->wl->nds; ds++)
        account(mdl, m, nr, ds, 0, fl, NULL);
    finish(mdl, nr, fl);
    *e = fmin(*e, fl->energy);
    *c = fmin(*c, (double)fl->cycles);
    *l = fmin(*l, (double)fl->last_level_accesses);
}

void nm_model_floor(nm_model *mdl, const nm_mapping *m, double *energy, double *cycles,
                    double *lla)
{
    if (no_sparse_bound(mdl, energy, cycles, lla))
        return;
    const nm_arch *arch = mdl->arch;
    const nm_workload *wl = mdl->wl;
    nm_nest nest;
    nm_nest_result nr;
    nm_nest_build(&nest, m, arch, wl);
    nm_nest_shape(&nest, wl, &nr);
    bound_of(mdl, m, &nr, energy, cycles, lla);
    /* The floors hold for perfect nests, and take no distributed multicast;
     * they charge the dense model's accesses, which a design with sparse
     * optimizations splits (nm_sparse_apply) before it charges them. */
    if (nest.imperfect || distributes(arch) || mdl->sparse)
        return;
    nm_nest_floor(mdl->ws, &nest, m, arch, wl, &nr);
    /* The outermost level's accesses depend on its own loop order alone:
     * take them exactly for each of its orders (up to TOP_ORDERS of them),
     * and the least figures over those. */
    enum { TOP_ORDERS = 120 };
    int top = arch->nlevels - 1, lo = nest.first[top];
    while (lo <= nest.boundary[top] && nest.loop[lo].space != NM_TIME)
        lo++;
    int k = nest.boundary[top] - lo + 1;
    uint64_t orders = 1;
    for (int i = 2; i <= k; i++)
        orders *= (uint64_t)i;
    double e = INFINITY, c = INFINITY, l = INFINITY;
    if (k >= 2 && orders <= TOP_ORDERS) {
        nm_nest pn = nest;
        int8_t idx[NM_MAX_DIMS];
        for (int i = 0; i < k; i++)
            idx[i] = (int8_t)i;
        do {
            for (int i = 0; i < k; i++)
                pn.loop[lo + i] = nest.loop[lo + idx[i]];
            nm_nest_analyze_level(mdl->ws, &pn, m, arch, wl, top, &nr);
            floor_figures(mdl, m, &nr, &e, &c, &l);
        } while (nm_mapping_next_order(idx, k));
    } else {
        floor_figures(mdl, m, &nr, &e, &c, &l);
    }
    *energy = fmax(*energy, e);
    *cycles = fmax(*cycles, c);
    *lla = fmax(*lla, l);
}

int nm_model_eval(nm_model *mdl, const nm_mapping *m, nm_stats *out, nm_nest *nest_out)
{
    const nm_arch *arch = mdl->arch;
    const nm_workload *wl = mdl->wl;
    nm_nest local;
    nm_nest *nest = nest_out ? nest_out : &local;
    struct nm_shape_memo *sm = mdl->shape;
    nm_nest_result *shape = &sm->nr;
    memset(&out->invalid, 0, sizeof out->invalid);
    if (sm->valid && same_but_orders(m, &sm->m, arch->nlevels)) {
        nm_nest_build(nest, m, arch, wl); /* perfect factors: the same shape */
    } else {
        sm->valid = 0;
        if (!check_factors(mdl, m, out)) {
            nest->nloops = 0;
            nest->nlevels = 0;
            return 0;
        }
        nm_nest_build(nest, m, arch, wl);
        nm_nest_shape(nest, wl, shape);
        if (!check(mdl, m, shape, out))
            return 0;
        /* with residuals the tiles depend on the order (nm_nest_shape) */
        if (!nest->imperfect) {
            memcpy(sm->m.level, m->level, (size_t)arch->nlevels * sizeof m->level[0]);
            sm->valid = 1;
        }
    }
    nm_nest_analyze(mdl->ws, nest, m, arch, wl, shape);
    out->noc = NULL;
    for (int s = 0; s < arch->nlevels; s++)
        out->level[s].noc_energy = 0.0;
    for (int ds = 0; ds < wl->nds; ds++)
        if (!account(mdl, m, shape, ds, 1, out, NULL))
            return 0;
    out->sparse = 0;
    out->spd = NULL;
    out->computes = shape->computes;
    if (mdl->split && !nm_sparse_apply(&arch->sparse, arch, wl, m, out, mdl->spws))
        return 0;
    finish(mdl, shape, out);
    return 1;
}

int nm_model_sparse_stats(nm_model *mdl, const nm_mapping *m, nm_stats *st,
                          nm_sparse_detail *detail)
{
    const nm_noc_stats *noc = st->noc; /* (nm_model_noc_stats on the same m) */
    int valid = nm_model_eval(mdl, m, st, NULL);
    st->noc = noc;
    if (valid && mdl->spws && mdl->arch->sparse.formats) {
        memcpy(detail, nm_sparse_ws_detail(mdl->spws), sizeof *detail);
        st->spd = detail;
    }
    return valid;
}

void nm_invalid_describe(const nm_invalid *inv, const nm_arch *arch, const nm_workload *wl,
                         char *buf, size_t size)
{
    const char *lname = inv->level >= 0 ? arch->level[inv->level].name : arch->arith.name;
    unsigned long long got = inv->got, lim = inv->limit;
    switch (inv->kind) {
    case NM_VALID:
    case NM_INV_KINDS: /* (not a kind) */
        snprintf(buf, size, "valid");
        return;
    case NM_INV_FACTORS:
        if (inv->axis == 'r')
            snprintf(buf, size, "the factors of dimension %s, with their residuals, cover "
                     "%llu (((r2-1)*f1 + (r1-1))*f0 + r0, outermost first), but the problem "
                     "has %s = %llu", wl->dim[inv->index], got, wl->dim[inv->index], lim);
        else
            snprintf(buf, size, "the factors of dimension %s multiply to %llu, but the problem "
                     "has %s = %llu", wl->dim[inv->index], got, wl->dim[inv->index], lim);
        return;
    case NM_INV_RESIDUAL:
        snprintf(buf, size, "the residual of %s at level %s lies under the spatial %s loop of "
                 "level %s, where only the last instance would run it; put the residual at or "
                 "above that level", wl->dim[inv->index], lname, wl->dim[inv->index],
                 arch->level[got].name);
        return;
    case NM_INV_MULTICAST:
        snprintf(buf, size, "couldn't distribute the multicast of %s to level %s (network_type "
                 "M:N): the fan-out above it or below it delivers %s at more than one multicast "
                 "factor (Timeloop: complex multicast signature detected)",
                 wl->ds[inv->index].name, lname, wl->ds[inv->index].name);
        return;
    case NM_INV_MD_CAPACITY:
        snprintf(buf, size, "couldn't map level %s: mapped metadata tile size %llu exceeds "
                 "metadata buffer capacity %llu", lname, got, lim);
        return;
    case NM_INV_SKIP_FANOUT:
        snprintf(buf, size, "spatial skipping at level %s: Required fanout%c %llu does not meet "
                 "hardware constraint %llu (for %s: the expansions left below it, each "
                 "rounded down, no longer divide as the fan-out does)", lname, inv->axis, got,
                 lim, wl->ds[inv->index].name);
        return;
    case NM_INV_FORMAT:
        if (inv->got == 5)
            snprintf(buf, size, "couldn't evaluate level %s: out of memory for the "
                     "distribution of %s's banded tiles", lname, wl->ds[inv->index].name);
        else if (inv->got == 4)
            snprintf(buf, size, "couldn't map level %s: %s is compressed here but not in the "
                     "level above (compressing on chip is not modelled: Timeloop's model "
                     "aborts there); compress it above too, or not here", lname,
                     wl->ds[inv->index].name);
        else if (inv->got >= 2)
            snprintf(buf, size, "couldn't map level %s: %s (%s is compressed in the level "
                     "above and not here; give '%s' %s: true, or compress it here too)",
                     lname, inv->got == 2 ? "decompression (from parent level) needed but not "
                                            "supported" : "compression (to parent level) "
                                                          "needed but not supported",
                     wl->ds[inv->index].name, lname,
                     inv->got == 2 ? "decompression_supported" : "compression_supported");
        else if (inv->got == 0)
            snprintf(buf, size, "couldn't map level %s: more compression ranks needed than "
                     "supported in hardware. dataspace name: %s (the mapping has more loops "
                     "over it here than its format has ranks; add an outer UOP rank, or "
                     "flattened_rankIDs)", lname, wl->ds[inv->index].name);
        else
            snprintf(buf, size, "couldn't map level %s: pretiling for %s required but level "
                     "compression format does not align (a compressed tile holds its child "
                     "level's tiles: its innermost ranks must be the child's formats)", lname,
                     wl->ds[inv->index].name);
        return;
    case NM_INV_FAN_RESIDUALS:
        snprintf(buf, size, "the fan-out of level %s has %llu spatial loops with a residual; "
                 "nestmap models at most %d per fan-out", lname, got, NM_MAX_FAN_RESIDUALS);
        return;
    case NM_INV_NO_FANOUT:
        snprintf(buf, size, "couldn't map level %s: it has no spatial fan-out, but the mapping "
                 "gives it spatial factor %s=%llu", lname, wl->dim[inv->index], got);
        return;
    case NM_INV_BYPASS_ALL:
        snprintf(buf, size, "data space %s is bypassed at every storage level; at least the "
                 "outermost level must keep it", wl->ds[inv->index].name);
        return;
    case NM_INV_CAPACITY:
        snprintf(buf, size, "couldn't map level %s: mapped tile size %llu exceeds buffer "
                 "capacity %llu", lname, got, lim);
        return;
    case NM_INV_MIN_UTIL:
        snprintf(buf, size, "couldn't map level %s: mapped tile size %llu is less than "
                 "constrained minimum utilization %g", lname, got,
                 (double)lim * arch->level[inv->level].min_utilization);
        return;
    case NM_INV_ARITH:
        if (inv->axis)
            snprintf(buf, size, "couldn't map level %s: mapped max Arithmetic %c expansion %llu "
                     "exceeds hardware instances %llu", lname, inv->axis, got, lim);
        else
            snprintf(buf, size, "couldn't map level %s: mapped max Arithmetic instances %llu "
                     "exceeds hardware instances %llu", lname, got, lim);
        return;
    case NM_INV_INSTANCES:
        if (inv->axis)
            snprintf(buf, size, "couldn't map level %s: mapped %c expansion %llu exceeds "
                     "available hardware instances %llu", lname, inv->axis, got, lim);
        else
            snprintf(buf, size, "couldn't map level %s: mapped instances %llu exceeds available "
                     "hardware instances %llu", lname, got, lim);
        return;
    }
    snprintf(buf, size, "invalid mapping");
}

void nm_stats_add(nm_stats *a, const nm_stats *plus, const nm_stats *minus, int nlevels,
                  int nds)
{
    nm_stats_add_times(a, 1, plus, minus, nlevels, nds);
}

void nm_stats_add_times(nm_stats *a, int64_t k, const nm_stats *plus, const nm_stats *minus,
                        int nlevels, int nds)
{
    static const nm_stats none;
    const nm_stats *b = plus, *z = minus ? minus : &none;
    double busy = a->utilization * (double)a->cycles +
                  (double)k * (b->utilization * (double)b->cycles -
                               z->utilization * (double)z->cycles);
    /* (unsigned counts: k (b - z) wraps and comes back when a + k (b - z)
     * is the count it stands for; k = 1 sums in nm_stats_add's order) */
#define ADD(f)                                                                                 \
    a->f = k == 1 ? a->f - z->f + b->f                                                         \
                  : (__typeof__(a->f))(a->f + (__typeof__(a->f))k * (b->f - z->f))
#define LARGER(f) x->f = x->f > y->f ? x->f : y->f
    for (int s = 0; s < nlevels; s++) {
        nm_level_stats *x = &a->level[s];
        const nm_level_stats *y = &b->level[s];
        ADD(level[s].cycles);
        ADD(level[s].leakage);
        ADD(level[s].energy);
        ADD(level[s].noc_energy);
        x->throttling = fmax(x->throttling, y->throttling);
        for (int ds = 0; ds < nds; ds++) {
            ADD(level[s].ds[ds].reads);
            ADD(level[s].ds[ds].fills);
            ADD(level[s].ds[ds].updates);
            ADD(level[s].ds[ds].temporal_reductions);
            ADD(level[s].ds[ds].address_generations);
            ADD(level[s].ds[ds].energy);
            ADD(level[s].ds[ds].noc_energy);
            LARGER(ds[ds].kept);
            LARGER(ds[ds].partition_size);
            LARGER(ds[ds].utilized_capacity);
            LARGER(ds[ds].utilized_instances);
            LARGER(ds[ds].utilized_clusters);
            LARGER(ds[ds].tile_shape);
            nm_ds_stats *u = &x->ds[ds];
            u->energy_per_instance = u->utilized_instances
                                         ? u->energy / (double)u->utilized_instances
                                         : 0.0;
        }
    }
    ADD(computes);
    ADD(algorithmic_computes);
    ADD(compute_cycles);
    ADD(cycles);
    ADD(compute_energy);
    ADD(energy);
    ADD(noc_energy);
    ADD(total_ops);
    ADD(last_level_accesses);
#undef ADD
#undef LARGER
    a->arith_utilized = a->arith_utilized > b->arith_utilized ? a->arith_utilized
                                                              : b->arith_utilized;
    a->utilization = a->cycles ? busy / (double)a->cycles : 0.0;
}
