/* common.c — option parsing and diagnostics shared by all subcommands. */
#include <config.h>

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "nestmap/report.h"
#include "nestmap/alloc.h"
#include "nestmap/mapspace.h"
#include "nestmap/job.h"
#include "nestmap/plot.h"
#include "nestmap/pcg32.h"
#include "nestmap/spec.h"

/* The common option `a` names, or 0 when it is none of them. */
static unsigned common_option(const char *a)
{
    if (!strcmp(a, "--json"))
        return NM_OPT_JSON;
    if (!strcmp(a, "--builtin-energy"))
        return NM_OPT_BUILTIN;
    if (!strcmp(a, "--stride-rule") || !strncmp(a, "--stride-rule=", 14))
        return NM_OPT_STRIDE;
    if (!strcmp(a, "-o") || !strcmp(a, "--output") || !strncmp(a, "--output=", 9))
        return NM_OPT_OUT;
    if (!strcmp(a, "--set") || !strncmp(a, "--set=", 6) || !strcmp(a, "--jinja") ||
        !strncmp(a, "--jinja=", 8))
        return NM_OPT_SET; /* a command that reads a design reads templates too */
    if (!strcmp(a, "--threads") || !strncmp(a, "--threads=", 10))
        return NM_OPT_THREADS;
    if (!strcmp(a, "--seed") || !strncmp(a, "--seed=", 7))
        return NM_OPT_SEED;
    return 0;
}

/* The value of option argv[*i]: after '=' in the same word, else the next
 * word (advancing *i); NULL when there is none. */
static const char *option_value(int argc, char **argv, int *i)
{
    const char *eq = strchr(argv[*i], '=');
    if (eq && argv[*i][1] == '-')
        return eq + 1;
    return *i + 1 < argc ? argv[++*i] : NULL;
}

static int usage_error(const char *cmd, const char *usage, int *done, const char *fmt,
                       const char *arg)
{
    fprintf(stderr, "nestmap %s: ", cmd);
    fprintf(stderr, fmt, arg);
    fprintf(stderr, "\n\n%s", usage);
    *done = 1;
    return 2;
}

int nm_cli_parse(int argc, char **argv, const char *cmd, const char *usage, unsigned accept,
                 nm_cli_opts *o, int *done)
{
    memset(o, 0, sizeof *o);
    *done = 0;
    o->files = argv + 1;
    int only_files = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (only_files || a[0] != '-' || !strcmp(a, "-")) {
            o->files[o->nfiles++] = argv[i];
            continue;
        }
        if (!strcmp(a, "--")) {
            only_files = 1;
            continue;
        }
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            fputs(usage, stdout);
            *done = 1;
            return 0;
        }
        if (!strcmp(a, "-q") || !strcmp(a, "--quiet")) {
            o->quiet = 1;
            continue;
        }
        unsigned opt = common_option(a);
        if (!opt)
            return usage_error(cmd, usage, done, "unknown option '%s'", a);
        if (!(accept & opt)) {
            char name[32];
            snprintf(name, sizeof name, "%.*s", (int)strcspn(a, "="), a);
            return usage_error(cmd, usage, done, "'%s' is not an option of this command", name);
        }
        if (opt == NM_OPT_JSON) {
            o->json = 1;
            continue;
        }
        if (opt == NM_OPT_BUILTIN) {
            o->builtin_energy = 1;
            continue;
        }
        const char *v = option_value(argc, argv, &i);
        if (!v)
            return usage_error(cmd, usage, done, "%s needs a value", a);
        if (opt == NM_OPT_STRIDE) {
            if (strcmp(v, "2024") && strcmp(v, "2025"))
                return usage_error(cmd, usage, done, "--stride-rule takes 2025 (Timeloop since "
                                   "January 2025, the default) or 2024 (before), not '%s'", v);
            o->stride_2024 = !strcmp(v, "2024");
        } else if (opt == NM_OPT_OUT) {
            o->outdir = v;
        } else if (opt == NM_OPT_SET && !strncmp(a, "--jinja", 7)) {
            if (o->nvars >= NM_TMPL_MAX_VARS)
                return usage_error(cmd, usage, done, "at most 64 --jinja options%s", "");
            nm_error err;
            nm_error_clear(&err);
            nm_tmpl_var *tv = &o->vars[o->nvars++];
            if (nm_tmpl_var_parse((char *)v, tv, &err) != NM_OK)
                return usage_error(cmd, usage, done, "%s", err.msg);
            for (int k = 0; k + 1 < o->nvars; k++)
                if (!strcmp(o->vars[k].name, tv->name))
                    return usage_error(cmd, usage, done, "--jinja %s is given twice", tv->name);
        } else if (opt == NM_OPT_SET) {
            if (o->nsets >= NM_CLI_MAX_SETS)
                return usage_error(cmd, usage, done, "at most %s --set options",
                                   NM_CLI_MAX_SETS_TEXT);
            nm_error err;
            nm_error_clear(&err);
            if (nm_override_parse(&o->sets[o->nsets++], v, NULL, &err) != NM_OK) {
                nm_cli_error(&err);
                *done = 1;
                return 2;
            }
        } else {
            char *end;
            errno = 0;
            unsigned long long n = strtoull(v, &end, 10);
            if (*end || end == v || errno || v[0] == '-') {
                fprintf(stderr, "nestmap %s: %s needs a non-negative number (got '%s')\n", cmd,
                        a, v);
                *done = 1;
                return 2;
            }
            if (opt == NM_OPT_THREADS) {
                if (n < 1 || n > 1024) {
                    fprintf(stderr, "nestmap %s: --threads must be 1 to 1024\n", cmd);
                    *done = 1;
                    return 2;
                }
                o->threads = (int)n;
            } else {
                o->seed = n;
                o->have_seed = 1;
            }
        }
    }
    if (o->nfiles == 0) { /* every command reads input files */
        fputs(usage, stderr);
        *done = 1;
        return 2;
    }
    return 0;
}

