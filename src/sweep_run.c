/* sweep_run.c — a design-space sweep run (sweep_run.h): each point's
 * workloads loaded with the point's values, mapped and summed into a row
 * of points.csv; the checks before anything runs; the resume fingerprint;
 * and the whole run, into a directory (sweep_dir.c writes it) or as a
 * table. */
#define _XOPEN_SOURCE 700 /* nftw, mkdtemp */
#include <config.h>

#include <ftw.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nestmap/alloc.h"
#include "nestmap/job.h"
#include "nestmap/mapspace.h"
#include "nestmap/network.h"
#include "nestmap/report.h"
#include "nestmap/roofline.h"
#include "nestmap/search.h"
#include "nestmap/spec.h"
#include "nestmap/sweep_run.h"
#include "nestmap/text.h"

/* ---- one point ---- */

/* The files of workload w: the design, the workload, the command line's. */
static int files_of(const nm_sweep_run *run, const char *design, int w, const char **files)
{
    int n = 0;
    files[n++] = design;
    files[n++] = run->sw.workload[w];
    for (int i = 0; i < run->nextra; i++)
        files[n++] = run->extra[i];
    return n;
}


/* Loads workload w with the overrides; the network of its layers (one
 * layer for a `problem:`) in *net. */
static nm_status load(const nm_sweep_run *run, const char *design, int w, const nm_override *ov,
                      int nov, nm_spec *spec, nm_network *net, nm_error *err)
{
    const char *files[2 + NM_SWEEP_MAX_EXTRA];
    int n = files_of(run, design, w, files);
    unsigned need = NM_NEED_ARCH | NM_ACCEPT_CHAIN | (run->builtin_energy ? NM_BUILTIN_ENERGY : 0);
    nm_spec_opts so = {ov, (size_t)nov, run->vars, (size_t)run->nvars};
    nm_status st = nm_spec_load_opts(spec, files, (size_t)n, &so, need, err);
    memset(net, 0, sizeof *net);
    if (st != NM_OK || spec->chain) /* a chain: no layers */
        return st;
    const nm_ynode *node = nm_ymap_get(spec->doc.root, "network");
    if (node)
        return nm_network_parse(net, node, &spec->doc, err);
    if (!spec->has_problem)
        return nm_yerror(err, run->sw.workload_node[w], "workload '%s' holds neither a "
                         "'network' nor a 'problem'", run->sw.workload[w]);
    net->layer = nm_calloc(1, sizeof *net->layer);
    if (!net->layer)
        return nm_error_set(err, NM_ERR_NOMEM, NULL, 0, 0, "out of memory");
    nm_layer *l = &net->layer[0];
    snprintf(net->name, sizeof net->name, "%s", run->wl_name[w]);
    snprintf(l->name, sizeof l->name, "%s", run->wl_name[w]);
    l->repeat = 1;
    l->wl = spec->wl;
    l->node = nm_ymap_get(spec->doc.root, "problem");
    net->nlayers = net->ndistinct = 1;
    return NM_OK;
}

/* The search options of a point: `mapper:`, the sweep's objective, then
 * the command line. */
static nm_status search_opts(const nm_sweep_run *run, const nm_spec *spec, nm_search_opts *o,
                             nm_error *err)
{
    nm_search_opts_init(o);
    nm_status st = nm_search_opts_parse(o, spec->mapper, err);
    if (st != NM_OK)
        return st;
    o->nmetrics = 1;
    o->metric[0] = (nm_metric)nm_metric_parse(run->sw.objective);
    for (int i = 0; i < run->nopt; i++)
        if ((st = nm_job_search_option(o, run->opt_name[i], run->opt_value[i], err)) != NM_OK)
            return st; /* checked before the sweep began */
    o->imperfect |= spec->imperfect;
    o->stop = run->stop;
    return NM_OK;
}

static double arch_area(const nm_arch *arch)
{
    double a = arch->arith.area * (double)arch->arith.instances;
    for (int l = 0; l < arch->nlevels; l++)
        a += arch->level[l].area * (double)arch->level[l].instances;
    return a;
}

/* Warm starts live in the local search after a random strategy: without
 * it (--no-refine, exhaustive, optimal) every point searches as `map` does,
 * on its own (nm_sweep_run_check then makes every block one point). */
static int warm_applies(const nm_search_opts *o)
{
    return o->refine && strcmp(o->algorithm, "exhaustive") && strcmp(o->algorithm, "optimal");
}

/* Whether a point runs in warm blocks; if so, sets its budget: the block's
 * first point (warm NULL) searches with warm_first of the effort, the rest
 * with warm_effort. */
static int point_budget(const nm_sweep_run *run, nm_search_opts *o, int warm)
{
    if (run->sw.warm_block <= 1 || !warm_applies(o))
        return 0;
    o->effort = nm_search_effort(o) * (warm ? run->sw.warm_effort : run->sw.warm_first);
    return 1;
}

/* The level column named `name` (level_arith: the arithmetic's), or -1. */
static int level_column(const nm_sweep_run *run, const char *name, int arith)
{
    for (int c = 0; c < run->nlevels; c++)
        if (run->level_arith[c] == arith && !strcmp(run->level[c], name))
            return c;
    return -1;
}

/* The sweep's level column of each level of arch (col[arch->nlevels]: the
 * arithmetic's), -1 where none; marks them present in s. */
static void level_columns(const nm_sweep_run *run, const nm_arch *arch, nm_sweep_summary *s,
                          int *col)
{
    for (int l = 0; l <= arch->nlevels; l++) {
        int arith = l == arch->nlevels;
        col[l] = level_column(run, arith ? arch->arith.name : arch->level[l].name, arith);
        if (col[l] >= 0)
            s->level_on[col[l]] = 1;
    }
}

/* Adds rep runs of a layer (or operation) whose stats are *st to the
 * point's off-chip bytes (each tensor at its width there:
 * tensor_datawidth) and to what bound its cycles: the arithmetic when
 * nothing throttled, else the level whose transfers took the longest (its
 * bandwidth), by the sweep's level columns col. */
