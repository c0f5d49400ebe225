/* search.c — strategies and the deterministic parallel search engine; see
 * search.h.
 *
 * The candidate stream is a sequence of "outer points", each holding a
 * number of candidates (1 for a random draw, the distinct loop orders of one
 * factorization for exhaustive).  The main thread walks the outer points in
 * order, cuts them into chunks of at most CHUNK candidates and hands one
 * chunk to each worker per round; workers evaluate their chunk into compact
 * records; the main thread then merges the chunks in order, applying the
 * termination rules candidate by candidate.  Mappings are not stored: a
 * record that enters the best, the top-K or the Pareto front is regenerated
 * from (outer point, position).
 */
#include <config.h>

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "nestmap/alloc.h"
#include "nestmap/roofline.h"
#include "nestmap/search.h"

#define CHUNK 2048           /* candidates per work item */
#define RANDOM_BLOCK 256     /* candidates per outer point for random strategies */
#define CHAINS 16            /* chains of the local search (see refine) */
#define EFFORT_LANES 4       /* an effort below 1 scales the lanes down to this many */
#define FILL_BUDGET 1000000  /* spatial choices nm_mapspace_fill may try */

/* ---- options ---- */

void nm_search_opts_init(nm_search_opts *o)
{
    memset(o, 0, sizeof *o);
    o->algorithm = "hybrid";
    o->nmetrics = 1;
    o->metric[0] = NM_MET_EDP;
    o->threads = 1;
    o->max_perms = 16;
    o->topk = 10;
    o->lanes = 128;
    o->refine = 1;
    o->fill = 1;
}

static const char *const metric_names[] = {"energy", "delay", "edp", "ed2p",
                                           "last_level_accesses"};

int nm_metric_parse(const char *name)
{
    for (int i = 0; i < 5; i++)
        if (!strcmp(name, metric_names[i]))
            return i;
    if (!strcmp(name, "cycles"))
        return NM_MET_DELAY;
    return -1;
}

const char *nm_metric_name(nm_metric m)
{
    return metric_names[m];
}

const char *nm_metric_unit(nm_metric m)
{
    static const char *const units[] = {"pJ", "cycles", "pJ*cycles", "pJ*cycles^2", "accesses"};
    return units[m];
}

static nm_status get_count(const nm_ynode *n, const char *what, uint64_t *out, nm_error *err)
{
    int64_t v;
    nm_status st = nm_yget_int(n, what, &v, err);
    if (st != NM_OK)
        return st;
    if (v < 0)
        return nm_yerror(err, n, "%s must be 0 or more (got %lld)", what, (long long)v);
    *out = (uint64_t)v;
    return NM_OK;
}

nm_status nm_search_opts_parse(nm_search_opts *o, const nm_ynode *mapper, nm_error *err)
{
    if (!mapper || nm_yis_null(mapper))
        return NM_OK;
    static const char *const keys[] = {"version", "algorithm", "optimization_metrics",
                                       "optimization_metric", "num_threads", "timeout",
                                       "victory_condition", "search_size",
                                       "max_permutations_per_if_visit", "seed", "max_evals",
                                       "time_limit", "top_k", "live_status", "diagnostics",
                                       "log_stats", "log_suboptimal", "penalize_consecutive_bypass_fails",
                                       "sync_interval", "log_interval", "lanes", "refine", "effort",
                                       /* what timeloopfe writes for Timeloop's logging */
                                       "out_prefix", "log_oaves", "log_oaves_mappings",
                                       "emit_whoop_nest", "filter_revisits",
                                       "max_temporal_loops_in_a_mapping", NULL};
    nm_status st = nm_yexpect(mapper, NM_Y_MAP, "mapper", err);
    if (st != NM_OK || (st = nm_ycheck_keys(mapper, keys, "mapper", err)) != NM_OK)
        return st;
    const nm_ynode *x;
    if ((x = nm_ymap_get(mapper, "algorithm"))) {
        if ((st = nm_yget_str(x, "algorithm", &o->algorithm, err)) != NM_OK)
            return st;
        /* Timeloop's names for the same strategies. */
        if (!strcmp(o->algorithm, "linear-pruned") || !strcmp(o->algorithm, "linear_pruned"))
            o->algorithm = "exhaustive";
        else if (!strcmp(o->algorithm, "random-pruned"))
            o->algorithm = "random_pruned";
        if (!nm_strategy_find(o->algorithm))
            return nm_yerror(err, x, "unknown algorithm '%s' (one of %s)", o->algorithm,
                             nm_strategy_names());
        if (!strncmp(o->algorithm, "random", 6) || !strcmp(o->algorithm, "hybrid"))
            o->warm_algorithm = o->algorithm; /* what --algorithm optimal starts from */
    }
    /* timeloopfe writes the keys it was not given as null (and
     * optimization_metric as []): they leave the defaults as they are. */
    const nm_ynode *om = nm_ymap_get(mapper, "optimization_metrics");
    if (!om || nm_yis_null(om) || (om->kind == NM_Y_SEQ && !om->n))
        om = nm_ymap_get(mapper, "optimization_metric");
    if (om && (nm_yis_null(om) || (om->kind == NM_Y_SEQ && !om->n)))
        om = NULL;
    if ((x = nm_ymap_get(mapper, "max_temporal_loops_in_a_mapping")) && !nm_yis_null(x)) {
        int64_t limit;
        if ((st = nm_yget_int(x, "max_temporal_loops_in_a_mapping", &limit, err)) != NM_OK)
            return st;
        if (limit >= 0)
            return nm_yerror(err, x, "max_temporal_loops_in_a_mapping is not supported: "
                             "nestmap searches every number of loops (-1, as Timeloop's "
                             "default)");
    }
    if (om) {
        o->nmetrics = 0;
        size_t n = om->kind == NM_Y_SEQ ? om->n : 1;
        for (size_t i = 0; i < n; i++) {
            const nm_ynode *e = om->kind == NM_Y_SEQ ? om->items[i] : om;
            const char *name;
            if ((st = nm_yget_str(e, "an optimization metric", &name, err)) != NM_OK)
                return st;
            int m = nm_metric_parse(name);
            if (m < 0)
                return nm_yerror(err, e, "unknown metric '%s' (energy, delay, edp, ed2p, "
                                 "last_level_accesses)", name);
            if (o->nmetrics >= NM_MAX_METRICS)
                return nm_yerror(err, e, "at most %d optimization metrics", NM_MAX_METRICS);
            o->metric[o->nmetrics++] = (nm_metric)m;
        }
        if (!o->nmetrics)
            return nm_yerror(err, om, "optimization_metrics is empty");
    }
    uint64_t v = 0;
    if ((x = nm_ymap_get(mapper, "num_threads")) && !nm_yis_null(x)) {
        if ((st = get_count(x, "num_threads", &v, err)) != NM_OK)
            return st;
        if (v < 1 || v > 1024)
            return nm_yerror(err, x, "num_threads must be 1 to 1024");
        o->threads = (int)v;
    }
    if ((x = nm_ymap_get(mapper, "effort"))) {
        if ((st = nm_yget_num(x, "effort", &o->effort, err)) != NM_OK)
            return st;
        if (!(o->effort > 0 && o->effort <= 1000))
            return nm_yerror(err, x, "effort must be above 0 and at most 1000 (1: the default "
                             "search's budget)");
    }
    if ((x = nm_ymap_get(mapper, "lanes"))) {
        if ((st = get_count(x, "lanes", &v, err)) != NM_OK)
            return st;
        if (v < 1 || v > NM_MAX_LANES)
            return nm_yerror(err, x, "lanes must be 1 to %d", NM_MAX_LANES);
        o->lanes = (int)v;
    }
    struct { const char *key; uint64_t *dst; } counts[] = {
        {"timeout", &o->timeout}, {"victory_condition", &o->victory},
        {"search_size", &o->search_size}, {"max_permutations_per_if_visit", &o->max_perms},
        {"seed", &o->seed}, {"max_evals", &o->max_evals},
    };
    for (size_t i = 0; i < sizeof counts / sizeof *counts; i++)
        if ((x = nm_ymap_get(mapper, counts[i].key)) && !nm_yis_null(x) &&
            (st = get_count(x, counts[i].key, counts[i].dst, err)) != NM_OK)
            return st;
    if ((x = nm_ymap_get(mapper, "victory_condition")) && !nm_yis_null(x))
        o->victory_set = 1;
    if ((x = nm_ymap_get(mapper, "timeout")) && !nm_yis_null(x))
        o->timeout_set = 1;
    if ((x = nm_ymap_get(mapper, "penalize_consecutive_bypass_fails")) &&
        (st = nm_yget_bool(x, "penalize_consecutive_bypass_fails", &o->penalize_bypass, err)) !=
            NM_OK)
        return st;
    if ((x = nm_ymap_get(mapper, "refine"))) {
        if ((st = nm_yget_bool(x, "refine", &o->refine, err)) != NM_OK)
            return st;
        o->fill = o->refine; /* off: Timeloop's strategies as they are */
    }
    if (o->max_perms == 0)
        o->max_perms = 1;
    if ((x = nm_ymap_get(mapper, "time_limit")) &&
        (st = nm_yget_num(x, "time_limit", &o->time_limit, err)) != NM_OK)
        return st;
    if ((x = nm_ymap_get(mapper, "top_k"))) {
        if ((st = get_count(x, "top_k", &v, err)) != NM_OK)
            return st;
        o->topk = (int)(v > 1000 ? 1000 : v);
    }
    return NM_OK;
}

/* ---- scores ---- */

double nm_metric_value(nm_metric m, double energy, double cycles, double lla)
{
    switch (m) {
    case NM_MET_ENERGY:
        return energy;
    case NM_MET_DELAY:
        return cycles;
    case NM_MET_EDP:
        return energy * cycles;
    case NM_MET_ED2P:
        return energy * cycles * cycles;
    case NM_MET_LLA:
        return lla;
    }
    return energy;
}

double nm_metric_roofline(nm_metric m, const nm_roofline *r)
{
    return nm_metric_value(m, r->energy_pj, r->bound_cycles, r->words_in + r->words_out);
}

void nm_search_roofline(const nm_search_result *res, const nm_arch *arch, const nm_workload *wl,
                        nm_roofline *r)
{
    nm_roofline_of(r, arch, wl);
    if (res->fill_cycles > r->bound_cycles)
        r->bound_cycles = res->fill_cycles;
}

double nm_search_lower_bound(const nm_search_opts *o, const nm_search_result *res,
                             const nm_arch *arch, const nm_workload *wl)
{
    nm_roofline r;
    nm_search_roofline(res, arch, wl, &r);
    double lb = nm_metric_roofline(o->metric[0], &r);
    if (res->operands.metric < INFINITY && res->operands.metric > lb)
        lb = res->operands.metric;
    if (!strcmp(o->algorithm, "optimal") && res->lower_bound < INFINITY && res->lower_bound > lb)
        lb = res->lower_bound;
    return lb;
}

/* The power k of a metric in energy and cycles together (E^a C^b, k =
 * a + b); 1 for the additive ones. */
static int metric_degree(nm_metric m)
{
    return m == NM_MET_EDP ? 2 : m == NM_MET_ED2P ? 3 : 1;
}

void nm_bound_sum_init(nm_bound_sum *s, nm_metric m)
{
    memset(s, 0, sizeof *s);
    s->metric = m;
}

