/* sparse.c — densities, gating and skipping (see sparse.h).
 *
 * Semantics learnt from Timeloop's sparse model (NVlabs/timeloop at commit
 * 4cf6d4c: src/sparse-analysis/storage-gs-analyzer.cpp,
 * storage-optimization-combiner.cpp, compute-gs-analyzer.cpp and
 * src/workload/density-models/) and pinned by the conformance corpus
 * (../shared/conformance/sparse, whose README describes them field by
 * field).  Written here; the rounding (which counts are floored, which
 * ceiled, which probabilities are rounded to six decimals) is Timeloop's,
 * since the counts must equal its.
 */
#include "nestmap/sparse.h"

#include <math.h>
#include <string.h>

#include "nestmap/arch.h"
#include "nestmap/mapping.h"
#include "nestmap/model.h"
#include "nestmap/text.h"
#include "nestmap/workload.h"

/* ---- density models ---- */

/* Nonzeros of a hypergeometric tensor: ceil(d*N). */
static uint64_t hyper_nnz(const nm_density *dm, uint64_t N)
{
    return (uint64_t)ceil(dm->d * (double)N);
}

double nm_density_p_empty(const nm_density *dm, uint64_t n, uint64_t N)
{
    if (n == 0)
        return 1.0;
    if (dm->kind == NM_DENSITY_FIXED) {
        /* s*d nonzeros, floor with probability 1 - frac, ceil with frac:
         * empty only when the floor is 0 */
        double exact = (double)n * dm->d;
        return floor(exact) == 0.0 ? 1.0 - (exact - floor(exact)) : 0.0;
    }
    uint64_t r = hyper_nnz(dm, N);
    if (r == 0)
        return 1.0;
    if (n + r > N)
        return 0.0;
    /* C(N-r, n) / C(N, n) = prod_{i<n} (N-r-i) / (N-i) */
    double p = 1.0;
    for (uint64_t i = 0; i < n && p > 1e-300; i++)
        p *= (double)(N - r - i) / (double)(N - i);
    return p;
}

double nm_density_expected(const nm_density *dm, uint64_t n, uint64_t N)
{
    if (dm->kind == NM_DENSITY_FIXED)
        return (double)n * dm->d;
    return N ? (double)n * (double)hyper_nnz(dm, N) / (double)N : 0.0;
}

const char *nm_density_name(const nm_density *dm)
{
    return dm->kind == NM_DENSITY_FIXED ? "fixed_structured" : "hypergeometric";
}

/* ---- parsing ---- */

static nm_status unknown_tensor(nm_error *err, const nm_ynode *at, const nm_workload *wl,
                                const char *name, const char *what)
{
    const char *cands[NM_MAX_DS];
    for (int i = 0; i < wl->nds; i++)
        cands[i] = wl->ds[i].name;
    const char *s = nm_text_suggest(name, cands, (size_t)wl->nds);
    if (s)
        return nm_yerror(err, at, "%s '%s' is not a data space of the problem; did you mean "
                         "'%s'?", what, name, s);
    return nm_yerror(err, at, "%s '%s' is not a data space of the problem", what, name);
}

static nm_status tensor(const nm_ynode *n, const nm_workload *wl, const char *what, int *out,
                        nm_error *err)
{
    const char *s;
    nm_status st = nm_yget_str(n, what, &s, err);
    if (st != NM_OK)
        return st;
    *out = nm_workload_ds(wl, s);
    return *out < 0 ? unknown_tensor(err, n, wl, s, what) : NM_OK;
}

