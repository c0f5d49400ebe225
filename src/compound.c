/* compound.c — Accelergy compound components; see compound.h.
 *
 * A component of a compound class is an instance: its class definition and
 * a scope of attributes.  A scope entry is an expression evaluated lazily
 * in the scope it was written for (a subcomponent's attribute in its
 * parent's scope, a class default in the instance's own), so defaults may
 * refer to each other in any order; a cycle is an error.  A name a scope
 * does not hold is looked up in the enclosing instance's scope, which is
 * how a subcomponent gets the technology of the component it is part of.
 *
 *   component (arch attributes) ── scope ──┐
 *     subcomponent storage: SRAM  ── scope ─┤ parent
 *     subcomponent address_generators[0..1]: intadder
 *
 * Action energies recurse down to primitives (ERT entry or built-in).
 */
#include <config.h>

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nestmap/compound.h"
#include "nestmap/estimate.h"
#include "nestmap/expr.h"
#include "nestmap/text.h"

#define MAX_ATTRS 64
#define MAX_SUBS 32
#define MAX_NEST 8
#define HOW_MAX 4096

enum { PENDING, EVALUATING, DONE };

struct scope {
    int n;
    const char *name[MAX_ATTRS];
    const nm_ynode *node[MAX_ATTRS];     /* the expression */
    struct scope *eval_in[MAX_ATTRS];    /* the scope it is evaluated in */
    nm_value val[MAX_ATTRS];
    int state[MAX_ATTRS];
    int is_default[MAX_ATTRS];           /* a class default (must_specify may stand) */
    struct scope *parent;                /* the enclosing instance's scope */
    const char *cls;                     /* for messages */
    nm_error *err;
    int failed;                          /* err holds an error raised during a lookup */
};

struct inst {
    char path[2 * NM_NAME_MAX];
    const char *cls;
    const nm_ynode *def;  /* compound class, or NULL for a primitive */
    const nm_ynode *at;   /* where it was declared */
    int64_t count;        /* how many ([0..3] -> 4) */
    int64_t first;        /* the first index declared: 0 for [0..3], 1 for [1..depth] */
    double area_scale;
    char base[NM_NAME_MAX];
    struct scope sc;
};

struct ctx {
    const nm_ynode *cc;
    nm_compound_ert ert;
    void *ert_ctx;
    nm_error *err;
};

static int lookup(void *vs, const char *name, size_t len, nm_value *out);

static nm_status eval_entry(struct scope *s, int i)
{
    if (s->state[i] == DONE)
        return NM_OK;
    if (s->state[i] == EVALUATING)
        return nm_yerror(s->err, s->node[i], "attribute '%s' of '%s' refers to itself",
                         s->name[i], s->cls);
    const nm_ynode *n = s->node[i];
    if (n->kind != NM_Y_SCALAR)
        return nm_yerror(s->err, n, "attribute '%s' must be a value or an expression",
                         s->name[i]);
    s->state[i] = EVALUATING;
    nm_expr_error e;
    nm_value v;
    nm_expr_status es = nm_expr_eval(n->str, n->len, lookup, s->eval_in[i], &v, &e);
    if (s->eval_in[i]->failed) {
        s->failed = 1;
        return s->err->status;
    }
    if (es == NM_EXPR_ERROR) {
        const char *names[4 * MAX_ATTRS];
        size_t k = 0;
        for (const struct scope *sc = s->eval_in[i]; sc && k + MAX_ATTRS <= 4 * MAX_ATTRS;
             sc = sc->parent)
            for (int j = 0; j < sc->n; j++)
                names[k++] = sc->name[j];
        const char *g = e.name[0] ? nm_text_suggest(e.name, names, k) : NULL;
        if (g)
            return nm_yerror_at(s->err, n, e.offset, "attribute '%s': %s; did you mean '%s'?",
                                s->name[i], e.msg, g);
        return nm_yerror_at(s->err, n, e.offset, "attribute '%s': %s", s->name[i], e.msg);
    }
    if (v.is_str && v.len == 12 && !strncmp(v.str, "must_specify", 12))
        return nm_yerror(s->err, n, "attribute '%s' of class '%s' must be specified",
                         s->name[i], s->cls);
    if (!v.is_str && v.unit) /* a compound class computes in words and rows */
        return nm_yerror(s->err, n, "attribute '%s' of class '%s': a quantity in %s is not "
                         "taken by a compound class; write it as a plain number", s->name[i],
                         s->cls, v.unit);
    s->val[i] = v;
    s->state[i] = DONE;
    return NM_OK;
}