/* Removes argv[i..i+n) (argv keeps its closing NULL). */
static void drop_args(int *argc, char **argv, int i, int n)
{
    memmove(argv + i, argv + i + n, (size_t)(*argc - i - n + 1) * sizeof *argv);
    *argc -= n;
}

int nm_cli_take_flag(int *argc, char **argv, const char *name)
{
    int found = 0;
    for (int i = 1; i < *argc && strcmp(argv[i], "--");) {
        if (!strcmp(argv[i], name)) {
            drop_args(argc, argv, i, 1);
            found = 1;
        } else {
            i++;
        }
    }
    return found;
}

const char *nm_cli_take(int *argc, char **argv, const char *name, int *missing)
{
    size_t len = strlen(name);
    for (int i = 1; i < *argc; i++) {
        if (!strcmp(argv[i], "--"))
            break;
        const char *value = NULL;
        int used = 0;
        if (!strcmp(argv[i], name)) {
            if (i + 1 >= *argc) {
                *missing = 1;
                return NULL;
            }
            value = argv[i + 1];
            used = 2;
        } else if (!strncmp(argv[i], name, len) && argv[i][len] == '=') {
            value = argv[i] + len + 1;
            used = 1;
        } else {
            continue;
        }
        drop_args(argc, argv, i, used);
        return value;
    }
    return NULL;
}

int nm_cli_count(const char *name, const char *text, uint64_t *out)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull(text, &end, 10);
    if (!*text || *end || errno || text[0] == '-') {
        fprintf(stderr, "nestmap: %s needs a non-negative integer (got '%s')\n", name, text);
        return 0;
    }
    *out = v;
    return 1;
}

void nm_cli_error(const nm_error *err)
{
    nm_job_print_error(stderr, err);
}

void nm_cli_warnings(const nm_ydoc *doc, int quiet, size_t first)
{
    if (!quiet)
        nm_job_print_warnings(stderr, doc, first);
}

FILE *nm_cli_json_begin(nm_cli_json *js)
{
    js->buf = NULL;
    js->len = 0;
    js->f = open_memstream(&js->buf, &js->len);
    return js->f ? js->f : stdout;
}

