/* sweep.c — the sweep file, its points and the Pareto front; see sweep.h. */
#include <config.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "nestmap/alloc.h"
#include "nestmap/path.h"
#include "nestmap/pcg32.h"
#include "nestmap/search.h"
#include "nestmap/sweep.h"

const char *nm_sweep_status_name(nm_sweep_status s)
{
    return s == NM_SWEEP_OK ? "ok" : s == NM_SWEEP_UNMAPPED ? "unmapped" : "invalid";
}

/* A path as written in the file at `at`: relative ones from that file's
 * directory. */
static nm_status resolve(char *out, const nm_ynode *at, const char *what, nm_error *err)
{
    const char *p;
    nm_status st = nm_yget_str(at, what, &p, err);
    if (st != NM_OK)
        return st;
    if (!p[0])
        return nm_yerror(err, at, "%s is empty", what);
    const char *slash = at->file ? strrchr(at->file, '/') : NULL;
    int n;
    if (p[0] == '/' || !slash)
        n = snprintf(out, NM_SWEEP_PATH_MAX, "%s", p);
    else
        n = snprintf(out, NM_SWEEP_PATH_MAX, "%.*s/%s", (int)(slash - at->file), at->file, p);
    if (n < 0 || n >= NM_SWEEP_PATH_MAX)
        return nm_yerror(err, at, "path '%s' is too long", p);
    /* Not beside the sweep file: a shipped design or workload by name. */
    char found[NM_PATH_MAX];
    if (access(out, F_OK) != 0 && nm_path_find(p, found, sizeof found) &&
        strlen(found) < NM_SWEEP_PATH_MAX)
        snprintf(out, NM_SWEEP_PATH_MAX, "%s", found);
    if (access(out, R_OK) != 0)
        return nm_yerror(err, at, "no file '%s' (%s): not beside the sweep file (%s), nor in "
                         "the design and workload library", p, what, out);
    return NM_OK;
}

/* A number with an optional binary suffix. */
static nm_status number(const nm_ynode *n, const char *what, double *out, nm_error *err)
{
    char buf[NM_OVERRIDE_VALUE_MAX];
    if (n->kind != NM_Y_SCALAR)
        return nm_yerror(err, n, "%s must be a number", what);
    if (!nm_override_expand(n->str, buf, sizeof buf))
        return nm_yerror(err, n, "%s is too large", what);
    char *end;
    double v = strtod(buf, &end);
    if (end == buf || *end || !isfinite(v))
        return nm_yerror(err, n, "%s must be a number (got '%s')", what, n->str);
    *out = v;
    return NM_OK;
}

static nm_status add_value(nm_sweep_axis *ax, const char *text, const nm_ynode *at,
                           nm_error *err)
{
    if (ax->nvalues >= NM_SWEEP_MAX_VALUES)
        return nm_yerror(err, at, "more than %d values", NM_SWEEP_MAX_VALUES);
    if (!nm_override_expand(text, ax->value[ax->nvalues], NM_OVERRIDE_VALUE_MAX))
        return nm_yerror(err, at, "count '%s' is too large", text);
    ax->at[ax->nvalues++] = at;
    return NM_OK;
}

