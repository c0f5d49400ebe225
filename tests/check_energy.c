/* check_energy.c — the built-in energy classes (estimate.c) and their
 * precedence (energy.c): published points reproduced, monotone scaling in
 * size, width and node, ERT over built-in, located errors. */
#include <config.h>

#include <check.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "nestmap/estimate.h"
#include "nestmap/spec.h"
#include "testutil.h"

#define REL(a, b) (fabs((a) - (b)) <= 1e-9 * fabs(b))

START_TEST(published_points)
{
    /* Horowitz ISSCC 2014, 45 nm: 64-bit reads of 8 KB, 32 KB, 1 MB SRAM. */
    ck_assert(REL(nm_estimate_sram_pj(1024, 64, 45), 10.0));
    ck_assert(REL(nm_estimate_sram_pj(4096, 64, 45), 20.0));
    ck_assert(REL(nm_estimate_sram_pj(131072, 64, 45), 100.0));
    /* Same: 8-bit multiply 0.2 + 8-bit add 0.03; 32-bit 3.1 + 0.1; FP16 1.1 + 0.4. */
    ck_assert(REL(nm_estimate_mac_pj(8, 8, 0, 45), 0.23));
    ck_assert(REL(nm_estimate_mac_pj(32, 32, 0, 45), 3.2));
    ck_assert(REL(nm_estimate_mac_pj(16, 16, 1, 45), 1.5));
    ck_assert(REL(nm_estimate_mac_pj(32, 32, 1, 45), 4.6));
    /* Han et al. 2015: a 32-bit register-file access, 1 pJ (32 entries). */
    ck_assert(REL(nm_estimate_regfile_pj(32, 32, 45), 1.0));
    ck_assert(REL(nm_tech_energy_factor(45), 1.0));
    ck_assert(REL(nm_tech_area_factor(45), 1.0));
    /* Stillmaker & Baas at 0.8 V: 45 -> 32 nm scales energy by 0.6593. */
    ck_assert_double_eq_tol(nm_tech_energy_factor(32), 0.6593, 1e-4);
    ck_assert(REL(nm_tech_area_factor(32), 0.46));
}
END_TEST

START_TEST(monotone_in_node)
{
    double pe = 0, pa = 0, ps = 0;
    for (double nm = 7; nm <= 130; nm += 0.5) {
        double e = nm_tech_energy_factor(nm), a = nm_tech_area_factor(nm);
        double s = nm_estimate_sram_pj(2048, 64, nm);
        ck_assert_msg(e > pe && a > pa && s > ps, "not increasing at %g nm", nm);
        pe = e;
        pa = a;
        ps = s;
    }
    ck_assert(nm_tech_energy_factor(5) < 0);
    ck_assert(nm_tech_energy_factor(180) < 0);
    ck_assert(nm_tech_area_factor(6.9) < 0);
}
END_TEST

START_TEST(monotone_in_size_and_width)
{
    double ps = 0, pr = 0;
    for (double d = 1; d <= 1 << 24; d *= 2) { /* beyond both ends of the table */
        double s = nm_estimate_sram_pj(d, 64, 45), r = nm_estimate_regfile_pj(d, 32, 45);
        ck_assert_msg(s > ps && r > pr, "not increasing at depth %g", d);
        ps = s;
        pr = r;
    }
    ps = pr = 0;
    for (double w = 1; w <= 2048; w *= 2) {
        double s = nm_estimate_sram_pj(1024, w, 28), r = nm_estimate_regfile_pj(64, w, 28);
        ck_assert_msg(s > ps && r > pr, "not increasing at width %g", w);
        ps = s;
        pr = r;
    }
    double pi = 0, pf = 0;
    for (int w = 2; w <= 64; w++) { /* up to double precision */
        double i = nm_estimate_mac_pj(w, 2 * w, 0, 16), f = nm_estimate_mac_pj(w, w, 1, 16);
        ck_assert_msg(i > pi && f > pf, "not increasing at %d bits", w);
        ck_assert_msg(f > nm_estimate_mac_pj(w, w, 0, 16), "fp below int at %d bits", w);
        pi = i;
        pf = f;
    }
}
END_TEST

