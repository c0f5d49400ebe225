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
#include "nestmap/fusion.h"
#include "nestmap/job.h"
#include "nestmap/model.h"
#include "nestmap/report.h"
#include "nestmap/roofline.h"
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
    "  --no-fuse         a chain of operations: map each operation alone only\n"
    "  -q, --quiet       no warnings, no progress\n\n"
    "A problem that is a chain of operations (nestmap(1), FUSED MAPPINGS) is\n"
    "mapped each operation alone and fused in groups of consecutive operations\n"
    "at the level below the backing store; the best cut into groups is printed\n"
    "next to the unfused run, and -o DIR writes its map.yaml, stats.txt and\n"
    "stats.json.\n\n"
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

static void ratio_line(FILE *f, const nm_fused_sum *a, const nm_fused_sum *b)
{
    double ea = a->energy * (double)a->cycles, eb = b->energy * (double)b->cycles;
    fprintf(f, "Fused / unfused: energy %.3fx, cycles %.3fx, backing-store words %.3fx, "
            "EDP %.3fx\n", b->energy > 0 ? a->energy / b->energy : 1.0,
            b->cycles ? (double)a->cycles / (double)b->cycles : 1.0,
            b->backing ? (double)a->backing / (double)b->backing : 1.0, eb > 0 ? ea / eb : 1.0);
}

static void fused_text(FILE *f, const nm_spec *spec, const nm_fused_result *r,
                       const nm_search_opts *o)
{
    nm_report_fused_text(f, &spec->arch, r->chain, &r->best, r->best_st);
    double lb, gap = nm_roofline_chain_gap(&spec->arch, spec->chain, o->metric[0],
                                           &r->best_st->total, &lb);
    if (lb > 0)
        fprintf(f, "Gap: %.4gx at most: the %s over its proven lower bound %.6g %s (each "
                   "operation's roofline, the intermediates on chip)\n", gap,
                nm_metric_name(o->metric[0]), lb, nm_metric_unit(o->metric[0]));
    if (r->alone >= 0) {
        fprintf(f, "\nUnfused: no run (the search found no valid mapping of operation '%s' "
                "alone)\n", spec->chain->op[r->alone].name);
        return;
    }
    const nm_fused_sum *u = &r->unfused_st->total;
    fprintf(f, "\nUnfused (each operation alone): energy %.3f uJ, cycles %llu, %s words %llu, "
            "EDP %.4g J*cycle\n", u->energy * 1e-6, (unsigned long long)u->cycles,
            spec->arch.level[spec->arch.nlevels - 1].name, (unsigned long long)u->backing,
            u->energy * 1e-12 * (double)u->cycles);
    ratio_line(f, &r->best_st->total, u);
}

/* `map` on a chain: the fused search, its report and files. */
static int map_fused(nm_spec *spec, const nm_cli_opts *co, nm_search_opts *o, int fuse)
{
    nm_error err;
    nm_error_clear(&err);
    static nm_fused_result r;
    size_t warned = spec->doc.nwarnings;
    nm_status st = nm_fused_search(&spec->arch, spec->chain, spec->constraints,
                                   spec->constraints2, o, fuse, &r, &err);
    nm_cli_warnings(&spec->doc, co->quiet, warned);
    if (st != NM_OK) {
        nm_cli_error(&err);
        nm_fused_result_fini(&r);
        return nm_status_exit_code(st);
    }
    int rc = 0;
    if (!co->quiet)
        fprintf(stderr, "fused search: %llu shared tilings scored, %d single-operation searches "
                "(%llu mappings evaluated), %.2f s\n", (unsigned long long)r.candidates,
                r.searches, (unsigned long long)r.evaluated, r.seconds);
    if (co->json) {
        nm_cli_json js;
        nm_report_fused_search_json(nm_cli_json_begin(&js), &spec->arch, spec->chain, &r, o);
        if (!nm_cli_json_end(&js, &spec->doc))
            rc = 2;
    } else {
        fused_text(stdout, spec, &r, o);
    }
    if (co->outdir) {
        static const char *const names[] = {"map.yaml", "stats.txt", "stats.json"};
        if (!nm_cli_mkdir(co->outdir))
            rc = 2;
        for (int k = 0; k < 3 && rc != 2; k++) {
            char path[4096];
            FILE *f = nm_cli_open_out(co->outdir, names[k], path, sizeof path);
            if (!f) {
                rc = 2;
                break;
            }
            if (k == 0) {
                fprintf(f, "# Best fused mapping found by nestmap map (%s, seed %llu).\n",
                        nm_metric_name(o->metric[0]), (unsigned long long)o->seed);
                nm_report_fused_yaml(f, &spec->arch, r.chain, &r.best);
            } else if (k == 1) {
                fused_text(f, spec, &r, o);
            } else {
                nm_report_fused_search_json(f, &spec->arch, spec->chain, &r, o);
            }
            if (!nm_cli_close_out(f, path))
                rc = 2;
        }
    }
    nm_fused_result_fini(&r);
    return rc;
}

int nm_cmd_map(int argc, char **argv)
{
    int tl_names = nm_cli_take_flag(&argc, argv, "--timeloop-names");
    int diagram = nm_cli_take_flag(&argc, argv, "--diagram");
    int no_fuse = nm_cli_take_flag(&argc, argv, "--no-fuse");
    nm_cli_teach teach;
    if (!nm_cli_teach_take(&argc, argv, "map", &teach))
        return 2;
    nm_search_opts o;
    nm_cli_opts co;
    nm_spec spec;
    int rc = nm_cli_search_setup(argc, argv, "map", usage,
                                 NM_NEED_ARCH | NM_NEED_PROBLEM | NM_ACCEPT_CHAIN, &co, &spec, &o);
    if (rc >= 0)
        return rc;
    if (spec.chain) {
        if (!nm_cli_chain_flags_ok("map", diagram, tl_names, &teach)) {
            rc = 2;
        } else {
            o.stop = nm_cli_catch_sigint();
            rc = map_fused(&spec, &co, &o, !no_fuse);
            nm_cli_release_sigint();
        }
        nm_spec_fini(&spec);
        return rc;
    }
    if (no_fuse) {
        fprintf(stderr, "nestmap map: --no-fuse is for a chain of operations\n");
        nm_spec_fini(&spec);
        return 2;
    }
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
