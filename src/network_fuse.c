/* network_fuse.c — fusing a network's layers: which consecutive layers read
 * the one before whole or through windows, such runs as chains (fusion.h;
 * a first layer read through windows grown to what they reach), their
 * fused searches beside the layer-by-layer mapping, and which runs stand
 * for their layers where runs overlap; see network.h. */
#include <config.h>

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nestmap/alloc.h"
#include "nestmap/job.h"
#include "nestmap/network.h"
#include "nestmap/roofline.h"

/* The effort of a run's fused search, relative to the network's: its
 * operations' own mappings are searched with the shared loops pinned, in
 * spaces far smaller than a layer's (on MobileNet-v1 and ResNet-50, on
 * Eyeriss and Simba, an eighth of the effort finds what the whole does:
 * bench/README.md). */
#define RUN_EFFORT 0.125

/* The output of a layer: its one read-modify-write data space, or -1. */
static int output_of(const nm_workload *wl)
{
    int out = -1;
    for (int ds = 0; ds < wl->nds; ds++)
        if (wl->ds[ds].read_write) {
            if (out >= 0)
                return -1;
            out = ds;
        }
    return out;
}

/* The index an axis follows point by point (its only term of size above
 * 1, with coefficient 1; the first term when every one has size 1), or -1
 * for a window or a stride. */
static int plain_index(const nm_workload *wl, const nm_axis *ax)
{
    int d = -1, big = 0;
    for (int t = 0; t < ax->nterms; t++)
        if (wl->bound[ax->term[t].dim] > 1) {
            d = ax->term[t].coef == 1 ? ax->term[t].dim : -1;
            big++;
        }
    if (big == 0)
        return ax->nterms ? ax->term[0].dim : -1;
    return big == 1 ? d : -1;
}

/* The index of an axis that the layer's output also has (a convolution's
 * input row: its output row P in R + stride*P), with its coefficient; -1
 * when none. */
static int output_index(const nm_workload *wl, int out, const nm_axis *ax, int64_t *coef)
{
    for (int t = 0; t < ax->nterms; t++)
        for (int r = 0; r < wl->ds[out].nranks; r++)
            for (int u = 0; u < wl->ds[out].rank[r].nterms; u++)
                if (wl->ds[out].rank[r].term[u].dim == ax->term[t].dim &&
                    wl->bound[ax->term[t].dim] > 1) {
                    *coef = ax->term[t].coef;
                    return ax->term[t].dim;
                }
    return -1;
}

/* Pairs the axes of consumer data space cs with the producer's output
 * axes: by the name of the index each follows where the names agree (a
 * convolution's P with the next one's P), the rest in order.  axis[r] is
 * the consumer's axis for producer axis r.  Returns 0 when the ranks
 * differ. */
static int pair_axes(const nm_workload *pw, int out, const nm_workload *cw, int cs, int8_t *axis)
{
    const nm_dataspace *o = &pw->ds[out], *in = &cw->ds[cs];
    if (o->nranks != in->nranks)
        return 0;
    int taken[NM_MAX_RANKS] = {0};
    for (int r = 0; r < o->nranks; r++) {
        axis[r] = -1;
        int pd = plain_index(pw, &o->rank[r]);
        int64_t coef;
        for (int a = 0; a < in->nranks && axis[r] < 0 && pd >= 0; a++) {
            int cd = plain_index(cw, &in->rank[a]);
            if (cd < 0)
                cd = output_index(cw, output_of(cw), &in->rank[a], &coef);
            if (!taken[a] && cd >= 0 && !strcmp(cw->dim[cd], pw->dim[pd])) {
                axis[r] = (int8_t)a;
                taken[a] = 1;
            }
        }
    }
    for (int r = 0; r < o->nranks; r++)
        for (int a = 0; a < in->nranks && axis[r] < 0; a++)
            if (!taken[a]) {
                axis[r] = (int8_t)a;
                taken[a] = 1;
            }
    return 1;
}

