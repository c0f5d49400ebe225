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
#include "nestmap/census.h"
#include "nestmap/mapspace.h"
#include "nestmap/model.h"
#include "nestmap/report.h"
#include "nestmap/spec.h"

static const char usage[] =
    "usage: nestmap mapspace [OPTIONS] FILES...\n\n"
    "Prints the size of the mapspace allowed by the constraints: each sub-space\n"
    "(factorizations, loop orders, X/Y splits, keep/bypass) and the whole, before\n"
    "and after removing orders and splits that give the same loop nest.\n\n"
    "options:\n"
    NM_CLI_SET_USAGE
    "  --sample N        also evaluate N random mappings: valid fraction and the\n"
    "                    distribution of energy, cycles and EDP\n"
    "  --seed S          seed for the sampling (default 0)\n"
    "  --imperfect       residual factors too: tiles that need not divide the bound\n"
    "                    and partly used fan-outs (as mapspace: {template: ruby})\n"
    "  --builtin-energy\n"
    "                    ignore the ERT/ART: estimate every energy and area from the\n"
    "                    component classes (see nestmap energy)\n"
    "  --json            the sizes (and the census) as JSON\n"
    "  -q, --quiet       no warnings\n";

/* "1234" when it fits, else "10^7.3". */
static void size_text(double log10v, char *buf, size_t n)
{
    if (log10v < 15.0)
        snprintf(buf, n, "%.0f", round(pow(10.0, log10v)));
    else
        snprintf(buf, n, "10^%.1f", log10v);
}

/* What --sample N found. */
typedef struct census_result {
    uint64_t n, seed, valid, bad_constraint, over_capacity, over_fanout;
    double q[3][5]; /* energy (uJ), cycles, EDP (J*cycle): min, 10 %, median, 90 %, max */
} census_result;

static const char *const census_names[3] = {"energy_uj", "cycles", "edp_j_cycles"};

/* The valid samples' energy (uJ), cycles and EDP, in sample order. */
typedef struct columns {
    double *col[3];
    uint64_t n;
} columns;

static void take_row(void *ctx, const nm_census_row *r)
{
    columns *c = ctx;
    c->col[0][c->n] = r->energy / 1e6;
    c->col[1][c->n] = (double)r->cycles;
    c->col[2][c->n] = r->energy * 1e-12 * (double)r->cycles;
    c->n++;
}

/* n random mappings (nestmap census's sampling, on one thread) and the
 * quantiles of their figures. */
static int census(const nm_mapspace *ms, uint64_t n, uint64_t seed, census_result *r)
{
    memset(r, 0, sizeof *r);
    r->n = n;
    r->seed = seed;
    columns cols = {{NULL, NULL, NULL}, 0};
    for (int k = 0; k < 3; k++)
        cols.col[k] = nm_calloc(n ? n : 1, sizeof *cols.col[k]);
    int ok = cols.col[0] && cols.col[1] && cols.col[2];
    if (!ok)
        fprintf(stderr, "nestmap mapspace: out of memory for %llu samples\n",
                (unsigned long long)n);
    static nm_census c;
    nm_census_opts o = {1, 0, n, seed, NULL, take_row, &cols, NULL};
    nm_error err;
    nm_error_clear(&err);
    if (ok && nm_census_run(ms, &o, &c, &err) != NM_OK) {
        nm_cli_error(&err);
        ok = 0;
    }
    if (ok) {
        r->valid = c.valid;
        r->bad_constraint = c.broke_constraints;
        r->over_capacity = c.over_capacity;
        r->over_fanout = c.over_fanout;
    }
    for (int k = 0; ok && r->valid && k < 3; k++) {
        gsl_sort(cols.col[k], 1, r->valid);
        r->q[k][0] = cols.col[k][0];
        r->q[k][1] = gsl_stats_quantile_from_sorted_data(cols.col[k], 1, r->valid, 0.1);
        r->q[k][2] = gsl_stats_median_from_sorted_data(cols.col[k], 1, r->valid);
        r->q[k][3] = gsl_stats_quantile_from_sorted_data(cols.col[k], 1, r->valid, 0.9);
        r->q[k][4] = cols.col[k][r->valid - 1];
    }
    for (int k = 0; k < 3; k++)
        nm_free(cols.col[k]);
    return ok;
}

static void census_text(const census_result *r)
{
    printf("\ncensus of %llu random mappings (seed %llu): %llu valid (%.1f %%), %llu break "
           "constraints, %llu exceed a capacity, %llu exceed a fan-out\n",
           (unsigned long long)r->n, (unsigned long long)r->seed, (unsigned long long)r->valid,
           r->n ? 100.0 * (double)r->valid / (double)r->n : 0.0,
           (unsigned long long)r->bad_constraint, (unsigned long long)r->over_capacity,
           (unsigned long long)r->over_fanout);
    if (!r->valid)
        return;
    static const char *const label[3] = {"energy (uJ)", "cycles", "EDP (J*cycle)"};
    printf("  %-14s %12s %12s %12s %12s %12s\n", "", "min", "10%", "median", "90%", "max");
    for (int k = 0; k < 3; k++)
        printf("  %-14s %12.4g %12.4g %12.4g %12.4g %12.4g\n", label[k], r->q[k][0], r->q[k][1],
               r->q[k][2], r->q[k][3], r->q[k][4]);
    printf("  the best of these is %.1fx better in EDP than the median\n", r->q[2][2] / r->q[2][0]);
}

