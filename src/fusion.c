/* fusion.c — chains of operations and their fused mappings; see fusion.h. */
#include <config.h>

#include <stdio.h>
#include <string.h>

#include "nestmap/alloc.h"
#include "nestmap/estimate.h"
#include "nestmap/fusion.h"
#include "nestmap/text.h"

/* ---- the chain ---- */

int nm_chain_given(const nm_ynode *problem)
{
    return problem && problem->kind == NM_Y_MAP && nm_ymap_get(problem, "chain") != NULL;
}

int nm_chain_op_index(const nm_chain *c, const char *name)
{
    for (int i = 0; i < c->nops; i++)
        if (!strcmp(c->op[i].name, name))
            return i;
    return -1;
}

int64_t nm_axis_extent(const nm_workload *wl, const nm_axis *ax)
{
    int64_t e = 1;
    for (int t = 0; t < ax->nterms; t++)
        e += ax->term[t].coef * (wl->bound[ax->term[t].dim] - 1);
    return e;
}

/* Where an operation's errors point: its einsum, else its entry. */
static const nm_ynode *op_node(const nm_chain_op *op)
{
    const nm_ynode *ex = nm_ymap_get(op->node, "einsum");
    return ex ? ex : op->node;
}

static const nm_ynode *dims_node(const nm_chain_op *op)
{
    const nm_ynode *d = nm_ymap_get(op->node, "dims");
    return d ? d : op_node(op);
}

/* Timeloop's convolution dimensions, which a design's constraints name:
 * size-1 stand-ins for an operation that lacks them (so "C=1" holds, and
 * a permutation "MPQN" skips them). */
static const char *const conv_dims[] = {"N", "C", "M", "K", "P", "Q", "R", "S", "G"};
static const char *const roles[] = {"Inputs", "Weights", "Outputs"};

/* Appends name to a stand-in list of n names; 0 when it is full. */
static int add_standin(char (*list)[NM_NAME_MAX], int *n, const char *name)
{
    if (*n >= NM_MAX_STANDINS)
        return 0;
    snprintf(list[(*n)++], NM_NAME_MAX, "%s", name);
    return 1;
}

/* Gives every operation the others' indices as stand-ins and the others'
 * tensors as absent ones, and likewise the convolution dimensions and the
 * roles it lacks.  Returns the operation whose lists would overflow, or
 * -1. */
static int stand_ins(nm_chain *c)
{
    for (int i = 0; i < c->nops; i++) {
        nm_workload *wl = &c->op[i].wl;
        int ok = 1;
        for (size_t k = 0; k < sizeof roles / sizeof *roles; k++)
            if (nm_workload_ds(wl, roles[k]) < 0)
                ok &= add_standin(wl->absent, &wl->nabsent, roles[k]);
        for (int j = 0; j < c->nops; j++) {
            const nm_workload *o = &c->op[j].wl;
            for (int d = 0; d < o->ndims; d++)
                if (nm_workload_dim(wl, o->dim[d]) < 0 && !nm_workload_unit_dim(wl, o->dim[d]))
                    ok &= add_standin(wl->unit, &wl->nunit, o->dim[d]);
            for (int k = 0; k < o->nds; k++)
                if (nm_workload_ds(wl, o->ds[k].name) < 0 &&
                    !nm_workload_absent_ds(wl, o->ds[k].name))
                    ok &= add_standin(wl->absent, &wl->nabsent, o->ds[k].name);
        }
        for (size_t k = 0; k < sizeof conv_dims / sizeof *conv_dims; k++)
            if (nm_workload_dim(wl, conv_dims[k]) < 0 && !nm_workload_unit_dim(wl, conv_dims[k]))
                ok &= add_standin(wl->unit, &wl->nunit, conv_dims[k]);
        if (!ok)
            return i;
    }
    return -1;
}

/* Each data space's role: as `roles:` gives them, else the output is
 * Outputs, the first input Inputs and the second Weights. */
static nm_status set_roles(nm_chain_op *op, const nm_ynode *given, nm_error *err)
{
    nm_workload *wl = &op->wl;
    if (given) {
        nm_status st = nm_yexpect(given, NM_Y_MAP, "roles (role: tensor)", err);
        if (st != NM_OK)
            return st;
        for (size_t k = 0; k < given->n; k++) {
            const nm_ynode *key = nm_ymap_key(given, k);
            const char *t;
            if ((st = nm_yget_str(nm_ymap_val(given, k), "a tensor name", &t, err)) != NM_OK)
                return st;
            int ds = -1;
            for (int d = 0; d < wl->nds; d++)
                if (!strcmp(wl->ds[d].name, t))
                    ds = d;
            if (ds < 0)
                return nm_yerror(err, nm_ymap_val(given, k), "'%s' is not a tensor of '%s'", t,
                                 op->name);
            if (nm_workload_dim(wl, key->str) >= 0 || nm_workload_ds(wl, key->str) >= 0)
                return nm_yerror(err, key, "role '%s' is a name of '%s' already", key->str,
                                 op->name);
            snprintf(wl->ds[ds].role, NM_NAME_MAX, "%s", key->str);
        }
        return NM_OK;
    }
    int in = 0;
    for (int d = 0; d < wl->nds; d++) {
        const char *r = d == op->out ? "Outputs" : in == 0 ? "Inputs" : in == 1 ? "Weights" : "";
        in += d != op->out;
        if (nm_workload_ds(wl, r) < 0) /* (a tensor called so keeps its name) */
            snprintf(wl->ds[d].role, NM_NAME_MAX, "%s", r);
    }
    return NM_OK;
}

/* `dims: {C: e, M: n}`: other names of the operation's indices (the
 * convolution dimensions a design's constraints name), so that those
 * constraints bind them rather than size-1 stand-ins. */
static nm_status set_dims(nm_chain_op *op, const nm_ynode *given, nm_error *err)
{
    nm_workload *wl = &op->wl;
    if (!given)
        return NM_OK;
    nm_status st = nm_yexpect(given, NM_Y_MAP, "dims (another name: an index)", err);
    if (st != NM_OK)
        return st;
    for (size_t k = 0; k < given->n; k++) {
        const nm_ynode *key = nm_ymap_key(given, k);
        const char *ix;
        if ((st = nm_yget_str(nm_ymap_val(given, k), "an index", &ix, err)) != NM_OK)
            return st;
        int d = -1;
        for (int i = 0; i < wl->ndims; i++)
            if (!strcmp(wl->dim[i], ix))
                d = i;
        if (d < 0)
            return nm_yerror(err, nm_ymap_val(given, k), "'%s' is not an index of '%s'", ix,
                             op->name);
        if (nm_workload_dim(wl, key->str) >= 0 || nm_workload_ds(wl, key->str) >= 0)
            return nm_yerror(err, key, "'%s' is a name of '%s' already", key->str, op->name);
        if (wl->nalias >= NM_MAX_DIMS)
            return nm_yerror(err, key, "more than %d other names of indices", NM_MAX_DIMS);
        snprintf(wl->alias[wl->nalias], NM_NAME_MAX, "%s", key->str);
        wl->alias_of[wl->nalias++] = (int8_t)d;
    }
    return NM_OK;
}

/* `causal: [m, n]`: row m sees the keys n up to its own position, the
 * last row all of them (fusion.h). */
