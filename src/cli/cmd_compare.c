/* cmd_compare.c — `nestmap compare WORKLOAD DESIGN...`: one layer or network
 * mapped onto several designs (or one design under several dataflows), each
 * under its own constraints and `mapper:` settings, side by side: energy by
 * level and by tensor, cycles, utilization, the gap to the roofline bound;
 * as a table, CSV, JSON and a stacked bar chart drawn by gnuplot. */
#include <config.h>

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "nestmap/plot.h"
#include "nestmap/alloc.h"
#include "nestmap/model.h"
#include "nestmap/network.h"
#include "nestmap/report.h"
#include "nestmap/roofline.h"
#include "nestmap/search.h"
#include "nestmap/spec.h"
#include "nestmap/text.h"

static const char usage[] =
    "usage: nestmap compare [OPTIONS] WORKLOAD DESIGN...\n\n"
    "Maps one layer (a file with `problem:`) or network (`network:`) onto each\n"
    "design, under the design's own constraints and `mapper:` settings, and puts\n"
    "the results side by side: energy in all, per MAC, by level and by tensor;\n"
    "cycles; utilization; and cycles against the roofline bound (nestmap\n"
    "bound).  arch/teaching holds one design under five dataflows, so that\n"
    "  nestmap compare resnet50_res3_3x3 teaching/weight_stationary \\\n"
    "      teaching/output_stationary teaching/row_stationary \\\n"
    "      teaching/input_stationary teaching/no_local_reuse\n"
    "compares dataflows like for like.\n\n"
    "options (each overrides every design's `mapper:`):\n"
    "  --rank R          order the designs by energy (default), cycles or edp\n"
    "  --fuse            (a network) also search fused mappings of runs of\n"
    "                    consecutive layers, as nestmap network --fuse does, and\n"
    "                    compare the networks as fused: energy, cycles and DRAM\n"
    "                    words beside each design's unfused figures\n"
    "  --as-given        search nothing: evaluate the mapping each DESIGN file gives\n"
    "                    (with WORKLOAD: a mapping file, or a design with one), so\n"
    "                    that given mappings sit side by side, e.g.\n"
    "                      nestmap compare --as-given design.yaml \\\n"
    "                          output_stationary.yaml weight_stationary.yaml\n"
    NM_CLI_SET_USAGE
    NM_CLI_SEARCH_USAGE
    "  -o DIR            write compare.csv, compare.json, DESIGN.map.yaml (for a\n"
    "                    layer) and compare.gp with compare.dat: stacked bars of\n"
    "                    energy per MAC by level and by tensor, rendered to\n"
    "                    compare.png and compare.svg when gnuplot is installed\n"
    "  --json            print the comparison as JSON\n"
    "  --builtin-energy  ignore the inputs' ERT/ART: estimate every energy and area\n"
    "                    from the component classes (see nestmap energy)\n"
    "  -q, --quiet       no warnings, no progress\n\n"
    "exit status: 0 every design mapped the workload, 1 some did not, 2 bad input\n";

#define CMP_MAX_DESIGNS 64
#define CMP_LEVELS (NM_MAX_LEVELS + 2) /* storage levels, the arithmetic, the networks */

/* One design's results: energies in pJ over the whole workload. */
typedef struct cmp_design {
    const char *arg;                         /* as named */
    char label[NM_NAME_MAX];                 /* short name for tables and plots */
    int searched, mapped, failed;            /* layers with and without a mapping */
    double macs, energy, cycles, busy, bound;
    int nlevels;                             /* outermost first, the arithmetic last */
    char level[CMP_LEVELS][NM_NAME_MAX];
    double level_e[CMP_LEVELS];
    int ntensors;
    char tensor[NM_MAX_DS][NM_NAME_MAX];
    double tensor_e[NM_MAX_DS], compute_e;
    double leak_e; /* the levels' leakage: no tensor's (by tensor, beside compute) */
    /* --fuse: the runs of layers that may fuse and those whose fused
     * mapping is used; backing-store words, and the unfused figures */
    int runs, runs_fused;
    double words, unfused_energy, unfused_cycles, unfused_words;
} cmp_design;

typedef enum { RANK_ENERGY, RANK_CYCLES, RANK_EDP } cmp_rank;

/* The designs' warnings, each once, for the JSON (its documents are
 * released design by design). */
#define CMP_MAX_WARNINGS 256
typedef struct cmp_warning {
    char file[512];
    int line, col;
    char msg[1024];
} cmp_warning;

