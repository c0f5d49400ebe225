/* workload.c — the `problem:` section: Timeloop's shape/instance form and
 * nestmap's shorthands (see shorthand.c). */
#include <config.h>

#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "nestmap/text.h"
#include "nestmap/workload.h"

/* Defined in shorthand.c: expands conv2d/gemm/... into *wl. Returns
 * NM_ERR_INPUT with *handled = 0 when `problem` uses no shorthand. */
nm_status nm_workload_shorthand(nm_workload *wl, const nm_ynode *problem, int *handled,
                                nm_error *err);

int nm_workload_dim(const nm_workload *wl, const char *name)
{
    for (int d = 0; d < wl->ndims; d++)
        if (!strcmp(wl->dim[d], name))
            return d;
    for (int a = 0; a < wl->nalias; a++)
        if (!strcmp(wl->alias[a], name))
            return wl->alias_of[a];
    return -1;
}

int nm_workload_absent_ds(const nm_workload *wl, const char *name)
{
    for (int u = 0; u < wl->nabsent; u++)
        if (!strcmp(wl->absent[u], name))
            return 1;
    return 0;
}

int nm_workload_unit_dim(const nm_workload *wl, const char *name)
{
    for (int u = 0; u < wl->nunit; u++)
        if (!strcmp(wl->unit[u], name))
            return 1;
    return 0;
}

int nm_dataspace_uses(const nm_dataspace *s, int d)
{
    for (int r = 0; d >= 0 && r < s->nranks; r++)
        for (int t = 0; t < s->rank[r].nterms; t++)
            if (s->rank[r].term[t].dim == d)
                return 1;
    return 0;
}

int nm_workload_ds(const nm_workload *wl, const char *name)
{
    for (int d = 0; d < wl->nds; d++)
        if (!strcmp(wl->ds[d].name, name))
            return d;
    for (int d = 0; d < wl->nds; d++)
        if (wl->ds[d].role[0] && !strcmp(wl->ds[d].role, name))
            return d;
    return -1;
}

char *nm_count_text(nm_count v, char *buf, size_t size)
{
    char tmp[48];
    size_t n = 0;
    do {
        tmp[n++] = (char)('0' + (int)(v % 10));
        v /= 10;
    } while (v && n < sizeof tmp);
    size_t i = 0;
    for (; i < n && i + 1 < size; i++)
        buf[i] = tmp[n - 1 - i];
    if (size)
        buf[i < size ? i : size - 1] = '\0';
    return buf;
}

/* a * b, saturating at NM_COUNT_LIMIT (counts never reach it after parse). */
static nm_count mul_count(nm_count a, nm_count b)
{
    if (b && a > NM_COUNT_LIMIT / b)
        return NM_COUNT_LIMIT;
    return a * b;
}

nm_count nm_workload_macs(const nm_workload *wl)
{
    nm_count ops = 1;
    for (int d = 0; d < wl->ndims; d++)
        ops = mul_count(ops, (nm_count)wl->bound[d]);
    return ops;
}

/* The extent of rank r of data space ds (coefficients may be negative),
 * NM_COUNT_LIMIT when it passes that. */
__extension__ typedef __int128 signed_count;

static nm_count rank_extent(const nm_workload *wl, const nm_dataspace *s, int r)
{
    signed_count extent = 1;
    const signed_count limit = (signed_count)NM_COUNT_LIMIT;
    for (int t = 0; t < s->rank[r].nterms; t++) {
        extent += (signed_count)s->rank[r].term[t].coef * (wl->bound[s->rank[r].term[t].dim] - 1);
        if (extent >= limit || extent <= -limit)
            return NM_COUNT_LIMIT;
    }
    return extent > 0 ? (nm_count)extent : 1;
}

nm_count nm_workload_words(const nm_workload *wl, int ds)
{
    nm_count size = 1;
    const nm_dataspace *s = &wl->ds[ds];
    for (int r = 0; r < s->nranks; r++) {
        size = mul_count(size, rank_extent(wl, s, r));
    }
    return size;
}

nm_count nm_workload_held_words(const nm_workload *wl, int ds)
{
    nm_count size = 1;
    const nm_dataspace *s = &wl->ds[ds];
    for (int r = 0; r < s->nranks; r++) {
        nm_count e = rank_extent(wl, s, r);
        if (e < NM_COUNT_LIMIT) /* parse keeps e - pad >= 1 */
            e = (nm_count)((signed_count)e - s->pad[r]);
        size = mul_count(size, e);
    }
    return size;
}

