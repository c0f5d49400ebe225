/* check_search.c — the mapspace (sizes, constraints, pruning) and the search
 * (strategies agree, determinism across threads, termination rules, the
 * admissibility of optimal's bound). */
#include <config.h>

#include <check.h>
#include <math.h>
#include <string.h>

#include "nestmap/alloc.h"
#include "nestmap/mapspace.h"
#include "nestmap/model.h"
#include "nestmap/pcg32.h"
#include "nestmap/report.h"
#include "nestmap/search.h"
#include "nestmap/spec.h"
#include "testutil.h"

struct env {
    nm_spec spec;
    nm_mapspace ms;
};

/* Loads a design from its text (path: for errors) and its mapspace. */
static void load_text(struct env *e, const char *path, const char *text)
{
    nm_error err;
    nm_status st = nm_spec_load_string(&e->spec, path, text, NM_NEED_ARCH | NM_NEED_PROBLEM, &err);
    ck_assert_msg(st == NM_OK, "%d:%d: %s", err.line, err.col, err.msg);
    st = nm_mapspace_init(&e->ms, &e->spec.arch, &e->spec.wl, e->spec.constraints,
                          e->spec.constraints2, &err);
    ck_assert_msg(st == NM_OK, "%d:%d: %s", err.line, err.col, err.msg);
}

/* Loads a test design, with extra YAML appended (constraints). */
static void load(struct env *e, const char *file, const char *extra)
{
    char path[1024];
    test_data(file, path, sizeof path);
    FILE *f = fopen(path, "rb");
    ck_assert_ptr_nonnull(f);
    static char text[65536];
    size_t n = fread(text, 1, sizeof text - 4096, f);
    fclose(f);
    text[n] = '\0';
    if (extra)
        strncat(text, extra, sizeof text - strlen(text) - 1);
    load_text(e, path, text);
}

/* Loads a test design with its one occurrence of `from` replaced by `to`. */
static void load_sub(struct env *e, const char *file, const char *from, const char *to)
{
    char path[1024];
    test_data(file, path, sizeof path);
    FILE *f = fopen(path, "rb");
    ck_assert_ptr_nonnull(f);
    static char text[65536], out[65536];
    size_t n = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    text[n] = '\0';
    const char *at = strstr(text, from);
    ck_assert_msg(at != NULL, "%s: no '%s'", file, from);
    snprintf(out, sizeof out, "%.*s%s%s", (int)(at - text), text, to, at + strlen(from));
    load_text(e, path, out);
}

static nm_status load_err(struct env *e, const char *extra, nm_error *err)
{
    char path[1024];
    test_data("search/conv1d_3level.yaml", path, sizeof path);
    FILE *f = fopen(path, "rb");
    static char text[65536];
    size_t n = fread(text, 1, sizeof text - 4096, f);
    fclose(f);
    text[n] = '\0';
    strncat(text, extra, sizeof text - strlen(text) - 1);
    nm_status st = nm_spec_load_string(&e->spec, "c.yaml", text, NM_NEED_ARCH | NM_NEED_PROBLEM, err);
    if (st != NM_OK)
        return st;
    return nm_mapspace_init(&e->ms, &e->spec.arch, &e->spec.wl, e->spec.constraints,
                            e->spec.constraints2, err);
}

static void unload(struct env *e)
{
    nm_spec_fini(&e->spec);
}

/* K = 32 = 2^5 over 3 levels: C(7,2) = 21 splits; R = 3: 3; P = 16 = 2^4:
 * C(6,2) = 15.  Orders: 3! per level.  Bypass: 3 levels x 3 tensors, the
 * outermost keeping all: 2^6 = 64. */
START_TEST(sizes_by_hand)
{
    struct env e;
    load(&e, "search/conv1d_3level.yaml", NULL);
    ck_assert_uint_eq(e.ms.dim[0].count, 21);
    ck_assert_uint_eq(e.ms.dim[1].count, 3);
    ck_assert_uint_eq(e.ms.dim[2].count, 15);
    ck_assert_double_eq_tol(e.ms.log_factor, log10(945.0), 1e-9);
    ck_assert_double_eq_tol(e.ms.log_perm, log10(216.0), 1e-9);
    ck_assert_int_eq(e.ms.nbypass, 6);
    ck_assert_double_eq_tol(pow(10.0, e.ms.log_bypass), 64.0, 1e-6);
    ck_assert_uint_eq(nm_mapspace_outer_count(&e.ms), 945 * 64);
    unload(&e);
}
END_TEST

/* Residual factors enlarge each dimension by the perfect factorizations of
 * its padded bounds: R = 3 pads to 4 (2^2: C(4,2) = 6 ways over 3 loops) and
 * 5 (3 ways), so 3 + 9 = 12; P = 16 pads to 17..31, whose ways over 3 loops
 * sum to 169 (17: 3, 18: 18, 19: 3, 20: 18, 21: 9, 22: 9, 23: 3, 24: 30,
 * 25: 6, 26: 9, 27: 10, 28: 18, 29: 3, 30: 27, 31: 3), so 184.  Every point
 * decodes to factors that cover the bounds, and a mapping with residuals
 * survives map.yaml (written, read back, evaluated: the same numbers). */
START_TEST(imperfect_space)
{
    struct env e;
    load(&e, "search/conv1d_3level.yaml", NULL);
    nm_error err;
    ck_assert_int_eq(nm_mapspace_enable_imperfect(&e.ms, &err), NM_OK);
    ck_assert_uint_eq(e.ms.dim[1].perfect, 3);
    ck_assert_uint_eq(e.ms.dim[1].count, 12);
    ck_assert_uint_eq(e.ms.dim[2].perfect, 15);
    ck_assert_uint_eq(e.ms.dim[2].count, 184);
    nm_model mdl;
    ck_assert_int_eq(nm_model_init(&mdl, &e.spec.arch, &e.spec.wl, &err), NM_OK);
    static nm_stats st, st2;
    nm_pcg32 rng;
    nm_pcg32_seed(&rng, 7, 0);
    int with_residual = 0, roundtrips = 0;
    for (int i = 0; i < 4000; i++) {
        nm_point pt;
        nm_mapping m;
        int wd, wl;
        nm_mapspace_random(&e.ms, &rng, &pt);
        if (!nm_mapspace_decode(&e.ms, &pt, &m, &wd, &wl))
            continue;
        int valid = nm_model_eval(&mdl, &m, &st, NULL);
        ck_assert_int_ne(st.invalid.kind, NM_INV_FACTORS);
        if (!nm_mapping_imperfect(&m, e.spec.wl.ndims))
            continue;
        with_residual++;
        if (!valid || roundtrips >= 50)
            continue;
        ck_assert_uint_eq(st.computes, 32 * 3 * 16);
        char *yaml = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&yaml, &len);
        nm_report_mapping_yaml(f, &e.spec.arch, &e.spec.wl, &m);
        fclose(f);
        nm_ydoc doc;
        nm_ydoc_init(&doc);
        ck_assert_int_eq(nm_ydoc_load_string(&doc, "map.yaml", yaml, len, &err), NM_OK);
        nm_mapping back;
        ck_assert_msg(nm_mapping_parse(&back, nm_ymap_get(doc.root, "mapping"), &e.spec.arch,
                                       &e.spec.wl, &err) == NM_OK, "%s\n%s", err.msg, yaml);
        ck_assert(nm_model_eval(&mdl, &back, &st2, NULL));
        ck_assert_double_eq(st.energy, st2.energy);
        ck_assert_uint_eq(st.cycles, st2.cycles);
        roundtrips++;
        nm_ydoc_fini(&doc);
        free(yaml);
    }
    ck_assert_int_gt(with_residual, 500);
    ck_assert_int_eq(roundtrips, 50);
    nm_model_fini(&mdl);
    unload(&e);
}
END_TEST

/* Loads a design of arch/ with a layer from tests/data. */
static void load_arch(nm_spec *spec, nm_mapspace *ms, const char *design, const char *layer)
{
    char arch[1024], wl[1024];
    const char *src = getenv("NESTMAP_SRCDIR");
    snprintf(arch, sizeof arch, "%s/arch/%s", src ? src : ".", design);
    test_data(layer, wl, sizeof wl);
    const char *files[] = {arch, wl};
    nm_error err;
    ck_assert_msg(nm_spec_load(spec, files, 2, NM_NEED_ARCH | NM_NEED_PROBLEM, &err) == NM_OK,
                  "%s:%d: %s", err.file, err.line, err.msg);
    ck_assert_int_eq(nm_mapspace_init(ms, &spec->arch, &spec->wl, spec->constraints,
                                      spec->constraints2, &err), NM_OK);
}

/* nm_mapspace_fit_residuals reads factors as loop ends and sets the
 * residuals by Timeloop's product rule, as decoding does (worked by hand:
 * P = 16 over the register file, buffer and memory, innermost first). */
START_TEST(fit_residuals_by_hand)
{
    struct env e;
    load(&e, "search/conv1d_3level.yaml", NULL);
    nm_error err;
    ck_assert_int_eq(nm_mapspace_enable_imperfect(&e.ms, &err), NM_OK);
    const int P = 2, K = 0;
    nm_mapping m;
    nm_mapping_init(&m, &e.spec.arch, &e.spec.wl);
    m.level[2].tfactor[K] = 32;
    m.level[2].tfactor[1] = 3;
    /* P's ends at the register file, buffer and memory, and what they
     * become: ends and residuals (0: none) */
    static const struct {
        int64_t end[3], fit[3], res[3];
    } cases[] = {
        /* 15 = (1*2 + 1)*5 + 0: the register file's loop runs 1 in its last
         * instance, the others run whole: ((2-1)*2 + (2-1))*5 + 1 = 16 */
        {{5, 2, 2}, {5, 2, 2}, {1, 0, 0}},
        /* 15 = (1*3 + 2)*3 + 0: the memory's loop needs only 2 iterations,
         * so its end becomes 2: ((2-1)*3 + (3-1))*3 + 1 = 16 */
        {{3, 3, 3}, {3, 3, 2}, {1, 0, 0}},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        for (int l = 0; l < 3; l++)
            m.level[l].tfactor[P] = cases[i].end[l];
        ck_assert(nm_mapspace_fit_residuals(&e.ms, &m));
        for (int l = 0; l < 3; l++) {
            ck_assert_int_eq(m.level[l].tfactor[P], cases[i].fit[l]);
            ck_assert_int_eq(m.level[l].tresidual[P], cases[i].res[l]);
        }
    }
    nm_model mdl;
    ck_assert_int_eq(nm_model_init(&mdl, &e.spec.arch, &e.spec.wl, &err), NM_OK);
    static nm_stats st;
    ck_assert(nm_model_eval(&mdl, &m, &st, NULL));
    ck_assert_uint_eq(st.computes, 32 * 3 * 16);
    nm_model_fini(&mdl);
    /* a perfect factorization stays as it is */
    m.level[0].tfactor[P] = 4, m.level[1].tfactor[P] = 2, m.level[2].tfactor[P] = 2;
    m.level[0].tresidual[P] = 3;
    ck_assert(nm_mapspace_fit_residuals(&e.ms, &m));
    ck_assert_int_eq(m.level[0].tresidual[P], 0);
    ck_assert_int_eq(m.level[2].tfactor[P], 2);
    /* ends whose product is below the bound cover nothing */
    m.level[0].tfactor[P] = 2, m.level[1].tfactor[P] = 2, m.level[2].tfactor[P] = 2;
    ck_assert(!nm_mapspace_fit_residuals(&e.ms, &m));
    unload(&e);

    /* a spatial loop takes a residual too: on the 16x16 output-stationary
     * array, M = 128 as ends 1 (the PE's scratchpad), 12 (across the
     * array), 11 (memory): 127 = 10*12 + 7, the array's last instance
     * running 8 of its 12 PEs; the model takes it, computes all 128 */
    nm_spec spec;
    static nm_mapspace ms;
    load_arch(&spec, &ms, "simple/output_stationary.yaml", "search/r50_conv3_3x3.yaml");
    ck_assert_int_eq(nm_mapspace_enable_imperfect(&ms, &err), NM_OK);
    int M = -1, fan = -1, pe = -1, top = spec.arch.nlevels - 1;
    for (int d = 0; d < spec.wl.ndims; d++)
        if (!strcmp(spec.wl.dim[d], "M"))
            M = d;
    for (int l = 0; l < spec.arch.nlevels; l++) {
        if (spec.arch.level[l].fanoutX * spec.arch.level[l].fanoutY > 1)
            fan = l;
        if (!strcmp(spec.arch.level[l].name, "PsumScratchpad"))
            pe = l;
    }
    ck_assert(M >= 0 && fan > pe && pe >= 0);
    nm_point pt;
    int why_dim, why_level;
    memset(&pt, 0, sizeof pt);
    nm_mapspace_decode(&ms, &pt, &m, &why_dim, &why_level); /* the design's bypass */
    for (int l = 0; l < spec.arch.nlevels; l++)
        for (int d = 0; d < spec.wl.ndims; d++) {
            m.level[l].tfactor[d] = l == top ? spec.wl.bound[d] : 1;
            m.level[l].sfactor[d] = 1;
        }
    m.level[fan].sfactor[M] = 12, m.level[top].tfactor[M] = 11;
    ck_assert(nm_mapspace_fit_residuals(&ms, &m));
    ck_assert_int_eq(m.level[fan].sresidual[M], 8);
    ck_assert_int_eq(m.level[top].tfactor[M], 11);
    ck_assert_int_eq(m.level[top].tresidual[M], 0);
    uint64_t macs = 1;
    for (int d = 0; d < spec.wl.ndims; d++)
        macs *= (uint64_t)spec.wl.bound[d];
    ck_assert_int_eq(nm_model_init(&mdl, &spec.arch, &spec.wl, &err), NM_OK);
    int ok = nm_model_eval(&mdl, &m, &st, NULL);
    char why[512];
    nm_invalid_describe(&st.invalid, &spec.arch, &spec.wl, why, sizeof why);
    ck_assert_msg(ok, "%s", why);
    ck_assert_uint_eq(st.computes, macs);
    /* 3, 11, 4: 127 = (3*11 + 9)*3 + 1: the scratchpad's loop runs 2 in its
     * last instance, under the spatial M -- fitted, and the model rejects it */
    m.level[pe].tfactor[M] = 3, m.level[fan].sfactor[M] = 11, m.level[top].tfactor[M] = 4;
    ck_assert(nm_mapspace_fit_residuals(&ms, &m));
    ck_assert_int_eq(m.level[fan].sresidual[M], 10);
    ck_assert_int_eq(m.level[pe].tresidual[M], 2);
    ck_assert(!nm_model_eval(&mdl, &m, &st, NULL));
    ck_assert_int_eq(st.invalid.kind, NM_INV_RESIDUAL);
    /* 8, 16, 1: 127 = 15*8 + 7, whole on the array and perfect */
    m.level[pe].tfactor[M] = 8, m.level[fan].sfactor[M] = 16, m.level[top].tfactor[M] = 1;
    ck_assert(nm_mapspace_fit_residuals(&ms, &m));
    ck_assert_int_eq(m.level[pe].tresidual[M], 0);
    ck_assert_int_eq(m.level[fan].sresidual[M], 0);
    /* 9, 16, 1: 127 = 14*9 + 1; the outermost loop of M is the spatial
     * one, which needs only 15 of its 16: (15-1)*9 + 2 = 128 (a residual
     * under a spatial loop of its dimension, which the model rejects) */
    m.level[pe].tfactor[M] = 9;
    ck_assert(nm_mapspace_fit_residuals(&ms, &m));
    ck_assert_int_eq(m.level[fan].sfactor[M], 15);
    ck_assert_int_eq(m.level[pe].tfactor[M], 9);
    ck_assert_int_eq(m.level[pe].tresidual[M], 2);
    nm_model_fini(&mdl);
    nm_spec_fini(&spec);
}
END_TEST

