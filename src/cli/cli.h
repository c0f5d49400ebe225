/* cli.h — shared pieces of the nestmap command line: option parsing, error
 * and warning printing.  Only the CLI prints or exits. */
#ifndef NESTMAP_CLI_H
#define NESTMAP_CLI_H

#include <signal.h>
#include <stdint.h>
#include <stdio.h>

#include "nestmap/error.h"
#include "nestmap/model.h"
#include "nestmap/override.h"
#include "nestmap/spec.h"
#include "nestmap/yaml.h"

#define NM_CLI_MAX_SETS 64
#define NM_CLI_MAX_SETS_TEXT "64"
#define NM_CLI_SET_USAGE \
    "  --set C.A=V       change attribute A of component or subtree C of the design\n" \
    "                    (repeatable; e.g. GlobalBuffer.depth=64Ki, DRAM.type=HBM2,\n" \
    "                    PE.meshX=16 resizes the PE array); problem.NAME=V sets a\n" \
    "                    dimension or shorthand key of the workload, in every layer\n" \
    "                    of a network (problem.N=16: a batch of 16);\n" \
    "                    problem.densities.T=D a density; sparse.LEVEL.action=,\n" \
    "                    sparse.LEVEL.compute=gating|skipping and\n" \
    "                    sparse.LEVEL.format.T=UOP,CP|none the sparse options\n" \
    "  --jinja NAME=VALUE\n" \
    "                    a variable for the Jinja2 templates among the input files,\n" \
    "                    as Timeloop's front end takes jinja_parse_data (repeatable;\n" \
    "                    e.g. --jinja architecture=eyeriss_like for top.yaml.jinja2)\n"

#define NM_CLI_STRIDE_USAGE \
    "  --stride-rule Y   count as Timeloop of year Y does: 2025 (the default, Timeloop\n" \
    "                    since January 2025) or 2024 (before: a tile that stood still\n" \
    "                    refetches whole when it moves on; reference outputs written\n" \
    "                    then, as the public exercises' were, need it)\n"

typedef struct nm_cli_opts {
    const char *outdir; /* -o DIR */
    int json;           /* --json */
    int quiet;          /* --quiet */
    int builtin_energy; /* --builtin-energy: ignore the input's ERT/ART */
    int stride_2024;    /* --stride-rule 2024: Timeloop's tile-keeping rule before 2025 */
    int threads;        /* --threads N (0: default) */
    uint64_t seed;      /* --seed S */
    int have_seed;
    char **files;       /* positional arguments */
    int nfiles;
    nm_override sets[NM_CLI_MAX_SETS]; /* --set C.A=V, in order */
    int nsets;
    nm_tmpl_var vars[NM_TMPL_MAX_VARS]; /* --jinja NAME=VALUE, pointing into argv */
    int nvars;
} nm_cli_opts;

typedef struct nm_command {
    const char *name;
    int (*run)(int argc, char **argv);
    const char *summary; /* one line for `nestmap --help` */
} nm_command;

/* The common options a command honours (nm_cli_parse's `accept`); -q and
 * --help are always accepted.  Any other option is a usage error, so a
 * script never has an option silently ignored. */
enum {
    NM_OPT_OUT = 1u << 0,     /* -o DIR */
    NM_OPT_JSON = 1u << 1,    /* --json */
    NM_OPT_THREADS = 1u << 2, /* --threads N */
    NM_OPT_SEED = 1u << 3,    /* --seed S */
    NM_OPT_SET = 1u << 4,     /* --set C.A=V */
    NM_OPT_BUILTIN = 1u << 5, /* --builtin-energy */
    NM_OPT_STRIDE = 1u << 6,  /* --stride-rule YEAR (model and map) */
    NM_OPT_SEARCH = NM_OPT_OUT | NM_OPT_JSON | NM_OPT_THREADS | NM_OPT_SEED | NM_OPT_SET |
                    NM_OPT_BUILTIN /* map, network, sweep */
};

/* Parses the common flags of a subcommand (`cmd`, its `usage`, the options
 * in `accept`).  Returns 0 to go on, or an exit code (0 after --help, 2
 * after a usage error or when no file is named) with *done set. */
int nm_cli_parse(int argc, char **argv, const char *cmd, const char *usage, unsigned accept,
                 nm_cli_opts *o, int *done);

/* Removes "NAME VALUE" or "NAME=VALUE" from argv (updating *argc) and
 * returns VALUE, or NULL when absent.  Sets *missing when NAME has no value. */
const char *nm_cli_take(int *argc, char **argv, const char *name, int *missing);

/* Removes every NAME (a flag without a value) from argv, updating *argc;
 * returns whether it was there. */
int nm_cli_take_flag(int *argc, char **argv, const char *name);

/* Parses a non-negative count for option `name`; prints an error and
 * returns 0 on failure. */
int nm_cli_count(const char *name, const char *text, uint64_t *out);

struct nm_spec;
struct nm_mapspace;

