/* network.c — networks of layers, and mapping them layer by layer; see
 * network.h. */
#include <config.h>

#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "nestmap/alloc.h"
#include "nestmap/mapspace.h"
#include "nestmap/network.h"
#include "nestmap/roofline.h"

static int same_problem(const nm_workload *a, const nm_workload *b)
{
    if (a->ndims != b->ndims || a->nds != b->nds)
        return 0;
    for (int d = 0; d < a->ndims; d++)
        if (strcmp(a->dim[d], b->dim[d]) || a->bound[d] != b->bound[d])
            return 0;
    /* Parsing zeroes the workload first, so unused entries compare equal. */
    return !memcmp(a->ds, b->ds, sizeof a->ds);
}

/* Gives each layer, as size-1 stand-ins, the dimensions other layers have
 * and it lacks, in the order they first appear. */
static nm_status add_unit_dims(nm_network *net, nm_error *err)
{
    /* The names of all layers' dimensions.  A layer has at most NM_MAX_DIMS
     * of its own and NM_MAX_STANDINS stand-ins, so past both every layer
     * would overflow: stop collecting one name later. */
    enum { CAP = NM_MAX_DIMS + NM_MAX_STANDINS + 1 };
    const char *all[CAP];
    int nall = 0;
    for (int j = 0; j < net->nlayers && nall < CAP; j++) {
        const nm_workload *o = &net->layer[j].wl;
        for (int d = 0; d < o->ndims && nall < CAP; d++) {
            int seen = 0;
            for (int k = 0; k < nall && !seen; k++)
                seen = !strcmp(all[k], o->dim[d]);
            if (!seen)
                all[nall++] = o->dim[d];
        }
    }
    for (int i = 0; i < net->nlayers; i++) {
        nm_workload *wl = &net->layer[i].wl;
        for (int k = 0; k < nall; k++) {
            if (nm_workload_dim(wl, all[k]) >= 0 || nm_workload_unit_dim(wl, all[k]))
                continue;
            if (wl->nunit >= NM_MAX_STANDINS)
                return nm_yerror(err, net->layer[i].node, "the layers of this network use "
                                 "more than %d dimension names between them",
                                 NM_MAX_STANDINS);
            snprintf(wl->unit[wl->nunit++], NM_NAME_MAX, "%s", all[k]);
        }
    }
    return NM_OK;
}

