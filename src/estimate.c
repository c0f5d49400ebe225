/* estimate.c — built-in energy and area of components from their class and
 * attributes; see estimate.h.
 *
 * The tables below are published figures; each carries its source.  Curves
 * are interpolated with GSL, linearly in log-log space (energy grows as a
 * power of size or width between the published points); beyond the end
 * points the end segment's slope carries on. */
#include <config.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <gsl/gsl_interp.h>

#include "nestmap/estimate.h"
#include "nestmap/text.h"

#define REF_NM 45.0 /* node of the Horowitz tables */

/* ---- the tables ------------------------------------------------------- */

/* M. Horowitz, "Computing's energy problem (and what we can do about it)",
 * ISSCC 2014, 45 nm at 0.9 V: energy per operation (pJ) and area (um^2) of
 * integer and floating-point adders and multipliers by operand width. */
static const double add_bits[] = {8, 16, 32};
static const double add_pj[] = {0.03, 0.05, 0.1};
static const double add_um2[] = {36, 67, 137};
static const double mul_bits[] = {8, 32};
static const double mul_pj[] = {0.2, 3.1};
static const double mul_um2[] = {282, 3495};
static const double fp_bits[] = {16, 32};
static const double fadd_pj[] = {0.4, 0.9};
static const double fadd_um2[] = {1360, 4184};
static const double fmul_pj[] = {1.1, 3.7};
static const double fmul_um2[] = {1640, 7700};

/* Same source: energy of a 64-bit read from an SRAM of 8 KB, 32 KB and
 * 1 MB (pJ). */
static const double sram_bytes[] = {8192, 32768, 1048576};
static const double sram_pj[] = {10, 20, 100};

/* 6T SRAM cell area at 45 nm, 0.346 um^2: K. Mistry et al., "A 45nm logic
 * technology with high-k + metal gate transistors...", IEDM 2007.  Cell
 * area only; the periphery is not counted. */
#define SRAM_CELL_UM2 0.346

/* A 32-bit register-file access costs 1 pJ at 45 nm: S. Han et al.,
 * "Learning both weights and connections for efficient neural networks",
 * NeurIPS 2015, Table 1 (after Horowitz 2014).  The source gives no entry
 * count; nestmap takes 32 entries, a common register file.  Energy grows
 * with depth as depth^0.78, the CACTI-derived rule (1.56/2) of Accelergy's
 * library plug-in, and linearly with width. */
#define RF_REF_PJ 1.0
#define RF_REF_BITS 32.0
#define RF_REF_DEPTH 32.0
#define RF_DEPTH_EXP 0.78

/* One-bit register, 40 nm: 0.009 pJ per bit read (writes count 0, the
 * convention of the table), 5.98 um^2 per bit.  Y. S. Shao et al.,
 * "Aladdin: a pre-RTL, power-performance accelerator simulator", ISCA 2014,
 * as tabulated in Accelergy's Aladdin plug-in. */
#define REG_NM 40.0
#define REG_PJ_PER_BIT 0.009
#define REG_UM2_PER_BIT 5.98

/* Leakage power at 45 nm, as Accelergy 0.4 estimates it with its CACTI
 * plug-in (SRAM) and its component library (register files), fitted to
 * the `leak` entries of the reference ERTs in the public Timeloop
 * exercises (workspace/example_designs/example_designs/{simba_like,
 * simple_weight_stationary, sparseloop/...}/ref_outputs/default_problem/
 * timeloop-mapper.ERT_summary.yaml, 45 nm, 1 ns cycles):
 *   SRAM (CACTI): 0.001165 pJ/cycle at 192x16 bits, 0.003241 at 2048x256,
 *     0.004781 at 12800x64, 0.005353 at 16384x64: 1.15 uW + 4.0 pW a bit
 *     (every point within 10 %);
 *   register files (library `storage`): 0.104535 pJ/cycle at 4096x64 bits
 *     and 0.207488 at 8192x64: 0.39 nW a bit, plus 1.5 uW of periphery
 *     for a file deeper than one entry (its small points, 64x8 to 224x16,
 *     within a factor of 2 of this); a one-entry register 0.39 nW a bit
 *     (0.000169 pJ/cycle at 1x512: within 20 %).
 * Other nodes scale as dynamic energy does (Stillmaker and Baas, above):
 * an approximation, leakage varying more with the process.  Arithmetic
 * units leak nothing in the model, as in Timeloop's; DRAM leaks nothing
 * in Accelergy's CACTI DRAM model either (its entries are 0). */
