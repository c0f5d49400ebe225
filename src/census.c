/* census.c — every valid mapping of a constrained mapspace, or a uniform
 * sample, evaluated and summarized; see census.h. */
#include <config.h>

#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "nestmap/alloc.h"
#include "nestmap/census.h"
#include "nestmap/model.h"
#include "nestmap/pcg32.h"

#define BATCH 512 /* units handed to the workers at a time */

/* A unit of work: orders [j0, j1) of outer point o, or samples [j0, j1). */
typedef struct unit {
    uint64_t o, j0, j1;
    nm_census_row *rows; /* the rows kept, in order (owned) */
    size_t nrows, caprows;
} unit;

/* One worker's tallies (order-independent, merged at the end). */
typedef struct tally {
    uint64_t candidates, valid, over_capacity, over_fanout, other_invalid, broke;
    double e_min, e_max;
    uint64_t cy_min, cy_max;
    uint64_t dram_min, n_dram_min;
    double dram_e_lo, dram_e_hi;
    struct near {        /* the mappings within NEAR of this worker's least: */
        double e;        /* energy */
        int own;         /* its schedule's own order */
    } *near;
    size_t nnear, capnear;
    uint64_t schedules;
    nm_census_row best;
    uint64_t hist[NM_CENSUS_BINS];
    int oom;
} tally;

typedef struct shared {
    const nm_mapspace *ms;
    const nm_census_opts *o;
    double log_lo;
    unit *units;
    int nunits;
    int next;            /* the next unit to take (atomic) */
} shared;

typedef struct worker {
    shared *sh;
    tally t;
    nm_model mdl;
    nm_stats st;
    pthread_t tid;
    char gap[256]; /* the next worker's tallies off the cache lines this one writes */
} worker;

static void tally_init(tally *t)
{
    memset(t, 0, sizeof *t);
    t->e_min = t->dram_e_lo = INFINITY;
    t->e_max = t->dram_e_hi = -INFINITY;
    t->cy_min = t->dram_min = UINT64_MAX;
    t->best.energy = INFINITY;
}

static int row_before(const nm_census_row *a, const nm_census_row *b)
{
    return a->o < b->o || (a->o == b->o && a->j < b->j);
}

static void near_add(tally *t, double e, int own)
{
    if (e > t->e_min * (1.0 + NM_CENSUS_NEAR))
        return;
    if (t->nnear == t->capnear) {
        size_t cap = t->capnear ? 2 * t->capnear : 1024;
        struct near *p = nm_realloc_array(t->near, cap, sizeof *p);
        if (!p) {
            t->oom = 1;
            return;
        }
        t->near = p;
        t->capnear = cap;
    }
    t->near[t->nnear++] = (struct near){e, own};
}

/* A new least energy: drop what is no longer near it. */
static void near_prune(tally *t)
{
    size_t k = 0;
    for (size_t i = 0; i < t->nnear; i++)
        if (t->near[i].e <= t->e_min * (1.0 + NM_CENSUS_NEAR))
            t->near[k++] = t->near[i];
    t->nnear = k;
}

static void count_valid(tally *t, const nm_census_row *r, double log_lo)
{
    t->valid++;
    int own = r->same_as == r->j;
    t->schedules += own;
    if (r->energy < t->e_min) {
        t->e_min = r->energy;
        near_prune(t);
    }
    near_add(t, r->energy, own);
    if (r->energy > t->e_max)
        t->e_max = r->energy;
    if (r->energy < t->best.energy || (r->energy == t->best.energy && row_before(r, &t->best)))
        t->best = *r;
    if (r->cycles < t->cy_min)
        t->cy_min = r->cycles;
    if (r->cycles > t->cy_max)
        t->cy_max = r->cycles;
    if (r->dram < t->dram_min) {
        t->dram_min = r->dram;
        t->n_dram_min = 0;
        t->dram_e_lo = INFINITY;
        t->dram_e_hi = -INFINITY;
    }
    if (r->dram == t->dram_min) {
        t->n_dram_min++;
        t->dram_e_lo = fmin(t->dram_e_lo, r->energy);
        t->dram_e_hi = fmax(t->dram_e_hi, r->energy);
    }
    long bin = r->energy > 0 ? lround(floor((log10(r->energy) - log_lo) / NM_CENSUS_STEP)) : 0;
    if (bin < 0)
        bin = 0;
    if (bin >= NM_CENSUS_BINS)
        bin = NM_CENSUS_BINS - 1;
    t->hist[bin]++;
}

