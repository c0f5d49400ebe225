/* text.c — "did you mean" suggestions and key comparison. */
#include <config.h>

#include <ctype.h>
#include <stdio.h>
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
