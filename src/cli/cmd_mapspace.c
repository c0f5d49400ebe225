/* cmd_mapspace.c — `nestmap mapspace FILES...`: how big the constrained
 * mapspace is, per sub-space, before and after pruning; with --sample N, a
 * census of N random mappings (valid fraction, quantiles of energy, cycles
 * and EDP). */
#include <config.h>

#include <math.h>
#include <stdio.h>
#include <string.h>

#include <gsl/gsl_sort.h>
#include <gsl/gsl_statistics_double.h>

#include "cli.h"
#include "nestmap/alloc.h"
#include "nestmap/mapspace.h"
#include "nestmap/model.h"
#include "nestmap/spec.h"

static const char usage[] =
    "usage: nestmap mapspace [OPTIONS] FILES...\n\n"
    "Prints the size of the mapspace allowed by the constraints: each sub-space\n"
    "(factorizations, loop orders, X/Y splits, keep/bypass) and the whole, before\n"
    "and after removing orders and splits that give the same loop nest.\n\n"
    "options:\n"
    NM_CLI_SET_USAGE
    "  --sample N   also evaluate N random mappings: valid fraction and the\n"
    "               distribution of energy, cycles and EDP\n"
    "  --seed S     seed for the sampling (default 0)\n"
    "  --imperfect  residual factors too: tiles that need not divide the bound\n"
    "               (as mapspace: {template: ruby})\n"
    "  --builtin-energy\n"
    "               ignore the ERT/ART: estimate every energy and area from the\n"
    "               component classes (see nestmap energy)\n"
    "  -q, --quiet  no warnings\n";

/* "1234" when it fits, else "10^7.3". */
static void size_text(double log10v, char *buf, size_t n)
{
    if (log10v < 15.0)
        snprintf(buf, n, "%.0f", round(pow(10.0, log10v)));
    else
        snprintf(buf, n, "10^%.1f", log10v);
}

static void census(const nm_spec *spec, const nm_mapspace *ms, uint64_t n, uint64_t seed)
{
    nm_model mdl;
    nm_error err;
    if (nm_model_init(&mdl, &spec->arch, &spec->wl, &err) != NM_OK)
        return;
    double *e = nm_calloc(n ? n : 1, sizeof *e), *c = nm_calloc(n ? n : 1, sizeof *c);
    double *edp = nm_calloc(n ? n : 1, sizeof *edp);
    static nm_stats st;
    uint64_t valid = 0, bad_constraint = 0, invalid[16] = {0};
    for (uint64_t i = 0; e && c && edp && i < n; i++) {
        nm_pcg32 rng;
        nm_pcg32_seed(&rng, seed, i);
        nm_point pt;
        nm_mapspace_random(ms, &rng, &pt);
        nm_mapping m;
        int wd, wl;
        if (!nm_mapspace_decode(ms, &pt, &m, &wd, &wl)) {
            bad_constraint++;
            continue;
        }
        if (!nm_model_eval(&mdl, &m, &st, NULL)) {
            invalid[st.invalid.kind & 15]++;
            continue;
        }
        e[valid] = st.energy;
        c[valid] = (double)st.cycles;
        edp[valid] = st.energy * 1e-12 * (double)st.cycles;
        valid++;
    }
    printf("\ncensus of %llu random mappings (seed %llu): %llu valid (%.1f %%), %llu break "
           "constraints, %llu exceed a capacity, %llu exceed a fan-out\n",
           (unsigned long long)n, (unsigned long long)seed, (unsigned long long)valid,
           n ? 100.0 * (double)valid / (double)n : 0.0, (unsigned long long)bad_constraint,
           (unsigned long long)(invalid[NM_INV_CAPACITY] + invalid[NM_INV_MIN_UTIL]),
           (unsigned long long)(invalid[NM_INV_ARITH] + invalid[NM_INV_INSTANCES]));
    if (valid) {
        struct { const char *name; double *v; } col[] = {
            {"energy (uJ)", e}, {"cycles", c}, {"EDP (J*cycle)", edp}};
        for (uint64_t i = 0; i < valid; i++)
            e[i] /= 1e6;
        printf("  %-14s %12s %12s %12s %12s %12s\n", "", "min", "10%", "median", "90%", "max");
        for (int k = 0; k < 3; k++) {
            gsl_sort(col[k].v, 1, valid);
            printf("  %-14s %12.4g %12.4g %12.4g %12.4g %12.4g\n", col[k].name, col[k].v[0],
                   gsl_stats_quantile_from_sorted_data(col[k].v, 1, valid, 0.1),
                   gsl_stats_median_from_sorted_data(col[k].v, 1, valid),
                   gsl_stats_quantile_from_sorted_data(col[k].v, 1, valid, 0.9),
                   col[k].v[valid - 1]);
        }
        printf("  the best of these is %.1fx better in EDP than the median\n",
               gsl_stats_median_from_sorted_data(edp, 1, valid) / edp[0]);
    }
    nm_free(e);
    nm_free(c);
    nm_free(edp);
    nm_model_fini(&mdl);
}

