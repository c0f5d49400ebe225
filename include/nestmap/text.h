/* text.h — small string helpers shared by the parsers: "did you mean". */
#ifndef NESTMAP_TEXT_H
#define NESTMAP_TEXT_H

#include <stddef.h>

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

/* Writes "A, B, C" (at most size bytes) naming the candidates. */
void nm_text_join(char *buf, size_t size, const char *const *cands, size_t n);

#endif
