/* check_energy.c — the built-in energy classes (estimate.c) and their
 * precedence (energy.c): published points reproduced, monotone scaling in
 * size, width and node, ERT over built-in, located errors. */
#include <config.h>

#include <check.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "nestmap/estimate.h"
#include "nestmap/expr.h"
#include "nestmap/report.h"
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
    /* The PE array's fan-out is a level of its own, as timeloopfe writes it. */
    ck_assert_str_eq(spec.arch.level[0].name, "inter_PE_spatial");
    ck_assert_str_eq(spec.arch.level[0].container, "PE");
    ck_assert(spec.arch.level[0].dummy);
    ck_assert_int_eq(spec.arch.level[0].fanoutX, 4);
    ck_assert_int_eq(spec.arch.level[1].word_bits, 16);
    ck_assert(REL(spec.arch.level[1].e_read, nm_estimate_sram_pj(1024, 64, 32)));
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


/* The path of a file of the source tree (arch/, examples/). */
static const char *src_file(const char *rel, char *buf, size_t size)
{
    const char *src = getenv("NESTMAP_SRCDIR");
    snprintf(buf, size, "%s/%s", src ? src : ".", rel);
    return buf;
}

/* One primitive's action energy (pJ) and area, as compound.c must sum them. */
static double part(const char *cls, double depth, double width, double bits, double nm,
                   const char *action, double *um2)
{
    nm_primitive p = {"t", cls, depth, width, bits, 0, 0, nm, NULL};
    double pj, a;
    const char *src;
    nm_error err;
    ck_assert_int_eq(nm_estimate_primitive(&p, action, NULL, &pj, &a, &src, &err), NM_OK);
    if (um2)
        *um2 = a;
    return pj;
}

static const nm_level *level(const nm_arch *a, const char *name)
{
    int i = nm_arch_level(a, name);
    ck_assert_int_ge(i, 0);
    return &a->level[i];
}

static int vars(void *ctx, const char *name, size_t len, nm_value *out)
{
    (void)ctx;
    if (len == 5 && !strncmp(name, "depth", 5)) {
        *out = (nm_value){0, 13824, NULL, 0, NULL};
        return 1;
    }
    if (len == 4 && !strncmp(name, "tech", 4)) {
        *out = (nm_value){1, 0, "45nm", 4, NULL};
        return 1;
    }
    return 0;
}

static double eval_num(const char *text)
{
    nm_value v;
    nm_expr_error e;
    ck_assert_int_eq(nm_expr_eval(text, strlen(text), vars, NULL, &v, &e), NM_EXPR_OK);
    ck_assert(!v.is_str);
    return v.num;
}

START_TEST(expressions)
{
    ck_assert_double_eq(eval_num("max(1, ceil(log2(depth))) if depth >= 1 else 1"), 14);
    ck_assert_double_eq(eval_num("1 + 2 * 3 ** 2"), 19);
    ck_assert_double_eq(eval_num("-2 ** 2"), -4); /* Python: ** binds tighter */
    ck_assert_double_eq(eval_num("7 // 2 + 7 % 4"), 6);
    ck_assert_double_eq(eval_num("depth // 27"), 512);
    ck_assert_double_eq(eval_num("1 if 0 else 1 / 0 if 0 else 5"), 5); /* untaken: no error */
    ck_assert_double_eq(eval_num("not 0 and (2 > 1 > 0)"), 1);
    ck_assert_double_eq(eval_num("1.5e3"), 1500);
    nm_value v;
    nm_expr_error e;
    ck_assert_int_eq(nm_expr_eval("tech", 4, vars, NULL, &v, &e), NM_EXPR_OK);
    ck_assert(v.is_str && v.len == 4 && !strncmp(v.str, "45nm", 4));
    ck_assert_int_eq(nm_expr_eval("LPDDR4", 6, vars, NULL, &v, &e), NM_EXPR_STRING);
    ck_assert_int_eq(nm_expr_eval("45nm", 4, vars, NULL, &v, &e), NM_EXPR_STRING);
    ck_assert_int_eq(nm_expr_eval("depht * 2", 9, vars, NULL, &v, &e), NM_EXPR_ERROR);
    ck_assert_str_eq(e.name, "depht");
    ck_assert_int_eq(nm_expr_eval("depth / 0", 9, vars, NULL, &v, &e), NM_EXPR_ERROR);
    ck_assert_int_eq(e.offset, 6);
    ck_assert_int_eq(nm_expr_eval("log2(0)", 7, vars, NULL, &v, &e), NM_EXPR_ERROR);
    ck_assert_int_eq(nm_expr_eval("max()", 5, vars, NULL, &v, &e), NM_EXPR_ERROR);
}
END_TEST

