/* report_explain.c — a mapping as the nested loops of a lecture, and in
 * words: for an invalid mapping, what does not fit by how much and which
 * factor to move; for a valid one, where utilization is lost and which level
 * and tensor spend the energy.  See report.h. */
#include <config.h>

#include <ctype.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "nestmap/report.h"
#include "nestmap/text.h"

/* ---- the loops ---- */

typedef struct loop_names {
    char base[NM_MAX_DIMS][NM_NAME_MAX]; /* the index of each dimension: "p" */
    int count[NM_MAX_DIMS];              /* loops of each dimension in the nest */
    char var[NM_MAX_LOOPS][NM_NAME_MAX + 8]; /* each loop's variable: "p1" */
} loop_names;

static int real_loop(const nm_loop *l)
{
    return l->end > 1;
}

/* Index names: the dimension's name in lower case, unless that names two
 * dimensions; loops numbered from the innermost when a dimension has several. */
static void name_loops(loop_names *ln, const nm_workload *wl, const nm_nest *nest)
{
    for (int d = 0; d < wl->ndims; d++) {
        char low[NM_NAME_MAX];
        size_t i = 0;
        for (; wl->dim[d][i] && i + 1 < sizeof low; i++)
            low[i] = (char)tolower((unsigned char)wl->dim[d][i]);
        low[i] = '\0';
        int clash = 0;
        for (int e = 0; e < wl->ndims; e++)
            clash |= e != d && !strcasecmp(wl->dim[e], wl->dim[d]);
        snprintf(ln->base[d], NM_NAME_MAX, "%s", clash ? wl->dim[d] : low);
        ln->count[d] = 0;
    }
    for (int i = 0; i < nest->nloops; i++)
        if (real_loop(&nest->loop[i]))
            ln->count[nest->loop[i].dim]++;
    int seen[NM_MAX_DIMS] = {0};
    for (int i = 0; i < nest->nloops; i++) {
        const nm_loop *l = &nest->loop[i];
        ln->var[i][0] = '\0';
        if (!real_loop(l))
            continue;
        if (ln->count[l->dim] > 1)
            snprintf(ln->var[i], sizeof ln->var[i], "%s%d", ln->base[l->dim], seen[l->dim]++);
        else
            snprintf(ln->var[i], sizeof ln->var[i], "%s", ln->base[l->dim]);
    }
}

static void indent(FILE *f, int depth)
{
    fprintf(f, "%*s", 4 * depth, "");
}

/* TENSOR[i, 2*p + r, ...] over the composed indices; dimensions of size 1
 * are index 0 and left out of sums. */
static void tensor_ref(FILE *f, const nm_workload *wl, const loop_names *ln, int ds)
{
    const nm_dataspace *s = &wl->ds[ds];
    fprintf(f, "%s[", s->name);
    for (int r = 0; r < s->nranks; r++) {
        int n = 0;
        for (int t = 0; t < s->rank[r].nterms; t++) {
            const nm_term *tm = &s->rank[r].term[t];
            if (wl->bound[tm->dim] <= 1 || tm->coef == 0)
                continue;
            fprintf(f, "%s", n++ ? " + " : "");
            if (tm->coef != 1)
                fprintf(f, "%" PRId64 "*", tm->coef);
            fprintf(f, "%s", ln->base[tm->dim]);
        }
        fprintf(f, "%s%s", n ? "" : "0", r + 1 < s->nranks ? ", " : "");
    }
    fprintf(f, "]");
}

/* The statement the innermost loop runs, by the kind of layer. */
static void statement(FILE *f, const nm_workload *wl, const loop_names *ln)
{
    int out = -1, nin = 0, in[NM_MAX_DS];
    for (int ds = 0; ds < wl->nds; ds++) {
        if (wl->ds[ds].read_write && out < 0)
            out = ds;
        else if (!wl->ds[ds].read_write)
            in[nin++] = ds;
    }
    if (out < 0) { /* nothing written: only reads */
        fprintf(f, "use(");
        for (int i = 0; i < nin; i++) {
            fprintf(f, "%s", i ? ", " : "");
            tensor_ref(f, wl, ln, in[i]);
        }
        fprintf(f, ")\n");
        return;
    }
    tensor_ref(f, wl, ln, out);
    if (!strcmp(wl->name, "maxpool") && nin == 1) {
        fprintf(f, " = max(");
        tensor_ref(f, wl, ln, out);
        fprintf(f, ", ");
        tensor_ref(f, wl, ln, in[0]);
        fprintf(f, ")\n");
    } else if (!strcmp(wl->name, "relu") && nin == 1) {
        fprintf(f, " = max(");
        tensor_ref(f, wl, ln, in[0]);
        fprintf(f, ", 0)\n");
    } else if (!strcmp(wl->name, "layernorm") && nin == 3) {
        /* Gamma, Beta, Inputs (shorthand.c's order) */
        fprintf(f, " = normalize(");
        tensor_ref(f, wl, ln, in[2]);
        fprintf(f, ") * ");
        tensor_ref(f, wl, ln, in[0]);
        fprintf(f, " + ");
        tensor_ref(f, wl, ln, in[1]);
        fprintf(f, "   # normalize: the row's mean and deviation\n");
    } else {
        fprintf(f, " += ");
        for (int i = 0; i < nin; i++) {
            fprintf(f, "%s", i ? " * " : "");
            tensor_ref(f, wl, ln, in[i]);
        }
        fprintf(f, "%s\n", nin ? "" : "1");
    }
}

