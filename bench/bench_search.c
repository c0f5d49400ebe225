/* bench_search.c — the whole search pipeline on one thread: candidates
 * drawn, decoded, checked and evaluated per second per core (process CPU
 * time), on the mapper inputs of the eyeriss-like and simba-like designs
 * (without the refinement that follows a random search): Timeloop's random
 * and hybrid draws, and hybrid with the default search's fan-outs-first
 * draws (hybrid+fill).
 * Prints figures; never asserts a time.
 *
 * usage: bench_search [SRCDIR]   (inputs in SRCDIR/../shared/mapper) */
#include <config.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "nestmap/alloc.h"
#include "nestmap/mapspace.h"
#include "nestmap/search.h"
#include "nestmap/spec.h"

/* fill: the default search's draws (every other one fan-outs first) instead
 * of Timeloop's uniform ones. */
static int bench(const char *label, const char *path, const char *alg, int fill, double target)
{
    nm_spec spec;
    nm_error err;
    nm_mapspace *ms = bench_load_space(path, &spec);
    if (!ms)
        return 1;
    nm_search_opts o;
    nm_search_opts_init(&o);
    o.algorithm = alg;
    o.threads = 1;
    o.victory_set = 1; /* no give-up rule: a fixed budget */
    o.timeout_set = 1;
    o.max_evals = 400000;
    o.refine = 0; /* the pipeline of candidates, not the local search after it */
    o.fill = fill;
    static nm_search_result res;
    double t0 = cpu_now();
    if (nm_search_run(ms, &o, &res, &err) != NM_OK) {
        fprintf(stderr, "%s\n", err.msg);
        return 1;
    }
    double t = cpu_now() - t0;
    double valid_rate = (double)res.valid / t;
    char verdict[64];
    bench_verdict(verdict, sizeof verdict, valid_rate, target);
    printf("%-14s %-13s %9.0f candidates/s/core, %9.0f valid mappings evaluated/s/core "
           "(%llu of %llu valid; %s); best EDP %.4g J*cycle\n",
           label, fill ? (alg[0] == 'h' ? "hybrid+fill" : "random+fill") : alg,
           (double)res.proposed / t, valid_rate, (unsigned long long)res.valid,
           (unsigned long long)res.proposed, verdict,
           res.found ? res.best.energy * 1e-12 * (double)res.best.cycles : 0.0);
    nm_search_result_fini(&res);
    nm_free(ms);
    nm_spec_fini(&spec);
    return 0;
}

int main(int argc, char **argv)
{
    char eyeriss[2200], simba[2200];
    const char *src = argc > 1 ? argv[1] : ".";
    snprintf(eyeriss, sizeof eyeriss, "%s/../shared/mapper/eyeriss_like/input.yaml", src);
    snprintf(simba, sizeof simba, "%s/../shared/mapper/simba_like/input.yaml", src);
    printf("nestmap search pipeline, 1 thread, 400,000 candidates each\n");
    int rc = bench("eyeriss-like", eyeriss, "random", 0, 100000);
    rc |= bench("eyeriss-like", eyeriss, "hybrid", 0, 100000);
    rc |= bench("eyeriss-like", eyeriss, "hybrid", 1, 100000);
    rc |= bench("simba-like", simba, "random", 0, 0);
    rc |= bench("simba-like", simba, "hybrid", 0, 0);
    rc |= bench("simba-like", simba, "hybrid", 1, 0);
    return rc;
}
