/* yaml.c — libyaml documents converted to located nm_ynode trees; see yaml.h. */
#define _GNU_SOURCE /* scandir's versionsort: layer files 2.yaml before 10.yaml */
#include <config.h>

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sys/stat.h>

#include <yaml.h>

#include "nestmap/text.h"
#include "nestmap/yaml.h"

#define MAX_FILE_BYTES (64u << 20) /* inputs are small; refuse anything huge */
#define MAX_NODES 2000000u         /* alias expansion bound ("billion laughs") */
/* Per file: its own nodes (fewer than its bytes) and this many more that
 * aliases may add, so that a few hundred bytes of nested aliases are
 * refused at once instead of after 2,000,000 nodes. */
#define MAX_ALIAS_NODES 100000u
#define MAX_DEPTH 200u

void nm_ydoc_init(nm_ydoc *doc)
{
    memset(doc, 0, sizeof *doc);
}

void nm_ydoc_fini(nm_ydoc *doc)
{
    if (!doc)
        return;
    nm_arena_free(doc->arena);
    memset(doc, 0, sizeof *doc);
}

const char *nm_ykind_name(nm_ykind kind)
{
    switch (kind) {
    case NM_Y_SCALAR:
        return "a scalar";
    case NM_Y_SEQ:
        return "a list";
    case NM_Y_MAP:
        return "a mapping";
    }
    return "a node";
}

nm_status nm_yerror(nm_error *err, const nm_ynode *node, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    nm_error_setv(err, NM_ERR_INPUT, node ? node->file : NULL, node ? node->line : 0,
                  node ? node->col : 0, fmt, ap);
    va_end(ap);
    return NM_ERR_INPUT;
}

static nm_status ensure_arena(nm_ydoc *doc, nm_error *err)
{
    if (!doc->arena && !(doc->arena = nm_arena_new()))
        return nm_error_set(err, NM_ERR_NOMEM, NULL, 0, 0, "out of memory");
    return NM_OK;
}

nm_status nm_ydoc_warn(nm_ydoc *doc, const nm_ynode *at, const char *fmt, ...)
{
    if (ensure_arena(doc, NULL) != NM_OK)
        return NM_ERR_NOMEM;
    if (doc->nwarnings == doc->capwarnings) {
        size_t cap = doc->capwarnings ? 2 * doc->capwarnings : 8;
        nm_ywarning *w = nm_arena_alloc(doc->arena, cap * sizeof *w);
        if (!w)
            return NM_ERR_NOMEM;
        if (doc->nwarnings)
            memcpy(w, doc->warnings, doc->nwarnings * sizeof *w);
        doc->warnings = w;
        doc->capwarnings = cap;
    }
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    char *msg = nm_arena_strndup(doc->arena, buf, strlen(buf));
    if (!msg)
        return NM_ERR_NOMEM;
    nm_ywarning *w = &doc->warnings[doc->nwarnings++];
    w->file = at ? at->file : NULL;
    w->line = at ? at->line : 0;
    w->col = at ? at->col : 0;
    w->msg = msg;
    return NM_OK;
}

/* ---- conversion from libyaml's document ---- */

struct conv {
    nm_ydoc *doc;
    yaml_document_t *ydoc;
    const char *file;
    nm_error *err;
    size_t limit; /* doc->nodes may not pass it */
    const nm_tmpl_out *map; /* a rendered template's line map, or NULL */
};

/* The file and 1-based line that 0-based line `line0` of the parsed text
 * came from: itself, or the template line a rendering maps it to. */
static void text_origin(const nm_tmpl_out *map, const char *file, size_t line0,
                        const char **ofile, int *oline)
{
    if (map && line0 < map->nlines) {
        *ofile = map->lines[line0].file;
        *oline = map->lines[line0].line;
    } else {
        *ofile = file;
        *oline = (int)line0 + 1;
    }
}

/* Moves an error located in a rendered text to the template line. */
static nm_status remap_error(const nm_tmpl_out *map, nm_error *err, nm_status st)
{
    if (!map || !err || err->line < 1 || (size_t)err->line > map->nlines)
        return st;
    const nm_tmpl_line *l = &map->lines[err->line - 1];
    snprintf(err->file, sizeof err->file, "%s", l->file);
    err->line = l->line;
    return st;
}

static nm_ynode *convert(struct conv *cv, yaml_node_t *yn, unsigned depth);

static nm_ynode *new_node(struct conv *cv, yaml_node_t *yn, nm_ykind kind)
{
    if (++cv->doc->nodes > cv->limit) {
        nm_error_set(cv->err, NM_ERR_LIMIT, cv->file, (int)yn->start_mark.line + 1,
                     (int)yn->start_mark.column + 1,
                     "document expands to more than %zu nodes (aliases nested too deeply?)",
                     cv->limit);
        return NULL;
    }
    nm_ynode *n = nm_arena_alloc(cv->doc->arena, sizeof *n);
    if (!n) {
        nm_error_set(cv->err, NM_ERR_NOMEM, NULL, 0, 0, "out of memory");
        return NULL;
    }
    n->kind = kind;
    text_origin(cv->map, cv->file, yn->start_mark.line, &n->file, &n->line);
    n->col = (int)yn->start_mark.column + 1;
    n->str = "";
    const char *tag = (const char *)yn->tag;
    if (tag && strncmp(tag, "tag:yaml.org,2002:", 18) != 0) {
        n->tag = nm_arena_strndup(cv->doc->arena, tag, strlen(tag));
        if (!n->tag) {
            nm_error_set(cv->err, NM_ERR_NOMEM, NULL, 0, 0, "out of memory");
            return NULL;
        }
    }
    return n;
}

/* A merge key: YAML 1.1's `<<: *anchor` (or a list of them) adds the
 * anchored mapping's pairs that the mapping does not set itself, as
 * Accelergy's files use it ("update: same as write"); timeloopfe's `<<<:`
 * does the same all the way down: where both sides hold a mapping under
 * one key, the two mappings merge in turn (the layer_shapes files set a
 * few `instance:` entries over a base problem this way). */
static int merge_kind(const nm_ynode *k)
{
    if (k->quoted)
        return 0;
    return !strcmp(k->str, "<<") ? 1 : !strcmp(k->str, "<<<") ? 2 : 0;
}

