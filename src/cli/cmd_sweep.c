/* cmd_sweep.c — `nestmap sweep FILES...`: a design-space sweep.  Reads the
 * `sweep:` key (sweep.h), checks every varied value against the design
 * before anything is written, then maps every workload at every point, one
 * point after another (or over MPI ranks), and writes as each point ends. */
#define _XOPEN_SOURCE 700 /* nftw, mkdtemp */
#include <config.h>

#include <math.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "sweep_cli.h"
#include "nestmap/alloc.h"
#include "nestmap/mapspace.h"
#include "nestmap/network.h"
#include "nestmap/report.h"
#include "nestmap/roofline.h"
#include "nestmap/search.h"
#include "nestmap/spec.h"

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
    "    budget: {area_mm2: 2, power_w: 1}       # at most (any column of points.csv):\n"
    "                                            # a point over it is marked, off the front\n"
    "    mode: grid                              # or random, with samples and seed\n"
    "    objective: edp                          # what each point's search optimizes\n\n"
    "options (each overrides `mapper:`):\n"
    NM_CLI_SET_USAGE
    "                    (--set holds at every point; vary: then sets each point's values)\n"
    NM_CLI_SEARCH_USAGE
    "  -o DIR            write DIR/points.csv (a row per point as it ends, synced),\n"
    "                    pareto.csv (energy x delay x area front), sweep.json,\n"
    "                    points/N/WORKLOAD.layers.csv and plots/ (gnuplot scripts and\n"
    "                    data, rendered to PNG and SVG when gnuplot is installed)\n"
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

/* ---- one point ---- */

/* The files of workload w: the design, the workload, the command line's. */
static int files_of(const sweep_run *run, int w, const char **files)
{
    int n = 0;
    files[n++] = run->sw.design;
    files[n++] = run->sw.workload[w];
    for (int i = 0; i < run->nextra; i++)
        files[n++] = run->extra[i];
    return n;
}

/* An error as one line (a reason in points.csv, or a message). */
static void set_reason(char *buf, size_t size, const nm_error *err)
{
    if (err->file[0] && err->line > 0)
        snprintf(buf, size, "%.200s:%d:%d: %.400s", err->file, err->line, err->col, err->msg);
    else if (err->file[0])
        snprintf(buf, size, "%.200s: %.400s", err->file, err->msg);
    else
        snprintf(buf, size, "%.400s", err->msg);
    for (char *p = buf; *p; p++)
        if (*p == '\n' || *p == '\r')
            *p = ' ';
}

/* Loads workload w with the overrides; the network of its layers (one
 * layer for a `problem:`) in *net. */
static nm_status load(const sweep_run *run, int w, const nm_override *ov, int nov, nm_spec *spec,
                      nm_network *net, nm_error *err)
{
    const char *files[NM_SWEEP_MAX_WORKLOADS + 2 + NM_CLI_MAX_SETS];
    int n = files_of(run, w, files);
    unsigned need = NM_NEED_ARCH | (run->co.builtin_energy ? NM_BUILTIN_ENERGY : 0);
    nm_spec_opts so = {ov, (size_t)nov, run->co.vars, (size_t)run->co.nvars};
    nm_status st = nm_spec_load_opts(spec, files, (size_t)n, &so, need, err);
    memset(net, 0, sizeof *net);
    if (st != NM_OK)
        return st;
    const nm_ynode *node = nm_ymap_get(spec->doc.root, "network");
    if (node)
        return nm_network_parse(net, node, &spec->doc, err);
    if (!spec->has_problem)
        return nm_yerror(err, run->sw.workload_node[w], "workload '%s' holds neither a "
                         "'network' nor a 'problem'", run->sw.workload[w]);
    net->layer = nm_calloc(1, sizeof *net->layer);
    if (!net->layer)
        return nm_error_set(err, NM_ERR_NOMEM, NULL, 0, 0, "out of memory");
    nm_layer *l = &net->layer[0];
    snprintf(net->name, sizeof net->name, "%s", run->wl_name[w]);
    snprintf(l->name, sizeof l->name, "%s", run->wl_name[w]);
    l->repeat = 1;
    l->wl = spec->wl;
    l->node = nm_ymap_get(spec->doc.root, "problem");
    net->nlayers = net->ndistinct = 1;
    return NM_OK;
}

/* The search options of a point: `mapper:`, the sweep's objective, then
 * the command line. */