/* A two-level design: DRAM, a buffer of class CLS (attributes ATTRS), a MAC
 * of class MCLS; then EXTRA (an ERT, say). */
static nm_status design(nm_spec *spec, const char *cls, const char *attrs, const char *mcls,
                        const char *extra, nm_error *err)
{
    char text[4096];
    snprintf(text, sizeof text,
             "architecture:\n"
             "  subtree:\n"
             "  - name: chip\n"
             "    local:\n"
             "    - {name: DRAM, class: DRAM, attributes: {type: LPDDR4, width: 64, datawidth: 8}}\n"
             "    - {name: buf, class: %s, attributes: {%s}}\n"
             "    - {name: mac, class: %s, attributes: {technology: 45nm, datawidth: 8}}\n"
             "%s",
             cls, attrs, mcls, extra);
    nm_error_clear(err);
    return nm_spec_load_string(spec, "design.yaml", text, NM_NEED_ARCH, err);
}

static int warned(const nm_spec *spec, const char *text)
{
    for (size_t i = 0; i < spec->doc.nwarnings; i++)
        if (strstr(spec->doc.warnings[i].msg, text))
            return 1;
    return 0;
}

START_TEST(classes_from_attributes)
{
    nm_spec spec;
    nm_error err;
    /* SRAM 4096 x 64 at 45 nm: 32 KB, the 20 pJ point. */
    ck_assert_int_eq(design(&spec, "SRAM", "depth: 4096, width: 64, datawidth: 8, "
                            "technology: 45nm", "intmac", "", &err), NM_OK);
    const nm_level *buf = &spec.arch.level[0];
    ck_assert_int_eq(buf->esrc, NM_ESRC_BUILTIN);
    ck_assert(REL(buf->e_read, 20.0));
    ck_assert(REL(buf->e_fill, 20.0));
    ck_assert(buf->area > 0);
    ck_assert(REL(spec.arch.arith.e_compute, 0.23));
    ck_assert_ptr_nonnull(strstr(spec.arch.arith.esrc_note, "Horowitz"));
    ck_assert(REL(spec.arch.level[1].e_read, 512.0)); /* LPDDR4, 8 pJ/bit */
    nm_spec_fini(&spec);

    /* `storage` with a subclass; the smartbuffer adds its address generator. */
    ck_assert_int_eq(design(&spec, "storage, subclass: smartbuffer_RF",
                            "depth: 32, width: 32, datawidth: 8, technology: 32nm", "intmac", "",
                            &err), NM_OK);
    ck_assert_double_gt(spec.arch.level[0].e_read, nm_estimate_regfile_pj(32, 32, 32));
    ck_assert_double_lt(spec.arch.level[0].e_read, 1.2 * nm_estimate_regfile_pj(32, 32, 32));
    nm_spec_fini(&spec);

    /* A register: energy on read only, as the Aladdin table has it. */
    ck_assert_int_eq(design(&spec, "aladdin_register", "depth: 1, width: 16, datawidth: 16, "
                            "technology: 40nm", "fpmac", "", &err), NM_OK);
    ck_assert(REL(spec.arch.level[0].e_read, 0.009 * 16));
    ck_assert_double_eq(spec.arch.level[0].e_fill, 0.0);
    ck_assert(REL(spec.arch.arith.e_compute, nm_estimate_mac_pj(8, 8, 1, 45)));
    nm_spec_fini(&spec);

    /* No technology: 45 nm, said in a warning. */
    ck_assert_int_eq(design(&spec, "regfile", "depth: 64, width: 16, datawidth: 16", "intmac",
                            "", &err), NM_OK);
    ck_assert(REL(spec.arch.level[0].e_read, nm_estimate_regfile_pj(64, 16, 45)));
    ck_assert(warned(&spec, "'buf' gives no technology"));
    nm_spec_fini(&spec);

    /* A subtree's technology reaches its components, as in Accelergy; the
     * component's own wins. */
    static const char inherit[] =
        "architecture:\n"
        "  subtree:\n"
        "  - name: chip\n"
        "    attributes: {technology: 32nm}\n"
        "    local:\n"
        "    - {name: DRAM, class: DRAM, attributes: {type: HBM2, width: 64, datawidth: 8}}\n"
        "    - {name: buf, class: SRAM, attributes: {depth: 1024, width: 64, datawidth: 8}}\n"
        "    subtree:\n"
        "    - name: PE[0..3]\n"
        "      local:\n"
        "      - {name: mac, class: intmac, attributes: {datawidth: 8, technology: 16nm}}\n";
    ck_assert_int_eq(nm_spec_load_string(&spec, "inherit.yaml", inherit, NM_NEED_ARCH, &err),
                     NM_OK);
    ck_assert(REL(spec.arch.level[0].e_read, nm_estimate_sram_pj(1024, 64, 32)));
    ck_assert(REL(spec.arch.arith.e_compute, nm_estimate_mac_pj(8, 8, 0, 16)));
    ck_assert(!warned(&spec, "gives no technology"));
    nm_spec_fini(&spec);

    /* The v0.4 nodes form: a !Container encloses the nodes that follow it,
     * and hands them technology, datawidth and the clock. */
    static const char nodes[] =
        "architecture:\n"
        "  version: 0.4\n"
        "  nodes:\n"
        "  - !Container\n"
        "    name: chip\n"
        "    attributes: {technology: 32nm, global_cycle_seconds: 2e-9, datawidth: 16}\n"
        "  - !Component {name: DRAM, class: DRAM, attributes: {type: HBM2, width: 64}}\n"
        "  - !Component {name: buf, class: SRAM, attributes: {depth: 1024, width: 64}}\n"
        "  - !Container {name: PE, spatial: {meshX: 4}, attributes: {technology: 22nm}}\n"
        "  - !Component {name: mac, class: intmac, attributes: {}}\n";
    ck_assert_int_eq(nm_spec_load_string(&spec, "nodes.yaml", nodes, NM_NEED_ARCH, &err),
                     NM_OK);
    ck_assert_int_eq(spec.arch.level[0].word_bits, 16);
    ck_assert(REL(spec.arch.level[0].e_read, nm_estimate_sram_pj(1024, 64, 32)));
    ck_assert(REL(spec.arch.arith.e_compute, nm_estimate_mac_pj(16, 16, 0, 22)));
    ck_assert_int_eq(spec.arch.arith.instances, 4);
    ck_assert_double_eq(spec.arch.cycle_seconds, 2e-9);
    ck_assert(!warned(&spec, "gives no technology"));
    nm_spec_fini(&spec);
}
END_TEST