/* Product of the spatial factors of level l along axis (0: X, 1: Y). */
static int64_t axis_product(const nm_mapping *m, int l, int ndims, int axis)
{
    int64_t p = 1;
    for (int i = 0; i < ndims; i++)
        if ((i < m->level[l].split) == !axis)
            p *= m->level[l].sfactor[m->level[l].sorder[i]];
    return p;
}

/* Fan-outs first (nm_mapspace_random_filled): every draw's factors multiply
 * to the bounds (the point's IDs encode what the fill chose), each fan-out
 * is full as far as the primes left over allow (no prime factor of a free
 * temporal loop of a dimension free to spread there would still fit on its
 * axis, within any <= bound), fixed factors stay fixed, and the fan-outs
 * are on average far fuller than uniform draws leave them. */
START_TEST(filled_draws_fill_fanouts)
{
    const char *designs[] = {"simple/output_stationary.yaml", "gpu/a100.yaml",
                             "systolic/tpu_v1.yaml", "eyeriss/eyeriss.yaml"};
    for (size_t di = 0; di < sizeof designs / sizeof *designs; di++) {
        nm_spec spec;
        static nm_mapspace ms;
        load_arch(&spec, &ms, designs[di], "search/r50_conv3_3x3.yaml");
        const nm_workload *wl = &spec.wl;
        nm_pcg32 rng;
        nm_pcg32_seed(&rng, 11, di);
        double used[2] = {0, 0};
        int nfan = 0;
        for (int s = 0; s < ms.nslots; s++)
            nfan += ms.slot[s].spatial;
        for (int i = 0; i < 4000; i++) {
            int filled = i & 1;
            nm_point pt;
            nm_mapping m;
            int wd, wlv;
            if (filled)
                nm_mapspace_random_filled(&ms, &rng, &pt);
            else
                nm_mapspace_random(&ms, &rng, &pt);
            nm_mapspace_decode(&ms, &pt, &m, &wd, &wlv);
            for (int d = 0; d < wl->ndims; d++) {
                int64_t f[NM_MAX_SLOTS], prod = 1;
                ck_assert(nm_mapspace_factors(&ms, d, pt.fid[d], f, NULL));
                for (int s = 0; s < ms.nslots; s++) {
                    prod *= f[s];
                    if (ms.dim[d].fixed[s])
                        ck_assert_int_eq(f[s], ms.dim[d].fixed[s]);
                }
                ck_assert_int_eq(prod, wl->bound[d]);
            }
            for (int s = 0; s < ms.nslots; s++) {
                int l = ms.slot[s].level;
                if (!ms.slot[s].spatial)
                    continue;
                const nm_level *L = &spec.arch.level[l];
                int64_t fan[2] = {L->fanoutX, L->fanoutY};
                int64_t got[2] = {axis_product(&m, l, wl->ndims, 0),
                                  axis_product(&m, l, wl->ndims, 1)};
                int fits = got[0] <= fan[0] && got[1] <= fan[1];
                if (fits) /* an overfull fan-out leaves the draw invalid: none used */
                    used[filled] += (double)(got[0] * got[1]) / (double)(fan[0] * fan[1]);
                if (!filled)
                    continue;
                ck_assert(fits);
                for (int d = 0; d < wl->ndims; d++) {
                    const nm_dim_space *ds = &ms.dim[d];
                    int free_here = 0;
                    for (int i2 = 0; i2 < ds->nfree; i2++)
                        free_here |= ds->free[i2] == s;
                    if (!free_here)
                        continue;
                    int axis = 1;
                    for (int k = 0; k < m.level[l].split; k++)
                        axis &= m.level[l].sorder[k] != d;
                    int64_t sf = m.level[l].sfactor[d];
                    for (int i2 = 0; i2 < ds->nfree; i2++) {
                        const nm_slot *t = &ms.slot[ds->free[i2]];
                        if (t->spatial)
                            continue;
                        int64_t tf = m.level[t->level].tfactor[d];
                        for (int p = 0; p < ds->nprimes; p++)
                            if (tf % ds->prime[p] == 0)
                                ck_assert_msg(got[axis] * ds->prime[p] > fan[axis] ||
                                                  (ds->hi[s] && sf * ds->prime[p] > ds->hi[s]),
                                              "%s, draw %d: %s's factor %lld at level %d would "
                                              "still fit on level %d's fan-out (%lld of %lld)",
                                              designs[di], i, wl->dim[d],
                                              (long long)ds->prime[p], t->level, l,
                                              (long long)got[axis], (long long)fan[axis]);
                    }
                }
            }
        }
        ck_assert_msg(used[1] > 1.5 * used[0], "%s: filled draws use %g of the fan-outs, "
                      "uniform ones %g", designs[di], used[1], used[0]);
        printf("filled_draws_fill_fanouts: %s: fan-outs in use %.3f filled, %.3f uniform\n",
               designs[di], used[1] / 2000 / nfan, used[0] / 2000 / nfan);
        nm_spec_fini(&spec);
    }
}
END_TEST

/* Each constraint form narrows the space as it says. */
START_TEST(constraint_forms)
{
    struct env e;
    load(&e, "search/conv1d_3level.yaml",
         "architecture_constraints:\n"
         "  targets:\n"
         "  - {target: RegisterFile, type: temporal, factors: R=3 K<=2, permutation: R}\n"
         "  - {target: GlobalBuffer, type: temporal, factors: P>=4}\n"
         "  - {target: RegisterFile, type: bypass, keep: [Weights], bypass: [Outputs]}\n");
    /* R fixed at the register file: the other two slots hold 1. */
    ck_assert_uint_eq(e.ms.dim[1].count, 1);
    ck_assert_int_eq(e.ms.level[0].nprefix, 1);
    ck_assert_int_eq(e.ms.nbypass, 4); /* RF: Inputs free; GB: all three */
    /* Every decoded point keeps the fixed ones; <= and >= are checked. */
    nm_pcg32 rng;
    nm_pcg32_seed(&rng, 1, 1);
    int ok_seen = 0, bad_seen = 0;
    for (int i = 0; i < 2000; i++) {
        nm_point pt;
        nm_mapping m;
        int wd, wl;
        nm_mapspace_random(&e.ms, &rng, &pt);
        int ok = nm_mapspace_decode(&e.ms, &pt, &m, &wd, &wl);
        ck_assert_int_eq(m.level[0].tfactor[1], 3);
        ck_assert(m.level[0].keep & 1u);
        ck_assert(!(m.level[0].keep & 4u));
        ck_assert_int_eq(m.level[0].torder[0], 1); /* R innermost at the RF */
        if (ok) {
            ck_assert_int_le(m.level[0].tfactor[0], 2);
            ck_assert_int_ge(m.level[1].tfactor[2], 4);
            ok_seen++;
            char why[512];
            ck_assert(nm_mapspace_check(&e.ms, &m, why, sizeof why));
        } else {
            bad_seen++;
        }
    }
    ck_assert_int_gt(ok_seen, 0);
    ck_assert_int_gt(bad_seen, 0);
    /* A mapping that breaks one names it and where it was written. */
    nm_mapping m;
    nm_point pt;
    memset(&pt, 0, sizeof pt);
    int wd, wl;
    nm_mapspace_decode(&e.ms, &pt, &m, &wd, &wl);
    m.level[0].tfactor[1] = 1;
    m.level[2].tfactor[1] = 3;
    char why[512];
    ck_assert(!nm_mapspace_check(&e.ms, &m, why, sizeof why));
    ck_assert_msg(strstr(why, "R=1") && strstr(why, "R=3") && strstr(why, "conv1d_3level.yaml:45:"),
                  "%s", why);
    unload(&e);
}
END_TEST

/* Utilization: the whole 2-PE fan-out under the main memory in use. */
START_TEST(utilization_constraint)
{
    struct env e;
    load(&e, "search/conv1d_small.yaml",
         "architecture_constraints:\n"
         "  targets:\n"
         "  - {target: MainMemory, type: utilization, min: 1.0}\n");
    nm_pcg32 rng;
    nm_pcg32_seed(&rng, 9, 9);
    int ok_seen = 0;
    for (int i = 0; i < 3000; i++) {
        nm_point pt;
        nm_mapping m;
        int wd, wl;
        nm_mapspace_random(&e.ms, &rng, &pt);
        if (!nm_mapspace_decode(&e.ms, &pt, &m, &wd, &wl))
            continue;
        int64_t used = 1;
        for (int d = 0; d < e.spec.wl.ndims; d++)
            used *= m.level[2].sfactor[d];
        ck_assert_int_eq(used, 2); /* both PEs of the 2-wide design */
        ok_seen++;
        char why[512];
        ck_assert(nm_mapspace_check(&e.ms, &m, why, sizeof why));
        /* The same mapping with the fan-out unused breaks it, by name. */
        for (int d = 0; d < e.spec.wl.ndims; d++) {
            m.level[1].tfactor[d] *= m.level[2].sfactor[d];
            m.level[2].sfactor[d] = 1;
        }
        ck_assert(!nm_mapspace_check(&e.ms, &m, why, sizeof why));
        ck_assert_msg(strstr(why, "uses 1 of its 2 spatial instances"), "%s", why);
        break;
    }
    ck_assert_int_gt(ok_seen, 0);
    unload(&e);
}
END_TEST

START_TEST(unsatisfiable_constraints_located)
{
    struct env e;
    nm_error err;
    ck_assert_int_eq(load_err(&e, "constraints:\n"
                                  "- {target: RegisterFile, type: temporal, factors: P=5}\n", &err),
                     NM_ERR_INPUT);
    ck_assert_int_eq(err.line, 44);
    ck_assert_ptr_nonnull(strstr(err.msg, "does not divide P = 16"));
    unload(&e);
    ck_assert_int_eq(load_err(&e, "constraints:\n"
                                  "- {target: MainMemory, type: bypass, bypass: [Inputs]}\n", &err),
                     NM_ERR_INPUT);
    ck_assert_ptr_nonnull(strstr(err.msg, "outermost level and must keep"));
    unload(&e);
    ck_assert_int_eq(load_err(&e, "constraints:\n"
                                  "- {target: RegisterFle, type: temporal, factors: P=1}\n", &err),
                     NM_ERR_INPUT);
    ck_assert_ptr_nonnull(strstr(err.msg, "did you mean 'RegisterFile'"));
    unload(&e);
    ck_assert_int_eq(load_err(&e, "constraints:\n"
                                  "- {target: RegisterFile, type: temporal, factors: P=2 P=4}\n", &err),
                     NM_ERR_INPUT);
    ck_assert_ptr_nonnull(strstr(err.msg, "fixed to"));
    unload(&e);
}
END_TEST

static void run_metric(struct env *e, const char *alg, int threads, uint64_t max_evals,
                       int metric, nm_search_result *res)
{
    nm_search_opts o;
    nm_search_opts_init(&o);
    if (metric >= 0)
        o.metric[0] = (nm_metric)metric;
    o.algorithm = alg;
    o.threads = threads;
    o.max_evals = max_evals;
    o.seed = 7;
    nm_error err;
    ck_assert_int_eq(nm_search_run(&e->ms, &o, res, &err), NM_OK);
}

static void run(struct env *e, const char *alg, int threads, uint64_t max_evals,
                nm_search_result *res)
{
    run_metric(e, alg, threads, max_evals, -1, res);
}

/* Brute force over every point of every sub-space, no pruning at all. */
static double brute_force_best(struct env *e)
{
    nm_model mdl;
    nm_error err;
    ck_assert_int_eq(nm_model_init(&mdl, &e->spec.arch, &e->spec.wl, &err), NM_OK);
    static nm_stats st;
    double best = INFINITY;
    uint64_t fcount[NM_MAX_DIMS], nperm[NM_MAX_LEVELS];
    unsigned __int128 total = 1;
    for (int d = 0; d < e->spec.wl.ndims; d++)
        total *= (fcount[d] = e->ms.dim[d].count);
    for (int l = 0; l < e->spec.arch.nlevels; l++) {
        uint64_t f = 1;
        for (int k = 2; k <= e->ms.level[l].nfree; k++)
            f *= (uint64_t)k;
        total *= (nperm[l] = f);
    }
    total <<= e->ms.nbypass;
    ck_assert((uint64_t)total < 2000000);
    for (uint64_t i = 0; i < (uint64_t)total; i++) {
        nm_point pt;
        memset(&pt, 0, sizeof pt);
        uint64_t r = i;
        for (int d = 0; d < e->spec.wl.ndims; d++) {
            pt.fid[d] = r % fcount[d];
            r /= fcount[d];
        }
        for (int l = 0; l < e->spec.arch.nlevels; l++) {
            pt.pid[l] = r % nperm[l];
            r /= nperm[l];
        }
        pt.bypass = r;
        nm_mapping m;
        int wd, wl;
        if (!nm_mapspace_decode(&e->ms, &pt, &m, &wd, &wl))
            continue;
        if (nm_model_eval(&mdl, &m, &st, NULL))
            best = fmin(best, st.energy * (double)st.cycles);
    }
    nm_model_fini(&mdl);
    return best;
}

static const char small_constraints[] =
    "architecture_constraints:\n"
    "  targets:\n"
    "  - {target: GlobalBuffer, type: bypass, keep: [Weights, Inputs, Outputs]}\n"
    "  - {target: RegisterFile, type: bypass, keep: [Weights, Inputs, Outputs]}\n";

/* Pruning never drops the optimum: exhaustive over distinct orders, optimal
 * with its bound, and brute force over every order agree. */
START_TEST(pruning_keeps_the_optimum)
{
    struct env e;
    load(&e, "search/conv1d_small.yaml", small_constraints);
    double brute = brute_force_best(&e);
    ck_assert(isfinite(brute));
    nm_search_result ex, opt;
    run(&e, "exhaustive", 1, 0, &ex);
    run(&e, "optimal", 2, 0, &opt);
    ck_assert(ex.found && opt.found);
    ck_assert_double_eq_tol(ex.best.score[0], brute, brute * 1e-12);
    ck_assert_double_eq_tol(opt.best.score[0], brute, brute * 1e-12);
    ck_assert(opt.proven_optimal);
    ck_assert(!ex.proven_optimal);
    ck_assert_str_eq(ex.stopped_by, "the whole space searched");
    nm_search_result_fini(&ex);
    nm_search_result_fini(&opt);
    unload(&e);
}
END_TEST

/* The hill climbing after a random search: never worse than the search
 * alone, the same mapping on any number of threads, and it does move. */
START_TEST(refine_climbs)
{
    struct env e;
    load(&e, "search/conv1d_3level.yaml", NULL);
    nm_search_opts o;
    nm_error err;
    nm_search_result plain, one, two;
    nm_search_opts_init(&o);
    o.seed = 3;
    o.max_evals = 3000; /* a short search leaves room to climb */
    o.refine = 0;
    ck_assert_int_eq(nm_search_run(&e.ms, &o, &plain, &err), NM_OK);
    ck_assert_uint_eq(plain.refined, 0);
    o.refine = 1;
    ck_assert_int_eq(nm_search_run(&e.ms, &o, &one, &err), NM_OK);
    o.threads = 2;
    ck_assert_int_eq(nm_search_run(&e.ms, &o, &two, &err), NM_OK);
    ck_assert(plain.found && one.found && two.found);
    ck_assert_uint_gt(one.refined, 0);
    ck_assert(one.best.score[0] < plain.best.score[0]);
    ck_assert_double_eq(one.best.score[0], two.best.score[0]);
    ck_assert(!memcmp(&one.best.map, &two.best.map, sizeof one.best.map));
    ck_assert_uint_eq(one.refined, two.refined);
    char why[256];
    ck_assert_msg(nm_mapspace_check(&e.ms, &one.best.map, why, sizeof why), "%s", why);
    nm_search_result_fini(&plain);
    nm_search_result_fini(&one);
    nm_search_result_fini(&two);
    unload(&e);
}
END_TEST

/* nm_mapspace_fill by hand: one MAC fills 1; the 2x4 array under no
 * constraints fills all 8 (K = 8 across it); with K and P kept off the
 * fan-out only R = 3 spreads (along X, 4 wide); with R fixed at 1 there
 * too, nothing does. */