/* Which of two ways a layer reads the one before serves fusion better. */
static int link_rank(nm_link_kind k)
{
    return k == NM_LINK_READS ? 3 : k == NM_LINK_WINDOW ? 2 : k == NM_LINK_STRIDE ? 1 : 0;
}

void nm_network_link(const nm_network *net, int i, int j, nm_link *l)
{
    memset(l, 0, sizeof *l);
    l->kind = NM_LINK_NONE;
    l->ds = -1;
    const nm_workload *pw = &net->layer[i].wl, *cw = &net->layer[j].wl;
    int out = output_of(pw), cout = output_of(cw);
    if (out < 0 || cout < 0)
        return;
    const nm_dataspace *o = &pw->ds[out];
    for (int r = 0; r < o->nranks; r++)
        if (plain_index(pw, &o->rank[r]) < 0)
            return;
    nm_link_kind best = NM_LINK_NONE;
    for (int cs = 0; cs < cw->nds && best != NM_LINK_READS; cs++) {
        int8_t axis[NM_MAX_RANKS];
        if (cs == cout || cw->ds[cs].param || !pair_axes(pw, out, cw, cs, axis))
            continue;
        int whole = 1, near = 1, reaches = 1;
        for (int r = 0; r < o->nranks && near; r++) {
            const nm_axis *ax = &cw->ds[cs].rank[axis[r]];
            int64_t ep = nm_axis_extent(pw, &o->rank[r]), ec = nm_axis_extent(cw, ax);
            if (plain_index(cw, ax) >= 0 && ec == ep)
                continue;
            whole = 0;
            /* a window or a stride over the producer's rows: the consumer's
             * output rows times the stride cover them (as 'same' padding
             * sizes a framework's input), or the window reaches exactly;
             * its span no shorter, or rows are left unread (a strided 1x1) */
            int64_t coef = 0;
            int d = output_index(cw, cout, ax, &coef);
            near = ec == ep || (d >= 0 && coef * cw->bound[d] == ep);
            reaches &= ec >= ep;
        }
        nm_link_kind k = whole     ? NM_LINK_READS
                         : !near   ? NM_LINK_NONE
                         : reaches ? NM_LINK_WINDOW
                                   : NM_LINK_STRIDE;
        if (link_rank(k) > link_rank(best)) {
            best = k;
            l->ds = cs;
            memcpy(l->axis, axis, sizeof axis);
        }
    }
    l->kind = best;
    if ((best == NM_LINK_READS || best == NM_LINK_WINDOW) &&
        net->layer[i].repeat != net->layer[j].repeat)
        l->kind = NM_LINK_REPEAT;
}

/* name as an einsum's identifier: letters, digits and '_', the rest '_'
 * (and lower case when low). */
static void ident(char *out, size_t size, const char *name, int low)
{
    size_t n = 0;
    for (; name[n] && n + 1 < size; n++) {
        unsigned char ch = (unsigned char)name[n];
        out[n] = isalnum(ch) ? (char)(low ? tolower(ch) : ch) : '_';
    }
    out[n] = '\0';
}

/* The chain index name of a dimension of operation k: lower case, with the
 * operation's place ("c1" for the first layer's C). */
static void index_name(char *out, const char *dim, int k)
{
    char low[NM_NAME_MAX];
    ident(low, sizeof low, dim, 1);
    snprintf(out, NM_NAME_MAX, "%.50s%d", low, k + 1);
}

