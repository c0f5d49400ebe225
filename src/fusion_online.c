/* fusion_online.c — FlashAttention's online softmax in fused groups
 * (fusion.h).
 *
 * The softmax in parts takes a row's max before its exponentials, so a
 * fused group must hold whole rows of scores.  The online form (Milakov
 * and Gimelshein 2018; FlashAttention, Dao et al. 2022, Algorithm 1)
 * takes the exponentials of each block of keys against the running max of
 * the blocks seen so far, and when a later block raises the max it
 * rescales what the row has summed: with m the max before the block and
 * m' after it, the row sum l and the partial output u become
 *
 *     l <- exp(m - m') l + sum_n exp(s_n - m')
 *     u <- exp(m - m') u + sum_n exp(s_n - m') v_n
 *
 * The chain writes it as an exponential with `online: n` (its einsum
 * E[h,m,n] = S[h,m,n]) and the operations summing E over n (the row sum
 * L[h,m], the output U[h,m,d]).  What they compute besides their points:
 *
 *   - the running max: a compare per exponential computed;
 *   - per row, a correction factor exp(m - m') for each block of keys
 *     after the row's first, on the exponential's units;
 *   - per element of each consumer's partial sums (L: 1 a row, U: d), a
 *     multiply for each such block, on that consumer's units.
 *
 * A row's blocks are the group's steps over n: the product of the shared
 * loops over n above the fusion level (within a step each operation runs
 * over the whole step's tile in turn, so the step's scores are all there
 * before its exponentials, and its block max is known).  A group stepping
 * through no blocks of n (or an operation alone) has one block per row:
 * the compares only.  Under a causal mask a group skipping masked steps
 * computes k_i key blocks in row step i (fusion_causal.c), so the rows
 * correct sum_i (k_i - 1) times.  The energies are the design's figures
 * for a compare, an exponential and a multiply (nm_arith_op_energy); the
 * cycles, one an operation per unit the operation uses, run after its
 * step's points, and the operation's cycles and leakage follow from them
 * as from any counts (nm_model_finish_counts).  A consumer summing E over
 * n in another group than the exponential's would hold sums against
 * maxes it never saw: a group stepping through n must hold them all
 * (fusion.c's share_problem).
 *
 * check_fusion's online_agrees counts every compare, correction and
 * rescaled element on the simulator's schedule and checks these. */
#include <config.h>

#include <string.h>

#include "nestmap/estimate.h"
#include "nestmap/fusion.h"

/* The elements of op's output. */
static uint64_t out_elements(const nm_chain_op *op)
{
    const nm_dataspace *o = &op->wl.ds[op->out];
    uint64_t n = 1;
    for (int r = 0; r < o->nranks; r++)
        n *= (uint64_t)op->wl.bound[o->rank[r].term[0].dim];
    return n;
}

int nm_chain_rescales(const nm_chain *c, int j, int *ds)
{
    const nm_chain_op *op = &c->op[j];
    for (int k = 0; k < op->wl.nds; k++) {
        int p = op->producer[k];
        if (p < 0 || !c->op[p].online)
            continue;
        int d = nm_workload_dim(&op->wl, c->op[p].wl.dim[c->op[p].online_dim]);
        if (nm_dataspace_uses(&op->wl.ds[k], d) && !nm_dataspace_uses(&op->wl.ds[op->out], d)) {
            if (ds)
                *ds = k;
            return p;
        }
    }
    return -1;
}

