/* fusion_search.c — searching a chain's fused mappings; see fusion.h.
 *
 * The search splits as the model does.  Given a group of consecutive
 * operations fused at the level just below the backing store, and its
 * shared loops (a factor and an order for each index the group may share),
 * every tile at the fusion level is fixed, and with it every
 * backing-store access: the shared tiling alone decides the traffic the
 * fusion is for.  What is left are the operations' own mappings of the
 * fusion level and below, each searched by the single-Einsum search on its
 * composite mapping with the shared loops pinned by constraints.  So:
 *
 *   1. every operation alone: a plain search (the unfused run);
 *   2. every range of two or more consecutive operations: every shared
 *      tiling scored by the group's backing-store energy with each
 *      operation's own loops all at the fusion level (exact traffic, and
 *      the fusion level's capacity checked), the best few searched for
 *      the operations' own mappings and evaluated exactly;
 *   3. every cut of the chain into such ranges: the totals, and the best
 *      by the search's metric.
 *
 * Everything runs in a fixed order with the search's seed, so the result
 * depends on the options only (not on --threads, as the searches do not).
 */
#include <config.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nestmap/alloc.h"
#include "nestmap/fusion.h"
#include "nestmap/job.h"
#include "nestmap/mapspace.h"
#include "nestmap/pcg32.h"

/* SHORTLIST: tilings whose own mappings are searched; MAX_TRIED: tilings
 * scored at most, in enumeration order (so the result stays
 * deterministic), however many factor splits and orders a group has. */
enum { SHORTLIST = 3, MAX_SHARED = 6, MAX_DIV = 64, MAX_TRIED = 1000000,
       EXHAUSTIVE_MAX = 1 << 22, MAX_STEPS = 6, MAX_VARIANTS = 1 + 4 * MAX_STEPS + MAX_STEPS };

/* The best mapping found for a range of operations as one group. */
typedef struct range_best {
    int ok;
    nm_fused_group g;
    nm_mapping map[NM_MAX_OPS]; /* composite mappings of the range's operations */
    uint32_t onchip[NM_MAX_OPS];
    nm_fused_sum sum;
} range_best;

/* A shared tiling: a factor per shareable index, and the order of the
 * loops (innermost first). */
typedef struct tiling {
    int variant;    /* of the range (see variant) */
    int64_t f[MAX_SHARED];
    int8_t order[MAX_SHARED];
    double score;   /* the group's backing-store energy (pJ) */
    int64_t steps;
} tiling;

/* The single-operation searches already run (nm_fused_seed: the same
 * search is not run twice, as a range's operation often gets the tiling it
 * had in a shorter range), and the result's seeds in the end. */
typedef nm_fused_seed memo;

typedef struct ctx {
    const nm_arch *arch;
    const nm_chain *c;          /* the chain, or the variant of it being searched */
    const nm_ynode *cons, *more; /* the user's constraints */
    const nm_search_opts *o;
    nm_fused_model *fmdl;       /* c's model */
    nm_fused_stats *st;     /* scratch stats */
    nm_fused_map *scratch;  /* scratch map of one group */
    nm_fused_result *res;
    memo *memo;
    int nmemo, capmemo;
    const nm_fused_seed *warm;  /* the search before's seeds (nwarm) */
    int nwarm;
} ctx;

static double metric_of(const nm_search_opts *o, const nm_fused_sum *s)
{
    return nm_metric_value(o->metric[0], s->energy, (double)s->cycles, (double)s->backing);
}

/* Evaluates group g's operations on their composite mappings maps (and
 * intermediates onchip, both indexed from g->first) into x->st, with the
 * group's capacity; fills *sum.  Returns validity. */
static int eval_group(ctx *x, const nm_fused_group *g, const nm_mapping *maps,
                      const uint32_t *onchip, nm_fused_sum *sum)
{
    memset(sum, 0, sizeof *sum);
    nm_fused_map *fm = x->scratch;
    fm->ngroups = 1;
    fm->group[0] = *g;
    for (int i = g->first; i < g->first + g->nops; i++) {
        fm->map[i] = maps[i - g->first];
        fm->onchip[i] = onchip[i - g->first];
        fm->group_of[i] = 0;
    }
    /* (steps a retained halo allows: most orders of the shared loops not) */
    int retain = nm_fused_group_retains(g);
    char why[NM_ERROR_MSG_MAX];
    if (retain && !nm_fused_retain_ok(x->arch, x->c, g, fm->map, why, sizeof why))
        return 0;
    for (int i = g->first; i < g->first + g->nops; i++)
        if (!nm_model_eval(&x->fmdl->op[i], &maps[i - g->first], &x->st->op[i], NULL))
            return 0;
    if (!nm_fused_group_fits(x->fmdl, fm, 0, x->st))
        return 0;
    x->st->valid = 1; /* (causal masks: the steps it skips; retained halos: its
                       * producers' first steps; online softmaxes: the running
                       * max and the rescaling) */
    if (!nm_fused_causal(x->fmdl, fm, x->st) ||
        (retain && !nm_fused_first_steps(x->fmdl, fm, x->st)))
        return 0;
    nm_fused_online_group(x->fmdl, fm, 0, x->st);
    for (int i = g->first; i < g->first + g->nops; i++)
        nm_fused_sum_add(sum, &x->st->op[i]);
    return 1;
}

