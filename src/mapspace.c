/* mapspace.c — constraints, sub-spaces, and decoding points to mappings;
 * see mapspace.h. */
#include <config.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nestmap/mapspace.h"
#include "nestmap/text.h"

/* ---- small combinatorics ---- */

/* C(n, k) or 0 when it passes 2^64. */
static uint64_t binom(uint64_t n, uint64_t k)
{
    if (k > n)
        return 0;
    if (k > n - k)
        k = n - k;
    unsigned __int128 r = 1;
    for (uint64_t i = 1; i <= k; i++) {
        r = r * (n - k + i) / i;
        if (r > UINT64_MAX)
            return 0;
    }
    return (uint64_t)r;
}

static uint64_t factorial(int n)
{
    uint64_t f = 1;
    for (int i = 2; i <= n; i++)
        f *= (uint64_t)i;
    return f;
}

/* Compositions of e into m ordered parts (m >= 1). */
static uint64_t compositions(int e, int m)
{
    return binom((uint64_t)(e + m - 1), (uint64_t)(m - 1));
}

/* The idx-th composition of e into m parts, parts ascending in the first. */
static void unrank_composition(int e, int m, uint64_t idx, int *part)
{
    int rem = e;
    for (int i = 0; i < m - 1; i++) {
        int v;
        for (v = 0; v < rem; v++) {
            uint64_t c = compositions(rem - v, m - i - 1);
            if (idx < c)
                break;
            idx -= c;
        }
        part[i] = v;
        rem -= v;
    }
    part[m - 1] = rem;
}

/* The rank of a composition: the inverse of unrank_composition. */
static uint64_t rank_composition(int m, const int *part)
{
    uint64_t idx = 0;
    int rem = 0;
    for (int i = 0; i < m; i++)
        rem += part[i];
    for (int i = 0; i < m - 1; i++) {
        for (int v = 0; v < part[i]; v++)
            idx += compositions(rem - v, m - i - 1);
        rem -= part[i];
    }
    return idx;
}

/* The rank-th permutation (Lehmer code) of items[0..n), written to out. */
static void unrank_perm(const int8_t *items, int n, uint64_t rank, int8_t *out)
{
    int8_t pool[NM_MAX_DIMS];
    memcpy(pool, items, (size_t)n);
    for (int i = 0; i < n; i++) {
        uint64_t f = factorial(n - 1 - i);
        int pick = (int)(rank / f);
        rank %= f;
        out[i] = pool[pick];
        memmove(pool + pick, pool + pick + 1, (size_t)(n - 1 - pick));
    }
}

/* ---- constraints ---- */

static nm_status bad_target(const nm_arch *arch, const nm_ynode *at, const char *name, nm_error *err)
{
    const char *s = nm_arch_suggest_level(arch, name);
    if (s)
        return nm_yerror(err, at, "constraint target '%s' is not a storage level; did you mean "
                         "'%s'?", name, s);
    return nm_yerror(err, at, "constraint target '%s' is not a storage level", name);
}

static int slot_of(const nm_mapspace *ms, int level, int spatial)
{
    return ms->slot_at[level][spatial != 0];
}

/* Fixes or bounds the factors of one slot from a constraint's `factors:`. */
static nm_status constrain_factors(nm_mapspace *ms, int slot, const nm_ynode *n, nm_error *err)
{
    nm_factor_term t[NM_MAX_FACTOR_TERMS];
    int count;
    nm_status st = nm_mapping_parse_factor_terms(n, ms->wl, 1, t, &count, err);
    if (st != NM_OK)
        return st;
    for (int i = 0; i < count; i++) {
        nm_dim_space *ds = &ms->dim[t[i].dim];
        const char *name = ms->wl->dim[t[i].dim];
        long long v = t[i].value;
        if (t[i].op == '=') {
            if (ds->fixed[slot] && ds->fixed[slot] != v)
                return nm_yerror_at(err, t[i].at, t[i].offset, "%s is fixed to %lld here but to %lld "
                                    "by the constraint at line %d", name, v,
                                    (long long)ds->fixed[slot], ds->at[slot] ? ds->at[slot]->line : 0);
            ds->fixed[slot] = v;
        } else if (t[i].op == '<') {
            ds->hi[slot] = ds->hi[slot] ? (ds->hi[slot] < v ? ds->hi[slot] : v) : v;
        } else {
            ds->lo[slot] = ds->lo[slot] > v ? ds->lo[slot] : v;
        }
        ds->at[slot] = n;
    }
    return NM_OK;
}

/* timeloopfe's permutation optimizer (v4/processors/permutation_optimizer.py)
 * rewrites the permutation of every constraint written on a v0.4 design
 * before Timeloop sees it: each dimension the constraint fixes to 1, then
 * each dimension of size 1, that the permutation does not name goes to its
 * front, one after the other (so in reverse).  That moves the split between
 * X and Y of a spatial constraint; nestmap rewrites the same way, so the
 * design means what it means to Timeloop. */
static int fe_permutation(const nm_mapspace *ms, const nm_ynode *factors, int8_t *dims, int n)
{
    int8_t out[NM_MAX_DIMS];
    int k = 0;
    uint32_t seen = 0;
    for (int i = 0; i < n; i++)
        seen |= 1u << dims[i];
    int8_t front[NM_MAX_DIMS];
    int nf = 0;
    nm_factor_term t[NM_MAX_FACTOR_TERMS];
    int count = 0;
    nm_error ignored;
    if (factors && nm_mapping_parse_factor_terms(factors, ms->wl, 1, t, &count, &ignored) != NM_OK)
        count = 0;
    for (int i = 0; i < count; i++)
        if (t[i].op == '=' && t[i].value == 1 && !(seen & (1u << t[i].dim))) {
            front[nf++] = (int8_t)t[i].dim;
            seen |= 1u << t[i].dim;
        }
    for (int d = 0; d < ms->wl->ndims; d++)
        if (ms->wl->bound[d] == 1 && !(seen & (1u << d))) {
            front[nf++] = (int8_t)d;
            seen |= 1u << d;
        }
    for (int i = nf - 1; i >= 0; i--) /* each was put in front of the ones before */
        out[k++] = front[i];
    for (int i = 0; i < n; i++)
        out[k++] = dims[i];
    memcpy(dims, out, (size_t)k);
    return k;
}

