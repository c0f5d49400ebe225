/* cmd_census.c — `nestmap census FILES...`: every valid mapping of the
 * constrained mapspace evaluated (or a sample when the space is large),
 * summarized as the Timeloop tutorial summarizes its example layer: the
 * count, the spread of energy, how many mappings are optimal or within 1 %,
 * how many reach the least off-chip traffic and their spread; a histogram;
 * with -o, a CSV of every mapping and a gnuplot scatter and histogram. */
#include <config.h>

#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "nestmap/plot.h"
#include "nestmap/alloc.h"
#include "nestmap/census.h"
#include "nestmap/mapspace.h"
#include "nestmap/report.h"
#include "nestmap/spec.h"

static const char usage[] =
    "usage: nestmap census [OPTIONS] FILES...\n\n"
    "Evaluates every valid mapping of the constrained mapspace (architecture,\n"
    "problem, constraints) and reports how many there are, how far apart their\n"
    "energies lie, how many are optimal or within 1 % of it, how many reach the\n"
    "least off-chip (outermost level) traffic and how far apart those lie, and a\n"
    "histogram of energy.  A space of more than 2,000,000 mappings is sampled\n"
    "(uniformly, --sample of them) unless --all is given.\n\n"
    "options:\n"
    "  --all             enumerate every mapping however many there are\n"
    "  --sample N        the sample's size when the space is sampled (100000)\n"
    "  --threads N       worker threads; the census does not depend on N\n"
    "  --seed S          the sample's seed (default 0)\n"
    NM_CLI_SET_USAGE
    "  -o DIR            write census.json, mappings.csv (every mapping evaluated:\n"
    "                    outer point, order, energy, cycles, outermost accesses; up\n"
    "                    to 20,000,000 rows), and census.gp with census.dat: energy\n"
    "                    against off-chip accesses and the histogram, rendered to\n"
    "                    census.png and census.svg when gnuplot is installed\n"
    "  --json            print the census as JSON\n"
    "  --builtin-energy  ignore the input's ERT/ART: estimate every energy and area\n"
    "                    from the component classes (see nestmap energy)\n"
    "  -q, --quiet       no warnings, no progress\n\n"
    "Ctrl-C ends the census early and reports what it counted.\n";

#define ENUMERATE_MAX 2000000.0
#define CSV_MAX UINT64_C(20000000)
#define PLOT_POINTS 8000.0 /* points of the scatter: its SVG stays under 1 MB */

/* What the rows go to: the CSV and the plot's sample. */
typedef struct rows_out {
    FILE *csv;
    uint64_t csv_rows;
    FILE *dat;
    uint64_t stride;    /* one row in `stride` goes to the plot */
    uint64_t seen;
} rows_out;

static void row(void *ctx, const nm_census_row *r)
{
    rows_out *w = ctx;
    if (w->csv && w->csv_rows < CSV_MAX) {
        fprintf(w->csv, "%llu,%llu,%.17g,%llu,%llu,%llu\n", (unsigned long long)r->o,
                (unsigned long long)r->j, r->energy, (unsigned long long)r->cycles,
                (unsigned long long)r->dram, (unsigned long long)r->same_as);
        w->csv_rows++;
    }
    if (w->dat && r->same_as == r->j && w->seen++ % w->stride == 0) /* one per schedule */
        fprintf(w->dat, "%.9g\t%llu\t%llu\n", r->energy, (unsigned long long)r->dram,
                (unsigned long long)r->cycles);
}

static void progress(void *ctx, uint64_t done)
{
    (void)ctx;
    static double last;
    double t = nm_cli_wall();
    if (t - last < 0.5)
        return;
    last = t;
    fprintf(stderr, "\r%llu mappings\033[K", (unsigned long long)done);
    fflush(stderr);
}

/* The histogram rebinned by energy / least energy: `nb` bins spaced evenly
 * in log from 1 to the spread (a single bin when there is none). */