static int find_attr(const struct scope *s, const char *name, size_t len)
{
    for (int i = 0; i < s->n; i++)
        if (strlen(s->name[i]) == len && !strncmp(s->name[i], name, len))
            return i;
    return -1;
}

static int lookup(void *vs, const char *name, size_t len, nm_value *out)
{
    for (struct scope *s = vs; s; s = s->parent) {
        int i = find_attr(s, name, len);
        if (i < 0)
            continue;
        /* A default of must_specify gives way to the enclosing scope's value. */
        const nm_ynode *n = s->node[i];
        if (s->is_default[i] && n->kind == NM_Y_SCALAR && !strcmp(n->str, "must_specify") &&
            s->parent && find_attr(s->parent, name, len) >= 0)
            continue;
        if (eval_entry(s, i) != NM_OK) {
            ((struct scope *)vs)->failed = 1;
            return 0;
        }
        *out = s->val[i];
        return 1;
    }
    return 0;
}

/* Adds the pairs of map to s (those it does not hold yet), evaluated in
 * `in` (NULL: in s itself). */
static nm_status add_attrs(struct scope *s, const nm_ynode *map, struct scope *in, int is_default)
{
    if (!map || nm_yis_null(map))
        return NM_OK;
    nm_status st = nm_yexpect(map, NM_Y_MAP, "attributes", s->err);
    if (st != NM_OK)
        return st;
    for (size_t i = 0; i < map->n; i++) {
        const char *k = nm_ymap_key(map, i)->str;
        if (find_attr(s, k, strlen(k)) >= 0)
            continue;
        if (s->n >= MAX_ATTRS)
            return nm_yerror(s->err, map, "more than %d attributes", MAX_ATTRS);
        s->name[s->n] = k;
        s->node[s->n] = nm_ymap_val(map, i);
        s->eval_in[s->n] = in ? in : s;
        s->state[s->n] = PENDING;
        s->is_default[s->n] = is_default;
        s->n++;
    }
    return NM_OK;
}

/* The number an attribute holds, or `dflt` when the scope chain has none. */
static nm_status num_attr(struct scope *s, const char *const *names, double dflt, double *out,
                          const nm_ynode *at)
{
    for (; *names; names++) {
        nm_value v;
        if (!lookup(s, *names, strlen(*names), &v)) {
            if (s->failed)
                return s->err->status;
            continue;
        }
        if (v.is_str)
            return nm_yerror(s->err, at, "attribute '%s' of '%s' must be a number (got '%.*s')",
                             *names, s->cls, (int)(v.len > 40 ? 40 : v.len), v.str);
        *out = v.num;
        return NM_OK;
    }
    *out = dflt;
    return NM_OK;
}

/* "45nm", "45 nm", 45, "0.045um" -> 45; 0 when absent. */
static nm_status tech_attr(struct scope *s, double *nm, const nm_ynode *at)
{
    nm_value v;
    *nm = 0.0;
    if (!lookup(s, "technology", 10, &v))
        return s->failed ? s->err->status : NM_OK;
    if (!v.is_str) {
        *nm = v.num;
        return NM_OK;
    }
    char buf[64];
    snprintf(buf, sizeof buf, "%.*s", (int)(v.len < 63 ? v.len : 63), v.str);
    char *end;
    double x = strtod(buf, &end);
    while (*end == ' ')
        end++;
    if (end == buf || (*end && strcmp(end, "nm") && strcmp(end, "um")))
        return nm_yerror(s->err, at, "'%s': technology '%s' is not a node such as 45nm",
                         s->cls, buf);
    *nm = !strcmp(end, "um") ? x * 1000.0 : x;
    return NM_OK;
}

