/* nest.c — loop nest construction and data-movement analysis; see nest.h.
 *
 * Terms used below.  A loop's working set is the part of a data space touched
 * by that loop and everything inside it: an axis-aligned box whose extent is
 * fixed per loop and whose corner moves with the indices of the enclosing
 * loops (kept in ws->T, a point of the iteration space).  A delta is what a
 * working set needs that the previous one did not have: empty, the full box,
 * or the box minus the previous box.  Deltas are never materialized as point
 * sets except to compare two of them (link transfers).
 */
#include <config.h>

#include <stdlib.h>
#include <string.h>

#include "nestmap/alloc.h"
#include "nestmap/nest.h"

#define R NM_MAX_RANKS

void nm_nest_build(nm_nest *nest, const nm_mapping *m, const nm_arch *arch, const nm_workload *wl)
{
    int n = 0;
    nest->nlevels = arch->nlevels;
    for (int s = 0; s < arch->nlevels; s++) {
        const nm_level_map *lm = &m->level[s];
        nest->first[s] = n;
        if (arch->level[s].fanoutX * arch->level[s].fanoutY > 1) {
            for (int i = 0; i < wl->ndims; i++) {
                int d = lm->sorder[i];
                if (lm->sfactor[d] > 1)
                    nest->loop[n++] = (nm_loop){lm->sfactor[d], (int8_t)d,
                                                (int8_t)(i < lm->split ? NM_SPACE_X : NM_SPACE_Y),
                                                (int8_t)s};
            }
        }
        int temporal = 0;
        for (int i = 0; i < wl->ndims; i++) {
            int d = lm->torder[i];
            if (lm->tfactor[d] > 1) {
                nest->loop[n++] = (nm_loop){lm->tfactor[d], (int8_t)d, NM_TIME, (int8_t)s};
                temporal++;
            }
        }
        if (!temporal) /* every level keeps a boundary loop */
            nest->loop[n++] = (nm_loop){1, (int8_t)(wl->ndims - 1), NM_TIME, (int8_t)s};
        nest->boundary[s] = n - 1;
    }
    nest->nloops = n;
}

/* Extent along each axis of data space ds of the box spanned when every
 * dimension d runs over [0, span[d]). */
static uint64_t box_extent(const nm_dataspace *ds, const int64_t *span, int64_t *ext)
{
    uint64_t vol = 1;
    for (int r = 0; r < ds->nranks; r++) {
        int64_t e = 1;
        for (int t = 0; t < ds->rank[r].nterms; t++)
            e += ds->rank[r].term[t].coef * (span[ds->rank[r].term[t].dim] - 1);
        if (ext)
            ext[r] = e;
        vol *= (uint64_t)e;
    }
    return vol;
}

void nm_nest_shape(const nm_nest *nest, const nm_workload *wl, nm_nest_result *out)
{
    int64_t span[NM_MAX_DIMS];
    for (int d = 0; d < wl->ndims; d++)
        span[d] = 1;
    memset(out, 0, sizeof *out);
    out->temporal_steps = 1;
    out->arith_x = out->arith_y = 1;
    for (int l = 0; l < nest->nloops; l++) {
        const nm_loop *lp = &nest->loop[l];
        span[lp->dim] *= lp->end;
        if (lp->space == NM_TIME)
            out->temporal_steps *= (uint64_t)lp->end;
        else if (lp->space == NM_SPACE_X)
            out->arith_x *= (uint64_t)lp->end;
        else
            out->arith_y *= (uint64_t)lp->end;
        int s = lp->level;
        int is_master = lp->space != NM_TIME &&
                        (l + 1 == nest->nloops || nest->loop[l + 1].space == NM_TIME);
        if (l == nest->boundary[s] || is_master) {
            for (int ds = 0; ds < wl->nds; ds++) {
                uint64_t vol = box_extent(&wl->ds[ds], span, NULL);
                if (l == nest->boundary[s])
                    out->tile[s][ds].size = vol;
                else
                    out->tile[s][ds].inner_size = vol;
            }
        }
    }
    /* Spatial instances in use: the product of the spatial loops outside each
     * level's boundary. */
    for (int s = 0; s < nest->nlevels; s++) {
        uint64_t x = 1, y = 1, f = 1;
        for (int l = nest->boundary[s] + 1; l < nest->nloops; l++) {
            if (nest->loop[l].space == NM_SPACE_X)
                x *= (uint64_t)nest->loop[l].end;
            else if (nest->loop[l].space == NM_SPACE_Y)
                y *= (uint64_t)nest->loop[l].end;
        }
        for (int l = nest->first[s]; l <= nest->boundary[s]; l++)
            if (nest->loop[l].space != NM_TIME)
                f *= (uint64_t)nest->loop[l].end;
        out->xexp[s] = x;
        out->yexp[s] = y;
        out->replication[s] = x * y;
        for (int ds = 0; ds < wl->nds; ds++)
            out->tile[s][ds].fanout = f;
    }
}

