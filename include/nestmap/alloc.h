/* alloc.h — the one allocation seam, and a bump arena.
 *
 * Contract: nm_malloc/nm_calloc/nm_realloc return NULL on failure (including
 * a size computation that would overflow); they never abort.  A test hook can
 * make the N-th allocation fail (nm_alloc_fail_after) to check that every
 * error path releases what it built.  Memory from nm_malloc is released with
 * nm_free.
 *
 * The arena hands out memory that lives until nm_arena_free; it is used for
 * parsed documents (many small nodes released together).
 */
#ifndef NESTMAP_ALLOC_H
#define NESTMAP_ALLOC_H

#include <stddef.h>

void *nm_malloc(size_t size);
/* Allocates n * size bytes, zeroed; NULL when the product overflows. */
void *nm_calloc(size_t n, size_t size);
/* Resizes to n * size bytes; NULL (old block untouched) when the product overflows. */
void *nm_realloc_array(void *p, size_t n, size_t size);
void nm_free(void *p);
/* Duplicates a string; NULL on failure. Caller frees with nm_free. */
char *nm_strdup(const char *s);

/* Test hook: after `n` more successful allocations, every allocation fails.
 * A negative n disables the hook.  Not thread-safe; tests only. */
void nm_alloc_fail_after(long n);

typedef struct nm_arena nm_arena;

/* Creates an empty arena; NULL on allocation failure. */
nm_arena *nm_arena_new(void);
/* Releases the arena and everything allocated from it; NULL is fine. */
void nm_arena_free(nm_arena *a);
/* Returns size bytes aligned for any type, zeroed, owned by the arena; NULL on failure. */
void *nm_arena_alloc(nm_arena *a, size_t size);
/* Copies len bytes of s plus a terminating NUL into the arena; NULL on failure. */
char *nm_arena_strndup(nm_arena *a, const char *s, size_t len);

#endif