/* The entries of the user's constraints (a list, or a map holding
 * `targets:`) that target level F or below, appended to list. */
static nm_status keep_below(ctx *x, nm_ydoc *doc, nm_ynode *list, const nm_ynode *src, int F,
                            nm_error *err)
{
    if (!src || nm_yis_null(src))
        return NM_OK;
    if (src->kind == NM_Y_MAP)
        src = nm_ymap_get(src, "targets");
    if (!src || src->kind != NM_Y_SEQ)
        return NM_OK;
    for (size_t k = 0; k < src->n; k++) {
        const nm_ynode *e = src->items[k];
        const nm_ynode *tn = e->kind == NM_Y_MAP ? nm_ymap_get(e, "target") : NULL;
        const nm_ynode *ty = e->kind == NM_Y_MAP ? nm_ymap_get(e, "type") : NULL;
        int l = tn && tn->kind == NM_Y_SCALAR
                    ? nm_arch_target(x->arch, tn->str, ty && ty->kind == NM_Y_SCALAR &&
                                                           !strcmp(ty->str, "spatial"))
                    : -1;
        if (l > F)
            continue; /* the shared loops decide the levels above */
        if (nm_yseq_append(doc, list, (nm_ynode *)e) != NM_OK)
            return nm_error_set(err, NM_ERR_NOMEM, NULL, 0, 0, "out of memory");
    }
    return NM_OK;
}

/* What the search before found under the same key (nm_fused_seed), or
 * NULL. */
static const nm_fused_seed *seed_of(const ctx *x, int i, int share, uint32_t onchip,
                                    const char *pins)
{
    for (int k = 0; k < x->nwarm; k++) {
        const nm_fused_seed *e = &x->warm[k];
        if (e->found && e->op == i && e->share == share && e->onchip == onchip &&
            !strcmp(e->pins, pins))
            return e;
    }
    return NULL;
}

/* Searches operation i's mapping under the constraints cons and more,
 * starting warm from seed's mappings when not NULL: into starts, the best
 * first (nm_search_result_starts), *found of them (0: none found). */
static nm_status search_op(ctx *x, const nm_arch *arch, int i, const nm_ynode *cons,
                           const nm_ynode *more, uint32_t onchip, const nm_fused_seed *seed,
                           nm_mapping *starts, int *found, nm_error *err)
{
    nm_arch *own = nm_fused_op_arch(arch, x->c, i, err); /* its kind of compute */
    if (own)
        arch = own;
    else if (x->c->op[i].kind != NM_OP_MAC)
        return NM_ERR_NOMEM;
    nm_mapspace *ms = nm_calloc(1, sizeof *ms);
    if (!ms) {
        nm_free(own);
        return nm_error_set(err, NM_ERR_NOMEM, NULL, 0, 0, "out of memory");
    }
    nm_status st = nm_mapspace_init_fused(ms, arch, &x->c->op[i].wl, cons, more, onchip, err);
    nm_search_result *r = st == NM_OK ? nm_calloc(1, sizeof *r) : NULL;
    if (st == NM_OK && !r)
        st = nm_error_set(err, NM_ERR_NOMEM, NULL, 0, 0, "out of memory");
    *found = 0;
    /* A small space is searched whole: the default search spends more on
     * it than the whole takes (and may miss its best).  Not when a cap on
     * the evaluations (--max-evals) is below its size: an enumeration cut
     * short sees only the space's first corner, the capped search samples
     * it all. */
    nm_search_opts o = *x->o;
    if (seed) {
        o.warm = seed->map;
        o.nwarm = seed->found;
    }
    if (st == NM_OK && !strcmp(o.algorithm, "hybrid")) {
        nm_pcg32 rng;
        nm_pcg32_seed(&rng, o.seed, 7);
        int exact;
        double size = nm_mapspace_pruned_log10(ms, 20000, &rng, &exact);
        if (size <= log10((double)EXHAUSTIVE_MAX) &&
            (!o.max_evals || size <= log10((double)o.max_evals)))
            o.algorithm = "exhaustive";
    }
    if (st == NM_OK && (st = nm_search_run(ms, &o, r, err)) == NM_OK) {
        *found = nm_search_result_starts(r, starts);
        x->res->searches++;
        x->res->evaluated += r->evaluated + r->refined;
    }
    if (r)
        nm_search_result_fini(r);
    nm_free(r);
    nm_free(ms);
    nm_free(own);
    return st;
}

static int divisors(int64_t n, int64_t *out)
{
    int k = 0;
    for (int64_t d = 1; d <= n && k < MAX_DIV; d++)
        if (n % d == 0)
            out[k++] = d;
    return k;
}

static int by_score(const void *p, const void *q)
{
    const tiling *a = p, *b = q;
    if (a->score != b->score)
        return a->score < b->score ? -1 : 1;
    if (a->steps != b->steps) /* larger tiles leave the own mappings more room */
        return a->steps < b->steps ? -1 : 1;
    if (a->variant != b->variant)
        return a->variant < b->variant ? -1 : 1;
    return memcmp(a->f, b->f, sizeof a->f) ? (memcmp(a->f, b->f, sizeof a->f) < 0 ? -1 : 1)
                                           : memcmp(a->order, b->order, sizeof a->order);
}