#define SRAM_LEAK_W 1.15e-6
#define SRAM_LEAK_W_PER_BIT 4.0e-12
#define RF_LEAK_W 1.5e-6
#define RF_LEAK_W_PER_BIT 0.39e-9

/* A 32-bit comparator, 40 nm: 0.029015 pJ per compare at Aladdin's default
 * 5 ns latency, scaled by width / 32 (the same ISCA 2014 tables, as
 * Accelergy's Aladdin plug-in reads them: data/comparator.csv,
 * comparator_estimate_energy).  The table gives no area; nestmap counts an
 * adder of the same width (a comparison is a subtraction). */
#define CMP_PJ_32 0.029015

/* Technology scaling: A. Stillmaker and B. Baas, "Scaling equations for the
 * accurate prediction of CMOS device performance from 180 nm to 7 nm",
 * Integration 58 (2017).  Energy at a node is a*V^2 + b*V + c (its fitted
 * coefficients, as Accelergy's library plug-in tabulates them), taken at
 * V = 0.8 as Accelergy does; area relative to 45 nm is the paper's area
 * scaling row for 45 nm.  Ascending node order, for GSL. */
static const double tech_nm[] = {7, 10, 14, 16, 20, 32, 45, 65, 90, 130};
static const double tech_coef[][3] = {
    {0.1776, -0.09097, 0.02447}, {0.2068, -0.09311, 0.02375}, {0.2363, -0.09675, 0.02239},
    {0.2958, -0.1241, 0.03024},  {0.373, -0.1582, 0.04104},   {0.9559, -0.7823, 0.471},
    {1.103, -0.362, 0.2767},     {3.755, -4.398, 1.975},      {4.762, -4.781, 2.092},
    {7.171, -6.709, 2.904}};
static const double tech_area[] = {0.059, 0.1, 0.17, 0.19, 0.21, 0.46, 1, 1.5, 2.8, 6.4};
#define NTECH (sizeof tech_nm / sizeof *tech_nm)
#define TECH_VDD 0.8

/* DRAM access energy per bit, by type: Accelergy's DRAM table as the
 * Accelergy project documents it (LPDDR4, HBM2, GDDR5, DDR3), and Micron's
 * device-power figures from its GDDR6X product comparison (GDDR6 7.5,
 * GDDR6X 7.25 pJ/bit).  Other types (LPDDR5, DDR4, DDR5, HBM3) have no
 * published figure here: they need an ERT entry.
 *
 * And the peak bandwidth of one unit of each type, the highest data rate
 * of its JEDEC standard times the unit's interface width: an LPDDR4 x64
 * package at 4266 MT/s (JESD209-4B) 34.1 GB/s; an HBM2 stack, 1024 bits at
 * 2 Gb/s a pin (JESD235A) 256 GB/s; a GDDR5 x32 device at 8 Gb/s a pin
 * (JESD212C) 32 GB/s; a DDR3-1600 x64 module (JESD79-3F) 12.8 GB/s; a
 * GDDR6 x32 device at 16 Gb/s (JESD250C) 64 GB/s; a GDDR6X x32 device at
 * 21 Gb/s (Micron's GDDR6X data sheet) 84 GB/s.  A design with several
 * units multiplies (--set DRAM.shared_bandwidth=...). */
