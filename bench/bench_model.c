/* bench_model.c — evaluations per second of the cost model on fixed
 * mappings (one thread, so the figure is per core).  Prints figures; never
 * asserts a time.
 *
 * usage: bench_model [SRCDIR]   (inputs are found in the conformance corpus,
 *        $NESTMAP_CONFORMANCE or SRCDIR/../shared/conformance) */
#include <config.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "nestmap/model.h"
#include "nestmap/spec.h"

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
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
    double checksum = 0;
    long n = 0;
    double t0 = now(), t;
    do {
        for (int i = 0; i < 1000; i++) {
            nm_model_eval(&mdl, &spec.map, &st, NULL);
            checksum += st.energy;
        }
        n += 1000;
        t = now() - t0;
    } while (t < 2.0);
    double rate = (double)n / t;
    printf("%-14s %10.0f evaluations/s/core  (%ld in %.2f s; target %.0f: %s; energy %.6g pJ)\n",
           label, rate, n, t, target, rate >= target ? "met" : "NOT met", checksum / (double)n);
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
    return rc;
}
