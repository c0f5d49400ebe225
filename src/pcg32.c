/* pcg32.c — PCG-XSH-RR 64/32; see pcg32.h for the source of the algorithm. */
#include <config.h>

#include "nestmap/pcg32.h"

/* The 64-bit LCG multiplier used by PCG (Knuth's MMIX constant). */
#define PCG_MULT UINT64_C(6364136223846793005)

uint32_t nm_pcg32_next(nm_pcg32 *rng)
{
    uint64_t old = rng->state;
    rng->state = old * PCG_MULT + rng->inc;
    /* Output permutation: xorshift the high bits down, then rotate by the
     * top five bits of the old state. */
    uint32_t xorshifted = (uint32_t)(((old >> 18u) ^ old) >> 27u);
    uint32_t rot = (uint32_t)(old >> 59u);
    return (xorshifted >> rot) | (xorshifted << ((32u - rot) & 31u));
}

void nm_pcg32_seed(nm_pcg32 *rng, uint64_t initstate, uint64_t stream)
{
    rng->state = 0u;
    rng->inc = (stream << 1u) | 1u;
    nm_pcg32_next(rng);
    rng->state += initstate;
    nm_pcg32_next(rng);
}

uint32_t nm_pcg32_bounded(nm_pcg32 *rng, uint32_t bound)
{
    if (bound == 0)
        return 0;
    /* Reject the low 2^32 mod bound values so every residue is equally
     * likely: threshold = (2^32 - bound) mod bound. */
    uint32_t threshold = (uint32_t)(-bound) % bound;
    for (;;) {
        uint32_t r = nm_pcg32_next(rng);
        if (r >= threshold)
            return r % bound;
    }
}

uint64_t nm_pcg32_bounded64(nm_pcg32 *rng, uint64_t bound)
{
    if (bound == 0)
        return 0;
    if (bound <= UINT32_MAX)
        return nm_pcg32_bounded(rng, (uint32_t)bound);
    uint64_t threshold = (uint64_t)(-bound) % bound;
    for (;;) {
        uint64_t r = ((uint64_t)nm_pcg32_next(rng) << 32) | nm_pcg32_next(rng);
        if (r >= threshold)
            return r % bound;
    }
}

double nm_pcg32_double(nm_pcg32 *rng)
{
    uint64_t hi = nm_pcg32_next(rng) >> 5; /* 27 bits */
    uint64_t lo = nm_pcg32_next(rng) >> 6; /* 26 bits */
    return (double)((hi << 26) | lo) * (1.0 / 9007199254740992.0);
}