static nm_status search_opts(const sweep_run *run, const nm_spec *spec, nm_search_opts *o,
                             nm_error *err)
{
    nm_search_opts_init(o);
    nm_status st = nm_search_opts_parse(o, spec->mapper, err);
    if (st != NM_OK)
        return st;
    o->nmetrics = 1;
    o->metric[0] = (nm_metric)nm_metric_parse(run->sw.objective);
    if (!nm_cli_search_apply(&run->flags, &run->co, "sweep", o))
        return nm_error_set(err, NM_ERR_INPUT, NULL, 0, 0, "bad search option");
    o->imperfect = spec->imperfect || run->flags.imperfect;
    o->stop = run->stop;
    return NM_OK;
}

static double arch_area(const nm_arch *arch)
{
    double a = arch->arith.area * (double)arch->arith.instances;
    for (int l = 0; l < arch->nlevels; l++)
        a += arch->level[l].area * (double)arch->level[l].instances;
    return a;
}

/* Adds workload w's results to the point's summary; its layers.csv in *csv. */
static nm_status map_workload(const sweep_run *run, int w, const nm_override *ov, int nov,
                              nm_sweep_summary *s, char **csv, nm_error *err)
{
    nm_spec spec;
    nm_network net;
    nm_search_opts o;
    nm_layer_result *out = NULL;
    nm_status st = load(run, w, ov, nov, &spec, &net, err);
    if (st == NM_OK)
        st = search_opts(run, &spec, &o, err);
    if (st == NM_OK && !(out = nm_calloc((size_t)net.nlayers, sizeof *out)))
        st = nm_error_set(err, NM_ERR_NOMEM, NULL, 0, 0, "out of memory");
    if (st == NM_OK)
        st = nm_network_map(&net, &spec.arch, spec.constraints, spec.constraints2, &o,
                            run->co.threads ? run->co.threads : o.threads, out, err);
    if (st == NM_OK) {
        const nm_arch *arch = &spec.arch;
        nm_network_total t;
        nm_network_totals(arch, &net, out, &t);
        s->energy_pj += t.energy;
        s->cycles += t.cycles;
        s->workload_pj[w] = t.energy;
        s->workload_cycles[w] = t.cycles;
        s->seconds += t.cycles * arch->cycle_seconds;
        s->busy += t.busy;
        s->macs += t.macs;
        s->area_um2 = arch_area(arch);
        /* Outermost first, the arithmetic last. */
        s->nlevels = arch->nlevels + 1;
        for (int l = 0; l < arch->nlevels; l++)
            s->level_pj[arch->nlevels - 1 - l] += t.level[l];
        s->level_pj[arch->nlevels] += t.level[arch->nlevels];
        for (int i = 0; i < net.nlayers; i++) {
            nm_roofline r;
            nm_roofline_of(&r, arch, &net.layer[i].wl);
            s->bound_cycles += (double)net.layer[i].repeat * r.bound_cycles;
        }
        for (int i = 0; i < net.nlayers && s->status == NM_SWEEP_OK; i++) {
            const nm_layer_result *lr = &out[net.layer[i].same_as];
            if (lr->status != NM_OK || !lr->res.found) {
                s->status = NM_SWEEP_UNMAPPED;
                char why[256];
                nm_report_layer_failure(why, sizeof why, arch, lr);
                /* a workload of one layer is named once */
                if (net.nlayers == 1 && !strcmp(run->wl_name[w], net.layer[i].name))
                    snprintf(s->reason, sizeof s->reason, "%s: %s", run->wl_name[w], why);
                else
                    snprintf(s->reason, sizeof s->reason, "%s, layer %s: %s",
                             run->wl_name[w], net.layer[i].name, why);
            }
        }
        size_t len;
        FILE *f = open_memstream(csv, &len);
        if (!f) {
            st = nm_error_set(err, NM_ERR_NOMEM, NULL, 0, 0, "out of memory");
        } else {
            nm_report_network(f, arch, &net, out, &o, 2);
            if (fclose(f) != 0)
                st = nm_error_set(err, NM_ERR_NOMEM, NULL, 0, 0, "out of memory");
        }
    }
    if (out)
        nm_network_results_fini(&net, out);
    nm_free(out);
    nm_network_fini(&net);
    nm_spec_fini(&spec);
    return st;
}

/* points.csv's figures of a point, in column order after the varied
 * attributes (then energy_uj.LEVEL per level, WORKLOAD.energy_uj and
 * WORKLOAD.cycles when there are several workloads, over_budget, status,
 * reason); `whole`: printed as an integer. */
