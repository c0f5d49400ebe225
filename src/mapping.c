/* mapping.c — Timeloop's `mapping:` list parsed into an nm_mapping. */
#include <config.h>

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nestmap/mapping.h"
#include "nestmap/text.h"

void nm_mapping_init(nm_mapping *m, const nm_arch *arch, const nm_workload *wl)
{
    memset(m, 0, sizeof *m);
    m->nlevels = arch->nlevels;
    for (int l = 0; l < arch->nlevels; l++) {
        nm_level_map *lm = &m->level[l];
        for (int d = 0; d < wl->ndims; d++) {
            lm->tfactor[d] = 1;
            lm->sfactor[d] = 1;
            lm->torder[d] = (int8_t)d;
            lm->sorder[d] = (int8_t)d;
        }
        lm->split = wl->ndims;
        /* A v0.4 fan-out level keeps nothing (timeloopfe bypasses every
         * data space there). */
        lm->keep = arch->level[l].container[0] ? 0 : (1u << wl->nds) - 1u;
    }
}

nm_status nm_mapping_unknown_dim(const nm_ynode *at, size_t offset, const char *name,
                                 const nm_workload *wl, nm_error *err)
{
    const char *cands[NM_MAX_DIMS];
    for (int d = 0; d < wl->ndims; d++)
        cands[d] = wl->dim[d];
    const char *s = nm_text_suggest(name, cands, (size_t)wl->ndims);
    if (s)
        return nm_yerror_at(err, at, offset, "unknown dimension '%s'; did you mean '%s'?", name, s);
    char list[256];
    nm_text_join(list, sizeof list, cands, (size_t)wl->ndims);
    return nm_yerror_at(err, at, offset, "unknown dimension '%s' (the problem's dimensions are %s)",
                        name, list);
}

/* One token: "P=16", "P16", and with bounds allowed "P<=4", "P>=2". */
static nm_status factor_token(const nm_ynode *at, size_t off, const char *tok,
                              const nm_workload *wl, int allow_bounds, nm_factor_term *t,
                              nm_error *err)
{
    const char *opos = strpbrk(tok, "=<>");
    char name[NM_NAME_MAX];
    const char *num = NULL;
    t->op = '=';
    t->offset = off;
    if (opos) {
        size_t len = (size_t)(opos - tok);
        if (len == 0 || len >= NM_NAME_MAX)
            return nm_yerror_at(err, at, off, "bad factor '%s' (write it as NAME=NUMBER)", tok);
        memcpy(name, tok, len);
        name[len] = '\0';
        if (opos[0] == '=') {
            num = opos + 1;
        } else if (allow_bounds && opos[1] == '=') {
            t->op = opos[0];
            num = opos + 2;
        } else {
            return nm_yerror_at(err, at, off, allow_bounds
                                ? "bad factor '%s' (write NAME=N, NAME<=N or NAME>=N)"
                                : "bad factor '%s' (write it as NAME=NUMBER)", tok);
        }
        t->dim = nm_workload_dim(wl, name);
        if (t->dim < 0 && !nm_workload_unit_dim(wl, name))
            return nm_mapping_unknown_dim(at, off, name, wl, err);
    } else {
        /* "C16": the longest dimension name that leaves only digits. */
        int best = -1;
        size_t best_len = 0;
        for (int d = 0; d < wl->ndims; d++) {
            size_t len = strlen(wl->dim[d]);
            if (strncmp(tok, wl->dim[d], len) || len <= best_len || !tok[len])
                continue;
            const char *p = tok + len;
            while (isdigit((unsigned char)*p))
                p++;
            if (*p == '\0') {
                best = d;
                best_len = len;
            }
        }
        if (best < 0) {
            size_t len = strcspn(tok, "0123456789");
            snprintf(name, sizeof name, "%.*s", (int)(len < NM_NAME_MAX ? len : NM_NAME_MAX - 1),
                     tok);
            if (!len || len == strlen(tok))
                return nm_yerror_at(err, at, off, "bad factor '%s' (write it as NAME=NUMBER)",
                                    tok);
            if (!nm_workload_unit_dim(wl, name))
                return nm_mapping_unknown_dim(at, off, name, wl, err);
            num = tok + len;
        } else {
            num = tok + best_len;
        }
        t->dim = best;
    }
    char *end;
    errno = 0;
    long long v = strtoll(num, &end, 10);
    /* NAME=0: the whole dimension, as Timeloop reads it (constraints.cpp,
     * parser.cpp: "Interpreting 0 to mean full problem dimension") */
    if (end != num && !*end && v == 0 && t->op == '=' && errno != ERANGE)
        v = t->dim >= 0 ? wl->bound[t->dim] : 1;
    if (end == num || *end || v < 1 || errno == ERANGE)
        return nm_yerror_at(err, at, off, "factor '%s' must be a positive integer (or 0: the "
                            "whole dimension)", tok);
    if (t->dim < 0) { /* a stand-in dimension of size 1 */
        if ((t->op == '=' && v != 1) || (t->op == '>' && v > 1))
            return nm_yerror_at(err, at, off, "factor '%s' cannot hold: this problem has no "
                                "dimension '%s' (size 1)", tok, name);
        t->value = 1;
        return NM_OK;
    }
    t->value = v; /* checked against the bound once a residual may have been read */
    return NM_OK;
}