START_TEST(fill_by_hand)
{
    struct env e;
    load(&e, "search/conv1d_3level.yaml", NULL);
    ck_assert_uint_eq(nm_mapspace_fill(&e.ms, 1000), 1);
    unload(&e);
    load(&e, "search/conv1d_links.yaml", NULL);
    ck_assert_uint_eq(nm_mapspace_fill(&e.ms, 1000), 8);
    unload(&e);
    load(&e, "search/conv1d_links.yaml",
         "mapspace_constraints:\n- {target: GlobalBuffer, type: spatial, factors: K=1 P=1}\n");
    ck_assert_uint_eq(nm_mapspace_fill(&e.ms, 1000), 3);
    unload(&e);
    load(&e, "search/conv1d_links.yaml",
         "mapspace_constraints:\n- {target: GlobalBuffer, type: spatial, factors: K=1 P=1 R=1}\n");
    ck_assert_uint_eq(nm_mapspace_fill(&e.ms, 1000), 1);
    unload(&e);
    /* a budget too small to finish says nothing */
    load(&e, "search/conv1d_links.yaml", NULL);
    ck_assert_uint_eq(nm_mapspace_fill(&e.ms, 0), 0);
    unload(&e);
}
END_TEST

/* nm_search_legalize: a mapping whose register-file tile holds the whole
 * problem is shrunk until it fits, one whose factors multiply to another
 * bound is cut to this one's, one of other levels is refused. */
START_TEST(legalize_repairs)
{
    struct env e;
    load(&e, "search/conv1d_3level.yaml", NULL);
    nm_model mdl;
    nm_error err;
    ck_assert_int_eq(nm_model_init(&mdl, &e.spec.arch, &e.spec.wl, &err), NM_OK);
    static nm_stats st;
    nm_mapping m;
    nm_mapping_init(&m, &e.spec.arch, &e.spec.wl);
    for (int d = 0; d < e.spec.wl.ndims; d++)
        m.level[0].tfactor[d] = e.spec.wl.bound[d]; /* everything in the register file */
    ck_assert(!nm_model_eval(&mdl, &m, &st, NULL));
    ck_assert_int_eq(st.invalid.kind, NM_INV_CAPACITY);
    ck_assert(nm_search_legalize(&e.ms, &mdl, &m));
    ck_assert(nm_model_eval(&mdl, &m, &st, NULL));
    char why[256];
    ck_assert_msg(nm_mapspace_check(&e.ms, &m, why, sizeof why), "%s", why);
    /* another workload's bound: K = 64 where this one has 32, P = 5 where it has 16 */
    nm_mapping_init(&m, &e.spec.arch, &e.spec.wl);
    int K = 0, P = 2;
    m.level[2].tfactor[K] = 8;
    m.level[0].tfactor[K] = 8;
    m.level[1].tfactor[P] = 5;
    ck_assert(nm_search_legalize(&e.ms, &mdl, &m));
    for (int d = 0; d < e.spec.wl.ndims; d++) {
        int64_t prod = 1;
        for (int l = 0; l < e.spec.arch.nlevels; l++)
            prod *= m.level[l].tfactor[d] * m.level[l].sfactor[d];
        ck_assert_int_eq(prod, e.spec.wl.bound[d]);
    }
    ck_assert_int_eq(m.level[0].tfactor[K], 8); /* the inner tiles kept where they fit */
    ck_assert(nm_model_eval(&mdl, &m, &st, NULL));
    m.nlevels = 2; /* another design's levels */
    ck_assert(!nm_search_legalize(&e.ms, &mdl, &m));
    nm_model_fini(&mdl);
    unload(&e);
}
END_TEST

/* Warm starts: the best of the whole space given as a warm start comes
 * back (a chain never ends worse than it starts), a cheap search with it
 * is never worse than without it, the result does not depend on the
 * threads, and the effort scales the budget. */
START_TEST(warm_starts_and_effort)
{
    struct env e;
    load(&e, "search/conv1d_3level.yaml", NULL);
    nm_search_result ex, cold, warm1, warm2, full;
    run(&e, "exhaustive", 2, 0, &ex);
    nm_search_opts o;
    nm_error err;
    nm_search_opts_init(&o);
    o.seed = 5;
    o.effort = 0.01;
    ck_assert_int_eq(nm_search_run(&e.ms, &o, &cold, &err), NM_OK);
    o.warm = &ex.best.map;
    o.nwarm = 1;
    ck_assert_int_eq(nm_search_run(&e.ms, &o, &warm1, &err), NM_OK);
    o.threads = 2;
    ck_assert_int_eq(nm_search_run(&e.ms, &o, &warm2, &err), NM_OK);
    ck_assert(ex.found && cold.found && warm1.found);
    ck_assert_double_eq(warm1.best.score[0], ex.best.score[0]);
    ck_assert(warm1.best.score[0] <= cold.best.score[0]);
    ck_assert(!memcmp(&warm1.best.map, &warm2.best.map, sizeof warm1.best.map));
    ck_assert_uint_eq(warm1.refined, warm2.refined);
    ck_assert_uint_gt(warm1.refined, cold.refined); /* its chain ran too */
    o.warm = NULL;
    o.nwarm = 0;
    o.effort = 0.1; /* ten times the budget (the whole one is slow under ASan) */
    ck_assert_int_eq(nm_search_run(&e.ms, &o, &full, &err), NM_OK);
    printf("warm_starts_and_effort: effort 0.01: %llu proposed, %llu refined; 0.1: %llu, %llu\n",
           (unsigned long long)cold.proposed, (unsigned long long)cold.refined,
           (unsigned long long)full.proposed, (unsigned long long)full.refined);
    ck_assert_uint_gt(full.refined, 5 * cold.refined);
    ck_assert_uint_ge(full.proposed, cold.proposed);
    nm_search_result_fini(&ex);
    nm_search_result_fini(&cold);
    nm_search_result_fini(&warm1);
    nm_search_result_fini(&warm2);
    nm_search_result_fini(&full);
    unload(&e);
}
END_TEST

/* nm_bound_sum: for random layers (each scoring at least its bound, and
 * at least its roofline in energy and cycles) the combined bound never
 * exceeds the metric of the totals; it is tight when every layer sits on
 * its bound with the same energy-to-cycles ratio (Cauchy-Schwarz's
 * equality); for energy and delay it is the plain sum. */
START_TEST(bound_sum_is_admissible)
{
    nm_pcg32 rng;
    nm_pcg32_seed(&rng, 11, 1);
    static const nm_metric ms[] = {NM_MET_ENERGY, NM_MET_DELAY, NM_MET_EDP, NM_MET_ED2P};
    for (int trial = 0; trial < 4000; trial++) {
        nm_metric m = ms[trial % 4];
        nm_bound_sum b;
        nm_bound_sum_init(&b, m);
        double E = 0, C = 0, naive = 0;
        int n = 1 + (int)nm_pcg32_bounded(&rng, 5);
        for (int i = 0; i < n; i++) {
            double k = 1 + nm_pcg32_bounded(&rng, 3);
            nm_roofline r;
            memset(&r, 0, sizeof r);
            r.energy_pj = 1 + nm_pcg32_bounded(&rng, 1000);
            r.bound_cycles = 1 + nm_pcg32_bounded(&rng, 1000);
            double e = r.energy_pj * (1 + nm_pcg32_bounded(&rng, 100) / 25.0);
            double c = r.bound_cycles * (1 + nm_pcg32_bounded(&rng, 100) / 25.0);
            double score = nm_metric_value(m, e, c, 0);
            double lb = score * (1 + nm_pcg32_bounded(&rng, 100)) / 101.0;
            nm_bound_sum_add(&b, k, &r, lb);
            E += k * e;
            C += k * c;
            naive += k * lb;
        }
        double total = nm_metric_value(m, E, C, 0), v = nm_bound_sum_value(&b);
        ck_assert_msg(v <= total * (1 + 1e-12), "metric %d: bound %g above %g", m, v, total);
        ck_assert(v > 0);
        if (m == NM_MET_ENERGY || m == NM_MET_DELAY)
            ck_assert_double_eq_tol(v, naive, 1e-9 * naive);
    }
    /* tight: two layers on their bounds, energy twice the cycles in each */
    nm_bound_sum b;
    nm_bound_sum_init(&b, NM_MET_EDP);
    nm_roofline r;
    memset(&r, 0, sizeof r);
    nm_bound_sum_add(&b, 1, &r, 2.0 * 3 * 3);   /* E 6, C 3 */
    nm_bound_sum_add(&b, 2, &r, 2.0 * 5 * 5);   /* E 10, C 5, twice */
    ck_assert_double_eq_tol(nm_bound_sum_value(&b), (6 + 20.0) * (3 + 10.0), 1e-9);
}
END_TEST

/* optimal starts from the default search's best: stopped at once it
 * returns that search's best (never worse), with a proven bound below. */
START_TEST(optimal_warm_start)
{
    struct env e;
    load(&e, "search/conv1d_3level.yaml", NULL);
    nm_search_result warm, opt;
    /* the warm start's own budget: half as many candidates as outer points */
    run(&e, "hybrid", 2, nm_mapspace_outer_count(&e.ms) / 2 + 1, &warm);
    run(&e, "optimal", 2, 1, &opt);
    ck_assert(warm.found && opt.found);
    ck_assert(!opt.proven_optimal);
    ck_assert_double_eq(opt.best.score[0], warm.best.score[0]);
    ck_assert(opt.lower_bound > 0 && opt.lower_bound <= opt.best.score[0]);
    ck_assert_uint_ge(opt.proposed, warm.proposed); /* its candidates are counted */
    nm_search_result_fini(&warm);
    nm_search_result_fini(&opt);
    unload(&e);
}
END_TEST

/* On the full 3-level space (free bypass), optimal proves what exhaustive
 * finds by enumerating everything. */
START_TEST(optimal_matches_exhaustive)
{
    struct env e;
    load(&e, "search/conv1d_3level.yaml", NULL);
    nm_search_result ex, opt;
    run(&e, "exhaustive", 2, 0, &ex);
    run(&e, "optimal", 2, 0, &opt);
    ck_assert(opt.proven_optimal);
    ck_assert_double_eq(ex.best.score[0], opt.best.score[0]);
    ck_assert_uint_gt(opt.pruned, 0); /* the bound did cut factorizations */
    ck_assert_uint_lt(opt.evaluated, ex.evaluated);
    nm_search_result_fini(&ex);
    nm_search_result_fini(&opt);
    unload(&e);
}
END_TEST

/* Same seed and budget: the same best mapping on 1, 2 or 3 threads. */
START_TEST(threads_do_not_change_the_result)
{
    static const char *const algs[] = {"random", "hybrid", "random_pruned", "exhaustive"};
    struct env e;
    load(&e, "search/conv1d_3level.yaml", NULL);
    for (int a = 0; a < 4; a++) {
        nm_search_result r1, r2, r3;
        run(&e, algs[a], 1, 20000, &r1);
        run(&e, algs[a], 2, 20000, &r2);
        run(&e, algs[a], 3, 20000, &r3);
        ck_assert(r1.found);
        ck_assert_uint_eq(r1.proposed, r2.proposed);
        ck_assert_uint_eq(r1.proposed, r3.proposed);
        ck_assert_uint_eq(r1.valid, r2.valid);
        ck_assert_uint_eq(r1.best.index, r2.best.index);
        ck_assert_uint_eq(r1.best.index, r3.best.index);
        ck_assert_double_eq(r1.best.energy, r2.best.energy);
        ck_assert(!memcmp(&r1.best.map, &r2.best.map, sizeof r1.best.map));
        ck_assert(!memcmp(&r1.best.map, &r3.best.map, sizeof r1.best.map));
        ck_assert_int_eq(r1.ntop, r2.ntop);
        for (int i = 0; i < r1.ntop; i++)
            ck_assert_uint_eq(r1.top[i].index, r2.top[i].index);
        nm_search_result_fini(&r1);
        nm_search_result_fini(&r2);
        nm_search_result_fini(&r3);
    }
    unload(&e);
}
END_TEST

START_TEST(termination_rules)
{
    struct env e;
    load(&e, "search/conv1d_3level.yaml", NULL);
    nm_search_opts o;
    nm_error err;
    nm_search_result r;

    nm_search_opts_init(&o);
    o.refine = o.fill = 0; /* Timeloop's give-up rules, as Timeloop runs them */
    o.algorithm = "random";
    o.victory_set = 1; /* no give-up rule: the budget alone ends it */
    o.timeout_set = 1;
    o.max_evals = 1234;
    ck_assert_int_eq(nm_search_run(&e.ms, &o, &r, &err), NM_OK);
    ck_assert_uint_eq(r.proposed, 1234);
    ck_assert_ptr_nonnull(strstr(r.stopped_by, "evaluation budget"));
    nm_search_result_fini(&r);

    nm_search_opts_init(&o);
    o.refine = o.fill = 0;
    o.algorithm = "random";
    o.victory_set = 1;
    o.timeout_set = 1;
    o.search_size = 777;
    ck_assert_int_eq(nm_search_run(&e.ms, &o, &r, &err), NM_OK);
    ck_assert_uint_eq(r.valid, 777);
    ck_assert_ptr_nonnull(strstr(r.stopped_by, "search size"));
    nm_search_result_fini(&r);

    nm_search_opts_init(&o);
    o.refine = o.fill = 0;
    o.algorithm = "hybrid";
    o.victory = 50;
    o.victory_set = 1;
    ck_assert_int_eq(nm_search_run(&e.ms, &o, &r, &err), NM_OK);
    ck_assert_ptr_nonnull(strstr(r.stopped_by, "victory"));
    /* The last 50 valid candidates did not improve on the best. */
    ck_assert_uint_le(r.best.index + 50, r.proposed);
    nm_search_result_fini(&r);

    /* One lane: each draw is tried with all 64 bypass choices of this
     * space, and only a draw's first candidate counts toward victory (as
     * in Timeloop), so at least 49 whole sweeps follow the best's draw. */
    nm_search_opts_init(&o);
    o.refine = o.fill = 0;
    o.algorithm = "random";
    o.lanes = 1;
    o.victory = 50;
    o.victory_set = 1;
    ck_assert_int_eq(nm_search_run(&e.ms, &o, &r, &err), NM_OK);
    ck_assert_ptr_nonnull(strstr(r.stopped_by, "victory"));
    ck_assert_uint_ge(r.proposed, (r.best.index / 64 + 50) * 64 - 63);
    nm_search_result_fini(&r);
    /* Counting every candidate (penalize_consecutive_bypass_fails) ends
     * sooner; four lanes each need their own 50. */
    o.penalize_bypass = 1;
    ck_assert_int_eq(nm_search_run(&e.ms, &o, &r, &err), NM_OK);
    uint64_t one_lane = r.valid;
    ck_assert_uint_le(r.best.index + 50, r.proposed);
    nm_search_result_fini(&r);
    o.lanes = 4;
    ck_assert_int_eq(nm_search_run(&e.ms, &o, &r, &err), NM_OK);
    ck_assert_ptr_nonnull(strstr(r.stopped_by, "each of 4 lanes"));
    ck_assert_uint_ge(r.valid, 4 * 50);
    ck_assert_uint_gt(r.valid, one_lane);
    nm_search_result_fini(&r);

    /* optimal stopped early: not proven, but the gap is bounded. */
    nm_search_opts_init(&o);
    o.refine = o.fill = 0;
    o.algorithm = "optimal";
    o.max_evals = 5000;
    ck_assert_int_eq(nm_search_run(&e.ms, &o, &r, &err), NM_OK);
    ck_assert(!r.proven_optimal);
    ck_assert(r.found);
    ck_assert(isfinite(r.lower_bound));
    ck_assert(r.lower_bound > 0 && r.lower_bound <= r.best.score[0]);
    double stopped_best = r.best.score[0], stopped_bound = r.lower_bound;
    nm_search_result_fini(&r);
    o.max_evals = 0;
    ck_assert_int_eq(nm_search_run(&e.ms, &o, &r, &err), NM_OK);
    ck_assert(r.proven_optimal);
    ck_assert(r.best.score[0] <= stopped_best);
    ck_assert(r.best.score[0] >= stopped_bound); /* the bound held */
    nm_search_result_fini(&r);

    volatile sig_atomic_t stop = 1;
    nm_search_opts_init(&o);
    o.refine = o.fill = 0;
    o.algorithm = "random";
    o.victory_set = 1; /* nothing but the interruption ends it */
    o.timeout_set = 1;
    o.stop = &stop;
    ck_assert_int_eq(nm_search_run(&e.ms, &o, &r, &err), NM_OK);
    ck_assert_str_eq(r.stopped_by, "interrupted");
    ck_assert(r.found); /* the first round's best is still reported */
    nm_search_result_fini(&r);
    unload(&e);

    /* Nothing fits: every candidate is invalid; timeout ends it. */
    load(&e, "search/conv1d_3level.yaml",
         "constraints:\n- {target: RegisterFile, type: bypass, keep: [Weights, Inputs, Outputs]}\n"
         "- {target: RegisterFile, type: temporal, factors: P=16 K=32}\n");
    nm_search_opts_init(&o);
    o.refine = o.fill = 0;
    o.algorithm = "random";
    o.timeout = 300;
    o.timeout_set = 1;
    o.lanes = 1;
    ck_assert_int_eq(nm_search_run(&e.ms, &o, &r, &err), NM_OK);
    ck_assert(!r.found);
    ck_assert_uint_eq(r.proposed, 300);
    ck_assert_uint_eq(r.invalid[NM_INV_CAPACITY], 300);
    nm_search_result_fini(&r);
    o.lanes = 3; /* each lane gives up on its own */
    ck_assert_int_eq(nm_search_run(&e.ms, &o, &r, &err), NM_OK);
    ck_assert_uint_eq(r.proposed, 900);
    ck_assert_ptr_nonnull(strstr(r.stopped_by, "each of 3 lanes"));
    nm_search_result_fini(&r);
    /* Unset, the timeout is Timeloop's default: 1000 invalid in a row. */
    nm_search_opts_init(&o);
    o.refine = o.fill = 0;
    o.algorithm = "random";
    o.lanes = 2;
    ck_assert_int_eq(nm_search_run(&e.ms, &o, &r, &err), NM_OK);
    ck_assert_uint_eq(r.proposed, 2000);
    ck_assert_ptr_nonnull(strstr(r.stopped_by, "timeout"));
    nm_search_result_fini(&r);
    unload(&e);
}
END_TEST