typedef struct cmp_run {
    nm_cli_opts co;
    nm_cli_search flags;
    cmp_rank rank;
    int n;
    cmp_design d[CMP_MAX_DESIGNS];
    int order[CMP_MAX_DESIGNS];              /* by rank; failed designs last */
    char workload[NM_NAME_MAX];              /* the layer's or network's name */
    const char *workload_arg;
    int network;                             /* the workload is a network */
    int as_given;                            /* --as-given: evaluate, do not search */
    int fuse;                                /* --fuse: the networks as fused */
    int nwarn;
    cmp_warning warn[CMP_MAX_WARNINGS];
} cmp_run;

static void keep_warnings(cmp_run *run, const nm_ydoc *doc)
{
    for (size_t i = 0; i < doc->nwarnings && run->nwarn < CMP_MAX_WARNINGS; i++) {
        const nm_ywarning *w = &doc->warnings[i];
        cmp_warning c;
        snprintf(c.file, sizeof c.file, "%s", w->file ? w->file : "");
        c.line = w->line;
        c.col = w->col;
        snprintf(c.msg, sizeof c.msg, "%s", w->msg);
        int seen = 0;
        for (int j = 0; j < run->nwarn && !seen; j++)
            seen = !strcmp(run->warn[j].file, c.file) && run->warn[j].line == c.line &&
                   run->warn[j].col == c.col && !strcmp(run->warn[j].msg, c.msg);
        if (!seen)
            run->warn[run->nwarn++] = c;
    }
}

static double edp(const cmp_design *d)
{
    return d->energy * 1e-12 * d->cycles;
}

static double rank_key(const cmp_run *run, const cmp_design *d)
{
    return run->rank == RANK_CYCLES ? d->cycles : run->rank == RANK_EDP ? edp(d) : d->energy;
}

/* "teaching/weight_stationary.yaml" -> "weight_stationary". */
static void label_of(char *out, size_t size, const char *arg)
{
    const char *b = strrchr(arg, '/');
    b = b ? b + 1 : arg;
    size_t n = strlen(b);
    if (n > 5 && !strcmp(b + n - 5, ".yaml"))
        n -= 5;
    snprintf(out, size, "%.*s", (int)n, b);
}


/* What the layers add up to on one design (nm_network_fused_each's visits). */
typedef struct cmp_sum {
    cmp_design *d;
    const nm_arch *arch;
    nm_network_total t;
} cmp_sum;

/* Adds one mapped layer (or a fused operation standing for part of one),
 * run `repeat` times: its energy and cycles, by level and by tensor (an
 * operation's tensors by their layer's names, its roles). */
static void add_layer(void *arg, const nm_workload *wl, const nm_stats *st, int64_t repeat)
{
    cmp_sum *sum = arg;
    cmp_design *d = sum->d;
    const nm_arch *arch = sum->arch;
    double k = (double)repeat;
    nm_network_total_add(&sum->t, arch, wl, st, k);
    for (int ds = 0; ds < wl->nds; ds++) {
        const char *name = wl->ds[ds].role[0] ? wl->ds[ds].role : wl->ds[ds].name;
        int t = nm_text_add_name(d->tensor, &d->ntensors, NM_MAX_DS, name);
        for (int s = 0; s < arch->nlevels && t >= 0; s++)
            d->tensor_e[t] += (st->level[s].ds[ds].energy + st->level[s].ds[ds].noc_energy) * k;
    }
    d->compute_e += st->compute_energy * k;
    for (int s = 0; s < arch->nlevels; s++)
        d->leak_e += st->level[s].leakage * k;
}

/* A layer file as a network of one layer, so that both take one path. */
static int one_layer(nm_network *net, const nm_spec *spec, const char *name)
{
    memset(net, 0, sizeof *net);
    net->layer = nm_calloc(1, sizeof *net->layer);
    if (!net->layer)
        return 0;
    snprintf(net->name, NM_NAME_MAX, "%s", name);
    net->nlayers = net->ndistinct = 1;
    nm_layer *l = &net->layer[0];
    snprintf(l->name, NM_NAME_MAX, "%s", name);
    l->repeat = 1;
    l->same_as = 0;
    l->wl = spec->wl;
    l->node = nm_ymap_get(spec->doc.root, "problem");
    return 1;
}

static int write_map(const char *dir, const cmp_design *d, const nm_spec *spec,
                     const nm_mapping *m)
{
    char name[NM_NAME_MAX + 16], path[4200];
    snprintf(name, sizeof name, "%s.map.yaml", d->label);
    FILE *f = nm_cli_open_out(dir, name, path, sizeof path);
    if (!f)
        return 0;
    fprintf(f, "# The best mapping nestmap compare found for the layer on %s.\n", d->arg);
    nm_report_mapping_yaml(f, &spec->arch, &spec->wl, m);
    return nm_cli_close_out(f, path);
}

