/* check_fusion.c — chains of operations and fused mappings (fusion.h).
 *
 * The main test runs random small chains (GEMMs, element-wise operations
 * and scalings, a softmax's row max and the elements' exponentials against
 * it, one to three of them) on random fused mappings of a
 * three-level design, with and without a fan-out of PEs, with bypass, and
 * checks the model against an element-by-element simulator written here
 * without the model's code: it executes each operation's loop nest point
 * by point, keeps every tile of every level and instance as a set of
 * elements (the box they span along each axis, as Timeloop's tiles are),
 * and counts under the tile-granular rule Timeloop counts with (a level
 * is filled with what its tile gains from one step to the next; its parent
 * reads each step's gains, once for the children that gain the same
 * elements (multicast), apart for the others, overlapping or not;
 * an output's first touch of an element is neither filled nor read; the
 * outermost keeper of a tensor is filled by nobody).  It also executes each
 * fused group step by step, one operation after the other, and checks that
 * every element of an intermediate a consumer reads was completed by its
 * producer in that very step (so it sits at the fusion level).  Then: a
 * chain of single-operation groups gives exactly what each operation gives
 * as a plain problem and mapping; and malformed chains and fused mappings
 * get located errors.  Those chains read no tensor through a sliding
 * window.
 *
 * A second test runs chains of convolutions whose windows overlap (with
 * strides, two or three of them, fused in part or whole, the halo
 * recomputed in random steps), on the chain nm_chain_recompute writes,
 * with the same simulator and three more checks: every step reads what
 * its producers computed in it, the rewritten chain computes on numbers
 * what the written one does, and the computes are the points times the
 * recompute factor.  Its mappings keep a window's tiles where Timeloop's
 * count of their overlap and the simulator's step-by-step gains are the
 * same: a tensor read through windows lives at the fusion level and above
 * only, the steps run in one loop, and the other shared loops run over
 * indices such a tensor follows.  Elsewhere Timeloop counts a loop's first
 * step and one steady step for the rest, keeping a tile's overlap only
 * while its stride repeats (the nest analysis, nest.c); how that counts
 * windows is the conformance corpus's to check against Timeloop itself.
 */
#include <config.h>

#include <check.h>
#include <math.h>
#include <stdarg.h>

#include "nestmap/alloc.h"
#include "nestmap/estimate.h"
#include "nestmap/fusion.h"
#include "nestmap/mapspace.h"
#include "nestmap/model.h"
#include "nestmap/pcg32.h"
#include "nestmap/roofline.h"
#include "nestmap/spec.h"
#include "testutil.h"

enum { CASES = 600, HALO_CASES = 400, CAUSAL_CASES = 400, ONLINE_CASES = 400, MAXW = 16, MAXL = 64, MAXRUN = 512 }; /* MAXW: 64-bit words of a tile's bit set */

/* ---- the simulator ---- */

typedef struct sloop {
    int dim, level, spatial;
    int64_t n;
} sloop;

typedef struct snest {
    int nl;
    sloop l[MAXL];
    int64_t stride[MAXL]; /* of the loop's dimension */
    int64_t points;
} snest;

/* The nest of mapping m, outermost loop first: per level, outermost first,
 * its temporal loops, then its spatial ones (the fan-out below it). */
static void build(snest *n, const nm_arch *arch, const nm_workload *wl, const nm_mapping *m)
{
    memset(n, 0, sizeof *n);
    for (int s = arch->nlevels - 1; s >= 0; s--)
        for (int sp = 0; sp < 2; sp++) {
            const nm_level_map *lm = &m->level[s];
            for (int k = wl->ndims - 1; k >= 0; k--) {
                int d = sp ? lm->sorder[k] : lm->torder[k];
                int64_t f = sp ? lm->sfactor[d] : lm->tfactor[d];
                if (f > 1)
                    n->l[n->nl++] = (sloop){d, s, sp, f};
            }
        }
    n->points = 1;
    for (int i = n->nl - 1; i >= 0; i--) {
        int64_t st = 1;
        for (int j = i + 1; j < n->nl; j++)
            if (n->l[j].dim == n->l[i].dim)
                st *= n->l[j].n;
        n->stride[i] = st;
        n->points *= n->l[i].n;
    }
}

/* The loop indices of point p (the innermost loop fastest). */
static void indices(const snest *n, int64_t p, int64_t *idx)
{
    for (int i = n->nl - 1; i >= 0; i--) {
        idx[i] = p % n->l[i].n;
        p /= n->l[i].n;
    }
}

/* Mixed-radix key of the loops selected by (level > above, spatial == sp). */
static int64_t key(const snest *n, const int64_t *idx, int above, int sp, int64_t *count)
{
    int64_t k = 0, c = 1;
    for (int i = 0; i < n->nl; i++)
        if (n->l[i].level > above && n->l[i].spatial == sp) {
            k = k * n->l[i].n + idx[i];
            c *= n->l[i].n;
        }
    if (count)
        *count = c;
    return k;
}

/* An operation's schedule: runs of the points of one or two nests, one
 * after the other.  A plain operation runs its nest's points.  The
 * producer of a group retaining its halo runs, at each iteration o of the
 * shared loops around the steps, its first step (nest 0: that step's
 * rows and the head's) and then the later steps of the steps' nest (nest
 * 1, its rows after the head's: offset), as the hardware would; the model
 * counts it from three rectangular nests instead (fusion_halo.c). */
typedef struct srun {
    int seg;
    int64_t from, to;
} srun;

typedef struct ssched {
    int nseg, ref;              /* nests; the one whose shared loops all have */
    snest n[2];
    const nm_workload *wl[2];
    const nm_mapping *m[2];
    int64_t off[2][NM_MAX_DIMS]; /* added to each index's value */
    int F;                      /* loops above it are shared (-1: one nest) */
    int64_t steps, inner[2];    /* the group's steps; points of a step per nest */
    int nrun;
    srun run[MAXRUN];
    int64_t points;
    int64_t ext[NM_MAX_DS][NM_MAX_RANKS];
} ssched;

static void sched_ext(ssched *x)
{
    const nm_workload *wl = x->wl[x->ref];
    for (int ds = 0; ds < wl->nds; ds++)
        for (int r = 0; r < wl->ds[ds].nranks; r++) {
            x->ext[ds][r] = 0;
            for (int g = 0; g < x->nseg; g++) {
                const nm_axis *ax = &x->wl[g]->ds[ds].rank[r];
                int64_t e = 1;
                for (int t = 0; t < ax->nterms; t++)
                    e += ax->term[t].coef *
                         (x->wl[g]->bound[ax->term[t].dim] - 1 + x->off[g][ax->term[t].dim]);
                x->ext[ds][r] = e > x->ext[ds][r] ? e : x->ext[ds][r];
            }
        }
}

/* The schedule of one nest, (wl, m), its steps the points of the loops
 * above level F (all of them, when F < 0). */
static void sched_plain(ssched *x, const nm_arch *arch, const nm_workload *wl,
                        const nm_mapping *m, int F)
{
    memset(x, 0, sizeof *x);
    x->nseg = 1;
    x->wl[0] = wl;
    x->m[0] = m;
    build(&x->n[0], arch, wl, m);
    x->F = F;
    x->points = x->n[0].points;
    x->nrun = 1;
    x->run[0] = (srun){0, 0, x->points};
    x->steps = 1;
    for (int i = 0; F >= 0 && i < x->n[0].nl; i++)
        if (x->n[0].l[i].level > F)
            x->steps *= x->n[0].l[i].n;
    x->inner[0] = x->points / x->steps;
    sched_ext(x);
}

/* A masked operation's schedule (after sched_plain) in a group skipping
 * masked steps (nm_fused_causal_plan: its shared loops step through the
 * keys as the rules allow): the steps whose every point the causal mask
 * covers are skipped, as FlashAttention skips the blocks above the
 * diagonal; the rest run whole.  (The model counts the staircase from
 * three rectangular nests instead: fusion_causal.c.) */
static void sched_causal(ssched *x, const nm_chain_op *op)
{
    const snest *n = &x->n[0];
    int64_t bm = op->wl.bound[op->mask_m];
    for (int i = 0; i < n->nl; i++)
        if (n->l[i].level > x->F)
            bm /= n->l[i].dim == op->mask_m ? n->l[i].n : 1;
    x->nrun = 0;
    x->points = 0;
    int64_t idx[MAXL], in = x->inner[0];
    for (int64_t t = 0; t < x->steps; t++) {
        indices(n, t * in, idx);
        int64_t m0 = 0, n0 = 0; /* the step's first row and key */
        for (int i = 0; i < n->nl; i++)
            if (n->l[i].level > x->F) {
                m0 += n->l[i].dim == op->mask_m ? idx[i] * n->stride[i] : 0;
                n0 += n->l[i].dim == op->mask_n ? idx[i] * n->stride[i] : 0;
            }
        if (n0 > m0 + bm - 1 + op->mask_offset)
            continue; /* (its last row sees none of its keys) */
        if (x->nrun && x->run[x->nrun - 1].to == t * in) {
            x->run[x->nrun - 1].to += in;
        } else {
            ck_assert_int_lt(x->nrun, MAXRUN);
            x->run[x->nrun++] = (srun){0, t * in, (t + 1) * in};
        }
        x->points += in;
    }
}

/* The schedule of operation i of a group retaining its halo, fused at F,
 * its composite mapping m: first steps of first (mapping fm, workload fw:
 * nm_fused_step_map's and nm_chain_step_workload's), later steps of m. */
static void sched_retained(ssched *x, const nm_arch *arch, const nm_chain_op *op,
                           const nm_workload *fw, const nm_mapping *first,
                           const nm_mapping *m, int F)
{
    sched_plain(x, arch, &op->wl, m, F);
    x->n[1] = x->n[0];
    x->wl[1] = &op->wl;
    x->m[1] = m;
    x->wl[0] = fw;
    x->m[0] = first;
    build(&x->n[0], arch, fw, first);
    x->nseg = 2;
    x->ref = 1;
    x->off[1][op->head_dim] = op->head;
    int64_t S = 1;
    for (int i = 0; i < x->n[1].nl; i++)
        if (x->n[1].l[i].level > F && x->n[1].l[i].dim == op->head_step)
            S *= x->n[1].l[i].n;
    int64_t O = x->steps / S;
    x->inner[1] = x->n[1].points / x->steps;
    x->inner[0] = x->n[0].points / O;
    ck_assert_int_le(2 * O, MAXRUN);
    x->nrun = 0;
    x->points = 0;
    for (int64_t o = 0; o < O; o++) {
        x->run[x->nrun++] = (srun){0, o * x->inner[0], (o + 1) * x->inner[0]};
        x->run[x->nrun++] = (srun){1, (o * S + 1) * x->inner[1], (o + 1) * S * x->inner[1]};
        x->points += x->inner[0] + (S - 1) * x->inner[1];
    }
    sched_ext(x);
}

/* The step of point p of nest g. */
static int64_t sched_step(const ssched *x, int g, int64_t p)
{
    if (x->nseg == 2 && g == 0)
        return p / x->inner[0] * (x->steps / (x->n[0].points / x->inner[0]));
    return p / x->inner[g];
}

/* The coordinates of data space ds's element at point idx of nest g (one
 * per axis). */
static int coords(const ssched *x, int g, int ds, const int64_t *idx, int64_t *co)
{
    const snest *n = &x->n[g];
    int64_t dv[NM_MAX_DIMS];
    memcpy(dv, x->off[g], sizeof dv);
    for (int i = 0; i < n->nl; i++)
        dv[n->l[i].dim] += idx[i] * n->stride[i];
    const nm_dataspace *s = &x->wl[g]->ds[ds];
    for (int r = 0; r < s->nranks; r++) {
        co[r] = 0;
        for (int t = 0; t < s->rank[r].nterms; t++)
            co[r] += s->rank[r].term[t].coef * dv[s->rank[r].term[t].dim];
    }
    return s->nranks;
}

static int64_t flat(const int64_t *co, const int64_t *ext, int nr)
{
    int64_t f = 0;
    for (int r = 0; r < nr; r++)
        f = f * ext[r] + co[r];
    return f;
}

/* The flat index of data space ds's element at point idx of nest g. */
static int64_t element(const ssched *x, int g, int ds, const int64_t *idx)
{
    int64_t co[NM_MAX_RANKS];
    int nr = coords(x, g, ds, idx, co);
    return flat(co, x->ext[ds], nr);
}

typedef struct bits {
    uint64_t w[MAXW];
} bits;

static int popcount_andnot(const bits *a, const bits *b)
{
    int c = 0;
    for (int i = 0; i < MAXW; i++)
        c += __builtin_popcountll(a->w[i] & ~(b ? b->w[i] : 0));
    return c;
}

typedef struct scount {
    uint64_t reads, fills, updates;
} scount;

/* Tiles of level s for data space ds: tile[t * ni + i], and the elements
 * the points of each touch (exact: the box's holes left out). */
typedef struct stiles {
    int64_t nt, ni;
    bits *tile, *exact;
} stiles;

/* The tile of level s that point idx of nest g falls in, as a number
 * growing with the time the tile comes: the indices of the temporal loops
 * above s in mixed radix (the shared ones as the reference nest has them,
 * so that both nests' steps compare), and below the shared ones the nest
 * and its own loops. */
static int64_t tile_key(const ssched *x, int g, const int64_t *idx, int s)
{
    const snest *ref = &x->n[x->ref], *n = &x->n[g];
    int top = s > x->F ? s : x->F;
    int64_t k = 0;
    for (int i = 0; i < ref->nl; i++) {
        if (ref->l[i].spatial || ref->l[i].level <= top)
            continue;
        int64_t v = 0;
        for (int j = 0; j < n->nl; j++)
            if (n->l[j].dim == ref->l[i].dim && n->l[j].level == ref->l[i].level &&
                !n->l[j].spatial)
                v = idx[j];
        k = k * ref->l[i].n + v;
    }
    if (s < x->F) {
        int64_t own = 0, most = 1;
        for (int h = 0; h < x->nseg; h++) {
            int64_t c = 1;
            for (int j = 0; j < x->n[h].nl; j++)
                if (!x->n[h].l[j].spatial && x->n[h].l[j].level > s && x->n[h].l[j].level <= x->F)
                    c *= x->n[h].l[j].n;
            most = c > most ? c : most;
        }
        for (int j = 0; j < n->nl; j++)
            if (!n->l[j].spatial && n->l[j].level > s && n->l[j].level <= x->F)
                own = own * n->l[j].n + idx[j];
        k = (k * x->nseg + g) * most + own;
    }
    return k;
}