nm_status nm_network_chain(const nm_network *net, int first, int n, nm_chain *c, nm_error *err)
{
    memset(c, 0, sizeof *c);
    if (n < 1 || n > NM_MAX_OPS)
        return nm_error_set(err, NM_ERR_INPUT, NULL, 0, 0, "a chain holds 1 to %d layers",
                            NM_MAX_OPS);
    snprintf(c->name, NM_NAME_MAX, "%.30s%s%.30s", net->layer[first].name, n > 1 ? ".." : "",
             n > 1 ? net->layer[first + n - 1].name : "");
    c->nops = n;
    for (int k = 0; k < n; k++) {
        const nm_layer *ly = &net->layer[first + k];
        nm_chain_op *op = &c->op[k];
        nm_workload *wl = &op->wl;
        *wl = ly->wl;
        snprintf(op->name, NM_NAME_MAX, "%s", ly->name);
        snprintf(wl->name, NM_NAME_MAX, "%s", ly->name);
        op->kind = NM_OP_MAC;
        snprintf(op->kind_name, NM_NAME_MAX, "mac");
        op->node = ly->node;
        op->out = output_of(wl);
        op->recompute = 1.0;
        if (op->out < 0)
            return nm_yerror(err, ly->node, "layer '%s' has no single output to pass on",
                             ly->name);
        /* the layer's own names stay as other names, for the design's
         * constraints */
        wl->nalias = 0;
        for (int d = 0; d < wl->ndims; d++) {
            snprintf(wl->alias[wl->nalias], NM_NAME_MAX, "%s", ly->wl.dim[d]);
            wl->alias_of[wl->nalias++] = (int8_t)d;
            index_name(wl->dim[d], ly->wl.dim[d], k);
        }
        char lname[NM_NAME_MAX], dname[NM_NAME_MAX];
        ident(lname, sizeof lname, ly->name, 0);
        for (int ds = 0; ds < wl->nds; ds++) {
            snprintf(wl->ds[ds].role, NM_NAME_MAX, "%s", ly->wl.ds[ds].name);
            ident(dname, sizeof dname, ly->wl.ds[ds].name, 0);
            snprintf(wl->ds[ds].name, NM_NAME_MAX, "%.31s_%.31s", lname, dname);
        }
        if (k == 0)
            continue;
        /* the input the layer before writes: its axes in the writer's
         * order, its indices the writer's */
        nm_link l;
        nm_network_link(net, first + k - 1, first + k, &l);
        int window = l.kind == NM_LINK_WINDOW && k == 1;
        if (l.kind != NM_LINK_READS && l.kind != NM_LINK_REPEAT && !window)
            return nm_yerror(err, ly->node, "layer '%s' does not read the whole output of '%s' "
                             "point by point%s", ly->name, net->layer[first + k - 1].name,
                             l.kind == NM_LINK_WINDOW ? " (only a run's second layer may read "
                                                        "the first through windows)" : "");
        nm_chain_op *prev = &c->op[k - 1];
        const nm_dataspace *po = &prev->wl.ds[prev->out];
        nm_dataspace in = wl->ds[l.ds];
        for (int r = 0; r < po->nranks; r++) {
            in.rank[r] = wl->ds[l.ds].rank[l.axis[r]];
            in.pad[r] = wl->ds[l.ds].pad[l.axis[r]];
            int cd = plain_index(wl, &in.rank[r]), pd = plain_index(&prev->wl, &po->rank[r]);
            int64_t ec = nm_axis_extent(wl, &in.rank[r]), ep = nm_axis_extent(&prev->wl, &po->rank[r]);
            if (cd >= 0 && ec == ep) { /* point by point: the producer's index */
                memcpy(wl->dim[cd], prev->wl.dim[pd], NM_NAME_MAX);
                continue;
            }
            /* through windows, over the consumer's own indices: the
             * producer computes every row they reach (its output's
             * index has coefficient 1: plain_index) */
            prev->wl.bound[pd] += ec - ep;
        }
        memcpy(in.name, po->name, NM_NAME_MAX);
        wl->ds[l.ds] = in;
    }
    nm_status st = nm_chain_link(c, err);
    if (st != NM_OK)
        return st;
    /* names made identifiers and clipped to fit may clash */
    for (int k = 0; k < n; k++)
        for (int j = 0; j < k; j++)
            for (int a = 0; a < c->op[k].wl.nds; a++)
                for (int b = 0; b < c->op[j].wl.nds; b++)
                    if (!strcmp(c->op[k].wl.ds[a].name, c->op[j].wl.ds[b].name) &&
                        c->op[k].producer[a] != j && a != c->op[k].out)
                        return nm_yerror(err, c->op[k].node, "layers '%s' and '%s' give two "
                                         "tensors the name '%s' in a chain", c->op[j].name,
                                         c->op[k].name, c->op[k].wl.ds[a].name);
    return NM_OK;
}