static const struct {
    const char *type;
    double pj_per_bit;
    const char *note;
    double peak_bytes_per_s;
    const char *peak_note;
} dram_table[] = {
    {"LPDDR4", 8.0, "DRAM LPDDR4: 8 pJ/bit (Accelergy's DRAM table)", 34.128e9,
     "one LPDDR4 x64 package at 4266 MT/s (JESD209-4B)"},
    {"HBM2", 3.9, "DRAM HBM2: 3.9 pJ/bit (Accelergy's DRAM table)", 256e9,
     "one HBM2 stack, 1024 bits at 2 Gb/s (JESD235A)"},
    {"GDDR5", 14.0, "DRAM GDDR5: 14 pJ/bit (Accelergy's DRAM table)", 32e9,
     "one GDDR5 x32 device at 8 Gb/s (JESD212C)"},
    {"DDR3", 70.0, "DRAM DDR3: 70 pJ/bit (Accelergy's DRAM table)", 12.8e9,
     "one DDR3-1600 x64 module (JESD79-3F)"},
    {"GDDR6", 7.5, "DRAM GDDR6: 7.5 pJ/bit (Micron)", 64e9,
     "one GDDR6 x32 device at 16 Gb/s (JESD250C)"},
    {"GDDR6X", 7.25, "DRAM GDDR6X: 7.25 pJ/bit (Micron)", 84e9,
     "one GDDR6X x32 device at 21 Gb/s (Micron)"},
};

int nm_estimate_dram_peak(const char *type, double *bytes_per_s, const char **source)
{
    for (size_t i = 0; i < sizeof dram_table / sizeof *dram_table; i++)
        if (!strcmp(dram_table[i].type, type)) {
            *bytes_per_s = dram_table[i].peak_bytes_per_s;
            if (source)
                *source = dram_table[i].peak_note;
            return 1;
        }
    return 0;
}

/* ---- interpolation ---------------------------------------------------- */

/* y(x), linear between the points (xs ascending); GSL finds the segment.
 * Beyond the ends the end segment's slope carries on. */
static double linear(const double *xs, const double *ys, size_t n, double x)
{
    gsl_interp *g = gsl_interp_alloc(gsl_interp_linear, n);
    if (!g)
        return NAN;
    gsl_interp_init(g, xs, ys, n);
    double end = x < xs[0] ? xs[0] : x > xs[n - 1] ? xs[n - 1] : x;
    double y = gsl_interp_eval(g, xs, ys, end, NULL);
    if (end != x)
        y += (x - end) * gsl_interp_eval_deriv(g, xs, ys, end, NULL);
    gsl_interp_free(g);
    return y;
}

/* y(x) over the published points, linear in (log x, log y). */
static double loglog(const double *xs, const double *ys, size_t n, double x)
{
    double lx[8], ly[8];
    for (size_t i = 0; i < n; i++) {
        lx[i] = log(xs[i]);
        ly[i] = log(ys[i]);
    }
    return exp(linear(lx, ly, n, log(x)));
}

/* Linear in node between the table's nodes; NAN outside. */
static double over_nodes(const double *ys, double nm)
{
    if (!(nm >= tech_nm[0] && nm <= tech_nm[NTECH - 1]))
        return NAN;
    return linear(tech_nm, ys, NTECH, nm);
}

static double energy_at(double nm)
{
    double f[NTECH];
    for (size_t i = 0; i < NTECH; i++)
        f[i] = tech_coef[i][0] * TECH_VDD * TECH_VDD + tech_coef[i][1] * TECH_VDD +
               tech_coef[i][2];
    return over_nodes(f, nm);
}

double nm_tech_energy_factor(double nm)
{
    double f = energy_at(nm);
    return isnan(f) ? -1.0 : f / energy_at(REF_NM);
}

double nm_tech_area_factor(double nm)
{
    double a = over_nodes(tech_area, nm);
    return isnan(a) ? -1.0 : a;
}

/* ---- the classes ------------------------------------------------------ */

double nm_estimate_sram_pj(double depth, double width_bits, double nm)
{
    /* A w-bit SRAM of depth d: w/64 side-by-side 64-bit slices of d x 8 bytes. */
    return width_bits / 64.0 * loglog(sram_bytes, sram_pj, 3, depth * 8.0) *
           nm_tech_energy_factor(nm);
}

double nm_estimate_regfile_pj(double depth, double width_bits, double nm)
{
    return RF_REF_PJ * (width_bits / RF_REF_BITS) * pow(depth / RF_REF_DEPTH, RF_DEPTH_EXP) *
           nm_tech_energy_factor(nm);
}

static double register_pj(double bits, double nm)
{
    return REG_PJ_PER_BIT * bits * nm_tech_energy_factor(nm) / nm_tech_energy_factor(REG_NM);
}