/* A sub-space's size in JSON: the exact count while a double holds it,
 * and its log10 always. */
static void size_json(FILE *f, const char *name, double log10v, int last)
{
    fprintf(f, "  \"%s\": {\"log10\": %.17g, \"size\": ", name, log10v);
    if (log10v < 15.0)
        fprintf(f, "%.0f", round(pow(10.0, log10v)));
    else
        fprintf(f, "null");
    fprintf(f, "}%s\n", last ? "" : ",");
}

static void print_json(FILE *f, const nm_spec *spec, const nm_mapspace *ms, double pruned, int exact,
                       const census_result *c)
{
    fprintf(f, "{\n  \"workload\": ");
    nm_report_json_string(f, spec->wl.name);
    fprintf(f, ",\n  \"storage_levels\": %d,\n  \"imperfect\": %s,\n  \"dimensions\": [",
           spec->arch.nlevels, ms->imperfect ? "true" : "false");
    for (int d = 0; d < spec->wl.ndims; d++) {
        fprintf(f, "%s\n    {\"name\": ", d ? "," : "");
        nm_report_json_string(f, spec->wl.dim[d]);
        fprintf(f, ", \"bound\": %lld, \"factorizations\": %llu, \"perfect\": %llu, "
               "\"free_loops\": %d}", (long long)spec->wl.bound[d],
               (unsigned long long)ms->dim[d].count,
               (unsigned long long)(ms->imperfect ? ms->dim[d].perfect : ms->dim[d].count),
               ms->dim[d].nfree);
    }
    fprintf(f, "\n  ],\n  \"levels\": [");
    for (int l = spec->arch.nlevels - 1; l >= 0; l--) {
        const nm_level_space *ls = &ms->level[l];
        fprintf(f, "%s\n    {\"name\": ", l == spec->arch.nlevels - 1 ? "" : ",");
        nm_report_json_string(f, spec->arch.level[l].name);
        fprintf(f, ", \"free_loops\": %d, \"fixed_innermost\": %d, \"log10_orders\": %.17g}",
               ls->nfree, ls->nprefix, lgamma(ls->nfree + 1) / log(10.0));
    }
    fprintf(f, "\n  ],\n  \"free_bypass_choices\": %d,\n", ms->nbypass);
    size_json(f, "factorization", ms->log_factor, 0);
    size_json(f, "permutation", ms->log_perm, 0);
    size_json(f, "split", ms->log_split, 0);
    size_json(f, "bypass", ms->log_bypass, 0);
    size_json(f, "total", ms->log_factor + ms->log_perm + ms->log_split + ms->log_bypass, 0);
    size_json(f, "after_pruning", pruned, 0);
    fprintf(f, "  \"after_pruning_exact\": %s,\n  \"census\": ", exact ? "true" : "false");
    if (!c) {
        fprintf(f, "null\n}\n");
        return;
    }
    fprintf(f, "{\n    \"samples\": %llu,\n    \"seed\": %llu,\n    \"valid\": %llu,\n"
           "    \"break_constraints\": %llu,\n    \"exceed_capacity\": %llu,\n"
           "    \"exceed_fanout\": %llu", (unsigned long long)c->n, (unsigned long long)c->seed,
           (unsigned long long)c->valid, (unsigned long long)c->bad_constraint,
           (unsigned long long)c->over_capacity, (unsigned long long)c->over_fanout);
    for (int k = 0; c->valid && k < 3; k++)
        fprintf(f, ",\n    \"%s\": {\"min\": %.17g, \"p10\": %.17g, \"median\": %.17g, "
               "\"p90\": %.17g, \"max\": %.17g}", census_names[k], c->q[k][0], c->q[k][1],
               c->q[k][2], c->q[k][3], c->q[k][4]);
    fprintf(f, "\n  }\n}\n");
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
    int rc = nm_cli_parse(argc, argv, "mapspace", usage,
                          NM_OPT_SET | NM_OPT_SEED | NM_OPT_JSON | NM_OPT_BUILTIN, &o, &done);
    if (done)
        return rc;
    uint64_t nsample = 0;
    if (sample && !nm_cli_count("--sample", sample, &nsample))
        return 2;
    nm_spec spec;
    int exact;
    double pruned;
    nm_mapspace *ms = nm_cli_sized_mapspace(&o, imperfect, &spec, &pruned, &exact, &rc);
    if (!ms)
        return rc;
    census_result cr;
    if (nsample && !census(ms, nsample, o.seed, &cr)) {
        nm_free(ms);
        nm_spec_fini(&spec);
        return 2;
    }
    if (o.json) {
        nm_cli_json js;
        print_json(nm_cli_json_begin(&js), &spec, ms, pruned, exact, nsample ? &cr : NULL);
        rc = nm_cli_json_end(&js, &spec.doc) ? 0 : 2;
        nm_free(ms);
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
    size_text(pruned, buf, sizeof buf);
    printf("%-16s %s (%s; orders of loops of factor 1 and splits that move only them "
           "removed)\n", "after pruning", buf, exact ? "exact" : "estimated from 2,000,000 samples");
    if (nsample)
        census_text(&cr);
    nm_free(ms);
    nm_spec_fini(&spec);
    return 0;
}