/* Sets *out to own's pairs, then src's pairs own lacks; with deep, a key
 * both hold mappings under gets the two merged.  Returns 0 on failure. */
static int merge_into(struct conv *cv, const nm_ynode *own, const nm_ynode *src, int deep,
                      unsigned depth, nm_ynode **out)
{
    if (depth > MAX_DEPTH) {
        nm_yerror(cv->err, own, "merges nested deeper than %u levels", MAX_DEPTH);
        return 0;
    }
    nm_ynode *n = nm_arena_alloc(cv->doc->arena, sizeof *n);
    nm_ynode **items = n ? nm_arena_alloc(cv->doc->arena, (2 * (own->n + src->n) + 1) *
                                                              sizeof *items)
                         : NULL;
    if (!items) {
        nm_error_set(cv->err, NM_ERR_NOMEM, NULL, 0, 0, "out of memory");
        return 0;
    }
    *n = *own;
    memcpy(items, own->items, 2 * own->n * sizeof *items);
    size_t m = own->n;
    for (size_t p = 0; p < src->n; p++) {
        const nm_ynode *sk = src->items[2 * p], *sv = src->items[2 * p + 1];
        size_t q;
        for (q = 0; q < own->n; q++)
            if (nm_text_key_equal(items[2 * q]->str, sk->str))
                break;
        if (q < own->n) {
            if (deep && items[2 * q + 1]->kind == NM_Y_MAP && sv->kind == NM_Y_MAP &&
                !merge_into(cv, items[2 * q + 1], sv, 1, depth + 1, &items[2 * q + 1]))
                return 0;
            continue;
        }
        items[2 * m] = src->items[2 * p];
        items[2 * m + 1] = src->items[2 * p + 1];
        m++;
    }
    n->items = items;
    n->n = m;
    *out = n;
    return 1;
}

/* Applies the merge keys of mapping n in place.  Returns 0 on failure. */
static int merge_keys(struct conv *cv, nm_ynode *n)
{
    size_t merges = 0;
    for (size_t i = 0; i < n->n; i++) {
        const nm_ynode *k = n->items[2 * i], *v = n->items[2 * i + 1];
        int kind = merge_kind(k);
        if (!kind)
            continue;
        merges++;
        if (v->kind == NM_Y_SEQ) {
            for (size_t j = 0; j < v->n; j++)
                if (v->items[j]->kind != NM_Y_MAP) {
                    nm_yerror(cv->err, v->items[j], "a merge key ('%s') takes mappings", k->str);
                    return 0;
                }
        } else if (v->kind != NM_Y_MAP) {
            nm_yerror(cv->err, v, "a merge key ('%s') takes a mapping or a list of mappings",
                      k->str);
            return 0;
        }
    }
    if (!merges)
        return 1;
    /* The mapping's own pairs first (they win), then each source's. */
    nm_ynode own = *n;
    nm_ynode **items = nm_arena_alloc(cv->doc->arena, (2 * n->n + 1) * sizeof *items);
    if (!items) {
        nm_error_set(cv->err, NM_ERR_NOMEM, NULL, 0, 0, "out of memory");
        return 0;
    }
    own.items = items;
    own.n = 0;
    for (size_t i = 0; i < n->n; i++) {
        if (merge_kind(n->items[2 * i]))
            continue;
        items[2 * own.n] = n->items[2 * i];
        items[2 * own.n + 1] = n->items[2 * i + 1];
        own.n++;
    }
    nm_ynode *cur = &own;
    for (size_t i = 0; i < n->n; i++) {
        const nm_ynode *v = n->items[2 * i + 1];
        int kind = merge_kind(n->items[2 * i]);
        if (!kind)
            continue;
        size_t nsrc = v->kind == NM_Y_MAP ? 1 : v->n;
        for (size_t j = 0; j < nsrc; j++)
            if (!merge_into(cv, cur, v->kind == NM_Y_MAP ? v : v->items[j], kind == 2, 0, &cur))
                return 0;
    }
    n->items = cur->items;
    n->n = cur->n;
    return 1;
}

static nm_ynode *convert(struct conv *cv, yaml_node_t *yn, unsigned depth)
{
    if (!yn) {
        nm_error_set(cv->err, NM_ERR_INPUT, cv->file, 0, 0, "malformed YAML document");
        return NULL;
    }
    if (depth > MAX_DEPTH) {
        nm_error_set(cv->err, NM_ERR_LIMIT, cv->file, (int)yn->start_mark.line + 1,
                     (int)yn->start_mark.column + 1, "nesting deeper than %u levels", MAX_DEPTH);
        return NULL;
    }
    nm_ynode *n;
    switch (yn->type) {
    case YAML_SCALAR_NODE:
        if (!(n = new_node(cv, yn, NM_Y_SCALAR)))
            return NULL;
        n->len = yn->data.scalar.length;
        n->str = nm_arena_strndup(cv->doc->arena, (const char *)yn->data.scalar.value, n->len);
        if (!n->str) {
            nm_error_set(cv->err, NM_ERR_NOMEM, NULL, 0, 0, "out of memory");
            return NULL;
        }
        n->quoted = yn->data.scalar.style != YAML_PLAIN_SCALAR_STYLE;
        if (n->tag && !strcmp(n->tag, "!nm_include")) {
            /* What a template's include() put here (template.h). */
            char *end;
            unsigned long id = strtoul(n->str, &end, 10);
            if (*end || end == n->str || id >= cv->doc->nincluded) {
                nm_yerror(cv->err, n, "'!nm_include' is nestmap's own tag for what a "
                          "template's include() gives; it is not for input files");
                return NULL;
            }
            return cv->doc->included[id];
        }
        return n;
    case YAML_SEQUENCE_NODE: {
        if (!(n = new_node(cv, yn, NM_Y_SEQ)))
            return NULL;
        size_t count = (size_t)(yn->data.sequence.items.top - yn->data.sequence.items.start);
        n->n = count;
        n->items = nm_arena_alloc(cv->doc->arena, (count ? count : 1) * sizeof *n->items);
        if (!n->items) {
            nm_error_set(cv->err, NM_ERR_NOMEM, NULL, 0, 0, "out of memory");
            return NULL;
        }
        for (size_t i = 0; i < count; i++) {
            yaml_node_t *child = yaml_document_get_node(cv->ydoc, yn->data.sequence.items.start[i]);
            if (!(n->items[i] = convert(cv, child, depth + 1)))
                return NULL;
        }
        return n;
    }
    case YAML_MAPPING_NODE: {
        if (!(n = new_node(cv, yn, NM_Y_MAP)))
            return NULL;
        size_t count = (size_t)(yn->data.mapping.pairs.top - yn->data.mapping.pairs.start);
        n->n = count;
        n->items = nm_arena_alloc(cv->doc->arena, (2 * count + 1) * sizeof *n->items);
        if (!n->items) {
            nm_error_set(cv->err, NM_ERR_NOMEM, NULL, 0, 0, "out of memory");
            return NULL;
        }
        for (size_t i = 0; i < count; i++) {
            yaml_node_pair_t *pair = &yn->data.mapping.pairs.start[i];
            nm_ynode *k = convert(cv, yaml_document_get_node(cv->ydoc, pair->key), depth + 1);
            if (!k)
                return NULL;
            if (k->kind != NM_Y_SCALAR) {
                nm_yerror(cv->err, k, "mapping keys must be plain names, not %s", nm_ykind_name(k->kind));
                return NULL;
            }
            for (size_t j = 0; j < i; j++) {
                const nm_ynode *prev = n->items[2 * j];
                if (nm_text_key_equal(prev->str, k->str)) {
                    nm_yerror(cv->err, k, "duplicate key '%s' (first given at line %d)", k->str,
                              prev->line);
                    return NULL;
                }
            }
            nm_ynode *v = convert(cv, yaml_document_get_node(cv->ydoc, pair->value), depth + 1);
            if (!v)
                return NULL;
            n->items[2 * i] = k;
            n->items[2 * i + 1] = v;
        }
        return merge_keys(cv, n) ? n : NULL;
    }
    case YAML_NO_NODE:
        break;
    }
    nm_error_set(cv->err, NM_ERR_INPUT, cv->file, (int)yn->start_mark.line + 1,
                 (int)yn->start_mark.column + 1, "unsupported YAML node");
    return NULL;
}

