/* sparse_format.c — representation formats and their metadata (sparse.h).
 *
 * A tensor with a representation at a level is a tree of fibers: its
 * tile's loops over the tensor's dimensions are dealt out to the ranks,
 * outermost rank first (with flattened_rankIDs, a rank takes several
 * loops); each rank's fibers carry metadata and payload units by the
 * rank's format, and the expected units follow from the distribution of
 * the tile's nonzero count.  Semantics learnt from Timeloop's sparse model
 * (NVlabs/timeloop at 4cf6d4c: representation-analyzer.cpp, the format
 * models under src/workload/format-models/, tiling-tile-info.cpp and
 * buffer.cpp's occupancy, vector and bandwidth code) and pinned by the
 * conformance corpus; written here.
 */
#include "sparse_int.h"

#include <math.h>
#include <string.h>

/* ---- distributions of a tile's nonzeros ---- */

static double lchoose(uint64_t a, uint64_t b)
{
    return lgamma((double)a + 1.0) - lgamma((double)b + 1.0) - lgamma((double)(a - b) + 1.0);
}

double nm_hyper_p0(uint64_t n, uint64_t N, uint64_t r)
{
    if (r == 0 || n == 0)
        return 1.0;
    if (n + r > N)
        return 0.0;
    /* C(N - r, n) / C(N, n) = C(N - n, r) / C(N, r): the product over the
     * fewer of n and r terms (a large tile given few nonzeros: r) */
    uint64_t a = n < r ? n : r, b = n < r ? r : n;
    if (a <= 4096) {
        long double p = 1.0L;
        for (uint64_t i = 0; i < a && p > 1e-300L; i++)
            p *= (long double)(N - b - i) / (long double)(N - i);
        return (double)p;
    }
    return exp(lchoose(N - r, n) - lchoose(N, n));
}

double nm_density_p_empty_given(const nm_density *dm, const nm_dtile *sub, const nm_dtile *S,
                                uint64_t o)
{
    if (dm->kind == NM_DENSITY_FIXED) {
        double exact = (double)sub->n * ((double)o / (double)S->n);
        return floor(exact) == 0.0 ? 1.0 - (exact - floor(exact)) : 0.0;
    }
    if (dm->kind == NM_DENSITY_BANDED)
        return nm_band_p_empty_given(dm, sub, S, o);
    return nm_hyper_p0(sub->n, S->n, o);
}

uint64_t nm_density_max_occupancy(const nm_density *dm, const nm_dtile *t, uint64_t N)
{
    uint64_t n = t->n;
    if (dm->kind == NM_DENSITY_BANDED)
        return n ? nm_band_max(dm, t->rows, t->cols) : 0;
    if (dm->kind == NM_DENSITY_FIXED) {
        /* the count at confidence 1: the floor only when s*d is whole */
        double exact = (double)n * dm->d;
        return exact == floor(exact) ? (uint64_t)exact : (uint64_t)ceil(exact);
    }
    uint64_t r = nm_density_nnz(dm, N);
    return n >= r ? r : n;
}

uint64_t nm_density_capacity(const nm_density *dm, uint64_t n, uint64_t N)
{
    if (dm->kind == NM_DENSITY_BANDED) { /* one row of the band */
        uint64_t row = 2u * (uint64_t)dm->band + 1u;
        return n < row ? n : row;
    }
    nm_dtile t = nm_dtile_n(n);
    return nm_density_max_occupancy(dm, &t, N);
}

/* The least nonzero count of a tile of n elements (shape: the dense tile),
 * with Timeloop's arithmetic (a hypergeometric tile's minimum is 0 unless
 * the tensor is full). */
static uint64_t min_occupancy(const nm_density *dm, uint64_t n, uint64_t N, uint64_t shape)
{
    double md;
    if (dm->kind == NM_DENSITY_BANDED)
        return 0; /* Timeloop's table always holds the empty count */
    if (dm->kind == NM_DENSITY_FIXED) {
        md = floor((double)n * dm->d) / (double)n;
    } else {
        /* a tile larger than the tensor's zeros holds the rest at least.
         * (Timeloop subtracts in unsigned arithmetic there: a tile smaller
         * than the tensor wraps around to a garbage minimum, which makes it
         * take the least possible count's probability for an empty tile's
         * and scale the instances down; the conformance README's
         * bug_hypergeometric_min_occupancy_underflow.  nestmap takes the
         * true minimum.) */
        uint64_t r = nm_density_nnz(dm, N);
        md = n <= N - r ? 0.0 : (double)(n - (N - r)) / (double)n;
    }
    return (uint64_t)floor(md * (double)shape);
}