static nm_status parse_values(nm_sweep_axis *ax, const nm_ynode *v, nm_error *err)
{
    ax->value = nm_calloc(NM_SWEEP_MAX_VALUES, sizeof *ax->value);
    ax->at = nm_calloc(NM_SWEEP_MAX_VALUES, sizeof *ax->at);
    if (!ax->value || !ax->at)
        return nm_error_set(err, NM_ERR_NOMEM, NULL, 0, 0, "out of memory");
    nm_status st;
    if (v->kind == NM_Y_SEQ) {
        if (v->n == 0)
            return nm_yerror(err, v, "'%s': the list of values is empty", ax->label);
        for (size_t i = 0; i < v->n; i++) {
            const nm_ynode *it = v->items[i];
            if (it->kind != NM_Y_SCALAR || nm_yis_null(it))
                return nm_yerror(err, it, "a value must be a scalar");
            if ((st = add_value(ax, it->str, it, err)) != NM_OK)
                return st;
        }
        return NM_OK;
    }
    if (v->kind != NM_Y_MAP)
        return nm_yerror(err, v, "values: a list, {from, to, times} or {from, to, step}");
    static const char *const keys[] = {"from", "to", "times", "step", NULL};
    if ((st = nm_ycheck_keys(v, keys, "values", err)) != NM_OK)
        return st;
    const nm_ynode *from = nm_ymap_get(v, "from"), *to = nm_ymap_get(v, "to");
    const nm_ynode *times = nm_ymap_get(v, "times"), *step = nm_ymap_get(v, "step");
    if (!from || !to || !times == !step)
        return nm_yerror(err, v, "values: a range needs from, to, and one of times or step");
    double a, b, k;
    if ((st = number(from, "from", &a, err)) != NM_OK ||
        (st = number(to, "to", &b, err)) != NM_OK ||
        (st = number(times ? times : step, times ? "times" : "step", &k, err)) != NM_OK)
        return st;
    if (b < a)
        return nm_yerror(err, v, "'%s': the range from %g to %g is empty", ax->label, a, b);
    if (times && !(k > 1))
        return nm_yerror(err, times, "times must be greater than 1 (got %g): the range would "
                         "never grow", k);
    if (times && !(a > 0))
        return nm_yerror(err, from, "a range with times must start above 0 (got %g)", a);
    if (step && !(k > 0))
        return nm_yerror(err, step, "step must be greater than 0 (got %g)", k);
    /* Integral ranges stay exact; others are printed to 15 digits. */
    int integral = a == floor(a) && k == floor(k) && fabs(b) < 9e15;
    for (int i = 0;; i++) {
        double x = times ? a * pow(k, i) : a + k * i;
        if (x > b * (1 + 1e-12))
            break;
        char buf[64];
        if (integral)
            snprintf(buf, sizeof buf, "%.0f", x);
        else
            snprintf(buf, sizeof buf, "%.15g", x);
        if ((st = add_value(ax, buf, v, err)) != NM_OK)
            return st;
    }
    return NM_OK;
}

static int cmp_u64(const void *x, const void *y)
{
    uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;
    return (a > b) - (a < b);
}

/* Draws `samples` distinct grid points, kept in grid order. */
static nm_status draw(nm_sweep *sw, uint64_t grid, nm_error *err)
{
    uint64_t n = sw->samples < grid ? sw->samples : grid;
    uint64_t cap = 16;
    while (cap < 2 * n)
        cap *= 2;
    uint64_t *set = nm_calloc(cap, sizeof *set); /* grid index + 1; 0 = empty */
    sw->grid_index = nm_calloc(n ? n : 1, sizeof *sw->grid_index);
    if (!set || !sw->grid_index) {
        nm_free(set);
        return nm_error_set(err, NM_ERR_NOMEM, NULL, 0, 0, "out of memory");
    }
    nm_pcg32 rng;
    nm_pcg32_seed(&rng, sw->seed, 0x5eed5eedu);
    uint64_t got = 0;
    while (got < n) {
        uint64_t g = nm_pcg32_bounded64(&rng, grid);
        uint64_t h = (g * 0x9e3779b97f4a7c15ull) & (cap - 1);
        while (set[h] && set[h] != g + 1)
            h = (h + 1) & (cap - 1);
        if (set[h])
            continue;
        set[h] = g + 1;
        sw->grid_index[got++] = g;
    }
    nm_free(set);
    qsort(sw->grid_index, n, sizeof *sw->grid_index, cmp_u64);
    sw->npoints = n;
    return NM_OK;
}

/* `set: design`: its values are design files (or dataflows: a design with
 * its constraints), each found as `design:` is. */
static nm_status parse_designs(nm_sweep *sw, nm_sweep_axis *ax, nm_error *err)
{
    const nm_ynode *v = ax->values_node;
    if (sw->design_axis >= 0)
        return nm_yerror(err, ax->set, "the design is varied twice");
    if (v->kind != NM_Y_SEQ || v->n == 0)
        return nm_yerror(err, v, "'design': the values are design files, a list of one or more");
    if (v->n > NM_SWEEP_MAX_VALUES)
        return nm_yerror(err, v, "more than %d values", NM_SWEEP_MAX_VALUES);
    ax->value = nm_calloc(v->n, sizeof *ax->value);
    ax->at = nm_calloc(v->n, sizeof *ax->at);
    ax->path = nm_calloc(v->n, sizeof *ax->path);
    if (!ax->value || !ax->at || !ax->path)
        return nm_error_set(err, NM_ERR_NOMEM, NULL, 0, 0, "out of memory");
    for (size_t i = 0; i < v->n; i++) {
        const nm_ynode *it = v->items[i];
        nm_status st;
        if ((st = resolve(ax->path[i], it, "a design", err)) != NM_OK)
            return st;
        if (strlen(it->str) >= NM_OVERRIDE_VALUE_MAX)
            return nm_yerror(err, it, "the name '%s' is too long", it->str);
        snprintf(ax->value[i], NM_OVERRIDE_VALUE_MAX, "%s", it->str);
        ax->at[ax->nvalues++] = it;
    }
    sw->design_axis = (int)(ax - sw->axis);
    return NM_OK;
}