static void level_header(FILE *f, int depth, const nm_arch *arch, const nm_workload *wl,
                         const nm_mapping *m, const nm_nest_result *shape, int s)
{
    indent(f, depth);
    fprintf(f, "# %s", arch->level[s].name);
    const char *sep = ": keeps ";
    for (int ds = 0; ds < wl->nds; ds++)
        if ((m->level[s].keep >> ds) & 1u) {
            fprintf(f, "%s%s (%" PRIu64 ")", sep, wl->ds[ds].name, shape->tile[s][ds].size);
            sep = ", ";
        }
    sep = strcmp(sep, ", ") ? ": bypasses " : "; bypasses ";
    for (int ds = 0; ds < wl->nds; ds++)
        if (!((m->level[s].keep >> ds) & 1u)) {
            fprintf(f, "%s%s", sep, wl->ds[ds].name);
            sep = ", ";
        }
    fprintf(f, "\n");
}

void nm_report_loops(FILE *f, const nm_arch *arch, const nm_workload *wl, const nm_nest *nest,
                     const nm_mapping *m)
{
    loop_names ln;
    name_loops(&ln, wl, nest);
    nm_nest_result shape;
    nm_nest_shape(nest, wl, &shape);
    fprintf(f, "# %s as loops, outermost first; each level's tiles in words\n",
            wl->name);
    int depth = 0;
    for (int s = nest->nlevels - 1; s >= 0; s--) {
        level_header(f, depth, arch, wl, m, &shape, s);
        const char *child = s > 0 ? arch->level[s - 1].name : arch->arith.name;
        for (int i = nest->boundary[s]; i >= nest->first[s]; i--) {
            const nm_loop *l = &nest->loop[i];
            if (!real_loop(l))
                continue;
            indent(f, depth++);
            if (l->space == NM_TIME)
                fprintf(f, "for %s in range(%" PRId64 "):", ln.var[i], l->end);
            else
                fprintf(f, "parallel_for %s in range(%" PRId64 "):  # across %s, %c", ln.var[i],
                        l->end, child, l->space == NM_SPACE_X ? 'X' : 'Y');
            if (l->residual != l->end)
                fprintf(f, "%s%" PRId64 " in the last tile", l->space == NM_TIME ? "  # " : "; ",
                        l->residual);
            fprintf(f, "\n");
        }
    }
    indent(f, depth);
    fprintf(f, "# %s\n", arch->arith.name);
    /* the composed indices: p = p2*28 + p1*7 + p0 */
    for (int d = 0; d < wl->ndims; d++) {
        if (ln.count[d] < 2)
            continue;
        indent(f, depth);
        fprintf(f, "%s = ", ln.base[d]);
        int64_t weight[NM_MAX_LOOPS];
        int64_t w = 1;
        for (int i = 0; i < nest->nloops; i++)
            if (real_loop(&nest->loop[i]) && nest->loop[i].dim == d) {
                weight[i] = w;
                w *= nest->loop[i].end;
            }
        int first = 1;
        for (int i = nest->nloops - 1; i >= 0; i--) {
            if (!real_loop(&nest->loop[i]) || nest->loop[i].dim != d)
                continue;
            fprintf(f, "%s%s", first ? "" : " + ", ln.var[i]);
            if (weight[i] > 1)
                fprintf(f, "*%" PRId64, weight[i]);
            first = 0;
        }
        fprintf(f, "\n");
    }
    indent(f, depth);
    statement(f, wl, &ln);
}

/* ---- in words ---- */

/* The smallest prime factor of n (n >= 2). */
static int64_t smallest_prime(int64_t n)
{
    for (int64_t p = 2; p * p <= n; p++)
        if (n % p == 0)
            return p;
    return n;
}

