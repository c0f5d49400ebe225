/* override.c — `--set COMPONENT.ATTRIBUTE=VALUE` applied to the design's
 * YAML before it is parsed; see override.h. */
#include <config.h>

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nestmap/alloc.h"
#include "nestmap/arch.h"
#include "nestmap/compound.h"
#include "nestmap/estimate.h"
#include "nestmap/override.h"
#include "nestmap/text.h"

/* An error located where the override was written. */
static nm_status fail(nm_error *err, const nm_override *ov, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static nm_status fail(nm_error *err, const nm_override *ov, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (ov->at)
        return nm_yerror(err, ov->at, "%s", msg);
    return nm_error_set(err, NM_ERR_INPUT, ov->text, 0, 0, "%s", msg);
}

static int is_fanout(const char *attr)
{
    return nm_text_key_equal(attr, "meshX") || nm_text_key_equal(attr, "meshY") ||
           nm_text_key_equal(attr, "instances");
}

int nm_override_expand(const char *v, char *out, size_t size)
{
    static const char *const suf[] = {"Ki", "Mi", "Gi", "Ti"};
    char *end;
    errno = 0;
    unsigned long long n = strtoull(v, &end, 10);
    for (int k = 0; k < 4 && end != v && v[0] != '-'; k++) {
        if (strcmp(end, suf[k]))
            continue;
        for (int j = 0; j <= k; j++) {
            if (errno || n > UINT64_MAX / 1024)
                return 0;
            n *= 1024;
        }
        snprintf(out, size, "%llu", n);
        return 1;
    }
    snprintf(out, size, "%s", v);
    return 1;
}

/* ---- sparse options ---- */

/* The level of a sparse override ("sparse.LEVEL" or "sparse.LEVEL.format"),
 * into level; whether it is a format's. */
static int sparse_level(const nm_override *ov, char *level, size_t size)
{
    const char *l = ov->component + sizeof NM_OVERRIDE_SPARSE;
    const char *f = strstr(l, ".format");
    int fmt = f && !strcmp(f, ".format");
    size_t n = fmt ? (size_t)(f - l) : strlen(l);
    snprintf(level, size, "%.*s", (int)n, l);
    return fmt;
}

static int is_rank_format(const char *s, size_t n)
{
    static const char *const names[] = {"UOP", "UB", "CP", "B", "RLE"};
    for (size_t k = 0; k < sizeof names / sizeof *names; k++)
        if (strlen(names[k]) == n && !strncmp(names[k], s, n))
            return 1;
    return 0;
}

/* The form and values of a sparse override (the level is checked when
 * applied). */
static nm_status sparse_check(const nm_override *ov, nm_error *err)
{
    char level[NM_NAME_MAX];
    int fmt = sparse_level(ov, level, sizeof level);
    if (!level[0] || strchr(level, '.'))
        return fail(err, ov, "a sparse option reads sparse.LEVEL.action=gating|skipping, "
                    "sparse.LEVEL.compute=gating|skipping or sparse.LEVEL.format.TENSOR="
                    "UOP,CP|none");
    if (fmt) {
        if (!strcmp(ov->value, "none"))
            return NM_OK;
        for (const char *p = ov->value; *p;) {
            size_t n = strcspn(p, ",");
            if (!is_rank_format(p, n))
                return fail(err, ov, "'%.*s' is not a rank format (UOP, UB, CP, B, RLE; or "
                            "none for no format)", (int)n, p);
            p += n + (p[n] == ',');
        }
        return NM_OK;
    }
    if (strcmp(ov->attribute, "action") && strcmp(ov->attribute, "compute"))
        return fail(err, ov, "unknown sparse option '%s' (action, compute, or format.TENSOR)",
                    ov->attribute);
    if (strcmp(ov->value, "gating") && strcmp(ov->value, "skipping"))
        return fail(err, ov, "sparse.%s.%s takes gating or skipping (got '%s')", level,
                    ov->attribute, ov->value);
    return NM_OK;
}

nm_status nm_override_parse(nm_override *ov, const char *text, const nm_ynode *at, nm_error *err)
{
    memset(ov, 0, sizeof *ov);
    ov->at = at;
    snprintf(ov->text, sizeof ov->text, "--set %s", text);
    const char *eq = strchr(text, '=');
    const char *dot = NULL;
    for (const char *p = text; eq && p < eq; p++)
        if (*p == '.')
            dot = p;
    if (!eq || !dot || dot == text || dot + 1 == eq)
        return fail(err, ov, "an override reads COMPONENT.ATTRIBUTE=VALUE, e.g. "
                    "GlobalBuffer.depth=16384 (got '%s')", text);
    size_t clen = (size_t)(dot - text), alen = (size_t)(eq - dot - 1);
    if (clen >= NM_NAME_MAX || alen >= NM_NAME_MAX || strlen(eq + 1) >= NM_OVERRIDE_VALUE_MAX)
        return fail(err, ov, "override '%s' is too long", text);
    memcpy(ov->component, text, clen);
    memcpy(ov->attribute, dot + 1, alen);
    if (!eq[1])
        return fail(err, ov, "override '%s' has no value", text);
    if (!strncmp(ov->component, NM_OVERRIDE_SPARSE ".", sizeof NM_OVERRIDE_SPARSE)) {
        if (!nm_override_expand(eq + 1, ov->value, sizeof ov->value))
            return fail(err, ov, "count '%s' is too large", eq + 1);
        return sparse_check(ov, err);
    }
    const char *suggest = NULL;
    /* problem.NAME: a dimension or shorthand key of the workload, checked
     * when the problem is read */
    if (strcmp(ov->component, NM_OVERRIDE_PROBLEM) && strcmp(ov->component, NM_OVERRIDE_DENSITY) &&
        !nm_arch_attr_known(ov->attribute, &suggest)) {
        if (suggest)
            return fail(err, ov, "unknown attribute '%s'; did you mean '%s'?", ov->attribute,
                        suggest);
        return fail(err, ov, "unknown attribute '%s' (nestmap reads depth, width, datawidth, "
                    "meshX, meshY, instances, read_bandwidth, write_bandwidth, "
                    "shared_bandwidth, type, technology, ...)", ov->attribute);
    }
    if (!nm_override_expand(eq + 1, ov->value, sizeof ov->value))
        return fail(err, ov, "count '%s' is too large", eq + 1);
    return NM_OK;
}

/* ---- the design's components and subtrees, in document order ---- */

enum { MAX_ENTRIES = 1024 };

typedef struct entry {
    nm_ynode *node;          /* the component's or subtree's mapping */
    char base[NM_NAME_MAX];  /* name without its range */
    int64_t count;           /* its range (1 without one) */
    int scope;               /* a subtree or container (else a component) */
    int v04;                 /* a v0.4 !Container */
    int end;                 /* scopes: entries (this, end) lie inside it */
} entry;

typedef struct walk {
    entry e[MAX_ENTRIES];
    int n;
} walk;

static void split(const char *name, char *base, int64_t *count)
{
    const char *br = strchr(name, '[');
    size_t len = br ? (size_t)(br - name) : strlen(name);
    if (len >= NM_NAME_MAX)
        len = NM_NAME_MAX - 1;
    memcpy(base, name, len);
    base[len] = '\0';
    long long lo, hi;
    *count = br && sscanf(br, "[%lld..%lld]", &lo, &hi) == 2 && hi >= lo ? hi - lo + 1 : 1;
}

static int add(walk *w, const nm_ynode *node, int scope, int v04)
{
    const nm_ynode *name = nm_ymap_get(node, "name");
    if (!name || name->kind != NM_Y_SCALAR || w->n >= MAX_ENTRIES)
        return -1;
    entry *e = &w->e[w->n];
    e->node = (nm_ynode *)node; /* the doc's own node: the caller owns the doc */
    split(name->str, e->base, &e->count);
    e->scope = scope;
    e->v04 = v04;
    e->end = w->n + 1;
    return w->n++;
}

static void walk_core(walk *w, const nm_ynode *tree, int depth)
{
    if (tree->kind != NM_Y_MAP || depth > 32)
        return;
    int me = nm_ymap_get(tree, "name") ? add(w, tree, 1, 0) : -1;
    const nm_ynode *local = nm_ymap_get(tree, "local");
    for (size_t i = 0; local && local->kind == NM_Y_SEQ && i < local->n; i++)
        if (local->items[i]->kind == NM_Y_MAP)
            add(w, local->items[i], 0, 0);
    const nm_ynode *sub = nm_ymap_get(tree, "subtree");
    for (size_t i = 0; sub && sub->kind == NM_Y_SEQ && i < sub->n; i++)
        walk_core(w, sub->items[i], depth + 1);
    if (me >= 0)
        w->e[me].end = w->n;
}

/* A v0.4 container encloses what follows it in its list. */
static void walk_v04(walk *w, const nm_ynode *nodes, int depth)
{
    if (nodes->kind != NM_Y_SEQ || depth > 32)
        return;
    int open[MAX_ENTRIES], nopen = 0;
    for (size_t i = 0; i < nodes->n; i++) {
        const nm_ynode *n = nodes->items[i];
        const char *tag = n->tag ? n->tag : "";
        if (n->kind != NM_Y_MAP)
            continue;
        if (!strcmp(tag, "!Component")) {
            add(w, n, 0, 0);
            continue;
        }
        int me = -1;
        if (!strcmp(tag, "!Container") || !strcmp(tag, "!Hierarchical"))
            me = add(w, n, 1, 1);
        if (me >= 0 && nopen < MAX_ENTRIES)
            open[nopen++] = me;
        const nm_ynode *inner = nm_ymap_get(n, "nodes");
        if (inner)
            walk_v04(w, inner, depth + 1);
    }
    for (int k = 0; k < nopen; k++)
        w->e[open[k]].end = w->n;
}

/* The entry an override names: for a fan-out attribute the subtree, else
 * the component, else the subtree. */
static int find(const walk *w, const nm_override *ov, nm_error *err)
{
    int comp = -1, scope = -1, ncomp = 0, nscope = 0;
    for (int i = 0; i < w->n; i++) {
        if (strcmp(w->e[i].base, ov->component))
            continue;
        if (w->e[i].scope) {
            scope = i;
            nscope++;
        } else {
            comp = i;
            ncomp++;
        }
    }
    int pick = is_fanout(ov->attribute) ? (scope >= 0 ? scope : comp)
                                        : (comp >= 0 ? comp : scope);
    if (pick < 0) {
        const char *cands[MAX_ENTRIES];
        for (int i = 0; i < w->n; i++)
            cands[i] = w->e[i].base;
        const char *s = nm_text_suggest(ov->component, cands, (size_t)w->n);
        if (s)
            fail(err, ov, "the design has no component or subtree '%s'; did you mean '%s'?",
                 ov->component, s);
        else
            fail(err, ov, "the design has no component or subtree '%s'", ov->component);
        return -1;
    }
    if ((w->e[pick].scope ? nscope : ncomp) > 1) {
        fail(err, ov, "the design has several %s called '%s'",
             w->e[pick].scope ? "subtrees" : "components", ov->component);
        return -1;
    }
    return pick;
}

/* The mapping under key in node, copied so that a mapping shared through
 * an alias keeps its old pairs; created when absent. */
static nm_ynode *own_map(nm_ydoc *doc, nm_ynode *node, const char *key)
{
    const nm_ynode *old = nm_ymap_get(node, key);
    if (old && !nm_yis_null(old) && old->kind != NM_Y_MAP)
        return (nm_ynode *)old; /* the caller reports it */
    nm_ynode *m = nm_ydoc_map(doc, old ? old : node);
    if (!m)
        return NULL;
    if (old && old->kind == NM_Y_MAP)
        *m = *old; /* shares the pairs until nm_ymap_set copies them */
    return nm_ymap_set(doc, node, key, m) == NM_OK ? m : NULL;
}

static nm_status set_value(nm_ydoc *doc, nm_ynode *map, const char *key, const char *value,
                           const nm_override *ov, nm_error *err)
{
    nm_ynode *v = nm_ydoc_scalar(doc, ov->at, ov->text, value);
    if (!v || nm_ymap_set(doc, map, key, v) != NM_OK)
        return nm_error_set(err, NM_ERR_NOMEM, NULL, 0, 0, "out of memory");
    return NM_OK;
}

static nm_status set_attr(nm_ydoc *doc, nm_ynode *node, const char *key, const char *value,
                          const nm_override *ov, nm_error *err)
{
    nm_ynode *attrs = own_map(doc, node, "attributes");
    if (!attrs)
        return nm_error_set(err, NM_ERR_NOMEM, NULL, 0, 0, "out of memory");
    if (attrs->kind != NM_Y_MAP)
        return nm_yerror(err, attrs, "attributes must be a mapping");
    return set_value(doc, attrs, key, value, ov, err);
}

/* The parsed mesh of the component whose node is `node`; 0 when the
 * design does not place it (a component that is not enabled). */
static int mesh_of(const nm_arch *arch, const nm_ynode *node, int64_t *x, int64_t *y, int64_t *n)
{
    if (arch->arith.node == node) {
        *x = arch->arith.meshX, *y = arch->arith.meshY, *n = arch->arith.instances;
        return 1;
    }
    for (int i = 0; i < arch->nlevels; i++)
        if (arch->level[i].node == node) {
            *x = arch->level[i].meshX, *y = arch->level[i].meshY, *n = arch->level[i].instances;
            return 1;
        }
    return 0;
}

/* The fan-out a subtree or container adds, and the new one an override
 * asks for. */
static nm_status new_fanout(const nm_override *ov, int64_t fx, int64_t fy, int64_t v,
                            int64_t *nx, int64_t *ny, nm_error *err)
{
    *nx = fx;
    *ny = fy;
    if (nm_text_key_equal(ov->attribute, "meshX"))
        *nx = v;
    else if (nm_text_key_equal(ov->attribute, "meshY"))
        *ny = v;
    else if (fy == 1)
        *nx = v;
    else if (fx == 1)
        *ny = v;
    else
        return fail(err, ov, "'%s' spreads over %" PRId64 " x %" PRId64 ": give %s.meshX and "
                    "%s.meshY instead of instances", ov->component, fx, fy, ov->component,
                    ov->component);
    if (*nx * *ny > NM_MAX_FANOUT)
        return fail(err, ov, "more than %d instances", NM_MAX_FANOUT);
    return NM_OK;
}

static nm_status resize_core(nm_ydoc *doc, const walk *w, int s, const nm_arch *arch, int64_t v,
                             const nm_override *ov, nm_error *err)
{
    const entry *S = &w->e[s];
    int first = -1, parent = -1;
    for (int i = s + 1; i < S->end && first < 0; i++)
        if (!w->e[i].scope)
            first = i;
    for (int i = s - 1; i >= 0 && parent < 0; i--)
        if (!w->e[i].scope)
            parent = i;
    int64_t mx, my, mn, px = 1, py = 1, pn;
    if (first < 0 || !mesh_of(arch, w->e[first].node, &mx, &my, &mn))
        return fail(err, ov, "subtree '%s' holds no component to resize", S->base);
    if (parent >= 0 && !mesh_of(arch, w->e[parent].node, &px, &py, &pn))
        px = py = 1;
    if (mx % px || my % py || (mx / px) * (my / py) != S->count)
        return fail(err, ov, "the fan-out of subtree '%s' (%" PRId64 " instances) cannot be told "
                    "apart from its neighbours' (mesh %" PRId64 "x%" PRId64 " inside, %" PRId64
                    "x%" PRId64 " outside): resize a subtree that holds components directly",
                    S->base, S->count, mx, my, px, py);
    int64_t fx = mx / px, fy = my / py, nx, ny;
    nm_status st = new_fanout(ov, fx, fy, v, &nx, &ny, err);
    if (st != NM_OK)
        return st;
    char buf[NM_NAME_MAX + 48];
    snprintf(buf, sizeof buf, "%s[0..%" PRId64 "]", S->base, nx * ny - 1);
    const nm_ynode *old_name = nm_ymap_get(S->node, "name");
    nm_ynode *name = nm_ydoc_scalar(doc, old_name, NULL, buf);
    if (!name || nm_ymap_set(doc, S->node, "name", name) != NM_OK)
        return nm_error_set(err, NM_ERR_NOMEM, NULL, 0, 0, "out of memory");
    for (int i = s + 1; i < S->end; i++) {
        const entry *c = &w->e[i];
        int64_t cx, cy, cn;
        if (c->scope || !mesh_of(arch, c->node, &cx, &cy, &cn))
            continue;
        snprintf(buf, sizeof buf, "%" PRId64, cx / fx * nx);
        if ((st = set_attr(doc, c->node, "meshX", buf, ov, err)) != NM_OK)
            return st;
        const nm_ynode *attrs = nm_ymap_get(c->node, "attributes");
        if (nm_ymap_get(attrs, "meshY")) {
            snprintf(buf, sizeof buf, "%" PRId64, cy / fy * ny);
            if ((st = set_attr(doc, c->node, "meshY", buf, ov, err)) != NM_OK)
                return st;
        }
        if (nm_ymap_get(attrs, "instances")) {
            snprintf(buf, sizeof buf, "%" PRId64, cn / (fx * fy) * (nx * ny));
            if ((st = set_attr(doc, c->node, "instances", buf, ov, err)) != NM_OK)
                return st;
        }
    }
    return NM_OK;
}

/* A v0.4 container: its mesh is in `spatial` (or its attributes). */
static nm_status resize_v04(nm_ydoc *doc, const entry *S, int64_t v, const nm_override *ov,
                            nm_error *err)
{
    int64_t f[2] = {1, 1};
    static const char *const axis[2] = {"meshX", "meshY"};
    const nm_ynode *sp = nm_ymap_get(S->node, "spatial");
    const nm_ynode *at = nm_ymap_get(S->node, "attributes");
    for (int k = 0; k < 2; k++) {
        const nm_ynode *src = nm_ymap_get(sp, axis[k]);
        if (!src)
            src = nm_ymap_get(at, axis[k]);
        if (src && !nm_yis_null(src) && nm_yget_pos(src, axis[k], &f[k], err) != NM_OK)
            return NM_ERR_INPUT;
    }
    int64_t n[2];
    nm_status st = new_fanout(ov, f[0], f[1], v, &n[0], &n[1], err);
    for (int k = 0; k < 2 && st == NM_OK; k++) {
        if (n[k] == f[k])
            continue;
        char buf[32];
        snprintf(buf, sizeof buf, "%" PRId64, n[k]);
        int in_attrs = !nm_ymap_get(sp, axis[k]) && nm_ymap_get(at, axis[k]);
        nm_ynode *m = own_map(doc, S->node, in_attrs ? "attributes" : "spatial");
        if (!m)
            return nm_error_set(err, NM_ERR_NOMEM, NULL, 0, 0, "out of memory");
        st = set_value(doc, m, axis[k], buf, ov, err);
    }
    return st;
}

static int is_bandwidth(const char *attr)
{
    return nm_text_key_equal(attr, "shared_bandwidth") || nm_text_key_equal(attr, "bandwidth") ||
           nm_text_key_equal(attr, "read_bandwidth") || nm_text_key_equal(attr, "write_bandwidth");
}

/* A DRAM's `type` set by an override sets its bandwidth too: the type's
 * peak (estimate.c's table) as shared_bandwidth, so that a sweep over
 * DRAM types moves time as well as energy.  Not when the same overrides
 * give the component a bandwidth of their own. */
static nm_status type_bandwidth(nm_ydoc *doc, nm_ynode *node, const nm_override *ov,
                                const nm_override *all, size_t n, nm_error *err)
{
    if (!nm_text_key_equal(ov->attribute, "type"))
        return NM_OK;
    const nm_ynode *cls = nm_ymap_get(node, "class");
    double peak;
    if (!cls || cls->kind != NM_Y_SCALAR || !strstr(cls->str, "DRAM") ||
        !nm_estimate_dram_peak(ov->value, &peak, NULL))
        return NM_OK;
    for (size_t i = 0; i < n; i++)
        if (!strcmp(all[i].component, ov->component) && is_bandwidth(all[i].attribute))
            return NM_OK;
    char value[64];
    snprintf(value, sizeof value, "%.17gB/s", peak);
    return set_attr(doc, node, "shared_bandwidth", value, ov, err);
}

static nm_status apply_one(nm_ydoc *doc, nm_ynode *arch_node, const nm_override *ov,
                           const nm_override *all, size_t n, nm_error *err)
{
    walk *w = nm_calloc(1, sizeof *w);
    if (!w)
        return nm_error_set(err, NM_ERR_NOMEM, NULL, 0, 0, "out of memory");
    const nm_ynode *nodes = nm_ymap_get(arch_node, "nodes");
    if (nodes)
        walk_v04(w, nodes, 0);
    else
        walk_core(w, arch_node, 0);
    nm_status st = NM_OK;
    int i = find(w, ov, err);
    if (i < 0) {
        st = NM_ERR_INPUT;
    } else if (!w->e[i].scope || !is_fanout(ov->attribute)) {
        st = set_attr(doc, w->e[i].node, ov->attribute, ov->value, ov, err);
        if (st == NM_OK)
            st = type_bandwidth(doc, (nm_ynode *)w->e[i].node, ov, all, n, err);
    } else {
        char *end;
        errno = 0;
        long long v = strtoll(ov->value, &end, 10);
        if (*end || end == ov->value || errno || v < 1 || v > NM_MAX_FANOUT)
            st = fail(err, ov, "%s must be a count from 1 to %d (got '%s')", ov->attribute,
                      NM_MAX_FANOUT, ov->value);
        else if (w->e[i].v04)
            st = resize_v04(doc, &w->e[i], v, ov, err);
        else {
            /* The meshes as the design stands, to scale those inside. */
            nm_arch *arch = nm_calloc(1, sizeof *arch);
            size_t nwarn = doc->nwarnings;
            const nm_ynode *root = doc->root;
            nm_arch_hints hints = {nm_compound_section(root), nm_ymap_get(root, "ERT")};
            if (!arch)
                st = nm_error_set(err, NM_ERR_NOMEM, NULL, 0, 0, "out of memory");
            else if ((st = nm_arch_parse(arch, arch_node, &hints, doc, err)) == NM_OK)
                st = resize_core(doc, w, i, arch, v, ov, err);
            doc->nwarnings = nwarn; /* the final parse warns again */
            nm_free(arch);
        }
    }
    nm_free(w);
    return st;
}

/* Whether a problem's full-form shape names `name` among its dimensions
 * or coefficients. */
static int shape_has(const nm_ynode *shape, const char *name)
{
    const nm_ynode *d = nm_ymap_get(shape, "dimensions");
    for (size_t i = 0; d && d->kind == NM_Y_SEQ && i < d->n; i++)
        if (d->items[i]->str && !strcmp(d->items[i]->str, name))
            return 1;
    const nm_ynode *c = nm_ymap_get(shape, "coefficients");
    for (size_t i = 0; c && c->kind == NM_Y_SEQ && i < c->n; i++) {
        const nm_ynode *n = nm_ymap_get(c->items[i], "name");
        if (n && n->str && !strcmp(n->str, name))
            return 1;
    }
    return 0;
}

/* problem.NAME=V on one problem: its `instance:` (the full form) or the
 * mapping of its shorthand (`conv2d: {...}`, `gemm: {...}`). */
static nm_status set_problem(nm_ydoc *doc, nm_ynode *prob, const nm_override *ov,
                             nm_error *err)
{
    if (prob->kind != NM_Y_MAP)
        return NM_OK; /* the problem's own reading reports it */
    const char *key = NULL;
    if (nm_ymap_get(prob, "instance")) {
        key = "instance";
    } else {
        for (size_t i = 0; i < prob->n; i++) {
            const nm_ynode *k = prob->items[2 * i], *v = prob->items[2 * i + 1];
            if (v && v->kind == NM_Y_MAP && k->str && strcmp(k->str, "shape") &&
                strcmp(k->str, "densities")) {
                if (key)
                    return fail(err, ov, "the problem at %s:%d has no `instance:` and more than "
                                "one shorthand ('%s', '%s'): which to change?",
                                prob->file ? prob->file : "?", prob->line, key, k->str);
                key = k->str;
            }
        }
    }
    if (!key)
        return fail(err, ov, "the problem at %s:%d has neither `instance:` nor a shorthand "
                    "(conv2d: {...}) to change", prob->file ? prob->file : "?", prob->line);
    if (!strcmp(ov->component, NM_OVERRIDE_DENSITY)) {
        /* problem.densities.T=D: T's density, its distribution kept when given */
        /* in the shape form's instance:, beside a shorthand */
        nm_ynode *inst = strcmp(key, "instance") ? prob : own_map(doc, prob, "instance");
        nm_ynode *dens = inst && inst->kind == NM_Y_MAP ? own_map(doc, inst, "densities") : NULL;
        if (!dens)
            return nm_error_set(err, NM_ERR_NOMEM, NULL, 0, 0, "out of memory");
        if (dens->kind != NM_Y_MAP)
            return fail(err, ov, "the problem's densities (%s:%d) are not a mapping",
                        dens->file ? dens->file : "?", dens->line);
        const nm_ynode *old = nm_ymap_get(dens, ov->attribute);
        if (old && old->kind == NM_Y_MAP) {
            nm_ynode *m = own_map(doc, dens, ov->attribute);
            if (!m)
                return nm_error_set(err, NM_ERR_NOMEM, NULL, 0, 0, "out of memory");
            return set_value(doc, m, "density", ov->value, ov, err);
        }
        return set_value(doc, dens, ov->attribute, ov->value, ov, err);
    }
    const nm_ynode *shape = nm_ymap_get(prob, "shape");
    if (!strcmp(key, "instance") && shape && !shape_has(shape, ov->attribute))
        return fail(err, ov, "the shape '%s' (%s:%d) has no dimension or coefficient '%s'",
                    nm_ymap_get(shape, "name") && nm_ymap_get(shape, "name")->str
                        ? nm_ymap_get(shape, "name")->str : "?",
                    shape->file ? shape->file : "?", shape->line, ov->attribute);
    nm_ynode *m = own_map(doc, prob, key);
    if (!m)
        return nm_error_set(err, NM_ERR_NOMEM, NULL, 0, 0, "out of memory");
    return set_value(doc, m, ov->attribute, ov->value, ov, err);
}

/* A copy of the list under key in map, set there in its place (the items
 * still shared until replaced); NULL when out of memory, the old node when
 * it is not a list (the caller reports it). */
static nm_ynode *own_seq(nm_ydoc *doc, nm_ynode *map, const char *key)
{
    const nm_ynode *old = nm_ymap_get(map, key);
    if (old && !nm_yis_null(old) && old->kind != NM_Y_SEQ)
        return (nm_ynode *)old;
    nm_ynode *q = nm_ydoc_seq(doc, old ? old : map);
    for (size_t i = 0; q && old && old->kind == NM_Y_SEQ && i < old->n; i++)
        if (nm_yseq_append(doc, q, old->items[i]) != NM_OK)
            return NULL;
    return q && nm_ymap_set(doc, map, key, q) == NM_OK ? q : NULL;
}

/* Item i of list q as a map of its own (a shallow copy put in its place). */
static nm_ynode *own_item(nm_ydoc *doc, nm_ynode *q, size_t i)
{
    nm_ynode *m = nm_ydoc_map_copy(doc, q->items[i]);
    if (m)
        q->items[i] = m;
    return m;
}

static const char *name_of(const nm_ynode *m)
{
    const nm_ynode *n = nm_ymap_get(m, "name");
    if (!n)
        n = nm_ymap_get(m, "target");
    return n && n->kind == NM_Y_SCALAR ? n->str : NULL;
}

/* The map of LEVEL's options, owned: its target in the top-level
 * sparse_optimizations, else the component's own sparse_optimizations;
 * with `create`, a new target when neither is there.  NULL with *err set
 * when there is none (or out of memory). */
static nm_ynode *sparse_target(nm_ydoc *doc, nm_ynode *arch_node, const char *level, int create,
                               const nm_override *ov, nm_error *err)
{
    nm_ynode *root = (nm_ynode *)doc->root;
    const nm_ynode *so = nm_ymap_get(root, "sparse_optimizations");
    const nm_ynode *tl = so && so->kind == NM_Y_MAP ? nm_ymap_get(so, "targets") : NULL;
    for (size_t i = 0; tl && tl->kind == NM_Y_SEQ && i < tl->n; i++) {
        const char *n = name_of(tl->items[i]);
        if (!n || strcmp(n, level) || tl->items[i]->kind != NM_Y_MAP)
            continue;
        nm_ynode *som = own_map(doc, root, "sparse_optimizations");
        nm_ynode *q = som ? own_seq(doc, som, "targets") : NULL;
        nm_ynode *t = q ? own_item(doc, q, i) : NULL;
        if (!t)
            nm_error_set(err, NM_ERR_NOMEM, NULL, 0, 0, "out of memory");
        return t;
    }
    walk *w = arch_node ? nm_calloc(1, sizeof *w) : NULL;
    nm_ynode *comp = NULL;
    if (w) {
        const nm_ynode *nodes = nm_ymap_get(arch_node, "nodes");
        if (nodes)
            walk_v04(w, nodes, 0);
        else
            walk_core(w, arch_node, 0);
        for (int i = 0; i < w->n && !comp; i++)
            if (!w->e[i].scope && !strcmp(w->e[i].base, level) &&
                nm_ymap_get(w->e[i].node, "sparse_optimizations"))
                comp = w->e[i].node;
        nm_free(w);
    }
    if (comp) {
        nm_ynode *t = own_map(doc, comp, "sparse_optimizations");
        if (!t)
            nm_error_set(err, NM_ERR_NOMEM, NULL, 0, 0, "out of memory");
        else if (t->kind != NM_Y_MAP)
            nm_yerror(err, t, "sparse_optimizations must be a mapping");
        return t && t->kind == NM_Y_MAP ? t : NULL;
    }
    if (!create) {
        fail(err, ov, "the design gives '%s' no sparse optimizations to change", level);
        return NULL;
    }
    if (so && (so->kind != NM_Y_MAP || (tl && !nm_yis_null(tl) && tl->kind != NM_Y_SEQ))) {
        nm_yerror(err, so, "sparse_optimizations must be a mapping holding a list of targets");
        return NULL;
    }
    nm_ynode *som = own_map(doc, root, "sparse_optimizations");
    nm_ynode *q = som ? own_seq(doc, som, "targets") : NULL;
    nm_ynode *t = q ? nm_ydoc_map(doc, q) : NULL;
    if (!t || set_value(doc, t, "name", level, ov, err) != NM_OK ||
        nm_yseq_append(doc, q, t) != NM_OK) {
        nm_error_set(err, NM_ERR_NOMEM, NULL, 0, 0, "out of memory");
        return NULL;
    }
    return t;
}

/* sparse.LEVEL.action / .compute / .format.TENSOR (override.h). */
static nm_status apply_sparse(nm_ydoc *doc, nm_ynode *arch_node, const nm_override *ov,
                              nm_error *err)
{
    char level[NM_NAME_MAX];
    int fmt = sparse_level(ov, level, sizeof level);
    nm_ynode *t = sparse_target(doc, arch_node, level, fmt, ov, err);
    if (!t)
        return err->status;
    if (!fmt) {
        const char *key = !strcmp(ov->attribute, "action") ? "action_optimization"
                                                           : "compute_optimization";
        if (!nm_ymap_get(t, key))
            return fail(err, ov, "the design gives '%s' no %s to change", level, key);
        nm_ynode *q = own_seq(doc, t, key);
        if (!q)
            return nm_error_set(err, NM_ERR_NOMEM, NULL, 0, 0, "out of memory");
        if (q->kind != NM_Y_SEQ)
            return nm_yerror(err, q, "%s must be a list", key);
        int changed = 0;
        for (size_t i = 0; i < q->n; i++) {
            const nm_ynode *ty = nm_ymap_get(q->items[i], "type");
            if (!ty || ty->kind != NM_Y_SCALAR ||
                (strcmp(ty->str, "gating") && strcmp(ty->str, "skipping")))
                continue; /* (skipping_spatial stays) */
            nm_ynode *g = own_item(doc, q, i);
            if (!g || set_value(doc, g, "type", ov->value, ov, err) != NM_OK)
                return nm_error_set(err, NM_ERR_NOMEM, NULL, 0, 0, "out of memory");
            changed++;
        }
        if (!changed)
            return fail(err, ov, "'%s' has no gating or skipping in its %s", level, key);
        return NM_OK;
    }
    /* a format: the tensor's entry in representation_format.data_spaces */
    nm_ynode *rf = own_map(doc, t, "representation_format");
    if (!rf)
        return nm_error_set(err, NM_ERR_NOMEM, NULL, 0, 0, "out of memory");
    if (rf->kind != NM_Y_MAP)
        return nm_yerror(err, rf, "representation_format must be a mapping");
    nm_ynode *q = own_seq(doc, rf, "data_spaces");
    if (!q)
        return nm_error_set(err, NM_ERR_NOMEM, NULL, 0, 0, "out of memory");
    if (q->kind != NM_Y_SEQ)
        return nm_yerror(err, q, "data_spaces must be a list");
    size_t at = q->n;
    for (size_t i = 0; i < q->n && at == q->n; i++) {
        const char *n = name_of(q->items[i]);
        if (n && !strcmp(n, ov->attribute))
            at = i;
    }
    if (!strcmp(ov->value, "none")) {
        if (at < q->n) {
            memmove(&q->items[at], &q->items[at + 1], (q->n - at - 1) * sizeof *q->items);
            q->n--;
        }
        return NM_OK;
    }
    nm_ynode *e = nm_ydoc_map(doc, q), *ranks = nm_ydoc_seq(doc, q);
    if (!e || !ranks || set_value(doc, e, "name", ov->attribute, ov, err) != NM_OK ||
        nm_ymap_set(doc, e, "ranks", ranks) != NM_OK)
        return nm_error_set(err, NM_ERR_NOMEM, NULL, 0, 0, "out of memory");
    for (const char *p = ov->value; *p;) {
        size_t n = strcspn(p, ",");
        char f[8];
        snprintf(f, sizeof f, "%.*s", (int)n, p);
        nm_ynode *r = nm_ydoc_map(doc, q);
        if (!r || set_value(doc, r, "format", f, ov, err) != NM_OK ||
            nm_yseq_append(doc, ranks, r) != NM_OK)
            return nm_error_set(err, NM_ERR_NOMEM, NULL, 0, 0, "out of memory");
        p += n + (p[n] == ',');
    }
    if (at < q->n) {
        q->items[at] = e;
        return NM_OK;
    }
    return nm_yseq_append(doc, q, e) == NM_OK
               ? NM_OK : nm_error_set(err, NM_ERR_NOMEM, NULL, 0, 0, "out of memory");
}

/* problem.NAME=V: on the input's `problem:` and on every layer of its
 * `network:`. */
static nm_status apply_problem(nm_ydoc *doc, const nm_override *ov, nm_error *err)
{
    nm_ynode *root = (nm_ynode *)doc->root;
    int found = 0;
    nm_ynode *prob = (nm_ynode *)nm_ymap_get(root, "problem");
    nm_status st = NM_OK;
    if (prob) {
        found++;
        st = set_problem(doc, prob, ov, err);
    }
    const nm_ynode *net = nm_ymap_get(root, "network");
    const nm_ynode *layers = net ? nm_ymap_get(net, "layers") : NULL;
    for (size_t i = 0; st == NM_OK && layers && layers->kind == NM_Y_SEQ && i < layers->n; i++) {
        nm_ynode *lp = (nm_ynode *)nm_ymap_get(layers->items[i], "problem");
        if (!lp)
            continue;
        found++;
        st = set_problem(doc, lp, ov, err);
    }
    if (st == NM_OK && !found)
        return fail(err, ov, "no 'problem' or 'network' layers in the input files to change");
    return st;
}

nm_status nm_override_apply(nm_ydoc *doc, const nm_override *ov, size_t n, nm_error *err)
{
    if (n == 0)
        return NM_OK;
    nm_ynode *arch = doc->root ? (nm_ynode *)nm_ymap_get(doc->root, "architecture") : NULL;
    for (size_t i = 0; i < n; i++) {
        nm_status st;
        if (!strcmp(ov[i].component, NM_OVERRIDE_PROBLEM) ||
            !strcmp(ov[i].component, NM_OVERRIDE_DENSITY))
            st = apply_problem(doc, &ov[i], err);
        else if (!strncmp(ov[i].component, NM_OVERRIDE_SPARSE ".", sizeof NM_OVERRIDE_SPARSE))
            st = apply_sparse(doc, arch && arch->kind == NM_Y_MAP ? arch : NULL, &ov[i], err);
        else if (!arch || arch->kind != NM_Y_MAP)
            st = fail(err, &ov[i], "no 'architecture' in the input files to change");
        else
            st = apply_one(doc, arch, &ov[i], ov, n, err);
        if (st != NM_OK)
            return st;
    }
    return NM_OK;
}
