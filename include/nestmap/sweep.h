/* sweep.h — design-space sweeps: a design, the workloads to map on it, and
 * the attributes to vary, read from a `sweep:` key; the points they span;
 * each point's summary; the Pareto front over energy, delay and area.
 *
 *   sweep:
 *     design: arch/eyeriss/eyeriss.yaml          # paths relative to this file
 *     workloads: [workloads/networks/mobilenet_v1.yaml]   # networks or layers
 *     vary:
 *       - set: GlobalBuffer.depth
 *         values: {from: 4096, to: 262144, times: 2}   # or a list, or {from, to, step}
 *       - set: DRAM.type
 *         values: [LPDDR4, HBM2]
 *       - zip:              # linked: their i-th values go together
 *         - {set: PE.meshX, values: [8, 16, 32]}
 *         - {set: PE.meshY, values: [8, 16, 32]}
 *       - set: problem.N      # the workload: a dimension or shorthand key
 *         values: [1, 4, 16]
 *       - set: design         # whole designs or dataflows: files (then no design: above)
 *         values: [ws.yaml, rs.yaml]
 *     budget: {area_mm2: 2, power_w: 1}   # at most, any column of points.csv
 *     mode: grid            # or random, with samples: N and seed: S
 *     objective: edp        # what each point's search optimizes
 *
 * Each entry of `vary:` is one dimension of the grid (a zip's attributes
 * are one dimension, each still its own column).  Grid points are numbered
 * with the first dimension varying slowest.  A random
 * sweep draws `samples` distinct grid points (PCG32 from `seed`) and keeps
 * them in grid order.  Each point sets every axis (see override.h) and maps
 * every workload; the CLI runs it (cmd_sweep.c).
 */
#ifndef NESTMAP_SWEEP_H
#define NESTMAP_SWEEP_H

#include <stdint.h>

#include "nestmap/limits.h"
#include "nestmap/override.h"
#include "nestmap/search.h"
#include "nestmap/yaml.h"

#define NM_SWEEP_MAX_AXES 16
#define NM_SWEEP_MAX_VALUES 4096
#define NM_SWEEP_MAX_POINTS 10000000
#define NM_SWEEP_MAX_WORKLOADS 64
#define NM_SWEEP_PATH_MAX 4096

typedef struct nm_sweep_axis {
    char label[2 * NM_NAME_MAX];  /* COMPONENT.ATTRIBUTE, the CSV column */
    const nm_ynode *set;          /* the `set:` node */
    const nm_ynode *values_node;  /* the `values:` node */
    int nvalues;
    char (*value)[NM_OVERRIDE_VALUE_MAX]; /* as text, suffixes expanded; owned */
    const nm_ynode **at;          /* where each value was written; owned */
    int group;                    /* its dimension of the grid: axes of one zip share it
                                   * and are adjacent */
    char (*path)[NM_SWEEP_PATH_MAX]; /* `set: design`: each value's file, resolved as
                                      * `design:` is; NULL on the other axes; owned */
} nm_sweep_axis;

#define NM_SWEEP_MAX_BUDGETS 16

/* `budget: {COLUMN: MAX, ...}`: a point whose points.csv COLUMN is above
 * MAX is over budget (kept, marked, and off the Pareto front). */
typedef struct nm_sweep_budget {
    char column[2 * NM_NAME_MAX];
    double max;
    const nm_ynode *at;           /* the budget's key, for errors */
} nm_sweep_budget;

