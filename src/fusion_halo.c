/* fusion_halo.c — recomputed halos: a fused group of convolutions stepping
 * through the last operation's rows; see fusion.h (nm_chain_recompute).
 *
 * When a consumer reads its producer's output through windows wider than
 * their stride (a 3x3 convolution after any layer), consecutive tiles of
 * the intermediate along the rows overlap, and a shared loop over the rows
 * cannot hand each step a tile of its own.  Recomputing the overlap
 * (LoopTree's "recompute", Gilbert et al., TCASAI 2024; DeFiNES's "fully
 * recompute", Mei et al., HPCA 2023) makes the steps independent: the last
 * operation's rows are split into `steps` steps of T rows, and each
 * producer computes, at every step, the band of rows its consumers' windows
 * read, rows the previous step computed too.  That is an affine loop nest
 * again, so it is written as one and every count comes from the unchanged
 * single-Einsum analysis:
 *
 *   the last operation's rows  p = T*t + p'          (p' < T, t < steps)
 *   a producer's rows          y = B*t + y'          (y' < W)
 *
 * where B is the rows a consumer's step advances through the producer's
 * output (its stride times the consumer's B) and W the band a step reads
 * (the producer's rows less B per step before the last).  Every term of an
 * index so split gains a term in t, except on the intermediates, which gain
 * an axis of their own, t, instead: the producer writes band t as its own
 * slice Y[t, y', ...], so a step's band never meets the last step's in the
 * model (each row is computed, written and read again, as recomputation
 * does), and the intermediates' tiles do not overlap from step to step.
 * The split indices keep their names (a design's constraints still bind
 * them) and take their band's size; t is a new index every operation of the
 * group has and may share.
 *
 * Retaining the overlap instead (LoopTree's "retain"; DeFiNES's "fully
 * cached") has every operation compute only the rows its step adds, B of
 * them, the intermediate's rows of earlier steps staying at the fusion
 * level for the windows that still reach them.  The steps are then the
 * nest with y = B*t + y' (y' < B) in every operation, the intermediates
 * included (no axis of steps: a consumer's window slides over the rows its
 * producer wrote in this step and the steps before), and what the first
 * window reaches beyond B, the producer's first bound - steps*B rows, is
 * its head, computed in the first step besides that step's own rows.
 * That schedule is not one affine nest, but its counts are three nests'
 * (nm_chain_step_workload, nm_fused_step_map): the nest of every step
 * with B rows, less its first step alone, plus the first step with the
 * head's rows too.  Under the tile-granular rule a step after the first
 * gains the same from a first step of B rows as from one with the head
 * (both end at the same row, and the step after starts past both), so
 * the difference is what the later steps cost after the real first step.
 * Offsets do not enter the counts, so the steps' rows are written from 0
 * although they follow the head.
 */
#include <config.h>

#include <stdio.h>
#include <string.h>

#include "nestmap/alloc.h"
#include "nestmap/fusion.h"

/* The one axis of data space ds of wl holding index d, with its
 * coefficient, or -1 (none, or several). */
static int axis_of(const nm_workload *wl, int ds, int d, int64_t *coef)
{
    const nm_dataspace *s = &wl->ds[ds];
    int found = -1;
    for (int r = 0; r < s->nranks; r++)
        for (int k = 0; k < s->rank[r].nterms; k++)
            if (s->rank[r].term[k].dim == d) {
                if (found >= 0 && found != r)
                    return -2;
                found = r;
                *coef = s->rank[r].term[k].coef;
            }
    return found;
}

static int reads_ds(const nm_chain_op *op, int ds, int producer)
{
    return ds != op->out && op->producer[ds] == producer;
}

