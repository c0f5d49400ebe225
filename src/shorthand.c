/* shorthand.c — nestmap's workload shorthands, expanded to the projection
 * form of workload.h:
 *
 *   problem: {conv2d: {N, C, K (or M), P, Q, R, S, stride, dilation, padding, bias}}
 *   problem: {depthwise: {N, C, P, Q, R, S, stride, dilation}}
 *   problem: {grouped: {N, G, C, K, P, Q, R, S, stride, dilation}}   C, K per group
 *   problem: {gemm: {M, N, K, bias}}              Z[m,n] = A[m,k] * B[k,n]
 *   problem: {maxpool: {N, C, P, Q, window, stride, padding}}
 *   problem: {relu: {N, C, P, Q}}   problem: {layernorm: {N, C, P, Q}}
 *   problem: {einsum: "Z[m,n] = A[m,k] * B[k,n]", bounds: {m: 64, n: 64, k: 64}}
 *
 * Convolutions follow Timeloop's names and axes: weights R x S, outputs
 * P (width) x Q (height), inputs W = P*Wstride + R*Wdilation.  stride and
 * dilation take one number or [height, width].  padding ('same', 'valid',
 * zeros per side) sizes the input as a framework holds it, for the
 * roofline; bias adds one parameter per output channel and one operation
 * per output (both for the roofline only: see workload.h). */
#include <config.h>

#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "nestmap/text.h"
#include "nestmap/workload.h"

nm_status nm_workload_shorthand(nm_workload *wl, const nm_ynode *problem, int *handled,
                                nm_error *err);

static int add_dim(nm_workload *wl, const char *name, int64_t bound)
{
    int d = wl->ndims++;
    snprintf(wl->dim[d], NM_NAME_MAX, "%s", name);
    wl->bound[d] = bound;
    return d;
}

static nm_dataspace *add_ds(nm_workload *wl, const char *name, int rw)
{
    nm_dataspace *ds = &wl->ds[wl->nds++];
    memset(ds, 0, sizeof *ds);
    snprintf(ds->name, NM_NAME_MAX, "%s", name);
    ds->read_write = rw;
    return ds;
}

/* Adds an axis sum(coef_i * dim_i) for up to two terms (dim2 < 0: one term). */
static void add_axis(nm_dataspace *ds, int dim1, int64_t c1, int dim2, int64_t c2)
{
    nm_axis *ax = &ds->rank[ds->nranks++];
    ax->term[0].dim = dim1;
    ax->term[0].coef = c1;
    ax->nterms = 1;
    if (dim2 >= 0) {
        ax->term[1].dim = dim2;
        ax->term[1].coef = c2;
        ax->nterms = 2;
    }
}

/* stride/dilation: a number (both axes) or [height, width]. */
static nm_status pair(const nm_ynode *n, const char *what, int64_t *h, int64_t *w, nm_error *err)
{
    *h = *w = 1;
    if (!n)
        return NM_OK;
    if (n->kind == NM_Y_SEQ) {
        if (n->n != 2)
            return nm_yerror(err, n, "%s takes one number or [height, width]", what);
        nm_status st = nm_yget_pos(n->items[0], what, h, err);
        return st != NM_OK ? st : nm_yget_pos(n->items[1], what, w, err);
    }
    nm_status st = nm_yget_pos(n, what, h, err);
    *w = *h;
    return st;
}

/* padding: 'same' (the input is stride x output along each axis, as
 * frameworks size it), 'valid' (none), or the zeros added on each side: one
 * number or [height, width].  Sets the Inputs' width and height axes' pad
 * (projected extent minus held extent); the held extent must be positive. */
