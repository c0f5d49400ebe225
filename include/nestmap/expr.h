/* expr.h — the arithmetic Accelergy and Timeloop inputs write in attribute
 * values: `max(1, ceil(log2(depth))) if depth >= 1 else 1`, `width * 2`,
 * `technology` (a binding to another attribute).
 *
 * The language is the Python subset those files use: numbers, names, + - *
 * / // % **, comparisons, and/or/not, `A if C else B`, parentheses, quoted
 * strings, and the functions log2 log10 log exp sqrt ceil floor round abs
 * int float min max pow.  Names are looked up through a callback, so the
 * caller decides what is in scope (a compound component's attributes, a
 * sweep's variables).  A value is a number or a string; a text that is not
 * an expression at all ("45nm", "LPDDR4") is a string.
 *
 * Numbers may carry the units design files write (nestmap's extension):
 * bytes (`64KiB`, `1MB`), bytes per second (`400GB/s`), seconds (`1ns`)
 * and hertz (`1GHz`), with SI and binary prefixes.  A quantity keeps its
 * unit through arithmetic with plain numbers (`2 * 32KiB` is 64 KiB);
 * quantities of one unit add, subtract, compare, and divide to a plain
 * ratio; anything else (`1ns + 1B`, `log2(64KiB)`) is an error.
 *
 * Evaluation allocates nothing; strings returned point into the text or into
 * what the callback returned.
 */
#ifndef NESTMAP_EXPR_H
#define NESTMAP_EXPR_H

#include <stddef.h>

typedef struct nm_value {
    int is_str;
    double num;      /* when !is_str: in the unit's base (bytes, seconds, ...) */
    const char *str; /* when is_str: not NUL-terminated, len bytes */
    size_t len;
    const char *unit; /* a number's unit: "B", "B/s", "s", "Hz"; NULL: none */
} nm_value;

/* Looks up name[0..len); returns 1 and fills *out when it is in scope. */
typedef int (*nm_expr_lookup)(void *ctx, const char *name, size_t len, nm_value *out);

typedef enum nm_expr_status {
    NM_EXPR_OK = 0,
    NM_EXPR_STRING,  /* not an expression: *out is the text as a string */
    NM_EXPR_ERROR    /* an expression that cannot be evaluated: see msg/offset */
} nm_expr_status;

typedef struct nm_expr_error {
    size_t offset;   /* where in the text (0-based) */
    char msg[160];
    char name[64];   /* for an unknown name: the name (for "did you mean") */
} nm_expr_error;

/* Evaluates text[0..len).  NM_EXPR_OK: *out holds the value.  NM_EXPR_STRING:
 * the text is a plain word or phrase, not an expression (a lone unknown name
 * counts as one, so `type: LPDDR4` is the string LPDDR4).  NM_EXPR_ERROR: an
 * expression that fails (an unknown name inside arithmetic, a division by
 * zero, a wrong argument count); *e says where and why. */
nm_expr_status nm_expr_eval(const char *text, size_t len, nm_expr_lookup lookup, void *ctx,
                            nm_value *out, nm_expr_error *e);

#endif