/* Inserts axis {t: 1} before axis r of data space ds. */
static int insert_step_axis(nm_workload *wl, int ds, int r, int t)
{
    nm_dataspace *s = &wl->ds[ds];
    if (s->nranks >= NM_MAX_RANKS)
        return 0;
    memmove(&s->rank[r + 1], &s->rank[r], (size_t)(s->nranks - r) * sizeof s->rank[0]);
    memmove(&s->pad[r + 1], &s->pad[r], (size_t)(s->nranks - r) * sizeof s->pad[0]);
    s->rank[r] = (nm_axis){.nterms = 1, .term = {{.dim = t, .coef = 1}}};
    s->pad[r] = 0;
    s->nranks++;
    return 1;
}

/* Splits the group's rows into steps: recomputing halos, or retaining
 * them (retain). */
static nm_status split_rows(nm_chain *c, int first, int nops, const char *rank, int64_t steps,
                            int retain, char *step, char *why, size_t size)
{
    int last = first + nops - 1;
    nm_workload *lw = &c->op[last].wl;
    int d_last = nm_workload_dim(lw, rank);
    int64_t base[NM_MAX_OPS] = {0}, band[NM_MAX_OPS] = {0};
    int dim[NM_MAX_OPS], axis[NM_MAX_OPS]; /* each operation's split index; its output's axis */
#define REFUSE(...) (snprintf(why, size, __VA_ARGS__), NM_ERR_INPUT)
    if (nops < 2)
        return REFUSE("a group of one operation has no halo to %s",
                      retain ? "retain" : "recompute");
    if (d_last < 0)
        return REFUSE("'%s' is not an index of '%s', the group's last operation", rank,
                      c->op[last].name);
    int leaker = nm_fused_leaks(c, first, nops);
    if (leaker >= 0)
        return REFUSE("'%s' is read inside the group and after it, so its steps' bands cannot "
                      "stay the group's own", c->op[leaker].wl.ds[c->op[leaker].out].name);
    int64_t coef;
    axis[last - first] = axis_of(lw, c->op[last].out, d_last, &coef);
    if (axis[last - first] < 0 || coef != 1 ||
        lw->ds[c->op[last].out].rank[axis[last - first]].nterms != 1)
        return REFUSE("'%s' indexes no axis of '%s' alone (the rows split into steps are an "
                      "axis of the last operation's output)", rank,
                      lw->ds[c->op[last].out].name);
    if (steps < 1 || lw->bound[d_last] % steps)
        return REFUSE("%lld steps do not divide '%s' (%lld)", (long long)steps, rank,
                      (long long)lw->bound[d_last]);
    for (int i = first; i <= last; i++) {
        if (c->op[i].wl.has_density)
            return REFUSE("'%s' has densities given: %s halos of sparse tensors are not "
                          "modelled", c->op[i].name, retain ? "retained" : "recomputed");
        if (c->op[i].masked)
            return REFUSE("'%s' has a causal mask: its rows and keys are not split into steps "
                          "with halos", c->op[i].name);
        if (c->op[i].retained)
            return REFUSE("'%s' retains a halo already: a retained halo is a group's one split",
                          c->op[i].name);
        if (retain && c->op[i].recompute > 1.0)
            return REFUSE("'%s' recomputes a halo already: a retained halo is a group's one "
                          "split", c->op[i].name);
    }
    int64_t head[NM_MAX_OPS] = {0};
    dim[last - first] = d_last;
    base[last - first] = band[last - first] = lw->bound[d_last] / steps;
    /* Back from the last operation: each producer's advance and band. */
    for (int k = last - 1; k >= first; k--) {
        nm_chain_op *p = &c->op[k];
        const nm_dataspace *y = &p->wl.ds[p->out];
        int64_t B = 0;
        int r = -1;
        for (int j = k + 1; j <= last; j++)
            for (int ds = 0; ds < c->op[j].wl.nds; ds++) {
                if (!reads_ds(&c->op[j], ds, k))
                    continue;
                int64_t cj = 0;
                int rj = axis_of(&c->op[j].wl, ds, dim[j - first], &cj);
                if (rj < 0)
                    return REFUSE("'%s' reads '%s' %s", c->op[j].name, y->name, rj == -1
                                  ? "whole at every step (no axis of it follows the rows)"
                                  : "along the rows on two axes");
                if (r >= 0 && (rj != r || cj * base[j - first] != B))
                    return REFUSE("the operations reading '%s' step through it differently",
                                  y->name);
                r = rj;
                B = cj * base[j - first];
            }
        if (r < 0)
            return REFUSE("'%s' writes '%s', which no later operation of the group reads (a "
                          "group's operations lead to its last)", p->name, y->name);
        if (y->rank[r].nterms != 1 || y->rank[r].term[0].coef != 1)
            return REFUSE("'%s' writes axis %d of '%s' as a sum of indices", p->name, r + 1,
                          y->name);
        int d = y->rank[r].term[0].dim;
        int64_t W = p->wl.bound[d] - B * (steps - 1);
        if (W < 1)
            return REFUSE("'%s' has %lld rows along '%s': too few for %lld steps of %lld",
                          y->name, (long long)p->wl.bound[d], p->wl.dim[d], (long long)steps,
                          (long long)B);
        dim[k - first] = d;
        axis[k - first] = r;
        base[k - first] = B;
        band[k - first] = retain ? B : W;
        head[k - first] = W - B;
        if (retain && W < B)
            return REFUSE("'%s' has %lld rows along '%s', fewer than the %lld steps of %lld "
                          "its readers step through", y->name, (long long)p->wl.bound[d],
                          p->wl.dim[d], (long long)steps, (long long)B);
    }
    /* The new index: a name no operation uses. */
    snprintf(step, NM_NAME_MAX, "%.*s_step", NM_NAME_MAX - 6, c->op[last].wl.dim[d_last]);
    for (int i = 0; i < c->nops; i++)
        if (nm_workload_dim(&c->op[i].wl, step) >= 0 || nm_workload_ds(&c->op[i].wl, step) >= 0)
            return REFUSE("'%s' names an index or tensor of the chain already", step);
    /* The split: bands, a term in t, the intermediates' step axes. */
    for (int i = first; i <= last; i++) {
        nm_chain_op *op = &c->op[i];
        nm_workload *wl = &op->wl;
        int d = dim[i - first];
        if (wl->ndims >= NM_MAX_DIMS)
            return REFUSE("'%s' has %d indices: no room for the steps' own", op->name,
                          wl->ndims);
        int t = wl->ndims++;
        snprintf(wl->dim[t], NM_NAME_MAX, "%s", step);
        wl->bound[t] = steps;
        if (retain) {
            op->retained = 1;
            op->head = head[i - first];
            op->head_dim = d;
            op->head_step = t;
        } else {
            op->recompute = (op->recompute > 0 ? op->recompute : 1.0) *
                            (double)(steps * band[i - first]) / (double)wl->bound[d];
        }
        wl->bound[d] = band[i - first];
        for (int ds = 0; ds < wl->nds; ds++) {
            int inter = !retain && ((ds == op->out && i < last) ||
                                    (ds != op->out && op->producer[ds] >= first));
            if (inter) {
                int64_t cf;
                int r = ds == op->out ? axis[i - first] : axis_of(wl, ds, d, &cf);
                if (r < 0 || !insert_step_axis(wl, ds, r, t))
                    return REFUSE("'%s' has %d axes: no room for the steps' own",
                                  wl->ds[ds].name, NM_MAX_RANKS);
                continue;
            }
            nm_dataspace *s = &wl->ds[ds];
            for (int r = 0; r < s->nranks; r++) {
                nm_axis *ax = &s->rank[r];
                int64_t cf = 0;
                for (int k = 0; k < ax->nterms; k++)
                    cf += ax->term[k].dim == d ? ax->term[k].coef : 0;
                if (!cf)
                    continue;
                if (ax->nterms >= NM_MAX_TERMS)
                    return REFUSE("axis %d of '%s' in '%s' has %d terms: no room for the "
                                  "steps'", r + 1, s->name, op->name, NM_MAX_TERMS);
                ax->term[ax->nterms++] = (nm_term){.dim = t, .coef = cf * base[i - first]};
            }
        }
    }
    /* Two operations calling an index by the same name give it one size. */
    for (int i = first; i <= last; i++)
        for (int j = first; j < i; j++)
            for (int d = 0; d < c->op[i].wl.ndims; d++) {
                int e = nm_workload_dim(&c->op[j].wl, c->op[i].wl.dim[d]);
                if (e >= 0 && e < c->op[j].wl.ndims &&
                    c->op[j].wl.bound[e] != c->op[i].wl.bound[d])
                    return REFUSE("index '%s' would take a band of %lld rows in '%s' but %lld "
                                  "in '%s'", c->op[i].wl.dim[d], (long long)c->op[j].wl.bound[e],
                                  c->op[j].name, (long long)c->op[i].wl.bound[d],
                                  c->op[i].name);
            }
#undef REFUSE
    nm_error err;
    nm_status st = nm_chain_link(c, &err);
    if (st != NM_OK)
        snprintf(why, size, "%s", err.msg);
    return st;
}

