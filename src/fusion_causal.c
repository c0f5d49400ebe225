/* fusion_causal.c — causal masks in fused groups (fusion.h).
 *
 * A masked operation (`causal: [m, n]`) computes the points with
 * n <= m + offset.  A fused group whose shared loops step through blocks
 * of the keys n skips each step the mask covers whole, as FlashAttention
 * skips the blocks above the diagonal; the steps the diagonal crosses are
 * computed whole, the mask applied to their elements.  So the rows of row
 * step i (bm of them) see the key steps 0 .. k_i - 1, with
 *
 *     k_i = min(nb, floor(((i + 1) bm - 1 + offset) / bn) + 1)
 *
 * a staircase, not one affine nest.  Its counts come from three
 * rectangular nests, each counted by the unchanged single-Einsum model,
 * under these rules (a group breaking one computes every step, the
 * rectangle counted as ever, and the reports say which rule):
 *
 *   - the group's stepping shared loops all sit at the backing store,
 *     temporal, and the one over the keys is the innermost of them;
 *   - rows and keys split exactly there (no residuals);
 *   - every tensor of the group follows the rows or the keys, and every
 *     stepping shared loop runs over the rows, the keys, or an index every
 *     tensor follows (attention's heads);
 *   - its operations are masked alike, densities and sparse optimizations
 *     absent (their split counts are not combined).
 *
 * Then every level below the backing store holds tiles of one step, and at
 * the start of a row step every tile changes (a new head, a new row block,
 * or the key block going back to 0 from k - 1 >= 1), except where the step
 * before had only one key step (k = 1) in the same head: the keys' tiles
 * stay.  So, per iteration of
 * the loops around the row steps, with c(k) the count of a row step of k
 * key steps starting on changed tiles, and r what the keys' staying tiles
 * save:
 *
 *     total = sum_i c(k_i) - q r,    q = the row steps with k_i = 1
 *     c(k)  = c(1) + (k - 1) (c(2) - c(1))
 *
 * and the three nests, one row step of 1 and 2 key steps (F1, F2) and the
 * first q + 1 row steps of 1 key step (G: q + 1 row steps, q of them
 * followed by staying keys), give it with whole coefficients:
 *
 *     total = G + (mb - q - 1) F1 + (K - mb) (F2 - F1),   K = sum_i k_i
 *
 * Each nest is the composite mapping with the backing store's loops over
 * rows and keys shortened, on the workload with as many rows and keys.
 * Capacities are the rectangle's: every step holds the same tiles.  The
 * cycles, energies and utilization then come from those counts as the
 * model takes them from any nest's (nm_model_finish_counts: the slowest of
 * the compute and each level's bandwidth over the whole run), not from
 * the nests' own, whose bottlenecks may differ.
 * check_fusion's simulator runs the staircase itself and checks every
 * count. */
#include <config.h>

#include <stdio.h>
#include <string.h>

#include "nestmap/fusion.h"

#define REFUSE(...) (why ? (void)snprintf(why, size, __VA_ARGS__) : (void)0, 0)

/* The first operation of group g whose shared loops step through the keys
 * of its mask, or -1. */
static int stepping_op(const nm_arch *arch, const nm_chain *c, const nm_fused_group *g,
                       const nm_mapping *maps)
{
    for (int i = g->first; i < g->first + g->nops; i++) {
        const nm_chain_op *op = &c->op[i];
        if (!op->masked)
            continue;
        for (int s = g->level + 1; s < arch->nlevels; s++)
            if (maps[i].level[s].tfactor[op->mask_n] * maps[i].level[s].sfactor[op->mask_n] > 1)
                return i;
    }
    return -1;
}

