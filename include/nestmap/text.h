/* text.h — small string helpers shared by the parsers: "did you mean",
 * quantities with SI prefixes. */
#ifndef NESTMAP_TEXT_H
#define NESTMAP_TEXT_H

#include <stddef.h>

#include "nestmap/limits.h"

/* The index of name in names[0..*n), added at the end when absent (the
 * union of several lists in order of first use); -1 when it is absent
 * and *n is already cap. */
int nm_text_add_name(char names[][NM_NAME_MAX], int *n, int cap, const char *name);

/* Edit distance between a and b counting insertions, deletions, changes and
 * swaps of adjacent letters (case-insensitive, '-' equals '_'). */
size_t nm_text_distance(const char *a, const char *b);

/* Returns the candidate closest to word if it is close enough to be a likely
 * misspelling (distance <= max(1, strlen(word)/3); 0 for names of one or two
 * letters), else NULL.  Candidates
 * are borrowed, not copied. */
const char *nm_text_suggest(const char *word, const char *const *cands, size_t n);

/* True when a and b are equal treating '-' and '_' as the same character
 * (Timeloop writes keys both ways). */
int nm_text_key_equal(const char *a, const char *b);

/* Whether s holds any of list[0..n) as a substring (how Timeloop and nestmap
 * sort component classes: "smartbuffer_SRAM" holds "SRAM"). */
int nm_text_has_any(const char *s, const char *const *list, size_t n);

/* Writes "A, B, C" (at most size bytes) naming the candidates. */
void nm_text_join(char *buf, size_t size, const char *const *cands, size_t n);

/* Parses a rate such as "1T", "1000GB/s", "3.35 TB/s", "989.4TFLOP/s",
 * "1e12", "1ns": a number, an optional prefix (k M G T P E and m u µ n p:
 * powers of 1000; Ki Mi Gi Ti: powers of 1024) and an optional unit, which must be one of
 * units[] (NULL-terminated; compared exactly).  Returns 1 and *out > 0, or
 * 0 for anything else. */
int nm_text_rate(const char *s, const char *const *units, double *out);

/* Reads s as a quantity written with `unit` ("400GB/s" with "B/s", "64KiB"
 * with "B", "1ns" with "s"), as nm_text_rate does; 1 and *out in the base
 * unit, or 0 when s does not end in the unit or does not read as one.
 * Design files take their bandwidths, sizes and clock this way. */
int nm_text_unit_value(const char *s, const char *unit, double *out);

/* Writes v with an SI prefix and 4 significant digits: "44.73 µs",
 * "1 TFLOP/s", "5.593 MB".  unit is appended after the prefix. */
char *nm_text_si(double v, const char *unit, char *buf, size_t size);

#endif
