/* harness.c — the fuzzing entry points (harness.h).  Every input ends in
 * one of three ways: a located error, or a parsed spec that is then
 * checked and evaluated the way the commands would, or a resource limit of
 * our own (never a crash, a hang, a leak or a sanitizer report). */
#include <config.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "nestmap/alloc.h"
#include "nestmap/mapspace.h"
#include "nestmap/model.h"
#include "nestmap/network.h"
#include "nestmap/override.h"
#include "nestmap/pcg32.h"
#include "nestmap/report.h"
#include "nestmap/roofline.h"
#include "nestmap/search.h"
#include "nestmap/spec.h"
#include "nestmap/sweep.h"
#include "nestmap/text.h"

/* Inputs beyond this are cut: the parsers' limits are tested by the
 * malformed-input catalogue, the fuzzer's time is better spent on shape. */
#define MAX_INPUT (64 * 1024)

typedef struct base_doc {
    char *text;
    size_t len;
    const char *name;
} base_doc;

static base_doc design, problem;

static int read_all(const char *path, base_doc *out, const char *name)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return 0;
    size_t cap = 1 << 16;
    out->text = malloc(cap);
    out->len = out->text ? fread(out->text, 1, cap, f) : 0;
    out->name = name;
    fclose(f);
    return out->text && out->len > 0 && out->len < cap;
}

int nm_fuzz_init(const char *srcdir)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/arch/simple/weight_stationary.yaml", srcdir);
    if (!read_all(path, &design, "base-design.yaml"))
        return 0;
    snprintf(path, sizeof path, "%s/fuzz/base/problem.yaml", srcdir);
    return read_all(path, &problem, "base-problem.yaml");
}

/* What the commands do with a parsed spec: evaluate its mapping and print
 * the reports, size its constrained mapspace and evaluate a few of its
 * points, take its roofline bound, read its `mapper:`. */
static void exercise(nm_spec *spec)
{
    static FILE *sink;
    if (!sink)
        sink = fopen("/dev/null", "w");
    nm_error err;
    nm_error_clear(&err);
    nm_search_opts so;
    nm_search_opts_init(&so);
    if (nm_search_opts_parse(&so, spec->mapper, &err) != NM_OK)
        return;
    if (spec->has_arch && spec->fchain && spec->fmap) { /* a fused mapping of a chain */
        nm_fused_model fmdl;
        static nm_fused_stats fst;
        if (nm_fused_model_init(&fmdl, &spec->arch, spec->fchain, &err) != NM_OK)
            return;
        int valid = nm_fused_model_eval(&fmdl, spec->fmap, &fst);
        nm_report_fused_json(sink, &spec->arch, spec->fchain, spec->fmap, &fst);
        if (valid)
            nm_report_fused_text(sink, &spec->arch, spec->fchain, spec->fmap, &fst);
        nm_fused_model_fini(&fmdl);
        return;
    }
    if (!spec->has_arch || !spec->has_problem)
        return;
    nm_roofline r;
    nm_roofline_of(&r, &spec->arch, &spec->wl);
    (void)nm_workload_flops(&spec->wl);
    nm_model mdl;
    if (nm_model_init(&mdl, &spec->arch, &spec->wl, &err) != NM_OK)
        return;
    static nm_stats st;
    static nm_nest nest;
    if (spec->has_mapping) {
        nm_model_eval(&mdl, &spec->map, &st, &nest);
        nm_report_json(sink, &spec->arch, &spec->wl, &st, &spec->map);
        nm_report_text(sink, &spec->arch, &spec->wl, &st);
    }
    nm_mapspace *ms = nm_calloc(1, sizeof *ms);
    if (ms &&
        nm_mapspace_init(ms, &spec->arch, &spec->wl, spec->constraints, spec->constraints2,
                         &err) == NM_OK &&
        (!spec->imperfect || nm_mapspace_enable_imperfect(ms, &err) == NM_OK)) {
        if (spec->has_mapping) {
            char broken[512];
            nm_mapspace_check(ms, &spec->map, broken, sizeof broken);
        }
        nm_pcg32 rng;
        nm_pcg32_seed(&rng, 1, 2);
        for (int i = 0; i < 8; i++) {
            nm_point pt;
            nm_mapping m;
            int wd, wl;
            nm_mapspace_random(ms, &rng, &pt);
            if (nm_mapspace_decode(ms, &pt, &m, &wd, &wl) && nm_model_eval(&mdl, &m, &st, &nest))
                nm_report_loopnest(sink, &spec->arch, &spec->wl, &nest, &m, &st);
        }
    }
    nm_free(ms);
    nm_model_fini(&mdl);
}

