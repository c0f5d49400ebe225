/* check_conformance.c — every case of the conformance corpus (Timeloop's own
 * outputs) through nestmap's model and JSON report, compared by the corpus
 * README's rule: counts equal; energies within 0.01 pJ or 0.01 %; summary
 * cycles and utilization equal (to the printed precision); invalid cases
 * rejected at the same level for the same reason.
 *
 * The corpus lives outside the repository: ../shared/conformance beside the
 * checkout, or $NESTMAP_CONFORMANCE. */
#include <config.h>

#include <check.h>
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "nestmap/model.h"
#include "nestmap/report.h"
#include "nestmap/spec.h"
#include "testutil.h"

#define MAX_CASES 4096

struct kase {
    char name[256];      /* named/00_conv1d */
    char files[4][2048]; /* inputs */
    int nfiles;
    char expected[2048];
};

static struct kase cases[MAX_CASES];
static int ncases;
static char corpus[1024];

static int is_file(const char *p)
{
    struct stat sb;
    return stat(p, &sb) == 0 && S_ISREG(sb.st_mode);
}

static int cmp_names(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Adds the cases under corpus/sub, sorted by name. */
static void scan(const char *sub)
{
    char dir[1200];
    snprintf(dir, sizeof dir, "%s/%s", corpus, sub);
    DIR *d = opendir(dir);
    if (!d)
        return;
    char *names[MAX_CASES];
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) && n < MAX_CASES)
        if (e->d_name[0] != '.')
            names[n++] = strdup(e->d_name);
    closedir(d);
    qsort(names, (size_t)n, sizeof *names, cmp_names);
    for (int i = 0; i < n && ncases < MAX_CASES; i++) {
        struct kase *k = &cases[ncases];
        memset(k, 0, sizeof *k);
        snprintf(k->name, sizeof k->name, "%s/%s", sub, names[i]);
        char base[1500];
        snprintf(base, sizeof base, "%s/%s", dir, names[i]);
        if (!strcmp(sub, "v04")) {
            /* arch, problem, mapping and tables in separate files; EXPECTED
             * names the case whose numbers they must give. */
            static const char *const parts[] = {"arch.yaml", "prob.yaml", "map.yaml",
                                                "ert_art.yaml"};
            for (int j = 0; j < 4; j++)
                snprintf(k->files[j], sizeof k->files[j], "%s/%s", base, parts[j]);
            k->nfiles = 4;
            char ep[1600], rel[512] = "";
            snprintf(ep, sizeof ep, "%s/EXPECTED", base);
            FILE *f = fopen(ep, "r");
            if (f) {
                if (!fgets(rel, sizeof rel, f))
                    rel[0] = '\0';
                fclose(f);
            }
            rel[strcspn(rel, "\r\n")] = '\0';
            snprintf(k->expected, sizeof k->expected, "%s/%s", base, rel);
        } else {
            snprintf(k->files[0], sizeof k->files[0], "%s/input.yaml", base);
            k->nfiles = 1;
            snprintf(k->expected, sizeof k->expected, "%s/expected.json", base);
        }
        ncases++;
    }
    for (int i = 0; i < n; i++)
        free(names[i]);
}

/* ---- comparison of the expected and the produced JSON trees ---- */

struct diff {
    char msg[2048];
    size_t used;
    int count;
};

