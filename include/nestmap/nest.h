/* nest.h — the loop nest of a mapping and its data-movement analysis.
 *
 * The nest lists loops innermost first.  Each storage level owns, from the
 * inside out, its spatial loops (the fan-out to its children, X before Y) and
 * then its temporal loops; the level's outermost loop is its tiling boundary.
 * Loops with a factor of 1 are left out (a level without temporal loops gets
 * one trivial loop so that it still has a boundary).
 *
 *     loop index:  0 ..................................... nloops-1
 *                  [L0 spatial][L0 temporal][L1 spatial][L1 temporal] ...
 *                                         ^boundary[0]             ^boundary[1]
 *
 * The analysis follows the conventions of Timeloop's reference model so that
 * its counts agree: a level's fills are the sum of the changes of its child's
 * working set as the parent's loops step, where the part still held from the
 * previous step is kept only while the tile keeps moving by the same stride
 * (or stands still); a loop of n iterations is evaluated at its first step and
 * at one steady-state step weighted by n-1; spatial siblings see translated
 * copies of the first sibling's data, so data wanted by several siblings at
 * once is read once (multicast) and data a neighbour held one step before may
 * come over a link instead.  Nothing is allocated per evaluation: state lives
 * in a caller-owned workspace.
 */
#ifndef NESTMAP_NEST_H
#define NESTMAP_NEST_H

#include <stdint.h>

#include "nestmap/arch.h"
#include "nestmap/limits.h"
#include "nestmap/mapping.h"
#include "nestmap/workload.h"

enum { NM_TIME = 0, NM_SPACE_X = 1, NM_SPACE_Y = 2 };

typedef struct nm_loop {
    int64_t end;    /* trip count (> 1, except a level's placeholder loop) */
    int64_t residual; /* trip count of the last instance: when every outer loop of
                       * the same dimension is on its last iteration (== end: perfect) */
    int8_t dim;     /* problem dimension */
    int8_t space;   /* NM_TIME, NM_SPACE_X or NM_SPACE_Y */
    int8_t level;   /* storage level that owns the loop */
} nm_loop;

typedef struct nm_nest {
    int nloops;
    nm_loop loop[NM_MAX_LOOPS];     /* innermost first */
    int nlevels;
    int boundary[NM_MAX_LEVELS];    /* index of each storage level's outermost loop */
    int first[NM_MAX_LEVELS];       /* index of each storage level's innermost loop */
    int imperfect;                  /* some loop has residual != end */
    int uneven;                     /* ... a spatial one: instances below it do unequal work */
} nm_nest;

/* Builds the nest of mapping m.  Never fails: caps are checked at parse time. */
void nm_nest_build(nm_nest *nest, const nm_mapping *m, const nm_arch *arch, const nm_workload *wl);

/* What the analysis reports for one storage level and one data space, before
 * bypass is applied: the tile held per instance and the accesses it receives
 * from the level below. */
typedef struct nm_tile {
    uint64_t size;        /* working set at the level's boundary (words) */
    double accesses;      /* accesses from below, per instance: a multicast counts once
                           * (a level without fan-out whose child bypasses the data
                           * space: the child's, which is what it serves once the
                           * bypass is applied; its own tile's deltas are not summed) */
    double weighted;      /* the same, each multicast counted once per receiver */
    double link;          /* transfers served by neighbour links below this level */
    uint64_t fanout;      /* spatial fan-out below this level (1: none) */
    uint64_t inner_size;  /* working set over the whole fan-out (when fanout > 1) */
} nm_tile;

/* How one call's delta reaches a fan-out's siblings, as Timeloop's nest
 * analysis records it (nest-analysis.cpp, ComputeAccurateMulticastedAccesses):
 * siblings that need the same data form a multicast group; per group size m,
 * s groups (the scatter) whose hops from the array's edge sum to hops.  A
 * group's hops: entry at the left edge, half-way up the Y axis; the farthest
 * receiver along X, plus each column's vertical reach above and below the
 * centre.  Siblings sit on the mesh row by row, innermost spatial loop
 * fastest.  n < 0: more group sizes than NM_NOC_BUCKETS (not kept). */
#define NM_NOC_BUCKETS 8
typedef struct nm_noc_sig {
    int n;
    struct nm_noc_bucket {
        uint64_t m, s;
        double hops;  /* summed over the groups */
        double uhops; /* the same, each receiver reached alone (its own hops) */
    } b[NM_NOC_BUCKETS];
} nm_noc_sig;

/* For the on-chip network below a level (noc.h), when the workspace counts
 * it (nm_nest_ws_noc; left as they are otherwise): the delta sizes summed
 * over the calls of each multicast signature (slot 0: the whole fan-out's;
 * 1..: those of calls where links served some siblings, nm_nest_noc_sig);
 * and, over all calls, the delta size times the hops of its multicast
 * groups (hop) and times the routers its buckets pass past the first (rt).
 * Apart from nm_tile, so that an analysis without networks touches none of
 * it. */
#define NM_NOC_SLOTS 4 /* multicast signatures a level's calls may have, kept apart */
typedef struct nm_tile_noc {
    double sz[NM_NOC_SLOTS];
    double hop, rt;
} nm_tile_noc;

