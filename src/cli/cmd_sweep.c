/* cmd_sweep.c — `nestmap sweep FILES...`: a design-space sweep.  The
 * command line's part: its options, Ctrl-C, and the MPI ranks; the run
 * itself (each point, the checks, the directory) is the library's
 * (sweep_run.h). */
#include <config.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "sweep_cli.h"
#include "nestmap/alloc.h"
#include "nestmap/sweep_run.h"

#ifdef NESTMAP_MPI
#include <mpi.h>
#endif

static const char usage[] =
    "usage: nestmap sweep [OPTIONS] SWEEP.yaml [FILES...]\n\n"
    "Maps every workload of the `sweep:` in the files (networks or layers) onto\n"
    "its design at every point of the attributes it varies, and reports each\n"
    "point's energy, cycles, seconds, EDP, area, energy per level and per MAC,\n"
    "and its distance from the roofline bound.  A point that cannot be mapped is\n"
    "recorded as such and the sweep goes on.  The files are merged after the\n"
    "design and each workload (a `mapper:` there sets the search).\n\n"
    "  sweep:\n"
    "    design: arch/eyeriss/eyeriss.yaml       # paths relative to the sweep file\n"
    "    workloads: [workloads/networks/mobilenet_v1.yaml]\n"
    "    vary:\n"
    "      - {set: GlobalBuffer.depth, values: {from: 4096, to: 262144, times: 2}}\n"
    "      - {set: DRAM.type, values: [LPDDR4, HBM2]}     # or {from, to, step}\n"
    "      - zip:                                # linked: the i-th values go together\n"
    "        - {set: PE.meshX, values: [8, 16, 32]}\n"
    "        - {set: PE.meshY, values: [8, 16, 32]}\n"
    "      - {set: problem.N, values: [1, 16]}   # the workload: a dimension or shorthand\n"
    "                                            # key of every layer (here the batch)\n"
    "      - {set: design, values: [ws.yaml, rs.yaml]}  # designs or dataflows (files;\n"
    "                                            # then no design: above)\n"
    "    budget: {area_mm2: 2, power_w: 1}       # at most (any column of points.csv):\n"
    "                                            # a point over it is marked, off the front\n"
    "    mode: grid                              # or random, with samples and seed\n"
    "    objective: edp                          # what each point's search optimizes\n"
    "    warm: {block: 16, first: 1, effort: 0.125}  # blocks of points: the first searched\n"
    "                                            # as map does, the others with 1/8 of the\n"
    "                                            # budget from the point before's best\n"
    "                                            # mappings (warm: false: all cold)\n\n"
    "options (each overrides `mapper:`):\n"
    NM_CLI_SET_USAGE
    "                    (--set holds at every point; vary: then sets each point's values)\n"
    NM_CLI_SEARCH_USAGE
    "  -o DIR            write DIR/points.csv (a row per point as it ends, synced),\n"
    "                    pareto.csv (energy x delay x area front), sweep.json,\n"
    "                    points/N/WORKLOAD.layers.csv and plots/ (gnuplot scripts and\n"
    "                    data, rendered to PNG and SVG when gnuplot is installed: one\n"
    "                    per varied attribute, pareto, and overview for two or more)\n"
    "  --resume          continue the sweep in DIR: points already in points.csv are\n"
    "                    not run again; the files end as an uninterrupted run's\n"
    "                    (sweep.json's \"run\" says what this run did)\n"
    "  --json            print sweep.json on stdout\n"
    "  --builtin-energy  ignore the input's ERT/ART\n"
    "  -q, --quiet       no warnings, no progress\n\n"
#ifdef NESTMAP_MPI
    "Under mpirun the points are spread over the ranks; rank 0 writes the\n"
    "files, the same as a single process writes.\n"
#endif
    "Ctrl-C stops after the points that have ended; --resume goes on from there.\n"
    "A point that cannot be mapped is a result (its row is blank with the reason;\n"
    "the closing summary counts them), not a failure of the sweep.\n"
    "exit status: 0 the sweep ran, 2 bad input, 130 stopped by Ctrl-C\n";

/* The arguments that change results, in order (not -o, --resume,
 * --threads, -q): the resume fingerprint and sweep.json's "options".
 * Pointers into argv, in a heap array (NULL when out of memory). */