int64_t nm_network_grown(const nm_network *net, int first, const nm_chain *c, int k, int d)
{
    return c->op[k].wl.bound[d] - net->layer[first + k].wl.bound[d];
}

/* Whether operation k of the run computes more than its layer. */
static int grown(const nm_network *net, const nm_network_run *r, int k)
{
    for (int d = 0; d < r->chain.op[k].wl.ndims; d++)
        if (nm_network_grown(net, r->first, &r->chain, k, d))
            return 1;
    return 0;
}

void nm_network_run_roofline(const nm_network *net, const nm_arch *arch,
                             const nm_network_run *r, int i, nm_roofline *out)
{
    int k = i - r->first;
    if (!grown(net, r, k)) {
        nm_roofline_op(out, arch, &r->chain, k);
        return;
    }
    nm_chain *c = nm_calloc(1, sizeof *c);
    if (!c) { /* (the layer alone: a bound too, if a looser one) */
        nm_roofline_of(out, arch, &net->layer[i].wl);
        return;
    }
    *c = r->chain;
    memcpy(c->op[k].wl.bound, net->layer[i].wl.bound, sizeof c->op[k].wl.bound);
    nm_roofline_op(out, arch, c, k);
    nm_free(c);
}

/* Whether a layer's mapping evaluates, as operation k of chain c alone,
 * to the layer's own figures (own) exactly.  one: room for that operation
 * as a chain of its own (the chain itself when it has one operation). */
static int same_as_layer(const nm_arch *arch, const nm_chain *c, int k, nm_chain *one,
                         const nm_stats *own, const nm_mapping *map, nm_fused_stats *st,
                         nm_error *err)
{
    nm_fused_model fm;
    if (c != one) { /* the operation alone, read from no other */
        memcpy(one->name, c->name, NM_NAME_MAX);
        one->nops = 1;
        one->op[0] = c->op[k];
        for (int ds = 0; ds < one->op[0].wl.nds; ds++)
            one->op[0].producer[ds] = -1;
    }
    if (nm_fused_model_init(&fm, arch, one, err) != NM_OK)
        return 0;
    nm_fused_map *m = nm_calloc(1, sizeof *m);
    int same = 0;
    if (m) {
        nm_fused_map_unfused(m, one, arch, map);
        same = nm_fused_model_eval(&fm, m, st) && st->op[0].energy == own->energy &&
               st->op[0].cycles == own->cycles &&
               st->op[0].last_level_accesses == own->last_level_accesses &&
               st->op[0].computes == own->computes;
        for (int l = 0; same && l < arch->nlevels; l++)
            same = st->op[0].level[l].energy == own->level[l].energy;
    }
    nm_free(m);
    nm_fused_model_fini(&fm);
    return same;
}

static const nm_search_result *mapped(const nm_network *net, const nm_layer_result *out, int i)
{
    const nm_layer_result *r = &out[net->layer[i].same_as];
    return r->status == NM_OK && r->res.found ? &r->res : NULL;
}

/* Whether runs a and b hold the same layers' shapes. */
static int same_run(const nm_network *net, const nm_network_run *a, const nm_network_run *b)
{
    if (a->n != b->n)
        return 0;
    for (int k = 0; k < a->n; k++)
        if (net->layer[a->first + k].same_as != net->layer[b->first + k].same_as)
            return 0;
    return 1;
}