static nm_status set_causal(nm_chain_op *op, const nm_ynode *given, nm_error *err)
{
    const nm_workload *wl = &op->wl;
    if (!given)
        return NM_OK;
    nm_status st = nm_yexpect(given, NM_Y_SEQ, "causal ([rows, keys]: two indices)", err);
    if (st != NM_OK)
        return st;
    if (given->n != 2)
        return nm_yerror(err, given, "causal takes two indices, [rows, keys]: a row sees the "
                         "keys up to its own position (%zu given)", given->n);
    int d[2];
    for (int k = 0; k < 2; k++) {
        const char *ix;
        if ((st = nm_yget_str(given->items[k], "an index", &ix, err)) != NM_OK)
            return st;
        d[k] = nm_workload_dim(wl, ix);
        if (d[k] < 0 || d[k] >= wl->ndims)
            return nm_yerror(err, given->items[k], "'%s' is not an index of '%s'", ix,
                             op->name);
    }
    if (d[0] == d[1])
        return nm_yerror(err, given, "causal masks the keys a row sees: two indices, [rows, "
                         "keys]");
    if (wl->bound[d[1]] < wl->bound[d[0]])
        return nm_yerror(err, given, "causal needs at least as many keys '%s' (%lld) as rows "
                         "'%s' (%lld): a row sees the keys up to its own position, the last "
                         "row all of them", wl->dim[d[1]], (long long)wl->bound[d[1]],
                         wl->dim[d[0]], (long long)wl->bound[d[0]]);
    op->masked = 1;
    op->mask_m = d[0];
    op->mask_n = d[1];
    op->mask_offset = wl->bound[d[1]] - wl->bound[d[0]];
    return NM_OK;
}

/* `online: n` on an exponential: FlashAttention's online softmax, its
 * exponentials against a running max over n (fusion_online.c). */
static nm_status set_online(nm_chain_op *op, const nm_ynode *given, nm_error *err)
{
    if (!given)
        return NM_OK;
    const char *ix;
    nm_status st = nm_yget_str(given, "online (the index the running max runs over)", &ix, err);
    if (st != NM_OK)
        return st;
    if (op->kind != NM_OP_EXP)
        return nm_yerror(err, given, "online: the running max of FlashAttention's online "
                         "softmax belongs to its exponentials: '%s' is '%s', not 'op: exp'",
                         op->name, op->kind_name);
    const nm_workload *wl = &op->wl;
    int d = nm_workload_dim(wl, ix);
    const nm_dataspace *o = &wl->ds[op->out];
    if (d >= wl->ndims || !nm_dataspace_uses(o, d))
        return nm_yerror(err, given, "online: '%s' is not an index of '%s''s output '%s' (the "
                         "running max runs over the keys its exponentials are taken along)", ix,
                         op->name, o->name);
    if (op->masked && op->mask_n != d)
        return nm_yerror(err, given, "online: a running max over '%s' while the causal mask's "
                         "keys are '%s': the two must be the same keys", ix,
                         wl->dim[op->mask_n]);
    op->online = 1;
    op->online_dim = d;
    return NM_OK;
}

/* The kinds an operation's `op:` may name, with the words the lectures
 * use for them. */
static const struct {
    const char *name;
    nm_op_kind kind;
} op_kinds[] = {
    {"mac", NM_OP_MAC},   {"add", NM_OP_ADD},     {"sum", NM_OP_ADD},
    {"sub", NM_OP_ADD},   {"bias", NM_OP_ADD},    {"residual", NM_OP_ADD},
    {"mul", NM_OP_MUL},   {"scale", NM_OP_MUL},   {"max", NM_OP_MAX},
    {"min", NM_OP_MAX},   {"relu", NM_OP_MAX},    {"max_pool", NM_OP_MAX},
    {"exp", NM_OP_EXP},   {"div", NM_OP_DIV},     {"copy", NM_OP_COPY},
};
#define NOP_KINDS (sizeof op_kinds / sizeof *op_kinds)

static nm_status parse_kind(nm_chain_op *op, const nm_ynode *n, nm_error *err)
{
    op->kind = NM_OP_MAC;
    snprintf(op->kind_name, NM_NAME_MAX, "mac");
    if (!n)
        return NM_OK;
    const char *s;
    nm_status st = nm_yget_str(n, "op", &s, err);
    if (st != NM_OK)
        return st;
    const char *names[NOP_KINDS];
    for (size_t k = 0; k < NOP_KINDS; k++) {
        names[k] = op_kinds[k].name;
        if (!strcmp(s, op_kinds[k].name)) {
            op->kind = op_kinds[k].kind;
            snprintf(op->kind_name, NM_NAME_MAX, "%s", s);
            return NM_OK;
        }
    }
    if (!strcmp(s, "softmax"))
        return nm_yerror(err, n, "softmax is several operations: write its parts, each an "
                         "operation of the chain (a row max 'max', 'exp' of the difference, a "
                         "row 'sum', then 'div')");
    const char *near = nm_text_suggest(s, names, NOP_KINDS);
    return nm_yerror(err, n, "unknown operation '%s'%s%s%s (an operation is one of mac, add, "
                     "sum, sub, bias, residual, mul, scale, max, min, relu, max_pool, exp, div, "
                     "copy)", s, near ? "; did you mean '" : "", near ? near : "",
                     near ? "'?" : "");
}

nm_status nm_chain_parse(nm_chain *c, const nm_ynode *problem, nm_error *err)
{
    static const char *const keys[] = {"chain", "bounds", "name", NULL};
    static const char *const op_keys[] = {"name", "einsum", "roles", "op", "dims", "causal",
                                          "online", NULL};
    memset(c, 0, sizeof *c);
    snprintf(c->name, NM_NAME_MAX, "chain");
    nm_status st = nm_ycheck_keys(problem, keys, "a chain problem", err);
    if (st != NM_OK)
        return st;
    const nm_ynode *name = nm_ymap_get(problem, "name"), *list = nm_ymap_get(problem, "chain");
    const nm_ynode *bounds = nm_ymap_get(problem, "bounds");
    if (name && name->kind == NM_Y_SCALAR)
        snprintf(c->name, NM_NAME_MAX, "%s", name->str);
    if ((st = nm_yexpect(list, NM_Y_SEQ, "chain (a list of operations)", err)) != NM_OK)
        return st;
    if (list->n == 0)
        return nm_yerror(err, list, "a chain needs at least one operation");
    if (list->n > NM_MAX_OPS)
        return nm_yerror(err, list, "a chain of %zu operations: nestmap takes up to %d",
                         list->n, NM_MAX_OPS);
    if (!bounds)
        return nm_yerror(err, problem, "a chain needs 'bounds' giving each index's size");
    if ((st = nm_yexpect(bounds, NM_Y_MAP, "bounds", err)) != NM_OK)
        return st;
    c->nops = (int)list->n;
    for (int i = 0; i < c->nops; i++) {
        const nm_ynode *e = list->items[i];
        nm_chain_op *op = &c->op[i];
        op->node = e;
        if ((st = nm_yexpect(e, NM_Y_MAP, "an operation ({name, einsum})", err)) != NM_OK ||
            (st = nm_ycheck_keys(e, op_keys, "an operation", err)) != NM_OK)
            return st;
        const nm_ynode *ex = nm_ymap_get(e, "einsum"), *nm = nm_ymap_get(e, "name");
        if (!ex)
            return nm_yerror(err, e, "an operation needs an 'einsum' (\"Z[m,n] = A[m,k] * "
                             "B[k,n]\")");
        if ((st = nm_sparse_parse_densities(op->wl.density, &op->wl, NULL, err)) != NM_OK ||
            (st = nm_workload_einsum(&op->wl, ex, bounds, 1, err)) != NM_OK)
            return st;
        if (nm) {
            const char *s;
            if ((st = nm_yget_str(nm, "name", &s, err)) != NM_OK)
                return st;
            snprintf(op->name, NM_NAME_MAX, "%s", s);
        } else {
            snprintf(op->name, NM_NAME_MAX, "op%d", i + 1);
        }
        if (nm_chain_op_index(c, op->name) != i)
            return nm_yerror(err, nm ? nm : e, "a second operation called '%s'", op->name);
        snprintf(op->wl.name, NM_NAME_MAX, "%s", op->name);
        if (nm_workload_macs(&op->wl) >= NM_COUNT_LIMIT || !nm_workload_fits64(&op->wl))
            return nm_yerror(err, ex, "operation '%s' is too large for the model's 64-bit "
                             "counts", op->name);
        op->out = 0; /* the einsum's left-hand side */
        op->recompute = 1.0;
        const nm_dataspace *o = &op->wl.ds[op->out];
        for (int r = 0; r < o->nranks; r++)
            if (o->rank[r].nterms != 1 || o->rank[r].term[0].coef != 1)
                return nm_yerror(err, ex, "the output of '%s' is indexed by a sum or a multiple "
                                 "of indices (axis %d of '%s'): in a chain an output takes one "
                                 "index per axis", op->name, r + 1, o->name);
        if ((st = set_roles(op, nm_ymap_get(e, "roles"), err)) != NM_OK ||
            (st = parse_kind(op, nm_ymap_get(e, "op"), err)) != NM_OK ||
            (st = set_dims(op, nm_ymap_get(e, "dims"), err)) != NM_OK ||
            (st = set_causal(op, nm_ymap_get(e, "causal"), err)) != NM_OK ||
            (st = set_online(op, nm_ymap_get(e, "online"), err)) != NM_OK)
            return st;
    }
    /* The bounds name indices of the chain only. */
    for (size_t b = 0; b < bounds->n; b++) {
        const nm_ynode *k = nm_ymap_key(bounds, b);
        int used = 0;
        for (int i = 0; i < c->nops && !used; i++)
            used = nm_workload_dim(&c->op[i].wl, k->str) >= 0;
        if (!used)
            return nm_yerror(err, k, "'%s' is not an index of any operation of the chain",
                             k->str);
    }
    return nm_chain_link(c, err);
}