START_TEST(ert_beats_builtin)
{
    nm_spec spec;
    nm_error err;
    ck_assert_int_eq(design(&spec, "SRAM", "depth: 4096, width: 64, datawidth: 8, "
                            "technology: 45nm", "intmac",
                            "ERT:\n  version: '0.4'\n  tables:\n"
                            "  - name: chip.buf[1..1]\n"
                            "    actions: [{name: read, energy: 3.5}, {name: write, energy: 4}]\n"
                            "ART:\n  version: '0.4'\n  tables:\n"
                            "  - {name: \"chip.mac[1..1]\", area: 123}\n",
                            &err), NM_OK);
    const nm_arch *a = &spec.arch;
    ck_assert_int_eq(a->level[0].esrc, NM_ESRC_ERT);
    ck_assert_double_eq(a->level[0].e_read, 3.5);
    ck_assert_double_eq(a->level[0].e_fill, 4.0);
    ck_assert_double_gt(a->level[0].area, 0); /* no ART entry: the built-in area */
    ck_assert_int_eq(a->arith.esrc, NM_ESRC_BUILTIN);
    ck_assert_double_eq(a->arith.area, 123.0);
    ck_assert_int_eq(a->level[1].esrc, NM_ESRC_BUILTIN);
    nm_spec_fini(&spec);

    /* An ERT entry also stands in for a class nestmap does not know. */
    ck_assert_int_eq(design(&spec, "my_buffer", "depth: 64, width: 8, datawidth: 8", "intmac",
                            "ERT:\n  version: '0.4'\n  tables:\n"
                            "  - {name: chip.buf, actions: [{name: read, energy: 1}]}\n",
                            &err), NM_OK);
    ck_assert_double_eq(spec.arch.level[0].e_read, 1.0);
    nm_spec_fini(&spec);

    /* An ERT energy without an ART area: the area is still estimated. */
    ck_assert_int_eq(design(&spec, "SRAM", "depth: 64, width: 64, technology: 45nm", "intmac",
                            "ERT:\n  version: '0.4'\n  tables:\n"
                            "  - {name: chip.mac, actions: [{name: compute, energy: 2}]}\n",
                            &err), NM_OK);
    ck_assert_int_eq(spec.arch.arith.esrc, NM_ESRC_ERT);
    ck_assert_double_eq(spec.arch.arith.e_compute, 2.0);
    ck_assert_int_eq(spec.arch.arith.asrc, NM_ESRC_BUILTIN);
    ck_assert_double_gt(spec.arch.arith.area, 0);
    nm_spec_fini(&spec);
}
END_TEST