static void sum_scaled(nm_fused_sum *t, const nm_fused_sum *s, int64_t k, int sign)
{
    t->energy += (double)sign * (double)k * s->energy;
    t->cycles += (uint64_t)((int64_t)sign * k * (int64_t)s->cycles);
    t->computes += (uint64_t)((int64_t)sign * k * (int64_t)s->computes);
    t->backing += (uint64_t)((int64_t)sign * k * (int64_t)s->backing);
}

/* Searches run r (or takes the search of the same run before it) and
 * decides whether its fused mapping is used. */
static void search_run(const nm_network *net, const nm_arch *arch, const nm_ynode *cons,
                       const nm_ynode *more, const nm_search_opts *o, const nm_layer_result *out,
                       nm_network_fusion *fu, nm_network_run *r, nm_chain *one,
                       nm_fused_stats *st)
{
    nm_error_clear(&r->err);
    r->status = nm_network_chain(net, r->first, r->n, &r->chain, &r->err);
    for (int k = 0; k < r->n && r->status == NM_OK; k++) {
        const nm_search_result *lr = mapped(net, out, r->first + k);
        nm_fused_sum_add(&r->unfused, &lr->best_stats);
        if (grown(net, r, k))
            continue; /* it computes more than its layer: not the layer's figures */
        nm_error e;
        nm_error_clear(&e);
        fu->checked++;
        fu->equal += same_as_layer(arch, &r->chain, k, one, &lr->best_stats, &lr->best.map, st,
                                   &e);
    }
    if (r->status != NM_OK)
        return;
    if (r->same_as != r - fu->run)
        return; /* the earlier run's search serves */
    /* each layer alone: its own best mapping, as the network has it (a
     * layer grown for the windows after it searched again, at its size) */
    nm_mapping alone[NM_MAX_OPS];
    for (int k = 0; k < r->n; k++) {
        if (grown(net, r, k))
            memset(&alone[k], 0, sizeof alone[k]);
        else
            alone[k] = mapped(net, out, r->first + k)->best.map;
    }
    /* the operations' own mappings under the shared loops pinned are
     * small spaces: searched at a fraction of the effort (RUN_EFFORT) */
    nm_search_opts fo = *o;
    fo.effort = nm_search_effort(o) * RUN_EFFORT;
    r->status = nm_fused_search_given(arch, &r->chain, cons, more, &fo, 1, alone, NULL, 0, &r->res,
                                      &r->err);
    if (r->status != NM_OK)
        return;
    const nm_fused_sum *b = &r->res.best_st->total;
    r->fused = r->res.best.ngroups < r->n &&
               nm_metric_value(o->metric[0], b->energy, (double)b->cycles, (double)b->backing) <
                   nm_metric_value(o->metric[0], r->unfused.energy, (double)r->unfused.cycles,
                                   (double)r->unfused.backing);
}

static int by_first(const void *x, const void *y)
{
    const int *a = x, *b = y;
    return a[0] != b[0] ? (a[0] < b[0] ? -1 : 1) : a[1] != b[1] ? (a[1] < b[1] ? -1 : 1) : 0;
}

/* Which runs stand for their layers (used): of the sets of runs no two of
 * which share a layer, the one whose runs together lower the network's
 * metric most, each run's fall reckoned alone (the unfused network with
 * only its layers replaced: exact for energy, cycles and traffic, which
 * add up; for a product such as EDP, to first order), found by dynamic
 * programming over the layers in order (ties to the set found first). */
