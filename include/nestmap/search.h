/* search.h — searching a mapspace for the best mapping.
 *
 * Strategies are plug-ins: a static const descriptor {name, state_size,
 * init, count, make, fini}.  A strategy numbers its outer points; point o
 * holds count(o) candidates, and candidate j of point o is a pure function of
 * (seed, o, j).  Worker threads evaluate runs of candidates per round and the
 * results are merged in point order.  So for a given seed and budget the
 * result does not depend on the number of threads (only a wall-clock limit or
 * Ctrl-C, checked between rounds, is outside that guarantee).
 *
 * The random strategies search in `lanes` independent lanes (point o belongs
 * to lane o mod lanes).  victory_condition and timeout apply to each lane as
 * Timeloop applies them to each of its threads: a lane ends after that many
 * valid mappings without beating its own best (or invalid ones in a row), and
 * the search ends when every lane has.  Unlike Timeloop's threads, the lanes
 * are not the worker threads, so the result stays independent of --threads.
 *
 * Strategies: exhaustive (every factorization, split and bypass choice, and
 * every order of the loops that differ once factors of 1 are dropped),
 * random (uniform points), random_pruned (uniform over distinct orders),
 * hybrid (random factorization, then several random orders: Timeloop's
 * default), and optimal (exhaustive with branch and bound: it starts from
 * the default search's best (warm_algorithm), and a factorization whose
 * lower bound -- nm_model_bound, then nm_model_floor, which depends on its
 * tiles -- is above the best found is skipped, so a finished run proves
 * the best mapping of the constrained space; on a tie the enumeration's
 * mapping wins, so the warm start never changes a finished run's answer).
 * Stopped early, optimal bounds the unsearched points for at most a quarter
 * second more (the roofline covers the rest): lower_bound is always a
 * proven bound, and the best is never worse than the warm start's.
 *
 * With fill on (the default), a random strategy draws every other point
 * fan-outs first (nm_mapspace_random_filled: each fan-out takes as large a
 * share of the remaining prime factors as fits it, the rest spread
 * uniformly over the temporal loops): half the draws keep the arrays busy,
 * where uniform draws mostly leave them idle.  `mapper: refine: false` and
 * --no-refine turn fill off with the refinement below, and the strategies
 * then draw as Timeloop's do.
 *
 * After a random strategy (refine, on by default), an iterated local
 * search.  Its hill climb tries, in a fixed order, every neighbour of a
 * mapping -- a prime factor of a loop moved to another level, temporal or
 * spatial; at a fan-out, a spatial factor exchanged for a temporal factor
 * of another dimension, or of the same one when they are coprime (any
 * divisors, from and to any levels), which refills an array that one-prime
 * moves would first leave idle (8 to 12 across 14 PEs: 2 out, 3 in); two
 * loops of a level swapped; a free keep/bypass choice flipped -- that meets
 * the constraints, and keeps the best strictly better one, until none is.
 * Sixteen chains start: eight from the best mapping of each of the eight
 * best shapes (what each level keeps, which dimensions each fan-out
 * spreads), the others from the next best mappings; each climbs, then over
 * and over kicks its mapping (2 random moves: a prime factor or a whole
 * loop moved, a dimension's factors drawn afresh, a level's loops
 * reordered, bypass flips; one more move each time a kick leads nowhere
 * better, up to 8) and climbs again (even chains to the best neighbour,
 * odd chains to the first better one), keeping the result when it is no
 * worse, until the chains have spent as many evaluations as the search
 * found valid mappings (at least 800,000; a chain also ends when none of
 * 32 kicks in a row meets the constraints).  Each chain has its own random
 * stream of the seed and the chains run on the worker threads; their
 * results are merged in chain order, so the result still does not depend
 * on the number of threads.
 *
 * The effort (--effort, `mapper: effort`, 1 by default) scales that budget:
 * the victory condition, the lanes when below 1 (down to 4), the chains'
 * evaluations, and below a quarter the number of chains (4 x CHAINS x
 * effort, at least 2; each climbs to its first optimum whatever its
 * budget).  Warm starts (nm_search_opts.warm: a sweep's previous point)
 * each start one chain more, after the others, so the result is never
 * worse than the same search without them.
 *
 * With residual factors enabled (nm_mapspace_enable_imperfect: --imperfect,
 * `mapspace: {template: ruby}`) and refine on, the random strategies draw
 * perfect factors only and the chains run as above: up to there the search
 * is the one it would be without residuals (the same candidates, valid
 * mappings and best).  Then each chain climbs and kicks again from where it
 * ended, 10,000 evaluations more, in the enlarged space: factors are loop
 * ends whose residuals nm_mapspace_fit_residuals sets, the neighbourhood
 * gains residual moves (the end of one loop of a dimension set to a near
 * value or ratio -- +-1, +-2, x2, /2, x3/2, x2/3, x4/3, x3/4 -- or, for a
 * spatial loop, to the end that fills its axis of the fan-out; the
 * outermost free temporal loop of that dimension covers the bound with the
 * tiles it needs), and kicks draw factors from the whole enlarged space.
 * Residuals fall on spatial loops too: a fan-out's last instance then uses
 * fewer siblings.  The result is never worse than without residuals.  With refine
 * off, the random strategies draw half their points perfect and half from
 * the whole enlarged space, as before.
 */