static nm_status padding(const nm_ynode *n, nm_dataspace *in, int wrank, int hrank,
                         const nm_workload *wl, int64_t hs, int64_t ws, nm_error *err)
{
    if (!n)
        return NM_OK;
    int64_t stride[2] = {ws, hs};
    int rank[2] = {wrank, hrank};
    int64_t side[2] = {0, 0};
    int same = 0;
    nm_status st = NM_OK;
    if (n->kind == NM_Y_SCALAR && !strcmp(n->str, "same"))
        same = 1;
    else if (n->kind == NM_Y_SCALAR && !strcmp(n->str, "valid"))
        return NM_OK;
    else if (n->kind == NM_Y_SEQ && n->n == 2) {
        if ((st = nm_yget_int(n->items[0], "padding", &side[1], err)) != NM_OK ||
            (st = nm_yget_int(n->items[1], "padding", &side[0], err)) != NM_OK)
            return st;
    } else if (n->kind == NM_Y_SCALAR) {
        if ((st = nm_yget_int(n, "padding", &side[0], err)) != NM_OK)
            return nm_yerror(err, n, "padding takes 'same', 'valid', the zeros on each side "
                             "(a number), or [height, width]");
        side[1] = side[0];
    } else {
        return nm_yerror(err, n, "padding takes 'same', 'valid', the zeros on each side "
                         "(a number), or [height, width]");
    }
    for (int a = 0; a < 2; a++) {
        const nm_axis *ax = &in->rank[rank[a]];
        int64_t extent = 1;
        for (int t = 0; t < ax->nterms; t++)
            extent += ax->term[t].coef * (wl->bound[ax->term[t].dim] - 1);
        /* the output extent: the term with the stride's coefficient is
         * the output axis (the last term, see conv_like) */
        int64_t out = wl->bound[ax->term[ax->nterms - 1].dim];
        if (side[a] < 0)
            return nm_yerror(err, n, "padding cannot be negative");
        int64_t held = same ? stride[a] * out : extent - 2 * side[a];
        if (held < 1)
            return nm_yerror(err, n, "padding of %lld on each side leaves no input (the "
                             "window covers %lld)", (long long)side[a], (long long)extent);
        in->pad[rank[a]] = extent - held;
    }
    return NM_OK;
}

static nm_status bias_flag(const nm_ynode *spec, nm_workload *wl, int64_t words, nm_error *err)
{
    const nm_ynode *b = nm_ymap_get(spec, "bias");
    nm_status st = NM_OK;
    if (b && (st = nm_yget_bool(b, "bias", &wl->bias, err)) != NM_OK)
        return st;
    wl->bias_words = wl->bias ? words : 0;
    return NM_OK;
}