nm_status nm_chain_recompute(nm_chain *c, int first, int nops, const char *rank, int64_t steps,
                             char *step, char *why, size_t size)
{
    return split_rows(c, first, nops, rank, steps, 0, step, why, size);
}

nm_status nm_chain_retain(nm_chain *c, int first, int nops, const char *rank, int64_t steps,
                          char *step, char *why, size_t size)
{
    return split_rows(c, first, nops, rank, steps, 1, step, why, size);
}

void nm_chain_step_workload(const nm_chain_op *op, int first, nm_workload *out)
{
    *out = op->wl;
    out->bound[op->head_step] = 1;
    if (first)
        out->bound[op->head_dim] += op->head;
}

int nm_fused_step_map(const nm_chain_op *op, int level, const nm_mapping *m, int first,
                      nm_mapping *out)
{
    *out = *m;
    int d = op->head_dim, t = op->head_step;
    for (int s = 0; s < out->nlevels; s++) {
        nm_level_map *lm = &out->level[s];
        lm->tfactor[t] = lm->sfactor[t] = 1;
        lm->tresidual[t] = lm->sresidual[t] = 0;
        if (first && (lm->tresidual[d] || lm->sresidual[d]))
            return 0;
    }
    if (!first)
        return 1;
    /* the first step's rows: the fusion level's loop over them longer, the
     * levels below tiling them as they tile a step's */
    int64_t band = op->wl.bound[d], f = out->level[level].tfactor[d];
    int64_t below = band / f, rows = band + op->head;
    if (rows % below)
        return 0;
    out->level[level].tfactor[d] = rows / below;
    return 1;
}