/* The constraints pinning group g's shared loops for operation i, as a
 * document: the backing store's loops and keep/bypass, the fusion level
 * keeping the intermediates. */
static nm_status pin_doc(ctx *x, int i, const nm_fused_group *g, const nm_mapping *canon,
                         uint32_t onchip, nm_ydoc *doc, char *text, size_t size, nm_error *err)
{
    const nm_workload *wl = &x->c->op[i].wl;
    const nm_arch *arch = x->arch;
    int S = arch->nlevels;
    nm_ydoc_init(doc);
    size_t n = (size_t)snprintf(text, size, "targets:\n");
    for (int s = g->level + 1; s < S; s++) {
        const nm_level_map *lm = &canon->level[s];
        n += (size_t)snprintf(text + n, size - n, "- {target: '%s', type: temporal, "
                              "factors: '", arch->level[s].name);
        for (int d = 0; d < wl->ndims; d++)
            n += (size_t)snprintf(text + n, size - n, "%s%s=%lld", d ? " " : "",
                                  wl->dim[d], (long long)lm->tfactor[d]);
        n += (size_t)snprintf(text + n, size - n, "', permutation: [");
        for (int k = 0; k < wl->ndims; k++)
            n += (size_t)snprintf(text + n, size - n, "%s'%s'", k ? ", " : "",
                                  wl->dim[lm->torder[k]]);
        n += (size_t)snprintf(text + n, size - n, "]}\n");
        if (arch->level[s].fanoutX * arch->level[s].fanoutY > 1) {
            n += (size_t)snprintf(text + n, size - n, "- {target: '%s', type: spatial, "
                                  "factors: '", arch->level[s].name);
            for (int d = 0; d < wl->ndims; d++)
                n += (size_t)snprintf(text + n, size - n, "%s%s=1", d ? " " : "",
                                      wl->dim[d]);
            n += (size_t)snprintf(text + n, size - n, "'}\n");
        }
        if (arch->level[s].container[0])
            continue;
        n += (size_t)snprintf(text + n, size - n, "- {target: '%s', type: bypass, keep: [",
                              arch->level[s].name);
        int first = 1;
        for (int ds = 0; ds < wl->nds; ds++)
            if ((lm->keep >> ds) & 1u) {
                n += (size_t)snprintf(text + n, size - n, "%s'%s'", first ? "" : ", ",
                                      wl->ds[ds].name);
                first = 0;
            }
        n += (size_t)snprintf(text + n, size - n, "], bypass: [");
        first = 1;
        for (int ds = 0; ds < wl->nds; ds++)
            if (!((lm->keep >> ds) & 1u)) {
                n += (size_t)snprintf(text + n, size - n, "%s'%s'", first ? "" : ", ",
                                      wl->ds[ds].name);
                first = 0;
            }
        n += (size_t)snprintf(text + n, size - n, "]}\n");
    }
    if (onchip) {
        n += (size_t)snprintf(text + n, size - n, "- {target: '%s', type: bypass, keep: [",
                              arch->level[g->level].name);
        int first = 1;
        for (int ds = 0; ds < wl->nds; ds++)
            if ((onchip >> ds) & 1u) {
                n += (size_t)snprintf(text + n, size - n, "%s'%s'", first ? "" : ", ",
                                      wl->ds[ds].name);
                first = 0;
            }
        n += (size_t)snprintf(text + n, size - n, "]}\n");
    }
    /* (a retained halo's operation has other rows than a recomputed one's
     * under the same shared loops: its searches are its own) */
    if (nm_fused_group_retains(g))
        n += (size_t)snprintf(text + n, size - n, "# the halo retained\n");
    if (n >= size)
        return nm_error_set(err, NM_ERR_INPUT, NULL, 0, 0, "a fused search's constraints "
                            "outgrew their buffer");
    return nm_ydoc_load_string(doc, "<the shared loops>", text, n, err);
}

static nm_status remember(ctx *x, int i, int share, uint32_t onchip, const char *pins, int found,
                          const nm_mapping *starts, nm_error *err)
{
    if (x->nmemo == x->capmemo) {
        int cap = x->capmemo ? 2 * x->capmemo : 16;
        memo *more = nm_realloc_array(x->memo, (size_t)cap, sizeof *more);
        if (!more)
            return nm_error_set(err, NM_ERR_NOMEM, NULL, 0, 0, "out of memory");
        x->memo = more;
        x->capmemo = cap;
    }
    memo *e = &x->memo[x->nmemo];
    size_t len = strlen(pins) + 1;
    if (!(e->pins = nm_calloc(len, 1)))
        return nm_error_set(err, NM_ERR_NOMEM, NULL, 0, 0, "out of memory");
    memcpy(e->pins, pins, len);
    e->op = i;
    e->share = share;
    e->onchip = onchip;
    e->found = found;
    memcpy(e->map, starts, (size_t)found * sizeof *starts);
    x->nmemo++;
    return NM_OK;
}

/* The design with each level below the fusion level F holding 1/share of
 * its capacity (heap; NULL when out of memory). */
