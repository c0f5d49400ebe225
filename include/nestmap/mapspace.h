/* mapspace.h — the space of mappings of a workload onto an architecture,
 * narrowed by constraints, as a product of sub-spaces:
 *
 *   factorization  every bound split into a temporal factor per level and a
 *                  spatial factor per fan-out (each prime's exponent spread
 *                  over the free slots: stars and bars)
 *   permutation    per level, the order of the loops left free
 *   split          per 2-D fan-out, which spatial loops run along X
 *   bypass         per level and data space left free, keep or bypass
 *
 * A point of each sub-space has an integer ID; nm_mapspace_decode turns a
 * point into an nm_mapping without allocating.  Constraints come in
 * Timeloop's form (architecture_constraints / mapspace_constraints /
 * constraints: a list of {target, type, factors, permutation, split, keep,
 * bypass}, and {target, type: utilization, min: fraction} for the share of a
 * level's spatial fan-out in use); a constraint that cannot be met is a
 * located error.
 */
#ifndef NESTMAP_MAPSPACE_H
#define NESTMAP_MAPSPACE_H

#include <stdint.h>

#include "nestmap/arch.h"
#include "nestmap/mapping.h"
#include "nestmap/pcg32.h"
#include "nestmap/workload.h"
#include "nestmap/yaml.h"

#define NM_MAX_SLOTS (2 * NM_MAX_LEVELS)
_Static_assert(NM_MAX_SLOTS <= 32, "nm_dim_space.bounded is a 32-bit slot mask");
#define NM_MAX_PRIMES 16
#define NM_MAX_PAD 64 /* imperfect factorization: how far a bound may be padded */

/* A factor slot: the temporal loop of a level or the spatial loop of its fan-out. */
typedef struct nm_slot {
    int8_t level;
    int8_t spatial;
} nm_slot;

typedef struct nm_dim_space {
    int64_t fixed[NM_MAX_SLOTS];   /* > 0: the slot's factor is fixed */
    int64_t lo[NM_MAX_SLOTS];      /* bounds from >= / <= constraints (1 and 0 = none) */
    int64_t hi[NM_MAX_SLOTS];
    const nm_ynode *at[NM_MAX_SLOTS]; /* constraint that set the slot, for errors */
    uint32_t bounded;              /* bit s: slot s has a fixed factor or bounds */
    int nfree;
    int8_t free[NM_MAX_SLOTS];     /* free slots, in slot order */
    int nprimes;
    int64_t prime[NM_MAX_PRIMES];
    int exp[NM_MAX_PRIMES];        /* of the bound left after the fixed factors */
    uint64_t count;                /* factorizations of this dimension (init refuses > 2^64) */
    /* With imperfect factorization (nm_mapspace_enable_imperfect): IDs from
     * `perfect` on are the perfect factorizations of the padded bounds
     * bound+1 .. bound+npad, each read as residuals (the last instance of a
     * loop runs only what is left); pad_cum[p] counts those up to bound+p. */
    uint64_t perfect;
    int npad;
    uint64_t pad_cum[NM_MAX_PAD + 1];
} nm_dim_space;

typedef struct nm_level_space {
    int nprefix;                   /* temporal order: these dims innermost, in order */
    int8_t prefix[NM_MAX_DIMS];
    int nfree;                     /* ... the other dims free in any order */
    int8_t free[NM_MAX_DIMS];
    int8_t sorder[NM_MAX_DIMS];    /* spatial order (constraint, or problem order) */
    int split;                     /* fixed split, or -1 when free */
    int fanout;                    /* 1: no spatial loops here */
    uint32_t keep, bypass;         /* data spaces fixed kept / bypassed */
    uint32_t no_link, no_multicast, no_temporal_reuse;
    double min_util;               /* least fraction of the fan-out in use (0: any) */
    const nm_ynode *at;            /* a constraint on this level, for errors */
    const nm_ynode *util_at;       /* the utilization constraint */
} nm_level_space;

typedef struct nm_mapspace {
    const nm_arch *arch;
    const nm_workload *wl;
    int nslots;
    nm_slot slot[NM_MAX_SLOTS];
    int8_t slot_at[NM_MAX_LEVELS][2]; /* the slot of level l's temporal [0] and spatial [1]
                                       * loop (-1: no fan-out there) */
    nm_dim_space dim[NM_MAX_DIMS];
    nm_level_space level[NM_MAX_LEVELS];
    int nbypass;                   /* free (level, data space) pairs */
    int8_t bypass_level[64], bypass_ds[64];
    /* log10 of each sub-space's size (the product may pass 2^64) */
    double log_factor, log_perm, log_split, log_bypass;
    int imperfect;                 /* residual factors in the space (template: ruby) */
} nm_mapspace;

/* One point: an ID per sub-space component. */
typedef struct nm_point {
    uint64_t fid[NM_MAX_DIMS];     /* factorization of each dimension */
    uint64_t pid[NM_MAX_LEVELS];   /* order of each level's free loops (Lehmer code) */
    uint8_t split[NM_MAX_LEVELS];  /* for free splits: how many spatial dims go to X */
    uint64_t bypass;               /* bit i: free pair i is kept */
} nm_point;