nm_status nm_network_parse(nm_network *net, const nm_ynode *node, nm_ydoc *doc, nm_error *err)
{
    memset(net, 0, sizeof *net);
    static const char *const keys[] = {"name", "layers", NULL};
    static const char *const lkeys[] = {"name", "repeat", "problem", NULL};
    nm_status st = nm_yexpect(node, NM_Y_MAP, "network", err);
    if (st != NM_OK || (st = nm_ycheck_keys(node, keys, "network", err)) != NM_OK)
        return st;
    const nm_ynode *x = nm_ymap_get(node, "name");
    const char *s = "network";
    if (x && (st = nm_yget_str(x, "the network's name", &s, err)) != NM_OK)
        return st;
    snprintf(net->name, sizeof net->name, "%s", s);
    const nm_ynode *layers = nm_ymap_get(node, "layers");
    if (!layers)
        return nm_yerror(err, node, "the network has no 'layers'");
    if ((st = nm_yexpect(layers, NM_Y_SEQ, "layers", err)) != NM_OK)
        return st;
    if (layers->n == 0)
        return nm_yerror(err, layers, "the network's 'layers' is empty");
    if (layers->n > NM_MAX_LAYERS)
        return nm_yerror(err, layers, "at most %d layers", NM_MAX_LAYERS);
    net->layer = nm_calloc(layers->n, sizeof *net->layer);
    if (!net->layer)
        return nm_error_set(err, NM_ERR_NOMEM, NULL, 0, 0, "out of memory");
    for (size_t i = 0; i < layers->n; i++) {
        const nm_ynode *ln = layers->items[i];
        nm_layer *l = &net->layer[net->nlayers++];
        l->node = ln;
        l->repeat = 1;
        l->same_as = (int)i;
        if ((st = nm_yexpect(ln, NM_Y_MAP, "a layer", err)) != NM_OK ||
            (st = nm_ycheck_keys(ln, lkeys, "a layer", err)) != NM_OK)
            return st;
        snprintf(l->name, sizeof l->name, "layer%zu", i + 1);
        if ((x = nm_ymap_get(ln, "name"))) {
            if ((st = nm_yget_str(x, "a layer's name", &s, err)) != NM_OK)
                return st;
            snprintf(l->name, sizeof l->name, "%s", s);
            for (size_t j = 0; j < i; j++)
                if (!strcmp(net->layer[j].name, l->name))
                    return nm_yerror(err, x, "two layers are called '%s'", l->name);
        }
        if ((x = nm_ymap_get(ln, "repeat")) &&
            (st = nm_yget_pos(x, "repeat", &l->repeat, err)) != NM_OK)
            return st;
        const nm_ynode *prob = nm_ymap_get(ln, "problem");
        if (!prob)
            return nm_yerror(err, ln, "layer '%s' has no 'problem'", l->name);
        if ((st = nm_workload_parse(&l->wl, prob, doc, err)) != NM_OK)
            return st;
    }
    for (int i = 0; i < net->nlayers; i++) {
        for (int j = 0; j < i; j++) {
            if (net->layer[j].same_as == j && same_problem(&net->layer[i].wl, &net->layer[j].wl)) {
                net->layer[i].same_as = j;
                break;
            }
        }
        net->ndistinct += net->layer[i].same_as == i;
    }
    return add_unit_dims(net, err);
}

void nm_network_fini(nm_network *net)
{
    if (!net)
        return;
    nm_free(net->layer);
    net->layer = NULL;
    net->nlayers = 0;
}

double nm_network_macs(const nm_network *net)
{
    double macs = 0;
    for (int i = 0; i < net->nlayers; i++)
        macs += (double)net->layer[i].repeat * (double)nm_workload_ops(&net->layer[i].wl);
    return macs;
}

/* Layers are handed to workers in order from a shared counter. */
struct job {
    const nm_network *net;
    const nm_arch *arch;
    const nm_ynode *c1, *c2;
    nm_search_opts o; /* one thread each */
    const nm_mapping *const *warm; /* nwarm sources, nlayers each */
    int nwarm;
    nm_layer_result *out;
    pthread_mutex_t lock;
    int next, ndone;
    int nomem;
    void (*done)(void *ctx, int i, int ndone);
    void *ctx;
};

static void map_layer(struct job *jb, int i)
{
    nm_layer_result *r = &jb->out[i];
    nm_error_clear(&r->err);
    nm_mapspace *ms = nm_calloc(1, sizeof *ms);
    if (!ms) {
        r->status = nm_error_set(&r->err, NM_ERR_NOMEM, NULL, 0, 0, "out of memory");
        return;
    }
    r->status = nm_mapspace_init(ms, jb->arch, &jb->net->layer[i].wl, jb->c1, jb->c2, &r->err);
    if (r->status == NM_OK && jb->o.imperfect)
        r->status = nm_mapspace_enable_imperfect(ms, &r->err);
    nm_search_opts o = jb->o;
    nm_mapping *warm = NULL;
    if (r->status == NM_OK && jb->nwarm > 0) {
        if (!(warm = nm_calloc(NM_MAX_WARM, sizeof *warm)))
            r->status = nm_error_set(&r->err, NM_ERR_NOMEM, NULL, 0, 0, "out of memory");
        /* each source's best first, then their runners-up */
        for (int j = 0; warm && j < NM_WARM_STARTS; j++)
            for (int s = 0; s < jb->nwarm && o.nwarm < NM_MAX_WARM; s++) {
                const nm_mapping *m = jb->warm[s] ? &jb->warm[s][i * NM_WARM_STARTS + j]
                                                  : NULL;
                if (m && m->nlevels > 0)
                    warm[o.nwarm++] = *m;
            }
        o.warm = warm;
    }
    if (r->status == NM_OK)
        r->status = nm_search_run(ms, &o, &r->res, &r->err);
    nm_free(warm);
    nm_free(ms);
}

