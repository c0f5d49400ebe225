/* variables.c — `variables:` and attribute expressions resolved in the
 * document; see variables.h.
 *
 * Scopes form a chain (component's attributes -> enclosing containers' ->
 * variables).  A name is looked up from the nearest scope out; its value is
 * the scalar there, evaluated in that scope's chain (so an attribute may use
 * one defined after it; a chain of more than MAX_DEPTH lookups is a cycle).
 */
#include <config.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nestmap/arch.h"
#include "nestmap/expr.h"
#include "nestmap/text.h"
#include "nestmap/variables.h"

#define MAX_DEPTH 32

struct scope {
    const nm_ynode *map;        /* a mapping of names to values */
    const struct scope *parent;
};

struct eval {
    nm_ydoc *doc;
    nm_error *err;
    int depth;
    int failed;                 /* an error is in err */
};

struct look {
    struct eval *ev;
    const struct scope *sc;
};

static int lookup(void *ctx, const char *name, size_t len, nm_value *out);

/* Evaluates scalar n in scope chain sc. */
static nm_expr_status eval_node(struct eval *ev, const struct scope *sc, const nm_ynode *n,
                                nm_value *v, nm_expr_error *e)
{
    struct look lk = {ev, sc};
    return nm_expr_eval(n->str, n->len, lookup, &lk, v, e);
}

static int lookup(void *ctx, const char *name, size_t len, nm_value *out)
{
    struct look *lk = ctx;
    struct eval *ev = lk->ev;
    if (ev->failed)
        return 0;
    char key[128];
    if (len >= sizeof key)
        return 0;
    memcpy(key, name, len);
    key[len] = '\0';
    for (const struct scope *s = lk->sc; s; s = s->parent) {
        const nm_ynode *n = nm_ymap_get(s->map, key);
        if (!n || n->kind != NM_Y_SCALAR)
            continue;
        if (ev->depth >= MAX_DEPTH) {
            nm_yerror(ev->err, n, "'%s' refers to itself through other names", key);
            ev->failed = 1;
            return 0;
        }
        ev->depth++;
        nm_expr_error e;
        nm_expr_status st = eval_node(ev, s, n, out, &e);
        ev->depth--;
        if (ev->failed)
            return 0;
        if (st == NM_EXPR_ERROR) {
            nm_yerror_at(ev->err, n, e.offset, "'%s': %s", key, e.msg);
            ev->failed = 1;
            return 0;
        }
        return 1;
    }
    return 0;
}

/* Whether text is already a plain number (nothing to evaluate). */
static int plain_number(const nm_ynode *n)
{
    char *end;
    if (!n->len)
        return 0;
    strtod(n->str, &end);
    return *end == '\0';
}

/* Whether text is a quantity with its unit, as design files may write
 * bandwidths, sizes and the clock ("400GB/s", "64KiB", "1ns"): the reader
 * of that attribute converts it (arch.c), so it is not an expression. */
static int unit_value(const nm_ynode *n)
{
    static const char *const units[] = {"B/s", "B", "s", "Hz"};
    double v;
    for (size_t i = 0; i < sizeof units / sizeof *units; i++)
        if (nm_text_unit_value(n->str, units[i], &v))
            return 1;
    return 0;
}

/* The number as it would be written: whole numbers without a point. */
static void number_text(double x, char *buf, size_t size)
{
    if (x == floor(x) && fabs(x) < 9.0e15)
        snprintf(buf, size, "%lld", (long long)x);
    else
        snprintf(buf, size, "%.17g", x);
}

/* Replaces each value of mapping *mapp that is an expression by its value,
 * evaluated with the mapping itself as the nearest scope (then sc).  The
 * mapping is copied when anything changes; *mapp points at the copy. */
