/* cmd_map.c — `nestmap map FILES...`: search the mapspace. */
#include <config.h>

#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "nestmap/alloc.h"
#include "nestmap/job.h"
#include "nestmap/model.h"
#include "nestmap/report.h"
#include "nestmap/search.h"
#include "nestmap/spec.h"

static const char usage[] =
    "usage: nestmap map [OPTIONS] FILES...\n\n"
    "Searches the mappings of the problem onto the architecture allowed by the\n"
    "constraints (architecture_constraints, mapspace_constraints), with the\n"
    "settings of `mapper:`, and prints the best mapping and its stats.\n\n"
    "options (each overrides `mapper:`):\n"
    NM_CLI_SET_USAGE
    NM_CLI_SEARCH_USAGE
    "  -o DIR            write map.yaml, stats.txt, stats.json, pareto.csv, top.csv\n"
    "                    (each row's mapping in pareto/RANK.map.yaml, top/RANK.map.yaml)\n"
    "                    and the energy and area tables in use (ERT.yaml, ART.yaml)\n"
    "  --diagram         with -o, also draw the best mapping (mapping.png: each\n"
    "                    level's tiles and loops, and the PE array's busy PEs) from\n"
    "                    mapping.dat and mapping.gp, which gnuplot renders\n"
    "  --timeloop-names  with -o, also write Timeloop's files: timeloop-mapper.stats.txt\n"
    "                    (Timeloop's layout), .map.txt, .map.yaml, .ERT.yaml, .ART.yaml,\n"
    "                    and timeloop-input.yaml, the best mapping's whole input for\n"
    "                    timeloop-model\n"
    "  --json            print stats and search summary as JSON\n"
    "  --builtin-energy  ignore the input's ERT/ART: estimate every energy and area\n"
    "                    from the component classes (see nestmap energy)\n"
    NM_CLI_STRIDE_USAGE
    NM_CLI_TEACH_USAGE
    "  -q, --quiet       no warnings, no progress\n\n"
    "Ctrl-C ends the search and still reports the best mapping found.\n"
    "exit status: 0 a mapping found, 1 none valid, 2 bad input\n";


static void progress(void *ctx, const nm_search_progress *p)
{
    (void)ctx;
    fprintf(stderr, "\r%llu proposed, %llu valid, best %.6g, %.0f/s, %.1f s   ",
            (unsigned long long)p->proposed, (unsigned long long)p->valid, p->best, p->rate,
            p->seconds);
    fflush(stderr);
}

static int write_outputs(const char *dir, const nm_spec *spec, const nm_search_result *res,
                         const nm_search_opts *o, int tl_names)
{
    if (!nm_cli_mkdir(dir))
        return 0;
    static const char *const names[] = {"map.yaml", "stats.txt", "stats.json", "pareto.csv",
                                        "top.csv"};
    static nm_nest nest;
    if (res->found)
        nm_nest_build(&nest, &res->best.map, &spec->arch, &spec->wl);
    for (int i = 0; i < 5; i++) {
        if (i == 0 && !res->found)
            continue;
        char path[4096];
        FILE *f = nm_cli_open_out(dir, names[i], path, sizeof path);
        if (!f)
            return 0;
        switch (i) {
        case 0:
            fprintf(f, "# Best mapping found by nestmap map (%s, %s, seed %llu).\n", o->algorithm,
                    nm_metric_name(o->metric[0]), (unsigned long long)o->seed);
            nm_report_mapping_yaml(f, &spec->arch, &spec->wl, &res->best.map);
            break;
        case 1:
            if (res->found) {
                nm_report_loopnest(f, &spec->arch, &spec->wl, &nest, &res->best.map,
                                   &res->best_stats);
                fputc('\n', f);
                nm_report_text(f, &spec->arch, &spec->wl, &res->best_stats);
                fputc('\n', f);
            }
            nm_report_search_text(f, &spec->arch, &spec->wl, res, o);
            break;
        case 2:
            nm_report_search_json(f, &spec->arch, &spec->wl, res, o);
            break;
        default:
            nm_report_found_csv(f, res, o, i == 4);
            break;
        }
        if (!nm_cli_close_out(f, path))
            return 0;
    }
    /* Every mapping of the Pareto front and the top K as a map.yaml of its
     * own (pareto/RANK.map.yaml, top/RANK.map.yaml: the CSVs' `map`
     * column), so each can be re-evaluated with nestmap model. */
    for (int which = 0; which < 2; which++) {
        const nm_found *list = which ? res->top : res->pareto;
        int n = which ? res->ntop : res->npareto;
        char sub[4096];
        snprintf(sub, sizeof sub, "%s/%s", dir, which ? "top" : "pareto");
        if (n && !nm_cli_mkdir(sub))
            return 0;
        for (int k = 0; k < n; k++) {
            char name[32], path[4200];
            snprintf(name, sizeof name, "%d.map.yaml", k + 1);
            FILE *f = nm_cli_open_out(sub, name, path, sizeof path);
            if (!f)
                return 0;
            fprintf(f, "# %s mapping %d of nestmap map (%s, %s, seed %llu): %.17g pJ, %llu "
                    "cycles.\n", which ? "Top-K" : "Pareto-front", k + 1, o->algorithm,
                    nm_metric_name(o->metric[0]), (unsigned long long)o->seed, list[k].energy,
                    (unsigned long long)list[k].cycles);
            nm_report_mapping_yaml(f, &spec->arch, &spec->wl, &list[k].map);
            if (!nm_cli_close_out(f, path))
                return 0;
        }
    }
    if (!nm_cli_write_tables(dir, tl_names ? "timeloop-mapper" : NULL, spec,
                             res->found ? &res->best_stats : NULL, &nest, &res->best.map))
        return 0;
    if (tl_names && res->found) { /* Timeloop's mapper also writes its mapping as YAML */
        char path[4096];
        FILE *f = nm_cli_open_out(dir, "timeloop-mapper.map.yaml", path, sizeof path);
        if (!f)
            return 0;
        nm_report_mapping_yaml(f, &spec->arch, &spec->wl, &res->best.map);
        if (!nm_cli_close_out(f, path))
            return 0;
    }
    return 1;
}