typedef struct nm_nest_result {
    nm_tile tile[NM_MAX_LEVELS][NM_MAX_DS];
    uint64_t replication[NM_MAX_LEVELS]; /* spatial instances of each level in use */
    uint64_t xexp[NM_MAX_LEVELS], yexp[NM_MAX_LEVELS]; /* ... along X and Y */
    uint64_t temporal_steps;             /* compute steps per arithmetic instance, counting
                                          * partial tiles as full ones (cycles) */
    uint64_t steps;                      /* compute steps each instance in use runs: the
                                          * same, less the steps partial tiles leave out
                                          * (uneven: the mean, rounded down) */
    uint64_t computes;                   /* the layer's operations: steps x instances in
                                          * use, the product of the bounds */
    int uneven;                          /* the nest's: counts below a spatial residual
                                          * are means over the instances */
    double used[NM_MAX_LEVELS];          /* share of each level's fan-out that ever
                                          * receives (< 1: residuals that always apply;
                                          * set when uneven) */
    uint64_t arith_x, arith_y;           /* arithmetic instances in use along X and Y */
    /* last, so that clearing the rest leaves it be (networks only) */
    nm_tile_noc noc[NM_MAX_LEVELS][NM_MAX_DS];
} nm_nest_result;

typedef struct nm_nest_ws nm_nest_ws;

/* Creates a workspace for evaluating mappings of wl on arch (scratch sized by
 * the largest fan-out); NULL when out of memory.  One per thread.  Free with
 * nm_nest_ws_free. */
nm_nest_ws *nm_nest_ws_new(const nm_arch *arch, const nm_workload *wl);
void nm_nest_ws_free(nm_nest_ws *ws);

/* Spatial residuals ("P=16,8" spatial: 8 of the 16 siblings in the fan-out's
 * last instance) make the instances below them unequal: those past the
 * residual sit idle through every call in which the loops of that
 * dimension above the fan-out are all on their last iteration, and then
 * neither receive nor ask for anything.  Each storage level's counts are
 * then the mean over its instances: the walk runs once per class of
 * instances (idle or not in each such region), weighted by the share of
 * instances in the class, and the fan-out itself delivers to, multicasts
 * among and links between the siblings in use only.  Counted that way,
 * computes are the layer's MACs and totals (mean x instances) are exact.
 *
 * Imperfect nests are analysed by walking Timeloop's schedule call by call;
 * perfect ones by a memoized recursion over the same calls.  With on != 0
 * the walk serves perfect nests too: the tests compare the two. */
void nm_nest_ws_walk(nm_nest_ws *ws, int on);

/* Timeloop's rule for keeping the previous tile as it stood before January
 * 2025 (its commit a12fff5, "Translation fix"): the tile's overlap with the
 * previous one is kept while it moves by the same stride, and a zero move
 * (standing still) counted as a stride of its own, so that moving on after
 * standing still, or standing still after moving, fetched the whole tile.
 * Since then a zero move keeps the tile and leaves the stride as it was
 * (the default).  Reference outputs written before 2025 (the public
 * exercises') follow the old rule. */
void nm_nest_ws_stride_rule(nm_nest_ws *ws, int before_2025);

/* Counts what the on-chip networks need (nm_nest_result's noc, and
 * the multicast signatures) when on; off by default, as it costs time.
 * Returns 0 when out of memory
 * (then it stays off). */
int nm_nest_ws_noc(nm_nest_ws *ws, int on);

/* The multicast signature of level s's fan-out for data space ds in the
 * last analysis, slot 0 the whole fan-out's, slots 1.. those of calls
 * where links served some siblings (a signature per shape of links, in the
 * order first met).  NULL when the level has no fan-out or the slot is
 * unused, or when some calls had a signature no slot holds (spatial
 * residuals; more shapes of links than slots): then only the tile's hop
 * and rt sums hold (nm_nest_noc_mixed). */
const nm_noc_sig *nm_nest_noc_sig(const nm_nest_ws *ws, int s, int ds, int slot);
int nm_nest_noc_mixed(const nm_nest_ws *ws, int s, int ds);

/* A workspace keeps, between analyses, what depends only on the loops
 * below the first one that changed (see nest.c, struct seq), so a run of
 * mappings that differ in their outer loops costs less than the same
 * mappings apart.  Forgetting makes the next analysis start cold (the
 * benchmark of one evaluation uses it); results never depend on it. */
void nm_nest_ws_forget(nm_nest_ws *ws);

/* Spatial extent and working-set sizes that need no analysis: fills
 * replication, xexp, yexp, temporal_steps, arith_x, arith_y, and every
 * tile's size.  Cheap; used to reject invalid mappings early. */
void nm_nest_shape(const nm_nest *nest, const nm_workload *wl, nm_nest_result *out);

/* Runs the data-movement analysis; requires nm_nest_shape(out) first and a
 * nest whose fan-outs fit the architecture (the workspace is sized by it). */
void nm_nest_analyze(nm_nest_ws *ws, const nm_nest *nest, const nm_mapping *m,
                     const nm_arch *arch, const nm_workload *wl, nm_nest_result *out);

/* The same for level s alone (the tiles of the others are left as they
 * are; those of the levels inside s must be filled when s's child bypasses
 * a data space).  The next analysis starts cold. */
void nm_nest_analyze_level(nm_nest_ws *ws, const nm_nest *nest, const nm_mapping *m,
                           const nm_arch *arch, const nm_workload *wl, int s,
                           nm_nest_result *out);

/* Fills the tiles' accesses, weighted accesses and link transfers with
 * floors that hold for every loop order of a perfect nest (same factors,
 * fan-outs and switches; any temporal order): each sequence of calls
 * delivers at least the union of the child's tiles over the run.  The cost
 * model is monotone in them, so nm_model_bound turns them into lower bounds.
 * Same requirements as nm_nest_analyze; the next analysis starts cold. */
void nm_nest_floor(nm_nest_ws *ws, const nm_nest *nest, const nm_mapping *m,
                   const nm_arch *arch, const nm_workload *wl, nm_nest_result *out);

#endif