static nm_status resolve_map(struct eval *ev, const nm_ynode **mapp, const struct scope *sc,
                             const char *what)
{
    const nm_ynode *map = *mapp;
    if (!map || map->kind != NM_Y_MAP)
        return NM_OK;
    struct scope own = {map, sc};
    nm_ynode *copy = NULL;
    for (size_t i = 0; i < map->n; i++) {
        const nm_ynode *k = nm_ymap_key(map, i), *v = nm_ymap_val(map, i);
        if (v->kind != NM_Y_SCALAR || v->quoted || plain_number(v) || nm_yis_null(v) ||
            unit_value(v) || !strcmp(k->str, "version"))
            continue;
        nm_value val;
        nm_expr_error e;
        ev->depth = 0;
        nm_expr_status st = eval_node(ev, &own, v, &val, &e);
        if (ev->failed)
            return ev->err->status;
        /* An attribute nestmap does not read may hold any text (Accelergy
         * keeps what it cannot evaluate as a string); one it reads, or a
         * variable, must evaluate. */
        const char *sug;
        if (st == NM_EXPR_ERROR && !strcmp(what, "attribute") && !nm_arch_attr_known(k->str, &sug))
            continue;
        if (st == NM_EXPR_ERROR)
            return nm_yerror_at(ev->err, v, e.offset, "%s '%s': %s", what, k->str, e.msg);
        if (st != NM_EXPR_OK)
            continue; /* a word: `type: LPDDR4` */
        char buf[64];
        if (val.is_str) {
            snprintf(buf, sizeof buf, "%.*s", (int)(val.len < 63 ? val.len : 63), val.str);
            if (val.len == v->len && !strncmp(val.str, v->str, v->len))
                continue;
        } else {
            /* a quantity keeps its unit for the attribute's reader (arch.c):
             * "2 * 32KiB" becomes "65536B" */
            number_text(val.num, buf, sizeof buf - 4);
            if (val.unit)
                strcat(buf, val.unit);
        }
        if (!copy) {
            if (!(copy = nm_ydoc_map_copy(ev->doc, map)))
                return nm_error_set(ev->err, NM_ERR_NOMEM, NULL, 0, 0, "out of memory");
            own.map = copy;
        }
        nm_ynode *nv = nm_ydoc_scalar(ev->doc, v, NULL, buf);
        if (!nv || nm_ymap_set(ev->doc, copy, k->str, nv) != NM_OK)
            return nm_error_set(ev->err, NM_ERR_NOMEM, NULL, 0, 0, "out of memory");
    }
    if (copy)
        *mapp = copy;
    return NM_OK;
}

/* Sets key of the (copied) mapping *parentp to value. */
static nm_status replace(nm_ydoc *doc, nm_ynode *parent, const char *key, const nm_ynode *value,
                         nm_error *err)
{
    if (nm_ymap_set(doc, parent, key, (nm_ynode *)value) != NM_OK)
        return nm_error_set(err, NM_ERR_NOMEM, NULL, 0, 0, "out of memory");
    return NM_OK;
}

/* A node (a v0.4 node, a core subtree or local component) with its
 * attributes and spatial resolved; *out is the node or its copy. */
static nm_status resolve_node(struct eval *ev, const nm_ynode *node, const struct scope *sc,
                              const nm_ynode **out, const nm_ynode **attrs_out);

/* The nodes of a list (v0.4 `nodes`, or a subtree's `local`/`subtree`).
 * A container's attributes are in scope for what follows it in the list. */