/* Turns libyaml's parser error into a located, readable message. */
static nm_status parser_error(const yaml_parser_t *p, const char *name, const char *text,
                              size_t len, nm_error *err)
{
    int line = (int)p->problem_mark.line + 1;
    int col = (int)p->problem_mark.column + 1;
    size_t off = p->problem_mark.index;
    const char *problem = p->problem ? p->problem : "malformed YAML";
    if (p->error == YAML_READER_ERROR) {
        /* Reader errors carry a byte offset but no line; count lines ourselves. */
        off = p->problem_offset;
        line = 1;
        col = 1;
        for (size_t i = 0; i < off && i < len; i++) {
            if (text[i] == '\n') {
                line++;
                col = 1;
            } else {
                col++;
            }
        }
        return nm_error_set(err, NM_ERR_INPUT, name, line, col,
                            "not a text file: %s (byte 0x%02x)", problem,
                            off < len ? (unsigned)(unsigned char)text[off] : 0u);
    }
    if (off < len && text[off] == '\t')
        return nm_error_set(err, NM_ERR_INPUT, name, line, col,
                            "tab character: YAML indentation must use spaces");
    if (p->context && (p->context_mark.line != p->problem_mark.line ||
                       p->context_mark.column != p->problem_mark.column))
        return nm_error_set(err, NM_ERR_INPUT, name, line, col, "%s %s that starts at line %d, "
                            "column %d", problem, p->context, (int)p->context_mark.line + 1,
                            (int)p->context_mark.column + 1);
    if (p->context)
        return nm_error_set(err, NM_ERR_INPUT, name, line, col, "%s %s", problem, p->context);
    return nm_error_set(err, NM_ERR_INPUT, name, line, col, "%s", problem);
}

/* Compound component classes given in several files (`compound_components`
 * or v0.4's `components`, each {version, classes: [...]}) are all read, as
 * Accelergy reads every file it is given.  *out becomes a copy of the later
 * mapping whose `classes` lists the earlier file's classes, then its own
 * (a class is looked up first to last).  NM_ERR_INPUT when the key is
 * another one or either side has no class list (nothing merged). */
static nm_status merge_classes(nm_ydoc *doc, const nm_ynode *key, const nm_ynode *old,
                               nm_ynode *later, nm_ynode **out)
{
    if (!nm_text_key_equal(key->str, "compound_components") &&
        !nm_text_key_equal(key->str, "components"))
        return NM_ERR_INPUT;
    const nm_ynode *a = nm_ymap_get(old, "classes"), *b = nm_ymap_get(later, "classes");
    if (!a || !b || a->kind != NM_Y_SEQ || b->kind != NM_Y_SEQ)
        return NM_ERR_INPUT;
    nm_ynode *m = nm_ydoc_map_copy(doc, later), *list = nm_ydoc_seq(doc, b);
    if (!m || !list)
        return NM_ERR_NOMEM;
    for (size_t i = 0; i < a->n + b->n; i++)
        if (nm_yseq_append(doc, list, i < a->n ? a->items[i] : b->items[i - a->n]) != NM_OK)
            return NM_ERR_NOMEM;
    if (nm_ymap_set(doc, m, "classes", list) != NM_OK)
        return NM_ERR_NOMEM;
    *out = m;
    return NM_OK;
}