nm_status nm_sparse_parse_densities(nm_density *dens, const nm_workload *wl,
                                    const nm_ynode *node, nm_error *err)
{
    for (int i = 0; i < NM_MAX_DS; i++)
        dens[i] = (nm_density){NM_DENSITY_FIXED, 1.0, 0};
    if (!node || nm_yis_null(node))
        return NM_OK;
    nm_status st = nm_yexpect(node, NM_Y_MAP, "densities", err);
    if (st != NM_OK)
        return st;
    for (size_t i = 0; i < node->n; i++) {
        const nm_ynode *k = nm_ymap_key(node, i), *v = nm_ymap_val(node, i);
        int ds = nm_workload_ds(wl, k->str);
        if (ds < 0)
            return unknown_tensor(err, k, wl, k->str, "density for");
        nm_density *dm = &dens[ds];
        const nm_ynode *dv = v;
        if (v->kind == NM_Y_MAP) {
            static const char *const keys[] = {"distribution", "density", NULL};
            if ((st = nm_ycheck_keys(v, keys, "a density", err)) != NM_OK)
                return st;
            const nm_ynode *dn = nm_ymap_get(v, "distribution");
            dv = nm_ymap_get(v, "density");
            if (!dv)
                return nm_yerror(err, v, "density of '%s' has no 'density' value",
                                 wl->ds[ds].name);
            if (dn) {
                const char *s;
                if ((st = nm_yget_str(dn, "a distribution", &s, err)) != NM_OK)
                    return st;
                if (!strcmp(s, "fixed_structured") || !strcmp(s, "fixed"))
                    dm->kind = NM_DENSITY_FIXED;
                else if (!strcmp(s, "hypergeometric"))
                    dm->kind = NM_DENSITY_HYPERGEOMETRIC;
                else if (!strcmp(s, "banded") || !strcmp(s, "diagonal"))
                    return nm_yerror(err, dn, "the '%s' density model is not modelled yet "
                                     "(fixed_structured and hypergeometric are)", s);
                else if (!strcmp(s, "uniform") || !strcmp(s, "random"))
                    return nm_yerror(err, dn, "unknown density distribution '%s'; nonzeros "
                                     "placed uniformly at random are 'hypergeometric'", s);
                else
                    return nm_yerror(err, dn, "unknown density distribution '%s' (Timeloop's "
                                     "are fixed_structured, hypergeometric and banded)", s);
            }
        }
        if ((st = nm_yget_num(dv, "a density", &dm->d, err)) != NM_OK)
            return st;
        if (!(dm->d >= 0.0 && dm->d <= 1.0))
            return nm_yerror(err, dv, "density of '%s' must be between 0 and 1 (got %g)",
                             wl->ds[ds].name, dm->d);
        dm->given = 1;
    }
    return NM_OK;
}

/* One option {target, condition_on: [...]} (or a group written flat). */
static nm_status parse_option(const nm_ynode *o, const nm_workload *wl, nm_saf_option *opt,
                              nm_error *err)
{
    const nm_ynode *t = nm_ymap_get(o, "target"), *c = nm_ymap_get(o, "condition_on");
    if (!t || !c)
        return nm_yerror(err, o, "an action optimization needs a 'target' and a "
                         "'condition_on' list");
    nm_status st = tensor(t, wl, "target", &opt->target, err);
    if (st != NM_OK)
        return st;
    if (c->kind != NM_Y_SEQ)
        return nm_yerror(err, c, "condition_on must be a list of data spaces");
    opt->ncond = 0;
    for (size_t i = 0; i < c->n; i++) {
        int ds;
        if ((st = tensor(c->items[i], wl, "condition_on", &ds, err)) != NM_OK)
            return st;
        if (opt->ncond >= NM_MAX_DS)
            return nm_yerror(err, c->items[i], "too many condition_on entries");
        opt->cond[opt->ncond++] = (int8_t)ds;
    }
    return NM_OK;
}

