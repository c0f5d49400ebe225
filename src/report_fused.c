/* report_fused.c — a chain's fused mapping evaluated: per group, per
 * operation, per tensor and in total, as text and JSON; see report.h. */
#include <config.h>

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "nestmap/alloc.h"
#include "nestmap/estimate.h"
#include "nestmap/network.h"
#include "nestmap/report.h"
#include "nestmap/roofline.h"
#include "nestmap/search.h"

/* Backing-store words of data space ds of operation i (all instances). */
static uint64_t backing_words(const nm_arch *arch, const nm_stats *st, int ds)
{
    const nm_ds_stats *d = &st->level[arch->nlevels - 1].ds[ds];
    return d->utilized_instances * (d->reads + d->fills + d->updates);
}

/* The levels keeping data space ds in mapping m, innermost first ("RF,
 * GlobalBuffer"). */
static void keepers(const nm_arch *arch, const nm_mapping *m, int ds, char *buf, size_t size)
{
    size_t n = 0;
    buf[0] = '\0';
    for (int s = 0; s < arch->nlevels && n < size; s++)
        if ((m->level[s].keep >> ds) & 1u)
            n += (size_t)snprintf(buf + n, size - n, "%s%s", n ? ", " : "", arch->level[s].name);
}

static void sum_line(FILE *f, const char *name, const nm_fused_sum *s)
{
    fprintf(f, "  %-14s %16llu %14llu %16.3f %14llu\n", name, (unsigned long long)s->computes,
            (unsigned long long)s->cycles, s->energy * 1e-6, (unsigned long long)s->backing);
}

/* What online exponential i and the operations rescaling for it compute
 * besides their points (nm_fused_online), when i is one. */
static void online_line(FILE *f, const nm_chain *c, const nm_fused_stats *st, int i)
{
    const nm_fused_online *x = &st->online[i];
    if (!c->op[i].online)
        return;
    fprintf(f, "  (online softmax: %s's running max over %s, %lld block%s of keys a row: "
            "%llu compares, %llu correction exponentials", c->op[i].name,
            c->op[i].wl.dim[c->op[i].online_dim], (long long)x->blocks,
            x->blocks == 1 ? "" : "s", (unsigned long long)x->compares,
            (unsigned long long)x->exps);
    double e = x->energy;
    for (int j = i + 1; j < c->nops; j++)
        if (nm_chain_rescales(c, j, NULL) == i && st->online[j].muls) {
            fprintf(f, "; %s rescales %llu partial sums", c->op[j].name,
                    (unsigned long long)st->online[j].muls);
            e += st->online[j].energy;
        }
    fprintf(f, "; %.4g uJ)\n", e * 1e-6);
}

/* The first operation of group g with a causal mask, or NULL. */
static const nm_chain_op *masked_op(const nm_chain *c, const nm_fused_group *g)
{
    for (int i = g->first; i < g->first + g->nops; i++)
        if (c->op[i].masked)
            return &c->op[i];
    return NULL;
}