static void count_invalid(tally *t, nm_invalid_kind kind, uint64_t n)
{
    if (kind == NM_INV_CAPACITY || kind == NM_INV_MIN_UTIL || kind == NM_INV_MD_CAPACITY)
        t->over_capacity += n;
    else if (kind == NM_INV_ARITH || kind == NM_INV_INSTANCES)
        t->over_fanout += n;
    else
        t->other_invalid += n;
}

static void keep_row(worker *w, unit *u, const nm_census_row *r)
{
    const nm_census_opts *o = w->sh->o;
    if (!o->row)
        return;
    if (u->nrows == u->caprows) {
        size_t cap = u->caprows ? 2 * u->caprows : 256;
        nm_census_row *p = nm_realloc_array(u->rows, cap, sizeof *p);
        if (!p) {
            w->t.oom = 1;
            return;
        }
        u->rows = p;
        u->caprows = cap;
    }
    u->rows[u->nrows++] = *r;
}

static void run_unit(worker *w, unit *u)
{
    const shared *sh = w->sh;
    const nm_mapspace *ms = sh->ms;
    nm_mapping m;
    nm_order_cursor cur; /* sets again only the levels whose order moved */
    uint64_t lead = UINT64_MAX; /* orders of the levels outside the innermost */
    if (sh->o->enumerate) {
        if (nm_mapspace_outer(ms, u->o, &m) <= 0)
            return; /* the main thread checked it; cannot happen */
        nm_order_cursor_init(&cur, ms, &m);
        lead = 1;
        for (int l = 1; l < ms->arch->nlevels; l++)
            lead *= cur.radix[l];
    }
    for (uint64_t j = u->j0; j < u->j1; j++) {
        if (sh->o->stop && *sh->o->stop)
            return;
        /* the innermost level's order is the most significant digit of j
         * (nm_order_cursor_set): j mod lead is its schedule's first order */
        nm_census_row r = {u->o, j, 0, 0, 0, j % lead};
        w->t.candidates++;
        if (sh->o->enumerate) {
            nm_order_cursor_set(&cur, ms, &m, j);
        } else {
            nm_pcg32 rng;
            nm_pcg32_seed(&rng, sh->o->seed, j);
            nm_point pt;
            nm_mapspace_random(ms, &rng, &pt);
            int wd, wl;
            r.o = j;
            r.j = r.same_as = 0;
            if (!nm_mapspace_decode(ms, &pt, &m, &wd, &wl)) {
                w->t.broke++;
                continue;
            }
        }
        if (!nm_model_eval(&w->mdl, &m, &w->st, NULL)) {
            count_invalid(&w->t, w->st.invalid.kind, 1);
            continue;
        }
        r.energy = w->st.energy;
        r.cycles = w->st.cycles;
        r.dram = w->st.last_level_accesses;
        count_valid(&w->t, &r, sh->log_lo);
        keep_row(w, u, &r);
    }
}

static void *work(void *arg)
{
    worker *w = arg;
    shared *sh = w->sh;
    for (;;) {
        int i = __atomic_fetch_add(&sh->next, 1, __ATOMIC_RELAXED);
        if (i >= sh->nunits)
            break;
        run_unit(w, &sh->units[i]);
    }
    return NULL;
}