static nm_status apply_constraint(nm_mapspace *ms, const nm_ynode *e, int fe, nm_error *err)
{
    static const char *const keys[] = {"target", "type", "factors", "permutation", "split", "keep",
                                       "bypass", "no_link_transfer", "no_reuse",
                                       "no_multicast_no_reduction", "no_temporal_reuse", "min",
                                       NULL};
    nm_status st = nm_yexpect(e, NM_Y_MAP, "a constraint", err);
    if (st != NM_OK || (st = nm_ycheck_keys(e, keys, "a constraint", err)) != NM_OK)
        return st;
    const nm_ynode *tn = nm_ymap_get(e, "target"), *ty = nm_ymap_get(e, "type");
    if (!tn)
        return nm_yerror(err, e, "constraint has no 'target'");
    if (!ty)
        return nm_yerror(err, e, "constraint has no 'type' (temporal, spatial or bypass)");
    const char *target, *type;
    if ((st = nm_yget_str(tn, "target", &target, err)) != NM_OK ||
        (st = nm_yget_str(ty, "type", &type, err)) != NM_OK)
        return st;
    int l = nm_arch_target(ms->arch, target, !strcmp(type, "spatial"));
    if (l < 0)
        return bad_target(ms->arch, tn, target, err);
    nm_level_space *ls = &ms->level[l];
    ls->at = e;
    const nm_ynode *x;
    if (!strcmp(type, "temporal") || !strcmp(type, "spatial")) {
        int spatial = type[0] == 's';
        int slot = slot_of(ms, l, spatial);
        if (slot < 0)
            return nm_yerror(err, ty, "'%s' has no spatial fan-out to constrain", target);
        if ((x = nm_ymap_get(e, "factors")) && (st = constrain_factors(ms, slot, x, err)) != NM_OK)
            return st;
        if ((x = nm_ymap_get(e, "permutation")) || fe) {
            int8_t dims[NM_MAX_DIMS];
            int n = 0;
            if (x && (st = nm_mapping_parse_dims(x, ms->wl, dims, &n, err)) != NM_OK)
                return st;
            if (fe)
                n = fe_permutation(ms, nm_ymap_get(e, "factors"), dims, n);
            if (spatial) {
                uint32_t seen = 0;
                int k = 0;
                for (int i = 0; i < n; i++) {
                    ls->sorder[k++] = dims[i];
                    seen |= 1u << dims[i];
                }
                for (int d = 0; d < ms->wl->ndims; d++)
                    if (!(seen & (1u << d)))
                        ls->sorder[k++] = (int8_t)d;
            } else {
                memcpy(ls->prefix, dims, (size_t)n);
                ls->nprefix = n;
            }
        }
        if ((x = nm_ymap_get(e, "split"))) {
            if (!spatial)
                return nm_yerror(err, x, "split belongs to a spatial constraint");
            int64_t v;
            if ((st = nm_yget_int(x, "split", &v, err)) != NM_OK)
                return st;
            if (v < 0)
                return nm_yerror(err, x, "split must be 0 or more");
            ls->split = v > ms->wl->ndims ? ms->wl->ndims : (int)v;
        }
        uint32_t mask;
        if ((x = nm_ymap_get(e, "no_link_transfer"))) {
            if ((st = nm_mapping_parse_ds_list(x, ms->wl, &mask, err)) != NM_OK)
                return st;
            ls->no_link |= mask;
        }
        const nm_ynode *nr = nm_ymap_get(e, "no_reuse");
        if (!nr)
            nr = nm_ymap_get(e, spatial ? "no_multicast_no_reduction" : "no_temporal_reuse");
        if (nr) {
            if ((st = nm_mapping_parse_ds_list(nr, ms->wl, &mask, err)) != NM_OK)
                return st;
            if (spatial)
                ls->no_multicast |= mask;
            else
                ls->no_temporal_reuse |= mask;
        }
        return NM_OK;
    }
    if (!strcmp(type, "bypass") || !strcmp(type, "datatype") || !strcmp(type, "dataspace")) {
        uint32_t keep, bypass;
        if ((st = nm_mapping_parse_keep_bypass(e, ms->wl, &keep, &bypass, err)) != NM_OK)
            return st;
        if ((keep | ls->keep) & (bypass | ls->bypass)) {
            int d = __builtin_ctz((keep | ls->keep) & (bypass | ls->bypass));
            return nm_yerror(err, e, "data space '%s' is both kept and bypassed at '%s'",
                             ms->wl->ds[d].name, target);
        }
        ls->keep |= keep;
        ls->bypass |= bypass;
        return NM_OK;
    }
    if (!strcmp(type, "utilization")) {
        /* The share of the level's spatial fan-out that a mapping must use. */
        const nm_ynode *mn = nm_ymap_get(e, "min");
        if (!mn)
            return nm_yerror(err, e, "a utilization constraint needs 'min' (a fraction of the "
                             "fan-out, 0 to 1)");
        double v;
        if ((st = nm_yget_num(mn, "min", &v, err)) != NM_OK)
            return st;
        if (v < 0.0 || v > 1.0)
            return nm_yerror(err, mn, "min must be a fraction from 0 to 1 (got %g)", v);
        if (ls->fanout <= 1)
            return nm_yerror(err, tn, "'%s' has no spatial fan-out to be utilized", target);
        ls->min_util = v;
        ls->util_at = mn;
        return NM_OK;
    }
    static const char *const types[] = {"temporal", "spatial", "bypass", "datatype", "dataspace",
                                        "utilization"};
    const char *s = nm_text_suggest(type, types, 6);
    if (s)
        return nm_yerror(err, ty, "unknown constraint type '%s'; did you mean '%s'?", type, s);
    return nm_yerror(err, ty, "constraint type '%s' is not supported (temporal, spatial, bypass, "
                     "utilization)", type);
}

/* The constraints of src; fe: written on a v0.4 design (timeloopfe's). */
static nm_status apply_source(nm_mapspace *ms, const nm_ynode *src, int fe, nm_error *err)
{
    if (!src || nm_yis_null(src))
        return NM_OK;
    const nm_ynode *list = src;
    if (src->kind == NM_Y_MAP) {
        static const char *const keys[] = {"targets", "version", NULL};
        nm_status st = nm_ycheck_keys(src, keys, "constraints", err);
        if (st != NM_OK)
            return st;
        list = nm_ymap_get(src, "targets");
        if (!list)
            return NM_OK;
    }
    nm_status st = nm_yexpect(list, NM_Y_SEQ, "constraint targets", err);
    if (st != NM_OK)
        return st;
    for (size_t i = 0; i < list->n; i++)
        if ((st = apply_constraint(ms, list->items[i], fe, err)) != NM_OK)
            return st;
    return NM_OK;
}

/* ---- building the space ---- */

int nm_prime_factors(int64_t n, int64_t *prime, int *exp)
{
    int np = 0;
    for (int64_t p = 2; p * p <= n; p++) {
        if (n % p)
            continue;
        int e = 0;
        while (n % p == 0) {
            n /= p;
            e++;
        }
        if (np < NM_MAX_PRIMES) {
            prime[np] = p;
            exp[np] = e;
        }
        np++;
    }
    if (n > 1) {
        if (np < NM_MAX_PRIMES) {
            prime[np] = n;
            exp[np] = 1;
        }
        np++;
    }
    return np;
}

static void factorize(int64_t n, nm_dim_space *ds)
{
    ds->nprimes = nm_prime_factors(n, ds->prime, ds->exp);
}

/* Factorizations of n over m free slots (0 when past 2^64 or when n has
 * too many primes). */
static uint64_t ways(int64_t n, int m)
{
    int64_t prime[NM_MAX_PRIMES];
    int exp[NM_MAX_PRIMES];
    int np = nm_prime_factors(n, prime, exp);
    if (np > NM_MAX_PRIMES || m < 1)
        return 0;
    uint64_t count = 1;
    for (int p = 0; p < np; p++) {
        uint64_t c = compositions(exp[p], m);
        if (!c || c > UINT64_MAX / count)
            return 0;
        count *= c;
    }
    return count;
}

/* Spreads the primes' exponents over the free slots by composition id. */
static void spread(const int64_t *prime, const int *exp, int np, const int8_t *free, int nfree,
                   uint64_t id, int64_t *f)
{
    for (int p = 0; p < np; p++) {
        uint64_t c = compositions(exp[p], nfree);
        uint64_t idx = c ? id % c : 0;
        id = c ? id / c : 0;
        int part[NM_MAX_SLOTS];
        unrank_composition(exp[p], nfree, idx, part);
        for (int i = 0; i < nfree; i++)
            for (int k = 0; k < part[i]; k++)
                f[free[i]] *= prime[p];
    }
}