/* P(a tile of n elements holds k nonzeros), for k = k0, k0 + 1, ... in
 * turn: the hypergeometric terms by their ratio from the least possible
 * count, in long double, so that sums over them (the expected density)
 * come out as exactly as Timeloop's (boost's pdf) do. */
typedef struct occ_pdf {
    const nm_density *dm;
    uint64_t n, N, r, k;
    long double p; /* P(k) */
    uint64_t mode; /* P falls past it (hypergeometric); UINT64_MAX: fixed */
    const nm_band_pdf *band; /* banded: the table, walked at bi */
    size_t bi;
} occ_pdf;

/* band: for a banded density, the tile's table from nm_band_pdf_make
 * (NULL otherwise). */
static void occ_pdf_init(occ_pdf *o, const nm_density *dm, uint64_t n, uint64_t N,
                         const nm_band_pdf *band)
{
    o->dm = dm;
    o->n = n;
    o->N = N;
    o->r = nm_density_nnz(dm, N);
    o->k = 0;
    o->p = 0.0L;
    o->mode = UINT64_MAX;
    o->band = band;
    o->bi = 0;
    if (dm->kind != NM_DENSITY_HYPERGEOMETRIC)
        return;
    o->mode = (uint64_t)floorl((long double)(n + 1) * (long double)(o->r + 1) /
                               (long double)(N + 2));
    uint64_t r = o->r, k0 = n + r > N ? n + r - N : 0;
    long double p = 1.0L;
    if (k0 == 0) { /* C(N-r, n) / C(N, n) = C(N-n, r) / C(N, r): the fewer terms */
        uint64_t a = n < r ? n : r, b = n < r ? r : n;
        for (uint64_t i = 0; i < a && p > 0.0L; i++)
            p *= (long double)(N - b - i) / (long double)(N - i);
    }
    else if (N - n < N - r) /* C(r, k0) / C(N, n) = C(r, m) / C(N, m), m = N - n */
        for (uint64_t i = 0; i < N - n && p > 0.0L; i++)
            p *= (long double)(r - i) / (long double)(N - i);
    else /* C(r, k0) / C(N, n) with n - k0 = N - r */
        for (uint64_t i = 1; i <= N - r && p > 0.0L; i++)
            p *= (long double)(k0 + i) / (long double)(r + i);
    if (p == 0.0L) /* beyond long double's range: from the logarithms */
        p = expl(lgammal((long double)r + 1) - lgammal((long double)k0 + 1) -
                 lgammal((long double)(r - k0) + 1) + lgammal((long double)(N - r) + 1) -
                 lgammal((long double)(n - k0) + 1) - lgammal((long double)(N - r - n + k0) + 1) -
                 lgammal((long double)N + 1) + lgammal((long double)n + 1) +
                 lgammal((long double)(N - n) + 1));
    o->k = k0;
    o->p = p;
}

/* P(k), for k not below any k asked before. */
static double occ_pdf_at(occ_pdf *o, uint64_t k)
{
    const nm_density *dm = o->dm;
    if (dm->kind == NM_DENSITY_BANDED) {
        const nm_band_pdf *t = o->band;
        while (o->bi < t->n && t->occ[o->bi] < k)
            o->bi++;
        return o->bi < t->n && t->occ[o->bi] == k ? t->p[o->bi] : 0.0;
    }
    if (dm->kind == NM_DENSITY_FIXED) {
        double exact = (double)o->n * dm->d, pc = exact - floor(exact);
        if (floor(exact) == (double)k)
            return 1.0 - pc;
        return ceil(exact) == (double)k ? pc : 0.0;
    }
    if (k < o->k || k > o->r || k > o->n)
        return 0.0;
    while (o->k < k) {
        uint64_t j = o->k;
        o->p *= (long double)(o->r - j) * (long double)(o->n - j) /
                ((long double)(j + 1) * (long double)(o->N - o->r - o->n + j + 1));
        o->k++;
    }
    return (double)o->p;
}