static int uses_dim_axis(const nm_axis *ax, int d)
{
    for (int k = 0; k < ax->nterms; k++)
        if (ax->term[k].dim == d)
            return 1;
    return 0;
}

nm_status nm_chain_link(nm_chain *c, nm_error *err)
{
    /* Each input: written by an earlier operation, or from outside. */
    for (int i = 0; i < c->nops; i++) {
        nm_chain_op *op = &c->op[i];
        const nm_ynode *ex = op_node(op);
        for (int ds = 0; ds < op->wl.nds; ds++) {
            op->producer[ds] = -1;
            const char *tn = op->wl.ds[ds].name;
            for (int j = 0; j < i; j++) {
                if (strcmp(c->op[j].wl.ds[c->op[j].out].name, tn))
                    continue;
                if (ds == op->out)
                    return nm_yerror(err, ex, "operations '%s' and '%s' both write '%s'",
                                     c->op[j].name, op->name, tn);
                op->producer[ds] = j;
            }
        }
    }
    /* An operation's other names for its indices are not another's
     * indices (a shared loop over that index would bind it). */
    for (int i = 0; i < c->nops; i++)
        for (int a = 0; a < c->op[i].wl.nalias; a++)
            for (int j = 0; j < c->nops; j++)
                for (int d = 0; d < c->op[j].wl.ndims; d++)
                    if (!strcmp(c->op[j].wl.dim[d], c->op[i].wl.alias[a]))
                        return nm_yerror(err, dims_node(&c->op[i]), "'%s' names "
                                         "an index of '%s' of the chain, not another name for "
                                         "one of '%s'", c->op[i].wl.alias[a], c->op[j].name,
                                         c->op[i].name);
    /* A tensor read before it is written, and intermediates whose shapes
     * differ between producer and consumer. */
    for (int i = 0; i < c->nops; i++) {
        nm_chain_op *op = &c->op[i];
        const nm_ynode *ex = op_node(op);
        for (int ds = 0; ds < op->wl.nds; ds++) {
            if (ds == op->out)
                continue;
            for (int j = i + 1; j < c->nops; j++)
                if (!strcmp(c->op[j].wl.ds[c->op[j].out].name, op->wl.ds[ds].name))
                    return nm_yerror(err, ex, "'%s' reads '%s' before '%s' writes it (operations "
                                     "run in the chain's order)", op->name, op->wl.ds[ds].name,
                                     c->op[j].name);
            int p = op->producer[ds];
            if (p < 0)
                continue;
            const nm_workload *pw = &c->op[p].wl;
            const nm_dataspace *a = &pw->ds[c->op[p].out], *b = &op->wl.ds[ds];
            if (a->nranks != b->nranks)
                return nm_yerror(err, ex, "'%s' has %d axes in '%s' but %d in '%s'", a->name,
                                 a->nranks, c->op[p].name, b->nranks, op->name);
            for (int r = 0; r < a->nranks; r++) {
                /* (a retained halo's producer writes its head's rows besides) */
                int64_t ea = nm_axis_extent(pw, &a->rank[r]) +
                             (c->op[p].head && uses_dim_axis(&a->rank[r], c->op[p].head_dim)
                                  ? c->op[p].head : 0);
                int64_t eb = nm_axis_extent(&op->wl, &b->rank[r]);
                if (ea != eb)
                    return nm_yerror(err, ex, "axis %d of '%s' spans %lld in '%s' (which writes "
                                     "it) but %lld in '%s'", r + 1, a->name, (long long)ea,
                                     c->op[p].name, (long long)eb, op->name);
            }
        }
    }
    int full = stand_ins(c);
    if (full >= 0)
        return nm_yerror(err, op_node(&c->op[full]), "operation '%s' lacks more than %d of the "
                         "chain's other indices and tensors (and the convolution dimensions "
                         "and roles a design may name): split the chain", c->op[full].name,
                         NM_MAX_STANDINS);
    return nm_chain_online_link(c, err);
}

/* ---- the fused mapping ---- */

/* Whether data space ds of operation i is an intermediate of the group g
 * (written and read inside it). */
static int inside(const nm_chain *c, const nm_fused_group *g, int i, int ds)
{
    const nm_chain_op *op = &c->op[i];
    if (ds != op->out)
        return op->producer[ds] >= g->first;
    for (int j = i + 1; j < g->first + g->nops; j++)
        for (int k = 0; k < c->op[j].wl.nds; k++)
            if (c->op[j].producer[k] == i)
                return 1;
    return 0;
}

uint32_t nm_fused_onchip(const nm_chain *c, int first, int nops, int i)
{
    nm_fused_group g = {.first = first, .nops = nops};
    uint32_t mask = 0;
    for (int ds = 0; ds < c->op[i].wl.nds; ds++)
        if (inside(c, &g, i, ds))
            mask |= 1u << ds;
    return mask;
}

int nm_fused_halo(const nm_workload *wl, int ds, int d)
{
    const nm_dataspace *s = &wl->ds[ds];
    for (int r = 0; r < s->nranks; r++) {
        int64_t cd = 0, other = 1;
        for (int t = 0; t < s->rank[r].nterms; t++) {
            const nm_term *tm = &s->rank[r].term[t];
            if (tm->dim == d)
                cd += tm->coef;
            else
                other += tm->coef * (wl->bound[tm->dim] - 1);
        }
        if (cd && other > cd)
            return 1;
    }
    return 0;
}

/* Why group g may not share a loop over index: 0 it may; 1 operation *op
 * lacks it; 2 *op reduces it and its output stays in the group; 3 the
 * intermediate *ds of *op would overlap from step to step along it
 * (nm_fused_halo); 4 the intermediate *ds of *op (a consumer) is indexed by
 * it on another axis, or with another coefficient, than its producer writes
 * it (each step would read another slice than the one written); 5 *op
 * sums an online exponential's output *ds over it (the keys) in another
 * group than the exponential's: its partial sums, written against running
 * maxes it never sees, could not be rescaled. */