/* Runs the batch's units on the workers, then hands the rows over in order. */
static int run_batch(shared *sh, worker *w, int nthreads)
{
    sh->next = 0;
    int started = 0;
    for (int t = 1; t < nthreads; t++)
        if (pthread_create(&w[t].tid, NULL, work, &w[t]) == 0)
            started = t;
        else
            break;
    work(&w[0]);
    for (int t = 1; t <= started; t++)
        pthread_join(w[t].tid, NULL);
    for (int i = 0; i < sh->nunits; i++) {
        unit *u = &sh->units[i];
        for (size_t k = 0; k < u->nrows; k++)
            sh->o->row(sh->o->ctx, &u->rows[k]);
        nm_free(u->rows);
        u->rows = NULL;
        u->nrows = u->caprows = 0;
    }
    sh->nunits = 0;
    for (int t = 0; t < nthreads; t++)
        if (w[t].t.oom)
            return 0;
    return 1;
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void merge(nm_census *c, worker *w, int n)
{
    double e_min = INFINITY;
    for (int t = 0; t < n; t++)
        e_min = fmin(e_min, w[t].t.e_min);
    c->e_min = e_min;
    c->e_max = -INFINITY;
    c->cy_min = UINT64_MAX;
    c->dram_min = UINT64_MAX;
    c->best.energy = INFINITY;
    for (int t = 0; t < n; t++) {
        const tally *x = &w[t].t;
        c->candidates += x->candidates;
        c->valid += x->valid;
        c->over_capacity += x->over_capacity;
        c->over_fanout += x->over_fanout;
        c->other_invalid += x->other_invalid;
        c->broke_constraints += x->broke;
        c->e_max = fmax(c->e_max, x->e_max);
        if (x->cy_min < c->cy_min)
            c->cy_min = x->cy_min;
        if (x->cy_max > c->cy_max)
            c->cy_max = x->cy_max;
        c->schedules += x->schedules;
        for (size_t i = 0; i < x->nnear; i++) {
            int near = x->near[i].e <= e_min * (1.0 + NM_CENSUS_NEAR);
            int optimal = x->near[i].e <= e_min * (1.0 + 1e-9);
            c->n_near += near;
            c->n_optimal += optimal;
            c->near_schedules += near && x->near[i].own;
            c->optimal_schedules += optimal && x->near[i].own;
        }
        if (x->dram_min < c->dram_min) {
            c->dram_min = x->dram_min;
            c->n_dram_min = 0;
            c->dram_min_e_lo = INFINITY;
            c->dram_min_e_hi = -INFINITY;
        }
        if (x->dram_min == c->dram_min && x->n_dram_min) {
            c->n_dram_min += x->n_dram_min;
            c->dram_min_e_lo = fmin(c->dram_min_e_lo, x->dram_e_lo);
            c->dram_min_e_hi = fmax(c->dram_min_e_hi, x->dram_e_hi);
        }
        if (x->best.energy < c->best.energy ||
            (x->best.energy == c->best.energy && row_before(&x->best, &c->best)))
            c->best = x->best;
        for (int b = 0; b < NM_CENSUS_BINS; b++)
            c->hist[b] += x->hist[b];
    }
}

nm_status nm_census_run(const nm_mapspace *ms, const nm_census_opts *o, nm_census *c,
                        nm_error *err)
{
    memset(c, 0, sizeof *c);
    c->enumerated = o->enumerate;
    int n = o->threads > 0 ? o->threads : 1;
    c->threads = n;
    uint64_t total = o->enumerate ? nm_mapspace_outer_count(ms) : o->samples;
    if (o->enumerate && !total)
        return nm_error_set(err, NM_ERR_INPUT, NULL, 0, 0,
                            "the mapspace has more than 2^64 factorization/split/bypass points "
                            "(10^%.1f): a census cannot enumerate it; sample it instead",
                            ms->log_factor + ms->log_split + ms->log_bypass);
    worker *w = nm_calloc((size_t)n, sizeof *w);
    unit *units = nm_calloc(BATCH, sizeof *units);
    nm_model mdl;
    memset(&mdl, 0, sizeof mdl);
    nm_status st = NM_OK;
    if (!w || !units) {
        st = nm_error_set(err, NM_ERR_NOMEM, NULL, 0, 0, "out of memory");
        goto out;
    }
    shared sh = {ms, o, 0.0, units, 0, 0};
    for (int t = 0; t < n; t++) {
        w[t].sh = &sh;
        tally_init(&w[t].t);
        if ((st = nm_model_init(&w[t].mdl, ms->arch, ms->wl, err)) != NM_OK)
            goto out;
    }
    if ((st = nm_model_init(&mdl, ms->arch, ms->wl, err)) != NM_OK)
        goto out;
    static nm_stats pst;
    /* The histogram's origin: two decades below the least energy any point
     * can reach (compute and leakage; see nm_model_bound). */
    int have_lo = 0;
    double t0 = now();
    uint64_t done = 0;
    for (uint64_t o_i = 0; o_i < total && !(o->stop && *o->stop);) {
        if (o->enumerate) {
            nm_mapping m;
            int ok = nm_mapspace_outer(ms, o_i, &m);
            if (ok < 0) {
                o_i++;
                continue;
            }
            if (!ok) {
                c->broke_constraints++;
                o_i++;
                continue;
            }
            uint64_t orders = nm_mapspace_orders(ms, &m);
            if (!nm_model_precheck(&mdl, &m, &pst)) {
                count_invalid(&w[0].t, pst.invalid.kind, orders);
                w[0].t.candidates += orders;
                done += orders;
                o_i++;
                continue;
            }
            if (!have_lo) {
                double e, cy, lla;
                nm_model_bound(&mdl, &m, &e, &cy, &lla);
                sh.log_lo = floor(log10(e > 0 ? e : 1.0)) - 2.0;
                have_lo = 1;
            }
            for (uint64_t j = 0; j < orders; j += NM_CENSUS_UNIT) {
                units[sh.nunits++] =
                    (unit){o_i, j, orders - j < NM_CENSUS_UNIT ? orders : j + NM_CENSUS_UNIT,
                           NULL, 0, 0};
                done += units[sh.nunits - 1].j1 - j;
                if (sh.nunits == BATCH && !run_batch(&sh, w, n)) {
                    st = nm_error_set(err, NM_ERR_NOMEM, NULL, 0, 0, "out of memory");
                    goto out;
                }
            }
            o_i++;
        } else {
            if (!have_lo) {
                /* a sample's origin: the first valid sample's bound */
                for (uint64_t s = 0; s < total && !have_lo; s++) {
                    nm_pcg32 rng;
                    nm_pcg32_seed(&rng, o->seed, s);
                    nm_point pt;
                    nm_mapping m;
                    int wd, wl;
                    nm_mapspace_random(ms, &rng, &pt);
                    if (nm_mapspace_decode(ms, &pt, &m, &wd, &wl) &&
                        nm_model_precheck(&mdl, &m, &pst)) {
                        double e, cy, lla;
                        nm_model_bound(&mdl, &m, &e, &cy, &lla);
                        sh.log_lo = floor(log10(e > 0 ? e : 1.0)) - 2.0;
                        have_lo = 1;
                    }
                }
                have_lo = 1;
            }
            uint64_t j1 = total - o_i < NM_CENSUS_UNIT ? total : o_i + NM_CENSUS_UNIT;
            units[sh.nunits++] = (unit){0, o_i, j1, NULL, 0, 0};
            done += j1 - o_i;
            o_i = j1;
            if (sh.nunits == BATCH && !run_batch(&sh, w, n)) {
                st = nm_error_set(err, NM_ERR_NOMEM, NULL, 0, 0, "out of memory");
                goto out;
            }
        }
        if (o->progress && sh.nunits == 0)
            o->progress(o->ctx, done);
    }
    if (sh.nunits && !run_batch(&sh, w, n)) {
        st = nm_error_set(err, NM_ERR_NOMEM, NULL, 0, 0, "out of memory");
        goto out;
    }
    c->stopped = o->stop && *o->stop;
    c->log_lo = sh.log_lo;
    merge(c, w, n);
    c->seconds = now() - t0;
out:
    if (w)
        for (int t = 0; t < n; t++) {
            nm_model_fini(&w[t].mdl);
            nm_free(w[t].t.near);
        }
    for (int i = 0; units && i < BATCH; i++)
        nm_free(units[i].rows);
    nm_model_fini(&mdl);
    nm_free(units);
    nm_free(w);
    return st;
}