static void choose_runs(const nm_network *net, int metric, nm_network_fusion *fu)
{
    int L = net->nlayers;
    double *best = nm_calloc((size_t)L + 1, sizeof *best);
    int *pick = nm_calloc((size_t)L + 1, sizeof *pick);
    double *fall = nm_calloc((size_t)fu->nruns + 1, sizeof *fall);
    if (!best || !pick || !fall) { /* (none used: the network as mapped, layer by layer) */
        nm_free(best);
        nm_free(pick);
        nm_free(fall);
        return;
    }
    const nm_fused_sum *u = &fu->unfused;
    double base = nm_metric_value((nm_metric)metric, u->energy, (double)u->cycles,
                                  (double)u->backing);
    for (int k = 0; k < fu->nruns; k++) {
        const nm_network_run *r = &fu->run[k], *s = &fu->run[r->same_as];
        if (r->status != NM_OK || s->status != NM_OK || !s->fused)
            continue;
        double rep = (double)net->layer[r->first].repeat;
        const nm_fused_sum *b = &s->res.best_st->total;
        fall[k] = base - nm_metric_value((nm_metric)metric,
                                         u->energy + rep * (b->energy - r->unfused.energy),
                                         (double)u->cycles +
                                             rep * ((double)b->cycles - (double)r->unfused.cycles),
                                         (double)u->backing +
                                             rep * ((double)b->backing - (double)r->unfused.backing));
    }
    for (int j = 1; j <= L; j++) {
        best[j] = best[j - 1];
        pick[j] = -1;
        for (int k = 0; k < fu->nruns; k++) {
            const nm_network_run *r = &fu->run[k];
            if (r->first + r->n == j && fall[k] > 0 && best[r->first] + fall[k] > best[j]) {
                best[j] = best[r->first] + fall[k];
                pick[j] = k;
            }
        }
    }
    for (int j = L; j > 0;) {
        if (pick[j] < 0) {
            j--;
            continue;
        }
        fu->run[pick[j]].used = 1;
        j = fu->run[pick[j]].first;
    }
    nm_free(best);
    nm_free(pick);
    nm_free(fall);
}