nm_status nm_mapping_parse_factor_terms(const nm_ynode *n, const nm_workload *wl,
                                        int allow_bounds, nm_factor_term *out, int *count,
                                        nm_error *err)
{
    nm_status st;
    *count = 0;
    if (n->kind == NM_Y_SEQ) { /* [N=1, "C=1 P=1"]: each item a string of terms */
        for (size_t i = 0; i < n->n; i++) {
            nm_factor_term item[NM_MAX_FACTOR_TERMS];
            int k;
            if (n->items[i]->kind != NM_Y_SCALAR)
                return nm_yerror(err, n->items[i], "a factors list holds strings such as "
                                 "N=1, not %s", nm_ykind_name(n->items[i]->kind));
            if ((st = nm_mapping_parse_factor_terms(n->items[i], wl, allow_bounds, item, &k,
                                                    err)) != NM_OK)
                return st;
            if (*count + k > NM_MAX_FACTOR_TERMS)
                return nm_yerror(err, n->items[i], "too many factors");
            memcpy(out + *count, item, (size_t)k * sizeof *item);
            *count += k;
        }
        return NM_OK;
    }
    if (n->kind == NM_Y_MAP) { /* {P: 16, R: 3} */
        for (size_t i = 0; i < n->n; i++) {
            if (*count >= NM_MAX_FACTOR_TERMS)
                return nm_yerror(err, n, "too many factors");
            nm_factor_term *t = &out[*count];
            const char *name = nm_ymap_key(n, i)->str;
            t->dim = nm_workload_dim(wl, name);
            t->op = '=';
            t->offset = 0;
            t->at = nm_ymap_key(n, i);
            t->residual = 0;
            if (t->dim < 0 && !nm_workload_unit_dim(wl, name))
                return nm_mapping_unknown_dim(nm_ymap_key(n, i), 0, name, wl, err);
            if ((st = nm_yget_pos(nm_ymap_val(n, i), "a factor", &t->value, err)) != NM_OK)
                return st;
            if (t->dim < 0) { /* a stand-in dimension of size 1: dropped */
                if (t->value != 1)
                    return nm_yerror(err, nm_ymap_val(n, i), "factor %s=%lld cannot hold: this "
                                     "problem has no dimension '%s' (size 1)", name,
                                     (long long)t->value, name);
                continue;
            }
            (*count)++;
            if (t->value > wl->bound[t->dim])
                return nm_yerror(err, nm_ymap_val(n, i), "factor %s=%lld is larger than the "
                                 "problem's %s = %lld", wl->dim[t->dim], (long long)t->value,
                                 wl->dim[t->dim], (long long)wl->bound[t->dim]);
        }
        return NM_OK;
    }
    const char *s;
    if ((st = nm_yget_str(n, "factors", &s, err)) != NM_OK)
        return st;
    const char *start = s;
    while (*s) {
        while (*s == ' ' || *s == ',' || *s == '\t')
            s++;
        if (!*s)
            break;
        char tok[NM_NAME_MAX + 24];
        size_t len = strcspn(s, " ,\t");
        /* "P=8,7": a comma followed by a number is the residual, not a separator. */
        size_t rlen = 0;
        if (s[len] == ',' && isdigit((unsigned char)s[len + 1])) {
            rlen = 1 + strspn(s + len + 1, "0123456789");
            if (s[len + rlen] && !strchr(" ,\t", s[len + rlen]))
                rlen = 0;
        }
        if (len >= sizeof tok)
            return nm_yerror(err, n, "factor token too long");
        memcpy(tok, s, len);
        tok[len] = '\0';
        size_t off = (size_t)(s - start);
        if (*count >= NM_MAX_FACTOR_TERMS)
            return nm_yerror_at(err, n, off, "too many factors");
        nm_factor_term *t = &out[*count];
        if ((st = factor_token(n, off, tok, wl, allow_bounds, t, err)) != NM_OK)
            return st;
        t->residual = 0;
        t->at = n;
        if (rlen) {
            char *end;
            errno = 0;
            long long r = strtoll(s + len + 1, &end, 10);
            if (t->op != '=')
                return nm_yerror_at(err, n, off, "a residual ('%.*s') needs an exact factor "
                                    "(NAME=END,RESIDUAL)", (int)(len + rlen), s);
            if (errno == ERANGE || r < 1 || r > t->value)
                return nm_yerror_at(err, n, off + len + 1, "residual %lld of %s must be between "
                                    "1 and the factor %lld", r, tok, (long long)t->value);
            t->residual = r == t->value ? 0 : r;
            len += rlen;
        }
        /* A loop with a residual may overshoot the bound (its last instance
         * is cut short); a perfect one may not. */
        if (t->dim >= 0 && t->value > wl->bound[t->dim] && !t->residual)
            return nm_yerror_at(err, n, off, "factor %s=%lld is larger than the problem's "
                                "%s = %lld", wl->dim[t->dim], (long long)t->value,
                                wl->dim[t->dim], (long long)wl->bound[t->dim]);
        s += len;
        if (out[*count].dim >= 0) /* stand-in dimensions of size 1 are dropped */
            (*count)++;
    }
    return NM_OK;
}