#ifndef NESTMAP_SEARCH_H
#define NESTMAP_SEARCH_H

#include <signal.h>
#include <stdint.h>

#include "nestmap/mapspace.h"
#include "nestmap/model.h"
#include "nestmap/roofline.h"

typedef enum nm_metric {
    NM_MET_ENERGY,
    NM_MET_DELAY,
    NM_MET_EDP,
    NM_MET_ED2P,
    NM_MET_LLA /* last-level accesses */
} nm_metric;

#define NM_MAX_METRICS 4
#define NM_MAX_WARM 8 /* warm-start mappings a search takes */
#define NM_MAX_LANES 256

typedef struct nm_search_progress {
    uint64_t proposed, valid;
    double best, seconds, rate; /* best: first objective metric, or -1 */
} nm_search_progress;

typedef struct nm_search_opts {
    const char *algorithm;
    const char *warm_algorithm; /* optimal starts from this search's best: the mapper
                                 * section's random, random_pruned or hybrid (NULL:
                                 * hybrid) */
    int nmetrics;
    nm_metric metric[NM_MAX_METRICS]; /* prioritized: ties broken by the next */
    int threads;
    uint64_t seed;
    uint64_t search_size; /* stop after this many valid mappings (0: no limit) */
    uint64_t max_evals;   /* stop after this many candidates (0: no limit) */
    double time_limit;    /* seconds of wall time (0: none) */
    uint64_t victory;     /* end a lane after this many valid mappings in a row that do
                           * not beat its best (0: off); unless set explicitly
                           * (victory_set), 500 for the random strategies and off for
                           * exhaustive; optimal ignores it */
    int victory_set;
    int penalize_bypass;  /* count toward victory the candidates that differ from the
                           * one before only in bypass (Timeloop's
                           * penalize_consecutive_bypass_fails; default no) */
    uint64_t timeout;     /* end a lane after this many invalid in a row (0: off);
                           * unless set explicitly (timeout_set), 1000 for the random
                           * strategies and off for exhaustive; optimal ignores it */
    int timeout_set;
    int lanes;            /* random strategies: independent lanes, each with its own
                           * victory and timeout count (1..NM_MAX_LANES; default 128) */
    uint64_t max_perms;   /* hybrid: orders tried per factorization */
    int topk;             /* how many of the best to keep */
    int refine;           /* random strategies: iterated local search from the best
                           * found afterwards (default on) */
    int fill;             /* random strategies: every other draw fan-outs first
                           * (nm_mapspace_random_filled; default on).  `mapper:
                           * refine: false` and --no-refine turn both off: Timeloop's
                           * strategies as they are */
    /* Warm starts (a sweep's neighbouring points): mappings of the same
     * workload on another design of the same levels.  Each is made legal
     * for this mapspace (nm_search_legalize) and starts a chain of its own
     * after the cold chains, with their budget; the chains' results merge
     * after the cold ones, so the result is never worse than the same
     * search without them.  Needs refine; ignored by exhaustive and optimal. */
    const nm_mapping *warm;
    int nwarm;            /* at most NM_MAX_WARM are used */
    double effort;        /* random strategies: the budget scaled (1: the default; 0 is
                           * read as 1): the victory condition (the default's or the one
                           * set), the lanes when below 1 (down to 4), and the local
                           * search's evaluations */
    int imperfect;        /* nm_network_map: search residual factors too
                           * (nm_mapspace_enable_imperfect on each layer's space) */
    volatile sig_atomic_t *stop; /* set (e.g. by SIGINT) to end the search; may be NULL */
    void (*progress)(void *ctx, const nm_search_progress *p); /* after each round; may be NULL */
    void *progress_ctx;
} nm_search_opts;