void nm_bound_sum_add(nm_bound_sum *s, double repeat, const nm_roofline *r, double lower_bound)
{
    s->energy += repeat * r->energy_pj;
    s->cycles += repeat * r->bound_cycles;
    double lb = lower_bound > 0 ? lower_bound : 0;
    int k = metric_degree(s->metric);
    s->root += repeat * (k == 1 ? lb : k == 2 ? sqrt(lb) : cbrt(lb));
}

double nm_bound_sum_value(const nm_bound_sum *s)
{
    int k = metric_degree(s->metric);
    double root = k == 1 ? s->root : k == 2 ? s->root * s->root : s->root * s->root * s->root;
    if (k == 1)
        return root;
    double product = nm_metric_value(s->metric, s->energy, s->cycles, 0);
    return product > root ? product : root;
}

/* Prioritized metrics, then merge order. */
static int compare_scores(const nm_search_opts *o, const double *a, uint64_t ia, const double *b,
                          uint64_t ib)
{
    for (int i = 0; i < o->nmetrics; i++) {
        if (a[i] < b[i])
            return -1;
        if (a[i] > b[i])
            return 1;
    }
    return ia < ib ? -1 : ia > ib;
}

int nm_search_compare(const nm_search_opts *o, const nm_found *a, const nm_found *b)
{
    return compare_scores(o, a->score, a->index, b->score, b->index);
}

/* ---- strategies ---- */

struct ctx;
typedef struct rec {
    double energy;
    uint64_t cycles, lla;
    uint8_t status; /* 0 valid, 1 invalid, 2 pruned */
    uint8_t kind;   /* for invalid: nm_invalid_kind or NM_REJECT_CONSTRAINT */
    int8_t level;   /* for invalid: the level at fault, or -1 */
    uint64_t shape; /* for valid: shape_of() its mapping */
} rec;

struct nm_strategy {
    const char *name;
    size_t state_size;
    nm_status (*init)(void *state, const nm_mapspace *ms, const nm_search_opts *o,
                      nm_error *err);
    /* Candidates in outer point o, or UINT64_MAX when o is past the end.  May
     * return 1 and set *single to a record (invalid or pruned point). */
    uint64_t (*count)(void *state, struct ctx *c, uint64_t o, rec *single);
    /* Writes candidate j of outer point o into *m; returns 0 if it breaks a
     * constraint that decoding cannot enforce. */
    int (*make)(void *state, struct ctx *c, uint64_t o, uint64_t j, nm_mapping *m);
    void (*fini)(void *state);
};

/* Per-thread context. */
struct ctx {
    const nm_mapspace *ms;
    const nm_search_opts *o;
    nm_model mdl;
    nm_stats stats;
    double incumbent; /* best first-metric value so far (optimal) */
    uint64_t made_o;  /* the outer point last made: exhaustive / optimal decode it in
                       * made, hybrid draws it in drawn */
    int made_ok;
    nm_mapping made;
    nm_point drawn;
    struct memo *memo; /* the climb's scored mappings (allocated on first use) */
};

/* Like Timeloop's random and hybrid searches, the random strategies try
 * every keep/bypass choice of each point they draw (bypass sweeps 0, 1, ...
 * innermost), when there are at most 2^SWEEP_BITS of them; past that, one
 * random choice per draw. */
#define SWEEP_BITS 8

static uint64_t bypass_sweep(const nm_mapspace *ms)
{
    return ms->nbypass <= SWEEP_BITS ? UINT64_C(1) << ms->nbypass : 1;
}

/* random / random_pruned: outer point o holds RANDOM_BLOCK / sweep draws,
 * each with its sweep of bypass choices. */
struct rnd {
    const nm_mapspace *ms;
    uint64_t seed, sweep;
    int pruned, fill, perfect;
};

/* Draw k of a random strategy: uniform, or with the search's own candidate
 * generation (o->fill) every other draw fills the fan-outs first.  With
 * `perfect` (o->refine: the refinement searches residual factors itself)
 * only perfect factors are drawn, so that the search until then is the one
 * it would be without them. */
static void draw(const nm_mapspace *ms, int fill, int perfect, uint64_t k, nm_pcg32 *rng,
                 nm_point *pt)
{
    if (fill && (k & 1u))
        nm_mapspace_random_filled(ms, rng, pt);
    else if (perfect)
        nm_mapspace_random_perfect(ms, rng, pt);
    else
        nm_mapspace_random(ms, rng, pt);
}

static nm_status rnd_init(void *state, const nm_mapspace *ms, const nm_search_opts *o,
                          nm_error *err)
{
    (void)err;
    struct rnd *r = state;
    r->ms = ms;
    r->seed = o->seed;
    r->sweep = bypass_sweep(ms);
    r->pruned = !strcmp(o->algorithm, "random_pruned");
    r->fill = o->fill;
    r->perfect = o->refine;
    return NM_OK;
}

static uint64_t rnd_count(void *state, struct ctx *c, uint64_t o, rec *single)
{
    (void)c, (void)o, (void)single;
    uint64_t sweep = ((struct rnd *)state)->sweep;
    return sweep >= RANDOM_BLOCK ? sweep : RANDOM_BLOCK / sweep * sweep;
}

/* Orders drawn uniformly over the distinct nests (loops of factor 1 vanish). */
static void pruned_orders(const nm_mapspace *ms, nm_pcg32 *rng, nm_mapping *m)
{
    nm_mapspace_set_orders(ms, m, nm_pcg32_bounded64(rng, nm_mapspace_orders(ms, m)));
}

static int rnd_make(void *state, struct ctx *c, uint64_t o, uint64_t j, nm_mapping *m)
{
    (void)c;
    struct rnd *r = state;
    nm_pcg32 rng;
    nm_pcg32_seed(&rng, r->seed, o * RANDOM_BLOCK + j / r->sweep);
    nm_point pt;
    draw(r->ms, r->fill, r->perfect, o * RANDOM_BLOCK + j / r->sweep, &rng, &pt);
    if (r->sweep > 1)
        pt.bypass = j % r->sweep;
    int wd, wl;
    int ok = nm_mapspace_decode(r->ms, &pt, m, &wd, &wl);
    if (r->pruned)
        pruned_orders(r->ms, &rng, m);
    return ok;
}

/* hybrid: a random factorization and split per outer point, then
 * max_perms random orders of it, each with its sweep of bypass choices. */
struct hyb {
    const nm_mapspace *ms;
    uint64_t seed, perms, sweep;
    int fill, perfect;
};

static nm_status hyb_init(void *state, const nm_mapspace *ms, const nm_search_opts *o,
                          nm_error *err)
{
    (void)err;
    struct hyb *h = state;
    h->ms = ms;
    h->seed = o->seed;
    h->perms = o->max_perms;
    h->sweep = bypass_sweep(ms);
    h->fill = o->fill;
    h->perfect = o->refine;
    return NM_OK;
}

static uint64_t hyb_count(void *state, struct ctx *c, uint64_t o, rec *single)
{
    (void)c, (void)o, (void)single;
    const struct hyb *h = state;
    return h->perms * h->sweep;
}

static int hyb_make(void *state, struct ctx *c, uint64_t o, uint64_t j, nm_mapping *m)
{
    struct hyb *h = state;
    if (c->made_o != o) { /* a point's orders come in runs: draw it once */
        nm_pcg32 rng;
        nm_pcg32_seed(&rng, h->seed, o);
        draw(h->ms, h->fill, h->perfect, o, &rng, &c->drawn);
        c->made_o = o;
    }
    nm_point pt = c->drawn;
    /* Orders from a stream of their own, so candidate j needs no replay. */
    nm_pcg32 prng;
    nm_pcg32_seed(&prng, h->seed ^ UINT64_C(0x9E3779B97F4A7C15), o * h->perms + j / h->sweep);
    nm_mapspace_random_perm(h->ms, &prng, &pt);
    if (h->sweep > 1)
        pt.bypass = j % h->sweep;
    int wd, wl;
    return nm_mapspace_decode(h->ms, &pt, m, &wd, &wl);
}

/* exhaustive / optimal: an outer point of the mapspace (factorization,
 * split, bypass) holds the distinct loop orders of that factorization. */
struct exh {
    const nm_mapspace *ms;
    int bound;      /* optimal: skip points whose bound is above the best */
    uint64_t total; /* outer points */
};

static nm_status exh_init(void *state, const nm_mapspace *ms, const nm_search_opts *o,
                          nm_error *err)
{
    struct exh *x = state;
    x->ms = ms;
    x->bound = !strcmp(o->algorithm, "optimal");
    x->total = nm_mapspace_outer_count(ms);
    if (!x->total)
        return nm_error_set(err, NM_ERR_INPUT, NULL, 0, 0,
                            "the mapspace has more than 2^64 factorization/split/bypass points "
                            "(10^%.1f); '%s' cannot enumerate it: add constraints or use random "
                            "or hybrid",
                            ms->log_factor + ms->log_split + ms->log_bypass, o->algorithm);
    return NM_OK;
}

/* optimal: points with at least this many orders get nm_model_floor. */
#define FLOOR_ORDERS 8

static uint64_t exh_count(void *state, struct ctx *c, uint64_t o, rec *single)
{
    struct exh *x = state;
    if (o >= x->total)
        return UINT64_MAX;
    nm_mapping m;
    int ok = nm_mapspace_outer(x->ms, o, &m);
    if (ok < 0)
        return 0;
    if (!ok) {
        single->status = 1;
        single->kind = NM_REJECT_CONSTRAINT;
        single->level = -1;
        return 1;
    }
    /* Validity that no loop order can change: decided once for the point. */
    if (!nm_model_precheck(&c->mdl, &m, &c->stats)) {
        single->status = 1;
        single->kind = (uint8_t)c->stats.invalid.kind;
        single->level = (int8_t)c->stats.invalid.level;
        return 1;
    }
    uint64_t orders = nm_mapspace_orders(x->ms, &m);
    if (x->bound) {
        /* The cheap bound first; the tighter one (a few analyses) where it
         * can spare more evaluations than it costs. */
        double e, cy, lla;
        nm_model_bound(&c->mdl, &m, &e, &cy, &lla);
        int out = nm_metric_value(c->o->metric[0], e, cy, lla) > c->incumbent;
        if (!out && orders >= FLOOR_ORDERS && c->incumbent < INFINITY) {
            nm_model_floor(&c->mdl, &m, &e, &cy, &lla);
            out = nm_metric_value(c->o->metric[0], e, cy, lla) > c->incumbent;
        }
        if (out) {
            single->status = 2;
            return 1;
        }
    }
    return orders;
}

/* Lower bound (first metric) of every candidate of outer point o; 0 when the
 * point holds no valid candidate. */
static int exh_bound(const struct exh *x, struct ctx *c, uint64_t o, double *lb)
{
    nm_mapping m;
    if (nm_mapspace_outer(x->ms, o, &m) <= 0 || !nm_model_precheck(&c->mdl, &m, &c->stats))
        return 0;
    double e, cy, lla;
    nm_model_bound(&c->mdl, &m, &e, &cy, &lla);
    *lb = nm_metric_value(c->o->metric[0], e, cy, lla);
    return 1;
}

static int exh_make(void *state, struct ctx *c, uint64_t o, uint64_t j, nm_mapping *m)
{
    struct exh *x = state;
    if (c->made_o != o) { /* a point's orders come in runs: decode it once */
        c->made_ok = nm_mapspace_outer(x->ms, o, &c->made) > 0;
        c->made_o = o;
    }
    *m = c->made;
    nm_mapspace_set_orders(x->ms, m, j);
    return c->made_ok;
}