static nm_status parse_actions(nm_sparse *sp, int level, const nm_ynode *list,
                               const nm_workload *wl, nm_error *err)
{
    if (list->kind != NM_Y_SEQ)
        return nm_yerror(err, list, "action_optimization must be a list");
    nm_status st;
    for (size_t i = 0; i < list->n; i++) {
        const nm_ynode *e = list->items[i];
        static const char *const keys[] = {"type", "options", "target", "condition_on", NULL};
        if ((st = nm_yexpect(e, NM_Y_MAP, "an action optimization", err)) != NM_OK ||
            (st = nm_ycheck_keys(e, keys, "an action optimization", err)) != NM_OK)
            return st;
        const nm_ynode *tn = nm_ymap_get(e, "type");
        if (!tn)
            return nm_yerror(err, e, "an action optimization needs a 'type' (gating or skipping)");
        const char *type;
        if ((st = nm_yget_str(tn, "type", &type, err)) != NM_OK)
            return st;
        if (sp->ngroups >= NM_MAX_SAF_GROUPS)
            return nm_yerror(err, e, "more than %d action optimizations", NM_MAX_SAF_GROUPS);
        nm_saf_group *g = &sp->group[sp->ngroups];
        memset(g, 0, sizeof *g);
        g->level = level;
        if (!strcmp(type, "gating"))
            g->type = NM_SAF_GATE;
        else if (!strcmp(type, "skipping"))
            g->type = NM_SAF_SKIP;
        else if (!strcmp(type, "skipping_spatial"))
            return nm_yerror(err, tn, "skipping_spatial is not modelled yet (gating and "
                             "skipping are)");
        else {
            static const char *const types[] = {"gating", "skipping", "skipping_spatial"};
            const char *sug = nm_text_suggest(type, types, 3);
            if (sug)
                return nm_yerror(err, tn, "unknown action optimization type '%s'; did you mean "
                                 "'%s'?", type, sug);
            return nm_yerror(err, tn, "unknown action optimization type '%s' (gating, "
                             "skipping or skipping_spatial)", type);
        }
        const nm_ynode *opts = nm_ymap_get(e, "options");
        if (opts) {
            if (opts->kind != NM_Y_SEQ || opts->n == 0)
                return nm_yerror(err, opts, "options must be a non-empty list");
            if (opts->n > NM_MAX_SAF_OPTIONS)
                return nm_yerror(err, opts, "at most %d options in one group",
                                 NM_MAX_SAF_OPTIONS);
            for (size_t j = 0; j < opts->n; j++) {
                static const char *const okeys[] = {"target", "condition_on", NULL};
                if ((st = nm_yexpect(opts->items[j], NM_Y_MAP, "an option", err)) != NM_OK ||
                    (st = nm_ycheck_keys(opts->items[j], okeys, "an option", err)) != NM_OK ||
                    (st = parse_option(opts->items[j], wl, &g->opt[g->nopt++], err)) != NM_OK)
                    return st;
            }
        } else if ((st = parse_option(e, wl, &g->opt[g->nopt++], err)) != NM_OK) {
            return st;
        }
        sp->ngroups++;
    }
    return NM_OK;
}

static nm_status parse_compute(nm_sparse *sp, const nm_ynode *list, nm_error *err)
{
    if (list->kind != NM_Y_SEQ)
        return nm_yerror(err, list, "compute_optimization must be a list");
    for (size_t i = 0; i < list->n; i++) {
        const nm_ynode *e = list->items[i], *tn;
        const char *type;
        static const char *const keys[] = {"type", NULL};
        nm_status st;
        if ((st = nm_yexpect(e, NM_Y_MAP, "a compute optimization", err)) != NM_OK ||
            (st = nm_ycheck_keys(e, keys, "a compute optimization", err)) != NM_OK)
            return st;
        if (!(tn = nm_ymap_get(e, "type")))
            return nm_yerror(err, e, "a compute optimization needs a 'type'");
        if ((st = nm_yget_str(tn, "type", &type, err)) != NM_OK)
            return st;
        if (!strcmp(type, "gating") || !strcmp(type, "gate_on_zero_operand"))
            sp->compute_gate = 1;
        else if (!strcmp(type, "skipping") || !strcmp(type, "skip_on_not_aligned_operands"))
            sp->compute_skip = 1;
        else
            return nm_yerror(err, tn, "unknown compute optimization type '%s' (gating or "
                             "skipping)", type);
    }
    return NM_OK;
}

