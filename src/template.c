/* template.c — Jinja2 templates as Timeloop's front end renders them; see
 * template.h.
 *
 * Two passes.  parse() cuts the template into a tree of nodes (text, output
 * {{ }}, if/for/set/include blocks), each remembering where it stands;
 * exec() walks the tree, evaluating each expression from its source text
 * as it goes (expressions are short, and a for loop's body re-evaluates
 * its expressions with the loop variable set).  Output goes to a growing
 * buffer with one line-map entry per output line.
 *
 * Semantics follow Jinja2's documentation and Accelergy's loader
 * (accelergy/utils/yaml.py: StrictUndefined, a FileSystemLoader rooted at
 * the template's folder, the functions it registers, paths relative to the
 * template's folder and then to the folders add_to_path() gave).
 */
#define _XOPEN_SOURCE 700 /* realpath */
#include <config.h>

#include <ctype.h>
#include <errno.h>
#include <glob.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "nestmap/template.h"

#define MAX_DEPTH 64       /* nested blocks, expression nesting, includes */
#define MAX_OUTPUT (16u << 20) /* inputs are small: a larger rendering is a runaway loop */
#define MAX_DIRS 64
#define MAX_LOOP 100000    /* iterations of one for loop */
#define MAX_STEPS 2000000  /* nodes executed in one rendering, all loops together */
#define PATH_LEN 4096

/* ---- values ---- */

typedef enum { V_UNDEF, V_NONE, V_BOOL, V_NUM, V_STR, V_LIST } vkind;

typedef struct tval {
    vkind k;
    int is_int;            /* V_NUM written without a point */
    double num;            /* V_NUM, V_BOOL */
    const char *s;         /* V_STR (arena); V_UNDEF: the name */
    size_t n;              /* V_STR length, V_LIST items */
    struct tval *items;    /* V_LIST */
    const nm_tmpl_out *map; /* V_STR from include_text: its own line map */
} tval;

typedef struct var {
    const char *name;
    tval v;
} var;

/* ---- template tree ---- */

typedef enum { N_TEXT, N_OUT, N_IF, N_FOR, N_SET, N_INCLUDE } nkind;

typedef struct tnode {
    nkind k;
    const char *src; /* text, or the expression's source */
    size_t len;
    int line, col;   /* of src's first character */
    const char *name, *name2; /* N_FOR: the loop variable(s); N_SET: the name */
    struct tnode *body, *alt, *next; /* alt: elif/else chain, or for's else */
} tnode;

/* ---- render state ---- */

struct render {
    const char *file;        /* the template's path, as given (for messages) */
    char dir[PATH_LEN];      /* its folder, absolute */
    const char *text;
    size_t len;
    nm_arena *arena;         /* values and nodes of this render */
    nm_arena *keep;          /* the caller's: strings the output refers to */
    const nm_tmpl_var *vars;
    size_t nvars;
    char **dirs;             /* include folders (add_to_path), arena strings */
    size_t ndirs;
    const nm_tmpl_hooks *hooks;
    int depth;               /* template include depth */
    var *scope;              /* variables set by {% set %} and loops */
    size_t nscope, capscope;
    nm_tmpl_out *out;
    size_t cap;
    nm_error *err;
    const char *ofile;       /* this template's name in the line map (keep) */
    int files;               /* may read files (a template given as text may not) */
    long *steps;             /* nodes executed so far (shared with included renders) */
};

/* An expression being evaluated: its text and where it starts. */
struct ex {
    struct render *r;
    const char *s;
    size_t pos, len;
    int line, col;           /* of s[0] */
    int skip;                /* evaluating an untaken branch: no calls, no errors on undefined */
};