static const nm_strategy strategies[] = {
    {"exhaustive", sizeof(struct exh), exh_init, exh_count, exh_make, NULL},
    {"random", sizeof(struct rnd), rnd_init, rnd_count, rnd_make, NULL},
    {"random_pruned", sizeof(struct rnd), rnd_init, rnd_count, rnd_make, NULL},
    {"hybrid", sizeof(struct hyb), hyb_init, hyb_count, hyb_make, NULL},
    {"optimal", sizeof(struct exh), exh_init, exh_count, exh_make, NULL},
};

const nm_strategy *nm_strategy_find(const char *name)
{
    for (size_t i = 0; i < sizeof strategies / sizeof *strategies; i++)
        if (!strcmp(strategies[i].name, name))
            return &strategies[i];
    return NULL;
}

const char *nm_strategy_names(void)
{
    return "exhaustive, random, random_pruned, hybrid, optimal";
}

/* ---- the engine ---- */

/* A run of candidates [first, first + n) of outer point o, or a single
 * precomputed record (an invalid or pruned point). */
typedef struct segment {
    uint64_t o, first, n;
    int has_single;
    rec single;
} segment;

#define MAXSEG 256   /* segments per work item */
#define WINDOW 1024  /* outer points counted ahead, in parallel */

/* A work item: up to CHUNK candidates from one or more outer points. */
typedef struct item {
    int nseg;
    uint64_t total;
    segment seg[MAXSEG];
} item;

/* An outer point counted ahead: how many candidates, or one record. */
typedef struct counted {
    uint64_t n;
    rec single;
} counted;

typedef struct worker {
    struct ctx c;
    const nm_strategy *st;
    void *state;
    const item *it;       /* evaluate this item, or */
    counted *cnt;         /* count outer points [cfrom, cfrom + cn) into cnt */
    uint64_t cfrom, cn;
    struct chains *chains; /* or run refinement chains */
    rec *recs; /* CHUNK */
    pthread_t tid;
    int running;
    struct pool *pool;
} worker;

/* Workers 1..T-1 wait for a round, evaluate their item, and report back;
 * worker 0 is the main thread. */
struct pool {
    pthread_mutex_t lock;
    pthread_cond_t go, done;
    uint64_t round;  /* bumped to start a round */
    int pending;     /* workers still busy in this round */
    int quit;
};

/* A mapping's shape, for choosing refinement starts that differ: a hash of
 * what each level keeps and which dimensions it spreads over its fan-out.
 * Mappings of one shape are a few moves apart; mappings of different shapes
 * lie in different valleys of the cost (keep the inputs in the L2 and split
 * the channels across the PEs, or bypass the L2 and split the rows). */
static uint64_t shape_of(const nm_mapping *m, int nlevels, int ndims)
{
    uint64_t h = UINT64_C(0xcbf29ce484222325);
    for (int l = 0; l < nlevels; l++) {
        uint64_t spread = 0;
        for (int d = 0; d < ndims && d < NM_MAX_DIMS; d++)
            spread |= (uint64_t)(m->level[l].sfactor[d] > 1) << d;
        h = (h ^ (m->level[l].keep | spread << 32)) * UINT64_C(0x100000001b3);
    }
    return h;
}

static void evaluate(worker *w, const item *it)
{
    nm_mapping m;
    rec *r = w->recs;
    for (int s = 0; s < it->nseg; s++) {
        const segment *sg = &it->seg[s];
        if (sg->has_single) {
            *r++ = sg->single;
            continue;
        }
        for (uint64_t j = 0; j < sg->n; j++, r++) {
            memset(r, 0, sizeof *r);
            if (!w->st->make(w->state, &w->c, sg->o, sg->first + j, &m)) {
                r->status = 1;
                r->kind = NM_REJECT_CONSTRAINT;
                r->level = -1;
                continue;
            }
            if (!nm_model_eval(&w->c.mdl, &m, &w->c.stats, NULL)) {
                r->status = 1;
                r->kind = (uint8_t)w->c.stats.invalid.kind;
                r->level = (int8_t)w->c.stats.invalid.level;
                continue;
            }
            r->energy = w->c.stats.energy;
            r->cycles = w->c.stats.cycles;
            r->lla = w->c.stats.last_level_accesses;
            r->shape = shape_of(&m, w->c.ms->arch->nlevels, w->c.ms->wl->ndims);
        }
    }
}

static void count_ahead(worker *w)
{
    for (uint64_t i = 0; i < w->cn; i++) {
        counted *c = &w->cnt[i];
        memset(&c->single, 0, sizeof c->single);
        c->n = w->st->count(w->state, &w->c, w->cfrom + i, &c->single);
    }
}

static void run_chains(worker *w);

/* One round's job for a worker: an item to evaluate, points to count, or
 * refinement chains to run. */
static void work(worker *w)
{
    if (w->chains)
        run_chains(w);
    else if (w->it)
        evaluate(w, w->it);
    else if (w->cn)
        count_ahead(w);
}

static void *worker_main(void *arg)
{
    worker *w = arg;
    struct pool *p = w->pool;
    uint64_t seen = 0;
    for (;;) {
        pthread_mutex_lock(&p->lock);
        while (p->round == seen && !p->quit)
            pthread_cond_wait(&p->go, &p->lock);
        if (p->quit) {
            pthread_mutex_unlock(&p->lock);
            return NULL;
        }
        seen = p->round;
        pthread_mutex_unlock(&p->lock);
        work(w);
        pthread_mutex_lock(&p->lock);
        if (--p->pending == 0)
            pthread_cond_signal(&p->done);
        pthread_mutex_unlock(&p->lock);
    }
}

/* Runs one round: worker 0 (this thread) and the pool's threads each do
 * their job; a worker whose thread could not be started is run here. */
static void run_round(struct pool *pool, worker *w, int T)
{
    pthread_mutex_lock(&pool->lock);
    pool->pending = 0;
    for (int i = 1; i < T; i++)
        pool->pending += w[i].running;
    pool->round++;
    pthread_cond_broadcast(&pool->go);
    pthread_mutex_unlock(&pool->lock);
    work(&w[0]);
    for (int i = 1; i < T; i++)
        if (!w[i].running)
            work(&w[i]);
    pthread_mutex_lock(&pool->lock);
    while (pool->pending > 0)
        pthread_cond_wait(&pool->done, &pool->lock);
    pthread_mutex_unlock(&pool->lock);
}

static double wall_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* A search lane: its own best and its own give-up counts. */
struct lane {
    double score[NM_MAX_METRICS]; /* its best (when found) */
    uint64_t index;
    int found, done;
    uint64_t since_improve, invalid_run;
};

/* State of the merge. */
struct merge {
    const nm_search_opts *o;
    const nm_strategy *st;
    void *state;
    struct ctx *c; /* the main thread's context, for regenerating mappings */
    nm_search_result *res;
    int cap_pareto;
    struct lane *lane;
    int nlanes, ndone;
    nm_found *scratch; /* the candidate being merged */
    int stop; /* termination met */
    uint64_t victory, timeout; /* in force for this strategy, per lane */
    uint64_t sweep;            /* candidate k of a point counts toward victory iff
                                * k % sweep == 0 (the others change only bypass) */
    uint64_t stop_o;           /* outer point where a merge stopped (UINT64_MAX: none) */
    /* Where the refinement's chains start, whatever --top says: */
    nm_found *lead;  /* CHAINS: the best mappings */
    nm_found *shape; /* CHAINS: the best mapping of each of the best shapes */
    int nlead, nshape;
};

/* Ends lane l; the search ends with the last lane. */
static void lane_end(struct merge *mg, struct lane *l, const char *why, uint64_t n)
{
    l->done = 1;
    if (++mg->ndone < mg->nlanes)
        return;
    mg->stop = 1;
    if (mg->nlanes == 1)
        snprintf(mg->res->stopped_by, sizeof mg->res->stopped_by, "%s (%llu in a row)", why,
                 (unsigned long long)n);
    else
        snprintf(mg->res->stopped_by, sizeof mg->res->stopped_by,
                 "%s (%llu in a row in each of %d lanes)", why, (unsigned long long)n,
                 mg->nlanes);
}

/* f's scores under o's metrics, from its energy, cycles and accesses. */
static void set_scores(const nm_search_opts *o, nm_found *f)
{
    for (int i = 0; i < o->nmetrics; i++)
        f->score[i] = nm_metric_value(o->metric[i], f->energy, (double)f->cycles, (double)f->lla);
}

static void fill_found(struct merge *mg, const rec *r, uint64_t index, nm_found *f)
{
    f->energy = r->energy;
    f->cycles = r->cycles;
    f->lla = r->lla;
    f->index = index;
    f->shape = r->shape;
    set_scores(mg->o, f);
}

static void regen(struct merge *mg, const segment *sg, uint64_t j, nm_found *f)
{
    mg->st->make(mg->state, mg->c, sg->o, sg->first + j, &f->map);
}

/* Whether a member of the Pareto front is at least as good as f in both
 * energy and cycles. */
static int pareto_dominated(const nm_search_result *res, const nm_found *f)
{
    for (int i = 0; i < res->npareto; i++)
        if (res->pareto[i].energy <= f->energy && res->pareto[i].cycles <= f->cycles)
            return 1;
    return 0;
}

/* Adds a candidate that no member dominates to the Pareto front (energy x
 * cycles), dropping the members it dominates.  The merge has checked that
 * no member dominates it. */
static void pareto_add(struct merge *mg, const nm_found *f)
{
    nm_search_result *res = mg->res;
    int n = 0;
    for (int i = 0; i < res->npareto; i++) {
        const nm_found *p = &res->pareto[i];
        if (!(f->energy <= p->energy && f->cycles <= p->cycles))
            res->pareto[n++] = *p;
    }
    res->npareto = n;
    if (res->npareto < mg->cap_pareto)
        res->pareto[res->npareto++] = *f;
}

/* Where f would enter a list of n found mappings ranked by o, at most cap:
 * cap when it would not. */
static int rank_of(const nm_search_opts *o, const nm_found *list, int n, const nm_found *f)
{
    int pos = n;
    while (pos > 0 && nm_search_compare(o, f, &list[pos - 1]) < 0)
        pos--;
    return pos;
}

/* Enters f into a ranked list of *n, at most cap (the last drops out). */
static void rank_add(const nm_search_opts *o, nm_found *list, int *n, int cap, const nm_found *f)
{
    int pos = rank_of(o, list, *n, f);
    if (pos >= cap)
        return;
    if (*n < cap)
        ++*n;
    memmove(&list[pos + 1], &list[pos], (size_t)(*n - 1 - pos) * sizeof *list);
    list[pos] = *f;
}

static void top_add(struct merge *mg, const nm_found *f)
{
    if (mg->o->topk > 0)
        rank_add(mg->o, mg->res->top, &mg->res->ntop, mg->o->topk, f);
}

/* The member of the shape list of f's shape, or -1. */
static int shape_slot(const struct merge *mg, const nm_found *f)
{
    for (int i = 0; i < mg->nshape; i++)
        if (mg->shape[i].shape == f->shape)
            return i;
    return -1;
}

/* Whether f (scored, not yet regenerated) would enter the start lists. */
static int start_wants(const struct merge *mg, const nm_found *f)
{
    if (rank_of(mg->o, mg->lead, mg->nlead, f) < CHAINS)
        return 1;
    int i = shape_slot(mg, f);
    return i >= 0 ? nm_search_compare(mg->o, f, &mg->shape[i]) < 0
                  : rank_of(mg->o, mg->shape, mg->nshape, f) < CHAINS;
}