/* The shared mapper inputs (beside the conformance corpus). */
static const char *const mapper_designs[] = {"eyeriss_like", "simba_like",
                                             "simple_weight_stationary",
                                             "simple_output_stationary"};

/* Loads mapper input k and its mapspace; NULL (and a line saying so) when
 * the input is not there. */
static nm_mapspace *load_mapper(int k, const char *test, nm_spec *spec)
{
    const char *corpus = getenv("NESTMAP_CONFORMANCE");
    char path[1024];
    snprintf(path, sizeof path, "%s/../mapper/%s/input.yaml",
             corpus && *corpus ? corpus : "../shared/conformance", mapper_designs[k]);
    FILE *f = fopen(path, "rb");
    if (!f) {
        printf("%s: %s not found; checking the test designs only\n", test, path);
        return NULL;
    }
    fclose(f);
    nm_error err;
    const char *files[] = {path};
    ck_assert_int_eq(nm_spec_load(spec, files, 1, NM_NEED_ARCH | NM_NEED_PROBLEM, &err), NM_OK);
    nm_mapspace *ms = nm_calloc(1, sizeof *ms);
    ck_assert_int_eq(nm_mapspace_init(ms, &spec->arch, &spec->wl, spec->constraints,
                                      spec->constraints2, &err), NM_OK);
    return ms;
}

/* The default search (the input's own mapper settings: random, then the
 * iterated local search) finds the eyeriss-like input's optimum, proven by
 * `optimal` (bench/bench_optimal.sh; EDP 3.607868638901e12 pJ x cycles),
 * from several seeds: the chains' kicks leave the local optima that
 * a plain climb stops in (the climb alone gave 3.6112e12, 3.6112e12 and
 * 3.6268e12 for seeds 0-2). */
START_TEST(default_search_finds_optimum)
{
    nm_spec spec;
    nm_mapspace *ms = load_mapper(0, "default_search_finds_optimum", &spec);
    if (!ms)
        return;
    for (uint64_t seed = 0; seed < 3; seed++) {
        nm_search_opts o;
        nm_error err;
        nm_search_opts_init(&o);
        ck_assert_int_eq(nm_search_opts_parse(&o, spec.mapper, &err), NM_OK);
        o.seed = seed;
        o.threads = 2;
        static nm_search_result r;
        ck_assert_int_eq(nm_search_run(ms, &o, &r, &err), NM_OK);
        ck_assert(r.found);
        ck_assert_msg(fabs(r.best.score[0] / 3.607868638901e12 - 1) < 1e-9,
                      "seed %llu: EDP %.12g, not the optimum 3.607868638901e12",
                      (unsigned long long)seed, r.best.score[0]);
        nm_search_result_fini(&r);
    }
    nm_free(ms);
    nm_spec_fini(&spec);
}
END_TEST

/* The default search as a design of arch/ sets it (its mapper: settings),
 * with EDP as the metric, on 2 threads. */
static void design_opts(const nm_spec *spec, uint64_t seed, nm_search_opts *o)
{
    nm_error err;
    nm_search_opts_init(o);
    ck_assert_int_eq(nm_search_opts_parse(o, spec->mapper, &err), NM_OK);
    o->metric[0] = NM_MET_EDP;
    o->nmetrics = 1;
    o->seed = seed;
    o->threads = 2;
}

/* The chains start from the best of different shapes (shape_of in
 * search.c), whatever --top asks to be listed: MobileNet-v1's dw4 on the
 * A100 has two optima of different shapes (keep the inputs in the L2 and
 * spread channels over the threads, or bypass the L2 and spread rows over
 * the SMs); seeds 0 and 2 stopped at the worse (EDP 8.7261e10 pJ x cycles)
 * when the chains started from the eight best mappings, all of one valley,
 * and a search with 20 times the budget finds none better than 8.2800e10 (8.28007e10 with the built-in
 * leakage since).  That one took more of a fan-out's side than one instance
 * has (the climb's moves were checked against the whole mesh only; now
 * nm_mapspace_check holds them to each fan-out's X and Y): the best within
 * the fan-outs is 8.28529e10, and --effort 20 (seed 1) finds none better. */
START_TEST(default_search_crosses_shapes)
{
    nm_spec spec;
    nm_error err;
    static nm_mapspace ms;
    load_arch(&spec, &ms, "gpu/a100.yaml", "search/mbv1_dw4.yaml");
    const struct { uint64_t seed; int topk; } runs[] = {{0, 10}, {2, 10}, {2, 0}};
    for (size_t i = 0; i < sizeof runs / sizeof *runs; i++) {
        nm_search_opts o;
        design_opts(&spec, runs[i].seed, &o);
        o.topk = runs[i].topk;
        static nm_search_result r;
        ck_assert_int_eq(nm_search_run(&ms, &o, &r, &err), NM_OK);
        ck_assert(r.found);
        ck_assert_msg(fabs(r.best.score[0] / 8.28528873438e10 - 1) < 1e-9,
                      "seed %llu, top %d: EDP %.12g, not 8.28528873438e10",
                      (unsigned long long)runs[i].seed, runs[i].topk, r.best.score[0]);
        nm_search_result_fini(&r);
    }
    nm_spec_fini(&spec);
}
END_TEST

/* The default search draws every other point fan-outs first: on the 16x16
 * output-stationary array with ResNet-50's 28x28 3x3 layer, uniform draws
 * alone left seeds 0, 1 and 3 at EDP 2.9553e14 pJ x cycles (95.5 % of the
 * array in use), a local optimum three coordinated moves from the best any
 * search has found, 2.7015e14 (100 %; 2.7021e14 with the built-in leakage
 * since); filled draws start a chain near it. */
START_TEST(default_search_fills_fanouts)
{
    nm_spec spec;
    static nm_mapspace ms;
    load_arch(&spec, &ms, "simple/output_stationary.yaml", "search/r50_conv3_3x3.yaml");
    for (uint64_t seed = 0; seed < 2; seed++) {
        nm_search_opts o;
        design_opts(&spec, seed, &o);
        nm_error err;
        static nm_search_result r;
        ck_assert_int_eq(nm_search_run(&ms, &o, &r, &err), NM_OK);
        ck_assert(r.found);
        ck_assert_msg(fabs(r.best.score[0] / 2.7021261121215e14 - 1) < 1e-9,
                      "seed %llu: EDP %.12g, not 2.7021261121215e14", (unsigned long long)seed,
                      r.best.score[0]);
        nm_search_result_fini(&r);
    }
    nm_spec_fini(&spec);
}
END_TEST

/* The default search on a design and layer (seed 0, 2 threads), without
 * residual factors and then with them; the best with residuals must
 * re-evaluate to the same energy and cycles.  The caller frees both. */
static void perfect_then_imperfect(const char *design, const char *layer, nm_spec *spec,
                                   nm_search_result *perfect, nm_search_result *imperfect)
{
    static nm_mapspace ms;
    load_arch(spec, &ms, design, layer);
    nm_search_opts o;
    design_opts(spec, 0, &o);
    nm_error err;
    ck_assert_int_eq(nm_search_run(&ms, &o, perfect, &err), NM_OK);
    ck_assert_int_eq(nm_mapspace_enable_imperfect(&ms, &err), NM_OK);
    ck_assert_int_eq(nm_search_run(&ms, &o, imperfect, &err), NM_OK);
    ck_assert(perfect->found && imperfect->found);
    nm_model mdl;
    ck_assert_int_eq(nm_model_init(&mdl, &spec->arch, &spec->wl, &err), NM_OK);
    static nm_stats st;
    ck_assert(nm_model_eval(&mdl, &imperfect->best.map, &st, NULL));
    ck_assert_double_eq(st.energy, imperfect->best.energy);
    ck_assert_uint_eq(st.cycles, (uint64_t)imperfect->best.cycles);
    nm_model_fini(&mdl);
}

/* With residual factors enabled the default search runs as it would
 * without them (the same draws and chains: the same candidates, valid
 * mappings and best so far), then climbs on in the enlarged space: never
 * worse, and on NVDLA-small with LLaMA-7B's FFN down projection (C =
 * 11008 = 2^8 x 43) better by more than 10 %, with a mapping that has
 * residuals and evaluates again to the same figures. */
START_TEST(imperfect_search_climbs_on)
{
    nm_spec spec;
    static nm_search_result perfect, imperfect;
    perfect_then_imperfect("nvdla/nv_small.yaml", "search/llama7b_ffn_down.yaml", &spec,
                           &perfect, &imperfect);
    ck_assert_uint_eq(imperfect.proposed, perfect.proposed);
    ck_assert_uint_eq(imperfect.valid, perfect.valid);
    ck_assert_uint_gt(imperfect.refined, perfect.refined);
    ck_assert_msg(imperfect.best.score[0] < 0.9 * perfect.best.score[0],
                  "EDP %.6g with residuals, %.6g without", imperfect.best.score[0],
                  perfect.best.score[0]);
    ck_assert(nm_mapping_imperfect(&imperfect.best.map, spec.wl.ndims));
    nm_model mdl;
    nm_error err;
    ck_assert_int_eq(nm_model_init(&mdl, &spec.arch, &spec.wl, &err), NM_OK);
    static nm_stats st;
    ck_assert(nm_model_eval(&mdl, &imperfect.best.map, &st, NULL));
    ck_assert_uint_eq(st.computes, UINT64_C(11008) * 4096 * 2048);
    nm_model_fini(&mdl);
    nm_search_result_fini(&perfect);
    nm_search_result_fini(&imperfect);
    nm_spec_fini(&spec);
}
END_TEST

/* The residual moves on an array whose axes are already full: on the A100
 * (SMs by threads) with MobileNet-v1's dw4, the end that would fill a
 * fan-out's axis can be 0 (the other loops there fill it); the move must
 * skip it, not divide by it (it crashed the search with --imperfect).  The
 * search ends with residuals no worse than without, and re-evaluates. */
START_TEST(imperfect_search_full_axes)
{
    nm_spec spec;
    static nm_search_result perfect, imperfect;
    perfect_then_imperfect("gpu/a100.yaml", "search/mbv1_dw4.yaml", &spec, &perfect,
                           &imperfect);
    ck_assert(imperfect.best.score[0] <= perfect.best.score[0]);
    nm_search_result_fini(&perfect);
    nm_search_result_fini(&imperfect);
    nm_spec_fini(&spec);
}
END_TEST

/* One of the local search's moves on m, at random: a prime factor of a
 * temporal loop moved to another level, or two loops of a level's order
 * swapped (perfect factors stay perfect; a mapping made too big for a
 * buffer is simply invalid, warm and cold alike). */
static void random_move(nm_pcg32 *rng, nm_mapping *m, int ndims)
{
    int a = (int)nm_pcg32_bounded(rng, (uint32_t)m->nlevels);
    int d = (int)nm_pcg32_bounded(rng, (uint32_t)ndims);
    nm_level_map *la = &m->level[a];
    if (nm_pcg32_bounded(rng, 3) == 0 || la->tfactor[d] < 2 || la->tresidual[d]) {
        int i = (int)nm_pcg32_bounded(rng, (uint32_t)ndims);
        int j = (int)nm_pcg32_bounded(rng, (uint32_t)ndims);
        int8_t x = la->torder[i];
        la->torder[i] = la->torder[j];
        la->torder[j] = x;
        return;
    }
    int64_t p = 2;
    while (la->tfactor[d] % p)
        p++;
    int b = (a + 1 + (int)nm_pcg32_bounded(rng, (uint32_t)(m->nlevels - 1))) % m->nlevels;
    if (m->level[b].tresidual[d])
        return;
    la->tfactor[d] /= p;
    m->level[b].tfactor[d] *= p;
}

/* Runs of mappings evaluated on one model (the nest analysis carries over
 * what the previous mapping left) give exactly what each gives from
 * scratch: the orders of spread outer points in enumeration order (as the
 * census and exhaustive search walk them), then random mappings (as the
 * other searches draw them), alternating, and after each random one a run
 * of its neighbours (as the climb tries them: one move from a base that
 * now and then takes a move).  Returns the mappings compared. */
/* m evaluated on the warm model and, from scratch, on the cold one: the
 * same validity, energy, cycles and accesses of every level and tensor
 * (what: the mapping, in the failure message).  Returns whether m is valid. */
static int warm_equals_cold(nm_model *warm, nm_model *cold, const nm_mapping *m, const char *what)
{
    static nm_stats a, b;
    const nm_arch *arch = warm->arch;
    const nm_workload *wl = warm->wl;
    nm_model_forget(cold);
    int va = nm_model_eval(warm, m, &a, NULL), vb = nm_model_eval(cold, m, &b, NULL);
    ck_assert_int_eq(va, vb);
    if (!va)
        return 0;
    ck_assert_msg(a.energy == b.energy && a.cycles == b.cycles,
                  "%s: warm %.17g pJ %llu cycles, cold %.17g pJ %llu cycles", what, a.energy,
                  (unsigned long long)a.cycles, b.energy, (unsigned long long)b.cycles);
    for (int s = 0; s < arch->nlevels; s++)
        for (int ds = 0; ds < wl->nds; ds++) {
            const nm_ds_stats *x = &a.level[s].ds[ds], *y = &b.level[s].ds[ds];
            ck_assert_msg(x->reads == y->reads && x->fills == y->fills &&
                              x->updates == y->updates,
                          "%s: %s %s differ", what, arch->level[s].name, wl->ds[ds].name);
        }
    return 1;
}