/* One varied attribute, {set, values}, as the next axis. */
static nm_status parse_axis(nm_sweep *sw, const nm_ynode *e, nm_error *err)
{
    static const char *const ekeys[] = {"set", "values", NULL};
    nm_status st;
    if ((st = nm_yexpect(e, NM_Y_MAP, "a varied attribute", err)) != NM_OK ||
        (st = nm_ycheck_keys(e, ekeys, "a varied attribute", err)) != NM_OK)
        return st;
    if (sw->naxes >= NM_SWEEP_MAX_AXES)
        return nm_yerror(err, e, "more than %d varied attributes", NM_SWEEP_MAX_AXES);
    nm_sweep_axis *ax = &sw->axis[sw->naxes++];
    ax->set = nm_ymap_get(e, "set");
    ax->values_node = nm_ymap_get(e, "values");
    if (!ax->set || !ax->values_node)
        return nm_yerror(err, e, "a varied attribute needs 'set' (COMPONENT.ATTRIBUTE or "
                         "problem.NAME) and 'values'");
    const char *label;
    if ((st = nm_yget_str(ax->set, "set", &label, err)) != NM_OK)
        return st;
    if (strlen(label) >= sizeof ax->label)
        return nm_yerror(err, ax->set, "'%s' is too long", label);
    snprintf(ax->label, sizeof ax->label, "%s", label);
    for (int j = 0; j + 1 < sw->naxes; j++)
        if (!strcmp(sw->axis[j].label, label))
            return nm_yerror(err, ax->set, "'%s' is varied twice", label);
    if (!strcmp(label, "design"))
        return parse_designs(sw, ax, err);
    /* The form of the override (a value checked later, with the design;
     * a sparse option's values, which name kinds, each now). */
    nm_override ov;
    char text[sizeof ax->label + 8];
    int sparse = !strncmp(label, NM_OVERRIDE_SPARSE ".", sizeof NM_OVERRIDE_SPARSE);
    snprintf(text, sizeof text, "%s=%s", label,
             !sparse ? "1" : strstr(label, ".format.") ? "none" : "gating");
    if ((st = nm_override_parse(&ov, text, ax->set, err)) != NM_OK ||
        (st = parse_values(ax, ax->values_node, err)) != NM_OK)
        return st;
    for (int v = 0; sparse && v < ax->nvalues; v++) {
        char one[sizeof ax->label + NM_OVERRIDE_VALUE_MAX + 2];
        snprintf(one, sizeof one, "%s=%s", label, ax->value[v]);
        if ((st = nm_override_parse(&ov, one, ax->at[v], err)) != NM_OK)
            return st;
    }
    return NM_OK;
}

/* `warm:` true, false (every point cold) or {block: N, first: X, effort: Y}. */
static nm_status parse_warm(nm_sweep *sw, const nm_ynode *w, nm_error *err)
{
    if (!w)
        return NM_OK;
    nm_status st;
    if (w->kind == NM_Y_SCALAR) {
        int on;
        if ((st = nm_yget_bool(w, "warm", &on, err)) != NM_OK)
            return st;
        sw->warm_block = on ? NM_SWEEP_WARM_BLOCK : 1;
        return NM_OK;
    }
    static const char *const keys[] = {"block", "first", "effort", NULL};
    if ((st = nm_yexpect(w, NM_Y_MAP, "warm", err)) != NM_OK ||
        (st = nm_ycheck_keys(w, keys, "warm", err)) != NM_OK)
        return st;
    sw->warm_block = NM_SWEEP_WARM_BLOCK; /* asked for, random sweeps too */
    const nm_ynode *b = nm_ymap_get(w, "block");
    if (b) {
        int64_t v;
        if ((st = nm_yget_pos(b, "block", &v, err)) != NM_OK)
            return st;
        if (v > 1000000)
            return nm_yerror(err, b, "block must be 1 to 1000000 points");
        sw->warm_block = (int)v;
    }
    static const char *const ekeys[] = {"first", "effort"};
    double *dst[] = {&sw->warm_first, &sw->warm_effort};
    for (int i = 0; i < 2; i++) {
        const nm_ynode *e = nm_ymap_get(w, ekeys[i]);
        if (!e)
            continue;
        if ((st = nm_yget_num(e, ekeys[i], dst[i], err)) != NM_OK)
            return st;
        if (!(*dst[i] > 0 && *dst[i] <= 1000))
            return nm_yerror(err, e, "%s must be above 0 and at most 1000 (1: the default "
                             "search's budget)", ekeys[i]);
    }
    return NM_OK;
}

