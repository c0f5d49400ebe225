/* nest.c — loop nest construction and data-movement analysis; see nest.h.
 *
 * Terms used below.  A loop's working set is the part of a data space touched
 * by that loop and everything inside it: an axis-aligned box whose extent is
 * fixed per loop and whose corner moves with the indices of the enclosing
 * loops.  A delta is what a working set needs that the previous one did not
 * have: nothing, the full box, or the box minus the previous box.
 *
 * The accesses a level receives are the deltas of its child's working set
 * (the child's boundary loop), one per "call": each temporal loop above the
 * boundary contributes its first step and one steady-state step standing for
 * the other n-1, so the calls form a self-similar sequence
 *
 *     seq(0) = one call
 *     seq(j) = seq(j-1)  then, after jump J_j,  seq(j-1) weighted n_j - 1
 *
 * over the branching loops q_1 < ... < q_k above the boundary, where J_j is
 * the move from the last call of the first half to the first of the second:
 * one step of q_j minus the steps of q_1..q_{j-1}.  Whether a call's delta is
 * the full box or the box minus the previous one depends only on a small
 * state (the stride of the last move; for spatial fan-outs also the previous
 * delta's shape), so the sum over the sequence is a recursion over j memoized
 * on that state (see rest()): its cost grows with the number of loops times
 * the few states reached, not with 2^k.
 */
#include <config.h>

#include <math.h>
#include <pthread.h>
#include <stddef.h>
#include <string.h>

#include "nestmap/alloc.h"
#include "nestmap/nest.h"

#define R NM_MAX_RANKS

