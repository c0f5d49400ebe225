/* search_opts.c — the search options `map` and `network` share: taken from
 * the command line before the input is read, applied over `mapper:` after. */
#include <config.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "nestmap/network.h"
#include "nestmap/report.h"
#include "nestmap/roofline.h"
#include "nestmap/search.h"
#include "nestmap/spec.h"

static const char *const count_names[NM_CLI_SEARCH_COUNTS] = {
    "--max-evals", "--search-size", "--victory", "--timeout", "--top", "--time-limit", "--lanes"};

int nm_cli_search_take(int *argc, char **argv, nm_cli_search *s)
{
    int missing = 0;
    s->algorithm = nm_cli_take(argc, argv, "--algorithm", &missing);
    s->metric = nm_cli_take(argc, argv, "--metric", &missing);
    s->imperfect = nm_cli_take_flag(argc, argv, "--imperfect");
    s->no_refine = nm_cli_take_flag(argc, argv, "--no-refine");
    for (int i = 0; i < NM_CLI_SEARCH_COUNTS; i++)
        s->count[i] = nm_cli_take(argc, argv, count_names[i], &missing);
    return !missing;
}

int nm_cli_search_apply(const nm_cli_search *s, const nm_cli_opts *co, const char *cmd,
                        nm_search_opts *o)
{
    if (s->algorithm) {
        if (!nm_strategy_find(s->algorithm)) {
            fprintf(stderr, "nestmap %s: unknown algorithm '%s' (one of %s)\n", cmd,
                    s->algorithm, nm_strategy_names());
            return 0;
        }
        o->algorithm = s->algorithm;
    }
    if (s->metric) {
        o->nmetrics = 0;
        char buf[256];
        snprintf(buf, sizeof buf, "%s", s->metric);
        for (char *tok = strtok(buf, ","); tok; tok = strtok(NULL, ",")) {
            int m = nm_metric_parse(tok);
            if (m < 0 || o->nmetrics >= NM_MAX_METRICS) {
                fprintf(stderr, "nestmap %s: unknown metric '%s' (energy, delay, edp, ed2p, "
                        "last_level_accesses)\n", cmd, tok);
                return 0;
            }
            o->metric[o->nmetrics++] = (nm_metric)m;
        }
        if (!o->nmetrics) {
            fprintf(stderr, "nestmap %s: --metric needs at least one metric\n", cmd);
            return 0;
        }
    }
    uint64_t *dst[] = {&o->max_evals, &o->search_size, &o->victory, &o->timeout};
    for (int i = 0; i < 4; i++)
        if (s->count[i] && !nm_cli_count(count_names[i], s->count[i], dst[i]))
            return 0;
    if (s->count[2])
        o->victory_set = 1;
    if (s->count[3])
        o->timeout_set = 1;
    uint64_t v;
    if (s->count[4]) {
        if (!nm_cli_count("--top", s->count[4], &v))
            return 0;
        o->topk = (int)(v > 1000 ? 1000 : v);
    }
    if (s->count[5]) {
        char *end;
        o->time_limit = strtod(s->count[5], &end);
        if (*end || !(o->time_limit > 0)) {
            fprintf(stderr, "nestmap %s: --time-limit needs a positive number of seconds\n", cmd);
            return 0;
        }
    }
    if (s->count[6]) {
        if (!nm_cli_count("--lanes", s->count[6], &v))
            return 0;
        if (v < 1 || v > NM_MAX_LANES) {
            fprintf(stderr, "nestmap %s: --lanes must be 1 to %d\n", cmd, NM_MAX_LANES);
            return 0;
        }
        o->lanes = (int)v;
    }
    if (s->no_refine)
        o->refine = o->fill = 0;
    if (co->threads)
        o->threads = co->threads;
    if (co->have_seed)
        o->seed = co->seed;
    return 1;
}