static nm_status conv_like(nm_workload *wl, const nm_ynode *spec, const char *kind,
                           nm_error *err)
{
#define NM_CONV_COMMON "P", "Q", "stride", "Hstride", "Wstride", "padding"
#define NM_CONV_WINDOW "R", "S", "dilation", "Hdilation", "Wdilation", "bias"
    static const char *const conv_keys[] = {"N", "C", "K", "M", NM_CONV_COMMON, NM_CONV_WINDOW,
                                            NULL};
    static const char *const dw_keys[] = {"N", "C", NM_CONV_COMMON, NM_CONV_WINDOW, NULL};
    static const char *const gr_keys[] = {"N", "G", "C", "K", "M", NM_CONV_COMMON,
                                          NM_CONV_WINDOW, NULL};
    static const char *const pool_keys[] = {"N", "C", NM_CONV_COMMON, "window", NULL};
#undef NM_CONV_COMMON
#undef NM_CONV_WINDOW
    int depthwise = !strcmp(kind, "depthwise"), grouped = !strcmp(kind, "grouped");
    int pool = !strcmp(kind, "maxpool");
    char what[64];
    snprintf(what, sizeof what, "%s shorthand", kind);
    nm_status st = nm_yexpect(spec, NM_Y_MAP, what, err);
    if (st != NM_OK)
        return st;
    st = nm_ycheck_keys(spec, pool ? pool_keys : depthwise ? dw_keys : grouped ? gr_keys
                                                                         : conv_keys, what, err);
    if (st != NM_OK)
        return st;
    const char *kname = nm_ymap_get(spec, "M") ? "M" : "K";
    if (nm_ymap_get(spec, "M") && nm_ymap_get(spec, "K"))
        return nm_yerror(err, nm_ymap_get(spec, "M"), "give the output channels as K or M, not both");
    int no_k = depthwise || pool;
    struct { const char *name; int64_t v; int required; } f[] = {
        {"N", 1, 0}, {"G", 1, grouped}, {"C", 1, 1}, {"K", 1, !no_k},
        {"P", 1, 1}, {"Q", 1, 0}, {"R", 1, 0}, {"S", 1, 0},
    };
    for (size_t i = 0; i < sizeof f / sizeof *f; i++) {
        const char *key = !strcmp(f[i].name, "K") ? kname : f[i].name;
        const nm_ynode *v = nm_ymap_get(spec, key);
        if (v) {
            if ((st = nm_yget_pos(v, key, &f[i].v, err)) != NM_OK)
                return st;
        } else if (f[i].required) {
            return nm_yerror(err, spec, "%s needs %s", what, key);
        }
    }
    if (pool) { /* the window is R x S: [height, width] = [S, R] */
        const nm_ynode *win = nm_ymap_get(spec, "window");
        if (!win)
            return nm_yerror(err, spec, "%s needs window (one number or [height, width])", what);
        if ((st = pair(win, "window", &f[7].v, &f[6].v, err)) != NM_OK)
            return st;
    }
    int64_t hs, ws, hd, wd;
    if ((st = pair(nm_ymap_get(spec, "stride"), "stride", &hs, &ws, err)) != NM_OK ||
        (st = pair(nm_ymap_get(spec, "dilation"), "dilation", &hd, &wd, err)) != NM_OK)
        return st;
    const nm_ynode *x;
    if ((x = nm_ymap_get(spec, "Hstride")) && (st = nm_yget_pos(x, "Hstride", &hs, err)) != NM_OK)
        return st;
    if ((x = nm_ymap_get(spec, "Wstride")) && (st = nm_yget_pos(x, "Wstride", &ws, err)) != NM_OK)
        return st;
    if ((x = nm_ymap_get(spec, "Hdilation")) && (st = nm_yget_pos(x, "Hdilation", &hd, err)) != NM_OK)
        return st;
    if ((x = nm_ymap_get(spec, "Wdilation")) && (st = nm_yget_pos(x, "Wdilation", &wd, err)) != NM_OK)
        return st;

    snprintf(wl->name, NM_NAME_MAX, "%s", kind);
    int G = grouped ? add_dim(wl, "G", f[1].v) : -1;
    int C = add_dim(wl, "C", f[2].v);
    int K = no_k ? -1 : add_dim(wl, kname, f[3].v);
    /* A depthwise layer is a convolution whose output channels are its
     * input channels: the output-channel dimension of the designs written
     * for convolutions (Timeloop's M) is there with size 1.  So is a
     * pooling layer's. */
    if (no_k)
        snprintf(wl->unit[wl->nunit++], NM_NAME_MAX, "M");
    int R = add_dim(wl, "R", f[6].v), S = add_dim(wl, "S", f[7].v);
    int N = add_dim(wl, "N", f[0].v);
    int P = add_dim(wl, "P", f[4].v), Q = add_dim(wl, "Q", f[5].v);

    if (pool) {
        wl->flops_per_op = 1; /* one comparison per window element */
        snprintf(wl->absent[wl->nabsent++], NM_NAME_MAX, "Weights");
    } else {
        nm_dataspace *w = add_ds(wl, "Weights", 0);
        w->param = 1;
        if (G >= 0)
            add_axis(w, G, 1, -1, 0);
        add_axis(w, C, 1, -1, 0);
        if (K >= 0)
            add_axis(w, K, 1, -1, 0);
        add_axis(w, R, 1, -1, 0);
        add_axis(w, S, 1, -1, 0);
        if ((st = bias_flag(spec, wl, f[1].v * (K >= 0 ? f[3].v : f[2].v), err)) != NM_OK)
            return st;
    }
    nm_dataspace *in = add_ds(wl, "Inputs", 0);
    add_axis(in, N, 1, -1, 0);
    if (G >= 0)
        add_axis(in, G, 1, -1, 0);
    add_axis(in, C, 1, -1, 0);
    add_axis(in, R, wd, P, ws);
    add_axis(in, S, hd, Q, hs);
    if ((st = padding(nm_ymap_get(spec, "padding"), in, in->nranks - 2, in->nranks - 1, wl, hs,
                      ws, err)) != NM_OK)
        return st;
    nm_dataspace *out = add_ds(wl, "Outputs", 1);
    add_axis(out, N, 1, -1, 0);
    if (G >= 0)
        add_axis(out, G, 1, -1, 0);
    add_axis(out, K >= 0 ? K : C, 1, -1, 0);
    add_axis(out, Q, 1, -1, 0);
    add_axis(out, P, 1, -1, 0);
    return NM_OK;
}