static int warm_vs_cold(const nm_mapspace *ms, const char *label, uint64_t seed, int nruns)
{
    const nm_arch *arch = ms->arch;
    const nm_workload *wl = ms->wl;
    nm_model warm, cold;
    nm_error err;
    ck_assert_int_eq(nm_model_init(&warm, arch, wl, &err), NM_OK);
    ck_assert_int_eq(nm_model_init(&cold, arch, wl, &err), NM_OK);
    static nm_stats a;
    char what[160];
    nm_pcg32 rng;
    nm_pcg32_seed(&rng, seed, 11);
    uint64_t outer = nm_mapspace_outer_count(ms);
    int compared = 0;
    for (int point = 0, runs = 0; point < 50 * nruns && runs < nruns; point++) {
        /* a valid outer point's orders in a row ... */
        nm_mapping base, m;
        uint64_t o = outer ? nm_pcg32_bounded64(&rng, outer) : 0;
        int ok = outer && nm_mapspace_outer(ms, o, &base) > 0 &&
                 nm_model_precheck(&warm, &base, &a);
        uint64_t orders = ok ? nm_mapspace_orders(ms, &base) : 0;
        runs += ok;
        uint64_t first = orders > 1500 ? nm_pcg32_bounded64(&rng, orders - 1500) : 0;
        int run = 0;
        for (uint64_t j = first; j < orders && run < 1500; j++, run++) {
            m = base;
            nm_mapspace_set_orders(ms, &m, j);
            snprintf(what, sizeof what, "%s: outer point %llu order %llu", label,
                     (unsigned long long)o, (unsigned long long)j);
            compared += warm_equals_cold(&warm, &cold, &m, what);
        }
        /* ... then random ones */
        for (int i = 0; ok && i < 300; i++) {
            nm_point pt;
            int wd, wlim;
            nm_mapspace_random(ms, &rng, &pt);
            if (!nm_mapspace_decode(ms, &pt, &m, &wd, &wlim))
                continue;
            snprintf(what, sizeof what, "%s: random mapping %d", label, i);
            int va = warm_equals_cold(&warm, &cold, &m, what);
            compared += va;
            nm_mapping near = m;
            for (int step = 0; va && step < 12; step++) {
                nm_mapping c = near;
                random_move(&rng, &c, wl->ndims);
                snprintf(what, sizeof what, "%s: random mapping %d, neighbour %d", label, i, step);
                int wa = warm_equals_cold(&warm, &cold, &c, what);
                compared += wa;
                if (wa && nm_pcg32_bounded(&rng, 4) == 0)
                    near = c;
            }
        }
    }
    nm_model_fini(&warm);
    nm_model_fini(&cold);
    return compared;
}

START_TEST(warm_matches_cold)
{
    for (int k = 0; k < 4; k++) {
        nm_spec spec;
        nm_error err;
        nm_mapspace *ms = load_mapper(k, "warm_matches_cold", &spec);
        if (!ms)
            continue;
        ck_assert_int_gt(warm_vs_cold(ms, mapper_designs[k], (uint64_t)k, 8), 2000);
        /* residual factors too: imperfect nests are walked, and a run
         * that mixes them with perfect ones must start over cleanly */
        ck_assert_int_eq(nm_mapspace_enable_imperfect(ms, &err), NM_OK);
        ck_assert_int_gt(warm_vs_cold(ms, mapper_designs[k], 10 + (uint64_t)k, 8), 500);
        nm_free(ms);
        nm_spec_fini(&spec);
    }
    struct env e;
    load(&e, "search/conv1d_3level.yaml", NULL);
    ck_assert_int_gt(warm_vs_cold(&e.ms, "conv1d_3level", 20, 8), 500);
    nm_error err;
    ck_assert_int_eq(nm_mapspace_enable_imperfect(&e.ms, &err), NM_OK);
    ck_assert_int_gt(warm_vs_cold(&e.ms, "conv1d_3level imperfect", 21, 8), 500);
    unload(&e);
    load(&e, "search/conv1d_links.yaml", NULL);
    ck_assert_int_gt(warm_vs_cold(&e.ms, "conv1d_links", 22, 400), 20000);
    unload(&e);
}
END_TEST

/* nm_model_floor on a valid mapping m the model evaluated to *st: never
 * below nm_model_bound's (e, c, lla), never above what any order of m's
 * loops costs (st is one of them). */
static int floor_checked, floor_tighter;
static void floor_holds(nm_model *mdl, const nm_mapping *m, const nm_stats *st, const char *what,
                        double e, double c, double lla)
{
    double fe, fc, fl;
    nm_model_floor(mdl, m, &fe, &fc, &fl);
    ck_assert_msg(fe >= e && fc >= c && fl >= lla, "%s: floor below the cheap bound", what);
    ck_assert_msg(fe <= st->energy * (1 + 1e-12), "%s: energy floor %.17g > %.17g", what, fe,
                  st->energy);
    ck_assert_msg(fc <= (double)st->cycles, "%s: cycles floor %g > %llu", what, fc,
                  (unsigned long long)st->cycles);
    ck_assert_msg(fl <= (double)st->last_level_accesses, "%s: accesses floor %g > %llu", what,
                  fl, (unsigned long long)st->last_level_accesses);
    floor_checked++;
    floor_tighter += fe > e * (1 + 1e-9);
}

/* nm_model_bound and nm_model_floor on up to `want` random valid mappings
 * of ms (of `tries` drawn): never above what the model computes.  Returns
 * how many were checked. */
static int bounds_hold(const nm_mapspace *ms, const nm_spec *spec, uint64_t seed, int tries,
                       int want, const char *what)
{
    nm_model mdl;
    nm_error err;
    ck_assert_int_eq(nm_model_init(&mdl, &spec->arch, &spec->wl, &err), NM_OK);
    static nm_stats st;
    nm_pcg32 rng;
    nm_pcg32_seed(&rng, seed, seed);
    int valid = 0;
    /* the best fill of the fan-outs: no mapping runs fewer iterations */
    int removes = nm_sparse_removes(&spec->arch, &spec->wl);
    uint64_t fill = removes ? 0 : nm_mapspace_fill(ms, 1000000);
    double iters = 1, fewest = INFINITY;
    for (int d = 0; d < spec->wl.ndims; d++)
        iters *= (double)spec->wl.bound[d];
    ck_assert_msg(removes || fill > 0, "%s: no fill", what);
    for (int i = 0; i < tries && valid < want; i++) {
        nm_point pt;
        nm_mapping m;
        int wd, wl;
        nm_mapspace_random(ms, &rng, &pt);
        if (!nm_mapspace_decode(ms, &pt, &m, &wd, &wl) || !nm_model_eval(&mdl, &m, &st, NULL))
            continue;
        double e, c, lla;
        nm_model_bound(&mdl, &m, &e, &c, &lla);
        ck_assert_msg(e <= st.energy * (1 + 1e-12), "%s: energy bound %g > %g", what, e,
                      st.energy);
        ck_assert(c <= (double)st.cycles);
        ck_assert(lla <= (double)st.last_level_accesses);
        if (fill) {
            ck_assert_msg(iters / (double)fill <= (double)st.cycles * (1 + 1e-12),
                          "%s: fill bound %g cycles > %llu", what, iters / (double)fill,
                          (unsigned long long)st.cycles);
            if ((double)st.cycles < fewest)
                fewest = (double)st.cycles;
        }
        floor_holds(&mdl, &m, &st, what, e, c, lla);
        valid++;
    }
    if (fill)
        printf("bound_is_admissible: %s: at most %llu instances busy, %g cycles at least; the "
               "fewest of %d random mappings %g\n", what, (unsigned long long)fill,
               iters / (double)fill, valid, fewest);
    nm_model_fini(&mdl);
    return valid;
}

/* bound --curve's staircase (roofline.h) bounds the off-chip traffic of
 * every mapping of a design whose one on-chip buffer keeps every tensor:
 * such a mapping is a single-buffer mapping whose tiles fit the buffer.
 * Random valid mappings of a convolution (sliding windows) and a GEMM on
 * buffers of three depths, each at or above the curve at its capacity, and
 * the search's best reaching it. */
START_TEST(curve_bounds_one_buffer)
{
    static const char *const problems[] = {
        "problem:\n  conv2d: {C: 4, M: 8, P: 6, Q: 6, R: 3, S: 3}\n",
        "problem:\n  gemm: {M: 12, N: 8, K: 16}\n"};
    static const char *const tensors[] = {"[Weights, Inputs, Outputs]", "[A, B, Z]"};
    static const int depths[] = {24, 96, 384};
    for (int p = 0; p < 2; p++) {
        nm_curve c;
        nm_error err;
        for (int k = 0; k < 3; k++) {
            char text[4096];
            snprintf(text, sizeof text,
                     "architecture:\n  version: '0.4'\n  subtree:\n  - name: chip\n    local:\n"
                     "    - {name: DRAM, class: DRAM, attributes: {width: 16, datawidth: 16}}\n"
                     "    - {name: Buffer, class: SRAM, attributes: {depth: %d, width: 16, "
                     "datawidth: 16}}\n"
                     "    - {name: MAC, class: intmac, attributes: {datawidth: 16}}\n%s"
                     "architecture_constraints:\n  targets:\n"
                     "  - {target: Buffer, type: bypass, keep: %s, bypass: []}\n", depths[k],
                     problems[p], tensors[p]);
            nm_spec spec;
            ck_assert_msg(nm_spec_load_string(&spec, "t.yaml", text, NM_NEED_ARCH | NM_NEED_PROBLEM,
                                              &err) == NM_OK, "%s", err.msg);
            if (k == 0)
                ck_assert_int_eq(nm_roofline_curve(&spec.wl, 10000000, &c, &err), NM_OK);
            static nm_mapspace ms;
            ck_assert_int_eq(nm_mapspace_init(&ms, &spec.arch, &spec.wl, spec.constraints,
                                              spec.constraints2, &err), NM_OK);
            nm_model mdl;
            ck_assert_int_eq(nm_model_init(&mdl, &spec.arch, &spec.wl, &err), NM_OK);
            double least = nm_curve_at(&c, depths[k]), fewest = INFINITY;
            ck_assert(least < INFINITY);
            nm_pcg32 rng;
            nm_pcg32_seed(&rng, 11 + (uint64_t)k, 5);
            int valid = 0;
            static nm_stats st;
            for (int i = 0; i < 20000 && valid < 2000; i++) {
                nm_point pt;
                nm_mapping m;
                int wd, wl;
                nm_mapspace_random(&ms, &rng, &pt);
                if (!nm_mapspace_decode(&ms, &pt, &m, &wd, &wl) || !nm_model_eval(&mdl, &m, &st, NULL))
                    continue;
                valid++;
                ck_assert_msg((double)st.last_level_accesses >= least, "%s depth %d: a mapping moves "
                              "%llu words, below the curve's %g", spec.wl.name, depths[k],
                              (unsigned long long)st.last_level_accesses, least);
                fewest = fmin(fewest, (double)st.last_level_accesses);
            }
            ck_assert_int_gt(valid, 200);
            /* the search for the least traffic reaches the curve */
            nm_search_opts o;
            nm_search_opts_init(&o);
            o.metric[0] = NM_MET_LLA;
            o.threads = 2;
            static nm_search_result r;
            ck_assert_int_eq(nm_search_run(&ms, &o, &r, &err), NM_OK);
            ck_assert(r.found);
            ck_assert_msg((double)r.best_stats.last_level_accesses == least, "%s depth %d: the "
                          "search's least %llu words, the curve's %g", spec.wl.name, depths[k],
                          (unsigned long long)r.best_stats.last_level_accesses, least);
            printf("curve_bounds_one_buffer: %s at %d words: the curve %g, %d random mappings "
                   "at least %g\n", spec.wl.name, depths[k], least, valid, fewest);
            nm_search_result_fini(&r);
            nm_model_fini(&mdl);
            nm_spec_fini(&spec);
        }
        nm_curve_fini(&c);
    }
}
END_TEST

/* The single-buffer mapping of spec's layer with outer[d] above the
 * buffer in order (innermost first), evaluated into *st. */
static void one_buffer_eval(nm_model *mdl, const nm_spec *spec, const int64_t *outer,
                            const int8_t *order, nm_stats *st)
{
    nm_mapping m;
    nm_mapping_init(&m, &spec->arch, &spec->wl);
    for (int d = 0; d < spec->wl.ndims; d++) {
        m.level[1].tfactor[d] = outer[d];
        m.level[0].tfactor[d] = spec->wl.bound[d] / outer[d];
    }
    memcpy(m.level[1].torder, order, sizeof m.level[1].torder);
    ck_assert(nm_model_eval(mdl, &m, st, NULL));
}

/* The refetches (roofline.h) count what the model counts: on a design of
 * one buffer large enough for anything, every split of a GEMM and of a 1x1
 * convolution (every tensor clean) in every order of its outer loops moves
 * exactly each input G times and each output G times up and G - 1 back
 * (nm_roofline_refetches), and the least over the orders is
 * nm_roofline_least_refetch's, reached by the order it gives; on a 3x3
 * convolution the clean tensors' words and each window's distinct words
 * once are never above the model, and twice the clean tensors' refetches
 * are above it on some split and order (the check can fail). */