int nm_cmd_map(int argc, char **argv)
{
    int tl_names = nm_cli_take_flag(&argc, argv, "--timeloop-names");
    int diagram = nm_cli_take_flag(&argc, argv, "--diagram");
    nm_cli_teach teach;
    if (!nm_cli_teach_take(&argc, argv, "map", &teach))
        return 2;
    nm_search_opts o;
    nm_cli_opts co;
    nm_spec spec;
    int rc = nm_cli_search_setup(argc, argv, "map", usage, NM_NEED_ARCH | NM_NEED_PROBLEM, &co,
                                 &spec, &o);
    if (rc >= 0)
        return rc;
    if (diagram && !co.outdir) {
        fprintf(stderr, "nestmap map: --diagram needs -o DIR (where the diagram goes)\n");
        nm_spec_fini(&spec);
        return 2;
    }
    nm_error err;
    nm_error_clear(&err);
    o.stop = nm_cli_catch_sigint();
    int tty = isatty(STDERR_FILENO) && !co.quiet;
    if (tty)
        o.progress = progress;
    static nm_search_result res;
    static nm_job_detail detail; /* networks and metadata, for the reports */
    size_t warned = spec.doc.nwarnings;
    nm_status status = nm_job_map(&spec, &o, &res, &detail, &err);
    if ((rc = nm_cli_search_end(status, tty, &err)) != 0)
        goto out;
    /* -q hides the search summary, except when the failure below points
     * at its counts. */
    if (!co.quiet || !res.found)
        nm_report_search_text(stderr, &spec.arch, &spec.wl, &res, &o);
    nm_cli_warnings(&spec.doc, co.quiet, warned);
    int json_ok = 1;
    if (co.json) {
        nm_cli_json js;
        nm_report_search_json(nm_cli_json_begin(&js), &spec.arch, &spec.wl, &res, &o);
        json_ok = nm_cli_json_end(&js, &spec.doc);
    } else if (res.found && (teach.loops || teach.explain)) {
        json_ok = nm_cli_teach_print(&teach, &spec, &res.best.map, &res.best_stats);
    } else if (res.found) {
        static nm_nest nest;
        nm_nest_build(&nest, &res.best.map, &spec.arch, &spec.wl);
        nm_report_loopnest(stdout, &spec.arch, &spec.wl, &nest, &res.best.map, &res.best_stats);
        fputc('\n', stdout);
        nm_report_text(stdout, &spec.arch, &spec.wl, &res.best_stats);
        nm_report_bound_text(stdout, &spec.arch, &spec.wl, &res.best_stats);
        nm_report_gap_text(stdout, &spec.arch, &spec.wl, &res, &o);
    }
    if (!res.found) {
        char note[NM_REPORT_NOTE_MAX];
        nm_report_backing_note(note, sizeof note, &spec.arch, &res);
        fprintf(stderr, "nestmap map: no valid mapping among %llu candidates (see the counts "
                "by reason above)%s\n", (unsigned long long)res.proposed, note);
    }
    rc = res.found ? 0 : 1;
    if (!json_ok || (co.outdir && !write_outputs(co.outdir, &spec, &res, &o, tl_names)) ||
        (diagram && res.found &&
         !nm_cli_diagram("map", co.outdir, &spec, &res.best.map, &res.best_stats)))
        rc = 2;
    nm_search_result_fini(&res);
out:
    nm_spec_fini(&spec);
    return rc;
}