void nm_report_fused_text(FILE *f, const nm_arch *arch, const nm_chain *c,
                          const nm_fused_map *fm, const nm_fused_stats *st)
{
    const char *top = arch->level[arch->nlevels - 1].name;
    fprintf(f, "Chain %s: %d operation%s in %d group%s\n", c->name, c->nops,
            c->nops == 1 ? "" : "s", fm->ngroups, fm->ngroups == 1 ? "" : "s");
    for (int gi = 0; gi < fm->ngroups; gi++) {
        const nm_fused_group *g = &fm->group[gi];
        fprintf(f, "\nGroup %d: ", gi + 1);
        for (int i = g->first; i < g->first + g->nops; i++)
            fprintf(f, "%s%s", i > g->first ? ", " : "", c->op[i].name);
        if (g->level < arch->nlevels - 1)
            fprintf(f, ", fused at %s", arch->level[g->level].name);
        else
            fprintf(f, " (not fused: through %s)", top);
        for (int k = 0; k < g->nsplit; k++)
            fprintf(f, "%s %s in %lld steps%s", k ? " and" : ", stepping through",
                    g->split[k].rank, (long long)g->split[k].steps,
                    g->split[k].retain ? ", the halo retained" : "");
        fputc('\n', f);
        fprintf(f, "  %-14s %16s %14s %16s %14s\n", "operation", "computes", "cycles",
                "energy (uJ)", "backing words");
        for (int i = g->first; i < g->first + g->nops; i++) {
            nm_fused_sum s = {st->op[i].energy, st->op[i].cycles, st->op[i].computes,
                              st->op[i].last_level_accesses};
            sum_line(f, c->op[i].name, &s);
        }
        for (int i = g->first; g->nsplit && i < g->first + g->nops; i++)
            if (c->op[i].head)
                fprintf(f, "  (%s's first step covers %lld more along %s, its head: the halo "
                        "the later steps keep at %s)\n", c->op[i].name,
                        (long long)c->op[i].head, c->op[i].wl.dim[c->op[i].head_dim],
                        arch->level[g->level].name);
        for (int i = g->first; g->nsplit && i < g->first + g->nops; i++)
            if (c->op[i].recompute != 1.0)
                fprintf(f, "  (%s computes %.4gx its operation's points: %s)\n", c->op[i].name,
                        c->op[i].recompute, c->op[i].recompute > 1.0
                                                ? "the halo, rows two steps read, computed at both"
                                                : "rows no later operation reads left out");
        const nm_chain_op *mop = masked_op(c, g);
        nm_causal_plan p;
        char why[NM_ERROR_MSG_MAX];
        int plan = mop && nm_fused_causal_plan(arch, c, g, fm->map, &p, why, sizeof why);
        if (plan && p.skips)
            fprintf(f, "  (causal mask: %lld of the %lld x %lld steps over the rows %s and keys "
                    "%s computed, the %lld it covers whole skipped)\n", (long long)p.computed,
                    (long long)p.mb, (long long)p.nb, mop->wl.dim[mop->mask_m],
                    mop->wl.dim[mop->mask_n], (long long)(p.mb * p.nb - p.computed));
        else if (plan)
            fprintf(f, "  (causal mask: every point computed, then masked: the group skips no "
                    "steps over the keys %s)\n", mop->wl.dim[mop->mask_n]);
        else if (mop)
            fprintf(f, "  (causal mask: every point computed, then masked, no step skipped: "
                    "%s)\n", why);
        for (int i = g->first; i < g->first + g->nops; i++)
            online_line(f, c, st, i);
        if (g->nops > 1)
            sum_line(f, "(group)", &st->group[gi]);
    }
    int kinds = 0;
    for (int i = 0; i < c->nops; i++)
        kinds |= c->op[i].kind != NM_OP_MAC;
    if (kinds) {
        fprintf(f, "\nOperations (pJ each on %s)\n", arch->arith.name);
        for (int i = 0; i < c->nops; i++) {
            const char *how;
            double pj = nm_arith_op_energy(&arch->arith, c->op[i].kind, &how);
            fprintf(f, "  %-14s %-9s %10.4f  %s\n", c->op[i].name, c->op[i].kind_name, pj, how);
        }
    }
    fprintf(f, "\nTensors (backing store: %s)\n", top);
    for (int i = 0; i < c->nops; i++) {
        const nm_workload *wl = &c->op[i].wl;
        for (int ds = 0; ds < wl->nds; ds++) {
            if (c->op[i].producer[ds] >= 0)
                continue; /* told with its producer */
            char where[512], readers[256] = "";
            size_t n = 0;
            uint64_t words = backing_words(arch, &st->op[i], ds);
            for (int j = i + 1; j < c->nops; j++)
                for (int k = 0; k < c->op[j].wl.nds; k++)
                    if (c->op[j].producer[k] == i && ds == c->op[i].out) {
                        n += (size_t)snprintf(readers + n, sizeof readers - n, "%s%s",
                                              n ? ", " : "", c->op[j].name);
                        words += backing_words(arch, &st->op[j], k);
                    }
            keepers(arch, &fm->map[i], ds, where, sizeof where);
            if (ds != c->op[i].out)
                fprintf(f, "  %-10s read by %s; kept at %s; %llu %s words\n", wl->ds[ds].name,
                        c->op[i].name, where, (unsigned long long)words, top);
            else if (!n)
                fprintf(f, "  %-10s written by %s; kept at %s; %llu %s words\n",
                        wl->ds[ds].name, c->op[i].name, where, (unsigned long long)words, top);
            else if ((fm->onchip[i] >> ds) & 1u)
                fprintf(f, "  %-10s %s -> %s; kept at %s (never in %s)\n", wl->ds[ds].name,
                        c->op[i].name, readers, where, top);
            else
                fprintf(f, "  %-10s %s -> %s through %s; %llu %s words\n", wl->ds[ds].name,
                        c->op[i].name, readers, top, (unsigned long long)words, top);
        }
    }
    const nm_fused_sum *t = &st->total;
    fprintf(f, "\nTotal: energy %.3f uJ, cycles %llu, computes %llu, %s words %llu, "
            "EDP %.4g J*cycle\n", t->energy * 1e-6, (unsigned long long)t->cycles,
            (unsigned long long)t->computes, top, (unsigned long long)t->backing,
            t->energy * 1e-12 * (double)t->cycles);
}

