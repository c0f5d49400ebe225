/* path.c — inputs found by name in ., $NESTMAP_PATH and the installed data
 * directory (path.h). */
#define _XOPEN_SOURCE 700 /* realpath */
#include <config.h>

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "nestmap/path.h"

#ifndef NM_PKGDATADIR
#define NM_PKGDATADIR "/usr/local/share/nestmap"
#endif
#ifndef NM_SRCDIR
#define NM_SRCDIR ""
#endif

/* Where a name may live under a root, tried in this order. */
static const char *const forms[] = {"%s/%s", "%s/%s.yaml", "%s/arch/%s.yaml",
                                    "%s/workloads/networks/%s.yaml",
                                    "%s/workloads/layers/%s.yaml"};

static int regular_file(const char *p)
{
    struct stat sb;
    return stat(p, &sb) == 0 && S_ISREG(sb.st_mode);
}

/* Tries every form of `name` under `root` (its first len bytes). */
static int try_root(const char *root, size_t len, const char *name, char *out, size_t size)
{
    char dir[NM_PATH_MAX];
    if (len == 0 || len >= sizeof dir)
        return 0;
    memcpy(dir, root, len);
    dir[len] = '\0';
    for (size_t k = 0; k < sizeof forms / sizeof forms[0]; k++) {
        int n = snprintf(out, size, forms[k], dir, name);
        if (n > 0 && (size_t)n < size && regular_file(out))
            return 1;
    }
    return 0;
}

/* ../share/nestmap beside the running program (Linux: /proc/self/exe). */
static int exe_data_dir(char *out, size_t size)
{
    char exe[NM_PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0)
        return 0;
    exe[n] = '\0';
    char *slash = strrchr(exe, '/');
    if (!slash)
        return 0;
    *slash = '\0';
    int m = snprintf(out, size, "%s/../share/nestmap", exe);
    return m > 0 && (size_t)m < size;
}

/* The source tree the running program was built from, when it runs from
 * its build tree (config.status beside it): a course run from a fresh
 * build finds the shipped designs and workloads with nothing installed. */
static int build_src_dir(char *out, size_t size)
{
    char exe[NM_PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0 || !NM_SRCDIR[0])
        return 0;
    exe[n] = '\0';
    char *slash = strrchr(exe, '/');
    if (!slash)
        return 0;
    *slash = '\0';
    char status[NM_PATH_MAX + 16];
    int m = snprintf(status, sizeof status, "%s/config.status", exe);
    if (m <= 0 || (size_t)m >= sizeof status || !regular_file(status))
        return 0;
    m = snprintf(out, size, "%s", NM_SRCDIR);
    return m > 0 && (size_t)m < size;
}

int nm_path_find(const char *name, char *out, size_t size)
{
    snprintf(out, size, "%s", name);
    if (!strcmp(name, "-") || access(name, F_OK) == 0)
        return 1;
    if (name[0] == '/' || !name[0])
        return 0;
    if (try_root(".", 1, name, out, size))
        return 1;
    const char *env = getenv("NESTMAP_PATH");
    for (const char *p = env; p && *p;) {
        size_t len = strcspn(p, ":");
        if (try_root(p, len, name, out, size))
            return 1;
        p += len + (p[len] == ':');
    }
    if (try_root(NM_PKGDATADIR, strlen(NM_PKGDATADIR), name, out, size))
        return 1;
    char dir[NM_PATH_MAX + 32];
    if (exe_data_dir(dir, sizeof dir) && try_root(dir, strlen(dir), name, out, size))
        return 1;
    if (build_src_dir(dir, sizeof dir) && try_root(dir, strlen(dir), name, out, size))
        return 1;
    snprintf(out, size, "%s", name);
    return 0;
}

void nm_path_roots(char *out, size_t size)
{
    const char *env = getenv("NESTMAP_PATH");
    char exe[NM_PATH_MAX + 32], real_exe[PATH_MAX], real_cfg[PATH_MAX];
    int other = exe_data_dir(exe, sizeof exe) && realpath(exe, real_exe) &&
                (!realpath(NM_PKGDATADIR, real_cfg) || strcmp(real_exe, real_cfg));
    char build[NM_PATH_MAX];
    int in_build = build_src_dir(build, sizeof build);
    snprintf(out, size, ".%s%s, %s%s%s%s%s", env && *env ? ", " : "", env && *env ? env : "",
             NM_PKGDATADIR, other ? ", " : "", other ? real_exe : "", in_build ? ", " : "",
             in_build ? build : "");
}
