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
#include "nestmap/mapspace.h"
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
    "  --algorithm A     exhaustive, random, random_pruned, hybrid, optimal\n"
    "  --metric M[,M]    energy, delay, edp, ed2p, last_level_accesses (prioritized)\n"
    "  --threads N       worker threads; the result does not depend on N\n"
    "  --seed S          random seed (default 0)\n"
    "  --max-evals N     stop after N candidates\n"
    "  --search-size N   stop after N valid mappings\n"
    "  --victory N       end a lane after N valid mappings in a row that do not\n"
    "                    beat its best (Timeloop's victory_condition, per thread)\n"
    "  --timeout N       end a lane after N invalid candidates in a row\n"
    "  --lanes N         independent lanes of the random strategies (default 128);\n"
    "                    the search ends when every lane has\n"
    "  --time-limit S    stop after S seconds of wall time\n"
    "  --top K           keep the K best (top.csv)\n"
    "  -o DIR            write map.yaml, stats.txt, stats.json, pareto.csv, top.csv\n"
    "  --json            print stats and search summary as JSON\n"
    "  -q, --quiet       no warnings, no progress\n\n"
    "Ctrl-C ends the search and still reports the best mapping found.\n"
    "exit status: 0 a mapping found, 1 none valid, 2 bad input\n";

/* Set by SIGINT; the only global of the program, since a signal handler
 * can reach nothing else. */
static volatile sig_atomic_t interrupted;

static void on_sigint(int sig)
{
    (void)sig;
    interrupted = 1;
}

static void progress(void *ctx, const nm_search_progress *p)
{
    (void)ctx;
    fprintf(stderr, "\r%llu proposed, %llu valid, best %.6g, %.0f/s, %.1f s   ",
            (unsigned long long)p->proposed, (unsigned long long)p->valid, p->best, p->rate,
            p->seconds);
    fflush(stderr);
}

static int write_outputs(const char *dir, const nm_spec *spec, const nm_search_result *res,
                         const nm_search_opts *o)
{
    if (!nm_cli_mkdir(dir))
        return 0;
    static const char *const names[] = {"map.yaml", "stats.txt", "stats.json", "pareto.csv",
                                        "top.csv"};
    for (int i = 0; i < 5; i++) {
        if (i == 0 && !res->found)
            continue;
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        FILE *f = fopen(path, "w");
        if (!f) {
            perror(path);
            return 0;
        }
        switch (i) {
        case 0:
            fprintf(f, "# Best mapping found by nestmap map (%s, %s, seed %llu).\n", o->algorithm,
                    nm_metric_name(o->metric[0]), (unsigned long long)o->seed);
            nm_report_mapping_yaml(f, &spec->arch, &spec->wl, &res->best.map);
            break;
        case 1:
            if (res->found) {
                static nm_nest nest;
                nm_nest_build(&nest, &res->best.map, &spec->arch, &spec->wl);
                nm_report_loopnest(f, &spec->arch, &spec->wl, &nest, &res->best.map,
                                   &res->best_stats);
                fputc('\n', f);
                nm_report_text(f, &spec->arch, &spec->wl, &res->best_stats);
                fputc('\n', f);
            }
            nm_report_search_text(f, &spec->arch, res, o);
            break;
        case 2:
            nm_report_search_json(f, &spec->arch, &spec->wl, res, o);
            break;
        default:
            nm_report_found_csv(f, res, o, i == 4);
            break;
        }
        if (fclose(f) != 0) {
            perror(path);
            return 0;
        }
    }
    return 1;
}