/* Narrows [*lo, *hi] to the counts whose probability may be nonzero (a
 * fixed density's two around n d; a hypergeometric tile's from the least
 * possible count to min(r, n)): a large tile is not walked count by count
 * through its zeros. */
static void occ_pdf_span(const occ_pdf *o, uint64_t *lo, uint64_t *hi)
{
    uint64_t a, b;
    if (o->dm->kind == NM_DENSITY_BANDED) {
        a = o->band->n ? o->band->occ[0] : 0;
        b = o->band->n ? o->band->occ[o->band->n - 1] : 0;
    } else if (o->dm->kind == NM_DENSITY_FIXED) {
        double exact = (double)o->n * o->dm->d;
        a = (uint64_t)floor(exact);
        b = (uint64_t)ceil(exact);
    } else {
        a = o->k; /* the least possible count, after occ_pdf_init */
        b = o->r < o->n ? o->r : o->n;
    }
    if (*lo < a)
        *lo = a;
    if (*hi > b)
        *hi = b;
}

/* Whether P(j) falls for every j >= k: past a hypergeometric count's
 * mode, floor((n + 1)(r + 1) / (N + 2)), so once a term is too small to
 * count the rest are too (a fixed density's two terms: never said). */
static int occ_pdf_falling(const occ_pdf *o, uint64_t k)
{
    if (o->dm->kind == NM_DENSITY_BANDED) /* past the table's last count */
        return !o->band->n || k > o->band->occ[o->band->n - 1];
    return k > o->mode;
}

/* ---- ranks of a representation ---- */

static int rank_of_dim(const nm_rank_format *rf, int dim, uint32_t *group)
{
    for (int g = 0; g < rf->ngroups; g++)
        if ((rf->group[g] >> dim) & 1u) {
            *group = rf->group[g];
            return 1;
        }
    return 0;
}

/* Deals loops out to ranks (outermost first) down to rank inner: returns
 * the number of ranks placed, -1 when loops are left over (more ranks
 * needed) or the list would overflow. */
static int deal_ranks(const nm_repr *rp, int nr, int inner, const nm_sp_loops *L, int nd,
                      nm_sp_ranks *q)
{
    q->head = q->tail = NM_MAX_FMT_RANKS + 1;
    int li = L->n - 1, r = nr;
    uint64_t tile_ps = 1;
    while (r > inner && li >= 0) {
        while (li >= 0 && L->f[li] <= 1)
            li--;
        if (li < 0)
            break;
        r--;
        int64_t ext[NM_MAX_DIMS];
        for (int d = 0; d < nd; d++)
            ext[d] = 1;
        uint32_t rule = 0;
        int in_flat = 0;
        if (rp && rp->rank[r].ngroups > 0) {
            if (rank_of_dim(&rp->rank[r], L->dim[li], &rule)) {
                in_flat = 1;
            } else { /* the rank flattens other dimensions: empty, at the back */
                if (q->tail >= 2 * NM_MAX_FMT_RANKS + 2)
                    return -1;
                for (int d = 0; d < nd; d++)
                    q->ext[q->tail][d] = 1;
                q->ps[q->tail++] = L->ps[0];
                continue;
            }
        }
        if (!rp)
            in_flat = 1;
        ext[L->dim[li]] *= L->f[li];
        tile_ps = L->ps[li];
        li--;
        if (li >= 0 && in_flat) {
            int triv = L->f[li] <= 1, inrule = (int)((rule >> L->dim[li]) & 1u);
            while (!rp || inrule || triv) {
                if (!triv)
                    ext[L->dim[li]] *= L->f[li];
                if (--li < 0)
                    break;
                inrule = (int)((rule >> L->dim[li]) & 1u);
                triv = L->f[li] <= 1;
            }
        }
        if (q->head <= 0)
            return -1;
        q->head--;
        memcpy(q->ext[q->head], ext, sizeof ext);
        q->ps[q->head] = tile_ps;
        tile_ps = 1;
    }
    while (r > inner) {
        r--;
        if (q->head <= 0)
            return -1;
        q->head--;
        for (int d = 0; d < nd; d++)
            q->ext[q->head][d] = 1;
        q->ps[q->head] = L->ps[0];
    }
    for (; li >= 0; li--)
        if (L->f[li] > 1)
            return -1;
    return q->tail - q->head;
}