static int share_problem(const nm_chain *c, const nm_fused_group *g, const char *index, int *op,
                         int *ds)
{
    for (int i = g->first; i < g->first + g->nops; i++) {
        const nm_workload *wl = &c->op[i].wl;
        int d = nm_workload_dim(wl, index);
        *op = i;
        *ds = -1;
        if (d < 0)
            return 1;
        if (inside(c, g, i, c->op[i].out) && !nm_dataspace_uses(&wl->ds[c->op[i].out], d))
            return 2;
        for (int k = 0; k < wl->nds; k++) {
            if (!inside(c, g, i, k))
                continue;
            *ds = k;
            if (nm_fused_halo(wl, k, d) && !(c->op[i].retained && d == c->op[i].head_step))
                return 3; /* (a retained halo's steps slide its windows) */
            int p = c->op[i].producer[k];
            if (k == c->op[i].out || p < 0)
                continue;
            const nm_workload *pw = &c->op[p].wl;
            int pd = nm_workload_dim(pw, index);
            const nm_dataspace *x = &wl->ds[k], *y = &pw->ds[c->op[p].out];
            for (int r = 0; r < x->nranks; r++) {
                int64_t cx = 0, cy = 0;
                for (int t = 0; t < x->rank[r].nterms; t++)
                    cx += x->rank[r].term[t].dim == d ? x->rank[r].term[t].coef : 0;
                for (int t = 0; t < y->rank[r].nterms; t++)
                    cy += y->rank[r].term[t].dim == pd ? y->rank[r].term[t].coef : 0;
                if (cx != cy)
                    return 4;
            }
        }
        for (int j = g->first + g->nops; c->op[i].online && c->op[i].online_dim == d &&
                                         j < c->nops; j++)
            if (nm_chain_rescales(c, j, ds) == i) {
                *op = j;
                return 5;
            }
    }
    return 0;
}

int nm_fused_leaks(const nm_chain *c, int first, int nops)
{
    int end = first + nops;
    for (int i = first; i < end; i++) {
        int in = 0, out = 0;
        for (int j = i + 1; j < c->nops; j++)
            for (int k = 0; k < c->op[j].wl.nds; k++)
                if (c->op[j].producer[k] == i) {
                    in |= j < end;
                    out |= j >= end;
                }
        if (in && out)
            return i;
    }
    return -1;
}

int nm_fused_can_share(const nm_chain *c, int first, int nops, const char *index)
{
    nm_fused_group g = {.first = first, .nops = nops};
    int op, ds;
    return share_problem(c, &g, index, &op, &ds) == 0;
}

int nm_fused_shareable(const nm_chain *c, int first, int nops, char names[][NM_NAME_MAX],
                       int64_t *bound, int max)
{
    int n = 0;
    const nm_workload *w0 = &c->op[first].wl;
    for (int d = 0; d < w0->ndims && n < max; d++)
        if (nm_fused_can_share(c, first, nops, w0->dim[d])) {
            snprintf(names[n], NM_NAME_MAX, "%s", w0->dim[d]);
            bound[n++] = w0->bound[d];
        }
    return n;
}

void nm_fused_canonical(const nm_arch *arch, const nm_chain *c, int i, const nm_fused_group *g,
                        char names[][NM_NAME_MAX], int nsh, const int64_t *f,
                        const int8_t *order, uint32_t onchip, nm_mapping *m)
{
    const nm_workload *wl = &c->op[i].wl;
    int S = arch->nlevels;
    nm_mapping_init(m, arch, wl);
    nm_level_map *top = &m->level[S - 1], *fl = &m->level[g->level];
    int k = 0;
    uint32_t placed = 0;
    for (int j = 0; j < nsh; j++) {
        int s = order[j];
        int d = nm_workload_dim(wl, names[s]);
        top->tfactor[d] = f[s];
        top->torder[k++] = (int8_t)d;
        placed |= 1u << d;
    }
    for (int d = 0; d < wl->ndims; d++)
        if (!(placed & (1u << d)))
            top->torder[k++] = (int8_t)d;
    for (int d = 0; d < wl->ndims; d++) {
        fl->tfactor[d] = wl->bound[d] / top->tfactor[d];
        fl->torder[d] = (int8_t)d;
    }
    for (int s = g->level + 1; s < S; s++)
        m->level[s].keep &= ~onchip;
    for (int s = 0; s < g->level; s++) /* (small buffers below need not fit it) */
        m->level[s].keep = 0;
}

/* Whether the group's rows along the last operation's index could be
 * stepped through with recomputed halos (nm_chain_recompute accepts it). */
static int recomputable(const nm_chain *c, const nm_fused_group *g, const char *index)
{
    nm_chain *copy = nm_calloc(1, sizeof *copy);
    if (!copy)
        return 0;
    *copy = *c;
    char step[NM_NAME_MAX], why[NM_ERROR_MSG_MAX];
    int ok = g->nsplit == 0 &&
             nm_chain_recompute(copy, g->first, g->nops, index, 1, step, why, sizeof why) == NM_OK;
    nm_free(copy);
    return ok;
}

/* Checks one shared entry: above the fusion level, loops over indices
 * every operation has and no producer reduces, keeping no intermediate. */
static nm_status check_shared(const nm_ynode *e, const nm_arch *arch, const nm_chain *c,
                              const nm_fused_group *g, nm_error *err)
{
    nm_status st = nm_yexpect(e, NM_Y_MAP, "a mapping entry", err);
    if (st != NM_OK)
        return st;
    const nm_ynode *tn = nm_ymap_get(e, "target"), *ty = nm_ymap_get(e, "type");
    if (!tn || !ty || tn->kind != NM_Y_SCALAR || ty->kind != NM_Y_SCALAR)
        return NM_OK; /* (the mapping parser says what is missing) */
    int l = nm_arch_target(arch, tn->str, !strcmp(ty->str, "spatial"));
    if (l >= 0 && l <= g->level)
        return nm_yerror(err, tn, "shared loops sit above the fusion level '%s'; '%s' is not "
                         "above it: give its entries in each operation's mapping",
                         arch->level[g->level].name, tn->str);
    const nm_ynode *f = nm_ymap_get(e, "factors");
    if (f) {
        /* the terms on any index of the group's operations */
        nm_workload u;
        memset(&u, 0, sizeof u);
        for (int i = g->first; i < g->first + g->nops; i++)
            for (int d = 0; d < c->op[i].wl.ndims; d++)
                if (nm_workload_dim(&u, c->op[i].wl.dim[d]) < 0 && u.ndims < NM_MAX_DIMS) {
                    snprintf(u.dim[u.ndims], NM_NAME_MAX, "%s", c->op[i].wl.dim[d]);
                    u.bound[u.ndims++] = c->op[i].wl.bound[d];
                }
        nm_factor_term t[NM_MAX_FACTOR_TERMS];
        int n;
        if ((st = nm_mapping_parse_factor_terms(f, &u, 0, t, &n, err)) != NM_OK)
            return st;
        for (int k = 0; k < n; k++) {
            if (t[k].value <= 1 && !t[k].residual)
                continue;
            const char *dn = u.dim[t[k].dim];
            int i, ds;
            int why = share_problem(c, g, dn, &i, &ds);
            int split = why == 1 && recomputable(c, g, dn);
            switch (why) {
            case 1:
                return nm_yerror_at(err, t[k].at, t[k].offset, "a shared loop over '%s': "
                                    "operation '%s' has no index '%s' (shared loops run over "
                                    "indices every operation of the group has%s%s%s)", dn,
                                    c->op[i].name, dn, split ? "; to step through the rows of '"
                                                             : "",
                                    split ? c->op[g->first + g->nops - 1].name : "",
                                    split ? "', each operation computing the rows the next one's "
                                            "windows read, write 'recompute: {INDEX: STEPS}' on "
                                            "the group, or 'retain:' to keep the rows two steps "
                                            "read"
                                          : "");
            case 2:
                return nm_yerror_at(err, t[k].at, t[k].offset, "a shared loop over '%s': '%s' "
                                    "reduces over '%s', so each step would hand on a partial "
                                    "'%s'", dn, c->op[i].name, dn,
                                    c->op[i].wl.ds[c->op[i].out].name);
            case 3:
                return nm_yerror_at(err, t[k].at, t[k].offset, "a shared loop over '%s', which "
                                    "indexes the intermediate '%s' through a window wider than "
                                    "its stride in '%s': its tiles would overlap from step to "
                                    "step (step through the last operation's rows with "
                                    "'recompute: {INDEX: STEPS}' on the group instead, which "
                                    "recomputes the overlap, or 'retain:', which keeps it)", dn,
                                    c->op[i].wl.ds[ds].name,
                                    c->op[i].name);
            case 4:
                return nm_yerror_at(err, t[k].at, t[k].offset, "a shared loop over '%s': '%s' "
                                    "reads the intermediate '%s' along '%s' on another axis "
                                    "than its producer writes it, so a step would read another "
                                    "slice than the one written", dn, c->op[i].name,
                                    c->op[i].wl.ds[ds].name, dn);
            case 5:
                return nm_yerror_at(err, t[k].at, t[k].offset, "a shared loop over '%s': the "
                                    "online exponentials '%s' are taken against a running max "
                                    "over '%s', and '%s', which sums them over it, is not in "
                                    "the group: put it in the group, which rescales its partial "
                                    "sums at each step, or step through no blocks of '%s'", dn,
                                    c->op[i].wl.ds[ds].name, dn, c->op[i].name, dn);
            }
        }
    }
    const nm_ynode *keep = nm_ymap_get(e, "keep");
    for (size_t k = 0; keep && keep->kind == NM_Y_SEQ && k < keep->n; k++) {
        const nm_ynode *it = keep->items[k];
        if (it->kind != NM_Y_SCALAR)
            continue;
        for (int i = g->first; i < g->first + g->nops; i++) {
            int ds = nm_workload_ds(&c->op[i].wl, it->str);
            if (ds >= 0 && inside(c, g, i, ds))
                return nm_yerror(err, it, "'%s' is an intermediate of the group: it lives at the "
                                 "fusion level '%s' and below, not at '%s'", it->str,
                                 arch->level[g->level].name, tn->str);
        }
    }
    return NM_OK;
}