static void start_add(struct merge *mg, const nm_found *f)
{
    rank_add(mg->o, mg->lead, &mg->nlead, CHAINS, f);
    int i = shape_slot(mg, f);
    if (i >= 0) {
        if (nm_search_compare(mg->o, f, &mg->shape[i]) >= 0)
            return;
        memmove(&mg->shape[i], &mg->shape[i + 1], (size_t)(--mg->nshape - i) * sizeof *mg->shape);
    }
    rank_add(mg->o, mg->shape, &mg->nshape, CHAINS, f);
}

static void merge_segment(struct merge *mg, const segment *sg, const rec *recs)
{
    nm_search_result *res = mg->res;
    const nm_search_opts *o = mg->o;
    uint64_t victory = mg->victory, timeout = mg->timeout;
    uint64_t n = sg->has_single ? 1 : sg->n;
    struct lane *l = &mg->lane[sg->o % (uint64_t)mg->nlanes];
    for (uint64_t j = 0; j < n && !mg->stop && !l->done; j++) {
        const rec *r = &recs[j];
        uint64_t index = res->proposed++;
        if (r->status == 2) {
            res->pruned++;
            continue;
        }
        if (r->status == 1) {
            res->invalid[r->kind]++;
            res->invalid_at[r->kind][r->level >= 0 ? r->level : NM_MAX_LEVELS]++;
            if (timeout && ++l->invalid_run >= timeout)
                lane_end(mg, l, "timeout: invalid mappings", timeout);
        } else {
            res->valid++;
            l->invalid_run = 0;
            nm_found *f = mg->scratch; /* large: kept off the stack */
            fill_found(mg, r, index, f);
            int better = !res->found || nm_search_compare(o, f, &res->best) < 0;
            int top = o->topk > 0 && rank_of(o, res->top, res->ntop, f) < o->topk;
            int dominated = pareto_dominated(res, f);
            int start = mg->lead && start_wants(mg, f);
            if (better || top || !dominated || start) {
                regen(mg, sg, j, f);
                if (better) {
                    res->best = *f;
                    res->found = 1;
                }
                if (top)
                    top_add(mg, f);
                if (start)
                    start_add(mg, f);
                if (!dominated)
                    pareto_add(mg, f);
            }
            if (!l->found || compare_scores(o, f->score, index, l->score, l->index) < 0) {
                memcpy(l->score, f->score, sizeof l->score);
                l->index = index;
                l->found = 1;
                l->since_improve = 0;
            } else if (victory && (sg->first + j) % mg->sweep == 0 &&
                       ++l->since_improve >= victory) {
                lane_end(mg, l, "victory condition: valid mappings without improvement",
                         victory);
            }
            if (o->search_size && res->valid >= o->search_size) {
                mg->stop = 1;
                snprintf(res->stopped_by, sizeof res->stopped_by, "search size (%llu valid)",
                         (unsigned long long)o->search_size);
            }
        }
        if (o->max_evals && res->proposed >= o->max_evals && !mg->stop) {
            mg->stop = 1;
            snprintf(res->stopped_by, sizeof res->stopped_by, "evaluation budget (%llu)",
                     (unsigned long long)o->max_evals);
        }
    }
}

static void merge_item(struct merge *mg, const item *it, const rec *recs)
{
    for (int s = 0; s < it->nseg && !mg->stop; s++) {
        merge_segment(mg, &it->seg[s], recs);
        if (mg->stop && mg->stop_o == UINT64_MAX)
            mg->stop_o = it->seg[s].o;
        recs += it->seg[s].has_single ? 1 : it->seg[s].n;
    }
}

int nm_search_result_starts(const nm_search_result *r, nm_mapping *to)
{
    if (!r->found)
        return 0;
    uint64_t shape[NM_WARM_STARTS];
    to[0] = r->best.map;
    shape[0] = r->best.shape;
    int n = 1;
    for (int t = 0; t < r->ntop && n < NM_WARM_STARTS; t++) {
        int seen = 0;
        for (int j = 0; j < n && !seen; j++)
            seen = shape[j] == r->top[t].shape;
        if (!seen) {
            shape[n] = r->top[t].shape;
            to[n++] = r->top[t].map;
        }
    }
    return n;
}

void nm_search_result_fini(nm_search_result *res)
{
    if (!res)
        return;
    nm_free(res->pareto);
    nm_free(res->top);
    res->pareto = res->top = NULL;
}

/* ---- local refinement ---- */

/* The climb's memo: what each mapping it scored came to.  A climb visits
 * the same mappings again and again (the move back to where a step came
 * from, the neighbourhood of a local optimum a kick falls back into: four
 * scores in five on MobileNet-v1 on Eyeriss), so each worker keeps what it
 * scored in a direct-mapped table (a new entry takes its slot from the
 * one there) keyed by a 128-bit fingerprint of the mapping: every field of
 * every level the design has (factors, residuals, both orders, even of
 * loops of factor 1, which count on sparse designs; split, keep, the link
 * and multicast settings).  A hit returns what the model returned, so the
 * search's results do not depend on what the table holds (not on
 * --threads, nor on which chains ran on which worker before); it only
 * saves time.  A second table holds the mappings the climb found no
 * better neighbour of (climb_step).
 *
 * The fingerprint is two sums of each field times a random 64-bit weight
 * of its place (mod 2^64): the products are independent, so the sums take
 * a few hundred cycles where a chained hash of the same fields took
 * thousands, which was as much as a failed evaluation costs.  Two mappings
 * collide only where both weighted sums of their differences vanish. */
#define MEMO_BITS 18 /* 2^18 entries of 40 bytes a worker (10 MiB) */
#define MEMO_SIZE (UINT32_C(1) << MEMO_BITS)
/* a level's fields: its two factors and their residuals (one word) per
 * dimension, then the words of both orders and the rest */
#define MEMO_WORDS 7
#define MEMO_FIELDS (3 * NM_MAX_DIMS + MEMO_WORDS)
_Static_assert(NM_MAX_DIMS <= 16, "the memo packs an order in two words");

struct memo_entry {
    uint64_t h1, h2; /* h1 == 0: empty */
    double energy;   /* < 0: the mapping is invalid */
    uint64_t cycles, lla;
};

/* The fingerprint's parts, level by level. */
struct print {
    uint64_t a[NM_MAX_LEVELS], b[NM_MAX_LEVELS];
};

/* A mapping the climb found no better neighbour of (resid: with the
 * residual moves), and how many neighbours it tried. */
struct memo_optimum {
    uint64_t h1, h2;
    uint64_t tries;
};
#define MEMO_OPTIMA (UINT32_C(1) << 14)

struct memo {
    struct memo *next;  /* in the pool of idle tables */
    struct memo_optimum optimum[MEMO_OPTIMA];
    uint64_t salt[2];   /* added to the sums: this search's own (see memo_take) */
    uint64_t w[2][NM_MAX_LEVELS][MEMO_FIELDS]; /* the weights */
    struct memo_entry e[MEMO_SIZE];
};

static uint64_t splitmix64(uint64_t *x)
{
    uint64_t z = (*x += UINT64_C(0x9e3779b97f4a7c15));
    z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
    return z ^ (z >> 31);
}

/* Tables outlive their searches: a network or a sweep runs hundreds of
 * searches, and a fresh 10 MiB table each time cost more in page faults
 * (10 s of system time in a 16-point MobileNet-v1 sweep) than it saved.
 * An idle table waits in the pool; the next search takes it with a salt
 * of its own, so the entries of earlier searches (of other layers or
 * designs) match only where a 128-bit sum happens to, and need no
 * clearing.  The pool holds at most as many tables as searches ever ran
 * at once, and lives as long as the process. */
static pthread_mutex_t memo_lock = PTHREAD_MUTEX_INITIALIZER;
static struct memo *memo_pool;
static uint64_t memo_salts;

/* With NESTMAP_MEMO_CHECK set in the environment (the test suite's
 * memo.sh), every hit is evaluated again, every fingerprint made from a
 * base's parts is made again from scratch and every known optimum is
 * searched again, and a difference aborts: it proves on real searches that
 * the fingerprint covers what the model reads and that each move names
 * the levels it changes (where the constraints are checked again, and a
 * move skipped as breaking one is checked to break it). */
static int memo_checking = -1;

static void memo_fail(const char *what)
{
    fprintf(stderr, "nestmap: internal error: the search's memo %s "
                    "(NESTMAP_MEMO_CHECK)\n", what);
    abort();
}

static struct memo *memo_take(void)
{
    pthread_mutex_lock(&memo_lock);
    if (memo_checking < 0)
        memo_checking = getenv("NESTMAP_MEMO_CHECK") != NULL;
    struct memo *mm = memo_pool;
    if (mm)
        memo_pool = mm->next;
    uint64_t x = ++memo_salts * UINT64_C(0x2545f4914f6cdd1d);
    pthread_mutex_unlock(&memo_lock);
    if (!mm) {
        mm = nm_calloc(1, sizeof *mm);
        if (!mm)
            return NULL;
        uint64_t y = 0;
        for (int k = 0; k < 2; k++)
            for (int l = 0; l < NM_MAX_LEVELS; l++)
                for (int f = 0; f < MEMO_FIELDS; f++)
                    mm->w[k][l][f] = splitmix64(&y) | 1u;
    }
    mm->salt[0] = splitmix64(&x);
    mm->salt[1] = splitmix64(&x);
    return mm;
}

static void memo_give(struct memo *mm)
{
    if (!mm)
        return;
    pthread_mutex_lock(&memo_lock);
    mm->next = memo_pool;
    memo_pool = mm;
    pthread_mutex_unlock(&memo_lock);
}

/* One level's part of the fingerprint (the two sums over its fields). */
static void level_print(const struct memo *mm, int nd, const nm_level_map *lm, int l,
                        uint64_t *pa, uint64_t *pb)
{
    const uint64_t *wa = mm->w[0][l], *wb = mm->w[1][l];
    uint64_t a = 0, b = 0;
    for (int d = 0; d < nd; d++) {
        a += (uint64_t)lm->tfactor[d] * wa[d] + (uint64_t)lm->sfactor[d] * wa[NM_MAX_DIMS + d];
        b += (uint64_t)lm->tfactor[d] * wb[d] + (uint64_t)lm->sfactor[d] * wb[NM_MAX_DIMS + d];
        if (lm->tresidual[d] | lm->sresidual[d]) {
            uint64_t r = (uint64_t)lm->tresidual[d] << 32 ^ (uint64_t)lm->sresidual[d];
            a += r * wa[2 * NM_MAX_DIMS + d];
            b += r * wb[2 * NM_MAX_DIMS + d];
        }
    }
    /* both orders, a byte a place, in words of 8 places */
    uint64_t v[MEMO_WORDS] = {0};
    for (int i = 0; i < nd; i++) {
        v[i / 8] |= (uint64_t)(uint8_t)lm->torder[i] << (i % 8 * 8);
        v[2 + i / 8] |= (uint64_t)(uint8_t)lm->sorder[i] << (i % 8 * 8);
    }
    v[4] = (uint64_t)(uint32_t)lm->split << 32 | lm->keep;
    v[5] = (uint64_t)lm->no_link << 32 | lm->no_multicast;
    v[6] = lm->no_temporal_reuse;
    for (int f = 0; f < MEMO_WORDS; f++) {
        a += v[f] * wa[3 * NM_MAX_DIMS + f];
        b += v[f] * wb[3 * NM_MAX_DIMS + f];
    }
    *pa = a;
    *pb = b;
}