/* The same with rank_application_order: inner_to_outer (Timeloop's
 * ApplyRanksInnerToOuter): the innermost rank above `inner` takes the
 * innermost loops, each rank the loops its flattening rule lets follow,
 * and ranks left over outermost are empty; a rank whose rule names
 * another dimension stays empty (one element) and the loop goes to the
 * next.  A rank stands for the elements of the tile up to its first
 * (innermost) loop, as Timeloop records it.  Placed in order from q->head,
 * innermost first. */
static int deal_ranks_inward_first(const nm_repr *rp, int nr, int inner, const nm_sp_loops *L,
                                   int nd, nm_sp_ranks *q)
{
    q->head = q->tail = 0;
    int li = 0, r = inner - 1;
    while (r < nr - 1 && li < L->n) {
        while (li < L->n && L->f[li] <= 1)
            li++;
        if (li >= L->n)
            break;
        r++;
        if (q->tail >= 2 * NM_MAX_FMT_RANKS + 2)
            return -1;
        int64_t *ext = q->ext[q->tail];
        for (int d = 0; d < nd; d++)
            ext[d] = 1;
        uint32_t rule = 0;
        int in_flat = !rp;
        if (rp && rp->rank[r].ngroups > 0) {
            if (!rank_of_dim(&rp->rank[r], L->dim[li], &rule)) {
                q->ps[q->tail++] = 1; /* the loop waits for the next rank */
                continue;
            }
            in_flat = 1;
        }
        ext[L->dim[li]] *= L->f[li];
        q->ps[q->tail] = L->ps[li];
        li++;
        if (li < L->n && in_flat) {
            int triv = L->f[li] <= 1, inrule = (int)((rule >> L->dim[li]) & 1u);
            while (!rp || inrule || triv) {
                if (!triv)
                    ext[L->dim[li]] *= L->f[li];
                if (++li >= L->n)
                    break;
                inrule = (int)((rule >> L->dim[li]) & 1u);
                triv = L->f[li] <= 1;
            }
        }
        q->tail++;
    }
    while (r < nr - 1) {
        r++;
        if (q->tail >= 2 * NM_MAX_FMT_RANKS + 2)
            return -1;
        for (int d = 0; d < nd; d++)
            q->ext[q->tail][d] = 1;
        q->ps[q->tail++] = L->n ? L->ps[0] : 1;
    }
    for (; li < L->n; li++)
        if (L->f[li] > 1)
            return -1;
    return q->tail - q->head;
}