static void json_sum(FILE *f, const nm_fused_sum *s)
{
    fprintf(f, "{\"energy\": %.17g, \"cycles\": %llu, \"computes\": %llu, "
            "\"backing_accesses\": %llu, \"edp\": %.17g}", isfinite(s->energy) ? s->energy : 0.0,
            (unsigned long long)s->cycles, (unsigned long long)s->computes,
            (unsigned long long)s->backing, s->energy * 1e-12 * (double)s->cycles);
}

void nm_report_fused_json(FILE *f, const nm_arch *arch, const nm_chain *c,
                          const nm_fused_map *fm, const nm_fused_stats *st)
{
    fputs("{\n \"chain\": ", f);
    nm_report_json_string(f, c->name);
    fprintf(f, ",\n \"valid\": %s,\n", st->valid ? "true" : "false");
    if (!st->valid) {
        char why[1024];
        nm_fused_describe_invalid(st, arch, c, fm, why, sizeof why);
        fputs(" \"reason\": ", f);
        nm_report_json_string(f, why);
        fputs("\n}\n", f);
        return;
    }
    fputs(" \"total\": ", f);
    json_sum(f, &st->total);
    fputs(",\n \"groups\": [\n", f);
    for (int gi = 0; gi < fm->ngroups; gi++) {
        const nm_fused_group *g = &fm->group[gi];
        fputs("  {\"ops\": [", f);
        for (int i = g->first; i < g->first + g->nops; i++) {
            if (i > g->first)
                fputs(", ", f);
            nm_report_json_string(f, c->op[i].name);
        }
        fputs("], \"fuse_at\": ", f);
        if (g->level < arch->nlevels - 1)
            nm_report_json_string(f, arch->level[g->level].name);
        else
            fputs("null", f);
        for (int r = 0; r < 2; r++) {
            fputs(r ? "}, \"retain\": {" : ", \"recompute\": {", f);
            int n = 0;
            for (int k = 0; k < g->nsplit; k++) {
                if (g->split[k].retain != r)
                    continue;
                fputs(n++ ? ", " : "", f);
                nm_report_json_string(f, g->split[k].rank);
                fprintf(f, ": %lld", (long long)g->split[k].steps);
            }
        }
        fputs("}, \"causal\": ", f);
        const nm_chain_op *mop = masked_op(c, g);
        nm_causal_plan p;
        if (!mop) {
            fputs("null", f);
        } else {
            int skips = nm_fused_causal_plan(arch, c, g, fm->map, &p, NULL, 0) && p.skips;
            fputs("{\"rows\": ", f);
            nm_report_json_string(f, mop->wl.dim[mop->mask_m]);
            fputs(", \"keys\": ", f);
            nm_report_json_string(f, mop->wl.dim[mop->mask_n]);
            fprintf(f, ", \"skips\": %s", skips ? "true" : "false");
            if (skips)
                fprintf(f, ", \"row_steps\": %lld, \"key_steps\": %lld, \"computed_steps\": %lld",
                        (long long)p.mb, (long long)p.nb, (long long)p.computed);
            fputc('}', f);
        }
        fputs(", \"stats\": ", f);
        json_sum(f, &st->group[gi]);
        fputs(gi + 1 < fm->ngroups ? "},\n" : "}\n", f);
    }
    fputs(" ],\n \"ops\": [\n", f);
    for (int i = 0; i < c->nops; i++) {
        fputs("  {\"name\": ", f);
        nm_report_json_string(f, c->op[i].name);
        fprintf(f, ", \"group\": %d, \"intermediates\": [", fm->group_of[i] + 1);
        int first = 1;
        for (int ds = 0; ds < c->op[i].wl.nds; ds++)
            if ((fm->onchip[i] >> ds) & 1u) {
                if (!first)
                    fputs(", ", f);
                first = 0;
                nm_report_json_string(f, c->op[i].wl.ds[ds].name);
            }
        const char *how;
        double pj = nm_arith_op_energy(&arch->arith, c->op[i].kind, &how);
        fprintf(f, "], \"recompute\": %.17g, \"op\": ",
                c->op[i].recompute > 0 ? c->op[i].recompute : 1.0);
        nm_report_json_string(f, c->op[i].kind_name);
        fprintf(f, ", \"op_pj\": %.17g, \"op_energy_from\": ", pj);
        nm_report_json_string(f, how);
        const nm_fused_online *x = &st->online[i];
        if (c->op[i].online || nm_chain_rescales(c, i, NULL) >= 0)
            fprintf(f, ", \"online\": {\"key_blocks\": %lld, \"compares\": %llu, "
                    "\"exponentials\": %llu, \"multiplies\": %llu, \"energy\": %.17g}",
                    (long long)x->blocks, (unsigned long long)x->compares,
                    (unsigned long long)x->exps, (unsigned long long)x->muls, x->energy);
        else
            fputs(", \"online\": null", f);
        fputs(",\n   \"stats\": ", f);
        nm_error err;
        nm_arch *oa = nm_fused_op_arch(arch, c, i, &err); /* (NULL: arch serves) */
        nm_report_json(f, oa ? oa : arch, &c->op[i].wl, &st->op[i], &fm->map[i]);
        nm_free(oa);
        fputs(i + 1 < c->nops ? "  },\n" : "  }\n", f);
    }
    fputs(" ]\n}\n", f);
}

