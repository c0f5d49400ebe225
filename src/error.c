/* error.c — located errors; see error.h. */
#include <config.h>

#include <stdio.h>
#include <string.h>

#include "nestmap/error.h"

void nm_error_clear(nm_error *err)
{
    if (!err)
        return;
    memset(err, 0, sizeof *err);
}

nm_status nm_error_setv(nm_error *err, nm_status status, const char *file,
                        int line, int col, const char *fmt, va_list ap)
{
    if (!err)
        return status;
    err->status = status;
    snprintf(err->file, sizeof err->file, "%s", file ? file : "");
    err->line = line;
    err->col = col;
    vsnprintf(err->msg, sizeof err->msg, fmt, ap);
    return status;
}

nm_status nm_error_set(nm_error *err, nm_status status, const char *file,
                       int line, int col, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    nm_error_setv(err, status, file, line, col, fmt, ap);
    va_end(ap);
    return status;
}

int nm_status_exit_code(nm_status status)
{
    switch (status) {
    case NM_OK:
        return 0;
    case NM_ERR_INVALID:
        return 1;
    default:
        return 2;
    }
}

const char *nm_status_name(nm_status status)
{
    switch (status) {
    case NM_OK:
        return "ok";
    case NM_ERR_INPUT:
        return "input error";
    case NM_ERR_INVALID:
        return "invalid";
    case NM_ERR_IO:
        return "i/o error";
    case NM_ERR_NOMEM:
        return "out of memory";
    case NM_ERR_LIMIT:
        return "limit exceeded";
    }
    return "error";
}