/* relu: {N, C, P, Q}, one operation per element; layernorm: the same
 * shape, normalized over C, with a scale and a shift per channel (Gamma,
 * Beta) and 8 operations per element: the mean (an add), the variance (a
 * subtract, a square, an add), normalizing (a subtract, a multiply by the
 * reciprocal deviation) and the scale and shift (a multiply, an add); the
 * few operations per row (dividing by C, the square root) are left out, as
 * the roofline literature leaves them (NVIDIA, "GPU Performance
 * Background User's Guide": layer normalization, under 10 FLOPs/B). */
static nm_status elementwise(nm_workload *wl, const nm_ynode *spec, const char *kind,
                             nm_error *err)
{
    static const char *const keys[] = {"N", "C", "P", "Q", NULL};
    char what[64];
    snprintf(what, sizeof what, "%s shorthand", kind);
    nm_status st = nm_yexpect(spec, NM_Y_MAP, what, err);
    if (st != NM_OK || (st = nm_ycheck_keys(spec, keys, what, err)) != NM_OK)
        return st;
    int64_t v[4] = {1, 1, 1, 1};
    for (int i = 0; i < 4; i++) {
        const nm_ynode *n = nm_ymap_get(spec, keys[i]);
        if (n && (st = nm_yget_pos(n, keys[i], &v[i], err)) != NM_OK)
            return st;
    }
    if (!nm_ymap_get(spec, "C"))
        return nm_yerror(err, spec, "%s needs C", what);
    int layernorm = !strcmp(kind, "layernorm");
    snprintf(wl->name, NM_NAME_MAX, "%s", kind);
    /* Conv designs' constraints may name the filter and output-channel
     * dimensions: here they have size 1. */
    snprintf(wl->unit[wl->nunit++], NM_NAME_MAX, "M");
    snprintf(wl->unit[wl->nunit++], NM_NAME_MAX, "R");
    snprintf(wl->unit[wl->nunit++], NM_NAME_MAX, "S");
    snprintf(wl->absent[wl->nabsent++], NM_NAME_MAX, "Weights");
    int C = add_dim(wl, "C", v[1]), N = add_dim(wl, "N", v[0]);
    int P = add_dim(wl, "P", v[2]), Q = add_dim(wl, "Q", v[3]);
    wl->flops_per_op = layernorm ? 8 : 1;
    if (layernorm) {
        static const char *const names[] = {"Gamma", "Beta"};
        for (int i = 0; i < 2; i++) {
            nm_dataspace *g = add_ds(wl, names[i], 0);
            g->param = 1;
            add_axis(g, C, 1, -1, 0);
        }
    }
    for (int rw = 0; rw < 2; rw++) {
        nm_dataspace *t = add_ds(wl, rw ? "Outputs" : "Inputs", rw);
        add_axis(t, N, 1, -1, 0);
        add_axis(t, C, 1, -1, 0);
        add_axis(t, Q, 1, -1, 0);
        add_axis(t, P, 1, -1, 0);
    }
    return NM_OK;
}

static nm_status gemm(nm_workload *wl, const nm_ynode *spec, nm_error *err)
{
    static const char *const keys[] = {"M", "N", "K", "bias", NULL};
    nm_status st = nm_yexpect(spec, NM_Y_MAP, "gemm shorthand", err);
    if (st != NM_OK || (st = nm_ycheck_keys(spec, keys, "gemm shorthand", err)) != NM_OK)
        return st;
    int64_t v[3];
    for (int i = 0; i < 3; i++) { /* M, N, K */
        const nm_ynode *n = nm_ymap_get(spec, keys[i]);
        if (!n)
            return nm_yerror(err, spec, "gemm shorthand needs %s", keys[i]);
        if ((st = nm_yget_pos(n, keys[i], &v[i], err)) != NM_OK)
            return st;
    }
    if ((st = bias_flag(spec, wl, v[1], err)) != NM_OK)
        return st;
    snprintf(wl->name, NM_NAME_MAX, "gemm");
    int M = add_dim(wl, "M", v[0]), N = add_dim(wl, "N", v[1]), K = add_dim(wl, "K", v[2]);
    nm_dataspace *a = add_ds(wl, "A", 0);
    add_axis(a, M, 1, -1, 0);
    add_axis(a, K, 1, -1, 0);
    nm_dataspace *b = add_ds(wl, "B", 0);
    b->param = 1; /* a linear layer's weights */
    add_axis(b, K, 1, -1, 0);
    add_axis(b, N, 1, -1, 0);
    nm_dataspace *z = add_ds(wl, "Z", 1);
    add_axis(z, M, 1, -1, 0);
    add_axis(z, N, 1, -1, 0);
    return NM_OK;
}