static int rebin(const nm_census *c, uint64_t *out, double *edge, int nb)
{
    double lo = log10(c->e_min), hi = log10(c->e_max);
    if (hi - lo < 1e-12)
        nb = 1;
    memset(out, 0, (size_t)nb * sizeof *out);
    for (int i = 0; i <= nb; i++)
        edge[i] = pow(10.0, (hi - lo) * i / nb);
    for (int b = 0; b < NM_CENSUS_BINS; b++) {
        if (!c->hist[b])
            continue;
        double mid = c->log_lo + (b + 0.5) * NM_CENSUS_STEP;
        int k = nb == 1 ? 0 : (int)floor((mid - lo) / (hi - lo) * nb);
        k = k < 0 ? 0 : k >= nb ? nb - 1 : k;
        out[k] += c->hist[b];
    }
    return nb;
}

static void print_text(const nm_census *c, const nm_spec *spec, double log_size, int exact,
                       uint64_t samples, uint64_t seed)
{
    printf("census of %s on %s .. %s\n", spec->wl.name,
           spec->arch.level[spec->arch.nlevels - 1].name, spec->arch.level[0].name);
    if (c->enumerated)
        printf("every mapping of the constrained space: %llu evaluated%s, %llu valid: %llu "
               "distinct schedules\n(loop orders at %s, next to the arithmetic, change no count "
               "and count once)\n",
               (unsigned long long)c->candidates, c->stopped ? " (stopped early)" : "",
               (unsigned long long)c->valid, (unsigned long long)c->schedules,
               spec->arch.level[0].name);
    else
        printf("a uniform sample of %llu mappings (seed %llu) of a space of %s10^%.2f: %llu "
               "valid; --all enumerates it\n", (unsigned long long)samples,
               (unsigned long long)seed, exact ? "" : "about ", log_size,
               (unsigned long long)c->valid);
    printf("invalid: %llu exceed a capacity, %llu exceed a fan-out, %llu other; %llu %s break "
           "the constraints\n", (unsigned long long)c->over_capacity,
           (unsigned long long)c->over_fanout, (unsigned long long)c->other_invalid,
           (unsigned long long)c->broke_constraints, c->enumerated ? "factorizations" : "samples");
    printf("time: %.1f s on %d thread%s (%.0f mappings/s/thread)\n\n", c->seconds, c->threads,
           c->threads == 1 ? "" : "s",
           c->seconds > 0 ? (double)c->candidates / c->seconds / c->threads : 0.0);
    if (!c->valid)
        return;
    double macs = (double)nm_workload_macs(&spec->wl);
    printf("energy          least %.6g uJ (%.4g pJ/MAC), most %.6g uJ: spread %.2fx\n",
           c->e_min * 1e-6, c->e_min / macs, c->e_max * 1e-6, c->e_max / c->e_min);
    if (c->enumerated)
        printf("optimal         %llu schedule%s at the least energy (%llu mapping%s); %llu "
               "within 1 %% (%llu)\n", (unsigned long long)c->optimal_schedules,
               c->optimal_schedules == 1 ? "" : "s", (unsigned long long)c->n_optimal,
               c->n_optimal == 1 ? "" : "s", (unsigned long long)c->near_schedules,
               (unsigned long long)c->n_near);
    else
        printf("optimal         %llu mapping%s at the least energy; %llu within 1 %%\n",
               (unsigned long long)c->n_optimal, c->n_optimal == 1 ? "" : "s",
               (unsigned long long)c->n_near);
    printf("cycles          least %llu, most %llu: spread %.2fx\n",
           (unsigned long long)c->cy_min, (unsigned long long)c->cy_max,
           (double)c->cy_max / (double)c->cy_min);
    printf("off-chip        least %llu accesses of the outermost level, reached by %llu "
           "mapping%s, whose energies spread %.2fx (%.6g to %.6g uJ)\n",
           (unsigned long long)c->dram_min, (unsigned long long)c->n_dram_min,
           c->n_dram_min == 1 ? "" : "s", c->dram_min_e_hi / c->dram_min_e_lo,
           c->dram_min_e_lo * 1e-6, c->dram_min_e_hi * 1e-6);
    uint64_t h[12];
    double edge[13];
    int nb = rebin(c, h, edge, 12);
    uint64_t top = 1;
    for (int i = 0; i < nb; i++)
        top = h[i] > top ? h[i] : top;
    printf("\nenergy / least energy     mappings\n");
    for (int i = 0; i < nb; i++) {
        int bar = (int)lround(40.0 * (double)h[i] / (double)top);
        if (h[i] && !bar)
            bar = 1;
        printf("%8.3f .. %-8.3f %12llu  %.*s\n", edge[i], edge[i + 1], (unsigned long long)h[i],
               bar, "########################################");
    }
}

