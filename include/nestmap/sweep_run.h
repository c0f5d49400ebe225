/* sweep_run.h — running a design-space sweep (sweep.h gives its points):
 * each point's workloads mapped and summed into a row of points.csv, and
 * the files of a sweep directory (points.csv synced row by row, the resume
 * fingerprint, and at the end pareto.csv, sweep.json and the gnuplot plots,
 * all made from points.csv so that a resumed sweep ends as an uninterrupted
 * one does).  `nestmap sweep` (one process or MPI ranks) and the Python
 * module run sweeps with it.
 *
 * A run speaks as the command line does: its messages (errors with their
 * source line, warnings, progress) go to the run's `diag` stream and its
 * summary, table or sweep.json to `out`; the functions that can fail
 * return an exit code (0; 1 never; 2 bad input or a write failed; 130
 * stopped), having said why on `diag`.
 */
#ifndef NESTMAP_SWEEP_RUN_H
#define NESTMAP_SWEEP_RUN_H

#include <signal.h>
#include <stdint.h>
#include <stdio.h>

#include "nestmap/mapping.h"
#include "nestmap/override.h"
#include "nestmap/sweep.h"
#include "nestmap/template.h"

#define NM_SWEEP_MAX_OPTS 64  /* search options */
#define NM_SWEEP_MAX_SETS 64  /* --set overrides */
#define NM_SWEEP_MAX_EXTRA 64 /* files merged after the design and each workload */

/* Everything a point needs; read-only while points run. */
typedef struct nm_sweep_run {
    nm_sweep sw;
    const char *const *extra;  /* files merged after the design and each workload */
    int nextra;
    const nm_override *sets;   /* --set, before each point's values */
    int nsets;
    const nm_tmpl_var *vars;   /* --jinja */
    int nvars;
    /* The search options over each design's `mapper:` and the sweep's
     * objective, by their command-line names (job.h's nm_job_search_option). */
    const char *opt_name[NM_SWEEP_MAX_OPTS];
    const char *opt_value[NM_SWEEP_MAX_OPTS];
    int nopt;
    int builtin_energy;
    int threads;               /* layers at once (0: the search's default) */
    int quiet;                 /* no warnings, no progress */
    int progress;              /* a progress line on diag (a terminal) */
    int json;                  /* at the end, sweep.json on out instead of the summary */
    /* The arguments that change results, as the command line gives them:
     * the resume fingerprint and sweep.json's "options". */
    char *const *args;
    int nargs;
    volatile sig_atomic_t *stop; /* set to stop after the points running (may be NULL) */
    const nm_ydoc *doc;        /* the sweep files, with their warnings */
    FILE *diag, *out;
    /* The columns of energy per level: every design's storage levels,
     * outermost first, then their arithmetic (level_arith set), each name
     * once, in the order the designs list them (nm_sweep_run_check). */
    int nlevels;
    char level[NM_SWEEP_MAX_LEVEL_COLS][NM_NAME_MAX];
    unsigned char level_arith[NM_SWEEP_MAX_LEVEL_COLS];
    char wl_name[NM_SWEEP_MAX_WORKLOADS][NM_NAME_MAX]; /* per-point file names */
} nm_sweep_run;

/* Loads the sweep files into doc (initialized by the caller, released by
 * it after the run) and reads their `sweep:` into run->sw, naming each
 * workload's files.  Returns an exit code. */
int nm_sweep_run_load(nm_sweep_run *run, nm_ydoc *doc, const char *const *files, int nfiles);

/* Before anything runs: every workload loads as the sweep leaves it and
 * with each varied value (a value the design or its constraints cannot
 * take is an error located at the value), and every budget names a column.
 * Sets the level columns.  Returns an exit code. */
int nm_sweep_run_check(nm_sweep_run *run);

/* The fingerprint of what decides the results: the sweep, the files, the
 * arguments.  A resumed sweep must have the same. */
uint64_t nm_sweep_run_key(const nm_sweep_run *run);

/* What one point produced: its row of points.csv and, per workload, the
 * per-layer CSV (NULL when the point's design could not be built). */
typedef struct nm_sweep_point_out {
    uint64_t point;
    char *row;
    char *layers[NM_SWEEP_MAX_WORKLOADS];
    /* Each layer of each workload: its best mapping (nm_network_best_mappings;
     * NULL when none was searched), the next point's warm starts. */
    nm_mapping *best[NM_SWEEP_MAX_WORKLOADS];
    /* Each chain workload's single-operation searches and what they found
     * (fusion.h's seeds; NULL for the others): the next point's warm
     * starts. */
    struct nm_fused_seed *seeds[NM_SWEEP_MAX_WORKLOADS];
    int nseeds[NM_SWEEP_MAX_WORKLOADS];
    int ran;   /* point ran to its end (set where nm_sweep_run_next keeps it) */
} nm_sweep_point_out;