typedef struct nm_sweep {
    const nm_ynode *node;         /* the `sweep:` node */
    char design[NM_SWEEP_PATH_MAX]; /* `design:` ("" when an axis varies it) */
    int design_axis;              /* the axis `set: design`, or -1 */
    int nworkloads;
    char (*workload)[NM_SWEEP_PATH_MAX]; /* owned */
    const nm_ynode **workload_node;      /* owned */
    int naxes;                    /* varied attributes (the columns) */
    nm_sweep_axis axis[NM_SWEEP_MAX_AXES];
    int ngroups;                  /* dimensions of the grid (vary: entries) */
    int random;                   /* mode: random */
    uint64_t samples, seed;
    char objective[16];           /* a metric name (search.h), "edp" by default */
    int warm_block;               /* `warm:` consecutive points per warm-start block (1:
                                   * every point cold, the default of a random sweep,
                                   * whose consecutive points are unrelated; see
                                   * sweep_run.h) */
    double warm_first;            /* the budget of a block's first point (search.h's effort) */
    double warm_effort;           /* ... and of each later one, which also starts warm */
    int fuse;                     /* `fuse:` (default true): a chain of operations among the
                                   * workloads is searched fused as `map` searches it;
                                   * false: each operation alone */
    int fuse_networks;            /* `fuse: true` written: a network's runs of layers too,
                                   * as `network --fuse` fuses them */
    int nbudgets;
    nm_sweep_budget budget[NM_SWEEP_MAX_BUDGETS];
    uint64_t npoints;
    uint64_t *grid_index;         /* random: the grid index of each point; owned */
} nm_sweep;

#define NM_SWEEP_WARM_BLOCK 16     /* warm: the defaults */
#define NM_SWEEP_WARM_FIRST 1.0
#define NM_SWEEP_WARM_EFFORT 0.125

/* Parses `sweep:` (paths relative to the file it is written in).  Checks
 * the form of every entry: an empty range, `times` of 1 or less, a step of
 * 0 are located errors; whether a value fits the design is the caller's to
 * check (nm_sweep_override and a load). */
nm_status nm_sweep_parse(nm_sweep *sw, const nm_ynode *node, nm_error *err);
void nm_sweep_fini(nm_sweep *sw);

/* The value index on each axis of point p (idx has naxes entries; the
 * axes of a zip get the same index). */
void nm_sweep_point(const nm_sweep *sw, uint64_t p, int *idx);

/* Whether axis a is the first of its grid dimension (every axis but the
 * second and later attributes of a zip). */
int nm_sweep_axis_leads(const nm_sweep *sw, int a);

/* The design file of a point whose value indices are idx. */
const char *nm_sweep_design(const nm_sweep *sw, const int *idx);

/* The override that sets axis a to its v-th value (not the design axis). */
nm_status nm_sweep_override(const nm_sweep *sw, int a, int v, nm_override *ov, nm_error *err);

/* What a point came to. */
typedef enum nm_sweep_status {
    NM_SWEEP_OK,        /* every layer mapped */
    NM_SWEEP_UNMAPPED,  /* some layer has no valid mapping */
    NM_SWEEP_INVALID    /* the point's design cannot be built or constrained */
} nm_sweep_status;

/* Columns of energy per level in points.csv: the levels of every design
 * the sweep maps on, by name. */
#define NM_SWEEP_MAX_LEVEL_COLS (2 * (NM_MAX_LEVELS + 1))

typedef struct nm_sweep_summary {
    nm_sweep_status status;
    char reason[640];
    double energy_pj, cycles, seconds, area_um2, macs, busy, bound_cycles;
    /* By the sweep's level columns (nm_sweep_run's level[]): energy, and
     * whether the point's design has the level (else the column is blank). */
    double level_pj[NM_SWEEP_MAX_LEVEL_COLS];
    unsigned char level_on[NM_SWEEP_MAX_LEVEL_COLS];
    double workload_pj[NM_SWEEP_MAX_WORKLOADS], workload_cycles[NM_SWEEP_MAX_WORKLOADS];
    double dram_bytes;                 /* moved at the outermost level (the backing store) */
    /* Cycles by what bound them, as level_pj is ordered: a level's
     * bandwidth; [NM_SWEEP_MAX_LEVEL_COLS] the arithmetic when nothing
     * throttled. */
    double bound_by_cycles[NM_SWEEP_MAX_LEVEL_COLS + 1];
    double lla;                        /* last-level accesses (words) */
    nm_bound_sum bound;                /* the proven bound on the objective (its gap) */
} nm_sweep_summary;

const char *nm_sweep_status_name(nm_sweep_status s);

/* Marks on_front[i] for the points of s[0..n) on the Pareto front of
 * energy x seconds x area (all minimized; only points with status OK;
 * points with identical figures are all on it). */
void nm_sweep_pareto(const nm_sweep_summary *s, uint64_t n, unsigned char *on_front);

#endif