static const struct {
    const char *name;
    int whole;
} figure_col[] = {
    {"energy_uj", 0},    {"cycles", 1},     {"seconds", 0},         {"edp", 0},
    {"area_mm2", 0},     {"macs", 1},       {"pj_per_mac", 0},      {"utilization_pct", 0},
    {"bound_cycles", 1}, {"cycles_over_bound", 0}, {"power_w", 0},
};
#define NFIGURES ((int)(sizeof figure_col / sizeof *figure_col))

static void figures(const nm_sweep_summary *s, double *v)
{
    double uj = s->energy_pj * 1e-6;
    double fig[NFIGURES] = {
        uj,
        s->cycles,
        s->seconds,
        uj * 1e-6 * s->seconds,
        s->area_um2 * 1e-6,
        s->macs,
        s->macs > 0 ? s->energy_pj / s->macs : 0.0,
        s->cycles > 0 ? 100.0 * s->busy / s->cycles : 0.0,
        s->bound_cycles,
        s->bound_cycles > 0 ? s->cycles / s->bound_cycles : 0.0,
        s->seconds > 0 ? s->energy_pj * 1e-12 / s->seconds : 0.0, /* average power */
    };
    memcpy(v, fig, sizeof fig);
}

/* The value of points.csv's column `name` for s; 0 when there is no such
 * column (s may be NULL to ask only that). */
static int column_value(const sweep_run *run, const nm_sweep_summary *s, const char *name,
                        double *out)
{
    double fig[NFIGURES];
    if (s)
        figures(s, fig);
    for (int k = 0; k < NFIGURES; k++)
        if (!strcmp(name, figure_col[k].name)) {
            *out = s ? fig[k] : 0.0;
            return 1;
        }
    if (!strncmp(name, "energy_uj.", 10))
        for (int l = 0; l < run->nlevels; l++)
            if (!strcmp(name + 10, run->level[l])) {
                *out = s ? s->level_pj[l] * 1e-6 : 0.0;
                return 1;
            }
    for (int w = 0; run->sw.nworkloads > 1 && w < run->sw.nworkloads; w++) {
        size_t n = strlen(run->wl_name[w]);
        if (strncmp(name, run->wl_name[w], n) || name[n] != '.')
            continue;
        if (!strcmp(name + n + 1, "energy_uj")) {
            *out = s ? s->workload_pj[w] * 1e-6 : 0.0;
            return 1;
        }
        if (!strcmp(name + n + 1, "cycles")) {
            *out = s ? s->workload_cycles[w] : 0.0;
            return 1;
        }
    }
    return 0;
}

int sweep_workload_columns(const sweep_run *run)
{
    return run->sw.nworkloads > 1 ? 2 * run->sw.nworkloads : 0;
}

int sweep_figure_columns(const sweep_run *run)
{
    return NFIGURES + run->nlevels + sweep_workload_columns(run) + 1;
}

/* The budgets a point breaks, "area_mm2 2.31 > 2; ..." ("" within all). */
static void over_budget(const sweep_run *run, const nm_sweep_summary *s, char *buf, size_t size)
{
    size_t n = 0;
    buf[0] = '\0';
    for (int b = 0; b < run->sw.nbudgets && n < size; b++) {
        const nm_sweep_budget *bu = &run->sw.budget[b];
        double v;
        if (column_value(run, s, bu->column, &v) && v > bu->max)
            n += (size_t)snprintf(buf + n, size - n, "%s%s %.6g > %.6g", n ? "; " : "",
                                  bu->column, v, bu->max);
    }
}

