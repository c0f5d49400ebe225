/* bench.h — what the benchmark programs share: CPU time and the verdict
 * printed beside a figure. */
#ifndef NESTMAP_BENCH_H
#define NESTMAP_BENCH_H

#include <stdio.h>
#include <time.h>

#include "nestmap/alloc.h"
#include "nestmap/mapspace.h"
#include "nestmap/spec.h"

/* CPU time of this process: the machine is shared, so wall time would
 * charge us for other tenants' work. */
static inline double cpu_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* "target T: met" / "target T: NOT met", or "no target" when target <= 0. */
static inline void bench_verdict(char *buf, size_t size, double rate, double target)
{
    if (target > 0)
        snprintf(buf, size, "target %.0f: %s", target, rate >= target ? "met" : "NOT met");
    else
        snprintf(buf, size, "no target");
}

/* Loads a mapper input (design, problem, constraints) and its mapspace;
 * NULL after printing why not.  Free the mapspace with nm_free. */
static inline nm_mapspace *bench_load_space(const char *path, nm_spec *spec)
{
    nm_error err;
    const char *files[] = {path};
    if (nm_spec_load(spec, files, 1, NM_NEED_ARCH | NM_NEED_PROBLEM, &err) != NM_OK) {
        fprintf(stderr, "%s:%d:%d: %s\n", err.file, err.line, err.col, err.msg);
        nm_spec_fini(spec);
        return NULL;
    }
    nm_mapspace *ms = nm_calloc(1, sizeof *ms);
    if (!ms || nm_mapspace_init(ms, &spec->arch, &spec->wl, spec->constraints,
                                spec->constraints2, &err) != NM_OK) {
        fprintf(stderr, "%s\n", ms ? err.msg : "out of memory");
        nm_free(ms);
        nm_spec_fini(spec);
        return NULL;
    }
    return ms;
}

#endif