static void print_json(FILE *f, const nm_census *c, const nm_spec *spec, double log_size,
                       int exact, uint64_t samples, uint64_t seed)
{
    fprintf(f, "{\n \"workload\": ");
    nm_report_json_string(f, spec->wl.name);
    fprintf(f, ",\n \"enumerated\": %s,\n \"stopped_early\": %s,\n \"log10_space\": %.17g,\n"
               " \"space_exact\": %s,\n \"samples\": ",
            c->enumerated ? "true" : "false", c->stopped ? "true" : "false", log_size,
            exact ? "true" : "false");
    if (c->enumerated)
        fprintf(f, "null");
    else
        fprintf(f, "%llu", (unsigned long long)samples);
    fprintf(f, ",\n \"seed\": %llu,\n \"evaluated\": %llu,\n \"valid\": %llu,\n"
               " \"exceed_capacity\": %llu,\n \"exceed_fanout\": %llu,\n \"other_invalid\": %llu,\n"
               " \"factorizations_breaking_constraints\": %llu,\n \"seconds\": %.17g,\n"
               " \"threads\": %d",
            (unsigned long long)seed, (unsigned long long)c->candidates,
            (unsigned long long)c->valid, (unsigned long long)c->over_capacity,
            (unsigned long long)c->over_fanout, (unsigned long long)c->other_invalid,
            (unsigned long long)c->broke_constraints, c->seconds, c->threads);
    if (c->enumerated)
        fprintf(f, ",\n \"schedules\": %llu", (unsigned long long)c->schedules);
    if (c->valid) {
        fprintf(f, ",\n \"energy_pj\": {\"min\": %.17g, \"max\": %.17g, \"spread\": %.17g},\n"
                   " \"optimal\": %llu,\n \"within_1pct\": %llu,\n"
                   " \"cycles\": {\"min\": %llu, \"max\": %llu},\n"
                   " \"min_outermost_accesses\": %llu,\n \"at_min_outermost_accesses\": {"
                   "\"mappings\": %llu, \"energy_min_pj\": %.17g, \"energy_max_pj\": %.17g, "
                   "\"spread\": %.17g},\n \"best\": {\"outer_point\": %llu, \"order\": %llu},\n"
                   " \"histogram\": [",
                c->e_min, c->e_max, c->e_max / c->e_min, (unsigned long long)c->n_optimal,
                (unsigned long long)c->n_near, (unsigned long long)c->cy_min,
                (unsigned long long)c->cy_max, (unsigned long long)c->dram_min,
                (unsigned long long)c->n_dram_min, c->dram_min_e_lo, c->dram_min_e_hi,
                c->dram_min_e_hi / c->dram_min_e_lo, (unsigned long long)c->best.o,
                (unsigned long long)c->best.j);
        uint64_t h[40];
        double edge[41];
        int nb = rebin(c, h, edge, 40);
        for (int i = 0; i < nb; i++)
            fprintf(f, "%s\n  {\"ratio_from\": %.17g, \"ratio_to\": %.17g, \"mappings\": %llu}",
                    i ? "," : "", edge[i], edge[i + 1], (unsigned long long)h[i]);
        fprintf(f, "\n ]");
        if (c->enumerated)
            fprintf(f, ",\n \"optimal_schedules\": %llu,\n \"within_1pct_schedules\": %llu",
                    (unsigned long long)c->optimal_schedules,
                    (unsigned long long)c->near_schedules);
    }
    fprintf(f, "\n}\n");
}

