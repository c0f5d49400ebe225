/* error.h — status codes and located errors.
 *
 * Library code never prints or exits.  A function that can fail returns an
 * nm_status and, on failure, fills a caller-provided nm_error with the place
 * (file, 1-based line and column; 0 when unknown) and a message.  Only the
 * command-line front end formats and prints errors.
 */
#ifndef NESTMAP_ERROR_H
#define NESTMAP_ERROR_H

#include <stdarg.h>

typedef enum nm_status {
    NM_OK = 0,
    NM_ERR_INPUT,    /* malformed or inconsistent input: exit code 2 */
    NM_ERR_INVALID,  /* input is well formed but the work fails (e.g. invalid mapping): exit 1 */
    NM_ERR_IO,       /* a file could not be read or written: exit 2 */
    NM_ERR_NOMEM,    /* allocation failed: exit 2 */
    NM_ERR_LIMIT     /* a compile-time cap was exceeded: exit 2 */
} nm_status;

#define NM_ERROR_MSG_MAX 768
#define NM_ERROR_FILE_MAX 512

typedef struct nm_error {
    nm_status status;
    char file[NM_ERROR_FILE_MAX]; /* "" when the error has no place */
    int line;                     /* 1-based; 0 when unknown */
    int col;                      /* 1-based; 0 when unknown */
    char msg[NM_ERROR_MSG_MAX];
} nm_error;

/* Clears *err to "no error". */
void nm_error_clear(nm_error *err);

/* Fills *err (if err is not NULL) and returns status, so callers can write
 * `return nm_error_set(err, NM_ERR_INPUT, file, line, col, "...", ...);`.
 * file may be NULL. */
nm_status nm_error_set(nm_error *err, nm_status status, const char *file,
                       int line, int col, const char *fmt, ...)
    __attribute__((format(printf, 6, 7)));

/* Same, with a va_list. */
nm_status nm_error_setv(nm_error *err, nm_status status, const char *file,
                        int line, int col, const char *fmt, va_list ap);

/* Returns the process exit code for a status: 0 ok, 1 work failed, 2 bad input. */
int nm_status_exit_code(nm_status status);

/* Returns a short name for a status ("input error", ...). */
const char *nm_status_name(nm_status status);

#endif
