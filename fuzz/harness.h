/* harness.h — the fuzzing entry points, one per kind of user input.  Each
 * takes the bytes of one input and runs it through what nestmap does with
 * such a file: parse, check, and (when it parses) evaluate.  Built two
 * ways: with clang's libFuzzer (fuzz/build.sh: one fuzz_KIND binary per
 * entry point) and, in `make check`, with a replay driver over the crash
 * regressions and the seed corpus (tests/check_fuzz.c). */
#ifndef NESTMAP_FUZZ_HARNESS_H
#define NESTMAP_FUZZ_HARNESS_H

#include <stddef.h>
#include <stdint.h>

/* A whole input document: design, problem, mapping, constraints, mapper,
 * network, sweep, ERT/ART, in any combination. */
int nm_fuzz_spec(const uint8_t *data, size_t size);
/* A `mapping:` merged over a fixed design and problem. */
int nm_fuzz_mapping(const uint8_t *data, size_t size);
/* Constraints (`architecture_constraints:`, `mapspace_constraints:`,
 * `mapspace:`) merged over a fixed design and problem. */
int nm_fuzz_constraints(const uint8_t *data, size_t size);
/* A `problem:` (Timeloop's shape/instance or a nestmap shorthand) merged
 * over a fixed design. */
int nm_fuzz_problem(const uint8_t *data, size_t size);
/* A sweep file, and each of its lines as a --set COMPONENT.ATTRIBUTE=VALUE
 * applied to a fixed design. */
int nm_fuzz_sweep(const uint8_t *data, size_t size);

/* The fixed documents the entry points merge under their input: read from
 * DIR/fuzz/base/ (DIR the source tree); 0 when they cannot be read. */
int nm_fuzz_init(const char *srcdir);

#endif