/* ---- analysis state ---- */

enum { D_EMPTY, D_FULL, D_DIFF };

typedef struct delta {
    int8_t kind;
    int64_t a[R]; /* corner of the current box */
    int64_t b[R]; /* corner of the box subtracted (D_DIFF) */
} delta;

typedef struct dset {
    delta d[NM_MAX_DS];
    uint64_t size[NM_MAX_DS];
} dset;

/* Per-loop state carried across the loop's invocations. */
typedef struct lstate {
    uint8_t has_last[NM_MAX_DS], has_trans[NM_MAX_DS], has_prev[NM_MAX_DS];
    int64_t last[NM_MAX_DS][R];  /* corner of the previous working set */
    int64_t trans[NM_MAX_DS][R]; /* stride of the previous move */
    delta prev[NM_MAX_DS];       /* spatial loops: first sibling's delta last time */
    double acc[NM_MAX_DS], wacc[NM_MAX_DS], link[NM_MAX_DS];
} lstate;

struct nm_nest_ws {
    const nm_nest *nest;
    const nm_mapping *map;
    const nm_arch *arch;
    const nm_workload *wl;
    int64_t T[NM_MAX_DIMS];   /* corner of the current iteration-space tile */
    double epochs;            /* how many real steps the current path stands for */
    int64_t vs[NM_MAX_LOOPS]; /* how far one step of each loop moves its dimension */
    int64_t ext[NM_MAX_LOOPS][NM_MAX_DS][R];
    uint64_t vol[NM_MAX_LOOPS][NM_MAX_DS];
    uint8_t boundary[NM_MAX_LOOPS], master[NM_MAX_LOOPS];
    int run_inner[NM_MAX_LOOPS];
    uint64_t fanout[NM_MAX_LOOPS];
    int64_t fanx[NM_MAX_LOOPS];
    lstate st[NM_MAX_LOOPS];
    /* scratch for one spatial fan-out */
    size_t cap;
    int64_t *keys;   /* cap x R: each sibling's offset from the first */
    uint64_t *code;  /* cap: keys packed for counting */
    uint8_t *reused; /* cap */
};

nm_nest_ws *nm_nest_ws_new(const nm_arch *arch, const nm_workload *wl)
{
    (void)wl;
    nm_nest_ws *ws = nm_calloc(1, sizeof *ws);
    if (!ws)
        return NULL;
    size_t cap = (size_t)arch->arith.instances;
    for (int s = 0; s < arch->nlevels; s++)
        if ((size_t)arch->level[s].instances > cap)
            cap = (size_t)arch->level[s].instances;
    ws->cap = cap;
    ws->keys = nm_calloc(cap, R * sizeof(int64_t));
    ws->code = nm_calloc(cap, sizeof(uint64_t));
    ws->reused = nm_calloc(cap, 1);
    if (!ws->keys || !ws->code || !ws->reused) {
        nm_nest_ws_free(ws);
        return NULL;
    }
    return ws;
}

void nm_nest_ws_free(nm_nest_ws *ws)
{
    if (!ws)
        return;
    nm_free(ws->keys);
    nm_free(ws->code);
    nm_free(ws->reused);
    nm_free(ws);
}

static void corner(const nm_nest_ws *ws, int ds, int64_t *pos)
{
    const nm_dataspace *s = &ws->wl->ds[ds];
    for (int r = 0; r < s->nranks; r++) {
        int64_t p = 0;
        for (int t = 0; t < s->rank[r].nterms; t++)
            p += s->rank[r].term[t].coef * ws->T[s->rank[r].term[t].dim];
        pos[r] = p;
    }
}

static uint64_t overlap(const int64_t *a, const int64_t *b, const int64_t *ext, int nr)
{
    uint64_t v = 1;
    for (int r = 0; r < nr; r++) {
        int64_t lo = a[r] > b[r] ? a[r] : b[r];
        int64_t hi = (a[r] < b[r] ? a[r] : b[r]) + ext[r];
        if (hi <= lo)
            return 0;
        v *= (uint64_t)(hi - lo);
    }
    return v;
}