nm_status nm_sparse_parse(nm_sparse *sp, const nm_arch *arch, const nm_workload *wl,
                          const nm_ynode *node, nm_error *err)
{
    memset(sp, 0, sizeof *sp);
    if (!node || nm_yis_null(node))
        return NM_OK;
    sp->given = 1;
    static const char *const keys[] = {"version", "targets", NULL};
    nm_status st;
    if ((st = nm_yexpect(node, NM_Y_MAP, "sparse_optimizations", err)) != NM_OK ||
        (st = nm_ycheck_keys(node, keys, "sparse_optimizations", err)) != NM_OK)
        return st;
    const nm_ynode *targets = nm_ymap_get(node, "targets");
    if (!targets || nm_yis_null(targets))
        return NM_OK;
    if (targets->kind != NM_Y_SEQ)
        return nm_yerror(err, targets, "sparse_optimizations targets must be a list");
    for (size_t i = 0; i < targets->n; i++) {
        const nm_ynode *t = targets->items[i];
        static const char *const tkeys[] = {"name", "target", "action_optimization",
                                            "representation_format", "compute_optimization",
                                            NULL};
        if ((st = nm_yexpect(t, NM_Y_MAP, "a sparse optimization target", err)) != NM_OK ||
            (st = nm_ycheck_keys(t, tkeys, "a sparse optimization target", err)) != NM_OK)
            return st;
        const nm_ynode *nn = nm_ymap_get(t, "name");
        if (!nn)
            nn = nm_ymap_get(t, "target");
        if (!nn)
            return nm_yerror(err, t, "a sparse optimization target needs a 'name'");
        const char *name;
        if ((st = nm_yget_str(nn, "a target name", &name, err)) != NM_OK)
            return st;
        int level = nm_arch_level(arch, name);
        int arith = !strcmp(name, arch->arith.name);
        if (level < 0 && !arith) {
            const char *s = nm_arch_suggest_level(arch, name);
            if (s)
                return nm_yerror(err, nn, "sparse optimization target '%s' is not a level of the "
                                 "architecture; did you mean '%s'?", name, s);
            return nm_yerror(err, nn, "sparse optimization target '%s' is not a level of the "
                             "architecture", name);
        }
        const nm_ynode *x;
        if ((x = nm_ymap_get(t, "representation_format")) && !nm_yis_null(x))
            return nm_yerror(err, x, "compressed representation formats (metadata) are not "
                             "modelled yet (densities, gating and skipping are)");
        if ((x = nm_ymap_get(t, "action_optimization")) && !nm_yis_null(x)) {
            if (arith)
                return nm_yerror(err, x, "'%s' is the arithmetic level: give it "
                                 "compute_optimization, and action_optimization to storage "
                                 "levels", name);
            if ((st = parse_actions(sp, level, x, wl, err)) != NM_OK)
                return st;
            sp->active = 1;
        }
        if ((x = nm_ymap_get(t, "compute_optimization")) && !nm_yis_null(x)) {
            if (!arith)
                return nm_yerror(err, x, "compute_optimization belongs to the arithmetic level "
                                 "'%s', not to '%s'", arch->arith.name, name);
            if ((st = parse_compute(sp, x, err)) != NM_OK)
                return st;
            sp->active = 1;
        }
    }
    if (!sp->active)
        return NM_OK;
    /* The computes are classified by their two operands (Timeloop's sparse
     * model handles two). */
    int nops = 0, nout = 0;
    for (int ds = 0; ds < wl->nds; ds++) {
        if (wl->ds[ds].read_write) {
            nout++;
        } else if (nops++ == 0) {
            sp->op_a = ds;
        } else {
            sp->op_b = ds;
        }
    }
    if (nops != 2 || nout != 1)
        return nm_yerror(err, node, "sparse optimizations need a problem with two operands and "
                         "one output, as Timeloop's sparse model does (this one has %d and %d)",
                         nops, nout);
    /* Timeloop applies every gating group (levels inner to outer) before any
     * skipping group; keep the written order within a level. */
    for (int i = 1; i < sp->ngroups; i++) {
        nm_saf_group g = sp->group[i];
        int j = i;
        while (j > 0 && (sp->group[j - 1].type > g.type ||
                         (sp->group[j - 1].type == g.type && sp->group[j - 1].level > g.level))) {
            sp->group[j] = sp->group[j - 1];
            j--;
        }
        sp->group[j] = g;
    }
    return NM_OK;
}

