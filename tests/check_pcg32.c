/* check_pcg32.c — PCG32 known answers, unbiased bounds, independent streams. */
#include <config.h>

#include <check.h>
#include <math.h>
#include <stdint.h>

#include "nestmap/pcg32.h"
#include "testutil.h"

/* Known answer from the published reference implementation's demo
 * (pcg32-demo, seed 42, sequence 54). */
START_TEST(known_answer)
{
    static const uint32_t want[] = {0xa15c02b7, 0x7b47f409, 0xba1d3330, 0x83d2f293, 0xbfa4784b,
                                    0xcbed606e};
    nm_pcg32 r;
    nm_pcg32_seed(&r, 42u, 54u);
    for (size_t i = 0; i < sizeof want / sizeof *want; i++)
        ck_assert_uint_eq(nm_pcg32_next(&r), want[i]);
}
END_TEST

START_TEST(same_seed_same_sequence)
{
    nm_pcg32 a, b;
    nm_pcg32_seed(&a, 7u, 3u);
    nm_pcg32_seed(&b, 7u, 3u);
    for (int i = 0; i < 1000; i++)
        ck_assert_uint_eq(nm_pcg32_next(&a), nm_pcg32_next(&b));
}
END_TEST

START_TEST(bounded_in_range)
{
    nm_pcg32 r;
    nm_pcg32_seed(&r, 1u, 1u);
    static const uint32_t bounds[] = {1, 2, 3, 7, 10, 1000, 0x80000001u, 0xffffffffu};
    for (size_t b = 0; b < sizeof bounds / sizeof *bounds; b++)
        for (int i = 0; i < 2000; i++)
            ck_assert_uint_lt(nm_pcg32_bounded(&r, bounds[b]), bounds[b]);
    ck_assert_uint_eq(nm_pcg32_bounded(&r, 0), 0);
    for (int i = 0; i < 2000; i++)
        ck_assert_uint_lt(nm_pcg32_bounded64(&r, UINT64_C(10000000000)), UINT64_C(10000000000));
}
END_TEST

/* With bound 3 * 2^30, a draw reduced by plain modulo would hit [0, 2^30)
 * twice as often as the rest: 1/2 of draws instead of 1/3. */
START_TEST(bounded_unbiased)
{
    nm_pcg32 r;
    nm_pcg32_seed(&r, 99u, 5u);
    const uint32_t bound = 3u << 30;
    const int n = 300000;
    int low = 0;
    for (int i = 0; i < n; i++)
        low += nm_pcg32_bounded(&r, bound) < (1u << 30);
    double frac = (double)low / n;
    ck_assert_double_lt(fabs(frac - 1.0 / 3.0), 0.005);
}
END_TEST

START_TEST(bounded_uniform_small)
{
    nm_pcg32 r;
    nm_pcg32_seed(&r, 2024u, 11u);
    int count[6] = {0};
    const int n = 600000;
    for (int i = 0; i < n; i++)
        count[nm_pcg32_bounded(&r, 6)]++;
    /* Chi-square with 5 degrees of freedom; 20.5 is the 0.1% critical value. */
    double chi = 0.0, e = n / 6.0;
    for (int k = 0; k < 6; k++)
        chi += (count[k] - e) * (count[k] - e) / e;
    ck_assert_double_lt(chi, 20.5);
}
END_TEST

/* Different stream ids give unrelated sequences: no shared run, and the
 * streams' draws are uncorrelated. */
START_TEST(streams_independent)
{
    nm_pcg32 a, b;
    nm_pcg32_seed(&a, 42u, 0u);
    nm_pcg32_seed(&b, 42u, 1u);
    const int n = 100000;
    double sa = 0, sb = 0, sab = 0, saa = 0, sbb = 0;
    int equal = 0;
    for (int i = 0; i < n; i++) {
        double x = nm_pcg32_double(&a), y = nm_pcg32_double(&b);
        equal += x == y;
        sa += x;
        sb += y;
        sab += x * y;
        saa += x * x;
        sbb += y * y;
    }
    double cov = sab / n - (sa / n) * (sb / n);
    double corr = cov / sqrt((saa / n - (sa / n) * (sa / n)) * (sbb / n - (sb / n) * (sb / n)));
    ck_assert_int_lt(equal, 3);
    ck_assert_double_lt(fabs(corr), 0.02);
    /* A stream is not a shifted copy of the other: compare a window. */
    nm_pcg32 c, d;
    nm_pcg32_seed(&c, 42u, 0u);
    uint32_t first[8];
    for (int i = 0; i < 8; i++)
        first[i] = nm_pcg32_next(&c);
    nm_pcg32_seed(&d, 42u, 1u);
    uint32_t win[8] = {0};
    int matches = 0;
    for (int i = 0; i < 20000; i++) {
        memmove(win, win + 1, 7 * sizeof *win);
        win[7] = nm_pcg32_next(&d);
        matches += i >= 7 && !memcmp(win, first, sizeof win);
    }
    ck_assert_int_eq(matches, 0);
}
END_TEST

START_TEST(doubles_in_unit_interval)
{
    nm_pcg32 r;
    nm_pcg32_seed(&r, 5u, 5u);
    double sum = 0;
    for (int i = 0; i < 100000; i++) {
        double x = nm_pcg32_double(&r);
        ck_assert(x >= 0.0 && x < 1.0);
        sum += x;
    }
    ck_assert_double_lt(fabs(sum / 100000 - 0.5), 0.01);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("pcg32");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, known_answer);
    tcase_add_test(tc, same_seed_same_sequence);
    tcase_add_test(tc, bounded_in_range);
    tcase_add_test(tc, bounded_unbiased);
    tcase_add_test(tc, bounded_uniform_small);
    tcase_add_test(tc, streams_independent);
    tcase_add_test(tc, doubles_in_unit_interval);
    suite_add_tcase(s, tc);
    return s;
}

TEST_MAIN(suite)
