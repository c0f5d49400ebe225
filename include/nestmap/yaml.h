/* yaml.h — YAML documents with locations, merged across files.
 *
 * nestmap loads each input file with libyaml's document API and converts it
 * into a small tree of nm_ynode that keeps every node's file:line:col (1-based)
 * and its explicit tag (e.g. "!Component").  The top-level keys of all files
 * are merged into one mapping, as Timeloop does: a later file's key replaces
 * an earlier one's, and a warning says so.
 *
 * Typed getters fail with an error located at the node.  Keys compare with
 * '-' and '_' treated alike, since Timeloop's files use both spellings.
 *
 * Ownership: every node belongs to its nm_ydoc and lives until nm_ydoc_fini.
 */
#ifndef NESTMAP_YAML_H
#define NESTMAP_YAML_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "nestmap/alloc.h"
#include "nestmap/error.h"
#include "nestmap/template.h"

typedef enum nm_ykind { NM_Y_SCALAR, NM_Y_SEQ, NM_Y_MAP } nm_ykind;

typedef struct nm_ynode {
    nm_ykind kind;
    const char *file;  /* path of the file it came from */
    int line, col;     /* 1-based */
    const char *tag;   /* explicit application tag ("!Component"), else NULL */
    const char *str;   /* scalar text (NUL-terminated), "" for others */
    size_t len;        /* scalar length */
    int quoted;        /* scalar was written quoted */
    size_t n;          /* items in a sequence, pairs in a mapping */
    struct nm_ynode **items; /* sequence: n items; mapping: 2n (key, value, key, value…) */
} nm_ynode;

typedef struct nm_ywarning {
    const char *file;
    int line, col;
    const char *msg;
} nm_ywarning;

typedef struct nm_ydoc {
    nm_ynode *root;          /* the merged top-level mapping (never NULL after a successful load) */
    nm_arena *arena;
    nm_ywarning *warnings;   /* in arena */
    size_t nwarnings, capwarnings;
    size_t nodes;            /* nodes converted, bounded to stop alias bombs */
    int include_depth;       /* files being included (see nm_ydoc_load_file) */
    /* Templates (template.h): the variables every file is rendered with
     * (set by the caller before loading; not owned), and the subtrees that
     * include()/include_all() put in place, by id. */
    const nm_tmpl_var *vars;
    size_t nvars;
    nm_ynode **included;     /* in arena */
    size_t nincluded, capincluded;
} nm_ydoc;

/* Initializes an empty document (no allocation). */
void nm_ydoc_init(nm_ydoc *doc);
/* Releases everything; safe on a zeroed or half-loaded document. */
void nm_ydoc_fini(nm_ydoc *doc);

/* Loads one file and merges its top-level mapping into doc->root.  A file
 * holding Jinja2 syntax ("{{", "{%", "{#") is rendered first, with
 * doc->vars, as Timeloop's front end renders every file (template.h); the
 * nodes keep the template's lines.  A top-level `include:` (a file name or
 * a list, relative to the file) loads those files first, so that the
 * file's own keys replace theirs.  A folder reads as a `network:` of one
 * layer per *.yaml file in it that holds a `problem:` (named by the file,
 * in natural order: 2.yaml before 10.yaml).  On error
 * fills *err with the file:line:col of the problem; doc stays usable (and must
 * still be released with nm_ydoc_fini). */
nm_status nm_ydoc_load_file(nm_ydoc *doc, const char *path, nm_error *err);

/* Same for text in memory; `name` is used in locations. */
nm_status nm_ydoc_load_string(nm_ydoc *doc, const char *name, const char *text,
                              size_t len, nm_error *err);