void nm_report_fused_yaml(FILE *f, const nm_arch *arch, const nm_chain *c,
                          const nm_fused_map *fm)
{
    int S = arch->nlevels;
    fputs("mapping:\n  fused:\n", f);
    for (int gi = 0; gi < fm->ngroups; gi++) {
        const nm_fused_group *g = &fm->group[gi];
        int F = g->level, lead = g->first;
        if (F < S - 1) {
            fprintf(f, "  - fuse_at: %s\n", arch->level[F].name);
            for (int k = 0; k < g->nsplit; k++)
                fprintf(f, "%s%s: %lld%s",
                        k ? ", " : nm_fused_group_retains(g) ? "    retain: {" : "    recompute: {",
                        g->split[k].rank, (long long)g->split[k].steps,
                        k + 1 == g->nsplit ? "}\n" : "");
            fputs("    shared:\n", f);
            /* the shared loops as the first operation has them (the others'
             * indices it lacks stay 1), and at each level what any operation
             * keeps and bypasses (names another lacks are not its own) */
            nm_report_mapping_levels_yaml(f, arch, &c->op[lead].wl, &fm->map[lead], F + 1, S - 1,
                                          1, "    ");
            for (int s = S - 1; s > F; s--) {
                if (arch->level[s].container[0])
                    continue;
                fprintf(f, "    - target: %s\n      type: bypass\n      keep: [",
                        arch->level[s].name);
                for (int pass = 0, first = 1; pass < 2; pass++) {
                    if (pass)
                        fputs("]\n      bypass: [", f);
                    first = 1;
                    for (int i = lead; i < lead + g->nops; i++)
                        for (int ds = 0; ds < c->op[i].wl.nds; ds++) {
                            int kept = (int)((fm->map[i].level[s].keep >> ds) & 1u);
                            if (kept == pass || (i > lead && c->op[i].producer[ds] >= lead))
                                continue; /* (an intermediate once, with its producer) */
                            fprintf(f, "%s%s", first ? "" : ", ", c->op[i].wl.ds[ds].name);
                            first = 0;
                        }
                }
                fputs("]\n", f);
            }
            fputs("    ops:\n", f);
        } else {
            fputs("  - ops:\n", f);
        }
        for (int i = lead; i < lead + g->nops; i++) {
            fprintf(f, "      %s:\n", c->op[i].name);
            nm_report_mapping_levels_yaml(f, arch, &c->op[i].wl, &fm->map[i], 0, F, 0, "      ");
        }
    }
}