static nm_status fail_at(struct render *r, int line, int col, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static nm_status fail_at(struct render *r, int line, int col, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    nm_error_setv(r->err, NM_ERR_INPUT, r->file, line, col, fmt, ap);
    va_end(ap);
    return NM_ERR_INPUT;
}

static nm_status nomem(struct render *r)
{
    return nm_error_set(r->err, NM_ERR_NOMEM, NULL, 0, 0, "out of memory");
}

/* Line and column of offset `pos` into the expression. */
static void ex_where(const struct ex *e, size_t pos, int *line, int *col)
{
    *line = e->line;
    *col = e->col;
    for (size_t i = 0; i < pos && i < e->len; i++) {
        if (e->s[i] == '\n') {
            (*line)++;
            *col = 1;
        } else {
            (*col)++;
        }
    }
}

static nm_status ex_fail(struct ex *e, size_t pos, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static nm_status ex_fail(struct ex *e, size_t pos, const char *fmt, ...)
{
    int line, col;
    ex_where(e, pos, &line, &col);
    va_list ap;
    va_start(ap, fmt);
    nm_error_setv(e->r->err, NM_ERR_INPUT, e->r->file, line, col, fmt, ap);
    va_end(ap);
    return NM_ERR_INPUT;
}

/* ---- output ---- */

static nm_status out_grow(struct render *r, size_t more)
{
    nm_tmpl_out *o = r->out;
    if (o->len + more + 1 <= r->cap)
        return NM_OK;
    if (o->len + more + 1 > MAX_OUTPUT)
        return nm_error_set(r->err, NM_ERR_LIMIT, r->file, 0, 0,
                            "the template renders to more than %u MiB", MAX_OUTPUT >> 20);
    size_t cap = r->cap ? r->cap : 4096;
    while (cap < o->len + more + 1)
        cap *= 2;
    char *t = nm_realloc_array(o->text, cap, 1);
    if (!t)
        return nomem(r);
    o->text = t;
    r->cap = cap;
    return NM_OK;
}

static nm_status line_push(struct render *r, const char *file, int line)
{
    nm_tmpl_out *o = r->out;
    if ((o->nlines & (o->nlines - 1)) == 0) { /* 0, 1, 2, 4, ...: grow to a power of two */
        nm_tmpl_line *l = nm_realloc_array(o->lines, o->nlines ? 2 * o->nlines : 1, sizeof *l);
        if (!l)
            return nomem(r);
        o->lines = l;
    }
    o->lines[o->nlines].file = file;
    o->lines[o->nlines].line = line;
    o->nlines++;
    return NM_OK;
}

/* Appends s[0..n) that came from `line` of this template; with `advance`,
 * each newline in it is a new template line too (verbatim text), else the
 * following output lines stay at `line` (an expression's value). */
static nm_status emit(struct render *r, const char *s, size_t n, int line, int advance)
{
    nm_status st = out_grow(r, n);
    if (st != NM_OK)
        return st;
    nm_tmpl_out *o = r->out;
    if (o->nlines == 0 && (st = line_push(r, r->ofile, line)) != NM_OK)
        return st;
    for (size_t i = 0; i < n; i++) {
        o->text[o->len++] = s[i];
        if (s[i] == '\n' && (st = line_push(r, r->ofile, advance ? ++line : line)) != NM_OK)
            return st;
    }
    o->text[o->len] = '\0';
    return NM_OK;
}

/* Appends another rendering (include_text) with its own line map. */
static nm_status emit_mapped(struct render *r, const nm_tmpl_out *in, int line)
{
    nm_status st = out_grow(r, in->len);
    if (st != NM_OK)
        return st;
    nm_tmpl_out *o = r->out;
    if (o->nlines == 0 && (st = line_push(r, r->ofile, line)) != NM_OK)
        return st;
    size_t k = 0;
    for (size_t i = 0; i < in->len; i++) {
        o->text[o->len++] = in->text[i];
        if (in->text[i] == '\n') {
            k++;
            const nm_tmpl_line *src = k < in->nlines ? &in->lines[k] : NULL;
            if ((st = line_push(r, src ? src->file : r->ofile, src ? src->line : line)) != NM_OK)
                return st;
        }
    }
    o->text[o->len] = '\0';
    return NM_OK;
}

/* ---- parsing the template into nodes ---- */

struct cursor {
    struct render *r;
    size_t pos;
    int line, col;
};

static void advance(struct cursor *c, size_t to)
{
    while (c->pos < to) {
        if (c->r->text[c->pos] == '\n') {
            c->line++;
            c->col = 1;
        } else {
            c->col++;
        }
        c->pos++;
    }
}

static tnode *new_node(struct render *r, nkind k, int line, int col)
{
    tnode *n = nm_arena_alloc(r->arena, sizeof *n);
    if (n) {
        n->k = k;
        n->line = line;
        n->col = col;
    }
    return n;
}

/* A tag: its kind char ('{', '%', '#'), its inner text and where that is,
 * and whitespace control on either side. */
struct tag {
    char kind;
    size_t start, end;       /* of the whole tag */
    size_t in, inlen;        /* its inner text */
    int line, col;           /* of the inner text */
    int trim_before, trim_after;
};

/* Finds the next tag at or after c->pos; 0 when there is none. */
static int next_tag(const struct render *r, size_t from, size_t *at)
{
    for (size_t i = from; i + 1 < r->len; i++)
        if (r->text[i] == '{' && (r->text[i + 1] == '{' || r->text[i + 1] == '%' ||
                                  r->text[i + 1] == '#')) {
            *at = i;
            return 1;
        }
    return 0;
}

static nm_status read_tag(struct cursor *c, size_t at, struct tag *t)
{
    struct render *r = c->r;
    advance(c, at);
    int line = c->line, col = c->col;
    t->kind = r->text[at + 1];
    t->start = at;
    char close = t->kind == '{' ? '}' : t->kind;
    size_t i = at + 2;
    t->trim_before = i < r->len && r->text[i] == '-';
    if (t->trim_before)
        i++;
    size_t j;
    /* The closing delimiter: strings inside {{ }} and {% %} may hold it. */
    char quote = 0;
    for (j = i; j + 1 < r->len; j++) {
        char ch = r->text[j];
        if (t->kind != '#') {
            if (quote) {
                if (ch == '\\')
                    j++;
                else if (ch == quote)
                    quote = 0;
                continue;
            }
            if (ch == '\'' || ch == '"') {
                quote = ch;
                continue;
            }
        }
        if (ch == close && r->text[j + 1] == '}')
            break;
    }
    if (j + 1 >= r->len)
        return fail_at(r, line, col, "'%c%c' is never closed by '%c}'", '{', t->kind, close);
    t->trim_after = j > i && r->text[j - 1] == '-';
    t->in = i;
    t->inlen = j - i - (size_t)t->trim_after;
    t->end = j + 2;
    struct cursor d = *c;
    advance(&d, i);
    t->line = d.line;
    t->col = d.col;
    return NM_OK;
}

/* The first word of a statement and the rest. */
static void stmt_word(const struct render *r, const struct tag *t, const char **w, size_t *wlen,
                      size_t *rest)
{
    size_t i = t->in, e = t->in + t->inlen;
    while (i < e && isspace((unsigned char)r->text[i]))
        i++;
    size_t s = i;
    while (i < e && (isalnum((unsigned char)r->text[i]) || r->text[i] == '_'))
        i++;
    *w = r->text + s;
    *wlen = i - s;
    while (i < e && isspace((unsigned char)r->text[i]))
        i++;
    *rest = i;
}

static int word_is(const char *w, size_t n, const char *kw)
{
    return strlen(kw) == n && !strncmp(w, kw, n);
}

/* Node for the expression t->text[from..tag end) (blanks around it cut). */
static tnode *expr_node(struct cursor *c, nkind k, const struct tag *t, size_t from)
{
    struct render *r = c->r;
    size_t e = t->in + t->inlen;
    while (from < e && isspace((unsigned char)r->text[from]))
        from++;
    while (e > from && isspace((unsigned char)r->text[e - 1]))
        e--;
    struct cursor d = *c;
    d.pos = t->in;
    d.line = t->line;
    d.col = t->col;
    advance(&d, from);
    tnode *n = new_node(r, k, d.line, d.col);
    if (n) {
        n->src = r->text + from;
        n->len = e - from;
    }
    return n;
}

/* Parses nodes until an {% end... %}/{% else %}/{% elif %} tag, which is
 * returned in *stop (stop->kind 0 at the end of the template).  `ws_trim`
 * carries a '-%}' over to the text that follows. */
static nm_status parse_list(struct cursor *c, int depth, tnode **first, struct tag *stop,
                            const char **stopword, size_t *stoplen, size_t *stoprest,
                            int *ws_trim);

static nm_status text_node(struct cursor *c, size_t end, int trim_left, int trim_right,
                           tnode ***tail)
{
    struct render *r = c->r;
    size_t s = c->pos, e = end;
    if (trim_left)
        while (s < e && isspace((unsigned char)r->text[s]))
            s++;
    if (trim_right)
        while (e > s && isspace((unsigned char)r->text[e - 1]))
            e--;
    advance(c, s);
    if (e > s) {
        tnode *n = new_node(r, N_TEXT, c->line, c->col);
        if (!n)
            return nomem(r);
        n->src = r->text + s;
        n->len = e - s;
        **tail = n;
        *tail = &n->next;
    }
    advance(c, end);
    return NM_OK;
}

/* Reads the name(s) of `for x in` / `for k, v in` / `set x =`; returns the
 * offset after them, or 0 on a malformed statement. */
static size_t read_names(struct render *r, size_t i, size_t e, const char **a, const char **b)
{
    *a = *b = NULL;
    for (int k = 0; k < 2; k++) {
        while (i < e && isspace((unsigned char)r->text[i]))
            i++;
        size_t s = i;
        if (i < e && (isalpha((unsigned char)r->text[i]) || r->text[i] == '_'))
            while (i < e && (isalnum((unsigned char)r->text[i]) || r->text[i] == '_'))
                i++;
        if (i == s)
            return 0;
        const char *nm = nm_arena_strndup(r->arena, r->text + s, i - s);
        if (!nm)
            return 0;
        if (k == 0)
            *a = nm;
        else
            *b = nm;
        while (i < e && isspace((unsigned char)r->text[i]))
            i++;
        if (k == 0 && i < e && r->text[i] == ',') {
            i++;
            continue;
        }
        break;
    }
    return i;
}

static nm_status parse_list(struct cursor *c, int depth, tnode **first, struct tag *stop,
                            const char **stopword, size_t *stoplen, size_t *stoprest,
                            int *ws_trim)
{
    struct render *r = c->r;
    tnode **tail = first;
    *first = NULL;
    stop->kind = 0;
    if (depth > MAX_DEPTH)
        return fail_at(r, c->line, c->col, "blocks nested more than %d deep", MAX_DEPTH);
    for (;;) {
        size_t at;
        int found = next_tag(r, c->pos, &at);
        struct tag t;
        nm_status st;
        if (!found)
            return text_node(c, r->len, *ws_trim, 0, &tail);
        struct cursor probe = *c;
        if ((st = read_tag(&probe, at, &t)) != NM_OK)
            return st;
        if ((st = text_node(c, at, *ws_trim, t.trim_before, &tail)) != NM_OK)
            return st;
        *c = probe;
        advance(c, t.end);
        *ws_trim = t.trim_after;
        if (t.kind == '#')
            continue;
        if (t.kind == '{') {
            tnode *n = expr_node(&probe, N_OUT, &t, t.in);
            if (!n)
                return nomem(r);
            if (n->len == 0)
                return fail_at(r, t.line, t.col, "empty expression in '{{ }}'");
            *tail = n;
            tail = &n->next;
            continue;
        }
        const char *w;
        size_t wlen, rest;
        stmt_word(r, &t, &w, &wlen, &rest);
        if (word_is(w, wlen, "endif") || word_is(w, wlen, "endfor") || word_is(w, wlen, "else") ||
            word_is(w, wlen, "elif")) {
            *stop = t;
            *stopword = w;
            *stoplen = wlen;
            *stoprest = rest;
            return NM_OK;
        }
        if (word_is(w, wlen, "if")) {
            tnode *n = expr_node(&probe, N_IF, &t, rest), *cur = n;
            if (!n)
                return nomem(r);
            if (n->len == 0)
                return fail_at(r, t.line, t.col, "'if' needs a condition");
            *tail = n;
            tail = &n->next;
            for (;;) {
                struct tag s;
                const char *sw;
                size_t sl, sr;
                if ((st = parse_list(c, depth + 1, &cur->body, &s, &sw, &sl, &sr, ws_trim)) != NM_OK)
                    return st;
                if (!s.kind)
                    return fail_at(r, t.line, t.col, "'if' is never closed by '{%% endif %%}'");
                if (word_is(sw, sl, "endif"))
                    break;
                if (word_is(sw, sl, "endfor"))
                    return fail_at(r, s.line, s.col, "'endfor' closes the 'if' opened at line "
                                   "%d; say '{%% endif %%}' first", t.line);
                if (cur->k == N_TEXT) /* after an else */
                    return fail_at(r, s.line, s.col, "'%.*s' after 'else' in the 'if' at line %d",
                                   (int)sl, sw, t.line);
                struct cursor sc = *c;
                sc.line = s.line;
                sc.col = s.col;
                tnode *alt = word_is(sw, sl, "elif") ? expr_node(&sc, N_IF, &s, sr)
                                                     : new_node(r, N_TEXT, s.line, s.col);
                if (!alt)
                    return nomem(r);
                if (alt->k == N_IF && alt->len == 0)
                    return fail_at(r, s.line, s.col, "'elif' needs a condition");
                cur->alt = alt;
                cur = alt;
            }
            continue;
        }
        if (word_is(w, wlen, "for")) {
            size_t e = t.in + t.inlen;
            const char *a, *b;
            size_t i = read_names(r, rest, e, &a, &b);
            if (!i || i + 2 > e || strncmp(r->text + i, "in", 2) ||
                (i + 2 < e && !isspace((unsigned char)r->text[i + 2])))
                return fail_at(r, t.line, t.col, "write a loop as '{%% for NAME in LIST %%}'");
            tnode *n = expr_node(&probe, N_FOR, &t, i + 2);
            if (!n)
                return nomem(r);
            if (n->len == 0)
                return fail_at(r, t.line, t.col, "'for' needs a list to loop over");
            n->name = a;
            n->name2 = b;
            *tail = n;
            tail = &n->next;
            struct tag s;
            const char *sw;
            size_t sl, sr;
            if ((st = parse_list(c, depth + 1, &n->body, &s, &sw, &sl, &sr, ws_trim)) != NM_OK)
                return st;
            if (s.kind && word_is(sw, sl, "else")) {
                tnode *el = new_node(r, N_TEXT, s.line, s.col);
                if (!el)
                    return nomem(r);
                n->alt = el;
                if ((st = parse_list(c, depth + 1, &el->body, &s, &sw, &sl, &sr, ws_trim)) != NM_OK)
                    return st;
            }
            if (!s.kind || !word_is(sw, sl, "endfor"))
                return fail_at(r, s.kind ? s.line : t.line, s.kind ? s.col : t.col,
                               "'for' at line %d is never closed by '{%% endfor %%}'", t.line);
            continue;
        }
        if (word_is(w, wlen, "set")) {
            size_t e = t.in + t.inlen;
            const char *a, *b;
            size_t i = read_names(r, rest, e, &a, &b);
            if (!i || b || i >= e || r->text[i] != '=')
                return fail_at(r, t.line, t.col, "write an assignment as '{%% set NAME = VALUE %%}'");
            tnode *n = expr_node(&probe, N_SET, &t, i + 1);
            if (!n)
                return nomem(r);
            if (n->len == 0)
                return fail_at(r, t.line, t.col, "'set %s =' needs a value", a);
            n->name = a;
            *tail = n;
            tail = &n->next;
            continue;
        }
        if (word_is(w, wlen, "include")) {
            tnode *n = expr_node(&probe, N_INCLUDE, &t, rest);
            if (!n)
                return nomem(r);
            if (n->len == 0)
                return fail_at(r, t.line, t.col, "'include' needs a file name");
            *tail = n;
            tail = &n->next;
            continue;
        }
        return fail_at(r, t.line, t.col, "unknown statement '%.*s' (nestmap reads if, elif, "
                       "else, endif, for, endfor, set and include)", (int)(wlen ? wlen : 1),
                       wlen ? w : r->text + rest);
    }
}

/* ---- expressions ---- */

static void skip_ws(struct ex *e)
{
    while (e->pos < e->len && isspace((unsigned char)e->s[e->pos]))
        e->pos++;
}

static int peek_op(struct ex *e, const char *op)
{
    skip_ws(e);
    size_t n = strlen(op);
    if (e->pos + n > e->len || strncmp(e->s + e->pos, op, n))
        return 0;
    /* A word operator must stand alone. */
    if (isalpha((unsigned char)op[0]) && e->pos + n < e->len &&
        (isalnum((unsigned char)e->s[e->pos + n]) || e->s[e->pos + n] == '_'))
        return 0;
    return 1;
}

static int eat(struct ex *e, const char *op)
{
    if (!peek_op(e, op))
        return 0;
    e->pos += strlen(op);
    return 1;
}

static tval v_undef(const char *name)
{
    tval v = {0};
    v.k = V_UNDEF;
    v.s = name;
    return v;
}

static tval v_num(double x, int is_int)
{
    tval v = {0};
    v.k = V_NUM;
    v.num = x;
    v.is_int = is_int;
    return v;
}

static tval v_bool(int b)
{
    tval v = {0};
    v.k = V_BOOL;
    v.num = b != 0;
    return v;
}

static nm_status v_str(struct render *r, const char *s, size_t n, tval *out)
{
    memset(out, 0, sizeof *out);
    out->k = V_STR;
    out->s = nm_arena_strndup(r->arena, s, n);
    out->n = n;
    return out->s ? NM_OK : nomem(r);
}

static int truthy(const tval *v)
{
    switch (v->k) {
    case V_UNDEF:
    case V_NONE:
        return 0;
    case V_BOOL:
    case V_NUM:
        return v->num != 0;
    case V_STR:
    case V_LIST:
        return v->n != 0;
    }
    return 0;
}

/* Python's str() of a value, into the render arena. */
static nm_status to_text(struct render *r, const tval *v, int repr, tval *out);

static nm_status num_text(struct render *r, const tval *v, tval *out)
{
    char buf[64];
    if (v->is_int && fabs(v->num) < 9.0e15) {
        snprintf(buf, sizeof buf, "%lld", (long long)v->num);
    } else if (isinf(v->num) || isnan(v->num)) {
        snprintf(buf, sizeof buf, "%s", isnan(v->num) ? "nan" : v->num > 0 ? "inf" : "-inf");
    } else {
        /* Python's repr: the shortest form that reads back; a point or an
         * exponent always shows it is a float. */
        for (int p = 1; p <= 17; p++) {
            snprintf(buf, sizeof buf, "%.*g", p, v->num);
            if (strtod(buf, NULL) == v->num)
                break;
        }
        char *ex = strchr(buf, 'e');
        if (ex) {
            /* 1e-09 as Python writes it: at least two exponent digits. */
            char mant[32], sign = ex[1] == '-' ? '-' : '+';
            int expo = abs(atoi(ex + 1));
            snprintf(mant, sizeof mant, "%.*s", (int)(ex - buf), buf);
            snprintf(buf, sizeof buf, "%s%se%c%02d", mant, strchr(mant, '.') ? "" : "",
                     sign, expo);
        } else if (!strchr(buf, '.')) {
            strcat(buf, ".0");
        }
    }
    return v_str(r, buf, strlen(buf), out);
}

static nm_status to_text(struct render *r, const tval *v, int repr, tval *out)
{
    switch (v->k) {
    case V_UNDEF:
    case V_NONE:
        return v_str(r, "None", 4, out);
    case V_BOOL:
        return v_str(r, v->num ? "True" : "False", v->num ? 4 : 5, out);
    case V_NUM:
        return num_text(r, v, out);
    case V_STR:
        if (!repr) {
            *out = *v;
            return NM_OK;
        } else {
            char *s = nm_arena_alloc(r->arena, v->n + 3);
            if (!s)
                return nomem(r);
            s[0] = '\'';
            memcpy(s + 1, v->s, v->n);
            s[v->n + 1] = '\'';
            memset(out, 0, sizeof *out);
            out->k = V_STR;
            out->s = s;
            out->n = v->n + 2;
            return NM_OK;
        }
    case V_LIST: {
        size_t cap = 2, n = 0;
        tval *parts = nm_arena_alloc(r->arena, (v->n ? v->n : 1) * sizeof *parts);
        if (!parts)
            return nomem(r);
        for (size_t i = 0; i < v->n; i++) {
            nm_status st = to_text(r, &v->items[i], 1, &parts[i]);
            if (st != NM_OK)
                return st;
            cap += parts[i].n + 2;
        }
        char *s = nm_arena_alloc(r->arena, cap + 1);
        if (!s)
            return nomem(r);
        s[n++] = '[';
        for (size_t i = 0; i < v->n; i++) {
            if (i) {
                s[n++] = ',';
                s[n++] = ' ';
            }
            memcpy(s + n, parts[i].s, parts[i].n);
            n += parts[i].n;
        }
        s[n++] = ']';
        memset(out, 0, sizeof *out);
        out->k = V_STR;
        out->s = s;
        out->n = n;
        return NM_OK;
    }
    }
    return NM_OK;
}

/* A value that reads as a number (for a --jinja value or int()). */
static int parse_number(const char *s, size_t n, tval *out)
{
    char buf[64];
    if (n == 0 || n >= sizeof buf)
        return 0;
    memcpy(buf, s, n);
    buf[n] = '\0';
    char *end;
    errno = 0;
    long long i = strtoll(buf, &end, 10);
    if (!*end && !errno) {
        *out = v_num((double)i, 1);
        return 1;
    }
    double d = strtod(buf, &end);
    if (!*end && end != buf) {
        *out = v_num(d, 0);
        return 1;
    }
    return 0;
}

static nm_status need_defined(struct ex *e, const tval *v, size_t pos)
{
    if (v->k != V_UNDEF || e->skip)
        return NM_OK;
    return ex_fail(e, pos, "undefined variable '%s' (give it with --jinja %s=VALUE, or "
                   "write '%s | default(...)')", v->s, v->s, v->s);
}

static const tval *lookup(struct render *r, const char *name, size_t n)
{
    for (size_t i = r->nscope; i-- > 0;)
        if (strlen(r->scope[i].name) == n && !strncmp(r->scope[i].name, name, n))
            return &r->scope[i].v;
    return NULL;
}

static nm_status cli_value(struct render *r, const nm_tmpl_var *v, tval *out)
{
    size_t n = strlen(v->value);
    if (parse_number(v->value, n, out))
        return NM_OK;
    if (!strcmp(v->value, "True") || !strcmp(v->value, "true")) {
        *out = v_bool(1);
        return NM_OK;
    }
    if (!strcmp(v->value, "False") || !strcmp(v->value, "false")) {
        *out = v_bool(0);
        return NM_OK;
    }
    if (!strcmp(v->value, "None")) {
        memset(out, 0, sizeof *out);
        out->k = V_NONE;
        return NM_OK;
    }
    return v_str(r, v->value, n, out);
}

/* Adds a variable to the innermost frame (hiding any of the same name). */
static nm_status push_var(struct render *r, const char *name, const tval *v)
{
    if (r->nscope == r->capscope) {
        size_t cap = r->capscope ? 2 * r->capscope : 16;
        var *s = nm_arena_alloc(r->arena, cap * sizeof *s);
        if (!s)
            return nomem(r);
        if (r->nscope)
            memcpy(s, r->scope, r->nscope * sizeof *s);
        r->scope = s;
        r->capscope = cap;
    }
    r->scope[r->nscope].name = name;
    r->scope[r->nscope].v = *v;
    r->nscope++;
    return NM_OK;
}

/* {% set %}: changes the nearest variable of that name, else adds one. */
static nm_status set_var(struct render *r, const char *name, const tval *v)
{
    for (size_t i = r->nscope; i-- > 0;)
        if (!strcmp(r->scope[i].name, name)) {
            r->scope[i].v = *v;
            return NM_OK;
        }
    return push_var(r, name, v);
}

static nm_status expr(struct ex *e, tval *out, int depth);

/* Arguments of a call or filter, after its '('. */
#define MAX_ARGS 4
static nm_status call_args(struct ex *e, tval *args, size_t *pos, int *nargs, int depth)
{
    *nargs = 0;
    if (eat(e, ")"))
        return NM_OK;
    for (;;) {
        if (*nargs == MAX_ARGS)
            return ex_fail(e, e->pos, "more than %d arguments", MAX_ARGS);
        skip_ws(e);
        /* Keyword arguments (default(x, boolean=True)) are read by position. */
        size_t save = e->pos;
        while (e->pos < e->len && (isalnum((unsigned char)e->s[e->pos]) || e->s[e->pos] == '_'))
            e->pos++;
        skip_ws(e);
        if (!(e->pos < e->len && e->s[e->pos] == '=' && e->pos + 1 < e->len &&
              e->s[e->pos + 1] != '='))
            e->pos = save;
        else
            e->pos++;
        skip_ws(e);
        pos[*nargs] = e->pos;
        nm_status st = expr(e, &args[*nargs], depth + 1);
        if (st != NM_OK)
            return st;
        (*nargs)++;
        if (eat(e, ")"))
            return NM_OK;
        if (!eat(e, ","))
            return ex_fail(e, e->pos, "expected ',' or ')' in the arguments");
    }
}

/* The folder part of path, into dir. */
static void dirname_of(const char *path, char *dir, size_t size)
{
    const char *slash = strrchr(path, '/');
    if (!slash)
        snprintf(dir, size, ".");
    else if (slash == path)
        snprintf(dir, size, "/");
    else
        snprintf(dir, size, "%.*s", (int)(slash - path), path);
}

/* Every existing path p names (a glob), relative to the template's folder,
 * then to each include folder, as Accelergy looks them up.  Returns the
 * count (0: none) and the paths in the render arena. */
static nm_status find_paths(struct render *r, const char *p, char ***paths, size_t *n)
{
    *paths = NULL;
    *n = 0;
    size_t nbase = p[0] == '/' ? 1 : 1 + r->ndirs;
    for (size_t b = 0; b < nbase; b++) {
        char full[PATH_LEN];
        const char *base = p[0] == '/' ? "" : b == 0 ? r->dir : r->dirs[b - 1];
        if (snprintf(full, sizeof full, "%s%s%s", base, base[0] ? "/" : "", p) >= (int)sizeof full)
            continue;
        glob_t g;
        if (glob(full, 0, NULL, &g) != 0)
            continue;
        char **all = nm_arena_alloc(r->arena, (*n + g.gl_pathc + 1) * sizeof *all);
        if (!all) {
            globfree(&g);
            return nomem(r);
        }
        if (*n)
            memcpy(all, *paths, *n * sizeof *all);
        for (size_t i = 0; i < g.gl_pathc; i++) {
            char real[PATH_MAX];
            const char *use = realpath(g.gl_pathv[i], real) ? real : g.gl_pathv[i];
            int dup = 0;
            for (size_t j = 0; j < *n && !dup; j++)
                dup = !strcmp(all[j], use);
            if (dup)
                continue;
            if (!(all[*n] = nm_arena_strndup(r->arena, use, strlen(use)))) {
                globfree(&g);
                return nomem(r);
            }
            (*n)++;
        }
        globfree(&g);
        *paths = all;
    }
    return NM_OK;
}

static nm_status not_found(struct ex *e, size_t pos, const char *p)
{
    struct render *r = e->r;
    if (p[0] == '/')
        return ex_fail(e, pos, "no file '%s'", p);
    char where[PATH_LEN + 64];
    int k = snprintf(where, sizeof where, "%s", r->dir);
    for (size_t i = 0; i < r->ndirs && k < (int)sizeof where - 1; i++)
        if (strcmp(r->dirs[i], r->dir)) /* add_to_path(cwd()) adds the folder itself */
            k += snprintf(where + k, sizeof where - (size_t)k, ", %s", r->dirs[i]);
    return ex_fail(e, pos, "no file '%s' in %s%s", p, where,
                   r->ndirs ? "" : " (add_to_path() adds folders to look in)");
}

static nm_status render_file(struct render *parent, const char *path, nm_tmpl_out *out, int line,
                             int col);

/* A function call: name[0..nlen) with args. */
static nm_status call(struct ex *e, const char *name, size_t nlen, size_t at, tval *args,
                      size_t *apos, int nargs, tval *out)
{
    struct render *r = e->r;
    nm_status st;
    memset(out, 0, sizeof *out);
    out->k = V_NONE;
    for (int i = 0; i < nargs; i++)
        if ((st = need_defined(e, &args[i], apos[i])) != NM_OK)
            return st;
#define IS(fn) (strlen(fn) == nlen && !strncmp(name, fn, nlen))
#define NEED(lo, hi, what)                                                              \
    do {                                                                                \
        if (nargs < (lo) || nargs > (hi))                                               \
            return ex_fail(e, at, "%.*s() takes %s", (int)nlen, name, what);            \
    } while (0)
#define STRARG(i)                                                                       \
    do {                                                                                \
        if (args[i].k != V_STR)                                                         \
            return ex_fail(e, apos[i], "%.*s(): argument %d must be a string",          \
                           (int)nlen, name, (i) + 1);                                   \
    } while (0)
    if (IS("range")) {
        NEED(1, 3, "one to three numbers");
        double a[3] = {0, 0, 1};
        for (int i = 0; i < nargs; i++) {
            if (args[i].k != V_NUM || args[i].num != floor(args[i].num))
                return ex_fail(e, apos[i], "range() takes whole numbers");
            a[nargs == 1 ? 1 : i] = args[i].num;
        }
        if (a[2] == 0)
            return ex_fail(e, at, "range() step must not be zero");
        double cnt = ceil((a[1] - a[0]) / a[2]);
        if (cnt < 0)
            cnt = 0;
        if (cnt > MAX_LOOP)
            return ex_fail(e, at, "range() of more than %d numbers", MAX_LOOP);
        out->k = V_LIST;
        out->n = (size_t)cnt;
        out->items = nm_arena_alloc(r->arena, (out->n ? out->n : 1) * sizeof *out->items);
        if (!out->items)
            return nomem(r);
        for (size_t i = 0; i < out->n; i++)
            out->items[i] = v_num(a[0] + (double)i * a[2], 1);
        return NM_OK;
    }
    if (e->skip)
        return NM_OK; /* an untaken branch: no file is read, no path added */
    if (!r->files && !IS("setenv"))
        return ex_fail(e, at, "%.*s() reads files, and a template given as text has none to "
                       "read", (int)nlen, name);
    if (IS("cwd")) {
        NEED(0, 0, "no arguments");
        return v_str(r, r->dir, strlen(r->dir), out);
    }
    if (IS("setenv")) {
        NEED(2, 2, "a name and a value");
        return v_str(r, "", 0, out); /* Accelergy's plug-ins read it; nestmap runs none */
    }
    if (IS("path_exists") || IS("find_path") || IS("add_to_path") || IS("include_text") ||
        IS("include") || IS("include_all") || IS("find_paths")) {
        int key = IS("include") || IS("include_all");
        NEED(1, key ? 2 : 1, key ? "a file name and an optional key" : "a file name");
        STRARG(0);
        if (nargs == 2)
            STRARG(1);
        char **paths;
        size_t n;
        if ((st = find_paths(r, args[0].s, &paths, &n)) != NM_OK)
            return st;
        if (IS("path_exists")) {
            *out = v_bool(n > 0);
            return NM_OK;
        }
        if (!n)
            return not_found(e, apos[0], args[0].s);
        if (IS("find_path"))
            return v_str(r, paths[0], strlen(paths[0]), out);
        if (IS("find_paths") || IS("add_to_path")) {
            if (IS("add_to_path")) {
                for (size_t i = 0; i < n; i++) {
                    if (r->ndirs == MAX_DIRS)
                        return ex_fail(e, at, "more than %d folders added to the path", MAX_DIRS);
                    r->dirs[r->ndirs++] = paths[i];
                }
                return v_str(r, "", 0, out);
            }
            out->k = V_LIST;
            out->n = n;
            out->items = nm_arena_alloc(r->arena, n * sizeof *out->items);
            if (!out->items)
                return nomem(r);
            for (size_t i = 0; i < n; i++)
                if ((st = v_str(r, paths[i], strlen(paths[i]), &out->items[i])) != NM_OK)
                    return st;
            return NM_OK;
        }
        int line, col;
        ex_where(e, at, &line, &col);
        if (IS("include_text")) {
            /* Each file rendered with the same variables, joined by newlines. */
            nm_tmpl_out *joined = nm_arena_alloc(r->arena, sizeof *joined);
            if (!joined)
                return nomem(r);
            struct render sub = *r;
            sub.out = joined;
            sub.cap = 0;
            for (size_t i = 0; i < n; i++) {
                nm_tmpl_out one = {0};
                if ((st = render_file(r, paths[i], &one, line, col)) == NM_OK) {
                    if (i)
                        st = emit(&sub, "\n", 1, line, 0);
                    if (st == NM_OK)
                        st = emit_mapped(&sub, &one, line);
                }
                nm_tmpl_out_fini(&one);
                if (st != NM_OK) {
                    nm_tmpl_out_fini(joined);
                    return st;
                }
            }
            /* The joined text lives in the arena, its map too. */
            char *t = nm_arena_strndup(r->arena, joined->text ? joined->text : "", joined->len);
            nm_tmpl_line *l = nm_arena_alloc(r->arena, (joined->nlines + 1) * sizeof *l);
            if (!t || !l) {
                nm_tmpl_out_fini(joined);
                return nomem(r);
            }
            if (joined->nlines)
                memcpy(l, joined->lines, joined->nlines * sizeof *l);
            size_t len = joined->len, nl = joined->nlines;
            nm_tmpl_out_fini(joined);
            joined->text = t;
            joined->len = len;
            joined->lines = l;
            joined->nlines = nl;
            out->k = V_STR;
            out->s = t;
            out->n = len;
            out->map = joined;
            return NM_OK;
        }
        if (!r->hooks || !r->hooks->include)
            return ex_fail(e, at, "%.*s() is not available here", (int)nlen, name);
        if (IS("include") && n > 1)
            return ex_fail(e, apos[0], "'%s' names %zu files; include_all() takes several",
                           args[0].s, n);
        int id;
        if ((st = r->hooks->include(r->hooks->ctx, (const char *const *)paths, n,
                                    nargs == 2 ? args[1].s : "", (const char *const *)r->dirs,
                                    r->ndirs, r->file, line, col, &id, r->err)) != NM_OK)
            return st;
        char tag[48];
        snprintf(tag, sizeof tag, "!nm_include %d", id);
        return v_str(r, tag, strlen(tag), out);
    }
#undef IS
#undef NEED
#undef STRARG
    return ex_fail(e, at, "unknown function '%.*s' (nestmap's templates have cwd, path_exists, "
                   "find_path, find_paths, add_to_path, include, include_all, include_text, "
                   "range and setenv)", (int)nlen, name);
}

/* A filter: v | name(args). */
static nm_status filter(struct ex *e, const char *name, size_t nlen, size_t at, tval *v,
                        size_t vpos, tval *args, size_t *apos, int nargs)
{
    struct render *r = e->r;
    nm_status st;
#define IS(fn) (strlen(fn) == nlen && !strncmp(name, fn, nlen))
    if (IS("default") || IS("d")) {
        if (nargs < 1 || nargs > 2)
            return ex_fail(e, at, "default() takes a value (and an optional boolean)");
        int use = v->k == V_UNDEF || (nargs == 2 && truthy(&args[1]) && !truthy(v));
        if (use)
            *v = args[0];
        return NM_OK;
    }
    if ((st = need_defined(e, v, vpos)) != NM_OK)
        return st;
    if (e->skip)
        return NM_OK;
    if (IS("int") || IS("float")) {
        tval n = *v;
        if (v->k == V_STR && !parse_number(v->s, v->n, &n))
            n = nargs ? args[0] : v_num(0, 1);
        if (n.k == V_BOOL)
            n = v_num(n.num, 1);
        if (n.k != V_NUM)
            return ex_fail(e, vpos, "%.*s(): not a number", (int)nlen, name);
        *v = IS("int") ? v_num(trunc(n.num), 1) : v_num(n.num, 0);
        return NM_OK;
    }
    if (IS("string"))
        return to_text(r, v, 0, v);
    if (IS("lower") || IS("upper") || IS("trim")) {
        tval s;
        if ((st = to_text(r, v, 0, &s)) != NM_OK)
            return st;
        size_t b = 0, n = s.n;
        if (IS("trim")) {
            while (b < n && isspace((unsigned char)s.s[b]))
                b++;
            while (n > b && isspace((unsigned char)s.s[n - 1]))
                n--;
        }
        if ((st = v_str(r, s.s + b, n - b, v)) != NM_OK)
            return st;
        char *p = (char *)v->s;
        for (size_t i = 0; i < v->n && !IS("trim"); i++)
            p[i] = (char)(IS("lower") ? tolower((unsigned char)p[i]) : toupper((unsigned char)p[i]));
        return NM_OK;
    }
    if (IS("length") || IS("count")) {
        if (v->k != V_STR && v->k != V_LIST)
            return ex_fail(e, vpos, "length of a value that is neither a string nor a list");
        *v = v_num((double)v->n, 1);
        return NM_OK;
    }
    if (IS("first") || IS("last")) {
        if (v->k != V_LIST || !v->n)
            return ex_fail(e, vpos, "%.*s of an empty list or a non-list", (int)nlen, name);
        *v = v->items[IS("first") ? 0 : v->n - 1];
        return NM_OK;
    }
    if (IS("abs") || IS("round")) {
        if (v->k != V_NUM)
            return ex_fail(e, vpos, "%.*s() of a value that is not a number", (int)nlen, name);
        if (IS("abs")) {
            *v = v_num(fabs(v->num), v->is_int);
        } else {
            int digits = nargs && args[0].k == V_NUM ? (int)args[0].num : 0;
            double m = pow(10.0, digits);
            *v = v_num(nearbyint(v->num * m) / m, 0);
        }
        return NM_OK;
    }
    if (IS("list")) {
        if (v->k == V_LIST)
            return NM_OK;
        return ex_fail(e, vpos, "list() of a value that is not a list");
    }
    if (IS("join")) {
        if (v->k != V_LIST)
            return ex_fail(e, vpos, "join of a value that is not a list");
        tval sep = {0};
        if (nargs && (st = to_text(r, &args[0], 0, &sep)) != NM_OK)
            return st;
        size_t total = 0;
        tval *parts = nm_arena_alloc(r->arena, (v->n ? v->n : 1) * sizeof *parts);
        if (!parts)
            return nomem(r);
        for (size_t i = 0; i < v->n; i++) {
            if ((st = to_text(r, &v->items[i], 0, &parts[i])) != NM_OK)
                return st;
            total += parts[i].n + (i ? sep.n : 0);
        }
        char *s = nm_arena_alloc(r->arena, total + 1);
        if (!s)
            return nomem(r);
        size_t k = 0;
        for (size_t i = 0; i < v->n; i++) {
            if (i && sep.n) {
                memcpy(s + k, sep.s, sep.n);
                k += sep.n;
            }
            memcpy(s + k, parts[i].s, parts[i].n);
            k += parts[i].n;
        }
        return v_str(r, s, k, v);
    }
    if (IS("replace")) {
        if (nargs != 2 || args[0].k != V_STR || args[1].k != V_STR || !args[0].n)
            return ex_fail(e, at, "replace() takes two strings, the first not empty");
        tval s;
        if ((st = to_text(r, v, 0, &s)) != NM_OK)
            return st;
        size_t count = 0;
        for (const char *p = s.s; (p = strstr(p, args[0].s)); p += args[0].n)
            count++;
        size_t n = s.n + count * args[1].n;
        char *o = nm_arena_alloc(r->arena, n + 1);
        if (!o)
            return nomem(r);
        size_t k = 0;
        for (size_t i = 0; i < s.n;) {
            if (i + args[0].n <= s.n && !strncmp(s.s + i, args[0].s, args[0].n)) {
                memcpy(o + k, args[1].s, args[1].n);
                k += args[1].n;
                i += args[0].n;
            } else {
                o[k++] = s.s[i++];
            }
        }
        return v_str(r, o, k, v);
    }
#undef IS
    (void)apos;
    return ex_fail(e, at, "unknown filter '%.*s' (nestmap's templates have default, int, float, "
                   "string, lower, upper, trim, length, first, last, abs, round, list, join "
                   "and replace)", (int)nlen, name);
}

/* primary: literal, name, (expr), [list], call; then postfix filters. */
static nm_status primary(struct ex *e, tval *out, int depth)
{
    struct render *r = e->r;
    nm_status st;
    if (depth > MAX_DEPTH)
        return ex_fail(e, e->pos, "expression nested too deeply");
    skip_ws(e);
    size_t at = e->pos;
    if (at >= e->len)
        return ex_fail(e, at, "an expression ends too early");
    char ch = e->s[at];
    if (eat(e, "(")) {
        if ((st = expr(e, out, depth + 1)) != NM_OK)
            return st;
        if (!eat(e, ")"))
            return ex_fail(e, e->pos, "expected ')' to close the '(' at column %d", e->col + (int)at);
    } else if (eat(e, "[")) {
        size_t cap = 4;
        memset(out, 0, sizeof *out);
        out->k = V_LIST;
        out->items = nm_arena_alloc(r->arena, cap * sizeof *out->items);
        if (!out->items)
            return nomem(r);
        if (!eat(e, "]")) {
            for (;;) {
                if (out->n == cap) {
                    tval *more = nm_arena_alloc(r->arena, 2 * cap * sizeof *more);
                    if (!more)
                        return nomem(r);
                    memcpy(more, out->items, cap * sizeof *more);
                    out->items = more;
                    cap *= 2;
                }
                if ((st = expr(e, &out->items[out->n], depth + 1)) != NM_OK)
                    return st;
                out->n++;
                if (eat(e, "]"))
                    break;
                if (!eat(e, ","))
                    return ex_fail(e, e->pos, "expected ',' or ']' in the list");
            }
        }
    } else if (ch == '\'' || ch == '"') {
        size_t i = at + 1;
        char *buf = nm_arena_alloc(r->arena, e->len - at + 1);
        size_t n = 0;
        if (!buf)
            return nomem(r);
        while (i < e->len && e->s[i] != ch) {
            char c = e->s[i++];
            if (c == '\\' && i < e->len) {
                char x = e->s[i++];
                c = x == 'n' ? '\n' : x == 't' ? '\t' : x;
            }
            buf[n++] = c;
        }
        if (i >= e->len)
            return ex_fail(e, at, "a string is never closed");
        buf[n] = '\0';
        memset(out, 0, sizeof *out);
        out->k = V_STR;
        out->s = buf;
        out->n = n;
        e->pos = i + 1;
    } else if (isdigit((unsigned char)ch) || (ch == '.' && at + 1 < e->len &&
                                               isdigit((unsigned char)e->s[at + 1]))) {
        char *end;
        char buf[64];
        size_t n = 0;
        while (at + n < e->len && n < sizeof buf - 1 &&
               (isalnum((unsigned char)e->s[at + n]) || e->s[at + n] == '.' ||
                ((e->s[at + n] == '-' || e->s[at + n] == '+') && n &&
                 (e->s[at + n - 1] == 'e' || e->s[at + n - 1] == 'E'))))
            n++;
        memcpy(buf, e->s + at, n);
        buf[n] = '\0';
        int is_int = !strpbrk(buf, ".eE");
        double d = strtod(buf, &end);
        if (*end)
            return ex_fail(e, at, "'%s' is not a number", buf);
        *out = v_num(d, is_int);
        e->pos = at + n;
    } else if (isalpha((unsigned char)ch) || ch == '_') {
        size_t n = 0;
        while (at + n < e->len && (isalnum((unsigned char)e->s[at + n]) || e->s[at + n] == '_' ||
                                   (e->s[at + n] == '.' && at + n + 1 < e->len &&
                                    isalpha((unsigned char)e->s[at + n + 1]))))
            n++;
        const char *name = e->s + at;
        e->pos = at + n;
        if (eat(e, "(")) {
            tval args[MAX_ARGS];
            size_t apos[MAX_ARGS];
            int nargs;
            if ((st = call_args(e, args, apos, &nargs, depth)) != NM_OK)
                return st;
            if ((st = call(e, name, n, at, args, apos, nargs, out)) != NM_OK)
                return st;
        } else if ((n == 4 && (!strncmp(name, "True", 4) || !strncmp(name, "true", 4))) ||
                   (n == 5 && (!strncmp(name, "False", 5) || !strncmp(name, "false", 5)))) {
            *out = v_bool(n == 4);
        } else if (n == 4 && (!strncmp(name, "None", 4) || !strncmp(name, "none", 4))) {
            memset(out, 0, sizeof *out);
            out->k = V_NONE;
        } else {
            const tval *v = lookup(r, name, n);
            if (v) {
                *out = *v;
            } else {
                const char *nm = nm_arena_strndup(r->arena, name, n);
                if (!nm)
                    return nomem(r);
                *out = v_undef(nm);
            }
        }
    } else {
        return ex_fail(e, at, "unexpected '%c' in an expression", ch);
    }
    /* Postfix: [index], then filters. */
    while (peek_op(e, "[")) {
        size_t ip = e->pos;
        e->pos++;
        tval idx;
        if ((st = expr(e, &idx, depth + 1)) != NM_OK)
            return st;
        if (!eat(e, "]"))
            return ex_fail(e, e->pos, "expected ']'");
        if ((st = need_defined(e, out, at)) != NM_OK)
            return st;
        if (e->skip)
            continue;
        if (out->k != V_LIST || idx.k != V_NUM)
            return ex_fail(e, ip, "only lists take an index [N]");
        long long i = (long long)idx.num;
        if (i < 0)
            i += (long long)out->n;
        if (i < 0 || i >= (long long)out->n)
            return ex_fail(e, ip, "index %lld is outside a list of %zu", (long long)idx.num,
                           out->n);
        *out = out->items[i];
    }
    while (peek_op(e, "|")) {
        e->pos++;
        skip_ws(e);
        size_t fat = e->pos, n = 0;
        while (fat + n < e->len && (isalnum((unsigned char)e->s[fat + n]) || e->s[fat + n] == '_'))
            n++;
        if (!n)
            return ex_fail(e, fat, "a filter name must follow '|'");
        e->pos = fat + n;
        tval args[MAX_ARGS];
        size_t apos[MAX_ARGS];
        int nargs = 0;
        if (eat(e, "(") && (st = call_args(e, args, apos, &nargs, depth)) != NM_OK)
            return st;
        if ((st = filter(e, e->s + fat, n, fat, out, at, args, apos, nargs)) != NM_OK)
            return st;
    }
    return NM_OK;
}

static nm_status unary(struct ex *e, tval *out, int depth)
{
    skip_ws(e);
    size_t at = e->pos;
    if (eat(e, "-") || eat(e, "+")) {
        int neg = e->s[at] == '-';
        nm_status st = unary(e, out, depth + 1);
        if (st != NM_OK || (st = need_defined(e, out, at)) != NM_OK || e->skip)
            return st;
        if (out->k != V_NUM && out->k != V_BOOL)
            return ex_fail(e, at, "'%c' before a value that is not a number", e->s[at]);
        *out = v_num(neg ? -out->num : out->num, out->is_int || out->k == V_BOOL);
        return NM_OK;
    }
    return primary(e, out, depth);
}

/* Arithmetic on two values; op one of + - * / // % ~. */
static nm_status arith(struct ex *e, const char *op, size_t at, tval *a, size_t apos,
                       const tval *b, size_t bpos)
{
    nm_status st;
    if ((st = need_defined(e, a, apos)) != NM_OK || (st = need_defined(e, b, bpos)) != NM_OK ||
        e->skip)
        return st;
    if (!strcmp(op, "~")) {
        tval x, y;
        if ((st = to_text(e->r, a, 0, &x)) != NM_OK || (st = to_text(e->r, b, 0, &y)) != NM_OK)
            return st;
        char *s = nm_arena_alloc(e->r->arena, x.n + y.n + 1);
        if (!s)
            return nomem(e->r);
        memcpy(s, x.s, x.n);
        memcpy(s + x.n, y.s, y.n);
        return v_str(e->r, s, x.n + y.n, a);
    }
    if (!strcmp(op, "+") && a->k == V_STR && b->k == V_STR) {
        tval bb = *b;
        return arith(e, "~", at, a, apos, &bb, bpos);
    }
    if (!strcmp(op, "+") && a->k == V_LIST && b->k == V_LIST) {
        tval *items = nm_arena_alloc(e->r->arena, (a->n + b->n + 1) * sizeof *items);
        if (!items)
            return nomem(e->r);
        memcpy(items, a->items, a->n * sizeof *items);
        memcpy(items + a->n, b->items, b->n * sizeof *items);
        a->items = items;
        a->n += b->n;
        return NM_OK;
    }
    if ((a->k != V_NUM && a->k != V_BOOL) || (b->k != V_NUM && b->k != V_BOOL))
        return ex_fail(e, at, "'%s' needs numbers on both sides", op);
    double x = a->num, y = b->num, z;
    int is_int = (a->is_int || a->k == V_BOOL) && (b->is_int || b->k == V_BOOL);
    if ((!strcmp(op, "/") || !strcmp(op, "//") || !strcmp(op, "%")) && y == 0)
        return ex_fail(e, bpos, "division by zero");
    if (!strcmp(op, "+"))
        z = x + y;
    else if (!strcmp(op, "-"))
        z = x - y;
    else if (!strcmp(op, "*"))
        z = x * y;
    else if (!strcmp(op, "/")) {
        z = x / y;
        is_int = 0;
    } else if (!strcmp(op, "//"))
        z = floor(x / y);
    else
        z = x - y * floor(x / y);
    *a = v_num(z, is_int);
    return NM_OK;
}

static nm_status product(struct ex *e, tval *out, int depth)
{
    size_t apos = (skip_ws(e), e->pos);
    nm_status st = unary(e, out, depth);
    while (st == NM_OK) {
        const char *op = peek_op(e, "//") ? "//" : peek_op(e, "*") && !peek_op(e, "**") ? "*"
                       : peek_op(e, "/") ? "/" : peek_op(e, "%") ? "%" : NULL;
        if (!op)
            break;
        size_t at = e->pos;
        e->pos += strlen(op);
        tval b;
        size_t bpos = (skip_ws(e), e->pos);
        if ((st = unary(e, &b, depth)) == NM_OK)
            st = arith(e, op, at, out, apos, &b, bpos);
    }
    return st;
}

static nm_status sum(struct ex *e, tval *out, int depth)
{
    size_t apos = (skip_ws(e), e->pos);
    nm_status st = product(e, out, depth);
    while (st == NM_OK) {
        const char *op = peek_op(e, "+") ? "+" : peek_op(e, "-") ? "-" : peek_op(e, "~") ? "~"
                                                                                          : NULL;
        if (!op)
            break;
        size_t at = e->pos;
        e->pos++;
        tval b;
        size_t bpos = (skip_ws(e), e->pos);
        if ((st = product(e, &b, depth)) == NM_OK)
            st = arith(e, op, at, out, apos, &b, bpos);
    }
    return st;
}

static int equal(const tval *a, const tval *b)
{
    if ((a->k == V_NUM || a->k == V_BOOL) && (b->k == V_NUM || b->k == V_BOOL))
        return a->num == b->num;
    if (a->k != b->k)
        return 0;
    if (a->k == V_STR)
        return a->n == b->n && !memcmp(a->s, b->s, a->n);
    if (a->k == V_LIST) {
        if (a->n != b->n)
            return 0;
        for (size_t i = 0; i < a->n; i++)
            if (!equal(&a->items[i], &b->items[i]))
                return 0;
        return 1;
    }
    return 1; /* None == None */
}

static nm_status compare(struct ex *e, tval *out, int depth)
{
    size_t apos = (skip_ws(e), e->pos);
    nm_status st = sum(e, out, depth);
    if (st != NM_OK)
        return st;
    /* `is [not] defined/none/number/string` */
    if (peek_op(e, "is")) {
        e->pos += 2;
        int neg = eat(e, "not");
        skip_ws(e);
        size_t tat = e->pos, n = 0;
        while (tat + n < e->len && (isalnum((unsigned char)e->s[tat + n]) || e->s[tat + n] == '_'))
            n++;
        e->pos = tat + n;
        int res;
        if (n == 7 && !strncmp(e->s + tat, "defined", 7))
            res = out->k != V_UNDEF;
        else if (n == 9 && !strncmp(e->s + tat, "undefined", 9))
            res = out->k == V_UNDEF;
        else if ((st = need_defined(e, out, apos)) != NM_OK)
            return st;
        else if (n == 4 && !strncmp(e->s + tat, "none", 4))
            res = out->k == V_NONE;
        else if (n == 6 && !strncmp(e->s + tat, "number", 6))
            res = out->k == V_NUM;
        else if (n == 6 && !strncmp(e->s + tat, "string", 6))
            res = out->k == V_STR;
        else
            return ex_fail(e, tat, "unknown test '%.*s' (defined, undefined, none, number, "
                           "string)", (int)n, e->s + tat);
        *out = v_bool(neg ? !res : res);
        return NM_OK;
    }
    static const char *const ops[] = {"==", "!=", "<=", ">=", "<", ">", "not in", "in", NULL};
    for (;;) {
        const char *op = NULL;
        for (int i = 0; ops[i] && !op; i++)
            if (peek_op(e, ops[i]))
                op = ops[i];
        if (!op)
            return NM_OK;
        size_t at = e->pos;
        if (!strcmp(op, "not in")) {
            e->pos += 3;
            skip_ws(e);
            e->pos += 2;
        } else {
            e->pos += strlen(op);
        }
        tval b;
        size_t bpos = (skip_ws(e), e->pos);
        if ((st = sum(e, &b, depth)) != NM_OK)
            return st;
        if ((st = need_defined(e, out, apos)) != NM_OK || (st = need_defined(e, &b, bpos)) != NM_OK)
            return st;
        if (e->skip) {
            *out = v_bool(0);
            continue;
        }
        int res;
        if (!strcmp(op, "==") || !strcmp(op, "!=")) {
            res = equal(out, &b) == (op[0] == '=');
        } else if (strstr(op, "in")) {
            res = 0;
            if (b.k == V_LIST) {
                for (size_t i = 0; i < b.n && !res; i++)
                    res = equal(out, &b.items[i]);
            } else if (b.k == V_STR && out->k == V_STR) {
                res = strstr(b.s, out->s) != NULL;
            } else {
                return ex_fail(e, bpos, "'in' needs a list or a string on its right");
            }
            if (op[0] == 'n')
                res = !res;
        } else {
            double c;
            if ((out->k == V_NUM || out->k == V_BOOL) && (b.k == V_NUM || b.k == V_BOOL))
                c = out->num - b.num;
            else if (out->k == V_STR && b.k == V_STR)
                c = strcmp(out->s, b.s);
            else
                return ex_fail(e, at, "'%s' compares numbers with numbers or strings with "
                               "strings", op);
            res = !strcmp(op, "<") ? c < 0 : !strcmp(op, ">") ? c > 0 : !strcmp(op, "<=") ? c <= 0
                                                                                         : c >= 0;
        }
        *out = v_bool(res);
    }
}

static nm_status negation(struct ex *e, tval *out, int depth)
{
    skip_ws(e);
    size_t at = e->pos;
    if (eat(e, "not")) {
        nm_status st = negation(e, out, depth + 1);
        if (st != NM_OK || (st = need_defined(e, out, at)) != NM_OK)
            return st;
        *out = v_bool(!truthy(out));
        return NM_OK;
    }
    return compare(e, out, depth);
}

/* `a and b` (and_ 1) or `a or b` (and_ 0), short-circuit: the right side
 * is read in any case, evaluated only when it decides. */
static nm_status logical(struct ex *e, tval *out, int depth, int and_)
{
    size_t apos = (skip_ws(e), e->pos);
    nm_status st = and_ ? negation(e, out, depth) : logical(e, out, depth, 1);
    while (st == NM_OK && eat(e, and_ ? "and" : "or")) {
        if ((st = need_defined(e, out, apos)) != NM_OK)
            return st;
        int taken = truthy(out) == and_, skip = e->skip;
        e->skip = skip || !taken;
        tval b;
        size_t bpos = (skip_ws(e), e->pos);
        st = and_ ? negation(e, &b, depth) : logical(e, &b, depth, 1);
        e->skip = skip;
        if (st == NM_OK && taken && (st = need_defined(e, &b, bpos)) == NM_OK)
            *out = b;
    }
    return st;
}

/* expr: a [if cond else b] */
static nm_status expr(struct ex *e, tval *out, int depth)
{
    if (depth > MAX_DEPTH)
        return ex_fail(e, e->pos, "expression nested too deeply");
    int skip = e->skip;
    nm_status st = logical(e, out, depth + 1, 0);
    if (st != NM_OK || !peek_op(e, "if"))
        return st;
    e->pos += 2;
    size_t cpos = (skip_ws(e), e->pos);
    tval cond;
    if ((st = logical(e, &cond, depth + 1, 0)) != NM_OK ||
        (st = need_defined(e, &cond, cpos)) != NM_OK)
        return st;
    int c = truthy(&cond);
    tval alt = {0};
    alt.k = V_NONE;
    if (eat(e, "else")) {
        e->skip = skip || c;
        st = expr(e, &alt, depth + 1);
        e->skip = skip;
        if (st != NM_OK)
            return st;
    }
    if (!c)
        *out = alt;
    return NM_OK;
}

/* Evaluates the node's whole expression. */
static nm_status eval(struct render *r, const tnode *n, tval *out)
{
    struct ex e = {r, n->src, 0, n->len, n->line, n->col, 0};
    nm_status st = expr(&e, out, 0);
    if (st != NM_OK)
        return st;
    skip_ws(&e);
    if (e.pos < e.len)
        return ex_fail(&e, e.pos, "unexpected '%.*s' after the expression",
                       (int)(e.len - e.pos > 20 ? 20 : e.len - e.pos), e.s + e.pos);
    return NM_OK;
}

static nm_status eval_defined(struct render *r, const tnode *n, tval *out)
{
    nm_status st = eval(r, n, out);
    if (st == NM_OK && out->k == V_UNDEF) {
        struct ex e = {r, n->src, 0, n->len, n->line, n->col, 0};
        size_t at = 0;
        while (at < n->len && isspace((unsigned char)n->src[at]))
            at++;
        return need_defined(&e, out, at);
    }
    return st;
}

/* ---- executing the tree ---- */

static nm_status exec(struct render *r, const tnode *n, int depth)
{
    nm_status st;
    for (; n; n = n->next) {
        if (++*r->steps > MAX_STEPS)
            return fail_at(r, n->line, n->col, "the template runs more than %d steps (a loop "
                           "that does not end?)", MAX_STEPS);
        switch (n->k) {
        case N_TEXT:
            if ((st = emit(r, n->src, n->len, n->line, 1)) != NM_OK)
                return st;
            break;
        case N_OUT: {
            tval v, s;
            if ((st = eval_defined(r, n, &v)) != NM_OK)
                return st;
            if (v.k == V_STR && v.map) {
                if ((st = emit_mapped(r, v.map, n->line)) != NM_OK)
                    return st;
                break;
            }
            if ((st = to_text(r, &v, 0, &s)) != NM_OK ||
                (st = emit(r, s.s, s.n, n->line, 0)) != NM_OK)
                return st;
            break;
        }
        case N_IF: {
            const tnode *b = n;
            while (b && b->k == N_IF) {
                tval c;
                if ((st = eval_defined(r, b, &c)) != NM_OK)
                    return st;
                if (truthy(&c))
                    break;
                b = b->alt;
            }
            if (b && (st = exec(r, b->body, depth + 1)) != NM_OK)
                return st;
            break;
        }
        case N_FOR: {
            tval list;
            if ((st = eval_defined(r, n, &list)) != NM_OK)
                return st;
            if (list.k != V_LIST)
                return fail_at(r, n->line, n->col, "'for' loops over a list (got %s)",
                               list.k == V_STR ? "a string" : list.k == V_NUM ? "a number"
                                                                              : "no list");
            if (n->name2)
                return fail_at(r, n->line, n->col, "'for %s, %s in' needs pairs, and nestmap's "
                               "templates have no mappings", n->name, n->name2);
            if (!list.n && n->alt) {
                if ((st = exec(r, n->alt->body, depth + 1)) != NM_OK)
                    return st;
                break;
            }
            size_t saved = r->nscope;
            for (size_t i = 0; i < list.n; i++) {
                r->nscope = saved;
                tval loopv[6] = {v_num((double)i + 1, 1), v_num((double)i, 1), v_bool(i == 0),
                                 v_bool(i + 1 == list.n), v_num((double)list.n, 1),
                                 list.items[i]};
                static const char *const names[5] = {"loop.index", "loop.index0", "loop.first",
                                                     "loop.last", "loop.length"};
                /* A fresh frame each time: names set in the body do not leak. */
                for (int k = 0; k < 6; k++)
                    if ((st = push_var(r, k < 5 ? names[k] : n->name, &loopv[k])) != NM_OK)
                        return st;
                if ((st = exec(r, n->body, depth + 1)) != NM_OK)
                    return st;
            }
            r->nscope = saved;
            break;
        }
        case N_SET: {
            tval v;
            if ((st = eval(r, n, &v)) != NM_OK)
                return st;
            if ((st = set_var(r, n->name, &v)) != NM_OK)
                return st;
            break;
        }
        case N_INCLUDE: {
            tval v;
            if ((st = eval_defined(r, n, &v)) != NM_OK)
                return st;
            if (v.k != V_STR)
                return fail_at(r, n->line, n->col, "'include' takes a file name");
            if (!r->files)
                return fail_at(r, n->line, n->col, "'include' reads files, and a template "
                               "given as text has none to read");
            /* Jinja's loader: relative to the template's own folder. */
            char path[PATH_LEN];
            int plen = snprintf(path, sizeof path, "%s%s%s", v.s[0] == '/' ? "" : r->dir,
                                v.s[0] == '/' ? "" : "/", v.s);
            if (plen < 0 || plen >= (int)sizeof path)
                return fail_at(r, n->line, n->col, "path too long");
            nm_tmpl_out one = {0};
            st = render_file(r, path, &one, n->line, n->col);
            if (st == NM_OK)
                st = emit_mapped(r, &one, n->line);
            nm_tmpl_out_fini(&one);
            if (st != NM_OK)
                return st;
            break;
        }
        }
    }
    (void)depth;
    return NM_OK;
}

/* ---- entry points ---- */

int nm_tmpl_is_template(const char *text, size_t len)
{
    for (size_t i = 0; i + 1 < len; i++)
        if (text[i] == '{' && (text[i + 1] == '{' || text[i + 1] == '%' || text[i + 1] == '#'))
            return 1;
    return 0;
}

static nm_status render(struct render *r)
{
    struct cursor c = {r, 0, 1, 1};
    tnode *root;
    struct tag stop;
    const char *w;
    size_t wl, wr;
    int trim = 0;
    nm_status st = parse_list(&c, 0, &root, &stop, &w, &wl, &wr, &trim);
    if (st != NM_OK)
        return st;
    if (stop.kind)
        return fail_at(r, stop.line, stop.col, "'%.*s' with no block open", (int)wl, w);
    for (size_t i = 0; i < r->nvars; i++) {
        tval v;
        if ((st = cli_value(r, &r->vars[i], &v)) != NM_OK || (st = set_var(r, r->vars[i].name, &v)) != NM_OK)
            return st;
    }
    st = exec(r, root, 0);
    if (st == NM_OK && r->out->nlines == 0)
        st = line_push(r, r->ofile, 1);
    if (st == NM_OK && !r->out->text && (st = out_grow(r, 0)) == NM_OK)
        r->out->text[0] = '\0';
    return st;
}

static nm_status setup(struct render *r, const char *path, nm_error *err)
{
    char abs[PATH_LEN];
    r->err = err;
    if (path[0] == '/' || !getcwd(abs, sizeof abs))
        snprintf(abs, sizeof abs, "%s", path);
    else if (snprintf(abs + strlen(abs), sizeof abs - strlen(abs), "/%s", path) >=
             (int)(sizeof abs - strlen(abs)))
        return nm_error_set(err, NM_ERR_INPUT, path, 0, 0, "path too long");
    dirname_of(abs, r->dir, sizeof r->dir);
    char real[PATH_MAX];
    if (realpath(r->dir, real))
        snprintf(r->dir, sizeof r->dir, "%s", real);
    r->ofile = nm_arena_strndup(r->keep, path, strlen(path));
    return r->ofile ? NM_OK : nm_error_set(err, NM_ERR_NOMEM, NULL, 0, 0, "out of memory");
}

/* Renders another file (include_text, {% include %}) with this render's
 * variables and include folders; its errors point into that file. */
static nm_status render_file(struct render *parent, const char *path, nm_tmpl_out *out, int line,
                             int col)
{
    if (parent->depth >= 16)
        return fail_at(parent, line, col, "templates include each other more than 16 deep "
                       "(does a file include itself?)");
    FILE *f = fopen(path, "rb");
    if (!f)
        return fail_at(parent, line, col, "cannot read '%s': %s", path, strerror(errno));
    size_t cap = 4096, len = 0;
    char *buf = nm_malloc(cap);
    nm_status st = NM_OK;
    while (buf) {
        if (len == cap) {
            char *nb = cap < MAX_OUTPUT ? nm_realloc_array(buf, cap * 2, 1) : NULL;
            if (!nb) {
                nm_free(buf);
                buf = NULL;
                break;
            }
            buf = nb;
            cap *= 2;
        }
        size_t got = fread(buf + len, 1, cap - len, f);
        len += got;
        if (!got)
            break;
    }
    fclose(f);
    if (!buf)
        return nomem(parent);
    struct render r = *parent;
    r.text = buf;
    r.len = len;
    r.out = out;
    r.cap = 0;
    r.depth = parent->depth + 1;
    r.scope = NULL;
    r.nscope = r.capscope = 0;
    r.file = path;
    memset(out, 0, sizeof *out);
    if ((st = setup(&r, path, parent->err)) == NM_OK) {
        r.file = r.ofile;
        st = render(&r);
    }
    nm_free(buf);
    /* Folders it added to the path are its own (Accelergy copies the list
     * for each file). */
    if (st != NM_OK)
        nm_tmpl_out_fini(out);
    return st;
}

nm_status nm_tmpl_render(const char *path, int files, const char *text, size_t len,
                         const nm_tmpl_var *vars, size_t nvars, const char *const *dirs,
                         size_t ndirs, const nm_tmpl_hooks *hooks, nm_arena *arena,
                         nm_tmpl_out *out, nm_error *err)
{
    memset(out, 0, sizeof *out);
    struct render r;
    long steps = 0;
    memset(&r, 0, sizeof r);
    r.files = files;
    r.steps = &steps;
    r.text = text;
    r.len = len;
    r.vars = vars;
    r.nvars = nvars;
    r.hooks = hooks;
    r.out = out;
    r.keep = arena;
    if (!(r.arena = nm_arena_new()))
        return nm_error_set(err, NM_ERR_NOMEM, NULL, 0, 0, "out of memory");
    r.dirs = nm_arena_alloc(r.arena, MAX_DIRS * sizeof *r.dirs);
    nm_status st = r.dirs ? NM_OK : nm_error_set(err, NM_ERR_NOMEM, NULL, 0, 0, "out of memory");
    for (size_t i = 0; st == NM_OK && i < ndirs && i < MAX_DIRS; i++)
        if (!(r.dirs[r.ndirs++] = nm_arena_strndup(r.arena, dirs[i], strlen(dirs[i]))))
            st = nm_error_set(err, NM_ERR_NOMEM, NULL, 0, 0, "out of memory");
    if (st == NM_OK && (st = setup(&r, path, err)) == NM_OK) {
        r.file = r.ofile;
        st = render(&r);
    }
    nm_arena_free(r.arena);
    if (st != NM_OK)
        nm_tmpl_out_fini(out);
    return st;
}

void nm_tmpl_out_fini(nm_tmpl_out *out)
{
    if (!out)
        return;
    nm_free(out->text);
    nm_free(out->lines);
    memset(out, 0, sizeof *out);
}

nm_status nm_tmpl_var_parse(char *text, nm_tmpl_var *v, nm_error *err)
{
    char *eq = strchr(text, '=');
    int ok = eq && eq > text && (isalpha((unsigned char)text[0]) || text[0] == '_');
    for (char *p = text; ok && p < eq; p++)
        ok = isalnum((unsigned char)*p) || *p == '_';
    if (!ok)
        return nm_error_set(err, NM_ERR_INPUT, NULL, 0, 0, "--jinja takes NAME=VALUE with NAME "
                            "a template variable's name (got '%s')", text);
    *eq = '\0';
    v->name = text;
    v->value = eq + 1;
    return NM_OK;
}