nm_count nm_workload_flops(const nm_workload *wl)
{
    nm_count per = (nm_count)(wl->flops_per_op ? wl->flops_per_op : 2);
    nm_count flops = mul_count(per, nm_workload_macs(wl));
    if (wl->bias)
        for (int ds = 0; ds < wl->nds; ds++)
            if (wl->ds[ds].read_write)
                flops += 2 * nm_workload_held_words(wl, ds);
    return flops;
}

int nm_workload_fits64(const nm_workload *wl)
{
    /* 2^60, not 2^64: an access count of a level is at most a few times the
     * MACs (an output read and updated per MAC, fills, address
     * generations), and must stay within 64 bits too. */
    const nm_count limit = (nm_count)1 << 60;
    if (nm_workload_macs(wl) > limit)
        return 0;
    for (int ds = 0; ds < wl->nds; ds++)
        if (nm_workload_words(wl, ds) > limit)
            return 0;
    return 1;
}

uint64_t nm_workload_ops(const nm_workload *wl)
{
    return (uint64_t)nm_workload_macs(wl);
}

uint64_t nm_workload_ds_size(const nm_workload *wl, int ds)
{
    return (uint64_t)nm_workload_words(wl, ds);
}

static nm_status copy_name(char *dst, const nm_ynode *n, const char *what, nm_error *err)
{
    const char *s;
    nm_status st = nm_yget_str(n, what, &s, err);
    if (st != NM_OK)
        return st;
    if (!*s)
        return nm_yerror(err, n, "%s must not be empty", what);
    if (strlen(s) >= NM_NAME_MAX)
        return nm_yerror(err, n, "%s is longer than %d characters", what, NM_NAME_MAX - 1);
    strcpy(dst, s);
    return NM_OK;
}

typedef struct coefs {
    int n;
    char name[NM_MAX_COEFS][NM_NAME_MAX];
    int64_t value[NM_MAX_COEFS];
} coefs;

static int coef_index(const coefs *c, const char *name)
{
    for (int i = 0; i < c->n; i++)
        if (!strcmp(c->name[i], name))
            return i;
    return -1;
}

static nm_status unknown_name(const nm_ynode *at, const char *kind, const char *name,
                              const char (*names)[NM_NAME_MAX], int n, nm_error *err)
{
    const char *cands[NM_MAX_DIMS + NM_MAX_COEFS] = {NULL};
    for (int i = 0; i < n; i++)
        cands[i] = names[i];
    const char *s = nm_text_suggest(name, cands, (size_t)n);
    if (s)
        return nm_yerror(err, at, "unknown %s '%s'; did you mean '%s'?", kind, name, s);
    if (n == 0)
        return nm_yerror(err, at, "unknown %s '%s' (none are declared)", kind, name);
    char list[256];
    nm_text_join(list, sizeof list, cands, (size_t)n);
    return nm_yerror(err, at, "unknown %s '%s' (known: %s)", kind, name, list);
}

/* One term: [dim] or [dim, coefficient] (coefficient by name or number). */
static nm_status parse_term(nm_workload *wl, const coefs *c, nm_axis *ax, const nm_ynode *t,
                            nm_error *err)
{
    const nm_ynode *dn = t, *cn = NULL;
    if (t->kind == NM_Y_SEQ) {
        if (t->n < 1 || t->n > 2)
            return nm_yerror(err, t, "a projection term is [dimension] or [dimension, coefficient]");
        dn = t->items[0];
        cn = t->n == 2 ? t->items[1] : NULL;
    }
    const char *dname;
    nm_status st = nm_yget_str(dn, "a projection term's dimension", &dname, err);
    if (st != NM_OK)
        return st;
    int d = nm_workload_dim(wl, dname);
    if (d < 0)
        return unknown_name(dn, "dimension", dname, wl->dim, wl->ndims, err);
    int64_t coef = 1;
    if (cn) {
        const char *cname;
        if ((st = nm_yget_str(cn, "a projection coefficient", &cname, err)) != NM_OK)
            return st;
        int ci = coef_index(c, cname);
        if (ci >= 0) {
            coef = c->value[ci];
        } else if (nm_yget_int(cn, "a projection coefficient", &coef, NULL) != NM_OK) {
            return unknown_name(cn, "coefficient", cname, c->name, c->n, err);
        }
        if (coef < 0)
            return nm_yerror(err, cn, "coefficient '%s' is negative (%lld); nestmap needs "
                             "non-negative projection coefficients", cname, (long long)coef);
    }
    if (ax->nterms >= NM_MAX_TERMS)
        return nm_yerror(err, t, "more than %d terms in one projection axis", NM_MAX_TERMS);
    ax->term[ax->nterms].dim = d;
    ax->term[ax->nterms].coef = coef;
    ax->nterms++;
    return NM_OK;
}