/* Checks one entry of operation i's own mapping: at or below the fusion
 * level, not bypassing an intermediate there. */
static nm_status check_own(const nm_ynode *e, const nm_arch *arch, const nm_chain *c,
                           const nm_fused_group *g, int i, nm_error *err)
{
    nm_status st = nm_yexpect(e, NM_Y_MAP, "a mapping entry", err);
    if (st != NM_OK)
        return st;
    const nm_ynode *tn = nm_ymap_get(e, "target"), *ty = nm_ymap_get(e, "type");
    if (!tn || !ty || tn->kind != NM_Y_SCALAR || ty->kind != NM_Y_SCALAR)
        return NM_OK;
    int l = nm_arch_target(arch, tn->str, !strcmp(ty->str, "spatial"));
    if (l > g->level)
        return nm_yerror(err, tn, "'%s' is above the fusion level '%s': its loops are shared "
                         "by the group (give them under 'shared')", tn->str,
                         arch->level[g->level].name);
    const nm_ynode *by = nm_ymap_get(e, "bypass");
    for (size_t k = 0; l == g->level && by && by->kind == NM_Y_SEQ && k < by->n; k++) {
        const nm_ynode *it = by->items[k];
        int ds = it->kind == NM_Y_SCALAR ? nm_workload_ds(&c->op[i].wl, it->str) : -1;
        if (ds >= 0 && inside(c, g, i, ds))
            return nm_yerror(err, it, "'%s' is an intermediate of the group: it lives at the "
                             "fusion level '%s', so it cannot bypass it", it->str, tn->str);
    }
    return NM_OK;
}

void nm_fused_map_unfused(nm_fused_map *fm, const nm_chain *c, const nm_arch *arch,
                          const nm_mapping *maps)
{
    memset(fm, 0, sizeof *fm);
    fm->ngroups = c->nops;
    for (int i = 0; i < c->nops; i++) {
        fm->group[i] = (nm_fused_group){.first = i, .nops = 1, .level = arch->nlevels - 1};
        fm->group_of[i] = i;
        fm->map[i] = maps[i];
    }
}

/* Parses group g's mappings: each operation's shared and own entries into
 * its composite mapping, with its intermediates kept at the fusion level. */
static nm_status parse_group(nm_fused_map *fm, int gi, const nm_ynode *shared, const nm_ynode *ops,
                             const nm_arch *arch, const nm_chain *c, nm_ydoc *doc, nm_error *err)
{
    nm_fused_group *g = &fm->group[gi];
    nm_status st;
    for (size_t k = 0; shared && k < shared->n; k++)
        if ((st = check_shared(shared->items[k], arch, c, g, err)) != NM_OK)
            return st;
    for (int i = g->first; i < g->first + g->nops; i++) {
        const nm_ynode *own = nm_ymap_get(ops, c->op[i].name);
        if ((st = nm_yexpect(own, NM_Y_SEQ, "an operation's mapping (a list of entries)",
                             err)) != NM_OK)
            return st;
        nm_ynode *list = nm_ydoc_seq(doc, own);
        if (!list)
            return nm_error_set(err, NM_ERR_NOMEM, NULL, 0, 0, "out of memory");
        for (size_t k = 0; shared && k < shared->n; k++)
            if (nm_yseq_append(doc, list, shared->items[k]) != NM_OK)
                return nm_error_set(err, NM_ERR_NOMEM, NULL, 0, 0, "out of memory");
        for (size_t k = 0; k < own->n; k++) {
            if ((st = check_own(own->items[k], arch, c, g, i, err)) != NM_OK)
                return st;
            if (nm_yseq_append(doc, list, own->items[k]) != NM_OK)
                return nm_error_set(err, NM_ERR_NOMEM, NULL, 0, 0, "out of memory");
        }
        nm_mapping *m = &fm->map[i];
        if ((st = nm_mapping_parse(m, list, arch, &c->op[i].wl, err)) != NM_OK)
            return st;
        const nm_workload *wl = &c->op[i].wl;
        fm->onchip[i] = nm_fused_onchip(c, g->first, g->nops, i);
        for (int ds = 0; ds < wl->nds; ds++) {
            if (!((fm->onchip[i] >> ds) & 1u))
                continue;
            if (!((m->level[g->level].keep >> ds) & 1u))
                return nm_yerror(err, g->node, "'%s' is an intermediate of the group, but the "
                                 "design's constraints bypass it at the fusion level '%s'",
                                 wl->ds[ds].name, arch->level[g->level].name);
            for (int s = g->level + 1; s < arch->nlevels; s++)
                m->level[s].keep &= ~(1u << ds);
        }
    }
    return NM_OK;
}

/* A group's `recompute: {rank: steps, ...}` or `retain: {rank: steps}`:
 * its splits, applied to c. */
static nm_status parse_split(nm_fused_group *g, const nm_ynode *n, int retain, nm_chain *c,
                             nm_error *err)
{
    const char *key_name = retain ? "retain" : "recompute";
    nm_status st = nm_yexpect(n, NM_Y_MAP, retain
                              ? "retain (the last operation's index: its steps)"
                              : "recompute (the last operation's index: its steps)", err);
    if (st != NM_OK)
        return st;
    if (retain && n->n != 1)
        return nm_yerror(err, n, "retain splits one index (the rows): {INDEX: STEPS}");
    if (n->n > NM_MAX_SPLITS)
        return nm_yerror(err, n, "recompute splits at most %d indices (rows and columns)",
                         NM_MAX_SPLITS);
    for (size_t k = 0; k < n->n; k++) {
        const nm_ynode *key = nm_ymap_key(n, k), *v = nm_ymap_val(n, k);
        int64_t steps;
        if ((st = nm_yget_int(v, "steps", &steps, err)) != NM_OK)
            return st;
        nm_fused_split *sp = &g->split[g->nsplit];
        char why[NM_ERROR_MSG_MAX];
        if ((retain ? nm_chain_retain : nm_chain_recompute)(c, g->first, g->nops, key->str, steps,
                                                            sp->step, why, sizeof why) != NM_OK)
            return nm_yerror(err, key, "cannot %s halos along '%s' in %lld steps: %s", key_name,
                             key->str, (long long)steps, why);
        snprintf(sp->rank, NM_NAME_MAX, "%s", key->str);
        sp->steps = steps;
        sp->retain = retain;
        g->nsplit++;
    }
    return NM_OK;
}