static void add_traffic(nm_sweep_summary *s, const nm_arch *arch, const nm_workload *wl,
                        const nm_stats *st, double rep, const int *col)
{
    const nm_level *top = &arch->level[arch->nlevels - 1];
    const nm_level_stats *ts = &st->level[arch->nlevels - 1];
    for (int ds = 0; ds < wl->nds; ds++)
        s->dram_bytes += rep * (double)ts->ds[ds].utilized_instances *
                         (double)(ts->ds[ds].reads + ts->ds[ds].updates + ts->ds[ds].fills) *
                         nm_level_ds_bits(top, wl, ds) / 8.0;
    int b = NM_SWEEP_MAX_LEVEL_COLS;
    if (st->cycles > st->compute_cycles) {
        int worst = 0;
        for (int l = 1; l < arch->nlevels; l++)
            if (st->level[l].cycles > st->level[worst].cycles)
                worst = l;
        if (col[worst] >= 0)
            b = col[worst];
    }
    s->bound_by_cycles[b] += rep * (double)st->cycles;
}

/* Workload w when it is a chain of operations: the fused search (each
 * operation alone when the sweep says `fuse: false`), its best cut's
 * figures added to the point's summary and each operation's row in
 * po->layers[w]; its searches start warm from those of `warm` (the point
 * before in the block; NULL: none), and po->seeds[w] gets its own for the
 * next point (po->best[w] holds no mapping); the proven bound its
 * operations' rooflines (nm_roofline_chain_bound: no intermediate off
 * chip). */
static nm_status map_chain(const nm_sweep_run *run, const nm_spec *spec, nm_search_opts *o,
                           int w, const nm_sweep_point_out *warm, nm_sweep_summary *s,
                           nm_sweep_point_out *po, nm_error *err)
{
    char **csv = &po->layers[w];
    nm_mapping **best = &po->best[w];
    const nm_arch *arch = &spec->arch;
    const nm_chain *c = spec->chain;
    if (run->threads)
        o->threads = run->threads;
    if (!(*best = nm_calloc(1, sizeof **best)))
        return nm_error_set(err, NM_ERR_NOMEM, NULL, 0, 0, "out of memory");
    int warms = point_budget(run, o, warm != NULL);
    nm_fused_result r;
    nm_status st = nm_fused_search_given(arch, c, spec->constraints, spec->constraints2, o,
                                         run->sw.fuse, NULL, warms && warm ? warm->seeds[w] : NULL,
                                         warms && warm ? warm->nseeds[w] : 0, &r, err);
    if (st == NM_OK) { /* (the next point's warm starts) */
        po->seeds[w] = r.seeds;
        po->nseeds[w] = r.nseeds;
        r.seeds = NULL;
        r.nseeds = 0;
    }
    s->area_um2 = arch_area(arch);
    if (st == NM_ERR_NOMEM) {
        nm_fused_result_fini(&r);
        return st;
    }
    if (st != NM_OK) { /* no valid mapping: the point's result */
        if (s->status == NM_SWEEP_OK) {
            s->status = NM_SWEEP_UNMAPPED;
            snprintf(s->reason, sizeof s->reason, "%.60s: %.500s", run->wl_name[w], err->msg);
        }
        nm_error_clear(err);
        nm_fused_result_fini(&r);
        return NM_OK;
    }
    const nm_fused_stats *fs = r.best_st;
    nm_roofline_chain_bound(arch, c, &s->bound);
    s->lla += (double)fs->total.backing;
    s->energy_pj += fs->total.energy;
    s->cycles += (double)fs->total.cycles;
    s->workload_pj[w] = fs->total.energy;
    s->workload_cycles[w] = (double)fs->total.cycles;
    s->seconds += (double)fs->total.cycles * arch->cycle_seconds;
    int col[NM_MAX_LEVELS + 1];
    level_columns(run, arch, s, col);
    size_t csv_len;
    FILE *f = open_memstream(csv, &csv_len);
    if (f)
        fputs("operation,group,fuse_at,energy_pj,cycles,computes,backing_accesses\n", f);
    for (int i = 0; i < c->nops; i++) {
        const nm_stats *os = &fs->op[i];
        const nm_workload *wl = &c->op[i].wl;
        s->busy += os->utilization * (double)os->cycles;
        s->macs += (double)nm_workload_ops(wl);
        for (int l = 0; l <= arch->nlevels; l++)
            if (col[l] >= 0)
                s->level_pj[col[l]] += l == arch->nlevels ? os->compute_energy
                                                          : os->level[l].energy;
        nm_roofline rr;
        nm_roofline_op(&rr, arch, c, i);
        s->bound_cycles += rr.bound_cycles;
        add_traffic(s, arch, &r.chain->op[i].wl, os, 1.0, col); /* (as mapped: halos) */
        if (f) {
            const nm_fused_group *g = &r.best.group[r.best.group_of[i]];
            nm_report_csv_field(f, c->op[i].name);
            fprintf(f, ",%d,", r.best.group_of[i] + 1);
            nm_report_csv_field(f, g->level < arch->nlevels - 1 ? arch->level[g->level].name : "");
            fprintf(f, ",%.17g,%llu,%llu,%llu\n", os->energy, (unsigned long long)os->cycles,
                    (unsigned long long)os->computes,
                    (unsigned long long)os->last_level_accesses);
        }
    }
    nm_fused_result_fini(&r);
    if (!f || fclose(f) != 0)
        return nm_error_set(err, NM_ERR_NOMEM, NULL, 0, 0, "out of memory");
    return NM_OK;
}

/* A network's figures, layer by layer or as fused (nm_network_fused_each's
 * visits): its totals, and the off-chip bytes and what bound the cycles of
 * each layer or fused operation. */
typedef struct sweep_visit {
    nm_sweep_summary *s;
    const nm_arch *arch;
    const int *col;
    nm_network_total t;
} sweep_visit;

static void visit_layer(void *arg, const nm_workload *wl, const nm_stats *st, int64_t repeat)
{
    sweep_visit *v = arg;
    nm_network_total_add(&v->t, v->arch, wl, st, (double)repeat);
    add_traffic(v->s, v->arch, wl, st, (double)repeat, v->col);
}

/* A fused network's layers.csv: a row per layer, or per operation of a run
 * whose fused mapping is used (its run named FIRST..LAST), then the
 * network's totals fused and unfused. */