nm_status nm_chain_online_link(const nm_chain *c, nm_error *err)
{
    for (int j = 0; j < c->nops; j++) {
        int p = nm_chain_rescales(c, j, NULL);
        if (p < 0)
            continue;
        const nm_chain_op *e = &c->op[p], *op = &c->op[j];
        const nm_dataspace *o = &e->wl.ds[e->out];
        for (int r = 0; r < o->nranks; r++) {
            int d = o->rank[r].term[0].dim;
            if (d == e->online_dim)
                continue;
            int dj = nm_workload_dim(&op->wl, e->wl.dim[d]);
            if (dj < 0 || !nm_dataspace_uses(&op->wl.ds[op->out], dj))
                return nm_yerror(err, op->node, "'%s' sums the online exponentials '%s' over "
                                 "'%s' but its output '%s' lacks their index '%s': the "
                                 "rescaling of partial sums is per row, so a consumer "
                                 "summing them over the keys keeps every other index",
                                 op->name, o->name, e->wl.dim[e->online_dim],
                                 op->wl.ds[op->out].name, e->wl.dim[d]);
        }
    }
    return NM_OK;
}

/* Charges operation i ops operations costing pj in all: their cycles on
 * the units it uses, after its points, and their energy. */
static void charge(nm_fused_model *fmdl, const nm_fused_map *fm, int i, uint64_t ops, double pj,
                   nm_stats *o)
{
    if (!ops)
        return;
    uint64_t u = o->arith_utilized ? o->arith_utilized : 1, extra = ops / u + (ops % u != 0);
    o->compute_cycles += extra;
    if (fmdl->op[i].sparse) /* (a sparse design's finish takes its compute cycles from
                             * its computes: the extra ones run after them, every level
                             * waiting) */
        o->cycles += extra;
    else
        nm_model_finish_counts(&fmdl->op[i], &fm->map[i], o);
    o->compute_energy += pj;
    o->energy += pj;
}

void nm_fused_online_count(nm_fused_model *fmdl, const nm_fused_map *fm, nm_fused_stats *out)
{
    for (int gi = 0; gi < fm->ngroups; gi++)
        nm_fused_online_group(fmdl, fm, gi, out);
}

void nm_fused_online_group(nm_fused_model *fmdl, const nm_fused_map *fm, int gi,
                           nm_fused_stats *out)
{
    const nm_chain *c = fmdl->chain;
    const nm_arch *arch = fmdl->arch;
    const nm_fused_group *g = &fm->group[gi];
    int end = g->first + g->nops;
    const char *how;
    memset(&out->online[g->first], 0, (size_t)g->nops * sizeof out->online[0]);
    for (int i = g->first; i < end; i++) {
        const nm_chain_op *op = &c->op[i];
        if (!op->online)
            continue;
        int d = op->online_dim;
        int64_t blocks = 1;
        for (int s = g->level + 1; s < arch->nlevels; s++)
            blocks *= fm->map[i].level[s].tfactor[d] * fm->map[i].level[s].sfactor[d];
        uint64_t rows = out_elements(op) / (uint64_t)op->wl.bound[d];
        uint64_t corrections = rows * (uint64_t)(blocks - 1);
        nm_causal_plan p;
        if (op->masked && nm_fused_causal_plan(arch, c, g, fm->map, &p, NULL, 0) && p.skips)
            corrections = (uint64_t)(p.computed - p.mb) * (rows / (uint64_t)p.mb);
        nm_fused_online *x = &out->online[i];
        x->blocks = blocks;
        x->compares = out->op[i].computes;
        x->exps = corrections;
        x->energy = (double)x->compares * nm_arith_op_energy(&arch->arith, NM_OP_MAX, &how) +
                    (double)x->exps * nm_arith_op_energy(&arch->arith, NM_OP_EXP, &how);
        charge(fmdl, fm, i, x->compares + x->exps, x->energy, &out->op[i]);
        /* (the sums rescaled: in the group, where a group stepping
         * through the keys must hold them, share_problem's rule 5) */
        for (int j = i + 1; corrections && j < end; j++) {
            if (nm_chain_rescales(c, j, NULL) != i)
                continue;
            nm_fused_online *y = &out->online[j];
            y->muls = corrections * (out_elements(&c->op[j]) / rows);
            y->energy = (double)y->muls * nm_arith_op_energy(&arch->arith, NM_OP_MUL, &how);
            charge(fmdl, fm, j, y->muls, y->energy, &out->op[j]);
        }
    }
}