/* ---- the analysis ---- */

/* Timeloop's complete loop nest: per storage level, innermost first, a loop
 * for every dimension of its fan-out (when it has one) in the spatial
 * order, then a loop for every dimension in the temporal order, trivial
 * loops included. */
typedef struct cnest {
    int n;
    int first[NM_MAX_LEVELS], last[NM_MAX_LEVELS];
    int8_t dim[NM_MAX_LOOPS], spatial[NM_MAX_LOOPS], level[NM_MAX_LOOPS];
    int64_t f[NM_MAX_LOOPS];
} cnest;

static void build_cnest(cnest *c, const nm_arch *arch, const nm_workload *wl,
                        const nm_mapping *m)
{
    c->n = 0;
    for (int s = 0; s < arch->nlevels; s++) {
        const nm_level_map *lm = &m->level[s];
        c->first[s] = c->n;
        if (arch->level[s].fanoutX * arch->level[s].fanoutY > 1)
            for (int i = 0; i < wl->ndims; i++) {
                int d = lm->sorder[i];
                c->dim[c->n] = (int8_t)d;
                c->f[c->n] = lm->sfactor[d];
                c->spatial[c->n] = 1;
                c->level[c->n++] = (int8_t)s;
            }
        for (int i = 0; i < wl->ndims; i++) {
            int d = lm->torder[i];
            c->dim[c->n] = (int8_t)d;
            c->f[c->n] = lm->tfactor[d];
            c->spatial[c->n] = 0;
            c->level[c->n++] = (int8_t)s;
        }
        c->last[s] = c->n - 1;
    }
}

/* Extents of the operation space covered by loops 0..i (all 1 for i < 0). */
static void mold(const cnest *c, int i, int ndims, int64_t *ext)
{
    for (int d = 0; d < ndims; d++)
        ext[d] = 1;
    for (int j = 0; j <= i; j++)
        ext[c->dim[j]] *= c->f[j];
}

/* Elements of data space ds in the box of the given extents. */
static uint64_t box(const nm_dataspace *ds, const int64_t *ext)
{
    uint64_t v = 1;
    for (int r = 0; r < ds->nranks; r++) {
        int64_t e = 1;
        for (int t = 0; t < ds->rank[r].nterms; t++)
            e += ds->rank[r].term[t].coef * (ext[ds->rank[r].term[t].dim] - 1);
        v *= (uint64_t)e;
    }
    return v;
}

static int uses(const nm_dataspace *ds, int dim)
{
    for (int r = 0; r < ds->nranks; r++)
        for (int t = 0; t < ds->rank[r].nterms; t++)
            if (ds->rank[r].term[t].dim == dim && ds->rank[r].term[t].coef != 0)
                return 1;
    return 0;
}

static int kept(const nm_stats *st, int s, int ds)
{
    return st->level[s].ds[ds].utilized_capacity > 0;
}

/* What one option would do: the probability that the target's access is
 * ineffectual, the level that holds the target (*tl) and the read energy
 * that probability saves there.  0 when the target has no level at or above
 * the named one. */