void nm_report_fused_search_json(FILE *f, const nm_arch *arch, const nm_chain *c,
                                 const nm_fused_result *r, const nm_search_opts *o)
{
    fputs("{\n\"best\": ", f);
    nm_report_fused_json(f, arch, r->chain ? r->chain : c, &r->best, r->best_st);
    fputs(",\n\"unfused\": ", f);
    if (r->alone >= 0)
        fputs("null", f);
    else
        nm_report_fused_json(f, arch, c, &r->unfused, r->unfused_st);
    double lb, gap = nm_roofline_chain_gap(arch, c, o->metric[0], &r->best_st->total, &lb);
    fprintf(f, ",\n\"search\": {\"metric\": \"%s\", \"seed\": %llu, \"candidates\": %llu, "
            "\"searches\": %d, \"evaluated\": %llu, \"seconds\": %.3f, "
            "\"lower_bound\": %.17g, \"gap\": %.17g}\n}\n",
            nm_metric_name(o->metric[0]), (unsigned long long)o->seed,
            (unsigned long long)r->candidates, r->searches, (unsigned long long)r->evaluated,
            r->seconds, lb, gap);
}

/* ---- a network's fused runs (network --fuse) ---- */

/* The fused groups of run s's best cut: "dw2+pw2 at GlobalBuffer", or ""
 * when every layer runs alone. */
/* The layer's own name for index idx of operation wl of a network's run
 * (its alias: "P" for "p3"), or idx. */
static const char *layer_dim(const nm_workload *wl, const char *idx)
{
    int d = nm_workload_dim(wl, idx);
    for (int a = 0; d >= 0 && a < wl->nalias; a++)
        if (wl->alias_of[a] == d)
            return wl->alias[a];
    return idx;
}

static void run_groups(char *buf, size_t size, const nm_arch *arch, const nm_network_run *s)
{
    size_t n = 0;
    buf[0] = '\0';
    const nm_fused_map *fm = &s->res.best;
    for (int gi = 0; gi < fm->ngroups && n < size; gi++) {
        const nm_fused_group *g = &fm->group[gi];
        if (g->nops < 2)
            continue;
        n += (size_t)snprintf(buf + n, size - n, "%s", n ? "; " : "");
        for (int i = g->first; i < g->first + g->nops && n < size; i++)
            n += (size_t)snprintf(buf + n, size - n, "%s%s", i > g->first ? "+" : "",
                                  s->chain.op[i].name);
        if (n < size)
            n += (size_t)snprintf(buf + n, size - n, " at %s", arch->level[g->level].name);
        const nm_workload *last = &s->chain.op[g->first + g->nops - 1].wl;
        for (int k = 0; k < g->nsplit && n < size; k++)
            n += (size_t)snprintf(buf + n, size - n, "%s%s/%lld", k ? "x" : ", halo ",
                                  layer_dim(last, g->split[k].rank),
                                  (long long)g->split[k].steps);
        if (g->nsplit && n < size)
            n += (size_t)snprintf(buf + n, size - n, nm_fused_group_retains(g) ? " retained"
                                                                              : " recomputed");
    }
}

static double ratio(double a, double b)
{
    return b > 0 ? a / b : 1.0;
}

/* Consecutive mapped layers that connect but are not fused, and why. */
static int not_fused(const nm_network *net, const nm_layer_result *out, int i, nm_link *l)
{
    const nm_layer_result *a = &out[net->layer[i].same_as], *b = &out[net->layer[i + 1].same_as];
    if (a->status != NM_OK || !a->res.found || b->status != NM_OK || !b->res.found)
        return 0;
    nm_network_link(net, i, i + 1, l);
    return l->kind == NM_LINK_STRIDE || l->kind == NM_LINK_REPEAT;
}

/* The rows and columns run r's first layer computes past its output, for
 * the windows of the layer after it: "pw2 P 112->113, Q 112->113", or
 * "" when it computes its own output only. */
static void grown_text(char *buf, size_t size, const nm_network *net, const nm_network_run *r)
{
    size_t n = 0;
    buf[0] = '\0';
    const nm_workload *wl = &net->layer[r->first].wl;
    for (int d = 0; d < wl->ndims && n < size; d++) {
        int64_t g = nm_network_grown(net, r->first, &r->chain, 0, d);
        if (g)
            n += (size_t)snprintf(buf + n, size - n, "%s %s %lld->%lld",
                                  n ? "," : net->layer[r->first].name, wl->dim[d],
                                  (long long)wl->bound[d], (long long)(wl->bound[d] + g));
    }
}