/* The reuse rule: subtract the previous working set while the tile stands
 * still or keeps moving with the same stride; after a change of stride the
 * whole tile is fetched again. */
static uint64_t advance(lstate *s, int ds, const int64_t *pos, const int64_t *ext, uint64_t vol,
                        int nr, int no_reuse, delta *out)
{
    memcpy(out->a, pos, (size_t)nr * sizeof *pos);
    if (no_reuse) {
        out->kind = D_FULL;
        return vol;
    }
    if (!s->has_last[ds]) {
        memcpy(s->last[ds], pos, (size_t)nr * sizeof *pos);
        s->has_last[ds] = 1;
        out->kind = D_FULL;
        return vol;
    }
    int64_t t[R];
    int zero = 1, same = s->has_trans[ds];
    for (int r = 0; r < nr; r++) {
        t[r] = pos[r] - s->last[ds][r];
        zero &= t[r] == 0;
        same &= t[r] == s->trans[ds][r];
    }
    uint64_t size;
    if (zero || !s->has_trans[ds] || same) {
        if (!zero && !s->has_trans[ds]) {
            memcpy(s->trans[ds], t, sizeof t);
            s->has_trans[ds] = 1;
        }
        memcpy(out->b, s->last[ds], (size_t)nr * sizeof *pos);
        size = vol - overlap(pos, s->last[ds], ext, nr);
        out->kind = size == 0 ? D_EMPTY : D_DIFF;
    } else {
        s->has_trans[ds] = 0;
        out->kind = D_FULL;
        size = vol;
    }
    memcpy(s->last[ds], pos, (size_t)nr * sizeof *pos);
    return size;
}

static void compute_deltas(nm_nest_ws *ws, int l, dset *out);

static void temporal(nm_nest_ws *ws, int l)
{
    const nm_loop *lp = &ws->nest->loop[l];
    int nds = ws->wl->nds;
    lstate *st = &ws->st[l];
    if (l == 0) { /* operands read by the arithmetic */
        double a = (double)lp->end * ws->epochs;
        for (int ds = 0; ds < nds; ds++) {
            st->acc[ds] += a;
            st->wacc[ds] += a;
        }
        return;
    }
    double sum[NM_MAX_DS] = {0};
    dset d;
    compute_deltas(ws, l - 1, &d);
    for (int ds = 0; ds < nds; ds++)
        sum[ds] += (double)d.size[ds];
    if (lp->end >= 2) {
        /* One steady-state step stands for the remaining end-1 steps. */
        double saved = ws->epochs;
        int64_t w = lp->end - 1;
        ws->T[lp->dim] += ws->vs[l];
        ws->epochs *= (double)w;
        compute_deltas(ws, l - 1, &d);
        ws->epochs = saved;
        ws->T[lp->dim] -= ws->vs[l];
        for (int ds = 0; ds < nds; ds++)
            sum[ds] += (double)d.size[ds] * (double)w;
    }
    if (ws->boundary[l - 1]) {
        for (int ds = 0; ds < nds; ds++) {
            st->acc[ds] += sum[ds] * ws->epochs;
            st->wacc[ds] += sum[ds] * ws->epochs;
        }
    }
}

/* ---- spatial fan-out ---- */

typedef struct box {
    int64_t lo[R], hi[R];
} box;

/* The pieces of a delta, cut the same way for every delta so that two equal
 * deltas give equal lists: slab below then slab above the subtracted box,
 * axis by axis. */
static int pieces(const delta *d, const int64_t *ext, int nr, box *out)
{
    if (d->kind == D_EMPTY)
        return 0;
    box a = {{0}, {0}};
    for (int r = 0; r < nr; r++) {
        a.lo[r] = d->a[r];
        a.hi[r] = d->a[r] + ext[r];
    }
    if (d->kind == D_FULL) {
        out[0] = a;
        return 1;
    }
    box b = {{0}, {0}};
    for (int r = 0; r < nr; r++) {
        b.lo[r] = d->b[r];
        b.hi[r] = d->b[r] + ext[r];
        if (b.hi[r] <= a.lo[r] || a.hi[r] <= b.lo[r]) {
            out[0] = a;
            return 1;
        }
    }
    int n = 0;
    box mid = a;
    for (int r = 0; r < nr; r++) {
        if (mid.lo[r] < b.lo[r]) {
            out[n] = mid;
            out[n++].hi[r] = b.lo[r];
            mid.lo[r] = b.lo[r];
        }
        if (mid.hi[r] > b.hi[r]) {
            out[n] = mid;
            out[n++].lo[r] = b.hi[r];
            mid.hi[r] = b.hi[r];
        }
    }
    return n;
}