/* Adder and multiplier energy (pJ) and area (um^2) at 45 nm by width. */
static double adder_pj(int fp, double bits)
{
    return fp ? loglog(fp_bits, fadd_pj, 2, bits) : loglog(add_bits, add_pj, 3, bits);
}

static double mult_pj(int fp, double bits)
{
    return fp ? loglog(fp_bits, fmul_pj, 2, bits) : loglog(mul_bits, mul_pj, 2, bits);
}

static double adder_um2(int fp, double bits)
{
    return fp ? loglog(fp_bits, fadd_um2, 2, bits) : loglog(add_bits, add_um2, 3, bits);
}

static double mult_um2(int fp, double bits)
{
    return fp ? loglog(fp_bits, fmul_um2, 2, bits) : loglog(mul_bits, mul_um2, 2, bits);
}

double nm_estimate_mac_pj(int mult_bits, int adder_bits, int fp, double nm)
{
    return (mult_pj(fp, mult_bits) + adder_pj(fp, adder_bits)) * nm_tech_energy_factor(nm);
}

/* A smartbuffer's address generator: an adder and two registers (address,
 * stride) of ceil(log2 depth) bits, the parts Accelergy's smartbuffer
 * compound components put beside the memory. */
static double address_gen_pj(double depth, double nm)
{
    double bits = depth > 2 ? ceil(log2(depth)) : 1.0;
    return adder_pj(0, bits) * nm_tech_energy_factor(nm) +
           2.0 * register_pj(bits, nm);
}

enum kind {
    K_DRAM, K_SRAM, K_SB_SRAM, K_RF, K_SB_RF, K_REG, K_DUMMY, /* storage */
    K_INTMAC, K_FPMAC, K_INTADD, K_INTMUL, K_FPADD, K_FPMUL,  /* arithmetic */
    K_CMP                                                      /* inside compounds */
};

static const struct {
    const char *name;
    enum kind kind;
} classes[] = {
    {"DRAM", K_DRAM},           {"SRAM", K_SRAM},
    {"smartbuffer_SRAM", K_SB_SRAM}, {"regfile", K_RF},
    {"smartbuffer_RF", K_SB_RF}, {"aladdin_register", K_REG},
    {"register", K_REG},        {"dummy_storage", K_DUMMY},
    {"intmac", K_INTMAC},       {"fpmac", K_FPMAC},
    {"intadder", K_INTADD},     {"aladdin_adder", K_INTADD},
    {"intmultiplier", K_INTMUL}, {"aladdin_multiplier", K_INTMUL},
    {"fpadder", K_FPADD},       {"fpmultiplier", K_FPMUL},
    {"comparator", K_CMP},      {"aladdin_comparator", K_CMP},
};
#define NCLASSES (sizeof classes / sizeof *classes)

static const char *const kind_source[] = {
    [K_DRAM] = "",
    [K_SRAM] = "built-in SRAM (Horowitz 2014 45 nm, Stillmaker-Baas scaling)",
    [K_SB_SRAM] = "built-in SRAM + address generator (Horowitz 2014, Aladdin)",
    [K_RF] = "built-in regfile (Han 2015 32-bit RF, depth^0.78)",
    [K_SB_RF] = "built-in regfile + address generator (Han 2015, Aladdin)",
    [K_REG] = "built-in register (Aladdin 40 nm, 0.009 pJ/bit)",
    [K_DUMMY] = "dummy (no energy)",
    [K_INTMAC] = "built-in intmac (Horowitz 2014 45 nm)",
    [K_FPMAC] = "built-in fpmac (Horowitz 2014 45 nm)",
    [K_INTADD] = "built-in intadder (Horowitz 2014 45 nm)",
    [K_INTMUL] = "built-in intmultiplier (Horowitz 2014 45 nm)",
    [K_FPADD] = "built-in fpadder (Horowitz 2014 45 nm)",
    [K_FPMUL] = "built-in fpmultiplier (Horowitz 2014 45 nm)",
    [K_CMP] = "built-in comparator (Aladdin 40 nm, 0.029 pJ per 32 bits)",
};

static int is_storage_kind(enum kind k)
{
    return k <= K_DUMMY;
}

/* The built-in class of cls (or of subclass, for the generic `storage` and
 * `compute`), or -1. */