/* Merges the top-level mapping `top` into doc->root. */
static nm_status merge_top(nm_ydoc *doc, nm_ynode *top, nm_error *err)
{
    if (!doc->root) {
        doc->root = top;
        return NM_OK;
    }
    nm_ynode *root = doc->root;
    size_t extra = 0;
    for (size_t i = 0; i < top->n; i++)
        if (!nm_ymap_get(root, top->items[2 * i]->str))
            extra++;
    nm_ynode **items = nm_arena_alloc(doc->arena, (2 * (root->n + extra) + 1) * sizeof *items);
    if (!items)
        return nm_error_set(err, NM_ERR_NOMEM, NULL, 0, 0, "out of memory");
    memcpy(items, root->items, 2 * root->n * sizeof *items);
    size_t n = root->n;
    for (size_t i = 0; i < top->n; i++) {
        nm_ynode *k = top->items[2 * i], *v = top->items[2 * i + 1];
        size_t j;
        for (j = 0; j < n; j++)
            if (nm_text_key_equal(items[2 * j]->str, k->str))
                break;
        nm_ynode *merged = NULL;
        nm_status ms = j < n ? merge_classes(doc, k, items[2 * j + 1], v, &merged) : NM_ERR_INPUT;
        if (ms == NM_ERR_NOMEM)
            return nm_error_set(err, NM_ERR_NOMEM, NULL, 0, 0, "out of memory");
        if (ms == NM_OK) {
            items[2 * j + 1] = merged;
        } else if (j < n) {
            /* two mappings: the last is evaluated; compare shows both */
            int maps = nm_text_key_equal(k->str, "mapping");
            if (nm_ydoc_warn(doc, k, "top-level key '%s' replaces the one given at %s:%d:%d%s",
                             k->str, items[2 * j]->file, items[2 * j]->line, items[2 * j]->col,
                             maps ? " (to evaluate several mappings side by side: nestmap "
                                    "compare --as-given DESIGN MAPPING...)"
                                  : "") != NM_OK)
                return nm_error_set(err, NM_ERR_NOMEM, NULL, 0, 0, "out of memory");
            items[2 * j] = k;
            items[2 * j + 1] = v;
        } else {
            items[2 * n] = k;
            items[2 * n + 1] = v;
            n++;
        }
    }
    root->items = items;
    root->n = n;
    return NM_OK;
}

/* Parses one file's text into its top-level mapping (*out), not merged. */
static nm_status parse_top(nm_ydoc *doc, const char *name, const char *text, size_t len,
                           const nm_tmpl_out *map, nm_ynode **out, nm_error *err)
{
    nm_status st = ensure_arena(doc, err);
    if (st != NM_OK)
        return st;
    const char *file = nm_arena_strndup(doc->arena, name, strlen(name));
    if (!file)
        return nm_error_set(err, NM_ERR_NOMEM, NULL, 0, 0, "out of memory");

    /* libyaml reads to the length given, but a NUL byte means binary data. */
    const char *nul = memchr(text, '\0', len);
    if (nul) {
        int line = 1, col = 1;
        for (const char *c = text; c < nul; c++) {
            if (*c == '\n') {
                line++;
                col = 1;
            } else {
                col++;
            }
        }
        return nm_error_set(err, NM_ERR_INPUT, file, line, col,
                            "not a text file: NUL byte in the input");
    }

    yaml_parser_t parser;
    yaml_document_t ydoc;
    if (!yaml_parser_initialize(&parser))
        return nm_error_set(err, NM_ERR_NOMEM, NULL, 0, 0, "out of memory");
    yaml_parser_set_input_string(&parser, (const unsigned char *)text, len);
    if (!yaml_parser_load(&parser, &ydoc)) {
        st = remap_error(map, err, parser_error(&parser, file, text, len, err));
        yaml_parser_delete(&parser);
        return st;
    }
    yaml_node_t *yroot = yaml_document_get_root_node(&ydoc);
    if (!yroot) {
        yaml_document_delete(&ydoc);
        yaml_parser_delete(&parser);
        return nm_error_set(err, NM_ERR_INPUT, file, 1, 1,
                            "the file is empty: expected a mapping of top-level keys "
                            "(architecture, problem, mapping, ...)");
    }
    size_t limit = doc->nodes + MAX_ALIAS_NODES + len;
    struct conv cv = {doc, &ydoc, file, err, limit < MAX_NODES ? limit : MAX_NODES, map};
    nm_ynode *top = convert(&cv, yroot, 0);
    yaml_document_delete(&ydoc);
    if (!top) {
        yaml_parser_delete(&parser);
        return err ? err->status : NM_ERR_INPUT;
    }
    /* Exactly one document per file: a second one would be silently ignored. */
    yaml_document_t extra;
    if (!yaml_parser_load(&parser, &extra)) {
        st = remap_error(map, err, parser_error(&parser, file, text, len, err));
        yaml_parser_delete(&parser);
        return st;
    }
    yaml_node_t *xroot = yaml_document_get_root_node(&extra);
    if (xroot) {
        int line = (int)xroot->start_mark.line + 1, col = (int)xroot->start_mark.column + 1;
        const char *where;
        text_origin(map, file, xroot->start_mark.line, &where, &line);
        yaml_document_delete(&extra);
        yaml_parser_delete(&parser);
        return nm_error_set(err, NM_ERR_INPUT, where, line, col,
                            "a second YAML document ('---'): nestmap reads one document "
                            "per file; put the others in files of their own");
    }
    yaml_document_delete(&extra);
    yaml_parser_delete(&parser);

    if (top->kind != NM_Y_MAP)
        return nm_yerror(err, top,
                         "the top level must be a mapping of keys (architecture, problem, "
                         "mapping, ...), not %s",
                         nm_ykind_name(top->kind));
    *out = top;
    return NM_OK;
}

static nm_status parse_text(nm_ydoc *doc, const char *name, int files, const char *text,
                            size_t len, const char *const *dirs, size_t ndirs, nm_ynode **top,
                            nm_error *err);

nm_status nm_ydoc_load_string(nm_ydoc *doc, const char *name, const char *text, size_t len,
                              nm_error *err)
{
    nm_ynode *top;
    nm_status st = parse_text(doc, name, 0, text, len, NULL, 0, &top, err);
    return st != NM_OK ? st : merge_top(doc, top, err);
}

#define MAX_INCLUDE_DEPTH 16

/* A file's `include:` (a path or a list, relative to the file): those files
 * are loaded first, so that the file's own keys replace theirs; the key is
 * then dropped. */