static int box_equal_shifted(const box *x, const box *y, const int64_t *o, int nr)
{
    for (int r = 0; r < nr; r++)
        if (x->lo[r] != y->lo[r] + o[r] || x->hi[r] != y->hi[r] + o[r])
            return 0;
    return 1;
}

/* Finds o with cur == prev + o (as lists of pieces); returns 0 if none. */
static int shift_between(const delta *cur, const delta *prev, const int64_t *ext, int nr,
                         int64_t *o)
{
    box x[2 * R + 1], y[2 * R + 1];
    int nx = pieces(cur, ext, nr, x), ny = pieces(prev, ext, nr, y);
    if (nx != ny || nx == 0)
        return 0;
    for (int j = 0; j < ny; j++) {
        int shape = 1;
        for (int r = 0; r < nr; r++) {
            o[r] = x[0].lo[r] - y[j].lo[r];
            shape &= x[0].hi[r] - x[0].lo[r] == y[j].hi[r] - y[j].lo[r];
        }
        if (!shape)
            continue;
        int all = 1;
        for (int i = 0; i < nx && all; i++) {
            int found = 0;
            for (int k = 0; k < ny && !found; k++)
                found = box_equal_shifted(&x[i], &y[k], o, nr);
            all = found;
        }
        if (all)
            return 1;
    }
    return 0;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

static int cmp_key(const void *a, const void *b)
{
    return memcmp(a, b, R * sizeof(int64_t));
}

/* Number of distinct keys among the siblings not marked in skip (or all). */
static uint64_t distinct(nm_nest_ws *ws, uint64_t F, int nr, const int64_t *kmax,
                         const uint8_t *skip)
{
    /* Pack each key into one integer when the radices fit in 64 bits. */
    unsigned __int128 radix = 1;
    for (int r = 0; r < nr; r++)
        radix *= (unsigned __int128)(kmax[r] + 1);
    size_t n = 0;
    if (radix <= (unsigned __int128)UINT64_MAX) {
        for (uint64_t e = 0; e < F; e++) {
            if (skip && skip[e])
                continue;
            const int64_t *k = ws->keys + e * R;
            uint64_t c = 0;
            for (int r = 0; r < nr; r++)
                c = c * (uint64_t)(kmax[r] + 1) + (uint64_t)k[r];
            ws->code[n++] = c;
        }
        qsort(ws->code, n, sizeof *ws->code, cmp_u64);
        uint64_t groups = 0;
        for (size_t i = 0; i < n; i++)
            groups += i == 0 || ws->code[i] != ws->code[i - 1];
        return groups;
    }
    /* Wide keys: sort the key vectors themselves (compacted in place). */
    for (uint64_t e = 0; e < F; e++) {
        if (skip && skip[e])
            continue;
        if (n != e)
            memcpy(ws->keys + n * R, ws->keys + e * R, R * sizeof(int64_t));
        n++;
    }
    qsort(ws->keys, n, R * sizeof(int64_t), cmp_key);
    uint64_t groups = 0;
    for (size_t i = 0; i < n; i++)
        groups += i == 0 || memcmp(ws->keys + i * R, ws->keys + (i - 1) * R, R * sizeof(int64_t));
    return groups;
}

static void spatial(nm_nest_ws *ws, int l)
{
    const nm_nest *nest = ws->nest;
    const nm_workload *wl = ws->wl;
    int inner = ws->run_inner[l];
    uint64_t F = ws->fanout[l];
    int slev = nest->loop[l].level;
    const nm_level_map *lm = &ws->map->level[slev];
    uint32_t all = (1u << wl->nds) - 1u;
    int links = (lm->no_link & all) != all;
    lstate *st = &ws->st[l];

    dset d0;
    static const int64_t unit[R] = {1, 1, 1, 1, 1, 1};
    if (inner > 0) {
        compute_deltas(ws, inner - 1, &d0);
    } else { /* siblings are arithmetic units: each reads single operands */
        for (int ds = 0; ds < wl->nds; ds++) {
            corner(ws, ds, d0.d[ds].a);
            d0.d[ds].kind = D_FULL;
            d0.size[ds] = 1;
        }
    }

    /* Grid used for neighbour links: siblings are numbered with the innermost
     * spatial loop fastest and laid out row by row over the physical mesh. */
    int64_t hsize = ws->arch->level[slev].fanoutX;
    if (ws->fanx[l] > hsize)
        hsize = ws->fanx[l];
    int64_t vsize = ws->arch->level[slev].fanoutY;
    if ((int64_t)F / ws->fanx[l] > vsize)
        vsize = (int64_t)F / ws->fanx[l];

    for (int ds = 0; ds < wl->nds; ds++) {
        const nm_dataspace *dsp = &wl->ds[ds];
        int nr = dsp->nranks;
        const int64_t *dext = inner > 0 ? ws->ext[inner - 1][ds] : unit;
        uint64_t sz = d0.size[ds];
        double unit_acc = (double)sz * ws->epochs;

        /* Offset of each sibling's data from the first sibling's: sum over
         * the spatial loops of index x (how far one step moves the data). */
        int64_t tv[2 * NM_MAX_DIMS][R];
        int nl = l - inner + 1;
        int injective = 1;
        uint64_t groups_fast = 1;
        int64_t kmax[R] = {0};
        for (int j = 0; j < nl; j++) {
            const nm_loop *lp = &nest->loop[inner + j];
            int nz = 0;
            for (int r = 0; r < nr; r++) {
                int64_t c = 0;
                for (int t = 0; t < dsp->rank[r].nterms; t++)
                    if (dsp->rank[r].term[t].dim == lp->dim)
                        c += dsp->rank[r].term[t].coef;
                tv[j][r] = c * ws->vs[inner + j];
                kmax[r] += tv[j][r] * (lp->end - 1);
                nz |= tv[j][r] != 0;
            }
            if (nz)
                groups_fast *= (uint64_t)lp->end;
        }
        /* Distinct offsets: exact product when each moving loop owns an axis
         * no other moving loop touches; otherwise count. */
        for (int j = 0; j < nl && injective; j++) {
            int own = 0, moving = 0;
            for (int r = 0; r < nr; r++)
                moving |= tv[j][r] != 0;
            if (!moving)
                continue;
            for (int r = 0; r < nr && !own; r++) {
                if (!tv[j][r])
                    continue;
                int alone = 1;
                for (int k = 0; k < nl; k++)
                    if (k != j && tv[k][r])
                        alone = 0;
                own = alone;
            }
            injective = own;
        }
        int no_mc = (lm->no_multicast >> ds) & 1u;

        int need_keys = !injective && !no_mc;
        int64_t o[R];
        int try_link = links && !((lm->no_link >> ds) & 1u) && st->has_prev[ds] && sz > 0 &&
                       shift_between(&d0.d[ds], &st->prev[ds], dext, nr, o);
        if (need_keys || try_link) {
            for (uint64_t e = 0; e < F; e++) {
                int64_t *k = ws->keys + e * R;
                memset(k, 0, R * sizeof *k);
                uint64_t rest = e;
                for (int j = 0; j < nl; j++) {
                    int64_t n = nest->loop[inner + j].end;
                    int64_t idx = (int64_t)(rest % (uint64_t)n);
                    rest /= (uint64_t)n;
                    for (int r = 0; r < nr; r++)
                        k[r] += idx * tv[j][r];
                }
            }
        }
        uint64_t groups = no_mc ? F : injective ? groups_fast : distinct(ws, F, nr, kmax, NULL);
        double acc = (double)groups * unit_acc;
        double wacc = (double)F * unit_acc;

        if (try_link) {
            /* A sibling whose delta equals what a grid neighbour received one
             * step before can take it over the link. */
            uint64_t nreused = 0;
            for (uint64_t e = 0; e < F; e++) {
                const int64_t *k = ws->keys + e * R;
                int64_t h = (int64_t)e % hsize, v = (int64_t)e / hsize;
                int64_t nb[4];
                int nn = 0;
                if (vsize > 1) {
                    if (v >= 1)
                        nb[nn++] = (v - 1) * hsize + h;
                    if (v + 1 < vsize)
                        nb[nn++] = (v + 1) * hsize + h;
                }
                if (hsize > 1) {
                    if (h >= 1)
                        nb[nn++] = v * hsize + h - 1;
                    if (h + 1 < hsize)
                        nb[nn++] = v * hsize + h + 1;
                }
                int hit = 0;
                for (int i = 0; i < nn && !hit; i++) {
                    if (nb[i] < 0 || (uint64_t)nb[i] >= F)
                        continue;
                    const int64_t *kn = ws->keys + (uint64_t)nb[i] * R;
                    int eq = 1;
                    for (int r = 0; r < nr && eq; r++)
                        eq = kn[r] - k[r] == o[r];
                    hit = eq;
                }
                ws->reused[e] = (uint8_t)hit;
                nreused += (uint64_t)hit;
            }
            if (nreused) {
                uint64_t g2 = no_mc ? F - nreused : distinct(ws, F, nr, kmax, ws->reused);
                if ((double)g2 * unit_acc < acc) {
                    acc = (double)g2 * unit_acc;
                    wacc = (double)(F - nreused) * unit_acc;
                    st->link[ds] += (double)nreused * unit_acc;
                }
            }
        }
        st->acc[ds] += acc;
        st->wacc[ds] += wacc;
        if (links) {
            st->prev[ds] = d0.d[ds];
            st->has_prev[ds] = 1;
        }
    }
}

static void compute_deltas(nm_nest_ws *ws, int l, dset *out)
{
    const nm_loop *lp = &ws->nest->loop[l];
    if (lp->space == NM_TIME)
        temporal(ws, l);
    else
        spatial(ws, l);
    uint32_t no_reuse = ws->map->level[lp->level].no_temporal_reuse;
    lstate *st = &ws->st[l];
    for (int ds = 0; ds < ws->wl->nds; ds++) {
        int64_t pos[R];
        corner(ws, ds, pos);
        out->size[ds] = advance(st, ds, pos, ws->ext[l][ds], ws->vol[l][ds],
                                ws->wl->ds[ds].nranks, (no_reuse >> ds) & 1u, &out->d[ds]);
    }
}

void nm_nest_analyze(nm_nest_ws *ws, const nm_nest *nest, const nm_mapping *m,
                     const nm_arch *arch, const nm_workload *wl, nm_nest_result *out)
{
    ws->nest = nest;
    ws->map = m;
    ws->arch = arch;
    ws->wl = wl;
    int n = nest->nloops;
    int64_t span[NM_MAX_DIMS];
    for (int d = 0; d < wl->ndims; d++) {
        span[d] = 1;
        ws->T[d] = 0;
    }
    memset(ws->boundary, 0, (size_t)n);
    for (int s = 0; s < nest->nlevels; s++)
        ws->boundary[nest->boundary[s]] = 1;
    for (int l = 0; l < n; l++) {
        const nm_loop *lp = &nest->loop[l];
        ws->vs[l] = span[lp->dim];
        span[lp->dim] *= lp->end;
        for (int ds = 0; ds < wl->nds; ds++)
            ws->vol[l][ds] = box_extent(&wl->ds[ds], span, ws->ext[l][ds]);
        ws->master[l] = lp->space != NM_TIME && (l + 1 == n || nest->loop[l + 1].space == NM_TIME);
        memset(&ws->st[l], 0, sizeof ws->st[l]);
    }
    for (int l = 0; l < n; l++) {
        if (!ws->master[l])
            continue;
        int i = l;
        uint64_t f = 1;
        int64_t fx = 1;
        while (i >= 0 && nest->loop[i].space != NM_TIME) {
            f *= (uint64_t)nest->loop[i].end;
            if (nest->loop[i].space == NM_SPACE_X)
                fx *= nest->loop[i].end;
            i--;
        }
        ws->run_inner[l] = i + 1;
        ws->fanout[l] = f;
        ws->fanx[l] = fx;
    }
    ws->epochs = 1.0;
    dset top;
    compute_deltas(ws, n - 1, &top);

    /* Each level's accesses are those recorded at its innermost loop that
     * keeps statistics: its spatial fan-out if it has one, else its
     * innermost temporal loop. */
    for (int s = 0; s < nest->nlevels; s++) {
        int l = nest->first[s];
        while (l < nest->boundary[s] && !ws->master[l] && nest->loop[l].space != NM_TIME)
            l++;
        const lstate *st = &ws->st[l];
        for (int ds = 0; ds < wl->nds; ds++) {
            out->tile[s][ds].accesses = st->acc[ds];
            out->tile[s][ds].weighted = st->wacc[ds];
            out->tile[s][ds].link = st->link[ds];
        }
    }
}