/* The row of points.csv for point p. */
static char *format_row(const sweep_run *run, uint64_t p, const int *idx,
                        const nm_sweep_summary *s)
{
    char *buf = NULL;
    size_t len;
    FILE *f = open_memstream(&buf, &len);
    if (!f)
        return NULL;
    fprintf(f, "%llu", (unsigned long long)p);
    for (int a = 0; a < run->sw.naxes; a++) {
        fputc(',', f);
        nm_report_csv_field(f, run->sw.axis[a].value[idx[a]]);
    }
    if (s->status != NM_SWEEP_OK) {
        /* A failed point has no figures (not zeros that min() would pick);
         * its reason says why. */
        for (int k = 0; k < sweep_figure_columns(run); k++)
            fputc(',', f);
    } else {
        double fig[NFIGURES];
        figures(s, fig);
        for (int k = 0; k < NFIGURES; k++)
            if (figure_col[k].whole)
                fprintf(f, ",%.0f", fig[k]);
            else
                fprintf(f, ",%.17g", fig[k]);
        for (int l = 0; l < run->nlevels; l++)
            fprintf(f, ",%.17g", s->level_pj[l] * 1e-6);
        for (int w = 0; sweep_workload_columns(run) && w < run->sw.nworkloads; w++)
            fprintf(f, ",%.17g,%.0f", s->workload_pj[w] * 1e-6, s->workload_cycles[w]);
        char over[512];
        over_budget(run, s, over, sizeof over);
        fputc(',', f);
        nm_report_csv_field(f, over);
    }
    fprintf(f, ",%s,", nm_sweep_status_name(s->status));
    nm_report_csv_field(f, s->reason);
    fputc('\n', f);
    if (fclose(f) != 0) {
        free(buf);
        return NULL;
    }
    return buf;
}

int sweep_point(const sweep_run *run, uint64_t p, point_out *out)
{
    memset(out, 0, sizeof *out);
    out->point = p;
    int idx[NM_SWEEP_MAX_AXES];
    /* The command line's --set first, then the point's values. */
    nm_override ov[NM_CLI_MAX_SETS + NM_SWEEP_MAX_AXES];
    int nov = run->co.nsets;
    memcpy(ov, run->co.sets, (size_t)nov * sizeof *ov);
    nm_sweep_point(&run->sw, p, idx);
    nm_error err;
    nm_error_clear(&err);
    nm_sweep_summary s;
    memset(&s, 0, sizeof s);
    for (int a = 0; a < run->sw.naxes; a++)
        if (nm_sweep_override(&run->sw, a, idx[a], &ov[nov++], &err) != NM_OK)
            return 2; /* checked before the sweep began */
    for (int w = 0; w < run->sw.nworkloads; w++) {
        nm_status st = map_workload(run, w, ov, nov, &s, &out->layers[w], &err);
        if (st == NM_ERR_NOMEM) {
            sweep_point_free(out);
            return 2;
        }
        if (st != NM_OK) {
            s.status = NM_SWEEP_INVALID;
            set_reason(s.reason, sizeof s.reason, &err);
            break;
        }
    }
    if (run->stop && *run->stop) {
        sweep_point_free(out);
        return 1;
    }
    out->row = format_row(run, p, idx, &s);
    if (!out->row) {
        sweep_point_free(out);
        return 2;
    }
    return 0;
}

void sweep_point_free(point_out *out)
{
    free(out->row);
    for (int w = 0; w < NM_SWEEP_MAX_WORKLOADS; w++)
        free(out->layers[w]);
    memset(out, 0, sizeof *out);
}

char *sweep_header(const sweep_run *run)
{
    char *buf = NULL;
    size_t len;
    FILE *f = open_memstream(&buf, &len);
    if (!f)
        return NULL;
    fputs("point", f);
    for (int a = 0; a < run->sw.naxes; a++) {
        fputc(',', f);
        nm_report_csv_field(f, run->sw.axis[a].label);
    }
    for (int k = 0; k < NFIGURES; k++)
        fprintf(f, ",%s", figure_col[k].name);
    for (int l = 0; l < run->nlevels; l++) {
        char col[NM_NAME_MAX + 16];
        snprintf(col, sizeof col, "energy_uj.%s", run->level[l]);
        fputc(',', f);
        nm_report_csv_field(f, col);
    }
    for (int w = 0; sweep_workload_columns(run) && w < run->sw.nworkloads; w++)
        for (int k = 0; k < 2; k++) {
            char col[NM_NAME_MAX + 16];
            snprintf(col, sizeof col, "%s.%s", run->wl_name[w], k ? "cycles" : "energy_uj");
            fputc(',', f);
            nm_report_csv_field(f, col);
        }
    fputs(",over_budget,status,reason\n", f);
    if (fclose(f) != 0) {
        free(buf);
        return NULL;
    }
    return buf;
}

/* ---- checks before anything runs ---- */

/* Loads every workload as the sweep leaves it, and with each varied value
 * alone (a zip's values together), building the mapspace of every distinct
 * layer: a value that the design or its constraints cannot take is an
 * error located at the value. */