START_TEST(refetches_are_the_model)
{
    static const char *const problems[] = {
        "problem:\n  gemm: {M: 12, N: 8, K: 16}\n",
        "problem:\n  conv2d: {C: 4, M: 6, P: 4, Q: 6}\n",
        "problem:\n  conv2d: {C: 2, M: 4, P: 4, Q: 3, R: 3, S: 2}\n"};
    int checked = 0, exact_least = 0, doubled_above = 0;
    for (int p = 0; p < 3; p++) {
        char text[4096];
        snprintf(text, sizeof text,
                 "architecture:\n  version: '0.4'\n  subtree:\n  - name: chip\n    local:\n"
                 "    - {name: DRAM, class: DRAM, attributes: {width: 16, datawidth: 16}}\n"
                 "    - {name: Buffer, class: SRAM, attributes: {depth: 1000000, width: 16, "
                 "datawidth: 16}}\n"
                 "    - {name: MAC, class: intmac, attributes: {datawidth: 16}}\n%s", problems[p]);
        static nm_spec spec;
        nm_error err;
        ck_assert_msg(nm_spec_load_string(&spec, "t.yaml", text, NM_NEED_ARCH | NM_NEED_PROBLEM,
                                          &err) == NM_OK, "%s", err.msg);
        const nm_workload *wl = &spec.wl;
        nm_model mdl;
        ck_assert_int_eq(nm_model_init(&mdl, &spec.arch, wl, &err), NM_OK);
        int nd = wl->ndims, nds = wl->nds;
        uint32_t clean = nm_roofline_clean_spaces(wl, wl->bound, 1), irr[NM_MAX_DS];
        ck_assert_int_eq(clean == (1u << nds) - 1u, p < 2);
        double size[NM_MAX_DS], weight[NM_MAX_DS];
        for (int ds = 0; ds < nds; ds++) {
            irr[ds] = ~mdl.ds_dims[ds];
            size[ds] = (double)nm_workload_ds_size(wl, ds);
            weight[ds] = size[ds] * (wl->ds[ds].read_write ? 2 : 1);
        }
        int64_t outer[NM_MAX_DIMS];
        int idx[NM_MAX_DIMS] = {0}, more = 1;
        static nm_stats st;
        while (more) {
            /* the split: dimension d's outer factor its idx[d]-th divisor */
            int8_t loops[NM_MAX_DIMS];
            int nl = 0;
            for (int d = 0; d < nd; d++) {
                int64_t f = 1;
                for (int64_t k = 1, seen = -1; k <= wl->bound[d]; k++)
                    if (wl->bound[d] % k == 0 && ++seen == idx[d])
                        f = k;
                outer[d] = f;
                if (f > 1)
                    loops[nl++] = (int8_t)d;
            }
            double least = INFINITY;
            int8_t perm[NM_MAX_DIMS];
            memcpy(perm, loops, sizeof perm);
            do {
                int8_t order[NM_MAX_DIMS];
                int k = 0;
                for (int i = 0; i < nl; i++)
                    order[k++] = perm[i];
                for (int d = 0; d < nd; d++)
                    if (outer[d] == 1)
                        order[k++] = (int8_t)d;
                one_buffer_eval(&mdl, &spec, outer, order, &st);
                double model = (double)st.last_level_accesses, count = 0.0, twice = 0.0;
                int64_t fac[NM_MAX_DIMS];
                for (int i = 0; i < nd; i++)
                    fac[i] = outer[order[i]];
                for (int ds = 0; ds < nds; ds++) {
                    double g = (clean >> ds) & 1u ? nm_roofline_refetches(irr[ds], nd, order, fac)
                                                  : 1.0;
                    double words = (clean >> ds) & 1u ? size[ds]
                                                      : nm_model_distinct_at_least(wl, ds,
                                                                                   wl->bound);
                    double moved = wl->ds[ds].read_write ? (2 * g - 1) * words : g * words;
                    count += moved;
                    twice += (clean >> ds) & 1u ? 2 * moved : moved;
                }
                if (p < 2)
                    ck_assert_msg(count == model, "%s, outer loops %d: the refetches count %g "
                                  "words, the model %g", wl->name, nl, count, model);
                else
                    ck_assert_msg(count <= model, "%s: the refetches' %g words above the "
                                  "model's %g", wl->name, count, model);
                doubled_above += twice > model;
                least = fmin(least, model);
                checked++;
            } while (nm_mapping_next_order(perm, nl));
            if (p < 2) {
                int8_t best[NM_MAX_DIMS];
                double out = 0.0;
                for (int ds = 0; ds < nds; ds++)
                    out += wl->ds[ds].read_write ? size[ds] : 0.0;
                double r = nm_roofline_least_refetch(nds, irr, weight, outer, nd, NULL, best);
                ck_assert_msg(r - out == least, "%s: the least refetch %g words, the model's "
                              "least over the orders %g", wl->name, r - out, least);
                one_buffer_eval(&mdl, &spec, outer, best, &st);
                ck_assert_msg((double)st.last_level_accesses == least, "%s: the least order's "
                              "%llu words, not %g", wl->name,
                              (unsigned long long)st.last_level_accesses, least);
                exact_least++;
            }
            /* the next split */
            more = 0;
            for (int d = nd - 1; d >= 0 && !more; d--) {
                int nDiv = 0;
                for (int64_t k = 1; k <= wl->bound[d]; k++)
                    nDiv += wl->bound[d] % k == 0;
                if (++idx[d] < nDiv)
                    more = 1;
                else
                    idx[d] = 0;
            }
        }
        nm_model_fini(&mdl);
        nm_spec_fini(&spec);
    }
    ck_assert_int_gt(checked, 1000);
    ck_assert_int_gt(doubled_above, 0);
    printf("refetches_are_the_model: %d splits and orders counted, %d splits' least order found, "
           "twice the refetches above the model on %d\n", checked, exact_least, doubled_above);
}
END_TEST

/* optimal's bounds never exceed what the model then computes, on any
 * design: checked on random valid mappings of every mapper input and of
 * the test designs, with and without neighbour links. */
START_TEST(bound_is_admissible)
{
    int checked = 0;
    for (int k = 0; k < 4; k++) {
        nm_spec spec;
        nm_mapspace *ms = load_mapper(k, "bound_is_admissible", &spec);
        if (!ms)
            continue;
        ck_assert_int_gt(bounds_hold(ms, &spec, 3 + (uint64_t)k, 20000, 1500, mapper_designs[k]),
                         100);
        checked++;
        nm_free(ms);
        nm_spec_fini(&spec);
    }
    static const char *const designs[] = {"search/conv1d_3level.yaml", "search/conv1d_links.yaml"};
    for (int k = 0; k < 2; k++) {
        struct env e;
        load(&e, designs[k], NULL);
        ck_assert_int_gt(bounds_hold(&e.ms, &e.spec, 5, 5000, 5000, designs[k]), 100);
        unload(&e);
    }
    /* sparse designs: the bounds are the roofline of the effectual computes
     * (gating, skipping, compressed formats) */
    static const char *const sparse[] = {"../../examples/sparse/gemm_gating.yaml",
                                         "../../examples/sparse/gemm_compressed.yaml"};
    for (int k = 0; k < 2; k++) {
        struct env e;
        load(&e, sparse[k], NULL);
        ck_assert_int_gt(bounds_hold(&e.ms, &e.spec, 7, 4000, 1000, sparse[k]), 100);
        unload(&e);
    }
    /* banded A (a band of 3 each side): the tile distributions are
     * Timeloop's representative rows, not the band's mean, yet the
     * effectual computes stay above the roofline's */
    for (int k = 0; k < 2; k++) {
        struct env e;
        load_sub(&e, sparse[k], "A: {distribution: fixed_structured, density: 0.5}",
                 "A: {distribution: banded, band_width: 3}");
        ck_assert_int_gt(bounds_hold(&e.ms, &e.spec, 7, 4000, 1000, "banded"), 100);
        unload(&e);
    }
    /* the same designs with dense tensors: their optimizations remove
     * nothing, and the dense bounds (floor, fill) hold */
    for (int k = 0; k < 2; k++) {
        struct env e;
        load_sub(&e, sparse[k], "A: {distribution: fixed_structured, density: 0.5}",
                 "A: {distribution: fixed_structured, density: 1.0}");
        if (k == 0) { /* (B too) */
            unload(&e);
            load_sub(&e, sparse[k], "density: 0.5}\n      B: {distribution: hypergeometric, "
                     "density: 0.3}", "density: 1}\n      B: {distribution: hypergeometric, "
                     "density: 1}");
        }
        ck_assert(e.spec.arch.sparse.active && !nm_sparse_removes(&e.spec.arch, &e.spec.wl));
        ck_assert_int_gt(bounds_hold(&e.ms, &e.spec, 9, 4000, 1000, "dense on a sparse design"),
                         100);
        unload(&e);
    }
    printf("bound_is_admissible: %d shared designs checked; floor above the cheap bound on "
           "%d of %d mappings\n", checked, floor_tighter, floor_checked);
}
END_TEST

/* The operand floor (nm_model_operands) of each valid mapping of ms with
 * perfect factors, evaluated as the model does, with the fan-out factors
 * sf_of(m) gives; how many mappings it exceeds (more energy or cycles than
 * the model's).  The real floor takes m's own factors, and below a fan-out
 * of level 0 spares what m's innermost loop spares (spare); the broken ones
 * (the test below) forget the fan-outs, so that no operand is multicast, or
 * spare nothing. */
typedef void (*sf_fn)(const nm_mapping *m, int nlevels, int64_t sf[][NM_MAX_DIMS]);

static void sf_real(const nm_mapping *m, int nlevels, int64_t sf[][NM_MAX_DIMS])
{
    for (int s = 0; s < nlevels; s++)
        memcpy(sf[s], m->level[s].sfactor, sizeof sf[s]);
}

static void sf_forgotten(const nm_mapping *m, int nlevels, int64_t sf[][NM_MAX_DIMS])
{
    (void)m;
    for (int s = 0; s < nlevels; s++)
        for (int d = 0; d < NM_MAX_DIMS; d++)
            sf[s][d] = 1;
}

struct floor_tally {
    int valid, above, tighter; /* mappings checked, floors above the model, bounds above the roofline */
    /* the footprint floor's terms (nm_model_kept_floor) against the model's
     * counts: terms checked, above them, met exactly, above them once
     * doubled (the check can fail) */
    int kept_terms, kept_above, kept_met, kept_doubled;
    /* the refetches (refetch_terms): terms, above the model, met, G above 1 */
    int refetch_terms, refetch_above, refetch_met, refetch_more;
    /* the coupled refetches (coupled_terms): terms, above the model, met,
     * G above 1, left in place below the coupled level, and those whose
     * tile there would not fit, scaled and unscaled */
    int coupled_terms, coupled_above, coupled_met, coupled_more, coupled_in_place;
    int coupled_unfit, coupled_unscaled_unfit;
    /* the hop floor (nm_model_hop_floor) against the model's network
     * energy at its level: mappings weighed, above, met, and above with
     * the most costly arrangement in place of the least (the check can
     * fail) */
    int hop_terms, hop_above, hop_met, hop_worst_above, hop_own_met, hop_fills, hop_windows;
    double least[3];           /* the least energy, cycles and EDP seen */
};

/* Adds t's counts of the floors' terms to *sum. */
static void tally_add(struct floor_tally *sum, const struct floor_tally *t)
{
    sum->kept_terms += t->kept_terms;
    sum->kept_met += t->kept_met;
    sum->kept_doubled += t->kept_doubled;
    sum->refetch_terms += t->refetch_terms;
    sum->refetch_met += t->refetch_met;
    sum->refetch_more += t->refetch_more;
    sum->coupled_terms += t->coupled_terms;
    sum->coupled_met += t->coupled_met;
    sum->coupled_more += t->coupled_more;
    sum->coupled_in_place += t->coupled_in_place;
    sum->coupled_unscaled_unfit += t->coupled_unscaled_unfit;
    sum->hop_terms += t->hop_terms;
    sum->hop_met += t->hop_met;
    sum->hop_worst_above += t->hop_worst_above;
    sum->hop_own_met += t->hop_own_met;
    sum->hop_fills += t->hop_fills;
    sum->hop_windows += t->hop_windows;
}

static uint32_t kept_levels(const nm_mapping *m, int nlevels, int ds);

/* m's hop floor (c at m's spatial factors; at: m's innermost levels, the
 * spared data spaces left out) against the model's network energy at the
 * floor's level, for the data spaces the floor weighs. */
static void hop_terms(const nm_model *mdl, const nm_spec *spec, const nm_mapping *m,
                      const int64_t sf[][NM_MAX_DIMS], const nm_operand_cost *c,
                      const int8_t *at, uint32_t spared, const nm_stats *st,
                      struct floor_tally *t, const char *what)
{
    if (c->narr <= 0)
        return;
    static nm_operand_cost own; /* m's own arrangement only */
    own = *c;
    nm_model_hop_costs(mdl, sf, m, &own);
    int8_t in[NM_MAX_DS];
    uint32_t kept[NM_MAX_DS];
    double words[NM_MAX_DS], model = 0.0, worst = 0.0;
    for (int ds = 0; ds < spec->wl.nds; ds++) {
        in[ds] = (spared >> ds) & 1u ? -1 : at[ds];
        kept[ds] = kept_levels(m, spec->arch.nlevels, ds);
    }
    nm_model_hop_words(mdl, c, in, kept, words);
    int fills = 0; /* a data space kept below the hop level, filled through it */
    for (int ds = 0; ds < spec->wl.nds; ds++)
        if (words[ds] > 0.0) {
            model += st->level[c->hop_level].ds[ds].noc_energy;
            fills |= in[ds] < c->hop_level;
        }
    t->hop_fills += fills;
    int windows = 0; /* a data space read there whose window spans units: n - 1 hops */
    for (int ds = 0; ds < spec->wl.nds; ds++)
        windows |= words[ds] > 0.0 && c->hop_classes[ds] == 0.0 && c->hop_pj[0][ds] > 0.0;
    t->hop_windows += windows;
    for (int a = 0; a < c->narr; a++) {
        double e = 0.0;
        for (int ds = 0; ds < spec->wl.nds; ds++)
            e += words[ds] * c->hop_pj[a][ds];
        worst = fmax(worst, e);
    }
    double floor = nm_model_hop_floor(mdl, c, words), mine = nm_model_hop_floor(mdl, &own, words);
    t->hop_terms++;
    if ((floor > model * (1 + 1e-9) + 1e-6 || mine > model * (1 + 1e-9) + 1e-6) &&
        t->hop_above++ < 3)
        printf("hop floor: %s: %g pJ (%g with its own arrangement) above the model's %g pJ on "
               "%s's network\n", what, floor, mine, model, spec->arch.level[c->hop_level].name);
    t->hop_met += floor > 0.0 && fabs(floor - model) <= model * 1e-9;
    t->hop_own_met += mine > 0.0 && fabs(mine - model) <= model * 1e-9;
    t->hop_worst_above += worst > model * (1 + 1e-9) + 1e-6;
}

/* The levels m keeps data space ds at (bit s). */
static uint32_t kept_levels(const nm_mapping *m, int nlevels, int ds)
{
    uint32_t kept = 0;
    for (int s = 0; s < nlevels; s++)
        kept |= (uint32_t)((m->level[s].keep >> ds) & 1u) << s;
    return kept;
}

/* The footprint floor of m (its fan-outs c, its innermost levels at, the
 * levels it keeps, what its innermost loop spares) term by term: for each
 * tensor alone, the reads and the writes (fills and updates) its instances
 * make at each level below the top at least the floor's, and its energy
 * there (the operand floor's and the footprint's) at most the model's. */
static void kept_terms(const nm_model *mdl, const nm_spec *spec, const nm_mapping *m,
                       const nm_operand_cost *c, const int8_t *at, uint32_t spared,
                       const nm_stats *st, struct floor_tally *t, const char *what)
{
    const nm_workload *wl = &spec->wl;
    int S = spec->arch.nlevels;
    for (int ds = 0; ds < wl->nds; ds++) {
        if (at[ds] < 0 || at[ds] >= S - 1)
            continue;
        int8_t only[NM_MAX_DS];
        uint32_t kept[NM_MAX_DS] = {0};
        for (int k = 0; k < wl->nds; k++)
            only[k] = k == ds ? at[ds] : -1;
        kept[ds] = kept_levels(m, S, ds);
        double rd[NM_MAX_LEVELS] = {0}, wr[NM_MAX_LEVELS] = {0};
        double fe = nm_model_kept_floor(mdl, c, only, kept, spared, rd, wr);
        if (!((spared >> ds) & 1u))
            fe += c->energy[ds][at[ds]];
        double me = 0.0;
        for (int s = 0; s < S - 1; s++) {
            const nm_level *L = &spec->arch.level[s];
            const nm_ds_stats *d = &st->level[s].ds[ds];
            double w = (double)nm_level_ds_bits(L, wl, ds) / L->word_bits;
            double mrd = (double)d->reads * w, mwr = (double)(d->fills + d->updates) * w;
            me += d->energy;
            if (rd[s] <= 0.0 && wr[s] <= 0.0)
                continue;
            t->kept_terms++;
            int above = rd[s] > mrd * (1 + 1e-9) + 1e-6 || wr[s] > mwr * (1 + 1e-9) + 1e-6;
            if (above && t->kept_above++ < 3)
                printf("operand_floor_is_admissible: %s: %s at %s: footprint floor %g reads, "
                       "%g writes per instance above the model's %g, %g\n", what,
                       wl->ds[ds].name, L->name, rd[s], wr[s], mrd, mwr);
            t->kept_met += fabs(rd[s] - mrd) <= 1e-9 * mrd + 1e-6 &&
                           fabs(wr[s] - mwr) <= 1e-9 * mwr + 1e-6;
            t->kept_doubled += 2 * rd[s] > mrd * (1 + 1e-9) + 1e-6 ||
                               2 * wr[s] > mwr * (1 + 1e-9) + 1e-6;
        }
        if (fe > me * (1 + 1e-9) + 1e-6 && t->kept_above++ < 3)
            printf("operand_floor_is_admissible: %s: %s: floor energy %g pJ above the model's "
                   "%g below the top\n", what, wl->ds[ds].name, fe, me);
    }
}


/* The share of one instance of level s under m (its fan-outs above split
 * the work), into box[]. */
static void share_of(const nm_mapping *m, const nm_workload *wl, int S, int s, int64_t *box)
{
    for (int d = 0; d < wl->ndims; d++) {
        int64_t above = 1;
        for (int l = s + 1; l < S; l++)
            above *= m->level[l].sfactor[d];
        box[d] = wl->bound[d] / above;
    }
}

/* m's temporal loops at levels lo..hi, innermost first, into dim[] and
 * fac[]; how many. */