/* The parts of every level of m. */
static void fingerprint_parts(const struct ctx *c, const nm_mapping *m, struct print *p)
{
    for (int l = 0; l < c->ms->arch->nlevels; l++)
        level_print(c->memo, c->ms->wl->ndims, &m->level[l], l, &p->a[l], &p->b[l]);
}

/* The fingerprint of m, whose levels outside `changed` are those of the
 * mapping whose parts are `base` (NULL: none are). */
static void fingerprint(const struct ctx *c, const nm_mapping *m, const struct print *base,
                        uint32_t changed, uint64_t *h1, uint64_t *h2)
{
    uint64_t a = 0, b = 0;
    for (int l = 0; l < c->ms->arch->nlevels; l++) {
        if (base && !(changed >> l & 1u)) {
            a += base->a[l];
            b += base->b[l];
        } else {
            uint64_t la, lb;
            level_print(c->memo, c->ms->wl->ndims, &m->level[l], l, &la, &lb);
            a += la;
            b += lb;
        }
    }
    a += c->memo->salt[0];
    b += c->memo->salt[1];
    *h1 = a ? a : 1;
    *h2 = b ^ (b >> 29); /* its low bits pick the slot */
}

static void ctx_fini(struct ctx *c)
{
    nm_model_fini(&c->mdl);
    memo_give(c->memo);
    c->memo = NULL;
}

/* Scores candidate n into f's figures and scores, not its map (valid: 1);
 * n differs from the mapping whose fingerprint parts are `base` (NULL:
 * unknown) at the levels in `changed` only. */
static int score_near(struct ctx *c, const nm_mapping *n, nm_found *f, const struct print *base,
                      uint32_t changed)
{
    if (!c->memo)
        c->memo = memo_take(); /* NULL: score without it */
    struct memo_entry *e = NULL;
    uint64_t h1 = 0, h2 = 0;
    if (c->memo) { /* the entry is fetched while the constraints are checked */
        fingerprint(c, n, base, changed, &h1, &h2);
        e = &c->memo->e[h2 & (MEMO_SIZE - 1)];
        __builtin_prefetch(e);
        if (memo_checking && base) {
            uint64_t x1, x2;
            fingerprint(c, n, NULL, 0, &x1, &x2);
            if (x1 != h1 || x2 != h2)
                memo_fail("missed a level a move changed");
        }
    }
    /* a base is a scored mapping, so it met the constraints */
    int met = nm_mapspace_check_levels(c->ms, n, base ? changed : ~0u, NULL, 0);
    if (memo_checking && base && met != nm_mapspace_check(c->ms, n, NULL, 0))
        memo_fail("checked the constraints of a level a move did not name");
    if (!met)
        return 0;
    if (e) {
        if (e->h1 == h1 && e->h2 == h2) {
            if (memo_checking) {
                int ok = nm_model_eval(&c->mdl, n, &c->stats, NULL);
                if (ok != (e->energy >= 0) ||
                    (ok && (c->stats.energy != e->energy || c->stats.cycles != e->cycles ||
                            c->stats.last_level_accesses != e->lla)))
                    memo_fail("returned what the model does not");
            }
            if (e->energy < 0)
                return 0;
            f->energy = e->energy;
            f->cycles = e->cycles;
            f->lla = e->lla;
            set_scores(c->o, f);
            return 1;
        }
        *e = (struct memo_entry){.h1 = h1, .h2 = h2, .energy = -1};
    }
    if (!nm_model_eval(&c->mdl, n, &c->stats, NULL))
        return 0;
    f->energy = c->stats.energy;
    f->cycles = c->stats.cycles;
    f->lla = c->stats.last_level_accesses;
    if (e) {
        e->energy = f->energy;
        e->cycles = f->cycles;
        e->lla = f->lla;
    }
    set_scores(c->o, f);
    return 1;
}

/* Scores candidate n into f (valid: 1). */
static int score(struct ctx *c, const nm_mapping *n, nm_found *f)
{
    if (!score_near(c, n, f, NULL, 0))
        return 0;
    f->map = *n;
    return 1;
}

/* The largest prime factor of n > 1. */
static int64_t largest_prime(int64_t n)
{
    int64_t pr[NM_MAX_PRIMES];
    int ex[NM_MAX_PRIMES];
    int np = nm_prime_factors(n, pr, ex);
    return np ? pr[np - 1] : n;
}

static int64_t gcd64(int64_t a, int64_t b)
{
    while (b) {
        int64_t t = a % b;
        a = b;
        b = t;
    }
    return a;
}

/* One repair of m for invalidity iv (see nm_search_legalize); 0: none. */
static int repair(const nm_mapspace *ms, nm_mapping *m, const nm_invalid *iv)
{
    int S = ms->arch->nlevels, nd = ms->wl->ndims;
    if (iv->kind == NM_INV_CAPACITY || iv->kind == NM_INV_MD_CAPACITY) {
        /* the tile of level l shrinks: a prime of the largest loop of the
         * nearest level at or below l that has one (temporal first) goes to
         * the temporal loop above l */
        int l = iv->level;
        if (l < 0 || l + 1 >= S)
            return 0;
        for (int j = l; j >= 0; j--)
            for (int spatial = 0; spatial < 2; spatial++) {
                int best = -1;
                for (int d = 0; d < nd; d++) {
                    int64_t f = spatial ? m->level[j].sfactor[d] : m->level[j].tfactor[d];
                    if (f > 1 && (best < 0 || f > (spatial ? m->level[j].sfactor[best]
                                                          : m->level[j].tfactor[best])))
                        best = d;
                }
                if (best < 0)
                    continue;
                int64_t *f = spatial ? &m->level[j].sfactor[best] : &m->level[j].tfactor[best];
                int64_t p = largest_prime(*f);
                *f /= p;
                m->level[l + 1].tfactor[best] *= p;
                return 1;
            }
        return 0;
    }
    if (iv->kind == NM_INV_ARITH || iv->kind == NM_INV_INSTANCES) {
        /* the fan-out nearest above the level folds a prime of its largest
         * spatial loop into its own temporal loop */
        for (int j = iv->level + 1; j < S; j++) {
            int best = -1;
            for (int d = 0; d < nd; d++)
                if (m->level[j].sfactor[d] > 1 &&
                    (best < 0 || m->level[j].sfactor[d] > m->level[j].sfactor[best]))
                    best = d;
            if (best < 0)
                continue;
            int64_t p = largest_prime(m->level[j].sfactor[best]);
            m->level[j].sfactor[best] /= p;
            m->level[j].tfactor[best] *= p;
            return 1;
        }
    }
    return 0;
}

#define LEGALIZE_REPAIRS 64

int nm_search_legalize(const nm_mapspace *ms, nm_model *mdl, nm_mapping *m)
{
    const nm_workload *wl = ms->wl;
    int S = ms->arch->nlevels;
    if (m->nlevels != S)
        return 0;
    /* each dimension's loops cut to divide its bound, innermost first */
    for (int d = 0; d < wl->ndims; d++) {
        int64_t rem = wl->bound[d];
        for (int l = 0; l < S; l++) {
            nm_level_map *lm = &m->level[l];
            lm->tresidual[d] = lm->sresidual[d] = 0;
            lm->sfactor[d] = gcd64(lm->sfactor[d] > 0 ? lm->sfactor[d] : 1, rem);
            rem /= lm->sfactor[d];
            lm->tfactor[d] = gcd64(lm->tfactor[d] > 0 ? lm->tfactor[d] : 1, rem);
            rem /= lm->tfactor[d];
        }
        m->level[S - 1].tfactor[d] *= rem;
    }
    nm_stats st;
    for (int k = 0; k < LEGALIZE_REPAIRS; k++) {
        if (nm_model_eval(mdl, m, &st, NULL))
            return nm_mapspace_check(ms, m, NULL, 0);
        if (!repair(ms, m, &st.invalid))
            return 0;
    }
    return 0;
}

/* Divisors of n above 1, ascending (at most cap of them). */
static int divisors(int64_t n, int64_t *out, int cap)
{
    int k = 0, m = 0;
    int64_t hi[64];
    for (int64_t i = 2; i * i <= n; i++)
        if (n % i == 0) {
            if (k < cap)
                out[k++] = i;
            if (i != n / i && m < 64)
                hi[m++] = n / i;
        }
    while (m > 0 && k < cap)
        out[k++] = hi[--m];
    if (n > 1 && k < cap)
        out[k++] = n;
    return k;
}

/* The factor of dimension d in slot a of m: the temporal loop of level a
 * (a < S), or the spatial loop of level a - S. */
static int64_t *factor_at(nm_mapping *m, int S, int a, int d)
{
    return a < S ? &m->level[a].tfactor[d] : &m->level[a - S].sfactor[d];
}

/* Whether n's temporal (spatial) factor of dimension d at level l breaks
 * its slot's fixed factor or bounds. */
static int breaks_at(const nm_mapspace *ms, const nm_mapping *n, int l, int spatial, int d)
{
    int s = ms->slot_at[l][spatial];
    const nm_level_map *lm = &n->level[l];
    return s >= 0 && nm_mapspace_slot_breaks(ms, s, d, spatial ? lm->sfactor[d] : lm->tfactor[d]);
}

static int coprime(int64_t a, int64_t b)
{
    return gcd64(a, b) == 1;
}

/* Ends tried for a loop of end e by the residual moves: near values and
 * near ratios (tiles that need not divide the bound), distinct, in [1, hi]. */
#define RESID_ENDS 10

static int resid_ends(int64_t e, int64_t hi, int64_t *out)
{
    int64_t c[RESID_ENDS] = {e - 1, e + 1, e - 2, e + 2, (e + 1) / 2, 2 * e,
                             (2 * e + 2) / 3, (3 * e + 1) / 2, (3 * e + 3) / 4, (4 * e + 2) / 3};
    int k = 0;
    for (int i = 0; i < RESID_ENDS; i++) {
        int dup = c[i] < 1 || c[i] > hi || c[i] == e;
        for (int j = 0; j < k && !dup; j++)
            dup = out[j] == c[i];
        if (!dup)
            out[k++] = c[i];
    }
    return k;
}

/* The largest end dimension d's spatial loop at level l can have in m: the
 * room its axis of the fan-out leaves beside the other spatial loops there. */
static int64_t fanout_room(const struct ctx *c, const nm_mapping *m, int l, int d)
{
    const nm_level *L = &c->ms->arch->level[l];
    const nm_level_map *lm = &m->level[l];
    int nd = c->ms->wl->ndims, on_x = 1;
    for (int i = 0; i < nd; i++)
        if (lm->sorder[i] == d)
            on_x = i < lm->split;
    int64_t other = 1;
    for (int i = 0; i < nd; i++)
        if (lm->sorder[i] != d && (i < lm->split) == on_x)
            other *= lm->sfactor[lm->sorder[i]];
    return (on_x ? L->fanoutX : L->fanoutY) / other;
}

/* One step from *f: every neighbour in a fixed order, the best strictly
 * better one kept (the first on a tie); with `first`, the first strictly
 * better one.  With `resid` (residual factors enabled) factors are loop
 * ends whose residuals nm_mapspace_fit_residuals sets, and the
 * neighbourhood also holds the residual moves.  Returns 1 when *f
 * improved. */
#define DIVISORS 128