static int check_values(sweep_run *run)
{
    nm_error err;
    nm_error_clear(&err);
    for (int a = -1; a < run->sw.naxes; a++) {
        if (a >= 0 && !nm_sweep_axis_leads(&run->sw, a))
            continue; /* checked with the first of its zip */
        int nv = a < 0 ? 1 : run->sw.axis[a].nvalues;
        for (int v = 0; v < nv; v++) {
            nm_override ov[NM_CLI_MAX_SETS + NM_SWEEP_MAX_AXES];
            int nov = run->co.nsets;
            memcpy(ov, run->co.sets, (size_t)nov * sizeof *ov);
            for (int b = a; b >= 0 && b < run->sw.naxes &&
                            run->sw.axis[b].group == run->sw.axis[a].group; b++)
                if (nm_sweep_override(&run->sw, b, v, &ov[nov++], &err) != NM_OK) {
                    nm_cli_error(&err);
                    return 2;
                }
            for (int w = 0; w < run->sw.nworkloads; w++) {
                nm_spec spec;
                nm_network net;
                nm_status st = load(run, w, ov, nov, &spec, &net, &err);
                if (st == NM_OK && a < 0 && w == 0) {
                    /* The columns: the design's levels, outermost first. */
                    run->nlevels = spec.arch.nlevels + 1;
                    for (int l = 0; l < spec.arch.nlevels; l++)
                        snprintf(run->level[spec.arch.nlevels - 1 - l], NM_NAME_MAX, "%s",
                                 spec.arch.level[l].name);
                    snprintf(run->level[spec.arch.nlevels], NM_NAME_MAX, "%s",
                             spec.arch.arith.name);
                }
                for (int i = 0; st == NM_OK && i < net.nlayers; i++) {
                    if (net.layer[i].same_as != i)
                        continue;
                    nm_mapspace *ms = nm_calloc(1, sizeof *ms);
                    if (!ms) {
                        st = nm_error_set(&err, NM_ERR_NOMEM, NULL, 0, 0, "out of memory");
                        break;
                    }
                    st = nm_mapspace_init(ms, &spec.arch, &net.layer[i].wl, spec.constraints,
                                          spec.constraints2, &err);
                    nm_free(ms);
                    if (st != NM_OK && a >= 0) {
                        /* Say which value did it, where the sweep gives it. */
                        char why[sizeof err.msg + 64];
                        set_reason(why, sizeof why, &err);
                        nm_yerror(&err, run->sw.axis[a].at[v], "%s=%s breaks a constraint of "
                                  "layer %s: %s", run->sw.axis[a].label,
                                  run->sw.axis[a].value[v], net.layer[i].name, why);
                    }
                }
                if (st == NM_OK && a < 0 && !run->co.quiet)
                    nm_cli_warnings(&spec.doc, 0, 0);
                nm_network_fini(&net);
                nm_spec_fini(&spec);
                if (st != NM_OK) {
                    nm_cli_error(&err);
                    return nm_status_exit_code(st);
                }
            }
        }
    }
    return 0;
}

/* Every budget names a column of points.csv (known once the design's
 * levels are). */
static int check_budgets(const sweep_run *run)
{
    for (int b = 0; b < run->sw.nbudgets; b++) {
        const nm_sweep_budget *bu = &run->sw.budget[b];
        double v;
        if (column_value(run, NULL, bu->column, &v))
            continue;
        char cols[1024];
        size_t n = 0;
        for (int k = 0; k < NFIGURES && n < sizeof cols; k++)
            n += (size_t)snprintf(cols + n, sizeof cols - n, "%s%s", k ? ", " : "",
                                  figure_col[k].name);
        nm_error err;
        nm_error_clear(&err);
        nm_yerror(&err, bu->at, "budget: no column '%s' in points.csv (a budget is the most a "
                  "point may have of one of: %s, energy_uj.LEVEL%s)", bu->column, cols,
                  sweep_workload_columns(run) ? ", WORKLOAD.energy_uj, WORKLOAD.cycles" : "");
        nm_cli_error(&err);
        return 2;
    }
    return 0;
}

/* FNV-1a over what decides the results: the sweep, the files, the search
 * options.  A resumed sweep must have the same. */
static uint64_t fnv(uint64_t h, const void *p, size_t n)
{
    const unsigned char *b = p;
    for (size_t i = 0; i < n; i++)
        h = (h ^ b[i]) * 0x100000001b3ull;
    return h;
}