static int loops_of(const nm_mapping *m, int nd, int lo, int hi, int8_t *dim, int64_t *fac)
{
    int n = 0;
    for (int l = lo; l <= hi; l++)
        for (int i = 0; i < nd; i++) {
            dim[n] = m->level[l].torder[i];
            fac[n++] = m->level[l].tfactor[m->level[l].torder[i]];
        }
    return n;
}

/* Whether a refetch floor of G g for data space ds at level s of m holds
 * against the model: its fills at least G times its instances' share's
 * distinct words (an output's first visit reads nothing: G - 1), and the
 * first level above keeping it reading them out (an output: taking its
 * updates) at least G times that level's share's; *met when both equal.
 * Says where it does not, when `what` is not NULL. */
static int refetch_holds(const nm_spec *spec, const nm_mapping *m, const nm_stats *st, int s,
                         int ds, double g, int *met, const char *what, const char *kind)
{
    const nm_workload *wl = &spec->wl;
    int S = spec->arch.nlevels, rw = wl->ds[ds].read_write, p = s + 1;
    while (p < S - 1 && !((m->level[p].keep >> ds) & 1u))
        p++;
    int64_t box[NM_MAX_DIMS], pbox[NM_MAX_DIMS];
    share_of(m, wl, S, s, box);
    share_of(m, wl, S, p, pbox);
    double foot = nm_model_distinct_at_least(wl, ds, box);
    double pfoot = nm_model_distinct_at_least(wl, ds, pbox);
    double fills = (double)st->level[s].ds[ds].fills;
    double out = (double)(rw ? st->level[p].ds[ds].updates : st->level[p].ds[ds].reads);
    double want = (g - rw) * foot, pwant = g * pfoot;
    *met = want == fills && pwant == out;
    int holds = !(want > fills * (1 + 1e-12) || pwant > out * (1 + 1e-12));
    if (!holds && what)
        printf("%s floor: %s: %s at %s: G %g: %g fills, %g out of %s at least; the model %g, "
               "%g\n", kind, what, wl->ds[ds].name, spec->arch.level[s].name, g, want, pwant,
               spec->arch.level[p].name, fills, out);
    return holds;
}

/* The refetches (roofline.h) of m at each level below the top keeping a
 * tensor clean on its instances' share, G of every temporal loop above
 * the level (refetch_holds); how many such terms, above the model, met
 * exactly, and with G above 1. */
static void refetch_terms(const nm_model *mdl, const nm_spec *spec, const nm_mapping *m,
                          const nm_stats *st, struct floor_tally *t, const char *what)
{
    const nm_workload *wl = &spec->wl;
    int S = spec->arch.nlevels, nd = wl->ndims;
    for (int s = 0; s < S - 1; s++) {
        int64_t box[NM_MAX_DIMS];
        share_of(m, wl, S, s, box);
        uint32_t clean = nm_roofline_clean_spaces(wl, box, 0);
        int8_t dim[NM_MAX_LOOPS];
        int64_t fac[NM_MAX_LOOPS];
        int n = loops_of(m, nd, s + 1, S - 1, dim, fac), met;
        for (int ds = 0; ds < wl->nds; ds++) {
            if (!((m->level[s].keep >> ds) & 1u) || !((clean >> ds) & 1u))
                continue;
            double g = nm_roofline_refetches(~mdl->ds_dims[ds], n, dim, fac);
            t->refetch_terms++;
            t->refetch_more += g > 1;
            t->refetch_above += !refetch_holds(spec, m, st, s, ds, g, &met,
                                               t->refetch_above < 3 ? what : NULL, "refetch");
            t->refetch_met += met;
        }
    }
}

/* The coupled refetches (roofline.c, struct refetch_front) of m: for each
 * level u below the top and each tensor clean on u's share kept innermost
 * at a level s below u, either no loop between s and u runs over a
 * dimension it has, and then its tile at s spans u's tile over those
 * dimensions scaled to s's share (which fits s's capacity, with the other
 * such tiles there: checked), and
 * G over the loops above u alone bounds its refetches at s; or one does,
 * and then every loop above u over a dimension it ignores refetches it.
 * Counted: terms, above the model, met, G above 1, in the first case, and
 * how often the tile unscaled by the fan-outs between would not fit (the
 * capacity check can fail). */
static void coupled_terms(const nm_model *mdl, const nm_spec *spec, const nm_mapping *m,
                          const nm_stats *st, struct floor_tally *t, const char *what)
{
    const nm_workload *wl = &spec->wl;
    const nm_arch *arch = &spec->arch;
    int S = arch->nlevels, nd = wl->ndims < NM_MAX_DIMS ? wl->ndims : NM_MAX_DIMS;
    for (int u = 1; u < S - 1; u++) {
        int64_t ubox[NM_MAX_DIMS], tile[NM_MAX_DIMS];
        share_of(m, wl, S, u, ubox);
        uint32_t clean = nm_roofline_clean_spaces(wl, ubox, 0);
        for (int d = 0; d < nd; d++) {
            tile[d] = ubox[d];
            for (int l = u + 1; l < S; l++)
                tile[d] /= m->level[l].tfactor[d];
        }
        int8_t dim[NM_MAX_LOOPS];
        int64_t fac[NM_MAX_LOOPS];
        int n = loops_of(m, nd, u + 1, S - 1, dim, fac);
        uint64_t joint[NM_MAX_LEVELS] = {0}; /* the in-place tiles at each level, together */
        for (int ds = 0; ds < wl->nds; ds++) {
            int s = 0;
            while (s < S - 1 && !((m->level[s].keep >> ds) & 1u))
                s++;
            if (s >= u || !((clean >> ds) & 1u))
                continue;
            uint32_t own = mdl->ds_dims[ds], between = 0;
            for (int l = s + 1; l <= u; l++)
                for (int d = 0; d < nd; d++)
                    between |= (uint32_t)(m->level[l].tfactor[d] > 1) << d;
            double g = 1.0;
            if (between & own) { /* a loop between over a dimension it has */
                for (int i = 0; i < n; i++)
                    if (!((own >> dim[i]) & 1u))
                        g *= (double)fac[i];
                /* it still takes a tile spanning the fan-outs at and below
                 * its level, beside the in-place ones */
                int64_t least[NM_MAX_DIMS];
                for (int d = 0; d < nd; d++) {
                    least[d] = 1;
                    for (int l = 0; l <= s; l++)
                        least[d] *= m->level[l].sfactor[d];
                }
                joint[s] += nm_model_tile_words(
                    mdl, s, ds, (uint64_t)nm_model_distinct_at_least(wl, ds, least));
            } else {
                g = nm_roofline_refetches(~own, n, dim, fac);
                int64_t box[NM_MAX_DIMS], ts[NM_MAX_DIMS];
                share_of(m, wl, S, s, box);
                for (int d = 0; d < nd; d++)
                    ts[d] = tile[d] / (ubox[d] / box[d]);
                const nm_level *L = &arch->level[s];
                uint64_t words = nm_model_tile_words(
                    mdl, s, ds, (uint64_t)nm_model_distinct_at_least(wl, ds, ts));
                uint64_t unscaled = nm_model_tile_words(
                    mdl, s, ds, (uint64_t)nm_model_distinct_at_least(wl, ds, tile));
                if (L->has_size && words > (uint64_t)L->effective_size &&
                    t->coupled_unfit++ < 3)
                    printf("coupled floor: %s: %s at %s: a tile of %llu words spanning %s's "
                           "beyond its %lld\n", what, wl->ds[ds].name, L->name,
                           (unsigned long long)words, arch->level[u].name,
                           (long long)L->effective_size);
                t->coupled_unscaled_unfit +=
                    L->has_size && unscaled > (uint64_t)L->effective_size;
                t->coupled_in_place++;
                joint[s] += words;
            }
            int met;
            t->coupled_terms++;
            t->coupled_more += g > 1;
            t->coupled_above += !refetch_holds(spec, m, st, s, ds, g, &met,
                                               t->coupled_above < 3 ? what : NULL, "coupled");
            t->coupled_met += met;
        }
        for (int s = 0; s < u; s++)
            t->coupled_unfit += arch->level[s].has_size &&
                                joint[s] > (uint64_t)arch->level[s].effective_size;
    }
}

static void operand_floors(const nm_mapspace *ms, const nm_spec *spec, sf_fn sf_of, int spare,
                           const nm_operand_bound *global, uint64_t seed, int tries, int want,
                           struct floor_tally *t, const char *what)
{
    nm_model mdl;
    nm_error err;
    ck_assert_int_eq(nm_model_init(&mdl, &spec->arch, &spec->wl, &err), NM_OK);
    static nm_stats st;
    nm_pcg32 rng;
    nm_pcg32_seed(&rng, seed, 3);
    memset(t, 0, sizeof *t);
    t->least[0] = t->least[1] = t->least[2] = INFINITY;
    nm_roofline r;
    nm_roofline_of(&r, &spec->arch, &spec->wl);
    int S = spec->arch.nlevels;
    for (int i = 0; i < tries && t->valid < want; i++) {
        nm_point pt;
        nm_mapping m;
        int wd, wl;
        nm_mapspace_random_perfect(ms, &rng, &pt);
        if (!nm_mapspace_decode(ms, &pt, &m, &wd, &wl) || !nm_model_eval(&mdl, &m, &st, NULL))
            continue;
        t->valid++;
        double edp = st.energy * (double)st.cycles;
        t->least[0] = fmin(t->least[0], st.energy);
        t->least[1] = fmin(t->least[1], (double)st.cycles);
        t->least[2] = fmin(t->least[2], edp);
        /* the floor of this mapping: its innermost levels, its fan-outs */
        int64_t sf[NM_MAX_LEVELS][NM_MAX_DIMS];
        uint32_t keep_at[NM_MAX_DS];
        int8_t at[NM_MAX_DS];
        sf_of(&m, S, sf);
        for (int ds = 0; ds < spec->wl.nds; ds++) {
            int s = 0;
            while (s < S - 1 && !((m.level[s].keep >> ds) & 1u))
                s++;
            keep_at[ds] = 1u << s;
            at[ds] = (int8_t)s;
        }
        nm_operand_cost c;
        if (!nm_model_operands(&mdl, (const int64_t(*)[NM_MAX_DIMS])sf, keep_at, &c))
            continue;
        nm_model_hop_costs(&mdl, (const int64_t(*)[NM_MAX_DIMS])sf, NULL, &c);
        uint32_t spared = c.nspared && spare ? nm_model_spared(&mdl, &m) : 0;
        for (int ds = 0; ds < spec->wl.nds; ds++) /* below a fan-out of level 0: what m's */
            if ((spared >> ds) & 1u)                 /* innermost loop spares */
                for (int s = 0; s < S; s++)
                    c.energy[ds][s] = c.rd[ds][s] = c.wr[ds][s] = 0.0;
        double e = 0.0;
        for (int ds = 0; ds < spec->wl.nds; ds++)
            e += c.energy[ds][at[ds]];
        double cy = nm_model_operand_cycles(&mdl, &c, at);
        double level_e = 0.0; /* what the model charges the levels' accesses alone */
        for (int s = 0; s < S; s++)
            for (int ds = 0; ds < spec->wl.nds; ds++)
                level_e += st.level[s].ds[ds].energy;
        /* each tensor's at its innermost level: energy, reads and updates */
        int low = 0;
        for (int ds = 0; ds < spec->wl.nds; ds++) {
            const nm_ds_stats *d = &st.level[at[ds]].ds[ds];
            double inst = (double)d->utilized_instances;
            int was = low;
            low |= c.energy[ds][at[ds]] > d->energy * (1 + 1e-9) + 1e-9 ||
                   c.rd[ds][at[ds]] * inst > (double)d->reads * inst * (1 + 1e-9) + 1e-6 ||
                   c.wr[ds][at[ds]] * inst > (double)d->updates * inst * (1 + 1e-9) + 1e-6;
            if (low && !was && getenv("NESTMAP_TEST_VERBOSE"))
                printf("  %s: %s at level %d: floor %g pJ, %g reads, %g updates; the model "
                       "%g pJ, %llu, %llu\n", what, spec->wl.ds[ds].name, at[ds],
                       c.energy[ds][at[ds]], c.rd[ds][at[ds]], c.wr[ds][at[ds]], d->energy,
                       (unsigned long long)d->reads, (unsigned long long)d->updates);
        }
        if (sf_of == sf_real && spare)
            kept_terms(&mdl, spec, &m, &c, at, spared, &st, t, what);
        if (sf_of == sf_real && spare)
            refetch_terms(&mdl, spec, &m, &st, t, what);
        if (sf_of == sf_real && spare)
            coupled_terms(&mdl, spec, &m, &st, t, what);
        if (sf_of == sf_real && spare)
            hop_terms(&mdl, spec, &m, (const int64_t(*)[NM_MAX_DIMS])sf, &c, at, spared, &st,
                      t, what);
        {
            double krd[NM_MAX_LEVELS] = {0}, kwr[NM_MAX_LEVELS] = {0};
            uint32_t kept[NM_MAX_DS];
            for (int ds = 0; ds < spec->wl.nds; ds++)
                kept[ds] = kept_levels(&m, S, ds);
            e += nm_model_kept_floor(&mdl, &c, at, kept, spared, krd, kwr);
            cy = nm_model_operand_cycles_plus(&mdl, &c, at, krd, kwr);
        }
        if (low || e > level_e * (1 + 1e-9) || cy > (double)st.cycles) {
            if (t->above++ < 3 && sf_of == sf_real && spare)
                printf("operand_floor_is_admissible: %s: a floor above the model (%g > %g pJ "
                       "or %g > %llu cycles)\n", what, e, level_e, cy,
                       (unsigned long long)st.cycles);
        }
        /* the mapping's bound, the same with its loop orders reversed
         * (a bound on every order of its factors: optimal prunes them all
         * with it), and the bound over the space */
        double be, bc, bl;
        nm_model_bound(&mdl, &m, &be, &bc, &bl);
        ck_assert_msg(be <= st.energy * (1 + 1e-12) && bc <= (double)st.cycles,
                      "%s: the mapping's bound above the model", what);
        nm_mapping rev = m;
        for (int s = 0; s < S; s++)
            for (int a = 0, z = spec->wl.ndims - 1; a < z; a++, z--) {
                int8_t x = rev.level[s].torder[a];
                rev.level[s].torder[a] = rev.level[s].torder[z];
                rev.level[s].torder[z] = x;
            }
        nm_model_bound(&mdl, &rev, &be, &bc, &bl);
        ck_assert_msg(be <= st.energy * (1 + 1e-12) && bc <= (double)st.cycles,
                      "%s: the bound of its other orders above the model (%g > %g pJ or %g > "
                      "%llu cycles)", what, be, st.energy, bc, (unsigned long long)st.cycles);
        if (global) {
            ck_assert_msg(global[0].metric <= st.energy * (1 + 1e-12), "%s: the energy floor "
                          "%g above a mapping's %g pJ", what, global[0].metric, st.energy);
            ck_assert_msg(global[1].metric <= (double)st.cycles, "%s: the cycles floor %g above "
                          "a mapping's %llu", what, global[1].metric,
                          (unsigned long long)st.cycles);
            ck_assert_msg(global[2].metric <= edp * (1 + 1e-12), "%s: the EDP floor %g above "
                          "a mapping's %g", what, global[2].metric, edp);
        }
        t->tighter += be > r.energy_pj * (1 + 1e-9) || bc > r.bound_cycles;
    }
    nm_model_fini(&mdl);
}

/* The operand floor bounds every mapping, on every design of arch/ and
 * three layers (overlapping windows, a strided convolution, a 1x1): the
 * floor of each random valid mapping (its innermost levels, its fan-outs)
 * never above what the model charges the levels' accesses and cycles; the
 * mapping's bound (nm_model_bound, which adds it past a fan-out) never
 * above the model's figures; the bound over the whole space
 * (nm_roofline_operand_bound) never above a mapping's energy, cycles and
 * EDP.  And two broken floors are caught above the model: one that forgets
 * the fan-outs (no operand multicast), on a design that multicasts, and
 * one that spares no tensor below a fan-out of level 0, on the A100. */