/* Prime factorization of n > 0: its distinct primes, ascending, in prime[]
 * and their exponents in exp[] (at most NM_MAX_PRIMES: more than any int64
 * has); returns how many. */
int nm_prime_factors(int64_t n, int64_t *prime, int *exp);

/* Builds the mapspace of wl on arch under the constraints in `constraints`
 * (a list, or a mapping with `targets:`; NULL for none), merged with
 * `more` (a second source, or NULL). */
nm_status nm_mapspace_init(nm_mapspace *ms, const nm_arch *arch, const nm_workload *wl,
                           const nm_ynode *constraints, const nm_ynode *more, nm_error *err);

/* The same for an operation of a fused group (fusion.h): the constraints
 * may bypass the data spaces in onchip (its intermediates) at the
 * outermost level, which otherwise keeps every data space. */
nm_status nm_mapspace_init_fused(nm_mapspace *ms, const nm_arch *arch, const nm_workload *wl,
                                 const nm_ynode *constraints, const nm_ynode *more,
                                 uint32_t onchip, nm_error *err);

/* Enlarges the factor space with residual factors (Timeloop's `ruby`
 * template): tiles need not divide the bound; the last tile along a
 * dimension is partial.  Every perfect factorization of bound+p (p = 1 ..
 * NM_MAX_PAD, less than the bound) becomes a point, read as the loops that
 * cover the bound with those tile sizes: the residuals are the digits of
 * bound-1 in the mixed radix of the factors, and the outermost loop runs
 * only the tiles needed.  Residuals may fall on spatial loops (fewer
 * siblings in the fan-out's last instance).  Fixed factors stay perfect: a
 * point that would put a residual on one decodes as breaking a constraint.
 * Call after nm_mapspace_init. */
nm_status nm_mapspace_enable_imperfect(nm_mapspace *ms, nm_error *err);

/* Writes the factors of dimension d for factorization id into f[slot] and,
 * when r is not NULL, the iterations of each slot's last instance into
 * r[slot] (equal to f without residuals).  Returns 0 when the residuals
 * break a rule (a fixed slot with a residual). */
int nm_mapspace_factors(const nm_mapspace *ms, int d, uint64_t id, int64_t *f, int64_t *r);

/* The factor (loop end) of dimension d in slot s of m. */
static inline int64_t *nm_mapspace_slot_factor(const nm_mapspace *ms, nm_mapping *m, int s, int d)
{
    nm_level_map *lm = &m->level[ms->slot[s].level];
    return ms->slot[s].spatial ? &lm->sfactor[d] : &lm->tfactor[d];
}

/* Whether factor f of dimension d in slot s breaks the slot's fixed factor
 * or its bounds (what nm_mapspace_check asks of each slot). */
static inline int nm_mapspace_slot_breaks(const nm_mapspace *ms, int s, int d, int64_t f)
{
    const nm_dim_space *ds = &ms->dim[d];
    return (ds->fixed[s] && f != ds->fixed[s]) || (ds->hi[s] && f > ds->hi[s]) || f < ds->lo[s];
}

/* Reads the temporal and spatial factors of m as loop ends and sets their
 * residuals by the same rule as decoding: the digits of bound-1
 * in the mixed radix of the ends, the outermost loop trimmed to the tiles
 * needed (a perfect factorization stays as it is).  Returns 0 when some
 * dimension's ends do not cover its bound, or when a fixed factor would
 * need a residual.  The mapper's moves in the enlarged space
 * change ends and call this. */
int nm_mapspace_fit_residuals(const nm_mapspace *ms, nm_mapping *m);

/* Decodes a point into a mapping.  Returns 0 (mapping still filled) when the
 * point breaks a constraint that decoding cannot enforce (a <= or >= bound,
 * a spatial product beyond a level's fan-out); *why names the slot then. */
int nm_mapspace_decode(const nm_mapspace *ms, const nm_point *pt, nm_mapping *m, int *why_dim,
                       int *why_level);

/* Draws a uniform random point (with residual factors enabled: a uniform
 * perfect point or, as often, a uniform point of the whole space). */
void nm_mapspace_random(const nm_mapspace *ms, nm_pcg32 *rng, nm_point *pt);

/* The same with perfect factors only: with residual factors enabled or
 * not, the draws of nm_mapspace_random without them. */
void nm_mapspace_random_perfect(const nm_mapspace *ms, nm_pcg32 *rng, nm_point *pt);

/* Draws a point whose factors fill the fan-outs first: each fan-out, in a
 * random order, takes on its spatial loop the fullest of a few random
 * greedy picks of the prime factors left (each axis of a 2-D fan-out, with
 * a free split after 1 .. ndims-1 dimensions, from the dimensions along
 * it); the primes left are spread uniformly over each dimension's free
 * temporal loops.  Orders and bypass are drawn as by nm_mapspace_random.
 * Perfect factors only; the point may still break a capacity or a
 * constraint that decoding checks. */