static const nm_arch *shared_out(const ctx *x, int F, int share)
{
    nm_arch *a = nm_calloc(1, sizeof *a);
    if (!a)
        return NULL;
    *a = *x->arch;
    for (int s = 0; s < F; s++)
        if (a->level[s].has_size)
            a->level[s].effective_size /= share;
    return a;
}

/* Searches the own mappings of group g's operations on arch (the design,
 * or shared_out's) under tiling t: found[] and whether all were. */
static nm_status own_mappings(ctx *x, const nm_arch *arch, int share, const nm_fused_group *g,
                              char names[][NM_NAME_MAX], int nsh, const tiling *t,
                              const uint32_t *onchip, nm_mapping *found, int *all, nm_error *err)
{
    int a = g->first, b = g->first + g->nops - 1;
    nm_status st = NM_OK;
    *all = 1;
    for (int i = a; i <= b && *all && st == NM_OK; i++) {
        nm_mapping canon;
        nm_fused_canonical(x->arch, x->c, i, g, names, nsh, t->f, t->order, onchip[i - a], &canon);
        nm_ydoc pin;
        char pins[8192];
        if ((st = pin_doc(x, i, g, &canon, onchip[i - a], &pin, pins, sizeof pins,
                          err)) != NM_OK) {
            nm_ydoc_fini(&pin);
            break;
        }
        int ok = 0, m = 0;
        while (m < x->nmemo && (x->memo[m].op != i || x->memo[m].share != share ||
                                x->memo[m].onchip != onchip[i - a] ||
                                strcmp(x->memo[m].pins, pins)))
            m++;
        if (m < x->nmemo) {
            ok = x->memo[m].found > 0;
            if (ok)
                found[i - a] = x->memo[m].map[0];
        } else {
            nm_mapping starts[NM_WARM_STARTS];
            nm_ynode *list = nm_ydoc_seq(&pin, pin.root);
            if (!list)
                st = nm_error_set(err, NM_ERR_NOMEM, NULL, 0, 0, "out of memory");
            if (st == NM_OK)
                st = keep_below(x, &pin, list, x->cons, g->level, err);
            if (st == NM_OK)
                st = keep_below(x, &pin, list, x->more, g->level, err);
            if (st == NM_OK) {
                /* constraints that cannot hold together (the design's
                 * bypass of an intermediate at the fusion level): this
                 * range does not fuse */
                st = search_op(x, arch, i, list, pin.root, onchip[i - a],
                               seed_of(x, i, share, onchip[i - a], pins), starts, &ok, err);
                if (st == NM_ERR_INPUT) {
                    st = NM_OK;
                    nm_error_clear(err);
                    ok = 0;
                }
            }
            if (st == NM_OK && ok)
                found[i - a] = starts[0];
            if (st == NM_OK)
                st = remember(x, i, share, onchip[i - a], pins, ok, starts, err);
        }
        *all &= ok > 0;
        nm_ydoc_fini(&pin);
    }
    return st;
}

/* A way a range of operations may fuse: as the chain has them, or
 * rewritten to recompute halos along the last one's rows (and columns) in
 * some number of steps (nm_chain_recompute), or to retain them along one
 * of those (nm_chain_retain).  Each has its own chain and
 * model, and the indices its group may share (the steps' index at its
 * whole count: fewer steps are another variant). */
typedef struct variant {
    nm_fused_group g;
    int shape;             /* 0 as written; 1 rows, 2 columns, 3 both split; 4 rows, 5
                            * columns retained */
    nm_chain *c;           /* the chain rewritten (heap), or the ctx's own */
    nm_fused_model *m;     /* its model (heap), or the ctx's own */
    int nsh;
    char names[MAX_SHARED][NM_NAME_MAX];
    int64_t bound[MAX_SHARED], fixed[MAX_SHARED]; /* fixed: the only factor, or 0 */
} variant;

static void variant_fini(variant *v, const ctx *x)
{
    if (v->m && v->m != x->fmdl) {
        nm_fused_model_fini(v->m);
        nm_free(v->m);
    }
    if (v->c != x->c)
        nm_free(v->c);
}

/* The shareable indices of v's group, the steps' among them. */
static void variant_shared(variant *v)
{
    const nm_fused_group *g = &v->g;
    v->nsh = nm_fused_shareable(v->c, g->first, g->nops, v->names, v->bound, MAX_SHARED);
    for (int k = 0; k < g->nsplit; k++) {
        int at = -1;
        for (int j = 0; j < v->nsh; j++)
            if (!strcmp(v->names[j], g->split[k].step))
                at = j;
        if (at < 0) { /* (crowded out by earlier indices: take the last place) */
            at = v->nsh < MAX_SHARED ? v->nsh++ : MAX_SHARED - 1 - k;
            snprintf(v->names[at], NM_NAME_MAX, "%s", g->split[k].step);
            v->bound[at] = g->split[k].steps;
        }
        v->fixed[at] = g->split[k].steps;
    }
}

/* Adds the variant of group g splitting the ranks[0..n) in steps[] each,
 * recomputing halos or (one rank) retaining them; 0 when the chain cannot
 * step so (or memory runs out: *st says). */