/* "name[lo..hi]" -> base and count; bounds may be expressions in s. */
static nm_status split_range(struct scope *s, const nm_ynode *n, char *base, int64_t *lo,
                             int64_t *count)
{
    const char *str = n->str, *br = strchr(str, '[');
    size_t blen = br ? (size_t)(br - str) : strlen(str);
    if (blen == 0 || blen >= NM_NAME_MAX)
        return nm_yerror(s->err, n, "bad subcomponent name '%s'", str);
    memcpy(base, str, blen);
    base[blen] = '\0';
    *lo = 0;
    *count = -1; /* no range: all of them */
    if (!br)
        return NM_OK;
    const char *close = strrchr(br, ']');
    if (!close || close[1])
        return nm_yerror(s->err, n, "bad range in '%s' (write name[0..3])", str);
    const char *dots = strstr(br, "..");
    double b[2];
    const char *part[2] = {br + 1, dots ? dots + 2 : br + 1};
    size_t plen[2] = {dots ? (size_t)(dots - br - 1) : (size_t)(close - br - 1),
                      dots ? (size_t)(close - dots - 2) : (size_t)(close - br - 1)};
    for (int i = 0; i < 2; i++) {
        nm_value v;
        nm_expr_error e;
        nm_expr_status es = nm_expr_eval(part[i], plen[i], lookup, s, &v, &e);
        if (s->failed)
            return s->err->status;
        if (es != NM_EXPR_OK || v.is_str || v.unit || v.num != floor(v.num) || v.num < 0)
            return nm_yerror(s->err, n, "bad range in '%s': bounds must be whole numbers%s%s",
                             str, es == NM_EXPR_ERROR ? ": " : "",
                             es == NM_EXPR_ERROR ? e.msg : "");
        b[i] = v.num;
    }
    if (b[1] < b[0] || b[1] - b[0] >= 1 << 20)
        return nm_yerror(s->err, n, "bad range in '%s'", str);
    *lo = (int64_t)b[0];
    *count = (int64_t)(b[1] - b[0]) + 1;
    return NM_OK;
}

const nm_ynode *nm_compound_section(const nm_ynode *root)
{
    const nm_ynode *cc = nm_ymap_get(root, "compound_components");
    return cc ? cc : nm_ymap_get(root, "components");
}

const nm_ynode *nm_compound_find(const nm_ynode *cc, const char *cls)
{
    const nm_ynode *classes = cc ? nm_ymap_get(cc, "classes") : NULL;
    if (!classes || classes->kind != NM_Y_SEQ)
        return NULL;
    for (size_t i = 0; i < classes->n; i++) {
        const nm_ynode *n = nm_ymap_get(classes->items[i], "name");
        if (n && n->kind == NM_Y_SCALAR && !strcmp(n->str, cls))
            return classes->items[i];
    }
    return NULL;
}

const char *nm_compound_suggest(const nm_ynode *cc, const char *cls)
{
    const nm_ynode *classes = cc ? nm_ymap_get(cc, "classes") : NULL;
    if (!classes || classes->kind != NM_Y_SEQ)
        return NULL;
    const char *names[256];
    size_t n = 0;
    for (size_t i = 0; i < classes->n && n < 256; i++) {
        const nm_ynode *nn = nm_ymap_get(classes->items[i], "name");
        if (nn && nn->kind == NM_Y_SCALAR)
            names[n++] = nn->str;
    }
    return nm_text_suggest(cls, names, n);
}

int nm_compound_is_compute(const nm_ynode *def)
{
    const nm_ynode *acts = def ? nm_ymap_get(def, "actions") : NULL;
    if (!acts || acts->kind != NM_Y_SEQ)
        return -1;
    int store = 0, comp = 0;
    for (size_t i = 0; i < acts->n; i++) {
        const nm_ynode *n = nm_ymap_get(acts->items[i], "name");
        if (!n || n->kind != NM_Y_SCALAR)
            continue;
        if (!strcmp(n->str, "read") || !strcmp(n->str, "write") || !strcmp(n->str, "update"))
            store = 1;
        else if (strstr(n->str, "mac") || strstr(n->str, "compute") || strstr(n->str, "mult") ||
                 !strcmp(n->str, "add"))
            comp = 1;
    }
    return store == comp ? -1 : comp;
}

static nm_status check_def(struct ctx *c, const nm_ynode *def)
{
    static const char *const keys[] = {"name", "attributes", "subcomponents", "actions",
                                       "primitive_type", "description", NULL};
    return nm_ycheck_keys(def, keys, "a compound class", c->err);
}

/* Fills in->sc: the given attributes (evaluated in `given_in`), then the
 * class's defaults. */