START_TEST(located_errors)
{
    nm_spec spec;
    nm_error err;
    ck_assert_int_eq(design(&spec, "smartbuffer_SARM", "depth: 64, width: 8, datawidth: 8",
                            "intmac", "", &err), NM_ERR_INPUT);
    ck_assert_int_eq(err.line, 6);
    ck_assert_int_eq(err.col, 26);
    ck_assert_ptr_nonnull(strstr(err.msg, "did you mean 'smartbuffer_SRAM'?"));
    nm_spec_fini(&spec);

    ck_assert_int_eq(design(&spec, "my_buffer", "depth: 64, width: 8, datawidth: 8", "intmac",
                            "", &err), NM_ERR_INPUT);
    ck_assert_ptr_nonnull(strstr(err.msg, "no built-in class 'my_buffer'"));
    ck_assert_ptr_nonnull(strstr(err.msg, "give 'buf' an ERT entry"));
    nm_spec_fini(&spec);

    ck_assert_int_eq(design(&spec, "SRAM", "width: 64, datawidth: 8, technology: 45nm", "intmac",
                            "", &err), NM_ERR_INPUT);
    ck_assert_int_eq(err.line, 6);
    ck_assert_ptr_nonnull(strstr(err.msg, "'buf' (class SRAM) has no depth"));
    nm_spec_fini(&spec);

    ck_assert_int_eq(design(&spec, "SRAM", "depth: 64, width: 64, datawidth: 8, technology: 5nm",
                            "intmac", "", &err), NM_ERR_INPUT);
    ck_assert_int_eq(err.line, 6);
    ck_assert_ptr_nonnull(strstr(err.msg, "outside the scaling table"));
    nm_spec_fini(&spec);

    ck_assert_int_eq(design(&spec, "SRAM", "depth: 64, width: 64, technology: fast",
                            "intmac", "", &err), NM_ERR_INPUT);
    ck_assert_ptr_nonnull(strstr(err.msg, "technology 'fast'"));
    nm_spec_fini(&spec);

    ck_assert_int_eq(design(&spec, "storage", "depth: 64, width: 64", "intmac", "", &err),
                     NM_ERR_INPUT);
    ck_assert_ptr_nonnull(strstr(err.msg, "needs a 'subclass'"));
    nm_spec_fini(&spec);

    ck_assert_int_eq(design(&spec, "SRAM", "depth: 64, width: 64", "intmacs", "", &err),
                     NM_ERR_INPUT);
    ck_assert_ptr_nonnull(strstr(err.msg, "did you mean 'intmac'?"));
    nm_spec_fini(&spec);

    /* A class that is neither storage nor compute still gets a suggestion. */
    ck_assert_int_eq(design(&spec, "SRAM", "depth: 64, width: 64", "intmca", "", &err),
                     NM_ERR_INPUT);
    ck_assert_int_eq(err.line, 7);
    ck_assert_ptr_nonnull(strstr(err.msg, "did you mean 'intmac'?"));
    nm_spec_fini(&spec);
}
END_TEST

