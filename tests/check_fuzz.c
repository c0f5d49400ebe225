/* check_fuzz.c — the fuzzing harnesses (fuzz/harness.h) built with the
 * normal compiler and run, in `make check`, over every crash the fuzzers
 * ever found (fuzz/regress/KIND/) and their seed corpus (fuzz/seeds/KIND/,
 * and for `spec` every input under tests/data, examples and arch): each must
 * return without a crash or sanitizer report (the suite runs under
 * ASan+UBSan in CI).  A test per kind counts the inputs it replayed and
 * fails when it found none, so a moved directory cannot pass silently. */
#include <config.h>

#include <check.h>
#include <dirent.h>
#include <stdint.h>
#include <sys/stat.h>

#include "../fuzz/harness.h"
#include "testutil.h"

typedef int (*entry_fn)(const uint8_t *, size_t);

static const char *srcdir(void)
{
    const char *s = getenv("NESTMAP_SRCDIR");
    return s ? s : ".";
}

/* Feeds every regular file under dir (recursively) to fn; returns how many. */
static int replay_dir(const char *dir, entry_fn fn)
{
    DIR *d = opendir(dir);
    if (!d)
        return 0;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.')
            continue;
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        struct stat sb;
        if (stat(path, &sb) != 0)
            continue;
        if (S_ISDIR(sb.st_mode)) {
            n += replay_dir(path, fn);
            continue;
        }
        FILE *f = fopen(path, "rb");
        ck_assert_msg(f != NULL, "cannot open %s", path);
        uint8_t *buf = malloc((size_t)sb.st_size + 1);
        ck_assert_ptr_nonnull(buf);
        size_t len = fread(buf, 1, (size_t)sb.st_size, f);
        fclose(f);
        ck_assert_int_eq(fn(buf, len), 0);
        free(buf);
        n++;
    }
    closedir(d);
    return n;
}

static int replay(const char *kind, entry_fn fn)
{
    char dir[4096];
    ck_assert_msg(nm_fuzz_init(srcdir()), "cannot read the fuzzers' base documents");
    snprintf(dir, sizeof dir, "%s/fuzz/seeds/%s", srcdir(), kind);
    int seeds = replay_dir(dir, fn);
    snprintf(dir, sizeof dir, "%s/fuzz/regress/%s", srcdir(), kind);
    int regress = replay_dir(dir, fn);
    printf("fuzz %s: %d seeds, %d regressions replayed\n", kind, seeds, regress);
    return seeds + regress;
}

START_TEST(spec_inputs)
{
    char dir[4096];
    int n = replay("spec", nm_fuzz_spec);
    snprintf(dir, sizeof dir, "%s/tests/data", srcdir());
    n += replay_dir(dir, nm_fuzz_spec);
    snprintf(dir, sizeof dir, "%s/examples", srcdir());
    n += replay_dir(dir, nm_fuzz_spec);
    snprintf(dir, sizeof dir, "%s/arch", srcdir());
    n += replay_dir(dir, nm_fuzz_spec);
    ck_assert_int_gt(n, 50);
}
END_TEST

START_TEST(mapping_inputs)
{
    ck_assert_int_gt(replay("mapping", nm_fuzz_mapping), 0);
}
END_TEST

START_TEST(constraints_inputs)
{
    ck_assert_int_gt(replay("constraints", nm_fuzz_constraints), 0);
}
END_TEST

START_TEST(problem_inputs)
{
    ck_assert_int_gt(replay("problem", nm_fuzz_problem), 0);
}
END_TEST

START_TEST(sweep_inputs)
{
    char dir[4096];
    int n = replay("sweep", nm_fuzz_sweep);
    snprintf(dir, sizeof dir, "%s/tests/data/sweep", srcdir());
    n += replay_dir(dir, nm_fuzz_sweep);
    ck_assert_int_gt(n, 1);
}
END_TEST

static Suite *fuzz_suite(void)
{
    Suite *s = suite_create("fuzz");
    TCase *tc = tcase_create("replay");
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, spec_inputs);
    tcase_add_test(tc, mapping_inputs);
    tcase_add_test(tc, constraints_inputs);
    tcase_add_test(tc, problem_inputs);
    tcase_add_test(tc, sweep_inputs);
    suite_add_tcase(s, tc);
    return s;
}

TEST_MAIN(fuzz_suite)