static nm_status load_includes(nm_ydoc *doc, nm_ynode *top, const char *path, nm_error *err)
{
    size_t at = 0;
    while (at < top->n && strcmp(top->items[2 * at]->str, "include"))
        at++;
    if (at == top->n)
        return NM_OK;
    nm_ynode *key = top->items[2 * at], *v = top->items[2 * at + 1];
    if (doc->include_depth >= MAX_INCLUDE_DEPTH)
        return nm_yerror(err, key, "includes nest more than %d files deep (does a file "
                         "include itself?)", MAX_INCLUDE_DEPTH);
    size_t n = v->kind == NM_Y_SEQ ? v->n : 1;
    const char *slash = strrchr(path, '/');
    int dirlen = slash ? (int)(slash - path) : 0;
    for (size_t i = 0; i < n; i++) {
        const nm_ynode *item = v->kind == NM_Y_SEQ ? v->items[i] : v;
        const char *name;
        nm_status st = nm_yget_str(item, "include (a file name)", &name, err);
        if (st != NM_OK)
            return st;
        char full[4096];
        if (name[0] == '/' || !slash)
            snprintf(full, sizeof full, "%s", name);
        else
            snprintf(full, sizeof full, "%.*s/%s", dirlen, path, name);
        struct stat sb;
        if (stat(full, &sb) != 0)
            return nm_yerror(err, item, "cannot include '%s': %s", full, strerror(errno));
        if (!S_ISREG(sb.st_mode))
            return nm_yerror(err, item, "cannot include '%s': not a regular file", full);
        doc->include_depth++;
        st = nm_ydoc_load_file(doc, full, err);
        doc->include_depth--;
        if (st != NM_OK)
            return st;
    }
    memmove(&top->items[2 * at], &top->items[2 * at + 2], 2 * (top->n - at - 1) * sizeof *top->items);
    top->n--;
    return NM_OK;
}

/* Reads a whole file (or standard input for "-") into *buf (nm_malloc'd). */
static nm_status read_file(const char *path, char **buf_out, size_t *len_out, nm_error *err)
{
    int from_stdin = !strcmp(path, "-");
    FILE *f = from_stdin ? stdin : fopen(path, "rb");
    if (!f)
        return nm_error_set(err, NM_ERR_IO, path, 0, 0, "cannot open: %s", strerror(errno));
    if (from_stdin)
        path = "<stdin>";
    struct stat sb;
    if (fstat(fileno(f), &sb) == 0 && S_ISDIR(sb.st_mode)) {
        fclose(f);
        return nm_error_set(err, NM_ERR_IO, path, 0, 0,
                            "is a directory; name a YAML file in it");
    }
    size_t cap = 4096, len = 0;
    char *buf = nm_malloc(cap);
    if (!buf) {
        if (!from_stdin)
            fclose(f);
        return nm_error_set(err, NM_ERR_NOMEM, NULL, 0, 0, "out of memory");
    }
    for (;;) {
        if (len == cap) {
            if (cap >= MAX_FILE_BYTES) {
                nm_free(buf);
                if (!from_stdin)
                    fclose(f);
                return nm_error_set(err, NM_ERR_INPUT, path, 0, 0,
                                    "file is larger than %u MiB; not an input file?",
                                    MAX_FILE_BYTES >> 20);
            }
            char *nb = nm_realloc_array(buf, cap * 2, 1);
            if (!nb) {
                nm_free(buf);
                if (!from_stdin)
                    fclose(f);
                return nm_error_set(err, NM_ERR_NOMEM, NULL, 0, 0, "out of memory");
            }
            buf = nb;
            cap *= 2;
        }
        size_t got = fread(buf + len, 1, cap - len, f);
        len += got;
        if (got == 0)
            break;
    }
    int bad = ferror(f);
    int saved = errno;
    if (!from_stdin)
        fclose(f);
    if (bad) {
        nm_free(buf);
        return nm_error_set(err, NM_ERR_IO, path, 0, 0, "read error: %s", strerror(saved));
    }
    *buf_out = buf;
    *len_out = len;
    return NM_OK;
}

static nm_status include_hook(void *ctx, const char *const *paths, size_t n, const char *key,
                              const char *const *dirs, size_t ndirs, const char *file, int line,
                              int col, int *id, nm_error *err);

/* A file's top-level mapping, rendered first when it is a template (with
 * doc->vars and the include folders dirs[0..ndirs)). */
static nm_status load_tree(nm_ydoc *doc, const char *path, const char *const *dirs, size_t ndirs,
                           nm_ynode **top, nm_error *err)
{
    char *buf = NULL;
    size_t len = 0;
    nm_status st = read_file(path, &buf, &len, err);
    if (st != NM_OK)
        return st;
    if (!strcmp(path, "-"))
        path = "<stdin>";
    st = parse_text(doc, path, strcmp(path, "<stdin>") != 0, buf, len, dirs, ndirs, top, err);
    nm_free(buf);
    return st;
}

/* A text's top-level mapping, rendered first when it is a template (files:
 * the text is a file's, so its template may read files beside it). */
static nm_status parse_text(nm_ydoc *doc, const char *name, int files, const char *text,
                            size_t len, const char *const *dirs, size_t ndirs, nm_ynode **top,
                            nm_error *err)
{
    if (!nm_tmpl_is_template(text, len) || memchr(text, '\0', len))
        return parse_top(doc, name, text, len, NULL, top, err);
    nm_status st = ensure_arena(doc, err);
    if (st != NM_OK)
        return st;
    nm_tmpl_hooks hooks = {doc, include_hook};
    nm_tmpl_out out;
    if ((st = nm_tmpl_render(name, files, text, len, doc->vars, doc->nvars, dirs, ndirs, &hooks,
                             doc->arena, &out, err)) != NM_OK)
        return st;
    st = parse_top(doc, name, out.text, out.len, &out, top, err);
    nm_tmpl_out_fini(&out);
    return st;
}

/* include(path, key) and include_all(glob, key) of a template: each file's
 * subtree at the dotted key, joined (lists concatenate, mappings merge with
 * the first file's keys first), kept in doc->included. */