static nm_status init(nm_mapspace *ms, const nm_arch *arch, const nm_workload *wl,
                      const nm_ynode *constraints, const nm_ynode *more, uint32_t onchip,
                      nm_error *err)
{
    memset(ms, 0, sizeof *ms);
    ms->arch = arch;
    ms->wl = wl;
    for (int l = 0; l < arch->nlevels; l++) {
        const nm_level *L = &arch->level[l];
        nm_level_space *ls = &ms->level[l];
        ls->fanout = (int)(L->fanoutX * L->fanoutY);
        ms->slot_at[l][1] = -1;
        if (ls->fanout > 1) {
            ms->slot_at[l][1] = (int8_t)ms->nslots;
            ms->slot[ms->nslots++] = (nm_slot){(int8_t)l, 1};
        }
        ms->slot_at[l][0] = (int8_t)ms->nslots;
        ms->slot[ms->nslots++] = (nm_slot){(int8_t)l, 0};
        for (int d = 0; d < wl->ndims; d++)
            ls->sorder[d] = (int8_t)d;
        ls->split = -1;
        if (L->fanoutY == 1)
            ls->split = wl->ndims; /* a row: everything along X */
        else if (L->fanoutX == 1)
            ls->split = 0;
    }
    /* A v0.4 fan-out level has spatial loops only and keeps no data, as
     * timeloopfe constrains its inter_<name>_spatial levels. */
    for (int l = 0; l < arch->nlevels; l++) {
        if (!arch->level[l].container[0])
            continue;
        int slot = slot_of(ms, l, 0);
        for (int d = 0; d < wl->ndims; d++) {
            ms->dim[d].fixed[slot] = 1;
            ms->dim[d].at[slot] = arch->level[l].node;
        }
        ms->level[l].bypass = (1u << wl->nds) - 1u;
    }
    /* The design's own constraints (written on its v0.4 nodes) first. */
    nm_status st = apply_source(ms, arch->constraints, 1, err);
    if (st == NM_OK)
        st = apply_source(ms, constraints, 0, err);
    if (st == NM_OK)
        st = apply_source(ms, more, 0, err);
    if (st != NM_OK)
        return st;

    /* The outermost level holds every tensor (but a fused group's
     * intermediates). */
    int top = arch->nlevels - 1;
    if (ms->level[top].bypass & ~onchip) {
        int d = __builtin_ctz(ms->level[top].bypass & ~onchip);
        return nm_yerror(err, ms->level[top].at, "'%s' is the outermost level and must keep "
                         "every data space, but a constraint bypasses %s",
                         arch->level[top].name, wl->ds[d].name);
    }
    ms->level[top].keep = ((1u << wl->nds) - 1u) & ~ms->level[top].bypass;

    /* Factorizations. */
    ms->log_factor = 0;
    for (int d = 0; d < wl->ndims; d++) {
        nm_dim_space *ds = &ms->dim[d];
        int64_t fixed = 1;
        const nm_ynode *at = NULL;
        ds->nfree = 0;
        ds->bounded = 0;
        for (int s = 0; s < ms->nslots; s++) {
            if (ds->fixed[s] || ds->hi[s] || ds->lo[s] > 1)
                ds->bounded |= 1u << s;
            if (ds->fixed[s]) {
                fixed *= ds->fixed[s];
                at = ds->at[s];
                if (wl->bound[d] % fixed)
                    return nm_yerror(err, at, "fixed factors of %s multiply to %lld, which does "
                                     "not divide %s = %lld", wl->dim[d], (long long)fixed,
                                     wl->dim[d], (long long)wl->bound[d]);
            } else {
                ds->free[ds->nfree++] = (int8_t)s;
            }
        }
        int64_t rest = wl->bound[d] / fixed;
        if (ds->nfree == 0 && rest != 1)
            return nm_yerror(err, at, "every factor of %s is fixed, and they multiply to %lld, "
                             "not %s = %lld", wl->dim[d], (long long)fixed, wl->dim[d],
                             (long long)wl->bound[d]);
        factorize(rest, ds);
        if (ds->nprimes > NM_MAX_PRIMES)
            return nm_error_set(err, NM_ERR_LIMIT, NULL, 0, 0, "too many prime factors");
        ds->count = 1;
        for (int p = 0; p < ds->nprimes; p++) {
            uint64_t c = compositions(ds->exp[p], ds->nfree);
            if (!c || c > UINT64_MAX / ds->count)
                return nm_yerror(err, at ? at : arch->level[0].node,
                                 "%s = %lld has more than 2^64 ways to split over %d free loops; "
                                 "fix some of its factors with constraints", wl->dim[d],
                                 (long long)wl->bound[d], ds->nfree);
            ds->count *= c;
        }
        ds->perfect = ds->count;
        ms->log_factor += log10((double)ds->count);
    }

    /* Orders, splits, bypass. */
    ms->log_perm = ms->log_split = 0;
    ms->nbypass = 0;
    for (int l = 0; l < arch->nlevels; l++) {
        nm_level_space *ls = &ms->level[l];
        uint32_t in_prefix = 0;
        for (int i = 0; i < ls->nprefix; i++)
            in_prefix |= 1u << ls->prefix[i];
        ls->nfree = 0;
        for (int d = 0; d < wl->ndims; d++)
            if (!(in_prefix & (1u << d)))
                ls->free[ls->nfree++] = (int8_t)d;
        ms->log_perm += log10((double)factorial(ls->nfree));
        if (ls->fanout > 1 && ls->split < 0)
            ms->log_split += log10((double)(wl->ndims + 1));
        for (int d = 0; d < wl->nds; d++) {
            if ((ls->keep | ls->bypass) & (1u << d))
                continue;
            if (ms->nbypass >= 64)
                return nm_yerror(err, arch->level[l].node, "more than 64 free keep/bypass "
                                 "choices; constrain some with keep/bypass");
            ms->bypass_level[ms->nbypass] = (int8_t)l;
            ms->bypass_ds[ms->nbypass++] = (int8_t)d;
        }
    }
    ms->log_bypass = ms->nbypass * log10(2.0);
    return NM_OK;
}

/* ---- decoding ---- */

/* Random greedy fills tried per fan-out by nm_mapspace_random_filled. */
#define FILL_TRIES 8
#define FILL_MAX 256 /* prime factors (with multiplicity) a fill may consider */

/* Loop ends f[slot] of dimension d (their product at least the bound)
 * read as residuals, Timeloop's product rule: the last instance of each
 * loop runs the digit of bound-1 in the mixed radix of the ends (innermost
 * first), plus one, into r[slot].  The outermost loops are always on their
 * last instance: one that runs a single iteration there runs one always
 * (its end becomes 1), and the outermost that runs more runs just those
 * (no padding at the top).  A spatial slot may take a residual (fewer
 * siblings in its last instance); one under a spatial loop of its dimension
 * is left for the model to reject.  Returns 0 when the ends do not cover
 * the bound, or when a fixed slot would need a residual or the trim breaks
 * a fixed factor. */