static int add_variant(ctx *x, const nm_fused_group *g, const int *dims, const int64_t *steps,
                       int n, int retain, variant *v, int *nv, nm_status *st, nm_error *err)
{
    variant *w = &v[*nv];
    memset(w, 0, sizeof *w);
    w->g = *g;
    w->c = nm_calloc(1, sizeof *w->c);
    if (!w->c) {
        *st = nm_error_set(err, NM_ERR_NOMEM, NULL, 0, 0, "out of memory");
        return 0;
    }
    *w->c = *x->c;
    const nm_workload *lw = &x->c->op[g->first + g->nops - 1].wl;
    char why[NM_ERROR_MSG_MAX];
    for (int k = 0; k < n; k++) {
        nm_fused_split *sp = &w->g.split[w->g.nsplit++];
        snprintf(sp->rank, NM_NAME_MAX, "%s", lw->dim[dims[k]]);
        sp->steps = steps[k];
        sp->retain = retain;
        if ((retain ? nm_chain_retain : nm_chain_recompute)(w->c, g->first, g->nops, sp->rank,
                                                            sp->steps, sp->step, why,
                                                            sizeof why) != NM_OK) {
            nm_free(w->c);
            return 0;
        }
    }
    if (!(w->m = nm_calloc(1, sizeof *w->m))) {
        nm_free(w->c);
        *st = nm_error_set(err, NM_ERR_NOMEM, NULL, 0, 0, "out of memory");
        return 0;
    }
    if ((*st = nm_fused_model_init(w->m, x->arch, w->c, err)) != NM_OK) {
        nm_free(w->m);
        nm_free(w->c);
        return 0;
    }
    variant_shared(w);
    (*nv)++;
    return 1;
}

/* Up to MAX_STEPS of the divisors of n above 1, spread over them. */
static int step_counts(int64_t n, int64_t *out)
{
    int64_t d[MAX_DIV];
    int k = 0, m = 0;
    for (int64_t i = 2; i <= n && k < MAX_DIV; i++)
        if (n % i == 0)
            d[k++] = i;
    for (int j = 0; j < MAX_STEPS && j < k; j++)
        out[m++] = d[k <= MAX_STEPS ? j : (int)((int64_t)j * (k - 1) / (MAX_STEPS - 1))];
    return m;
}

/* The range's variants: as written first, then every number of steps
 * along each index of the last operation's output whose windows overlap
 * (one the group cannot share as written), and along two of them with
 * the same number of steps. */
static nm_status variants(ctx *x, const nm_fused_group *g, variant *v, int *nv, nm_error *err)
{
    nm_status st = NM_OK;
    v[0] = (variant){.g = *g, .c = (nm_chain *)x->c, .m = x->fmdl};
    variant_shared(&v[0]);
    *nv = 1;
    const nm_chain_op *last = &x->c->op[g->first + g->nops - 1];
    int halo[NM_MAX_SPLITS], nh = nm_chain_halo_dims(x->c, g->first, g->nops, halo);
    if (nh < 0)
        return nm_error_set(err, NM_ERR_NOMEM, NULL, 0, 0, "out of memory");
    int64_t steps[2][MAX_STEPS];
    int ns[2] = {0, 0};
    for (int h = 0; h < nh && st == NM_OK; h++) {
        ns[h] = step_counts(last->wl.bound[halo[h]], steps[h]);
        for (int k = 0; k < ns[h] && st == NM_OK && *nv < MAX_VARIANTS; k++) {
            if (!add_variant(x, g, &halo[h], &steps[h][k], 1, 0, v, nv, &st, err))
                break; /* (a chain that cannot step along it at one count cannot at any) */
            v[*nv - 1].shape = 1 + h;
        }
        for (int k = 0; k < ns[h] && st == NM_OK && *nv < MAX_VARIANTS; k++)
            if (add_variant(x, g, &halo[h], &steps[h][k], 1, 1, v, nv, &st, err))
                v[*nv - 1].shape = 4 + h;
    }
    for (int k = 0; nh == 2 && k < ns[0] && st == NM_OK && *nv < MAX_VARIANTS; k++)
        for (int j = 0; j < ns[1] && st == NM_OK && *nv < MAX_VARIANTS; j++)
            if (steps[1][j] == steps[0][k]) {
                int64_t both[2] = {steps[0][k], steps[1][j]};
                if (add_variant(x, g, halo, both, 2, 0, v, nv, &st, err))
                    v[*nv - 1].shape = 3;
            }
    return st;
}

/* Phase 1 for variant vi of the range (x->c and x->fmdl its own): every
 * shared tiling, scored by its backing-store energy, appended to *cand. */