static nm_status resolve_list(struct eval *ev, const nm_ynode *list, const struct scope *sc,
                              int depth, const nm_ynode **out)
{
    if (!list || list->kind != NM_Y_SEQ || depth > MAX_DEPTH) {
        *out = list;
        return NM_OK;
    }
    nm_ynode *copy = nm_ydoc_seq(ev->doc, list);
    if (!copy)
        return nm_error_set(ev->err, NM_ERR_NOMEM, NULL, 0, 0, "out of memory");
    struct scope chain[MAX_DEPTH + 1];
    int nchain = 0;
    const struct scope *cur = sc;
    for (size_t i = 0; i < list->n; i++) {
        const nm_ynode *n = list->items[i], *r, *attrs;
        nm_status st = resolve_node(ev, n, cur, &r, &attrs);
        if (st != NM_OK)
            return st;
        if (nm_yseq_append(ev->doc, copy, (nm_ynode *)r) != NM_OK)
            return nm_error_set(ev->err, NM_ERR_NOMEM, NULL, 0, 0, "out of memory");
        int container = n->tag && (!strcmp(n->tag, "!Container") || !strcmp(n->tag, "!Hierarchical"));
        if (container && attrs && nchain < MAX_DEPTH) {
            chain[nchain] = (struct scope){attrs, cur};
            cur = &chain[nchain++];
        }
        /* a container's own `nodes`, and a !Parallel's */
        const nm_ynode *inner = nm_ymap_get(r, "nodes");
        if (inner) {
            const nm_ynode *ri;
            if ((st = resolve_list(ev, inner, cur, depth + 1, &ri)) != NM_OK)
                return st;
            if (ri != inner && (st = replace(ev->doc, (nm_ynode *)r, "nodes", ri, ev->err)) != NM_OK)
                return st;
        }
    }
    *out = copy;
    return NM_OK;
}

static nm_status resolve_node(struct eval *ev, const nm_ynode *node, const struct scope *sc,
                              const nm_ynode **out, const nm_ynode **attrs_out)
{
    *out = node;
    *attrs_out = NULL;
    if (node->kind != NM_Y_MAP)
        return NM_OK;
    const nm_ynode *attrs = nm_ymap_get(node, "attributes"), *sp = nm_ymap_get(node, "spatial");
    const nm_ynode *a = attrs, *s = sp;
    nm_status st = resolve_map(ev, &a, sc, "attribute");
    if (st != NM_OK)
        return st;
    struct scope own = {a, sc};
    if ((st = resolve_map(ev, &s, a ? &own : sc, "spatial")) != NM_OK)
        return st;
    *attrs_out = a;
    if (a == attrs && s == sp)
        return NM_OK;
    nm_ynode *copy = nm_ydoc_map_copy(ev->doc, node);
    if (!copy)
        return nm_error_set(ev->err, NM_ERR_NOMEM, NULL, 0, 0, "out of memory");
    if ((a != attrs && (st = replace(ev->doc, copy, "attributes", a, ev->err)) != NM_OK) ||
        (s != sp && (st = replace(ev->doc, copy, "spatial", s, ev->err)) != NM_OK))
        return st;
    *out = copy;
    return NM_OK;
}

/* The core form: a subtree's attributes scope its `local` and `subtree`. */
static nm_status resolve_tree(struct eval *ev, const nm_ynode *tree, const struct scope *sc,
                              int depth, const nm_ynode **out)
{
    const nm_ynode *r, *attrs;
    nm_status st = resolve_node(ev, tree, sc, &r, &attrs);
    *out = r;
    if (st != NM_OK || tree->kind != NM_Y_MAP || depth > MAX_DEPTH)
        return st;
    struct scope own = {attrs, sc};
    const struct scope *inner_sc = attrs ? &own : sc;
    const nm_ynode *local = nm_ymap_get(r, "local"), *sub = nm_ymap_get(r, "subtree");
    const nm_ynode *rl = local, *rs = sub;
    if (local && (st = resolve_list(ev, local, inner_sc, depth + 1, &rl)) != NM_OK)
        return st;
    if (sub && sub->kind == NM_Y_SEQ) {
        nm_ynode *copy = nm_ydoc_seq(ev->doc, sub);
        if (!copy)
            return nm_error_set(ev->err, NM_ERR_NOMEM, NULL, 0, 0, "out of memory");
        for (size_t i = 0; i < sub->n; i++) {
            const nm_ynode *t;
            if ((st = resolve_tree(ev, sub->items[i], inner_sc, depth + 1, &t)) != NM_OK)
                return st;
            if (nm_yseq_append(ev->doc, copy, (nm_ynode *)t) != NM_OK)
                return nm_error_set(ev->err, NM_ERR_NOMEM, NULL, 0, 0, "out of memory");
        }
        rs = copy;
    }
    if (rl == local && rs == sub)
        return NM_OK;
    nm_ynode *copy = r == tree ? nm_ydoc_map_copy(ev->doc, tree) : (nm_ynode *)r;
    if (!copy)
        return nm_error_set(ev->err, NM_ERR_NOMEM, NULL, 0, 0, "out of memory");
    if ((rl != local && (st = replace(ev->doc, copy, "local", rl, ev->err)) != NM_OK) ||
        (rs != sub && (st = replace(ev->doc, copy, "subtree", rs, ev->err)) != NM_OK))
        return st;
    *out = copy;
    return NM_OK;
}