static int residuals_of(const nm_mapspace *ms, int d, int64_t *f, int64_t *r)
{
    const nm_dim_space *ds = &ms->dim[d];
    int64_t rest = ms->wl->bound[d] - 1;
    for (int s = 0; s < ms->nslots; s++) {
        r[s] = rest % f[s] + 1;
        rest /= f[s];
    }
    if (rest)
        return 0;
    for (int s = ms->nslots - 1; s >= 0; s--) {
        if (f[s] == 1)
            continue;
        f[s] = r[s];
        if (r[s] > 1)
            break;
    }
    int ok = 1;
    for (int s = 0; s < ms->nslots; s++) {
        if (r[s] != f[s] && ds->fixed[s])
            ok = 0;
        if (ds->fixed[s] && f[s] != ds->fixed[s])
            ok = 0;
    }
    return ok;
}

int nm_mapspace_factors(const nm_mapspace *ms, int d, uint64_t id, int64_t *f, int64_t *r)
{
    const nm_dim_space *ds = &ms->dim[d];
    for (int s = 0; s < ms->nslots; s++)
        f[s] = ds->fixed[s] ? ds->fixed[s] : 1;
    if (id < ds->perfect || !ds->npad) {
        spread(ds->prime, ds->exp, ds->nprimes, ds->free, ds->nfree, id, f);
        if (r)
            memcpy(r, f, (size_t)ms->nslots * sizeof *r);
        return 1;
    }
    /* A perfect factorization of the padded bound ... */
    uint64_t k = id - ds->perfect;
    int pad = 1;
    while (pad < ds->npad && k >= ds->pad_cum[pad])
        pad++;
    k -= ds->pad_cum[pad - 1];
    int64_t bound = ms->wl->bound[d], fixed = 1;
    for (int s = 0; s < ms->nslots; s++)
        fixed *= f[s];
    int64_t prime[NM_MAX_PRIMES];
    int exp[NM_MAX_PRIMES];
    int np = nm_prime_factors((bound + pad) / fixed, prime, exp);
    spread(prime, exp, np, ds->free, ds->nfree, k, f);
    int64_t rr[NM_MAX_SLOTS];
    int ok = residuals_of(ms, d, f, rr);
    if (r)
        memcpy(r, rr, (size_t)ms->nslots * sizeof *r);
    return ok;
}

nm_status nm_mapspace_enable_imperfect(nm_mapspace *ms, nm_error *err)
{
    if (ms->imperfect)
        return NM_OK;
    ms->imperfect = 1;
    ms->log_factor = 0;
    for (int d = 0; d < ms->wl->ndims; d++) {
        nm_dim_space *ds = &ms->dim[d];
        int64_t bound = ms->wl->bound[d], fixed = 1;
        for (int s = 0; s < ms->nslots; s++)
            if (ds->fixed[s])
                fixed *= ds->fixed[s];
        ds->perfect = ds->count;
        ds->npad = 0;
        ds->pad_cum[0] = 0;
        int maxpad = bound - 1 < NM_MAX_PAD ? (int)(bound - 1) : NM_MAX_PAD;
        uint64_t total = ds->count;
        for (int p = 1; p <= maxpad && ds->nfree > 0; p++) {
            uint64_t c = (bound + p) % fixed ? 0 : ways((bound + p) / fixed, ds->nfree);
            if (c > UINT64_MAX - total)
                return nm_error_set(err, NM_ERR_INPUT, NULL, 0, 0,
                                    "%s = %lld has more than 2^64 imperfect factorizations; fix "
                                    "some of its factors with constraints", ms->wl->dim[d],
                                    (long long)bound);
            total += c;
            ds->pad_cum[p] = ds->pad_cum[p - 1] + c;
            ds->npad = p;
        }
        ds->count = total;
        ms->log_factor += log10((double)ds->count);
    }
    return NM_OK;
}

/* Writes dimension d's loop ends f[slot] and last-instance iterations
 * r[slot] into m. */
static void set_factors(const nm_mapspace *ms, nm_mapping *m, int d, const int64_t *f,
                        const int64_t *r)
{
    for (int s = 0; s < ms->nslots; s++) {
        const nm_slot *sl = &ms->slot[s];
        if (sl->spatial) {
            m->level[sl->level].sfactor[d] = f[s];
            m->level[sl->level].sresidual[d] = r[s] != f[s] ? r[s] : 0;
        } else {
            m->level[sl->level].tfactor[d] = f[s];
            m->level[sl->level].tresidual[d] = r[s] != f[s] ? r[s] : 0;
        }
    }
}

int nm_mapspace_fit_residuals(const nm_mapspace *ms, nm_mapping *m)
{
    for (int d = 0; d < ms->wl->ndims; d++) {
        int64_t f[NM_MAX_SLOTS], r[NM_MAX_SLOTS];
        for (int s = 0; s < ms->nslots; s++)
            if ((f[s] = *nm_mapspace_slot_factor(ms, m, s, d)) < 1)
                return 0;
        if (!residuals_of(ms, d, f, r))
            return 0;
        set_factors(ms, m, d, f, r); /* the outermost end may be trimmed */
    }
    return 1;
}

int nm_mapspace_decode(const nm_mapspace *ms, const nm_point *pt, nm_mapping *m, int *why_dim,
                       int *why_level)
{
    const nm_workload *wl = ms->wl;
    const nm_arch *arch = ms->arch;
    nm_mapping_init(m, arch, wl);
    int ok = 1;
    *why_dim = *why_level = -1;
    for (int d = 0; d < wl->ndims; d++) {
        int64_t f[NM_MAX_SLOTS], r[NM_MAX_SLOTS];
        if (!nm_mapspace_factors(ms, d, pt->fid[d], f, r) && ok) {
            ok = 0;
            *why_dim = d;
        }
        set_factors(ms, m, d, f, r);
        for (int s = 0; s < ms->nslots; s++) {
            const nm_slot *sl = &ms->slot[s];
            const nm_dim_space *ds = &ms->dim[d];
            if (ok && ((ds->hi[s] && f[s] > ds->hi[s]) || f[s] < ds->lo[s])) {
                ok = 0;
                *why_dim = d;
                *why_level = sl->level;
            }
        }
    }
    for (int l = 0; l < arch->nlevels; l++) {
        const nm_level_space *ls = &ms->level[l];
        nm_level_map *lm = &m->level[l];
        memcpy(lm->torder, ls->prefix, (size_t)ls->nprefix);
        unrank_perm(ls->free, ls->nfree, pt->pid[l] % factorial(ls->nfree),
                    lm->torder + ls->nprefix);
        memcpy(lm->sorder, ls->sorder, (size_t)wl->ndims);
        lm->split = ls->split >= 0 ? ls->split : pt->split[l] % (wl->ndims + 1);
        lm->keep = ((1u << wl->nds) - 1u) & ~ls->bypass;
        lm->no_link = ls->no_link;
        lm->no_multicast = ls->no_multicast;
        lm->no_temporal_reuse = ls->no_temporal_reuse;
        if (ls->fanout > 1 && ok) {
            int64_t x, y;
            if (!nm_mapping_fanout_sides(&arch->level[l], wl->ndims, lm->sfactor, lm->sorder,
                                         lm->split, &x, &y) ||
                (double)(x * y) < ls->min_util * (double)ls->fanout) {
                ok = 0;
                *why_level = l;
            }
        }
    }
    for (int i = 0; i < ms->nbypass; i++)
        if (!((pt->bypass >> i) & 1u))
            m->level[ms->bypass_level[i]].keep &= ~(1u << ms->bypass_ds[i]);
    return ok;
}