static void fusion_text(FILE *f, const nm_arch *arch, const nm_network *net,
                        const nm_layer_result *out, const nm_network_fusion *fu)
{
    const char *top = arch->level[arch->nlevels - 1].name;
    fprintf(f, "\nFused runs (network --fuse): %d run%s of layers, each reading the whole output "
            "of the one before (the second perhaps through windows of the first), searched in "
            "%.1f s\n", fu->nruns, fu->nruns == 1 ? "" : "s", fu->seconds);
    if (fu->nruns)
        fprintf(f, "  %-22s %6s  %-34s %12s %12s %14s %14s\n", "run", "repeat", "fused",
                "energy uJ", "unfused", "words", "unfused");
    for (int k = 0; k < fu->nruns; k++) {
        const nm_network_run *r = &fu->run[k], *s = &fu->run[r->same_as];
        char name[2 * NM_NAME_MAX + 4], groups[256];
        snprintf(name, sizeof name, "%s..%s", net->layer[r->first].name,
                 net->layer[r->first + r->n - 1].name);
        if (r->status != NM_OK || s->status != NM_OK) {
            fprintf(f, "  %-22s %6lld  not searched: %s\n", name,
                    (long long)net->layer[r->first].repeat,
                    r->status != NM_OK ? r->err.msg : s->err.msg);
            continue;
        }
        run_groups(groups, sizeof groups, arch, s);
        const nm_fused_sum *b = r->used ? &s->res.best_st->total : &r->unfused;
        fprintf(f, "  %-22s %6lld  %-34s %12.3f %12.3f %14llu %14llu\n", name,
                (long long)net->layer[r->first].repeat,
                r->used    ? groups
                : s->fused ? "(an overlapping run gains more)"
                           : "(no gain: layer by layer)",
                b->energy * 1e-6, r->unfused.energy * 1e-6, (unsigned long long)b->backing,
                (unsigned long long)r->unfused.backing);
    }
    /* the layers grown for the windows after them */
    int shown = 0;
    for (int k = 0; k < fu->nruns; k++) {
        char grown[256];
        if (fu->run[k].status != NM_OK)
            continue;
        grown_text(grown, sizeof grown, net, &fu->run[k]);
        if (!grown[0])
            continue;
        if (!shown++)
            fputs("Grown in their runs to what the next layer's windows read (its zero "
                  "padding counted as data, as Timeloop's layer shapes count it):", f);
        fprintf(f, "%s %s", shown > 1 ? ";" : "", grown);
    }
    if (shown)
        fputc('\n', f);
    nm_link l;
    for (int kind = NM_LINK_STRIDE; kind <= NM_LINK_REPEAT; kind++) {
        shown = 0;
        for (int i = 0; i + 1 < net->nlayers; i++) {
            if (!not_fused(net, out, i, &l) || (int)l.kind != kind)
                continue;
            if (!shown)
                fprintf(f, "Not fused, %s:",
                        kind == NM_LINK_STRIDE
                            ? "reading strided rows of the layer before that leave some unread"
                            : "reading the layer before but running a different number "
                              "of times");
            fprintf(f, "%s %s", shown++ ? "," : "", net->layer[i + 1].name);
        }
        if (shown)
            fputc('\n', f);
    }
    const nm_fused_sum *a = &fu->fused, *u = &fu->unfused;
    double ea = a->energy * (double)a->cycles, eu = u->energy * (double)u->cycles;
    fprintf(f, "Network fused: energy %.3f uJ (unfused %.3f: %.3fx), cycles %llu (%.3fx), %s "
            "words %llu (unfused %llu: %.3fx), EDP %.3fx\n", a->energy * 1e-6, u->energy * 1e-6,
            ratio(a->energy, u->energy), (unsigned long long)a->cycles,
            ratio((double)a->cycles, (double)u->cycles), top, (unsigned long long)a->backing,
            (unsigned long long)u->backing, ratio((double)a->backing, (double)u->backing),
            ratio(ea, eu));
    if (fu->equal != fu->checked)
        fprintf(f, "warning: %d of %d layer mappings evaluated as a chain's operation differ "
                "from the layer's own figures (a bug: please report it)\n",
                fu->checked - fu->equal, fu->checked);
}

/* The fused network's proven lower bound on o's first metric (its layers',
 * a fused run's operations with their intermediates on chip) and its gap. */