static nm_status instantiate(struct ctx *c, struct inst *in, const nm_ynode *given,
                             struct scope *given_in, struct scope *parent)
{
    memset(&in->sc, 0, sizeof in->sc);
    in->sc.parent = parent;
    in->sc.cls = in->cls;
    in->sc.err = c->err;
    in->def = nm_compound_find(c->cc, in->cls);
    nm_status st = add_attrs(&in->sc, given, given_in, 0);
    if (st == NM_OK && in->def && (st = check_def(c, in->def)) == NM_OK)
        st = add_attrs(&in->sc, nm_ymap_get(in->def, "attributes"), NULL, 1);
    return st;
}

/* The subcomponents of compound instance in (heap array; caller frees). */
static nm_status subcomponents(struct ctx *c, struct inst *in, struct inst **out, int *nout)
{
    *out = NULL;
    *nout = 0;
    const nm_ynode *subs = nm_ymap_get(in->def, "subcomponents");
    if (!subs || nm_yis_null(subs))
        return NM_OK;
    nm_status st = nm_yexpect(subs, NM_Y_SEQ, "subcomponents", c->err);
    if (st != NM_OK)
        return st;
    if (subs->n > MAX_SUBS)
        return nm_yerror(c->err, subs, "more than %d subcomponents", MAX_SUBS);
    struct inst *arr = nm_calloc(subs->n ? subs->n : 1, sizeof *arr);
    if (!arr)
        return nm_error_set(c->err, NM_ERR_NOMEM, NULL, 0, 0, "out of memory");
    static const char *const keys[] = {"name", "class", "attributes", "area_share",
                                       "area_scale", "energy_scale", NULL};
    for (size_t i = 0; i < subs->n; i++) {
        const nm_ynode *sd = subs->items[i];
        struct inst *s = &arr[i];
        const nm_ynode *nn, *cn;
        if ((st = nm_yexpect(sd, NM_Y_MAP, "a subcomponent", c->err)) != NM_OK ||
            (st = nm_ycheck_keys(sd, keys, "a subcomponent", c->err)) != NM_OK)
            goto fail;
        if (!(nn = nm_ymap_get(sd, "name")) || !(cn = nm_ymap_get(sd, "class"))) {
            st = nm_yerror(c->err, sd, "a subcomponent needs a 'name' and a 'class'");
            goto fail;
        }
        if ((st = nm_yexpect(nn, NM_Y_SCALAR, "a subcomponent name", c->err)) != NM_OK ||
            (st = nm_yget_str(cn, "class", &s->cls, c->err)) != NM_OK)
            goto fail;
        if ((st = split_range(&in->sc, nn, s->base, &s->first, &s->count)) != NM_OK)
            goto fail;
        if (s->count < 0)
            s->count = 1;
        if (strlen(in->path) + strlen(s->base) + 2 > sizeof s->path) {
            st = nm_yerror(c->err, nn, "subcomponent path too long");
            goto fail;
        }
        memcpy(s->path, in->path, strlen(in->path));
        s->path[strlen(in->path)] = '.';
        memcpy(s->path + strlen(in->path) + 1, s->base, strlen(s->base) + 1);
        s->at = sd;
        s->area_scale = 1.0;
        const nm_ynode *as = nm_ymap_get(sd, "area_share");
        if (!as)
            as = nm_ymap_get(sd, "area_scale");
        const nm_ynode *attrs = nm_ymap_get(sd, "attributes");
        if ((st = instantiate(c, s, attrs, &in->sc, &in->sc)) != NM_OK)
            goto fail;
        if (as) {
            nm_value v;
            nm_expr_error e;
            if (nm_expr_eval(as->str, as->len, lookup, &in->sc, &v, &e) != NM_EXPR_OK ||
                v.is_str || v.unit) {
                st = in->sc.failed ? c->err->status
                                   : nm_yerror(c->err, as, "area_share must be a number");
                goto fail;
            }
            s->area_scale = v.num;
        }
    }
    *out = arr;
    *nout = (int)subs->n;
    return NM_OK;
fail:
    nm_free(arr);
    return st;
}