/* Ranks, rank loops and fibers of tensor ds at level s (its child's done). */
static int define_ranks(const nm_sparse *sp, const nm_arch *arch, const nm_workload *wl,
                        const nm_cnest *c, int s, int ds, nm_stats *out,
                        struct nm_sparse_ws *ws)
{
    nm_sp_tile *t = &ws->t[s][ds];
    const nm_repr *rp = t->md ? &sp->repr[s][ds] : NULL;
    const nm_dataspace *dsp = &wl->ds[ds];
    int nd = wl->ndims, child = t->child;
    int inner_most = child >= 0 ? child + 1 : 0;
    const nm_sp_tile *ct = child >= 0 ? &ws->t[child][ds] : NULL;
    int child_n = ct ? ct->nr : 0;
    /* a compressed tile over a child tile: the child's ranks are its
     * innermost ones (Timeloop's pre-tiling) */
    int pre = rp && sp->repr[s][ds].compressed && ct && ct->shape > 1;
    if (pre) {
        int bad = child_n > t->nr;
        for (int r = 0; !bad && r < child_n && ct->md && sp->repr[child][ds].compressed; r++)
            bad = sp->repr[s][ds].rank[r].fmt != sp->repr[child][ds].rank[r].fmt;
        if (bad) {
            out->invalid = (nm_invalid){NM_INV_FORMAT, s, ds, 0, 1, 0};
            return 0;
        }
    }
    nm_sp_loops *L = &ws->loops;
    L->n = 0;
    for (int l = inner_most; l <= s; l++)
        for (int i = c->first[l]; i <= c->last[l]; i++) {
            if (!nm_ds_uses(dsp, c->dim[i]))
                continue;
            int64_t ext[NM_MAX_DIMS];
            nm_cnest_mold(c, i, nd, ext);
            L->dim[L->n] = c->dim[i];
            L->f[L->n] = c->f[i];
            L->ps[L->n++] = nm_ds_box(dsp, ext);
        }
    if (!pre) { /* the levels below fold into the first loop of each dimension */
        int64_t below[NM_MAX_DIMS];
        for (int d = 0; d < nd; d++)
            below[d] = 1;
        for (int i = 0; i < (inner_most > 0 ? c->last[inner_most - 1] + 1 : 0); i++)
            below[c->dim[i]] *= c->f[i];
        for (int i = 0; i < L->n; i++) {
            L->f[i] *= below[L->dim[i]];
            below[L->dim[i]] = 1;
        }
    }
    nm_sp_ranks *q = &ws->ranks;
    int placed = rp && rp->inner_to_outer
                     ? deal_ranks_inward_first(rp, t->nr, pre ? child_n : 0, L, nd, q)
                     : deal_ranks(rp, t->nr, pre ? child_n : 0, L, nd, q);
    if (placed < 0 || placed + (pre ? child_n : 0) != t->nr) {
        out->invalid = (nm_invalid){NM_INV_FORMAT, s, ds, 0, 0, 0};
        return 0;
    }
    int k = 0;
    if (pre) {
        t->ps[0] = ct->ps[0];
        for (int r = 0; r < child_n; r++, k++) {
            memcpy(t->ext[k], ct->ext[r], sizeof t->ext[k]);
            t->ps[k + 1] = ct->ps[r + 1];
        }
    } else {
        t->ps[0] = 1;
    }
    for (int i = q->head; i < q->tail; i++, k++) {
        memcpy(t->ext[k], q->ext[i], sizeof t->ext[k]);
        t->ps[k + 1] = q->ps[i];
    }
    int64_t below[NM_MAX_DIMS]; /* the box of an entry of rank r */
    for (int d = 0; d < nd; d++)
        below[d] = 1;
    for (int r = 0; r < t->nr; r++) {
        t->fiber[r] = nm_ds_box(dsp, t->ext[r]);
        t->sub[r] = nm_dtile_box(dsp, below);
        t->sub[r].n = t->ps[r];
        for (int d = 0; d < nd; d++)
            below[d] *= t->ext[r][d];
    }
    (void)arch;
    return 1;
}

/* The metadata and payload units of each rank of tile S holding o
 * nonzeros (Timeloop's GetMetaDataTileOccupancyGivenDataTile and the format
 * models' GetOccupancy). */
static void units_given(const nm_repr *rp, const nm_sp_tile *t, const nm_density *dm,
                        const nm_dtile *S, uint64_t o, double u[][2], int bits[][2])
{
    double fibers = 1.0;
    const nm_dtile *cur = S;
    for (int r = t->nr - 1; r >= 0; r--) {
        const nm_rank_format *rf = &rp->rank[r];
        const nm_dtile *next = &t->sub[r];
        uint64_t fs = t->fiber[r];
        if (fs == 1 && r != t->nr - 1) {
            u[r][0] = u[r][1] = 0.0;
            bits[r][0] = bits[r][1] = 0;
        } else {
            double nf = fibers * (1.0 - nm_density_p_empty_given(dm, cur, S, o));
            double nz = (double)fs * (1.0 - nm_density_p_empty_given(dm, next, S, o));
            bits[r][0] = rf->md_bits;
            bits[r][1] = rf->pl_bits;
            switch (rf->fmt) {
            case NM_FMT_UOP:
                u[r][0] = 0.0;
                u[r][1] = nf * (double)(fs + 1);
                break;
            case NM_FMT_CP:
                u[r][0] = u[r][1] = ceil(nz) * nf;
                break;
            case NM_FMT_B:
                u[r][0] = nf * (double)fs;
                u[r][1] = nf * ceil(nz);
                break;
            case NM_FMT_RLE:
                u[r][0] = u[r][1] = nz * nf;
                break;
            default: /* NM_FMT_UB */
                u[r][0] = u[r][1] = fibers * (double)fs;
                break;
            }
        }
        fibers *= (double)fs;
        cur = next;
    }
    for (int r = 0; r < t->nr; r++)
        if (u[r][0] != 0.0 || u[r][1] != 0.0) {
            u[r][1] = 0.0; /* the innermost payload is the data itself */
            break;
        }
}

