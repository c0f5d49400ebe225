/* alloc.c — allocation seam and bump arena; see alloc.h for the contract. */
#include <config.h>

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "nestmap/alloc.h"

static long fail_after = -1; /* test hook; see nm_alloc_fail_after */

void nm_alloc_fail_after(long n)
{
    fail_after = n;
}

static int should_fail(void)
{
    if (fail_after < 0)
        return 0;
    if (fail_after == 0)
        return 1;
    fail_after--;
    return 0;
}

void *nm_malloc(size_t size)
{
    if (should_fail())
        return NULL;
    return malloc(size ? size : 1);
}

void *nm_calloc(size_t n, size_t size)
{
    if (size && n > SIZE_MAX / size)
        return NULL;
    if (should_fail())
        return NULL;
    return calloc(n ? n : 1, size ? size : 1);
}

void *nm_realloc_array(void *p, size_t n, size_t size)
{
    if (size && n > SIZE_MAX / size)
        return NULL;
    if (should_fail())
        return NULL;
    size_t bytes = n * size;
    return realloc(p, bytes ? bytes : 1);
}

void nm_free(void *p)
{
    free(p);
}

char *nm_strdup(const char *s)
{
    size_t len = strlen(s);
    char *d = nm_malloc(len + 1);
    if (d)
        memcpy(d, s, len + 1);
    return d;
}

/* Arena: a singly linked list of chunks; allocation bumps an offset in the
 * newest chunk and starts a new chunk when it does not fit.
 *
 *   arena -> [chunk n | used ... free] -> [chunk n-1] -> ... -> NULL
 */
#define ARENA_CHUNK 65536u
#define ARENA_ALIGN 16u

struct chunk {
    struct chunk *next;
    size_t size, used;
    _Alignas(16) unsigned char data[];
};

struct nm_arena {
    struct chunk *head;
};

nm_arena *nm_arena_new(void)
{
    return nm_calloc(1, sizeof(nm_arena));
}

void nm_arena_free(nm_arena *a)
{
    if (!a)
        return;
    struct chunk *c = a->head;
    while (c) {
        struct chunk *next = c->next;
        nm_free(c);
        c = next;
    }
    nm_free(a);
}

void *nm_arena_alloc(nm_arena *a, size_t size)
{
    if (size > SIZE_MAX - ARENA_ALIGN)
        return NULL;
    size = (size + ARENA_ALIGN - 1) & ~(size_t)(ARENA_ALIGN - 1);
    struct chunk *c = a->head;
    if (!c || c->size - c->used < size) {
        size_t cap = size > ARENA_CHUNK ? size : ARENA_CHUNK;
        if (cap > SIZE_MAX - sizeof(struct chunk))
            return NULL;
        c = nm_malloc(sizeof(struct chunk) + cap);
        if (!c)
            return NULL;
        c->next = a->head;
        c->size = cap;
        c->used = 0;
        a->head = c;
    }
    void *p = c->data + c->used;
    c->used += size;
    memset(p, 0, size);
    return p;
}

char *nm_arena_strndup(nm_arena *a, const char *s, size_t len)
{
    if (len == SIZE_MAX)
        return NULL;
    char *d = nm_arena_alloc(a, len + 1);
    if (!d)
        return NULL;
    memcpy(d, s, len);
    d[len] = '\0';
    return d;
}