nm_status nm_sweep_parse(nm_sweep *sw, const nm_ynode *node, nm_error *err)
{
    memset(sw, 0, sizeof *sw);
    sw->node = node;
    snprintf(sw->objective, sizeof sw->objective, "edp");
    static const char *const keys[] = {"design", "workloads", "vary", "mode", "samples", "seed",
                                       "objective", "budget", "warm", "fuse", NULL};
    sw->warm_block = NM_SWEEP_WARM_BLOCK;
    sw->warm_first = NM_SWEEP_WARM_FIRST;
    sw->warm_effort = NM_SWEEP_WARM_EFFORT;
    nm_status st = nm_yexpect(node, NM_Y_MAP, "sweep", err);
    if (st != NM_OK || (st = nm_ycheck_keys(node, keys, "sweep", err)) != NM_OK)
        return st;
    sw->design_axis = -1;
    const nm_ynode *d = nm_ymap_get(node, "design");
    if (d && (st = resolve(sw->design, d, "design", err)) != NM_OK)
        return st;
    const nm_ynode *w = nm_ymap_get(node, "workloads");
    if (!w || (w->kind == NM_Y_SEQ && w->n == 0))
        return nm_yerror(err, w ? w : node, "the sweep names no 'workloads' (networks or layers)");
    size_t nw = w->kind == NM_Y_SEQ ? w->n : 1;
    if (nw > NM_SWEEP_MAX_WORKLOADS)
        return nm_yerror(err, w, "more than %d workloads", NM_SWEEP_MAX_WORKLOADS);
    sw->workload = nm_calloc(nw, sizeof *sw->workload);
    sw->workload_node = nm_calloc(nw, sizeof *sw->workload_node);
    if (!sw->workload || !sw->workload_node)
        return nm_error_set(err, NM_ERR_NOMEM, NULL, 0, 0, "out of memory");
    for (size_t i = 0; i < nw; i++) {
        const nm_ynode *it = w->kind == NM_Y_SEQ ? w->items[i] : w;
        if ((st = resolve(sw->workload[i], it, "a workload", err)) != NM_OK)
            return st;
        sw->workload_node[sw->nworkloads++] = it;
    }
    const nm_ynode *vary = nm_ymap_get(node, "vary");
    if (!vary || (vary->kind == NM_Y_SEQ && vary->n == 0))
        return nm_yerror(err, vary ? vary : node, "the sweep varies nothing: give 'vary', a list "
                         "of {set: COMPONENT.ATTRIBUTE, values: ...}");
    if ((st = nm_yexpect(vary, NM_Y_SEQ, "vary", err)) != NM_OK)
        return st;
    uint64_t grid = 1;
    for (size_t i = 0; i < vary->n; i++) {
        const nm_ynode *e = vary->items[i];
        if ((st = nm_yexpect(e, NM_Y_MAP, "a varied attribute", err)) != NM_OK)
            return st;
        const nm_ynode *zip = nm_ymap_get(e, "zip");
        int first = sw->naxes;
        if (zip) {
            /* linked attributes: their i-th values go together */
            static const char *const zkeys[] = {"zip", NULL};
            if ((st = nm_ycheck_keys(e, zkeys, "a zip of linked attributes", err)) != NM_OK ||
                (st = nm_yexpect(zip, NM_Y_SEQ, "zip", err)) != NM_OK)
                return st;
            if (zip->n < 2)
                return nm_yerror(err, zip, "zip links two or more attributes ({set, values} "
                                 "each, with as many values)");
            for (size_t k = 0; k < zip->n; k++) {
                if ((st = parse_axis(sw, zip->items[k], err)) != NM_OK)
                    return st;
                const nm_sweep_axis *ax = &sw->axis[sw->naxes - 1];
                if (ax->nvalues != sw->axis[first].nvalues)
                    return nm_yerror(err, ax->values_node, "'%s' has %d values but '%s' has %d: "
                                     "linked attributes take their values together, one from "
                                     "each list", ax->label, ax->nvalues, sw->axis[first].label,
                                     sw->axis[first].nvalues);
            }
        } else if ((st = parse_axis(sw, e, err)) != NM_OK) {
            return st;
        }
        for (int a = first; a < sw->naxes; a++)
            sw->axis[a].group = sw->ngroups;
        sw->ngroups++;
        uint64_t nv = (uint64_t)sw->axis[first].nvalues;
        if (grid > NM_SWEEP_MAX_POINTS / nv)
            return nm_yerror(err, sw->axis[first].values_node, "the grid has more than %d points",
                             NM_SWEEP_MAX_POINTS);
        grid *= nv;
    }
    if (d && sw->design_axis >= 0)
        return nm_yerror(err, d, "the sweep varies its design (set: design): leave out 'design'");
    if (!d && sw->design_axis < 0)
        return nm_yerror(err, node, "the sweep names no 'design' (a file with the architecture; "
                         "or vary it: {set: design, values: [FILE, ...]})");
    const nm_ynode *bud = nm_ymap_get(node, "budget");
    if (bud) {
        if ((st = nm_yexpect(bud, NM_Y_MAP, "budget", err)) != NM_OK)
            return st;
        if (bud->n > NM_SWEEP_MAX_BUDGETS)
            return nm_yerror(err, bud, "more than %d budgets", NM_SWEEP_MAX_BUDGETS);
        for (size_t i = 0; i < bud->n; i++) {
            const nm_ynode *k = bud->items[2 * i], *v = bud->items[2 * i + 1];
            nm_sweep_budget *b = &sw->budget[sw->nbudgets++];
            if (!k->str || strlen(k->str) >= sizeof b->column)
                return nm_yerror(err, k, "a budget names a column of points.csv");
            snprintf(b->column, sizeof b->column, "%s", k->str);
            b->at = k;
            if ((st = number(v, b->column, &b->max, err)) != NM_OK)
                return st;
        }
    }
    const nm_ynode *m = nm_ymap_get(node, "mode");
    const char *mode = "grid";
    if (m && (st = nm_yget_str(m, "mode", &mode, err)) != NM_OK)
        return st;
    const nm_ynode *smp = nm_ymap_get(node, "samples"), *seed = nm_ymap_get(node, "seed");
    if (!strcmp(mode, "random")) {
        int64_t v;
        if (!smp)
            return nm_yerror(err, m, "a random sweep needs 'samples' (how many points)");
        if ((st = nm_yget_pos(smp, "samples", &v, err)) != NM_OK)
            return st;
        sw->samples = (uint64_t)v;
        if (seed) {
            if ((st = nm_yget_int(seed, "seed", &v, err)) != NM_OK)
                return st;
            if (v < 0)
                return nm_yerror(err, seed, "seed must not be negative");
            sw->seed = (uint64_t)v;
        }
        sw->random = 1;
    } else if (!strcmp(mode, "grid")) {
        if (smp || seed)
            return nm_yerror(err, smp ? smp : seed, "'%s' is for mode: random", smp ? "samples"
                                                                                    : "seed");
    } else {
        return nm_yerror(err, m, "unknown mode '%s' (grid or random)", mode);
    }
    const nm_ynode *obj = nm_ymap_get(node, "objective");
    if (obj) {
        const char *o;
        if ((st = nm_yget_str(obj, "objective", &o, err)) != NM_OK)
            return st;
        if (nm_metric_parse(o) < 0)
            return nm_yerror(err, obj, "unknown objective '%s' (energy, delay, edp, ed2p, "
                             "last_level_accesses)", o);
        snprintf(sw->objective, sizeof sw->objective, "%s", o);
    }
    /* A random sweep's consecutive points are unrelated designs: cold,
     * unless its file asks for warm starts. */
    if (sw->random)
        sw->warm_block = 1;
    if ((st = parse_warm(sw, nm_ymap_get(node, "warm"), err)) != NM_OK)
        return st;
    sw->fuse = 1;
    const nm_ynode *fu = nm_ymap_get(node, "fuse");
    if (fu && (st = nm_yget_bool(fu, "fuse", &sw->fuse, err)) != NM_OK)
        return st;
    sw->fuse_networks = fu && sw->fuse;
    if (sw->random)
        return draw(sw, grid, err);
    sw->npoints = grid;
    return NM_OK;
}

