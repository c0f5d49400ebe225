/* job.h — the work of a command as one library call, so that the command
 * line and the Python module run the same code: load the input files (with
 * --set overrides and --jinja variables), evaluate the mapping, search one
 * layer, map a network; set a search option by its command-line name; add
 * the search's advice to the document's warnings; and append those warnings
 * to a JSON object as its last key.  Nothing here prints.
 */
#ifndef NESTMAP_JOB_H
#define NESTMAP_JOB_H

#include <stddef.h>
#include <stdio.h>

#include "nestmap/error.h"
#include "nestmap/model.h"
#include "nestmap/nest.h"
#include "nestmap/network.h"
#include "nestmap/noc.h"
#include "nestmap/search.h"
#include "nestmap/spec.h"

/* What to load: input files (names under the design and workload folders
 * are found as path.h says; "-" is standard input), the overrides and
 * template variables, and the two reading rules a command can choose. */
typedef struct nm_job_input {
    const char *const *files;
    size_t nfiles;
    const struct nm_override *sets;
    size_t nsets;
    const nm_tmpl_var *vars;
    size_t nvars;
    int builtin_energy; /* ignore the input's ERT/ART */
    int stride_2024;    /* Timeloop's tile-keeping rule before 2025 */
} nm_job_input;

/* Loads the input into *spec, parsing the sections in `need` (NM_NEED_*).
 * The spec's warnings are in spec->doc whether or not it fails; release it
 * with nm_spec_fini in both cases. */
nm_status nm_job_load(nm_spec *spec, const nm_job_input *in, unsigned need, nm_error *err);

/* Writes "FILE:LINE:COL: error: MESSAGE" (the place as far as known) into
 * buf; the source line is the printer's business. */
void nm_job_error_line(char *buf, size_t size, const nm_error *err);

/* The same as a reason in a table: no "error:", no "nestmap:", on one line. */
void nm_job_error_reason(char *buf, size_t size, const nm_error *err);

/* Prints err to f as the command line shows it: the line above, then the
 * source line it points into with a caret under the column. */
void nm_job_print_error(FILE *f, const nm_error *err);

/* Prints doc's warnings from the first-th on to f, one a line
 * ("FILE:LINE:COL: warning: ..."). */
void nm_job_print_warnings(FILE *f, const nm_ydoc *doc, size_t first);

/* Creates directory dir and its parents, as mkdir -p does. */
nm_status nm_job_mkdirs(const char *dir, nm_error *err);

/* The same, saying on diag why it could not ("nestmap: cannot create
 * directory ..."); 1 when dir is there. */
int nm_job_make_dir(const char *dir, FILE *diag);

/* A monotonic clock, in seconds. */
double nm_job_wall(void);

/* Sets the search option called `name` on the command line, without its
 * dashes: algorithm, metric (a comma-separated priority list), max-evals,
 * search-size, victory, timeout, top, time-limit, lanes, threads, seed
 * (each with a value), imperfect and no-refine (flags: value NULL or
 * "true"/"false").  The message of a bad value names the option. */
nm_status nm_job_search_option(nm_search_opts *o, const char *name, const char *value,
                               nm_error *err);

/* The default that decides cycles silently, said aloud: one warning added
 * to doc naming the design's levels that give no bandwidth (and so have no
 * limit), with how to give one or to write `unlimited`.  The jobs below
 * and a sweep call it once per design. */
void nm_job_bandwidth_warn(nm_ydoc *doc, const nm_arch *arch);

/* A mapping evaluated (`model`): its stats and loop nest, whether it is
 * valid, and the constraint it breaks ("" when none; then it was not
 * evaluated).  Large: allocate it. */
typedef struct nm_job_model_out {
    nm_stats st;
    nm_nest nest;
    nm_noc_stats noc;
    nm_sparse_detail spd; /* metadata per rank (representation formats) */
    int valid;
    char broken[1024];
} nm_job_model_out;

/* Checks spec->map against the input's constraints and evaluates it.
 * Fails only on bad input; an invalid mapping is out->valid == 0. */
nm_status nm_job_model(nm_spec *spec, nm_job_model_out *out, nm_error *err);

/* What the reports print of a best mapping besides its stats: what each
 * network carries, and each format's metadata per rank. */
typedef struct nm_job_detail {
    nm_noc_stats noc;
    nm_sparse_detail spd;
} nm_job_detail;

/* Searches spec's constrained mapspace (residual factors too when spec or o
 * asks) with o, then adds the advice on its result to spec->doc (see
 * nm_job_search_warn) and, when the design has a network or formats, what
 * they carry at the best mapping (into *detail, may be NULL; res->best_stats
 * points at it).  res is released by nm_search_result_fini. */
nm_status nm_job_map(nm_spec *spec, const nm_search_opts *o, nm_search_result *res,
                     nm_job_detail *detail, nm_error *err);

/* Parses spec's `network:` (an error when there is none), warning about a
 * `problem:` or `mapping:` beside it, which a network run does not use. */
nm_status nm_job_network_parse(nm_spec *spec, nm_network *net, nm_error *err);

/* Maps every distinct layer of net (nm_network_map_report; `done` may be
 * NULL) and adds the advice on the results to spec->doc.  *out is
 * allocated here; release it with nm_network_results_fini and nm_free,
 * also on failure (it may then be NULL). */
nm_status nm_job_network_map(nm_spec *spec, const nm_network *net, const nm_search_opts *o,
                             nm_layer_result **out, void (*done)(void *, int, int),
                             void *ctx, nm_error *err);

/* The advice on a search's result, as warnings added to doc: far above the
 * roofline bound, or ended by its timeout with few valid mappings; each
 * names the option that would help.  Returns how many warnings doc held
 * before, so that a printer shows only these. */
size_t nm_job_search_warn(nm_ydoc *doc, const nm_arch *arch, const nm_workload *wl,
                          const nm_search_result *res, const nm_search_opts *o);

/* The same over a network's distinct layers, one warning of each kind. */
size_t nm_job_network_warn(nm_ydoc *doc, const nm_arch *arch, const nm_network *net,
                           const nm_layer_result *out, const nm_search_opts *o);

/* Writes the JSON object text[0..len) to f with "warnings" added as its last
 * key: doc's warnings as [{file, line, col, message}].  Returns 0 when the
 * text holds no object (it is then written as it is). */
int nm_job_json_warnings(FILE *f, const char *text, size_t len, const nm_ydoc *doc);

#endif