/* A capacity overflow at level s: the tiles it keeps, and the moves of one
 * prime factor from a loop inside its tile to the level above that make it
 * fit, smallest change first. */
static void explain_capacity(FILE *f, nm_model *mdl, const nm_mapping *m, const nm_nest *nest,
                             int s)
{
    const nm_arch *arch = mdl->arch;
    const nm_workload *wl = mdl->wl;
    nm_nest_result shape;
    nm_nest_shape(nest, wl, &shape);
    const nm_level *L = &arch->level[s];
    uint64_t need = 0;
    fprintf(f, "%s keeps", L->name);
    for (int ds = 0; ds < wl->nds; ds++)
        if ((m->level[s].keep >> ds) & 1u) {
            uint64_t w = nm_model_tile_words(mdl, s, ds, shape.tile[s][ds].size);
            fprintf(f, "%s %s %" PRIu64, need ? " +" : "", wl->ds[ds].name, w);
            need += w;
        }
    uint64_t cap = (uint64_t)L->effective_size;
    fprintf(f, " = %" PRIu64 " words; it holds %" PRIu64 "%s: over by %" PRIu64 " (%.2fx)\n",
            need, cap, L->effective_size != L->size ? " (after multiple buffering)" : "",
            need - cap, (double)need / (double)cap);
    if (s + 1 >= arch->nlevels) {
        fprintf(f, "  it is the outermost level: the layer does not fit it at all\n");
        return;
    }
    /* Candidate moves: one prime of a factor at level t <= s (temporal or
     * spatial), or the whole factor, into level s+1's temporal factor.  The
     * three best: those that make the level fit first (valid ones first,
     * then the smallest change: the most left in the level), then those
     * that come closest. */
    struct move { int t, d, spatial; int64_t p; uint64_t need; int fits, valid; } best[3];
    int nbest = 0;
    static nm_stats st;
    static nm_nest tnest;
    for (int t = 0; t <= s; t++)
        for (int sp = 0; sp < 2; sp++)
            for (int d = 0; d < wl->ndims; d++) {
                int64_t fac = sp ? m->level[t].sfactor[d] : m->level[t].tfactor[d];
                if (fac < 2 || (sp ? m->level[t].sresidual[d] : m->level[t].tresidual[d]) ||
                    m->level[s + 1].tresidual[d])
                    continue;
                int64_t cands[2] = {smallest_prime(fac), fac};
                for (int k = 0; k < 2; k++) {
                    int64_t p = cands[k];
                    if (k && p == cands[0])
                        break;
                    nm_mapping c = *m;
                    if (sp)
                        c.level[t].sfactor[d] /= p;
                    else
                        c.level[t].tfactor[d] /= p;
                    c.level[s + 1].tfactor[d] *= p;
                    nm_nest_build(&tnest, &c, arch, wl);
                    nm_nest_result sh;
                    nm_nest_shape(&tnest, wl, &sh);
                    uint64_t n2 = 0;
                    for (int ds = 0; ds < wl->nds; ds++)
                        if ((c.level[s].keep >> ds) & 1u)
                            n2 += nm_model_tile_words(mdl, s, ds, sh.tile[s][ds].size);
                    struct move mv = {t, d, sp, p, n2, n2 <= cap, 0};
                    mv.valid = mv.fits && nm_model_precheck(mdl, &c, &st);
                    int pos = nbest;
                    while (pos > 0) {
                        const struct move *o = &best[pos - 1];
                        int better = mv.fits != o->fits     ? mv.fits > o->fits
                                     : mv.valid != o->valid ? mv.valid > o->valid
                                     : mv.fits              ? mv.need > o->need
                                                            : mv.need < o->need;
                        if (!better)
                            break;
                        pos--;
                    }
                    if (pos >= 3)
                        continue;
                    if (nbest < 3)
                        nbest++;
                    memmove(&best[pos + 1], &best[pos], (size_t)(nbest - 1 - pos) * sizeof *best);
                    best[pos] = mv;
                }
            }
    if (nbest && !best[0].fits)
        fprintf(f, "  no single factor moved to %s makes it fit; these come closest (move "
                   "several, or bypass a tensor at %s):\n", arch->level[s + 1].name, L->name);
    for (int i = 0; i < nbest; i++) {
        const struct move *mv = &best[i];
        fprintf(f, "  move a factor %" PRId64 " of %s from %s's %s loops to %s: %s then holds "
                   "%" PRIu64 " words%s\n",
                mv->p, wl->dim[mv->d], arch->level[mv->t].name,
                mv->spatial ? "spatial" : "temporal", arch->level[s + 1].name, L->name, mv->need,
                !mv->fits    ? ", still too many"
                : mv->valid ? ", and the mapping is valid"
                             : " (another check still fails)");
    }
}