void nm_sweep_fini(nm_sweep *sw)
{
    if (!sw)
        return;
    for (int a = 0; a < sw->naxes; a++) {
        nm_free(sw->axis[a].value);
        nm_free(sw->axis[a].at);
        nm_free(sw->axis[a].path);
    }
    nm_free(sw->workload);
    nm_free(sw->workload_node);
    nm_free(sw->grid_index);
    memset(sw, 0, sizeof *sw);
}

void nm_sweep_point(const nm_sweep *sw, uint64_t p, int *idx)
{
    uint64_t g = sw->random ? sw->grid_index[p] : p;
    /* the axes of a group (a zip) are adjacent and move together */
    for (int a = sw->naxes - 1; a >= 0;) {
        uint64_t n = (uint64_t)sw->axis[a].nvalues;
        int v = (int)(g % n);
        g /= n;
        int grp = sw->axis[a].group;
        for (; a >= 0 && sw->axis[a].group == grp; a--)
            idx[a] = v;
    }
}

int nm_sweep_axis_leads(const nm_sweep *sw, int a)
{
    return a == 0 || sw->axis[a - 1].group != sw->axis[a].group;
}

const char *nm_sweep_design(const nm_sweep *sw, const int *idx)
{
    return sw->design_axis < 0 ? sw->design : sw->axis[sw->design_axis].path[idx[sw->design_axis]];
}