void nm_mapspace_random_perm(const nm_mapspace *ms, nm_pcg32 *rng, nm_point *pt)
{
    for (int l = 0; l < ms->arch->nlevels; l++)
        pt->pid[l] = nm_pcg32_bounded64(rng, factorial(ms->level[l].nfree));
}

static void random_point(const nm_mapspace *ms, int perfect, nm_pcg32 *rng, nm_point *pt)
{
    memset(pt, 0, sizeof *pt);
    for (int d = 0; d < ms->wl->ndims; d++) {
        const nm_dim_space *ds = &ms->dim[d];
        /* Uniform over the factorizations: an independent uniform composition
         * per prime, i.e. a uniform ID (counts fit in 64 bits; see init). */
        pt->fid[d] = nm_pcg32_bounded64(rng, perfect ? ds->perfect : ds->count);
    }
    nm_mapspace_random_perm(ms, rng, pt);
    for (int l = 0; l < ms->arch->nlevels; l++)
        pt->split[l] = (uint8_t)nm_pcg32_bounded(rng, (uint32_t)(ms->wl->ndims + 1));
    pt->bypass = ms->nbypass ? ((uint64_t)nm_pcg32_next(rng) << 32 | nm_pcg32_next(rng)) : 0;
}

void nm_mapspace_random(const nm_mapspace *ms, nm_pcg32 *rng, nm_point *pt)
{
    /* With residuals, half the points stay perfect: the enlarged space
     * holds many times more imperfect factorizations than perfect ones, and
     * a search given --imperfect should lose little of what it finds
     * without. */
    random_point(ms, ms->imperfect && (nm_pcg32_next(rng) & 1u), rng, pt);
}

void nm_mapspace_random_perfect(const nm_mapspace *ms, nm_pcg32 *rng, nm_point *pt)
{
    random_point(ms, ms->imperfect, rng, pt);
}

/* A random order of 0 .. n-1 (Fisher-Yates). */
static void shuffle(int16_t *a, int n, nm_pcg32 *rng)
{
    for (int i = 0; i < n; i++)
        a[i] = (int16_t)i;
    for (int i = n - 1; i > 0; i--) {
        int k = (int)nm_pcg32_bounded(rng, (uint32_t)i + 1);
        int16_t t = a[i];
        a[i] = a[k];
        a[k] = t;
    }
}

/* The axis of level l's fan-out that dimension d spreads along (0: X, 1:
 * Y), with the first `split` dimensions of its spatial order along X. */
static int axis_of(const nm_level_space *ls, int split, int d)
{
    for (int k = 0; k < split; k++)
        if (ls->sorder[k] == d)
            return 0;
    return 1;
}

/* One fill of a fan-out: the prime copies cand[0..n) (dimension, prime
 * index) in a random order, each put on the level's spatial loop when its
 * axis still has room; returns the product placed and marks the copies
 * taken in take[]. */
static int64_t fill_once(const nm_mapspace *ms, int l, int split, const int8_t (*cand)[2], int n,
                         const int64_t *room0, const int64_t *hi0, nm_pcg32 *rng, int8_t *take)
{
    int16_t ord[FILL_MAX];
    shuffle(ord, n, rng);
    int64_t room[2] = {room0[0], room0[1]}, hi[NM_MAX_DIMS], placed = 1;
    memcpy(hi, hi0, sizeof hi);
    memset(take, 0, (size_t)n);
    for (int i = 0; i < n; i++) {
        int d = cand[ord[i]][0];
        int64_t prime = ms->dim[d].prime[cand[ord[i]][1]];
        int axis = axis_of(&ms->level[l], split, d);
        if (prime > room[axis] || prime > hi[d])
            continue;
        room[axis] /= prime;
        hi[d] /= prime;
        placed *= prime;
        take[ord[i]] = 1;
    }
    return placed;
}

void nm_mapspace_random_filled(const nm_mapspace *ms, nm_pcg32 *rng, nm_point *pt)
{
    const nm_workload *wl = ms->wl;
    const nm_arch *arch = ms->arch;
    nm_mapspace_random_perfect(ms, rng, pt);
    int nl = 0;
    for (int l = 0; l < arch->nlevels; l++)
        nl += ms->level[l].fanout > 1;
    if (!nl)
        return; /* nothing to fill: a uniform draw */
    /* part[d][p][i]: how many copies of dimension d's prime p go to its
     * i-th free slot; left[d][p]: copies not yet placed. */
    int part[NM_MAX_DIMS][NM_MAX_PRIMES][NM_MAX_SLOTS];
    int left[NM_MAX_DIMS][NM_MAX_PRIMES];
    for (int d = 0; d < wl->ndims; d++) /* (only the rows read: the whole is 24 KiB) */
        for (int p = 0; p < ms->dim[d].nprimes; p++) {
            memset(part[d][p], 0, sizeof part[d][p]);
            left[d][p] = ms->dim[d].exp[p];
        }
    /* The fan-outs in a random order, so that no level always takes the
     * primes first. */
    int8_t fan[NM_MAX_LEVELS];
    int16_t ord[NM_MAX_LEVELS];
    nl = 0;
    for (int l = 0; l < arch->nlevels; l++)
        if (ms->level[l].fanout > 1)
            fan[nl++] = (int8_t)l;
    shuffle(ord, nl, rng);
    for (int li = 0; li < nl; li++) {
        int l = fan[ord[li]];
        const nm_level_space *ls = &ms->level[l];
        int s = slot_of(ms, l, 1);
        int split = ls->split;
        if (split < 0) {
            /* Both axes in use: split after 1 .. ndims-1 of the spatial order. */
            split = wl->ndims < 2 ? pt->split[l] % (wl->ndims + 1)
                                  : 1 + (int)nm_pcg32_bounded(rng, (uint32_t)(wl->ndims - 1));
            pt->split[l] = (uint8_t)split;
        }
        /* Room on each axis after the fixed spatial factors; a dimension's
         * bound from a <= constraint; the prime copies that may go here. */
        int64_t room[2] = {arch->level[l].fanoutX, arch->level[l].fanoutY};
        int64_t hi[NM_MAX_DIMS];
        int8_t cand[FILL_MAX][2], fi[NM_MAX_DIMS];
        int n = 0;
        for (int d = 0; d < wl->ndims; d++) {
            const nm_dim_space *ds = &ms->dim[d];
            int axis = axis_of(ls, split, d);
            hi[d] = ds->hi[s] ? ds->hi[s] : INT64_MAX;
            fi[d] = -1;
            if (ds->fixed[s]) {
                room[axis] /= ds->fixed[s];
                continue;
            }
            for (int i = 0; i < ds->nfree; i++)
                if (ds->free[i] == s)
                    fi[d] = (int8_t)i;
            if (fi[d] < 0)
                continue;
            for (int p = 0; p < ds->nprimes; p++)
                for (int k = 0; k < left[d][p] && n < (int)(sizeof cand / sizeof cand[0]); k++) {
                    cand[n][0] = (int8_t)d;
                    cand[n++][1] = (int8_t)p;
                }
        }
        /* The fullest of a few random greedy fills. */
        int8_t take[sizeof cand / sizeof cand[0]], best[sizeof cand / sizeof cand[0]];
        int64_t most = 0;
        for (int t = 0; t < FILL_TRIES && n; t++) {
            int64_t got = fill_once(ms, l, split, (const int8_t(*)[2])cand, n, room, hi, rng, take);
            if (got > most) {
                most = got;
                memcpy(best, take, (size_t)n);
            }
        }
        for (int i = 0; i < n && most; i++)
            if (best[i]) {
                int d = cand[i][0], p = cand[i][1];
                part[d][p][fi[d]]++;
                left[d][p]--;
            }
    }
    /* The rest of each dimension over its free temporal loops, uniformly
     * (over all its free loops if none is temporal). */
    for (int d = 0; d < wl->ndims; d++) {
        const nm_dim_space *ds = &ms->dim[d];
        int8_t to[NM_MAX_SLOTS];
        int nt = 0;
        for (int i = 0; i < ds->nfree; i++)
            if (!ms->slot[ds->free[i]].spatial)
                to[nt++] = (int8_t)i;
        if (!nt)
            for (int i = 0; i < ds->nfree; i++)
                to[nt++] = (int8_t)i;
        uint64_t id = 0, radix = 1;
        for (int p = 0; p < ds->nprimes; p++) {
            if (nt && left[d][p]) {
                int sub[NM_MAX_SLOTS];
                unrank_composition(left[d][p], nt,
                                   nm_pcg32_bounded64(rng, compositions(left[d][p], nt)), sub);
                for (int i = 0; i < nt; i++)
                    part[d][p][to[i]] += sub[i];
            }
            uint64_t c = compositions(ds->exp[p], ds->nfree);
            id += rank_composition(ds->nfree, part[d][p]) * radix;
            radix *= c;
        }
        pt->fid[d] = id;
    }
}