static void fused_csv(FILE *f, const nm_network *net, const nm_layer_result *out,
                      const nm_network_fusion *fu)
{
    fputs("layer,run,fused,repeat,energy_pj,cycles,computes,backing_accesses\n", f);
    for (int i = 0; i < net->nlayers; i++) {
        const nm_network_run *r = nm_network_fused_run(fu, i);
        const nm_layer_result *lr = &out[net->layer[i].same_as];
        const nm_stats *st = r ? &fu->run[r->same_as].res.best_st->op[i - r->first]
                         : lr->status == NM_OK && lr->res.found ? &lr->res.best_stats : NULL;
        nm_report_csv_field(f, net->layer[i].name);
        fputc(',', f);
        if (r) {
            char run[2 * NM_NAME_MAX + 4];
            snprintf(run, sizeof run, "%s..%s", net->layer[r->first].name,
                     net->layer[r->first + r->n - 1].name);
            nm_report_csv_field(f, run);
        }
        fprintf(f, ",%s,%lld", r ? "true" : "false", (long long)net->layer[i].repeat);
        if (st)
            fprintf(f, ",%.17g,%llu,%llu,%llu\n", st->energy, (unsigned long long)st->cycles,
                    (unsigned long long)st->computes,
                    (unsigned long long)st->last_level_accesses);
        else
            fputs(",,,,\n", f);
    }
    const nm_fused_sum *tot[2] = {&fu->fused, &fu->unfused};
    for (int k = 0; k < 2; k++)
        fprintf(f, "(network %s),,%s,1,%.17g,%llu,%llu,%llu\n", k ? "unfused" : "fused",
                k ? "false" : "true", tot[k]->energy, (unsigned long long)tot[k]->cycles,
                (unsigned long long)tot[k]->computes, (unsigned long long)tot[k]->backing);
}

/* Adds workload w's results to the point's summary; its layers.csv in
 * po->layers[w] and its layers' best mappings in po->best[w] (a chain's
 * searches in po->seeds[w]), its searches starting warm from those of
 * `warm` (the point before in the block; NULL: none). */
static nm_status map_workload(const nm_sweep_run *run, const char *design, int w,
                              const nm_override *ov, int nov, const nm_sweep_point_out *warm,
                              nm_sweep_summary *s, nm_sweep_point_out *po, nm_error *err)
{
    char **csv = &po->layers[w];
    nm_mapping **best = &po->best[w];
    nm_spec spec;
    nm_network net;
    nm_search_opts o;
    nm_layer_result *out = NULL;
    nm_status st = load(run, design, w, ov, nov, &spec, &net, err);
    if (st == NM_OK)
        st = search_opts(run, &spec, &o, err);
    if (st == NM_OK && spec.chain) {
        st = map_chain(run, &spec, &o, w, warm, s, po, err);
        nm_network_fini(&net);
        nm_spec_fini(&spec);
        return st;
    }
    if (st == NM_OK && !(out = nm_calloc((size_t)net.nlayers, sizeof *out)))
        st = nm_error_set(err, NM_ERR_NOMEM, NULL, 0, 0, "out of memory");
    int warms = st == NM_OK && point_budget(run, &o, warm != NULL);
    const nm_mapping *from = warms && warm ? warm->best[w] : NULL;
    if (st == NM_OK)
        st = nm_network_map_warm(&net, &spec.arch, spec.constraints, spec.constraints2, &o,
                                 run->threads ? run->threads : o.threads, &from, from ? 1 : 0,
                                 out, NULL, NULL, err);
    if (st == NM_OK && !(*best = nm_network_best_mappings(&net, out)))
        st = nm_error_set(err, NM_ERR_NOMEM, NULL, 0, 0, "out of memory");
    /* `fuse: true`: the network's runs of layers fused where they score
     * better, as network --fuse fuses them */
    nm_network_fusion fu;
    memset(&fu, 0, sizeof fu);
    int fused = st == NM_OK && run->sw.fuse_networks && net.nlayers > 1;
    if (fused)
        st = nm_network_fuse(&net, &spec.arch, spec.constraints, spec.constraints2, &o, out, &fu,
                             err);
    if (st == NM_OK) {
        const nm_arch *arch = &spec.arch;
        /* By the sweep's columns (the checks made one for every level). */
        int col[NM_MAX_LEVELS + 1];
        level_columns(run, arch, s, col);
        sweep_visit v = {.s = s, .arch = arch, .col = col};
        nm_network_fused_each(&net, out, &fu, visit_layer, &v);
        const nm_network_total *t = &v.t;
        nm_network_bound(arch, &net, out, fused ? &fu : NULL, &o, &s->bound);
        s->lla += t->lla;
        s->energy_pj += t->energy;
        s->cycles += t->cycles;
        s->workload_pj[w] = t->energy;
        s->workload_cycles[w] = t->cycles;
        s->seconds += t->cycles * arch->cycle_seconds;
        s->busy += t->busy;
        s->macs += t->macs;
        s->area_um2 = arch_area(arch);
        for (int l = 0; l <= arch->nlevels; l++)
            if (col[l] >= 0)
                s->level_pj[col[l]] += t->level[l];
        s->bound_cycles += nm_network_roofline_cycles(arch, &net, fused ? &fu : NULL);
        for (int i = 0; i < net.nlayers && s->status == NM_SWEEP_OK; i++) {
            const nm_layer_result *lr = &out[net.layer[i].same_as];
            if (lr->status != NM_OK || !lr->res.found) {
                s->status = NM_SWEEP_UNMAPPED;
                char why[256];
                nm_report_layer_failure(why, sizeof why, arch, lr);
                /* a workload of one layer is named once */
                if (net.nlayers == 1 && !strcmp(run->wl_name[w], net.layer[i].name))
                    snprintf(s->reason, sizeof s->reason, "%s: %s", run->wl_name[w], why);
                else
                    snprintf(s->reason, sizeof s->reason, "%s, layer %s: %s",
                             run->wl_name[w], net.layer[i].name, why);
            }
        }
        size_t len;
        FILE *f = open_memstream(csv, &len);
        if (!f) {
            st = nm_error_set(err, NM_ERR_NOMEM, NULL, 0, 0, "out of memory");
        } else {
            if (fused)
                fused_csv(f, &net, out, &fu);
            else
                nm_report_network(f, arch, &net, out, &o, 2);
            if (fclose(f) != 0)
                st = nm_error_set(err, NM_ERR_NOMEM, NULL, 0, 0, "out of memory");
        }
    }
    nm_network_fusion_fini(&fu);
    if (out)
        nm_network_results_fini(&net, out);
    nm_free(out);
    nm_network_fini(&net);
    nm_spec_fini(&spec);
    return st;
}