/* ---- einsum: "Z[m,n] = A[m,k] * B[k,n]", index expressions "2*p+r" ---- */

struct lex {
    const char *s, *p;
    const nm_ynode *at;
    nm_error *err;
};

static void skip_ws(struct lex *lx)
{
    while (isspace((unsigned char)*lx->p))
        lx->p++;
}

static nm_status lex_error(struct lex *lx, const char *what)
{
    return nm_yerror(lx->err, lx->at, "einsum: %s at column %d of \"%s\"", what,
                     (int)(lx->p - lx->s) + 1, lx->s);
}

static int ident(struct lex *lx, char *out)
{
    skip_ws(lx);
    size_t n = 0;
    while ((isalnum((unsigned char)*lx->p) || *lx->p == '_') && n < NM_NAME_MAX - 1) {
        if (n == 0 && isdigit((unsigned char)*lx->p))
            break;
        out[n++] = *lx->p++;
    }
    out[n] = '\0';
    return n > 0;
}

static int find_or_add_index(nm_workload *wl, const char *name)
{
    int d = nm_workload_dim(wl, name);
    if (d >= 0 || wl->ndims >= NM_MAX_DIMS)
        return d;
    return add_dim(wl, name, 0);
}

/* NAME '[' expr (',' expr)* ']' where expr = term ('+' term)*, term = [int '*'] idx | idx ['*' int] */
static nm_status tensor(struct lex *lx, nm_workload *wl, int rw)
{
    char name[NM_NAME_MAX];
    if (!ident(lx, name))
        return lex_error(lx, "expected a tensor name");
    if (nm_workload_ds(wl, name) >= 0)
        return lex_error(lx, "a tensor appears twice");
    if (wl->nds >= NM_MAX_DS)
        return lex_error(lx, "too many tensors");
    nm_dataspace *ds = add_ds(wl, name, rw);
    skip_ws(lx);
    if (*lx->p++ != '[')
        return lex_error(lx, "expected '['");
    for (;;) {
        if (ds->nranks >= NM_MAX_RANKS)
            return lex_error(lx, "too many axes");
        nm_axis *ax = &ds->rank[ds->nranks++];
        for (;;) {
            skip_ws(lx);
            int64_t coef = 1;
            if (isdigit((unsigned char)*lx->p)) {
                coef = 0;
                while (isdigit((unsigned char)*lx->p) && coef < (1 << 20))
                    coef = coef * 10 + (*lx->p++ - '0');
                skip_ws(lx);
                if (*lx->p++ != '*')
                    return lex_error(lx, "expected '*' after a coefficient");
            }
            char idx[NM_NAME_MAX];
            if (!ident(lx, idx))
                return lex_error(lx, "expected an index name");
            skip_ws(lx);
            if (*lx->p == '*') {
                lx->p++;
                skip_ws(lx);
                if (!isdigit((unsigned char)*lx->p))
                    return lex_error(lx, "expected a coefficient after '*'");
                int64_t c = 0;
                while (isdigit((unsigned char)*lx->p) && c < (1 << 20))
                    c = c * 10 + (*lx->p++ - '0');
                coef *= c;
            }
            int d = find_or_add_index(wl, idx);
            if (d < 0)
                return lex_error(lx, "too many indices");
            if (ax->nterms >= NM_MAX_TERMS)
                return lex_error(lx, "too many terms in one axis");
            ax->term[ax->nterms].dim = d;
            ax->term[ax->nterms].coef = coef;
            ax->nterms++;
            skip_ws(lx);
            if (*lx->p != '+')
                break;
            lx->p++;
        }
        skip_ws(lx);
        if (*lx->p == ',') {
            lx->p++;
            continue;
        }
        if (*lx->p++ != ']')
            return lex_error(lx, "expected ',' or ']'");
        return NM_OK;
    }
}