uint64_t nm_mapspace_pruned_orders(const nm_mapspace *ms, const nm_mapping *m, int l,
                                   int8_t *dims, int *k)
{
    const nm_level_space *ls = &ms->level[l];
    *k = 0;
    for (int i = 0; i < ls->nfree; i++)
        if (m->level[l].tfactor[ls->free[i]] > 1)
            dims[(*k)++] = ls->free[i];
    return factorial(*k);
}

void nm_mapspace_set_order(const nm_mapspace *ms, nm_mapping *m, int l, const int8_t *dims, int k,
                           uint64_t rank)
{
    const nm_level_space *ls = &ms->level[l];
    int8_t *o = m->level[l].torder;
    memcpy(o, ls->prefix, (size_t)ls->nprefix);
    unrank_perm(dims, k, rank, o + ls->nprefix);
    int n = ls->nprefix + k;
    for (int i = 0; i < ls->nfree; i++) {
        int in = 0;
        for (int j = 0; j < k; j++)
            in |= dims[j] == ls->free[i];
        if (!in)
            o[n++] = ls->free[i];
    }
}

/* ---- checking a given mapping ---- */

static void where(const nm_ynode *at, char *buf, size_t size)
{
    if (at)
        snprintf(buf, size, "%s:%d:%d", at->file, at->line, at->col);
    else
        snprintf(buf, size, "a constraint");
}

/* ---- the best fill of the fan-outs (nm_mapspace_fill) ---- */

struct fill {
    const nm_mapspace *ms;
    int nk;                              /* fan-outs */
    int level[NM_MAX_LEVELS], slot[NM_MAX_LEVELS];
    int64_t f[NM_MAX_LEVELS][NM_MAX_DIMS]; /* spatial factor per fan-out and dimension */
    int64_t prod[NM_MAX_LEVELS];          /* product so far per fan-out */
    int64_t rest[NM_MAX_DIMS];            /* d's bound left after its fixed factors */
    int64_t most[NM_MAX_DIMS];            /* the most dimension d can spread at all */
    int absorb[NM_MAX_DIMS];              /* d has a free temporal slot for the rest */
    uint64_t best, tried, budget;
    /* nm_mapspace_spatial_each: every choice goes to each(), unpruned */
    void (*each)(void *ctx, const int64_t f[NM_MAX_LEVELS][NM_MAX_DIMS]);
    void *ctx;
};

/* Whether fan-out k's factors fit its X and Y sides (under its spatial
 * order and split, free or fixed) and its least utilization. */
static int fill_fits(const struct fill *F, int k)
{
    const nm_mapspace *ms = F->ms;
    int l = F->level[k], nd = ms->wl->ndims;
    const nm_level_space *ls = &ms->level[l];
    const nm_level *L = &ms->arch->level[l];
    if ((double)F->prod[k] < ls->min_util * (double)ls->fanout)
        return 0;
    int lo = ls->split >= 0 ? ls->split : 0, hi = ls->split >= 0 ? ls->split : nd;
    for (int split = lo; split <= hi; split++) {
        int64_t x, y;
        if (nm_mapping_fanout_sides(L, nd, F->f[k], ls->sorder, split, &x, &y))
            return 1;
    }
    return 0;
}

/* Chooses dimension d's factor at fan-out k (then the next ones), the rest
 * of its bound `rem` left for the temporal loops. */
static void fill_search(struct fill *F, int d, int k, int64_t rem)
{
    const nm_mapspace *ms = F->ms;
    int nd = ms->wl->ndims;
    if (F->tried > F->budget)
        return;
    if (k == F->nk) {
        if (rem > 1 && !F->absorb[d])
            return; /* no temporal loop can take the rest */
        if (++d == nd) {
            F->tried++;
            uint64_t p = 1;
            for (int j = 0; j < F->nk; j++) {
                if (!fill_fits(F, j))
                    return;
                p *= (uint64_t)F->prod[j];
            }
            if (p > F->best)
                F->best = p;
            if (F->each) {
                int64_t by_level[NM_MAX_LEVELS][NM_MAX_DIMS];
                for (int l = 0; l < ms->arch->nlevels; l++)
                    for (int e = 0; e < nd; e++)
                        by_level[l][e] = 1;
                for (int j = 0; j < F->nk; j++)
                    for (int e = 0; e < nd; e++)
                        by_level[F->level[j]][e] = F->f[j][e];
                F->each(F->ctx, (const int64_t(*)[NM_MAX_DIMS])by_level);
            }
            return;
        }
        rem = F->rest[d];
        k = 0;
    }
    /* bound: what the fan-outs hold now, times what the dimensions left can add */
    double ub = 1;
    for (int j = 0; j < F->nk; j++)
        ub *= (double)F->prod[j];
    ub *= (double)rem;
    for (int e = d + 1; e < nd; e++)
        ub *= (double)F->most[e];
    double cap = 1;
    for (int j = 0; j < F->nk; j++)
        cap *= (double)ms->level[F->level[j]].fanout;
    if (!F->each && (ub < cap ? ub : cap) <= (double)F->best)
        return;
    const nm_dim_space *ds = &ms->dim[d];
    int s = F->slot[k];
    int64_t fanout = ms->level[F->level[k]].fanout;
    if (ds->fixed[s] > 0) {
        if (F->prod[k] * ds->fixed[s] > fanout)
            return;
        F->f[k][d] = ds->fixed[s];
        F->prod[k] *= ds->fixed[s];
        fill_search(F, d, k + 1, rem);
        F->prod[k] /= ds->fixed[s];
        F->f[k][d] = 1;
        return;
    }
    for (int64_t v = 1; v <= rem && F->prod[k] * v <= fanout; v++) {
        if (rem % v || v < ds->lo[s] || (ds->hi[s] > 0 && v > ds->hi[s]))
            continue;
        F->f[k][d] = v;
        F->prod[k] *= v;
        fill_search(F, d, k + 1, rem / v);
        F->prod[k] /= v;
        F->f[k][d] = 1;
    }
}