static void how_add(char *how, size_t *used, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void how_add(char *how, size_t *used, const char *fmt, ...)
{
    if (!how || *used >= HOW_MAX - 1)
        return;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(how + *used, HOW_MAX - *used, fmt, ap);
    va_end(ap);
    if (n > 0)
        *used = *used + (size_t)n < HOW_MAX ? *used + (size_t)n : HOW_MAX - 1;
}

static nm_status primitive(struct ctx *c, struct inst *in, const char *action,
                           const nm_ynode *at, double *pj, double *um2, const char **source)
{
    double e;
    *um2 = 0.0;
    if (c->ert && (c->ert(c->ert_ctx, in->path, in->cls, action, &e))) {
        *pj = e;
        *source = "ERT";
        return NM_OK;
    }
    static const char *const depth_k[] = {"depth", "entries", "memory_depth", NULL};
    static const char *const width_k[] = {"width", "memory_width", NULL};
    static const char *const bits_k[] = {"n_bits", "width", "datawidth", "bitwidth", NULL};
    static const char *const mult_k[] = {"multiplier_width", NULL};
    static const char *const add_k[] = {"adder_width", NULL};
    nm_primitive p;
    memset(&p, 0, sizeof p);
    p.path = in->path;
    p.cls = in->cls;
    nm_status st;
    if ((st = num_attr(&in->sc, depth_k, 0, &p.depth, in->at)) != NM_OK ||
        (st = num_attr(&in->sc, width_k, 0, &p.width, in->at)) != NM_OK ||
        (st = num_attr(&in->sc, bits_k, 0, &p.bits, in->at)) != NM_OK ||
        (st = num_attr(&in->sc, mult_k, 0, &p.mult_bits, in->at)) != NM_OK ||
        (st = num_attr(&in->sc, add_k, 0, &p.adder_bits, in->at)) != NM_OK ||
        (st = tech_attr(&in->sc, &p.tech_nm, in->at)) != NM_OK)
        return st;
    char type[32] = "";
    nm_value v;
    if (lookup(&in->sc, "type", 4, &v) && v.is_str)
        snprintf(type, sizeof type, "%.*s", (int)(v.len < 31 ? v.len : 31), v.str);
    p.dram_type = type;
    return nm_estimate_primitive(&p, action, at, pj, um2, source, c->err);
}

static nm_status energy(struct ctx *c, struct inst *in, const char *action, const nm_ynode *at,
                        int depth, double *pj, char *how, size_t *used);

static nm_status area(struct ctx *c, struct inst *in, int depth, double *um2)
{
    *um2 = 0.0;
    if (depth > MAX_NEST)
        return nm_yerror(c->err, in->at, "compound classes nested more than %d deep", MAX_NEST);
    if (!in->def) {
        double pj;
        const char *src;
        nm_error ignored;
        nm_error *keep = c->err;
        c->err = &ignored;
        in->sc.err = &ignored;
        /* A class known only from the ERT has no built-in area: 0. */
        if (primitive(c, in, "read", in->at, &pj, um2, &src) != NM_OK)
            *um2 = 0.0;
        c->err = keep;
        in->sc.err = keep;
        in->sc.failed = 0;
        return NM_OK;
    }
    struct inst *subs;
    int n;
    nm_status st = subcomponents(c, in, &subs, &n);
    for (int i = 0; st == NM_OK && i < n; i++) {
        double a;
        if ((st = area(c, &subs[i], depth + 1, &a)) == NM_OK)
            *um2 += a * (double)subs[i].count * subs[i].area_scale;
    }
    nm_free(subs);
    return st;
}

static nm_status energy(struct ctx *c, struct inst *in, const char *action, const nm_ynode *at,
                        int depth, double *pj, char *how, size_t *used)
{
    *pj = 0.0;
    if (depth > MAX_NEST)
        return nm_yerror(c->err, in->at, "compound classes nested more than %d deep", MAX_NEST);
    if (!in->def) {
        double um2;
        const char *src;
        return primitive(c, in, action, at, pj, &um2, &src);
    }
    const nm_ynode *acts = nm_ymap_get(in->def, "actions"), *ad = NULL;
    for (size_t i = 0; acts && acts->kind == NM_Y_SEQ && i < acts->n && !ad; i++) {
        const nm_ynode *n = nm_ymap_get(acts->items[i], "name");
        if (n && n->kind == NM_Y_SCALAR && !strcmp(n->str, action))
            ad = acts->items[i];
    }
    if (!ad) {
        /* Leakage and idling a class does not define cost nothing. */
        if (!strcmp(action, "leak") || !strcmp(action, "idle"))
            return NM_OK;
        return nm_yerror(c->err, at, "'%s' (class %s) has no action '%s'", in->path, in->cls,
                         action);
    }
    static const char *const akeys[] = {"name", "subcomponents", "arguments", "energy_scale",
                                        "action_share", "repeat", NULL};
    nm_status st = nm_ycheck_keys(ad, akeys, "a compound action", c->err);
    if (st != NM_OK)
        return st;
    struct inst *subs;
    int nsubs;
    if ((st = subcomponents(c, in, &subs, &nsubs)) != NM_OK)
        return st;
    /* The action's arguments are in scope for its scales. */
    struct scope *args = nm_calloc(1, sizeof *args);
    if (!args) {
        nm_free(subs);
        return nm_error_set(c->err, NM_ERR_NOMEM, NULL, 0, 0, "out of memory");
    }
    args->parent = &in->sc;
    args->cls = in->cls;
    args->err = c->err;
    const nm_ynode *sl = nm_ymap_get(ad, "subcomponents");
    if ((st = add_attrs(args, nm_ymap_get(ad, "arguments"), NULL, 0)) != NM_OK)
        goto done;
    if (sl && !nm_yis_null(sl) && (st = nm_yexpect(sl, NM_Y_SEQ, "subcomponents", c->err)) != NM_OK)
        goto done;
    int first = 1;
    for (size_t i = 0; sl && sl->kind == NM_Y_SEQ && i < sl->n; i++) {
        const nm_ynode *e = sl->items[i], *nn, *al;
        static const char *const skeys[] = {"name", "actions", NULL};
        if ((st = nm_yexpect(e, NM_Y_MAP, "a subcomponent action", c->err)) != NM_OK ||
            (st = nm_ycheck_keys(e, skeys, "a subcomponent action", c->err)) != NM_OK)
            goto done;
        if (!(nn = nm_ymap_get(e, "name")) || !(al = nm_ymap_get(e, "actions"))) {
            st = nm_yerror(c->err, e, "a subcomponent action needs 'name' and 'actions'");
            goto done;
        }
        char base[NM_NAME_MAX];
        int64_t lo, count;
        if ((st = nm_yexpect(nn, NM_Y_SCALAR, "a subcomponent name", c->err)) != NM_OK ||
            (st = split_range(args, nn, base, &lo, &count)) != NM_OK)
            goto done;
        struct inst *s = NULL;
        const char *cands[MAX_SUBS];
        for (int k = 0; k < nsubs; k++) {
            cands[k] = subs[k].base;
            if (!strcmp(subs[k].base, base))
                s = &subs[k];
        }
        if (!s) {
            const char *g = nm_text_suggest(base, cands, (size_t)nsubs);
            st = g ? nm_yerror(c->err, nn, "'%s' has no subcomponent '%s'; did you mean '%s'?",
                               in->cls, base, g)
                   : nm_yerror(c->err, nn, "'%s' has no subcomponent '%s'", in->cls, base);
            goto done;
        }
        /* Ranges count from where the declaration does: Accelergy's files
         * write both [0..depth-1] and [1..depth]. */
        if (count < 0)
            count = s->count;
        else if (lo < s->first || lo - s->first + count > s->count) {
            st = nm_yerror(c->err, nn, "'%s' has only %s[%lld..%lld]", in->cls, base,
                           (long long)s->first, (long long)(s->first + s->count - 1));
            goto done;
        }
        if ((st = nm_yexpect(al, NM_Y_SEQ, "actions", c->err)) != NM_OK)
            goto done;
        for (size_t j = 0; j < al->n; j++) {
            const nm_ynode *sa = al->items[j], *an;
            static const char *const sakeys[] = {"name", "arguments", "energy_scale",
                                                 "action_share", "repeat", NULL};
            const char *aname;
            if ((st = nm_yexpect(sa, NM_Y_MAP, "a subcomponent action", c->err)) != NM_OK ||
                (st = nm_ycheck_keys(sa, sakeys, "a subcomponent action", c->err)) != NM_OK)
                goto done;
            if (!(an = nm_ymap_get(sa, "name"))) {
                st = nm_yerror(c->err, sa, "a subcomponent action needs a 'name'");
                goto done;
            }
            if ((st = nm_yget_str(an, "action name", &aname, c->err)) != NM_OK)
                goto done;
            double scale = 1.0;
            static const char *const scale_keys[] = {"energy_scale", "action_share", "repeat"};
            for (int k = 0; k < 3; k++) {
                const nm_ynode *sn = nm_ymap_get(sa, scale_keys[k]);
                if (!sn || nm_yis_null(sn))
                    continue;
                nm_value v;
                nm_expr_error ee;
                nm_expr_status es = sn->kind == NM_Y_SCALAR
                                        ? nm_expr_eval(sn->str, sn->len, lookup, args, &v, &ee)
                                        : NM_EXPR_ERROR;
                if (args->failed) {
                    st = c->err->status;
                    goto done;
                }
                if (es != NM_EXPR_OK || v.is_str || v.unit || v.num < 0) {
                    st = nm_yerror(c->err, sn, "%s must be a number of times, at least 0%s%s",
                                   scale_keys[k], es == NM_EXPR_ERROR ? ": " : "",
                                   es == NM_EXPR_ERROR ? ee.msg : "");
                    goto done;
                }
                scale *= v.num;
            }
            double part;
            if ((st = energy(c, s, aname, an, depth + 1, &part, NULL, NULL)) != NM_OK)
                goto done;
            *pj += scale * (double)count * part;
            if (how) {
                how_add(how, used, "%s", first ? "" : " + ");
                if (scale * (double)count != 1.0)
                    how_add(how, used, "%g x ", scale * (double)count);
                how_add(how, used, "%s.%s %.4g (%s%s)", nn->str, aname, part,
                        s->def ? "compound " : "", s->cls);
                first = 0;
            }
        }
    }
    if (how && first)
        how_add(how, used, "nothing");
done:
    nm_free(args);
    nm_free(subs);
    return st;
}

nm_status nm_compound_eval(const nm_ynode *cc, const nm_ynode *def, const char *name,
                           const nm_ynode *attrs, nm_compound_ert ert, void *ert_ctx,
                           nm_ydoc *doc, nm_compound *out, nm_error *err)
{
    memset(out, 0, sizeof *out);
    struct ctx c = {cc, ert, ert_ctx, err};
    struct inst *top = nm_calloc(1, sizeof *top);
    char *how = nm_malloc(HOW_MAX);
    nm_status st = NM_OK;
    if (!top || !how) {
        st = nm_error_set(err, NM_ERR_NOMEM, NULL, 0, 0, "out of memory");
        goto done;
    }
    how[0] = '\0';
    size_t used = 0;
    const nm_ynode *cn = nm_ymap_get(def, "name");
    snprintf(top->path, sizeof top->path, "%s", name);
    top->cls = cn ? cn->str : "";
    top->at = def;
    top->count = 1;
    /* The component's own attributes (evaluated in its own scope) come
     * first, so they win over the class defaults. */
    if ((st = instantiate(&c, top, attrs, NULL, NULL)) != NM_OK)
        goto done;
    const nm_ynode *acts = nm_ymap_get(def, "actions");
    if (!acts || acts->kind != NM_Y_SEQ) {
        st = nm_yerror(err, def, "compound class '%s' has no 'actions' list", top->cls);
        goto done;
    }
    for (size_t i = 0; i < acts->n; i++) {
        const nm_ynode *an = nm_ymap_get(acts->items[i], "name");
        if (!an || an->kind != NM_Y_SCALAR) {
            st = nm_yerror(err, acts->items[i], "a compound action needs a 'name'");
            goto done;
        }
        if (out->nactions >= NM_COMPOUND_MAX_ACTIONS) {
            st = nm_yerror(err, an, "more than %d actions", NM_COMPOUND_MAX_ACTIONS);
            goto done;
        }
        int k = out->nactions;
        snprintf(out->action[k], NM_NAME_MAX, "%s", an->str);
        how_add(how, &used, "%s%s = ", used ? "\n" : "", an->str);
        if ((st = energy(&c, top, an->str, an, 0, &out->pj[k], how, &used)) != NM_OK)
            goto done;
        how_add(how, &used, " = %.6g pJ", out->pj[k]);
        out->nactions++;
    }
    if ((st = area(&c, top, 0, &out->area)) != NM_OK)
        goto done;
    out->how = doc && doc->arena ? nm_arena_strndup(doc->arena, how, used) : NULL;
done:
    nm_free(how);
    nm_free(top);
    return st;
}