static int lookup(const char *cls, const char *subclass)
{
    if (subclass && subclass[0] && (!strcasecmp(cls, "storage") || !strcasecmp(cls, "compute")))
        cls = subclass;
    for (size_t i = 0; i < NCLASSES; i++)
        if (!strcasecmp(classes[i].name, cls))
            return (int)classes[i].kind;
    return -1;
}

/* What an arithmetic class of kind k is made of: a floating-point
 * format, an adder, a multiplier. */
static void arith_parts(int k, int *fp, int *has_add, int *has_mul)
{
    *fp = k == K_FPMAC || k == K_FPADD || k == K_FPMUL;
    *has_add = k == K_INTMAC || k == K_FPMAC || k == K_INTADD || k == K_FPADD;
    *has_mul = k == K_INTMAC || k == K_FPMAC || k == K_INTMUL || k == K_FPMUL;
}

const char *nm_op_kind_name(nm_op_kind k)
{
    static const char *const names[NM_OP_KINDS] = {"mac", "add", "mul", "max",
                                                   "exp", "div", "copy"};
    return (unsigned)k < NM_OP_KINDS ? names[k] : "?";
}

double nm_arith_op_energy(const nm_arith *A, nm_op_kind k, const char **how)
{
    if (k == NM_OP_MAC) {
        *how = "a compute";
        return A->e_compute;
    }
    if ((A->op_given >> k) & 1u) {
        *how = "the design's ERT";
        return A->e_op[k];
    }
    if (k == NM_OP_COPY) {
        *how = "no arithmetic";
        return 0.0;
    }
    if (k == NM_OP_EXP || k == NM_OP_DIV) {
        *how = "a compute (no built-in figure; the ERT may give one)";
        return A->e_compute;
    }
    int kk = lookup(A->cls, A->subclass), fp, has_add, has_mul;
    arith_parts(kk < 0 ? K_INTMAC : kk, &fp, &has_add, &has_mul); /* (unknown: a MAC's) */
    double add = adder_pj(fp, A->adder_bits), mul = mult_pj(fp, A->mult_bits);
    double whole = (has_add ? add : 0.0) + (has_mul ? mul : 0.0);
    double part = k == NM_OP_MUL ? mul : add;
    *how = k == NM_OP_MUL ? "the multiplier's share of a compute (Horowitz 2014)"
                          : "the adder's share of a compute (Horowitz 2014)";
    return whole > 0.0 ? A->e_compute * part / whole : A->e_compute;
}

void nm_arith_as_op(nm_arith *A, nm_op_kind k)
{
    if (k == NM_OP_MAC)
        return;
    const char *how;
    double e = nm_arith_op_energy(A, k, &how);
    double r = A->e_compute > 0.0 ? e / A->e_compute : 0.0;
    A->e_gated *= r;
    A->e_skipped *= r;
    A->e_compute = e;
}

int nm_estimate_known(const char *cls, const char *subclass)
{
    return lookup(cls, subclass) >= 0;
}

const char *nm_estimate_suggest(const char *cls)
{
    const char *cands[NCLASSES];
    for (size_t i = 0; i < NCLASSES; i++)
        cands[i] = classes[i].name;
    return nm_text_suggest(cls, cands, NCLASSES);
}

static nm_status unknown_class(const nm_ynode *at, const char *comp, const char *cls,
                               const char *subclass, int storage, nm_error *err)
{
    const char *cands[NCLASSES];
    size_t n = 0;
    for (size_t i = 0; i < NCLASSES; i++)
        if (is_storage_kind(classes[i].kind) == storage)
            cands[n++] = classes[i].name;
    const char *name = subclass && subclass[0] ? subclass : cls;
    if ((!strcasecmp(cls, "storage") || !strcasecmp(cls, "compute")) && !(subclass && subclass[0]))
        return nm_yerror(err, at, "'%s': class '%s' needs a 'subclass' for a built-in energy "
                         "estimate (or give '%s' an ERT entry)", comp, cls, comp);
    const char *s = nm_text_suggest(name, cands, n);
    if (s)
        return nm_yerror(err, at, "'%s': no ERT entry and no built-in class '%s'; did you mean "
                         "'%s'?", comp, name, s);
    char list[512] = "";
    for (size_t i = 0; i < n; i++) {
        strncat(list, i ? ", " : "", sizeof list - strlen(list) - 1);
        strncat(list, cands[i], sizeof list - strlen(list) - 1);
    }
    return nm_yerror(err, at, "'%s': no ERT entry and no built-in class '%s' (built-in: %s); "
                     "give '%s' an ERT entry", comp, name, list, comp);
}

