/* template.h — the Jinja2 templates Timeloop's front end renders every
 * input file through (timeloopfe and Accelergy), before the text is YAML.
 *
 * The stage sits between reading a file and parsing its YAML (yaml.c): it
 * turns a template into text and a line map, so that a YAML error, or any
 * later error located at a node, points at the template line the text came
 * from, and a template error points into the template itself.
 *
 * The language is the part of Jinja2 that Timeloop users' files use:
 *   {{ expr }}, {% if %}/{% elif %}/{% else %}/{% endif %},
 *   {% for x in expr %}...{% else %}...{% endfor %} (loop.index, loop.index0,
 *   loop.first, loop.last, loop.length), {% set x = expr %},
 *   {% include 'file' %}, {# comments #}, and '-' whitespace control;
 * expressions with strings, numbers, True/False/None, lists, variables,
 * `~ + - * / // %`, comparisons, `in`, `and/or/not`, `a if c else b`,
 * `is [not] defined/none/number/string`, filters (default/d, int, float,
 * string, lower, upper, trim, length/count, join, replace, first, last,
 * abs, round, list) and the functions Accelergy gives its templates:
 * cwd(), path_exists(p), find_path(p), add_to_path(p), include_text(p),
 * include(p, key), include_all(glob, key), range(), setenv(k, v).
 * An undefined variable is an error where it is used (Jinja2's
 * StrictUndefined, as Accelergy renders), except under `default` and
 * `is defined`.
 *
 * include(p, key) and include_all(glob, key) put a YAML subtree of other
 * files in place: the template cannot parse YAML, so it asks its caller
 * (nm_tmpl_hooks) for an id and writes the tag `!nm_include ID`, which the
 * YAML stage replaces by that subtree.
 */
#ifndef NESTMAP_TEMPLATE_H
#define NESTMAP_TEMPLATE_H

#include <stddef.h>

#include "nestmap/alloc.h"
#include "nestmap/error.h"

#define NM_TMPL_MAX_VARS 64

/* A variable handed to every template (`--jinja NAME=VALUE`): text that
 * reads as a number, True, False or None becomes one, as Python would
 * have passed it. */
typedef struct nm_tmpl_var {
    const char *name;
    const char *value;
} nm_tmpl_var;

/* Where an output line came from. */
typedef struct nm_tmpl_line {
    const char *file; /* in the arena given to nm_tmpl_render */
    int line;         /* 1-based */
} nm_tmpl_line;

/* The rendered text (NUL-terminated) and, for each of its lines, the
 * template line it came from.  Both nm_malloc'd; nm_tmpl_out_fini. */
typedef struct nm_tmpl_out {
    char *text;
    size_t len;
    nm_tmpl_line *lines;
    size_t nlines;
} nm_tmpl_out;

/* What the caller does for include()/include_all(): load each of
 * paths[0..n) (absolute) as YAML, take the subtree at the dotted key ("" for
 * the whole file), join them (lists concatenate), and set *id to a number
 * the YAML stage will know.  Errors are located at (file, line, col), the
 * call in the template.  include_dirs[0..ndirs) are the directories
 * add_to_path() added, for the included files' own templates. */
typedef struct nm_tmpl_hooks {
    void *ctx;
    nm_status (*include)(void *ctx, const char *const *paths, size_t n, const char *key,
                         const char *const *include_dirs, size_t ndirs, const char *file,
                         int line, int col, int *id, nm_error *err);
} nm_tmpl_hooks;

/* Whether text looks like a template (holds "{{", "{%" or "{#"), so that
 * plain YAML skips the stage. */
int nm_tmpl_is_template(const char *text, size_t len);

/* Renders the template text[0..len) read from file `path` (absolute or
 * relative to the working directory) with vars[0..nvars) and the include
 * directories dirs[0..ndirs).  With files 0 (a text not read from a file,
 * `path` only its name) the functions that read files are errors.  A
 * rendering is bounded (loops, steps, output), so no template runs away.
 * Strings that must outlive the call (file names in the line map) go to
 * `arena`.  On failure *err is located in the template and out is
 * released. */
nm_status nm_tmpl_render(const char *path, int files, const char *text, size_t len,
                         const nm_tmpl_var *vars, size_t nvars, const char *const *dirs,
                         size_t ndirs, const nm_tmpl_hooks *hooks, nm_arena *arena,
                         nm_tmpl_out *out, nm_error *err);

/* Releases out; safe on a zeroed one. */
void nm_tmpl_out_fini(nm_tmpl_out *out);

/* Parses "NAME=VALUE" (as --jinja takes it) into *v, pointing into text.
 * NM_ERR_INPUT with a message when NAME is not a name. */
nm_status nm_tmpl_var_parse(char *text, nm_tmpl_var *v, nm_error *err);

#endif