static void note(struct diff *d, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void note(struct diff *d, const char *fmt, ...)
{
    d->count++;
    if (d->used + 200 > sizeof d->msg)
        return;
    va_list ap;
    va_start(ap, fmt);
    d->used += (size_t)vsnprintf(d->msg + d->used, sizeof d->msg - d->used, fmt, ap);
    va_end(ap);
    d->used += (size_t)snprintf(d->msg + d->used, sizeof d->msg - d->used, "; ");
}

static int ends_with(const char *s, const char *suffix)
{
    size_t a = strlen(s), b = strlen(suffix);
    return a >= b && !strcmp(s + a - b, suffix);
}

/* Tolerance for a field: energies 0.01 pJ or 0.01 %; two-decimal prints
 * (utilization, throttling, GFLOPs, uJ) half a unit of the last digit;
 * everything else (counts, sizes) exact. */
static int agree(const char *key, int in_fj, double want, double got)
{
    double diff = fabs(want - got);
    if (in_fj || ends_with(key, "_pj"))
        return diff <= fmax(0.01, 1e-4 * fabs(want)) + 1e-9;
    if (!strcmp(key, "energy_uj"))
        return diff <= fmax(0.005, 1e-4 * fabs(want)) + 1e-12;
    if (!strcmp(key, "utilization_pct") || !strcmp(key, "bandwidth_throttling") ||
        !strcmp(key, "gflops"))
        return diff <= 0.005 + 1e-9;
    return diff == 0.0;
}

static void compare_map(struct diff *d, const char *path, const nm_ynode *want,
                        const nm_ynode *got, int in_fj)
{
    for (size_t i = 0; i < want->n; i++) {
        const char *k = nm_ymap_key(want, i)->str;
        const nm_ynode *w = nm_ymap_val(want, i);
        if (!strcmp(k, "template"))
            continue;
        const nm_ynode *g = nm_ymap_get(got, k);
        if (!g) {
            note(d, "%s.%s missing", path, k);
            continue;
        }
        char sub[512];
        snprintf(sub, sizeof sub, "%s.%s", path, k);
        if (w->kind == NM_Y_MAP) {
            if (g->kind != NM_Y_MAP) {
                note(d, "%s is not an object", sub);
                continue;
            }
            compare_map(d, sub, w, g, in_fj || !strcmp(k, "fj_per_compute"));
            if (!strcmp(k, "dataspaces") && g->n != w->n)
                note(d, "%s: %zu data spaces kept, expected %zu", sub, g->n, w->n);
        } else if (w->kind == NM_Y_SCALAR && !w->quoted) {
            char *e1, *e2;
            double wv = strtod(w->str, &e1), gv = strtod(g->str, &e2);
            if (*e1 || *e2) {
                if (strcmp(w->str, g->str))
                    note(d, "%s = %s, expected %s", sub, g->str, w->str);
            } else if (!agree(k, in_fj, wv, gv)) {
                note(d, "%s = %.6f, expected %.6f", sub, gv, wv);
            }
        } else if (w->kind == NM_Y_SCALAR) {
            if (strcmp(w->str, g->str))
                note(d, "%s = '%s', expected '%s'", sub, g->str, w->str);
        }
    }
}

static void compare(struct diff *d, const nm_ynode *want, const nm_ynode *got)
{
    const nm_ynode *wv = nm_ymap_get(want, "valid"), *gv = nm_ymap_get(got, "valid");
    if (!wv || !gv) {
        note(d, "no 'valid' field");
        return;
    }
    if (strcmp(wv->str, gv->str)) {
        const nm_ynode *r = nm_ymap_get(got, "reason"), *er = nm_ymap_get(want, "reason");
        note(d, "valid = %s, expected %s (nestmap: %s; Timeloop: %s)", gv->str, wv->str,
             r ? r->str : "-", er ? er->str : "-");
        return;
    }
    if (!strcmp(wv->str, "false")) {
        /* Same level, same numbers: Timeloop's words contain ours. */
        const char *w = nm_ymap_get(want, "reason")->str, *g = nm_ymap_get(got, "reason")->str;
        if (!strstr(w, g))
            note(d, "reason '%s', expected '%s'", g, w);
        return;
    }
    const nm_ynode *wl = nm_ymap_get(want, "levels"), *gl = nm_ymap_get(got, "levels");
    if (!gl || gl->kind != NM_Y_SEQ) {
        note(d, "no levels");
        return;
    }
    if (gl->n != wl->n)
        note(d, "%zu levels, expected %zu", gl->n, wl->n);
    for (size_t i = 0; i < wl->n && i < gl->n; i++) {
        const nm_ynode *w = wl->items[i], *g = gl->items[i];
        char path[300];
        snprintf(path, sizeof path, "levels[%s]", nm_ymap_get(w, "name")->str);
        compare_map(d, path, w, g, 0);
    }
    compare_map(d, "summary", nm_ymap_get(want, "summary"), nm_ymap_get(got, "summary"), 0);
}

START_TEST(conformance_case)
{
    const struct kase *k = &cases[_i];
    nm_spec spec;
    nm_error err;
    nm_error_clear(&err);
    const char *files[4];
    for (int j = 0; j < k->nfiles; j++)
        files[j] = k->files[j];
    nm_status st = nm_spec_load(&spec, files, (size_t)k->nfiles,
                                NM_NEED_ARCH | NM_NEED_PROBLEM | NM_NEED_MAPPING, &err);
    ck_assert_msg(st == NM_OK, "%s: %s:%d:%d: %s", k->name, err.file, err.line, err.col, err.msg);
    nm_model mdl;
    ck_assert_int_eq(nm_model_init(&mdl, &spec.arch, &spec.wl, &err), NM_OK);
    static nm_stats stats;
    nm_model_eval(&mdl, &spec.map, &stats, NULL);

    /* What a user sees: the JSON report, read back. */
    char *json = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&json, &len);
    ck_assert_ptr_nonnull(mem);
    nm_report_json(mem, &spec.arch, &spec.wl, &stats);
    fclose(mem);
    nm_ydoc got, want;
    nm_ydoc_init(&got);
    nm_ydoc_init(&want);
    ck_assert_msg(nm_ydoc_load_string(&got, "report", json, len, &err) == NM_OK,
                  "%s: report is not valid JSON: %s", k->name, err.msg);
    ck_assert_msg(nm_ydoc_load_file(&want, k->expected, &err) == NM_OK, "%s: %s", k->name,
                  err.msg);
    struct diff d;
    memset(&d, 0, sizeof d);
    compare(&d, want.root, got.root);
    ck_assert_msg(d.count == 0, "%s: %d differences: %s", k->name, d.count, d.msg);
    free(json);
    nm_ydoc_fini(&got);
    nm_ydoc_fini(&want);
    nm_model_fini(&mdl);
    nm_spec_fini(&spec);
}
END_TEST

START_TEST(corpus_complete)
{
    /* The corpus README promises hundreds of cases; a near-empty scan means
     * a broken path, not a pass. */
    ck_assert_int_ge(ncases, 300);
}
END_TEST

int main(void)
{
    const char *env = getenv("NESTMAP_CONFORMANCE");
    snprintf(corpus, sizeof corpus, "%s", env && *env ? env : "../shared/conformance");
    char readme[1100];
    snprintf(readme, sizeof readme, "%s/README.md", corpus);
    if (!is_file(readme)) {
        printf("conformance corpus not found at '%s' (no README.md there).\n"
               "Set NESTMAP_CONFORMANCE to the corpus directory to run these checks.\n"
               "SKIPPED: no conformance case was run.\n", corpus);
        return 77; /* automake: skipped, not passed */
    }
    scan("named");
    scan("random");
    scan("v04");
    printf("conformance corpus: %s (%d cases)\n", corpus, ncases);
    Suite *s = suite_create("conformance");
    TCase *tc = tcase_create("timeloop");
    tcase_add_test(tc, corpus_complete);
    tcase_add_loop_test(tc, conformance_case, 0, ncases);
    tcase_set_timeout(tc, 60);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