/* Loads the input files into *spec (parsing the sections in `need`),
 * printing warnings and any error.  Returns 0, or the exit code to return
 * (the spec is then already released). */
int nm_cli_load(const nm_cli_opts *o, unsigned need, struct nm_spec *spec);

/* nm_cli_parse, then nm_cli_load: returns -1 to go on, or the exit code to
 * return. */
int nm_cli_begin(int argc, char **argv, const char *cmd, const char *usage, unsigned accept,
                 unsigned need, nm_cli_opts *o, struct nm_spec *spec);

/* Builds the constrained mapspace of a loaded spec (heap; free with
 * nm_free).  Prints the error and returns NULL on failure, setting *rc. */
struct nm_mapspace *nm_cli_mapspace(const struct nm_spec *spec, int *rc);

/* nm_cli_load (architecture and problem), then the constrained mapspace
 * (residual factors too when `imperfect`) and its size once duplicates are
 * pruned (log10 in *log_size; *exact when counted, not estimated from
 * samples drawn with `seed`).  Returns NULL with *rc set on failure (the
 * spec then released). */
struct nm_mapspace *nm_cli_sized_mapspace(const nm_cli_opts *o, int imperfect,
                                          struct nm_spec *spec, double *log_size, int *exact,
                                          int *rc);

/* Prints FILE:LINE:COL: error: message, the source line and a caret. */
void nm_cli_error(const nm_error *err);

/* Prints the document's warnings from the first-th on, unless quiet. */
void nm_cli_warnings(const nm_ydoc *doc, int quiet, size_t first);

/* --json output: the command writes its JSON object to the stream that
 * nm_cli_json_begin returns (stdout when it cannot buffer); nm_cli_json_end
 * adds "warnings": the document's warnings as an array of {file, line,
 * col, message} (there whether or not -q hid them on stderr) as the
 * object's last key, and prints it on stdout.  Returns 0 after a write
 * error. */
typedef struct nm_cli_json {
    FILE *f;
    char *buf;
    size_t len;
} nm_cli_json;
FILE *nm_cli_json_begin(nm_cli_json *js);
int nm_cli_json_end(nm_cli_json *js, const nm_ydoc *doc);

/* Creates DIR and its parents if needed; prints an error and returns 0 on failure. */
int nm_cli_mkdir(const char *dir);

/* Opens DIR/NAME for writing (its path in path[size]); prints an error and
 * returns NULL on failure.  nm_cli_close_out closes it, printing an error
 * and returning 0 if the write failed. */
FILE *nm_cli_open_out(const char *dir, const char *name, char *path, size_t size);
int nm_cli_close_out(FILE *f, const char *path);

/* Writes what -o holds beside the stats of one mapping: the ERT and ART in
 * use (PREFIX + "ERT.yaml", "ART.yaml"), and, when `timeloop` names the
 * program ("timeloop-model", "timeloop-mapper"), the files that program
 * writes: PROG.stats.txt in Timeloop's layout, PROG.map.txt (the loop nest)
 * and PROG.ERT.yaml / PROG.ART.yaml, and timeloop-input.yaml (the design,
 * problem, mapping and tables as one input timeloop-model reads).
 * st/nest/map may be NULL when there is no valid mapping (then only the
 * tables).  Returns 0 after printing an error. */
int nm_cli_write_tables(const char *dir, const char *timeloop, const nm_spec *spec,
                        const nm_stats *st, const nm_nest *nest, const nm_mapping *map);

/* The search options of `map` and `network` (usage lines in
 * NM_CLI_SEARCH_USAGE).  Take them before nm_cli_parse; returns 0 when one
 * is missing its value.  Apply them over `mapper:` once the input is read;
 * returns 0 after printing an error. */
#define NM_CLI_SEARCH_COUNTS 8
typedef struct nm_cli_search {
    const char *algorithm, *metric;
    const char *count[NM_CLI_SEARCH_COUNTS];
    int imperfect, no_refine;
    char seed[24];      /* --seed's value as text, for nm_cli_search_names */
} nm_cli_search;
/* The options given (and --seed), by their names without dashes, as
 * job.h's nm_job_search_option takes them: *n pairs, at most
 * NM_CLI_SEARCH_NAMES, pointing into s and argv. */
#define NM_CLI_SEARCH_NAMES (NM_CLI_SEARCH_COUNTS + 5)
void nm_cli_search_names(nm_cli_search *s, const nm_cli_opts *co, const char **name,
                         const char **value, int *n);