static nm_status score_tilings(ctx *x, const variant *v, int vi, tiling **cand, size_t *ncand,
                               size_t *room, uint64_t *tried, nm_error *err)
{
    const nm_chain *c = x->c;
    const nm_fused_group *g = &v->g;
    int S = x->arch->nlevels, a = g->first, b = g->first + g->nops - 1, nsh = v->nsh;
    uint32_t onchip[NM_MAX_OPS] = {0};
    for (int i = a; i <= b; i++)
        onchip[i - a] = nm_fused_onchip(c, a, g->nops, i);
    int64_t div[MAX_SHARED][MAX_DIV];
    int ndiv[MAX_SHARED];
    uint64_t splits = 1;
    for (int s = 0; s < nsh; s++) {
        if (v->fixed[s]) {
            div[s][0] = v->fixed[s];
            ndiv[s] = 1;
        } else {
            ndiv[s] = divisors(v->bound[s], div[s]);
        }
        splits *= (uint64_t)ndiv[s];
    }
    int idx[MAX_SHARED] = {0};
    nm_mapping maps[NM_MAX_OPS];
    for (uint64_t sp = 0; sp < splits && *tried < MAX_TRIED; sp++) {
        tiling t;
        memset(&t, 0, sizeof t);
        t.variant = vi;
        int8_t moving[MAX_SHARED];
        int nm = 0;
        t.steps = 1;
        for (int s = 0; s < nsh; s++) {
            t.f[s] = div[s][idx[s]];
            t.steps *= t.f[s];
            if (t.f[s] > 1)
                moving[nm++] = (int8_t)s;
        }
        int8_t perm[MAX_SHARED];
        memcpy(perm, moving, sizeof perm);
        do {
            int k = 0;
            for (int j = 0; j < nm; j++)
                t.order[k++] = perm[j];
            for (int s = 0; s < nsh; s++)
                if (t.f[s] == 1)
                    t.order[k++] = (int8_t)s;
            for (int i = a; i <= b; i++)
                nm_fused_canonical(x->arch, c, i, g, (char(*)[NM_NAME_MAX])v->names, nsh, t.f,
                                   t.order, onchip[i - a], &maps[i - a]);
            (*tried)++;
            nm_fused_sum sum;
            if (!eval_group(x, g, maps, onchip, &sum))
                continue;
            x->res->candidates++;
            /* (with the computes: a recomputed halo costs them) */
            t.score = 0.0;
            for (int i = a; i <= b; i++) {
                t.score += x->st->op[i].compute_energy;
                for (int ds = 0; ds < c->op[i].wl.nds; ds++)
                    t.score += x->st->op[i].level[S - 1].ds[ds].energy;
            }
            if (*ncand == *room) {
                tiling *more = nm_realloc_array(*cand, 2 * *room, sizeof **cand);
                if (!more)
                    return nm_error_set(err, NM_ERR_NOMEM, NULL, 0, 0, "out of memory");
                *cand = more;
                *room *= 2;
            }
            (*cand)[(*ncand)++] = t;
        } while (nm_mapping_next_order(perm, nm));
        for (int s = nsh - 1; s >= 0; s--) {
            if (++idx[s] < ndiv[s])
                break;
            idx[s] = 0;
        }
    }
    return NM_OK;
}

/* Makes m, operation op's own mapping in a group retaining its halo at
 * level F, tile the first step's rows where it does not
 * (nm_fused_step_map): its loops over the rows below F, temporal and
 * spatial, gathered into F's. */
static void retain_legal(const nm_chain_op *op, int F, nm_mapping *m)
{
    nm_mapping first;
    if (!op->head || nm_fused_step_map(op, F, m, 1, &first))
        return;
    int d = op->head_dim;
    for (int s = 0; s <= F; s++) {
        nm_level_map *lm = &m->level[s];
        lm->sfactor[d] = 1;
        lm->sresidual[d] = lm->tresidual[d] = 0;
        if (s < F)
            lm->tfactor[d] = 1;
    }
    m->level[F].tfactor[d] = op->wl.bound[d];
}

/* Phase 2 for tiling t of variant v (x->c and x->fmdl its own): each
 * operation's own mapping searched, the group evaluated, *rb kept when it
 * beats *best. */
static nm_status own_and_eval(ctx *x, const variant *v, const tiling *t, range_best *rb,
                              double *best, nm_error *err)
{
    const nm_fused_group *g = &v->g;
    uint32_t onchip[NM_MAX_OPS] = {0};
    for (int i = g->first; i < g->first + g->nops; i++)
        onchip[i - g->first] = nm_fused_onchip(x->c, g->first, g->nops, i);
    nm_status st = NM_OK;
    nm_mapping found[NM_MAX_OPS];
    int all = 0;
    /* each operation's own mapping with the level's whole capacity; when
     * the group's tiles then do not fit below the fusion level, again with
     * each level there shared out among the operations */
    for (int share = 1; share <= g->nops && st == NM_OK; share += g->nops - 1) {
        const nm_arch *sarch = share == 1 ? x->arch : shared_out(x, g->level, share);
        if (!sarch)
            return nm_error_set(err, NM_ERR_NOMEM, NULL, 0, 0, "out of memory");
        st = own_mappings(x, sarch, share, g, (char(*)[NM_NAME_MAX])v->names, v->nsh, t, onchip,
                          found, &all, err);
        for (int i = g->first; st == NM_OK && all && nm_fused_group_retains(g) &&
                               i < g->first + g->nops; i++)
            retain_legal(&x->c->op[i], g->level, &found[i - g->first]);
        if (sarch != x->arch)
            nm_free((void *)sarch);
        nm_fused_sum sum;
        if (st != NM_OK || !all)
            break;
        if (eval_group(x, g, found, onchip, &sum)) {
            double m = metric_of(x->o, &sum);
            if (m < *best) {
                *best = m;
                rb->ok = 1;
                rb->g = *g;
                memcpy(rb->map, found, sizeof found);
                memcpy(rb->onchip, onchip, sizeof onchip);
                rb->sum = sum;
            }
            break;
        }
        if (x->st->bad_level < 0 || x->st->bad_level >= g->level || g->nops < 2)
            break; /* (not a matter of the levels below) */
    }
    return st;
}