nm_status nm_network_fuse(const nm_network *net, const nm_arch *arch, const nm_ynode *constraints,
                          const nm_ynode *more, const nm_search_opts *o,
                          const nm_layer_result *out, nm_network_fusion *fu, nm_error *err)
{
    memset(fu, 0, sizeof *fu);
    double t0 = nm_job_wall();
    fu->run = nm_calloc(2 * (size_t)net->nlayers + 1, sizeof *fu->run);
    nm_fused_stats *st = nm_calloc(1, sizeof *st);
    nm_chain *one = nm_calloc(1, sizeof *one);
    if (!fu->run || !st || !one) {
        nm_free(st);
        nm_free(one);
        return nm_error_set(err, NM_ERR_NOMEM, NULL, 0, 0, "out of memory");
    }
    /* The runs: consecutive mapped layers each reading the one before
     * whole (seg[i]: how many from i, where such a stretch begins); and
     * where a layer reads the one before through windows, the one before
     * with the stretch it begins. */
    int L = net->nlayers, *seg = nm_calloc(L ? (size_t)L : 1, sizeof *seg), ncand = 0;
    int (*cand)[2] = nm_calloc(2 * (size_t)L + 1, sizeof *cand);
    if (!seg || !cand) {
        nm_free(seg);
        nm_free(cand);
        nm_free(st);
        nm_free(one);
        return nm_error_set(err, NM_ERR_NOMEM, NULL, 0, 0, "out of memory");
    }
    for (int i = 0; i < L;) {
        int n = 1;
        while (i + n < L && n < NM_MAX_OPS && mapped(net, out, i + n - 1) &&
               mapped(net, out, i + n)) {
            nm_link l;
            nm_network_link(net, i + n - 1, i + n, &l);
            if (l.kind != NM_LINK_READS)
                break;
            n++;
        }
        seg[i] = n;
        if (n > 1)
            cand[ncand][0] = i, cand[ncand++][1] = n;
        i += n;
    }
    for (int i = 0; i + 1 < L; i++) {
        nm_link l;
        nm_network_link(net, i, i + 1, &l);
        if (l.kind == NM_LINK_WINDOW && seg[i + 1] && mapped(net, out, i) &&
            mapped(net, out, i + 1))
            cand[ncand][0] = i,
            cand[ncand++][1] = 1 + (seg[i + 1] < NM_MAX_OPS ? seg[i + 1] : NM_MAX_OPS - 1);
    }
    qsort(cand, (size_t)ncand, sizeof *cand, by_first);
    for (int c = 0; c < ncand; c++) {
        nm_network_run *r = &fu->run[fu->nruns];
        r->first = cand[c][0];
        r->n = cand[c][1];
        r->same_as = fu->nruns;
        for (int j = 0; j < fu->nruns; j++)
            if (fu->run[j].same_as == j && same_run(net, &fu->run[j], r)) {
                r->same_as = j;
                break;
            }
        fu->nruns++;
    }
    nm_free(seg);
    nm_free(cand);
    /* Every layer alone as a chain of its own. */
    for (int i = 0; i < net->nlayers; i++) {
        const nm_search_result *lr = mapped(net, out, i);
        if (net->layer[i].same_as != i || !lr)
            continue;
        nm_error e;
        nm_error_clear(&e);
        fu->checked++;
        fu->equal += nm_network_chain(net, i, 1, one, &e) == NM_OK &&
                     same_as_layer(arch, one, 0, one, &lr->best_stats, &lr->best.map, st, &e);
    }
    for (int k = 0; k < fu->nruns; k++) {
        nm_network_run *r = &fu->run[k];
        if (o->stop && *o->stop) /* interrupted: the rest are not searched */
            r->status = nm_error_set(&r->err, NM_ERR_INPUT, NULL, 0, 0, "interrupted");
        else
            search_run(net, arch, constraints, more, o, out, fu, r, one, st);
    }
    /* The totals: the network layer by layer, each run's fused result in
     * place of its layers where it is used. */
    for (int i = 0; i < net->nlayers; i++) {
        const nm_search_result *lr = mapped(net, out, i);
        if (!lr)
            continue;
        nm_fused_sum s = {0};
        nm_fused_sum_add(&s, &lr->best_stats);
        sum_scaled(&fu->unfused, &s, net->layer[i].repeat, 1);
    }
    choose_runs(net, o->metric[0], fu);
    fu->fused = fu->unfused;
    for (int k = 0; k < fu->nruns; k++) {
        const nm_network_run *r = &fu->run[k], *s = &fu->run[r->same_as];
        if (!r->used)
            continue;
        int64_t rep = net->layer[r->first].repeat;
        sum_scaled(&fu->fused, &r->unfused, rep, -1);
        sum_scaled(&fu->fused, &s->res.best_st->total, rep, 1);
    }
    nm_free(st);
    nm_free(one);
    fu->seconds = nm_job_wall() - t0;
    return NM_OK;
}

const nm_network_run *nm_network_fused_run(const nm_network_fusion *fu, int i)
{
    for (int k = 0; k < fu->nruns; k++) {
        const nm_network_run *r = &fu->run[k];
        if (i >= r->first && i < r->first + r->n && r->used)
            return r;
    }
    return NULL;
}

void nm_network_fused_each(const nm_network *net, const nm_layer_result *out,
                           const nm_network_fusion *fu, nm_network_visit_fn fn, void *arg)
{
    for (int i = 0; i < net->nlayers; i++) {
        const nm_network_run *r = nm_network_fused_run(fu, i);
        int64_t rep = net->layer[i].repeat;
        if (r) {
            const nm_fused_result *res = &fu->run[r->same_as].res;
            for (int k = 0; i == r->first && k < r->n; k++) /* (as mapped: halos) */
                fn(arg, &res->chain->op[k].wl, &res->best_st->op[k], rep);
            continue;
        }
        const nm_search_result *lr = mapped(net, out, i);
        if (lr)
            fn(arg, &net->layer[i].wl, &lr->best_stats, rep);
    }
}

void nm_network_fusion_fini(nm_network_fusion *fu)
{
    if (!fu)
        return;
    for (int k = 0; k < fu->nruns; k++)
        nm_fused_result_fini(&fu->run[k].res);
    nm_free(fu->run);
    memset(fu, 0, sizeof *fu);
}