int nm_fused_causal_plan(const nm_arch *arch, const nm_chain *c, const nm_fused_group *g,
                         const nm_mapping *maps, nm_causal_plan *p, char *why, size_t size)
{
    memset(p, 0, sizeof *p);
    int lead = stepping_op(arch, c, g, maps);
    if (lead < 0)
        return 1;
    const nm_chain_op *L = &c->op[lead];
    const char *rows = L->wl.dim[L->mask_m], *keys = L->wl.dim[L->mask_n];
    for (int i = g->first; i < g->first + g->nops; i++) {
        const nm_chain_op *op = &c->op[i];
        if (arch->sparse.given || op->wl.has_density)
            return REFUSE("a causal mask's steps are not skipped with sparse optimizations or "
                          "densities");
        if (!op->masked || strcmp(op->wl.dim[op->mask_m], rows) ||
            strcmp(op->wl.dim[op->mask_n], keys) || op->mask_offset != L->mask_offset)
            return REFUSE("'%s' steps through the keys '%s' of a causal mask that '%s' does "
                          "not have: a group skipping masked steps masks all its operations "
                          "alike", c->op[lead].name, keys, op->name);
    }
    const nm_mapping *m = &maps[lead];
    int top = arch->nlevels - 1, dm = L->mask_m, dn = L->mask_n;
    for (int s = g->level + 1; s < arch->nlevels; s++)
        for (int d = 0; d < L->wl.ndims; d++) {
            const nm_level_map *lm = &m->level[s];
            if (lm->sfactor[d] > 1)
                return REFUSE("the shared loop over '%s' at '%s' is spatial: a group skipping "
                              "the steps a causal mask covers steps in time", L->wl.dim[d],
                              arch->level[s].name);
            if (lm->tfactor[d] > 1 && s != top)
                return REFUSE("the shared loop over '%s' steps at '%s': a group skipping the "
                              "steps a causal mask covers keeps its stepping loops at the "
                              "backing store '%s'", L->wl.dim[d], arch->level[s].name,
                              arch->level[top].name);
            if ((d == dm || d == dn) && (lm->tresidual[d] || lm->sresidual[d]))
                return REFUSE("the shared loop over '%s' at '%s' splits it unevenly: a group "
                              "skipping the steps a causal mask covers splits its rows and "
                              "keys exactly", L->wl.dim[d], arch->level[s].name);
        }
    const nm_level_map *lt = &m->level[top];
    for (int i = g->first; i < g->first + g->nops; i++) {
        const nm_chain_op *op = &c->op[i];
        for (int ds = 0; ds < op->wl.nds; ds++) {
            if (!nm_dataspace_uses(&op->wl.ds[ds], op->mask_m) &&
                !nm_dataspace_uses(&op->wl.ds[ds], op->mask_n))
                return REFUSE("'%s' of '%s' follows neither the rows '%s' nor the keys '%s': "
                              "a group skipping the steps a causal mask covers moves each of "
                              "its tensors by row or key steps", op->wl.ds[ds].name, op->name,
                              rows, keys);
            for (int d = 0; d < L->wl.ndims; d++) {
                int e = nm_workload_dim(&op->wl, L->wl.dim[d]);
                if (lt->tfactor[d] > 1 && d != dm && d != dn && !nm_dataspace_uses(&op->wl.ds[ds], e))
                    return REFUSE("the shared loop over '%s' steps, and '%s' of '%s' does not "
                                  "follow it: a group skipping the steps a causal mask covers "
                                  "steps through rows, keys, and indices every tensor follows",
                                  L->wl.dim[d], op->wl.ds[ds].name, op->name);
            }
        }
    }
    for (int k = 0; k < L->wl.ndims; k++) {
        int d = lt->torder[k]; /* (innermost first) */
        if (lt->tfactor[d] <= 1)
            continue;
        if (d != dn)
            return REFUSE("the shared loop over '%s' runs inside the one over the keys '%s': "
                          "a group skipping the steps a causal mask covers steps through the "
                          "keys innermost", L->wl.dim[d], keys);
        break;
    }
    p->mb = lt->tfactor[dm];
    p->nb = lt->tfactor[dn];
    p->bm = L->wl.bound[dm] / p->mb;
    p->bn = L->wl.bound[dn] / p->nb;
    for (int64_t i = 0; i < p->mb; i++) {
        int64_t k = ((i + 1) * p->bm - 1 + L->mask_offset) / p->bn + 1;
        k = k < p->nb ? k : p->nb;
        p->computed += k;
        p->q += k == 1;
    }
    p->skips = p->computed < p->mb * p->nb;
    return 1;
}

/* Operation i's nest of mf row steps of nf key steps each (plan p) into
 * *st; 0 when the model refuses it (st->invalid says why). */
static int nest(nm_fused_model *fmdl, const nm_fused_map *fm, int i, const nm_causal_plan *p,
                int64_t mf, int64_t nf, nm_stats *st)
{
    const nm_chain_op *op = &fmdl->chain->op[i];
    nm_workload *w = fmdl->causal_wl[i];
    int top = fmdl->arch->nlevels - 1;
    w->bound[op->mask_m] = p->bm * mf;
    w->bound[op->mask_n] = p->bn * nf;
    nm_model_forget(&fmdl->causal[i]);
    nm_mapping m = fm->map[i];
    m.level[top].tfactor[op->mask_m] = mf;
    m.level[top].tfactor[op->mask_n] = nf;
    return nm_model_eval(&fmdl->causal[i], &m, st, NULL);
}

int nm_fused_causal(nm_fused_model *fmdl, const nm_fused_map *fm, nm_fused_stats *out)
{
    if (!fmdl->causal_st)
        return out->valid;
    const nm_chain *c = fmdl->chain;
    nm_stats *f = fmdl->causal_st; /* G, F1, F2 */
    for (int gi = 0; gi < fm->ngroups; gi++) {
        const nm_fused_group *g = &fm->group[gi];
        nm_causal_plan p;
        if (!nm_fused_causal_plan(fmdl->arch, c, g, fm->map, &p, NULL, 0))
            continue; /* (it computes every step: the rectangle counted) */
        for (int i = g->first; p.skips && i < g->first + g->nops; i++) {
            int nd = c->op[i].wl.nds, nl = fmdl->arch->nlevels;
            if (!nest(fmdl, fm, i, &p, p.q + 1, 1, &f[0]) || !nest(fmdl, fm, i, &p, 1, 1, &f[1]) ||
                !nest(fmdl, fm, i, &p, 1, 2, &f[2])) {
                out->valid = 0;
                out->bad_op = i;
                out->bad_group = gi;
                for (int k = 0; k < 3; k++)
                    if (f[k].invalid.kind)
                        out->op[i].invalid = f[k].invalid;
                return 0;
            }
            nm_stats *o = &out->op[i]; /* (its capacities stay the rectangle's) */
            nm_stats_add_times(o, 1, &f[0], o, nl, nd);
            nm_stats_add_times(o, p.mb - p.q - 1, &f[1], NULL, nl, nd);
            nm_stats_add_times(o, p.computed - p.mb, &f[2], &f[1], nl, nd);
            /* cycles, energies and utilization from those counts, as the
             * model takes them from any nest's */
            nm_model_finish_counts(&fmdl->op[i], &fm->map[i], o);
        }
    }
    return 1;
}