static uint64_t fnv_file(uint64_t h, const char *path)
{
    FILE *f = fopen(path, "rb");
    char buf[8192];
    size_t n;
    h = fnv(h, path, strlen(path) + 1);
    while (f && (n = fread(buf, 1, sizeof buf, f)) > 0)
        h = fnv(h, buf, n);
    if (f)
        fclose(f);
    return h;
}

static uint64_t inputs_key(const sweep_run *run)
{
    uint64_t h = 0xcbf29ce484222325ull;
    h = fnv_file(h, run->sw.design);
    for (int w = 0; w < run->sw.nworkloads; w++)
        h = fnv_file(h, run->sw.workload[w]);
    for (int i = 0; i < run->nextra; i++)
        h = fnv_file(h, run->extra[i]);
    for (int i = 0; i < run->nopts; i++)
        h = fnv(h, run->opts[i], strlen(run->opts[i]) + 1);
    return h;
}

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

/* ---- the serial driver ---- */

static void progress(uint64_t done, uint64_t total, uint64_t first, double t0)
{
    double el = nm_cli_wall() - t0;
    double eta = done > first ? el / (double)(done - first) * (double)(total - done) : 0;
    fprintf(stderr, "\rsweep: %llu of %llu points, %.0f s elapsed, ETA %.0f s\033[K",
            (unsigned long long)done, (unsigned long long)total, el, eta);
    fflush(stderr);
}

static int run_serial(const sweep_run *run, sweep_dir *d, char **rows, uint64_t first, int tty)
{
    double t0 = nm_cli_wall();
    for (uint64_t p = first; p < run->sw.npoints; p++) {
        point_out out;
        int rc = sweep_point(run, p, &out);
        if (rc == 1) {
            if (tty)
                fputc('\n', stderr);
            fprintf(stderr, "nestmap sweep: interrupted after %llu of %llu points%s\n",
                    (unsigned long long)p, (unsigned long long)run->sw.npoints,
                    d ? "; --resume goes on from there" : "");
            return 130;
        }
        if (rc == 2) {
            fprintf(stderr, "nestmap: out of memory\n");
            return 2;
        }
        if (d && !sweep_dir_add(d, run, &out)) {
            sweep_point_free(&out);
            return 2;
        }
        if (rows) {
            rows[p] = out.row;
            out.row = NULL;
        }
        sweep_point_free(&out);
        if (tty)
            progress(p + 1, run->sw.npoints, first, t0);
    }
    if (tty)
        fputc('\n', stderr);
    return 0;
}

static void base_name(char *out, const char *path)
{
    const char *b = strrchr(path, '/');
    b = b ? b + 1 : path;
    size_t n = strcspn(b, ".");
    if (n == 0)
        n = strlen(b);
    if (n >= NM_NAME_MAX)
        n = NM_NAME_MAX - 1;
    memcpy(out, b, n);
    out[n] = '\0';
}

/* nftw's callback that removes what it visits (children first). */
static int remove_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void)sb;
    (void)flag;
    (void)ftw;
    return remove(path);
}

