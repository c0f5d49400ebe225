/* text.c — "did you mean" suggestions, key comparison, SI quantities. */
#include <config.h>

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nestmap/text.h"

static int fold(int c)
{
    c = tolower((unsigned char)c);
    return c == '-' ? '_' : c;
}

int nm_text_key_equal(const char *a, const char *b)
{
    for (; *a && *b; a++, b++) {
        int ca = *a == '-' ? '_' : *a;
        int cb = *b == '-' ? '_' : *b;
        if (ca != cb)
            return 0;
    }
    return *a == *b;
}

size_t nm_text_distance(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    if (la > 63 || lb > 63) /* long names: no suggestion is worth quadratic work */
        return la > lb ? la : lb;
    /* Optimal string alignment: edits plus swaps of adjacent letters, the
     * commonest typo ("dpeth"). */
    size_t d[64][64];
    for (size_t i = 0; i <= la; i++)
        d[i][0] = i;
    for (size_t j = 0; j <= lb; j++)
        d[0][j] = j;
    for (size_t i = 1; i <= la; i++) {
        for (size_t j = 1; j <= lb; j++) {
            size_t cost = fold(a[i - 1]) == fold(b[j - 1]) ? 0 : 1;
            size_t best = d[i - 1][j - 1] + cost;
            if (d[i - 1][j] + 1 < best)
                best = d[i - 1][j] + 1;
            if (d[i][j - 1] + 1 < best)
                best = d[i][j - 1] + 1;
            if (i > 1 && j > 1 && fold(a[i - 1]) == fold(b[j - 2]) &&
                fold(a[i - 2]) == fold(b[j - 1]) && d[i - 2][j - 2] + 1 < best)
                best = d[i - 2][j - 2] + 1;
            d[i][j] = best;
        }
    }
    return d[la][lb];
}

const char *nm_text_suggest(const char *word, const char *const *cands, size_t n)
{
    /* Short names differ by one letter from everything: only a change of
     * case (or - for _) counts as a likely misspelling of them. */
    size_t len = strlen(word);
    size_t limit = len <= 2 ? 0 : len / 3 < 1 ? 1 : len / 3;
    const char *best = NULL;
    size_t best_d = (size_t)-1;
    for (size_t i = 0; i < n; i++) {
        if (!cands[i])
            continue;
        size_t d = nm_text_distance(word, cands[i]);
        if (d < best_d) {
            best_d = d;
            best = cands[i];
        }
    }
    return best_d <= limit ? best : NULL;
}

void nm_text_join(char *buf, size_t size, const char *const *cands, size_t n)
{
    size_t used = 0;
    if (size)
        buf[0] = '\0';
    for (size_t i = 0; i < n && used + 8 < size; i++) {
        int w = snprintf(buf + used, size - used, "%s%s", i ? ", " : "", cands[i]);
        if (w < 0 || (size_t)w >= size - used) {
            snprintf(buf + used, size - used, ", ...");
            break;
        }
        used += (size_t)w;
    }
}

int nm_text_rate(const char *s, const char *const *units, double *out)
{
    static const struct { const char *p; double f; } prefix[] = {
        {"Ki", 1024.0}, {"Mi", 1048576.0}, {"Gi", 1073741824.0}, {"Ti", 1099511627776.0},
        {"k", 1e3}, {"K", 1e3}, {"M", 1e6}, {"G", 1e9}, {"T", 1e12}, {"P", 1e15}, {"E", 1e18},
        {"m", 1e-3}, {"u", 1e-6}, {"\xc2\xb5", 1e-6}, {"n", 1e-9}, {"p", 1e-12},
    };
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (end == s || errno || !isfinite(v) || v <= 0)
        return 0;
    while (*end == ' ')
        end++;
    for (size_t i = 0; i < sizeof prefix / sizeof *prefix; i++) {
        size_t n = strlen(prefix[i].p);
        if (!strncmp(end, prefix[i].p, n)) {
            /* a prefix only where a unit or nothing follows: "G" alone,
             * "GB/s"; not the unit's own first letter ("B/s") */
            const char *rest = end + n;
            int ok = *rest == '\0';
            for (size_t u = 0; !ok && units[u]; u++)
                ok = !strcmp(rest, units[u]);
            if (ok) {
                v *= prefix[i].f;
                end += n;
                break;
            }
        }
    }
    int ok = *end == '\0';
    for (size_t u = 0; !ok && units[u]; u++)
        ok = !strcmp(end, units[u]);
    if (!ok || !isfinite(v))
        return 0;
    *out = v;
    return 1;
}

int nm_text_unit_value(const char *s, const char *unit, double *out)
{
    size_t n = strlen(s), u = strlen(unit);
    if (n <= u || strcmp(s + n - u, unit) != 0)
        return 0;
    const char *const units[] = {unit, NULL};
    return nm_text_rate(s, units, out);
}

char *nm_text_si(double v, const char *unit, char *buf, size_t size)
{
    static const struct { double f; const char *p; } prefix[] = {
        {1e18, "E"}, {1e15, "P"}, {1e12, "T"}, {1e9, "G"}, {1e6, "M"}, {1e3, "k"},
        {1, ""}, {1e-3, "m"}, {1e-6, "\xc2\xb5"}, {1e-9, "n"}, {1e-12, "p"},
    };
    size_t i = 0, n = sizeof prefix / sizeof *prefix;
    double a = fabs(v);
    if (a > 0) {
        while (i + 1 < n && a < prefix[i].f * 0.99995) /* 999.96 prints as 1000 */
            i++;
    } else {
        i = 6;
    }
    snprintf(buf, size, "%.4g %s%s", v / prefix[i].f, prefix[i].p, unit);
    return buf;
}

int nm_text_has_any(const char *s, const char *const *list, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (strstr(s, list[i]))
            return 1;
    return 0;
}

int nm_text_add_name(char names[][NM_NAME_MAX], int *n, int cap, const char *name)
{
    for (int i = 0; i < *n; i++)
        if (!strcmp(names[i], name))
            return i;
    if (*n >= cap)
        return -1;
    snprintf(names[*n], NM_NAME_MAX, "%s", name);
    return (*n)++;
}