static void explain_invalid(FILE *f, nm_model *mdl, const nm_mapping *m, const nm_nest *nest,
                            const nm_stats *st)
{
    const nm_arch *arch = mdl->arch;
    const nm_workload *wl = mdl->wl;
    const nm_invalid *inv = &st->invalid;
    char why[512];
    nm_invalid_describe(inv, arch, wl, why, sizeof why);
    fprintf(f, "invalid: %s\n", why);
    switch (inv->kind) {
    case NM_INV_CAPACITY:
        explain_capacity(f, mdl, m, nest, inv->level);
        break;
    case NM_INV_ARITH:
    case NM_INV_INSTANCES: {
        /* The level whose spatial loops spread onto the units that overflow:
         * the nearest one above them with a spatial factor (a v0.4 design's
         * fan-out level stands above its component). */
        int s = inv->kind == NM_INV_ARITH ? 0 : inv->level + 1;
        while (s + 1 < arch->nlevels) {
            int any = 0;
            for (int d = 0; d < wl->ndims; d++)
                any |= m->level[s].sfactor[d] > 1;
            if (any)
                break;
            s++;
        }
        if (s >= arch->nlevels)
            break;
        /* A fan-out level of its own (a v0.4 container's) has no temporal
         * loops: the factor moves to the level above. */
        const nm_level *L = &arch->level[s];
        const char *who = L->container[0] ? L->container : L->name;
        int dest = L->dummy && s + 1 < arch->nlevels ? s + 1 : s;
        fprintf(f, "  the spatial factors of %s ask for %" PRIu64 " where there are %" PRIu64
                   ": make a spatial factor smaller (move it to %s's temporal loops)\n",
                who, inv->got, inv->limit, arch->level[dest].name);
        for (int d = 0; d < wl->ndims; d++)
            if (m->level[s].sfactor[d] > 1)
                fprintf(f, "  %s's spatial %s = %" PRId64 "\n", who, wl->dim[d],
                        m->level[s].sfactor[d]);
        /* Along one axis too many, but the array holds them all: the split
         * between X and Y is what to change. */
        const nm_level_map *lm = &m->level[s];
        int64_t fx = arch->level[s].fanoutX, fy = arch->level[s].fanoutY;
        for (int split = 0; inv->axis && split <= wl->ndims; split++) {
            int64_t x = 1, y = 1;
            for (int i = 0; i < wl->ndims; i++)
                *(i < split ? &x : &y) *= lm->sfactor[lm->sorder[i]];
            if (x <= fx && y <= fy) {
                fprintf(f, "  or keep them and set split: %d in %s's spatial entry: the first %d "
                           "loops of its permutation go along X (%" PRId64 " of %" PRId64 "), "
                           "the rest along Y (%" PRId64 " of %" PRId64 ")\n",
                        split, who, split, x, fx, y, fy);
                break;
            }
        }
        break;
    }
    case NM_INV_FACTORS: {
        int d = inv->index;
        fprintf(f, "  %s's factors, outermost level first:", wl->dim[d]);
        for (int s = arch->nlevels - 1; s >= 0; s--) {
            const nm_level_map *lm = &m->level[s];
            fprintf(f, " %s %" PRId64, arch->level[s].name, lm->tfactor[d]);
            if (nm_level_residual(lm, d) != lm->tfactor[d])
                fprintf(f, ",%" PRId64, nm_level_residual(lm, d));
            if (lm->sfactor[d] > 1) {
                fprintf(f, " (x %" PRId64, lm->sfactor[d]);
                if (nm_level_sresidual(lm, d) != lm->sfactor[d])
                    fprintf(f, ",%" PRId64, nm_level_sresidual(lm, d));
                fprintf(f, " spatial)");
            }
        }
        fprintf(f, "\n");
        break;
    }
    default:
        break;
    }
}