static nm_status include_hook(void *ctx, const char *const *paths, size_t n, const char *key,
                              const char *const *dirs, size_t ndirs, const char *file, int line,
                              int col, int *id, nm_error *err)
{
    nm_ydoc *doc = ctx;
    nm_ynode *joined = NULL;
    if (doc->include_depth >= MAX_INCLUDE_DEPTH)
        return nm_error_set(err, NM_ERR_INPUT, file, line, col, "includes nest more than %d "
                            "files deep (does a file include itself?)", MAX_INCLUDE_DEPTH);
    for (size_t i = 0; i < n; i++) {
        nm_ynode *top;
        doc->include_depth++;
        nm_status st = load_tree(doc, paths[i], dirs, ndirs, &top, err);
        doc->include_depth--;
        if (st != NM_OK)
            return st;
        /* The dotted key: "compound_components.classes". */
        const nm_ynode *node = top;
        for (const char *k = key; *k;) {
            size_t kl = strcspn(k, ".");
            char part[128];
            snprintf(part, sizeof part, "%.*s", (int)(kl < sizeof part ? kl : sizeof part - 1), k);
            const nm_ynode *next = nm_ymap_get(node, part);
            if (!next)
                return nm_error_set(err, NM_ERR_INPUT, file, line, col, "include: '%s' has no "
                                    "'%s'", paths[i], key);
            node = next;
            k += kl;
            if (*k == '.')
                k++;
        }
        if (!joined) {
            joined = (nm_ynode *)node;
            continue;
        }
        if (joined->kind != node->kind || joined->kind == NM_Y_SCALAR)
            return nm_error_set(err, NM_ERR_INPUT, file, line, col, "include_all: '%s' gives %s "
                                "where the files before it give %s", paths[i],
                                nm_ykind_name(node->kind), nm_ykind_name(joined->kind));
        nm_ynode *both = joined->kind == NM_Y_SEQ ? nm_ydoc_seq(doc, joined) : nm_ydoc_map(doc, joined);
        if (!both)
            return nm_error_set(err, NM_ERR_NOMEM, NULL, 0, 0, "out of memory");
        size_t per = joined->kind == NM_Y_SEQ ? 1 : 2;
        both->items = nm_arena_alloc(doc->arena, (per * (joined->n + node->n) + 1) * sizeof *both->items);
        if (!both->items)
            return nm_error_set(err, NM_ERR_NOMEM, NULL, 0, 0, "out of memory");
        memcpy(both->items, joined->items, per * joined->n * sizeof *both->items);
        both->n = joined->n;
        for (size_t j = 0; j < node->n; j++) {
            if (per == 2 && nm_ymap_get(both, node->items[2 * j]->str))
                continue;
            memcpy(&both->items[per * both->n], &node->items[per * j], per * sizeof *both->items);
            both->n++;
        }
        joined = both;
    }
    if (doc->nincluded == doc->capincluded) {
        size_t cap = doc->capincluded ? 2 * doc->capincluded : 8;
        nm_ynode **t = nm_arena_alloc(doc->arena, cap * sizeof *t);
        if (!t)
            return nm_error_set(err, NM_ERR_NOMEM, NULL, 0, 0, "out of memory");
        if (doc->nincluded)
            memcpy(t, doc->included, doc->nincluded * sizeof *t);
        doc->included = t;
        doc->capincluded = cap;
    }
    doc->included[doc->nincluded] = joined;
    *id = (int)doc->nincluded++;
    return NM_OK;
}

static int yaml_name(const struct dirent *e)
{
    size_t n = strlen(e->d_name);
    return e->d_name[0] != '.' && ((n > 5 && !strcmp(e->d_name + n - 5, ".yaml")) ||
                                   (n > 4 && !strcmp(e->d_name + n - 4, ".yml")));
}

/* A folder of workload files (Timeloop's layer_shapes/NET/, which the
 * exercises' scripts run one by one) reads as a network: a layer per file
 * holding a `problem:`, named by the file, in the folder's natural order. */
static nm_status load_dir(nm_ydoc *doc, const char *path, nm_error *err)
{
    struct dirent **list;
    int n = scandir(path, &list, yaml_name, versionsort);
    if (n < 0)
        return nm_error_set(err, NM_ERR_IO, path, 0, 0, "cannot read the folder: %s",
                            strerror(errno));
    nm_status st = ensure_arena(doc, err);
    nm_ynode *net = NULL, *layers = NULL, *top = NULL;
    const char *where = st == NM_OK ? nm_arena_strndup(doc->arena, path, strlen(path)) : NULL;
    if (st == NM_OK && where) {
        nm_ynode at = {.kind = NM_Y_MAP, .str = "", .file = where};
        net = nm_ydoc_map(doc, &at);
        layers = nm_ydoc_seq(doc, &at);
        top = nm_ydoc_map(doc, &at);
        if (!net || !layers || !top)
            st = nm_error_set(err, NM_ERR_NOMEM, NULL, 0, 0, "out of memory");
    } else if (st == NM_OK) {
        st = nm_error_set(err, NM_ERR_NOMEM, NULL, 0, 0, "out of memory");
    }
    for (int i = 0; i < n; i++) {
        char full[4096];
        snprintf(full, sizeof full, "%s/%s", path, list[i]->d_name);
        nm_ynode *file;
        if (st == NM_OK && (st = load_tree(doc, full, NULL, 0, &file, err)) == NM_OK) {
            nm_ynode *prob = (nm_ynode *)nm_ymap_get(file, "problem");
            size_t stem = strcspn(list[i]->d_name, ".");
            char name[256];
            snprintf(name, sizeof name, "%.*s", (int)(stem < 255 ? stem : 255), list[i]->d_name);
            nm_ynode *layer = prob ? nm_ydoc_map(doc, prob) : NULL;
            nm_ynode *lname = prob ? nm_ydoc_scalar(doc, prob, NULL, name) : NULL;
            if (!prob)
                st = nm_ydoc_warn(doc, file, "'%s' has no 'problem': not a layer of the "
                                  "folder's network", full);
            else if (!layer || !lname || nm_ymap_set(doc, layer, "name", lname) != NM_OK ||
                     nm_ymap_set(doc, layer, "problem", prob) != NM_OK ||
                     nm_yseq_append(doc, layers, layer) != NM_OK)
                st = NM_ERR_NOMEM;
            if (st == NM_ERR_NOMEM)
                nm_error_set(err, NM_ERR_NOMEM, NULL, 0, 0, "out of memory");
        }
        free(list[i]);
    }
    free(list);
    if (st != NM_OK)
        return st;
    if (!layers->n)
        return nm_error_set(err, NM_ERR_INPUT, path, 0, 0, "is a directory with no workload "
                            "files (*.yaml holding a 'problem:'); name a YAML file in it");
    const char *base = strrchr(path, '/');
    base = base && base[1] ? base + 1 : path;
    nm_ynode *nname = nm_ydoc_scalar(doc, layers, NULL, base);
    if (!nname || nm_ymap_set(doc, net, "name", nname) != NM_OK ||
        nm_ymap_set(doc, net, "layers", layers) != NM_OK ||
        nm_ymap_set(doc, top, "network", net) != NM_OK)
        return nm_error_set(err, NM_ERR_NOMEM, NULL, 0, 0, "out of memory");
    return merge_top(doc, top, err);
}