START_TEST(operand_floor_is_admissible)
{
    static const char *const designs[] = {
        "eyeriss/eyeriss", "eyeriss/eyeriss_compound", "gpu/a100", "gpu/a100_sparse",
        "gpu/h100", "nvdla/nv_full", "nvdla/nv_small", "simba/simba", "simba/simba_compound",
        "simple/output_stationary", "simple/weight_stationary", "systolic/systolic_16x16",
        "systolic/tpu_v1", "teaching/input_stationary", "teaching/no_local_reuse",
        "teaching/output_stationary", "teaching/pe_array", "teaching/row_stationary",
        "teaching/weight_stationary"};
    static const char *const layers[] = {"search/floor_conv3x3.yaml", "search/floor_strided.yaml",
                                         "search/floor_1x1.yaml"};
    int checked = 0, tighter = 0, spaces = 0, bounded = 0;
    struct floor_tally sum; /* the terms' counts over every space */
    memset(&sum, 0, sizeof sum);
    for (size_t k = 0; k < sizeof designs / sizeof *designs; k++)
        for (int l = 0; l < 3; l++) {
            char design[1024], layer[1024], rel[256], what[300];
            snprintf(rel, sizeof rel, "../../arch/%s.yaml", designs[k]);
            test_data(rel, design, sizeof design);
            test_data(layers[l], layer, sizeof layer);
            snprintf(what, sizeof what, "%s with %s", designs[k], layers[l]);
            const char *files[] = {design, layer};
            static nm_spec spec;
            static nm_mapspace ms;
            nm_error err;
            ck_assert_msg(nm_spec_load(&spec, files, 2, NM_NEED_ARCH | NM_NEED_PROBLEM, &err) ==
                          NM_OK, "%s: %s", what, err.msg);
            ck_assert_msg(nm_mapspace_init(&ms, &spec.arch, &spec.wl, spec.constraints,
                                           spec.constraints2, &err) == NM_OK, "%s: %s", what,
                          err.msg);
            nm_operand_bound g[3];
            int have = 1;
            for (int metric = 0; metric < 3; metric++)
                have &= nm_roofline_operand_bound(&ms, metric, 1000000, &g[metric]);
            /* none where sparse optimizations can remove accesses; the
             * sparse A100 with these dense layers has one */
            ck_assert_msg(have != nm_sparse_removes(&spec.arch, &spec.wl),
                          "%s: %s floor over the space", what, have ? "a" : "no");
            struct floor_tally t;
            operand_floors(&ms, &spec, sf_real, 1, have ? g : NULL, 17 + k * 3 + (uint64_t)l, 20000,
                           300, &t, what);
            ck_assert_msg(t.valid >= 20, "%s: %d valid mappings", what, t.valid);
            ck_assert_msg(t.above == 0, "%s: the floor above the model on %d of %d mappings",
                          what, t.above, t.valid);
            ck_assert_msg(t.kept_above == 0, "%s: the footprint floor above the model on %d of "
                          "%d terms", what, t.kept_above, t.kept_terms);
            ck_assert_msg(t.refetch_above == 0, "%s: the refetch floor above the model on %d of "
                          "%d terms", what, t.refetch_above, t.refetch_terms);
            ck_assert_msg(t.coupled_above == 0 && t.coupled_unfit == 0, "%s: the coupled "
                          "refetch floor above the model on %d of %d terms, a tile beyond its "
                          "level on %d", what, t.coupled_above, t.coupled_terms,
                          t.coupled_unfit);
            ck_assert_msg(t.hop_above == 0, "%s: the hop floor above the model on %d of %d "
                          "mappings", what, t.hop_above, t.hop_terms);
            tally_add(&sum, &t);
            nm_roofline r;
            nm_roofline_of(&r, &spec.arch, &spec.wl);
            double roof = r.energy_pj * r.bound_cycles;
            if (have)
                printf("operand_floor_is_admissible: %s: %d mappings; EDP floor %.4g (%.3gx the "
                       "roofline's), the least random mapping %.4g (%llu spatial choices)\n",
                       what, t.valid, g[2].metric, g[2].metric / roof, t.least[2],
                       (unsigned long long)g[2].choices);
            checked += t.valid;
            tighter += t.tighter;
            spaces++;
            bounded += have && g[2].metric > roof * (1 + 1e-9);
            nm_spec_fini(&spec);
        }
    printf("operand_floor_is_admissible: %d mappings of %d spaces; their bound above the "
           "roofline on %d; the space's EDP floor above the roofline's on %d\n", checked, spaces,
           tighter, bounded);
    ck_assert_int_gt(bounded, spaces / 2);
    /* the footprint floor's terms: some met exactly, so that a floor of
     * twice theirs is caught above the model */
    printf("operand_floor_is_admissible: the footprint floor's %d terms (a tensor's reads and "
           "writes at a level keeping it) never above the model's; %d met exactly; doubled, "
           "%d above\n", sum.kept_terms, sum.kept_met, sum.kept_doubled);
    ck_assert_int_gt(sum.kept_met, sum.kept_terms / 20);
    ck_assert_int_gt(sum.kept_doubled, sum.kept_terms / 20);
    printf("operand_floor_is_admissible: the refetch floor's %d terms (a clean tensor's fills "
           "at a level keeping it and the reads out of the level above) never above the "
           "model's; %d with G above 1; %d met exactly\n", sum.refetch_terms, sum.refetch_more,
           sum.refetch_met);
    ck_assert_int_gt(sum.refetch_more, sum.refetch_terms / 10);
    ck_assert_int_gt(sum.refetch_met, sum.refetch_terms / 10);
    /* the coupled refetches: G above 1 and met exactly on some, and the
     * capacity their in-place case claims missed by a tile unscaled by the
     * fan-outs between on some, so that a wrong scaling would be caught */
    printf("operand_floor_is_admissible: the coupled refetch floor's %d terms (a clean "
           "tensor's fills below a level, by the loops above that level alone) never above "
           "the model's; %d with G above 1; %d met exactly; %d left in place below it, whose "
           "tiles fit their levels, %d of them not unscaled\n", sum.coupled_terms,
           sum.coupled_more, sum.coupled_met, sum.coupled_in_place, sum.coupled_unscaled_unfit);
    ck_assert_int_gt(sum.coupled_more, sum.coupled_terms / 10);
    ck_assert_int_gt(sum.coupled_met, sum.coupled_terms / 20);
    ck_assert_int_gt(sum.coupled_in_place, sum.coupled_terms / 10);
    ck_assert_int_gt(sum.coupled_unscaled_unfit, 0);
    /* the hop floor (the teaching designs' array network): met exactly by
     * some mappings, and the most costly arrangement above the model on
     * others, so that a floor ignoring the arrangement would be caught */
    printf("operand_floor_is_admissible: the hop floor on %d mappings (%d with a tensor kept "
           "below the network's level, filled through it; %d with one read there through "
           "windows across units) never above the model's network energy, nor with each "
           "mapping's own arrangement; %d met exactly (%d with their own); with the most "
           "costly arrangement, %d above\n", sum.hop_terms, sum.hop_fills, sum.hop_windows,
           sum.hop_met, sum.hop_own_met, sum.hop_worst_above);
    ck_assert_int_gt(sum.hop_terms, 0);
    ck_assert_int_gt(sum.hop_fills, sum.hop_terms / 10);
    ck_assert_int_gt(sum.hop_windows, 0);
    ck_assert_int_gt(sum.hop_met, sum.hop_terms / 20);
    ck_assert_int_gt(sum.hop_own_met, sum.hop_met);
    ck_assert_int_gt(sum.hop_worst_above, sum.hop_terms / 20);
    /* the broken floor is caught */
    char design[1024], layer[1024];
    test_data("../../arch/teaching/no_local_reuse.yaml", design, sizeof design);
    test_data("search/floor_1x1.yaml", layer, sizeof layer);
    const char *files[] = {design, layer};
    static nm_spec spec;
    static nm_mapspace ms;
    nm_error err;
    ck_assert_int_eq(nm_spec_load(&spec, files, 2, NM_NEED_ARCH | NM_NEED_PROBLEM, &err), NM_OK);
    ck_assert_int_eq(nm_mapspace_init(&ms, &spec.arch, &spec.wl, spec.constraints,
                                      spec.constraints2, &err), NM_OK);
    struct floor_tally t;
    operand_floors(&ms, &spec, sf_forgotten, 1, NULL, 5, 20000, 300, &t, "broken");
    printf("operand_floor_is_admissible: a floor without multicast is above the model on %d of "
           "%d mappings of teaching/no_local_reuse\n", t.above, t.valid);
    ck_assert_int_gt(t.above, t.valid / 4);
    nm_spec_fini(&spec);
    /* ... and so is one that spares no tensor below a fan-out of level 0
     * (the A100's tensor cores), as if every operand changed every step */
    test_data("../../arch/gpu/a100.yaml", design, sizeof design);
    test_data("search/floor_conv3x3.yaml", layer, sizeof layer);
    ck_assert_int_eq(nm_spec_load(&spec, files, 2, NM_NEED_ARCH | NM_NEED_PROBLEM, &err), NM_OK);
    ck_assert_int_eq(nm_mapspace_init(&ms, &spec.arch, &spec.wl, spec.constraints,
                                      spec.constraints2, &err), NM_OK);
    operand_floors(&ms, &spec, sf_real, 0, NULL, 7, 20000, 300, &t, "broken");
    printf("operand_floor_is_admissible: a floor sparing no tensor below level 0's fan-out is "
           "above the model on %d of %d mappings of gpu/a100\n", t.above, t.valid);
    ck_assert_int_gt(t.above, t.valid / 4);
    nm_spec_fini(&spec);
}
END_TEST

/* Where each tensor has a register of its own (the simple arrays: one
 * word each for the weight, the input and the output beside the MAC), at
 * most one of them is left in place by the loops above all three: the
 * coupled refetch floor (roofline.c) counts the others' refills, which
 * each register's floor alone does not.  On a layer small enough to
 * search whole, the space's floor stays at or below the least energy and
 * EDP of all its mappings, and close to them: within 1.6 %, where each
 * level's floor alone left weight stationary's least energy 2.0 % above
 * (94,089 pJ against 95,947; with the coupling 94,704). */
START_TEST(coupled_floor_below_every_mapping)
{
    static const char *const designs[] = {"simple/weight_stationary.yaml",
                                          "simple/output_stationary.yaml"};
    for (size_t k = 0; k < sizeof designs / sizeof *designs; k++) {
        static struct env e;
        load_arch(&e.spec, &e.ms, designs[k], "search/floor_tiny.yaml");
        /* the least EDP and the least energy over the whole space */
        nm_search_result ex;
        double least[2];
        for (int k2 = 0; k2 < 2; k2++) {
            run_metric(&e, "exhaustive", 2, 0, k2 ? NM_MET_ENERGY : NM_MET_EDP, &ex);
            ck_assert(ex.found);
            ck_assert_str_eq(ex.stopped_by, "the whole space searched");
            least[k2] = ex.best.score[0];
            nm_search_result_fini(&ex);
        }
        double edp = least[0], energy = least[1];
        nm_operand_bound be, bp;
        ck_assert(nm_roofline_operand_bound(&e.ms, NM_MET_ENERGY, 1000000, &be));
        ck_assert(nm_roofline_operand_bound(&e.ms, NM_MET_EDP, 1000000, &bp));
        printf("coupled_floor_below_every_mapping: %s: the least energy %.6g pJ, floor %.6g "
               "(%.3fx below); the least EDP %.6g, floor %.6g (%.3fx)\n", designs[k], energy,
               be.metric, energy / be.metric, edp, bp.metric, edp / bp.metric);
        ck_assert_msg(be.metric <= energy * (1 + 1e-12) && bp.metric <= edp * (1 + 1e-12),
                      "%s: the floor above the least mapping", designs[k]);
        ck_assert_msg(be.metric * 1.016 >= energy && bp.metric * 1.016 >= edp,
                      "%s: the floors %g pJ and %g far below the least %g and %g", designs[k],
                      be.metric, bp.metric, energy, edp);
        nm_spec_fini(&e.spec);
    }
}
END_TEST

/* The words refetched from the top take its bandwidth too: on a buffer of
 * 64 words under a DRAM of a quarter word per cycle (the weights alone are
 * 512), each tensor once takes 2,816 cycles, and every mapping takes more.
 * The EDP floor, searched whole, is then above the least energy times
 * those cycles (the refetches' words counted at the top's bandwidth), yet
 * never above the least EDP. */
START_TEST(refetch_cycles_bound)
{
    static struct env e;
    load(&e, "search/starved.yaml", NULL);
    nm_search_result ex;
    run_metric(&e, "exhaustive", 2, 0, NM_MET_EDP, &ex);
    ck_assert(ex.found);
    ck_assert_str_eq(ex.stopped_by, "the whole space searched");
    double edp = ex.best.score[0];
    nm_search_result_fini(&ex);
    nm_roofline r;
    nm_roofline_of(&r, &e.spec.arch, &e.spec.wl);
    nm_operand_bound be, bp;
    ck_assert(nm_roofline_operand_bound(&e.ms, NM_MET_ENERGY, 1000000, &be));
    ck_assert(nm_roofline_operand_bound(&e.ms, NM_MET_EDP, 1000000, &bp));
    printf("refetch_cycles_bound: the least EDP %.6g, floor %.6g (%.4fx below); the least "
           "energy floor %.6g pJ times the roofline's %g cycles %.6g\n", edp, bp.metric,
           edp / bp.metric, be.metric, r.bound_cycles, be.metric * r.bound_cycles);
    ck_assert_double_eq(r.bound_cycles, 2816);
    ck_assert(bp.metric <= edp * (1 + 1e-12));
    ck_assert_msg(bp.metric > 1.1 * be.metric * r.bound_cycles, "the refetches' cycles lost");
    ck_assert(bp.metric * 1.001 >= edp);
    nm_spec_fini(&e.spec);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("search");
    TCase *tc = tcase_create("mapspace");
    tcase_add_test(tc, sizes_by_hand);
    tcase_add_test(tc, imperfect_space);
    tcase_add_test(tc, fit_residuals_by_hand);
    tcase_add_test(tc, constraint_forms);
    tcase_add_test(tc, unsatisfiable_constraints_located);
    tcase_add_test(tc, utilization_constraint);
    suite_add_tcase(s, tc);
    TCase *ts = tcase_create("search");
    tcase_set_timeout(ts, 120);
    tcase_add_test(ts, pruning_keeps_the_optimum);
    tcase_add_test(ts, optimal_matches_exhaustive);
    tcase_add_test(ts, optimal_warm_start);
    tcase_add_test(ts, filled_draws_fill_fanouts);
    tcase_add_test(ts, refine_climbs);
    tcase_add_test(ts, legalize_repairs);
    tcase_add_test(ts, fill_by_hand);
    tcase_add_test(ts, bound_sum_is_admissible);
    tcase_add_test(ts, curve_bounds_one_buffer);
    tcase_add_test(ts, refetches_are_the_model);
    tcase_add_test(ts, warm_starts_and_effort);
    tcase_add_test(ts, default_search_finds_optimum);
    tcase_add_test(ts, default_search_crosses_shapes);
    tcase_add_test(ts, default_search_fills_fanouts);
    tcase_add_test(ts, imperfect_search_climbs_on);
    tcase_add_test(ts, imperfect_search_full_axes);
    tcase_add_test(ts, threads_do_not_change_the_result);
    tcase_add_test(ts, termination_rules);
    tcase_add_test(ts, bound_is_admissible);
    tcase_add_test(ts, operand_floor_is_admissible);
    tcase_add_test(ts, coupled_floor_below_every_mapping);
    tcase_add_test(ts, refetch_cycles_bound);
    tcase_add_test(ts, warm_matches_cold);
    suite_add_tcase(s, ts);
    return s;
}

TEST_MAIN(suite)