nm_status nm_variables_apply(nm_ydoc *doc, nm_error *err)
{
    nm_ynode *root = doc->root;
    if (!root)
        return NM_OK;
    struct eval ev = {doc, err, 0, 0};
    const nm_ynode *vars = nm_ymap_get(root, "variables");
    nm_status st;
    if (vars && !nm_yis_null(vars)) {
        if ((st = nm_yexpect(vars, NM_Y_MAP, "variables", err)) != NM_OK)
            return st;
        if ((st = resolve_map(&ev, &vars, NULL, "variable")) != NM_OK)
            return st;
        if ((st = replace(doc, root, "variables", vars, err)) != NM_OK)
            return st;
    } else {
        vars = NULL;
    }
    const nm_ynode *arch = nm_ymap_get(root, "architecture");
    if (!arch || arch->kind != NM_Y_MAP)
        return NM_OK;
    struct scope top = {vars, NULL};
    const nm_ynode *r;
    if (nm_ymap_get(arch, "nodes")) {
        const nm_ynode *attrs;
        if ((st = resolve_node(&ev, arch, vars ? &top : NULL, &r, &attrs)) != NM_OK)
            return st;
        struct scope own = {attrs, vars ? &top : NULL};
        const nm_ynode *nodes = nm_ymap_get(r, "nodes"), *rn;
        if ((st = resolve_list(&ev, nodes, attrs ? &own : own.parent, 0, &rn)) != NM_OK)
            return st;
        if (rn != nodes) {
            nm_ynode *copy = r == arch ? nm_ydoc_map_copy(doc, arch) : (nm_ynode *)r;
            if (!copy)
                return nm_error_set(err, NM_ERR_NOMEM, NULL, 0, 0, "out of memory");
            if ((st = replace(doc, copy, "nodes", rn, err)) != NM_OK)
                return st;
            r = copy;
        }
    } else if ((st = resolve_tree(&ev, arch, vars ? &top : NULL, 0, &r)) != NM_OK) {
        return st;
    }
    /* The variables are the design's top attributes (its own win). */
    if (vars && vars->n) {
        nm_ynode *copy = nm_ydoc_map_copy(doc, r);
        const nm_ynode *own = nm_ymap_get(r, "attributes");
        nm_ynode *attrs = own && own->kind == NM_Y_MAP ? nm_ydoc_map_copy(doc, own)
                                                       : nm_ydoc_map(doc, vars);
        if (!copy || !attrs)
            return nm_error_set(err, NM_ERR_NOMEM, NULL, 0, 0, "out of memory");
        for (size_t i = 0; i < vars->n; i++) {
            const nm_ynode *k = nm_ymap_key(vars, i);
            if (!strcmp(k->str, "version") || nm_ymap_get(attrs, k->str))
                continue;
            if (nm_ymap_set(doc, attrs, k->str, (nm_ynode *)nm_ymap_val(vars, i)) != NM_OK)
                return nm_error_set(err, NM_ERR_NOMEM, NULL, 0, 0, "out of memory");
        }
        if ((st = replace(doc, copy, "attributes", attrs, err)) != NM_OK)
            return st;
        r = copy;
    }
    if (r != arch)
        return replace(doc, root, "architecture", r, err);
    return NM_OK;
}
