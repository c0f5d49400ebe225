/* bench_census.c — the census's inner loop on one thread: the loop orders of
 * the eyeriss-like mapper input's factorizations, in enumeration order, each
 * rebuilt and evaluated (process CPU time, so the figure is per core).  Run
 * twice over the same first mappings: warm, as the census runs (the nest
 * analysis carries over what the previous order left; see nest.h), and cold
 * (the model forgets before every evaluation).  Both runs must give the
 * same energies; the checksum line says whether they did.  Prints figures;
 * never asserts a time.
 *
 * usage: bench_census [SRCDIR]   (input in SRCDIR/../shared/mapper) */
#include <config.h>

#include <stdio.h>
#include <stdlib.h>

#include "bench.h"
#include "nestmap/alloc.h"
#include "nestmap/mapspace.h"
#include "nestmap/model.h"
#include "nestmap/spec.h"

#define MAPPINGS 1000000 /* per round: about 4 s warm */
#define ROUNDS 5        /* alternating warm and cold; the best shows the machine unloaded */

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Evaluates the first MAPPINGS orders of the space; returns CPU seconds. */
static double run(const nm_mapspace *ms, nm_model *mdl, int cold, double *sum, uint64_t *valid)
{
    static nm_stats st;
    uint64_t done = 0, total = nm_mapspace_outer_count(ms);
    *sum = 0.0;
    *valid = 0;
    nm_model_forget(mdl);
    double t0 = cpu_now();
    for (uint64_t o = 0; o < total && done < MAPPINGS; o++) {
        nm_mapping base, m;
        if (nm_mapspace_outer(ms, o, &base) <= 0 || !nm_model_precheck(mdl, &base, &st))
            continue;
        uint64_t orders = nm_mapspace_orders(ms, &base);
        for (uint64_t j = 0; j < orders && done < MAPPINGS; j++, done++) {
            m = base;
            nm_mapspace_set_orders(ms, &m, j);
            if (cold)
                nm_model_forget(mdl);
            if (nm_model_eval(mdl, &m, &st, NULL)) {
                *sum += st.energy;
                ++*valid;
            }
        }
    }
    return cpu_now() - t0;
}

int main(int argc, char **argv)
{
    char path[2200];
    const char *src = argc > 1 ? argv[1] : ".";
    snprintf(path, sizeof path, "%s/../shared/mapper/eyeriss_like/input.yaml", src);
    nm_spec spec;
    nm_error err;
    nm_model mdl;
    nm_mapspace *ms = bench_load_space(path, &spec);
    if (!ms)
        return 1;
    if (nm_model_init(&mdl, &spec.arch, &spec.wl, &err) != NM_OK) {
        fprintf(stderr, "%s\n", err.msg);
        return 1;
    }
    printf("nestmap census inner loop, eyeriss-like mapper input, 1 thread, first %d mappings\n",
           MAPPINGS);
    double sum[2], best[2] = {0, 0}, med[2][ROUNDS];
    uint64_t valid[2];
    for (int round = 0; round < ROUNDS; round++)
        for (int cold = 0; cold <= 1; cold++) {
            double rate = MAPPINGS / run(ms, &mdl, cold, &sum[cold], &valid[cold]);
            med[cold][round] = rate;
            if (rate > best[cold])
                best[cold] = rate;
        }
    for (int cold = 0; cold <= 1; cold++) {
        qsort(med[cold], ROUNDS, sizeof med[cold][0], cmp_double);
        printf("%-5s %9.0f mappings/s/core (best of %d rounds; median %.0f; %llu valid)\n",
               cold ? "cold" : "warm", best[cold], ROUNDS, med[cold][ROUNDS / 2],
               (unsigned long long)valid[cold]);
    }
    printf("warm / cold: %.2fx\n", best[0] / best[1]);
    int same = sum[0] == sum[1] && valid[0] == valid[1];
    printf("checksum: warm and cold energies %s (%.17g pJ)\n", same ? "identical" : "DIFFER",
           sum[0]);
    nm_model_fini(&mdl);
    nm_free(ms);
    nm_spec_fini(&spec);
    return same ? 0 : 1;
}