/* A banded tile's distribution into ws->band (0: out of memory). */
static int band_table(const nm_density *dm, const nm_dtile *S, struct nm_sparse_ws *ws)
{
    return dm->kind != NM_DENSITY_BANDED || nm_band_pdf_make(dm, S->rows, S->cols, &ws->band);
}

/* Expected density, occupancy and metadata of tensor ds at level s; 0 when
 * memory runs out (a banded tile's table). */
static int expect(const nm_sparse *sp, const nm_workload *wl, const nm_cnest *c, int s,
                  int ds, struct nm_sparse_ws *ws)
{
    nm_sp_tile *t = &ws->t[s][ds];
    const nm_density *dm = &wl->density[ds];
    uint64_t N = nm_workload_ds_size(wl, ds);
    int64_t ext[NM_MAX_DIMS];
    nm_cnest_mold(c, c->last[s], wl->ndims, ext);
    t->box = nm_dtile_box(&wl->ds[ds], ext);
    uint64_t S = t->box.n;
    if (!band_table(dm, &t->box, ws))
        return 0;
    /* (a banded tile's largest count is its table's last: the grid scanned
     * once) */
    const nm_band_pdf *bt = &ws->band;
    t->maxocc = dm->kind != NM_DENSITY_BANDED ? nm_density_max_occupancy(dm, &t->box, N)
                : bt->n                       ? bt->occ[bt->n - 1]
                                              : 0;
    uint64_t lo = min_occupancy(dm, S, N, t->shape);
    int parent_md = t->parent >= 0 && ws->t[t->parent][ds].md;
    double scale = 1.0, first = -1.0;
    t->avg = 1.0;
    memset(t->occ, 0, sizeof t->occ);
    memset(t->bits, 0, sizeof t->bits);
    if (!t->md && !(parent_md && lo == 0) && dm->kind != NM_DENSITY_BANDED) {
        /* no metadata here, nothing truncated: the mean of the count
         * (hypergeometric: S r / N; fixed: S d), which the sum gives (a
         * banded tile's sum over its positions is not its mean) */
        t->occupancy = fmin(nm_density_expected(dm, S, N), (double)t->shape);
        t->density = t->occupancy / (double)t->shape;
        return 1;
    }
    double total = 0.0;
    int bits_set = 0;
    occ_pdf pdf;
    occ_pdf_init(&pdf, dm, S, N, &ws->band);
    uint64_t hi = t->maxocc;
    occ_pdf_span(&pdf, &lo, &hi);
    for (uint64_t k = lo; k <= hi; k++) {
        double p = occ_pdf_at(&pdf, k);
        if (p == 0.0) {
            if (first >= 0.0 && occ_pdf_falling(&pdf, k))
                break; /* and so are the rest */
            continue;
        }
        if (first < 0.0) {
            first = p;
            /* below a parent with metadata an empty tile is never sent:
             * the tiles that come are the nonempty ones (Timeloop takes the
             * least possible count's probability as the empty one's) */
            if (parent_md && lo == 0) {
                t->avg = 1.0 - first;
                scale = 1.0 - first;
                continue;
            }
        }
        p /= scale;
        /* (counts this unlikely add less than 1e-12 of a unit: skipped, so
         * that a large tile costs its likely counts only; past the mode
         * the rest are less likely still) */
        if (p < 1e-20) {
            if (occ_pdf_falling(&pdf, k))
                break;
            continue;
        }
        total += p * (double)k;
        if (t->md) {
            double u[NM_MAX_FMT_RANKS][2];
            int b[NM_MAX_FMT_RANKS][2];
            units_given(&sp->repr[s][ds], t, dm, &t->box, k, u, b);
            for (int r = 0; r < t->nr; r++) {
                t->occ[r][0] += p * u[r][0];
                t->occ[r][1] += p * u[r][1];
            }
            if (!bits_set) {
                memcpy(t->bits, b, sizeof b);
                bits_set = 1;
            }
        }
    }
    /* (exactly, a density cannot pass 1; rounding must not make it) */
    t->occupancy = fmin(total, (double)t->shape);
    t->density = t->occupancy / (double)t->shape;
    return 1;
}