static void *worker(void *arg)
{
    struct job *jb = arg;
    for (;;) {
        pthread_mutex_lock(&jb->lock);
        int i = jb->next;
        while (i < jb->net->nlayers && jb->net->layer[i].same_as != i)
            i++;
        jb->next = i + 1;
        pthread_mutex_unlock(&jb->lock);
        if (i >= jb->net->nlayers)
            return NULL;
        if (jb->o.stop && *jb->o.stop) { /* interrupted: the rest are not searched */
            jb->out[i].status = nm_error_set(&jb->out[i].err, NM_ERR_INPUT, NULL, 0, 0,
                                             "not searched: interrupted");
            continue;
        }
        map_layer(jb, i);
        pthread_mutex_lock(&jb->lock);
        if (jb->out[i].status == NM_ERR_NOMEM)
            jb->nomem = 1;
        jb->ndone++;
        if (jb->done)
            jb->done(jb->ctx, i, jb->ndone);
        pthread_mutex_unlock(&jb->lock);
    }
}

nm_status nm_network_map(const nm_network *net, const nm_arch *arch, const nm_ynode *constraints,
                         const nm_ynode *more, const nm_search_opts *o, int threads,
                         nm_layer_result *out, nm_error *err)
{
    return nm_network_map_report(net, arch, constraints, more, o, threads, out, NULL, NULL, err);
}

nm_status nm_network_map_report(const nm_network *net, const nm_arch *arch,
                                const nm_ynode *constraints, const nm_ynode *more,
                                const nm_search_opts *o, int threads, nm_layer_result *out,
                                void (*done)(void *ctx, int i, int ndone), void *ctx,
                                nm_error *err)
{
    return nm_network_map_warm(net, arch, constraints, more, o, threads, NULL, 0, out, done, ctx,
                               err);
}

nm_mapping *nm_network_best_mappings(const nm_network *net, const nm_layer_result *out)
{
    nm_mapping *m = nm_calloc(net->nlayers ? (size_t)net->nlayers * NM_WARM_STARTS : 1,
                              sizeof *m);
    for (int i = 0; m && i < net->nlayers; i++) {
        const nm_layer_result *r = &out[net->layer[i].same_as];
        if (r->status != NM_OK || !r->res.found)
            continue;
        nm_search_result_starts(&r->res, &m[i * NM_WARM_STARTS]);
    }
    return m;
}

nm_status nm_network_map_warm(const nm_network *net, const nm_arch *arch,
                              const nm_ynode *constraints, const nm_ynode *more,
                              const nm_search_opts *o, int threads,
                              const nm_mapping *const *warm, int nwarm, nm_layer_result *out,
                              void (*done)(void *ctx, int i, int ndone), void *ctx,
                              nm_error *err)
{
    struct job jb = {.net = net, .arch = arch, .c1 = constraints, .c2 = more, .o = *o, .out = out,
                     .warm = warm, .nwarm = nwarm < NM_MAX_WARM ? nwarm : NM_MAX_WARM,
                     .done = done, .ctx = ctx};
    jb.o.progress = NULL;
    memset(out, 0, (size_t)net->nlayers * sizeof *out);
    int T = threads < 1 ? 1 : threads > net->ndistinct ? net->ndistinct : threads;
    /* Fewer layers than threads: the spare threads help each search (which
     * gives the same result on any number of threads). */
    jb.o.threads = threads > T ? threads / T : 1;
    pthread_t tid[64];
    if (T > 64)
        T = 64;
    pthread_mutex_init(&jb.lock, NULL);
    int started = 1;
    for (int t = 1; t < T; t++, started++)
        if (pthread_create(&tid[t], NULL, worker, &jb) != 0)
            break;
    worker(&jb);
    for (int t = 1; t < started; t++)
        pthread_join(tid[t], NULL);
    pthread_mutex_destroy(&jb.lock);
    if (jb.nomem)
        return nm_error_set(err, NM_ERR_NOMEM, NULL, 0, 0, "out of memory");
    return NM_OK;
}