int nm_fused_retain_ok(const nm_arch *arch, const nm_chain *c, const nm_fused_group *g,
                       const nm_mapping *maps, char *why, size_t size)
{
    const nm_mapping *m = &maps[g->first];
    const nm_workload *wl = &c->op[g->first].wl;
    int t = c->op[g->first].head_step, other = -1;
    const char *step = wl->dim[t];
    for (int s = g->level + 1; s < arch->nlevels; s++) {
        const nm_level_map *lm = &m->level[s];
        if (lm->sfactor[t] > 1) {
            snprintf(why, size, "the steps of a retained halo run one after the other: '%s' "
                     "has a spatial factor over '%s'", arch->level[s].name, step);
            return 0;
        }
        /* a level's fan-out is inside its temporal loops */
        int8_t order[2 * NM_MAX_DIMS];
        int n = 0;
        for (int d = 0; d < wl->ndims; d++)
            if (lm->sfactor[d] > 1)
                order[n++] = (int8_t)d;
        for (int k = 0; k < wl->ndims; k++)
            if (lm->tfactor[lm->torder[k]] > 1)
                order[n++] = lm->torder[k];
        for (int k = 0; k < n; k++) {
            if (order[k] != t) {
                other = other < 0 ? order[k] : other;
            } else if (other >= 0) {
                snprintf(why, size, "the shared loop over '%s' at '%s' runs inside the "
                         "steps '%s': the rows a retained halo keeps would wait through its "
                         "other windows (make the steps the innermost shared loop)",
                         wl->dim[other], arch->level[s].name, step);
                return 0;
            }
        }
    }
    for (int s = g->level + 1; s < arch->nlevels; s++) {
        const nm_level_map *lm = &m->level[s];
        for (int d = 0; d < wl->ndims; d++) {
            if (d == t || (lm->tfactor[d] <= 1 && lm->sfactor[d] <= 1))
                continue;
            for (int i = g->first; i < g->first + g->nops; i++) {
                const nm_workload *w = &c->op[i].wl;
                int e = nm_workload_dim(w, wl->dim[d]);
                for (int ds = 0; ds < w->nds; ds++)
                    if (nm_dataspace_uses(&w->ds[ds], c->op[i].head_step) && !nm_dataspace_uses(&w->ds[ds], e)) {
                        snprintf(why, size, "the shared loop over '%s' at '%s' runs around the "
                                 "steps of a retained halo, but '%s' follows the rows and not "
                                 "'%s' (its rows would not start anew at each iteration)",
                                 wl->dim[d], arch->level[s].name, w->ds[ds].name, wl->dim[d]);
                        return 0;
                    }
            }
        }
    }
    for (int i = g->first; i < g->first + g->nops; i++) {
        int ti = c->op[i].head_step;
        for (int s = 0; s <= g->level; s++)
            if (maps[i].level[s].tfactor[ti] > 1 || maps[i].level[s].sfactor[ti] > 1) {
                snprintf(why, size, "'%s' loops over the steps '%s' at '%s': a retained halo's "
                         "steps are shared loops, above the fusion level '%s'", c->op[i].name,
                         step, arch->level[s].name, arch->level[g->level].name);
                return 0;
            }
        nm_mapping first;
        if (c->op[i].head && !nm_fused_step_map(&c->op[i], g->level, &maps[i], 1, &first)) {
            snprintf(why, size, "'%s' computes %lld rows along '%s' at its first step (%lld more "
                     "than at the others, for the halo), which its loops below the fusion level "
                     "'%s' do not tile as they tile a step's %lld (factors dividing both, no "
                     "remainders)", c->op[i].name,
                     (long long)(c->op[i].wl.bound[c->op[i].head_dim] + c->op[i].head),
                     c->op[i].wl.dim[c->op[i].head_dim], (long long)c->op[i].head,
                     arch->level[g->level].name, (long long)c->op[i].wl.bound[c->op[i].head_dim]);
            return 0;
        }
    }
    return 1;
}

nm_status nm_fused_map_parse(nm_fused_map *fm, const nm_ynode *node, const nm_arch *arch,
                             nm_chain *c, nm_ydoc *doc, nm_error *err)
{
    static const char *const top_keys[] = {"fused", NULL};
    static const char *const group_keys[] = {"fuse_at", "recompute", "retain", "shared", "ops",
                                             NULL};
    memset(fm, 0, sizeof *fm);
    if (node->kind != NM_Y_MAP || !nm_ymap_get(node, "fused"))
        return nm_yerror(err, node, "the problem is a chain of operations: its mapping is "
                         "{fused: [groups]}, each group {fuse_at, shared, ops: {NAME: "
                         "[entries]}} (see nestmap(1), FUSED MAPPINGS)");
    nm_status st = nm_ycheck_keys(node, top_keys, "a fused mapping", err);
    if (st != NM_OK)
        return st;
    const nm_ynode *groups = nm_ymap_get(node, "fused");
    if ((st = nm_yexpect(groups, NM_Y_SEQ, "fused (a list of groups)", err)) != NM_OK)
        return st;
    int next = 0;
    for (size_t gi = 0; gi < groups->n; gi++) {
        const nm_ynode *e = groups->items[gi];
        if ((st = nm_yexpect(e, NM_Y_MAP, "a group ({fuse_at, shared, ops})", err)) != NM_OK ||
            (st = nm_ycheck_keys(e, group_keys, "a group", err)) != NM_OK)
            return st;
        const nm_ynode *ops = nm_ymap_get(e, "ops"), *at = nm_ymap_get(e, "fuse_at");
        const nm_ynode *shared = nm_ymap_get(e, "shared");
        if (!ops)
            return nm_yerror(err, e, "a group needs 'ops': each of its operations' mappings, "
                             "by name, in the chain's order");
        if ((st = nm_yexpect(ops, NM_Y_MAP, "ops (operation name: its mapping)", err)) != NM_OK)
            return st;
        if (shared && !nm_yis_null(shared) &&
            (st = nm_yexpect(shared, NM_Y_SEQ, "shared (a list of mapping entries)", err)) != NM_OK)
            return st;
        if (shared && nm_yis_null(shared))
            shared = NULL;
        nm_fused_group *g = &fm->group[fm->ngroups];
        g->node = e;
        g->first = next;
        for (size_t k = 0; k < ops->n; k++) {
            const nm_ynode *key = nm_ymap_key(ops, k);
            int i = nm_chain_op_index(c, key->str);
            if (i < 0) {
                const char *cands[NM_MAX_OPS];
                for (int j = 0; j < c->nops; j++)
                    cands[j] = c->op[j].name;
                const char *sug = nm_text_suggest(key->str, cands, (size_t)c->nops);
                return nm_yerror(err, key, "no operation '%s' in the chain%s%s%s", key->str,
                                 sug ? "; did you mean '" : "", sug ? sug : "", sug ? "'?" : "");
            }
            if (i != next)
                return nm_yerror(err, key, next < c->nops
                                 ? "'%s' out of order: groups take the chain's operations in "
                                   "order, and '%s' comes next"
                                 : "'%s' is in a group already%s", key->str,
                                 next < c->nops ? c->op[next].name : "");
            fm->group_of[i] = fm->ngroups;
            next++;
        }
        if (ops->n == 0)
            return nm_yerror(err, ops, "a group needs at least one operation");
        g->nops = (int)ops->n;
        g->level = arch->nlevels - 1;
        if (at) {
            const char *name;
            if ((st = nm_yget_str(at, "fuse_at", &name, err)) != NM_OK)
                return st;
            int l = nm_arch_level(arch, name);
            if (l < 0) {
                const char *s = nm_arch_suggest_level(arch, name);
                return nm_yerror(err, at, "unknown storage level '%s'%s%s%s", name,
                                 s ? "; did you mean '" : "", s ? s : "", s ? "'?" : "");
            }
            if (arch->level[l].container[0])
                return nm_yerror(err, at, "'%s' stands for the fan-out of container '%s' and "
                                 "holds no data: fuse at a storage level", name,
                                 arch->level[l].container);
            g->level = l;
        }
        fm->ngroups++;
        const nm_ynode *rc = nm_ymap_get(e, "recompute"), *rt = nm_ymap_get(e, "retain");
        if (rc && rt)
            return nm_yerror(err, rt, "a group recomputes its halos or retains them, not both");
        if (rc && (st = parse_split(g, rc, 0, c, err)) != NM_OK)
            return st;
        if (rt && (st = parse_split(g, rt, 1, c, err)) != NM_OK)
            return st;
        for (int i = g->first; i < g->first + g->nops; i++)
            for (int ds = 0; ds < c->op[i].wl.nds; ds++)
                if (inside(c, g, i, ds) && g->level == arch->nlevels - 1)
                    return nm_yerror(err, at ? at : e, "'%s' passes from '%s' to a later "
                                     "operation of this group, so it would live in the backing "
                                     "store '%s': give 'fuse_at', the on-chip level it lives at",
                                     c->op[i].wl.ds[ds].name, c->op[i].name,
                                     arch->level[arch->nlevels - 1].name);
        int leaver = nm_fused_leaks(c, g->first, g->nops);
        if (leaver >= 0) {
            const nm_chain_op *p = &c->op[leaver];
            return nm_yerror(err, at ? at : e, "'%s' passes from '%s' to a later operation of "
                             "this group and to one after it: a tensor read after the group "
                             "goes through the backing store, so the group must end before "
                             "'%s' reads it or take its other readers in",
                             p->wl.ds[p->out].name, p->name, p->wl.ds[p->out].name);
        }
        if ((st = parse_group(fm, fm->ngroups - 1, shared, ops, arch, c, doc, err)) != NM_OK)
            return st;
        char why[NM_ERROR_MSG_MAX];
        if (rt && !nm_fused_retain_ok(arch, c, g, fm->map, why, sizeof why))
            return nm_yerror(err, rt, "%s", why);
    }
    if (next < c->nops)
        return nm_yerror(err, groups, "operation '%s' is in no group (every operation of the "
                         "chain is mapped by one)", c->op[next].name);
    return NM_OK;
}