/* Quantities with units (expr.h): the value in the unit's base, the unit
 * kept through arithmetic with plain numbers, and mixed units refused. */
static void eval_qty(const char *text, double want, const char *unit)
{
    nm_value v;
    nm_expr_error e;
    ck_assert_msg(nm_expr_eval(text, strlen(text), vars, NULL, &v, &e) == NM_EXPR_OK, "%s: %s",
                  text, e.msg);
    ck_assert_msg(!v.is_str && fabs(v.num - want) <= 1e-12 * fabs(want), "%s: %g, not %g", text,
                  v.num, want);
    ck_assert_msg(unit ? v.unit && !strcmp(v.unit, unit) : !v.unit, "%s: unit %s", text,
                  v.unit ? v.unit : "none");
}

static void eval_bad(const char *text, const char *msg)
{
    nm_value v;
    nm_expr_error e;
    ck_assert_int_eq(nm_expr_eval(text, strlen(text), vars, NULL, &v, &e), NM_EXPR_ERROR);
    ck_assert_msg(strstr(e.msg, msg), "%s: '%s'", text, e.msg);
}

START_TEST(expressions_with_units)
{
    eval_qty("64KiB", 65536, "B");
    eval_qty("2 * 32KiB", 65536, "B");
    eval_qty("32KiB * 2 + 1KiB", 66560, "B");
    eval_qty("400GB/s", 4e11, "B/s");
    eval_qty("400GB/s / 2", 2e11, "B/s");
    eval_qty("1ns", 1e-9, "s");
    eval_qty("1 / 1GHz", 1e-9, "s");
    eval_qty("1 / 2ns", 5e8, "Hz");
    eval_qty("max(16KiB, depth * 8B)", 110592, "B");
    eval_qty("64KiB / 1KiB", 64, NULL); /* a ratio */
    eval_qty("1 if 64KiB > 1KB else 0", 1, NULL);
    eval_qty("-1ms", -1e-3, "s");
    eval_bad("1ns + 1B", "adds s and B");
    eval_bad("64KiB * 2KiB", "one of them must be a plain number");
    eval_bad("log2(64KiB)", "takes plain numbers");
    eval_bad("1ns < 1", "compares s with a plain number");
    eval_bad("2 / 1B", "divides a plain number by B");
    nm_value v;
    nm_expr_error e;
    /* not units: technologies */
    ck_assert_int_eq(nm_expr_eval("45nm", 4, vars, NULL, &v, &e), NM_EXPR_STRING);
    ck_assert_int_eq(nm_expr_eval("7nm", 3, vars, NULL, &v, &e), NM_EXPR_STRING);
}
END_TEST