static int write_plot(const char *dir, const nm_census *c, const char *name, uint64_t stride)
{
    FILE *f = nm_plot_open(dir, "census_hist.dat");
    if (!f)
        return 0;
    uint64_t h[40];
    double edge[41];
    int nb = rebin(c, h, edge, 40);
    fputs("# energy / least energy (bin from, to), mappings\n", f);
    for (int i = 0; i < nb; i++)
        fprintf(f, "%.6g\t%.6g\t%llu\n", edge[i], edge[i + 1], (unsigned long long)h[i]);
    if (fclose(f) != 0)
        return 0;
    if (!(f = nm_plot_open(dir, "census.gp")))
        return 0;
    fprintf(f, "# nestmap census: left, energy against outermost-level (off-chip) accesses of\n"
               "# a sample of the mappings (census.dat: energy pJ, accesses, cycles), both\n"
               "# relative to their least; right, the histogram of energy / least energy\n"
               "# (census_hist.dat).  Restyle freely, then run: gnuplot census.gp\n");
    fprintf(f, "base = 'census'\nemin = %.17g\ndmin = %.17g\nset datafile separator '\\t'\n"
               "set grid\n", c->e_min, (double)c->dram_min);
    nm_plot_terminals(f, 1200, 500);
    char title[512];
    if (c->enumerated)
        snprintf(title, sizeof title, "%s: %llu valid mappings (%llu distinct schedules), energy "
                 "spread %.1fx", name, (unsigned long long)c->valid,
                 (unsigned long long)c->schedules, c->e_max / c->e_min);
    else
        snprintf(title, sizeof title, "%s: a sample of %llu mappings (%llu valid), energy spread "
                 "%.1fx", name, (unsigned long long)c->candidates, (unsigned long long)c->valid,
                 c->e_max / c->e_min);
    fputs("  set multiplot layout 1,2 title ", f);
    nm_plot_string(f, title);
    char what[64];
    if (stride > 1)
        snprintf(what, sizeof what, "one %s in %llu", c->enumerated ? "schedule" : "mapping",
                 (unsigned long long)stride);
    else
        snprintf(what, sizeof what, "%s", c->enumerated ? "every schedule" : "every mapping");
    fputs("\n  set logscale xy\n  set xlabel 'off-chip accesses / least'\n"
          "  set ylabel 'energy / least energy'\n  set key top left\n"
          "  plot base.'.dat' using ($2/dmin):($1/emin) with points pt 7 ps 0.25 lc rgb '#1f77b4' "
          "title ", f);
    nm_plot_string(f, what);
    fputs(", \\\n"
          "       '+' using (1):(1) with points pt 7 ps 1.5 lc rgb 'red' title 'least'\n"
          "  set xlabel 'energy / least energy'\n  set ylabel 'mappings'\n"
          "  set xrange [0.95:*]\n  set yrange [0.8:*]\n  set style fill solid 0.8\n  set key off\n"
          "  plot base.'_hist.dat' using (sqrt($1*$2)):($3 > 0 ? $3 : 1/0):($2-$1) "
          "with boxes lc rgb '#2ca02c'\n  unset multiplot\n}\n", f);
    return fclose(f) == 0;
}