/* Factors into factor[], residuals into residual[]. */
static nm_status parse_factors(const nm_ynode *n, const nm_workload *wl, int64_t *factor,
                               int64_t *residual, nm_error *err)
{
    nm_factor_term t[NM_MAX_FACTOR_TERMS];
    int count;
    nm_status st = nm_mapping_parse_factor_terms(n, wl, 0, t, &count, err);
    if (st != NM_OK)
        return st;
    uint32_t seen = 0;
    for (int i = 0; i < count; i++) {
        if (seen & (1u << t[i].dim))
            return nm_yerror_at(err, t[i].at, t[i].offset, "dimension '%s' appears twice in factors",
                                wl->dim[t[i].dim]);
        seen |= 1u << t[i].dim;
        factor[t[i].dim] = t[i].value;
        residual[t[i].dim] = t[i].residual;
    }
    return NM_OK;
}

int nm_mapping_imperfect(const nm_mapping *m, int ndims)
{
    for (int s = 0; s < m->nlevels; s++)
        for (int d = 0; d < ndims; d++)
            if (nm_level_residual(&m->level[s], d) != m->level[s].tfactor[d] ||
                nm_level_sresidual(&m->level[s], d) != m->level[s].sfactor[d])
                return 1;
    return 0;
}

nm_status nm_mapping_parse_dims(const nm_ynode *n, const nm_workload *wl, int8_t *out, int *count,
                                nm_error *err)
{
    nm_status st;
    uint32_t seen = 0;
    *count = 0;
    if (n->kind == NM_Y_SEQ) {
        for (size_t i = 0; i < n->n; i++) {
            const char *name;
            if ((st = nm_yget_str(n->items[i], "a permutation entry", &name, err)) != NM_OK)
                return st;
            int d = nm_workload_dim(wl, name);
            if (d < 0 && nm_workload_unit_dim(wl, name))
                continue; /* a stand-in dimension of size 1 */
            if (d < 0)
                return nm_mapping_unknown_dim(n->items[i], 0, name, wl, err);
            if (seen & (1u << d))
                return nm_yerror(err, n->items[i], "dimension '%s' appears twice in the "
                                 "permutation", name);
            seen |= 1u << d;
            out[(*count)++] = (int8_t)d;
        }
        return NM_OK;
    }
    const char *s;
    if ((st = nm_yget_str(n, "permutation", &s, err)) != NM_OK)
        return st;
    /* Names between spaces or commas; a word that names nothing is
     * Timeloop's letters ("QM") when every dimension has a one-letter name
     * (its own or another: a chain operation's convolution names), or when
     * each of its letters names a dimension or a stand-in (a chain's steps,
     * p_step, have no letter). */
    int letters = 1;
    for (int d = 0; d < wl->ndims && letters; d++) {
        int one = strlen(wl->dim[d]) == 1;
        for (int a = 0; a < wl->nalias && !one; a++)
            one = wl->alias_of[a] == d && strlen(wl->alias[a]) == 1;
        letters = one;
    }
    const char *start = s;
    while (*s) {
        while (*s == ' ' || *s == ',')
            s++;
        if (!*s)
            break;
        size_t len = strcspn(s, " ,");
        char name[NM_NAME_MAX];
        snprintf(name, sizeof name, "%.*s", (int)(len < NM_NAME_MAX ? len : NM_NAME_MAX - 1), s);
        if (len > 1 && nm_workload_dim(wl, name) < 0 && !nm_workload_unit_dim(wl, name)) {
            int each = 1;
            for (size_t k = 0; k < len && each; k++) {
                char one[2] = {s[k], '\0'};
                each = nm_workload_dim(wl, one) >= 0 || nm_workload_unit_dim(wl, one);
            }
            if (letters || each) {
                len = 1;
                name[1] = '\0';
            }
        }
        size_t off = (size_t)(s - start);
        s += len;
        if (!strcmp(name, "_")) /* Timeloop's "the rest goes here": the listed prefix ends */
            break;
        int d = nm_workload_dim(wl, name);
        if (d < 0 && nm_workload_unit_dim(wl, name))
            continue; /* a stand-in dimension of size 1 */
        if (d < 0)
            return nm_mapping_unknown_dim(n, off, name, wl, err);
        if (seen & (1u << d))
            return nm_yerror_at(err, n, off, "dimension '%s' appears twice in the permutation",
                                name);
        seen |= 1u << d;
        out[(*count)++] = (int8_t)d;
    }
    return NM_OK;
}