/* The effort in force (0 is read as 1). */
static inline double nm_search_effort(const nm_search_opts *o)
{
    return o->effort > 0 ? o->effort : 1.0;
}

/* Sets the defaults (hybrid, edp, 1 thread, seed 0, 128 lanes, 16 orders per
 * factorization, top 10, the hill climb on). */
void nm_search_opts_init(nm_search_opts *o);

/* Parses a metric name ("energy", "delay", "edp", "ed2p",
 * "last_level_accesses"); returns -1 if unknown. */
int nm_metric_parse(const char *name);
const char *nm_metric_name(nm_metric m);
/* A metric's score from energy (pJ), cycles and last-level accesses. */
double nm_metric_value(nm_metric m, double energy, double cycles, double lla);
/* ... at a roofline's least energy, bound cycles and words (every tensor
 * once): no mapping scores below it. */
double nm_metric_roofline(nm_metric m, const nm_roofline *r);
/* Unit of a metric's score: pJ, cycles, pJ*cycles, ... */
const char *nm_metric_unit(nm_metric m);

/* Reads Timeloop's `mapper:` knobs into *o (a NULL node changes nothing). */
nm_status nm_search_opts_parse(nm_search_opts *o, const nm_ynode *mapper, nm_error *err);

typedef struct nm_found {
    nm_mapping map;
    double energy;   /* pJ */
    uint64_t cycles;
    uint64_t lla;
    double score[NM_MAX_METRICS];
    uint64_t index;  /* candidate number in merge order */
    uint64_t shape;  /* what each level keeps and spreads, hashed (search.c) */
} nm_found;

enum { NM_REJECT_CONSTRAINT = NM_INV_KINDS, NM_REJECT_KINDS };

typedef struct nm_search_result {
    int found;
    nm_found best;
    nm_stats best_stats;
    nm_found *pareto; /* energy x cycles, sorted by cycles; owned */
    int npareto;
    nm_found *top;    /* by the objective, best first; owned */
    int ntop;
    uint64_t proposed, evaluated, valid, pruned;
    uint64_t refined;        /* mappings the local search tried (o->refine; not in proposed) */
    uint64_t invalid[NM_REJECT_KINDS]; /* by nm_invalid_kind, plus NM_REJECT_CONSTRAINT */
    uint64_t invalid_at[NM_REJECT_KINDS][NM_MAX_LEVELS + 1]; /* ... by level (last: none) */
    double seconds;
    double evals_per_second; /* candidates evaluated per second per thread */
    int threads;
    int proven_optimal;
    double lower_bound;      /* optimal: no mapping of the space scores below this (first
                              * metric); the best when proven */
    double fill_cycles;      /* no mapping of the space runs fewer cycles: its temporal
                              * iterations at the best fill of the fan-outs the
                              * constraints allow (nm_mapspace_fill); 0 when unknown
                              * (residual factors, sparse optimizations) */
    uint64_t fill;           /* ... that best fill: arithmetic units busy at once (0: unknown) */
    nm_operand_bound operands; /* the operand floor of every mapping of the space on the
                              * first metric (nm_roofline_operand_bound; its fields
                              * INFINITY when unknown) */
    char stopped_by[128];     /* why the search ended */
} nm_search_result;