nm_status nm_workload_einsum(nm_workload *wl, const nm_ynode *expr, const nm_ynode *b,
                             int others, nm_error *err)
{
    const char *text;
    nm_status st = nm_yget_str(expr, "einsum", &text, err);
    if (st != NM_OK)
        return st;
    struct lex lx = {text, text, expr, err};
    if ((st = tensor(&lx, wl, 1)) != NM_OK)
        return st;
    skip_ws(&lx);
    if (*lx.p++ != '=')
        return lex_error(&lx, "expected '='");
    for (;;) {
        if ((st = tensor(&lx, wl, 0)) != NM_OK)
            return st;
        skip_ws(&lx);
        if (*lx.p == '\0')
            break;
        if (*lx.p++ != '*')
            return lex_error(&lx, "expected '*' between tensors");
    }
    snprintf(wl->name, NM_NAME_MAX, "einsum");
    if ((st = nm_yexpect(b, NM_Y_MAP, "bounds", err)) != NM_OK)
        return st;
    for (size_t i = 0; i < b->n; i++) {
        const nm_ynode *k = nm_ymap_key(b, i);
        int d = nm_workload_dim(wl, k->str);
        if (d < 0 && others)
            continue; /* another operation's index */
        if (d < 0) {
            const char *cands[NM_MAX_DIMS];
            for (int j = 0; j < wl->ndims; j++)
                cands[j] = wl->dim[j];
            const char *s = nm_text_suggest(k->str, cands, (size_t)wl->ndims);
            if (s)
                return nm_yerror(err, k, "'%s' is not an index of the einsum; did you mean '%s'?",
                                 k->str, s);
            return nm_yerror(err, k, "'%s' is not an index of the einsum", k->str);
        }
        if ((st = nm_yget_pos(nm_ymap_val(b, i), "an index size", &wl->bound[d], err)) != NM_OK)
            return st;
    }
    for (int d = 0; d < wl->ndims; d++)
        if (wl->bound[d] == 0)
            return nm_yerror(err, others ? expr : b, "bounds give no size for index '%s'",
                             wl->dim[d]);
    return NM_OK;
}

static nm_status einsum(nm_workload *wl, const nm_ynode *problem, const nm_ynode *expr,
                        nm_error *err)
{
    static const char *const keys[] = {"einsum", "bounds", "instance", "name", "densities",
                                       NULL};
    nm_status st = nm_ycheck_keys(problem, keys, "problem", err);
    if (st != NM_OK)
        return st;
    const nm_ynode *b = nm_ymap_get(problem, "bounds");
    if (!b)
        b = nm_ymap_get(problem, "instance");
    if (!b)
        return nm_yerror(err, problem, "einsum needs 'bounds' giving each index's size");
    if ((st = nm_workload_einsum(wl, expr, b, 0, err)) != NM_OK)
        return st;
    const nm_ynode *name = nm_ymap_get(problem, "name");
    if (name && name->kind == NM_Y_SCALAR)
        snprintf(wl->name, NM_NAME_MAX, "%s", name->str);
    return NM_OK;
}

nm_status nm_workload_shorthand(nm_workload *wl, const nm_ynode *problem, int *handled,
                                nm_error *err)
{
    static const char *const kinds[] = {"conv2d", "depthwise", "grouped", "maxpool",
                                        "relu", "layernorm", NULL};
    const nm_ynode *n;
    for (int i = 0; kinds[i]; i++) {
        if ((n = nm_ymap_get(problem, kinds[i]))) {
            *handled = 1;
            if (problem->n != 1u + (nm_ymap_get(problem, "densities") != NULL))
                return nm_yerror(err, problem, "a '%s' problem takes no other keys (but "
                                 "densities)", kinds[i]);
            return i >= 4 ? elementwise(wl, n, kinds[i], err) : conv_like(wl, n, kinds[i], err);
        }
    }
    if ((n = nm_ymap_get(problem, "gemm"))) {
        *handled = 1;
        if (problem->n != 1u + (nm_ymap_get(problem, "densities") != NULL))
            return nm_yerror(err, problem, "a 'gemm' problem takes no other keys (but "
                             "densities)");
        return gemm(wl, n, err);
    }
    if ((n = nm_ymap_get(problem, "einsum"))) {
        *handled = 1;
        return einsum(wl, problem, n, err);
    }
    *handled = 0;
    return NM_ERR_INPUT;
}