/* points.csv's figures of a point, in column order after the varied
 * attributes (then energy_uj.LEVEL per level, WORKLOAD.energy_uj and
 * WORKLOAD.cycles when there are several workloads, over_budget, status,
 * reason); `whole`: printed as an integer. */
static const struct {
    const char *name;
    int whole;
} figure_col[] = {
    {"energy_uj", 0},    {"cycles", 1},     {"seconds", 0},         {"edp_j_s", 0},
    {"area_mm2", 0},     {"macs", 1},       {"pj_per_mac", 0},      {"utilization_pct", 0},
    {"bound_cycles", 1}, {"cycles_over_bound", 0}, {"objective_bound", 0}, {"gap", 0},
    {"power_w", 0},
    {"dram_bytes", 1},   {"bound_by_pct", 0},
};
#define NFIGURES ((int)(sizeof figure_col / sizeof *figure_col))

/* What bound most of a point's cycles (bound_by_cycles' index). */
static int binding(const nm_sweep_summary *s)
{
    int b = NM_SWEEP_MAX_LEVEL_COLS; /* the arithmetic */
    for (int l = 0; l < NM_SWEEP_MAX_LEVEL_COLS; l++)
        if (s->bound_by_cycles[l] > s->bound_by_cycles[b])
            b = l;
    return b;
}

/* The objective of s in its own column's unit (energy_uj, cycles, edp_j_s,
 * J*s^2, words) per pJ, cycle and word: raw x scale. */
static double objective_scale(const nm_sweep_summary *s)
{
    double cs = s->cycles > 0 ? s->seconds / s->cycles : 0.0; /* seconds per cycle */
    switch (s->bound.metric) {
    case NM_MET_ENERGY:
        return 1e-6;
    case NM_MET_EDP:
        return 1e-12 * cs;
    case NM_MET_ED2P:
        return 1e-12 * cs * cs;
    default:
        return 1.0;
    }
}

static void figures(const nm_sweep_summary *s, double *v)
{
    double uj = s->energy_pj * 1e-6;
    double lb = nm_bound_sum_value(&s->bound);
    double score = nm_metric_value(s->bound.metric, s->energy_pj, s->cycles, s->lla);
    double fig[NFIGURES] = {
        uj,
        s->cycles,
        s->seconds,
        uj * 1e-6 * s->seconds,
        s->area_um2 * 1e-6,
        s->macs,
        s->macs > 0 ? s->energy_pj / s->macs : 0.0,
        s->cycles > 0 ? 100.0 * s->busy / s->cycles : 0.0,
        s->bound_cycles,
        s->bound_cycles > 0 ? s->cycles / s->bound_cycles : 0.0,
        lb * objective_scale(s),
        lb > 0 ? score / lb : 0.0,
        s->seconds > 0 ? s->energy_pj * 1e-12 / s->seconds : 0.0, /* average power */
        s->dram_bytes,
        s->cycles > 0 ? 100.0 * s->bound_by_cycles[binding(s)] / s->cycles : 0.0,
    };
    memcpy(v, fig, sizeof fig);
}

/* The value of points.csv's column `name` for s; 0 when there is no such
 * column (s may be NULL to ask only that). */
static int column_value(const nm_sweep_run *run, const nm_sweep_summary *s, const char *name,
                        double *out)
{
    double fig[NFIGURES];
    if (s)
        figures(s, fig);
    for (int k = 0; k < NFIGURES; k++)
        if (!strcmp(name, figure_col[k].name)) {
            *out = s ? fig[k] : 0.0;
            return 1;
        }
    if (!strncmp(name, "energy_uj.", 10))
        for (int l = 0; l < run->nlevels; l++)
            if (!strcmp(name + 10, run->level[l])) {
                /* a design without the level has none of its energy */
                *out = s ? s->level_pj[l] * 1e-6 : 0.0;
                return 1;
            }
    for (int w = 0; run->sw.nworkloads > 1 && w < run->sw.nworkloads; w++) {
        size_t n = strlen(run->wl_name[w]);
        if (strncmp(name, run->wl_name[w], n) || name[n] != '.')
            continue;
        if (!strcmp(name + n + 1, "energy_uj")) {
            *out = s ? s->workload_pj[w] * 1e-6 : 0.0;
            return 1;
        }
        if (!strcmp(name + n + 1, "cycles")) {
            *out = s ? s->workload_cycles[w] : 0.0;
            return 1;
        }
    }
    return 0;
}

int nm_sweep_workload_columns(const nm_sweep_run *run)
{
    return run->sw.nworkloads > 1 ? 2 * run->sw.nworkloads : 0;
}

int nm_sweep_figure_columns(const nm_sweep_run *run)
{
    return NFIGURES + run->nlevels + nm_sweep_workload_columns(run) + 2; /* bound_by, over_budget */
}

/* The budgets a point breaks, "area_mm2 2.31 > 2; ..." ("" within all). */
static void over_budget(const nm_sweep_run *run, const nm_sweep_summary *s, char *buf, size_t size)
{
    size_t n = 0;
    buf[0] = '\0';
    for (int b = 0; b < run->sw.nbudgets && n < size; b++) {
        const nm_sweep_budget *bu = &run->sw.budget[b];
        double v;
        if (column_value(run, s, bu->column, &v) && v > bu->max)
            n += (size_t)snprintf(buf + n, size - n, "%s%s %.6g > %.6g", n ? "; " : "",
                                  bu->column, v, bu->max);
    }
}