static int climb_step(struct ctx *c, nm_found *f, nm_found *cand, uint64_t *evals, int first,
                      int resid)
{
    const nm_mapspace *ms = c->ms;
    const nm_workload *wl = ms->wl;
    int S = ms->arch->nlevels, improved = 0;
    nm_mapping base = f->map, n = base; /* each move changes n and TRY puts it back */
    /* the fingerprint of base, level by level: a move rehashes the levels
     * it changes (all when residuals are fitted) */
    struct print bp, *pb = NULL;
    struct memo_optimum *opt = NULL;
    uint64_t h1, h2, evals0 = *evals;
    int known = 0;
    if (!c->memo)
        c->memo = memo_take();
    if (c->memo) {
        fingerprint_parts(c, &base, &bp);
        pb = &bp;
        /* a known local optimum: its neighbours are no better, as before
         * (their scores depend on them alone), and cost what they did */
        fingerprint(c, &base, pb, 0, &h1, &h2);
        h1 += (uint64_t)resid;
        opt = &c->memo->optimum[h2 & (MEMO_OPTIMA - 1)];
        known = opt->h1 == h1 && opt->h2 == h2;
        if (known && !memo_checking) {
            *evals += opt->tries;
            return 0;
        }
    }
    /* A move that breaks a slot's fixed factor or bounds is tried as any
     * other (it counts in the budget) but not scored: nm_mapspace_check
     * would refuse it (without residuals, the slot keeps what the move put
     * there).  Eyeriss's constraints refuse 80 % of the climb's moves. */
#define TRY(levels) TRY_UNLESS(0, levels)
#define TRY_UNLESS(broken, levels)                                                     \
    do {                                                                               \
        uint32_t changed_ = resid ? ~0u : (levels);                                    \
        ++*evals;                                                                      \
        int broken_ = !resid && (broken);                                              \
        if (broken_ && memo_checking && nm_mapspace_check(ms, &n, NULL, 0))            \
            memo_fail("skipped a move that meets the constraints");                    \
        if (!broken_ && (!resid || nm_mapspace_fit_residuals(ms, &n)) &&               \
            score_near(c, &n, cand, pb, changed_) &&                                   \
            compare_scores(c->o, cand->score, 0, f->score, 0) < 0) {                   \
            cand->map = n;                                                             \
            cand->index = f->index;                                                    \
            *f = *cand;                                                                \
            improved = 1;                                                              \
            if (first)                                                                 \
                return 1;                                                              \
        }                                                                              \
        for (int l_ = 0; l_ < S; l_++) /* n back to base */                            \
            if (changed_ >> l_ & 1u)                                                   \
                n.level[l_] = base.level[l_];                                          \
    } while (0)
    /* a prime factor of a loop to another level, temporal or spatial */
    for (int d = 0; d < wl->ndims; d++)
        for (int a = 0; a < 2 * S; a++) {
            int64_t pr[NM_MAX_PRIMES];
            int ex[NM_MAX_PRIMES];
            int np = nm_prime_factors(*factor_at(&base, S, a, d), pr, ex);
            for (int ip = 0; ip < np; ip++) {
                int64_t p = pr[ip];
                for (int b = 0; b < 2 * S; b++) {
                    if (b == a || (b >= S && ms->level[b - S].fanout <= 1))
                        continue;
                    *factor_at(&n, S, a, d) /= p;
                    *factor_at(&n, S, b, d) *= p;
                    TRY_UNLESS(breaks_at(ms, &n, a % S, a >= S, d) ||
                                   breaks_at(ms, &n, b % S, b >= S, d),
                               1u << (a % S) | 1u << (b % S));
                }
            }
        }
    /* at a fan-out, a spatial factor of one dimension (to a temporal loop
     * at any level) exchanged for a temporal factor of the same or another
     * dimension (from any level), any divisors of both (coprime for the
     * same dimension): refills an array that moving one prime at a time
     * would first have to leave idle (8 to 12 across 14 PEs: 2 out, 3 in) */
    for (int x = 0; x < S; x++) {
        if (ms->level[x].fanout <= 1)
            continue;
        int64_t used = 1; /* instances of the fan-out in use */
        for (int d = 0; d < wl->ndims; d++)
            used *= base.level[x].sfactor[d];
        for (int d = 0; d < wl->ndims; d++) {
            int64_t gs[DIVISORS];
            int ng = divisors(base.level[x].sfactor[d], gs, DIVISORS);
            for (int ig = 0; ig < ng; ig++) {
                int64_t g = gs[ig];
                for (int t = 0; t < S; t++)
                    for (int e = 0; e < wl->ndims; e++) {
                        int64_t hs[DIVISORS];
                        int nh = divisors(base.level[t].tfactor[e], hs, DIVISORS);
                        for (int ih = 0; ih < nh && used / g * hs[ih] <= ms->level[x].fanout;
                             ih++) {
                            int64_t h = hs[ih];
                            if (e == d && coprime(g, h) == 0)
                                continue;
                            for (int u = 0; u < S; u++) { /* where the spatial factor goes */
                                n.level[x].sfactor[d] /= g;
                                n.level[u].tfactor[d] *= g;
                                n.level[t].tfactor[e] /= h;
                                n.level[x].sfactor[e] *= h;
                                TRY_UNLESS(breaks_at(ms, &n, x, 1, d) ||
                                               breaks_at(ms, &n, u, 0, d) ||
                                               breaks_at(ms, &n, t, 0, e) ||
                                               breaks_at(ms, &n, x, 1, e),
                                           1u << x | 1u << u | 1u << t);
                            }
                        }
                    }
            }
        }
    }
    /* two loops of a level swapped */
    for (int l = 0; l < S; l++)
        for (int i = 0; i < wl->ndims; i++)
            for (int j = i + 1; j < wl->ndims; j++) {
                const nm_level_map *lm = &base.level[l];
                if (lm->tfactor[lm->torder[i]] <= 1 || lm->tfactor[lm->torder[j]] <= 1)
                    continue;
                n.level[l].torder[i] = lm->torder[j];
                n.level[l].torder[j] = lm->torder[i];
                TRY(1u << l);
            }
    /* a free keep/bypass choice flipped */
    for (int i = 0; i < ms->nbypass; i++) {
        n.level[ms->bypass_level[i]].keep ^= 1u << ms->bypass_ds[i];
        TRY(1u << ms->bypass_level[i]);
    }
    /* residual moves: the end of one loop of a dimension set to a near
     * value, the outermost free temporal loop of the dimension covering
     * the bound with as few tiles as it needs */
    for (int d = 0; resid && d < wl->ndims; d++) {
        const nm_dim_space *ds = &ms->dim[d];
        int64_t bound = wl->bound[d];
        int top = -1;
        for (int t = 0; t < ms->nslots; t++)
            if (!ms->slot[t].spatial && !ds->fixed[t])
                top = t;
        for (int a = 0; top >= 0 && a < ms->nslots; a++) {
            const nm_slot *sa = &ms->slot[a];
            if (a == top || ds->fixed[a] || (sa->spatial && ms->level[sa->level].fanout <= 1))
                continue;
            int64_t vs[RESID_ENDS + 1];
            int nv = resid_ends(*nm_mapspace_slot_factor(ms, &base, a, d), bound, vs);
            if (sa->spatial) { /* and the end that fills the fan-out's axis */
                int64_t room = fanout_room(c, &base, sa->level, d);
                int dup = room < 1 || room > bound ||
                          room == *nm_mapspace_slot_factor(ms, &base, a, d);
                for (int i = 0; i < nv && !dup; i++)
                    dup = vs[i] == room;
                if (!dup)
                    vs[nv++] = room;
            }
            for (int iv = 0; iv < nv; iv++) {
                *nm_mapspace_slot_factor(ms, &n, a, d) = vs[iv];
                int64_t inner = 1; /* the ends of the other loops, capped at the bound */
                for (int t = 0; t < ms->nslots && inner < bound; t++)
                    if (t != top)
                        inner *= *nm_mapspace_slot_factor(ms, &n, t, d);
                *nm_mapspace_slot_factor(ms, &n, top, d) =
                    inner >= bound ? 1 : (bound + inner - 1) / inner;
                TRY(~0u);
            }
        }
    }
#undef TRY
#undef TRY_UNLESS
    if (known && (improved || opt->tries != *evals - evals0))
        memo_fail("took a mapping for a local optimum that is not one");
    if (!improved && opt)
        *opt = (struct memo_optimum){h1, h2, *evals - evals0};
    return improved;
}

/* A random kick from *from for iterated local search: `moves` random moves
 * (a prime factor of a loop, or the whole loop, to another level or
 * fan-out; one dimension's factors drawn afresh; a level's loops in a
 * random order; a keep/bypass choice flipped), retried until the result is
 * valid.  With `resid`, factors are drawn afresh from the whole enlarged
 * space and residuals fitted to the ends.  Returns 1 with the kicked
 * mapping scored in *to. */
#define KICK_TRIES 32

static int kick(struct ctx *c, const nm_found *from, nm_found *to, int moves, nm_pcg32 *rng,
                uint64_t *evals, int resid)
{
    const nm_mapspace *ms = c->ms;
    const nm_workload *wl = ms->wl;
    int S = ms->arch->nlevels;
    for (int t = 0; t < KICK_TRIES; t++) {
        nm_mapping n = from->map;
        for (int k = 0; k < moves; k++) {
            uint32_t kind = nm_pcg32_bounded(rng, 8);
            int d = (int)nm_pcg32_bounded(rng, (uint32_t)wl->ndims);
            if (kind < 3) { /* a prime factor moved (kind 2: all of them) */
                /* the slots, level by level (temporal, then spatial at a fan-out) */
                int slot[2 * NM_MAX_LEVELS], ns = 0, nfrom = 0, from_at[2 * NM_MAX_LEVELS];
                for (int l = 0; l < S; l++)
                    for (int a = l; a < 2 * S; a += S) {
                        if (a >= S && ms->level[l].fanout <= 1)
                            continue;
                        if (*factor_at(&n, S, a, d) > 1)
                            from_at[nfrom++] = ns;
                        slot[ns++] = a;
                    }
                if (!nfrom || ns < 2)
                    continue;
                int a = from_at[nm_pcg32_bounded(rng, (uint32_t)nfrom)];
                int b = (int)nm_pcg32_bounded(rng, (uint32_t)ns - 1u);
                b += b >= a;
                int64_t pr[NM_MAX_PRIMES];
                int ex[NM_MAX_PRIMES];
                int np = nm_prime_factors(*factor_at(&n, S, slot[a], d), pr, ex);
                int64_t p = pr[nm_pcg32_bounded(rng, (uint32_t)np)];
                if (kind == 2) /* the whole loop */
                    p = *factor_at(&n, S, slot[a], d);
                *factor_at(&n, S, slot[a], d) /= p;
                *factor_at(&n, S, slot[b], d) *= p;
            } else if (kind == 3) { /* one dimension's factors drawn afresh */
                const nm_dim_space *ds = &ms->dim[d];
                int64_t f[NM_MAX_SLOTS];
                nm_mapspace_factors(ms, d, nm_pcg32_bounded64(rng, resid ? ds->count
                                                                         : ds->perfect),
                                    f, NULL);
                for (int i = 0; i < ms->nslots; i++)
                    *nm_mapspace_slot_factor(ms, &n, i, d) = f[i];
            } else if (kind < 6) { /* a level's loops reordered */
                int l = (int)nm_pcg32_bounded(rng, (uint32_t)S), k2;
                int8_t dims[NM_MAX_DIMS];
                uint64_t orders = nm_mapspace_pruned_orders(ms, &n, l, dims, &k2);
                nm_mapspace_set_order(ms, &n, l, dims, k2, nm_pcg32_bounded64(rng, orders));
            } else if (ms->nbypass) { /* a keep/bypass choice flipped */
                int i = (int)nm_pcg32_bounded(rng, (uint32_t)ms->nbypass);
                n.level[ms->bypass_level[i]].keep ^= 1u << ms->bypass_ds[i];
            }
        }
        ++*evals;
        if ((!resid || nm_mapspace_fit_residuals(ms, &n)) && score(c, &n, to)) {
            to->index = from->index;
            return 1;
        }
    }
    return 0;
}