int nm_cli_json_end(nm_cli_json *js, const nm_ydoc *doc)
{
    if (!js->f)
        return 1; /* written straight to stdout, without warnings */
    if (fclose(js->f) != 0 || !js->buf) {
        free(js->buf);
        fprintf(stderr, "nestmap: out of memory for the JSON output\n");
        return 0;
    }
    nm_job_json_warnings(stdout, js->buf, js->len, doc);
    free(js->buf);
    return fflush(stdout) == 0;
}

double nm_cli_wall(void)
{
    return nm_job_wall();
}

int nm_cli_mkdir(const char *dir)
{
    return nm_job_make_dir(dir, stderr);
}

int nm_cmd_unimplemented(int argc, char **argv)
{
    (void)argc;
    const char *name = argv[0];
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            for (const nm_command *c = nm_commands; c->name; c++)
                if (!strcmp(c->name, name))
                    printf("usage: nestmap %s FILES...\n\n%s\n\nThis command is not yet "
                           "implemented in this version of nestmap.\n", name, c->summary);
            return 0;
        }
    }
    fprintf(stderr, "nestmap %s: not yet implemented in this version of nestmap "
            "(see 'nestmap --help' for what is)\n", name);
    return 2;
}

int nm_cli_load(const nm_cli_opts *o, unsigned need, nm_spec *spec)
{
    nm_error err;
    nm_error_clear(&err);
    nm_job_input in = {(const char *const *)o->files, (size_t)o->nfiles, o->sets,
                       (size_t)o->nsets, o->vars, (size_t)o->nvars, o->builtin_energy,
                       o->stride_2024};
    nm_status st = nm_job_load(spec, &in, need, &err);
    nm_cli_warnings(&spec->doc, o->quiet, 0);
    if (st == NM_OK)
        return 0;
    nm_cli_error(&err);
    nm_spec_fini(spec);
    return nm_status_exit_code(st);
}

nm_mapspace *nm_cli_mapspace(const nm_spec *spec, int *rc)
{
    nm_error err;
    nm_error_clear(&err);
    nm_mapspace *ms = nm_calloc(1, sizeof *ms);
    if (!ms) {
        fprintf(stderr, "nestmap: out of memory\n");
        *rc = 2;
        return NULL;
    }
    nm_status st = nm_mapspace_init(ms, &spec->arch, &spec->wl, spec->constraints,
                                    spec->constraints2, &err);
    if (st == NM_OK && spec->imperfect)
        st = nm_mapspace_enable_imperfect(ms, &err);
    if (st != NM_OK) {
        nm_cli_error(&err);
        nm_free(ms);
        *rc = nm_status_exit_code(st);
        return NULL;
    }
    return ms;
}

/* Set by SIGINT or SIGTERM (`timeout`, a batch scheduler's kill), and the
 * handlers they replaced: the program's only globals, since a signal
 * handler can reach nothing else. */
static volatile sig_atomic_t interrupted;
static struct sigaction old_sigint, old_sigterm;

static void on_sigint(int sig)
{
    (void)sig;
    interrupted = 1;
}

volatile sig_atomic_t *nm_cli_catch_sigint(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_sigint;
    interrupted = 0;
    sigaction(SIGINT, &sa, &old_sigint);
    sigaction(SIGTERM, &sa, &old_sigterm);
    return &interrupted;
}

void nm_cli_release_sigint(void)
{
    sigaction(SIGINT, &old_sigint, NULL);
    sigaction(SIGTERM, &old_sigterm, NULL);
}