int nm_cmd_census(int argc, char **argv)
{
    int all = nm_cli_take_flag(&argc, argv, "--all");
    int missing = 0;
    const char *sample = nm_cli_take(&argc, argv, "--sample", &missing);
    if (missing) {
        fprintf(stderr, "nestmap census: --sample needs a number\n");
        return 2;
    }
    nm_cli_opts co;
    int done;
    int rc = nm_cli_parse(argc, argv, "census", usage,
                          NM_OPT_OUT | NM_OPT_JSON | NM_OPT_THREADS | NM_OPT_SEED | NM_OPT_SET |
                              NM_OPT_BUILTIN,
                          &co, &done);
    if (done)
        return rc;
    uint64_t nsample = 100000;
    if (sample && (!nm_cli_count("--sample", sample, &nsample) || nsample == 0)) {
        if (nsample == 0)
            fprintf(stderr, "nestmap census: --sample must be at least 1\n");
        return 2;
    }
    if (sample && all) {
        fprintf(stderr, "nestmap census: --all and --sample exclude each other\n");
        return 2;
    }
    nm_spec spec;
    int exact;
    double log_size;
    nm_mapspace *ms = nm_cli_sized_mapspace(&co, 0, &spec, &log_size, &exact, &rc);
    if (!ms)
        return rc;
    int enumerate = all || (!sample && log_size <= log10(ENUMERATE_MAX));
    rows_out out = {NULL, 0, NULL, 1, 0};
    nm_census_opts o = {co.threads > 0 ? co.threads : (int)sysconf(_SC_NPROCESSORS_ONLN),
                        enumerate, nsample, co.seed, NULL, NULL, &out, NULL};
    if (o.threads < 1)
        o.threads = 1;
    char path[4200];
    if (co.outdir) {
        if (!nm_cli_mkdir(co.outdir)) {
            rc = 2;
            goto end;
        }
        double expect = enumerate ? pow(10.0, log_size) : (double)nsample;
        out.stride = expect > PLOT_POINTS ? (uint64_t)ceil(expect / PLOT_POINTS) : 1;
        snprintf(path, sizeof path, "%s/mappings.csv", co.outdir);
        if (!(out.csv = fopen(path, "w"))) {
            fprintf(stderr, "nestmap: cannot write '%s'\n", path);
            rc = 2;
            goto end;
        }
        fputs(enumerate ? "outer_point,order,energy_pj,cycles,outermost_accesses,same_as\n"
                        : "sample,order,energy_pj,cycles,outermost_accesses,same_as\n", out.csv);
        snprintf(path, sizeof path, "%s/census.dat", co.outdir);
        if (!(out.dat = fopen(path, "w"))) {
            fprintf(stderr, "nestmap: cannot write '%s'\n", path);
            rc = 2;
            goto end;
        }
        fprintf(out.dat, "# one schedule in about %llu, in enumeration order: energy (pJ), "
                         "outermost-level accesses, cycles\n", (unsigned long long)out.stride);
        o.row = row;
    }
    o.stop = nm_cli_catch_sigint();
    int tty = isatty(STDERR_FILENO) && !co.quiet;
    if (tty)
        o.progress = progress;
    static nm_census c;
    nm_error err;
    nm_error_clear(&err);
    nm_status st = nm_census_run(ms, &o, &c, &err);
    if ((rc = nm_cli_search_end(st, tty, &err)) != 0)
        goto end;
    if (co.json) {
        nm_cli_json js;
        print_json(nm_cli_json_begin(&js), &c, &spec, log_size, exact, nsample, co.seed);
        if (!nm_cli_json_end(&js, &spec.doc))
            rc = 2;
    } else {
        print_text(&c, &spec, log_size, exact, nsample, co.seed);
    }
    if (co.outdir) {
        if (out.csv_rows >= CSV_MAX && !co.quiet)
            fprintf(stderr, "nestmap census: mappings.csv holds the first %llu of %llu valid "
                            "mappings\n", (unsigned long long)CSV_MAX,
                    (unsigned long long)c.valid);
        FILE *f = nm_cli_open_out(co.outdir, "census.json", path, sizeof path);
        if (!f) {
            rc = 2;
            goto end;
        }
        print_json(f, &c, &spec, log_size, exact, nsample, co.seed);
        if (!nm_cli_close_out(f, path))
            rc = 2;
        int ok = fclose(out.csv) == 0;
        ok &= fclose(out.dat) == 0;
        out.csv = out.dat = NULL;
        if (!ok || (c.valid && !write_plot(co.outdir, &c, spec.wl.name, out.stride))) {
            fprintf(stderr, "nestmap: cannot write the census files in '%s'\n", co.outdir);
            rc = 2;
        } else if (c.valid) {
            const char *names[] = {"census"};
            if (!nm_plot_have_gnuplot()) {
                if (!co.quiet)
                    fprintf(stderr, "nestmap census: gnuplot is not installed: the plot is left "
                                    "as %s/census.gp (Debian: apt-get install gnuplot-nox)\n",
                            co.outdir);
            } else if (!nm_cli_gnuplot("census", co.outdir, names, 1)) {
                rc = 2;
            }
        }
    }
    if (rc == 0 && !c.valid)
        rc = 1;
end:
    if (out.csv)
        fclose(out.csv);
    if (out.dat)
        fclose(out.dat);
    nm_free(ms);
    nm_spec_fini(&spec);
    return rc;
}