/* The row of points.csv for point p. */
static char *format_row(const nm_sweep_run *run, uint64_t p, const int *idx,
                        const nm_sweep_summary *s)
{
    char *buf = NULL;
    size_t len;
    FILE *f = open_memstream(&buf, &len);
    if (!f)
        return NULL;
    fprintf(f, "%llu", (unsigned long long)p);
    for (int a = 0; a < run->sw.naxes; a++) {
        fputc(',', f);
        nm_report_csv_field(f, run->sw.axis[a].value[idx[a]]);
    }
    if (s->status != NM_SWEEP_OK) {
        /* A failed point has no figures (not zeros that min() would pick);
         * its reason says why. */
        for (int k = 0; k < nm_sweep_figure_columns(run); k++)
            fputc(',', f);
    } else {
        double fig[NFIGURES];
        figures(s, fig);
        for (int k = 0; k < NFIGURES; k++)
            if (figure_col[k].whole)
                fprintf(f, ",%.0f", fig[k]);
            else
                fprintf(f, ",%.17g", fig[k]);
        for (int l = 0; l < run->nlevels; l++) {
            if (s->level_on[l]) /* blank where the point's design has no such level */
                fprintf(f, ",%.17g", s->level_pj[l] * 1e-6);
            else
                fputc(',', f);
        }
        for (int w = 0; nm_sweep_workload_columns(run) && w < run->sw.nworkloads; w++)
            fprintf(f, ",%.17g,%.0f", s->workload_pj[w] * 1e-6, s->workload_cycles[w]);
        int b = binding(s);
        fprintf(f, ",%s", b == NM_SWEEP_MAX_LEVEL_COLS ? "compute" : run->level[b]);
        char over[512];
        over_budget(run, s, over, sizeof over);
        fputc(',', f);
        nm_report_csv_field(f, over);
    }
    fprintf(f, ",%s,", nm_sweep_status_name(s->status));
    nm_report_csv_field(f, s->reason);
    fputc('\n', f);
    if (fclose(f) != 0) {
        free(buf);
        return NULL;
    }
    return buf;
}

/* The blocks: ceil(npoints / warm_block) of them, as even as can be (so
 * that none is a lone point searched with the warm effort and no warm
 * start); block k starts at k * npoints / nblocks. */
static uint64_t nblocks(const nm_sweep_run *run)
{
    uint64_t B = run->sw.warm_block > 1 ? (uint64_t)run->sw.warm_block : 1, N = run->sw.npoints;
    return N ? (N + B - 1) / B : 1;
}

static uint64_t block_start(const nm_sweep_run *run, uint64_t k)
{
    /* k * N / nb without overflow for any sweep that fits in memory */
    return (uint64_t)((unsigned __int128)k * run->sw.npoints / nblocks(run));
}

static uint64_t block_of(const nm_sweep_run *run, uint64_t p)
{
    uint64_t nb = nblocks(run), k = (uint64_t)((unsigned __int128)p * nb / run->sw.npoints);
    while (k + 1 < nb && block_start(run, k + 1) <= p)
        k++;
    while (k > 0 && block_start(run, k) > p)
        k--;
    return k;
}

uint64_t nm_sweep_block_first(const nm_sweep_run *run, uint64_t p)
{
    return block_start(run, block_of(run, p));
}

int nm_sweep_run_point(const nm_sweep_run *run, uint64_t p, const nm_sweep_point_out *warm,
                       nm_sweep_point_out *out)
{
    memset(out, 0, sizeof *out);
    out->point = p;
    int idx[NM_SWEEP_MAX_AXES];
    /* The command line's --set first, then the point's values. */
    nm_override ov[NM_SWEEP_MAX_SETS + NM_SWEEP_MAX_AXES];
    int nov = run->nsets;
    memcpy(ov, run->sets, (size_t)nov * sizeof *ov);
    nm_sweep_point(&run->sw, p, idx);
    const char *design = nm_sweep_design(&run->sw, idx);
    if (warm && run->sw.design_axis >= 0) {
        /* Another design's mappings are no start: the point searches as a
         * block's first does. */
        int before[NM_SWEEP_MAX_AXES];
        nm_sweep_point(&run->sw, warm->point, before);
        if (strcmp(nm_sweep_design(&run->sw, before), design))
            warm = NULL;
    }
    nm_error err;
    nm_error_clear(&err);
    nm_sweep_summary s;
    memset(&s, 0, sizeof s);
    nm_bound_sum_init(&s.bound, (nm_metric)nm_metric_parse(run->sw.objective));
    for (int a = 0; a < run->sw.naxes; a++)
        if (a != run->sw.design_axis &&
            nm_sweep_override(&run->sw, a, idx[a], &ov[nov++], &err) != NM_OK)
            return 2; /* checked before the sweep began */
    for (int w = 0; w < run->sw.nworkloads; w++) {
        nm_status st = map_workload(run, design, w, ov, nov, warm, &s, out, &err);
        if (st == NM_ERR_NOMEM) {
            nm_sweep_point_out_free(out);
            return 2;
        }
        if (st != NM_OK) {
            s.status = NM_SWEEP_INVALID;
            nm_job_error_reason(s.reason, sizeof s.reason, &err);
            break;
        }
    }
    if (run->stop && *run->stop) {
        nm_sweep_point_out_free(out);
        return 1;
    }
    out->row = format_row(run, p, idx, &s);
    if (!out->row) {
        nm_sweep_point_out_free(out);
        return 2;
    }
    return 0;
}

void nm_sweep_point_out_free(nm_sweep_point_out *out)
{
    free(out->row);
    for (int w = 0; w < NM_SWEEP_MAX_WORKLOADS; w++) {
        free(out->layers[w]);
        nm_free(out->best[w]);
        nm_fused_seeds_free(out->seeds[w], out->nseeds[w]);
    }
    memset(out, 0, sizeof *out);
}