FILE *nm_cli_open_out(const char *dir, const char *name, char *path, size_t size)
{
    snprintf(path, size, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    if (!f)
        perror(path);
    return f;
}

int nm_cli_close_out(FILE *f, const char *path)
{
    if (fclose(f) != 0) {
        perror(path);
        return 0;
    }
    return 1;
}

int nm_cli_write_tables(const char *dir, const char *timeloop, const nm_spec *spec,
                        const nm_stats *st, const nm_nest *nest, const nm_mapping *map)
{
    char name[256], path[4096];
    for (int k = 0; k < 5; k++) {
        static const char *const what[] = {"ERT.yaml", "ART.yaml", "stats.txt", "map.txt",
                                           "timeloop-input.yaml"};
        if ((k == 2 || k == 3) && !(st && timeloop))
            continue;
        if (k == 4 && !(map && timeloop)) /* the whole input, for timeloop-model */
            continue;
        if (timeloop && k < 4)
            snprintf(name, sizeof name, "%s.%s", timeloop, what[k]);
        else
            snprintf(name, sizeof name, "%s", what[k]);
        FILE *f = nm_cli_open_out(dir, name, path, sizeof path);
        if (!f)
            return 0;
        if (k == 0)
            nm_report_ert(f, &spec->arch);
        else if (k == 1)
            nm_report_art(f, &spec->arch);
        else if (k == 2)
            nm_report_timeloop_stats(f, &spec->arch, &spec->wl, st);
        else if (k == 3)
            nm_report_loopnest(f, &spec->arch, &spec->wl, nest, map, st);
        else
            nm_report_timeloop_input(f, &spec->arch, &spec->wl, map);
        if (!nm_cli_close_out(f, path))
            return 0;
    }
    return 1;
}

int nm_cli_begin(int argc, char **argv, const char *cmd, const char *usage, unsigned accept,
                 unsigned need, nm_cli_opts *o, nm_spec *spec)
{
    int done;
    int rc = nm_cli_parse(argc, argv, cmd, usage, accept, o, &done);
    if (done)
        return rc;
    if ((rc = nm_cli_load(o, need, spec)) != 0)
        return rc;
    return -1;
}

int nm_cli_teach_take(int *argc, char **argv, const char *cmd, nm_cli_teach *t)
{
    t->loops = nm_cli_take_flag(argc, argv, "--loops");
    t->explain = nm_cli_take_flag(argc, argv, "--explain");
    if ((t->loops || t->explain)) {
        for (int i = 1; i < *argc; i++)
            if (!strcmp(argv[i], "--json")) {
                fprintf(stderr, "nestmap %s: --loops and --explain print text; leave out "
                                "--json\n", cmd);
                return 0;
            }
    }
    return 1;
}

int nm_cli_teach_print(const nm_cli_teach *t, const nm_spec *spec, const nm_mapping *m,
                 const nm_stats *st)
{
    static nm_nest nest;
    nm_nest_build(&nest, m, &spec->arch, &spec->wl);
    if (t->loops)
        nm_report_loops(stdout, &spec->arch, &spec->wl, &nest, m);
    if (t->explain) {
        nm_model mdl;
        nm_error err;
        nm_error_clear(&err);
        if (nm_model_init(&mdl, &spec->arch, &spec->wl, &err) != NM_OK) {
            nm_cli_error(&err);
            return 0;
        }
        if (t->loops)
            fputc('\n', stdout);
        nm_report_explain(stdout, &mdl, m, &nest, st);
        nm_model_fini(&mdl);
    }
    return 1;
}

nm_mapspace *nm_cli_sized_mapspace(const nm_cli_opts *o, int imperfect, nm_spec *spec,
                                   double *log_size, int *exact, int *rc)
{
    if ((*rc = nm_cli_load(o, NM_NEED_ARCH | NM_NEED_PROBLEM, spec)) != 0)
        return NULL;
    spec->imperfect |= imperfect;
    nm_mapspace *ms = nm_cli_mapspace(spec, rc);
    if (!ms) {
        nm_spec_fini(spec);
        return NULL;
    }
    nm_pcg32 rng;
    nm_pcg32_seed(&rng, o->seed, 1);
    *log_size = nm_mapspace_pruned_log10(ms, 2000000, &rng, exact);
    return ms;
}

int nm_cli_gnuplot(const char *cmd, const char *dir, const char *const *names, int n)
{
    nm_error err;
    nm_error_clear(&err);
    if (nm_plot_render(dir, names, n, &err) == NM_OK)
        return 1;
    fprintf(stderr, "nestmap %s: %s\n", cmd, err.msg);
    return 0;
}

int nm_cli_chain_flags_ok(const char *cmd, int diagram, int tl_names, const nm_cli_teach *t)
{
    if (!diagram && !tl_names && !t->loops && !t->explain)
        return 1;
    fprintf(stderr, "nestmap %s: --diagram, --timeloop-names, --loops and --explain take one "
            "operation, not a chain\n", cmd);
    return 0;
}