struct nm_search_opts;
#define NM_CLI_SEARCH_USAGE \
    "  --algorithm A     exhaustive, random, random_pruned, hybrid, optimal\n" \
    "  --metric M[,M]    energy, delay, edp, ed2p, last_level_accesses (prioritized)\n" \
    "  --threads N       worker threads; the result does not depend on N\n" \
    "  --seed S          random seed (default 0)\n" \
    "  --max-evals N     stop after N candidates\n" \
    "  --search-size N   stop after N valid mappings\n" \
    "  --victory N       end a lane after N valid mappings in a row that do not\n" \
    "                    beat its best (Timeloop's victory_condition, per thread)\n" \
    "  --timeout N       end a lane after N invalid candidates in a row\n" \
    "  --lanes N         independent lanes of the random strategies (default 128);\n" \
    "                    the search ends when every lane has ended\n" \
    "  --effort X        the random strategies' budget scaled by X (1: the default;\n" \
    "                    0.05: a quick look): victory and the local search's\n" \
    "                    evaluations\n" \
    "  --time-limit S    stop after S seconds of wall time\n" \
    "  --top K           keep the K best\n" \
    "  --imperfect       search residual factors too: tiles that do not divide the\n" \
    "                    bound and fan-outs whose last instance uses fewer PEs\n" \
    "                    (as mapspace: {template: ruby}); the default search\n" \
    "                    then climbs on from its result, never ending worse\n" \
    "  --no-refine       random strategies as Timeloop runs them: uniform draws\n" \
    "                    only (no fan-outs-first draws), and no local search (hill\n" \
    "                    climbing and kicks) from the best found afterwards\n"
int nm_cli_search_take(int *argc, char **argv, nm_cli_search *s);
int nm_cli_search_apply(nm_cli_search *s, const nm_cli_opts *co, const char *cmd,
                        struct nm_search_opts *o);

/* All of the above for a command that searches: parses argv, loads the
 * input (sections in `need`) into *spec and the search options into *o.
 * Returns -1 to go on, or the exit code to return (spec then released). */
int nm_cli_search_setup(int argc, char **argv, const char *cmd, const char *usage,
                        unsigned need, nm_cli_opts *co, struct nm_spec *spec,
                        struct nm_search_opts *o);

/* Ctrl-C (SIGINT) or SIGTERM sets the returned flag (a search's stop) until
 * released. */
volatile sig_atomic_t *nm_cli_catch_sigint(void);
void nm_cli_release_sigint(void);

/* After a search run under nm_cli_catch_sigint: releases Ctrl-C, ends the
 * progress line (tty), and prints the error of a failed run.  Returns 0
 * when status is NM_OK, else the exit code. */
int nm_cli_search_end(nm_status status, int tty, const nm_error *err);

/* --loops and --explain (model and map): the mapping as the nested loops of
 * a lecture, and in words.  nm_cli_teach_take removes them from argv;
 * returns 0 after printing a usage error (with --json: they are text).
 * nm_cli_teach_print prints what was asked for m, whose stats are st (valid or
 * not); returns 0 when out of memory. */
#define NM_CLI_TEACH_USAGE \
    "  --loops           print the mapping as nested loops (a level's loops under a\n" \
    "                    comment naming it, parallel_for for spatial loops)\n" \
    "  --explain         say why the mapping is invalid and which factor to move, or\n" \
    "                    where a valid one loses utilization and spends energy\n" \
    "                    (with --loops or --explain, only those are printed)\n"
typedef struct nm_cli_teach {
    int loops, explain;
} nm_cli_teach;
int nm_cli_teach_take(int *argc, char **argv, const char *cmd, nm_cli_teach *t);
int nm_cli_teach_print(const nm_cli_teach *t, const nm_spec *spec, const nm_mapping *m,
                 const nm_stats *st);
/* A chain of operations (fusion.h) takes none of --diagram,
 * --timeloop-names, --loops, --explain: 1 when none is given, else 0 after
 * saying so. */
int nm_cli_chain_flags_ok(const char *cmd, int diagram, int tl_names, const nm_cli_teach *t);

/* Plots (plot.h): renders dir's NAME.gp scripts, printing which failed
 * (0 then). */
int nm_cli_gnuplot(const char *cmd, const char *dir, const char *const *names, int n);

/* The mapping diagram (diagram.c) of mapping m with stats st: dir/mapping.dat
 * and dir/mapping.gp, rendered to mapping.png and mapping.svg when gnuplot
 * is installed.  0 after printing why it could not be written. */
int nm_cli_diagram(const char *cmd, const char *dir, const nm_spec *spec, const nm_mapping *m,
                   const nm_stats *st);

/* Wall-clock seconds from an arbitrary origin (monotonic). */
double nm_cli_wall(void);

/* Subcommands. */
int nm_cmd_model(int argc, char **argv);
int nm_cmd_map(int argc, char **argv);
int nm_cmd_mapspace(int argc, char **argv);
int nm_cmd_energy(int argc, char **argv);
int nm_cmd_bound(int argc, char **argv);
int nm_cmd_network(int argc, char **argv);
int nm_cmd_sweep(int argc, char **argv);
int nm_cmd_compare(int argc, char **argv);
int nm_cmd_census(int argc, char **argv);
int nm_cmd_unimplemented(int argc, char **argv);

extern const nm_command nm_commands[];

#endif