/* --as-given: the mapping spec gives, evaluated, as the layer's result (a
 * search that found it), so that the rest of compare takes it as it takes
 * a search's. */
static nm_status given_mapping(const nm_spec *spec, const cmp_design *d, nm_layer_result *lr,
                               nm_error *err)
{
    nm_model mdl;
    nm_status st = nm_model_init(&mdl, &spec->arch, &spec->wl, err);
    if (st != NM_OK)
        return st;
    lr->status = NM_OK;
    lr->res.found = nm_model_eval(&mdl, &spec->map, &lr->res.best_stats, NULL);
    if (lr->res.found) {
        lr->res.best.map = spec->map;
        lr->res.best.energy = lr->res.best_stats.energy;
        lr->res.best.cycles = lr->res.best_stats.cycles;
    } else {
        char why[512];
        nm_invalid_describe(&lr->res.best_stats.invalid, &spec->arch, &spec->wl, why,
                            sizeof why);
        fprintf(stderr, "nestmap compare: %s: invalid mapping: %s\n", d->arg, why);
    }
    nm_model_fini(&mdl);
    return NM_OK;
}

/* Loads design i with the workload, maps it, and fills run->d[i].
 * Returns 0, or the exit code of an error that stops the comparison. */
static int run_design(cmp_run *run, int i)
{
    cmp_design *d = &run->d[i];
    nm_network_fusion fu; /* --fuse */
    memset(&fu, 0, sizeof fu);
    nm_cli_opts co = run->co;
    char *files[2] = {(char *)d->arg, (char *)run->workload_arg};
    co.files = files;
    co.nfiles = 2;
    nm_spec spec;
    int rc = nm_cli_load(&co, run->as_given ? NM_NEED_ARCH | NM_NEED_PROBLEM | NM_NEED_MAPPING
                                            : NM_NEED_ARCH,
                         &spec);
    if (rc)
        return rc;
    nm_error err;
    nm_error_clear(&err);
    nm_search_opts o;
    nm_search_opts_init(&o);
    nm_status status = nm_search_opts_parse(&o, spec.mapper, &err);
    if (status != NM_OK) {
        nm_cli_error(&err);
        nm_spec_fini(&spec);
        return nm_status_exit_code(status);
    }
    if (!nm_cli_search_apply(&run->flags, &run->co, "compare", &o)) {
        nm_spec_fini(&spec);
        return 2;
    }
    spec.imperfect |= run->flags.imperfect;
    o.imperfect = spec.imperfect;
    nm_network net;
    const nm_ynode *node = nm_ymap_get(spec.doc.root, "network");
    rc = 2;
    nm_layer_result *out = NULL;
    if (node) {
        status = nm_network_parse(&net, node, &spec.doc, &err);
        nm_cli_warnings(&spec.doc, run->co.quiet, 0);
        if (status != NM_OK) {
            nm_cli_error(&err);
            rc = nm_status_exit_code(status);
            goto out;
        }
    } else if (!spec.has_problem) {
        fprintf(stderr, "nestmap compare: %s holds neither a 'problem' nor a 'network'\n",
                run->workload_arg);
        memset(&net, 0, sizeof net);
        goto out;
    } else if (!one_layer(&net, &spec, run->workload)) {
        fprintf(stderr, "nestmap: out of memory\n");
        goto out;
    }
    if (i == 0) {
        run->network = node != NULL;
        if (node)
            snprintf(run->workload, sizeof run->workload, "%s", net.name);
    }
    out = nm_calloc((size_t)net.nlayers, sizeof *out);
    if (!out) {
        fprintf(stderr, "nestmap: out of memory\n");
        goto out;
    }
    if (run->as_given) {
        if (node) {
            fprintf(stderr, "nestmap compare: --as-given sets one layer's given mappings side "
                    "by side, not a network's\n");
            goto out;
        }
        status = given_mapping(&spec, d, &out[0], &err);
    } else {
        o.stop = nm_cli_catch_sigint();
        status = nm_network_map(&net, &spec.arch, spec.constraints, spec.constraints2, &o,
                                o.threads, out, &err);
        nm_cli_release_sigint();
    }
    if (status != NM_OK) {
        nm_cli_error(&err);
        rc = nm_status_exit_code(status);
        goto out;
    }
    if (run->fuse) {
        if (!node) {
            fprintf(stderr, "nestmap compare: --fuse fuses a network's layers; %s is one "
                    "layer\n", run->workload_arg);
            goto out;
        }
        o.stop = nm_cli_catch_sigint();
        status = nm_network_fuse(&net, &spec.arch, spec.constraints, spec.constraints2, &o, out,
                                 &fu, &err);
        nm_cli_release_sigint();
        if (status != NM_OK) {
            nm_cli_error(&err);
            rc = nm_status_exit_code(status);
            goto out;
        }
    }
    nm_network_total t;
    nm_network_totals(&spec.arch, &net, out, &t);
    d->searched = 1;
    d->mapped = t.mapped;
    d->failed = t.failed;
    d->macs = nm_network_macs(&net);
    const nm_arch *arch = &spec.arch;
    cmp_sum sum = {.d = d, .arch = arch};
    nm_network_fused_each(&net, out, &fu, add_layer, &sum);
    d->energy = sum.t.energy;
    d->cycles = sum.t.cycles;
    d->busy = sum.t.busy;
    if (run->fuse) { /* the totals as network --fuse prints them */
        d->runs = fu.nruns;
        for (int k = 0; k < fu.nruns; k++)
            d->runs_fused += fu.run[k].used;
        d->energy = fu.fused.energy;
        d->cycles = (double)fu.fused.cycles;
        d->words = (double)fu.fused.backing;
        d->unfused_energy = fu.unfused.energy;
        d->unfused_cycles = (double)fu.unfused.cycles;
        d->unfused_words = (double)fu.unfused.backing;
    }
    d->nlevels = 0;
    for (int s = arch->nlevels - 1; s >= 0; s--) {
        snprintf(d->level[d->nlevels], NM_NAME_MAX, "%s", arch->level[s].name);
        d->level_e[d->nlevels++] = sum.t.level[s];
    }
    snprintf(d->level[d->nlevels], NM_NAME_MAX, "%s", arch->arith.name);
    d->level_e[d->nlevels++] = sum.t.level[arch->nlevels];
    if (arch->noc) { /* the networks between levels, as one column */
        snprintf(d->level[d->nlevels], NM_NAME_MAX, "NoC");
        d->level_e[d->nlevels++] = sum.t.noc;
    }
    d->bound = nm_network_roofline_cycles(arch, &net, run->fuse ? &fu : NULL);
    for (int l = 0; l < net.nlayers; l++) {
        const nm_layer_result *lr = &out[net.layer[l].same_as];
        if (!(lr->status == NM_OK && lr->res.found) && !run->co.quiet)
            fprintf(stderr, "nestmap compare: %s: no valid mapping of %s\n", d->arg,
                    net.layer[l].name);
    }
    rc = 0;
    if (run->co.outdir && !run->network && out[0].status == NM_OK && out[0].res.found &&
        (!nm_cli_mkdir(run->co.outdir) ||
         !write_map(run->co.outdir, d, &spec, &out[0].res.best.map)))
        rc = 2;
out:
    nm_network_fusion_fini(&fu);
    keep_warnings(run, &spec.doc);
    if (out)
        nm_network_results_fini(&net, out);
    nm_free(out);
    nm_network_fini(&net);
    nm_spec_fini(&spec);
    return rc;
}