/* Adds a located warning to doc (copied); returns NM_ERR_NOMEM on failure. */
nm_status nm_ydoc_warn(nm_ydoc *doc, const nm_ynode *at, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Mapping access.  Return NULL when absent or when map is not a mapping. */
const nm_ynode *nm_ymap_get(const nm_ynode *map, const char *key);

/* Building and changing a document (for --set and sweeps).  A new scalar in
 * doc's arena with the text given, located at `at` (file "where", line 0
 * when at is NULL); NULL when out of memory. */
nm_ynode *nm_ydoc_scalar(nm_ydoc *doc, const nm_ynode *at, const char *where, const char *text);
/* An empty mapping located at `at`; NULL when out of memory. */
nm_ynode *nm_ydoc_map(nm_ydoc *doc, const nm_ynode *at);
/* A shallow copy of mapping `map` (same tag, place and pairs) to change
 * with nm_ymap_set without touching map; NULL when out of memory. */
nm_ynode *nm_ydoc_map_copy(nm_ydoc *doc, const nm_ynode *map);
/* An empty sequence located at `at`; NULL when out of memory. */
nm_ynode *nm_ydoc_seq(nm_ydoc *doc, const nm_ynode *at);
/* Appends item to seq (the item list is copied, as nm_ymap_set copies
 * pairs).  Returns NM_ERR_NOMEM on failure. */
nm_status nm_yseq_append(nm_ydoc *doc, nm_ynode *seq, nm_ynode *item);
/* Sets key (a new scalar located at `value`) to value in map: the pair is
 * replaced when the key is there, else appended.  The pair list is copied,
 * so a mapping shared through an alias elsewhere keeps its old pairs only
 * when it was not this one.  Returns NM_ERR_NOMEM on failure. */
nm_status nm_ymap_set(nm_ydoc *doc, nm_ynode *map, const char *key, nm_ynode *value);

/* Writes node to f as one line of flow-style YAML ({k: v, ...}, [a, b]);
 * scalars stay plain when they can, else are double-quoted. */
void nm_yemit_flow(FILE *f, const nm_ynode *node);
static inline const nm_ynode *nm_ymap_key(const nm_ynode *map, size_t i) { return map->items[2 * i]; }
static inline const nm_ynode *nm_ymap_val(const nm_ynode *map, size_t i) { return map->items[2 * i + 1]; }

/* Fails with a located "unknown key" error (and a "did you mean") when map has
 * a key outside `allowed` (a NULL-terminated list).  `what` names the map in
 * the message ("buffer 'glb'"). */
nm_status nm_ycheck_keys(const nm_ynode *map, const char *const *allowed,
                         const char *what, nm_error *err);

/* Fails unless node has the given kind; the message names `what`. */
nm_status nm_yexpect(const nm_ynode *node, nm_ykind kind, const char *what, nm_error *err);

/* True for a plain scalar null (empty, ~, null). */
int nm_yis_null(const nm_ynode *node);

/* Typed getters: fail with a located error naming `what` and showing the text. */
nm_status nm_yget_int(const nm_ynode *node, const char *what, int64_t *out, nm_error *err);
/* A positive integer (> 0). */
nm_status nm_yget_pos(const nm_ynode *node, const char *what, int64_t *out, nm_error *err);
nm_status nm_yget_num(const nm_ynode *node, const char *what, double *out, nm_error *err);
/* The number under key of an attributes map, when given (*found; absent or
 * null: 0); errors name it "attribute 'key'". */
nm_status nm_yget_attr_num(const nm_ynode *attrs, const char *key, double *out, int *found,
                           nm_error *err);
/* A number with an optional unit suffix, e.g. "45nm" or 45 with unit "nm". */
nm_status nm_yget_quantity(const nm_ynode *node, const char *what, const char *unit,
                           double *out, nm_error *err);
nm_status nm_yget_bool(const nm_ynode *node, const char *what, int *out, nm_error *err);
nm_status nm_yget_str(const nm_ynode *node, const char *what, const char **out, nm_error *err);

/* Fills err with a located NM_ERR_INPUT error at node; returns NM_ERR_INPUT. */
nm_status nm_yerror(nm_error *err, const nm_ynode *node, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Same, pointing `offset` characters into a one-line scalar (for an error
 * inside a string such as "R=3 X=16"). */
nm_status nm_yerror_at(nm_error *err, const nm_ynode *node, size_t offset, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* Human name of a node kind: "a scalar", "a list", "a mapping". */
const char *nm_ykind_name(nm_ykind kind);

#endif