static int sweep_main(int argc, char **argv, int rank, int ranks)
{
    /* The options as given, for the resume fingerprint (parsing takes
     * them out of argv). */
    char **orig = nm_calloc((size_t)argc + 1, sizeof *orig);
    sweep_run *run = orig ? nm_calloc(1, sizeof *run) : NULL;
    if (orig)
        memcpy(orig, argv, (size_t)argc * sizeof *orig);
    if (run && !(run->opts = result_args(orig, argc, &run->nopts))) {
        nm_free(run);
        run = NULL;
    }
    if (!run) {
        nm_free(orig);
        fprintf(stderr, "nestmap: out of memory\n");
        return 2;
    }
    int resume = nm_cli_take_flag(&argc, argv, "--resume");
    int rc = 2;
    if (!nm_cli_search_take(&argc, argv, &run->flags)) {
        fprintf(stderr, "nestmap sweep: an option is missing its value\n\n%s", usage);
        goto out;
    }
    int done;
    rc = nm_cli_parse(argc, argv, "sweep", usage, NM_OPT_SEARCH, &run->co, &done);
    if (done)
        goto out;
    rc = 2;
    if (resume && !run->co.outdir) {
        fprintf(stderr, "nestmap sweep: --resume needs -o DIR (the sweep to continue)\n");
        goto out;
    }
    /* The sweep files: `sweep:` and whatever else they hold. */
    nm_ydoc doc;
    nm_ydoc_init(&doc);
    nm_error err;
    nm_error_clear(&err);
    nm_status st = NM_OK;
    for (int i = 0; i < run->co.nfiles && st == NM_OK; i++)
        st = nm_ydoc_load_file(&doc, run->co.files[i], &err);
    const nm_ynode *node = st == NM_OK ? nm_ymap_get(doc.root, "sweep") : NULL;
    if (st == NM_OK && !node)
        st = nm_error_set(&err, NM_ERR_INPUT, run->co.files[0], 0, 0,
                          "no 'sweep' in the input files (see nestmap sweep --help)");
    if (st == NM_OK)
        st = nm_sweep_parse(&run->sw, node, &err);
    run->doc = &doc;
    if (st != NM_OK) {
        nm_cli_error(&err);
        rc = nm_status_exit_code(st);
        goto fini;
    }
    run->extra = run->co.files;
    run->nextra = run->co.nfiles;
    for (int w = 0; w < run->sw.nworkloads; w++) {
        base_name(run->wl_name[w], run->sw.workload[w]);
        for (int j = 0; j < w; j++)
            if (!strcmp(run->wl_name[j], run->wl_name[w]))
                snprintf(run->wl_name[w], NM_NAME_MAX, "workload%d", w + 1);
    }
    if ((rc = check_values(run)) != 0 || (rc = check_budgets(run)) != 0)
        goto fini;
    /* --json without -o: sweep.json is built from the files of a sweep
     * directory, so a temporary one stands in (removed at the end). */
    char tmpdir[4096] = "";
    if (run->co.json && !run->co.outdir && rank == 0) {
        const char *t = getenv("TMPDIR");
        snprintf(tmpdir, sizeof tmpdir, "%s/nestmap-sweep.XXXXXX", t && *t ? t : "/tmp");
        if (!mkdtemp(tmpdir)) {
            perror(tmpdir);
            rc = 2;
            goto fini;
        }
        run->co.outdir = tmpdir;
    }
    run->stop = nm_cli_catch_sigint();
    int tty = rank == 0 && isatty(STDERR_FILENO) && !run->co.quiet;
    char *header = sweep_header(run);
    sweep_dir d;
    memset(&d, 0, sizeof d);
    char **rows = NULL;
    rc = 2;
    if (!header)
        goto released;
    if (run->co.outdir && rank == 0 &&
        (rc = sweep_dir_open(&d, run->co.outdir, resume, inputs_key(run),
                             header)) != 0)
        goto released;
    uint64_t first = d.done;
#ifdef NESTMAP_MPI
    {
        unsigned long long f = first;
        int ok = rc == 0 || !run->co.outdir;
        MPI_Bcast(&ok, 1, MPI_INT, 0, MPI_COMM_WORLD);
        if (!ok)
            goto released;
        MPI_Bcast(&f, 1, MPI_UNSIGNED_LONG_LONG, 0, MPI_COMM_WORLD);
        first = f;
    }
#endif
    if (!run->co.outdir && rank == 0 &&
        !(rows = nm_calloc(run->sw.npoints ? run->sw.npoints : 1, sizeof *rows))) {
        fprintf(stderr, "nestmap: out of memory\n");
        goto released;
    }
    double t0 = nm_cli_wall();
#ifdef NESTMAP_MPI
    rc = ranks > 1 ? sweep_mpi_run(run, rank == 0 && run->co.outdir ? &d : NULL, rows, first, tty)
                   : run_serial(run, run->co.outdir ? &d : NULL, rows, first, tty);
#else
    rc = run_serial(run, run->co.outdir ? &d : NULL, rows, first, tty);
#endif
    if (rc == 0 && rank == 0) {
        if (run->co.outdir) {
            if (!sweep_dir_finish(&d, run, nm_cli_wall() - t0, run->sw.npoints - first, ranks))
                rc = 2;
        } else {
            sweep_print(stdout, run, rows, run->sw.npoints);
        }
    }
released:
    nm_cli_release_sigint();
    if (run->co.outdir && rank == 0)
        sweep_dir_close(&d);
    if (tmpdir[0])
        nftw(tmpdir, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
    for (uint64_t p = 0; rows && p < run->sw.npoints; p++)
        free(rows[p]);
    nm_free(rows);
    free(header);
fini:
    nm_sweep_fini(&run->sw);
    nm_ydoc_fini(&doc);
out:
    nm_free(run->opts);
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