static int by_key(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

/* Each tile is the box its elements span along every axis, as Timeloop
 * keeps tiles (axis-aligned hyper-rectangles): a strided window's holes
 * belong to it.  Tiles come in the order of their keys (tile_key). */
static void tiles_of(const ssched *x, int ds, int s, stiles *out)
{
    key(&x->n[x->ref], (int64_t[MAXL]){0}, s, 1, &out->ni);
    int64_t *keys = nm_calloc((size_t)x->points, sizeof *keys);
    ck_assert_ptr_nonnull(keys);
    int64_t idx[MAXL], co[NM_MAX_RANKS], np = 0;
    for (int ru = 0; ru < x->nrun; ru++)
        for (int64_t p = x->run[ru].from; p < x->run[ru].to; p++) {
            indices(&x->n[x->run[ru].seg], p, idx);
            keys[np++] = tile_key(x, x->run[ru].seg, idx, s);
        }
    qsort(keys, (size_t)np, sizeof *keys, by_key);
    out->nt = 0;
    for (int64_t p = 0; p < np; p++)
        if (!out->nt || keys[p] != keys[out->nt - 1])
            keys[out->nt++] = keys[p];
    size_t n = (size_t)(out->nt * out->ni);
    out->tile = nm_calloc(n, sizeof(bits));
    out->exact = nm_calloc(n, sizeof(bits));
    int64_t (*lo)[NM_MAX_RANKS] = nm_calloc(n, sizeof *lo), (*hi)[NM_MAX_RANKS] =
        nm_calloc(n, sizeof *hi);
    ck_assert(out->tile && out->exact && lo && hi);
    for (size_t k = 0; k < n; k++)
        for (int r = 0; r < NM_MAX_RANKS; r++) {
            lo[k][r] = INT64_MAX;
            hi[k][r] = -1;
        }
    int nr = 0;
    for (int ru = 0; ru < x->nrun; ru++) {
        int g = x->run[ru].seg;
        for (int64_t p = x->run[ru].from; p < x->run[ru].to; p++) {
            indices(&x->n[g], p, idx);
            int64_t tk = tile_key(x, g, idx, s);
            const int64_t *at = bsearch(&tk, keys, (size_t)out->nt, sizeof *keys, by_key);
            size_t k = (size_t)((at - keys) * out->ni + key(&x->n[g], idx, s, 1, NULL));
            nr = coords(x, g, ds, idx, co);
            for (int r = 0; r < nr; r++) {
                lo[k][r] = co[r] < lo[k][r] ? co[r] : lo[k][r];
                hi[k][r] = co[r] > hi[k][r] ? co[r] : hi[k][r];
            }
            int64_t e = flat(co, x->ext[ds], nr);
            ck_assert_int_lt(e, MAXW * 64);
            out->exact[k].w[e / 64] |= 1ull << (e % 64);
        }
    }
    int64_t size = 1;
    for (int r = 0; r < nr; r++)
        size *= x->ext[ds][r];
    ck_assert_int_lt(size, MAXW * 64);
    for (size_t k = 0; k < n; k++) {
        if (hi[k][0] < 0)
            continue; /* (no point: a tile of nothing) */
        int64_t c[NM_MAX_RANKS];
        for (int r = 0; r < nr; r++)
            c[r] = lo[k][r];
        for (;;) { /* every point of the box */
            int64_t e = flat(c, x->ext[ds], nr);
            out->tile[k].w[e / 64] |= 1ull << (e % 64);
            int r = nr - 1;
            while (r >= 0 && ++c[r] > hi[k][r]) {
                c[r] = lo[k][r];
                r--;
            }
            if (r < 0)
                break;
        }
    }
    nm_free(keys);
    nm_free(lo);
    nm_free(hi);
}

/* Counts of an operation's schedule: cnt[s][ds] totals over instances. */
static void simulate(const nm_arch *arch, const ssched *x, scount cnt[NM_MAX_LEVELS][NM_MAX_DS])
{
    const snest *n = &x->n[x->ref];
    const nm_workload *wl = x->wl[x->ref];
    const nm_mapping *m = x->m[x->ref];
    memset(cnt, 0, sizeof(scount) * NM_MAX_LEVELS * NM_MAX_DS);
    int S = arch->nlevels;
    for (int ds = 0; ds < wl->nds; ds++) {
        int rw = wl->ds[ds].read_write;
        int child = -1; /* the keeper below, -1: the arithmetic */
        int top = -1;
        for (int s = 0; s < S; s++)
            if ((m->level[s].keep >> ds) & 1u)
                top = s;
        for (int s = 0; s < S; s++) {
            if (!((m->level[s].keep >> ds) & 1u))
                continue;
            scount *c = &cnt[s][ds];
            uint64_t served; /* what the child takes: reads (inputs) or updates (outputs) */
            if (child < 0) {
                served = (uint64_t)x->points;
            } else {
                /* the child's gains per step, once per instance of this
                 * level (multicast / spatial reduction) */
                stiles ct;
                tiles_of(x, ds, child, &ct);
                int64_t per = 1; /* child instances per instance of this level */
                for (int i = 0; i < n->nl; i++)
                    if (n->l[i].spatial && n->l[i].level > child && n->l[i].level <= s)
                        per *= n->l[i].n;
                served = 0;
                bits *gain = nm_calloc((size_t)per, sizeof *gain);
                ck_assert_ptr_nonnull(gain);
                for (int64_t t = 0; t < ct.nt; t++)
                    for (int64_t j = 0; j < ct.ni / per; j++) {
                        /* each child's gain; children gaining the same
                         * elements are served at once (multicast), others
                         * each on its own, overlapping or not */
                        for (int64_t i = 0; i < per; i++) {
                            const bits *cur = &ct.tile[t * ct.ni + j * per + i];
                            const bits *prev = t ? &ct.tile[(t - 1) * ct.ni + j * per + i] : NULL;
                            for (int w = 0; w < MAXW; w++)
                                gain[i].w[w] = cur->w[w] & ~(prev ? prev->w[w] : 0);
                            int seen = 0;
                            for (int64_t k = 0; k < i && !seen; k++)
                                seen = !memcmp(&gain[k], &gain[i], sizeof gain[i]);
                            if (!seen)
                                served += (uint64_t)popcount_andnot(&gain[i], NULL);
                        }
                    }
                nm_free(gain);
                nm_free(ct.tile);
                nm_free(ct.exact);
            }
            /* this level's own gains and partition (of an output, the
             * elements updated: a causal mask's skipped steps leave holes
             * in the box of a tile spanning steps) */
            stiles own;
            tiles_of(x, ds, s, &own);
            uint64_t gains = 0, part = 0;
            for (int64_t i = 0; i < own.ni; i++) {
                bits all = {{0}};
                for (int64_t t = 0; t < own.nt; t++) {
                    const bits *cur = &own.tile[t * own.ni + i];
                    gains += (uint64_t)popcount_andnot(cur, t ? &own.tile[(t - 1) * own.ni + i]
                                                              : NULL);
                    const bits *in = rw ? &own.exact[t * own.ni + i] : cur;
                    for (int w = 0; w < MAXW; w++)
                        all.w[w] |= in->w[w];
                }
                part += (uint64_t)popcount_andnot(&all, NULL);
            }
            nm_free(own.tile);
            nm_free(own.exact);
            if (rw) {
                c->updates = served;
                c->reads = served - part;
                c->fills = s == top ? 0 : gains - part;
            } else {
                c->reads = served;
                c->fills = s == top ? 0 : gains;
            }
            child = s;
        }
    }
}

/* Operation i's schedule in fm: retained (sched_retained, with its first
 * step's workload in *fw) or plain. */
static void op_sched(ssched *x, const nm_arch *arch, const nm_chain *c, const nm_fused_map *fm,
                     int i, nm_workload *fw, nm_mapping *first)
{
    int F = fm->group[fm->group_of[i]].level;
    if (!c->op[i].head) {
        sched_plain(x, arch, &c->op[i].wl, &fm->map[i], F);
        nm_causal_plan p;
        if (c->op[i].masked && nm_fused_causal_plan(arch, c, &fm->group[fm->group_of[i]],
                                                    fm->map, &p, NULL, 0) && p.skips)
            sched_causal(x, &c->op[i]);
        return;
    }
    nm_chain_step_workload(&c->op[i], 1, fw);
    ck_assert(nm_fused_step_map(&c->op[i], F, &fm->map[i], 1, first));
    sched_retained(x, arch, &c->op[i], fw, first, &fm->map[i], F);
}

/* Executes group g step by step and checks that consumers read only
 * intermediate elements their producer completed in the same step, or,
 * retaining the halo, in that step or one before. */
static void check_steps(const nm_arch *arch, const nm_chain *c, const nm_fused_map *fm, int gi)
{
    const nm_fused_group *g = &fm->group[gi];
    int retained = g->nsplit == 1 && g->split[0].retain;
    static ssched x[NM_MAX_OPS];
    static nm_workload fw[NM_MAX_OPS];
    static nm_mapping first[NM_MAX_OPS];
    int64_t steps = -1;
    for (int i = g->first; i < g->first + g->nops; i++) {
        op_sched(&x[i], arch, c, fm, i, &fw[i], &first[i]);
        if (steps < 0)
            steps = x[i].steps;
        ck_assert_int_eq(x[i].steps, steps); /* the same shared loops */
    }
    /* per op's output: how many points update each element, and how many so far */
    static int64_t full[NM_MAX_OPS][MAXW * 64], done[NM_MAX_OPS][MAXW * 64],
        when[NM_MAX_OPS][MAXW * 64];
    memset(full, 0, sizeof full);
    memset(done, 0, sizeof done);
    int64_t idx[MAXL];
    int at[NM_MAX_OPS];
    int64_t next[NM_MAX_OPS];
    for (int i = g->first; i < g->first + g->nops; i++) {
        for (int ru = 0; ru < x[i].nrun; ru++)
            for (int64_t p = x[i].run[ru].from; p < x[i].run[ru].to; p++) {
                indices(&x[i].n[x[i].run[ru].seg], p, idx);
                full[i][element(&x[i], x[i].run[ru].seg, c->op[i].out, idx)]++;
            }
        at[i] = 0;
        next[i] = x[i].run[0].from;
    }
    for (int64_t t = 0; t < steps; t++)
        for (int i = g->first; i < g->first + g->nops; i++) {
            const nm_workload *wl = &c->op[i].wl;
            /* the shared loops are the outermost, so a step is a run of points */
            while (at[i] < x[i].nrun) {
                const srun *ru = &x[i].run[at[i]];
                if (next[i] >= ru->to) {
                    if (++at[i] < x[i].nrun)
                        next[i] = x[i].run[at[i]].from;
                    continue;
                }
                if (sched_step(&x[i], ru->seg, next[i]) != t)
                    break;
                indices(&x[i].n[ru->seg], next[i], idx);
                for (int ds = 0; ds < wl->nds; ds++) {
                    if (!((fm->onchip[i] >> ds) & 1u) || ds == c->op[i].out)
                        continue;
                    int pr = c->op[i].producer[ds];
                    int64_t e = element(&x[i], ru->seg, ds, idx);
                    ck_assert_msg(done[pr][e] == full[pr][e] &&
                                  (retained ? when[pr][e] <= t : when[pr][e] == t),
                                  "case: %s reads %s element %lld at step %lld: %lld of %lld "
                                  "updates done (at step %lld)", c->op[i].name,
                                  wl->ds[ds].name, (long long)e, (long long)t,
                                  (long long)done[pr][e], (long long)full[pr][e],
                                  (long long)when[pr][e]);
                }
                int64_t e = element(&x[i], ru->seg, c->op[i].out, idx);
                done[i][e]++;
                when[i][e] = t;
                next[i]++;
            }
        }
    for (int i = g->first; i < g->first + g->nops; i++) {
        ck_assert_int_eq(at[i], x[i].nrun); /* every point ran */
        /* each output element computed as often as its reduction is long */
        const nm_dataspace *o = &c->op[i].wl.ds[c->op[i].out];
        int64_t size = 1;
        for (int r = 0; r < o->nranks; r++)
            size *= x[i].ext[c->op[i].out][r];
        for (int64_t e = 0; retained && e < size; e++)
            ck_assert_int_eq(full[i][e] * size, x[i].points);
    }
}

/* ---- random cases ---- */

typedef struct text {
    char s[16384];
    size_t n;
} text;

static void put(text *t, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(t->s + t->n, sizeof t->s - t->n, fmt, ap);
    va_end(ap);
    ck_assert(k >= 0 && (size_t)k < sizeof t->s - t->n);
    t->n += (size_t)k;
}

static int64_t pick_divisor(nm_pcg32 *r, int64_t n)
{
    int64_t d[64] = {1};
    int k = 0;
    for (int64_t i = 1; i <= n && k < 64; i++)
        if (n % i == 0)
            d[k++] = i;
    return d[nm_pcg32_bounded(r, (uint32_t)(k ? k : 1))];
}

typedef struct gop {
    char out[16], in[2][16];
    int nin;
    char idx[3][4];   /* the output's two indices, and the reduced one (or "") */
} gop;

typedef struct gcase {
    int nops, fan;
    char einsum[3][96];
    const char *kind[3]; /* the operation's `op:`, or NULL (a multiply-accumulate) */
    gop op[3];
    char names[8][4];
    int64_t bound[8];
    int nidx;
} gcase;

/* A random chain: each operation takes the previous one's output. */
static void gen_chain(nm_pcg32 *r, gcase *g, text *t)
{
    memset(g, 0, sizeof *g);
    g->nops = 1 + (int)nm_pcg32_bounded(r, 3);
    char cur[2][4] = {"a", "b"};
    g->nidx = 2;
    strcpy(g->names[0], "a");
    strcpy(g->names[1], "b");
    char prev[16] = "X", reduced[4] = "";
    put(t, "problem:\n  chain:\n");
    for (int i = 0; i < g->nops; i++) {
        gop *o = &g->op[i];
        char ein[96];
        snprintf(o->out, sizeof o->out, "T%d", i + 1);
        int kind = (int)nm_pcg32_bounded(r, reduced[0] ? 4 : 3);
        if (i + 1 < g->nops && nm_pcg32_bounded(r, 3) == 0)
            kind = 4;
        if (kind == 4) { /* a softmax's first steps: a row max, then each element
                          * against it; the row is read by both (a DAG) */
            gop *o2 = &g->op[i + 1];
            snprintf(o->in[0], sizeof o->in[0], "%s", prev);
            o->nin = 1;
            snprintf(ein, sizeof ein, "%s[%s] = %s[%s,%s]", o->out, cur[0], prev, cur[0],
                     cur[1]);
            g->kind[i] = "max";
            memcpy(g->einsum[i], ein, sizeof ein);
            put(t, "  - {name: op%d, op: max, einsum: \"%s\"}\n", i + 1, g->einsum[i]);
            snprintf(o2->out, sizeof o2->out, "T%d", i + 2);
            snprintf(o2->in[0], sizeof o2->in[0], "%s", prev);
            memcpy(o2->in[1], o->out, sizeof o2->in[1]);
            o2->nin = 2;
            snprintf(ein, sizeof ein, "%s[%s,%s] = %s[%s,%s] * %s[%s]", o2->out, cur[0], cur[1],
                     prev, cur[0], cur[1], o->out, cur[0]);
            g->kind[i + 1] = "exp";
            i++;
            o = o2;
        } else if (kind == 3) { /* mixes in the index the GEMM before reduced (which may
                          * then not be shared: its producer reduces it) */
            snprintf(o->in[0], sizeof o->in[0], "%s", prev);
            snprintf(o->in[1], sizeof o->in[1], "R%d", i + 1);
            o->nin = 2;
            snprintf(ein, sizeof ein, "%s[%s,%s] = %s[%s,%s] * %s[%s,%s]", o->out, cur[0],
                     cur[1], prev, cur[0], cur[1], o->in[1], cur[0], reduced);
        } else if (kind == 0) { /* GEMM: reduce the second index, a new one in its place */
            char nw[4];
            snprintf(nw, sizeof nw, "%c", 'c' + g->nidx - 2);
            strcpy(g->names[g->nidx++], nw);
            snprintf(o->in[0], sizeof o->in[0], "%s", prev);
            snprintf(o->in[1], sizeof o->in[1], "W%d", i + 1);
            o->nin = 2;
            snprintf(ein, sizeof ein, "%s[%s,%s] = %s[%s,%s] * %s[%s,%s]", o->out, cur[0], nw,
                     prev, cur[0], cur[1], o->in[1], cur[1], nw);
            strcpy(reduced, cur[1]);
            strcpy(cur[1], nw);
        } else if (kind == 1) { /* element-wise */
            snprintf(o->in[0], sizeof o->in[0], "%s", prev);
            o->nin = 1;
            snprintf(ein, sizeof ein, "%s[%s,%s] = %s[%s,%s]", o->out, cur[0], cur[1], prev,
                     cur[0], cur[1]);
        } else { /* scaled along the second index */
            snprintf(o->in[0], sizeof o->in[0], "%s", prev);
            snprintf(o->in[1], sizeof o->in[1], "S%d", i + 1);
            o->nin = 2;
            snprintf(ein, sizeof ein, "%s[%s,%s] = %s[%s,%s] * %s[%s]", o->out, cur[0],
                     cur[1], prev, cur[0], cur[1], o->in[1], cur[1]);
        }
        memcpy(g->einsum[i], ein, sizeof ein);
        if (g->kind[i])
            put(t, "  - {name: op%d, op: %s, einsum: \"%s\"}\n", i + 1, g->kind[i],
                g->einsum[i]);
        else
            put(t, "  - {name: op%d, einsum: \"%s\"}\n", i + 1, g->einsum[i]);
        if (kind != 0)
            reduced[0] = '\0'; /* (only right after the GEMM) */
        strcpy(prev, o->out);
    }
    put(t, "  bounds: {");
    for (int k = 0; k < g->nidx; k++)
        g->bound[k] = 1 + (int64_t)nm_pcg32_bounded(r, 4);
    int first = 1;
    for (int k = 0; k < g->nidx; k++) {
        int used = 0; /* (index names are lower-case letters, tensor names not) */
        for (int i = 0; i < g->nops && !used; i++)
            used = strchr(g->einsum[i], g->names[k][0]) != NULL;
        if (used)
            put(t, "%s%s: %lld", first ? "" : ", ", g->names[k], (long long)g->bound[k]);
        first &= !used;
    }
    put(t, "}\n");
}

/* (after gen_chain, which clears the case) */
static void gen_arch(nm_pcg32 *r, gcase *g, text *t)
{
    static const int fans[] = {1, 1, 2, 4};
    g->fan = fans[nm_pcg32_bounded(r, 4)];
    put(t, "architecture:\n  version: 0.3\n  subtree:\n  - name: sys\n"
           "    attributes: {technology: 45nm}\n    local:\n"
           "    - {name: DRAM, class: DRAM, attributes: {type: LPDDR4, width: 64, "
           "datawidth: 16}}\n"
           "    - {name: GLB, class: SRAM, attributes: {depth: 65536, width: 16, "
           "datawidth: 16}}\n"
           "    subtree:\n    - name: PE[0..%d]\n      local:\n"
           "      - {name: RF, class: regfile, attributes: {depth: 4096, width: 16, "
           "datawidth: 16, meshX: %d}}\n"
           "      - {name: MAC, class: intmac, attributes: {datawidth: 16, meshX: %d}}\n",
           g->fan - 1, g->fan, g->fan);
}

/* One factor per slot whose product is n, at random. */
static void split_n(nm_pcg32 *r, int64_t n, int nslots, int64_t *out)
{
    for (int k = 0; k < nslots - 1; k++) {
        out[k] = pick_divisor(r, n);
        n /= out[k];
    }
    out[nslots - 1] = n;
}

/* Writes the temporal entry of one level: factors of every index of the op
 * (or of names[]), in a random order. */
static const char *innermost; /* a name put_entry puts innermost, or NULL */
/* When set, gen_group steps through this index (a causal mask's keys) as a
 * group skipping masked steps must: its shared loops stepping at the
 * backing store only, this one innermost. */
static const char *causal_keys;

static void put_entry(nm_pcg32 *r, text *t, const char *indent, const char *target,
                      const char *type, char names[][NM_NAME_MAX], const int64_t *f, int n)
{
    int perm[NM_MAX_DIMS];
    for (int k = 0; k < n; k++)
        perm[k] = k;
    for (int k = n - 1; k > 0; k--) {
        int j = (int)nm_pcg32_bounded(r, (uint32_t)k + 1);
        int x = perm[k];
        perm[k] = perm[j];
        perm[j] = x;
    }
    for (int k = 1; innermost && k < n; k++)
        if (!strcmp(names[perm[k]], innermost)) {
            int x = perm[0];
            perm[0] = perm[k];
            perm[k] = x;
        }
    put(t, "%s- {target: %s, type: %s, factors: \"", indent, target, type);
    for (int k = 0; k < n; k++)
        put(t, "%s%s=%lld", k ? " " : "", names[k], (long long)f[k]);
    put(t, "\", permutation: \"");
    for (int k = 0; k < n; k++)
        put(t, "%s%s", k ? " " : "", names[perm[k]]);
    put(t, "\"}\n");
}

/* Whether data space ds of operation j is an intermediate of the group of
 * operations first .. first + len - 1. */
static int fm_inside_hint(const nm_chain *c, int j, int ds, int first, int len)
{
    if (ds != c->op[j].out)
        return c->op[j].producer[ds] >= first;
    return j < first + len - 1; /* the next operation reads it */
}

/* Whether data space ds of wl has an axis summing two indices or more (a
 * window, or the last operation's rows: steps and rows in a step), whose
 * tiles may overlap from one step to the next. */
static int windowed(const nm_workload *wl, int ds)
{
    for (int r = 0; r < wl->ds[ds].nranks; r++)
        if (wl->ds[ds].rank[r].nterms > 1)
            return 1;
    return 0;
}

/* Whether every tensor of ops i .. i + len - 1 read through windows (or
 * following the rows) follows index name. */
static int windows_follow(const nm_chain *c, int i, int len, const char *name)
{
    for (int j = i; j < i + len; j++) {
        const nm_workload *wl = &c->op[j].wl;
        int d = nm_workload_dim(wl, name);
        for (int ds = 0; ds < wl->nds; ds++)
            if (windowed(wl, ds)) {
                int64_t cf = 0;
                for (int q = 0; q < wl->ds[ds].nranks; q++)
                    for (int m = 0; m < wl->ds[ds].rank[q].nterms; m++)
                        cf += wl->ds[ds].rank[q].term[m].dim == d;
                if (!cf)
                    return 0;
            }
    }
    return 1;
}

/* Writes group ops i .. i + len - 1 of c fused at F (2: DRAM, a plain
 * group; 1: GLB; 0: RF) with random shared and own loops on a design of
 * `fan` PEs, recomputing halos along split (steps) when split is not
 * NULL (c then being the chain nm_chain_recompute made); own[j] gets the
 * offsets of operation j's own entries in t when the group is plain, else
 * -1. */
static void gen_group(nm_pcg32 *r, int fan, const nm_chain *c, text *t, int i, int len, int F,
                      const char *split, int64_t steps, size_t own[][2])
{
    static const char *const lname[] = {"RF", "GLB", "DRAM"};
    int retain = split && c->op[i].retained;
    innermost = NULL;
    put(t, "  - fuse_at: %s\n", lname[F]);
    if (split)
        put(t, "    %s: {%s: %lld}\n", retain ? "retain" : "recompute", split, (long long)steps);
    /* shareable: in every op, and in every op's output that stays inside
     * (the library's rule; check_steps checks what it allows) */
    char sh[8][NM_NAME_MAX];
    int64_t bound[8], shf[8][3]; /* per shareable index: DRAM, GLB temporal, GLB spatial */
    int nsh = F == 2 ? 0 : nm_fused_shareable(c, i, len, sh, bound, 8);
    /* with halos, only indices every tensor read through windows follows (a
     * shared loop such a tensor does not follow, around the steps, would
     * sweep its windows again: see recompute_agrees) */
    for (int k = 0; split && k < nsh; k++) {
        if (!windows_follow(c, i, len, sh[k])) {
            memmove(sh[k], sh[k + 1], (size_t)(nsh - k - 1) * sizeof sh[0]);
            memmove(&bound[k], &bound[k + 1], (size_t)(nsh - k - 1) * sizeof bound[0]);
            nsh--;
            k--;
        }
    }
    for (int k = 0; k < nsh; k++) {
        int64_t rest = bound[k];
        if (split && !strncmp(sh[k], split, strlen(split)) && strstr(sh[k], "_step")) {
            /* the steps in one loop (two, at two levels, would sweep the
             * windows in a way only Timeloop's extrapolation counts);
             * retained, temporal and the innermost shared loop */
            int slot = F == 0 ? (int)nm_pcg32_bounded(r, fan > 1 && !retain ? 3 : 2) : 0;
            innermost = retain ? sh[k] : NULL;
            shf[k][0] = shf[k][1] = shf[k][2] = 1;
            int64_t f = retain ? rest : pick_divisor(r, rest);
            while (slot == 2 && (f > fan || fan % f))
                f = pick_divisor(r, rest);
            shf[k][slot] = f;
            continue;
        }
        /* (a causal group steps through rows, keys and heads only) */
        shf[k][0] = causal_keys && !strchr("hmn", sh[k][0]) ? 1 : pick_divisor(r, rest);
        rest /= shf[k][0];
        shf[k][1] = F == 0 && !retain && !causal_keys ? pick_divisor(r, rest) : 1;
        rest /= shf[k][1];
        shf[k][2] = 1;
        if (F == 0 && fan > 1 && !retain && !causal_keys) {
            int64_t sp = pick_divisor(r, rest);
            while (sp > fan || (fan % sp))
                sp = pick_divisor(r, rest);
            shf[k][2] = sp;
        }
    }
    /* at most one spatial factor above 1 across the shared indices */
    int spatial_used = 0;
    for (int k = 0; k < nsh; k++) {
        if (spatial_used)
            shf[k][2] = 1;
        spatial_used |= shf[k][2] > 1;
    }
    if (causal_keys)
        innermost = causal_keys;
    if (nsh) {
        put(t, "    shared:\n");
        int64_t f[8];
        for (int lv = 0; lv < (F == 0 ? 3 : 1); lv++) {
            for (int k = 0; k < nsh; k++)
                f[k] = shf[k][lv];
            put_entry(r, t, "    ", lv == 0 ? "DRAM" : "GLB", lv == 2 ? "spatial" : "temporal",
                      sh, f, nsh);
        }
    }
    innermost = NULL;
    put(t, "    ops:\n");
    for (int j = i; j < i + len; j++) {
        const nm_workload *wl = &c->op[j].wl;
        put(t, "      %s:\n", c->op[j].name);
        own[j][0] = F == 2 && nsh == 0 ? t->n : (size_t)-1;
        char nm[NM_MAX_DIMS][NM_NAME_MAX];
        int64_t rest[NM_MAX_DIMS];
        int fanleft = spatial_used ? 1 : fan;
        for (int d = 0; d < wl->ndims; d++) {
            snprintf(nm[d], NM_NAME_MAX, "%s", wl->dim[d]);
            rest[d] = wl->bound[d];
            for (int k = 0; k < nsh; k++)
                if (!strcmp(sh[k], wl->dim[d]))
                    rest[d] /= shf[k][0] * shf[k][1] * shf[k][2];
        }
        /* own slots: levels F..0 temporal, GLB spatial when F >= 1 */
        int64_t f[3][NM_MAX_DIMS], sp[NM_MAX_DIMS];
        for (int d = 0; d < wl->ndims; d++) {
            sp[d] = 1;
            if (c->op[j].head && d == c->op[j].head_dim) {
                /* a retained halo's producer: the levels below the fusion
                 * level tile its first step's rows too (head + a step's) */
                int64_t a = rest[d], b = c->op[j].head;
                while (b) {
                    int64_t m = a % b;
                    a = b;
                    b = m;
                }
                int64_t below = F ? pick_divisor(r, a) : 1;
                if (F >= 1 && fanleft > 1) {
                    int64_t s2 = pick_divisor(r, below);
                    if (s2 <= fanleft && fanleft % s2 == 0) {
                        sp[d] = s2;
                        fanleft /= s2;
                    }
                }
                int64_t parts[3] = {1, 1, 1};
                if (F)
                    split_n(r, below / sp[d], F, parts);
                for (int lv = 0; lv < F; lv++)
                    f[lv][d] = parts[lv];
                f[F][d] = rest[d] / below;
                continue;
            }
            if (F >= 1 && fanleft > 1) {
                int64_t s = pick_divisor(r, rest[d]);
                if (s <= fanleft && fanleft % s == 0) {
                    sp[d] = s;
                    fanleft /= s;
                    rest[d] /= s;
                }
            }
            int64_t parts[3];
            split_n(r, rest[d], F + 1, parts);
            for (int lv = 0; lv <= F; lv++)
                f[lv][d] = parts[lv];
        }
        for (int lv = F; lv >= 0; lv--) {
            put_entry(r, t, "      ", lname[lv], "temporal", nm, f[lv], wl->ndims);
            if (lv == 1)
                put_entry(r, t, "      ", "GLB", "spatial", nm, sp, wl->ndims);
        }
        /* bypass below the backing store, without a fan-out only; with
         * halos, a tensor read through windows is not kept below the fusion
         * level (see recompute_agrees) */
        for (int lv = (F == 2 ? 1 : F); fan == 1 && lv >= 0; lv--) {
            char keep[64] = "", byp[64] = "";
            for (int ds = 0; ds < wl->nds; ds++) {
                int inter = (fm_inside_hint(c, j, ds, i, len));
                int k = lv == F && inter ? 1 : (int)nm_pcg32_bounded(r, 2);
                if (split && lv < F && windowed(wl, ds))
                    k = 0;
                char *dst = k ? keep : byp;
                snprintf(dst + strlen(dst), 64 - strlen(dst), "%s%s", *dst ? ", " : "",
                         wl->ds[ds].name);
            }
            put(t, "      - {target: %s, type: bypass, keep: [%s], bypass: [%s]}\n", lname[lv],
                keep, byp);
        }
        own[j][1] = t->n;
    }
}

/* A random fused mapping of the chain parsed as c; own[i] gets the offsets
 * of operation i's own entries in t when its group is plain (a single
 * operation through the backing store), else -1. */
static void gen_mapping(nm_pcg32 *r, const gcase *g, const nm_chain *c, text *t, size_t own[][2])
{
    put(t, "mapping:\n  fused:\n");
    int i = 0;
    while (i < g->nops) {
        int len = 1 + (int)nm_pcg32_bounded(r, (uint32_t)(g->nops - i));
        while (len > 1 && nm_fused_leaks(c, i, len) >= 0)
            len--; /* (a row read after the group must reach the backing store) */
        int F = len == 1 ? (nm_pcg32_bounded(r, 3) ? 2 : (int)nm_pcg32_bounded(r, 2))
                         : (int)nm_pcg32_bounded(r, 2);
        gen_group(r, g->fan, c, t, i, len, F, NULL, 0, own);
        i += len;
    }
}

/* ---- the tests ---- */

static void load(nm_spec *spec, const char *yaml, unsigned need)
{
    nm_error err;
    nm_status st = nm_spec_load_string(spec, "case.yaml", yaml, need, &err);
    ck_assert_msg(st == NM_OK, "%s:%d:%d: %s\n%s", err.file, err.line, err.col, err.msg, yaml);
}

static void same_counts(const nm_arch *arch, const nm_workload *wl, const nm_stats *a,
                        const nm_stats *b)
{
    ck_assert_uint_eq(a->computes, b->computes);
    ck_assert_uint_eq(a->cycles, b->cycles);
    ck_assert(a->energy == b->energy);
    for (int s = 0; s < arch->nlevels; s++)
        for (int ds = 0; ds < wl->nds; ds++) {
            const nm_ds_stats *x = &a->level[s].ds[ds], *y = &b->level[s].ds[ds];
            ck_assert_uint_eq(x->reads, y->reads);
            ck_assert_uint_eq(x->fills, y->fills);
            ck_assert_uint_eq(x->updates, y->updates);
            ck_assert_uint_eq(x->utilized_capacity, y->utilized_capacity);
            ck_assert(x->energy == y->energy);
        }
}

/* Checks operation i of fm (evaluated into st) against the simulator,
 * count by count, and that no intermediate reaches the backing store;
 * returns the tensors it bypasses below the backing store. */
static int simulated_op(const nm_arch *arch, const nm_chain *c, const nm_fused_map *fm,
                        const nm_fused_stats *st, int i, int n, const char *yaml)
{
    const nm_workload *wl = &c->op[i].wl;
    scount cnt[NM_MAX_LEVELS][NM_MAX_DS];
    static ssched x;
    static nm_workload fw;
    static nm_mapping first;
    op_sched(&x, arch, c, fm, i, &fw, &first);
    simulate(arch, &x, cnt);
    ck_assert_msg(st->op[i].computes == (uint64_t)x.points, "case %d, %s: model %llu computes, "
                  "simulator %lld\n%s", n, c->op[i].name,
                  (unsigned long long)st->op[i].computes, (long long)x.points, yaml);
    int bypassing = 0;
    for (int s = 0; s < arch->nlevels; s++)
        for (int ds = 0; ds < wl->nds; ds++) {
            const nm_ds_stats *d = &st->op[i].level[s].ds[ds];
            uint64_t inst = d->utilized_instances;
            ck_assert_msg(d->reads * inst == cnt[s][ds].reads &&
                          d->fills * inst == cnt[s][ds].fills &&
                          d->updates * inst == cnt[s][ds].updates,
                          "case %d, %s, level %s, %s: model reads %llu fills %llu "
                          "updates %llu (x%llu instances), simulator %llu %llu %llu\n%s",
                          n, c->op[i].name, arch->level[s].name, wl->ds[ds].name,
                          (unsigned long long)d->reads, (unsigned long long)d->fills,
                          (unsigned long long)d->updates, (unsigned long long)inst,
                          (unsigned long long)cnt[s][ds].reads,
                          (unsigned long long)cnt[s][ds].fills,
                          (unsigned long long)cnt[s][ds].updates, yaml);
            if (s == arch->nlevels - 1 && ((fm->onchip[i] >> ds) & 1u))
                ck_assert_uint_eq(cnt[s][ds].reads + cnt[s][ds].fills + cnt[s][ds].updates, 0);
            if (s < arch->nlevels - 1 && !((fm->map[i].level[s].keep >> ds) & 1u))
                bypassing++;
        }
    return bypassing;
}

/* The fused mapping of spec evaluated (*fmdl initialized on the chain it
 * maps: release it with nm_fused_model_fini), its stats on the heap; case
 * n aborts, with its text, when it is invalid. */
static nm_fused_stats *evaluated(const nm_spec *spec, nm_fused_model *fmdl, int n,
                                 const char *yaml)
{
    nm_error err;
    ck_assert(nm_fused_model_init(fmdl, &spec->arch, spec->fchain, &err) == NM_OK);
    nm_fused_stats *st = nm_calloc(1, sizeof *st);
    ck_assert_ptr_nonnull(st);
    if (!nm_fused_model_eval(fmdl, spec->fmap, st)) {
        char why[1024];
        nm_fused_describe_invalid(st, &spec->arch, spec->fchain, spec->fmap, why, sizeof why);
        ck_abort_msg("case %d invalid: %s\n%s", n, why, yaml);
    }
    return st;
}

/* Checks that the chain's roofline of operation i (nm_roofline_op) bounds
 * its stats in st: energy, cycles and backing-store words (case n). */
static void bounds_op(const nm_arch *arch, const nm_chain *c, const nm_fused_stats *st, int i,
                      int n, const char *yaml)
{
    nm_roofline rr;
    nm_roofline_op(&rr, arch, c, i);
    ck_assert_msg(rr.energy_pj <= st->op[i].energy * (1 + 1e-12) &&
                      rr.bound_cycles <= (double)st->op[i].cycles &&
                      rr.words_in + rr.words_out <= (double)st->op[i].last_level_accesses,
                  "case %d, %s: bound %g pJ %g cycles %g words over %g pJ %llu cycles %llu "
                  "words\n%s", n, c->op[i].name, rr.energy_pj, rr.bound_cycles,
                  rr.words_in + rr.words_out, st->op[i].energy,
                  (unsigned long long)st->op[i].cycles,
                  (unsigned long long)st->op[i].last_level_accesses, yaml);
}

START_TEST(simulator_agrees)
{
    nm_pcg32 r;
    nm_pcg32_seed(&r, 20261127u, 35u);
    int fused_groups = 0, plain_ops = 0, fanned = 0, bypassing = 0, softmax_fused = 0;
    int bounded = 0;
    static text base, full;
    for (int n = 0; n < CASES; n++) {
        gcase g;
        base.n = 0;
        gen_chain(&r, &g, &base);
        gen_arch(&r, &g, &base);
        nm_spec spec;
        load(&spec, base.s, NM_NEED_ARCH | NM_NEED_PROBLEM | NM_ACCEPT_CHAIN);
        full = base;
        size_t own[3][2];
        gen_mapping(&r, &g, spec.chain, &full, own);
        nm_spec_fini(&spec);
        load(&spec, full.s, NM_NEED_ARCH | NM_NEED_PROBLEM | NM_NEED_MAPPING | NM_ACCEPT_CHAIN);
        const nm_chain *c = spec.fchain;
        const nm_fused_map *fm = spec.fmap;
        nm_fused_model fmdl;
        nm_error err;
        nm_fused_stats *st = evaluated(&spec, &fmdl, n, full.s);
        double energy = 0.0;
        for (int i = 0; i < c->nops; i++) {
            const nm_workload *wl = &c->op[i].wl;
            bypassing += simulated_op(&spec.arch, c, fm, st, i, n, full.s);
            energy += st->op[i].energy;
            /* a plain group: the same as the operation alone */
            if (own[i][0] != (size_t)-1) {
                static text plain;
                plain.n = 0;
                const char *ae = strstr(base.s, "architecture:");
                put(&plain, "%s", ae);
                put(&plain, "problem:\n  einsum: \"%s\"\n  bounds: {", g.einsum[i]);
                for (int d = 0; d < wl->ndims; d++)
                    put(&plain, "%s%s: %lld", d ? ", " : "", wl->dim[d], (long long)wl->bound[d]);
                put(&plain, "}\nmapping:\n%.*s", (int)(own[i][1] - own[i][0]), full.s + own[i][0]);
                nm_spec one;
                load(&one, plain.s, NM_NEED_ARCH | NM_NEED_PROBLEM | NM_NEED_MAPPING);
                nm_model mdl;
                nm_arith_as_op(&one.arch.arith, c->op[i].kind); /* (what `op:` charges) */
                ck_assert(nm_model_init(&mdl, &one.arch, &one.wl, &err) == NM_OK);
                nm_stats *alone = nm_calloc(1, sizeof *alone);
                ck_assert(nm_model_eval(&mdl, &one.map, alone, NULL));
                same_counts(&one.arch, &one.wl, alone, &st->op[i]);
                nm_free(alone);
                nm_model_fini(&mdl);
                nm_spec_fini(&one);
                plain_ops++;
            }
        }
        ck_assert(fabs(st->total.energy - energy) <= 1e-9 * energy);
        /* the chain's roofline bounds every operation, fused or not */
        for (int i = 0; i < c->nops; i++) {
            bounds_op(&spec.arch, c, st, i, n, full.s);
            bounded++;
        }
        for (int gi = 0; gi < fm->ngroups; gi++)
            if (fm->group[gi].nops > 1) {
                check_steps(&spec.arch, c, fm, gi);
                fused_groups++;
                const nm_fused_group *fg = &fm->group[gi];
                for (int i = fg->first; i + 1 < fg->first + fg->nops; i++)
                    softmax_fused += c->op[i].kind == NM_OP_MAX;
            }
        fanned += g.fan > 1;
        nm_free(st);
        nm_fused_model_fini(&fmdl);
        nm_spec_fini(&spec);
    }
    /* the cases cover what they are for */
    ck_assert_int_ge(fused_groups, CASES / 4);
    ck_assert_int_ge(plain_ops, CASES / 4);
    ck_assert_int_ge(fanned, CASES / 4);
    ck_assert_int_ge(bypassing, CASES / 4);
    ck_assert_int_ge(softmax_fused, CASES / 20);
    ck_assert_int_ge(bounded, CASES);
    printf("simulator: %d cases, %d fused groups (%d with a row max and its consumer), %d "
           "plain operations, %d with a fan-out, %d bypasses\n", CASES, fused_groups,
           softmax_fused, plain_ops, fanned, bypassing);
}
END_TEST

/* ---- causal masks ---- */

/* Random attention (one or two heads of up to 8 queries, as many keys or
 * up to 4 more, head and value dimensions 1 or 2) in softmax form form
 * (NULL: one drawn of the three), masked when causal (-1: drawn), on a
 * random design and fused mapping (its groups stepping through the keys
 * as a group skipping masked steps must, three times in four): case n,
 * its text in *full, loaded into *spec and evaluated (release both and
 * the stats returned). */
static nm_fused_stats *attention_case(nm_pcg32 *r, int n, const char *form, int causal,
                                      gcase *g, nm_spec *spec, nm_fused_model *fmdl, text *full)
{
    static const char *const forms[] = {"parts", "online", "single"};
    static const int64_t seqs[] = {2, 3, 4, 6, 8};
    static text base;
    memset(g, 0, sizeof *g);
    base.n = 0;
    int64_t seq = seqs[nm_pcg32_bounded(r, 5)];
    int64_t kv = seq + (nm_pcg32_bounded(r, 2) ? 0 : 1 + (int64_t)nm_pcg32_bounded(r, 4));
    unsigned heads = 1 + nm_pcg32_bounded(r, 2), e = 1 + nm_pcg32_bounded(r, 2),
             d = 1 + nm_pcg32_bounded(r, 2);
    if (!form)
        form = forms[nm_pcg32_bounded(r, 3)];
    if (causal < 0)
        causal = (int)nm_pcg32_bounded(r, 2);
    put(&base, "problem:\n  attention: {heads: %u, seq: %lld, kv: %lld, head_dim: %u, "
               "value_dim: %u, softmax: %s, causal: %s}\n", heads, (long long)seq,
        (long long)kv, e, d, form, causal ? "true" : "false");
    gen_arch(r, g, &base);
    load(spec, base.s, NM_NEED_ARCH | NM_NEED_PROBLEM | NM_ACCEPT_CHAIN);
    g->nops = spec->chain->nops;
    *full = base;
    size_t own[NM_MAX_OPS][2];
    causal_keys = nm_pcg32_bounded(r, 4) ? "n" : NULL; /* (else any order: the rules
                                                         * may not hold) */
    gen_mapping(r, g, spec->chain, full, own);
    causal_keys = NULL;
    nm_spec_fini(spec);
    load(spec, full->s, NM_NEED_ARCH | NM_NEED_PROBLEM | NM_NEED_MAPPING | NM_ACCEPT_CHAIN);
    return evaluated(spec, fmdl, n, full->s);
}

/* Causal attention (the block, in each softmax form, with as many keys as
 * queries or more) under random fused mappings, their groups stepping
 * through the keys as a group skipping masked steps must (causal_keys):
 * the simulator runs the staircase of steps (sched_causal), the model
 * counts it from three rectangular nests (fusion_causal.c); every count
 * agrees, and the chain's roofline still bounds every operation. */
START_TEST(causal_agrees)
{
    nm_pcg32 r;
    nm_pcg32_seed(&r, 20261128u, 36u);
    int skipping = 0, staying = 0, plain = 0, fanned = 0, masked = 0, fallbacks = 0;
    static text full;
    for (int n = 0; n < CAUSAL_CASES; n++) {
        gcase g;
        nm_spec spec;
        nm_fused_model fmdl;
        nm_fused_stats *st = attention_case(&r, n, NULL, 1, &g, &spec, &fmdl, &full);
        const nm_chain *c = spec.fchain;
        const nm_fused_map *fm = spec.fmap;
        for (int i = 0; i < c->nops; i++) {
            const nm_workload *wl = &c->op[i].wl;
            int keys = nm_workload_dim(wl, "n");
            ck_assert_int_eq(c->op[i].masked, keys >= 0 && keys < wl->ndims);
            masked += c->op[i].masked;
            simulated_op(&spec.arch, c, fm, st, i, n, full.s);
            bounds_op(&spec.arch, c, st, i, n, full.s);
        }
        for (int gi = 0; gi < fm->ngroups; gi++) {
            const nm_fused_group *fg = &fm->group[gi];
            nm_causal_plan p;
            fallbacks += !nm_fused_causal_plan(&spec.arch, c, fg, fm->map, &p, NULL, 0);
            if (fg->nops > 1)
                check_steps(&spec.arch, c, fm, gi);
            plain += !p.skips;
            if (!p.skips)
                continue;
            skipping++;
            /* the row steps right around the key steps, some rows seeing one
             * key step: the keys' tiles stay from one row step to the next */
            const nm_chain_op *op = &c->op[fg->first];
            const nm_level_map *top = &fm->map[fg->first].level[spec.arch.nlevels - 1];
            int seen = 0;
            for (int k = 0; k < op->wl.ndims && seen < 2; k++)
                if (top->tfactor[top->torder[k]] > 1 && ++seen == 2)
                    staying += p.q > 0 && top->torder[k] == op->mask_m;
        }
        fanned += g.fan > 1;
        nm_free(st);
        nm_fused_model_fini(&fmdl);
        nm_spec_fini(&spec);
    }
    ck_assert_int_ge(skipping, CAUSAL_CASES / 5);
    /* (an online softmax's group stepping through keys holds its row sum
     * and output product too, fusion.c's share_problem: fewer such groups
     * than before that rule, 31 of these 400 cases against 43) */
    ck_assert_int_ge(staying, CAUSAL_CASES / 14);
    ck_assert_int_ge(plain, CAUSAL_CASES / 4);
    ck_assert_int_ge(fanned, CAUSAL_CASES / 4);
    ck_assert_int_ge(fallbacks, CAUSAL_CASES / 20);
    printf("causal: %d cases, %d masked operations, %d groups skipping masked steps (%d with "
           "the keys' tiles staying from one row step to the next), %d computing every step "
           "(%d stepping through keys where a rule of skipping fails), %d with a fan-out\n",
           CAUSAL_CASES, masked, skipping, staying, plain, fallbacks, fanned);
}
END_TEST

/* ---- the online softmax ---- */

/* The online exponential x's rows' corrections over its schedule in fm
 * (each row's steps after its first: ev[row][k], row the flat index of
 * its output's element with the axis over the keys at 0), into nev per
 * row; returns their number, its points in *points. */
enum { MAXEV = 256 };
static int64_t ev[MAXW * 64][MAXEV];
static int nev[MAXW * 64];

/* Row of op i's point idx of nest g in x: the element of the online
 * exponential e's output over its indices but the keys (at 0), its
 * coordinates taken by name from op i's output. */
static int64_t row_of(const ssched *x, const nm_chain *c, int i, int e, int g,
                      const int64_t *idx, const int64_t *ext_e)
{
    int64_t co[NM_MAX_RANKS], ce[NM_MAX_RANKS];
    coords(x, g, c->op[i].out, idx, co);
    const nm_dataspace *oi = &c->op[i].wl.ds[c->op[i].out], *oe = &c->op[e].wl.ds[c->op[e].out];
    for (int r = 0; r < oe->nranks; r++) {
        int d = oe->rank[r].term[0].dim;
        ce[r] = 0;
        for (int k = 0; d != c->op[e].online_dim && k < oi->nranks; k++)
            if (!strcmp(c->op[i].wl.dim[oi->rank[k].term[0].dim], c->op[e].wl.dim[d]))
                ce[r] = co[k];
    }
    return flat(ce, ext_e, oe->nranks);
}

static uint64_t corrections(const nm_arch *arch, const nm_chain *c, const nm_fused_map *fm, int e,
                            uint64_t *points, int64_t *ext_e)
{
    static ssched x;
    static nm_workload fw;
    static nm_mapping first;
    op_sched(&x, arch, c, fm, e, &fw, &first);
    memcpy(ext_e, x.ext[c->op[e].out], sizeof x.ext[0]);
    static int64_t last[MAXW * 64];
    for (int k = 0; k < MAXW * 64; k++) {
        last[k] = -1;
        nev[k] = 0;
    }
    uint64_t n = 0;
    int64_t idx[MAXL];
    for (int ru = 0; ru < x.nrun; ru++)
        for (int64_t p = x.run[ru].from; p < x.run[ru].to; p++) {
            int g = x.run[ru].seg;
            indices(&x.n[g], p, idx);
            int64_t row = row_of(&x, c, e, e, g, idx, ext_e), t = sched_step(&x, g, p);
            ck_assert_int_lt(row, MAXW * 64);
            if (last[row] >= 0 && last[row] != t) {
                ck_assert_int_lt(nev[row], MAXEV);
                ev[row][nev[row]++] = t;
                n++;
            }
            last[row] = t;
        }
    *points = (uint64_t)x.points;
    return n;
}

/* The partial sums consumer j of online exponential e rescales: for each
 * element of j's output, the corrections of its row (corrections(), run
 * before) in steps after the one that first touched it (in that one the
 * exponential runs first: there is no partial sum yet). */
static uint64_t rescaled(const nm_arch *arch, const nm_chain *c, const nm_fused_map *fm, int j,
                         int e, const int64_t *ext_e)
{
    static ssched x;
    static nm_workload fw;
    static nm_mapping first;
    static int64_t born[MAXW * 64], rowof[MAXW * 64];
    op_sched(&x, arch, c, fm, j, &fw, &first);
    for (int k = 0; k < MAXW * 64; k++)
        born[k] = -1;
    int64_t idx[MAXL];
    for (int ru = 0; ru < x.nrun; ru++)
        for (int64_t p = x.run[ru].from; p < x.run[ru].to; p++) {
            int g = x.run[ru].seg;
            indices(&x.n[g], p, idx);
            int64_t el = element(&x, g, c->op[j].out, idx);
            ck_assert_int_lt(el, MAXW * 64);
            if (born[el] < 0) {
                born[el] = sched_step(&x, g, p);
                rowof[el] = row_of(&x, c, j, e, g, idx, ext_e);
            }
        }
    uint64_t n = 0;
    for (int k = 0; k < MAXW * 64; k++)
        for (int q = 0; born[k] >= 0 && q < nev[rowof[k]]; q++)
            n += ev[rowof[k]][q] > born[k];
    return n;
}

/* FlashAttention's online softmax (the attention block's online form, with
 * and without a causal mask) under random fused mappings: the simulator's
 * schedule gives the running max's compares (the exponentials computed),
 * the correction factors (each row's steps after its first) and the
 * rescaled partial sums (for each element of a consumer's output, its
 * row's corrections after the step that first touched it); the model's
 * counts (fusion_online.c) agree, their energy
 * is in the operation's compute energy exactly once, and the chain's
 * roofline still bounds every operation. */
START_TEST(online_agrees)
{
    nm_pcg32 r;
    nm_pcg32_seed(&r, 20261201u, 37u);
    int stepping = 0, masked = 0, skipping = 0, alone = 0, fanned = 0;
    static text full;
    for (int n = 0; n < ONLINE_CASES; n++) {
        gcase g;
        nm_spec spec;
        nm_fused_model fmdl;
        nm_fused_stats *st = attention_case(&r, n, "online", -1, &g, &spec, &fmdl, &full);
        const nm_chain *c = spec.fchain;
        const nm_fused_map *fm = spec.fmap;
        int causal = c->op[0].masked;
        int x = -1; /* the online exponential */
        for (int i = 0; i < c->nops; i++)
            if (c->op[i].online)
                x = i;
        ck_assert_int_ge(x, 0);
        uint64_t points;
        int64_t ext_e[NM_MAX_RANKS];
        uint64_t corr = corrections(&spec.arch, c, fm, x, &points, ext_e);
        const nm_fused_online *o = &st->online[x];
        ck_assert_msg(o->compares == points && o->exps == corr,
                      "case %d: model %llu compares %llu corrections, simulator %llu %llu\n%s", n,
                      (unsigned long long)o->compares, (unsigned long long)o->exps,
                      (unsigned long long)points, (unsigned long long)corr, full.s);
        int consumers = 0;
        for (int i = 0; i < c->nops; i++) {
            const char *how;
            double pj = nm_arith_op_energy(&spec.arch.arith, c->op[i].kind, &how);
            ck_assert_msg(fabs(st->op[i].compute_energy - (double)st->op[i].computes * pj -
                               st->online[i].energy) <= 1e-9 * st->op[i].compute_energy,
                          "case %d, %s: compute energy %g, points %g and online %g\n%s", n,
                          c->op[i].name, st->op[i].compute_energy,
                          (double)st->op[i].computes * pj, st->online[i].energy, full.s);
            bounds_op(&spec.arch, c, st, i, n, full.s);
            if (nm_chain_rescales(c, i, NULL) != x)
                continue;
            consumers++;
            uint64_t muls = rescaled(&spec.arch, c, fm, i, x, ext_e);
            ck_assert_msg(st->online[i].muls == muls, "case %d, %s: model %llu rescaled sums, "
                          "simulator %llu\n%s", n, c->op[i].name,
                          (unsigned long long)st->online[i].muls, (unsigned long long)muls,
                          full.s);
        }
        ck_assert_int_eq(consumers, 2); /* the row sum and the output product */
        nm_causal_plan p;
        const nm_fused_group *xg = &fm->group[fm->group_of[x]];
        stepping += o->blocks > 1;
        alone += xg->nops == 1;
        masked += causal;
        skipping += causal && nm_fused_causal_plan(&spec.arch, c, xg, fm->map, &p, NULL, 0) &&
                    p.skips && o->blocks > 1;
        fanned += g.fan > 1;
        nm_free(st);
        nm_fused_model_fini(&fmdl);
        nm_spec_fini(&spec);
    }
    ck_assert_int_ge(stepping, ONLINE_CASES / 10);
    ck_assert_int_ge(skipping, ONLINE_CASES / 40);
    ck_assert_int_ge(alone, ONLINE_CASES / 10);
    ck_assert_int_ge(fanned, ONLINE_CASES / 4);
    printf("online: %d cases, %d stepping through blocks of keys (%d of %d masked skipping "
           "steps), %d with the exponential alone, %d with a fan-out\n", ONLINE_CASES,
           stepping, skipping, masked, alone, fanned);
}
END_TEST

/* Causal attention cut into random groups on one buffer, each group
 * stepping through heads, rows and keys at the backing store (the keys
 * innermost): its traffic at the words it needs is never below `bound
 * --curve`'s, which skips masked steps as the mapping does. */
START_TEST(causal_under_curve)
{
    static const char *const forms[] = {"parts", "online", "single"};
    static const char onebuf[] =
        "architecture:\n  version: 0.3\n  subtree:\n  - name: sys\n"
        "    attributes: {technology: 45nm}\n    local:\n"
        "    - {name: DRAM, class: DRAM, attributes: {type: LPDDR4, width: 64, datawidth: 16}}\n"
        "    - {name: GLB, class: SRAM, attributes: {depth: 1048576, width: 16, datawidth: 16}}\n"
        "    - {name: MAC, class: intmac, attributes: {datawidth: 16}}\n";
    nm_pcg32 r;
    nm_pcg32_seed(&r, 20261128u, 38u);
    static text base, full;
    int skipping = 0;
    for (int n = 0; n < 60; n++) {
        base.n = 0;
        int64_t seq = 2 << nm_pcg32_bounded(&r, 3), kv = seq << nm_pcg32_bounded(&r, 2);
        put(&base, "problem:\n  attention: {heads: %u, seq: %lld, kv: %lld, head_dim: 2, "
                   "softmax: %s, causal: true}\n%s", 1 + nm_pcg32_bounded(&r, 2),
            (long long)seq, (long long)kv, forms[nm_pcg32_bounded(&r, 3)], onebuf);
        nm_spec plain;
        load(&plain, base.s, NM_NEED_ARCH | NM_NEED_PROBLEM | NM_ACCEPT_CHAIN);
        const nm_chain *c = plain.chain;
        full = base;
        put(&full, "mapping:\n  fused:\n");
        for (int i = 0; i < c->nops;) {
            int len = 1 + (int)nm_pcg32_bounded(&r, (uint32_t)(c->nops - i));
            while (len > 1 && nm_fused_leaks(c, i, len) >= 0)
                len--;
            char sh[8][NM_NAME_MAX];
            int64_t bound[8], f[8];
            int nsh = nm_fused_shareable(c, i, len, sh, bound, 8);
            for (int k = 0; k < nsh; k++)
                f[k] = strchr("hmn", sh[k][0]) ? pick_divisor(&r, bound[k]) : 1;
            put(&full, "  - fuse_at: GLB\n");
            if (nsh) {
                put(&full, "    shared:\n");
                innermost = "n";
                put_entry(&r, &full, "    ", "DRAM", "temporal", sh, f, nsh);
                innermost = NULL;
            }
            put(&full, "    ops:\n");
            for (int j = i; j < i + len; j++) {
                const nm_workload *wl = &c->op[j].wl;
                char nm[NM_MAX_DIMS][NM_NAME_MAX];
                int64_t own[NM_MAX_DIMS];
                for (int d = 0; d < wl->ndims; d++) {
                    snprintf(nm[d], NM_NAME_MAX, "%s", wl->dim[d]);
                    own[d] = wl->bound[d];
                    for (int k = 0; k < nsh; k++)
                        own[d] /= strcmp(sh[k], wl->dim[d]) ? 1 : f[k];
                }
                put(&full, "      %s:\n", c->op[j].name);
                put_entry(&r, &full, "      ", "GLB", "temporal", nm, own, wl->ndims);
            }
            i += len;
        }
        nm_spec spec;
        load(&spec, full.s, NM_NEED_ARCH | NM_NEED_PROBLEM | NM_NEED_MAPPING | NM_ACCEPT_CHAIN);
        nm_fused_model fmdl;
        nm_error err;
        nm_fused_stats *st = evaluated(&spec, &fmdl, n, full.s);
        double need = 0.0;
        for (int gi = 0; gi < spec.fmap->ngroups; gi++) {
            double w = (double)nm_fused_group_peak(&fmdl, spec.fmap, gi, st, 0);
            need = w > need ? w : need;
            nm_causal_plan p;
            skipping += nm_fused_causal_plan(&spec.arch, c, &spec.fmap->group[gi], spec.fmap->map,
                                             &p, NULL, 0) && p.skips;
        }
        nm_chain_curve cc;
        ck_assert(nm_roofline_chain_curve(c, 20000000, &cc, &err) == NM_OK);
        double least = INFINITY;
        for (int k = 0; k < cc.n && cc.pt[k].capacity <= need; k++)
            least = cc.pt[k].traffic;
        ck_assert_msg((double)st->total.backing >= least, "case %d: %llu words at %g words of "
                      "buffer, under the curve's %g\n%s", n,
                      (unsigned long long)st->total.backing, need, least, full.s);
        nm_chain_curve_fini(&cc);
        nm_free(st);
        nm_fused_model_fini(&fmdl);
        nm_spec_fini(&spec);
        nm_spec_fini(&plain);
    }
    ck_assert_int_ge(skipping, 15);
    printf("causal under the curve: 60 cases, %d groups skipping masked steps\n", skipping);
}
END_TEST

/* ---- recomputed halos ---- */

/* A random chain of one-dimensional convolutions (with strides, and a
 * column index every tensor carries, or not), each reading the one
 * before through windows: T1 = X * W1, T2 = T1 * W2, ... */
static int gen_conv_chain(nm_pcg32 *r, text *t)
{
    int n = 2 + (int)nm_pcg32_bounded(r, 2), cols = (int)nm_pcg32_bounded(r, 2);
    static const int64_t last[] = {2, 3, 4, 6};
    int64_t P[4], R[4], S[4], C[4];
    P[n] = last[nm_pcg32_bounded(r, 4)];
    for (int k = n; k >= 1; k--) {
        R[k] = 1 + (int64_t)nm_pcg32_bounded(r, 3);
        S[k] = P[k] > 3 ? 1 : 1 + (int64_t)nm_pcg32_bounded(r, 2);
        P[k - 1] = S[k] * (P[k] - 1) + R[k];
    }
    for (int k = 0; k <= n; k++)
        C[k] = 1 + (int64_t)nm_pcg32_bounded(r, 2);
    const char *q = cols ? ",q" : "";
    put(t, "problem:\n  chain:\n");
    for (int k = 1; k <= n; k++) {
        char in[16];
        snprintf(in, sizeof in, k == 1 ? "X" : "T%d", k - 1);
        put(t, "  - {name: conv%d, einsum: \"T%d[c%d,y%d%s] = %s[c%d,%s%sy%d+r%d%s] * "
               "W%d[c%d,c%d,r%d]\"}\n", k, k, k, k, q, in, k - 1, S[k] > 1 ? "2" : "",
            S[k] > 1 ? "*" : "", k, k, q, k, k, k - 1, k);
    }
    put(t, "  bounds: {");
    for (int k = 0; k <= n; k++)
        put(t, "%sc%d: %lld", k ? ", " : "", k, (long long)C[k]);
    for (int k = 1; k <= n; k++)
        put(t, ", y%d: %lld, r%d: %lld", k, (long long)P[k], k, (long long)R[k]);
    if (cols)
        put(t, ", q: %lld", 1 + (long long)nm_pcg32_bounded(r, 2));
    put(t, "}\n");
    return n;
}

/* A chain run on numbers: each operation's output (heap, its extents in
 * ext[i]), from inputs that depend on their coordinates only. */
typedef struct run {
    uint64_t *out[NM_MAX_OPS];
    int64_t ext[NM_MAX_OPS][NM_MAX_RANKS];
} run;

static uint64_t input_at(const char *name, const int64_t *co, int nr)
{
    uint64_t h = 1469598103934665603u;
    for (const char *p = name; *p; p++)
        h = (h ^ (uint8_t)*p) * 1099511628211u;
    for (int k = 0; k < nr; k++)
        h = (h ^ (uint64_t)co[k]) * 1099511628211u;
    return h >> 40;
}

static void run_chain(const nm_chain *c, run *x)
{
    for (int i = 0; i < c->nops; i++) {
        const nm_workload *wl = &c->op[i].wl;
        const nm_dataspace *o = &wl->ds[c->op[i].out];
        int64_t size = 1;
        for (int k = 0; k < o->nranks; k++)
            size *= x->ext[i][k] = nm_axis_extent(wl, &o->rank[k]);
        x->out[i] = nm_calloc((size_t)size, sizeof *x->out[i]);
        ck_assert_ptr_nonnull(x->out[i]);
        int64_t idx[NM_MAX_DIMS] = {0}, points = 1;
        for (int d = 0; d < wl->ndims; d++)
            points *= wl->bound[d];
        for (int64_t p = 0; p < points; p++) {
            int64_t rest = p;
            for (int d = wl->ndims - 1; d >= 0; d--) {
                idx[d] = rest % wl->bound[d];
                rest /= wl->bound[d];
            }
            uint64_t prod = 1;
            int64_t at = 0;
            for (int ds = 0; ds < wl->nds; ds++) {
                const nm_dataspace *s = &wl->ds[ds];
                int64_t co[NM_MAX_RANKS], f = 0;
                for (int k = 0; k < s->nranks; k++) {
                    co[k] = 0;
                    for (int m = 0; m < s->rank[k].nterms; m++)
                        co[k] += s->rank[k].term[m].coef * idx[s->rank[k].term[m].dim];
                }
                int pr = c->op[i].producer[ds];
                const int64_t *ext = ds == c->op[i].out ? x->ext[i] : pr >= 0 ? x->ext[pr] : NULL;
                for (int k = 0; ext && k < s->nranks; k++) {
                    ck_assert(co[k] < ext[k]);
                    f = f * ext[k] + co[k];
                }
                if (ds == c->op[i].out)
                    at = f;
                else
                    prod *= pr >= 0 ? x->out[pr][f] : input_at(s->name, co, s->nranks);
            }
            x->out[i][at] += prod;
        }
    }
}

static void run_fini(const nm_chain *c, run *x)
{
    for (int i = 0; i < c->nops; i++)
        nm_free(x->out[i]);
}

/* Random chains of convolutions whose windows overlap, a range of them
 * fused with the halo recomputed along the last one's rows (random steps,
 * fusion level, shared and own loops, fan-out, bypass): the model agrees
 * with the simulator count by count on the chain as nm_chain_recompute
 * writes it; every step's consumers read what their producers computed in
 * that step; that chain computes, on numbers, what the chain as written
 * computes (every output element equal); and each operation's computes are
 * its points times its recompute factor. */
START_TEST(recompute_agrees)
{
    nm_pcg32 r;
    nm_pcg32_seed(&r, 20261128u, 36u);
    int recomputing = 0, one_step = 0, fanned = 0, bypassing = 0, strided = 0, three = 0, shared_cols = 0;
    int retained = 0, heads = 0;
    static text base, full;
    for (int n = 0; n < HALO_CASES; n++) {
        gcase g;
        base.n = 0;
        int nops = gen_conv_chain(&r, &base);
        memset(&g, 0, sizeof g);
        gen_arch(&r, &g, &base);
        nm_spec plain;
        load(&plain, base.s, NM_NEED_ARCH | NM_NEED_PROBLEM | NM_ACCEPT_CHAIN);
        const nm_chain *c = plain.chain;
        int a = 0, b = nops - 1; /* the whole chain, or a part of it */
        if (nm_pcg32_bounded(&r, 2)) {
            a = (int)nm_pcg32_bounded(&r, (uint32_t)nops - 1);
            b = a + 1 + (int)nm_pcg32_bounded(&r, (uint32_t)(nops - a - 1));
        }
        char rank[16];
        snprintf(rank, sizeof rank, "y%d", b + 1);
        int64_t rows = c->op[b].wl.bound[nm_workload_dim(&c->op[b].wl, rank)];
        int64_t steps = pick_divisor(&r, rows);
        if (steps == 1) /* (one step: the group as without halos, now and then) */
            steps = nm_pcg32_bounded(&r, 4) ? rows : 1;
        nm_chain *tc = nm_calloc(1, sizeof *tc);
        ck_assert_ptr_nonnull(tc);
        *tc = *c;
        char step[NM_NAME_MAX], why[512];
        /* half the cases retain the halo (where the rows allow it) */
        int retain = nm_pcg32_bounded(&r, 2) &&
                     nm_chain_retain(tc, a, b - a + 1, rank, steps, step, why, sizeof why) == NM_OK;
        if (!retain) {
            *tc = *c;
            ck_assert_msg(nm_chain_recompute(tc, a, b - a + 1, rank, steps, step, why,
                                             sizeof why) == NM_OK, "%s\n%s", why, base.s);
        }
        full = base;
        size_t own[NM_MAX_OPS][2];
        put(&full, "mapping:\n  fused:\n");
        for (int i = 0; i < nops;) {
            int len = i == a ? b - a + 1 : 1;
            int F = len > 1 ? (g.fan > 1 ? 0 : (int)nm_pcg32_bounded(&r, 2)) : 2;
            gen_group(&r, g.fan, tc, &full, i, len, F, len > 1 ? rank : NULL, steps, own);
            i += len;
        }
        nm_spec spec;
        load(&spec, full.s, NM_NEED_ARCH | NM_NEED_PROBLEM | NM_NEED_MAPPING | NM_ACCEPT_CHAIN);
        const nm_chain *sc = spec.fchain;
        const nm_fused_map *fm = spec.fmap;
        for (int i = 0; i < nops; i++) /* the parser split it as nm_chain_recompute did */
            ck_assert(!memcmp(sc->op[i].wl.bound, tc->op[i].wl.bound, sizeof tc->op[i].wl.bound));
        nm_fused_model fmdl;
        nm_fused_stats *st = evaluated(&spec, &fmdl, n, full.s);
        for (int i = 0; i < nops; i++) {
            if (i >= a && i <= b)
                bypassing += simulated_op(&spec.arch, sc, fm, st, i, n, full.s);
            double alone = (double)nm_workload_ops(&c->op[i].wl);
            ck_assert(fabs((double)st->op[i].computes - sc->op[i].recompute * alone) <=
                      1e-9 * alone);
            recomputing += sc->op[i].recompute > 1.0;
            heads += sc->op[i].head > 0;
            ck_assert(!retain || sc->op[i].recompute == 1.0);
        }
        retained += retain;
        check_steps(&spec.arch, sc, fm, fm->group_of[a]);
        /* the same numbers out (a retained halo's chain computes its heads
         * apart: check_steps checks that each element is computed as often
         * as written, once a step reads it) */
        if (retain)
            goto counted;
        run x, y;
        run_chain(c, &x);
        run_chain(sc, &y);
        for (int i = 0; i < nops; i++) {
            if (i >= a && i < b)
                continue; /* (an intermediate of the group: held by steps) */
            int64_t size = 1;
            for (int k = 0; k < c->op[i].wl.ds[c->op[i].out].nranks; k++) {
                ck_assert_int_eq(x.ext[i][k], y.ext[i][k]);
                size *= x.ext[i][k];
            }
            for (int64_t e = 0; e < size; e++)
                ck_assert_msg(x.out[i][e] == y.out[i][e], "case %d: %s element %lld differs\n%s",
                              n, c->op[i].name, (long long)e, full.s);
        }
        run_fini(c, &x);
        run_fini(sc, &y);
    counted:
        fanned += g.fan > 1;
        three += b - a == 2;
        one_step += steps == 1;
        strided += strstr(base.s, "2*y") != NULL;
        shared_cols += strstr(base.s, ",q]") != NULL;
        nm_free(st);
        nm_free(tc);
        nm_fused_model_fini(&fmdl);
        nm_spec_fini(&spec);
        nm_spec_fini(&plain);
    }
    ck_assert_int_ge(recomputing, HALO_CASES / 4);
    ck_assert_int_ge(retained, HALO_CASES / 4);
    ck_assert_int_ge(heads, HALO_CASES / 8);
    ck_assert_int_ge(one_step, HALO_CASES / 50);
    ck_assert_int_ge(fanned, HALO_CASES / 4);
    ck_assert_int_ge(bypassing, HALO_CASES / 4);
    ck_assert_int_ge(strided, HALO_CASES / 10);
    ck_assert_int_ge(three, HALO_CASES / 10);
    ck_assert_int_ge(shared_cols, HALO_CASES / 4);
    printf("halos: %d cases, %d operations recomputing rows, %d groups retaining them (%d "
           "heads), %d with a fan-out, %d bypasses, %d strided, %d groups of three, %d with "
           "columns\n", HALO_CASES, recomputing, retained, heads, fanned, bypassing, strided,
           three, shared_cols);
}
END_TEST

/* On a design of one buffer, random fused mappings of random convolution
 * chains recomputing their halos (random splits of the last operation's
 * rows, shared loops and orders) move at least what `bound --curve` gives
 * at the words they need: the chain's curve bounds them (and a curve
 * without its recomputing splits would not: some case beats it). */
START_TEST(recompute_under_curve)
{
    nm_pcg32 r;
    nm_pcg32_seed(&r, 20261128u, 37u);
    static const char onebuf[] =
        "architecture:\n  version: 0.3\n  subtree:\n  - name: sys\n"
        "    attributes: {technology: 45nm}\n    local:\n"
        "    - {name: DRAM, class: DRAM, attributes: {type: LPDDR4, width: 64, datawidth: 16}}\n"
        "    - {name: GLB, class: SRAM, attributes: {depth: 1048576, width: 16, datawidth: 16}}\n"
        "    - {name: MAC, class: intmac, attributes: {datawidth: 16}}\n";
    static text base, full;
    int checked = 0, below_plain = 0, below_recompute = 0, retained = 0;
    for (int n = 0; n < 120; n++) {
        base.n = 0;
        int nops = gen_conv_chain(&r, &base);
        put(&base, "%s", onebuf);
        nm_spec plain;
        load(&plain, base.s, NM_NEED_ARCH | NM_NEED_PROBLEM | NM_ACCEPT_CHAIN);
        const nm_chain *c = plain.chain;
        char rank[16];
        snprintf(rank, sizeof rank, "y%d", nops);
        int64_t rows = c->op[nops - 1].wl.bound[nm_workload_dim(&c->op[nops - 1].wl, rank)];
        int64_t steps = pick_divisor(&r, rows);
        nm_chain *tc = nm_calloc(1, sizeof *tc);
        ck_assert_ptr_nonnull(tc);
        *tc = *c;
        char step[NM_NAME_MAX], why[512];
        int retain = nm_pcg32_bounded(&r, 2) &&
                     nm_chain_retain(tc, 0, nops, rank, steps, step, why, sizeof why) == NM_OK;
        if (!retain) {
            *tc = *c;
            ck_assert(nm_chain_recompute(tc, 0, nops, rank, steps, step, why, sizeof why) ==
                      NM_OK);
        }
        /* shared: every shareable index at DRAM, a random factor (the
         * steps whole), in a random order (retained: the steps innermost);
         * the rest at the buffer */
        char sh[8][NM_NAME_MAX];
        int64_t bound[8], f[8];
        int nsh = nm_fused_shareable(tc, 0, nops, sh, bound, 8);
        for (int k = 0; k < nsh; k++)
            f[k] = strcmp(sh[k], step) ? (retain && !windows_follow(tc, 0, nops, sh[k])
                                              ? 1 : pick_divisor(&r, bound[k]))
                                       : bound[k];
        full = base;
        put(&full, "mapping:\n  fused:\n  - fuse_at: GLB\n    %s: {%s: %lld}\n",
            retain ? "retain" : "recompute", rank, (long long)steps);
        if (nsh) {
            put(&full, "    shared:\n");
            innermost = retain ? step : NULL;
            put_entry(&r, &full, "    ", "DRAM", "temporal", sh, f, nsh);
            innermost = NULL;
        }
        put(&full, "    ops:\n");
        for (int i = 0; i < nops; i++) {
            const nm_workload *wl = &tc->op[i].wl;
            char nm[NM_MAX_DIMS][NM_NAME_MAX];
            int64_t own[NM_MAX_DIMS];
            for (int d = 0; d < wl->ndims; d++) {
                snprintf(nm[d], NM_NAME_MAX, "%s", wl->dim[d]);
                own[d] = wl->bound[d];
                for (int k = 0; k < nsh; k++)
                    if (!strcmp(sh[k], wl->dim[d]))
                        own[d] /= f[k];
            }
            put(&full, "      %s:\n", tc->op[i].name);
            put_entry(&r, &full, "      ", "GLB", "temporal", nm, own, wl->ndims);
        }
        nm_spec spec;
        load(&spec, full.s, NM_NEED_ARCH | NM_NEED_PROBLEM | NM_NEED_MAPPING | NM_ACCEPT_CHAIN);
        nm_fused_model fmdl;
        nm_error err;
        nm_fused_stats *st = evaluated(&spec, &fmdl, n, full.s);
        double need = (double)nm_fused_group_peak(&fmdl, spec.fmap, 0, st, 0);
        double traffic = (double)st->total.backing;
        nm_chain_curve cc;
        ck_assert(nm_roofline_chain_curve(c, 20000000, &cc, &err) == NM_OK);
        double least = INFINITY;
        for (int k = 0; k < cc.n && cc.pt[k].capacity <= need; k++)
            least = cc.pt[k].traffic;
        ck_assert_msg(traffic >= least, "case %d: %g words at %g words of buffer, under the "
                      "curve's %g\n%s", n, traffic, need, least, full.s);
        /* the curve of the groups as written only (no halo split) */
        double plain_least = INFINITY;
        const nm_curve *g = &cc.range[0][nops - 1];
        for (int k = 0; k < g->n; k++)
            if (g->pt[k].nsplit == 0 && g->pt[k].capacity <= need &&
                g->pt[k].traffic < plain_least)
                plain_least = g->pt[k].traffic;
        below_plain += steps > 1 && traffic < plain_least;
        /* and of its points recomputing halos only */
        double recompute_least = INFINITY;
        for (int k = 0; k < g->n; k++)
            if (!g->pt[k].retain && g->pt[k].capacity <= need &&
                g->pt[k].traffic < recompute_least)
                recompute_least = g->pt[k].traffic;
        below_recompute += retain && traffic < recompute_least;
        retained += retain;
        checked++;
        nm_chain_curve_fini(&cc);
        nm_free(st);
        nm_free(tc);
        nm_fused_model_fini(&fmdl);
        nm_spec_fini(&spec);
        nm_spec_fini(&plain);
    }
    ck_assert_int_eq(checked, 120);
    ck_assert_int_ge(below_plain, 1);
    ck_assert_int_ge(retained, 120 / 4);
    ck_assert_int_ge(below_recompute, 1); /* (the curve needs its retaining points) */
    printf("halos under the curve: %d cases (%d retained), %d below the fused group's points as "
           "written, %d retained below its points recomputing\n", checked, retained, below_plain,
           below_recompute);
}
END_TEST

static const char arch_yaml[] =
    "architecture:\n  version: 0.3\n  subtree:\n  - name: sys\n"
    "    attributes: {technology: 45nm}\n    local:\n"
    "    - {name: DRAM, class: DRAM, attributes: {type: LPDDR4, width: 64, datawidth: 16}}\n"
    "    - {name: GLB, class: SRAM, attributes: {depth: 2048, width: 16, datawidth: 16}}\n"
    "    - {name: RF, class: regfile, attributes: {depth: 64, width: 16, datawidth: 16}}\n"
    "    - {name: MAC, class: intmac, attributes: {datawidth: 16}}\n";

static const char chain_yaml[] =
    "problem:\n  chain:\n"
    "  - {name: up, einsum: \"H[m,f] = X[m,d] * W1[d,f]\"}\n"
    "  - {name: down, einsum: \"Y[m,e] = H[m,f] * W2[f,e]\"}\n"
    "  bounds: {m: 16, d: 8, f: 32, e: 8}\n";

/* The expected error of arch + chain + mapping text: its line and words. */
static void expect_error(const char *chain, const char *map, unsigned need, int line,
                         const char *words)
{
    char yaml[8192];
    snprintf(yaml, sizeof yaml, "%s%s%s", arch_yaml, chain, map);
    nm_spec spec;
    nm_error err;
    nm_status st = nm_spec_load_string(&spec, "bad.yaml", yaml, need, &err);
    ck_assert_msg(st != NM_OK, "accepted:\n%s", yaml);
    ck_assert_msg(strstr(err.msg, words) && (line == 0 || err.line == line),
                  "expected line %d with \"%s\", got %d: %s", line, words, err.line, err.msg);
    nm_spec_fini(&spec);
}

#define MAP_HEAD "mapping:\n  fused:\n  - fuse_at: GLB\n"
#define UP_OWN "      up:\n      - {target: GLB, type: temporal, factors: m=4 d=8 f=32}\n" \
               "      - {target: RF, type: temporal, factors: m=1 d=1 f=1}\n"
#define DOWN_OWN "      down:\n      - {target: GLB, type: temporal, factors: m=4 f=32 e=8}\n" \
                 "      - {target: RF, type: temporal, factors: m=1 f=1 e=1}\n"
#define SHARED_M "    shared:\n    - {target: DRAM, type: temporal, factors: m=4}\n"

/* A causal head's scores and output products (qk and pv: the masks
 * their operations get) and its mapping's parts. */
#define CAUSAL(qk, pv, bounds)                                                                 \
    "problem:\n  chain:\n  - {name: qk, einsum: \"S[m,n] = Q[m,e] * K[n,e]\"" qk "}\n"         \
    "  - {name: pv, einsum: \"O[m,d] = S[m,n] * V[n,d]\"" pv "}\n  bounds: {" bounds "}\n"
#define MASK ", causal: [m, n]"
#define CAUSAL_OPS                                                                             \
    "    ops:\n      qk: [{target: GLB, type: temporal, factors: m=4 n=4 e=2}]\n"              \
    "      pv: [{target: GLB, type: temporal, factors: m=4 n=4 d=2}]\n"

/* FlashAttention's online softmax, in part: scores, exponentials (ex:
 * what its entry adds) and the output product (pv: its einsum). */
#define ONLINE(ex, pv)                                                                         \
    "problem:\n  chain:\n  - {name: qk, einsum: \"S[m,n] = Q[m,e] * K[n,e]\"}\n"               \
    "  - {name: ex, einsum: \"E[m,n] = S[m,n]\"" ex "}\n"                                      \
    "  - {name: pv, einsum: \"" pv "\"}\n  bounds: {m: 8, n: 8, e: 2, d: 2}\n"
#define ONLINE_PV "O[m,d] = E[m,n] * V[n,d]"

START_TEST(located_errors)
{
    const unsigned all = NM_NEED_ARCH | NM_NEED_PROBLEM | NM_NEED_MAPPING | NM_ACCEPT_CHAIN;
    /* eight operations of nine indices each: the first lacks 63 of the
     * others' indices and the convolution dimensions, more stand-ins than
     * an operation holds */
    char many[4096];
    size_t n = (size_t)snprintf(many, sizeof many, "problem:\n  chain:\n");
    for (int k = 0; k < 8; k++)
        n += (size_t)snprintf(many + n, sizeof many - n, "  - {name: o%d, einsum: \"T%d[a%d,b%d,"
                              "c%d,d%d,e%d] = X%d[a%d,b%d,c%d,d%d,e%d] * W%d[f%d,g%d,h%d,i%d]\"}\n",
                              k, k, k, k, k, k, k, k, k, k, k, k, k, k, k, k, k, k);
    n += (size_t)snprintf(many + n, sizeof many - n, "  bounds: {");
    for (int k = 0; k < 8; k++)
        n += (size_t)snprintf(many + n, sizeof many - n, "%sa%d: 2, b%d: 2, c%d: 2, d%d: 2, "
                              "e%d: 2, f%d: 2, g%d: 2, h%d: 2, i%d: 2", k ? ", " : "", k, k, k,
                              k, k, k, k, k, k);
    snprintf(many + n, sizeof many - n, "}\n");
    expect_error(many, "", NM_NEED_ARCH | NM_NEED_PROBLEM | NM_ACCEPT_CHAIN, 13,
                 "operation 'o0' lacks more than 64 of the chain's other indices");
    /* the arch takes 10 lines: the chain starts at line 11 */
    expect_error("problem:\n  chain:\n"
                 "  - {name: a, einsum: \"Y[m] = T[m] * W[m]\"}\n"
                 "  - {name: b, einsum: \"T[m] = X[m]\"}\n  bounds: {m: 4}\n", "",
                 NM_NEED_ARCH | NM_NEED_PROBLEM | NM_ACCEPT_CHAIN, 13, "before 'b' writes it");
    expect_error("problem:\n  chain:\n"
                 "  - {name: a, einsum: \"T[m,n] = X[m,n]\"}\n"
                 "  - {name: b, einsum: \"Y[m,n] = T[m,n]\"}\n  bounds: {m: 4, n: 4, k: 2}\n", "",
                 NM_NEED_ARCH | NM_NEED_PROBLEM | NM_ACCEPT_CHAIN, 15, "not an index of any");
    expect_error("problem:\n  chain:\n"
                 "  - {name: a, einsum: \"T[m,n] = X[m,n]\"}\n"
                 "  - {name: b, einsum: \"Y[m,k] = T[m,2*k]\"}\n  bounds: {m: 4, n: 4, k: 2}\n",
                 "", NM_NEED_ARCH | NM_NEED_PROBLEM | NM_ACCEPT_CHAIN, 14, "spans 4 in 'a'");
    /* a shared loop over an index one operation lacks */
    expect_error(chain_yaml, MAP_HEAD "    shared:\n"
                 "    - {target: DRAM, type: temporal, factors: m=4 d=1 e=2}\n    ops:\n"
                 UP_OWN DOWN_OWN, all, 20, "operation 'up' has no index 'e'");
    /* ... over an index the producer of an intermediate reduces */
    expect_error(chain_yaml, MAP_HEAD "    shared:\n"
                 "    - {target: DRAM, type: temporal, factors: d=2}\n    ops:\n"
                 UP_OWN DOWN_OWN, all, 20, "'up' reduces over 'd'");
    /* ... over an index the consumer reads the intermediate by on another axis */
    expect_error("problem:\n  chain:\n"
                 "  - {name: a, einsum: \"T[m,n] = X[m,n]\"}\n"
                 "  - {name: b, einsum: \"Y[m,n] = T[n,m]\"}\n  bounds: {m: 4, n: 4}\n",
                 "mapping:\n  fused:\n  - fuse_at: GLB\n    shared:\n"
                 "    - {target: DRAM, type: temporal, factors: m=2}\n    ops:\n"
                 "      a: [{target: GLB, type: temporal, factors: m=2 n=4}]\n"
                 "      b: [{target: GLB, type: temporal, factors: m=2 n=4}]\n", all, 20,
                 "on another axis than its producer writes it");
    /* a shared loop over rows whose windows overlap, and recomputing them */
#define CONV_CHAIN "problem:\n  chain:\n" \
    "  - {name: a, einsum: \"T[k,y] = X[c,y+r] * W[k,c,r]\"}\n" \
    "  - {name: b, einsum: \"Z[m,p] = T[k,p+s] * V[m,k,s]\"}\n" \
    "  bounds: {c: 2, k: 4, m: 4, y: 10, r: 3, p: 8, s: 3}\n"
#define CONV_OWN "    ops:\n" \
    "      a: [{target: GLB, type: temporal, factors: c=2 k=4 y=4 r=3}]\n" \
    "      b: [{target: GLB, type: temporal, factors: m=4 k=4 p=2 s=3}]\n"
    expect_error(CONV_CHAIN, "mapping:\n  fused:\n  - fuse_at: GLB\n    shared:\n"
                 "    - {target: DRAM, type: temporal, factors: p=4}\n" CONV_OWN, all, 20,
                 "write 'recompute: {INDEX: STEPS}' on the group");
    expect_error(CONV_CHAIN, "mapping:\n  fused:\n  - fuse_at: GLB\n    recompute: {p: 3}\n"
                 CONV_OWN, all, 19, "3 steps do not divide 'p' (8)");
    expect_error(CONV_CHAIN, "mapping:\n  fused:\n  - fuse_at: GLB\n    recompute: {y: 2}\n"
                 CONV_OWN, all, 19, "'y' is not an index of 'b'");
    expect_error(CONV_CHAIN, "mapping:\n  fused:\n  - fuse_at: GLB\n    recompute: {s: 1}\n"
                 CONV_OWN, all, 19, "'s' indexes no axis of 'Z' alone");
    expect_error(CONV_CHAIN, "mapping:\n  fused:\n  - fuse_at: GLB\n    recompute: [p, 4]\n"
                 CONV_OWN, all, 19, "recompute (the last operation's index: its steps)");
    expect_error(CONV_CHAIN, "mapping:\n  fused:\n  - recompute: {p: 4}\n"
                 "    ops:\n      a: [{target: DRAM, type: temporal, factors: c=2 k=4 y=10 r=3}]\n"
                 "  - ops:\n      b: [{target: DRAM, type: temporal, factors: m=4 k=4 p=8 s=3}]\n",
                 all, 18, "a group of one operation has no halo to recompute");
    /* retained halos: one split, not with recompute; the steps innermost,
     * shared, around loops every row-following tensor has; the first
     * step's rows (6 = 4 + the head's 2) tiled as a step's (4) are */
#define RETAIN_OWN(ay, ry) "    ops:\n" \
    "      a:\n      - {target: GLB, type: temporal, factors: c=2 k=4 y=" ay " r=3}\n" \
    "      - {target: RF, type: temporal, factors: c=1 k=1 y=" ry " r=1}\n" \
    "      b: [{target: GLB, type: temporal, factors: m=4 k=4 p=4 s=3}]\n"
    expect_error(CONV_CHAIN, "mapping:\n  fused:\n  - fuse_at: GLB\n    recompute: {p: 2}\n"
                 "    retain: {p: 2}\n" RETAIN_OWN("4", "1"), all, 20,
                 "recomputes its halos or retains them, not both");
    expect_error(CONV_CHAIN, "mapping:\n  fused:\n  - fuse_at: GLB\n    retain: {p: 2, m: 2}\n"
                 RETAIN_OWN("4", "1"), all, 19, "retain splits one index");
    expect_error(CONV_CHAIN, "mapping:\n  fused:\n  - fuse_at: GLB\n    retain: {p: 2}\n"
                 "    shared:\n    - {target: DRAM, type: temporal, factors: p_step=2 k=2, "
                 "permutation: p_step k}\n"
                 "    ops:\n      a: [{target: GLB, type: temporal, factors: c=2 k=2 y=4 r=3}]\n"
                 "      b: [{target: GLB, type: temporal, factors: m=4 k=2 p=4 s=3}]\n", all, 19,
                 "'X' follows the rows and not 'k'");
    expect_error(CONV_CHAIN, "mapping:\n  fused:\n  - fuse_at: GLB\n    retain: {p: 2}\n"
                 "    shared:\n    - {target: DRAM, type: temporal, factors: p_step=2 k=2, "
                 "permutation: k p_step}\n"
                 "    ops:\n      a: [{target: GLB, type: temporal, factors: c=2 k=2 y=4 r=3}]\n"
                 "      b: [{target: GLB, type: temporal, factors: m=4 k=2 p=4 s=3}]\n", all, 19,
                 "the shared loop over 'k' at 'DRAM' runs inside the steps 'p_step'");
    expect_error(CONV_CHAIN, "mapping:\n  fused:\n  - fuse_at: GLB\n    retain: {p: 2}\n"
                 RETAIN_OWN("4 p_step=2", "1"), all, 19,
                 "'a' loops over the steps 'p_step' at 'GLB'");
    expect_error(CONV_CHAIN, "mapping:\n  fused:\n  - fuse_at: GLB\n    retain: {p: 2}\n"
                 "    shared:\n    - {target: DRAM, type: temporal, factors: p_step=2}\n"
                 RETAIN_OWN("1", "4"), all, 19,
                 "'a' computes 6 rows along 'y' at its first step");
    expect_error(CONV_CHAIN, "mapping:\n  fused:\n  - fuse_at: GLB\n    retain: {p: 3}\n"
                 RETAIN_OWN("4", "1"), all, 19, "cannot retain halos along 'p' in 3 steps");
    {
        /* steps spread over a fan-out (two PEs below GLB, fused at RF) */
        static const char fanned[] =
            "architecture:\n  version: 0.3\n  subtree:\n  - name: sys\n"
            "    attributes: {technology: 45nm}\n    local:\n"
            "    - {name: DRAM, class: DRAM, attributes: {type: LPDDR4, width: 64, datawidth: 16}}\n"
            "    - {name: GLB, class: SRAM, attributes: {depth: 2048, width: 16, datawidth: 16}}\n"
            "    subtree:\n    - name: PE[0..1]\n      local:\n"
            "      - {name: RF, class: regfile, attributes: {depth: 4096, width: 16, datawidth: 16, "
            "meshX: 2}}\n"
            "      - {name: MAC, class: intmac, attributes: {datawidth: 16, meshX: 2}}\n"
            CONV_CHAIN
            "mapping:\n  fused:\n  - fuse_at: RF\n    retain: {p: 2}\n"
            "    shared:\n    - {target: GLB, type: spatial, factors: p_step=2}\n"
            "    ops:\n      a: [{target: RF, type: temporal, factors: c=2 k=4 y=4 r=3}]\n"
            "      b: [{target: RF, type: temporal, factors: m=4 k=4 p=4 s=3}]\n";
        nm_spec spec;
        nm_error err;
        ck_assert(nm_spec_load_string(&spec, "bad.yaml", fanned, all, &err) != NM_OK);
        ck_assert_msg(strstr(err.msg, "the steps of a retained halo run one after the other: "
                                      "'GLB' has a spatial factor over 'p_step'") &&
                          err.line == 22, "line %d: %s", err.line, err.msg); /* retain: */
        nm_spec_fini(&spec);
    }
    /* an intermediate also read after the group */
    expect_error("problem:\n  chain:\n"
                 "  - {name: a, einsum: \"T[k,y] = X[c,y+r] * W[k,c,r]\"}\n"
                 "  - {name: b, einsum: \"Z[k,p] = T[k,p+s] * V[k,s]\"}\n"
                 "  - {name: c, einsum: \"U[k,y] = T[k,y] * Q[k]\"}\n"
                 "  bounds: {c: 2, k: 4, y: 10, r: 3, p: 8, s: 3}\n",
                 "mapping:\n  fused:\n  - fuse_at: GLB\n    recompute: {p: 2}\n"
                 "    ops:\n      a: []\n      b: []\n  - ops:\n      c: []\n", all, 20,
                 "'T' is read inside the group and after it");
    /* the steps' bands are the rows the windows read: p=2 s=3 need y=4 */
    expect_error(CONV_CHAIN, "mapping:\n  fused:\n  - fuse_at: GLB\n    recompute: {p: 4}\n"
                 "    shared:\n    - {target: DRAM, type: temporal, factors: p_step=4}\n"
                 "    ops:\n"
                 "      a: [{target: GLB, type: temporal, factors: c=2 k=4 y=10 r=3}]\n"
                 "      b: [{target: GLB, type: temporal, factors: m=4 k=4 p=2 s=3}]\n", all, 23,
                 "y=10");
    /* an intermediate also read after the group */
    expect_error("problem:\n  chain:\n"
                 "  - {name: a, einsum: \"T[m] = X[m]\"}\n"
                 "  - {name: b, einsum: \"U[m] = T[m]\"}\n"
                 "  - {name: c, einsum: \"Y[m] = T[m] * U[m]\"}\n  bounds: {m: 4}\n",
                 "mapping:\n  fused:\n  - fuse_at: GLB\n    ops:\n"
                 "      a: [{target: GLB, type: temporal, factors: m=4}]\n"
                 "      b: [{target: GLB, type: temporal, factors: m=4}]\n"
                 "  - ops:\n      c: [{target: DRAM, type: temporal, factors: m=4}]\n", all, 19,
                 "'T' passes from 'a' to a later operation of this group and to one after it");
    /* an intermediate kept in the backing store */
    expect_error(chain_yaml, MAP_HEAD SHARED_M
                 "    - {target: DRAM, type: bypass, keep: [H, X]}\n    ops:\n" UP_OWN DOWN_OWN,
                 all, 21, "'H' is an intermediate of the group");
    expect_error(chain_yaml, "mapping:\n  fused:\n  - ops:\n" UP_OWN DOWN_OWN, all, 18,
                 "give 'fuse_at'");
    /* bypassed at the fusion level */
    expect_error(chain_yaml, MAP_HEAD SHARED_M "    ops:\n" UP_OWN
                 "      - {target: GLB, type: bypass, bypass: [H]}\n" DOWN_OWN, all, 25,
                 "cannot bypass it");
    /* an operation's own entry above the fusion level */
    expect_error(chain_yaml, MAP_HEAD "    ops:\n"
                 "      up:\n      - {target: DRAM, type: temporal, factors: m=4}\n", all, 21,
                 "above the fusion level");
    expect_error(chain_yaml, MAP_HEAD SHARED_M "    ops:\n" DOWN_OWN, all, 22,
                 "out of order");
    expect_error(chain_yaml, MAP_HEAD SHARED_M "    ops:\n" UP_OWN "      dwn: []\n", all, 25,
                 "did you mean 'down'");
    expect_error(chain_yaml, MAP_HEAD SHARED_M "    ops:\n" UP_OWN, all, 18,
                 "'down' is in no group");
    expect_error(chain_yaml, "mapping:\n- {target: GLB, type: temporal, factors: m=4}\n", all, 17,
                 "its mapping is {fused");
    /* commands that take one operation refuse a chain */
    expect_error(chain_yaml, "", NM_NEED_ARCH | NM_NEED_PROBLEM, 12, "takes one operation");
    /* causal masks as written */
    expect_error(CAUSAL(", causal: [m]", "", "m: 8, n: 8, e: 2, d: 2"), "",
                 NM_NEED_ARCH | NM_NEED_PROBLEM | NM_ACCEPT_CHAIN, 13, "two indices, [rows, keys]");
    expect_error(CAUSAL(", causal: [m, x]", "", "m: 8, n: 8, e: 2, d: 2"), "",
                 NM_NEED_ARCH | NM_NEED_PROBLEM | NM_ACCEPT_CHAIN, 13, "'x' is not an index of 'qk'");
    expect_error(CAUSAL(MASK, MASK, "m: 8, n: 4, e: 2, d: 2"), "",
                 NM_NEED_ARCH | NM_NEED_PROBLEM | NM_ACCEPT_CHAIN, 13, "at least as many keys");
    expect_error("problem:\n  attention: {heads: 1, seq: 8, kv: 4, head_dim: 2, causal: true}\n",
                 "", NM_NEED_ARCH | NM_NEED_PROBLEM | NM_ACCEPT_CHAIN, 12,
                 "at least as many keys (kv 4) as queries (seq 8)");
    /* online softmaxes */
    unsigned chain = NM_NEED_ARCH | NM_NEED_PROBLEM | NM_ACCEPT_CHAIN;
    expect_error(ONLINE(", online: n", ONLINE_PV), "", chain, 14, "'ex' is 'mac', not 'op: exp'");
    expect_error(ONLINE(", op: exp, online: e", ONLINE_PV), "", chain, 14,
                 "'e' is not an index of 'ex''s output 'E'");
    expect_error(ONLINE(", op: exp, online: n", "O[d] = E[m,n] * V[n,d]"), "", chain, 15,
                 "'pv' sums the online exponentials 'E' over 'n' but its output 'O' lacks their "
                 "index 'm'");
    expect_error(ONLINE(", op: exp, online: n", ONLINE_PV),
                 MAP_HEAD "    shared:\n    - {target: DRAM, type: temporal, factors: n=4}\n"
                 "    ops:\n      qk: [{target: GLB, type: temporal, factors: m=8 n=2 e=2}]\n"
                 "      ex: [{target: GLB, type: temporal, factors: m=8 n=2}]\n"
                 "  - ops:\n      pv: [{target: DRAM, type: temporal, factors: m=8 n=8 d=2}]\n",
                 all, 21, "'pv', which sums them over it, is not in the group");
}
END_TEST

/* Evaluates arch + the 2-GEMM chain (bounds b) on mapping map. */
/* The causal mask of chain under map (one group, whose first operation is
 * masked) where the group breaks a rule of skipping steps: the model
 * computes every step, as the rectangle, and says which rule (words). */
static void fallback(const char *chain, const char *map, const char *words)
{
    char yaml[8192];
    snprintf(yaml, sizeof yaml, "%s%s%s", arch_yaml, chain, map);
    nm_spec spec;
    load(&spec, yaml, NM_NEED_ARCH | NM_NEED_PROBLEM | NM_NEED_MAPPING | NM_ACCEPT_CHAIN);
    const nm_chain *c = spec.fchain;
    nm_causal_plan p;
    char why[NM_ERROR_MSG_MAX];
    ck_assert(!nm_fused_causal_plan(&spec.arch, c, &spec.fmap->group[0], spec.fmap->map, &p, why,
                                    sizeof why));
    ck_assert_msg(!p.skips && strstr(why, words), "expected \"%s\", got: %s", words, why);
    nm_fused_model fmdl;
    nm_fused_stats *st = evaluated(&spec, &fmdl, 0, yaml);
    ck_assert_uint_eq(st->op[0].computes, (uint64_t)nm_workload_macs(&c->op[0].wl));
    nm_free(st);
    nm_fused_model_fini(&fmdl);
    nm_spec_fini(&spec);
}

START_TEST(causal_fallbacks)
{
    const char *both = CAUSAL(MASK, MASK, "m: 8, n: 8, e: 2, d: 2");
    fallback(both, MAP_HEAD "    shared:\n"
                 "    - {target: DRAM, type: temporal, factors: m=2 n=2, permutation: m n}\n"
                 CAUSAL_OPS,
                 "the shared loop over 'm' runs inside the one over the keys 'n'");
    fallback(both, "mapping:\n  fused:\n  - fuse_at: RF\n    shared:\n"
                 "    - {target: DRAM, type: temporal, factors: n=2}\n"
                 "    - {target: GLB, type: temporal, factors: m=2}\n    ops:\n"
                 "      qk: [{target: RF, type: temporal, factors: m=4 n=4 e=2}]\n"
                 "      pv: [{target: RF, type: temporal, factors: m=4 n=4 d=2}]\n",
                 "the shared loop over 'm' steps at 'GLB'");
    fallback(CAUSAL(MASK, "", "m: 8, n: 8, e: 2, d: 2"), MAP_HEAD "    shared:\n"
                 "    - {target: DRAM, type: temporal, factors: m=2 n=2, permutation: n m}\n"
                 CAUSAL_OPS,
                 "that 'pv' does not have");
    fallback("problem:\n  chain:\n  - {name: a, einsum: \"T[m,n] = A[m,n,e] * B[e]\", "
                 "causal: [m, n]}\n  bounds: {m: 4, n: 4, e: 2}\n", MAP_HEAD "    shared:\n"
                 "    - {target: DRAM, type: temporal, factors: n=2}\n    ops:\n"
                 "      a: [{target: GLB, type: temporal, factors: m=4 n=2 e=2}]\n",
                 "'B' of 'a' follows neither the rows 'm' nor the keys 'n'");
    fallback(both, MAP_HEAD "    shared:\n"
                 "    - {target: DRAM, type: temporal, factors: n=2 e=2, permutation: n e}\n"
                 "    ops:\n      qk: [{target: GLB, type: temporal, factors: m=8 n=4 e=1}]\n"
                 "  - ops:\n      pv: [{target: DRAM, type: temporal, factors: m=8 n=8 d=2}]\n",
                 "the shared loop over 'e' steps, and 'S' of 'qk' does not follow it");
}
END_TEST

#undef CAUSAL
#undef MASK
#undef CAUSAL_OPS

static int eval_text(const char *arch, const char *b, const char *map, nm_fused_stats *st,
                     char *why, size_t size)
{
    char yaml[8192];
    snprintf(yaml, sizeof yaml, "%sproblem:\n  chain:\n"
             "  - {name: up, einsum: \"H[m,f] = X[m,d] * W1[d,f]\"}\n"
             "  - {name: down, einsum: \"Y[m,e] = H[m,f] * W2[f,e]\"}\n"
             "  bounds: %s\n%s", arch, b, map);
    nm_spec spec;
    load(&spec, yaml, NM_NEED_ARCH | NM_NEED_PROBLEM | NM_NEED_MAPPING | NM_ACCEPT_CHAIN);
    nm_fused_model fmdl;
    nm_error err;
    ck_assert(nm_fused_model_init(&fmdl, &spec.arch, spec.fchain, &err) == NM_OK);
    int ok = nm_fused_model_eval(&fmdl, spec.fmap, st);
    nm_fused_describe_invalid(st, &spec.arch, spec.fchain, spec.fmap, why, size);
    nm_fused_model_fini(&fmdl);
    nm_spec_fini(&spec);
    return ok;
}

static const char capacity_map[] =
    "mapping:\n  fused:\n  - fuse_at: GLB\n"
    "    shared:\n    - {target: DRAM, type: temporal, factors: m=4}\n    ops:\n"
    "      up:\n      - {target: GLB, type: temporal, factors: m=4 d=32 f=32, permutation: fdm}\n"
    "      - {target: RF, type: temporal, factors: m=1 d=1 f=1}\n"
    "      down:\n      - {target: GLB, type: temporal, factors: m=4 f=32 e=32, permutation: efm}\n"
    "      - {target: RF, type: temporal, factors: m=1 f=1 e=1}\n";

/* While one operation of a group runs, a level holds its tiles and what
 * the others keep there from step to step: the weights at the global
 * buffer (the shared loop over m does not move them), not their register
 * tiles (the operations' own loops move those every step). */
START_TEST(group_capacity)
{
    nm_fused_stats *st = nm_calloc(1, sizeof *st);
    char why[512];
    /* GLB: 2048 words.  up: X 4x32 = 128, W1 32x32 = 1024, H 4x32 = 128;
     * down: H, W2 1024, Y 128.  While up runs, down's W2 stays: 1280 +
     * 1024 = 2304 > 2048; each operation alone fits. */
    ck_assert(!eval_text(arch_yaml, "{m: 16, d: 32, f: 32, e: 32}", capacity_map, st, why,
                         sizeof why));
    ck_assert_int_eq(st->bad_op, -1);
    ck_assert_int_eq(st->bad_level, 1);
    ck_assert_uint_eq(st->need, 2304);
    ck_assert_uint_eq(st->limit, 2048);
    ck_assert_msg(strstr(why, "2304 words at 'GLB'"), "%s", why);
    for (int i = 0; i < 2; i++)
        ck_assert_int_eq(st->op[i].invalid.kind, NM_VALID);
    /* Smaller weights (16x32): 1280 - 512 + 512 = 1792 fits.  The
     * registers hold 3 words of each operation (one of each tensor); with
     * four registers both operations run, since neither keeps a register
     * tile from step to step. */
    char small[2048];
    const char *rf = strstr(arch_yaml, "depth: 64");
    snprintf(small, sizeof small, "%.*sdepth: 4%s", (int)(rf - arch_yaml), arch_yaml, rf + 9);
    static const char map16[] =
        "mapping:\n  fused:\n  - fuse_at: GLB\n"
        "    shared:\n    - {target: DRAM, type: temporal, factors: m=4}\n    ops:\n"
        "      up:\n      - {target: GLB, type: temporal, factors: m=4 d=16 f=32, permutation: fdm}\n"
        "      - {target: RF, type: temporal, factors: m=1 d=1 f=1}\n"
        "      down:\n      - {target: GLB, type: temporal, factors: m=4 f=32 e=16, permutation: efm}\n"
        "      - {target: RF, type: temporal, factors: m=1 f=1 e=1}\n";
    ck_assert_msg(eval_text(small, "{m: 16, d: 16, f: 32, e: 16}", map16, st, why, sizeof why),
                  "%s", why);
    /* registers of 2 words hold neither operation's 3 */
    rf = strstr(small, "depth: 4");
    char tiny[2048];
    snprintf(tiny, sizeof tiny, "%.*sdepth: 2%s", (int)(rf - small), small, rf + 8);
    ck_assert(!eval_text(tiny, "{m: 16, d: 16, f: 32, e: 16}", map16, st, why, sizeof why));
    ck_assert_int_eq(st->bad_op, 0);
    nm_free(st);
}
END_TEST

/* A retained halo: pw (Y = X * W, 16 channels in, 4 out) and a 3-wide
 * dw reading Y through windows, 8 output rows in 2 steps of 4 (pw's head:
 * 2 rows).  At the global buffer a step of pw holds X 16 x 4 = 64 and
 * W 64 words, its 4 new rows of Y inside dw's window; dw holds the window
 * of Y, 4 x 6 = 24 words, D 12 and Z 16, and keeps the window and D from
 * step to step (36), pw its W (64).  Steps: pw 128 + 36 = 164, dw 52 +
 * 64 = 116.  The first step's pw reads 6 rows of X (96 words): 160 + 36 =
 * 196, the peak.  And pw computes 10 rows in all, dw 8: no recompute. */
START_TEST(retained_capacity)
{
    static const char fmt[] =
        "architecture:\n  version: 0.3\n  subtree:\n  - name: sys\n"
        "    attributes: {technology: 45nm}\n    local:\n"
        "    - {name: DRAM, class: DRAM, attributes: {type: LPDDR4, width: 64, datawidth: 16}}\n"
        "    - {name: GLB, class: SRAM, attributes: {depth: %d, width: 16, datawidth: 16}}\n"
        "    - {name: RF, class: regfile, attributes: {depth: 64, width: 16, datawidth: 16}}\n"
        "    - {name: MAC, class: intmac, attributes: {datawidth: 16}}\n"
        "problem:\n  chain:\n"
        "  - {name: pw, einsum: \"Y[k,y] = X[c,y] * W[k,c]\"}\n"
        "  - {name: dw, einsum: \"Z[k,p] = Y[k,p+r] * D[k,r]\"}\n"
        "  bounds: {c: 16, k: 4, y: 10, p: 8, r: 3}\n"
        "mapping:\n  fused:\n  - fuse_at: GLB\n    retain: {p: 2}\n"
        "    shared:\n    - {target: DRAM, type: temporal, factors: p_step=2}\n    ops:\n"
        "      pw:\n      - {target: GLB, type: temporal, factors: k=4 y=4 c=16, permutation: c y k}\n"
        "      - {target: RF, type: temporal, factors: k=1 y=1 c=1}\n"
        "      dw:\n      - {target: GLB, type: temporal, factors: k=4 p=4 r=3, permutation: r p k}\n"
        "      - {target: RF, type: temporal, factors: k=1 p=1 r=1}\n";
    for (int depth = 195; depth <= 196; depth++) {
        char yaml[4096];
        snprintf(yaml, sizeof yaml, fmt, depth);
        nm_spec spec;
        load(&spec, yaml, NM_NEED_ARCH | NM_NEED_PROBLEM | NM_NEED_MAPPING | NM_ACCEPT_CHAIN);
        nm_fused_model fmdl;
        nm_error err;
        ck_assert(nm_fused_model_init(&fmdl, &spec.arch, spec.fchain, &err) == NM_OK);
        nm_fused_stats *st = nm_calloc(1, sizeof *st);
        ck_assert_ptr_nonnull(st);
        int ok = nm_fused_model_eval(&fmdl, spec.fmap, st);
        ck_assert_int_eq(ok, depth == 196);
        if (ok) {
            ck_assert_uint_eq(nm_fused_group_peak(&fmdl, spec.fmap, 0, st, 1), 196);
            ck_assert_uint_eq(st->op[0].computes, 4 * 10 * 16);
            ck_assert_uint_eq(st->op[1].computes, 4 * 8 * 3);
        } else {
            ck_assert_int_eq(st->bad_level, 1);
            ck_assert_uint_eq(st->need, 196);
        }
        nm_free(st);
        nm_fused_model_fini(&fmdl);
        nm_spec_fini(&spec);
    }
}
END_TEST

/* Each operation's tensors answer to the roles a design's constraints name
 * (Inputs, Weights, Outputs), and Timeloop's convolution dimensions stand
 * for size-1 dimensions, so a design written for layers constrains a chain. */
START_TEST(roles)
{
    char yaml[8192];
    snprintf(yaml, sizeof yaml, "%s%s", arch_yaml,
             "problem:\n  chain:\n"
             "  - {name: up, einsum: \"H[m,f] = X[m,d] * W1[d,f]\"}\n"
             "  - {name: act, einsum: \"A[m,f] = H[m,f]\"}\n"
             "  - {name: down, einsum: \"Y[m,e] = A[m,f] * W2[f,e]\", roles: {Weights: A, "
             "Inputs: W2}}\n"
             "  bounds: {m: 16, d: 8, f: 32, e: 8}\n"
             "architecture_constraints:\n  targets:\n"
             "  - {target: GLB, type: bypass, keep: [Weights], bypass: [Inputs]}\n"
             "  - {target: RF, type: temporal, factors: C=1 R=1 S=1, permutation: MPQN}\n");
    nm_spec spec;
    load(&spec, yaml, NM_NEED_ARCH | NM_NEED_PROBLEM | NM_ACCEPT_CHAIN);
    const nm_chain *c = spec.chain;
    ck_assert_int_eq(nm_workload_ds(&c->op[0].wl, "Inputs"), nm_workload_ds(&c->op[0].wl, "X"));
    ck_assert_int_eq(nm_workload_ds(&c->op[0].wl, "Weights"), nm_workload_ds(&c->op[0].wl, "W1"));
    ck_assert_int_eq(nm_workload_ds(&c->op[0].wl, "Outputs"), nm_workload_ds(&c->op[0].wl, "H"));
    ck_assert_int_lt(nm_workload_ds(&c->op[1].wl, "Weights"), 0); /* act has one input */
    ck_assert(nm_workload_absent_ds(&c->op[1].wl, "Weights"));
    ck_assert_int_eq(nm_workload_ds(&c->op[2].wl, "Weights"), nm_workload_ds(&c->op[2].wl, "A"));
    ck_assert_int_eq(nm_workload_ds(&c->op[2].wl, "Inputs"), nm_workload_ds(&c->op[2].wl, "W2"));
    ck_assert(nm_workload_unit_dim(&c->op[0].wl, "C") && nm_workload_unit_dim(&c->op[0].wl, "M"));
    /* the constraints by role: the mapspace of up keeps W1 at GLB and bypasses X */
    nm_mapspace *ms = nm_calloc(1, sizeof *ms);
    nm_error err;
    nm_status st = nm_mapspace_init(ms, &spec.arch, &c->op[0].wl, spec.constraints, NULL, &err);
    ck_assert_msg(st == NM_OK, "%s", err.msg);
    ck_assert_uint_eq(ms->level[1].keep, 1u << nm_workload_ds(&c->op[0].wl, "W1"));
    ck_assert_uint_eq(ms->level[1].bypass, 1u << nm_workload_ds(&c->op[0].wl, "X"));
    nm_free(ms);
    nm_spec_fini(&spec);
    /* a role naming no tensor of the operation */
    expect_error("problem:\n  chain:\n"
                 "  - {name: a, einsum: \"T[m] = X[m]\", roles: {Weights: W}}\n"
                 "  bounds: {m: 4}\n", "", NM_NEED_ARCH | NM_NEED_PROBLEM | NM_ACCEPT_CHAIN, 13,
                 "'W' is not a tensor of 'a'");
}
END_TEST

/* A non-multiply operation moves what a multiply-accumulate of the same
 * einsum moves and differs only in what each compute costs: an addition
 * or a comparison the adder's share of the MAC, a multiplication the
 * multiplier's (the two make the MAC), an exponential or a division a
 * whole MAC (no built-in figure), a copy nothing, and an energy the ERT
 * gives for the kind as given. */
START_TEST(operation_kinds)
{
    static const char *const kinds[] = {"mac", "add", "mul", "max", "exp", "div", "copy"};
    nm_stats ref, st;
    double e_mac = 0.0, pj[7];
    for (int k = 0; k < 7; k++) {
        char yaml[4096];
        snprintf(yaml, sizeof yaml, "%sproblem:\n  chain:\n"
                 "  - {name: up, einsum: \"H[m,f] = X[m,d] * W1[d,f]\"}\n"
                 "  - {name: act, op: %s, einsum: \"A[m,f] = H[m,f] * B[f]\"}\n"
                 "  bounds: {m: 16, d: 8, f: 32}\n", arch_yaml, kinds[k]);
        nm_spec spec;
        load(&spec, yaml, NM_NEED_ARCH | NM_NEED_PROBLEM | NM_ACCEPT_CHAIN);
        const nm_chain *c = spec.chain;
        ck_assert_str_eq(nm_op_kind_name(c->op[1].kind), kinds[k]);
        nm_fused_model fmdl;
        nm_error err;
        ck_assert(nm_fused_model_init(&fmdl, &spec.arch, c, &err) == NM_OK);
        ck_assert(!fmdl.op_arch[0] && (k == 0) == !fmdl.op_arch[1]);
        nm_mapping m;
        nm_mapping_init(&m, &spec.arch, &c->op[1].wl);
        for (int d = 0; d < c->op[1].wl.ndims; d++) /* the loops at the global buffer */
            m.level[1].tfactor[d] = c->op[1].wl.bound[d];
        int ok = nm_model_eval(&fmdl.op[1], &m, k ? &st : &ref, NULL);
        char why[256];
        nm_invalid_describe(&(k ? &st : &ref)->invalid, &spec.arch, &c->op[1].wl, why, sizeof why);
        ck_assert_msg(ok, "%s", why);
        const char *how;
        pj[k] = nm_arith_op_energy(&spec.arch.arith, c->op[1].kind, &how);
        if (k == 0) {
            e_mac = spec.arch.arith.e_compute;
            ck_assert(pj[0] == e_mac);
        } else {
            /* the same accesses; the computes' energy is what differs */
            ck_assert_uint_eq(st.computes, ref.computes);
            ck_assert_uint_eq(st.cycles, ref.cycles);
            for (int l = 0; l < spec.arch.nlevels; l++)
                for (int ds = 0; ds < c->op[1].wl.nds; ds++) {
                    ck_assert_uint_eq(st.level[l].ds[ds].reads, ref.level[l].ds[ds].reads);
                    ck_assert_uint_eq(st.level[l].ds[ds].fills, ref.level[l].ds[ds].fills);
                    ck_assert_uint_eq(st.level[l].ds[ds].updates, ref.level[l].ds[ds].updates);
                    ck_assert(st.level[l].ds[ds].energy == ref.level[l].ds[ds].energy);
                }
            double want = ref.energy + (double)ref.computes * (pj[k] - e_mac);
            ck_assert_msg(fabs(st.energy - want) <= 1e-9 * ref.energy, "%s: %.17g vs %.17g",
                          kinds[k], st.energy, want);
        }
        nm_fused_model_fini(&fmdl);
        nm_spec_fini(&spec);
    }
    ck_assert(pj[1] > 0.0 && pj[2] > pj[1] && fabs(pj[1] + pj[2] - e_mac) <= 1e-12 * e_mac);
    ck_assert(pj[3] == pj[1] && pj[4] == e_mac && pj[5] == e_mac && pj[6] == 0.0);
    /* an ERT's figure for the kind is taken as given */
    nm_arith A;
    memset(&A, 0, sizeof A);
    A.e_compute = 2.0;
    A.e_op[NM_OP_EXP] = 5.5;
    A.op_given = 1u << NM_OP_EXP;
    const char *how;
    ck_assert(nm_arith_op_energy(&A, NM_OP_EXP, &how) == 5.5);
    ck_assert(nm_arith_op_energy(&A, NM_OP_DIV, &how) == 2.0);
}
END_TEST

static Suite *fusion_suite(void)
{
    Suite *s = suite_create("fusion");
    TCase *tc = tcase_create("fusion");
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, simulator_agrees);
    tcase_add_test(tc, causal_agrees);
    tcase_add_test(tc, causal_under_curve);
    tcase_add_test(tc, online_agrees);
    tcase_add_test(tc, recompute_agrees);
    tcase_add_test(tc, recompute_under_curve);
    tcase_add_test(tc, located_errors);
    tcase_add_test(tc, causal_fallbacks);
    tcase_add_test(tc, group_capacity);
    tcase_add_test(tc, retained_capacity);
    tcase_add_test(tc, roles);
    tcase_add_test(tc, operation_kinds);
    suite_add_tcase(s, tc);
    return s;
}

TEST_MAIN(fusion_suite)