/* The best mapping of ops a..b as one group fused at the level below the
 * backing store, into *rb (rb->ok 0 when there is none): over the
 * range's variants (recomputed halos), every shared tiling scored by its
 * backing-store energy; the best few, and the best of the range as
 * written, searched for their own mappings. */
static nm_status fuse_range(ctx *x, int a, int b, range_best *rb, nm_error *err)
{
    const nm_arch *arch = x->arch;
    int S = arch->nlevels;
    memset(rb, 0, sizeof *rb);
    if (S < 2 || arch->level[S - 2].container[0] || nm_fused_leaks(x->c, a, b - a + 1) >= 0)
        return NM_OK; /* (no on-chip level; an intermediate also read after the range) */
    nm_fused_group g = {.first = a, .nops = b - a + 1, .level = S - 2};
    variant *v = nm_calloc(MAX_VARIANTS, sizeof *v);
    size_t room = 1024, ncand = 0;
    tiling *cand = nm_calloc(room, sizeof *cand);
    int nv = 0;
    nm_status st = v && cand ? variants(x, &g, v, &nv, err)
                             : nm_error_set(err, NM_ERR_NOMEM, NULL, 0, 0, "out of memory");
    const nm_chain *c0 = x->c;
    nm_fused_model *m0 = x->fmdl;
    /* phase 1: every variant's shared tilings */
    uint64_t tried = 0;
    for (int k = 0; k < nv && st == NM_OK; k++) {
        if (v[k].nsh == 0)
            continue; /* nothing to step through together */
        x->c = v[k].c;
        x->fmdl = v[k].m;
        st = score_tilings(x, &v[k], k, &cand, &ncand, &room, &tried, err);
    }
    x->c = c0;
    x->fmdl = m0;
    if (st == NM_OK)
        qsort(cand, ncand, sizeof *cand, by_score);
    /* phase 2: the best few, and the best of each shape of split not among
     * them (as written; rows, columns, both: the score, which leaves the
     * cycles out, ranks a shape's cost in recomputation only roughly); and
     * the best retaining the rows, and the columns, halos */
    double best = INFINITY;
    unsigned shapes_done = 0;
    size_t plain = 0;
    for (size_t k = 0; k < ncand && st == NM_OK; k++) {
        int vi = cand[k].variant;
        unsigned shape = 1u << v[vi].shape;
        int retained = nm_fused_group_retains(&v[vi].g);
        if ((retained || plain >= SHORTLIST) && (shapes_done & shape))
            continue;
        shapes_done |= shape;
        plain += !retained;
        x->c = v[vi].c;
        x->fmdl = v[vi].m;
        st = own_and_eval(x, &v[vi], &cand[k], rb, &best, err);
        x->c = c0;
        x->fmdl = m0;
    }
    for (int k = 0; k < nv; k++)
        variant_fini(&v[k], x);
    nm_free(v);
    nm_free(cand);
    return st;
}

/* The fused map of a cut of the chain into ranges (bit j of cuts: a cut
 * after operation j), from the ranges' best. */
static void assemble(const ctx *x, range_best (*rb)[NM_MAX_OPS], unsigned cuts, nm_fused_map *fm)
{
    memset(fm, 0, sizeof *fm);
    int a = 0;
    for (int j = 0; j < x->c->nops; j++) {
        if (j < x->c->nops - 1 && !((cuts >> j) & 1u))
            continue;
        const range_best *r = &rb[a][j];
        fm->group[fm->ngroups] = r->g;
        for (int i = a; i <= j; i++) {
            fm->map[i] = r->map[i - a];
            fm->onchip[i] = r->onchip[i - a];
            fm->group_of[i] = fm->ngroups;
        }
        fm->ngroups++;
        a = j + 1;
    }
}

nm_status nm_fused_search(const nm_arch *arch, const nm_chain *c, const nm_ynode *constraints,
                          const nm_ynode *more, const nm_search_opts *o, int fuse,
                          nm_fused_result *res, nm_error *err)
{
    return nm_fused_search_given(arch, c, constraints, more, o, fuse, NULL, NULL, 0, res, err);
}