static double fused_gap(const nm_arch *arch, const nm_network *net, const nm_layer_result *out,
                        const nm_network_fusion *fu, const nm_search_opts *o, double *lb)
{
    nm_bound_sum bs;
    nm_bound_sum_init(&bs, o->metric[0]);
    nm_network_bound(arch, net, out, fu, o, &bs);
    *lb = nm_bound_sum_value(&bs);
    double score = nm_metric_value(o->metric[0], fu->fused.energy, (double)fu->fused.cycles,
                                   (double)fu->fused.backing);
    return *lb > 0 ? score / *lb : 0.0;
}

static void fusion_json(FILE *f, const nm_arch *arch, const nm_network *net,
                        const nm_layer_result *out, const nm_network_fusion *fu,
                        const nm_search_opts *o)
{
    fputs(",\n  \"fusion\": {\n    \"runs\": [", f);
    for (int k = 0; k < fu->nruns; k++) {
        const nm_network_run *r = &fu->run[k], *s = &fu->run[r->same_as];
        fputs(k ? ",\n      {\"layers\": [" : "\n      {\"layers\": [", f);
        for (int i = 0; i < r->n; i++) {
            fputs(i ? ", " : "", f);
            nm_report_json_string(f, net->layer[r->first + i].name);
        }
        fprintf(f, "], \"repeat\": %lld, ", (long long)net->layer[r->first].repeat);
        if (r->status != NM_OK || s->status != NM_OK) {
            fputs("\"searched\": false, \"reason\": ", f);
            nm_report_json_string(f, r->status != NM_OK ? r->err.msg : s->err.msg);
            fputs("}", f);
            continue;
        }
        fprintf(f, "\"searched\": true, \"fused\": %s, \"beats_layers\": %s, \"grown\": [",
                r->used ? "true" : "false", s->fused ? "true" : "false");
        const nm_workload *w0 = &net->layer[r->first].wl;
        for (int d = 0, n = 0; d < w0->ndims; d++) {
            int64_t g = nm_network_grown(net, r->first, &r->chain, 0, d);
            if (!g)
                continue;
            fputs(n++ ? ", {\"dim\": " : "{\"dim\": ", f);
            nm_report_json_string(f, w0->dim[d]);
            fprintf(f, ", \"from\": %lld, \"to\": %lld}", (long long)w0->bound[d],
                    (long long)(w0->bound[d] + g));
        }
        fputs("], \"groups\": [", f);
        const nm_fused_map *fm = &s->res.best;
        int ng = 0;
        for (int gi = 0; gi < fm->ngroups; gi++) {
            const nm_fused_group *g = &fm->group[gi];
            if (g->nops < 2)
                continue;
            fputs(ng++ ? ", {\"layers\": [" : "{\"layers\": [", f);
            for (int i = g->first; i < g->first + g->nops; i++) {
                fputs(i > g->first ? ", " : "", f);
                nm_report_json_string(f, net->layer[r->first + i].name);
            }
            fputs("], \"fuse_at\": ", f);
            nm_report_json_string(f, arch->level[g->level].name);
            const nm_workload *last = &s->chain.op[g->first + g->nops - 1].wl;
            for (int h = 0; h < 2; h++) {
                fputs(h ? "}, \"retain\": {" : ", \"recompute\": {", f);
                for (int q = 0, n = 0; q < g->nsplit; q++) {
                    if (g->split[q].retain != h)
                        continue;
                    fputs(n++ ? ", " : "", f);
                    nm_report_json_string(f, layer_dim(last, g->split[q].rank));
                    fprintf(f, ": %lld", (long long)g->split[q].steps);
                }
            }
            fputs("}}", f);
        }
        fputs("],\n       \"best\": ", f);
        json_sum(f, &s->res.best_st->total);
        fputs(",\n       \"unfused\": ", f);
        json_sum(f, &r->unfused);
        fprintf(f, ", \"seconds\": %.3f}", r->same_as == k ? s->res.seconds : 0.0);
    }
    fputs(fu->nruns ? "\n    ],\n    \"not_fused\": [" : "],\n    \"not_fused\": [", f);
    int n = 0;
    nm_link l;
    for (int i = 0; i + 1 < net->nlayers; i++) {
        if (!not_fused(net, out, i, &l))
            continue;
        fputs(n++ ? ", {\"layer\": " : "{\"layer\": ", f);
        nm_report_json_string(f, net->layer[i + 1].name);
        fprintf(f, ", \"why\": \"%s\"}", l.kind == NM_LINK_STRIDE ? "stride" : "repeat");
    }
    fputs("],\n    \"fused\": ", f);
    json_sum(f, &fu->fused);
    fputs(",\n    \"unfused\": ", f);
    json_sum(f, &fu->unfused);
    double lb, gap = fused_gap(arch, net, out, fu, o, &lb);
    fprintf(f, ",\n    \"lower_bound\": %.17g, \"gap\": %.17g", lb, gap);
    fprintf(f, ",\n    \"checked\": %d, \"equal\": %d, \"seconds\": %.3f\n  }", fu->checked,
            fu->equal, fu->seconds);
}