/* Loads base documents and then the input, merged as files are. */
static int load(nm_spec *spec, const base_doc *const *base, size_t nbase, const uint8_t *data,
                size_t size, const nm_override *ov, size_t nov)
{
    const char *names[3], *texts[3];
    size_t lens[3];
    size_t n = 0;
    for (; n < nbase; n++) {
        names[n] = base[n]->name;
        texts[n] = base[n]->text;
        lens[n] = base[n]->len;
    }
    names[n] = "input.yaml";
    texts[n] = (const char *)data;
    lens[n++] = size < MAX_INPUT ? size : MAX_INPUT;
    nm_error err;
    nm_error_clear(&err);
    return nm_spec_load_strings(spec, n, names, texts, lens, ov, nov, NM_ACCEPT_CHAIN, &err) ==
           NM_OK;
}

static int run(const base_doc *const *base, size_t nbase, const uint8_t *data, size_t size)
{
    nm_spec spec;
    if (load(&spec, base, nbase, data, size, NULL, 0))
        exercise(&spec);
    nm_spec_fini(&spec);
    return 0;
}

/* The fixed design and layer with the overrides ov[0..nov) applied, used
 * as the commands would use them. */
static void exercise_overridden(const nm_override *ov, size_t nov)
{
    const base_doc *base[] = {&design};
    nm_spec at;
    if (load(&at, base, 1, (const uint8_t *)problem.text, problem.len, ov, nov))
        exercise(&at);
    nm_spec_fini(&at);
}

/* The spec's `network:` and `sweep:` when there are. */
static void exercise_network_sweep(nm_spec *spec)
{
    nm_error err;
    nm_error_clear(&err);
    const nm_ynode *node = spec->doc.root ? nm_ymap_get(spec->doc.root, "network") : NULL;
    if (node) {
        nm_network net;
        memset(&net, 0, sizeof net);
        if (nm_network_parse(&net, node, &spec->doc, &err) == NM_OK)
            (void)nm_network_macs(&net);
        nm_network_fini(&net);
    }
    node = spec->doc.root ? nm_ymap_get(spec->doc.root, "sweep") : NULL;
    if (!node)
        return;
    nm_sweep sw;
    memset(&sw, 0, sizeof sw);
    if (nm_sweep_parse(&sw, node, &err) == NM_OK) {
        /* The overrides of the first points, applied to the fixed design. */
        for (uint64_t p = 0; p < sw.npoints && p < 4; p++) {
            int idx[NM_SWEEP_MAX_AXES];
            nm_override ov[NM_SWEEP_MAX_AXES];
            nm_sweep_point(&sw, p, idx);
            int ok = 1;
            for (int a = 0; a < sw.naxes && ok; a++)
                ok = nm_sweep_override(&sw, a, idx[a], &ov[a], &err) == NM_OK;
            if (ok)
                exercise_overridden(ov, (size_t)sw.naxes);
        }
    }
    nm_sweep_fini(&sw);
}

int nm_fuzz_spec(const uint8_t *data, size_t size)
{
    nm_spec spec;
    if (load(&spec, NULL, 0, data, size, NULL, 0)) {
        exercise(&spec);
    }
    if (spec.doc.root)
        exercise_network_sweep(&spec);
    nm_spec_fini(&spec);
    return 0;
}

/* Mappings and constraints are both merged over the fixed design and
 * layer; they are two harnesses for their two seed corpora. */
int nm_fuzz_mapping(const uint8_t *data, size_t size)
{
    const base_doc *base[] = {&design, &problem};
    return run(base, 2, data, size);
}

int nm_fuzz_constraints(const uint8_t *data, size_t size)
{
    return nm_fuzz_mapping(data, size);
}

int nm_fuzz_problem(const uint8_t *data, size_t size)
{
    const base_doc *base[] = {&design};
    return run(base, 1, data, size);
}

int nm_fuzz_sweep(const uint8_t *data, size_t size)
{
    /* The file as a sweep. */
    nm_spec spec;
    if (load(&spec, NULL, 0, data, size, NULL, 0) || spec.doc.root)
        exercise_network_sweep(&spec);
    nm_spec_fini(&spec);
    /* Each line as a --set, applied to the fixed design. */
    char line[512];
    size_t n = size < MAX_INPUT ? size : MAX_INPUT;
    nm_override ov[8];
    size_t nov = 0;
    for (size_t i = 0; i < n && nov < 8;) {
        size_t len = 0;
        while (i + len < n && data[i + len] != '\n')
            len++;
        if (len < sizeof line) {
            memcpy(line, data + i, len);
            line[len] = '\0';
            nm_error err;
            nm_error_clear(&err);
            if (nm_override_parse(&ov[nov], line, NULL, &err) == NM_OK)
                nov++;
            /* and as bound's --peak / --bandwidth */
            static const char *const units[] = {"B/s", "FLOP/s", NULL};
            double rate;
            (void)nm_text_rate(line, units, &rate);
        }
        i += len + 1;
    }
    if (nov)
        exercise_overridden(ov, nov);
    return 0;
}