/* The `technology` attribute in nm: 45, "45nm", "45 nm", "0.045um".
 * Absent (or -1, as dummies write it): 45 nm with a warning.  t is the
 * component's own attribute or an enclosing subtree's. */
static nm_status technology(const nm_ynode *t, const nm_ynode *comp_node, const char *comp,
                            nm_ydoc *doc, double *nm, nm_error *err)
{
    if (t && t->kind == NM_Y_SCALAR && !nm_yis_null(t)) {
        char *end;
        double v = strtod(t->str, &end);
        while (*end == ' ')
            end++;
        if (!strcmp(end, "um"))
            v *= 1000.0;
        else if (*end && strcmp(end, "nm"))
            return nm_yerror(err, t, "'%s': technology '%s' is not a node in nm (e.g. 45nm)",
                             comp, t->str);
        if (v != -1.0) {
            if (nm_tech_energy_factor(v) < 0)
                return nm_yerror(err, t, "'%s': technology %g nm is outside the scaling table "
                                 "(7 to 130 nm, Stillmaker & Baas 2017); give '%s' an ERT entry",
                                 comp, v, comp);
            *nm = v;
            return NM_OK;
        }
    } else if (t && !nm_yis_null(t)) {
        return nm_yerror(err, t, "'%s': technology must be a node such as 45nm", comp);
    }
    *nm = REF_NM;
    if (doc && nm_ydoc_warn(doc, comp_node, "'%s' gives no technology; its built-in energy assumes "
                     "45 nm", comp) != NM_OK)
        return nm_error_set(err, NM_ERR_NOMEM, NULL, 0, 0, "out of memory");
    return NM_OK;
}

static nm_status dram(const nm_level *L, nm_ydoc *doc, nm_estimate *e, nm_error *err)
{
    const char *type = L->dram_type[0] ? L->dram_type : "LPDDR4";
    size_t n = sizeof dram_table / sizeof *dram_table;
    size_t i;
    for (i = 0; i < n; i++)
        if (!strcmp(dram_table[i].type, type))
            break;
    if (i == n) { /* real type names differ by a digit: no "did you mean" here */
        char known[128] = "";
        for (size_t k = 0; k < n; k++) {
            strncat(known, k ? ", " : "", sizeof known - strlen(known) - 1);
            strncat(known, dram_table[k].type, sizeof known - strlen(known) - 1);
        }
        return nm_yerror(err, L->type_node, "DRAM type '%s' of '%s' has no built-in energy "
                         "(known: %s); give '%s' an ERT entry", type, L->name, known, L->name);
    }
    if (!L->dram_type[0] && doc &&
        nm_ydoc_warn(doc, L->node, "'%s' gives no DRAM type; assuming LPDDR4 (8 pJ/bit), as "
                     "Accelergy does", L->name) != NM_OK)
        return nm_error_set(err, NM_ERR_NOMEM, NULL, 0, 0, "out of memory");
    double bits = (double)L->word_bits * L->block_size * L->cluster_size;
    e->read = e->write = e->update = dram_table[i].pj_per_bit * bits;
    e->source = dram_table[i].note;
    return NM_OK;
}