static int impact(const nm_arch *arch, const nm_workload *wl, const cnest *c,
                  const nm_stats *st, int L, const nm_saf_option *o, double *p, int *tl,
                  double *savings)
{
    int S = arch->nlevels, nd = wl->ndims, T = o->target;
    const nm_dataspace *tds = &wl->ds[T];
    int t = L;
    while (t < S && !kept(st, t, T))
        t++;
    if (t == S)
        return 0;
    int child = t - 1;
    while (child >= 0 && !kept(st, child, T))
        child--;
    /* The target loop: the innermost loop above the child whose step brings
     * a new target tile; with no child, the fan-out to the arithmetic units
     * (or one compute, when level 0 has no fan-out). */
    int tloop = -1, scalar = 0;
    for (int l = child + 1; l <= t && tloop < 0; l++)
        for (int i = c->first[l]; i <= c->last[l] && tloop < 0; i++) {
            if (child >= 0) {
                if (c->f[i] > 1 && uses(tds, c->dim[i]))
                    tloop = i;
            } else if (i + 1 > c->last[l] || !c->spatial[i + 1]) {
                tloop = i;
                scalar = !c->spatial[i];
            } else if (c->f[i] > 1 && uses(tds, c->dim[i])) {
                tloop = i;
            }
        }
    if (tloop < 0)
        tloop = c->last[t];
    int64_t text[NM_MAX_DIMS], cext[NM_MAX_DIMS];
    mold(c, scalar ? -1 : tloop, nd, text);
    memcpy(cext, text, sizeof cext);
    /* The condition granule grows by the fan-outs above the target loop up
     * to the target's level (and, for a spatial target loop, by the
     * temporal loops of other dimensions before the next of its own). */
    int rel[NM_MAX_LOOPS], nrel = 0;
    rel[nrel++] = tloop;
    int is_spatial = c->spatial[tloop], located = !is_spatial;
    for (int i = tloop + 1; i <= c->last[t]; i++) {
        if (c->f[i] <= 1)
            continue;
        int d = c->dim[i];
        int extra = !located && !c->spatial[i] && child >= 0 && !uses(tds, d);
        if (c->spatial[i] || extra) {
            cext[d] *= c->f[i];
            rel[nrel++] = i;
        }
        if (is_spatial && !c->spatial[i] && (child < 0 || uses(tds, d)))
            located = 1;
    }
    double effectual = 1.0;
    for (int k = 0; k < o->ncond; k++) {
        int C = o->cond[k];
        const nm_dataspace *cds = &wl->ds[C];
        double cofac[NM_MAX_DIMS], agg = 1.0;
        int co[NM_MAX_DIMS] = {0}, seen = 0, ineffective = 0;
        for (int d = 0; d < nd; d++)
            cofac[d] = 1.0;
        for (int r = 0; r < nrel && !scalar; r++) {
            int d = c->dim[rel[r]];
            if (is_spatial && seen && uses(cds, d)) {
                ineffective = 1;
                break;
            }
            if (uses(tds, d) && uses(cds, d)) {
                cofac[d] *= (double)c->f[rel[r]];
                agg *= (double)c->f[rel[r]];
                co[d] = seen = 1;
            }
        }
        if (ineffective)
            continue;
        int64_t te[NM_MAX_DIMS], ce[NM_MAX_DIMS];
        memcpy(te, text, sizeof te);
        memcpy(ce, cext, sizeof ce);
        double gran = (double)box(tds, te);
        double scaling = ceil((double)arch->level[t].block_size / (gran / agg));
        for (int d = 0; d < nd; d++) {
            if (!co[d])
                continue;
            double eff = cofac[d] / scaling;
            te[d] = (int64_t)ceil((double)te[d] / eff);
            ce[d] = (int64_t)ceil((double)ce[d] / eff);
            scaling /= cofac[d];
        }
        if (scaling > 1.0) {
            int d = c->dim[tloop];
            ce[d] = (int64_t)((double)ce[d] * scaling);
            te[d] = (int64_t)((double)te[d] * scaling);
        }
        uint64_t n = box(cds, ce);
        effectual *= 1.0 - nm_density_p_empty(&wl->density[C], n, nm_workload_ds_size(wl, C));
    }
    *p = 1.0 - effectual;
    *tl = t;
    const nm_level *TL = &arch->level[t];
    *savings = TL->e_read / (double)TL->block_size *
               (double)st->level[t].ds[T].utilized_capacity * *p;
    return 1;
}