void nm_report_network_fusion(FILE *f, const nm_arch *arch, const nm_network *net,
                              const nm_layer_result *out, const nm_network_fusion *fu,
                              const nm_search_opts *o, int json)
{
    if (json) {
        fusion_json(f, arch, net, out, fu, o);
        return;
    }
    fusion_text(f, arch, net, out, fu);
    double lb, gap = fused_gap(arch, net, out, fu, o, &lb);
    if (lb > 0)
        fprintf(f, "Fused gap: %.4gx at most: the fused network's %s over its proven lower "
                   "bound %.6g %s (its layers' bounds, a fused run's operations with their "
                   "intermediates on chip)\n", gap, nm_metric_name(o->metric[0]), lb,
                nm_metric_unit(o->metric[0]));
}

/* ---- a chain as `problem:` ---- */

static void einsum_tensor(FILE *f, const nm_workload *wl, int ds)
{
    const nm_dataspace *s = &wl->ds[ds];
    fprintf(f, "%s[", s->name);
    for (int r = 0; r < s->nranks; r++) {
        fputs(r ? "," : "", f);
        int first = 1;
        for (int t = 0; t < s->rank[r].nterms; t++) {
            const nm_term *tm = &s->rank[r].term[t];
            if (tm->coef == 0)
                continue;
            fputs(first ? "" : "+", f);
            if (tm->coef != 1)
                fprintf(f, "%lld*", (long long)tm->coef);
            fputs(wl->dim[tm->dim], f);
            first = 0;
        }
    }
    fputc(']', f);
}

void nm_report_chain_yaml(FILE *f, const nm_chain *c)
{
    fprintf(f, "problem:\n  name: %s\n  chain:\n", c->name);
    for (int i = 0; i < c->nops; i++) {
        const nm_chain_op *op = &c->op[i];
        const nm_workload *wl = &op->wl;
        fprintf(f, "  - name: %s\n", op->name);
        if (op->kind != NM_OP_MAC)
            fprintf(f, "    op: %s\n", op->kind_name);
        fputs("    einsum: \"", f);
        einsum_tensor(f, wl, op->out);
        fputs(" =", f);
        for (int ds = 0, n = 0; ds < wl->nds; ds++) {
            if (ds == op->out)
                continue;
            fputs(n++ ? " * " : " ", f);
            einsum_tensor(f, wl, ds);
        }
        fputs("\"\n    roles: {", f);
        for (int ds = 0, n = 0; ds < wl->nds; ds++)
            if (wl->ds[ds].role[0])
                fprintf(f, "%s%s: %s", n++ ? ", " : "", wl->ds[ds].role, wl->ds[ds].name);
        fputs("}\n", f);
        if (wl->nalias) {
            fputs("    dims: {", f);
            for (int a = 0; a < wl->nalias; a++)
                fprintf(f, "%s%s: %s", a ? ", " : "", wl->alias[a], wl->dim[wl->alias_of[a]]);
            fputs("}\n", f);
        }
    }
    fputs("  bounds: {", f);
    int n = 0;
    for (int i = 0; i < c->nops; i++)
        for (int d = 0; d < c->op[i].wl.ndims; d++) {
            int seen = 0;
            for (int j = 0; j < i && !seen; j++)
                seen = nm_workload_dim(&c->op[j].wl, c->op[i].wl.dim[d]) >= 0;
            if (!seen)
                fprintf(f, "%s%s: %lld", n++ ? ", " : "", c->op[i].wl.dim[d],
                        (long long)c->op[i].wl.bound[d]);
        }
    fputs("}\n", f);
}
