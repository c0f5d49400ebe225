/* bench.h — what the benchmark programs share: CPU time and the verdict
 * printed beside a figure. */
#ifndef NESTMAP_BENCH_H
#define NESTMAP_BENCH_H

#include <stdio.h>
#include <time.h>

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

#endif