/* The union of the designs' level (or tensor) names, in order of first use. */
static int union_names(const cmp_run *run, int tensors, char names[][NM_NAME_MAX], int cap)
{
    int n = 0;
    for (int i = 0; i < run->n; i++) {
        const cmp_design *d = &run->d[i];
        int k = tensors ? d->ntensors : d->nlevels;
        for (int j = 0; j < k; j++)
            nm_text_add_name(names, &n, cap, tensors ? d->tensor[j] : d->level[j]);
    }
    return n;
}

static double part(const cmp_design *d, int tensors, const char *name)
{
    int k = tensors ? d->ntensors : d->nlevels;
    for (int j = 0; j < k; j++)
        if (!strcmp(tensors ? d->tensor[j] : d->level[j], name))
            return tensors ? d->tensor_e[j] : d->level_e[j];
    return 0;
}

static int ok(const cmp_design *d)
{
    return d->searched && d->failed == 0 && d->mapped > 0;
}

static const char *rank_name(cmp_rank r)
{
    return r == RANK_CYCLES ? "cycles" : r == RANK_EDP ? "edp" : "energy";
}

static void print_text(FILE *f, const cmp_run *run)
{
    const cmp_design *d0 = &run->d[0];
    fprintf(f, "%s: %.0f MACs on %d designs, ranked by %s\n\n", run->workload, d0->macs, run->n,
            rank_name(run->rank));
    fprintf(f, "rank  %-22s %12s %9s %12s %7s %8s %12s\n", "design", "energy uJ", "pJ/MAC",
            "cycles", "util %", "/bound", "EDP J*cycle");
    for (int k = 0; k < run->n; k++) {
        const cmp_design *d = &run->d[run->order[k]];
        if (!ok(d)) {
            fprintf(f, "   -  %-22s no valid mapping for %d of %d layers\n", d->label, d->failed,
                    d->mapped + d->failed);
            continue;
        }
        fprintf(f, "%4d  %-22s %12.4f %9.4f %12.0f %7.2f %8.2f %12.6g\n", k + 1, d->label,
                d->energy * 1e-6, d->energy / d->macs, d->cycles,
                d->cycles > 0 ? 100.0 * d->busy / d->cycles : 0.0, d->cycles / d->bound, edp(d));
    }
    if (run->fuse) {
        fprintf(f, "\nfused (runs of layers that may fuse, and those fused where they score "
                "better)\n%-22s %5s %6s %14s %14s %7s %12s %12s %7s\n", "design", "runs", "fused",
                "DRAM words", "unfused", "ratio", "energy uJ", "unfused uJ", "ratio");
        for (int k = 0; k < run->n; k++) {
            const cmp_design *d = &run->d[run->order[k]];
            if (ok(d))
                fprintf(f, "%-22s %5d %6d %14.0f %14.0f %6.3fx %12.4f %12.4f %6.3fx\n",
                        d->label, d->runs, d->runs_fused, d->words, d->unfused_words,
                        d->unfused_words > 0 ? d->words / d->unfused_words : 1.0,
                        d->energy * 1e-6, d->unfused_energy * 1e-6,
                        d->unfused_energy > 0 ? d->energy / d->unfused_energy : 1.0);
        }
    }
    int leaks = 0; /* a leakage column where some design leaks */
    for (int k = 0; k < run->n; k++)
        leaks |= ok(&run->d[k]) && run->d[k].leak_e > 0;
    for (int tensors = 0; tensors < 2; tensors++) {
        char names[CMP_LEVELS + NM_MAX_DS][NM_NAME_MAX];
        int n = union_names(run, tensors, names, CMP_LEVELS + NM_MAX_DS);
        fprintf(f, "\nenergy by %s, pJ/MAC%s\n%-22s", tensors ? "tensor" : "level",
                tensors ? "" : " (outermost first)", "design");
        for (int j = 0; j < n; j++)
            fprintf(f, " %13.13s", names[j]);
        if (tensors)
            fprintf(f, leaks ? " %13s %13s" : " %13s", "compute", "leakage");
        fprintf(f, "\n");
        for (int k = 0; k < run->n; k++) {
            const cmp_design *d = &run->d[run->order[k]];
            if (!ok(d))
                continue;
            fprintf(f, "%-22s", d->label);
            for (int j = 0; j < n; j++)
                fprintf(f, " %13.4f", part(d, tensors, names[j]) / d->macs);
            if (tensors)
                fprintf(f, leaks ? " %13.4f %13.4f" : " %13.4f", d->compute_e / d->macs,
                        d->leak_e / d->macs);
            fprintf(f, "\n");
        }
    }
}