static nm_status parse_dataspace(nm_workload *wl, const coefs *c, const nm_ynode *n,
                                 nm_error *err)
{
    static const char *const keys[] = {"name", "projection", "read_write", NULL};
    nm_status st = nm_yexpect(n, NM_Y_MAP, "a data space", err);
    if (st != NM_OK || (st = nm_ycheck_keys(n, keys, "a data space", err)) != NM_OK)
        return st;
    if (wl->nds >= NM_MAX_DS)
        return nm_yerror(err, n, "more than %d data spaces", NM_MAX_DS);
    nm_dataspace *ds = &wl->ds[wl->nds];
    memset(ds, 0, sizeof *ds);
    const nm_ynode *name = nm_ymap_get(n, "name");
    if (!name)
        return nm_yerror(err, n, "data space has no 'name'");
    if ((st = copy_name(ds->name, name, "data space name", err)) != NM_OK)
        return st;
    if (nm_workload_ds(wl, ds->name) >= 0)
        return nm_yerror(err, name, "data space '%s' is declared twice", ds->name);
    const nm_ynode *rw = nm_ymap_get(n, "read_write");
    if (rw && (st = nm_yget_bool(rw, "read_write", &ds->read_write, err)) != NM_OK)
        return st;
    const nm_ynode *proj = nm_ymap_get(n, "projection");
    if (!proj)
        return nm_yerror(err, n, "data space '%s' has no 'projection'", ds->name);
    if ((st = nm_yexpect(proj, NM_Y_SEQ, "a projection", err)) != NM_OK)
        return st;
    if (proj->n > NM_MAX_RANKS)
        return nm_yerror(err, proj, "data space '%s' has more than %d axes", ds->name,
                         NM_MAX_RANKS);
    for (size_t r = 0; r < proj->n; r++) {
        const nm_ynode *axis = proj->items[r];
        nm_axis *ax = &ds->rank[ds->nranks++];
        if (axis->kind == NM_Y_SCALAR) { /* compact form: [C, M, R, S] */
            if ((st = parse_term(wl, c, ax, axis, err)) != NM_OK)
                return st;
            continue;
        }
        if ((st = nm_yexpect(axis, NM_Y_SEQ, "a projection axis", err)) != NM_OK)
            return st;
        if (axis->n == 0)
            return nm_yerror(err, axis, "empty projection axis in data space '%s'", ds->name);
        for (size_t t = 0; t < axis->n; t++)
            if ((st = parse_term(wl, c, ax, axis->items[t], err)) != NM_OK)
                return st;
    }
    wl->nds++;
    return NM_OK;
}

