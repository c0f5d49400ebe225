/* pcg32.h — the PCG32 random number generator (PCG-XSH-RR 64/32).
 *
 * Written here from the algorithm published by M. E. O'Neill, "PCG: A Family
 * of Simple Fast Space-Efficient Statistically Good Algorithms for Random
 * Number Generation", HMC-CS-2014-0905 (2014): a 64-bit LCG whose output is
 * permuted by an xorshift and a data-dependent rotation.  The increment
 * selects one of 2^63 independent streams; search threads each take their
 * own stream so results do not depend on scheduling.
 */
#ifndef NESTMAP_PCG32_H
#define NESTMAP_PCG32_H

#include <stdint.h>

typedef struct nm_pcg32 {
    uint64_t state;
    uint64_t inc; /* always odd */
} nm_pcg32;

/* Seeds *rng with an initial state and a stream id (any 64-bit values). */
void nm_pcg32_seed(nm_pcg32 *rng, uint64_t initstate, uint64_t stream);

/* Returns the next uniformly distributed 32-bit value. */
uint32_t nm_pcg32_next(nm_pcg32 *rng);

/* Returns a uniform value in [0, bound) without modulo bias; bound must be
 * > 0 (returns 0 for bound 0). */
uint32_t nm_pcg32_bounded(nm_pcg32 *rng, uint32_t bound);

/* Returns a uniform value in [0, bound) for 64-bit bounds (rejection over two
 * draws); returns 0 for bound 0. */
uint64_t nm_pcg32_bounded64(nm_pcg32 *rng, uint64_t bound);

/* Returns a uniform double in [0, 1) with 53 random bits. */
double nm_pcg32_double(nm_pcg32 *rng);

#endif