/* Part of a level's own reads and updates becomes gated or skipped (type
 * 0 or 1), and the temporal reductions follow the updates. */
static void apply_local(nm_ds_stats *d, double p, int type, int rw)
{
    double r = (double)d->actual[NM_ACC_READ], u = (double)d->actual[NM_ACC_UPDATE];
    uint64_t dr = (uint64_t)(rw ? ceil(r * p) : floor(r * p));
    uint64_t du = (uint64_t)floor(u * p);
    uint64_t *to = type == NM_SAF_GATE ? d->gated : d->skipped;
    to[NM_ACC_READ] += dr;
    to[NM_ACC_UPDATE] += du;
    d->actual[NM_ACC_READ] -= dr;
    d->actual[NM_ACC_UPDATE] -= du;
    if (rw && d->updates)
        d->temporal_reductions = (uint64_t)ceil((double)d->temporal_reductions *
                                                (double)d->actual[NM_ACC_UPDATE] /
                                                (double)d->updates);
}

static double round6(double x)
{
    return round(x * 1e6) / 1e6;
}

/* The computes that remain, split by what their operands hold (exists and
 * nonzero, exists and zero; "absent" needs metadata, not modelled yet). */
static void classify_computes(const nm_sparse *sp, const nm_workload *wl, const int *saf,
                              const double *cond_p, double total, nm_stats *out)
{
    int a = sp->op_a, b = sp->op_b;
    double da = round6(round6(nm_density_expected(&wl->density[a], 1,
                                                  nm_workload_ds_size(wl, a))));
    double db = round6(round6(nm_density_expected(&wl->density[b], 1,
                                                  nm_workload_ds_size(wl, b))));
    /* A storage optimization on an operand's innermost level already removed
     * the computes whose condition was empty: the other operand's density
     * among those left is higher. */
    double nza = da, nzb = db;
    if (saf[b])
        nza = da / (1.0 - cond_p[b]);
    if (saf[a])
        nzb = db / (1.0 - cond_p[a]);
    nza = fmin(fmax(nza, 0.0), 1.0);
    nzb = fmin(fmax(nzb, 0.0), 1.0);
    double za = 1.0 - nza, zb = 1.0 - nzb;
    double random = total * nza * nzb, gated = 0.0;
    double zero = total * (nza * zb + za * nzb + za * zb);
    if (sp->compute_gate)
        gated += zero;
    else
        random += zero;
    (void)random;
    uint64_t g = (uint64_t)floor(gated);
    out->gated_computes = g;
    out->skipped_computes = 0;
    out->computes = (uint64_t)total - g;
}