void nm_nest_build(nm_nest *nest, const nm_mapping *m, const nm_arch *arch, const nm_workload *wl)
{
    int n = 0, imperfect = 0, uneven = 0;
    nest->nlevels = arch->nlevels;
    for (int s = 0; s < arch->nlevels; s++) {
        const nm_level_map *lm = &m->level[s];
        nest->first[s] = n;
        if (arch->level[s].fanoutX * arch->level[s].fanoutY > 1) {
            for (int i = 0; i < wl->ndims; i++) {
                int d = lm->sorder[i];
                if (lm->sfactor[d] > 1) {
                    int64_t r = nm_level_sresidual(lm, d);
                    nest->loop[n++] = (nm_loop){lm->sfactor[d], r, (int8_t)d,
                                                (int8_t)(i < lm->split ? NM_SPACE_X : NM_SPACE_Y),
                                                (int8_t)s};
                    uneven |= r != lm->sfactor[d];
                }
            }
        }
        int temporal = 0;
        for (int i = 0; i < wl->ndims; i++) {
            int d = lm->torder[i];
            if (lm->tfactor[d] > 1) {
                int64_t r = nm_level_residual(lm, d);
                nest->loop[n++] = (nm_loop){lm->tfactor[d], r, (int8_t)d, NM_TIME, (int8_t)s};
                imperfect |= r != lm->tfactor[d];
                temporal++;
            }
        }
        if (!temporal) /* every level keeps a boundary loop */
            nest->loop[n++] = (nm_loop){1, 1, (int8_t)(wl->ndims - 1), NM_TIME, (int8_t)s};
        nest->boundary[s] = n - 1;
    }
    nest->nloops = n;
    nest->imperfect = imperfect | uneven;
    nest->uneven = uneven;
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

/* Dimensions with a loop above each loop that can be on a non-last
 * iteration (trip count 2 or more in its last instance): busy[l]. */
static void busy_above(const nm_nest *nest, uint32_t *busy)
{
    uint32_t b = 0;
    for (int l = nest->nloops - 1; l >= 0; l--) {
        busy[l] = b;
        if (nest->loop[l].residual >= 2)
            b |= 1u << nest->loop[l].dim;
    }
}

void nm_nest_shape(const nm_nest *nest, const nm_workload *wl, nm_nest_result *out)
{
    /* span: extent of each dimension below the current loop; res: the same
     * in the last instance of every loop above (residuals applied).  A tile
     * is the largest working set its level ever holds: full extents, except
     * along dimensions whose loops above are always on their last iteration
     * (Timeloop: padded tiles inside, the true tensor at the top). */
    int64_t span[NM_MAX_DIMS], res[NM_MAX_DIMS], ext[NM_MAX_DIMS];
    uint64_t spatial[NM_MAX_DIMS];
    uint32_t busy[NM_MAX_LOOPS];
    if (nest->imperfect)
        busy_above(nest, busy);
    for (int d = 0; d < wl->ndims; d++) {
        span[d] = res[d] = 1;
        spatial[d] = 1;
    }
    memset(out, 0, offsetof(nm_nest_result, noc)); /* (noc: the analysis's) */
    for (int s = 0; s < nest->nlevels && nest->uneven; s++)
        out->used[s] = 1.0;
    out->temporal_steps = 1;
    out->arith_x = out->arith_y = 1;
    for (int l = 0; l < nest->nloops; l++) {
        const nm_loop *lp = &nest->loop[l];
        res[lp->dim] += (lp->residual - 1) * span[lp->dim];
        span[lp->dim] *= lp->end;
        if (lp->space == NM_TIME)
            out->temporal_steps *= (uint64_t)lp->end;
        else if (lp->space == NM_SPACE_X)
            out->arith_x *= (uint64_t)lp->end;
        else
            out->arith_y *= (uint64_t)lp->end;
        if (lp->space != NM_TIME)
            spatial[lp->dim] *= (uint64_t)lp->end;
        int s = lp->level;
        int is_master = lp->space != NM_TIME &&
                        (l + 1 == nest->nloops || nest->loop[l + 1].space == NM_TIME);
        if (l == nest->boundary[s] || is_master) {
            const int64_t *e = span;
            if (nest->imperfect) {
                for (int d = 0; d < wl->ndims; d++)
                    ext[d] = (busy[l] >> d) & 1u ? span[d] : res[d];
                e = ext;
            }
            for (int ds = 0; ds < wl->nds; ds++) {
                uint64_t vol = box_extent(&wl->ds[ds], e, NULL);
                if (l == nest->boundary[s])
                    out->tile[s][ds].size = vol;
                else
                    out->tile[s][ds].inner_size = vol;
            }
        }
        /* A spatial residual whose dimension's loops above never leave their
         * last iteration always applies: the siblings past it never work. */
        if (is_master && nest->uneven)
            for (int i = nest->first[s]; i <= l; i++) {
                const nm_loop *sp = &nest->loop[i];
                if (sp->residual != sp->end && !((busy[l] >> sp->dim) & 1u))
                    out->used[s] *= (double)sp->residual / (double)sp->end;
            }
    }
    /* Steps actually run per arithmetic instance: residuals never sit under
     * a spatial loop of their dimension, so without spatial residuals every
     * instance in use runs the same number, bound / spatial factor along
     * each dimension; with them, the mean. */
    out->steps = out->temporal_steps;
    out->uneven = nest->uneven;
    if (nest->uneven) {
        uint64_t macs = 1;
        for (int d = 0; d < wl->ndims; d++)
            macs *= (uint64_t)wl->bound[d];
        out->computes = macs;
        out->steps = macs / (out->arith_x * out->arith_y);
    } else {
        if (nest->imperfect) {
            out->steps = 1;
            for (int d = 0; d < wl->ndims; d++)
                out->steps *= (uint64_t)wl->bound[d] / spatial[d];
        }
        out->computes = out->steps * out->arith_x * out->arith_y;
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

/* ---- deltas and their pieces ---- */

enum { D_EMPTY, D_FULL, D_DIFF };

typedef struct delta {
    int8_t kind;
    int64_t a[R], aext[R]; /* corner and extent of the current box */
    int64_t b[R], bext[R]; /* the box subtracted (D_DIFF) */
} delta;

typedef struct box {
    int64_t lo[R], hi[R];
} box;

/* The pieces of a delta, cut the same way for every delta so that two equal
 * deltas give equal lists: slab below then slab above the subtracted box,
 * axis by axis. */
static int pieces(const delta *d, int nr, box *out)
{
    if (d->kind == D_EMPTY)
        return 0;
    box a = {{0}, {0}};
    for (int r = 0; r < nr; r++) {
        a.lo[r] = d->a[r];
        a.hi[r] = d->a[r] + d->aext[r];
    }
    if (d->kind == D_FULL) {
        out[0] = a;
        return 1;
    }
    box b = {{0}, {0}};
    for (int r = 0; r < nr; r++) {
        b.lo[r] = d->b[r];
        b.hi[r] = d->b[r] + d->bext[r];
    }
    for (int r = 0; r < nr; r++) {
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
static int shift_between(const delta *cur, const delta *prev, int nr, int64_t *o)
{
    box x[2 * R + 1], y[2 * R + 1];
    int nx = pieces(cur, nr, x), ny = pieces(prev, nr, y);
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

/* ---- workspace ---- */

#define MEMO_SLOTS 4096 /* rest() results past a loop's own JMEMO, all sequences; a power of two */
#define REUSE_MEMO 16
#define MAX_DIFFS 32
#define DIFF_SET 128    /* hash set of neighbour differences: a power of two > 2 MAX_DIFFS */
#define UNION_CAP 4096 /* tile positions along one axis that nm_nest_floor merges */

/* Contribution of a run of calls, in units of delta size x weight. */
typedef struct sums {
    double acc, wacc, link;
} sums;

/* What the networks need of the same run (see nm_tile: sz, hop, rt), kept
 * apart so that an analysis without networks carries none of it: the
 * functions that sum calls take an nsums pointer, NULL then. */
typedef struct nsums {
    double sz[NM_NOC_SLOTS], hop, rt;
} nsums;

/* *a += w * b */
static inline void sums_add(sums *a, const sums *b, double w)
{
    a->acc += w * b->acc;
    a->wacc += w * b->wacc;
    a->link += w * b->link;
}

static inline void nsums_add(nsums *a, const nsums *b, double w)
{
    for (int i = 0; i < NM_NOC_SLOTS; i++)
        a->sz[i] += w * b->sz[i];
    a->hop += w * b->hop;
    a->rt += w * b->rt;
}

/* The state a call leaves behind: the stride of the last move (a canonical
 * jump id, 0 = none) and, for fan-outs, the previous delta's shape.  Jumps
 * are named by canonical ids: equal moves share one, so states and memo
 * entries that differ only in which loop made a move compare equal. */
typedef struct dstate {
    int16_t trans;
    int8_t pkind;  /* -1: no previous delta yet */
    int16_t ptau;  /* jump into the previous call (its delta is box - box shifted back) */
} dstate;

/* Result of comparing a delta with the previous one for links. */
typedef struct linkmemo {
    int8_t pkind, kind;
    int16_t ptau, tau;
    const struct reuse *ru; /* NULL: no neighbour can supply it */
} linkmemo;
#define LINK_MEMO 16

typedef struct memo {
    uint64_t key;   /* the sequence (level, data space), j and the entry state, packed */
    uint32_t stamp; /* valid when equal to the sequence's stamp for j (0: empty) */
    dstate out;
    sums s;
} memo;

/* Memo of the walk of imperfect nests: a sub-walk's entry state (with its
 * loop and last-iteration mask) and the sums and state it leaves. */
#define STATE_INTS (1 + 7 * R) /* one class's state, packed, at most */
#define WALK_STATES 3          /* distinct class states a memo entry holds */
#define WALK_KEY (2 + WALK_STATES * STATE_INTS + (1 << NM_MAX_FAN_RESIDUALS))
#define WALK_MEMO 2048 /* a power of two */
typedef struct walkmemo {
    uint64_t hash;
    uint32_t gen;
    int nkey;
    int64_t key[WALK_KEY];
    int64_t out[WALK_KEY];
    sums s;
} walkmemo;

/* Siblings of a fan-out with spatial residuals fall into classes: the set
 * of its residual loops along which a sibling's digit is past the residual
 * (so it sits out the calls where that residual applies).  At most
 * NM_MAX_FAN_RESIDUALS residual loops per fan-out: SCLS classes. */
#define SCLS (1 << NM_MAX_FAN_RESIDUALS)

/* Neighbour reuse for the siblings of the receiving classes `recv` (in use
 * under residual mask `mask`), when a neighbour of class c held one step
 * before what they now need shifted by o[c] (for the classes in `found`).
 * The recursion over perfect nests keeps these per sequence, with one
 * class (o: its shift). */
struct reuse {
    int64_t o[R];
    uint64_t nreused, groups;
    uint8_t recv, mask, found;
};

/* The siblings of classes recv in use under mask, and the multicast groups
 * among them. */
#define USE_MEMO 8
typedef struct fanuse {
    uint32_t mask, recv;
    uint64_t F, groups;
} fanuse;

/* The same for any set of supplying classes (kept per fan-out: fanmemo). */
#define MANY_MEMO 32
struct reuse_many {
    struct reuse r;
    int64_t o[SCLS][R];
};

/* What fan_use and reuse_for found for a fan-out of an imperfect nest,
 * kept across analyses with what it depends on (the fan-out's loops, its
 * mesh, the data's step per loop): the walk of imperfect nests starts each
 * analysis afresh, and a fan-out of 65,536 PEs costs much to count. */
#define FAN_MEMOS 4
typedef struct fankey {
    int64_t nl, nr, nomc, F, hsize, vsize;
    int64_t end[2 * NM_MAX_DIMS], res[2 * NM_MAX_DIMS];
    int64_t tv[2 * NM_MAX_DIMS][R];
} fankey;

typedef struct fanmemo {
    uint32_t used; /* clock of the last use (0: empty) */
    fankey key;
    int nuse, nmany, many_at;
    fanuse use[USE_MEMO];
    struct reuse_many many[MANY_MEMO];
} fanmemo;

/* Whole fan-outs' multicast signatures, by what they depend on (full_sig). */
#define SIG_MEMO 16
typedef struct sigmemo {
    uint32_t used; /* clock of the last use (0: empty) */
    fankey key;
    nm_noc_sig sig;
} sigmemo;

/* rest(j)'s results for the few entry states a sequence meets, kept with
 * the loop they belong to (more go to the workspace's hashed memo). */
#define JMEMO 4
typedef struct jmemo {
    uint64_t key;  /* the entry state, packed */
    dstate out;
    sums s;
} jmemo;

/* Branching loop j of a sequence. */
typedef struct jstep {
    int nmemo;
    jmemo memo[JMEMO];
    int64_t n;                   /* trip count */
    uint64_t diff;               /* delta size after jump j when the previous box is kept */
    int64_t jump[R];             /* J_j projected on the data space */
    int64_t acc[R];              /* steps of q_1..q_j (J_{j+1} starts from them) */
    int16_t jid;                 /* first j' with the same jump: equal jumps compare equal */
} jstep;

/* What the analysis of one (level, data space) keeps for the next analysis
 * on the same workspace.  Consecutive mappings of a census or an exhaustive
 * search differ mostly in their outermost loops (nm_mapspace_set_orders
 * turns the outermost level's order fastest); what depends only on the loops
 * below the first changed one -- the child's tile, the fan-out, the jumps of
 * the inner branching loops and the memoized sums of their sequences -- is
 * taken over rather than computed again.  The result is the same either way
 * (check_search's warm_matches_cold compares them). */
typedef struct seq {
    int valid;                   /* child tile and fan-out as at the last analysis */
    int k;                       /* branching loops 1..k hold */
    jstep *js;                   /* 0..jcap-1 */
    int64_t ext[R];
    uint64_t vol;
    uint64_t groups0;            /* multicast groups of the fan-out */
    int injective;               /* distinct offsets of the moving loops: distinct data */
    uint32_t moving;             /* the fan-out's loops (bit: position) that move the data */
    int64_t tv_run[2 * NM_MAX_DIMS][R]; /* offset per step of each spatial loop of the fan-out */
    int nreuse;
    struct reuse reuse[REUSE_MEMO];
    int ndiffs;                          /* -1: not computed; MAX_DIFFS+1: too many to list */
    int64_t diffs[MAX_DIFFS][R];         /* key differences between grid neighbours */
    int nlink;
    linkmemo link[LINK_MEMO];
} seq;

/* What a sequence keeps for the networks (nm_nest_ws_noc), beside it: its
 * fan-out's multicast signatures, the whole one [0] and those of links
 * (sig_ru[i]'s in slot i, nsig in use); sig_mixed: some call's signature
 * is in no slot. */
typedef struct seq_noc {
    nm_noc_sig sig[NM_NOC_SLOTS];
    const struct reuse *sig_ru[NM_NOC_SLOTS];
    int nsig, sig_mixed;
} seq_noc;

/* The loops and switches the previous analysis saw. */
typedef struct seen_nest {
    int nloops;
    nm_loop loop[NM_MAX_LOOPS];
    uint32_t no_link[NM_MAX_LEVELS], no_multicast[NM_MAX_LEVELS], no_temporal_reuse[NM_MAX_LEVELS];
} seen_nest;

struct nm_nest_ws {
    nm_nest_ws *next_idle; /* in the pool of idle workspaces */
    const nm_nest *nest;
    const nm_mapping *map;
    const nm_arch *arch;
    const nm_workload *wl;
    int64_t vs[NM_MAX_LOOPS]; /* how far one step of each loop moves its dimension */
    int64_t step[NM_MAX_DS][NM_MAX_LOOPS][R]; /* ... and each data space */
    int64_t coef[NM_MAX_DS][NM_MAX_DIMS][R]; /* axis r of data space ds per unit of dim */
    /* the sequence being summed (one level, one data space) */
    seq *sq;                     /* its kept state: &seqs[level * NM_MAX_DS + ds] */
    int sid;                     /* that index */
    int nr;
    int always_full;             /* no reuse: every call fetches the whole box */
    int stride_2024;             /* Timeloop's stride rule before 2025 (nest.h) */
    /* fan-out below the recorder (F == 1: temporal recorder) */
    uint64_t F;
    int links, nolink, nomc;
    int64_t hsize, vsize;
    seq *seqs;                   /* nlevels x NM_MAX_DS */
    int nseqs;
    int jcap;                    /* branching loops a sequence can have, plus one */
    jstep *jsteps;               /* nseqs x jcap */
    uint32_t *stamps;            /* nseqs x jcap: memo entries of rest(j) hold with this stamp */
    uint64_t *hashes;            /* nseqs x jcap: of each jump whose id is its own (else ~0) */
    int have_seen;               /* seen holds the previous (perfect) analysis */
    seen_nest seen;
    uint32_t stamp;              /* the last stamp handed out */
    memo memo[MEMO_SLOTS];
    uint32_t gen;                /* generation of the walk's memo */
    /* scratch for one spatial fan-out */
    size_t cap;
    const seq *keys_of; /* whose siblings' offsets keys holds (NULL: nobody's) */
    int64_t *keys;   /* cap x R: each sibling's offset from the first */
    int64_t *keys2;  /* cap x R: scratch for counting distinct wide keys */
    uint64_t *code;  /* cap: keys packed for counting */
    uint8_t *reused; /* cap */
    uint8_t *cls;    /* cap: each sibling's class (sibling_classes) */
    int cls_ready;
    int fan_inner, fan_master; /* the fan-out of the level being analysed */
    int walk_always; /* walk perfect nests too (nm_nest_ws_walk) */
    uint32_t residual_below[NM_MAX_LOOPS]; /* dims with a residual loop inside each loop */
    uint32_t residual_dims;                /* dims with a residual loop anywhere */
    struct walkmemo *wmemo; /* WALK_MEMO entries */
    seq floor_seq;          /* the fan-out of the level nm_nest_floor is at */
    uint64_t *upos;         /* UNION_CAP: tile positions along one axis (nm_nest_floor) */
    /* the fan-out's loops with a spatial residual (level_open): position
     * in the run, dimension, residual and end */
    int nfres;
    int8_t fres_j[2 * NM_MAX_DIMS], fres_dim[2 * NM_MAX_DIMS];
    int64_t fres_r[2 * NM_MAX_DIMS], fres_end[2 * NM_MAX_DIMS];
    fanmemo fanmemo[FAN_MEMOS]; /* fan-outs of walked nests seen lately */
    fanmemo *fm;                /* the one being walked (NULL: the sequence's own memo) */
    uint32_t fan_clock;
    /* networks (nm_nest_ws_noc): on, scratch for signatures (cap each),
     * and the network parts of the memo entries, beside them: of each
     * jstep's memo (nseqs x jcap x JMEMO), of memo[] and of wmemo[] */
    int noc;
    uint32_t *ord;
    int64_t *colmin, *colmax;
    uint32_t *cols;
    nsums *jnoc, *memo_noc, *wmemo_noc;
    seq_noc *seqnoc; /* nseqs, beside seqs */
    sigmemo *sigmemo; /* SIG_MEMO */
    uint32_t sig_clock;
};

void nm_nest_ws_walk(nm_nest_ws *ws, int on)
{
    ws->walk_always = on;
}

void nm_nest_ws_stride_rule(nm_nest_ws *ws, int before_2025)
{
    /* The memoized recursion leans on a zero move leaving the state as it
     * was; under the old rule every call is walked. */
    ws->stride_2024 = before_2025;
}

/* Workspaces outlive their models: a sweep builds thousands of models, and
 * each fresh workspace's 5 MiB (most of it the walk's memo) cost more in
 * page faults than its analyses took on small layers.  An idle workspace
 * waits in the pool and the next model takes it, whatever its design: the
 * arrays sized by the design are made again where the size differs, the
 * rest is zeroed again, except the walk's memo, whose entries hold only
 * under their generation (walk()) and the generation goes on counting.
 * The pool holds at most as many workspaces as models ever lived at once. */
static pthread_mutex_t ws_lock = PTHREAD_MUTEX_INITIALIZER;
static nm_nest_ws *ws_pool;

/* Frees the network scratch and turns networks off (nm_nest_ws_noc makes
 * it again). */
static void noc_free(nm_nest_ws *ws)
{
    nm_free(ws->ord);
    nm_free(ws->colmin);
    nm_free(ws->colmax);
    nm_free(ws->cols);
    nm_free(ws->jnoc);
    nm_free(ws->memo_noc);
    nm_free(ws->wmemo_noc);
    nm_free(ws->seqnoc);
    nm_free(ws->sigmemo);
    ws->ord = NULL;
    ws->colmin = ws->colmax = NULL;
    ws->cols = NULL;
    ws->jnoc = ws->memo_noc = ws->wmemo_noc = NULL;
    ws->seqnoc = NULL;
    ws->sigmemo = NULL;
    ws->noc = 0;
}

static void ws_destroy(nm_nest_ws *ws)
{
    nm_free(ws->keys);
    nm_free(ws->keys2);
    nm_free(ws->code);
    nm_free(ws->reused);
    nm_free(ws->cls);
    nm_free(ws->wmemo);
    nm_free(ws->seqs);
    nm_free(ws->jsteps);
    nm_free(ws->stamps);
    nm_free(ws->hashes);
    nm_free(ws->upos);
    noc_free(ws);
    nm_free(ws);
}

/* *p as n zeroed elements of `size` bytes, given that it held `had`. */
static int zeroed(void *p, size_t had, size_t n, size_t size)
{
    void **q = p;
    if (*q && had == n) {
        memset(*q, 0, n * size);
        return 1;
    }
    nm_free(*q);
    *q = nm_calloc(n, size);
    return *q != NULL;
}

nm_nest_ws *nm_nest_ws_new(const nm_arch *arch, const nm_workload *wl)
{
    pthread_mutex_lock(&ws_lock);
    nm_nest_ws *ws = ws_pool, kept;
    if (ws)
        ws_pool = ws->next_idle;
    pthread_mutex_unlock(&ws_lock);
    if (ws) { /* everything zero but the arrays, the walk's memo and its generation */
        kept = *ws;
        memset(ws, 0, sizeof *ws);
        ws->keys = kept.keys;
        ws->keys2 = kept.keys2;
        ws->code = kept.code;
        ws->reused = kept.reused;
        ws->cls = kept.cls;
        ws->seqs = kept.seqs;
        ws->jsteps = kept.jsteps;
        ws->stamps = kept.stamps;
        ws->hashes = kept.hashes;
        ws->upos = kept.upos;
        ws->wmemo = kept.wmemo;
        ws->gen = kept.gen;
    } else {
        kept.cap = 0;
        kept.nseqs = kept.jcap = 0;
        if (!(ws = nm_calloc(1, sizeof *ws)))
            return NULL;
    }
    size_t cap = (size_t)arch->arith.instances;
    for (int s = 0; s < arch->nlevels; s++)
        if ((size_t)arch->level[s].instances > cap)
            cap = (size_t)arch->level[s].instances;
    ws->cap = cap;
    for (int ds = 0; ds < wl->nds; ds++)
        for (int r = 0; r < wl->ds[ds].nranks; r++)
            for (int t = 0; t < wl->ds[ds].rank[r].nterms; t++)
                ws->coef[ds][wl->ds[ds].rank[r].term[t].dim][r] += wl->ds[ds].rank[r].term[t].coef;
    ws->nseqs = arch->nlevels * NM_MAX_DS;
    ws->jcap = arch->nlevels * wl->ndims + 1; /* one temporal loop per level and dimension */
    size_t had = (size_t)kept.nseqs * (size_t)kept.jcap, js = (size_t)ws->nseqs * (size_t)ws->jcap;
    if (!zeroed(&ws->keys, kept.cap, cap, R * sizeof(int64_t)) ||
        !zeroed(&ws->keys2, kept.cap, cap, R * sizeof(int64_t)) ||
        !zeroed(&ws->code, kept.cap, cap, sizeof(uint64_t)) ||
        !zeroed(&ws->reused, kept.cap, cap, 1) || !zeroed(&ws->cls, kept.cap, cap, 1) ||
        !zeroed(&ws->upos, UNION_CAP, UNION_CAP, sizeof *ws->upos) ||
        !zeroed(&ws->seqs, (size_t)kept.nseqs, (size_t)ws->nseqs, sizeof *ws->seqs) ||
        !zeroed(&ws->jsteps, had, js, sizeof *ws->jsteps) ||
        !zeroed(&ws->stamps, had, js, sizeof *ws->stamps) ||
        !zeroed(&ws->hashes, had, js, sizeof *ws->hashes) ||
        (!ws->wmemo && !(ws->wmemo = nm_calloc(WALK_MEMO, sizeof *ws->wmemo)))) {
        ws_destroy(ws);
        return NULL;
    }
    for (int i = 0; i < ws->nseqs; i++)
        ws->seqs[i].js = ws->jsteps + (size_t)i * (size_t)ws->jcap;
    nm_nest_ws_stride_rule(ws, arch->stride_rule_2024);
    return ws;
}

void nm_nest_ws_free(nm_nest_ws *ws)
{
    if (!ws)
        return;
    noc_free(ws); /* rare in searches: made again where asked for */
    pthread_mutex_lock(&ws_lock);
    ws->next_idle = ws_pool;
    ws_pool = ws;
    pthread_mutex_unlock(&ws_lock);
}

int nm_nest_ws_noc(nm_nest_ws *ws, int on)
{
    if (on && !ws->ord) {
        ws->ord = nm_calloc(ws->cap, sizeof *ws->ord);
        ws->colmin = nm_calloc(ws->cap, sizeof *ws->colmin);
        ws->colmax = nm_calloc(ws->cap, sizeof *ws->colmax);
        ws->cols = nm_calloc(ws->cap, sizeof *ws->cols);
        ws->jnoc = nm_calloc((size_t)ws->nseqs * (size_t)ws->jcap * JMEMO, sizeof *ws->jnoc);
        ws->memo_noc = nm_calloc(MEMO_SLOTS, sizeof *ws->memo_noc);
        ws->wmemo_noc = nm_calloc(WALK_MEMO, sizeof *ws->wmemo_noc);
        ws->seqnoc = nm_calloc((size_t)ws->nseqs, sizeof *ws->seqnoc);
        ws->sigmemo = nm_calloc(SIG_MEMO, sizeof *ws->sigmemo);
        if (!ws->ord || !ws->colmin || !ws->colmax || !ws->cols || !ws->jnoc || !ws->memo_noc ||
            !ws->wmemo_noc || !ws->seqnoc || !ws->sigmemo)
            return 0;
        for (size_t h = 0; h < ws->cap; h++)
            ws->colmax[h] = -1; /* no receiver in column h yet (fan_sig) */
    }
    ws->noc = on;
    return 1;
}

const nm_noc_sig *nm_nest_noc_sig(const nm_nest_ws *ws, int s, int ds, int slot)
{
    if (!ws->noc)
        return NULL;
    const seq_noc *S = &ws->seqnoc[s * NM_MAX_DS + ds];
    if (S->sig_mixed || slot >= S->nsig || S->sig[slot].n <= 0)
        return NULL;
    return &S->sig[slot];
}

int nm_nest_noc_mixed(const nm_nest_ws *ws, int s, int ds)
{
    return ws->noc && ws->seqnoc[s * NM_MAX_DS + ds].sig_mixed;
}

void nm_nest_ws_forget(nm_nest_ws *ws)
{
    ws->have_seen = 0;
}

/* Forgets every kept sequence and memo entry (the stamps wrapped). */
static void restamp(nm_nest_ws *ws)
{
    memset(ws->memo, 0, sizeof ws->memo);
    memset(ws->stamps, 0, (size_t)ws->nseqs * (size_t)ws->jcap * sizeof *ws->stamps);
    for (int i = 0; i < ws->nseqs; i++) {
        ws->seqs[i].valid = 0;
        ws->seqs[i].k = 0;
    }
    ws->keys_of = NULL;
    ws->have_seen = 0;
    ws->stamp = 0;
}

/* ---- spatial siblings ---- */

/* In-place heapsort: the C library's qsort may allocate, and nothing on
 * the evaluation path does. */
static void sift_u64(uint64_t *a, size_t root, size_t n)
{
    for (;;) {
        size_t child = 2 * root + 1;
        if (child >= n)
            return;
        if (child + 1 < n && a[child + 1] > a[child])
            child++;
        if (a[root] >= a[child])
            return;
        uint64_t t = a[root];
        a[root] = a[child];
        a[child] = t;
        root = child;
    }
}

static void sort_u64(uint64_t *a, size_t n)
{
    for (size_t i = n / 2; i-- > 0;)
        sift_u64(a, i, n);
    for (size_t end = n; end-- > 1;) {
        uint64_t t = a[0];
        a[0] = a[end];
        a[end] = t;
        sift_u64(a, 0, end);
    }
}

static int key_cmp(const int64_t *x, const int64_t *y)
{
    for (int r = 0; r < R; r++)
        if (x[r] != y[r])
            return x[r] < y[r] ? -1 : 1;
    return 0;
}

static void key_swap(int64_t *x, int64_t *y)
{
    for (int r = 0; r < R; r++) {
        int64_t t = x[r];
        x[r] = y[r];
        y[r] = t;
    }
}

static void sift_key(int64_t *a, size_t root, size_t n)
{
    for (;;) {
        size_t child = 2 * root + 1;
        if (child >= n)
            return;
        if (child + 1 < n && key_cmp(a + (child + 1) * R, a + child * R) > 0)
            child++;
        if (key_cmp(a + root * R, a + child * R) >= 0)
            return;
        key_swap(a + root * R, a + child * R);
        root = child;
    }
}

static void sort_keys(int64_t *a, size_t n)
{
    for (size_t i = n / 2; i-- > 0;)
        sift_key(a, i, n);
    for (size_t end = n; end-- > 1;) {
        key_swap(a, a + end * R);
        sift_key(a, 0, end);
    }
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
        sort_u64(ws->code, n);
        uint64_t groups = 0;
        for (size_t i = 0; i < n; i++)
            groups += i == 0 || ws->code[i] != ws->code[i - 1];
        return groups;
    }
    /* Wide keys: sort copies of the key vectors themselves. */
    int64_t *tmp = ws->keys2;
    for (uint64_t e = 0; e < F; e++)
        if (!(skip && skip[e]))
            memcpy(tmp + n++ * R, ws->keys + e * R, R * sizeof(int64_t));
    sort_keys(tmp, n);
    uint64_t groups = 0;
    for (size_t i = 0; i < n; i++)
        groups += i == 0 || key_cmp(tmp + i * R, tmp + (i - 1) * R) != 0;
    return groups;
}

/* The distinct offsets among the siblings not marked in skip when the
 * fan-out's offsets are injective (prepare_fanout): the distinct digit
 * tuples of the loops that move the data, marked in a bitmap over those
 * tuples (ws->code's words), the siblings counted as fill_keys does. */
static uint64_t distinct_moving(nm_nest_ws *ws, int inner, int master, const uint8_t *skip)
{
    int nl = master - inner + 1;
    int64_t n[2 * NM_MAX_DIMS], idx[2 * NM_MAX_DIMS] = {0};
    uint64_t w[2 * NM_MAX_DIMS], tuples = 1;
    for (int j = 0; j < nl; j++) {
        n[j] = ws->nest->loop[inner + j].end;
        w[j] = 0;
        if ((ws->sq->moving >> j) & 1u) {
            w[j] = tuples;
            tuples *= (uint64_t)n[j];
        }
    }
    uint64_t *bits = ws->code;
    memset(bits, 0, (size_t)(tuples + 63) / 64 * sizeof *bits);
    uint64_t groups = 0, t = 0;
    for (uint64_t e = 0; e < ws->F; e++) {
        uint64_t b = UINT64_C(1) << (t & 63);
        if (!skip[e] && !(bits[t >> 6] & b)) {
            bits[t >> 6] |= b;
            groups++;
        }
        for (int j = 0; j < nl; j++) {
            if (++idx[j] < n[j]) {
                t += w[j];
                break;
            }
            t -= (uint64_t)(idx[j] - 1) * w[j];
            idx[j] = 0;
        }
    }
    return groups;
}

/* Translation of data space ds when loop l steps once (nm_nest_analyze
 * keeps them in ws->step). */
static void step_vector(const nm_nest_ws *ws, int ds, int l, int64_t *t)
{
    memcpy(t, ws->step[ds][l], sizeof ws->step[ds][l]);
}

static void fill_keys(nm_nest_ws *ws, int inner, int master);

/* Per fan-out (spatial run inner..master) and data space: the step vector of
 * each spatial loop, and the number of distinct sibling offsets (multicast
 * groups).  Siblings are numbered with the innermost spatial loop fastest. */
static void prepare_fanout(nm_nest_ws *ws, int ds, int inner, int master)
{
    int nr = ws->wl->ds[ds].nranks;
    int nl = master - inner + 1;
    uint64_t groups_fast = 1;
    int injective = 1;
    ws->sq->moving = 0;
    for (int j = 0; j < nl; j++) {
        step_vector(ws, ds, inner + j, ws->sq->tv_run[j]);
        int nz = 0;
        for (int r = 0; r < nr; r++)
            nz |= ws->sq->tv_run[j][r] != 0;
        if (nz) {
            groups_fast *= (uint64_t)ws->nest->loop[inner + j].end;
            ws->sq->moving |= 1u << j;
        }
    }
    /* Distinct offsets: exact product when each moving loop owns an axis no
     * other moving loop touches; otherwise count them. */
    for (int j = 0; j < nl && injective; j++) {
        int own = 0, moving = 0;
        for (int r = 0; r < nr; r++)
            moving |= ws->sq->tv_run[j][r] != 0;
        if (!moving)
            continue;
        for (int r = 0; r < nr && !own; r++) {
            if (!ws->sq->tv_run[j][r])
                continue;
            int alone = 1;
            for (int m = 0; m < nl; m++)
                if (m != j && ws->sq->tv_run[m][r])
                    alone = 0;
            own = alone;
        }
        injective = own;
    }
    ws->sq->injective = injective;
    if (ws->nomc) {
        ws->sq->groups0 = ws->F;
    } else if (injective) {
        ws->sq->groups0 = groups_fast;
    } else {
        fill_keys(ws, inner, master);
        int64_t kmax[R] = {0};
        for (int j = 0; j < nl; j++)
            for (int r = 0; r < nr; r++)
                kmax[r] += ws->sq->tv_run[j][r] * (ws->nest->loop[inner + j].end - 1);
        ws->sq->groups0 = distinct(ws, ws->F, nr, kmax, NULL);
    }
}

/* Each sibling's offset from the first, from the step vectors of the run
 * (prepare_fanout sets them); filled once per fan-out and data space.  The
 * siblings are counted in the mixed radix of the spatial loops' ends,
 * innermost fastest, carrying the offset along. */
static void fill_keys(nm_nest_ws *ws, int inner, int master)
{
    if (ws->keys_of == ws->sq)
        return;
    int nl = master - inner + 1, nr = ws->nr;
    int64_t idx[2 * NM_MAX_DIMS] = {0}, key[R] = {0};
    for (uint64_t e = 0; e < ws->F; e++) {
        memcpy(ws->keys + e * R, key, sizeof key);
        for (int j = 0; j < nl; j++) {
            const int64_t *tv = ws->sq->tv_run[j];
            if (++idx[j] < ws->nest->loop[inner + j].end) {
                for (int r = 0; r < nr; r++)
                    key[r] += tv[r];
                break;
            }
            for (int r = 0; r < nr; r++) /* carry: back to 0 along loop j */
                key[r] -= (idx[j] - 1) * tv[r];
            idx[j] = 0;
        }
    }
    ws->keys_of = ws->sq;
}

/* ---- spatial residuals: the siblings in use ---- */

/* The fan-out's spatial residuals that apply in a call (bits: their index
 * in ws->fres_*): those whose dimension's loops above are all on their
 * last iteration (last, as in walk()). */
static uint32_t fan_mask(const nm_nest_ws *ws, uint32_t last)
{
    uint32_t m = 0;
    for (int i = 0; i < ws->nfres; i++)
        if ((last >> ws->fres_dim[i]) & 1u)
            m |= 1u << i;
    return m;
}

/* Each sibling's class (the residual loops along which its digit is past
 * the residual) into ws->cls, once per fan-out (level_open clears it): the
 * siblings counted in the mixed radix of the run's ends, as fill_keys does. */
static void sibling_classes(nm_nest_ws *ws)
{
    if (ws->cls_ready)
        return;
    int nl = ws->fan_master - ws->fan_inner + 1;
    int64_t n[2 * NM_MAX_DIMS], r[2 * NM_MAX_DIMS], idx[2 * NM_MAX_DIMS] = {0};
    int bit[2 * NM_MAX_DIMS];
    for (int j = 0; j < nl; j++) {
        n[j] = ws->nest->loop[ws->fan_inner + j].end;
        r[j] = n[j];
        bit[j] = -1;
    }
    for (int i = 0; i < ws->nfres; i++) {
        r[ws->fres_j[i]] = ws->fres_r[i];
        bit[ws->fres_j[i]] = i;
    }
    uint32_t c = 0;
    for (uint64_t e = 0; e < ws->F; e++) {
        ws->cls[e] = (uint8_t)c;
        for (int j = 0; j < nl; j++) {
            if (++idx[j] < n[j]) {
                if (idx[j] == r[j] && bit[j] >= 0)
                    c |= 1u << bit[j];
                break;
            }
            idx[j] = 0;
            if (bit[j] >= 0)
                c &= ~(1u << bit[j]);
        }
    }
    ws->cls_ready = 1;
}

static uint32_t sibling_class(const nm_nest_ws *ws, uint64_t e)
{
    return ws->cls[e];
}

/* Whether sibling e receives in a call where the residuals in mask apply:
 * its class is in recv and sits out none of them. */
static int sibling_receives(const nm_nest_ws *ws, uint64_t e, uint32_t recv, uint32_t mask)
{
    uint32_t c = sibling_class(ws, e);
    return ((recv >> c) & 1u) && !(c & mask);
}

/* The siblings of classes recv in use under mask and the multicast groups
 * among them (memoized per fan-out and data space). */
static const fanuse *fan_use(nm_nest_ws *ws, int inner, int master, uint32_t mask, uint32_t recv)
{
    fanmemo *fm = ws->fm;
    for (int i = 0; i < fm->nuse; i++)
        if (fm->use[i].mask == mask && fm->use[i].recv == recv)
            return &fm->use[i];
    /* A class's siblings: digits in [0, r) along the residuals it works in
     * and [r, end) along those it sits out, any digit along the others. */
    uint64_t others = ws->F, F = 0, groups = 0;
    for (int i = 0; i < ws->nfres; i++)
        others /= (uint64_t)ws->fres_end[i];
    uint32_t moving = 0, seen = 0; /* residuals that move the data; their classes counted */
    for (int i = 0; i < ws->nfres; i++)
        if ((ws->sq->moving >> ws->fres_j[i]) & 1u)
            moving |= 1u << i;
    uint64_t still = 1; /* the other loops that move the data: their ends */
    for (int j = 0; j <= master - inner; j++) {
        if (!((ws->sq->moving >> j) & 1u))
            continue;
        int res = 0;
        for (int i = 0; i < ws->nfres; i++)
            res |= ws->fres_j[i] == j;
        if (!res)
            still *= (uint64_t)ws->nest->loop[inner + j].end;
    }
    for (uint32_t c = 0; c < (1u << ws->nfres); c++) {
        if (!((recv >> c) & 1u))
            continue;
        uint64_t n = others, g = still;
        for (int i = 0; i < ws->nfres; i++) {
            uint64_t k = (c >> i) & 1u ? (uint64_t)(ws->fres_end[i] - ws->fres_r[i])
                                       : (uint64_t)ws->fres_r[i];
            n *= k;
            if ((moving >> i) & 1u)
                g *= k;
        }
        F += n;
        /* classes that differ only along residuals that do not move the
         * data hold the same data */
        uint32_t sig = c & moving; /* < SCLS */
        if (!((seen >> sig) & 1u)) {
            seen |= 1u << sig;
            groups += g;
        }
    }
    if (ws->nomc) {
        groups = F;
    } else if (!ws->sq->injective) { /* count the distinct offsets */
        fill_keys(ws, inner, master);
        sibling_classes(ws);
        int64_t kmax[R] = {0};
        for (uint64_t e = 0; e < ws->F; e++) {
            ws->reused[e] = (uint8_t)!sibling_receives(ws, e, recv, mask); /* left out */
            for (int r = 0; r < ws->nr; r++)
                if (ws->keys[e * R + r] > kmax[r])
                    kmax[r] = ws->keys[e * R + r];
        }
        groups = distinct(ws, ws->F, ws->nr, kmax, ws->reused);
    }
    if (fm->nuse == USE_MEMO)
        fm->nuse = 0;
    fm->use[fm->nuse] = (fanuse){mask, recv, F, groups};
    return &fm->use[fm->nuse++];
}

/* Runs body with nb set to each grid neighbour of sibling e (siblings are
 * laid out row by row over the physical mesh; no wrap-around). */
#define FOR_NEIGHBOURS(ws, e, nb, body)                                        \
    do {                                                                       \
        int64_t h_ = (int64_t)(e) % (ws)->hsize, v_ = (int64_t)(e) / (ws)->hsize; \
        int64_t cand_[4];                                                      \
        int nn_ = 0;                                                           \
        if ((ws)->vsize > 1) {                                                 \
            if (v_ >= 1)                                                       \
                cand_[nn_++] = (v_ - 1) * (ws)->hsize + h_;                    \
            if (v_ + 1 < (ws)->vsize)                                          \
                cand_[nn_++] = (v_ + 1) * (ws)->hsize + h_;                    \
        }                                                                      \
        if ((ws)->hsize > 1) {                                                 \
            if (h_ >= 1)                                                       \
                cand_[nn_++] = v_ * (ws)->hsize + h_ - 1;                      \
            if (h_ + 1 < (ws)->hsize)                                          \
                cand_[nn_++] = v_ * (ws)->hsize + h_ + 1;                      \
        }                                                                      \
        for (int i_ = 0; i_ < nn_; i_++) {                                     \
            if (cand_[i_] < 0 || (uint64_t)cand_[i_] >= (ws)->F)               \
                continue;                                                      \
            uint64_t nb = (uint64_t)cand_[i_];                                 \
            body                                                               \
        }                                                                      \
    } while (0)

/* Adds key difference d to the fan-out's list unless the hash set `set`
 * (indices into the list) holds it already; counts past MAX_DIFFS. */
static void diff_add(seq *sq, int nr, const int64_t *d, int16_t *set)
{
    uint64_t h = 0;
    for (int r = 0; r < nr; r++)
        h = (h ^ (uint64_t)d[r]) * UINT64_C(0x100000001B3);
    uint64_t i = (h ^ h >> 29) & (DIFF_SET - 1);
    for (; set[i] >= 0; i = (i + 1) & (DIFF_SET - 1))
        if (!memcmp(sq->diffs[set[i]], d, (size_t)nr * sizeof *d))
            return;
    if (sq->ndiffs < MAX_DIFFS) {
        memset(sq->diffs[sq->ndiffs], 0, sizeof sq->diffs[0]);
        memcpy(sq->diffs[sq->ndiffs], d, (size_t)nr * sizeof *d);
        set[i] = (int16_t)sq->ndiffs;
    }
    sq->ndiffs++;
}

/* The key difference of a move that changes the digits of the nl spatial
 * loops by chg[], and its negation (the move back), added to the list. */
static void chain_diffs(nm_nest_ws *ws, int nl, const int64_t *chg, int16_t *set)
{
    int64_t d[R] = {0}, neg[R];
    for (int j = 0; j < nl; j++)
        for (int r = 0; r < ws->nr; r++)
            d[r] += chg[j] * ws->sq->tv_run[j][r];
    for (int r = 0; r < ws->nr; r++)
        neg[r] = -d[r];
    diff_add(ws->sq, ws->nr, d, set);
    diff_add(ws->sq, ws->nr, neg, set);
}

/* The carry chains of adding h (digits hd[], mixed radix n[] of the nl
 * spatial loops, innermost first) to a sibling, from digit j on with carry
 * cin and digit changes chg[] so far: each chain that some sibling can
 * follow without passing the last (a digit carries out iff it would pass
 * its end; either way is possible when some digit value gives it), and its
 * key difference. */
static void carry_chains(nm_nest_ws *ws, int nl, const int64_t *n, const int64_t *hd, int j,
                         int cin, int64_t *chg, int16_t *set)
{
    if (ws->sq->ndiffs > MAX_DIFFS)
        return;
    if (j == nl) {
        if (!cin) /* a carry out would pass the last sibling */
            chain_diffs(ws, nl, chg, set);
        return;
    }
    int64_t add = hd[j] + cin;
    if (add <= n[j] - 1) { /* no carry: some digit value stays below the end */
        chg[j] = add;
        carry_chains(ws, nl, n, hd, j + 1, 0, chg, set);
    }
    if (add >= 1) { /* carry: the top digit value passes the end */
        chg[j] = add - n[j];
        carry_chains(ws, nl, n, hd, j + 1, 1, chg, set);
    }
}

/* The distinct key differences between grid neighbours: a delta can come
 * over a link only if the shift between it and the previous one is among
 * them.  Computed once per fan-out and data space from the carry chains of
 * moving to the next sibling and to the one a row on (and back), not by
 * visiting the siblings. */
static void neighbour_diffs(nm_nest_ws *ws, int inner, int master)
{
    int nr = ws->nr, nl = master - inner + 1;
    seq *sq = ws->sq;
    int moving = 0;
    for (int j = 0; j < nl; j++)
        for (int r = 0; r < nr; r++)
            moving |= sq->tv_run[j][r] != 0;
    if (!moving) { /* every sibling needs the same data: neighbours differ by nothing */
        sq->ndiffs = 1;
        memset(sq->diffs[0], 0, sizeof sq->diffs[0]);
        return;
    }
    /* Siblings are numbered in the mixed radix of the spatial loops' ends,
     * innermost fastest, and laid out row by row, hsize to a row: a
     * neighbour is the next sibling (within its row) or the one a row on. */
    int16_t set[DIFF_SET];
    memset(set, -1, sizeof set);
    sq->ndiffs = 0;
    int64_t n[2 * NM_MAX_DIMS], P[2 * NM_MAX_DIMS + 1], hd[2 * NM_MAX_DIMS],
        chg[2 * NM_MAX_DIMS];
    P[0] = 1;
    for (int j = 0; j < nl; j++) {
        n[j] = ws->nest->loop[inner + j].end;
        P[j + 1] = P[j] * n[j];
    }
    int64_t H = ws->hsize, F = (int64_t)ws->F;
    /* The next sibling: the c innermost digits at their ends wrap to 0 and
     * digit c steps, for a sibling e = P[c]-1 + t P[c] (digit c of t below
     * its end) that does not end its row and is not the last. */
    for (int c = 0; c < nl && H > 1 && sq->ndiffs <= MAX_DIFFS; c++) {
        if (n[c] == 1 || P[c] % H == 0) /* no such digit; or every such e ends a row */
            continue;
        int found = 0;
        for (int64_t t = 0; !found && P[c] - 1 + t * P[c] + 1 < F; t++)
            found = t % n[c] != n[c] - 1 && (P[c] - 1 + t * P[c]) % H != H - 1;
        if (!found)
            continue;
        memset(chg, 0, sizeof chg);
        for (int j = 0; j < c; j++)
            chg[j] = 1 - n[j];
        chg[c] = 1;
        chain_diffs(ws, nl, chg, set);
    }
    /* The sibling a row on: every carry chain of adding H. */
    if (ws->vsize > 1 && H < F) {
        int64_t rest = H;
        for (int j = 0; j < nl; j++) {
            hd[j] = rest % n[j];
            rest /= n[j];
        }
        carry_chains(ws, nl, n, hd, 0, 0, chg, set);
    }
    if (sq->ndiffs > MAX_DIFFS) /* past the list: any shift may be one */
        sq->ndiffs = MAX_DIFFS + 1;
}

/* Marks in ws->reused the siblings that take their delta over a link (see
 * reuse_for) and those of classes outside recv or idle under mask (counted
 * in *out); returns how many take it over a link. */
static uint64_t mark_reused(nm_nest_ws *ws, uint32_t recv, uint32_t mask, uint32_t found,
                            const int64_t (*o)[R], uint64_t *out)
{
    int nr = ws->nr;
    uint64_t F = ws->F, nreused = 0;
    *out = 0;
    fill_keys(ws, ws->fan_inner, ws->fan_master); /* the scratch may hold another fan-out's */
    if (ws->nfres)
        sibling_classes(ws);
    const int64_t *o0 = o[0];
    for (uint64_t e = 0; e < F; e++) {
        const int64_t *k = ws->keys + e * R;
        int hit = 0;
        if (!ws->nfres) { /* one class (the hot path) */
            FOR_NEIGHBOURS(ws, e, nb, {
                const int64_t *kn = ws->keys + nb * R;
                int eq = !hit;
                for (int r = 0; r < nr && eq; r++)
                    eq = kn[r] - k[r] == o0[r];
                hit |= eq;
            });
        } else if (!sibling_receives(ws, e, recv, mask)) {
            ws->reused[e] = 1; /* left out of the groups below */
            (*out)++;
            continue;
        } else {
            FOR_NEIGHBOURS(ws, e, nb, {
                const int64_t *kn = ws->keys + nb * R;
                uint32_t c = sibling_class(ws, nb);
                int eq = !hit && ((found >> c) & 1u);
                for (int r = 0; r < nr && eq; r++)
                    eq = kn[r] - k[r] == o[c][r];
                hit |= eq;
            });
        }
        ws->reused[e] = (uint8_t)hit;
        nreused += (uint64_t)hit;
    }
    return nreused;
}

/* ---- multicast signatures (for the on-chip networks) ---- */

static int key_less(const nm_nest_ws *ws, uint32_t a, uint32_t b)
{
    const int64_t *x = ws->keys + (size_t)a * R, *y = ws->keys + (size_t)b * R;
    for (int r = 0; r < ws->nr; r++)
        if (x[r] != y[r])
            return x[r] < y[r];
    return a < b;
}

static void sift_ord(const nm_nest_ws *ws, uint32_t *a, size_t root, size_t n)
{
    for (;;) {
        size_t c = 2 * root + 1;
        if (c >= n)
            return;
        if (c + 1 < n && key_less(ws, a[c], a[c + 1]))
            c++;
        if (!key_less(ws, a[root], a[c]))
            return;
        uint32_t t = a[root];
        a[root] = a[c];
        a[c] = t;
        root = c;
    }
}

/* Adds a group of m receivers with the given hops (multicast, and each
 * receiver reached alone) to sig. */
static void sig_add(nm_noc_sig *sig, uint64_t m, double hops, double uhops)
{
    if (sig->n < 0)
        return;
    for (int i = 0; i < sig->n; i++)
        if (sig->b[i].m == m) {
            sig->b[i].s++;
            sig->b[i].hops += hops;
            sig->b[i].uhops += uhops;
            return;
        }
    if (sig->n == NM_NOC_BUCKETS) {
        sig->n = -1;
        return;
    }
    sig->b[sig->n++] = (struct nm_noc_bucket){m, 1, hops, uhops};
}

/* The multicast signature (nest.h) of the current fan-out's siblings that
 * skip does not mark (NULL: all): siblings with equal offsets need the same
 * data and form a group (each its own without multicast). */
static void fan_sig(nm_nest_ws *ws, const uint8_t *skip, nm_noc_sig *sig)
{
    memset(sig, 0, sizeof *sig);
    fill_keys(ws, ws->fan_inner, ws->fan_master);
    size_t n = 0;
    for (uint64_t e = 0; e < ws->F; e++)
        if (!skip || !skip[e])
            ws->ord[n++] = (uint32_t)e;
    if (!ws->nomc) { /* heapsort by offset: groups are runs */
        for (size_t i = n / 2; i-- > 0;)
            sift_ord(ws, ws->ord, i, n);
        for (size_t i = n; i-- > 1;) {
            uint32_t t = ws->ord[0];
            ws->ord[0] = ws->ord[i];
            ws->ord[i] = t;
            sift_ord(ws, ws->ord, 0, i);
        }
    }
    double vc = (double)(ws->vsize - 1) / 2.0;
    for (size_t i = 0; i < n;) {
        size_t j = i + 1;
        if (!ws->nomc)
            while (j < n && !memcmp(ws->keys + (size_t)ws->ord[i] * R,
                                    ws->keys + (size_t)ws->ord[j] * R,
                                    (size_t)ws->nr * sizeof(int64_t)))
                j++;
        int64_t hmax = 0;
        size_t ncols = 0;
        double uhops = 0.0;
        for (size_t g = i; g < j; g++) {
            int64_t e = ws->ord[g], h = e % ws->hsize, v = e / ws->hsize;
            uhops += (double)h + fabs((double)v - vc);
            if (h > hmax)
                hmax = h;
            if (ws->colmax[h] < 0) { /* the column's first receiver */
                ws->cols[ncols++] = (uint32_t)h;
                ws->colmin[h] = ws->colmax[h] = v;
            } else {
                if (v < ws->colmin[h])
                    ws->colmin[h] = v;
                if (v > ws->colmax[h])
                    ws->colmax[h] = v;
            }
        }
        double hops = (double)hmax;
        for (size_t c = 0; c < ncols; c++) {
            uint32_t h = ws->cols[c];
            double lo = (double)ws->colmin[h] - vc, hi = (double)ws->colmax[h] - vc;
            if (lo < 0)
                hops += -lo;
            if (hi > 0)
                hops += hi;
            ws->colmax[h] = -1;
        }
        sig_add(sig, (uint64_t)(j - i), hops, uhops);
        i = j;
    }
}

/* A signature's hop sum and the routers its buckets pass past the first,
 * per unit of delta size (Timeloop floors each bucket's mean hops). */
static void sig_totals(const nm_noc_sig *sig, double *hop, double *rt)
{
    *hop = *rt = 0.0;
    for (int i = 0; i < sig->n; i++) {
        *hop += sig->b[i].hops;
        *rt += (double)sig->b[i].s * floor(sig->b[i].hops / (double)sig->b[i].s);
    }
}

/* Siblings of the receiving classes recv, in use under residual mask
 * `mask`, that can take their delta over a link from a grid neighbour that
 * held it one step before (a neighbour of class c whose delta then, shifted
 * by o[c], is theirs now: c in `found`), and the multicast groups left among
 * the other receivers.  Without spatial residuals every sibling is of class
 * 0 and recv = found = 1.  Memoized per (recv, mask, found, o). */
static const struct reuse *reuse_for(nm_nest_ws *ws, int inner, int master, uint32_t recv,
                                     uint32_t mask, uint32_t found, const int64_t (*o)[R])
{
    int nr = ws->nr;
    for (int i = 0; !ws->fm && i < ws->sq->nreuse; i++) {
        const struct reuse *m = &ws->sq->reuse[i];
        int eq = 1;
        for (int r = 0; r < nr && eq; r++)
            eq = m->o[r] == o[0][r];
        if (eq)
            return m;
    }
    for (int i = 0; ws->fm && i < ws->fm->nmany; i++) {
        const struct reuse_many *m = &ws->fm->many[i];
        int eq = m->r.found == found && m->r.recv == recv && m->r.mask == mask;
        for (uint32_t left = found; left && eq; left &= left - 1)
            eq = !memcmp(m->o[__builtin_ctz(left)], o[__builtin_ctz(left)],
                         (size_t)nr * sizeof **o);
        if (eq)
            return &m->r;
    }
    if (ws->sq->ndiffs < 0)
        neighbour_diffs(ws, inner, master);
    int possible = ws->sq->ndiffs > MAX_DIFFS;
    for (uint32_t left = found; left && !possible; left &= left - 1) {
        int c = __builtin_ctz(left);
        for (int i = 0; i < ws->sq->ndiffs && i < MAX_DIFFS && !possible; i++) {
            int eq = 1;
            for (int r = 0; r < nr && eq; r++)
                eq = ws->sq->diffs[i][r] == o[c][r];
            possible = eq;
        }
    }
    uint64_t F = ws->F, nreused = 0, out = 0;
    if (possible)
        nreused = mark_reused(ws, recv, mask, found, o, &out);
    uint64_t groups = F - out - nreused;
    if (nreused && !ws->nomc && ws->sq->injective) {
        groups = distinct_moving(ws, inner, master, ws->reused);
    } else if (nreused && !ws->nomc) {
        int64_t kmax[R] = {0};
        for (uint64_t e = 0; e < F; e++)
            for (int r = 0; r < nr; r++)
                if (ws->keys[e * R + r] > kmax[r])
                    kmax[r] = ws->keys[e * R + r];
        groups = distinct(ws, F, nr, kmax, ws->reused);
    }
    struct reuse *slot;
    if (!ws->fm) {
        if (ws->sq->nreuse == REUSE_MEMO) { /* full: start over, with the links here */
            ws->sq->nreuse = 0;
            ws->sq->nlink = 0;
            /* entries move: later ones take new signature slots (the
             * memoized sums keep naming the old, which stay) */
            for (int i = 1; ws->noc && i < ws->seqnoc[ws->sid].nsig; i++)
                ws->seqnoc[ws->sid].sig_ru[i] = NULL;
        }
        slot = &ws->sq->reuse[ws->sq->nreuse++];
        memcpy(slot->o, o[0], (size_t)nr * sizeof **o);
    } else {
        fanmemo *fm = ws->fm;
        struct reuse_many *m = &fm->many[fm->many_at];
        fm->many_at = (fm->many_at + 1) % MANY_MEMO;
        if (fm->nmany < MANY_MEMO)
            fm->nmany++;
        for (int i = 1; ws->noc && i < ws->seqnoc[ws->sid].nsig; i++) /* (reused: a new shape) */
            if (ws->seqnoc[ws->sid].sig_ru[i] == &m->r)
                ws->seqnoc[ws->sid].sig_ru[i] = NULL;
        for (uint32_t left = found; left; left &= left - 1)
            memcpy(m->o[__builtin_ctz(left)], o[__builtin_ctz(left)], (size_t)nr * sizeof **o);
        slot = &m->r;
    }
    slot->recv = (uint8_t)recv;
    slot->mask = (uint8_t)mask;
    slot->found = (uint8_t)found;
    slot->nreused = nreused;
    slot->groups = groups;
    return slot;
}

/* For a call in which the siblings of classes recv in use under mask take
 * their delta from the parent (ru == NULL), or in which ru's links (found,
 * o) served some of them: the slot of its multicast signature (-1: none
 * holds it), and its hops and routers past the first per unit of delta
 * (sig_totals).  Each shape of links gets a slot of its own while slots
 * last; a call no slot can hold marks the sequence mixed. */
static int noc_slot(nm_nest_ws *ws, const struct reuse *ru, uint32_t recv, uint32_t mask,
                    uint32_t found, const int64_t (*o)[R], double *hop, double *rt)
{
    seq_noc *S = &ws->seqnoc[ws->sid];
    nm_noc_sig tmp;
    if (!ru) {
        uint32_t all = ws->nfres ? (1u << (1u << ws->nfres)) - 1u : 1u;
        if (!mask && (recv & all) == all) {
            sig_totals(&S->sig[0], hop, rt);
            return 0;
        }
        fill_keys(ws, ws->fan_inner, ws->fan_master);
        sibling_classes(ws);
        for (uint64_t e = 0; e < ws->F; e++)
            ws->reused[e] = (uint8_t)!sibling_receives(ws, e, recv, mask);
        fan_sig(ws, ws->reused, &tmp);
        S->sig_mixed = 1;
        sig_totals(&tmp, hop, rt);
        return -1;
    }
    for (int i = 1; i < S->nsig; i++)
        if (S->sig_ru[i] == ru) {
            sig_totals(&S->sig[i], hop, rt);
            return i;
        }
    uint64_t out;
    mark_reused(ws, recv, mask, found, o, &out);
    fan_sig(ws, ws->reused, &tmp);
    sig_totals(&tmp, hop, rt);
    if (S->nsig < NM_NOC_SLOTS) {
        S->sig[S->nsig] = tmp;
        S->sig_ru[S->nsig] = ru;
        return S->nsig++;
    }
    S->sig_mixed = 1;
    return -1;
}

/* ---- the sequence sum ---- */

/* Context of the fan-out whose links are being evaluated (spatial recorder). */
struct fanctx {
    int inner, master;
};

/* Neighbour reuse for a delta of shape (kind, after jump tau) following one
 * of shape (pkind, after ptau); memoized per pair of shapes. */
static const struct reuse *links_for(nm_nest_ws *ws, const struct fanctx *fc, int pkind, int ptau,
                                     int kind, int tau)
{
    for (int i = 0; i < ws->sq->nlink; i++) {
        const linkmemo *m = &ws->sq->link[i];
        if (m->pkind == pkind && m->kind == kind && m->tau == tau &&
            (pkind != D_DIFF || m->ptau == ptau))
            return m->ru;
    }
    /* Equal deltas have equal sizes; the same shape means a shift equal to
     * the jump between them; anything else is compared piece by piece, with
     * the previous box at the origin and this one at jump tau. */
    uint64_t psize = pkind == D_EMPTY ? 0 : pkind == D_FULL ? ws->sq->vol : ws->sq->js[ptau].diff;
    uint64_t size = kind == D_EMPTY ? 0 : kind == D_FULL ? ws->sq->vol : ws->sq->js[tau].diff;
    int64_t o[1][R];
    int found;
    if (psize != size) {
        found = 0;
    } else if (kind == pkind && (kind == D_FULL || ptau == tau)) {
        memcpy(o[0], ws->sq->js[tau].jump, sizeof o[0]);
        found = 1;
    } else {
        delta prev, cur;
        memset(&prev, 0, sizeof prev);
        memset(&cur, 0, sizeof cur);
        prev.kind = (int8_t)pkind;
        cur.kind = (int8_t)kind;
        for (int r = 0; r < ws->nr; r++) {
            prev.b[r] = -ws->sq->js[ptau].jump[r];
            cur.a[r] = ws->sq->js[tau].jump[r];
            prev.aext[r] = prev.bext[r] = cur.aext[r] = cur.bext[r] = ws->sq->ext[r];
        }
        found = shift_between(&cur, &prev, ws->nr, o[0]);
    }
    const struct reuse *ru = NULL;
    if (found) {
        ru = reuse_for(ws, fc->inner, fc->master, 1, 0, 1, o);
        if (!ru->nreused || ru->groups >= ws->sq->groups0)
            ru = NULL;
    }
    if (ws->sq->nlink == LINK_MEMO) /* full: start over */
        ws->sq->nlink = 0;
    ws->sq->link[ws->sq->nlink++] =
        (linkmemo){(int8_t)pkind, (int8_t)kind, (int16_t)ptau, (int16_t)tau, ru};
    return ru;
}

/* The network parts of a call of delta size sz (ru: the links that served
 * some siblings, or NULL); apart, so that one_call stays small. */
static __attribute__((noinline)) void one_call_noc(nm_nest_ws *ws, const struct reuse *ru,
                                                   double sz, nsums *ns)
{
    double hop, rt;
    int slot = noc_slot(ws, ru, 1, 0, 1, ru ? (const int64_t(*)[R])ru->o : NULL, &hop, &rt);
    if (slot >= 0)
        ns->sz[slot] = sz;
    ns->hop = hop * sz;
    ns->rt = rt * sz;
}

/* One call arriving after jump tau (a canonical id; -1: the first call);
 * its network parts into *ns when not NULL. */
static inline __attribute__((always_inline)) sums one_call(nm_nest_ws *ws, const struct fanctx *fc,
                                                            int tau, dstate *st, nsums *ns)
{
    uint64_t size;
    int kind;
    if (tau < 0 || ws->always_full) {
        size = ws->sq->vol;
        kind = D_FULL;
    } else if (tau == 0) { /* the zero jump: the tile stands still */
        size = 0;
        kind = D_EMPTY;
    } else if (st->trans == 0 || st->trans == tau) {
        st->trans = (int16_t)tau;
        size = ws->sq->js[tau].diff;
        /* Nothing kept from the previous box: the delta is the full box. */
        kind = size == 0 ? D_EMPTY : size == ws->sq->vol ? D_FULL : D_DIFF;
    } else {
        st->trans = 0;
        size = ws->sq->vol;
        kind = D_FULL;
    }
    sums out = {0, 0, 0};
    if (ns)
        memset(ns, 0, sizeof *ns);
    if (ws->F <= 1) {
        out.acc = out.wacc = (double)size;
        return out;
    }
    double sz = (double)size;
    out.acc = (double)ws->sq->groups0 * sz;
    out.wacc = (double)ws->F * sz;
    const struct reuse *ru = NULL;
    if (size > 0 && ws->links && !ws->nolink && st->pkind >= 0 && tau >= 0) {
        ru = links_for(ws, fc, st->pkind, st->ptau, kind, tau);
        if (ru) {
            out.acc = (double)ru->groups * sz;
            out.wacc = (double)(ws->F - ru->nreused) * sz;
            out.link = (double)ru->nreused * sz;
        }
    }
    if (ns && size > 0)
        one_call_noc(ws, ru, sz, ns);
    if (ws->links) {
        st->pkind = (int8_t)kind;
        st->ptau = (int16_t)(tau < 0 ? 0 : tau);
    }
    return out;
}

/* The entry state, packed. */
static uint64_t state_key(const dstate *st)
{
    /* The previous delta's jump matters only for a partial (DIFF) delta. */
    uint16_t ptau = st->pkind == D_DIFF ? (uint16_t)st->ptau : 0;
    return (uint64_t)(uint16_t)st->trans | (uint64_t)(uint8_t)st->pkind << 16 |
           (uint64_t)ptau << 24;
}

/* The key of the hashed memo: the sequence, j and the entry state. */
static uint64_t memo_key(int sid, int j, uint64_t state)
{
    return (uint64_t)(uint16_t)j | state << 16 | (uint64_t)sid << 56;
}

/* Whether memo entry m holds: the stamp its sequence gives its j now. */
static int memo_holds(const nm_nest_ws *ws, const memo *m)
{
    return m->stamp &&
           m->stamp == ws->stamps[(size_t)(m->key >> 56) * (size_t)ws->jcap + (m->key & 0xffff)];
}

/* Sum over the calls of seq(j) after its first one, given the state that
 * first call left (*st, updated to the state after the last call).  It does
 * not depend on how seq(j) was entered, so it is memoized on (j, state):
 *
 *     rest(j) = rest(j-1)  +  (n_j - 1) * (call after jump J_j  +  rest(j-1))
 *
 * and, since it depends only on q_1..q_j, the entries outlive the analysis
 * while those loops stay as they are (struct seq). */
static sums rest(nm_nest_ws *ws, const struct fanctx *fc, int j, dstate *st, nsums *ns)
{
    if (j == 0) {
        if (ns)
            memset(ns, 0, sizeof *ns);
        return (sums){0, 0, 0};
    }
    jstep *J = &ws->sq->js[j];
    nsums *jn = ws->jnoc ? ws->jnoc + ((size_t)ws->sid * (size_t)ws->jcap + (size_t)j) * JMEMO
                         : NULL;
    uint64_t state = state_key(st);
    for (int i = 0; i < J->nmemo; i++)
        if (J->memo[i].key == state) {
            *st = J->memo[i].out;
            if (ns)
                *ns = jn[i];
            return J->memo[i].s;
        }
    int hashed = J->nmemo == JMEMO; /* more states than the loop keeps */
    uint64_t key = 0;
    uint32_t stamp = 0;
    size_t slot = 0;
    if (hashed) {
        key = memo_key(ws->sid, j, state);
        stamp = ws->stamps[(size_t)ws->sid * (size_t)ws->jcap + (size_t)j];
        slot = (size_t)((key * UINT64_C(0x9E3779B97F4A7C15)) >> 52) & (MEMO_SLOTS - 1);
        for (size_t probe = 0; probe < 8; probe++) {
            memo *m = &ws->memo[(slot + probe) & (MEMO_SLOTS - 1)];
            if (m->key == key && m->stamp == stamp) {
                *st = m->out;
                if (ns)
                    *ns = ws->memo_noc[(slot + probe) & (MEMO_SLOTS - 1)];
                return m->s;
            }
            if (!memo_holds(ws, m))
                break;
        }
    }
    nsums na, nc, nr;
    sums a = rest(ws, fc, j - 1, st, ns ? &na : NULL);
    sums c = one_call(ws, fc, J->jid, st, ns ? &nc : NULL);
    sums r = rest(ws, fc, j - 1, st, ns ? &nr : NULL);
    double w = (double)(J->n - 1);
    sums out = {a.acc + w * (c.acc + r.acc), a.wacc + w * (c.wacc + r.wacc),
                a.link + w * (c.link + r.link)};
    if (ns) {
        *ns = na;
        nsums_add(&nc, &nr, 1.0);
        nsums_add(ns, &nc, w);
    }
    if (!hashed) {
        if (ns)
            jn[J->nmemo] = *ns;
        J->memo[J->nmemo++] = (jmemo){state, *st, out};
        return out;
    }
    for (size_t probe = 0; probe < 8; probe++) { /* a full neighbourhood just is not cached */
        memo *m = &ws->memo[(slot + probe) & (MEMO_SLOTS - 1)];
        if (!memo_holds(ws, m)) {
            *m = (memo){key, stamp, *st, out};
            if (ns)
                ws->memo_noc[(slot + probe) & (MEMO_SLOTS - 1)] = *ns;
            break;
        }
    }
    return out;
}

/* ---- imperfect nests: the calls walked one by one ----
 *
 * With residuals the child's tile changes shape when every outer loop of a
 * dimension is on its last iteration, and Timeloop's schedule changes with
 * it (nest-analysis.cpp, ComputeTemporalWorkingSet): a loop whose dimension
 * has a residual further in also runs its last iteration (and, when it has a
 * residual itself, its second-to-last), so that the partial tiles are seen.
 * The walk follows that schedule call by call, with Timeloop's rule for
 * keeping the previous tile (SaveAndSubtractIfSameStride): the overlap is
 * kept while the tile's translation -- the rounded move of its centre --
 * repeats or is zero.  On a perfect nest it gives the same sums as the
 * memoized recursion above (the test suite checks this on the corpus). */

typedef struct wbox {
    int64_t lo[R], ext[R];
} wbox;

/* What the calls so far leave behind for the next: the previous tile, the
 * translation it moved by (when moving), and the previous delta (links). */
typedef struct wstate {
    int have_prev, moving, have_pdelta;
    wbox prev;
    int64_t trans[R];
    delta pdelta;
} wstate;

typedef struct walker {
    nm_nest_ws *ws;
    const struct fanctx *fc;
    int ds, nr;
    const int *q;                 /* branching loops above the child, q[1] innermost */
    int accumulating;             /* q[1] sits right above the child's boundary */
    const int64_t *span;          /* the child's extents per dimension ... */
    const int64_t *res;           /* ... and in the last instance of the loops above */
    const uint32_t *idle;         /* per j: dims whose loops above all on their last
                                   * iteration leave this class of instances idle */
    int64_t base[R];              /* the child's corner along each axis of the data space */
    int ncls;                     /* classes of siblings in the fan-out (1: no residuals) */
    wstate st[SCLS];              /* per class: what its siblings' calls left behind */
} walker;

/* x/2 rounded half away from zero, as C's round() does. */
static int64_t half_round(int64_t x)
{
    return x >= 0 ? (x + 1) / 2 : -((-x + 1) / 2);
}

/* The delta of a call whose box is cur (volume vol) for siblings whose
 * calls so far left *st, into *dl; returns its size and moves st on to
 * this call (all but the previous delta, which links still compare with). */
static uint64_t take_delta(const walker *w, wstate *st, const wbox *cur, uint64_t vol, delta *dl)
{
    const nm_nest_ws *ws = w->ws;
    int nr = w->nr;
    /* (b and bext are read only for D_DIFF, and only their first nr ranks:
     * no memset, which costs as much as the rest of a call) */
    memcpy(dl->a, cur->lo, sizeof dl->a);
    memcpy(dl->aext, cur->ext, sizeof dl->aext);
    dl->kind = D_FULL;
    uint64_t size = vol;
    if (!ws->always_full && st->have_prev) {
        int64_t t[R];
        int zero = 1, same = 1;
        for (int r = 0; r < nr; r++) {
            t[r] = half_round(2 * (cur->lo[r] - st->prev.lo[r]) + cur->ext[r] - st->prev.ext[r]);
            zero &= t[r] == 0;
            same &= t[r] == st->trans[r];
        }
        int keep = 1;
        if (!zero || ws->stride_2024) { /* before 2025 a zero move was a stride too */
            if (!st->moving) {
                st->moving = 1;
                memcpy(st->trans, t, (size_t)nr * sizeof *t);
            } else if (!same) {
                keep = 0;
                st->moving = 0;
            }
        }
        if (keep) {
            uint64_t inter = 1;
            for (int r = 0; r < nr; r++) {
                int64_t lo = cur->lo[r] > st->prev.lo[r] ? cur->lo[r] : st->prev.lo[r];
                int64_t hi1 = cur->lo[r] + cur->ext[r], hi2 = st->prev.lo[r] + st->prev.ext[r];
                int64_t hi = hi1 < hi2 ? hi1 : hi2;
                inter *= hi > lo ? (uint64_t)(hi - lo) : 0;
            }
            size = vol - inter;
            dl->kind = size == 0 ? D_EMPTY : D_DIFF;
            memcpy(dl->b, st->prev.lo, sizeof dl->b);
            memcpy(dl->bext, st->prev.ext, sizeof dl->bext);
        }
    }
    if (!ws->always_full) {
        st->prev = *cur;
        st->have_prev = 1;
    }
    return size;
}

/* Whether two deltas of the same call (same box) are the same data. */
static int same_delta(const delta *x, const delta *y, int nr)
{
    if (x->kind != y->kind)
        return 0;
    for (int r = 0; r < nr && x->kind == D_DIFF; r++)
        if (x->b[r] != y->b[r] || x->bext[r] != y->bext[r])
            return 0;
    return 1;
}

/* One call of the child's boundary loop, weight 1.  With spatial residuals
 * in the fan-out each class of siblings takes its own delta (a class that
 * sat out calls may still hold what the others had to fetch again); the
 * classes that take the same delta share its multicast. */
static sums walk_call(walker *w, uint32_t last, nsums *ns)
{
    nm_nest_ws *ws = w->ws;
    int nr = w->nr;
    const int64_t(*coef)[R] = ws->coef[w->ds];
    wbox cur;
    uint64_t vol = 1;
    for (int r = 0; r < nr; r++) {
        cur.lo[r] = w->base[r];
        cur.ext[r] = 1;
    }
    for (int d = 0; d < ws->wl->ndims; d++) {
        int64_t e = (last >> d) & 1u ? w->res[d] : w->span[d];
        for (int r = 0; r < nr; r++)
            cur.ext[r] += coef[d][r] * (e - 1);
    }
    for (int r = 0; r < nr; r++)
        vol *= (uint64_t)cur.ext[r];
    uint32_t mask = ws->nfres ? fan_mask(ws, last) : 0;
    delta dl[SCLS];
    uint64_t size[SCLS];
    uint32_t recv[SCLS]; /* per class that leads a group of equal deltas: the group */
    for (int c = 0; c < w->ncls; c++) {
        recv[c] = 0;
        if (c & (int)mask)
            continue; /* sits this call out */
        size[c] = take_delta(w, &w->st[c], &cur, vol, &dl[c]);
        int lead = c;
        for (int c2 = 0; c2 < c && lead == c; c2++)
            if (recv[c2] && same_delta(&dl[c2], &dl[c], nr))
                lead = c2;
        recv[lead] |= 1u << c;
    }
    if (ns)
        memset(ns, 0, sizeof *ns);
    if (ws->F <= 1) {
        double sz = (double)size[0];
        return (sums){sz, sz, 0.0};
    }
    sums out = {0, 0, 0};
    for (int c = 0; c < w->ncls; c++) {
        if (!recv[c])
            continue;
        double sz = (double)size[c];
        uint64_t F = ws->F, groups = ws->sq->groups0;
        if (ws->nfres) { /* the siblings of this group, in use now */
            const fanuse *u = fan_use(ws, w->fc->inner, w->fc->master, mask, recv[c]);
            F = u->F;
            groups = u->groups;
        }
        sums one = {(double)groups * sz, (double)F * sz, 0.0};
        int64_t o[SCLS][R];
        uint32_t found = 0;
        for (int c2 = 0; size[c] > 0 && ws->links && !ws->nolink && c2 < w->ncls; c2++)
            if (w->st[c2].have_pdelta && shift_between(&dl[c], &w->st[c2].pdelta, nr, o[c2]))
                found |= 1u << c2;
        const struct reuse *used = NULL;
        if (found) {
            const struct reuse *ru =
                reuse_for(ws, w->fc->inner, w->fc->master, recv[c], mask, found, o);
            if (ru->nreused && ru->groups < groups) {
                one = (sums){(double)ru->groups * sz, (double)(F - ru->nreused) * sz,
                             (double)ru->nreused * sz};
                used = ru;
            }
        }
        if (ns && size[c] > 0) {
            double hop, rt;
            int slot = noc_slot(ws, used, recv[c], mask, found, (const int64_t(*)[R])o, &hop, &rt);
            if (slot >= 0)
                ns->sz[slot] += sz;
            ns->hop += hop * sz;
            ns->rt += rt * sz;
        }
        sums_add(&out, &one, 1.0);
    }
    for (int c = 0; ws->links && c < w->ncls; c++) {
        if (c & (int)mask)
            continue;
        w->st[c].pdelta = dl[c];
        w->st[c].have_pdelta = 1;
    }
    return out;
}

/* The state as integers relative to the current corner (so that sub-walks
 * that differ only by where they start compare equal); returns the count. */
static inline __attribute__((always_inline)) int pack_one(const walker *w, const wstate *st,
                                                           int64_t *restrict k)
{
    int nr = w->nr, n = 0;
    k[n++] = st->have_prev | st->moving << 1 | st->have_pdelta << 2 |
             (int64_t)(st->have_pdelta ? st->pdelta.kind : 0) << 3;
    if (st->have_prev) {
        for (int r = 0; r < nr; r++) {
            k[n++] = st->prev.lo[r] - w->base[r];
            k[n++] = st->prev.ext[r];
        }
    }
    if (st->moving)
        for (int r = 0; r < nr; r++)
            k[n++] = st->trans[r];
    if (st->have_pdelta && st->pdelta.kind != D_EMPTY) {
        for (int r = 0; r < nr; r++) {
            k[n++] = st->pdelta.a[r] - w->base[r];
            k[n++] = st->pdelta.aext[r];
            if (st->pdelta.kind == D_DIFF) {
                k[n++] = st->pdelta.b[r] - w->base[r];
                k[n++] = st->pdelta.bext[r];
            }
        }
    }
    return n;
}

static int unpack_one(const walker *w, wstate *st, const int64_t *k)
{
    int nr = w->nr, n = 0;
    memset(st, 0, sizeof *st);
    st->have_prev = (int)(k[n] & 1);
    st->moving = (int)(k[n] >> 1 & 1);
    st->have_pdelta = (int)(k[n] >> 2 & 1);
    st->pdelta.kind = (int8_t)(k[n++] >> 3);
    if (st->have_prev) {
        for (int r = 0; r < nr; r++) {
            st->prev.lo[r] = k[n++] + w->base[r];
            st->prev.ext[r] = k[n++];
        }
    }
    if (st->moving)
        for (int r = 0; r < nr; r++)
            st->trans[r] = k[n++];
    if (st->have_pdelta && st->pdelta.kind != D_EMPTY) {
        for (int r = 0; r < nr; r++) {
            st->pdelta.a[r] = k[n++] + w->base[r];
            st->pdelta.aext[r] = k[n++];
            if (st->pdelta.kind == D_DIFF) {
                st->pdelta.b[r] = k[n++] + w->base[r];
                st->pdelta.bext[r] = k[n++];
            }
        }
    }
    return n;
}

/* Every class's state, one after the other; a class whose state equals an
 * earlier one's is written as -(that class + 1).  Returns the count, or -1
 * when more than `room` ints would be needed (then the state is not kept). */
static int pack_classes(const walker *w, int64_t *k, int room)
{
    int n = 0, at[SCLS], len[SCLS];
    for (int c = 0; c < w->ncls; c++) {
        if (n + STATE_INTS > room)
            return -1;
        at[c] = n;
        len[c] = pack_one(w, &w->st[c], k + n);
        int same = -1;
        for (int c2 = 0; c2 < c && same < 0; c2++)
            if (len[c2] == len[c] && !memcmp(k + at[c2], k + n, (size_t)len[c] * sizeof *k))
                same = c2;
        if (same >= 0) {
            k[n++] = -(int64_t)(same + 1);
            len[c] = -1; /* (matches nothing later) */
        } else {
            n += len[c];
        }
    }
    return n;
}

/* The same, inline where there is one class (no spatial residual: the hot
 * path). */
static inline __attribute__((always_inline)) int pack_state(const walker *w, int64_t *k,
                                                            int room)
{
    if (w->ncls == 1)
        return room >= STATE_INTS ? pack_one(w, &w->st[0], k) : -1;
    return pack_classes(w, k, room);
}

static void unpack_state(walker *w, const int64_t *k)
{
    int n = 0;
    for (int c = 0; c < w->ncls; c++) {
        if (k[n] < 0)
            w->st[c] = w->st[-k[n++] - 1];
        else
            n += unpack_one(w, &w->st[c], k + n);
    }
}

static uint64_t hash_ints(const int64_t *k, int n)
{
    uint64_t h = UINT64_C(0xcbf29ce484222325);
    for (int i = 0; i < n; i++)
        h = (h ^ (uint64_t)k[i]) * UINT64_C(0x100000001b3);
    return h ^ h >> 29;
}

/* Loop q[j] and everything inside it, weight 1; last: the dimensions whose
 * loops above are all on their last iteration.  What follows depends only
 * on (j, last, the state relative to the corner), so the result and the
 * state it leaves are memoized on that. */
static sums walk(walker *w, int j, uint32_t last, nsums *ns)
{
    if (last & w->idle[j]) { /* this class of instances sits these calls out */
        if (ns)
            memset(ns, 0, sizeof *ns);
        return (sums){0, 0, 0};
    }
    if (j == 0)
        return walk_call(w, last, ns);
    nm_nest_ws *ws = w->ws;
    int64_t key[WALK_KEY];
    int cached = j >= 2; /* the innermost loop's few calls cost less than a lookup */
    int nk = 0;
    uint64_t h = 0;
    size_t slot = 0;
    if (cached) {
        key[0] = j;
        key[1] = last & ws->residual_dims;
        int n = pack_state(w, key + 2, WALK_KEY - 2);
        cached = n >= 0;
        nk = 2 + n;
        h = cached ? hash_ints(key, nk) : 0;
        slot = (size_t)(h & (WALK_MEMO - 1));
    }
    for (size_t probe = 0; cached && probe < 8; probe++) {
        walkmemo *m = &ws->wmemo[(slot + probe) & (WALK_MEMO - 1)];
        if (m->gen != ws->gen)
            break;
        if (m->hash == h && m->nkey == nk && !memcmp(m->key, key, (size_t)nk * sizeof *key)) {
            unpack_state(w, m->out);
            if (ns)
                *ns = ws->wmemo_noc[(slot + probe) & (WALK_MEMO - 1)];
            return m->s;
        }
    }

    const nm_loop *lp = &ws->nest->loop[w->q[j]];
    int d = lp->dim;
    int is_last = (int)((last >> d) & 1u);
    int64_t n = is_last ? lp->residual : lp->end;
    int run_last = is_last && ((ws->residual_below[w->q[j]] >> d) & 1u);
    int second = run_last && lp->residual != lp->end;
    /* The iterations Timeloop runs (index, epochs they stand for) and, when
     * this loop collects the child's deltas, the weight each delta counts
     * with: a run whose delta it discards counts the first steady step again. */
    int64_t idx[4], mult[4];
    double count[4];
    int ne = 0;
    idx[ne] = 0, mult[ne] = 1, count[ne++] = 1;
    if (!run_last) {
        if (n >= 2)
            idx[ne] = 1, mult[ne] = n - 1, count[ne++] = (double)(n - 1);
    } else if (!second) {
        if (n >= 3)
            idx[ne] = 1, mult[ne] = n - 2, count[ne++] = (double)(n - 1);
        if (n >= 2)
            idx[ne] = n - 1, mult[ne] = 1, count[ne++] = n >= 3 ? 0.0 : 1.0;
    } else {
        if (n >= 4)
            idx[ne] = 1, mult[ne] = n - 3, count[ne++] = (double)(n - 2);
        if (n >= 3)
            idx[ne] = n - 2, mult[ne] = 1, count[ne++] = n >= 4 ? 0.0 : 1.0;
        if (n >= 2)
            idx[ne] = n - 1, mult[ne] = 1, count[ne++] = 1;
    }
    int64_t vs = ws->vs[w->q[j]];
    int64_t sbase[R];
    memcpy(sbase, w->base, sizeof sbase);
    sums out = {0, 0, 0};
    if (ns)
        memset(ns, 0, sizeof *ns);
    for (int e = 0; e < ne; e++) {
        for (int r = 0; r < w->nr; r++)
            w->base[r] = sbase[r] + ws->coef[w->ds][d][r] * idx[e] * vs;
        uint32_t inner = last & ~(1u << d);
        if (is_last && idx[e] == n - 1)
            inner |= 1u << d;
        double wt = j == 1 && w->accumulating ? count[e] : (double)mult[e];
        nsums nc;
        sums c = walk(w, j - 1, inner, ns ? &nc : NULL);
        sums_add(&out, &c, wt);
        if (ns)
            nsums_add(ns, &nc, wt);
    }
    memcpy(w->base, sbase, sizeof sbase);

    for (size_t probe = 0; cached && probe < 8; probe++) { /* a full neighbourhood: not cached */
        walkmemo *m = &ws->wmemo[(slot + probe) & (WALK_MEMO - 1)];
        if (m->gen != ws->gen) {
            if (pack_state(w, m->out, WALK_KEY) < 0)
                break; /* the state it leaves is too varied to keep */
            m->gen = ws->gen;
            m->hash = h;
            m->nkey = nk;
            memcpy(m->key, key, (size_t)nk * sizeof *key);
            m->s = out;
            if (ns)
                ws->wmemo_noc[(slot + probe) & (WALK_MEMO - 1)] = *ns;
            break;
        }
    }
    return out;
}

/* The sums of level_accesses for an imperfect nest: data space ds, child
 * boundary b with extents span (res in the last instance of the loops
 * above), branching loops q[1..k] above it. */
static sums walk_level(nm_nest_ws *ws, const struct fanctx *fc, int ds, int b,
                       const int64_t *span, const int64_t *res, const int *q, int k,
                       const uint32_t *idle, nsums *ns)
{
    walker wk, *w = &wk;
    memset(w, 0, offsetof(walker, st)); /* and the states of the classes there are */
    w->ncls = 1 << ws->nfres;
    memset(w->st, 0, (size_t)w->ncls * sizeof w->st[0]);
    w->ws = ws;
    w->fc = fc;
    w->ds = ds;
    w->nr = ws->wl->ds[ds].nranks;
    w->q = q;
    /* Timeloop counts the delta of the first steady step again in place of
     * a last run's delta.  For outputs that makes the parent receive more
     * updates than there are outputs (and read back partial sums that were
     * never written): there its numbers are inconsistent, and the walk
     * counts the last run's own delta, the true count (see check_model's
     * imperfect_outputs_exact). */
    w->accumulating = k >= 1 && q[1] == b + 1 && !ws->wl->ds[ds].read_write;
    w->span = span;
    w->res = res;
    w->idle = idle;
    return walk(w, k, ~0u, ns);
}

/* A new stamp for the jumps of the current sequence from j0 on: memo
 * entries of rest(j >= j0) from before no longer hold. */
static void restamp_from(nm_nest_ws *ws, int j0, int k)
{
    seq *S = ws->sq;
    uint32_t st = ++ws->stamp, *stamp = ws->stamps + (size_t)ws->sid * (size_t)ws->jcap;
    for (int j = j0; j <= k; j++)
        stamp[j] = st;
    /* link shapes that involve a jump from j0 on */
    int n = 0;
    for (int i = 0; i < S->nlink; i++) {
        const linkmemo *m = &S->link[i];
        if (m->tau < j0 && (m->pkind != D_DIFF || m->ptau < j0))
            S->link[n++] = *m;
    }
    S->nlink = n;
}

/* Where level s's child boundary and fan-out sit in the nest, and the
 * child's extents; sets the workspace's fan-out fields (F, links, mesh). */
typedef struct lvl {
    int b;              /* the child's boundary loop (-1: s is innermost) */
    int inner, master;  /* the fan-out's loops, inner..master (none: master < inner) */
    int spatial;
    uint32_t no_reuse;  /* data spaces refetched on every call (no_temporal_reuse) */
    int64_t span[NM_MAX_DIMS], res[NM_MAX_DIMS]; /* the child's extents, and in the last
                                                  * instance of the loops above */
} lvl;

static void level_open(nm_nest_ws *ws, int s, lvl *v)
{
    const nm_nest *nest = ws->nest;
    const nm_workload *wl = ws->wl;
    v->b = s > 0 ? nest->boundary[s - 1] : -1;
    /* The fan-out of level s, if any, sits right above b. */
    v->inner = v->b + 1;
    v->master = v->b;
    while (v->master + 1 <= nest->boundary[s] && nest->loop[v->master + 1].space != NM_TIME)
        v->master++;
    v->spatial = v->master >= v->inner;
    v->no_reuse = v->b >= 0 ? ws->map->level[nest->loop[v->b].level].no_temporal_reuse : 0;
    uint32_t all = (1u << wl->nds) - 1u;
    ws->links = v->spatial && (ws->map->level[s].no_link & all) != all;
    ws->F = 1;
    ws->nfres = 0;
    ws->cls_ready = 0;
    ws->fan_inner = v->inner;
    ws->fan_master = v->master;
    if (v->spatial) {
        int64_t fx = 1;
        for (int l = v->inner; l <= v->master; l++) {
            const nm_loop *lp = &nest->loop[l];
            if (lp->residual != lp->end) {
                int i = ws->nfres++;
                ws->fres_j[i] = (int8_t)(l - v->inner);
                ws->fres_dim[i] = lp->dim;
                ws->fres_r[i] = lp->residual;
                ws->fres_end[i] = lp->end;
            }
            ws->F *= (uint64_t)lp->end;
            if (lp->space == NM_SPACE_X)
                fx *= lp->end;
        }
        /* Neighbour links run over the physical mesh, row by row. */
        ws->hsize = ws->arch->level[s].fanoutX > fx ? ws->arch->level[s].fanoutX : fx;
        int64_t fy = (int64_t)ws->F / fx;
        ws->vsize = ws->arch->level[s].fanoutY > fy ? ws->arch->level[s].fanoutY : fy;
    }
    for (int d = 0; d < wl->ndims; d++)
        v->span[d] = v->res[d] = 1;
    for (int l = 0; l <= v->b; l++) {
        const nm_loop *lp = &nest->loop[l];
        v->res[lp->dim] += (lp->residual - 1) * v->span[lp->dim];
        v->span[lp->dim] *= lp->end;
    }
}

/* Level s's accesses of data space ds when they need no sums of its own: at
 * the innermost level without fan-out, the operands the arithmetic reads;
 * when the child bypasses ds and nothing fans out in between, what the
 * child was to receive (model.c applies the bypass), whatever the deltas of
 * the child's own tile.  Returns 0 when the level needs its sums. */
static int level_given(const nm_nest_ws *ws, int s, int ds, const lvl *v, nm_nest_result *out)
{
    nm_tile *t = &out->tile[s][ds];
    if (v->spatial)
        return 0;
    if (v->b < 0) {
        t->accesses = t->weighted = out->uneven ? (double)out->computes /
                                                      (double)out->replication[s]
                                                : (double)out->steps;
    } else if (!ws->noc && !((ws->map->level[s - 1].keep >> ds) & 1u) &&
               out->tile[s - 1][ds].size && t->size) {
        /* (with networks counted, the level's own deltas: distributed
         * multicast needs them; bypass scales them to the same result) */
        t->accesses = t->weighted = out->tile[s - 1][ds].accesses;
    } else {
        return 0;
    }
    t->link = 0.0;
    if (ws->noc)
        memset(&out->noc[s][ds], 0, sizeof out->noc[s][ds]);
    return 1;
}

/* Points ws->fm at the memo of the fan-out inner..master for the current
 * data space (prepare_fanout done): the one kept for the same fan-out, or
 * the least recently used one, emptied. */
/* What a fan-out's sibling classes, groups and signatures depend on. */
static void fan_key(const nm_nest_ws *ws, int inner, int master, fankey *k)
{
    memset(k, 0, sizeof *k);
    k->nl = master - inner + 1;
    k->nr = ws->nr;
    k->nomc = ws->nomc;
    k->F = (int64_t)ws->F;
    k->hsize = ws->hsize;
    k->vsize = ws->vsize;
    for (int j = 0; j < k->nl; j++) {
        k->end[j] = ws->nest->loop[inner + j].end;
        k->res[j] = ws->nest->loop[inner + j].residual;
        memcpy(k->tv[j], ws->sq->tv_run[j], sizeof k->tv[j]);
    }
}

/* The whole fan-out's multicast signature (prepare_fanout done), from the
 * few kept for the fan-outs seen lately or counted afresh: a search meets
 * the same fan-outs again and again, and counting one sorts its siblings. */
static void full_sig(nm_nest_ws *ws, int inner, int master, nm_noc_sig *out)
{
    fankey k;
    fan_key(ws, inner, master, &k);
    sigmemo *lru = &ws->sigmemo[0];
    ws->sig_clock++;
    for (int i = 0; i < SIG_MEMO; i++) {
        sigmemo *m = &ws->sigmemo[i];
        if (m->used && !memcmp(&m->key, &k, sizeof k)) {
            m->used = ws->sig_clock;
            *out = m->sig;
            return;
        }
        if (m->used < lru->used)
            lru = m;
    }
    fan_sig(ws, NULL, out);
    lru->key = k;
    lru->sig = *out;
    lru->used = ws->sig_clock;
}

static void fan_memo(nm_nest_ws *ws, int inner, int master)
{
    fankey k;
    fan_key(ws, inner, master, &k);
    fanmemo *lru = &ws->fanmemo[0];
    ws->fan_clock++;
    for (int i = 0; i < FAN_MEMOS; i++) {
        fanmemo *m = &ws->fanmemo[i];
        if (m->used && !memcmp(&m->key, &k, sizeof k)) {
            m->used = ws->fan_clock;
            ws->fm = m;
            return;
        }
        if (m->used < lru->used)
            lru = m;
    }
    lru->key = k;
    lru->used = ws->fan_clock;
    lru->nuse = lru->nmany = lru->many_at = 0;
    ws->fm = lru;
}

/* Accesses that storage level s receives from below, per data space.  The
 * loops below index `same` are those of the previous analysis. */
static void level_accesses(nm_nest_ws *ws, int s, int same, nm_nest_result *out)
{
    const nm_nest *nest = ws->nest;
    const nm_workload *wl = ws->wl;
    lvl v;
    level_open(ws, s, &v);
    int b = v.b, inner = v.inner, master = v.master, spatial = v.spatial;
    const int64_t *span = v.span, *res = v.res;
    /* Branching loops above b (a fan-out's siblings are translates of the
     * first, so its loops do not branch). */
    int q[NM_MAX_LOOPS], k = 0;
    for (int l = master + 1; l < nest->nloops; l++)
        if (nest->loop[l].space == NM_TIME && nest->loop[l].end >= 2)
            q[++k] = l;
    /* The child, the fan-out and the loop after it as before: the jumps of
     * the branching loops below `same` hold too. */
    int child_same = same > master + 1;
    int kept = 0;
    while (child_same && kept < k && q[kept + 1] < same)
        kept++;
    const nm_level_map *lm = &ws->map->level[s];
    int walking = nest->imperfect || ws->walk_always || ws->stride_2024;
    /* Spatial residuals above the level's instances, and the gap between
     * branching loops each sits in (j: above q[j], below q[j+1]); each
     * subset of them is a class of instances, idle in those residuals. */
    int unev[NM_MAX_LOOPS], unev_gap[NM_MAX_LOOPS], nunev = 0;
    for (int l = nest->boundary[s] + 1; nest->uneven && l < nest->nloops; l++) {
        const nm_loop *lp = &nest->loop[l];
        if (lp->space == NM_TIME || lp->residual == lp->end)
            continue;
        int j = 0;
        while (j < k && q[j + 1] < l)
            j++;
        unev_gap[nunev] = j;
        unev[nunev++] = l;
    }
    uint32_t ncls = 1u << nunev;

    for (int ds = 0; ds < wl->nds; ds++) {
        const nm_dataspace *dsp = &wl->ds[ds];
        ws->sid = s * NM_MAX_DS + ds;
        seq *S = ws->sq = &ws->seqs[ws->sid];
        ws->fm = NULL;
        if (level_given(ws, s, ds, &v, out)) {
            S->valid = 0;
            continue;
        }
        ws->nr = dsp->nranks;
        ws->always_full = b < 0 || ((v.no_reuse >> ds) & 1u);
        ws->nolink = (int)((lm->no_link >> ds) & 1u);
        ws->nomc = (int)((lm->no_multicast >> ds) & 1u);
        int fresh = !S->valid || !child_same;
        int from = fresh ? 1 : (kept < S->k ? kept : S->k) + 1;
        if (fresh) {
            S->valid = 1;
            S->nreuse = 0;
            S->nlink = 0;
            S->ndiffs = -1;
            if (ws->keys_of == S)
                ws->keys_of = NULL;
            S->vol = box_extent(dsp, span, S->ext);
            memset(&S->js[0], 0, sizeof S->js[0]);
            if (spatial)
                prepare_fanout(ws, ds, inner, master);
        }
        if (ws->noc && fresh) {
            /* the signatures hold while the child's tile and the fan-out
             * do, as the memoized sums that name their slots */
            seq_noc *SN = &ws->seqnoc[ws->sid];
            SN->nsig = 1;
            SN->sig_mixed = 0;
            SN->sig[0].n = 0;
            if (spatial)
                full_sig(ws, inner, master, &SN->sig[0]);
        }
        /* Jumps: J_j = step of q_j minus the steps of q_1..q_{j-1} (the
         * recursion's; the walk moves tiles itself). */
        if (walking) {
            S->k = 0;
        } else {
            if (from <= k)
                restamp_from(ws, from, k);
            uint64_t *hash = ws->hashes + (size_t)ws->sid * (size_t)ws->jcap;
            for (int j = from; j <= k; j++) {
                jstep *J = &S->js[j];
                const int64_t *below = S->js[j - 1].acc;
                J->nmemo = 0;
                int64_t t[R];
                step_vector(ws, ds, q[j], t);
                J->n = nest->loop[q[j]].end;
                uint64_t ov = 1, h = 0;
                int zero = 1;
                for (int r = 0; r < ws->nr; r++) {
                    J->jump[r] = t[r] - below[r];
                    J->acc[r] = below[r] + t[r];
                    int64_t m = J->jump[r] < 0 ? -J->jump[r] : J->jump[r];
                    ov *= m < S->ext[r] ? (uint64_t)(S->ext[r] - m) : 0;
                    h = (h ^ (uint64_t)J->jump[r]) * UINT64_C(0x100000001b3);
                    zero &= J->jump[r] == 0;
                }
                J->diff = S->vol - ov;
                /* Equal jumps share an id (the first j with it; hash[j] is
                 * ~0 for the others); the zero jump has id 0. */
                J->jid = (int16_t)j;
                if (h == ~UINT64_C(0)) /* ~0 marks "not an id" */
                    h = 0;
                if (zero) {
                    J->jid = 0;
                } else {
                    for (int i = 1; i < j; i++) {
                        if (hash[i] != h)
                            continue;
                        const jstep *I = &S->js[i];
                        int eq = 1;
                        for (int r = 0; r < ws->nr && eq; r++)
                            eq = I->jump[r] == J->jump[r];
                        if (eq) {
                            J->jid = (int16_t)i;
                            break;
                        }
                    }
                }
                hash[j] = J->jid == j ? h : ~UINT64_C(0);
            }
            S->k = k;
        }
        struct fanctx fc = {inner, master};
        sums sum;
        nsums nsum, *ns = ws->noc ? &nsum : NULL;
        memset(&nsum, 0, sizeof nsum);
        if (walking) {
            if (spatial)
                fan_memo(ws, inner, master);
            sum = (sums){0, 0, 0};
            for (uint32_t c = 0; c < ncls; c++) {
                /* instances idle past the residuals in c, in use at the others */
                double share = 1.0;
                uint32_t idle[NM_MAX_LOOPS + 1];
                memset(idle, 0, (size_t)(k + 1) * sizeof *idle);
                for (int i = 0; i < nunev; i++) {
                    const nm_loop *lp = &nest->loop[unev[i]];
                    double used = (double)lp->residual / (double)lp->end;
                    if ((c >> i) & 1u) {
                        share *= 1.0 - used;
                        idle[unev_gap[i]] |= 1u << lp->dim;
                    } else {
                        share *= used;
                    }
                }
                if (++ws->gen == 0) { /* generation wrapped: clear for real */
                    memset(ws->wmemo, 0, WALK_MEMO * sizeof *ws->wmemo);
                    ws->gen = 1;
                }
                nsums none;
                sums one = walk_level(ws, &fc, ds, b, span, res, q, k, idle, ns ? &none : NULL);
                sums_add(&sum, &one, share);
                if (ns)
                    nsums_add(ns, &none, share);
            }
        } else {
            dstate st = {0, -1, 0};
            nsums nfirst, nmore;
            sums first = one_call(ws, &fc, -1, &st, ns ? &nfirst : NULL);
            sums more = rest(ws, &fc, k, &st, ns ? &nmore : NULL);
            sum = (sums){first.acc + more.acc, first.wacc + more.wacc, first.link + more.link};
            if (ns) {
                nsum = nfirst;
                nsums_add(ns, &nmore, 1.0);
            }
        }
        nm_tile *t = &out->tile[s][ds];
        t->accesses = sum.acc;
        t->weighted = sum.wacc;
        t->link = sum.link;
        if (ns) {
            nm_tile_noc *tn = &out->noc[s][ds];
            memcpy(tn->sz, nsum.sz, sizeof tn->sz);
            tn->hop = nsum.hop;
            tn->rt = nsum.rt;
        }
    }
}

/* The index of the first loop that differs from the previous analysis's
 * (0 when there was none or a level's switches changed), and the current
 * loops kept for the next. */
static int first_change(nm_nest_ws *ws, const nm_nest *nest, const nm_mapping *m)
{
    seen_nest *p = &ws->seen;
    int same = ws->have_seen;
    for (int s = 0; s < nest->nlevels; s++) {
        const nm_level_map *lm = &m->level[s];
        if (lm->no_link != p->no_link[s] || lm->no_multicast != p->no_multicast[s] ||
            lm->no_temporal_reuse != p->no_temporal_reuse[s]) {
            same = 0;
            p->no_link[s] = lm->no_link;
            p->no_multicast[s] = lm->no_multicast;
            p->no_temporal_reuse[s] = lm->no_temporal_reuse;
        }
    }
    int n = nest->nloops < p->nloops ? nest->nloops : p->nloops;
    int l = 0;
    if (same)
        for (; l < n; l++) {
            const nm_loop *x = &nest->loop[l], *y = &p->loop[l];
            if (x->end != y->end || x->residual != y->residual || x->dim != y->dim ||
                x->space != y->space || x->level != y->level)
                break;
        }
    for (int i = l; i < nest->nloops; i++)
        p->loop[i] = nest->loop[i];
    p->nloops = nest->nloops;
    return l;
}

/* Points the workspace at one nest, with each loop's step along its
 * dimension and where residuals sit. */
static void nest_begin(nm_nest_ws *ws, const nm_nest *nest, const nm_mapping *m,
                       const nm_arch *arch, const nm_workload *wl)
{
    ws->nest = nest;
    ws->map = m;
    ws->arch = arch;
    ws->wl = wl;
    int64_t span[NM_MAX_DIMS];
    for (int d = 0; d < wl->ndims; d++)
        span[d] = 1;
    uint32_t seen = 0; /* dims with a residual loop inside the current one */
    for (int l = 0; l < nest->nloops; l++) {
        const nm_loop *lp = &nest->loop[l];
        ws->vs[l] = span[lp->dim];
        span[lp->dim] *= lp->end;
        ws->residual_below[l] = seen;
        if (lp->residual != lp->end)
            seen |= 1u << lp->dim;
    }
    ws->residual_dims = seen;
}

/* Step vectors of loops from..nloops-1 (the others' stand). */
static void set_steps(nm_nest_ws *ws, int from)
{
    for (int ds = 0; ds < ws->wl->nds; ds++)
        for (int l = from; l < ws->nest->nloops; l++) {
            const int64_t *c = ws->coef[ds][ws->nest->loop[l].dim];
            for (int r = 0; r < R; r++)
                ws->step[ds][l][r] = c[r] * ws->vs[l];
        }
}

void nm_nest_analyze(nm_nest_ws *ws, const nm_nest *nest, const nm_mapping *m,
                     const nm_arch *arch, const nm_workload *wl, nm_nest_result *out)
{
    nest_begin(ws, nest, m, arch, wl);
    /* Stamps for every sequence of this analysis, or start over. */
    if (ws->stamp > UINT32_MAX - (uint32_t)ws->nseqs)
        restamp(ws);
    int walking = nest->imperfect || ws->walk_always || ws->stride_2024;
    int same = first_change(ws, nest, m);
    if (walking)
        same = 0;
    ws->have_seen = !walking;
    set_steps(ws, same);
    for (int s = 0; s < nest->nlevels; s++)
        level_accesses(ws, s, same, out);
}

void nm_nest_analyze_level(nm_nest_ws *ws, const nm_nest *nest, const nm_mapping *m,
                           const nm_arch *arch, const nm_workload *wl, int s,
                           nm_nest_result *out)
{
    nest_begin(ws, nest, m, arch, wl);
    if (ws->stamp > UINT32_MAX - (uint32_t)ws->nseqs)
        restamp(ws);
    set_steps(ws, 0);
    ws->have_seen = 0; /* the next analysis starts cold */
    level_accesses(ws, s, 0, out);
}

/* ---- the least accesses any loop order can cause ----
 *
 * Every call of a sequence delivers what its box lacks of the previous one
 * (or the whole box), so the calls together deliver at least the union of
 * the child's boxes over every iteration of the temporal loops above the
 * fan-out -- whatever their order.  Each axis of a data space moves with its
 * own dimensions, so the union is the product of the union along each axis:
 * intervals of the child's extent at every position the loops reach. */

/* The union's length along axis r of data space ds, at the positions the
 * temporal loops master+1..last reach; ext: the child's extent.  Dimensions
 * that also feed another axis (where the product rule fails), negative
 * coefficients, and loops past UNION_CAP positions are left standing, which
 * keeps a subset of the boxes: a smaller union, still a floor. */
static uint64_t axis_union(nm_nest_ws *ws, int ds, int r, int master, int last, int64_t ext)
{
    const nm_dataspace *dsp = &ws->wl->ds[ds];
    const nm_nest *nest = ws->nest;
    uint64_t *o = ws->upos;
    size_t n = 1;
    o[0] = 0;
    for (int t = 0; t < dsp->rank[r].nterms; t++) {
        int d = dsp->rank[r].term[t].dim;
        int64_t coef = dsp->rank[r].term[t].coef;
        int shared = 0;
        for (int r2 = 0; r2 < dsp->nranks && !shared; r2++)
            shared = r2 != r && ws->coef[ds][d][r2] != 0;
        if (shared || coef <= 0)
            continue;
        for (int l = master + 1; l <= last; l++) {
            const nm_loop *lp = &nest->loop[l];
            if (lp->space != NM_TIME || lp->dim != d || lp->end < 2 ||
                n * (size_t)lp->end > UNION_CAP)
                continue;
            uint64_t step = (uint64_t)(coef * ws->vs[l]);
            for (int64_t i = 1; i < lp->end; i++)
                for (size_t k = 0; k < n; k++)
                    o[(size_t)i * n + k] = o[k] + (uint64_t)i * step;
            n *= (size_t)lp->end;
        }
    }
    sort_u64(o, n);
    uint64_t len = 0, reach = 0; /* covered up to reach (exclusive) */
    for (size_t k = 0; k < n; k++) {
        uint64_t lo = o[k] > reach ? o[k] : reach, hi = o[k] + (uint64_t)ext;
        if (hi > lo)
            len += hi - lo;
        if (hi > reach)
            reach = hi;
    }
    return len;
}

/* Whether some delta of the sequence can come over a link.  The shift
 * between two deltas is a sum of steps of the temporal loops above the
 * fan-out, so a neighbour difference along an axis none of them moves never
 * matches one. */
static int links_possible(nm_nest_ws *ws, int ds, int inner, int master)
{
    ws->sq->ndiffs = -1;
    neighbour_diffs(ws, inner, master);
    if (ws->sq->ndiffs > MAX_DIFFS)
        return 1;
    uint32_t moved = 0; /* axes */
    for (int l = master + 1; l < ws->nest->nloops; l++)
        for (int r = 0; r < ws->nr; r++)
            if (ws->nest->loop[l].space == NM_TIME && ws->step[ds][l][r])
                moved |= 1u << r;
    for (int i = 0; i < ws->sq->ndiffs; i++) {
        int outside = 0;
        for (int r = 0; r < ws->nr; r++)
            outside |= ws->sq->diffs[i][r] != 0 && !((moved >> r) & 1u);
        if (!outside)
            return 1;
    }
    return 0;
}

/* Words the child's sequence of calls delivers at least: for each level t
 * from s out, every iteration of the temporal loops above t runs the loops
 * up to t through, which visits the union of their boxes, and only the one
 * box kept from before can spare a part of it:
 *
 *     N_above(t) * (U(t) - vol) + vol,
 *
 * the largest over t (t outermost: the union over the whole run). */
static uint64_t sweep_floor(nm_nest_ws *ws, int ds, int s, int master, uint64_t vol,
                            const int64_t *ext)
{
    const nm_nest *nest = ws->nest;
    uint64_t best = vol;
    for (int t = s; t < nest->nlevels; t++) {
        int last = nest->boundary[t];
        if (last <= master)
            continue;
        double above = 1.0;
        for (int l = last + 1; l < nest->nloops; l++)
            if (nest->loop[l].space == NM_TIME)
                above *= (double)nest->loop[l].end;
        uint64_t u = 1;
        for (int r = 0; r < ws->wl->ds[ds].nranks && u; r++)
            u *= axis_union(ws, ds, r, master, last, ext[r]);
        double f = above * (double)(u > vol ? u - vol : 0) + (double)vol;
        uint64_t fl = f < 1.8e19 ? (uint64_t)f : UINT64_MAX;
        if (fl > best)
            best = fl;
    }
    return best;
}

void nm_nest_floor(nm_nest_ws *ws, const nm_nest *nest, const nm_mapping *m,
                   const nm_arch *arch, const nm_workload *wl, nm_nest_result *out)
{
    nest_begin(ws, nest, m, arch, wl);
    set_steps(ws, 0);
    ws->have_seen = 0; /* the step vectors are this nest's now */
    seq *S = ws->sq = &ws->floor_seq;
    for (int s = 0; s < nest->nlevels; s++) {
        lvl v;
        level_open(ws, s, &v);
        double calls = 1.0; /* of each sequence */
        for (int l = v.master + 1; l < nest->nloops; l++)
            if (nest->loop[l].space == NM_TIME)
                calls *= (double)nest->loop[l].end;
        for (int ds = 0; ds < wl->nds; ds++) {
            if (level_given(ws, s, ds, &v, out))
                continue;
            ws->nr = wl->ds[ds].nranks;
            ws->nomc = (int)((m->level[s].no_multicast >> ds) & 1u);
            if (ws->keys_of == S)
                ws->keys_of = NULL;
            S->vol = box_extent(&wl->ds[ds], v.span, S->ext);
            S->groups0 = 1;
            if (v.spatial)
                prepare_fanout(ws, ds, v.inner, v.master);
            double size; /* words per receiver over the run, at least */
            if (v.b < 0 || ((v.no_reuse >> ds) & 1u)) {
                size = (double)S->vol * calls; /* every call fetches the whole box */
            } else if (ws->links && !((m->level[s].no_link >> ds) & 1u) &&
                       links_possible(ws, ds, v.inner, v.master)) {
                /* Deltas may come over links: only the first call is sure
                 * to come from here, and the multicast groups later calls
                 * leave can be one (model.c scales by accesses / weighted). */
                nm_tile *t = &out->tile[s][ds];
                t->accesses = (double)S->vol;
                t->weighted = (double)ws->F * (double)S->vol;
                t->link = 0.0;
                continue;
            } else {
                size = (double)sweep_floor(ws, ds, s, v.master, S->vol, S->ext);
            }
            nm_tile *t = &out->tile[s][ds];
            t->accesses = (double)S->groups0 * size;
            t->weighted = (double)ws->F * size;
            t->link = 0.0;
        }
    }
}