nm_status nm_estimate_level(const nm_level *L, nm_ydoc *doc, nm_estimate *e, nm_error *err)
{
    memset(e, 0, sizeof *e);
    int k = lookup(L->cls, L->subclass);
    if (k < 0 || !is_storage_kind((enum kind)k))
        return unknown_class(L->cls_node ? L->cls_node : L->node, L->name, L->cls, L->subclass,
                             1, err);
    e->source = kind_source[k];
    if (k == K_DUMMY)
        return NM_OK;
    if (k == K_DRAM || L->is_dram)
        return dram(L, doc, e, err);
    double nm;
    nm_status st = technology(L->tech, L->node, L->name, doc, &nm, err);
    if (st != NM_OK)
        return st;
    double width = (double)L->word_bits * L->block_size * L->cluster_size;
    double scale = nm_tech_energy_factor(nm); /* from 45 nm, the leakage tables' node */
    if (k == K_REG) {
        e->read = register_pj(width, nm);
        e->area = REG_UM2_PER_BIT * width * nm_tech_area_factor(nm) / nm_tech_area_factor(REG_NM);
        e->leak_w = RF_LEAK_W_PER_BIT * width * scale;
        return NM_OK;
    }
    if (!L->has_size)
        return nm_yerror(err, L->node, "'%s' (class %s) has no depth; its built-in energy needs "
                         "one (or give '%s' an ERT entry)", L->name, L->cls, L->name);
    double depth = (double)L->size / L->block_size;
    double bits = depth * width;
    if (k == K_SRAM || k == K_SB_SRAM) {
        e->read = nm_estimate_sram_pj(depth, width, nm);
        e->area = SRAM_CELL_UM2 * bits * nm_tech_area_factor(nm);
        e->leak_w = (SRAM_LEAK_W + SRAM_LEAK_W_PER_BIT * bits) * scale;
    } else {
        e->read = nm_estimate_regfile_pj(depth, width, nm);
        e->area = REG_UM2_PER_BIT * bits * nm_tech_area_factor(nm) / nm_tech_area_factor(REG_NM);
        e->leak_w = ((depth > 1 ? RF_LEAK_W : 0.0) + RF_LEAK_W_PER_BIT * bits) * scale;
    }
    if (k == K_SB_SRAM || k == K_SB_RF)
        e->read += address_gen_pj(depth, nm);
    e->write = e->update = e->read;
    return NM_OK;
}

nm_status nm_estimate_arith(const nm_arith *A, nm_ydoc *doc, nm_estimate *e, nm_error *err)
{
    memset(e, 0, sizeof *e);
    int k = lookup(A->cls, A->subclass);
    if (k < 0 || is_storage_kind((enum kind)k))
        return unknown_class(A->cls_node ? A->cls_node : A->node, A->name, A->cls, A->subclass,
                             0, err);
    e->source = kind_source[k];
    double nm;
    nm_status st = technology(A->tech, A->node, A->name, doc, &nm, err);
    if (st != NM_OK)
        return st;
    int mw = A->mult_bits, aw = A->adder_bits;
    int fp, has_add, has_mul;
    arith_parts(k, &fp, &has_add, &has_mul);
    e->compute = ((has_add ? adder_pj(fp, aw) : 0.0) + (has_mul ? mult_pj(fp, mw) : 0.0)) *
                 nm_tech_energy_factor(nm);
    e->area = ((has_add ? adder_um2(fp, aw) : 0.0) + (has_mul ? mult_um2(fp, mw) : 0.0)) *
              nm_tech_area_factor(nm);
    return NM_OK;
}

/* ---- primitives inside compound components ------------------------------ */

/* Actions that cost nothing in the built-in primitives of compound
 * classes: their leakage is not estimated (a plain storage class's is:
 * nm_estimate_level), and idle or gated cycles switch nothing. */
static int free_action(const char *action)
{
    return !strcasecmp(action, "leak") || !strcasecmp(action, "idle") ||
           strstr(action, "gated") || strstr(action, "skipped");
}

static int is_counter(const char *cls)
{
    return !strcasecmp(cls, "counter") || !strcasecmp(cls, "aladdin_counter");
}