/* ---- the model ---- */

nm_status nm_fused_model_init(nm_fused_model *fmdl, const nm_arch *arch, const nm_chain *c,
                              nm_error *err)
{
    memset(fmdl, 0, sizeof *fmdl);
    fmdl->arch = arch;
    fmdl->chain = c;
    for (int i = 0; i < c->nops; i++) {
        fmdl->op_arch[i] = nm_fused_op_arch(arch, c, i, err);
        nm_status st = c->op[i].kind != NM_OP_MAC && !fmdl->op_arch[i] ? NM_ERR_NOMEM : NM_OK;
        if (st == NM_OK)
            st = nm_model_init(&fmdl->op[i], fmdl->op_arch[i] ? fmdl->op_arch[i] : arch,
                               &c->op[i].wl, err);
        if (st != NM_OK) {
            nm_fused_model_fini(fmdl);
            return st;
        }
        fmdl->nready++;
        for (int k = 0; k < 2 && c->op[i].head > 0; k++) {
            nm_workload *w = fmdl->step_wl[i][k] = nm_calloc(1, sizeof *w);
            if (!w)
                st = nm_error_set(err, NM_ERR_NOMEM, NULL, 0, 0, "out of memory");
            else {
                nm_chain_step_workload(&c->op[i], k, w);
                st = nm_model_init(&fmdl->step[i][k], fmdl->op_arch[i] ? fmdl->op_arch[i] : arch,
                                   w, err);
            }
            if (st == NM_OK && !fmdl->first_st &&
                !(fmdl->first_st = nm_calloc(1, sizeof *fmdl->first_st)))
                st = nm_error_set(err, NM_ERR_NOMEM, NULL, 0, 0, "out of memory");
            if (st != NM_OK) {
                nm_fused_model_fini(fmdl);
                return st;
            }
        }
        if (c->op[i].masked) {
            nm_workload *w = fmdl->causal_wl[i] = nm_calloc(1, sizeof *w);
            if (w)
                *w = c->op[i].wl;
            if (!w || (!fmdl->causal_st && !(fmdl->causal_st = nm_calloc(3, sizeof(nm_stats)))))
                st = nm_error_set(err, NM_ERR_NOMEM, NULL, 0, 0, "out of memory");
            else if ((st = nm_model_init(&fmdl->causal[i],
                                         fmdl->op_arch[i] ? fmdl->op_arch[i] : arch, w, err)) !=
                     NM_OK) {
                nm_free(w);
                fmdl->causal_wl[i] = NULL;
            }
            if (st != NM_OK) {
                nm_fused_model_fini(fmdl);
                return st;
            }
        }
    }
    return NM_OK;
}

nm_arch *nm_fused_op_arch(const nm_arch *arch, const nm_chain *c, int i, nm_error *err)
{
    if (c->op[i].kind == NM_OP_MAC)
        return NULL;
    nm_arch *a = nm_calloc(1, sizeof *a);
    if (!a) {
        nm_error_set(err, NM_ERR_NOMEM, NULL, 0, 0, "out of memory");
        return NULL;
    }
    *a = *arch;
    nm_arith_as_op(&a->arith, c->op[i].kind);
    return a;
}

void nm_fused_model_fini(nm_fused_model *fmdl)
{
    for (int i = 0; i < NM_MAX_OPS; i++) {
        nm_free(fmdl->op_arch[i]);
        fmdl->op_arch[i] = NULL;
    }
    for (int i = 0; i < fmdl->nready; i++)
        nm_model_fini(&fmdl->op[i]);
    fmdl->nready = 0;
    for (int i = 0; i < NM_MAX_OPS; i++)
        for (int k = 0; k < 2; k++)
            if (fmdl->step_wl[i][k]) {
                nm_model_fini(&fmdl->step[i][k]);
                nm_free(fmdl->step_wl[i][k]);
                fmdl->step_wl[i][k] = NULL;
            }
    nm_free(fmdl->first_st);
    fmdl->first_st = NULL;
    for (int i = 0; i < NM_MAX_OPS; i++)
        if (fmdl->causal_wl[i]) {
            nm_model_fini(&fmdl->causal[i]);
            nm_free(fmdl->causal_wl[i]);
            fmdl->causal_wl[i] = NULL;
        }
    nm_free(fmdl->causal_st);
    fmdl->causal_st = NULL;
}

void nm_fused_sum_add(nm_fused_sum *s, const nm_stats *st)
{
    s->energy += st->energy;
    s->cycles += st->cycles;
    s->computes += st->computes;
    s->backing += st->last_level_accesses;
}

/* Whether a step of the group's shared loops moves data space ds's tile at
 * level s of operation i to another, disjoint one (so nothing of it is
 * reused from one step to the next): the innermost shared loop that steps
 * (level L, index d) runs over an index the tile's axes follow plainly, or
 * one of the operation's own loops between s and the fusion level does,
 * wrapping round.  Not when L is at or below s (the tile spans that loop),
 * nor over a window (tiles may overlap). */
static int moves_every_step(const nm_workload *wl, const nm_mapping *m, int F, int S, int s,
                            int ds)
{
    int L = -1, d = -1;
    for (int l = F + 1; l < S && L < 0; l++)
        for (int k = 0; k < wl->ndims && L < 0; k++)
            if (m->level[l].tfactor[m->level[l].torder[k]] > 1) {
                L = l;
                d = m->level[l].torder[k];
            }
    if (L < 0)
        return 1; /* one step: nothing to keep for a next one */
    if (L <= s)
        return 0;
    const nm_dataspace *x = &wl->ds[ds];
    if (nm_dataspace_uses(x, d) && !nm_fused_halo(wl, ds, d))
        return 1;
    for (int l = s + 1; l <= F; l++)
        for (int e = 0; e < wl->ndims; e++)
            if (m->level[l].tfactor[e] > 1 && nm_dataspace_uses(x, e) && !nm_fused_halo(wl, ds, e))
                return 1;
    return 0;
}

/* The operations run one after the other at each step, so while
 * one runs a level holds its tiles, the tiles the other operations keep
 * there from one step to the next (those the analyses reuse across steps),
 * and, at the fusion level, the intermediates waiting for a later
 * consumer.  The largest of these over the operations must fit. */