START_TEST(compound_sum_of_parts)
{
    char path[1024];
    const char *files[] = {src_file("arch/eyeriss/eyeriss_compound.yaml", path, sizeof path)};
    nm_spec spec;
    nm_error err;
    ck_assert_msg(nm_spec_load(&spec, files, 1, NM_NEED_ARCH, &err) == NM_OK, "%s", err.msg);
    ck_assert_int_eq(spec.doc.nwarnings, 0);
    /* The banked global buffer: one bank of 13824/27 = 512 words is reached
     * per access, plus an address generator of ceil(log2 13824) = 14 bits;
     * the area is all 27 banks and both generators. */
    double bank_um2, adder_um2;
    double e = part("SRAM", 512, 64, 64, 65, "read", &bank_um2) +
               part("intadder", 0, 0, 14, 65, "add", &adder_um2);
    const nm_level *glb = level(&spec.arch, "GlobalBuffer");
    ck_assert_int_eq(glb->esrc, NM_ESRC_COMPOUND);
    ck_assert(REL(glb->e_read, e));
    ck_assert(REL(glb->e_fill, e));
    ck_assert(REL(glb->e_update, e)); /* `<<: *glb_write`: an update is a write */
    ck_assert(REL(glb->area, 27 * bank_um2 + 2 * adder_um2));
    ck_assert_ptr_nonnull(strstr(glb->compose, "bank[0].read"));
    /* A register-file scratchpad: depth 12 -> a 4-bit generator. */
    const nm_level *img = level(&spec.arch, "ImageScratchpad");
    ck_assert(REL(img->e_read, part("regfile", 12, 16, 16, 65, "read", NULL) +
                                   part("intadder", 0, 0, 4, 65, "add", NULL)));
    nm_spec_fini(&spec);

    /* A compound compute class: Simba's MAC, multiplier + accumulator. */
    files[0] = src_file("arch/simba/simba_compound.yaml", path, sizeof path);
    ck_assert_msg(nm_spec_load(&spec, files, 1, NM_NEED_ARCH, &err) == NM_OK, "%s", err.msg);
    ck_assert_int_eq(spec.arch.arith.esrc, NM_ESRC_COMPOUND);
    ck_assert(REL(spec.arch.arith.e_compute, part("intmultiplier", 0, 0, 8, 16, "multiply", NULL) +
                                                 part("intadder", 0, 0, 24, 16, "add", NULL)));
    /* The PE buffer's loop counter: an adder and a register of 9 bits. */
    const nm_level *wb = level(&spec.arch, "WeightBuffer");
    ck_assert(REL(wb->e_read, part("SRAM", 512, 64, 64, 16, "read", NULL) +
                                  part("intadder", 0, 0, 9, 16, "add", NULL) +
                                  part("counter", 0, 0, 9, 16, "count", NULL)));
    nm_spec_fini(&spec);
}
END_TEST

/* `energy --ert` writes the composed figures as an ERT/ART; read back
 * beside the design, they give the very same energies and areas. */
START_TEST(compound_ert_round_trip)
{
    static const char *const designs[] = {"arch/eyeriss/eyeriss_compound.yaml",
                                          "arch/simba/simba_compound.yaml"};
    for (size_t d = 0; d < 2; d++) {
        char path[1024], tmp[] = "/tmp/nestmap-ert-XXXXXX";
        const char *files[] = {src_file(designs[d], path, sizeof path), tmp};
        nm_spec a, b;
        nm_error err;
        ck_assert_msg(nm_spec_load(&a, files, 1, NM_NEED_ARCH, &err) == NM_OK, "%s", err.msg);
        int fd = mkstemp(tmp);
        ck_assert_int_ge(fd, 0);
        FILE *f = fdopen(fd, "w");
        nm_report_energy(f, &a.arch, 2);
        fclose(f);
        ck_assert_msg(nm_spec_load(&b, files, 2, NM_NEED_ARCH, &err) == NM_OK, "%s", err.msg);
        unlink(tmp);
        for (int l = 0; l < a.arch.nlevels; l++) {
            const nm_level *x = &a.arch.level[l], *y = &b.arch.level[l];
            ck_assert_int_eq(y->esrc, NM_ESRC_ERT);
            ck_assert_double_eq(x->e_read, y->e_read);
            ck_assert_double_eq(x->e_fill, y->e_fill);
            ck_assert_double_eq(x->e_update, y->e_update);
            ck_assert_double_eq(x->e_leak, y->e_leak);
            ck_assert_double_eq(x->area, y->area);
        }
        ck_assert_double_eq(a.arch.arith.e_compute, b.arch.arith.e_compute);
        ck_assert_double_eq(a.arch.arith.area, b.arch.arith.area);
        nm_spec_fini(&a);
        nm_spec_fini(&b);
    }
}
END_TEST