/* A full order: the listed dims innermost, the others after in problem order. */
static nm_status parse_permutation(const nm_ynode *n, const nm_workload *wl, int8_t *order,
                                   nm_error *err)
{
    int count;
    nm_status st = nm_mapping_parse_dims(n, wl, order, &count, err);
    if (st != NM_OK)
        return st;
    uint32_t seen = 0;
    for (int i = 0; i < count; i++)
        seen |= 1u << order[i];
    for (int d = 0; d < wl->ndims; d++)
        if (!(seen & (1u << d)))
            order[count++] = (int8_t)d;
    return NM_OK;
}

nm_status nm_mapping_parse_ds_list(const nm_ynode *n, const nm_workload *wl, uint32_t *mask,
                                   nm_error *err)
{
    *mask = 0;
    if (nm_yis_null(n))
        return NM_OK;
    nm_status st = nm_yexpect(n, NM_Y_SEQ, "a list of data spaces", err);
    if (st != NM_OK)
        return st;
    for (size_t i = 0; i < n->n; i++) {
        const char *s;
        if ((st = nm_yget_str(n->items[i], "a data space name", &s, err)) != NM_OK)
            return st;
        int d = nm_workload_ds(wl, s);
        if (d < 0 && nm_workload_absent_ds(wl, s))
            continue;
        if (d < 0) {
            const char *cands[NM_MAX_DS];
            for (int k = 0; k < wl->nds; k++)
                cands[k] = wl->ds[k].name;
            const char *sug = nm_text_suggest(s, cands, (size_t)wl->nds);
            if (sug)
                return nm_yerror(err, n->items[i], "unknown data space '%s'; did you mean '%s'?",
                                 s, sug);
            return nm_yerror(err, n->items[i], "unknown data space '%s'", s);
        }
        *mask |= 1u << d;
    }
    return NM_OK;
}

nm_status nm_mapping_parse_keep_bypass(const nm_ynode *entry, const nm_workload *wl,
                                       uint32_t *keep, uint32_t *bypass, nm_error *err)
{
    const nm_ynode *x;
    nm_status st = NM_OK;
    *keep = *bypass = 0;
    if ((x = nm_ymap_get(entry, "keep")) && (st = nm_mapping_parse_ds_list(x, wl, keep, err)) != NM_OK)
        return st;
    if ((x = nm_ymap_get(entry, "bypass")))
        st = nm_mapping_parse_ds_list(x, wl, bypass, err);
    return st;
}