static void print_csv(FILE *f, const cmp_run *run)
{
    char lv[CMP_LEVELS + NM_MAX_DS][NM_NAME_MAX], tn[CMP_LEVELS + NM_MAX_DS][NM_NAME_MAX];
    int nl = union_names(run, 0, lv, CMP_LEVELS + NM_MAX_DS);
    int nt = union_names(run, 1, tn, CMP_LEVELS + NM_MAX_DS);
    fputs("rank,design,file,valid,energy_pj,pj_per_mac,cycles,utilization,bound_cycles,"
          "cycles_over_bound,edp_j_cycles", f);
    for (int j = 0; j < nl; j++) {
        char h[NM_NAME_MAX + 16];
        snprintf(h, sizeof h, "level:%.*s_pj", NM_NAME_MAX, lv[j]);
        fputc(',', f);
        nm_report_csv_field(f, h);
    }
    for (int j = 0; j < nt; j++) {
        char h[NM_NAME_MAX + 16];
        snprintf(h, sizeof h, "tensor:%.*s_pj", NM_NAME_MAX, tn[j]);
        fputc(',', f);
        nm_report_csv_field(f, h);
    }
    fputs(run->fuse ? ",compute_pj,leakage_pj,runs,runs_fused,dram_words,unfused_energy_pj,"
                      "unfused_cycles,unfused_dram_words\n"
                    : ",compute_pj,leakage_pj\n", f);
    for (int k = 0; k < run->n; k++) {
        const cmp_design *d = &run->d[run->order[k]];
        if (ok(d))
            fprintf(f, "%d,", k + 1);
        else
            fputs(",", f);
        nm_report_csv_field(f, d->label);
        fputc(',', f);
        nm_report_csv_field(f, d->arg);
        if (!ok(d)) {
            fputs(",false,,,,,,,", f);
            for (int j = 0; j < nl + nt + 2 + (run->fuse ? 6 : 0); j++)
                fputc(',', f);
            fputc('\n', f);
            continue;
        }
        fprintf(f, ",true,%.17g,%.17g,%.0f,%.17g,%.0f,%.17g,%.17g", d->energy,
                d->energy / d->macs, d->cycles, d->busy / d->cycles, d->bound,
                d->cycles / d->bound, edp(d));
        for (int j = 0; j < nl; j++)
            fprintf(f, ",%.17g", part(d, 0, lv[j]));
        for (int j = 0; j < nt; j++)
            fprintf(f, ",%.17g", part(d, 1, tn[j]));
        fprintf(f, ",%.17g,%.17g", d->compute_e, d->leak_e);
        if (run->fuse)
            fprintf(f, ",%d,%d,%.0f,%.17g,%.0f,%.0f", d->runs, d->runs_fused, d->words,
                    d->unfused_energy, d->unfused_cycles, d->unfused_words);
        fputc('\n', f);
    }
}