char *nm_sweep_header(const nm_sweep_run *run)
{
    char *buf = NULL;
    size_t len;
    FILE *f = open_memstream(&buf, &len);
    if (!f)
        return NULL;
    fputs("point", f);
    for (int a = 0; a < run->sw.naxes; a++) {
        fputc(',', f);
        nm_report_csv_field(f, run->sw.axis[a].label);
    }
    for (int k = 0; k < NFIGURES; k++)
        fprintf(f, ",%s", figure_col[k].name);
    for (int l = 0; l < run->nlevels; l++) {
        char col[NM_NAME_MAX + 16];
        snprintf(col, sizeof col, "energy_uj.%s", run->level[l]);
        fputc(',', f);
        nm_report_csv_field(f, col);
    }
    for (int w = 0; nm_sweep_workload_columns(run) && w < run->sw.nworkloads; w++)
        for (int k = 0; k < 2; k++) {
            char col[NM_NAME_MAX + 16];
            snprintf(col, sizeof col, "%s.%s", run->wl_name[w], k ? "cycles" : "energy_uj");
            fputc(',', f);
            nm_report_csv_field(f, col);
        }
    fputs(",bound_by,over_budget,status,reason\n", f);
    if (fclose(f) != 0) {
        free(buf);
        return NULL;
    }
    return buf;
}

/* ---- checks before anything runs ---- */

/* Loads every workload as the sweep leaves it, and with each varied value
 * alone (a zip's values together), building the mapspace of every distinct
 * layer: a value that the design or its constraints cannot take is an
 * error located at the value. */
/* The level columns of the designs seen so far: storage levels (outermost
 * first) and the arithmetic apart, each name once. */
typedef struct level_names {
    int n[2];
    char name[2][NM_SWEEP_MAX_LEVEL_COLS][NM_NAME_MAX];
} level_names;

/* Adds name to its list (the two lists share the columns' room). */
static int add_level_name(level_names *ln, int arith, const char *name)
{
    return nm_text_add_name(ln->name[arith], &ln->n[arith],
                            NM_SWEEP_MAX_LEVEL_COLS - ln->n[!arith], name) >= 0;
}

static nm_status add_levels(level_names *ln, const nm_arch *arch, const nm_ynode *at,
                            nm_error *err)
{
    for (int l = arch->nlevels - 1; l >= 0; l--)
        if (!add_level_name(ln, 0, arch->level[l].name))
            return nm_yerror(err, at, "the designs have more than %d levels between them",
                             NM_SWEEP_MAX_LEVEL_COLS);
    if (!add_level_name(ln, 1, arch->arith.name))
        return nm_yerror(err, at, "the designs have more than %d levels between them",
                         NM_SWEEP_MAX_LEVEL_COLS);
    return NM_OK;
}

/* Builds the mapspace of one layer (or a chain's operation, `what`) of
 * spec: an error, when value v of axis a (a >= 0) caused it, located at
 * that value. */
static nm_status check_space(const nm_sweep *sw, int a, int v, const nm_spec *spec,
                             const nm_workload *wl, const char *what, const char *name,
                             nm_error *err)
{
    nm_mapspace *ms = nm_calloc(1, sizeof *ms);
    if (!ms)
        return nm_error_set(err, NM_ERR_NOMEM, NULL, 0, 0, "out of memory");
    nm_status st = nm_mapspace_init(ms, &spec->arch, wl, spec->constraints, spec->constraints2,
                                    err);
    nm_free(ms);
    if (st != NM_OK && a >= 0) {
        /* Say which value did it, where the sweep gives it. */
        const nm_sweep_axis *ax = &sw->axis[a];
        char why[sizeof err->msg + 64];
        nm_job_error_reason(why, sizeof why, err);
        if (a == sw->design_axis)
            nm_yerror(err, ax->at[v], "design %s cannot map %s %s: %s", ax->value[v], what,
                      name, why);
        else
            nm_yerror(err, ax->at[v], "%s=%s breaks a constraint of %s %s: %s", ax->label,
                      ax->value[v], what, name, why);
    }
    return st;
}

static int check_values(nm_sweep_run *run)
{
    nm_error err;
    nm_error_clear(&err);
    level_names ln;
    memset(&ln, 0, sizeof ln);
    const nm_sweep *sw = &run->sw;
    for (int a = -1; a < sw->naxes; a++) {
        if (a >= 0 && !nm_sweep_axis_leads(sw, a))
            continue; /* checked with the first of its zip */
        int nv = a < 0 ? 1 : sw->axis[a].nvalues;
        for (int v = 0; v < nv; v++) {
            nm_override ov[NM_SWEEP_MAX_SETS + NM_SWEEP_MAX_AXES];
            int nov = run->nsets;
            memcpy(ov, run->sets, (size_t)nov * sizeof *ov);
            /* The other axes as the sweep leaves them: no override, the
             * first design. */
            int idx[NM_SWEEP_MAX_AXES] = {0};
            for (int b = a; b >= 0 && b < sw->naxes && sw->axis[b].group == sw->axis[a].group;
                 b++) {
                idx[b] = v;
                if (b != sw->design_axis &&
                    nm_sweep_override(sw, b, v, &ov[nov++], &err) != NM_OK) {
                    nm_job_print_error(run->diag, &err);
                    return 2;
                }
            }
            const char *design = nm_sweep_design(sw, idx);
            /* (the first design is the one loaded for a < 0) */
            int new_design = a < 0 || (sw->design_axis >= 0 && v > 0 &&
                                       sw->axis[sw->design_axis].group == sw->axis[a].group);
            for (int w = 0; w < sw->nworkloads; w++) {
                nm_spec spec;
                nm_network net;
                nm_status st = load(run, design, w, ov, nov, &spec, &net, &err);
                if (st == NM_OK && new_design && w == 0) {
                    /* The columns: each design's levels. */
                    st = add_levels(&ln, &spec.arch, a < 0 ? sw->node : sw->axis[a].at[v], &err);
                    nm_search_opts o;
                    if (st == NM_OK && search_opts(run, &spec, &o, &err) == NM_OK &&
                        !warm_applies(&o))
                        run->sw.warm_block = 1;
                }
                for (int i = 0; st == NM_OK && i < net.nlayers; i++)
                    if (net.layer[i].same_as == i)
                        st = check_space(sw, a, v, &spec, &net.layer[i].wl, "layer",
                                         net.layer[i].name, &err);
                for (int i = 0; st == NM_OK && spec.chain && i < spec.chain->nops; i++)
                    st = check_space(sw, a, v, &spec, &spec.chain->op[i].wl, "operation",
                                     spec.chain->op[i].name, &err);
                if (st == NM_OK && new_design && w == 0)
                    nm_job_bandwidth_warn(&spec.doc, &spec.arch);
                if (st == NM_OK && new_design && !run->quiet)
                    nm_job_print_warnings(run->diag, &spec.doc, 0);
                nm_network_fini(&net);
                nm_spec_fini(&spec);
                if (st != NM_OK) {
                    nm_job_print_error(run->diag, &err);
                    return nm_status_exit_code(st);
                }
            }
        }
    }
    run->nlevels = 0;
    for (int k = 0; k < 2; k++)
        for (int i = 0; i < ln.n[k]; i++) {
            snprintf(run->level[run->nlevels], NM_NAME_MAX, "%s", ln.name[k][i]);
            run->level_arith[run->nlevels++] = (unsigned char)k;
        }
    return 0;
}