int nm_cmd_map(int argc, char **argv)
{
    nm_search_opts o;
    nm_search_opts_init(&o);
    /* Options of this command first; the common parser takes the rest. */
    int missing = 0;
    const char *alg = nm_cli_take(&argc, argv, "--algorithm", &missing);
    const char *metric = nm_cli_take(&argc, argv, "--metric", &missing);
    struct { const char *name; const char *val; } counts[] = {
        {"--max-evals", NULL}, {"--search-size", NULL}, {"--victory", NULL},
        {"--timeout", NULL}, {"--top", NULL}, {"--time-limit", NULL}, {"--lanes", NULL},
    };
    for (size_t i = 0; i < sizeof counts / sizeof *counts; i++)
        counts[i].val = nm_cli_take(&argc, argv, counts[i].name, &missing);
    if (missing) {
        fprintf(stderr, "nestmap map: an option is missing its value\n\n%s", usage);
        return 2;
    }
    nm_cli_opts co;
    int done;
    int rc = nm_cli_parse(argc, argv, usage, &co, &done);
    if (done)
        return rc;
    nm_spec spec;
    nm_error err;
    nm_error_clear(&err);
    if ((rc = nm_cli_load(&co, NM_NEED_ARCH | NM_NEED_PROBLEM, &spec)) != 0)
        return rc;
    nm_status status = nm_search_opts_parse(&o, spec.mapper, &err);
    if (status != NM_OK) {
        nm_cli_error(&err);
        nm_spec_fini(&spec);
        return nm_status_exit_code(status);
    }
    /* The command line wins over `mapper:`. */
    rc = 2;
    if (alg) {
        if (!nm_strategy_find(alg)) {
            fprintf(stderr, "nestmap map: unknown algorithm '%s' (one of %s)\n", alg,
                    nm_strategy_names());
            goto out;
        }
        o.algorithm = alg;
    }
    if (metric) {
        o.nmetrics = 0;
        char buf[256];
        snprintf(buf, sizeof buf, "%s", metric);
        for (char *tok = strtok(buf, ","); tok; tok = strtok(NULL, ",")) {
            int m = nm_metric_parse(tok);
            if (m < 0 || o.nmetrics >= NM_MAX_METRICS) {
                fprintf(stderr, "nestmap map: unknown metric '%s' (energy, delay, edp, ed2p, "
                        "last_level_accesses)\n", tok);
                goto out;
            }
            o.metric[o.nmetrics++] = (nm_metric)m;
        }
        if (!o.nmetrics) {
            fprintf(stderr, "nestmap map: --metric needs at least one metric\n");
            goto out;
        }
    }
    uint64_t v;
    if (counts[0].val && !nm_cli_count("--max-evals", counts[0].val, &o.max_evals))
        goto out;
    if (counts[1].val && !nm_cli_count("--search-size", counts[1].val, &o.search_size))
        goto out;
    if (counts[2].val) {
        if (!nm_cli_count("--victory", counts[2].val, &o.victory))
            goto out;
        o.victory_set = 1;
    }
    if (counts[3].val && !nm_cli_count("--timeout", counts[3].val, &o.timeout))
        goto out;
    if (counts[4].val) {
        if (!nm_cli_count("--top", counts[4].val, &v))
            goto out;
        o.topk = (int)(v > 1000 ? 1000 : v);
    }
    if (counts[5].val) {
        char *end;
        o.time_limit = strtod(counts[5].val, &end);
        if (*end || !(o.time_limit > 0)) {
            fprintf(stderr, "nestmap map: --time-limit needs a positive number of seconds\n");
            goto out;
        }
    }
    if (counts[6].val) {
        if (!nm_cli_count("--lanes", counts[6].val, &v))
            goto out;
        if (v < 1 || v > NM_MAX_LANES) {
            fprintf(stderr, "nestmap map: --lanes must be 1 to %d\n", NM_MAX_LANES);
            goto out;
        }
        o.lanes = (int)v;
    }
    if (co.threads)
        o.threads = co.threads;
    if (co.have_seed)
        o.seed = co.seed;

    nm_mapspace *ms = nm_cli_mapspace(&spec, &rc);
    if (!ms)
        goto out;
    interrupted = 0;
    struct sigaction sa, old;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_sigint;
    sigaction(SIGINT, &sa, &old);
    o.stop = &interrupted;
    int tty = isatty(STDERR_FILENO) && !co.quiet;
    if (tty)
        o.progress = progress;
    static nm_search_result res;
    status = nm_search_run(ms, &o, &res, &err);
    sigaction(SIGINT, &old, NULL);
    if (tty)
        fputc('\n', stderr);
    if (status != NM_OK) {
        nm_cli_error(&err);
        rc = nm_status_exit_code(status);
        nm_free(ms);
        goto out;
    }
    if (!co.quiet)
        nm_report_search_text(stderr, &spec.arch, &res, &o);
    if (co.json) {
        nm_report_search_json(stdout, &spec.arch, &spec.wl, &res, &o);
    } else if (res.found) {
        static nm_nest nest;
        nm_nest_build(&nest, &res.best.map, &spec.arch, &spec.wl);
        nm_report_loopnest(stdout, &spec.arch, &spec.wl, &nest, &res.best.map, &res.best_stats);
        fputc('\n', stdout);
        nm_report_text(stdout, &spec.arch, &spec.wl, &res.best_stats);
    }
    if (!res.found) {
        fprintf(stderr, "nestmap map: no valid mapping among %llu candidates (see the counts "
                "by reason above)\n", (unsigned long long)res.proposed);
    }
    rc = res.found ? 0 : 1;
    if (co.outdir && !write_outputs(co.outdir, &spec, &res, &o))
        rc = 2;
    nm_search_result_fini(&res);
    nm_free(ms);
out:
    nm_spec_fini(&spec);
    return rc;
}