static void json_parts(FILE *f, const char *key, char names[][NM_NAME_MAX], const double *e,
                       int n)
{
    fprintf(f, ", \"%s\": [", key);
    for (int j = 0; j < n; j++) {
        fprintf(f, "%s{\"name\": ", j ? ", " : "");
        nm_report_json_string(f, names[j]);
        fprintf(f, ", \"pj\": %.17g}", e[j]);
    }
    fputc(']', f);
}

static void print_json(FILE *f, const cmp_run *run)
{
    fprintf(f, "{\n \"workload\": ");
    nm_report_json_string(f, run->workload);
    fprintf(f, ",\n \"file\": ");
    nm_report_json_string(f, run->workload_arg);
    fprintf(f, ",\n \"network\": %s,\n \"macs\": %.0f,\n \"rank_by\": \"%s\",\n \"designs\": [",
            run->network ? "true" : "false", run->d[0].macs, rank_name(run->rank));
    for (int k = 0; k < run->n; k++) {
        const cmp_design *d = &run->d[run->order[k]];
        fprintf(f, "%s\n  {\"rank\": ", k ? "," : "");
        if (ok(d))
            fprintf(f, "%d", k + 1);
        else
            fprintf(f, "null");
        fprintf(f, ", \"design\": ");
        nm_report_json_string(f, d->label);
        fprintf(f, ", \"file\": ");
        nm_report_json_string(f, d->arg);
        fprintf(f, ", \"valid\": %s, \"layers_mapped\": %d, \"layers_failed\": %d",
                ok(d) ? "true" : "false", d->mapped, d->failed);
        if (ok(d)) {
            fprintf(f, ",\n   \"energy_pj\": %.17g, \"pj_per_mac\": %.17g, \"cycles\": %.0f, "
                       "\"utilization\": %.17g, \"bound_cycles\": %.0f, "
                       "\"cycles_over_bound\": %.17g, \"edp_j_cycles\": %.17g,\n   ",
                    d->energy, d->energy / d->macs, d->cycles, d->busy / d->cycles, d->bound,
                    d->cycles / d->bound, edp(d));
            fprintf(f, "\"compute_pj\": %.17g, \"leakage_pj\": %.17g", d->compute_e, d->leak_e);
            char names[CMP_LEVELS][NM_NAME_MAX];
            memcpy(names, d->level, sizeof names);
            json_parts(f, "energy_by_level", names, d->level_e, d->nlevels);
            char tn[NM_MAX_DS][NM_NAME_MAX];
            memcpy(tn, d->tensor, sizeof tn);
            json_parts(f, "energy_by_tensor", tn, d->tensor_e, d->ntensors);
            if (run->fuse)
                fprintf(f, ",\n   \"fusion\": {\"runs\": %d, \"runs_fused\": %d, "
                           "\"dram_words\": %.0f, \"unfused\": {\"energy_pj\": %.17g, "
                           "\"cycles\": %.0f, \"dram_words\": %.0f}}",
                        d->runs, d->runs_fused, d->words, d->unfused_energy, d->unfused_cycles,
                        d->unfused_words);
        }
        fputc('}', f);
    }
    fprintf(f, "\n ]\n}\n");
}

/* compare.dat (block 0: energy per MAC by level; block 1: by tensor) and
 * compare.gp, two stacked-bar panels. */