int nm_cli_search_setup(int argc, char **argv, const char *cmd, const char *usage,
                        unsigned need, nm_cli_opts *co, struct nm_spec *spec,
                        struct nm_search_opts *o)
{
    nm_search_opts_init(o);
    /* Options of this command first; the common parser takes the rest. */
    nm_cli_search flags;
    if (!nm_cli_search_take(&argc, argv, &flags)) {
        fprintf(stderr, "nestmap %s: an option is missing its value\n\n%s", cmd, usage);
        return 2;
    }
    unsigned accept = NM_OPT_SEARCH | (!strcmp(cmd, "map") ? NM_OPT_STRIDE : 0u);
    int rc = nm_cli_begin(argc, argv, cmd, usage, accept, need, co, spec);
    if (rc >= 0)
        return rc;
    nm_error err;
    nm_error_clear(&err);
    nm_status status = nm_search_opts_parse(o, spec->mapper, &err);
    if (status != NM_OK) {
        nm_cli_error(&err);
        nm_spec_fini(spec);
        return nm_status_exit_code(status);
    }
    /* The command line wins over `mapper:`. */
    if (!nm_cli_search_apply(&flags, co, cmd, o)) {
        nm_spec_fini(spec);
        return 2;
    }
    spec->imperfect |= flags.imperfect;
    o->imperfect = spec->imperfect;
    return -1;
}

int nm_cli_search_end(nm_status status, int tty, const nm_error *err)
{
    nm_cli_release_sigint();
    if (tty)
        fputc('\n', stderr);
    if (status == NM_OK)
        return 0;
    nm_cli_error(err);
    return nm_status_exit_code(status);
}

size_t nm_cli_search_warn(nm_ydoc *doc, const nm_arch *arch, const nm_workload *wl,
                          const nm_search_result *res, const nm_search_opts *o)
{
    size_t before = doc->nwarnings;
    if (res->found) {
        nm_roofline r;
        nm_roofline_of(&r, arch, wl);
        double x = (double)res->best_stats.cycles / r.bound_cycles;
        if (x > 2.0 && nm_ydoc_warn(doc, NULL, "the best mapping takes %.1fx the roofline bound "
                                    "of %.0f cycles: a longer search may do better (try "
                                    "--victory %llu, or --algorithm hybrid)", x, r.bound_cycles,
                                    (unsigned long long)(o->victory ? 10 * o->victory : 1000))
                                    != NM_OK)
            return before;
    }
    /* (not when the backing store is too small: no search can help) */
    if (strstr(res->stopped_by, "timeout") && res->valid < 1000 &&
        !nm_report_backing_note(NULL, 0, arch, res))
        (void)nm_ydoc_warn(doc, NULL, "the search ended by its timeout after only %llu valid "
                           "mapping%s: most candidates are invalid here; raise --timeout "
                           "(now %llu) or constrain the space", (unsigned long long)res->valid,
                           res->valid == 1 ? "" : "s", (unsigned long long)o->timeout);
    return before;
}

size_t nm_cli_network_warn(nm_ydoc *doc, const nm_arch *arch, const nm_network *net,
                           const nm_layer_result *out, const nm_search_opts *o)
{
    size_t before = doc->nwarnings;
    int far = 0, starved = 0, worst = -1;
    double worst_x = 0;
    for (int i = 0; i < net->nlayers; i++) {
        if (net->layer[i].same_as != i || out[i].status != NM_OK)
            continue;
        const nm_search_result *r = &out[i].res;
        if (strstr(r->stopped_by, "timeout") && r->valid < 1000 &&
            !nm_report_backing_note(NULL, 0, arch, r))
            starved++;
        if (!r->found)
            continue;
        nm_roofline rl;
        nm_roofline_of(&rl, arch, &net->layer[i].wl);
        double x = (double)r->best_stats.cycles / rl.bound_cycles;
        if (x > 2.0) {
            far++;
            if (x > worst_x) {
                worst_x = x;
                worst = i;
            }
        }
    }
    if (far && nm_ydoc_warn(doc, NULL, "%d distinct layer%s end%s above 2x the roofline cycle "
                            "bound (the worst, %s, at %.1fx): a longer search may do better "
                            "(try --victory %llu, or --algorithm hybrid)", far,
                            far == 1 ? "" : "s", far == 1 ? "s" : "", net->layer[worst].name,
                            worst_x, (unsigned long long)(o->victory ? 10 * o->victory : 1000))
                            != NM_OK)
        return before;
    if (starved)
        (void)nm_ydoc_warn(doc, NULL, "%d distinct layer%s ended by the timeout with fewer than "
                           "1000 valid mappings: raise --timeout (now %llu) or constrain the "
                           "space", starved, starved == 1 ? "" : "s",
                           (unsigned long long)o->timeout);
    return before;
}