/* Runs fill_search over every spatial choice of ms: each() sees them all
 * when given, else only the fills that may beat the best so far.  Returns
 * the best fill (0: residual factors, no memory, or more than budget
 * choices), and the choices tried in *tried. */
static uint64_t fill_run(const nm_mapspace *ms, uint64_t budget,
                         void (*each)(void *, const int64_t (*)[NM_MAX_DIMS]), void *ctx,
                         uint64_t *tried)
{
    *tried = 0;
    if (ms->imperfect)
        return 0;
    struct fill *F = calloc(1, sizeof *F);
    if (!F)
        return 0;
    F->ms = ms;
    F->budget = budget;
    F->each = each;
    F->ctx = ctx;
    F->best = 1; /* every mapping uses one instance */
    int nd = ms->wl->ndims;
    for (int s = 0; s < ms->nslots; s++)
        if (ms->slot[s].spatial && ms->level[ms->slot[s].level].fanout > 1) {
            F->level[F->nk] = ms->slot[s].level;
            F->slot[F->nk] = s;
            F->prod[F->nk] = 1;
            for (int d = 0; d < nd; d++)
                F->f[F->nk][d] = 1;
            F->nk++;
        }
    for (int d = 0; d < nd; d++) {
        const nm_dim_space *ds = &ms->dim[d];
        F->rest[d] = 1;
        for (int i = 0; i < ds->nprimes; i++)
            for (int e = 0; e < ds->exp[i]; e++)
                F->rest[d] *= ds->prime[i];
        int64_t most = F->rest[d];
        for (int k = 0; k < F->nk; k++)
            if (ds->fixed[F->slot[k]] > 0)
                most *= ds->fixed[F->slot[k]];
        F->most[d] = most;
        for (int i = 0; i < ds->nfree; i++)
            F->absorb[d] |= !ms->slot[ds->free[i]].spatial;
    }
    uint64_t best = 0;
    if (F->nk == 0 || nd == 0) {
        /* one choice: no fan-out */
        best = 1;
        if (each) {
            int64_t ones[NM_MAX_LEVELS][NM_MAX_DIMS];
            for (int l = 0; l < NM_MAX_LEVELS; l++)
                for (int d = 0; d < NM_MAX_DIMS; d++)
                    ones[l][d] = 1;
            each(ctx, (const int64_t(*)[NM_MAX_DIMS])ones);
        }
        *tried = 1;
    } else {
        fill_search(F, 0, 0, F->rest[0]);
        best = F->tried > F->budget ? 0 : F->best;
        *tried = F->tried;
    }
    free(F);
    return best;
}

uint64_t nm_mapspace_fill(const nm_mapspace *ms, uint64_t budget)
{
    uint64_t tried;
    return fill_run(ms, budget, NULL, NULL, &tried);
}

uint64_t nm_mapspace_spatial_each(const nm_mapspace *ms, uint64_t budget,
                                  void (*each)(void *ctx, const int64_t f[][NM_MAX_DIMS]),
                                  void *ctx)
{
    uint64_t tried;
    return fill_run(ms, budget, each, ctx, &tried) ? tried : 0;
}

int nm_mapspace_check(const nm_mapspace *ms, const nm_mapping *m, char *why, size_t size)
{
    return nm_mapspace_check_levels(ms, m, ~0u, why, size);
}

int nm_mapspace_check_levels(const nm_mapspace *ms, const nm_mapping *m, uint32_t levels,
                             char *why, size_t size)
{
    const nm_workload *wl = ms->wl;
    const nm_arch *arch = ms->arch;
    char at[600];
    for (int d = 0; d < wl->ndims; d++) {
        const nm_dim_space *ds = &ms->dim[d];
        for (uint32_t b = ds->bounded; b; b &= b - 1) {
            int s = __builtin_ctz(b);
            const nm_slot *sl = &ms->slot[s];
            if (!(levels >> sl->level & 1u))
                continue;
            int64_t f = sl->spatial ? m->level[sl->level].sfactor[d] : m->level[sl->level].tfactor[d];
            if (!nm_mapspace_slot_breaks(ms, s, d, f))
                continue;
            const char *kind = sl->spatial ? "spatial" : "temporal";
            if (ds->fixed[s] && f != ds->fixed[s]) {
                if (size) {
                    where(ds->at[s], at, sizeof at);
                    snprintf(why, size, "%s factor %s=%lld at %s breaks the constraint %s=%lld (%s)",
                             kind, wl->dim[d], (long long)f, arch->level[sl->level].name, wl->dim[d],
                             (long long)ds->fixed[s], at);
                }
                return 0;
            }
            if (size) {
                where(ds->at[s], at, sizeof at);
                snprintf(why, size, "%s factor %s=%lld at %s is outside the bounds set at %s",
                         kind, wl->dim[d], (long long)f, arch->level[sl->level].name, at);
            }
            return 0;
        }
    }
    for (int l = 0; l < arch->nlevels; l++) {
        if (!(levels >> l & 1u))
            continue;
        const nm_level_space *ls = &ms->level[l];
        const nm_level_map *lm = &m->level[l];
        uint32_t all = (1u << wl->nds) - 1u;
        if ((lm->keep & ls->bypass) || (~lm->keep & ls->keep & all)) {
            uint32_t bad = (lm->keep & ls->bypass) | (~lm->keep & ls->keep & all);
            int d = __builtin_ctz(bad);
            if (size) {
                where(ls->at, at, sizeof at);
                snprintf(why, size, "%s %s %s, but the constraint at %s %s it", arch->level[l].name,
                         (lm->keep >> d) & 1u ? "keeps" : "bypasses", wl->ds[d].name, at,
                         (lm->keep >> d) & 1u ? "bypasses" : "keeps");
            }
            return 0;
        }
        /* Order: the constrained dims must be the innermost loops of factor
         * above 1, in the given order (loops of factor 1 vanish). */
        int8_t eff[NM_MAX_DIMS];
        int ne = 0;
        for (int i = 0; i < wl->ndims; i++)
            if (lm->tfactor[lm->torder[i]] > 1)
                eff[ne++] = lm->torder[i];
        /* At the innermost level the loop order changes no count, and
         * Timeloop's mapspace takes its canonical order there whatever the
         * constraint says (mapspaces/uber.cpp, InitLoopPermutationSpace), so
         * its mappings may break it: the search still follows it there (it
         * prunes orders that change nothing), a given mapping need not. */
        int8_t want[NM_MAX_DIMS];
        int nw = 0;
        for (int i = 0; i < ls->nprefix && l > 0; i++)
            if (lm->tfactor[ls->prefix[i]] > 1)
                want[nw++] = ls->prefix[i];
        for (int i = 0; i < nw; i++) {
            if (i >= ne || eff[i] != want[i]) {
                if (size) {
                    where(ls->at, at, sizeof at);
                    snprintf(why, size, "the loop order at %s breaks the permutation constraint at %s "
                             "(%s must come %s)", arch->level[l].name, at, wl->dim[want[i]],
                             i == 0 ? "innermost" : "next");
                }
                return 0;
            }
        }
        if (ls->min_util > 0) {
            int64_t used = 1;
            for (int d = 0; d < wl->ndims; d++)
                used *= lm->sfactor[d];
            if ((double)used < ls->min_util * (double)ls->fanout) {
                if (size) {
                    where(ls->util_at, at, sizeof at);
                    snprintf(why, size, "%s uses %lld of its %d spatial instances, below the "
                             "utilization constraint at %s (min %g)", arch->level[l].name,
                             (long long)used, ls->fanout, at, ls->min_util);
                }
                return 0;
            }
        }
        int64_t x, y;
        if (ls->fanout > 1 && !nm_mapping_fanout_sides(&arch->level[l], wl->ndims, lm->sfactor,
                                                       lm->sorder, lm->split, &x, &y)) {
            if (size)
                snprintf(why, size, "the spatial loops under %s take %lld x %lld instances "
                         "(X x Y) of each one's fan-out of %lld x %lld", arch->level[l].name,
                         (long long)x, (long long)y, (long long)arch->level[l].fanoutX,
                         (long long)arch->level[l].fanoutY);
            return 0;
        }
        if (ls->fanout > 1 && ls->split >= 0) {
            /* Compare which non-unit spatial loops run along X. */
            for (int d = 0; d < wl->ndims; d++) {
                if (lm->sfactor[d] <= 1)
                    continue;
                int want_x = 0, got_x = 0;
                for (int i = 0; i < wl->ndims; i++) {
                    if (ls->sorder[i] == d)
                        want_x = i < ls->split;
                    if (lm->sorder[i] == d)
                        got_x = i < lm->split;
                }
                if (want_x != got_x) {
                    if (size) {
                        where(ls->at, at, sizeof at);
                        snprintf(why, size, "spatial loop %s at %s runs along %c, but the constraint "
                                 "at %s puts it along %c", wl->dim[d], arch->level[l].name,
                                 got_x ? 'X' : 'Y', at, want_x ? 'X' : 'Y');
                    }
                    return 0;
                }
            }
        }
    }
    return 1;
}