nm_status nm_mapping_parse(nm_mapping *m, const nm_ynode *node, const nm_arch *arch,
                           const nm_workload *wl, nm_error *err)
{
    static const char *const keys[] = {"target", "type", "factors", "permutation", "split",
                                       "keep", "bypass", "no_link_transfer", "no_reuse",
                                       "no_multicast_no_reduction", "no_temporal_reuse", NULL};
    nm_mapping_init(m, arch, wl);
    nm_status st = nm_yexpect(node, NM_Y_SEQ, "mapping", err);
    if (st != NM_OK)
        return st;
    uint32_t seen_t = 0, seen_s = 0, seen_d = 0;
    for (size_t i = 0; i < node->n; i++) {
        const nm_ynode *e = node->items[i];
        if ((st = nm_yexpect(e, NM_Y_MAP, "a mapping entry", err)) != NM_OK ||
            (st = nm_ycheck_keys(e, keys, "a mapping entry", err)) != NM_OK)
            return st;
        const nm_ynode *tn = nm_ymap_get(e, "target"), *ty = nm_ymap_get(e, "type");
        if (!tn)
            return nm_yerror(err, e, "mapping entry has no 'target'");
        if (!ty)
            return nm_yerror(err, e, "mapping entry has no 'type' (temporal, spatial, bypass)");
        const char *target, *type;
        if ((st = nm_yget_str(tn, "target", &target, err)) != NM_OK ||
            (st = nm_yget_str(ty, "type", &type, err)) != NM_OK)
            return st;
        int l = nm_arch_target(arch, target, !strcmp(type, "spatial"));
        if (l < 0) {
            const char *s = nm_arch_suggest_level(arch, target);
            if (!strcmp(target, arch->arith.name))
                return nm_yerror(err, tn, "'%s' is the arithmetic level; mappings target "
                                 "storage levels", target);
            if (s)
                return nm_yerror(err, tn, "unknown storage level '%s'; did you mean '%s'?",
                                 target, s);
            return nm_yerror(err, tn, "unknown storage level '%s'", target);
        }
        nm_level_map *lm = &m->level[l];
        const nm_ynode *x;
        if (!strcmp(type, "temporal") || !strcmp(type, "spatial")) {
            int spatial = type[0] == 's';
            uint32_t *seen = spatial ? &seen_s : &seen_t;
            if (*seen & (1u << l))
                return nm_yerror(err, e, "a second %s entry for '%s'", type, target);
            *seen |= 1u << l;
            static const char *const allowed_t[] = {"target", "type", "factors", "permutation",
                                                    "no_reuse", "no_temporal_reuse", NULL};
            static const char *const allowed_s[] = {"target", "type", "factors", "permutation",
                                                    "split", "no_link_transfer", "no_reuse",
                                                    "no_multicast_no_reduction", NULL};
            char what[96];
            snprintf(what, sizeof what, "a %s entry", type);
            if ((st = nm_ycheck_keys(e, spatial ? allowed_s : allowed_t, what, err)) != NM_OK)
                return st;
            int64_t *factor = spatial ? lm->sfactor : lm->tfactor;
            int8_t *order = spatial ? lm->sorder : lm->torder;
            if ((x = nm_ymap_get(e, "factors")) &&
                (st = parse_factors(x, wl, factor, spatial ? lm->sresidual : lm->tresidual,
                                    err)) != NM_OK)
                return st;
            if ((x = nm_ymap_get(e, "permutation")) &&
                (st = parse_permutation(x, wl, order, err)) != NM_OK)
                return st;
            if (!spatial && arch->level[l].container[0])
                for (int d = 0; d < wl->ndims; d++)
                    if (factor[d] != 1)
                        return nm_yerror(err, e, "'%s' stands for the fan-out of container "
                                         "'%s': it has spatial loops only (%s=%lld is temporal)",
                                         arch->level[l].name, arch->level[l].container,
                                         wl->dim[d], (long long)factor[d]);
            if (spatial && (x = nm_ymap_get(e, "split"))) {
                int64_t v;
                if ((st = nm_yget_int(x, "split", &v, err)) != NM_OK)
                    return st;
                if (v < 0)
                    return nm_yerror(err, x, "split must be 0 or more (got %lld)", (long long)v);
                lm->split = v > wl->ndims ? wl->ndims : (int)v;
            }
            if (spatial) {
                if ((x = nm_ymap_get(e, "no_link_transfer")) &&
                    (st = nm_mapping_parse_ds_list(x, wl, &lm->no_link, err)) != NM_OK)
                    return st;
                const nm_ynode *nr = nm_ymap_get(e, "no_reuse");
                if (!nr)
                    nr = nm_ymap_get(e, "no_multicast_no_reduction");
                if (nr && (st = nm_mapping_parse_ds_list(nr, wl, &lm->no_multicast, err)) != NM_OK)
                    return st;
            } else {
                const nm_ynode *nr = nm_ymap_get(e, "no_reuse");
                if (!nr)
                    nr = nm_ymap_get(e, "no_temporal_reuse");
                if (nr && (st = nm_mapping_parse_ds_list(nr, wl, &lm->no_temporal_reuse, err)) != NM_OK)
                    return st;
            }
        } else if (!strcmp(type, "datatype") || !strcmp(type, "bypass") ||
                   !strcmp(type, "dataspace")) {
            if (seen_d & (1u << l))
                return nm_yerror(err, e, "a second bypass entry for '%s'", target);
            seen_d |= 1u << l;
            static const char *const allowed[] = {"target", "type", "keep", "bypass", NULL};
            if ((st = nm_ycheck_keys(e, allowed, "a bypass entry", err)) != NM_OK)
                return st;
            uint32_t keep, bypass;
            if ((st = nm_mapping_parse_keep_bypass(e, wl, &keep, &bypass, err)) != NM_OK)
                return st;
            if (keep & bypass) {
                int d = __builtin_ctz(keep & bypass);
                return nm_yerror(err, e, "data space '%s' is both kept and bypassed at '%s'",
                                 wl->ds[d].name, target);
            }
            if (keep && arch->level[l].container[0])
                return nm_yerror(err, e, "'%s' stands for the fan-out of container '%s' and "
                                 "keeps no data", arch->level[l].name, arch->level[l].container);
            lm->keep = (lm->keep | keep) & ~bypass;
        } else {
            static const char *const types[] = {"temporal", "spatial", "bypass", "datatype",
                                                "dataspace"};
            const char *s = nm_text_suggest(type, types, 5);
            if (!strcmp(type, "skew"))
                return nm_yerror(err, ty, "skew mappings are not supported");
            if (s)
                return nm_yerror(err, ty, "unknown mapping type '%s'; did you mean '%s'?", type, s);
            return nm_yerror(err, ty, "unknown mapping type '%s' (temporal, spatial or bypass)",
                             type);
        }
    }
    /* timeloopfe hands timeloop-model the constraints written on a v0.4
     * design's components as mapping entries: a level the mapping gives no
     * keep/bypass for keeps what its `dataspace` constraint says. */
    const nm_ynode *c = arch->constraints;
    for (size_t i = 0; c && i < c->n; i++) {
        const nm_ynode *e = c->items[i];
        const char *type = nm_ymap_get(e, "type")->str, *target = nm_ymap_get(e, "target")->str;
        if (strcmp(type, "dataspace"))
            continue;
        int l = nm_arch_target(arch, target, 0);
        if (l < 0 || (seen_d & (1u << l)))
            continue;
        uint32_t keep, bypass;
        if ((st = nm_mapping_parse_keep_bypass(e, wl, &keep, &bypass, err)) != NM_OK)
            return st;
        m->level[l].keep = (m->level[l].keep | keep) & ~bypass;
    }
    return NM_OK;
}

int nm_mapping_fanout_sides(const nm_level *L, int n, const int64_t *sf, const int8_t *order,
                            int split, int64_t *x, int64_t *y)
{
    *x = *y = 1;
    for (int i = 0; i < n; i++)
        *(i < split ? x : y) *= sf[order[i]];
    return *x <= L->fanoutX && *y <= L->fanoutY;
}

int nm_mapping_next_order(int8_t *idx, int k)
{
    int i = k - 2;
    while (i >= 0 && idx[i] > idx[i + 1])
        i--;
    if (i < 0)
        return 0;
    int j = k - 1;
    while (idx[j] < idx[i])
        j--;
    int8_t t = idx[i];
    idx[i] = idx[j];
    idx[j] = t;
    for (int a = i + 1, b = k - 1; a < b; a++, b--) {
        t = idx[a];
        idx[a] = idx[b];
        idx[b] = t;
    }
    return 1;
}
