/* chain_blocks.c — the common fused blocks written as one key each
 * (`attention`, `ffn`, `dw_pw`, `conv_pool`), expanded to the chain of
 * operations they stand for; see fusion.h. */
#include <config.h>

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "nestmap/fusion.h"

static const char *const blocks[] = {"attention", "ffn", "dw_pw", "conv_pool", NULL};

/* The block key of problem, or NULL. */
static const nm_ynode *block_of(const nm_ynode *problem, const char **which)
{
    if (!problem || problem->kind != NM_Y_MAP)
        return NULL;
    for (int i = 0; blocks[i]; i++) {
        const nm_ynode *b = nm_ymap_get(problem, blocks[i]);
        if (b) {
            *which = blocks[i];
            return b;
        }
    }
    return NULL;
}

int nm_chain_block_given(const nm_ynode *problem)
{
    const char *which = "";
    return block_of(problem, &which) != NULL;
}

/* What is being built: the chain's list and bounds, located at `at`. */
typedef struct build {
    nm_ydoc *doc;
    const nm_ynode *at;
    nm_ynode *chain, *bounds;
    nm_error *err;
    int causal; /* the operations over rows m and keys n are masked (attention) */
    int online; /* the exponentials run against a running max over the keys n (attention) */
} build;

static nm_ynode *scalar(build *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static nm_ynode *scalar(build *b, const char *fmt, ...)
{
    char text[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    return nm_ydoc_scalar(b->doc, b->at, NULL, text);
}

/* Appends {name, einsum, op} (op NULL: a multiply-accumulate), its
 * `causal: [m, n]` when b masks and the einsum has both m and n, and an
 * exponential's `online: n` when b's softmax is the online form. */
static nm_status op(build *b, const char *name, const char *kind, const char *einsum)
{
    nm_ynode *e = nm_ydoc_map(b->doc, b->at), *n = scalar(b, "%s", name),
             *x = scalar(b, "%s", einsum), *k = kind ? scalar(b, "%s", kind) : NULL;
    nm_ynode *mask = NULL;
    if (b->causal && strstr(einsum, "m,") && strstr(einsum, ",n")) {
        nm_ynode *r = scalar(b, "m"), *c = scalar(b, "n");
        mask = nm_ydoc_seq(b->doc, b->at);
        if (!r || !c || !mask || nm_yseq_append(b->doc, mask, r) != NM_OK ||
            nm_yseq_append(b->doc, mask, c) != NM_OK)
            mask = NULL;
        if (!mask)
            return nm_error_set(b->err, NM_ERR_NOMEM, NULL, 0, 0, "out of memory");
    }
    int online = b->online && kind && !strcmp(kind, "exp");
    nm_ynode *run = online ? scalar(b, "n") : NULL;
    if (online && !run)
        return nm_error_set(b->err, NM_ERR_NOMEM, NULL, 0, 0, "out of memory");
    if (!e || !n || !x || (kind && !k) || nm_ymap_set(b->doc, e, "name", n) != NM_OK ||
        nm_ymap_set(b->doc, e, "einsum", x) != NM_OK ||
        (k && nm_ymap_set(b->doc, e, "op", k) != NM_OK) ||
        (mask && nm_ymap_set(b->doc, e, "causal", mask) != NM_OK) ||
        (run && nm_ymap_set(b->doc, e, "online", run) != NM_OK) ||
        nm_yseq_append(b->doc, b->chain, e) != NM_OK)
        return nm_error_set(b->err, NM_ERR_NOMEM, NULL, 0, 0, "out of memory");
    return NM_OK;
}

static nm_status bound(build *b, const char *index, int64_t n)
{
    nm_ynode *v = scalar(b, "%lld", (long long)n);
    if (!v || nm_ymap_set(b->doc, b->bounds, index, v) != NM_OK)
        return nm_error_set(b->err, NM_ERR_NOMEM, NULL, 0, 0, "out of memory");
    return NM_OK;
}

/* A positive integer under key (def when absent; def 0: required). */
static nm_status size_of(const nm_ynode *m, const char *key, int64_t def, const char *block,
                         int64_t *out, nm_error *err)
{
    const nm_ynode *v = nm_ymap_get(m, key);
    if (!v || nm_yis_null(v)) {
        if (!def)
            return nm_yerror(err, m, "%s needs '%s'", block, key);
        *out = def;
        return NM_OK;
    }
    char what[64];
    snprintf(what, sizeof what, "%s's %s", block, key);
    return nm_yget_pos(v, what, out, err);
}

/* One of choices[] under key (choices[0] when absent): its index. */
static nm_status choice(const nm_ynode *m, const char *key, const char *const *choices,
                        int def, int *out, nm_error *err)
{
    const nm_ynode *v = nm_ymap_get(m, key);
    *out = def;
    if (!v || nm_yis_null(v))
        return NM_OK;
    const char *s;
    nm_status st = nm_yget_str(v, key, &s, err);
    if (st != NM_OK)
        return st;
    char list[160];
    size_t n = 0;
    for (int i = 0; choices[i]; i++) {
        if (!strcmp(s, choices[i])) {
            *out = i;
            return NM_OK;
        }
        n += (size_t)snprintf(list + n, sizeof list - n, "%s%s", i ? ", " : "", choices[i]);
    }
    return nm_yerror(err, v, "%s '%s': one of %s", key, s, list);
}

/* Self-attention per head: the scores S = Q K^T, the softmax of each row
 * of S, the output O = P V.  The softmax as its parts (a row max, the
 * exponential of each score less it, a row sum, and the division of the
 * output by it, which may come after P V as FlashAttention does it), as
 * FlashAttention's online form (no row max ahead of the exponentials: the
 * running max rescales the partial sums instead, so a fused group may
 * share the loop over keys: the exponential's `online: n`, whose running
 * max and rescaling fusion_online.c counts), or as one element-wise
 * operation. */
static nm_status attention(build *b, const nm_ynode *m)
{
    static const char *const keys[] = {"heads", "seq", "kv", "head_dim", "value_dim", "batch",
                                       "softmax", "causal", NULL};
    static const char *const forms[] = {"parts", "online", "single", NULL};
    nm_status st = nm_ycheck_keys(m, keys, "attention", b->err);
    int64_t heads, seq, kv, e, d, batch;
    int form;
    if (st != NM_OK || (st = size_of(m, "heads", 0, "attention", &heads, b->err)) != NM_OK ||
        (st = size_of(m, "seq", 0, "attention", &seq, b->err)) != NM_OK ||
        (st = size_of(m, "kv", seq, "attention", &kv, b->err)) != NM_OK ||
        (st = size_of(m, "head_dim", 0, "attention", &e, b->err)) != NM_OK ||
        (st = size_of(m, "value_dim", e, "attention", &d, b->err)) != NM_OK ||
        (st = size_of(m, "batch", 1, "attention", &batch, b->err)) != NM_OK ||
        (st = choice(m, "softmax", forms, 0, &form, b->err)) != NM_OK)
        return st;
    const nm_ynode *causal = nm_ymap_get(m, "causal");
    int masked = 0;
    if (causal && (st = nm_yget_bool(causal, "causal", &masked, b->err)) != NM_OK)
        return st;
    if (masked && kv < seq)
        return nm_yerror(b->err, causal, "causal attention needs at least as many keys (kv %lld) "
                         "as queries (seq %lld): a query sees the keys up to its own position, "
                         "the last one all of them", (long long)kv, (long long)seq);
    b->causal = masked;
    b->online = form == 1;
    if ((st = op(b, "scores", NULL, "S[h,m,n] = Q[h,m,e] * K[h,n,e]")) != NM_OK)
        return st;
    if (form == 0)
        st = op(b, "rowmax", "max", "X[h,m] = S[h,m,n]");
    if (st == NM_OK && form < 2)
        st = op(b, "exp", "exp", form == 0 ? "E[h,m,n] = S[h,m,n] * X[h,m]" : "E[h,m,n] = S[h,m,n]");
    if (st == NM_OK && form < 2)
        st = op(b, "rowsum", "sum", "L[h,m] = E[h,m,n]");
    if (st == NM_OK && form < 2)
        st = op(b, "values", NULL, "U[h,m,d] = E[h,m,n] * V[h,n,d]");
    if (st == NM_OK && form < 2)
        st = op(b, "normalize", "div", "O[h,m,d] = U[h,m,d] * L[h,m]");
    if (st == NM_OK && form == 2)
        st = op(b, "softmax", "exp", "P[h,m,n] = S[h,m,n]");
    if (st == NM_OK && form == 2)
        st = op(b, "values", NULL, "O[h,m,d] = P[h,m,n] * V[h,n,d]");
    if (st != NM_OK || (st = bound(b, "h", heads * batch)) != NM_OK ||
        (st = bound(b, "m", seq)) != NM_OK || (st = bound(b, "n", kv)) != NM_OK ||
        (st = bound(b, "e", e)) != NM_OK || (st = bound(b, "d", d)) != NM_OK)
        return st;
    return NM_OK;
}

/* A transformer's feed-forward block: up projection, activation, down
 * projection; gated (LLaMA's SwiGLU): a gate projection beside the up
 * one, the activation of the gate times the up projection.  relu is a
 * comparison; gelu and silu are charged one exponential each (their other
 * arithmetic is not counted). */
static nm_status ffn(build *b, const nm_ynode *m)
{
    static const char *const keys[] = {"tokens", "d_model", "d_ff", "gated", "activation",
                                       NULL};
    static const char *const acts[] = {"relu", "gelu", "silu", NULL};
    nm_status st = nm_ycheck_keys(m, keys, "ffn", b->err);
    int64_t tokens, dm, dff;
    int gated = 0, act;
    const nm_ynode *g = nm_ymap_get(m, "gated");
    if (st != NM_OK || (st = size_of(m, "tokens", 0, "ffn", &tokens, b->err)) != NM_OK ||
        (st = size_of(m, "d_model", 0, "ffn", &dm, b->err)) != NM_OK ||
        (st = size_of(m, "d_ff", 0, "ffn", &dff, b->err)) != NM_OK ||
        (g && (st = nm_yget_bool(g, "gated", &gated, b->err)) != NM_OK))
        return st;
    if ((st = choice(m, "activation", acts, gated ? 2 : 0, &act, b->err)) != NM_OK)
        return st;
    const char *kind = act == 0 ? "max" : "exp";
    if (gated) {
        if ((st = op(b, "gate", NULL, "G[m,f] = X[m,d] * Wg[d,f]")) != NM_OK ||
            (st = op(b, "up", NULL, "H[m,f] = X[m,d] * W1[d,f]")) != NM_OK ||
            (st = op(b, acts[act], kind, "A[m,f] = G[m,f]")) != NM_OK ||
            (st = op(b, "gating", "mul", "P[m,f] = A[m,f] * H[m,f]")) != NM_OK ||
            (st = op(b, "down", NULL, "Y[m,e] = P[m,f] * W2[f,e]")) != NM_OK)
            return st;
    } else if ((st = op(b, "up", NULL, "H[m,f] = X[m,d] * W1[d,f]")) != NM_OK ||
               (st = op(b, acts[act], kind, "A[m,f] = H[m,f]")) != NM_OK ||
               (st = op(b, "down", NULL, "Y[m,e] = A[m,f] * W2[f,e]")) != NM_OK) {
        return st;
    }
    if ((st = bound(b, "m", tokens)) != NM_OK || (st = bound(b, "d", dm)) != NM_OK ||
        (st = bound(b, "f", dff)) != NM_OK || (st = bound(b, "e", dm)) != NM_OK)
        return st;
    return NM_OK;
}

/* MobileNet's pair: a depthwise convolution (stride 1 or 2) and the
 * pointwise convolution reading its output. */
static nm_status dw_pw(build *b, const nm_ynode *m)
{
    static const char *const keys[] = {"C", "M", "P", "Q", "R", "S", "stride", NULL};
    nm_status st = nm_ycheck_keys(m, keys, "dw_pw", b->err);
    int64_t C, M, P, Q, R, S, u;
    if (st != NM_OK || (st = size_of(m, "C", 0, "dw_pw", &C, b->err)) != NM_OK ||
        (st = size_of(m, "M", 0, "dw_pw", &M, b->err)) != NM_OK ||
        (st = size_of(m, "P", 0, "dw_pw", &P, b->err)) != NM_OK ||
        (st = size_of(m, "Q", P, "dw_pw", &Q, b->err)) != NM_OK ||
        (st = size_of(m, "R", 3, "dw_pw", &R, b->err)) != NM_OK ||
        (st = size_of(m, "S", R, "dw_pw", &S, b->err)) != NM_OK ||
        (st = size_of(m, "stride", 1, "dw_pw", &u, b->err)) != NM_OK)
        return st;
    char dw[96];
    if (u == 1)
        snprintf(dw, sizeof dw, "I[c,p,q] = X[c,p+r,q+s] * Wd[c,r,s]");
    else
        snprintf(dw, sizeof dw, "I[c,p,q] = X[c,%lld*p+r,%lld*q+s] * Wd[c,r,s]", (long long)u,
                 (long long)u);
    if ((st = op(b, "dw", NULL, dw)) != NM_OK ||
        (st = op(b, "pw", NULL, "Y[m,p,q] = I[c,p,q] * Wp[c,m]")) != NM_OK ||
        (st = bound(b, "c", C)) != NM_OK || (st = bound(b, "m", M)) != NM_OK ||
        (st = bound(b, "p", P)) != NM_OK || (st = bound(b, "q", Q)) != NM_OK ||
        (st = bound(b, "r", R)) != NM_OK || (st = bound(b, "s", S)) != NM_OK)
        return st;
    return NM_OK;
}

/* A convolution and the max-pooling of its output (window `pool`, stride
 * `stride`, by default the window: windows that overlap, stride < pool, as
 * ResNet's 3x3 windows at stride 2, need `rows: false`, and fuse by
 * recomputing the rows two steps share).  With `rows` (the default) the
 * convolution writes its output as
 * pooling windows, I[m,p,i,q,j] for row k*p + i and column k*q + j (a
 * reshape: the same elements, one each), so the two share the loops over
 * pooled rows and columns as well as output channels: LoopTree's rank
 * correspondence for windows that do not overlap, and a fused step may
 * hold a band of rows.  With `rows: false` the convolution writes I[m,y,x]
 * and the pooling reads I[m,k*p+i,k*q+j]: the two share only the output
 * channels, so a fused step holds whole planes. */
static nm_status conv_pool(build *b, const nm_ynode *m)
{
    static const char *const keys[] = {"C", "M", "P", "Q", "R", "S", "pool", "stride", "rows",
                                       NULL};
    nm_status st = nm_ycheck_keys(m, keys, "conv_pool", b->err);
    int64_t C, M, P, Q, R, S, k, sd;
    int rows = 1;
    const nm_ynode *rn = nm_ymap_get(m, "rows");
    if (st != NM_OK || (st = size_of(m, "C", 0, "conv_pool", &C, b->err)) != NM_OK ||
        (st = size_of(m, "M", 0, "conv_pool", &M, b->err)) != NM_OK ||
        (st = size_of(m, "P", 0, "conv_pool", &P, b->err)) != NM_OK ||
        (st = size_of(m, "Q", P, "conv_pool", &Q, b->err)) != NM_OK ||
        (st = size_of(m, "R", 3, "conv_pool", &R, b->err)) != NM_OK ||
        (st = size_of(m, "S", R, "conv_pool", &S, b->err)) != NM_OK ||
        (st = size_of(m, "pool", 2, "conv_pool", &k, b->err)) != NM_OK ||
        (st = size_of(m, "stride", k, "conv_pool", &sd, b->err)) != NM_OK ||
        (rn && (st = nm_yget_bool(rn, "rows", &rows, b->err)) != NM_OK))
        return st;
    if (sd != k && rows)
        return nm_yerror(b->err, rn ? rn : m, "conv_pool: pooling windows of %lld at stride "
                         "%lld %s, so the convolution cannot write its output by window: write "
                         "'rows: false'", (long long)k, (long long)sd,
                         sd < k ? "overlap" : "leave rows out");
    if (P < k || Q < k || (P - k) % sd || (Q - k) % sd)
        return nm_yerror(b->err, m, "conv_pool: the convolution's output (%lld x %lld) is not "
                         "a whole number of %lld x %lld pooling windows at stride %lld (the "
                         "last window ends at the last row: %lld rows, or %lld)", (long long)P,
                         (long long)Q, (long long)k, (long long)k, (long long)sd,
                         (long long)(k + (P > k ? (P - k) / sd : 0) * sd),
                         (long long)(k + ((P > k ? (P - k) / sd : 0) + 1) * sd));
    char conv[128], pool[96];
    long long kk = (long long)k, ss = (long long)sd;
    if (rows) {
        snprintf(conv, sizeof conv, "I[m,p,i,q,j] = X[c,%lld*p+i+r,%lld*q+j+s] * W[m,c,r,s]", kk,
                 kk);
        snprintf(pool, sizeof pool, "O[m,p,q] = I[m,p,i,q,j]");
    } else {
        snprintf(conv, sizeof conv, "I[m,y,x] = X[c,y+r,x+s] * W[m,c,r,s]");
        snprintf(pool, sizeof pool, "O[m,p,q] = I[m,%lld*p+i,%lld*q+j]", ss, ss);
    }
    if ((st = op(b, "conv", NULL, conv)) != NM_OK || (st = op(b, "pool", "max", pool)) != NM_OK ||
        (st = bound(b, "c", C)) != NM_OK || (st = bound(b, "m", M)) != NM_OK ||
        (!rows && ((st = bound(b, "y", P)) != NM_OK || (st = bound(b, "x", Q)) != NM_OK)) ||
        (st = bound(b, "r", R)) != NM_OK || (st = bound(b, "s", S)) != NM_OK ||
        (st = bound(b, "p", (P - k) / sd + 1)) != NM_OK ||
        (st = bound(b, "q", (Q - k) / sd + 1)) != NM_OK ||
        (st = bound(b, "i", k)) != NM_OK || (st = bound(b, "j", k)) != NM_OK)
        return st;
    return NM_OK;
}

nm_status nm_chain_block(const nm_ynode *problem, nm_ydoc *doc, const nm_ynode **out,
                         nm_error *err)
{
    const char *which = "";
    const nm_ynode *m = block_of(problem, &which);
    *out = NULL;
    static const char *const keys[] = {"attention", "ffn", "dw_pw", "conv_pool", "name", NULL};
    nm_status st = nm_ycheck_keys(problem, keys, "a fused block", err);
    if (st != NM_OK)
        return st;
    if (problem->n > 1 + (nm_ymap_get(problem, "name") != NULL))
        return nm_yerror(err, problem, "a problem holds one block (attention, ffn, dw_pw or "
                         "conv_pool)");
    if ((st = nm_yexpect(m, NM_Y_MAP, which, err)) != NM_OK)
        return st;
    build b = {doc, m, nm_ydoc_seq(doc, m), nm_ydoc_map(doc, m), err, 0, 0};
    nm_ynode *p = nm_ydoc_map(doc, problem);
    const nm_ynode *name = nm_ymap_get(problem, "name");
    nm_ynode *nn = name ? (nm_ynode *)name : nm_ydoc_scalar(doc, m, NULL, which);
    if (!b.chain || !b.bounds || !p || !nn || nm_ymap_set(doc, p, "name", nn) != NM_OK)
        return nm_error_set(err, NM_ERR_NOMEM, NULL, 0, 0, "out of memory");
    st = !strcmp(which, "attention") ? attention(&b, m)
         : !strcmp(which, "ffn")     ? ffn(&b, m)
         : !strcmp(which, "dw_pw")   ? dw_pw(&b, m)
                                     : conv_pool(&b, m);
    if (st != NM_OK)
        return st;
    if (nm_ymap_set(doc, p, "chain", b.chain) != NM_OK ||
        nm_ymap_set(doc, p, "bounds", b.bounds) != NM_OK)
        return nm_error_set(err, NM_ERR_NOMEM, NULL, 0, 0, "out of memory");
    *out = p;
    return NM_OK;
}