void nm_sparse_apply(const nm_sparse *sp, const nm_arch *arch, const nm_workload *wl,
                     const nm_mapping *m, nm_stats *out)
{
    int S = arch->nlevels;
    out->sparse = 1;
    out->algorithmic_computes = out->computes;
    out->gated_computes = out->skipped_computes = 0;
    for (int s = 0; s < S; s++)
        for (int ds = 0; ds < wl->nds; ds++) {
            nm_ds_stats *d = &out->level[s].ds[ds];
            d->actual[NM_ACC_READ] = d->reads;
            d->actual[NM_ACC_FILL] = d->fills;
            d->actual[NM_ACC_UPDATE] = d->updates;
            memset(d->gated, 0, sizeof d->gated);
            memset(d->skipped, 0, sizeof d->skipped);
        }
    if (!sp->active)
        return;

    /* Each group's best option marks its target's level with a type and the
     * probability that an access there is ineffectual; a later group on the
     * same tensor and level replaces it when that probability is higher. */
    cnest c;
    build_cnest(&c, arch, wl, m);
    int8_t type[NM_MAX_LEVELS][NM_MAX_DS];
    double prob[NM_MAX_LEVELS][NM_MAX_DS];
    memset(type, -1, sizeof type);
    for (int g = 0; g < sp->ngroups; g++) {
        const nm_saf_group *G = &sp->group[g];
        double best = 0.0, bp = 0.0;
        int bt = -1, btl = -1;
        for (int k = 0; k < G->nopt; k++) {
            double p, sav;
            int tl;
            if (!impact(arch, wl, &c, out, G->level, &G->opt[k], &p, &tl, &sav))
                continue;
            if (sav >= best || bt < 0) {
                best = sav;
                bp = p;
                bt = G->opt[k].target;
                btl = tl;
            }
        }
        if (bt < 0)
            continue;
        if (type[btl][bt] < 0 || prob[btl][bt] < bp) {
            type[btl][bt] = (int8_t)G->type;
            prob[btl][bt] = bp;
        }
    }

    /* Propagation down each tensor's chain: the levels below an optimized
     * one lose those accesses outright, down to the next optimized level,
     * which applies what its own probability adds; the innermost one of an
     * operand removes computes. */
    double computes = (double)out->algorithmic_computes;
    int saf[NM_MAX_DS] = {0};
    double cond_p[NM_MAX_DS] = {0};
    for (int ds = 0; ds < wl->nds; ds++) {
        int rw = wl->ds[ds].read_write;
        double acc[NM_MAX_LEVELS][3];
        int done[NM_MAX_LEVELS] = {0};
        for (int s = 0; s < S; s++) {
            const nm_ds_stats *d = &out->level[s].ds[ds];
            acc[s][NM_ACC_READ] = (double)d->reads;
            acc[s][NM_ACC_FILL] = (double)d->fills;
            acc[s][NM_ACC_UPDATE] = (double)d->updates;
        }
        for (int l = S - 1; l >= 0; l--) {
            if (type[l][ds] < 0)
                continue;
            double p = prob[l][ds];
            int j;
            for (j = l - 1; j >= 0; j--) {
                for (int a = 0; a < 3; a++)
                    acc[j][a] -= floor(acc[j][a] * p);
                if (type[j][ds] >= 0) {
                    nm_ds_stats *d = &out->level[j].ds[ds];
                    for (int a = 0; a < 3; a++)
                        d->actual[a] = (uint64_t)acc[j][a];
                    apply_local(d, 1.0 - (1.0 - prob[j][ds]) / (1.0 - p), type[j][ds], rw);
                    done[j] = 1;
                    break;
                }
            }
            if (!done[l]) {
                nm_ds_stats *d = &out->level[l].ds[ds];
                for (int a = 0; a < 3; a++)
                    d->actual[a] = (uint64_t)acc[l][a];
                apply_local(d, p, type[l][ds], rw);
                done[l] = 1;
            }
            if (j < 0 && !rw) {
                computes -= floor(computes * p);
                saf[ds] = 1;
                cond_p[ds] = round6(p);
            }
        }
        for (int s = 0; s < S; s++) {
            if (type[s][ds] >= 0)
                continue;
            nm_ds_stats *d = &out->level[s].ds[ds];
            for (int a = 0; a < 3; a++)
                d->actual[a] = (uint64_t)acc[s][a];
            d->temporal_reductions =
                d->updates == 0 ? 0
                                : (uint64_t)ceil((double)d->temporal_reductions *
                                                 (double)d->actual[NM_ACC_UPDATE] /
                                                 (double)d->updates);
        }
    }
    classify_computes(sp, wl, saf, cond_p, computes, out);

    /* Address generation follows what reaches the storage: actual and gated
     * accesses (skipped ones generate none). */
    for (int s = 0; s < S; s++)
        for (int ds = 0; ds < wl->nds; ds++) {
            nm_ds_stats *d = &out->level[s].ds[ds];
            if (!d->address_generations)
                continue;
            int k = wl->ds[ds].read_write ? NM_ACC_UPDATE : NM_ACC_READ;
            d->address_generations = d->actual[k] + d->gated[k] + d->actual[NM_ACC_FILL] +
                                     d->gated[NM_ACC_FILL];
        }
}
