/* search_opts.c — the search options `map` and `network` share: taken from
 * the command line before the input is read, applied over `mapper:` after. */
#include <config.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "nestmap/job.h"
#include "nestmap/search.h"
#include "nestmap/spec.h"

static const char *const count_names[NM_CLI_SEARCH_COUNTS] = {
    "--max-evals", "--search-size", "--victory", "--timeout", "--top", "--time-limit", "--lanes",
    "--effort"};

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

void nm_cli_search_names(nm_cli_search *s, const nm_cli_opts *co, const char **name,
                         const char **value, int *n)
{
    *n = 0;
    if (s->algorithm)
        name[*n] = "algorithm", value[(*n)++] = s->algorithm;
    if (s->metric)
        name[*n] = "metric", value[(*n)++] = s->metric;
    for (int i = 0; i < NM_CLI_SEARCH_COUNTS; i++)
        if (s->count[i])
            name[*n] = count_names[i] + 2, value[(*n)++] = s->count[i];
    if (s->no_refine)
        name[*n] = "no-refine", value[(*n)++] = NULL;
    if (s->imperfect)
        name[*n] = "imperfect", value[(*n)++] = NULL;
    if (co->have_seed) {
        snprintf(s->seed, sizeof s->seed, "%llu", (unsigned long long)co->seed);
        name[*n] = "seed", value[(*n)++] = s->seed;
    }
}

int nm_cli_search_apply(nm_cli_search *s, const nm_cli_opts *co, const char *cmd,
                        nm_search_opts *o)
{
    const char *name[NM_CLI_SEARCH_NAMES], *value[NM_CLI_SEARCH_NAMES];
    int n;
    nm_cli_search_names(s, co, name, value, &n);
    for (int i = 0; i < n; i++) {
        nm_error err;
        nm_error_clear(&err);
        if (nm_job_search_option(o, name[i], value[i], &err) != NM_OK) {
            fprintf(stderr, "nestmap %s: %s\n", cmd, err.msg);
            return 0;
        }
    }
    if (co->threads)
        o->threads = co->threads;
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