/* Runs point p, its searches starting warm from the best mappings of
 * `warm` (the point before it in its block; NULL: none).  Returns 0 when
 * done, 1 when stopped (nothing to keep), 2 when out of memory. */
int nm_sweep_run_point(const nm_sweep_run *run, uint64_t p, const nm_sweep_point_out *warm,
                       nm_sweep_point_out *out);

/* Warm starts: the points are cut into blocks of about run->sw.warm_block
 * consecutive points (1: every point searched cold with the default
 * budget, as `map` searches).  A block's first point searches cold with
 * warm_first of the default budget (search.h's effort), each later one
 * with warm_effort of it, its searches also starting from the best
 * mappings of each layer of the point before it (the best and the best of
 * two other shapes: nm_network_best_mappings), made legal for its design.
 * A chain's point does the same: each of its single-operation searches
 * that the point before ran too (the same operation, share and pinned
 * shared loops: nm_fused_seed) also starts from what that one found.
 * So a point's result is never worse than a cold search of its budget, and
 * it depends on the sweep file alone: blocks are the ranks' unit of work,
 * and a resumed sweep reruns its block's points before the first it
 * lacks.  The first and the end of p's block: */
uint64_t nm_sweep_block_first(const nm_sweep_run *run, uint64_t p);
uint64_t nm_sweep_block_end(const nm_sweep_run *run, uint64_t p);

/* Runs point p as its block has it into *out: cold when p is its block's
 * first, else warm from *prev when that holds point p - 1 (a run in
 * order), after rerunning the block's points before p otherwise (a resumed
 * sweep, a rank's next block).  On success *prev holds p's best mappings
 * (and row) for the next call; the caller releases it at the end.  Returns
 * nm_sweep_run_point's code. */
int nm_sweep_run_next(const nm_sweep_run *run, uint64_t p, nm_sweep_point_out *prev,
                      nm_sweep_point_out *out);

void nm_sweep_point_out_free(nm_sweep_point_out *out);

/* The columns of points.csv between the varied attributes and `status`:
 * the figures, energy per level, per workload (when several), over_budget. */
int nm_sweep_figure_columns(const nm_sweep_run *run);
/* Of those, the columns per workload (WORKLOAD.energy_uj, WORKLOAD.cycles)
 * just before over_budget: 2 a workload when the sweep maps several, else 0. */
int nm_sweep_workload_columns(const nm_sweep_run *run);
/* points.csv's header line (with its '\n'), heap. */
char *nm_sweep_header(const nm_sweep_run *run);

/* ---- the output directory ---- */
typedef struct nm_sweep_dir {
    const char *dir;
    FILE *points;          /* points.csv, open for appending */
    uint64_t done;         /* rows in points.csv: points 0 .. done-1 */
} nm_sweep_dir;

/* Opens DIR for a new sweep (an error when it holds one, unless resume) or
 * to resume one (the inputs' fingerprint must match; a partial last row is
 * cut).  Returns an exit code. */
int nm_sweep_dir_open(nm_sweep_dir *d, const nm_sweep_run *run, const char *dir, int resume,
                      const char *header);
/* Writes a point's per-layer files, then appends its row, flushed and
 * synced.  Returns 0 after saying why it could not. */
int nm_sweep_dir_add(nm_sweep_dir *d, const nm_sweep_run *run, const nm_sweep_point_out *out);
/* Writes pareto.csv, sweep.json and plots/ from points.csv (so a resumed
 * sweep ends with the files of an uninterrupted one), renders the plots
 * when gnuplot is installed, and prints the summary (or sweep.json) on
 * run->out.  wall: this run's seconds, computed: points run now.  Returns 0
 * after saying why it could not. */
int nm_sweep_dir_finish(nm_sweep_dir *d, const nm_sweep_run *run, double wall,
                        uint64_t computed, int ranks);
void nm_sweep_dir_close(nm_sweep_dir *d);

/* Prints the points (rows[0..n) of points.csv) as a table with the
 * summary on f (a sweep without a directory). */
void nm_sweep_print(FILE *f, const nm_sweep_run *run, char *const *rows, uint64_t n);

/* ---- the whole sweep ---- */

/* How points are spread: one process runs them in order unless `points`
 * is given (MPI ranks).  `first_shared` tells every process the first point
 * to run (rank 0's, after it opened the directory; ok 0 when it could not)
 * and returns 0 to stop. */
typedef struct nm_sweep_spread {
    int rank, ranks;
    int (*first_shared)(void *ctx, int ok, uint64_t *first);
    int (*points)(void *ctx, const nm_sweep_run *run, nm_sweep_dir *d, char **rows,
                  uint64_t first);
    void *ctx;
} nm_sweep_spread;

/* Runs the checked sweep: into directory `outdir` (NULL: the table on
 * run->out; with run->json a temporary directory stands in), resuming it
 * when asked.  spread may be NULL (one process).  Returns an exit code. */
int nm_sweep_execute(nm_sweep_run *run, const char *outdir, int resume,
                     const nm_sweep_spread *spread);

#endif