static int write_plot(const char *dir, const cmp_run *run)
{
    char names[2][CMP_LEVELS + NM_MAX_DS][NM_NAME_MAX];
    int n[2];
    for (int t = 0; t < 2; t++)
        n[t] = union_names(run, t, names[t], CMP_LEVELS + NM_MAX_DS);
    int parts = n[1]; /* the tensors; then compute and leakage */
    if (n[1] + 2 <= CMP_LEVELS + NM_MAX_DS) {
        snprintf(names[1][n[1]++], NM_NAME_MAX, "compute");
        snprintf(names[1][n[1]++], NM_NAME_MAX, "leakage");
    }
    FILE *f = nm_plot_open(dir, "compare.dat");
    if (!f)
        return 0;
    for (int t = 0; t < 2; t++) {
        fprintf(f, "%s# energy per MAC (pJ) by %s; a row per design, in rank order\n",
                t ? "\n\n" : "", t ? "tensor" : "level");
        for (int k = 0; k < run->n; k++) {
            const cmp_design *d = &run->d[run->order[k]];
            if (!ok(d))
                continue;
            fprintf(f, "\"%s\"", d->label);
            for (int j = 0; j < n[t]; j++) {
                double e = !t || j < parts ? part(d, t, names[t][j])
                           : j == parts        ? d->compute_e
                                               : d->leak_e;
                fprintf(f, "\t%.6g", e / d->macs);
            }
            fputc('\n', f);
        }
    }
    if (fclose(f) != 0)
        return 0;
    if (!(f = nm_plot_open(dir, "compare.gp")))
        return 0;
    fprintf(f, "# nestmap compare: energy per MAC of %s on each design, by level and by\n"
               "# tensor, stacked.  Data in compare.dat; restyle freely, then run:\n"
               "# gnuplot compare.gp\n", run->workload);
    fputs("base = 'compare'\nset datafile separator '\\t'\nset style data histograms\n"
          "set style histogram rowstacked\nset style fill solid 0.85 border -1\n"
          "set boxwidth 0.7\nset grid ytics\nset key outside right top vertical\n"
          "set ylabel 'energy per MAC (pJ)'\nset xtics rotate by -30 nomirror\n"
          "set yrange [0:*]\n", f);
    nm_plot_terminals(f, 1300, 520);
    char title[512];
    snprintf(title, sizeof title, "%s%s: energy per MAC, ranked by %s", run->workload,
             run->fuse ? " (fused runs of layers, network --fuse)" : "", rank_name(run->rank));
    fputs("  set multiplot layout 1,2 title ", f);
    nm_plot_string(f, title);
    fputc('\n', f);
    /* One palette per meaning: levels in cool colours, tensors in warm ones,
     * so no colour means a level in one panel and a tensor in the other. */
    static const char *const cool[] = {"#1f4e79", "#2e75b6", "#9dc3e6", "#548235", "#a9d18e",
                                       "#7f7f7f", "#bfbfbf", "#17becf", "#3b5b92", "#8fbc8f"};
    static const char *const warm[] = {"#c00000", "#ed7d31", "#ffc000", "#7030a0", "#d45087",
                                       "#8c564b", "#f4a582", "#e377c2", "#b8860b", "#ff9896"};
    for (int t = 0; t < 2; t++) {
        fprintf(f, "  set title 'by %s'\n  plot ", t ? "tensor" : "level");
        for (int j = 0; j < n[t]; j++) {
            const char *colour = t && !strcmp(names[t][j], "compute") && j == n[t] - 1
                                     ? "#404040"
                                     : (t ? warm : cool)[j % 10];
            fprintf(f, "%sbase.'.dat' index %d using %d%s lc rgb '%s' title ",
                    j ? ", \\\n       " : "", t, j + 2, j ? "" : ":xtic(1)", colour);
            nm_plot_string(f, names[t][j]);
        }
        fputc('\n', f);
    }
    fputs("  unset multiplot\n}\n", f);
    return fclose(f) == 0;
}

static int write_outputs(const cmp_run *run)
{
    const char *dir = run->co.outdir;
    char path[4200];
    if (!nm_cli_mkdir(dir))
        return 0;
    FILE *f = nm_cli_open_out(dir, "compare.csv", path, sizeof path);
    if (!f)
        return 0;
    print_csv(f, run);
    if (!nm_cli_close_out(f, path))
        return 0;
    if (!(f = nm_cli_open_out(dir, "compare.json", path, sizeof path)))
        return 0;
    print_json(f, run);
    if (!nm_cli_close_out(f, path))
        return 0;
    if (!write_plot(dir, run)) {
        fprintf(stderr, "nestmap: cannot write the plot in '%s'\n", dir);
        return 0;
    }
    if (!nm_plot_have_gnuplot()) {
        if (!run->co.quiet)
            fprintf(stderr, "nestmap compare: gnuplot is not installed: the plot is left as "
                            "%s/compare.gp (Debian: apt-get install gnuplot-nox)\n", dir);
        return 1;
    }
    const char *names[] = {"compare"};
    return nm_cli_gnuplot("compare", dir, names, 1);
}