/* ---- outer points ---- */

uint64_t nm_mapspace_outer_count(const nm_mapspace *ms)
{
    unsigned __int128 total = 1;
    for (int d = 0; d < ms->wl->ndims; d++)
        total *= ms->dim[d].count;
    for (int l = 0; l < ms->arch->nlevels; l++)
        if (ms->level[l].fanout > 1 && ms->level[l].split < 0)
            total *= (unsigned __int128)(ms->wl->ndims + 1);
    if (ms->nbypass >= 63)
        return 0;
    total <<= ms->nbypass;
    return total > (unsigned __int128)UINT64_MAX ? 0 : (uint64_t)total;
}

int nm_mapspace_outer(const nm_mapspace *ms, uint64_t o, nm_mapping *m)
{
    nm_point pt;
    memset(&pt, 0, sizeof pt);
    for (int d = 0; d < ms->wl->ndims; d++) {
        pt.fid[d] = o % ms->dim[d].count;
        o /= ms->dim[d].count;
    }
    for (int l = 0; l < ms->arch->nlevels; l++) {
        if (ms->level[l].fanout > 1 && ms->level[l].split < 0) {
            pt.split[l] = (uint8_t)(o % (uint64_t)(ms->wl->ndims + 1));
            o /= (uint64_t)(ms->wl->ndims + 1);
        }
    }
    pt.bypass = o;
    int wd, wl;
    int ok = nm_mapspace_decode(ms, &pt, m, &wd, &wl);
    for (int l = 0; l < ms->arch->nlevels; l++) {
        const nm_level_map *lm = &m->level[l];
        if (ms->level[l].fanout <= 1 || ms->level[l].split >= 0 || lm->split == 0)
            continue;
        /* One fewer X position gives the same nest when the loop it moves
         * to Y has factor 1: keep only the smallest such split. */
        if (lm->sfactor[lm->sorder[lm->split - 1]] == 1)
            return -1;
    }
    return ok;
}

uint64_t nm_mapspace_orders(const nm_mapspace *ms, const nm_mapping *m)
{
    uint64_t n = 1;
    for (int l = 0; l < ms->arch->nlevels; l++) {
        int8_t dims[NM_MAX_DIMS];
        int k;
        uint64_t f = nm_mapspace_pruned_orders(ms, m, l, dims, &k);
        if (n > UINT64_MAX / f)
            return UINT64_MAX;
        n *= f;
    }
    return n;
}

void nm_order_cursor_init(nm_order_cursor *c, const nm_mapspace *ms, const nm_mapping *m)
{
    for (int l = 0; l < ms->arch->nlevels; l++) {
        c->radix[l] = nm_mapspace_pruned_orders(ms, m, l, c->dims[l], &c->k[l]);
        c->rank[l] = UINT64_MAX;
    }
}

void nm_order_cursor_set(nm_order_cursor *c, const nm_mapspace *ms, nm_mapping *m, uint64_t j)
{
    for (int l = ms->arch->nlevels - 1; l >= 0; l--) { /* the outermost level's digit first */
        uint64_t d = j % c->radix[l];
        j /= c->radix[l];
        if (d != c->rank[l]) {
            nm_mapspace_set_order(ms, m, l, c->dims[l], c->k[l], d);
            c->rank[l] = d;
        }
    }
}

void nm_mapspace_set_orders(const nm_mapspace *ms, nm_mapping *m, uint64_t j)
{
    nm_order_cursor c;
    nm_order_cursor_init(&c, ms, m);
    nm_order_cursor_set(&c, ms, m, j);
}

double nm_mapspace_pruned_log10(const nm_mapspace *ms, uint64_t max_points, nm_pcg32 *rng,
                                int *exact)
{
    uint64_t total = nm_mapspace_outer_count(ms);
    double log_outer = ms->log_factor + ms->log_split + ms->log_bypass;
    nm_mapping m;
    long double sum = 0;
    if (total && total <= max_points) {
        *exact = 1;
        for (uint64_t o = 0; o < total; o++)
            if (nm_mapspace_outer(ms, o, &m) >= 0)
                sum += (long double)nm_mapspace_orders(ms, &m);
        return sum > 0 ? (double)log10l(sum) : -INFINITY;
    }
    /* Sample outer points uniformly; duplicates count zero. */
    *exact = 0;
    for (uint64_t i = 0; i < max_points; i++) {
        nm_point pt;
        nm_mapspace_random(ms, rng, &pt);
        int wd, wl;
        nm_mapspace_decode(ms, &pt, &m, &wd, &wl);
        int dup = 0;
        for (int l = 0; l < ms->arch->nlevels; l++) {
            const nm_level_map *lm = &m.level[l];
            if (ms->level[l].fanout > 1 && ms->level[l].split < 0 && lm->split > 0 &&
                lm->sfactor[lm->sorder[lm->split - 1]] == 1)
                dup = 1;
        }
        if (!dup)
            sum += (long double)nm_mapspace_orders(ms, &m);
    }
    return sum > 0 ? (double)log10l(sum / (long double)max_points) + log_outer : -INFINITY;
}

nm_status nm_mapspace_init(nm_mapspace *ms, const nm_arch *arch, const nm_workload *wl,
                           const nm_ynode *constraints, const nm_ynode *more, nm_error *err)
{
    return init(ms, arch, wl, constraints, more, 0, err);
}

nm_status nm_mapspace_init_fused(nm_mapspace *ms, const nm_arch *arch, const nm_workload *wl,
                                 const nm_ynode *constraints, const nm_ynode *more,
                                 uint32_t onchip, nm_error *err)
{
    return init(ms, arch, wl, constraints, more, onchip, err);
}
