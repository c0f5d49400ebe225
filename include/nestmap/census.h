/* census.h — the census of a constrained mapspace: every valid mapping
 * evaluated (or a uniform sample of them when the space is too large), with
 * what the Timeloop tutorial shows for its example layer: how many mappings
 * there are, how far apart their energies lie, how many are optimal or
 * within 1 %, and how many reach the least off-chip traffic and how far
 * apart those lie.
 *
 * Enumeration walks the outer points of the mapspace (factorization, split,
 * bypass) in order; each valid point's loop orders are cut into units of at
 * most NM_CENSUS_UNIT orders that worker threads take as they come, so a
 * point with half a million orders does not leave the other threads idle.
 * Every statistic is order-independent and every row is delivered in the
 * enumeration order, so the result does not depend on the thread count.
 *
 * Distinct schedules: the loop order at the innermost storage level (the
 * one next to the arithmetic) changes no count of the model, as in
 * Timeloop: the arithmetic reads every operand at every step, and the
 * level's tile, its fills and what it sends up do not depend on the order
 * of its own loops.  So the orders of one outer point that differ only
 * there are one schedule, counted once (`schedules`, `optimal_schedules`,
 * `near_schedules`); each row names the order that stands for its
 * schedule (`same_as`).  A sample counts mappings only.
 */
#ifndef NESTMAP_CENSUS_H
#define NESTMAP_CENSUS_H

#include <signal.h>
#include <stdint.h>

#include "nestmap/mapping.h"
#include "nestmap/mapspace.h"

#define NM_CENSUS_UNIT 8192
#define NM_CENSUS_BINS 2400   /* log10(energy) histogram bins ... */
#define NM_CENSUS_STEP 0.005  /* ... of this many decades each */
#define NM_CENSUS_NEAR 0.01   /* "within 1 %" */

/* One evaluated mapping: outer point o, order j (nm_mapspace_outer and
 * nm_mapspace_set_orders rebuild it), or sample number o (j = 0). */
typedef struct nm_census_row {
    uint64_t o, j;
    double energy;      /* pJ */
    uint64_t cycles;
    uint64_t dram;      /* accesses of the outermost level */
    uint64_t same_as;   /* the order standing for this one's schedule (j itself when it is
                         * that order; in a sample, j) */
} nm_census_row;

typedef struct nm_census_opts {
    int threads;
    int enumerate;      /* 1: every mapping; 0: `samples` uniform random ones */
    uint64_t samples;
    uint64_t seed;
    volatile sig_atomic_t *stop; /* set (Ctrl-C): end early, keep what was counted */
    /* Every valid row, in enumeration order, from one thread at a time (may
     * be NULL). */
    void (*row)(void *ctx, const nm_census_row *r);
    void *ctx;
    /* Progress: candidates done of about `total` (from the caller's size). */
    void (*progress)(void *ctx, uint64_t done);
} nm_census_opts;

typedef struct nm_census {
    int enumerated, stopped;
    uint64_t candidates;        /* mappings looked at (valid or not) */
    uint64_t valid;
    uint64_t broke_constraints; /* outer points (samples) that decoding could not fit to the
                                 * constraints: not mappings of the constrained space */
    uint64_t over_capacity;     /* mappings over a capacity or under a min_utilization */
    uint64_t over_fanout;       /* mappings asking more instances than there are */
    uint64_t other_invalid;     /* mappings invalid otherwise */
    double e_min, e_max;        /* pJ */
    uint64_t cy_min, cy_max;
    uint64_t n_optimal;         /* energy within 1e-9 of the least */
    uint64_t n_near;            /* within NM_CENSUS_NEAR of the least */
    uint64_t schedules;         /* valid mappings that are distinct schedules (enumerated) */
    uint64_t optimal_schedules, near_schedules;
    uint64_t dram_min, n_dram_min;
    double dram_min_e_lo, dram_min_e_hi; /* the energy spread of those */
    double log_lo;              /* hist[i]: log10(energy) in [log_lo + i*STEP, + STEP) */
    uint64_t hist[NM_CENSUS_BINS];
    nm_census_row best;         /* the least energy (the first in order on a tie) */
    double seconds;
    int threads;
} nm_census;

/* Runs the census of ms (its model from arch and wl).  Returns NM_ERR_NOMEM
 * or NM_ERR_INPUT (a space past 2^64 outer points) with *err, else NM_OK. */
nm_status nm_census_run(const nm_mapspace *ms, const nm_census_opts *o, nm_census *c,
                        nm_error *err);

#endif