/* Where a later search of a design near this one may start (its warm
 * starts): r's best mapping, then the best of up to NM_WARM_STARTS - 1
 * other shapes among its top (nm_found.shape), into to; returns how many
 * (0 when r found none). */
int nm_search_result_starts(const nm_search_result *r, nm_mapping *to);

/* Searches ms for the best mapping.  Fills *res (release with
 * nm_search_result_fini); returns NM_ERR_INPUT for bad options, NM_ERR_NOMEM
 * on allocation failure.  A search that finds no valid mapping is not an
 * error: res->found is 0 and res->invalid says why candidates failed. */
nm_status nm_search_run(const nm_mapspace *ms, const nm_search_opts *o, nm_search_result *res,
                        nm_error *err);

void nm_search_result_fini(nm_search_result *res);

/* Makes m, a mapping of the same workload's dimensions on a design with
 * ms's levels (another point of a sweep), a valid mapping of ms when it can:
 * each dimension's factors cut to divide its bound here (its residuals
 * dropped, the outermost temporal loop taking what is left), then, while
 * the model finds it invalid, a tile over a level's capacity shrunk (a
 * prime factor of the loop nearest below moved to the temporal loops
 * above) and a fan-out used beyond its instances folded (a spatial prime
 * moved to the same level's temporal loop).  Returns 1 with m valid, 0 when
 * it cannot be (other levels, a broken constraint, another kind of
 * invalidity, or 64 repairs did not do). */
int nm_search_legalize(const nm_mapspace *ms, nm_model *mdl, nm_mapping *m);

/* ---- proven gaps ---- */

/* The roofline of wl on arch with its cycles raised to res->fill_cycles
 * where the constraints keep the fan-outs from filling. */
void nm_search_roofline(const nm_search_result *res, const nm_arch *arch, const nm_workload *wl,
                        nm_roofline *r);

/* A proven lower bound on o's first metric over every mapping of wl on
 * arch: the highest of nm_search_roofline's (the least energy, the cycles,
 * every tensor once at the outermost level), the operand floor
 * (res->operands) and the bound optimal proved (res->lower_bound).  A result's gap is its score
 * over this: at most that far from the optimum. */
double nm_search_lower_bound(const nm_search_opts *o, const nm_search_result *res,
                             const nm_arch *arch, const nm_workload *wl);

/* Lower bounds of layers run one after another (a network, a sweep point's
 * workloads), combined into a bound on the metric of their sums.  For
 * energy, delay and last-level accesses it is the sum of the layers'
 * bounds.  For EDP = E x C and ED2P = E x C^2 (E and C summed over the
 * layers) it is the larger of two: the product of the summed roofline
 * bounds of E and C, and (sum of repeat x bound^(1/k))^k with k = 2 or 3
 * (Cauchy-Schwarz and Hoelder: (sum E_i)(sum C_i) >= (sum sqrt(E_i C_i))^2),
 * which carries optimal's tighter per-layer bounds into the network's. */
typedef struct nm_bound_sum {
    nm_metric metric;
    double energy, cycles; /* summed roofline bounds */
    double root;           /* sum of repeat x bound^(1/k) */
} nm_bound_sum;

void nm_bound_sum_init(nm_bound_sum *s, nm_metric m);
/* Adds `repeat` runs of a layer whose roofline is *r and whose proven
 * bound (nm_search_lower_bound) is lower_bound. */
void nm_bound_sum_add(nm_bound_sum *s, double repeat, const nm_roofline *r, double lower_bound);
double nm_bound_sum_value(const nm_bound_sum *s);

/* Objective comparison: < 0 when a is better than b under the metrics. */
int nm_search_compare(const nm_search_opts *o, const nm_found *a, const nm_found *b);

/* The strategy descriptors (for listing). */
typedef struct nm_strategy nm_strategy;
const nm_strategy *nm_strategy_find(const char *name);
const char *nm_strategy_names(void); /* "exhaustive, random, ..." */

#endif