static nm_status parse_timeloop(nm_workload *wl, const nm_ynode *problem, nm_ydoc *doc,
                                nm_error *err)
{
    static const char *const pkeys[] = {"version", "shape", "instance", NULL};
    static const char *const skeys[] = {"name", "dimensions", "coefficients", "data_spaces",
                                        NULL};
    nm_status st = nm_ycheck_keys(problem, pkeys, "problem", err);
    if (st != NM_OK)
        return st;
    const nm_ynode *shape = nm_ymap_get(problem, "shape");
    if (!shape)
        return nm_yerror(err, problem,
                         "problem has no 'shape' (or use a shorthand: conv2d, depthwise, "
                         "grouped, gemm, einsum)");
    if ((st = nm_yexpect(shape, NM_Y_MAP, "problem shape", err)) != NM_OK ||
        (st = nm_ycheck_keys(shape, skeys, "problem shape", err)) != NM_OK)
        return st;
    const nm_ynode *name = nm_ymap_get(shape, "name");
    if (name && (st = copy_name(wl->name, name, "shape name", err)) != NM_OK)
        return st;

    const nm_ynode *dims = nm_ymap_get(shape, "dimensions");
    if (!dims)
        return nm_yerror(err, shape, "problem shape has no 'dimensions'");
    if ((st = nm_yexpect(dims, NM_Y_SEQ, "dimensions", err)) != NM_OK)
        return st;
    if (dims->n == 0 || dims->n > NM_MAX_DIMS)
        return nm_yerror(err, dims, "a problem needs 1 to %d dimensions (got %zu)", NM_MAX_DIMS,
                         dims->n);
    for (size_t i = 0; i < dims->n; i++) {
        if ((st = copy_name(wl->dim[wl->ndims], dims->items[i], "dimension name", err)) != NM_OK)
            return st;
        if (nm_workload_dim(wl, wl->dim[wl->ndims]) >= 0)
            return nm_yerror(err, dims->items[i], "dimension '%s' is listed twice",
                             wl->dim[wl->ndims]);
        wl->bound[wl->ndims] = 0;
        wl->ndims++;
    }

    coefs c;
    memset(&c, 0, sizeof c);
    const nm_ynode *cl = nm_ymap_get(shape, "coefficients");
    if (cl && !nm_yis_null(cl)) {
        if ((st = nm_yexpect(cl, NM_Y_SEQ, "coefficients", err)) != NM_OK)
            return st;
        for (size_t i = 0; i < cl->n; i++) {
            static const char *const ckeys[] = {"name", "default", NULL};
            const nm_ynode *ce = cl->items[i];
            if ((st = nm_yexpect(ce, NM_Y_MAP, "a coefficient", err)) != NM_OK ||
                (st = nm_ycheck_keys(ce, ckeys, "a coefficient", err)) != NM_OK)
                return st;
            if (c.n >= NM_MAX_COEFS)
                return nm_yerror(err, ce, "more than %d coefficients", NM_MAX_COEFS);
            const nm_ynode *cn = nm_ymap_get(ce, "name");
            if (!cn)
                return nm_yerror(err, ce, "coefficient has no 'name'");
            if ((st = copy_name(c.name[c.n], cn, "coefficient name", err)) != NM_OK)
                return st;
            if (nm_workload_dim(wl, c.name[c.n]) >= 0 || coef_index(&c, c.name[c.n]) >= 0)
                return nm_yerror(err, cn, "coefficient '%s' clashes with another name",
                                 c.name[c.n]);
            c.value[c.n] = 1;
            const nm_ynode *dv = nm_ymap_get(ce, "default");
            if (dv && (st = nm_yget_int(dv, "coefficient default", &c.value[c.n], err)) != NM_OK)
                return st;
            c.n++;
        }
    }

    /* Instance: bounds for dimensions, values for coefficients. */
    const nm_ynode *inst = nm_ymap_get(problem, "instance");
    if (!inst)
        return nm_yerror(err, problem, "problem has no 'instance' giving the dimension sizes");
    if ((st = nm_yexpect(inst, NM_Y_MAP, "problem instance", err)) != NM_OK)
        return st;
    const nm_ynode *dens = NULL;
    for (size_t i = 0; i < inst->n; i++) {
        const nm_ynode *k = nm_ymap_key(inst, i), *v = nm_ymap_val(inst, i);
        int d = nm_workload_dim(wl, k->str);
        int ci = coef_index(&c, k->str);
        if (d >= 0) {
            if ((st = nm_yget_pos(v, "a dimension size", &wl->bound[d], err)) != NM_OK)
                return st;
        } else if (ci >= 0) {
            if ((st = nm_yget_int(v, "a coefficient value", &c.value[ci], err)) != NM_OK)
                return st;
        } else if (!strcmp(k->str, "densities")) {
            dens = v;
        } else {
            /* Timeloop's front end leaves derived keys (H, W, Hpad, ...) here;
             * Timeloop ignores them.  Say so rather than ignore silently, and
             * catch a misspelled dimension. */
            const char *cands[NM_MAX_DIMS + NM_MAX_COEFS];
            int nc = 0;
            for (int j = 0; j < wl->ndims; j++)
                cands[nc++] = wl->dim[j];
            for (int j = 0; j < c.n; j++)
                cands[nc++] = c.name[j];
            const char *s = nm_text_suggest(k->str, cands, (size_t)nc);
            /* The public layer_shapes files write HStride for Hstride:
             * Timeloop runs them with the stride at its default, and so does
             * nestmap, aloud.  Other near misses are errors. */
            if (s && strlen(k->str) > 2 && !strcasecmp(s, k->str)) {
                if (nm_ydoc_warn(doc, k, "instance key '%s' is not '%s' (names are "
                                 "case-sensitive); ignored, as Timeloop ignores it, so '%s' "
                                 "keeps its default", k->str, s, s) != NM_OK)
                    return nm_error_set(err, NM_ERR_NOMEM, NULL, 0, 0, "out of memory");
                continue;
            }
            if (s && strlen(k->str) > 2)
                return nm_yerror(err, k, "instance key '%s' is not a dimension or "
                                 "coefficient; did you mean '%s'?", k->str, s);
            if (nm_ydoc_warn(doc, k, "instance key '%s' is neither a dimension nor a "
                             "coefficient of the shape%s%s%s; ignored", k->str,
                             wl->name[0] ? " '" : "", wl->name, wl->name[0] ? "'" : "") != NM_OK)
                return nm_error_set(err, NM_ERR_NOMEM, NULL, 0, 0, "out of memory");
        }
    }
    for (int d = 0; d < wl->ndims; d++)
        if (wl->bound[d] == 0)
            return nm_yerror(err, inst, "instance gives no size for dimension '%s'", wl->dim[d]);

    const nm_ynode *dsl = nm_ymap_get(shape, "data_spaces");
    if (!dsl)
        return nm_yerror(err, shape, "problem shape has no 'data_spaces'");
    if ((st = nm_yexpect(dsl, NM_Y_SEQ, "data_spaces", err)) != NM_OK)
        return st;
    if (dsl->n == 0)
        return nm_yerror(err, dsl, "a problem needs at least one data space");
    for (size_t i = 0; i < dsl->n; i++)
        if ((st = parse_dataspace(wl, &c, dsl->items[i], err)) != NM_OK)
            return st;
    if ((st = nm_sparse_parse_densities(wl->density, wl, dens, err)) != NM_OK)
        return st;
    for (int i = 0; i < wl->nds; i++)
        wl->has_density |= wl->density[i].given;
    return NM_OK;
}