int nm_cmd_mapspace(int argc, char **argv)
{
    int missing = 0;
    const char *sample = nm_cli_take(&argc, argv, "--sample", &missing);
    int imperfect = nm_cli_take_flag(&argc, argv, "--imperfect");
    if (missing) {
        fprintf(stderr, "nestmap mapspace: --sample needs a number\n");
        return 2;
    }
    nm_cli_opts o;
    int done;
    int rc = nm_cli_parse(argc, argv, usage, &o, &done);
    if (done)
        return rc;
    uint64_t nsample = 0;
    if (sample && !nm_cli_count("--sample", sample, &nsample))
        return 2;
    nm_spec spec;
    if ((rc = nm_cli_load(&o, NM_NEED_ARCH | NM_NEED_PROBLEM, &spec)) != 0)
        return rc;
    spec.imperfect |= imperfect;
    nm_mapspace *ms = nm_cli_mapspace(&spec, &rc);
    if (!ms) {
        nm_spec_fini(&spec);
        return rc;
    }
    char buf[64];
    printf("mapspace of %s on %d storage levels\n\n", spec.wl.name, spec.arch.nlevels);
    printf("factorizations (each bound split over its free loops%s):\n",
           ms->imperfect ? "; with residuals: tiles that need not divide it" : "");
    for (int d = 0; d < spec.wl.ndims; d++) {
        printf("  %-6s = %-8lld %llu ways over %d free loops", spec.wl.dim[d],
               (long long)spec.wl.bound[d], (unsigned long long)ms->dim[d].count,
               ms->dim[d].nfree);
        if (ms->imperfect)
            printf(" (%llu perfect, %llu with residuals)",
                   (unsigned long long)ms->dim[d].perfect,
                   (unsigned long long)(ms->dim[d].count - ms->dim[d].perfect));
        putchar('\n');
    }
    printf("loop orders (free loops per level):\n");
    for (int l = spec.arch.nlevels - 1; l >= 0; l--) {
        const nm_level_space *ls = &ms->level[l];
        size_text(lgamma(ls->nfree + 1) / log(10.0), buf, sizeof buf);
        printf("  %-24s %2d free, %d fixed innermost: %s orders\n", spec.arch.level[l].name,
               ls->nfree, ls->nprefix, buf);
    }
    printf("\n%-16s %s\n", "sub-space", "size");
    size_text(ms->log_factor, buf, sizeof buf);
    printf("%-16s %s\n", "factorization", buf);
    size_text(ms->log_perm, buf, sizeof buf);
    printf("%-16s %s\n", "permutation", buf);
    size_text(ms->log_split, buf, sizeof buf);
    printf("%-16s %s\n", "split", buf);
    size_text(ms->log_bypass, buf, sizeof buf);
    printf("%-16s %s (%d free keep/bypass choices)\n", "bypass", buf, ms->nbypass);
    double total = ms->log_factor + ms->log_perm + ms->log_split + ms->log_bypass;
    size_text(total, buf, sizeof buf);
    printf("%-16s %s\n", "total", buf);
    nm_pcg32 rng;
    nm_pcg32_seed(&rng, o.seed, 1);
    int exact;
    double pruned = nm_mapspace_pruned_log10(ms, 2000000, &rng, &exact);
    size_text(pruned, buf, sizeof buf);
    printf("%-16s %s (%s; orders of loops of factor 1 and splits that move only them "
           "removed)\n", "after pruning", buf, exact ? "exact" : "estimated from 2,000,000 samples");
    if (nsample)
        census(&spec, ms, nsample, o.seed);
    nm_free(ms);
    nm_spec_fini(&spec);
    return 0;
}