static char **result_args(char *const *argv, int argc, int *n)
{
    char **out = nm_calloc((size_t)argc + 1, sizeof *out);
    *n = 0;
    for (int i = 1; out && i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "-o") || !strcmp(a, "--threads")) {
            i++;
            continue;
        }
        if (!strcmp(a, "--resume") || !strcmp(a, "-q") || !strcmp(a, "--quiet") ||
            !strncmp(a, "--output", 8) || !strncmp(a, "--threads=", 10))
            continue;
        out[(*n)++] = argv[i];
    }
    return out;
}

/* MPI: rank 0's first point to every rank (after it opened the directory). */
#ifdef NESTMAP_MPI
static int mpi_first(void *ctx, int ok, uint64_t *first)
{
    (void)ctx;
    unsigned long long f = *first;
    MPI_Bcast(&ok, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (!ok)
        return 0;
    MPI_Bcast(&f, 1, MPI_UNSIGNED_LONG_LONG, 0, MPI_COMM_WORLD);
    *first = f;
    return 1;
}

static int mpi_points(void *ctx, const nm_sweep_run *run, nm_sweep_dir *d, char **rows,
                      uint64_t first)
{
    (void)ctx;
    return sweep_mpi_run(run, d, rows, first, run->progress && !run->quiet);
}
#endif

static int sweep_main(int argc, char **argv, int rank, int ranks)
{
    /* The options as given, for the resume fingerprint (parsing takes
     * them out of argv). */
    char **orig = nm_calloc((size_t)argc + 1, sizeof *orig);
    nm_sweep_run *run = orig ? nm_calloc(1, sizeof *run) : NULL;
    char **args = NULL;
    if (orig)
        memcpy(orig, argv, (size_t)argc * sizeof *orig);
    if (run && !(args = result_args(orig, argc, &run->nargs))) {
        nm_free(run);
        run = NULL;
    }
    if (!run) {
        nm_free(orig);
        fprintf(stderr, "nestmap: out of memory\n");
        return 2;
    }
    run->args = args;
    run->diag = stderr;
    run->out = stdout;
    int resume = nm_cli_take_flag(&argc, argv, "--resume");
    int rc = 2;
    nm_cli_search flags;
    nm_cli_opts co;
    if (!nm_cli_search_take(&argc, argv, &flags)) {
        fprintf(stderr, "nestmap sweep: an option is missing its value\n\n%s", usage);
        goto out;
    }
    int done;
    rc = nm_cli_parse(argc, argv, "sweep", usage, NM_OPT_SEARCH, &co, &done);
    if (done)
        goto out;
    rc = 2;
    if (resume && !co.outdir) {
        fprintf(stderr, "nestmap sweep: --resume needs -o DIR (the sweep to continue)\n");
        goto out;
    }
    /* What the command line gives, for every point. */
    run->extra = (const char *const *)co.files;
    run->nextra = co.nfiles;
    run->sets = co.sets;
    run->nsets = co.nsets;
    run->vars = co.vars;
    run->nvars = co.nvars;
    run->builtin_energy = co.builtin_energy;
    run->threads = co.threads;
    run->quiet = co.quiet;
    run->json = co.json;
    run->progress = rank == 0 && isatty(STDERR_FILENO);
    nm_cli_search_names(&flags, &co, run->opt_name, run->opt_value, &run->nopt);
    /* The sweep files: `sweep:` and whatever else they hold. */
    nm_ydoc doc;
    nm_ydoc_init(&doc);
    if ((rc = nm_sweep_run_load(run, &doc, (const char *const *)co.files, co.nfiles)) != 0 ||
        (rc = nm_sweep_run_check(run)) != 0)
        goto fini;
    run->stop = nm_cli_catch_sigint();
    nm_sweep_spread spread = {rank, ranks, NULL, NULL, NULL};
#ifdef NESTMAP_MPI
    spread.first_shared = mpi_first;
    spread.points = mpi_points;
#endif
    rc = nm_sweep_execute(run, co.outdir, resume, &spread);
    nm_cli_release_sigint();
fini:
    nm_sweep_fini(&run->sw);
    nm_ydoc_fini(&doc);
out:
    nm_free(args);
    nm_free(run);
    nm_free(orig);
    return rc;
}

int nm_cmd_sweep(int argc, char **argv)
{
#ifdef NESTMAP_MPI
    int rank, ranks;
    MPI_Init(NULL, NULL);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &ranks);
    /* Only rank 0 speaks: the others would say the same. */
    if (rank != 0 && !freopen("/dev/null", "w", stderr))
        return 2;
    int rc = sweep_main(argc, argv, rank, ranks);
    MPI_Finalize();
    return rc;
#else
    return sweep_main(argc, argv, 0, 1);
#endif
}