nm_status nm_ydoc_load_file(nm_ydoc *doc, const char *path, nm_error *err)
{
    struct stat sb;
    if (strcmp(path, "-") && stat(path, &sb) == 0 && S_ISDIR(sb.st_mode))
        return load_dir(doc, path, err);
    nm_ynode *top;
    nm_status st = load_tree(doc, path, NULL, 0, &top, err);
    if (st == NM_OK)
        st = load_includes(doc, top, !strcmp(path, "-") ? "<stdin>" : path, err);
    return st != NM_OK ? st : merge_top(doc, top, err);
}

/* ---- access ---- */

/* A scalar that reads back as the same plain scalar in flow context. */
static int plain_ok(const nm_ynode *n)
{
    if (n->quoted || n->len == 0)
        return 0;
    for (size_t i = 0; i < n->len; i++) {
        unsigned char c = (unsigned char)n->str[i];
        if (!(c == '_' || c == '.' || c == '-' || c == '+' || (c >= '0' && c <= '9') ||
              (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')))
            return 0;
    }
    return n->str[0] != '-' || n->len > 1;
}

void nm_yemit_flow(FILE *f, const nm_ynode *node)
{
    switch (node->kind) {
    case NM_Y_MAP:
        fputc('{', f);
        for (size_t i = 0; i < node->n; i++) {
            fputs(i ? ", " : "", f);
            nm_yemit_flow(f, node->items[2 * i]);
            fputs(": ", f);
            nm_yemit_flow(f, node->items[2 * i + 1]);
        }
        fputc('}', f);
        return;
    case NM_Y_SEQ:
        fputc('[', f);
        for (size_t i = 0; i < node->n; i++) {
            fputs(i ? ", " : "", f);
            nm_yemit_flow(f, node->items[i]);
        }
        fputc(']', f);
        return;
    default:
        if (plain_ok(node)) {
            fwrite(node->str, 1, node->len, f);
            return;
        }
        fputc('"', f);
        for (size_t i = 0; i < node->len; i++) {
            unsigned char c = (unsigned char)node->str[i];
            if (c == '"' || c == '\\')
                fprintf(f, "\\%c", c);
            else if (c < 0x20)
                fprintf(f, "\\x%02x", c);
            else
                fputc(c, f);
        }
        fputc('"', f);
    }
}

nm_ynode *nm_ydoc_scalar(nm_ydoc *doc, const nm_ynode *at, const char *where, const char *text)
{
    nm_error ignored;
    if (ensure_arena(doc, &ignored) != NM_OK)
        return NULL;
    nm_ynode *n = nm_arena_alloc(doc->arena, sizeof *n);
    char *s = n ? nm_arena_strndup(doc->arena, text, strlen(text)) : NULL;
    if (!s)
        return NULL;
    n->kind = NM_Y_SCALAR;
    n->str = s;
    n->len = strlen(s);
    if (at) {
        n->file = at->file;
        n->line = at->line;
        n->col = at->col;
    } else {
        n->file = nm_arena_strndup(doc->arena, where, strlen(where));
        if (!n->file)
            return NULL;
    }
    return n;
}

nm_ynode *nm_ydoc_map(nm_ydoc *doc, const nm_ynode *at)
{
    nm_ynode *n = nm_ydoc_scalar(doc, at, at ? NULL : "", "");
    if (n) {
        n->kind = NM_Y_MAP;
        n->items = NULL;
    }
    return n;
}

nm_ynode *nm_ydoc_map_copy(nm_ydoc *doc, const nm_ynode *map)
{
    nm_ynode *n = nm_ydoc_map(doc, map);
    if (n) {
        n->items = map->items; /* nm_ymap_set copies the pairs before changing them */
        n->n = map->n;
        n->tag = map->tag;
    }
    return n;
}

nm_ynode *nm_ydoc_seq(nm_ydoc *doc, const nm_ynode *at)
{
    nm_ynode *n = nm_ydoc_map(doc, at);
    if (n)
        n->kind = NM_Y_SEQ;
    return n;
}

nm_status nm_yseq_append(nm_ydoc *doc, nm_ynode *seq, nm_ynode *item)
{
    nm_ynode **items = nm_arena_alloc(doc->arena, (seq->n + 1) * sizeof *items);
    if (!items)
        return NM_ERR_NOMEM;
    if (seq->n)
        memcpy(items, seq->items, seq->n * sizeof *items);
    items[seq->n++] = item;
    seq->items = items;
    return NM_OK;
}

nm_status nm_ymap_set(nm_ydoc *doc, nm_ynode *map, const char *key, nm_ynode *value)
{
    nm_ynode **items = nm_arena_alloc(doc->arena, (2 * (map->n + 1) + 1) * sizeof *items);
    if (!items)
        return NM_ERR_NOMEM;
    if (map->n)
        memcpy(items, map->items, 2 * map->n * sizeof *items);
    size_t j;
    for (j = 0; j < map->n; j++)
        if (nm_text_key_equal(items[2 * j]->str, key))
            break;
    if (j == map->n) {
        nm_ynode *k = nm_ydoc_scalar(doc, value, NULL, key);
        if (!k)
            return NM_ERR_NOMEM;
        items[2 * j] = k;
        map->n++;
    }
    items[2 * j + 1] = value;
    map->items = items;
    return NM_OK;
}

const nm_ynode *nm_ymap_get(const nm_ynode *map, const char *key)
{
    if (!map || map->kind != NM_Y_MAP)
        return NULL;
    for (size_t i = 0; i < map->n; i++)
        if (nm_text_key_equal(map->items[2 * i]->str, key))
            return map->items[2 * i + 1];
    return NULL;
}

nm_status nm_ycheck_keys(const nm_ynode *map, const char *const *allowed, const char *what,
                         nm_error *err)
{
    size_t nallowed = 0;
    while (allowed[nallowed])
        nallowed++;
    for (size_t i = 0; i < map->n; i++) {
        const nm_ynode *k = map->items[2 * i];
        size_t j;
        for (j = 0; j < nallowed; j++)
            if (nm_text_key_equal(k->str, allowed[j]))
                break;
        if (j < nallowed)
            continue;
        const char *s = nm_text_suggest(k->str, allowed, nallowed);
        if (s)
            return nm_yerror(err, k, "unknown key '%s' in %s; did you mean '%s'?", k->str, what, s);
        char list[400];
        nm_text_join(list, sizeof list, allowed, nallowed);
        return nm_yerror(err, k, "unknown key '%s' in %s (known keys: %s)", k->str, what, list);
    }
    return NM_OK;
}

nm_status nm_yerror_at(nm_error *err, const nm_ynode *node, size_t offset, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int col = node ? node->col : 0;
    /* A plain or quoted scalar on one line: point inside it. */
    if (node && node->kind == NM_Y_SCALAR && offset <= node->len &&
        !memchr(node->str, '\n', node->len))
        col += (int)offset + (node->quoted ? 1 : 0);
    nm_error_setv(err, NM_ERR_INPUT, node ? node->file : NULL, node ? node->line : 0, col, fmt, ap);
    va_end(ap);
    return NM_ERR_INPUT;
}

nm_status nm_yexpect(const nm_ynode *node, nm_ykind kind, const char *what, nm_error *err)
{
    if (node->kind == kind)
        return NM_OK;
    return nm_yerror(err, node, "%s must be %s, not %s", what, nm_ykind_name(kind),
                     nm_ykind_name(node->kind));
}

int nm_yis_null(const nm_ynode *node)
{
    if (!node || node->kind != NM_Y_SCALAR || node->quoted)
        return 0;
    return node->len == 0 || !strcmp(node->str, "~") || !strcmp(node->str, "null") ||
           !strcmp(node->str, "Null") || !strcmp(node->str, "NULL");
}

static nm_status want_scalar(const nm_ynode *node, const char *what, nm_error *err)
{
    if (node->kind != NM_Y_SCALAR)
        return nm_yerror(err, node, "%s must be a single value, not %s", what,
                         nm_ykind_name(node->kind));
    return NM_OK;
}

nm_status nm_yget_int(const nm_ynode *node, const char *what, int64_t *out, nm_error *err)
{
    nm_status st = want_scalar(node, what, err);
    if (st != NM_OK)
        return st;
    const char *s = node->str;
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (end != s && *end == '\0' && errno == 0) {
        *out = v;
        return NM_OK;
    }
    /* Accept integral floats such as "16.0" or "1e3", as YAML writers emit them. */
    errno = 0;
    double d = strtod(s, &end);
    if (end != s && *end == '\0' && errno == 0 && isfinite(d) && d == floor(d) &&
        fabs(d) < 9.0e15) {
        *out = (int64_t)d;
        return NM_OK;
    }
    if (errno == ERANGE)
        return nm_yerror(err, node, "%s is out of range (got \"%s\")", what, s);
    return nm_yerror(err, node, "%s must be an integer (got \"%s\")", what, s);
}

nm_status nm_yget_pos(const nm_ynode *node, const char *what, int64_t *out, nm_error *err)
{
    int64_t v;
    const char *s = node->kind == NM_Y_SCALAR ? node->str : "";
    if (nm_yget_int(node, what, &v, NULL) != NM_OK || v <= 0) {
        if (node->kind != NM_Y_SCALAR)
            return want_scalar(node, what, err);
        return nm_yerror(err, node, "%s must be a positive integer (got \"%s\")", what, s);
    }
    *out = v;
    return NM_OK;
}

nm_status nm_yget_num(const nm_ynode *node, const char *what, double *out, nm_error *err)
{
    nm_status st = want_scalar(node, what, err);
    if (st != NM_OK)
        return st;
    char *end;
    errno = 0;
    double d = strtod(node->str, &end);
    if (end == node->str || *end != '\0' || !isfinite(d))
        return nm_yerror(err, node, "%s must be a number (got \"%s\")", what, node->str);
    *out = d;
    return NM_OK;
}

nm_status nm_yget_attr_num(const nm_ynode *attrs, const char *key, double *out, int *found,
                           nm_error *err)
{
    const nm_ynode *n = nm_ymap_get(attrs, key);
    *found = 0;
    if (!n || nm_yis_null(n))
        return NM_OK;
    char what[96];
    snprintf(what, sizeof what, "attribute '%s'", key);
    nm_status st = nm_yget_num(n, what, out, err);
    if (st == NM_OK)
        *found = 1;
    return st;
}

nm_status nm_yget_quantity(const nm_ynode *node, const char *what, const char *unit, double *out,
                           nm_error *err)
{
    nm_status st = want_scalar(node, what, err);
    if (st != NM_OK)
        return st;
    char *end;
    double d = strtod(node->str, &end);
    if (end == node->str || !isfinite(d))
        return nm_yerror(err, node, "%s must be a number in %s (got \"%s\")", what, unit,
                         node->str);
    while (*end == ' ')
        end++;
    if (*end && strcmp(end, unit) != 0)
        return nm_yerror(err, node, "%s must be in %s (got \"%s\")", what, unit, node->str);
    *out = d;
    return NM_OK;
}

nm_status nm_yget_bool(const nm_ynode *node, const char *what, int *out, nm_error *err)
{
    nm_status st = want_scalar(node, what, err);
    if (st != NM_OK)
        return st;
    static const char *const yes[] = {"true", "True", "TRUE", "yes", "Yes", "on", "1"};
    static const char *const no[] = {"false", "False", "FALSE", "no", "No", "off", "0"};
    for (size_t i = 0; i < sizeof yes / sizeof *yes; i++) {
        if (!strcmp(node->str, yes[i])) {
            *out = 1;
            return NM_OK;
        }
        if (!strcmp(node->str, no[i])) {
            *out = 0;
            return NM_OK;
        }
    }
    return nm_yerror(err, node, "%s must be true or false (got \"%s\")", what, node->str);
}

nm_status nm_yget_str(const nm_ynode *node, const char *what, const char **out, nm_error *err)
{
    nm_status st = want_scalar(node, what, err);
    if (st != NM_OK)
        return st;
    *out = node->str;
    return NM_OK;
}