int nm_sparse_formats(const nm_sparse *sp, const nm_arch *arch, const nm_workload *wl,
                      const nm_cnest *c, nm_stats *out, struct nm_sparse_ws *ws)
{
    int S = arch->nlevels;
    for (int ds = 0; ds < wl->nds; ds++) {
        int below = -1;
        for (int s = 0; s < S; s++) {
            nm_sp_tile *t = &ws->t[s][ds];
            t->shape = out->level[s].ds[ds].utilized_capacity;
            t->parent = -1;
            t->child = -1;
            if (!t->shape)
                continue;
            t->child = below;
            if (below >= 0)
                ws->t[below][ds].parent = s;
            below = s;
            t->md = sp->repr[s][ds].nranks > 0;
            t->nr = t->md ? sp->repr[s][ds].nranks : 1;
        }
        /* a compressed tile handed to an uncompressed level: that level
         * must decompress it (and compress an output's updates back) */
        for (int s = 0; sp->formats && s < S; s++) {
            const nm_sp_tile *t = &ws->t[s][ds];
            if (t->shape && t->parent >= 0 && sp->repr[s][ds].compressed &&
                !sp->repr[t->parent][ds].compressed) {
                /* compressing on chip: Timeloop's model has no cost for it
                 * (it aborts); refused, not guessed */
                out->invalid = (nm_invalid){NM_INV_FORMAT, s, ds, 0, 4, 0};
                return 0;
            }
            if (!t->shape || t->parent < 0 || !sp->repr[t->parent][ds].compressed ||
                sp->repr[s][ds].compressed)
                continue;
            const nm_level *L = &arch->level[s];
            int need = !L->decompression_supported ? 2
                       : wl->ds[ds].read_write && !L->compression_supported ? 3 : 0;
            if (need) {
                out->invalid = (nm_invalid){NM_INV_FORMAT, s, ds, 0, (uint64_t)need, 0};
                return 0;
            }
        }
        for (int s = 0; s < S; s++) {
            nm_sp_tile *t = &ws->t[s][ds];
            if (!t->shape)
                continue;
            if (sp->formats && !define_ranks(sp, arch, wl, c, s, ds, out, ws))
                return 0;
        }
        for (int s = 0; s < S; s++) {
            nm_sp_tile *t = &ws->t[s][ds];
            if (!t->shape)
                continue;
            if (!expect(sp, wl, c, s, ds, ws)) {
                out->invalid = (nm_invalid){NM_INV_FORMAT, s, ds, 0, 5, 0};
                return 0;
            }
            nm_fmt_stats *f = &ws->det.f[s][ds];
            memset(f, 0, sizeof *f);
            if (!t->md)
                continue;
            /* metadata accesses: the expected units once per tile moved */
            f->nranks = t->nr;
            memcpy(f->fiber, t->fiber, sizeof f->fiber);
            for (int r = 0; r < t->nr; r++)
                f->fmt[r] = sp->repr[s][ds].rank[r].fmt;
            const nm_ds_stats *d = &out->level[s].ds[ds];
            const uint64_t alg[3] = {d->reads, d->fills, d->updates};
            for (int k = 0; k < 3; k++) {
                double ratio = (double)alg[k] / (double)t->shape;
                for (int r = 0; r < t->nr; r++)
                    for (int u = 0; u < 2; u++)
                        f->acc[0][k][r][u] = (uint64_t)ceil(t->occ[r][u] * ratio);
            }
        }
    }
    return 1;
}

/* Timeloop's table of when a compressed tile read in blocks of b words
 * costs more vector accesses than its nonzeros / b (buffer.hpp's
 * VectorWidthCoefficientTable: the tile-size thresholds per block size, for
 * densities 0.1 ... 1.0). */
static const struct {
    int block;
    double thr[10];
} vector_width[] = {
    {2, {251, 125, 84, 63, 51, 42, 36, 32, 28, 1}},
    {4, {375, 188, 125, 94, 75, 63, 54, 47, 42, 1}},
    {8, {438, 219, 146, 110, 88, 73, 63, 55, 49, 1}},
    {16, {469, 235, 157, 118, 94, 79, 67, 59, 52, 1}},
    {32, {485, 243, 162, 122, 97, 81, 70, 61, 52, 1}},
};