int nm_chain_halo_dims(const nm_chain *c, int first, int nops, int *dims)
{
    const nm_chain_op *last = &c->op[first + nops - 1];
    const nm_dataspace *out = &last->wl.ds[last->out];
    nm_chain *probe = nm_calloc(1, sizeof *probe);
    if (!probe)
        return -1;
    int n = 0;
    for (int r = 0; r < out->nranks && n < NM_MAX_SPLITS; r++) {
        int d = out->rank[r].term[0].dim;
        char step[NM_NAME_MAX], why[NM_ERROR_MSG_MAX];
        *probe = *c;
        if (out->rank[r].nterms == 1 && !nm_fused_can_share(c, first, nops, last->wl.dim[d]) &&
            nm_chain_recompute(probe, first, nops, last->wl.dim[d], 1, step, why,
                               sizeof why) == NM_OK)
            dims[n++] = d;
    }
    nm_free(probe);
    return n;
}

nm_status nm_fused_group_apply(nm_chain *c, const nm_fused_group *g, char *why, size_t size)
{
    for (int k = 0; k < g->nsplit; k++) {
        char step[NM_NAME_MAX];
        nm_status st = split_rows(c, g->first, g->nops, g->split[k].rank, g->split[k].steps,
                                  g->split[k].retain, step, why, size);
        if (st != NM_OK)
            return st;
    }
    return NM_OK;
}
