/* sweep_cli.h — the pieces of `nestmap sweep`: running a point
 * (cmd_sweep.c), the files of a sweep directory (sweep_out.c), and the MPI
 * driver (sweep_mpi.c, with ./configure --with-mpi). */
#ifndef NESTMAP_SWEEP_CLI_H
#define NESTMAP_SWEEP_CLI_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>

#include "cli.h"
#include "nestmap/sweep.h"

/* Everything a point needs; read-only while points run. */
typedef struct sweep_run {
    nm_sweep sw;
    char **extra;          /* the files named on the command line, merged last */
    int nextra;
    nm_cli_search flags;   /* search options from the command line */
    char **opts;           /* the arguments that change results, as given (argv's) */
    int nopts;
    nm_cli_opts co;
    volatile sig_atomic_t *stop;
    const nm_ydoc *doc;    /* the sweep files, with their warnings */
    int nlevels;           /* storage levels + the arithmetic, outermost first */
    char level[NM_MAX_LEVELS + 1][NM_NAME_MAX];
    char wl_name[NM_SWEEP_MAX_WORKLOADS][NM_NAME_MAX]; /* per-point file names */
} sweep_run;

/* What one point produced: its row of points.csv and, per workload, the
 * per-layer CSV (NULL when the point's design could not be built). */
typedef struct point_out {
    uint64_t point;
    char *row;
    char *layers[NM_SWEEP_MAX_WORKLOADS];
} point_out;

/* Runs point p.  Returns 0 when done, 1 when stopped (Ctrl-C: nothing to
 * keep), 2 when out of memory. */
int sweep_point(const sweep_run *run, uint64_t p, point_out *out);
void sweep_point_free(point_out *out);

/* The columns of points.csv between the varied attributes and `status`:
 * the figures, energy per level, per workload (when several), over_budget. */
int sweep_figure_columns(const sweep_run *run);
/* Of those, the columns per workload (WORKLOAD.energy_uj, WORKLOAD.cycles)
 * just before over_budget: 2 a workload when the sweep maps several, else 0. */
int sweep_workload_columns(const sweep_run *run);
/* points.csv's header line (with its '\n'), heap. */
char *sweep_header(const sweep_run *run);

/* ---- the output directory (sweep_out.c) ---- */
typedef struct sweep_dir {
    const char *dir;
    FILE *points;          /* points.csv, open for appending */
    uint64_t done;         /* rows in points.csv: points 0 .. done-1 */
} sweep_dir;

/* Opens DIR for a new sweep (an error when it holds one, unless resume) or
 * to resume one (the inputs' fingerprint must match; a partial last row is
 * cut).  Returns 0 or the exit code after printing why. */
int sweep_dir_open(sweep_dir *d, const char *dir, int resume, uint64_t key, const char *header);
/* Writes a point's per-layer files, then appends its row, flushed and
 * synced.  Returns 0 after printing an error. */
int sweep_dir_add(sweep_dir *d, const sweep_run *run, const point_out *out);
/* Writes pareto.csv, sweep.json and plots/ from points.csv (so a resumed
 * sweep ends with the files of an uninterrupted one); renders the plots
 * when gnuplot is installed.  wall: this run's seconds, computed: points
 * run now.  Returns 0 after printing an error. */
int sweep_dir_finish(sweep_dir *d, const sweep_run *run, double wall, uint64_t computed,
                     int ranks);
void sweep_dir_close(sweep_dir *d);

/* Prints the points as a table on f (no -o). */
void sweep_print(FILE *f, const sweep_run *run, char *const *rows, uint64_t n);

#ifdef NESTMAP_MPI
/* Runs the points from `first` on over every rank, rank 0 writing through
 * d (NULL without -o: rows collected in rows[]).  Returns the exit code. */
int sweep_mpi_run(const sweep_run *run, sweep_dir *d, char **rows, uint64_t first, int tty);
#endif

#endif
