/* bench_model.c — evaluations per second of the cost model on fixed
 * mappings (one thread, CPU time, so the figure is per core).  Prints
 * figures; never asserts a time.
 *
 * usage: bench_model [SRCDIR]   (inputs are found in the conformance corpus,
 *        $NESTMAP_CONFORMANCE or SRCDIR/../shared/conformance) */
#include <config.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "nestmap/model.h"
#include "nestmap/spec.h"

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static int bench(const char *label, const char *path, double target)
{
    nm_spec spec;
    nm_error err;
    const char *files[] = {path};
    if (nm_spec_load(&spec, files, 1, NM_NEED_ARCH | NM_NEED_PROBLEM | NM_NEED_MAPPING, &err) !=
        NM_OK) {
        fprintf(stderr, "%s:%d:%d: %s\n", err.file, err.line, err.col, err.msg);
        nm_spec_fini(&spec);
        return 1;
    }
    nm_model mdl;
    if (nm_model_init(&mdl, &spec.arch, &spec.wl, &err) != NM_OK) {
        nm_spec_fini(&spec);
        return 1;
    }
    static nm_stats st;
    /* Seven rounds of at least 0.3 s of CPU each; the median is the figure,
     * the best and worst show the spread. */
    enum { ROUNDS = 7 };
    double rate[ROUNDS], checksum = 0;
    long total = 0;
    for (int round = 0; round < ROUNDS; round++) {
        long n = 0;
        double t0 = cpu_now(), t;
        do {
            for (int i = 0; i < 1000; i++) {
                nm_model_forget(&mdl); /* one evaluation from scratch each time */
                nm_model_eval(&mdl, &spec.map, &st, NULL);
                checksum += st.energy;
            }
            n += 1000;
            t = cpu_now() - t0;
        } while (t < 0.3);
        rate[round] = (double)n / t;
        total += n;
    }
    qsort(rate, ROUNDS, sizeof *rate, cmp_double);
    double med = rate[ROUNDS / 2];
    char verdict[64];
    bench_verdict(verdict, sizeof verdict, med, target);
    printf("%-14s %9.0f evaluations/s/core (median of %d rounds; range %.0f-%.0f; %s)  "
           "energy %.6g pJ\n",
           label, med, ROUNDS, rate[0], rate[ROUNDS - 1], verdict, checksum / (double)total);
    nm_model_fini(&mdl);
    nm_spec_fini(&spec);
    return 0;
}

int main(int argc, char **argv)
{
    char corpus[2048];
    const char *env = getenv("NESTMAP_CONFORMANCE");
    if (env && *env)
        snprintf(corpus, sizeof corpus, "%s", env);
    else
        snprintf(corpus, sizeof corpus, "%s/../shared/conformance", argc > 1 ? argv[1] : ".");
    char eyeriss[2200], simba[2200];
    snprintf(eyeriss, sizeof eyeriss, "%s/named/eyeriss_like_best/input.yaml", corpus);
    snprintf(simba, sizeof simba, "%s/named/simba_like_best/input.yaml", corpus);
    printf("nestmap cost model, fixed mappings, 1 thread\n");
    int rc = bench("eyeriss-like", eyeriss, 200000);
    rc |= bench("simba-like", simba, 50000);
    /* Residual factors: the call-by-call walk of Timeloop's schedule (no
     * target yet: a figure to improve on). */
    snprintf(eyeriss, sizeof eyeriss, "%s/imperfect/eyeriss_like-7001-003/input.yaml", corpus);
    snprintf(simba, sizeof simba, "%s/imperfect/simba_like-7001-000/input.yaml", corpus);
    rc |= bench("eyeriss-imperf", eyeriss, 0);
    rc |= bench("simba-imperf", simba, 0);
    /* Networks between levels charged energy (noc.h): the multicast
     * signatures and hops on top of the analysis (no target yet). */
    snprintf(eyeriss, sizeof eyeriss, "%s/network/eyeriss8x8-valid-hop_router-1-003/input.yaml",
             corpus);
    snprintf(simba, sizeof simba, "%s/network/hier_gemm-valid-mixed-1-001/input.yaml", corpus);
    rc |= bench("eyeriss8x8-noc", eyeriss, 0);
    rc |= bench("hier_gemm-noc", simba, 0);
    return rc;
}