void nm_mapspace_random_filled(const nm_mapspace *ms, nm_pcg32 *rng, nm_point *pt);

/* Draws a uniform random order for each level (the other components kept). */
void nm_mapspace_random_perm(const nm_mapspace *ms, nm_pcg32 *rng, nm_point *pt);

/* Outer points: one factorization, free split and bypass choice each
 * (mixed radix), leaving loop orders open.  Their number, or 0 when it
 * passes 2^64. */
uint64_t nm_mapspace_outer_count(const nm_mapspace *ms);

/* Decodes outer point o into *m with natural orders.  Returns 1, 0 when it
 * breaks a constraint decoding cannot enforce, or -1 when it duplicates a
 * smaller point (a split that only moves loops of factor 1). */
int nm_mapspace_outer(const nm_mapspace *ms, uint64_t o, nm_mapping *m);

/* Distinct loop orders of m's factorization: the product over levels of k!
 * for the k free loops of factor above 1 (saturates at UINT64_MAX). */
uint64_t nm_mapspace_orders(const nm_mapspace *ms, const nm_mapping *m);

/* Sets the orders of m to the j-th of its distinct orders.  The outermost
 * level's order turns fastest, and within a level the outer loops, so that
 * consecutive j differ in their outermost loops: the nest analysis carries
 * over everything below them (nm_nest_ws_forget). */
void nm_mapspace_set_orders(const nm_mapspace *ms, nm_mapping *m, uint64_t j);

/* The same, for many j on one mapping: the free loops of each level are
 * found once, and each call sets again only the levels whose rank moved. */
typedef struct nm_order_cursor {
    int8_t dims[NM_MAX_LEVELS][NM_MAX_DIMS];
    int k[NM_MAX_LEVELS];
    uint64_t radix[NM_MAX_LEVELS], rank[NM_MAX_LEVELS]; /* rank: last set (UINT64_MAX: none) */
} nm_order_cursor;
void nm_order_cursor_init(nm_order_cursor *c, const nm_mapspace *ms, const nm_mapping *m);
void nm_order_cursor_set(nm_order_cursor *c, const nm_mapspace *ms, nm_mapping *m, uint64_t j);

/* Size of the space once duplicate orders and splits are removed: exact
 * (*exact = 1) when there are at most max_points outer points, else
 * estimated from max_points uniform samples.  Returns log10 of the size. */
double nm_mapspace_pruned_log10(const nm_mapspace *ms, uint64_t max_points, nm_pcg32 *rng,
                                int *exact);

/* The most arithmetic work any perfect mapping of ms does at once: the
 * largest product of spatial factors over every fan-out that the
 * factorizations and the constraints allow (fixed and bounded factors,
 * each fan-out's X and Y sides under its spatial order and split, its
 * least utilization), found by enumerating the spatial factor choices with
 * branch and bound.  A mapping then runs at least (product of the bounds)
 * / fill temporal iterations.  Returns 0 when it cannot say: residual
 * factors enabled, or more than `budget` choices to try. */
uint64_t nm_mapspace_fill(const nm_mapspace *ms, uint64_t budget);

/* Calls each(ctx, f) on every choice of spatial factors that
 * nm_mapspace_fill weighs (f[l][d]: dimension d's factor on level l's
 * fan-out, 1 where the level has none; the rest of each bound left to the
 * temporal loops).  Returns how many choices were tried, or 0 when they
 * number more than budget (each() then saw only some) or residual
 * factors are enabled (it saw none). */
uint64_t nm_mapspace_spatial_each(const nm_mapspace *ms, uint64_t budget,
                                  void (*each)(void *ctx, const int64_t f[][NM_MAX_DIMS]),
                                  void *ctx);

/* Checks a given mapping against the constraints; returns 1 if it meets
 * them, else 0 with a message naming the constraint (file:line:col);
 * with size 0 (why may be NULL) no message is written, as the search's
 * inner loop wants. */
int nm_mapspace_check(const nm_mapspace *ms, const nm_mapping *m, char *why, size_t size);

/* The same checks at the levels in mask `levels` only (bit l: level l):
 * every constraint is a level's, so a mapping that differs from one that
 * meets them only at those levels meets them where it meets these. */
int nm_mapspace_check_levels(const nm_mapspace *ms, const nm_mapping *m, uint32_t levels,
                             char *why, size_t size);

/* Number of orders of level l's loops that give different nests once loops
 * of factor 1 (which vanish) are ignored: k! for the k free loops with a
 * factor above 1 (fills perm[] with their dims). */
uint64_t nm_mapspace_pruned_orders(const nm_mapspace *ms, const nm_mapping *m, int l,
                                   int8_t *dims, int *k);

/* Sets level l's order to the free loops `dims` (k of them, a permutation
 * ranked `rank` among the k! orders) placed innermost after the prefix, the
 * other free dims (factor 1) outside. */
void nm_mapspace_set_order(const nm_mapspace *ms, nm_mapping *m, int l, const int8_t *dims, int k,
                           uint64_t rank);

#endif