START_TEST(compound_classes_and_user_classes)
{
    nm_spec spec;
    nm_error err;
    /* A user class with an ERT entry: its role comes from its actions. */
    ck_assert_int_eq(design(&spec, "my_buf", "depth: 64, width: 8, datawidth: 8", "my_alu",
                            "ERT:\n  version: '0.4'\n  tables:\n"
                            "  - {name: chip.buf, actions: [{name: read, energy: 1.5}, "
                            "{name: write, energy: 2}]}\n"
                            "  - {name: chip.mac, actions: [{name: mac_random, energy: 0.25}]}\n",
                            &err), NM_OK);
    ck_assert_double_eq(spec.arch.level[0].e_read, 1.5);
    ck_assert_double_eq(spec.arch.arith.e_compute, 0.25);
    nm_spec_fini(&spec);

    /* ... or from `role`. */
    ck_assert_int_eq(design(&spec, "my_buf", "depth: 64, width: 8, datawidth: 8, role: storage",
                            "intmac",
                            "ERT:\n  version: '0.4'\n  tables:\n"
                            "  - {name: chip.buf, actions: [{name: access, energy: 1.5}]}\n",
                            &err), NM_OK);
    nm_spec_fini(&spec);

    /* A class nothing defines: located, with the closest compound class. */
    static const char cc[] =
        "compound_components:\n"
        "  version: 0.4\n"
        "  classes:\n"
        "  - name: my_smartbuffer\n"
        "    attributes: {technology: must_specify, width: must_specify, depth: must_specify}\n"
        "    subcomponents:\n"
        "    - name: storage\n"
        "      class: %s\n"
        "      attributes: {width: width, depth: %s}\n"
        "    - name: scratch\n"
        "      class: my_sram\n"
        "      attributes: {width: width, depth: depth}\n"
        "    actions:\n"
        "    - name: read\n"
        "      subcomponents:\n"
        "      - name: storage\n"
        "        actions: [{name: read, repeat: 2}]\n"
        "      - name: scratch\n"
        "        actions: [{name: read}]\n"
        "    - name: write\n"
        "      subcomponents:\n"
        "      - name: storage\n"
        "        actions: [{name: write}]\n"
        "ERT:\n  version: '0.4'\n  tables:\n"
        "  - {name: my_sram, actions: [{name: read, energy: 0.5}, {name: write, energy: 0.5}]}\n";
    static const char buf_attrs[] = "depth: 64, width: 8, datawidth: 8, technology: 45nm";
    char extra[2048];
    snprintf(extra, sizeof extra, cc, "SRAM", "depth");
    ck_assert_int_eq(design(&spec, "my_smartbufer", buf_attrs,
                            "intmac", extra, &err), NM_ERR_INPUT);
    ck_assert_int_eq(err.line, 6);
    ck_assert_ptr_nonnull(strstr(err.msg, "did you mean 'my_smartbuffer'?"));
    nm_spec_fini(&spec);

    /* Defined: 2 x SRAM read + the ERT's my_sram read. */
    ck_assert_int_eq(design(&spec, "my_smartbuffer", buf_attrs,
                            "intmac", extra, &err), NM_OK);
    ck_assert(REL(spec.arch.level[0].e_read, 2 * nm_estimate_sram_pj(64, 8, 45) + 0.5));
    ck_assert(REL(spec.arch.level[0].e_update, spec.arch.level[0].e_fill));
    nm_spec_fini(&spec);

    /* A misspelt subcomponent class, an expression naming no attribute, an
     * attribute left unspecified: each located. */
    snprintf(extra, sizeof extra, cc, "SRMA", "depth");
    ck_assert_int_eq(design(&spec, "my_smartbuffer", buf_attrs,
                            "intmac", extra, &err), NM_ERR_INPUT);
    ck_assert_ptr_nonnull(strstr(err.msg, "did you mean 'SRAM'?"));
    nm_spec_fini(&spec);
    snprintf(extra, sizeof extra, cc, "SRAM", "dpeth * 2");
    ck_assert_int_eq(design(&spec, "my_smartbuffer", buf_attrs,
                            "intmac", extra, &err), NM_ERR_INPUT);
    ck_assert_int_eq(err.line, 16);
    ck_assert_ptr_nonnull(strstr(err.msg, "unknown name 'dpeth'; did you mean 'depth'?"));
    nm_spec_fini(&spec);
    snprintf(extra, sizeof extra, cc, "SRAM", "depth");
    ck_assert_int_eq(design(&spec, "my_smartbuffer",
                            "width: 8, datawidth: 8, technology: 45nm, role: storage", "intmac",
                            extra, &err), NM_ERR_INPUT);
    ck_assert_ptr_nonnull(strstr(err.msg, "attribute 'depth' of class 'my_smartbuffer' must be "
                                          "specified"));
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
    TCase *cc = tcase_create("compound");
    tcase_add_test(cc, expressions);
    tcase_add_test(cc, expressions_with_units);
    tcase_add_test(cc, compound_sum_of_parts);
    tcase_add_test(cc, compound_ert_round_trip);
    tcase_add_test(cc, compound_classes_and_user_classes);
    suite_add_tcase(s, cc);
    return s;
}

TEST_MAIN(suite)