nm_status nm_fused_search_given(const nm_arch *arch, const nm_chain *c,
                                const nm_ynode *constraints, const nm_ynode *more,
                                const nm_search_opts *o, int fuse, const nm_mapping *alone,
                                const nm_fused_seed *warm, int nwarm, nm_fused_result *res,
                                nm_error *err)
{
    memset(res, 0, sizeof *res);
    res->alone = -1;
    double t0 = nm_job_wall();
    nm_fused_model base;
    memset(&base, 0, sizeof base);
    ctx x = {arch, c, constraints, more, o, &base, NULL, NULL, res, NULL, 0, 0, warm, nwarm};
    range_best (*rb)[NM_MAX_OPS] = nm_calloc(NM_MAX_OPS, sizeof *rb);
    res->best_st = nm_calloc(1, sizeof *res->best_st);
    res->unfused_st = nm_calloc(1, sizeof *res->unfused_st);
    x.st = nm_calloc(1, sizeof *x.st);
    x.scratch = nm_calloc(1, sizeof *x.scratch);
    res->chain = nm_calloc(1, sizeof *res->chain);
    nm_status st = rb && res->best_st && res->unfused_st && x.st && x.scratch && res->chain
                       ? nm_fused_model_init(&base, arch, c, err)
                       : nm_error_set(err, NM_ERR_NOMEM, NULL, 0, 0, "out of memory");
    int K = c->nops;
    /* 1: every operation alone */
    for (int i = 0; i < K && st == NM_OK; i++) {
        range_best *r = &rb[i][i];
        r->g = (nm_fused_group){.first = i, .nops = 1, .level = arch->nlevels - 1};
        int ok = 0;
        if (alone && alone[i].nlevels > 0) { /* given: the operation's own best */
            r->map[0] = alone[i];
            ok = 1;
        } else {
            nm_mapping starts[NM_WARM_STARTS];
            st = search_op(&x, arch, i, constraints, more, 0, seed_of(&x, i, 0, 0, ""),
                           starts, &ok, err);
            if (st == NM_OK && ok)
                r->map[0] = starts[0];
            if (st == NM_OK)
                st = remember(&x, i, 0, 0, "", ok, starts, err);
        }
        /* (none found alone: a fused group may still hold it) */
        if (st == NM_OK && ok)
            r->ok = eval_group(&x, &r->g, r->map, r->onchip, &r->sum);
        if (!r->ok && res->alone < 0)
            res->alone = i;
    }
    /* 2: every range of two or more, fused */
    for (int len = 2; fuse && len <= K && st == NM_OK; len++)
        for (int a = 0; a + len <= K && st == NM_OK; a++)
            st = fuse_range(&x, a, a + len - 1, &rb[a][a + len - 1], err);
    /* 3: every cut into ranges */
    if (st == NM_OK) {
        unsigned all = K > 1 ? (1u << (K - 1)) - 1u : 0u, best_cuts = all;
        double best = INFINITY;
        for (unsigned cuts = 0; cuts <= all; cuts++) {
            nm_fused_sum t = {0};
            int ok = 1, a = 0;
            for (int j = 0; j < K && ok; j++) {
                if (j < K - 1 && !((cuts >> j) & 1u))
                    continue;
                ok = rb[a][j].ok;
                t.energy += rb[a][j].sum.energy;
                t.cycles += rb[a][j].sum.cycles;
                t.computes += rb[a][j].sum.computes;
                t.backing += rb[a][j].sum.backing;
                a = j + 1;
            }
            double v = ok ? metric_of(o, &t) : INFINITY;
            if (v < best) {
                best = v;
                best_cuts = cuts;
            }
        }
        if (best == INFINITY) {
            st = nm_error_set(err, NM_ERR_INPUT, NULL, 0, 0, "no valid mapping found for "
                              "operation '%s', alone or fused with its neighbours (nestmap map "
                              "on it alone, as a problem of its own, says why)",
                              c->op[res->alone].name);
        } else {
            assemble(&x, rb, best_cuts, &res->best);
            /* the chain the best maps: its groups' halos recomputed */
            *res->chain = *c;
            char why[NM_ERROR_MSG_MAX];
            for (int gi = 0; gi < res->best.ngroups && st == NM_OK; gi++)
                if (nm_fused_group_apply(res->chain, &res->best.group[gi], why,
                                         sizeof why) != NM_OK)
                    st = nm_error_set(err, NM_ERR_INPUT, NULL, 0, 0, "the fused search's result "
                                      "does not step as it says (%s; a bug: please report it)",
                                      why);
            nm_fused_model fin;
            if (st == NM_OK && (st = nm_fused_model_init(&fin, arch, res->chain, err)) == NM_OK) {
                if (!nm_fused_model_eval(&fin, &res->best, res->best_st))
                    st = nm_error_set(err, NM_ERR_INPUT, NULL, 0, 0, "the fused search's result "
                                      "is invalid (a bug: please report it)");
                nm_fused_model_fini(&fin);
            }
            if (st == NM_OK && res->alone < 0) {
                assemble(&x, rb, all, &res->unfused);
                if (!nm_fused_model_eval(&base, &res->unfused, res->unfused_st))
                    st = nm_error_set(err, NM_ERR_INPUT, NULL, 0, 0, "the fused search's "
                                      "unfused result is invalid (a bug: please report it)");
            }
        }
    }
    if (base.nready)
        nm_fused_model_fini(&base);
    res->seeds = x.memo; /* (the next search's warm starts) */
    res->nseeds = x.nmemo;
    nm_free(x.st);
    nm_free(x.scratch);
    nm_free(rb);
    res->seconds = nm_job_wall() - t0;
    return st;
}

void nm_fused_seeds_free(nm_fused_seed *seeds, int n)
{
    for (int m = 0; m < n; m++)
        nm_free(seeds[m].pins);
    nm_free(seeds);
}

void nm_fused_result_fini(nm_fused_result *res)
{
    nm_fused_seeds_free(res->seeds, res->nseeds);
    nm_free(res->chain);
    nm_free(res->best_st);
    nm_free(res->unfused_st);
    memset(res, 0, sizeof *res);
}