nm_status nm_workload_parse(nm_workload *wl, const nm_ynode *problem, nm_ydoc *doc,
                            nm_error *err)
{
    memset(wl, 0, sizeof *wl);
    nm_status st = nm_sparse_parse_densities(wl->density, wl, NULL, err); /* dense */
    if (st == NM_OK)
        st = nm_yexpect(problem, NM_Y_MAP, "problem", err);
    if (st != NM_OK)
        return st;
    int handled = 0;
    st = nm_workload_shorthand(wl, problem, &handled, err);
    if (handled && st == NM_OK) { /* a shorthand's densities sit beside it */
        if ((st = nm_sparse_parse_densities(wl->density, wl, nm_ymap_get(problem, "densities"),
                                            err)) != NM_OK)
            return st;
        for (int i = 0; i < wl->nds; i++)
            wl->has_density |= wl->density[i].given;
    }
    if (!handled) {
        if ((st = parse_timeloop(wl, problem, doc, err)) != NM_OK)
            return st;
        if (!wl->name[0])
            strcpy(wl->name, "problem");
    }
    if (st != NM_OK)
        return st;
    /* Every count exact, or refused: 128 bits hold them up to ~1e36. */
    if (nm_workload_macs(wl) >= NM_COUNT_LIMIT)
        return nm_yerror(err, problem, "the problem has more than 2^120 (about 1.3e36) "
                         "multiply-accumulates: nestmap cannot count them exactly");
    if (nm_workload_flops(wl) >= NM_COUNT_LIMIT)
        return nm_yerror(err, problem, "the problem has more than 2^120 (about 1.3e36) "
                         "operations: nestmap cannot count them exactly");
    for (int ds = 0; ds < wl->nds; ds++)
        if (nm_workload_words(wl, ds) >= NM_COUNT_LIMIT)
            return nm_yerror(err, problem, "data space '%s' has more than 2^120 elements: "
                             "nestmap cannot count them exactly", wl->ds[ds].name);
    return NM_OK;
}