static void explain_valid(FILE *f, nm_model *mdl, const nm_mapping *m, const nm_nest *nest,
                          const nm_stats *st)
{
    const nm_arch *arch = mdl->arch;
    const nm_workload *wl = mdl->wl;
    double units = (double)arch->arith.instances;
    double spatial = (double)st->arith_utilized / units;
    double throttle = st->cycles ? (double)st->compute_cycles / (double)st->cycles : 1.0;
    double partial = st->compute_cycles && st->arith_utilized
                         ? (double)st->computes /
                               ((double)st->compute_cycles * (double)st->arith_utilized)
                         : 1.0;
    fprintf(f, "utilization %.2f %% = %.2f %% of the %s units in use x %.2f %% of the cycles "
               "computing (bandwidth) x %.2f %% of the steps full (partial tiles)\n",
            100.0 * st->utilization, 100.0 * spatial, arch->arith.name, 100.0 * throttle,
            100.0 * partial);
    for (int s = 0; s < arch->nlevels; s++) {
        const nm_level *L = &arch->level[s];
        int64_t fx = L->fanoutX, fy = L->fanoutY;
        if (fx * fy <= 1)
            continue;
        /* this level's spatial loops: X before the split, then Y */
        const nm_level_map *lm = &m->level[s];
        uint64_t ux = 1, uy = 1;
        for (int i = 0; i < wl->ndims; i++)
            *(i < lm->split ? &ux : &uy) *= (uint64_t)lm->sfactor[lm->sorder[i]];
        const char *child = s > 0 ? arch->level[s - 1].name : arch->arith.name;
        fprintf(f, "  %s -> %s: X %" PRIu64 " of %" PRId64 ", Y %" PRIu64 " of %" PRId64, L->name,
                child, ux, fx, uy, fy);
        const char *sep = " (";
        for (int d = 0; d < wl->ndims; d++)
            if (m->level[s].sfactor[d] > 1) {
                fprintf(f, "%s%s=%" PRId64, sep, wl->dim[d], m->level[s].sfactor[d]);
                sep = " ";
            }
        fprintf(f, "%s", strcmp(sep, " ") ? "" : ")");
        if ((int64_t)(ux * uy) < fx * fy)
            fprintf(f, ": %.1f %% idle", 100.0 * (1.0 - (double)(ux * uy) / (double)(fx * fy)));
        fprintf(f, "\n");
    }
    if (throttle < 0.9999) {
        int worst = -1;
        for (int s = 0; s < arch->nlevels; s++)
            if (worst < 0 || st->level[s].cycles > st->level[worst].cycles)
                worst = s;
        fprintf(f, "  %s's bandwidth stretches the run from %" PRIu64 " to %" PRIu64
                   " cycles (%.2fx)\n", arch->level[worst].name, st->compute_cycles, st->cycles,
                (double)st->cycles / (double)st->compute_cycles);
    }
    /* energy: compute, then the (level, tensor) pairs by size */
    char e[48];
    fprintf(f, "energy %s: %s %.1f %%", nm_text_si(st->energy * 1e-12, "J", e, sizeof e),
            arch->arith.name, 100.0 * st->compute_energy / st->energy);
    typedef struct { int s, ds; double e; } part;
    part parts[NM_MAX_LEVELS * NM_MAX_DS];
    int np = 0;
    for (int s = 0; s < arch->nlevels; s++)
        for (int ds = 0; ds < wl->nds; ds++)
            if (st->level[s].ds[ds].kept && st->level[s].ds[ds].energy > 0)
                parts[np++] = (part){s, ds, st->level[s].ds[ds].energy};
    for (int i = 1; i < np; i++) /* insertion sort, largest first */
        for (int j = i; j > 0 && parts[j].e > parts[j - 1].e; j--) {
            part t = parts[j];
            parts[j] = parts[j - 1];
            parts[j - 1] = t;
        }
    for (int i = 0; i < np && i < 3; i++)
        fprintf(f, ", %s %s %.1f %%", arch->level[parts[i].s].name, wl->ds[parts[i].ds].name,
                100.0 * parts[i].e / st->energy);
    fprintf(f, "%s\n", np > 3 ? ", ..." : "");
    if (np) {
        const part *top = &parts[0];
        const nm_ds_stats *d = &st->level[top->s].ds[top->ds];
        fprintf(f, "  the largest part: %s %s, %" PRIu64 " reads, %" PRIu64 " fills, %" PRIu64
                   " updates per instance for a tile of %" PRIu64 " words\n",
                arch->level[top->s].name, wl->ds[top->ds].name, d->reads, d->fills, d->updates,
                d->utilized_capacity);
    }
    (void)nest;
}

void nm_report_explain(FILE *f, nm_model *mdl, const nm_mapping *m, const nm_nest *nest,
                       const nm_stats *st)
{
    if (st->invalid.kind != NM_VALID)
        explain_invalid(f, mdl, m, nest, st);
    else
        explain_valid(f, mdl, m, nest, st);
}