static double vector_ratio(const nm_workload *wl, int ds, const nm_sp_tile *t, int block,
                           struct nm_sparse_ws *ws)
{
    if (block <= 1 || t->density >= 1.0)
        return 1.0;
    const double *thr = NULL;
    for (size_t i = 0; i < sizeof vector_width / sizeof *vector_width; i++)
        if (vector_width[i].block == block)
            thr = vector_width[i].thr;
    if (!thr)
        return 1.0;
    int idx = t->density >= 0.1 ? (int)floor(t->density / 0.1) - 1 : 0;
    if (idx < 0 || idx > 9 || !(thr[idx] > (double)(t->shape / (uint64_t)block)))
        return 1.0;
    const nm_density *dm = &wl->density[ds];
    uint64_t N = nm_workload_ds_size(wl, ds);
    double total = 0.0;
    occ_pdf pdf;
    if (!band_table(dm, &t->box, ws))
        return -1.0;
    occ_pdf_init(&pdf, dm, t->box.n, N, &ws->band);
    uint64_t lo = 1, hi = t->shape;
    occ_pdf_span(&pdf, &lo, &hi);
    for (uint64_t k = lo; k <= hi; k++) {
        double p = occ_pdf_at(&pdf, k);
        if (p == 0.0 && occ_pdf_falling(&pdf, k))
            break; /* the rest are 0 too */
        total += ceil((double)k / block) * p;
    }
    return total / ((double)t->shape * t->density / block);
}

int nm_sparse_metadata_costs(const nm_sparse *sp, const nm_arch *arch, const nm_workload *wl,
                             nm_stats *out, struct nm_sparse_ws *ws)
{
    for (int s = 0; s < arch->nlevels; s++) {
        const nm_level *L = &arch->level[s];
        uint64_t md_bits = 0;
        for (int ds = 0; ds < wl->nds; ds++) {
            nm_sp_tile *t = &ws->t[s][ds];
            nm_ds_stats *d = &out->level[s].ds[ds];
            nm_fmt_stats *f = &ws->det.f[s][ds];
            if (!t->shape)
                continue;
            d->avg_instances = (double)d->utilized_instances * t->avg;
            d->meta_energy = (double)d->decompressions * L->e_decompress +
                             (double)d->compressions * L->e_compress;
            if (sp->repr[s][ds].compressed &&
                (d->vec_ratio = vector_ratio(wl, ds, t, L->block_size, ws)) < 0.0) {
                out->invalid = (nm_invalid){NM_INV_FORMAT, s, ds, 0, 5, 0};
                return 0;
            }
            if (!t->md)
                continue;
            /* capacity: the metadata of the fullest tile, and its nonzeros */
            double u[NM_MAX_FMT_RANKS][2];
            int b[NM_MAX_FMT_RANKS][2];
            nm_dtile full = t->box;
            full.n = t->shape;
            units_given(&sp->repr[s][ds], t, &wl->density[ds], &full, t->maxocc, u, b);
            double bits = 0.0;
            for (int r = 0; r < t->nr; r++) {
                f->cap[r][0] = (uint64_t)ceil(u[r][0]);
                f->cap[r][1] = (uint64_t)ceil(u[r][1]);
                bits += u[r][0] * b[r][0] + u[r][1] * b[r][1];
            }
            f->cap_bits = (uint64_t)ceil(bits);
            md_bits += f->cap_bits;
            d->utilized_capacity = t->maxocc;
            /* traffic and energy of the metadata accesses: vectors of the
             * metadata store's width; the actual and gated ones take
             * bandwidth, in whole data words */
            uint64_t words[2] = {0, 0};
            for (int h = 0; h < 3; h++)
                for (int k = 0; k < 3; k++) {
                    uint64_t ab = 0;
                    for (int r = 0; r < t->nr; r++)
                        ab += (uint64_t)t->bits[r][0] * f->acc[h][k][r][0] +
                              (uint64_t)t->bits[r][1] * f->acc[h][k][r][1];
                    if (L->md_width)
                        d->meta_energy += ceil((double)ab / L->md_width) * L->e_meta[h][k];
                    if (h < 2)
                        words[k == NM_ACC_READ ? 0 : 1] += ab;
                }
            d->meta_words[0] = words[0] / (uint64_t)L->word_bits;
            d->meta_words[1] = words[1] / (uint64_t)L->word_bits;
        }
        if (L->has_size) {
            uint64_t cap = (uint64_t)floor((double)(L->md_depth * L->md_width) /
                                           L->multiple_buffering);
            if (md_bits > cap) {
                out->invalid = (nm_invalid){NM_INV_MD_CAPACITY, s, -1, 0, md_bits, cap};
                return 0;
            }
        }
    }
    return 1;
}