static nm_status dram_design(nm_spec *spec, const char *attrs, const char *ert, nm_error *err)
{
    char text[2048];
    snprintf(text, sizeof text,
             "architecture:\n"
             "  subtree:\n"
             "  - name: chip\n"
             "    local:\n"
             "    - {name: DRAM, class: DRAM, attributes: {width: 256, datawidth: 8%s}}\n"
             "    - {name: MAC, class: intmac}\n"
             "%s",
             attrs, ert);
    return nm_spec_load_string(spec, "dram.yaml", text, NM_NEED_ARCH, err);
}

START_TEST(builtin_dram)
{
    nm_spec spec;
    nm_error err;
    ck_assert_int_eq(dram_design(&spec, ", type: HBM2", "", &err), NM_OK);
    ck_assert_double_eq_tol(spec.arch.level[0].e_read, 3.9 * 256, 1e-9);
    ck_assert_int_eq(spec.arch.level[0].esrc, NM_ESRC_BUILTIN);
    ck_assert_ptr_nonnull(strstr(spec.arch.level[0].esrc_note, "HBM2"));
    nm_spec_fini(&spec);

    ck_assert_int_eq(dram_design(&spec, "", "", &err), NM_OK);
    ck_assert_double_eq_tol(spec.arch.level[0].e_read, 8.0 * 256, 1e-9);
    int warned = 0;
    for (size_t i = 0; i < spec.doc.nwarnings; i++)
        warned |= strstr(spec.doc.warnings[i].msg, "assuming LPDDR4") != NULL;
    ck_assert(warned);
    nm_spec_fini(&spec);

    ck_assert_int_eq(dram_design(&spec, ", type: DDR3",
                                 "ERT:\n  version: 0.4\n  tables:\n"
                                 "  - {name: chip.DRAM, actions: [{name: read, energy: 100}]}\n",
                                 &err), NM_OK);
    ck_assert_double_eq(spec.arch.level[0].e_read, 100.0);
    ck_assert_int_eq(spec.arch.level[0].esrc, NM_ESRC_ERT);
    nm_spec_fini(&spec);

    ck_assert_int_eq(dram_design(&spec, ", type: GDDR6", "", &err), NM_OK);
    ck_assert_double_eq_tol(spec.arch.level[0].e_read, 7.5 * 256, 1e-9);
    nm_spec_fini(&spec);

    ck_assert_int_eq(dram_design(&spec, ", type: LPDDR5", "", &err), NM_ERR_INPUT);
    ck_assert_int_eq(err.line, 5);
    ck_assert_ptr_nonnull(strstr(err.msg, "DRAM type 'LPDDR5'"));
    ck_assert_ptr_nonnull(strstr(err.msg, "known: LPDDR4, HBM2, GDDR5, DDR3, GDDR6, GDDR6X"));
    ck_assert_ptr_nonnull(strstr(err.msg, "give 'DRAM' an ERT entry"));
    nm_spec_fini(&spec);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("energy");
    TCase *tc = tcase_create("builtin");
    tcase_add_test(tc, published_points);
    tcase_add_test(tc, monotone_in_node);
    tcase_add_test(tc, monotone_in_size_and_width);
    tcase_add_test(tc, classes_from_attributes);
    tcase_add_test(tc, ert_beats_builtin);
    tcase_add_test(tc, located_errors);
    tcase_add_test(tc, builtin_dram);
    suite_add_tcase(s, tc);
    return s;
}

TEST_MAIN(suite)