/* Every budget names a column of points.csv (known once the design's
 * levels are). */
static int check_budgets(const nm_sweep_run *run)
{
    for (int b = 0; b < run->sw.nbudgets; b++) {
        const nm_sweep_budget *bu = &run->sw.budget[b];
        double v;
        if (column_value(run, NULL, bu->column, &v))
            continue;
        char cols[1024];
        size_t n = 0;
        for (int k = 0; k < NFIGURES && n < sizeof cols; k++)
            n += (size_t)snprintf(cols + n, sizeof cols - n, "%s%s", k ? ", " : "",
                                  figure_col[k].name);
        nm_error err;
        nm_error_clear(&err);
        nm_yerror(&err, bu->at, "budget: no column '%s' in points.csv (a budget is the most a "
                  "point may have of one of: %s, energy_uj.LEVEL%s)", bu->column, cols,
                  nm_sweep_workload_columns(run) ? ", WORKLOAD.energy_uj, WORKLOAD.cycles" : "");
        nm_job_print_error(run->diag, &err);
        return 2;
    }
    return 0;
}

/* FNV-1a over what decides the results: the sweep, the files, the search
 * options.  A resumed sweep must have the same. */
static uint64_t fnv(uint64_t h, const void *p, size_t n)
{
    const unsigned char *b = p;
    for (size_t i = 0; i < n; i++)
        h = (h ^ b[i]) * 0x100000001b3ull;
    return h;
}

static uint64_t fnv_file(uint64_t h, const char *path)
{
    FILE *f = fopen(path, "rb");
    char buf[8192];
    size_t n;
    h = fnv(h, path, strlen(path) + 1);
    while (f && (n = fread(buf, 1, sizeof buf, f)) > 0)
        h = fnv(h, buf, n);
    if (f)
        fclose(f);
    return h;
}

uint64_t nm_sweep_run_key(const nm_sweep_run *run)
{
    uint64_t h = 0xcbf29ce484222325ull;
    if (run->sw.design_axis < 0)
        h = fnv_file(h, run->sw.design);
    else
        for (int v = 0; v < run->sw.axis[run->sw.design_axis].nvalues; v++)
            h = fnv_file(h, run->sw.axis[run->sw.design_axis].path[v]);
    for (int w = 0; w < run->sw.nworkloads; w++)
        h = fnv_file(h, run->sw.workload[w]);
    for (int i = 0; i < run->nextra; i++)
        h = fnv_file(h, run->extra[i]);
    for (int i = 0; i < run->nargs; i++)
        h = fnv(h, run->args[i], strlen(run->args[i]) + 1);
    return h;
}

/* ---- the serial driver ---- */

static void progress(FILE *f, uint64_t done, uint64_t total, uint64_t first, double t0)
{
    double el = nm_job_wall() - t0;
    double eta = done > first ? el / (double)(done - first) * (double)(total - done) : 0;
    fprintf(f, "\rsweep: %llu of %llu points, %.0f s elapsed, ETA %.0f s\033[K",
            (unsigned long long)done, (unsigned long long)total, el, eta);
    fflush(f);
}

uint64_t nm_sweep_block_end(const nm_sweep_run *run, uint64_t p)
{
    return block_start(run, block_of(run, p) + 1);
}

int nm_sweep_run_next(const nm_sweep_run *run, uint64_t p, nm_sweep_point_out *prev,
                      nm_sweep_point_out *out)
{
    uint64_t b = nm_sweep_block_first(run, p);
    int rc = 0;
    memset(out, 0, sizeof *out);
    if (p == b) {
        nm_sweep_point_out_free(prev);
    } else if (prev->point != p - 1 || !prev->ran) {
        /* not the point before: the block's points up to p again */
        nm_sweep_point_out_free(prev);
        for (uint64_t q = b; q < p && !rc; q++) {
            nm_sweep_point_out o;
            rc = nm_sweep_run_point(run, q, q > b ? prev : NULL, &o);
            nm_sweep_point_out_free(prev);
            *prev = o;
            prev->ran = !rc;
        }
    }
    if (!rc)
        rc = nm_sweep_run_point(run, p, p > b ? prev : NULL, out);
    if (!rc) { /* out's mappings go on to the next point */
        nm_sweep_point_out_free(prev);
        prev->point = p;
        prev->ran = 1;
        memcpy(prev->best, out->best, sizeof prev->best);
        memset(out->best, 0, sizeof out->best);
        memcpy(prev->seeds, out->seeds, sizeof prev->seeds);
        memcpy(prev->nseeds, out->nseeds, sizeof prev->nseeds);
        memset(out->seeds, 0, sizeof out->seeds);
        memset(out->nseeds, 0, sizeof out->nseeds);
    }
    return rc;
}