nm_status nm_estimate_primitive(const nm_primitive *p, const char *action, const nm_ynode *at,
                                double *pj, double *um2, const char **source, nm_error *err)
{
    *pj = *um2 = 0.0;
    double nm = p->tech_nm > 0 ? p->tech_nm : REF_NM;
    if (nm_tech_energy_factor(nm) < 0)
        return nm_yerror(err, at, "'%s': technology %g nm is outside the scaling table (7 to "
                         "130 nm, Stillmaker & Baas 2017)", p->path, nm);
    double ef = nm_tech_energy_factor(nm), af = nm_tech_area_factor(nm);
    int rd = !strcasecmp(action, "read"), wr = !strcasecmp(action, "write") ||
             !strcasecmp(action, "fill") || !strcasecmp(action, "update");
    int k = lookup(p->cls, NULL);
    if (is_counter(p->cls)) {
        /* A counter is an adder and a register of its width, as the
         * address generator above is composed. */
        double bits = p->bits > 0 ? p->bits : 1.0;
        *um2 = (adder_um2(0, bits) + REG_UM2_PER_BIT * bits / nm_tech_area_factor(REG_NM)) * af;
        *source = "built-in counter: adder + register (Horowitz 2014, Aladdin)";
        if (!free_action(action))
            *pj = adder_pj(0, bits) * ef + register_pj(bits, nm);
        return NM_OK;
    }
    if (k < 0) {
        const char *s = nm_estimate_suggest(p->cls);
        if (s)
            return nm_yerror(err, at, "'%s': class '%s' is neither a compound class nor built "
                             "in; did you mean '%s'?", p->path, p->cls, s);
        return nm_yerror(err, at, "'%s': class '%s' is neither a compound class of the input "
                         "nor a built-in class (give it an ERT entry)", p->path, p->cls);
    }
    *source = kind_source[k];
    if (k == K_DUMMY)
        return NM_OK;
    if (is_storage_kind((enum kind)k)) {
        if (!rd && !wr && !free_action(action))
            return nm_yerror(err, at, "'%s' (%s) has no action '%s' (read, write, update, "
                             "leak)", p->path, p->cls, action);
        if (k == K_DRAM) {
            const char *type = p->dram_type && p->dram_type[0] ? p->dram_type : "LPDDR4";
            for (size_t i = 0; i < sizeof dram_table / sizeof *dram_table; i++)
                if (!strcmp(dram_table[i].type, type)) {
                    *source = dram_table[i].note;
                    if (rd || wr)
                        *pj = dram_table[i].pj_per_bit * (p->width > 0 ? p->width : 64.0);
                    return NM_OK;
                }
            return nm_yerror(err, at, "'%s': DRAM type '%s' has no built-in energy", p->path,
                             type);
        }
        double width = p->width > 0 ? p->width : p->bits;
        if (width <= 0)
            return nm_yerror(err, at, "'%s' (%s) needs a width", p->path, p->cls);
        if (k == K_REG) {
            *um2 = REG_UM2_PER_BIT * width * af / nm_tech_area_factor(REG_NM);
            if (rd)
                *pj = register_pj(width, nm);
            return NM_OK;
        }
        if (p->depth <= 0)
            return nm_yerror(err, at, "'%s' (%s) needs a depth", p->path, p->cls);
        double e;
        if (k == K_SRAM || k == K_SB_SRAM) {
            e = nm_estimate_sram_pj(p->depth, width, nm);
            *um2 = SRAM_CELL_UM2 * p->depth * width * af;
        } else {
            e = nm_estimate_regfile_pj(p->depth, width, nm);
            *um2 = REG_UM2_PER_BIT * p->depth * width * af / nm_tech_area_factor(REG_NM);
        }
        if (k == K_SB_SRAM || k == K_SB_RF)
            e += address_gen_pj(p->depth, nm);
        if (rd || wr)
            *pj = e;
        return NM_OK;
    }
    double bits = p->bits > 0 ? p->bits : 16.0;
    if (k == K_CMP) {
        *um2 = adder_um2(0, bits) * af;
        if (!free_action(action))
            *pj = CMP_PJ_32 * bits / 32.0 * ef / nm_tech_energy_factor(REG_NM);
        return NM_OK;
    }
    double mw = p->mult_bits > 0 ? p->mult_bits : bits, aw = p->adder_bits > 0 ? p->adder_bits : bits;
    int fp, has_add, has_mul;
    arith_parts(k, &fp, &has_add, &has_mul);
    *um2 = ((has_add ? adder_um2(fp, aw) : 0.0) + (has_mul ? mult_um2(fp, mw) : 0.0)) * af;
    if (!free_action(action))
        *pj = ((has_add ? adder_pj(fp, aw) : 0.0) + (has_mul ? mult_pj(fp, mw) : 0.0)) * ef;
    return NM_OK;
}