uint64_t nm_fused_group_need(const nm_fused_model *fmdl, const nm_fused_map *fm, int gi,
                             const nm_fused_stats *out, int s)
{
    const nm_fused_group *g = &fm->group[gi];
    const nm_chain *c = fmdl->chain;
    int end = g->first + g->nops;
    /* a retained halo's intermediates: their readers' windows at the fusion
     * level hold them from step to step, the rows the producer adds included */
    int retained = s == g->level && nm_fused_group_retains(g);
    uint64_t own[NM_MAX_OPS] = {0}, kept[NM_MAX_OPS] = {0}, tile[NM_MAX_OPS] = {0};
    for (int i = g->first; i < end; i++) {
        const nm_workload *wl = &c->op[i].wl;
        for (int ds = 0; ds < wl->nds; ds++) {
            const nm_ds_stats *d = &out->op[i].level[s].ds[ds];
            if (!((fm->map[i].level[s].keep >> ds) & 1u) || !d->utilized_capacity)
                continue;
            int window = retained && ((fm->onchip[i] >> ds) & 1u);
            if (window && ds == c->op[i].out)
                continue;
            uint64_t w = nm_model_tile_words(&fmdl->op[i], s, ds, d->utilized_capacity);
            own[i] += w;
            if (ds == c->op[i].out)
                tile[i] = w;
            if (window || !moves_every_step(wl, &fm->map[i], g->level, fmdl->arch->nlevels, s, ds))
                kept[i] += w;
        }
    }
    uint64_t need = 0;
    for (int i = g->first; i < end; i++) {
        uint64_t n = own[i];
        for (int j = g->first; j < end; j++)
            if (j != i)
                n += kept[j];
        /* intermediates written before i and read after it, not by i */
        for (int p = g->first; s == g->level && p < i; p++) {
            int later = 0, reads = 0;
            for (int j = p + 1; j < end; j++)
                for (int k = 0; k < c->op[j].wl.nds; k++)
                    if (c->op[j].producer[k] == p) {
                        later |= j > i;
                        reads |= j == i;
                    }
            if (later && !reads)
                n += tile[p];
        }
        if (n > need)
            need = n;
    }
    return need;
}

uint64_t nm_fused_group_peak(const nm_fused_model *fmdl, const nm_fused_map *fm, int gi,
                             const nm_fused_stats *out, int s)
{
    const nm_fused_group *g = &fm->group[gi];
    uint64_t need = nm_fused_group_need(fmdl, fm, gi, out, s);
    if (fmdl->first_st && nm_fused_group_retains(g)) {
        uint64_t first = nm_fused_group_need(fmdl, fm, gi, fmdl->first_st, s);
        need = first > need ? first : need;
    }
    return need;
}

int nm_fused_group_fits(nm_fused_model *fmdl, const nm_fused_map *fm, int gi, nm_fused_stats *out)
{
    const nm_arch *arch = fmdl->arch;
    if (fm->group[gi].nops < 2)
        return 1; /* the operation's own check */
    for (int s = 0; s < arch->nlevels; s++) {
        const nm_level *L = &arch->level[s];
        if (!L->has_size)
            continue;
        uint64_t need = nm_fused_group_need(fmdl, fm, gi, out, s);
        if (need > (uint64_t)L->effective_size) {
            out->bad_group = gi;
            out->bad_level = s;
            out->need = need;
            out->limit = (uint64_t)L->effective_size;
            return 0;
        }
    }
    return 1;
}

/* (each producer's nest of steps less its first step of a step's rows
 * plus its first step with the head's rows) */
int nm_fused_first_steps(nm_fused_model *fmdl, const nm_fused_map *fm, nm_fused_stats *out)
{
    if (!fmdl->first_st)
        return out->valid;
    const nm_chain *c = fmdl->chain;
    nm_fused_stats *first = fmdl->first_st;
    nm_stats one;
    for (int i = 0; i < c->nops; i++) {
        const nm_fused_group *g = &fm->group[fm->group_of[i]];
        if (!nm_fused_group_retains(g))
            continue; /* (first holds the retaining groups' operations only) */
        first->op[i] = out->op[i];
        if (!fmdl->step_wl[i][0])
            continue;
        nm_mapping m;
        for (int k = 0; k < 2; k++) {
            nm_stats *st = k ? &first->op[i] : &one;
            int tiled = nm_fused_step_map(&c->op[i], g->level, &fm->map[i], k, &m);
            if (!tiled || !nm_model_eval(&fmdl->step[i][k], &m, st, NULL)) {
                int d = c->op[i].head_dim;
                out->valid = 0;
                out->bad_op = i;
                out->bad_group = fm->group_of[i];
                /* (untiled: a step's rows, not the first step's) */
                out->op[i].invalid =
                    tiled ? st->invalid
                          : (nm_invalid){.kind = NM_INV_FACTORS, .level = g->level, .index = d,
                                         .got = (uint64_t)c->op[i].wl.bound[d],
                                         .limit = (uint64_t)fmdl->step_wl[i][1]->bound[d]};
                return 0;
            }
        }
        nm_stats_add(&out->op[i], &first->op[i], &one, fmdl->arch->nlevels, c->op[i].wl.nds);
    }
    for (int gi = 0; gi < fm->ngroups; gi++) {
        const nm_fused_group *g = &fm->group[gi];
        if (!nm_fused_group_retains(g))
            continue;
        first->bad_group = -1;
        if (!nm_fused_group_fits(fmdl, fm, gi, first)) {
            out->valid = 0;
            out->bad_group = first->bad_group;
            out->bad_level = first->bad_level;
            out->need = first->need;
            out->limit = first->limit;
            return 0;
        }
    }
    return 1;
}

int nm_fused_model_eval(nm_fused_model *fmdl, const nm_fused_map *fm, nm_fused_stats *out)
{
    const nm_chain *c = fmdl->chain;
    memset(&out->total, 0, sizeof out->total);
    memset(out->group, 0, sizeof out->group);
    out->valid = 1;
    out->bad_op = out->bad_group = out->bad_level = -1;
    out->need = out->limit = 0;
    for (int i = 0; i < c->nops; i++)
        if (!nm_model_eval(&fmdl->op[i], &fm->map[i], &out->op[i], NULL)) {
            out->valid = 0;
            out->bad_op = i;
            out->bad_group = fm->group_of[i];
            return 0;
        }
    for (int gi = 0; gi < fm->ngroups; gi++)
        if (!nm_fused_group_fits(fmdl, fm, gi, out)) {
            out->valid = 0;
            return 0;
        }
    /* causal masks: the steps a group skips; retained halos: each
     * producer's first step computes its head too; online softmaxes:
     * the running max and the rescaling */
    if (!nm_fused_causal(fmdl, fm, out) || !nm_fused_first_steps(fmdl, fm, out))
        return 0;
    nm_fused_online_count(fmdl, fm, out);
    for (int i = 0; i < c->nops; i++) {
        nm_fused_sum_add(&out->group[fm->group_of[i]], &out->op[i]);
        nm_fused_sum_add(&out->total, &out->op[i]);
    }
    return 1;
}

void nm_fused_describe_invalid(const nm_fused_stats *st, const nm_arch *arch, const nm_chain *c,
                               const nm_fused_map *fm, char *buf, size_t size)
{
    if (st->valid || st->bad_group < 0) {
        snprintf(buf, size, "valid");
        return;
    }
    if (st->bad_op >= 0) {
        char why[512];
        nm_invalid_describe(&st->op[st->bad_op].invalid, arch, &c->op[st->bad_op].wl, why,
                            sizeof why);
        snprintf(buf, size, "operation '%s': %s", c->op[st->bad_op].name, why);
        return;
    }
    const nm_fused_group *g = &fm->group[st->bad_group];
    snprintf(buf, size, "the group %s..%s needs %llu words at '%s', which holds %llu (while an "
             "operation runs, a level holds its tiles, the tiles the others keep there from "
             "step to step, and the intermediates waiting there)",
             c->op[g->first].name, c->op[g->first + g->nops - 1].name,
             (unsigned long long)st->need, arch->level[st->bad_level].name,
             (unsigned long long)st->limit);
}