nm_status nm_sweep_override(const nm_sweep *sw, int a, int v, nm_override *ov, nm_error *err)
{
    const nm_sweep_axis *ax = &sw->axis[a];
    char text[sizeof ax->label + NM_OVERRIDE_VALUE_MAX + 2];
    snprintf(text, sizeof text, "%s=%s", ax->label, ax->value[v]);
    return nm_override_parse(ov, text, ax->at[v], err);
}

static int dominates(const nm_sweep_summary *a, const nm_sweep_summary *b)
{
    return a->energy_pj <= b->energy_pj && a->seconds <= b->seconds &&
           a->area_um2 <= b->area_um2 &&
           (a->energy_pj < b->energy_pj || a->seconds < b->seconds || a->area_um2 < b->area_um2);
}

/* Points by energy, then seconds, then area: a point can only be dominated
 * by one before it, and then by one on the front already. */
typedef struct keyed {
    double e, t, a;
    uint64_t i;
} keyed;

static int by_energy(const void *x, const void *y)
{
    const keyed *a = x, *b = y;
    if (a->e != b->e)
        return a->e < b->e ? -1 : 1;
    if (a->t != b->t)
        return a->t < b->t ? -1 : 1;
    if (a->a != b->a)
        return a->a < b->a ? -1 : 1;
    return (a->i > b->i) - (a->i < b->i);
}

void nm_sweep_pareto(const nm_sweep_summary *s, uint64_t n, unsigned char *on_front)
{
    keyed *order = nm_calloc(n ? n : 1, sizeof *order);
    uint64_t *front = nm_calloc(n ? n : 1, sizeof *front);
    uint64_t m = 0, nf = 0;
    memset(on_front, 0, n);
    if (!order || !front) { /* fall back to comparing every pair */
        for (uint64_t i = 0; i < n; i++) {
            on_front[i] = s[i].status == NM_SWEEP_OK;
            for (uint64_t j = 0; j < n && on_front[i]; j++)
                if (s[j].status == NM_SWEEP_OK && dominates(&s[j], &s[i]))
                    on_front[i] = 0;
        }
    } else {
        for (uint64_t i = 0; i < n; i++)
            if (s[i].status == NM_SWEEP_OK)
                order[m++] = (keyed){s[i].energy_pj, s[i].seconds, s[i].area_um2, i};
        qsort(order, m, sizeof *order, by_energy);
        for (uint64_t k = 0; k < m; k++) {
            int dominated = 0;
            for (uint64_t f = 0; f < nf && !dominated; f++)
                dominated = dominates(&s[front[f]], &s[order[k].i]);
            if (!dominated) {
                front[nf++] = order[k].i;
                on_front[order[k].i] = 1;
            }
        }
    }
    nm_free(order);
    nm_free(front);
}