static int run_serial(const nm_sweep_run *run, nm_sweep_dir *d, char **rows, uint64_t first)
{
    double t0 = nm_job_wall();
    int tty = run->progress && !run->quiet, rc = 0;
    nm_sweep_point_out prev;
    memset(&prev, 0, sizeof prev);
    for (uint64_t p = first; p < run->sw.npoints; p++) {
        nm_sweep_point_out out;
        rc = nm_sweep_run_next(run, p, &prev, &out);
        if (rc == 1) {
            if (tty)
                fputc('\n', run->diag);
            fprintf(run->diag, "nestmap sweep: interrupted after %llu of %llu points%s\n",
                    (unsigned long long)p, (unsigned long long)run->sw.npoints,
                    d ? "; --resume goes on from there" : "");
            rc = 130;
            break;
        }
        if (rc == 2) {
            fprintf(run->diag, "nestmap: out of memory\n");
            nm_sweep_point_out_free(&out);
            break;
        }
        if (d && !nm_sweep_dir_add(d, run, &out)) {
            nm_sweep_point_out_free(&out);
            rc = 2;
            break;
        }
        if (rows) {
            rows[p] = out.row;
            out.row = NULL;
        }
        nm_sweep_point_out_free(&out);
        if (tty)
            progress(run->diag, p + 1, run->sw.npoints, first, t0);
    }
    nm_sweep_point_out_free(&prev);
    if (tty && !rc)
        fputc('\n', run->diag);
    return rc;
}

/* ---- the whole run ---- */

static void base_name(char *out, const char *path)
{
    const char *b = strrchr(path, '/');
    b = b ? b + 1 : path;
    size_t n = strcspn(b, ".");
    if (n == 0)
        n = strlen(b);
    if (n >= NM_NAME_MAX)
        n = NM_NAME_MAX - 1;
    memcpy(out, b, n);
    out[n] = '\0';
}

int nm_sweep_run_load(nm_sweep_run *run, nm_ydoc *doc, const char *const *files, int nfiles)
{
    nm_error err;
    nm_error_clear(&err);
    nm_status st = NM_OK;
    for (int i = 0; i < nfiles && st == NM_OK; i++)
        st = nm_ydoc_load_file(doc, files[i], &err);
    const nm_ynode *node = st == NM_OK ? nm_ymap_get(doc->root, "sweep") : NULL;
    if (st == NM_OK && !node)
        st = nm_error_set(&err, NM_ERR_INPUT, nfiles ? files[0] : NULL, 0, 0,
                          "no 'sweep' in the input files (see nestmap sweep --help)");
    if (st == NM_OK)
        st = nm_sweep_parse(&run->sw, node, &err);
    run->doc = doc;
    if (st != NM_OK) {
        nm_job_print_error(run->diag, &err);
        return nm_status_exit_code(st);
    }
    for (int w = 0; w < run->sw.nworkloads; w++) {
        base_name(run->wl_name[w], run->sw.workload[w]);
        for (int j = 0; j < w; j++)
            if (!strcmp(run->wl_name[j], run->wl_name[w]))
                snprintf(run->wl_name[w], NM_NAME_MAX, "workload%d", w + 1);
    }
    return 0;
}

int nm_sweep_run_check(nm_sweep_run *run)
{
    if (run->nextra > NM_SWEEP_MAX_EXTRA || run->nsets > NM_SWEEP_MAX_SETS ||
        run->nopt > NM_SWEEP_MAX_OPTS) {
        fprintf(run->diag, "nestmap sweep: more than %d files, --set values or search options\n",
                NM_SWEEP_MAX_EXTRA);
        return 2;
    }
    /* The search options, once: a point then cannot fail on them. */
    nm_search_opts o;
    nm_search_opts_init(&o);
    for (int i = 0; i < run->nopt; i++) {
        nm_error err;
        nm_error_clear(&err);
        if (nm_job_search_option(&o, run->opt_name[i], run->opt_value[i], &err) != NM_OK) {
            fprintf(run->diag, "nestmap sweep: %s\n", err.msg);
            return 2;
        }
    }
    int rc = check_values(run);
    return rc ? rc : check_budgets(run);
}

/* nftw's callback that removes what it visits (children first). */
static int remove_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void)sb;
    (void)flag;
    (void)ftw;
    return remove(path);
}

int nm_sweep_execute(nm_sweep_run *run, const char *outdir, int resume,
                     const nm_sweep_spread *spread)
{
    int rank = spread ? spread->rank : 0, ranks = spread ? spread->ranks : 1;
    /* --json without a directory: sweep.json is built from the files of a
     * sweep directory, so a temporary one stands in (removed at the end). */
    char tmpdir[4096] = "";
    if (run->json && !outdir && rank == 0) {
        const char *t = getenv("TMPDIR");
        snprintf(tmpdir, sizeof tmpdir, "%s/nestmap-sweep.XXXXXX", t && *t ? t : "/tmp");
        if (!mkdtemp(tmpdir)) {
            fprintf(run->diag, "nestmap: cannot create a temporary directory '%s'\n", tmpdir);
            return 2;
        }
        outdir = tmpdir;
    }
    char *header = nm_sweep_header(run);
    nm_sweep_dir d;
    memset(&d, 0, sizeof d);
    char **rows = NULL;
    int rc = 2;
    if (!header)
        goto out;
    if (outdir && rank == 0 && (rc = nm_sweep_dir_open(&d, run, outdir, resume, header)) != 0)
        goto out;
    uint64_t first = d.done;
    if (spread && spread->first_shared &&
        !spread->first_shared(spread->ctx, rc == 0 || !outdir, &first)) {
        rc = 2;
        goto out;
    }
    rc = 2;
    if (!outdir && rank == 0 &&
        !(rows = nm_calloc(run->sw.npoints ? run->sw.npoints : 1, sizeof *rows))) {
        fprintf(run->diag, "nestmap: out of memory\n");
        goto out;
    }
    double t0 = nm_job_wall();
    nm_sweep_dir *dp = outdir && rank == 0 ? &d : NULL;
    if (spread && spread->points && ranks > 1)
        rc = spread->points(spread->ctx, run, dp, rows, first);
    else
        rc = run_serial(run, dp, rows, first);
    if (rc == 0 && rank == 0) {
        if (outdir) {
            if (!nm_sweep_dir_finish(&d, run, nm_job_wall() - t0, run->sw.npoints - first,
                                     ranks))
                rc = 2;
        } else {
            nm_sweep_print(run->out, run, rows, run->sw.npoints);
        }
    }
out:
    if (outdir && rank == 0)
        nm_sweep_dir_close(&d);
    if (tmpdir[0])
        nftw(tmpdir, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
    for (uint64_t p = 0; rows && p < run->sw.npoints; p++)
        free(rows[p]);
    nm_free(rows);
    free(header);
    return rc;
}