int nm_cmd_compare(int argc, char **argv)
{
    static cmp_run run;
    memset(&run, 0, sizeof run);
    if (!nm_cli_search_take(&argc, argv, &run.flags)) {
        fprintf(stderr, "nestmap compare: an option is missing its value\n\n%s", usage);
        return 2;
    }
    run.as_given = nm_cli_take_flag(&argc, argv, "--as-given");
    run.fuse = nm_cli_take_flag(&argc, argv, "--fuse");
    if (run.fuse && run.as_given) {
        fprintf(stderr, "nestmap compare: --fuse searches; --as-given evaluates given "
                "mappings: use one\n");
        return 2;
    }
    int missing = 0;
    const char *rank = nm_cli_take(&argc, argv, "--rank", &missing);
    if (missing) {
        fprintf(stderr, "nestmap compare: --rank needs energy, cycles or edp\n");
        return 2;
    }
    if (rank) {
        if (!strcmp(rank, "energy"))
            run.rank = RANK_ENERGY;
        else if (!strcmp(rank, "cycles"))
            run.rank = RANK_CYCLES;
        else if (!strcmp(rank, "edp"))
            run.rank = RANK_EDP;
        else {
            fprintf(stderr, "nestmap compare: --rank '%s': energy, cycles or edp\n", rank);
            return 2;
        }
    }
    int done = 0;
    int rc = nm_cli_parse(argc, argv, "compare", usage, NM_OPT_SEARCH, &run.co, &done);
    if (done)
        return rc;
    if (run.co.nfiles < 2) {
        fprintf(stderr, "nestmap compare: name a workload and at least one design\n\n%s", usage);
        return 2;
    }
    if (run.co.nfiles - 1 > CMP_MAX_DESIGNS) {
        fprintf(stderr, "nestmap compare: at most %d designs\n", CMP_MAX_DESIGNS);
        return 2;
    }
    run.workload_arg = run.co.files[0];
    label_of(run.workload, sizeof run.workload, run.workload_arg);
    run.n = run.co.nfiles - 1;
    for (int i = 0; i < run.n; i++) {
        run.d[i].arg = run.co.files[i + 1];
        label_of(run.d[i].label, sizeof run.d[i].label, run.d[i].arg);
    }
    /* Labels must tell designs apart: when two collide, name them in full. */
    for (int i = 0; i < run.n; i++)
        for (int j = i + 1; j < run.n; j++)
            if (!strcmp(run.d[i].label, run.d[j].label)) {
                snprintf(run.d[i].label, NM_NAME_MAX, "%s", run.d[i].arg);
                snprintf(run.d[j].label, NM_NAME_MAX, "%s", run.d[j].arg);
            }
    int tty = isatty(STDERR_FILENO) && !run.co.quiet;
    for (int i = 0; i < run.n; i++) {
        if (tty)
            fprintf(stderr, "\rmapping onto %s (%d of %d)\033[K", run.d[i].arg, i + 1, run.n);
        if ((rc = run_design(&run, i)) != 0) {
            if (tty)
                fputc('\n', stderr);
            return rc;
        }
    }
    if (tty)
        fputc('\n', stderr);
    /* rank: insertion sort, designs without a mapping last */
    for (int i = 0; i < run.n; i++) {
        int j = i;
        while (j > 0) {
            const cmp_design *a = &run.d[run.order[j - 1]], *b = &run.d[i];
            int before = ok(b) && (!ok(a) || rank_key(&run, b) < rank_key(&run, a));
            if (!before)
                break;
            run.order[j] = run.order[j - 1];
            j--;
        }
        run.order[j] = i;
    }
    rc = 0;
    for (int i = 0; i < run.n; i++)
        if (!ok(&run.d[i]))
            rc = 1;
    if (run.co.json) {
        nm_cli_json js;
        print_json(nm_cli_json_begin(&js), &run);
        nm_ydoc warned; /* the designs' warnings, gathered */
        nm_ydoc_init(&warned);
        for (int i = 0; i < run.nwarn; i++) {
            nm_ynode at = {.kind = NM_Y_SCALAR, .str = "", .file = run.warn[i].file,
                           .line = run.warn[i].line, .col = run.warn[i].col};
            if (nm_ydoc_warn(&warned, run.warn[i].file[0] ? &at : NULL, "%s",
                             run.warn[i].msg) != NM_OK)
                rc = 2;
        }
        if (!nm_cli_json_end(&js, &warned))
            rc = 2;
        nm_ydoc_fini(&warned);
    } else {
        print_text(stdout, &run);
    }
    if (run.co.outdir && !write_outputs(&run))
        rc = 2;
    return rc;
}
