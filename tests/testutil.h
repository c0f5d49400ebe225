/* testutil.h — helpers shared by the Check suites. */
#ifndef NESTMAP_TESTUTIL_H
#define NESTMAP_TESTUTIL_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Path of a file under the source tree's tests/data (NESTMAP_SRCDIR is set
 * by `make check`; falls back to the current directory). */
static inline const char *test_data(const char *rel, char *buf, size_t size)
{
    const char *src = getenv("NESTMAP_SRCDIR");
    snprintf(buf, size, "%s/tests/data/%s", src ? src : ".", rel);
    return buf;
}

/* Runs the suite with Check's normal output and returns the exit status. */
#define TEST_MAIN(make_suite)                                           \
    int main(void)                                                      \
    {                                                                   \
        SRunner *sr = srunner_create(make_suite());                     \
        srunner_run_all(sr, CK_NORMAL);                                 \
        int failed = srunner_ntests_failed(sr);                         \
        srunner_free(sr);                                               \
        return failed ? EXIT_FAILURE : EXIT_SUCCESS;                    \
    }

#endif