void nm_network_results_fini(const nm_network *net, nm_layer_result *out)
{
    if (!out)
        return;
    for (int i = 0; i < net->nlayers; i++)
        if (net->layer[i].same_as == i)
            nm_search_result_fini(&out[i].res);
}

void nm_network_bound(const nm_arch *arch, const nm_network *net, const nm_layer_result *out,
                      const struct nm_network_fusion *fu, const nm_search_opts *o,
                      nm_bound_sum *s)
{
    for (int i = 0; i < net->nlayers; i++) {
        const nm_layer_result *lr = &out[net->layer[i].same_as];
        const nm_network_run *fr = fu ? nm_network_fused_run(fu, i) : NULL;
        nm_roofline r;
        if (fr) { /* its operation in the fused run: intermediates on chip */
            nm_network_run_roofline(net, arch, fr, i, &r);
            nm_bound_sum_add(s, (double)net->layer[i].repeat, &r,
                             nm_metric_value(s->metric, r.energy_pj, r.bound_cycles,
                                             r.words_in + r.words_out));
            continue;
        }
        if (lr->status != NM_OK || !lr->res.found)
            continue;
        nm_search_roofline(&lr->res, arch, &net->layer[i].wl, &r);
        nm_bound_sum_add(s, (double)net->layer[i].repeat, &r,
                         nm_search_lower_bound(o, &lr->res, arch, &net->layer[i].wl));
    }
}

double nm_network_roofline_cycles(const nm_arch *arch, const nm_network *net,
                                  const struct nm_network_fusion *fu)
{
    double c = 0.0;
    for (int i = 0; i < net->nlayers; i++) {
        const nm_network_run *fr = fu ? nm_network_fused_run(fu, i) : NULL;
        nm_roofline r;
        if (fr)
            nm_network_run_roofline(net, arch, fr, i, &r);
        else
            nm_roofline_of(&r, arch, &net->layer[i].wl);
        c += (double)net->layer[i].repeat * r.bound_cycles;
    }
    return c;
}

void nm_network_total_add(nm_network_total *t, const nm_arch *arch, const nm_workload *wl,
                          const nm_stats *st, double k)
{
    t->mapped++;
    t->macs += k * (double)nm_workload_ops(wl);
    t->energy += k * st->energy;
    t->cycles += k * (double)st->cycles;
    t->lla += k * (double)st->last_level_accesses;
    t->busy += k * st->utilization * (double)st->cycles;
    for (int l = 0; l < arch->nlevels; l++) {
        t->level[l] += k * st->level[l].energy;
        t->noc += k * st->level[l].noc_energy;
    }
    t->level[arch->nlevels] += k * st->compute_energy;
    nm_roofline r;
    nm_roofline_of(&r, arch, wl);
    t->bound_cycles += k * r.bound_cycles;
    t->bound_energy += k * r.energy_pj;
}

void nm_network_totals(const nm_arch *arch, const nm_network *net, const nm_layer_result *out,
                       nm_network_total *t)
{
    memset(t, 0, sizeof *t);
    for (int i = 0; i < net->nlayers; i++) {
        const nm_layer_result *lr = &out[net->layer[i].same_as];
        if (lr->status != NM_OK || !lr->res.found)
            t->failed++;
        else
            nm_network_total_add(t, arch, &net->layer[i].wl, &lr->res.best_stats,
                                 (double)net->layer[i].repeat);
    }
}