/* Refinement after a random strategy (o->refine): iterated local search.
 * Half the CHAINS chains start from the best mapping of each of the best
 * shapes (shape_of: what each level keeps, which dimensions each fan-out
 * spreads), the others from the next best mappings (chains past the number
 * found start again from the best): mappings of one shape tend to climb to
 * the same optimum, and the best of another shape is often the way to a
 * better one; the runners-up of the best shapes hold on where the random
 * search found few valid mappings and the other shapes' bests are poor.
 * A chain hill climbs until no neighbour is better; then, over and over, it
 * kicks its mapping (KICK_MIN random moves, one more each time a kick leads
 * nowhere better, back to KICK_MIN after an improvement or past KICK_MAX)
 * and climbs again, keeping the result when it is no worse.  After a kick,
 * even chains climb to the best neighbour and odd chains to the first
 * better one in the neighbourhood's order: the odd chains try about three
 * times as many kicks for their budget, the even ones go deeper per kick,
 * and neither alone finds every optimum the other does.  A chain stops
 * when it has spent its share of the budget (in all as many evaluations as
 * the search found valid mappings, at least CHAINS x CHAIN_MIN), when
 * KICK_TRIES kicks in a row give no valid mapping, or at the time limit or
 * Ctrl-C.  Each chain draws from its own stream of the seed
 * and runs on whichever thread is free, and the chains' results are merged
 * in chain order: the result does not depend on the number of threads.
 * With residual factors enabled, every chain then runs again from its
 * result for RESID_CHAIN evaluations with the residual moves (`resid`). */
#define KICK_MIN 2
#define KICK_MAX 8
#define CHAIN_MIN 50000
#define RESID_CHAIN 10000
#define MAX_STEPS 200

#define MAX_CHAINS (CHAINS + NM_MAX_WARM)

struct chains {
    nm_found *f;        /* n: each chain's start, then its result */
    int n;              /* CHAINS cold chains (none when the search found nothing),
                         * then one per legal warm start */
    int resid;          /* moves in the space enlarged with residual factors */
    uint64_t evals[MAX_CHAINS];
    int next;           /* the next chain to run (under the pool's lock) */
    uint64_t budget;    /* evaluations per chain */
    double deadline;
    pthread_mutex_t *lock;
};

static int stopped(const struct ctx *c, double deadline)
{
    return (c->o->stop && *c->o->stop) || wall_now() > deadline;
}

/* Climbs *f until no neighbour is better (or it is stopped). */
static void climb(struct ctx *c, nm_found *f, nm_found *cand, uint64_t *evals, double deadline,
                  int first, int resid)
{
    for (int step = 0; step < MAX_STEPS && climb_step(c, f, cand, evals, first, resid); step++)
        if (stopped(c, deadline))
            break;
}

static void run_chain(struct ctx *c, struct chains *ch, int k)
{
    nm_found *f = &ch->f[k], cur, next, cand;
    uint64_t *evals = &ch->evals[k];
    nm_pcg32 rng;
    nm_pcg32_seed(&rng, c->o->seed ^ UINT64_C(0xD1B54A32D192ED03),
                  (uint64_t)k + (ch->resid ? (k < CHAINS ? CHAINS : MAX_CHAINS) : 0));
    climb(c, f, &cand, evals, ch->deadline, 0, ch->resid);
    cur = *f;
    /* Kicks grow while they lead nowhere better, and start small again
     * after an improvement (variable neighbourhood search). */
    int moves = KICK_MIN;
    while (*evals < ch->budget && !stopped(c, ch->deadline)) {
        if (!kick(c, &cur, &next, moves, &rng, evals, ch->resid))
            break;
        climb(c, &next, &cand, evals, ch->deadline, k & 1, ch->resid);
        int cmp = compare_scores(c->o, next.score, 0, cur.score, 0);
        if (cmp <= 0)
            cur = next;
        if (cmp < 0)
            moves = KICK_MIN;
        else if (++moves > KICK_MAX)
            moves = KICK_MIN;
    }
    *f = cur;
}

static void run_chains(worker *w)
{
    struct chains *ch = w->chains;
    for (;;) {
        pthread_mutex_lock(ch->lock);
        int k = ch->next++;
        pthread_mutex_unlock(ch->lock);
        if (k >= ch->n)
            return;
        run_chain(&w->c, ch, k);
    }
}

/* Runs the chains of ch on the workers and merges their results in chain
 * order (so that ties go the same way on any number of threads), with
 * indices from `index` on; returns the evaluations they spent. */
static uint64_t run_chains_merged(struct merge *mg, struct pool *pool, worker *w, int T,
                                  struct chains *ch, uint64_t index)
{
    nm_search_result *res = mg->res;
    ch->next = 0;
    memset(ch->evals, 0, sizeof ch->evals);
    for (int i = 0; i < T; i++) {
        w[i].it = NULL;
        w[i].cn = 0;
        w[i].chains = ch;
    }
    run_round(pool, w, T);
    for (int i = 0; i < T; i++)
        w[i].chains = NULL;
    uint64_t evals = 0;
    for (int k = 0; k < ch->n; k++) {
        nm_found *f = &ch->f[k];
        evals += ch->evals[k];
        f->index = index + (uint64_t)k;
        f->shape = shape_of(&f->map, mg->c->ms->arch->nlevels, mg->c->ms->wl->ndims);
        if (!res->found || compare_scores(mg->o, f->score, 0, res->best.score, 0) < 0) {
            res->best = *f;
            res->found = 1;
            top_add(mg, f);
        }
        if (!pareto_dominated(res, f))
            pareto_add(mg, f);
    }
    return evals;
}

/* The warm starts of o made legal for the mapspace, scored, into f (at
 * most NM_MAX_WARM); returns how many. */
static int warm_starts(struct ctx *c, nm_found *f)
{
    int n = 0;
    for (int i = 0; i < c->o->nwarm && n < NM_MAX_WARM; i++) {
        nm_mapping m = c->o->warm[i];
        if (nm_search_legalize(c->ms, &c->mdl, &m) && score(c, &m, &f[n])) {
            f[n++].index = 0;
        }
    }
    return n;
}

static void refine(struct merge *mg, struct pool *pool, worker *w, int T, double deadline)
{
    nm_search_result *res = mg->res;
    struct chains ch = {.f = nm_calloc(MAX_CHAINS, sizeof *ch.f), .deadline = deadline,
                        .lock = &pool->lock};
    if (!ch.f)
        return;
    double effort = nm_search_effort(mg->o);
    uint64_t floor = (uint64_t)(effort * CHAINS * CHAIN_MIN);
    uint64_t budget = res->valid > floor ? res->valid : floor;
    ch.budget = budget / CHAINS;
    /* fewer chains below a quarter of the default effort (each climbs to
     * its first optimum whatever its budget) */
    int cold = effort >= 0.25 ? CHAINS : (int)(4 * CHAINS * effort + 0.5);
    if (cold < 2)
        cold = 2;
    /* the best of each of the best cold / 2 shapes, then the next best
     * mappings */
    int k = 0;
    if (res->found) {
        for (int i = 0; k < cold / 2 && i < mg->nshape; i++)
            ch.f[k++] = mg->shape[i];
        int nshapes = k; /* mg->shape[0 .. nshapes) are starts */
        for (int i = 1; k < cold && i < mg->nlead; i++) {
            int j = shape_slot(mg, &mg->lead[i]);
            if (j < 0 || j >= nshapes || mg->shape[j].index != mg->lead[i].index)
                ch.f[k++] = mg->lead[i]; /* not a start already */
        }
        for (; k < cold; k++)
            ch.f[k] = res->best;
    }
    /* then one chain from each warm start */
    ch.n = k + warm_starts(mg->c, ch.f + k);
    if (ch.n == 0) {
        nm_free(ch.f);
        return;
    }
    /* after every searched candidate */
    uint64_t evals = run_chains_merged(mg, pool, w, T, &ch, res->proposed);
    if (mg->c->ms->imperfect) {
        /* residual factors: each chain again from where it ended */
        ch.resid = 1;
        ch.budget = RESID_CHAIN;
        evals += run_chains_merged(mg, pool, w, T, &ch, res->proposed + (uint64_t)ch.n);
    }
    res->refined = evals;
    nm_free(ch.f);
}

/* optimal: seconds spent bounding the unsearched points after a stop. */
#define STOP_BOUND_S 0.25

/* optimal starts from the default search's best (warm_algorithm, with the
 * same seed, threads and give-up rules; half of any time limit, and at most
 * half as many candidates as the space has outer points): the incumbent
 * prunes from
 * the first point on, and the result is never worse.  Its mappings enter
 * the result with indices past every enumerated one, so on a tie the
 * enumeration's own mapping wins and a finished run returns what it would
 * have returned without the warm start. */
static nm_status warm_start(const nm_mapspace *ms, const nm_search_opts *o, struct merge *mg,
                            nm_error *err)
{
    nm_search_opts wo = *o;
    wo.algorithm = o->warm_algorithm ? o->warm_algorithm : "hybrid";
    wo.progress = NULL;
    wo.search_size = 0;
    /* at most half as many candidates as the space has points (small
     * spaces are cheaper to enumerate than to sample) */
    wo.max_evals = nm_mapspace_outer_count(ms) / 2 + 1;
    wo.time_limit = o->time_limit > 0 ? o->time_limit / 2 : 0;
    nm_search_result w;
    nm_status st = nm_search_run(ms, &wo, &w, err);
    if (st != NM_OK)
        return st;
    nm_search_result *res = mg->res;
    res->proposed += w.proposed;
    res->valid += w.valid;
    res->pruned += w.pruned;
    for (int k = 0; k < NM_REJECT_KINDS; k++) {
        res->invalid[k] += w.invalid[k];
        for (int l = 0; l <= NM_MAX_LEVELS; l++)
            res->invalid_at[k][l] += w.invalid_at[k][l];
    }
    if (w.found) {
        res->best = w.best;
        res->best.index = UINT64_MAX;
        res->found = 1;
        for (int i = 0; i < w.ntop; i++) {
            nm_found f = w.top[i];
            f.index = UINT64_MAX - (uint64_t)(w.ntop - i);
            top_add(mg, &f);
        }
        for (int i = 0; i < w.npareto; i++) {
            nm_found f = w.pareto[i];
            f.index = UINT64_MAX;
            pareto_add(mg, &f);
        }
    }
    nm_search_result_fini(&w);
    return NM_OK;
}

nm_status nm_search_run(const nm_mapspace *ms, const nm_search_opts *o, nm_search_result *res,
                        nm_error *err)
{
    memset(res, 0, sizeof *res);
    const nm_strategy *st = nm_strategy_find(o->algorithm);
    if (!st)
        return nm_error_set(err, NM_ERR_INPUT, NULL, 0, 0, "unknown algorithm '%s' (one of %s)",
                            o->algorithm, nm_strategy_names());
    int T = o->threads < 1 ? 1 : o->threads;
    res->threads = T;
    int optimal = !strcmp(st->name, "optimal");
    nm_status status = NM_OK;
    void *state = nm_calloc(1, st->state_size);
    worker *w = nm_calloc((size_t)T, sizeof *w);
    item *items = nm_calloc((size_t)T, sizeof *items);
    counted *window = nm_calloc(WINDOW + (size_t)T, sizeof *window);
    struct ctx *mc = nm_calloc(1, sizeof *mc);
    double effort = nm_search_effort(o);
    int L = o->lanes < 1 ? 1 : o->lanes > NM_MAX_LANES ? NM_MAX_LANES : o->lanes;
    if (effort < 1 && L > EFFORT_LANES) { /* fewer lanes, down to EFFORT_LANES */
        int scaled = (int)(L * effort + 0.5);
        L = scaled > EFFORT_LANES ? scaled : EFFORT_LANES;
    }
    struct lane *lanes = nm_calloc((size_t)L, sizeof *lanes);
    nm_found *scratch = nm_calloc(1, sizeof *scratch);
    nm_found *starts = nm_calloc(2 * CHAINS, sizeof *starts);
    res->pareto = nm_calloc(256, sizeof *res->pareto);
    res->top = nm_calloc(o->topk > 0 ? (size_t)o->topk : 1, sizeof *res->top);
    int nw = 0;
    struct pool pool;
    pthread_mutex_init(&pool.lock, NULL);
    pthread_cond_init(&pool.go, NULL);
    pthread_cond_init(&pool.done, NULL);
    pool.round = 0;
    pool.pending = 0;
    pool.quit = 0;
    if (!state || !w || !items || !window || !mc || !lanes || !scratch || !starts || !res->pareto ||
        !res->top) {
        status = nm_error_set(err, NM_ERR_NOMEM, NULL, 0, 0, "out of memory");
        goto done;
    }
    if ((status = st->init(state, ms, o, err)) != NM_OK)
        goto done;
    if (!nm_sparse_removes(ms->arch, ms->wl)) {
        uint64_t fill = nm_mapspace_fill(ms, FILL_BUDGET);
        double iters = 1;
        for (int d = 0; d < ms->wl->ndims; d++)
            iters *= (double)ms->wl->bound[d];
        res->fill = fill;
        res->fill_cycles = fill ? iters / (double)fill : 0.0;
    }
    nm_roofline_operand_bound(ms, o->metric[0], FILL_BUDGET, &res->operands);
    mc->ms = ms;
    mc->o = o;
    mc->made_o = UINT64_MAX;
    mc->incumbent = INFINITY;
    if ((status = nm_model_init(&mc->mdl, ms->arch, ms->wl, err)) != NM_OK)
        goto done;
    for (nw = 0; nw < T; nw++) {
        w[nw].c.ms = ms;
        w[nw].c.o = o;
        w[nw].c.made_o = UINT64_MAX;
        w[nw].st = st;
        w[nw].state = state;
        w[nw].recs = nm_calloc(CHUNK, sizeof(rec));
        if (!w[nw].recs || nm_model_init(&w[nw].c.mdl, ms->arch, ms->wl, err) != NM_OK) {
            nm_free(w[nw].recs);
            status = nm_error_set(err, NM_ERR_NOMEM, NULL, 0, 0, "out of memory");
            goto done;
        }
    }

    for (int i = 1; i < T; i++) {
        w[i].pool = &pool;
        w[i].running = pthread_create(&w[i].tid, NULL, worker_main, &w[i]) == 0;
    }
    /* Enumerations are one lane; random strategies use o->lanes. */
    int enumerates = st->count == exh_count;
    struct merge mg = {.o = o, .st = st, .state = state, .c = mc, .res = res, .cap_pareto = 256,
                       .lane = lanes, .nlanes = enumerates ? 1 : L, .scratch = scratch,
                       .victory = o->victory, .timeout = o->timeout, .sweep = 1,
                       .stop_o = UINT64_MAX};
    if (!enumerates && o->refine) {
        mg.lead = starts;
        mg.shape = starts + CHAINS;
    }
    if (!enumerates && !o->penalize_bypass)
        mg.sweep = bypass_sweep(ms);
    /* A proof needs the whole space: optimal ignores the give-up rules.
     * Exhaustive runs to the end unless told otherwise; random strategies
     * take Timeloop's defaults: a lane gives up after 500 valid mappings
     * without improvement or 1000 invalid ones in a row. */
    if (optimal) {
        mg.victory = mg.timeout = 0;
    } else {
        if (!o->victory_set)
            mg.victory = enumerates ? 0 : 500;
        if (!enumerates && effort != 1) {
            mg.victory = (uint64_t)((double)mg.victory * effort + 0.5);
            if (mg.victory < 1)
                mg.victory = 1;
        }
        if (!o->timeout_set)
            mg.timeout = enumerates ? 0 : 1000;
    }
    double t0 = wall_now(), last_report = t0;
    if (optimal && (status = warm_start(ms, o, &mg, err)) != NM_OK)
        goto done;
    uint64_t next_o = 0;   /* first outer point not yet in the window */
    size_t wpos = 0, wlen = 0;
    uint64_t cur_first = 0; /* candidates of window[wpos] already handed out */
    uint64_t window_size = 8;
    int exhausted = 0;
    snprintf(res->stopped_by, sizeof res->stopped_by, "the whole space searched");
    while (!mg.stop && !exhausted) {
        /* Pack the next T items from the outer points, in order. */
        int nitems = 0;
        for (int i = 0; i < T; i++)
            w[i].c.incumbent = res->found ? res->best.score[0] : INFINITY;
        while (nitems < T && !exhausted) {
            item *it = &items[nitems];
            it->nseg = 0;
            it->total = 0;
            while (it->total < CHUNK && it->nseg < MAXSEG) {
                if (wpos == wlen) { /* count the next window of points, in parallel */
                    /* Small windows first, so that an early best can prune
                     * (optimal) the points counted after it. */
                    uint64_t per = (window_size + (uint64_t)T - 1) / (uint64_t)T;
                    if (window_size < WINDOW)
                        window_size *= 2;
                    for (int i = 0; i < T; i++) {
                        w[i].it = NULL;
                        w[i].cnt = window + (uint64_t)i * per;
                        w[i].cfrom = next_o + (uint64_t)i * per;
                        w[i].cn = per;
                    }
                    run_round(&pool, w, T);
                    next_o += per * (uint64_t)T;
                    wpos = 0;
                    wlen = per * (uint64_t)T;
                    cur_first = 0;
                }
                counted *c = &window[wpos];
                if (c->n == UINT64_MAX) {
                    exhausted = 1;
                    break;
                }
                /* A point of an ended lane would only be skipped by the merge. */
                if (c->n == 0 || mg.lane[(next_o - wlen + wpos) % (uint64_t)mg.nlanes].done) {
                    wpos++;
                    cur_first = 0;
                    continue;
                }
                segment *sg = &it->seg[it->nseg++];
                sg->o = next_o - wlen + wpos;
                sg->first = cur_first;
                sg->has_single = c->single.status != 0; /* an invalid or pruned point */
                sg->single = c->single;
                uint64_t room = CHUNK - it->total;
                sg->n = c->n - cur_first < room ? c->n - cur_first : room;
                it->total += sg->has_single ? 1 : sg->n;
                cur_first += sg->n;
                if (cur_first >= c->n) {
                    wpos++;
                    cur_first = 0;
                }
            }
            if (it->nseg == 0)
                break;
            nitems++;
        }
        /* Evaluate them in parallel. */
        for (int i = 0; i < T; i++) {
            w[i].it = i < nitems ? &items[i] : NULL;
            w[i].cn = 0;
        }
        run_round(&pool, w, T);
        for (int i = 0; i < nitems && !mg.stop; i++)
            merge_item(&mg, &items[i], w[i].recs);
        double now = wall_now();
        if (o->stop && *o->stop && !mg.stop) {
            mg.stop = 1;
            snprintf(res->stopped_by, sizeof res->stopped_by, "interrupted");
        }
        if (o->time_limit > 0 && now - t0 >= o->time_limit && !mg.stop) {
            mg.stop = 1;
            snprintf(res->stopped_by, sizeof res->stopped_by, "time limit (%g s)", o->time_limit);
        }
        if (o->progress && (now - last_report >= 0.25 || mg.stop || exhausted)) {
            nm_search_progress p = {res->proposed, res->valid,
                                    res->found ? res->best.score[0] : -1.0, now - t0,
                                    (double)res->proposed / (now - t0 > 1e-9 ? now - t0 : 1e-9)};
            o->progress(o->progress_ctx, &p);
            last_report = now;
        }
    }
    res->evaluated = res->proposed - res->pruned;
    if (optimal) {
        res->proven_optimal = exhausted && !mg.stop;
        res->lower_bound = res->found ? res->best.score[0] : INFINITY;
        if (!res->proven_optimal) {
            /* Stopped early: bound what was not searched, from the first
             * point not fully merged on, for at most STOP_BOUND_S more;
             * what that leaves gets the roofline (every mapping's bound). */
            uint64_t from = mg.stop_o != UINT64_MAX ? mg.stop_o
                                                    : next_o - wlen + wpos;
            const struct exh *x = state;
            double t1 = wall_now(), lb;
            for (uint64_t p = from; p < x->total; p++) {
                if ((p & 255) == 0 && wall_now() - t1 > STOP_BOUND_S) {
                    nm_roofline rf;
                    nm_roofline_of(&rf, ms->arch, ms->wl);
                    lb = fmax(nm_metric_roofline(o->metric[0], &rf), res->operands.metric <
                              INFINITY ? res->operands.metric : 0.0);
                    if (lb < res->lower_bound)
                        res->lower_bound = lb;
                    break;
                }
                if (exh_bound(x, mc, p, &lb) && lb < res->lower_bound)
                    res->lower_bound = lb;
            }
        }
    }
    res->seconds = wall_now() - t0; /* with optimal's bounding after a stop */
    res->evals_per_second = res->seconds > 0 ? (double)res->evaluated / res->seconds / T : 0;
    if (o->refine && !enumerates) {
        refine(&mg, &pool, w, T, o->time_limit > 0 ? t0 + o->time_limit : INFINITY);
        res->seconds = wall_now() - t0;
    }
    if (res->found) {
        nm_model_eval(&mc->mdl, &res->best.map, &res->best_stats, NULL);
        /* Pareto front sorted by cycles. */
        for (int i = 1; i < res->npareto; i++) {
            nm_found f = res->pareto[i];
            int j = i;
            while (j > 0 && res->pareto[j - 1].cycles > f.cycles) {
                res->pareto[j] = res->pareto[j - 1];
                j--;
            }
            res->pareto[j] = f;
        }
    }
done:
    pthread_mutex_lock(&pool.lock);
    pool.quit = 1;
    pthread_cond_broadcast(&pool.go);
    pthread_mutex_unlock(&pool.lock);
    for (int i = 1; i < nw; i++)
        if (w[i].running)
            pthread_join(w[i].tid, NULL);
    pthread_mutex_destroy(&pool.lock);
    pthread_cond_destroy(&pool.go);
    pthread_cond_destroy(&pool.done);
    for (int i = 0; i < nw; i++) {
        ctx_fini(&w[i].c);
        nm_free(w[i].recs);
    }
    if (mc)
        ctx_fini(mc);
    if (state && st && st->fini)
        st->fini(state);
    nm_free(state);
    nm_free(w);
    nm_free(items);
    nm_free(window);
    nm_free(mc);
    nm_free(lanes);
    nm_free(scratch);
    nm_free(starts);
    if (status != NM_OK)
        nm_search_result_fini(res);
    return status;
}
