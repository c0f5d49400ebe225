/* check_model.c — the cost model on small nests whose counts are derived by
 * hand in the comments (not taken from the conformance corpus). */
#include <config.h>

#include <check.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "nestmap/model.h"
#include "nestmap/spec.h"
#include "sparse_int.h"
#include "testutil.h"

/* A two-level design: a large MainMemory, a Buffer (register file) per PE,
 * PEs in a row of `pes` under MainMemory, one MAC each.  All accesses cost
 * 1 pJ, a MAC 2 pJ, so energies are easy to derive. */
static char *design(char *buf, size_t size, int pes, const char *buf_attrs, const char *problem,
                    const char *mapping)
{
    snprintf(buf, size,
             "architecture:\n"
             "  version: '0.4'\n"
             "  subtree:\n"
             "  - name: chip\n"
             "    local:\n"
             "    - name: MainMemory\n"
             "      class: SRAM\n"
             "      attributes: {depth: 65536, width: 8, datawidth: 8}\n"
             "    - name: Buffer[1..%d]\n"
             "      class: regfile\n"
             "      attributes: {depth: 64, width: 8, datawidth: 8, meshX: %d%s}\n"
             "    - name: MACC[1..%d]\n"
             "      class: intmac\n"
             "      attributes: {meshX: %d}\n"
             "problem:\n%s"
             "mapping:\n%s"
             "ERT:\n"
             "  version: '0.4'\n"
             "  tables:\n"
             "  - name: chip.MainMemory\n"
             "    actions: [{name: read, energy: 1}, {name: write, energy: 1}, {name: update, energy: 1}]\n"
             "  - name: chip.Buffer[1..%d]\n"
             "    actions: [{name: read, energy: 1}, {name: write, energy: 1}, {name: update, energy: 1},\n"
             "              {name: leak, energy: 0.5}]\n"
             "  - name: chip.MACC[1..%d]\n"
             "    actions: [{name: compute, energy: 2}]\n",
             pes, pes, buf_attrs, pes, pes, problem, mapping, pes, pes);
    return buf;
}

static const char conv1d[] =
    "  shape:\n"
    "    name: conv1d\n"
    "    dimensions: [R, P]\n"
    "    data_spaces:\n"
    "    - {name: Weights, projection: [[[R]]]}\n"
    "    - {name: Inputs, projection: [[[R], [P]]]}\n"
    "    - {name: Outputs, projection: [[[P]]], read_write: true}\n"
    "  instance: {R: 3, P: 16}\n";

/* conv1d with output channels K. */
static const char conv1d_k[] =
    "  shape:\n"
    "    name: conv1d_oc\n"
    "    dimensions: [K, R, P]\n"
    "    data_spaces:\n"
    "    - {name: Weights, projection: [[[K]], [[R]]]}\n"
    "    - {name: Inputs, projection: [[[R], [P]]]}\n"
    "    - {name: Outputs, projection: [[[K]], [[P]]], read_write: true}\n"
    "  instance: {K: 4, R: 3, P: 16}\n";

struct run {
    nm_spec spec;
    nm_model mdl;
    nm_stats st;
    int valid;
};

static void run(struct run *r, const char *text)
{
    nm_error err;
    nm_error_clear(&err);
    nm_status s = nm_spec_load_string(&r->spec, "test.yaml", text,
                                      NM_NEED_ARCH | NM_NEED_PROBLEM | NM_NEED_MAPPING, &err);
    ck_assert_msg(s == NM_OK, "load failed: %d:%d: %s", err.line, err.col, err.msg);
    ck_assert_int_eq(nm_model_init(&r->mdl, &r->spec.arch, &r->spec.wl, &err), NM_OK);
    r->valid = nm_model_eval(&r->mdl, &r->spec.map, &r->st, NULL);
}

static void done(struct run *r)
{
    nm_model_fini(&r->mdl);
    nm_spec_fini(&r->spec);
}

static const nm_ds_stats *ds(const struct run *r, const char *level, const char *space)
{
    int l = nm_arch_level(&r->spec.arch, level);
    int d = nm_workload_ds(&r->spec.wl, space);
    ck_assert_int_ge(l, 0);
    ck_assert_int_ge(d, 0);
    return &r->st.level[l].ds[d];
}

#define COUNTS(d, R, F, U) do {                               \
        ck_assert_uint_eq((d)->reads, (R));                   \
        ck_assert_uint_eq((d)->fills, (F));                   \
        ck_assert_uint_eq((d)->updates, (U));                 \
    } while (0)

/* Loads a complete input under tests/data and readies its model. */
static void load_data(struct run *r, const char *name)
{
    char path[1024];
    test_data(name, path, sizeof path);
    const char *files[] = {path};
    nm_error err;
    ck_assert_int_eq(nm_spec_load(&r->spec, files, 1, NM_NEED_ARCH | NM_NEED_PROBLEM |
                                                      NM_NEED_MAPPING, &err), NM_OK);
    ck_assert_int_eq(nm_model_init(&r->mdl, &r->spec.arch, &r->spec.wl, &err), NM_OK);
}

/* One level: the MAC reads every operand from the Buffer.  48 MACs; the
 * output's 16 first writes need no read, so Outputs reads = 48 - 16. */
START_TEST(one_level_conv1d)
{
    struct run r;
    load_data(&r, "good/conv1d_1level.yaml");
    ck_assert(nm_model_eval(&r.mdl, &r.spec.map, &r.st, NULL));
    COUNTS(ds(&r, "Buffer", "Weights"), 48, 0, 0);
    COUNTS(ds(&r, "Buffer", "Inputs"), 48, 0, 0);
    COUNTS(ds(&r, "Buffer", "Outputs"), 32, 0, 48);
    ck_assert_uint_eq(ds(&r, "Buffer", "Outputs")->temporal_reductions, 32);
    ck_assert_uint_eq(ds(&r, "Buffer", "Weights")->utilized_capacity, 3);
    ck_assert_uint_eq(ds(&r, "Buffer", "Inputs")->utilized_capacity, 18); /* P+R-1 */
    ck_assert_uint_eq(ds(&r, "Buffer", "Outputs")->utilized_capacity, 16);
    ck_assert_uint_eq(r.st.computes, 48);
    ck_assert_uint_eq(r.st.cycles, 48);
    /* 48 + 48 + (32 + 48) accesses at 1 pJ, 48 MACs at 2 pJ. */
    ck_assert_double_eq_tol(r.st.energy, 176.0 + 96.0, 1e-9);
    ck_assert_double_eq_tol(r.st.utilization, 1.0, 1e-12);
    done(&r);
}
END_TEST

/* The networks between levels (tests/data/good/noc.yaml): P=4 spread along
 * a row of four register files, hsize 4 and vsize 1, so a receiver at
 * column h is h hops from the array's edge (v_center 0).  Per network,
 * per hop e and per router r (the read network: e 0.5, r 0.1; the update
 * network GLB_upd: e 0.2, r 0), both carrying every data space:
 *   Weights: one call of 3 words multicast to all four: bucket (4, 1),
 *     3 ingresses at 3 hops (the farthest column): 3*3*e + 3*(1+3)*r;
 *   Inputs: four calls, each sibling its own 3-word window (no overlap
 *     between calls, no neighbour holds it): 48 ingresses at mean hops
 *     (0+1+2+3)/4 = 1.5: 48*1.5*e + 48*(1+1)*r;
 *   Outputs: 16 words, one per sibling per call: 16*1.5*e + 16*2*r
 *     (the read network carries no read-modify-write, GLB reduces).
 * Read: 5.7 + 45.6 + 15.2 = 66.5 pJ; update: 1.8 + 14.4 + 4.8 = 21 pJ. */
START_TEST(noc_by_hand)
{
    struct run r;
    load_data(&r, "good/noc.yaml");
    static nm_noc_stats noc;
    ck_assert(nm_model_noc_stats(&r.mdl, &r.spec.map, &r.st, &noc));
    int g = nm_arch_level(&r.spec.arch, "GLB");
    ck_assert_int_eq(r.spec.arch.level[g].nnet, 2);
    ck_assert_str_eq(r.spec.arch.level[g].net[0].name, "GLB <==> RF");
    ck_assert_str_eq(r.spec.arch.level[g].net[1].name, "GLB_upd");
    ck_assert_double_eq_tol(noc.energy[g][0], 66.5, 1e-9);
    ck_assert_double_eq_tol(noc.energy[g][1], 21.0, 1e-9);
    int w = nm_workload_ds(&r.spec.wl, "Weights"), in = nm_workload_ds(&r.spec.wl, "Inputs");
    ck_assert_uint_eq(noc.ds[g][0][w].multicast, 4);
    ck_assert_double_eq_tol(noc.ds[g][0][w].avg_hops, 3.0, 1e-12);
    ck_assert_double_eq_tol(noc.ds[g][0][in].ingresses, 48.0, 1e-12);
    ck_assert_double_eq_tol(noc.ds[g][0][in].avg_hops, 1.5, 1e-12);
    ck_assert_double_eq_tol(r.st.noc_energy, 87.5, 1e-9);
    /* the evaluation alone charges the same (the search sees it) */
    static nm_stats plain;
    ck_assert(nm_model_eval(&r.mdl, &r.spec.map, &plain, NULL));
    ck_assert_double_eq_tol(plain.energy, r.st.energy, 1e-9);
    ck_assert_double_eq_tol(plain.noc_energy, 87.5, 1e-9);
    done(&r);
}
END_TEST

/* hop_count (noc.h), by hand: the 1-D convolution (R=3, P=16) on a row
 * of four PEs (P along X), whose register files keep no weights: the
 * buffer multicasts each weight to the four PEs at every step, 12 steps,
 * 12 ingresses.  The nest analysis delivers the 3 weights once, and a
 * delivery to the row is 3 hops (to x = 3; one row, no vertical drop), so
 * Timeloop's count (tile) is 3 words x 3 hops = 9 hops over 12 ingresses
 * (0.75 a word, 9 pJ at 1 pJ a hop); hop_count: access charges each of the
 * 12 its 3 hops (36 pJ). */
static void hop_design(char *text, size_t size, const char *count)
{
    snprintf(text, size,
             "architecture:\n"
             "  version: '0.4'\n"
             "  subtree:\n"
             "  - name: chip\n"
             "    local:\n"
             "    - name: GLB\n"
             "      class: SRAM\n"
             "      attributes: {depth: 256, width: 8, datawidth: 8, energy_per_hop: 1%s}\n"
             "    - name: RF[1..4]\n"
             "      class: regfile\n"
             "      attributes: {depth: 16, width: 8, datawidth: 8, meshX: 4}\n"
             "    - name: MACC[1..4]\n"
             "      class: intmac\n"
             "      attributes: {datawidth: 8, meshX: 4}\n"
             "problem: {shape: {name: conv1d, dimensions: [R, P], data_spaces: [\n"
             "  {name: Weights, projection: [[[R]]]},\n"
             "  {name: Inputs, projection: [[[R], [P]]]},\n"
             "  {name: Outputs, projection: [[[P]]], read_write: true}]},\n"
             "  instance: {R: 3, P: 16}}\n"
             "mapping:\n"
             "- {target: GLB, type: temporal, factors: R=1 P=4, permutation: RP}\n"
             "- {target: GLB, type: spatial, factors: R=1 P=4, permutation: PR, split: 1}\n"
             "- {target: RF, type: temporal, factors: R=3 P=1, permutation: RP}\n"
             "- {target: RF, type: bypass, keep: [Inputs, Outputs], bypass: [Weights]}\n",
             count);
}

START_TEST(noc_hop_count_by_hand)
{
    static const char *const count[] = {"", ", hop_count: tile", ", hop_count: access"};
    static const double hops[] = {0.75, 0.75, 3.0}, pj[] = {9.0, 9.0, 36.0};
    for (int i = 0; i < 3; i++) {
        char text[4096];
        hop_design(text, sizeof text, count[i]);
        struct run r;
        run(&r, text);
        ck_assert(r.valid);
        static nm_noc_stats noc;
        ck_assert(nm_model_noc_stats(&r.mdl, &r.spec.map, &r.st, &noc));
        int g = nm_arch_level(&r.spec.arch, "GLB"), w = nm_workload_ds(&r.spec.wl, "Weights");
        ck_assert_int_eq(r.spec.arch.level[g].net[0].hops_per_access, i == 2);
        ck_assert_uint_eq(noc.ds[g][0][w].multicast, 4);
        ck_assert_double_eq_tol(noc.ds[g][0][w].ingresses, 12.0, 1e-12);
        ck_assert_double_eq_tol(noc.ds[g][0][w].avg_hops, hops[i], 1e-12);
        ck_assert_double_eq_tol(noc.ds[g][0][w].energy, pj[i], 1e-9);
        done(&r);
    }
    /* anything else is a located error */
    char text[4096];
    hop_design(text, sizeof text, ", hop_count: word");
    nm_spec spec;
    nm_error err;
    ck_assert_int_eq(nm_spec_load_string(&spec, "test.yaml", text, NM_NEED_ARCH, &err),
                     NM_ERR_INPUT);
    nm_spec_fini(&spec);
    ck_assert_int_eq(err.line, 8);
    ck_assert_ptr_nonnull(strstr(err.msg, "hop_count must be 'tile'"));
}
END_TEST

static const char two_level_map[] =
    "- {target: MainMemory, type: temporal, factors: R=1 P=16, permutation: RP}\n"
    "- {target: Buffer, type: temporal, factors: R=3 P=1, permutation: RP}\n";

/* Two levels, P outside R.  The Buffer keeps the 3 weights for the whole
 * run (filled once), slides a 3-input window by one each P step (3 + 15
 * fills), and holds one output at a time.  MainMemory serves those fills
 * and receives the 16 finished outputs, none of which needs a read. */
START_TEST(two_level_conv1d)
{
    char text[8192];
    struct run r;
    run(&r, design(text, sizeof text, 1, "", conv1d, two_level_map));
    ck_assert(r.valid);
    COUNTS(ds(&r, "Buffer", "Weights"), 48, 3, 0);
    COUNTS(ds(&r, "Buffer", "Inputs"), 48, 18, 0);
    COUNTS(ds(&r, "Buffer", "Outputs"), 32, 0, 48);
    COUNTS(ds(&r, "MainMemory", "Weights"), 3, 0, 0);
    COUNTS(ds(&r, "MainMemory", "Inputs"), 18, 0, 0);
    COUNTS(ds(&r, "MainMemory", "Outputs"), 0, 0, 16);
    ck_assert_uint_eq(ds(&r, "Buffer", "Inputs")->utilized_capacity, 3);
    ck_assert_uint_eq(ds(&r, "Buffer", "Outputs")->partition_size, 16);
    /* Leakage: 0.5 pJ per cycle for 48 cycles on one instance. */
    ck_assert_double_eq_tol(r.st.level[0].leakage, 24.0, 1e-9);
    done(&r);
}
END_TEST

/* Stride 2: the input window of 3 moves by 2 per output, so consecutive
 * windows share one input: 3 + 2 * 3 fills for P = 4. */
START_TEST(strided_conv)
{
    static const char prob[] =
        "  shape:\n"
        "    dimensions: [R, P]\n"
        "    coefficients: [{name: Wstride, default: 1}]\n"
        "    data_spaces:\n"
        "    - {name: Weights, projection: [[[R]]]}\n"
        "    - {name: Inputs, projection: [[[R], [P, Wstride]]]}\n"
        "    - {name: Outputs, projection: [[[P]]], read_write: true}\n"
        "  instance: {R: 3, P: 4, Wstride: 2}\n";
    static const char map[] =
        "- {target: MainMemory, type: temporal, factors: R=1 P=4, permutation: RP}\n"
        "- {target: Buffer, type: temporal, factors: R=3 P=1, permutation: RP}\n";
    char text[8192];
    struct run r;
    run(&r, design(text, sizeof text, 1, "", prob, map));
    ck_assert(r.valid);
    COUNTS(ds(&r, "Buffer", "Inputs"), 12, 9, 0);
    ck_assert_uint_eq(ds(&r, "MainMemory", "Inputs")->utilized_capacity, 9); /* 2*(4-1)+3 */
    done(&r);
}
END_TEST

/* Dilation 2: taps at p, p+2, p+4.  A tile is the box spanning them (5
 * inputs); one step of P slides it by one: 5 + 3 fills for P = 4. */
START_TEST(dilated_conv)
{
    static const char prob[] =
        "  shape:\n"
        "    dimensions: [R, P]\n"
        "    coefficients: [{name: Wdilation, default: 1}]\n"
        "    data_spaces:\n"
        "    - {name: Weights, projection: [[[R]]]}\n"
        "    - {name: Inputs, projection: [[[R, Wdilation], [P]]]}\n"
        "    - {name: Outputs, projection: [[[P]]], read_write: true}\n"
        "  instance: {R: 3, P: 4, Wdilation: 2}\n";
    static const char map[] =
        "- {target: MainMemory, type: temporal, factors: R=1 P=4, permutation: RP}\n"
        "- {target: Buffer, type: temporal, factors: R=3 P=1, permutation: RP}\n";
    char text[8192];
    struct run r;
    run(&r, design(text, sizeof text, 1, "", prob, map));
    ck_assert(r.valid);
    ck_assert_uint_eq(ds(&r, "Buffer", "Inputs")->utilized_capacity, 5);
    COUNTS(ds(&r, "Buffer", "Inputs"), 12, 8, 0);
    ck_assert_uint_eq(ds(&r, "MainMemory", "Inputs")->utilized_capacity, 8);
    done(&r);
}
END_TEST

/* GEMM Z[m,n] = A[m,k] * B[k,n] with M=N=4, K=8, through the shorthand.
 * The Buffer runs K; MainMemory runs M inside N.  A's row changes at every
 * step (16 x 8 fills); B's column stays while M runs (4 x 8); each Z element
 * is finished in the Buffer and written back once (16 updates). */
START_TEST(gemm_named_tensors)
{
    static const char prob[] = "  gemm: {M: 4, N: 4, K: 8}\n";
    static const char map[] =
        "- {target: MainMemory, type: temporal, factors: M=4 N=4 K=1, permutation: MNK}\n"
        "- {target: Buffer, type: temporal, factors: M=1 N=1 K=8, permutation: KMN}\n";
    char text[8192];
    struct run r;
    run(&r, design(text, sizeof text, 1, "", prob, map));
    ck_assert(r.valid);
    ck_assert_str_eq(r.spec.wl.ds[0].name, "A");
    COUNTS(ds(&r, "Buffer", "A"), 128, 128, 0);
    COUNTS(ds(&r, "Buffer", "B"), 128, 32, 0);
    COUNTS(ds(&r, "Buffer", "Z"), 112, 0, 128);
    COUNTS(ds(&r, "MainMemory", "A"), 128, 0, 0);
    COUNTS(ds(&r, "MainMemory", "B"), 32, 0, 0);
    COUNTS(ds(&r, "MainMemory", "Z"), 0, 0, 16);
    done(&r);
}
END_TEST

/* Depthwise: each channel has its own filter; Outputs keep the channel.
 * C=2, P=4, R=3 on one level: 24 MACs, 8 outputs. */
START_TEST(depthwise_conv)
{
    static const char prob[] = "  depthwise: {C: 2, P: 4, R: 3}\n";
    static const char map[] =
        "- {target: MainMemory, type: temporal, factors: C=2 P=4 R=3, permutation: RPC}\n"
        "- {target: Buffer, type: bypass, keep: [], bypass: [Weights, Inputs, Outputs]}\n";
    char text[8192];
    struct run r;
    run(&r, design(text, sizeof text, 1, "", prob, map));
    ck_assert(r.valid);
    ck_assert_uint_eq(r.st.computes, 24);
    COUNTS(ds(&r, "MainMemory", "Weights"), 24, 0, 0);
    COUNTS(ds(&r, "MainMemory", "Inputs"), 24, 0, 0);
    COUNTS(ds(&r, "MainMemory", "Outputs"), 16, 0, 24);
    ck_assert_uint_eq(ds(&r, "MainMemory", "Weights")->utilized_capacity, 6);
    ck_assert_uint_eq(ds(&r, "MainMemory", "Inputs")->utilized_capacity, 12);
    ck_assert_uint_eq(ds(&r, "MainMemory", "Outputs")->utilized_capacity, 8);
    done(&r);
}
END_TEST

/* Four PEs each compute one output channel k.  Weights differ per PE
 * (unicast: MainMemory reads 4 x 3); the input stream is the same for all
 * four, so MainMemory reads it once (18) while every PE is filled with it
 * (multicast); each PE writes its own 16 outputs. */
/* Four PEs, one output channel each. */
static const char spread_k[] =
    "- {target: MainMemory, type: spatial, factors: K=4 R=1 P=1, permutation: KRP, split: 3}\n"
    "- {target: MainMemory, type: temporal, factors: K=1 R=1 P=16, permutation: PKR}\n"
    "- {target: Buffer, type: temporal, factors: K=1 R=3 P=1, permutation: RKP}\n";

START_TEST(multicast)
{
    char text[8192];
    struct run r;
    run(&r, design(text, sizeof text, 4, "", conv1d_k, spread_k));
    ck_assert(r.valid);
    COUNTS(ds(&r, "Buffer", "Weights"), 48, 3, 0);
    COUNTS(ds(&r, "Buffer", "Inputs"), 48, 18, 0);
    COUNTS(ds(&r, "Buffer", "Outputs"), 32, 0, 48);
    ck_assert_uint_eq(ds(&r, "Buffer", "Inputs")->utilized_instances, 4);
    COUNTS(ds(&r, "MainMemory", "Weights"), 12, 0, 0);
    COUNTS(ds(&r, "MainMemory", "Inputs"), 18, 0, 0);
    COUNTS(ds(&r, "MainMemory", "Outputs"), 0, 0, 64);
    ck_assert_uint_eq(r.st.arith_utilized, 4);
    ck_assert_uint_eq(r.st.cycles, 48);
    done(&r);
}
END_TEST

/* Three PEs each apply one tap r to every output p.  All three add into the
 * same output at each step: their partial sums are combined on the way up
 * (spatial reduction), so MainMemory sees 16 updates, not 48.  PE r needs
 * input p+r, which its right-hand neighbour held one step before, so two of
 * the three PEs take their new input over the link: after the first step,
 * MainMemory sends one input per step; each link transfer costs the sending
 * PE a read and the receiver a fill (30 transfers over 3 PEs). */
START_TEST(spatial_reduction_and_links)
{
    static const char map[] =
        "- {target: MainMemory, type: spatial, factors: R=3 P=1, permutation: RP, split: 2}\n"
        "- {target: MainMemory, type: temporal, factors: R=1 P=16, permutation: PR}\n"
        "- {target: Buffer, type: temporal, factors: R=1 P=1, permutation: RP}\n";
    char text[8192];
    struct run r;
    run(&r, design(text, sizeof text, 4, "", conv1d, map));
    ck_assert(r.valid);
    COUNTS(ds(&r, "MainMemory", "Outputs"), 0, 0, 16);
    COUNTS(ds(&r, "MainMemory", "Weights"), 3, 0, 0);
    COUNTS(ds(&r, "MainMemory", "Inputs"), 18, 0, 0);
    COUNTS(ds(&r, "Buffer", "Weights"), 16, 1, 0);
    COUNTS(ds(&r, "Buffer", "Inputs"), 26, 16, 0);
    COUNTS(ds(&r, "Buffer", "Outputs"), 0, 0, 16);
    ck_assert_uint_eq(ds(&r, "Buffer", "Outputs")->partition_size, 16);
    ck_assert_uint_eq(ds(&r, "Buffer", "Inputs")->partition_size, 6);
    ck_assert_uint_eq(r.st.arith_utilized, 3);
    done(&r);
}
END_TEST

/* Bypass: with Weights bypassing the Buffer, the MAC's 48 weight reads go
 * straight to MainMemory, and the Buffer neither holds nor counts them. */
START_TEST(bypass)
{
    static const char map[] =
        "- {target: MainMemory, type: temporal, factors: R=1 P=16, permutation: RP}\n"
        "- {target: Buffer, type: temporal, factors: R=3 P=1, permutation: RP}\n"
        "- {target: Buffer, type: bypass, keep: [Inputs, Outputs], bypass: [Weights]}\n";
    char text[8192];
    struct run r;
    run(&r, design(text, sizeof text, 1, "", conv1d, map));
    ck_assert(r.valid);
    COUNTS(ds(&r, "MainMemory", "Weights"), 48, 0, 0);
    COUNTS(ds(&r, "Buffer", "Weights"), 0, 0, 0);
    ck_assert_uint_eq(ds(&r, "Buffer", "Weights")->utilized_capacity, 0);
    ck_assert(!ds(&r, "Buffer", "Weights")->kept);
    COUNTS(ds(&r, "Buffer", "Inputs"), 48, 18, 0);
    done(&r);
}
END_TEST

/* Throttling: the Buffer must deliver 48 + 48 + 32 = 128 reads in 48
 * compute cycles (2.67 per cycle) but reads 1 word per cycle, so the run
 * stretches to 128 cycles; leakage follows the stretched run. */
START_TEST(throttling)
{
    static const char map[] =
        "- {target: MainMemory, type: temporal, factors: R=1 P=1, permutation: RP}\n"
        "- {target: Buffer, type: temporal, factors: R=3 P=16, permutation: RP}\n";
    char text[8192];
    struct run r;
    run(&r, design(text, sizeof text, 1, ", read_bandwidth: 1, write_bandwidth: 4", conv1d, map));
    ck_assert(r.valid);
    ck_assert_uint_eq(r.st.compute_cycles, 48);
    ck_assert_uint_eq(r.st.level[0].cycles, 128);
    ck_assert_double_eq_tol(r.st.level[0].throttling, 0.375, 1e-12);
    ck_assert_uint_eq(r.st.cycles, 128);
    ck_assert_double_eq_tol(r.st.level[0].leakage, 64.0, 1e-9);
    ck_assert_double_eq_tol(r.st.utilization, 48.0 / 128.0, 1e-12);
    done(&r);
}
END_TEST

/* Capacity: 3 + 18 + 16 words do not fit 16; with double buffering, 64
 * words hold only 32 per buffer. */
START_TEST(invalid_capacity)
{
    static const char map[] = "- {target: Buffer, type: temporal, factors: R=3 P=16}\n";
    char text[8192];
    struct run r;
    run(&r, design(text, sizeof text, 1, ", multiple_buffering: 2", conv1d, map));
    ck_assert(!r.valid);
    ck_assert_int_eq(r.st.invalid.kind, NM_INV_CAPACITY);
    char why[256];
    nm_invalid_describe(&r.st.invalid, &r.spec.arch, &r.spec.wl, why, sizeof why);
    ck_assert_str_eq(why, "couldn't map level Buffer: mapped tile size 37 exceeds buffer capacity 32");
    done(&r);
}
END_TEST

/* tensor_datawidth: the Buffer (8-bit words, rows of one word) holds
 * Outputs as 16-bit words and Inputs as 4-bit ones.  The counts stay in
 * elements; each Outputs access takes two rows (twice the energy), two
 * Inputs share a row (half, rounded up: 48 reads and 18 fills take 24 + 9
 * rows), Weights and MainMemory are as before.  A tile takes its bits in
 * words: 3 + ceil(18 * 4 / 8) + 16 * 2 = 44 words, over the 42 that
 * multiple_buffering 1.5 leaves, where 3 + 18 + 16 = 37 fits. */
START_TEST(tensor_widths_by_hand)
{
    static const char map[] =
        "- {target: MainMemory, type: temporal, factors: R=1 P=1, permutation: RP}\n"
        "- {target: Buffer, type: temporal, factors: R=3 P=16, permutation: RP}\n";
    char text[8192];
    struct run a, b;
    run(&a, design(text, sizeof text, 1, "", conv1d, map));
    run(&b, design(text, sizeof text, 1, ", tensor_datawidth: {Outputs: 16, Inputs: 4}", conv1d,
                   map));
    ck_assert(a.valid && b.valid);
    for (int s = 0; s < 2; s++)
        for (int d = 0; d < 3; d++) {
            const nm_ds_stats *x = &a.st.level[s].ds[d], *y = &b.st.level[s].ds[d];
            COUNTS(y, x->reads, x->fills, x->updates);
            double want = s == 1 ? x->energy : d == 2 ? 2 * x->energy : d == 1 ? 0 : x->energy;
            if (s == 0 && d == 1) {
                ck_assert_uint_eq(x->reads, 48);
                ck_assert_uint_eq(x->fills, 18);
                want = 24 + 9;
            }
            ck_assert_double_eq_tol(y->energy, want, 1e-9);
        }
    ck_assert_double_eq_tol(b.st.level[0].ds[2].energy, 2.0 * (double)(a.st.level[0].ds[2].reads +
                            a.st.level[0].ds[2].updates), 1e-9);
    done(&a);
    done(&b);
    run(&a, design(text, sizeof text, 1, ", multiple_buffering: 1.5", conv1d, map));
    run(&b, design(text, sizeof text, 1, ", multiple_buffering: 1.5, tensor_datawidth: "
                   "{Outputs: 16, Inputs: 4}", conv1d, map));
    ck_assert(a.valid);
    ck_assert(!b.valid);
    char why[256];
    nm_invalid_describe(&b.st.invalid, &b.spec.arch, &b.spec.wl, why, sizeof why);
    ck_assert_str_eq(why, "couldn't map level Buffer: mapped tile size 44 exceeds buffer capacity 42");
    done(&a);
    done(&b);
    /* A name the workload lacks: located at the name, with a suggestion. */
    nm_spec spec;
    nm_error err;
    nm_error_clear(&err);
    ck_assert_int_ne(nm_spec_load_string(&spec, "t.yaml", design(text, sizeof text, 1,
                     ", tensor_datawidth: {Output: 16}", conv1d, map),
                     NM_NEED_ARCH | NM_NEED_PROBLEM, &err), NM_OK);
    ck_assert_int_eq(err.line, 11);
    ck_assert_str_eq(err.msg, "tensor_datawidth of Buffer: the workload has no tensor 'Output'; "
                     "did you mean 'Outputs'?");
    nm_spec_fini(&spec);
}
END_TEST

START_TEST(invalid_factors_and_fanout)
{
    static const char bad_product[] = "- {target: Buffer, type: temporal, factors: R=3 P=8}\n";
    char text[8192];
    struct run r;
    run(&r, design(text, sizeof text, 1, "", conv1d, bad_product));
    ck_assert(!r.valid);
    ck_assert_int_eq(r.st.invalid.kind, NM_INV_FACTORS);
    char why[256];
    nm_invalid_describe(&r.st.invalid, &r.spec.arch, &r.spec.wl, why, sizeof why);
    ck_assert_str_eq(why, "the factors of dimension P multiply to 8, but the problem has P = 16");
    done(&r);

    static const char too_wide[] =
        "- {target: MainMemory, type: spatial, factors: R=3 P=2, split: 2}\n"
        "- {target: Buffer, type: temporal, factors: P=8}\n";
    run(&r, design(text, sizeof text, 4, "", conv1d, too_wide));
    ck_assert(!r.valid);
    ck_assert_int_eq(r.st.invalid.kind, NM_INV_ARITH);
    nm_invalid_describe(&r.st.invalid, &r.spec.arch, &r.spec.wl, why, sizeof why);
    ck_assert_str_eq(why, "couldn't map level MACC: mapped max Arithmetic instances 6 exceeds "
                          "hardware instances 4");
    done(&r);

    static const char no_fanout[] =
        "- {target: Buffer, type: spatial, factors: P=2}\n"
        "- {target: Buffer, type: temporal, factors: R=3 P=8}\n";
    run(&r, design(text, sizeof text, 1, "", conv1d, no_fanout));
    ck_assert(!r.valid);
    ck_assert_int_eq(r.st.invalid.kind, NM_INV_NO_FANOUT);
    done(&r);

    static const char nowhere[] =
        "- {target: Buffer, type: temporal, factors: R=3 P=16}\n"
        "- {target: Buffer, type: bypass, bypass: [Weights]}\n"
        "- {target: MainMemory, type: bypass, bypass: [Weights]}\n";
    run(&r, design(text, sizeof text, 1, "", conv1d, nowhere));
    ck_assert(!r.valid);
    ck_assert_int_eq(r.st.invalid.kind, NM_INV_BYPASS_ALL);
    done(&r);
}
END_TEST

/* Residual factors: P = 16 as MainMemory P=3 over Buffer P=6,4
 * ((3-1)*6 + 4 = 16), R = 3 innermost.  The MACs run the 48 true steps;
 * cycles count the partial tile as full (3 x 6 x 3 = 54, Timeloop's
 * convention); the Buffer's tiles are padded (inputs 6+3-1 = 8, outputs 6)
 * while MainMemory holds the true tensors.  Inputs: Timeloop extrapolates
 * the last tile's fetch from the first steady step (8 + 6 + 6 = 20 where 18
 * are distinct); the corpus confirms that for read-only data.  For outputs
 * the same rule would send 18 updates of 16 outputs and read back 2 partial
 * sums never written -- Timeloop's numbers are inconsistent there, so the
 * true count holds: 16 updates, no reads. */
static const char imperfect_map[] =
    "- {target: MainMemory, type: temporal, factors: R=1 P=3, permutation: RP}\n"
    "- {target: Buffer, type: temporal, factors: \"R=3 P=6,4\", permutation: RP}\n";

START_TEST(imperfect_outputs_exact)
{
    char text[8192];
    struct run r;
    run(&r, design(text, sizeof text, 1, "", conv1d, imperfect_map));
    ck_assert(r.valid);
    ck_assert_uint_eq(r.st.computes, 48);
    ck_assert_uint_eq(r.st.cycles, 54);
    ck_assert_double_eq_tol(r.st.utilization, 48.0 / 54.0, 1e-12);
    COUNTS(ds(&r, "Buffer", "Weights"), 48, 3, 0);
    COUNTS(ds(&r, "Buffer", "Inputs"), 48, 20, 0);
    COUNTS(ds(&r, "Buffer", "Outputs"), 32, 0, 48);
    COUNTS(ds(&r, "MainMemory", "Weights"), 3, 0, 0);
    COUNTS(ds(&r, "MainMemory", "Inputs"), 20, 0, 0);
    COUNTS(ds(&r, "MainMemory", "Outputs"), 0, 0, 16);
    ck_assert_uint_eq(ds(&r, "Buffer", "Inputs")->utilized_capacity, 8);
    ck_assert_uint_eq(ds(&r, "Buffer", "Outputs")->utilized_capacity, 6);
    ck_assert_uint_eq(ds(&r, "MainMemory", "Inputs")->utilized_capacity, 18);
    done(&r);
}
END_TEST

/* What residuals may not do, and how the model and the parser say so. */
START_TEST(imperfect_rules)
{
    char text[8192], why[512];
    struct run r;
    /* What residuals cover, said as such whether short of the bound or past it */
    static const struct {
        const char *map, *said;
    } covers[] = {
        {/* ((3-1)*5 + 4) = 14, not 16 */
         "- {target: MainMemory, type: temporal, factors: R=1 P=3}\n"
         "- {target: Buffer, type: temporal, factors: \"R=3 P=5,4\"}\n",
         "cover 14"},
        {/* ((4-1)*5 + 4) = 19 */
         "- {target: MainMemory, type: temporal, factors: R=1 P=4}\n"
         "- {target: Buffer, type: temporal, factors: \"R=3 P=5,4\"}\n",
         "cover 19"},
    };
    for (size_t i = 0; i < sizeof covers / sizeof covers[0]; i++) {
        run(&r, design(text, sizeof text, 1, "", conv1d, covers[i].map));
        ck_assert(!r.valid);
        ck_assert_int_eq(r.st.invalid.kind, NM_INV_FACTORS);
        nm_invalid_describe(&r.st.invalid, &r.spec.arch, &r.spec.wl, why, sizeof why);
        ck_assert_msg(strstr(why, covers[i].said) && strstr(why, "P = 16"), "%s", why);
        done(&r);
    }
    /* P = ((0*4 + 3)*5 + 0) + 1 = 16 with the residual under the spatial P:
     * only the last PE would run it. */
    static const char under_spatial[] =
        "- {target: MainMemory, type: spatial, factors: R=1 P=4}\n"
        "- {target: Buffer, type: temporal, factors: \"R=3 P=5,1\"}\n";
    run(&r, design(text, sizeof text, 4, "", conv1d, under_spatial));
    ck_assert(!r.valid);
    ck_assert_int_eq(r.st.invalid.kind, NM_INV_RESIDUAL);
    nm_invalid_describe(&r.st.invalid, &r.spec.arch, &r.spec.wl, why, sizeof why);
    ck_assert_msg(strstr(why, "under the spatial P loop of level MainMemory"), "%s", why);
    done(&r);
    /* A spatial residual above any other P loop: P = (0*4 + 2)*4 + 3 ... the
     * outer fan-out's last instance runs 3 of its 4 PEs. */
    static const char spatial_top[] =
        "- {target: MainMemory, type: spatial, factors: \"R=1 P=4,3\"}\n"
        "- {target: MainMemory, type: temporal, factors: R=1 P=4}\n"
        "- {target: Buffer, type: temporal, factors: R=3 P=1}\n";
    run(&r, design(text, sizeof text, 4, "", conv1d, spatial_top));
    ck_assert(!r.valid); /* (4-1)*4 + 3 = 15: the temporal P, outermost, runs its 4 */
    ck_assert_int_eq(r.st.invalid.kind, NM_INV_FACTORS);
    done(&r);
    /* Five residuals in one fan-out: more than the model follows. */
    static const char five[] =
        "  shape:\n"
        "    name: five\n"
        "    dimensions: [A, B, C, D, E]\n"
        "    data_spaces:\n"
        "    - {name: X, projection: [[[A]], [[B]], [[C]], [[D]], [[E]]]}\n"
        "    - {name: Y, projection: [[[A]], [[B]]], read_write: true}\n"
        "  instance: {A: 3, B: 3, C: 3, D: 3, E: 3}\n";
    static const char five_map[] =
        "- {target: MainMemory, type: spatial, factors: \"A=2,1 B=2,1 C=2,1 D=2,1 E=2,1\", "
        "split: 5}\n"
        "- {target: MainMemory, type: temporal, factors: A=2 B=2 C=2 D=2 E=2}\n";
    run(&r, design(text, sizeof text, 32, "", five, five_map));
    ck_assert(!r.valid);
    ck_assert_int_eq(r.st.invalid.kind, NM_INV_FAN_RESIDUALS);
    nm_invalid_describe(&r.st.invalid, &r.spec.arch, &r.spec.wl, why, sizeof why);
    ck_assert_msg(strstr(why, "5 spatial loops with a residual") && strstr(why, "at most 4"),
                  "%s", why);
    done(&r);
    /* Parse errors: residuals above their factor, temporal or spatial; a
     * factor past the bound without a residual. */
    static const char *const bad[] = {
        "- {target: MainMemory, type: spatial, factors: \"R=1 P=4,5\"}\n",
        "- {target: Buffer, type: temporal, factors: \"R=3 P=4,5\"}\n",
        "- {target: Buffer, type: temporal, factors: \"R=3 P=20\"}\n"};
    static const char *const says[] = {"must be between 1 and the factor",
                                       "must be between 1 and the factor",
                                       "larger than the problem's P = 16"};
    for (int i = 0; i < 3; i++) {
        nm_spec spec;
        nm_error err;
        nm_error_clear(&err);
        ck_assert_int_ne(nm_spec_load_string(&spec, "t.yaml", design(text, sizeof text, 4, "",
                                                                     conv1d, bad[i]),
                                             NM_NEED_ARCH | NM_NEED_PROBLEM | NM_NEED_MAPPING,
                                             &err), NM_OK);
        ck_assert_msg(strstr(err.msg, says[i]), "%s", err.msg);
        nm_spec_fini(&spec);
    }
}
END_TEST

/* Spatial residuals.  K = 6 output channels on 4 PEs as "K=4,2" spatial
 * under a temporal K=2: the first step uses all four PEs (K 0..3), the
 * second only PEs 0 and 1 (K 4, 5).  By hand, per PE (PEs 0-1 / PEs 2-3):
 * MACs 16 / 8 (R=2, P=4 each step), weights 2 per step filled (4 / 2),
 * the 5 inputs once (the K step does not move them), outputs 8 / 4 held,
 * each updated twice (R) and read back once.  Counts per instance are the
 * means over the four: 12 MACs, 3 weight fills, 5 input fills, partition 6,
 * 6 output reads.  MainMemory sends every weight once (4 PEs x 2, then
 * 2 x 2), the inputs once to all (multicast), and takes 6 x 4 output
 * updates.  Computes are the layer's 48 MACs; cycles count the padded
 * second step (16); utilization 48 / (4 x 16). */
/* conv1d with output channels (conv1d_k's shape) of any size. */
static const char *conv1d_oc(char *buf, size_t size, int K, int R, int P)
{
    snprintf(buf, size,
             "  shape:\n"
             "    name: conv1d_oc\n"
             "    dimensions: [K, R, P]\n"
             "    data_spaces:\n"
             "    - {name: Weights, projection: [[[K]], [[R]]]}\n"
             "    - {name: Inputs, projection: [[[R], [P]]]}\n"
             "    - {name: Outputs, projection: [[[K]], [[P]]], read_write: true}\n"
             "  instance: {K: %d, R: %d, P: %d}\n",
             K, R, P);
    return buf;
}

START_TEST(spatial_residual_counts)
{
    static const char map[] =
        "- {target: MainMemory, type: spatial, factors: \"K=4,2 R=1 P=1\", permutation: KRP, split: 3}\n"
        "- {target: MainMemory, type: temporal, factors: K=2 R=1 P=1, permutation: KRP}\n"
        "- {target: Buffer, type: temporal, factors: R=2 P=4 K=1, permutation: RPK}\n";
    char text[8192], problem[512];
    struct run r;
    run(&r, design(text, sizeof text, 4, "", conv1d_oc(problem, sizeof problem, 6, 2, 4), map));
    ck_assert(r.valid);
    ck_assert_uint_eq(r.st.computes, 48);
    ck_assert_uint_eq(r.st.cycles, 16);
    ck_assert_double_eq_tol(r.st.utilization, 48.0 / 64.0, 1e-12);
    COUNTS(ds(&r, "Buffer", "Weights"), 12, 3, 0);
    COUNTS(ds(&r, "Buffer", "Inputs"), 12, 5, 0);
    COUNTS(ds(&r, "Buffer", "Outputs"), 6, 0, 12);
    ck_assert_uint_eq(ds(&r, "Buffer", "Outputs")->partition_size, 6);
    ck_assert_uint_eq(ds(&r, "Buffer", "Weights")->partition_size, 3);
    ck_assert_uint_eq(ds(&r, "Buffer", "Outputs")->utilized_instances, 4);
    COUNTS(ds(&r, "MainMemory", "Weights"), 12, 0, 0);
    COUNTS(ds(&r, "MainMemory", "Inputs"), 5, 0, 0);
    COUNTS(ds(&r, "MainMemory", "Outputs"), 0, 0, 24);
    done(&r);
}
END_TEST

/* Two residuals in one fan-out: K = 3 and P = 3 as "K=2,1" and "P=2,1"
 * spatial (PE e = k + 2p) under temporal K=2 (inner) and P=2.  Steps
 * (P,K) = (0,0): all four PEs; (0,1): K's residual, PEs 0 and 2; (1,0):
 * P's, PEs 0 and 1; (1,1): PE 0 alone -- 9 MACs.  Each PE holds one
 * weight, input and output (R = 1).  By hand, Timeloop's rule for keeping
 * the previous tile applied to each PE's own steps:
 *   weights k = 2K+k: PE 0 sees 0,2,0,2 (4 fills: the move back breaks the
 *   stride); PE 1 sees 1, sits out (0,1), then 1 again (1 fill: it kept
 *   it); PE 2 sees 0,2 (2); PE 3 sees 1 (1).  8 fills, mean 2.  MainMemory:
 *   2 distinct weights at (0,0), 1 for PEs 0 and 2 at (0,1), 1 for PE 0 at
 *   (1,0) (PE 1 needs nothing), 1 at (1,1): 5 reads.
 *   inputs p = 2P+p: PE 0 sees 0,0,2,2 (2 fills), PE 1 sees 0,2 (2), PE 2
 *   sees 1,1 (1), PE 3 sees 1 (1).  6 fills, mean 1.5, shown as 2.
 *   MainMemory: 2 at (0,0), 1 for PEs 0 and 1 at (1,0): 3 reads.
 *   outputs: one per MAC, 9 updates. */
START_TEST(spatial_residual_classes)
{
    static const char map[] =
        "- {target: MainMemory, type: spatial, factors: \"K=2,1 R=1 P=2,1\", permutation: KPR, split: 3}\n"
        "- {target: MainMemory, type: temporal, factors: K=2 R=1 P=2, permutation: KPR}\n";
    char text[8192], problem[512];
    struct run r;
    run(&r, design(text, sizeof text, 4, "", conv1d_oc(problem, sizeof problem, 3, 1, 3), map));
    ck_assert(r.valid);
    ck_assert_uint_eq(r.st.computes, 9);
    ck_assert_uint_eq(r.st.cycles, 4);
    COUNTS(ds(&r, "Buffer", "Weights"), 2, 2, 0);
    COUNTS(ds(&r, "Buffer", "Inputs"), 2, 2, 0);
    COUNTS(ds(&r, "MainMemory", "Weights"), 5, 0, 0);
    COUNTS(ds(&r, "MainMemory", "Inputs"), 3, 0, 0);
    COUNTS(ds(&r, "MainMemory", "Outputs"), 0, 0, 9);
    done(&r);
}
END_TEST

/* A spatial residual with no loop of its dimension above always applies:
 * "P=8,7" spatial is 7 PEs at work and one idle, and every level's total
 * (mean per instance x instances) must equal that of plain "P=7".  Four
 * levels, so that a level between the fan-out and the arithmetic is walked
 * per class of instances, and one above it sees the short tile. */
/* Four levels: MainMemory, a GLB fanning out to `pes` PEs, each with a
 * buffer and a register file in front of its MAC. */
static char *four_levels(char *buf, size_t size, int pes, const char *problem,
                         const char *mapping)
{
    snprintf(buf, size,
             "architecture:\n"
             "  version: '0.4'\n"
             "  subtree:\n"
             "  - name: chip\n"
             "    local:\n"
             "    - {name: MainMemory, class: SRAM, attributes: {depth: 65536, width: 8, datawidth: 8}}\n"
             "    - {name: GLB, class: SRAM, attributes: {depth: 4096, width: 8, datawidth: 8}}\n"
             "    - {name: 'PEBuf[1..%d]', class: regfile,\n"
             "       attributes: {depth: 64, width: 8, datawidth: 8, meshX: %d}}\n"
             "    - {name: 'RF[1..%d]', class: regfile,\n"
             "       attributes: {depth: 16, width: 8, datawidth: 8, meshX: %d}}\n"
             "    - {name: 'MACC[1..%d]', class: intmac, attributes: {meshX: %d}}\n"
             "problem:\n%s"
             "mapping:\n%s",
             pes, pes, pes, pes, pes, pes, problem, mapping);
    return buf;
}

static void analyze(struct run *r, nm_nest_result *nr)
{
    nm_nest nest;
    ck_assert(nm_model_eval(&r->mdl, &r->spec.map, &r->st, &nest));
    nm_nest_ws *ws = nm_nest_ws_new(&r->spec.arch, &r->spec.wl);
    ck_assert_ptr_nonnull(ws);
    nm_nest_shape(&nest, &r->spec.wl, nr);
    nm_nest_analyze(ws, &nest, &r->spec.map, &r->spec.arch, &r->spec.wl, nr);
    nm_nest_ws_free(ws);
}

START_TEST(spatial_residual_always_applies)
{
    static const char fmt[] =
        "- {target: MainMemory, type: temporal, factors: K=2 R=1 P=1, permutation: KRP}\n"
        "- {target: GLB, type: spatial, factors: \"K=1 R=1 %s\", permutation: PKR, split: 3}\n"
        "- {target: GLB, type: temporal, factors: K=2 R=1 P=1, permutation: KRP}\n"
        "- {target: PEBuf, type: temporal, factors: K=1 R=3 P=1, permutation: RKP}\n";
    char text[4096], problem[512], map[512];
    conv1d_oc(problem, sizeof problem, 4, 3, 7);
    struct run a, b;
    nm_nest_result na, nb;
    snprintf(map, sizeof map, fmt, "P=8,7");
    run(&a, four_levels(text, sizeof text, 8, problem, map));
    snprintf(map, sizeof map, fmt, "P=7");
    run(&b, four_levels(text, sizeof text, 8, problem, map));
    ck_assert(a.valid && b.valid);
    analyze(&a, &na);
    analyze(&b, &nb);
    ck_assert_uint_eq(a.st.computes, 84);
    ck_assert_uint_eq(b.st.computes, 84);
    ck_assert_uint_eq(a.st.cycles, b.st.cycles);
    for (int s = 0; s < a.spec.arch.nlevels; s++)
        for (int d = 0; d < a.spec.wl.nds; d++) {
            const nm_tile *x = &na.tile[s][d], *y = &nb.tile[s][d];
            double rx = (double)na.replication[s], ry = (double)nb.replication[s];
            ck_assert_double_eq_tol(x->accesses * rx, y->accesses * ry, 1e-9);
            ck_assert_double_eq_tol(x->weighted * rx, y->weighted * ry, 1e-9);
            ck_assert_double_eq_tol(x->link * rx, y->link * ry, 1e-9);
        }
    /* partitions per instance: means over 8 instances against 7 */
    int pe = nm_arch_level(&a.spec.arch, "PEBuf"), in = nm_workload_ds(&a.spec.wl, "Inputs");
    ck_assert_uint_eq(na.replication[pe], 8);
    ck_assert_uint_eq(a.st.level[pe].ds[in].partition_size,
                      (uint64_t)llround(7.0 * (double)b.st.level[pe].ds[in].partition_size / 8));
    done(&a);
    done(&b);
}
END_TEST

/* Instances that sit a residual out and then work on: K = 3 as "K=2,1"
 * spatial over two PEs under temporal K=2 (GLB) inside P=2 (MainMemory),
 * R = 1.  PE 1 sits out the steps with K's last iteration, (P,K) = (0,1)
 * and (1,1), between which it works (1,0).  Each PE's buffer serves its
 * register file one weight, input and output per step; by hand, with
 * Timeloop's rule for keeping the previous tile along each PE's own steps:
 * weights k = 2K+k: PE 0 needs 0,2,0,2 (4 reads: the move back breaks the
 * stride), PE 1 needs 1, then 1 again (1: kept while it sat out); mean
 * 2.5.  Inputs p: PE 0 needs 0,0,1,1 (2), PE 1 0,1 (2).  Outputs: 4 and 2,
 * mean 3. */
START_TEST(spatial_residual_idle_class)
{
    static const char map[] =
        "- {target: MainMemory, type: temporal, factors: K=1 R=1 P=2, permutation: PKR}\n"
        "- {target: GLB, type: spatial, factors: \"K=2,1 R=1 P=1\", permutation: KRP, split: 3}\n"
        "- {target: GLB, type: temporal, factors: K=2 R=1 P=1, permutation: KRP}\n";
    char text[4096], problem[512];
    struct run r;
    nm_nest_result nr;
    run(&r, four_levels(text, sizeof text, 2, conv1d_oc(problem, sizeof problem, 3, 1, 2), map));
    ck_assert(r.valid);
    analyze(&r, &nr);
    ck_assert_uint_eq(r.st.computes, 6);
    int pe = nm_arch_level(&r.spec.arch, "PEBuf");
    ck_assert_double_eq_tol(nr.tile[pe][nm_workload_ds(&r.spec.wl, "Weights")].accesses, 2.5, 1e-12);
    ck_assert_double_eq_tol(nr.tile[pe][nm_workload_ds(&r.spec.wl, "Inputs")].accesses, 2.0, 1e-12);
    ck_assert_double_eq_tol(nr.tile[pe][nm_workload_ds(&r.spec.wl, "Outputs")].accesses, 3.0, 1e-12);
    done(&r);
}
END_TEST

/* The model allocates nothing per evaluation and gives the same answer
 * every time (state is reset between evaluations). */
START_TEST(repeatable)
{
    char text[8192];
    struct run r;
    run(&r, design(text, sizeof text, 4, "", conv1d, "- {target: MainMemory, type: spatial, "
                   "factors: R=3, split: 1}\n- {target: MainMemory, type: temporal, factors: P=16}\n"));
    ck_assert(r.valid);
    nm_stats again;
    for (int i = 0; i < 3; i++) {
        ck_assert(nm_model_eval(&r.mdl, &r.spec.map, &again, NULL));
        ck_assert_double_eq(again.energy, r.st.energy);
        ck_assert_uint_eq(again.cycles, r.st.cycles);
        ck_assert_uint_eq(again.level[0].ds[1].reads, r.st.level[0].ds[1].reads);
    }
    done(&r);
}
END_TEST

/* The v0.4 form: containers set the mesh; !Parallel siblings hold different
 * tensors of a GEMM (each PE a row m).  Per PE: the input buffer streams
 * A[m,k] (32 reads, 32 fills); the weight buffer holds B's column for the
 * K loop (refilled at each of the 8 N steps: 32 fills).  DRAM sends A to
 * each PE separately (128) but B once for all four (multicast, 32); Z is
 * kept nowhere inside, so all 128 partial sums go to DRAM (96 read back).
 * Area: 4 x (10 + 20 + 5) + 1000 um^2. */
START_TEST(v04_parallel_and_area)
{
    static const char text[] =
        "architecture:\n"
        "  version: 0.4\n"
        "  nodes:\n"
        "  - !Container {name: System}\n"
        "  - !Component {name: DRAM, class: DRAM, attributes: {width: 64, datawidth: 8}}\n"
        "  - !Container {name: PE, spatial: {meshX: 4}}\n"
        "  - !Parallel\n"
        "    nodes:\n"
        "    - !Component {name: WeightBuf, class: regfile, attributes: {depth: 16, width: 8, datawidth: 8}}\n"
        "    - !Component {name: InputBuf, class: regfile, attributes: {depth: 16, width: 8, datawidth: 8}}\n"
        "  - !Component {name: MAC, class: intmac}\n"
        "problem: {gemm: {M: 4, N: 8, K: 4}}\n"
        "mapping:\n"
        "- {target: PE, type: spatial, factors: M=4, permutation: MNK}\n"
        "- {target: DRAM, type: temporal, factors: N=8, permutation: NMK}\n"
        "- {target: WeightBuf, type: temporal, factors: K=4, permutation: KMN}\n"
        "- {target: WeightBuf, type: bypass, keep: [B], bypass: [A, Z]}\n"
        "- {target: InputBuf, type: bypass, keep: [A], bypass: [B, Z]}\n"
        "ART:\n"
        "  version: 0.4\n"
        "  tables:\n"
        "  - {name: System.DRAM, area: 1000}\n"
        "  - {name: \"System.PE[0..3].WeightBuf\", area: 10}\n"
        "  - {name: \"System.PE[0..3].InputBuf\", area: 20}\n"
        "  - {name: \"System.PE[0..3].MAC\", area: 5}\n";
    struct run r;
    run(&r, text);
    ck_assert(r.valid);
    /* The container's fan-out is timeloopfe's inter_PE_spatial level. */
    ck_assert_int_eq(r.spec.arch.nlevels, 4);
    ck_assert_str_eq(r.spec.arch.level[0].name, "InputBuf");
    ck_assert_str_eq(r.spec.arch.level[1].name, "WeightBuf");
    ck_assert_str_eq(r.spec.arch.level[2].name, "inter_PE_spatial");
    ck_assert_int_eq(r.spec.arch.level[0].instances, 4);
    ck_assert_int_eq(r.spec.arch.level[2].instances, 1);
    ck_assert_int_eq(r.spec.arch.level[2].fanoutX, 4);
    ck_assert_int_eq(r.spec.arch.level[3].fanoutX, 1);
    COUNTS(ds(&r, "InputBuf", "A"), 32, 32, 0);
    COUNTS(ds(&r, "WeightBuf", "B"), 32, 32, 0);
    ck_assert_uint_eq(ds(&r, "WeightBuf", "B")->utilized_capacity, 4);
    COUNTS(ds(&r, "DRAM", "A"), 128, 0, 0);
    COUNTS(ds(&r, "DRAM", "B"), 32, 0, 0);
    COUNTS(ds(&r, "DRAM", "Z"), 96, 0, 128);
    ck_assert_double_eq_tol(r.st.area, 4 * (10 + 20 + 5) + 1000, 1e-9);
    done(&r);
}
END_TEST

/* Timeloop's check after spatial skipping (nm_sparse_fanout_ok): the
 * expansion of each level over the one above, in whole numbers, within the
 * fan-out.  The expansions are rounded down level by level, so a level can
 * be left with fewer than its share of the level below: four Buffers' MACs
 * under one Buffer (whose fan-out is 1), or six Buffers under the one
 * MainMemory (fan-out 4).  No mapping of the sparse corpus or of random
 * variations of its spatial-skipping designs reaches it (tried); these
 * expansions are set by hand. */
START_TEST(skipping_fanout_check)
{
    char text[8192];
    struct run r;
    run(&r, design(text, sizeof text, 4, "", conv1d_k, spread_k));
    const nm_arch *arch = &r.spec.arch;
    ck_assert_int_eq(arch->nlevels, 2);
    ck_assert_int_eq(arch->level[1].fanoutX, 4); /* MainMemory over the 4 Buffers */
    ck_assert_int_eq(arch->level[0].fanoutX, 1); /* each Buffer over its MAC */
    nm_sp_spatial z;
    memset(&z, 0, sizeof z);
    for (int ds = 0; ds < 3; ds++) {
        /* arithmetic, Buffer, MainMemory, (above) */
        z.x[ds][0] = 4, z.x[ds][1] = 4, z.x[ds][2] = 1;
        z.y[ds][0] = z.y[ds][1] = z.y[ds][2] = 1;
    }
    nm_invalid inv;
    ck_assert(nm_sparse_fanout_ok(arch, 3, &z, &inv));
    z.x[1][1] = 1; /* Inputs: one Buffer left, its MAC still counted as 4 */
    ck_assert(!nm_sparse_fanout_ok(arch, 3, &z, &inv));
    ck_assert_int_eq(inv.kind, NM_INV_SKIP_FANOUT);
    ck_assert_int_eq(inv.level, 0);
    ck_assert_int_eq(inv.index, 1);
    ck_assert_int_eq(inv.axis, 'X');
    ck_assert_uint_eq(inv.got, 4);
    ck_assert_uint_eq(inv.limit, 1);
    char why[512];
    nm_invalid_describe(&inv, arch, &r.spec.wl, why, sizeof why);
    ck_assert_msg(strstr(why, "Required fanoutX 4 does not meet hardware constraint 1"), "%s",
                  why);
    /* the level above: 6 Buffers' worth under one MainMemory of fan-out 4 */
    z.x[1][1] = 4;
    z.x[2][1] = 6, z.x[2][0] = 6;
    ck_assert(!nm_sparse_fanout_ok(arch, 3, &z, &inv));
    ck_assert_int_eq(inv.level, 1);
    ck_assert_int_eq(inv.index, 2);
    ck_assert_uint_eq(inv.got, 6);
    ck_assert_uint_eq(inv.limit, 4);
    done(&r);
}
END_TEST

/* ---- the banded density, against element-by-element enumeration ---- */

static uint64_t brute_box(int64_t band, int64_t r0, int64_t r1, int64_t c0, int64_t c1)
{
    uint64_t n = 0;
    for (int64_t r = r0; r < r1; r++)
        for (int64_t c = c0 < 0 ? 0 : c0; c < c1; c++)
            n += (r - c <= band && c - r <= band);
    return n;
}

static nm_density band_model(int64_t side, int64_t band)
{
    nm_density dm = {NM_DENSITY_BANDED, 0.0, 1, band, side, nm_band_total(side, band)};
    dm.d = (double)dm.nnz / (double)(side * side);
    return dm;
}

START_TEST(banded_density_by_enumeration)
{
    /* the band's total and any box's count, against counting elements;
     * boxes both shorter and taller than the band (two ways of counting) */
    for (int64_t side = 1; side <= 20; side += 3)
        for (int64_t band = 0; band <= side + 2; band++)
            ck_assert_uint_eq(nm_band_total(side, band), brute_box(band, 0, side, 0, side));
    for (int64_t band = 0; band <= 6; band++)
        for (int64_t r0 = 0; r0 < 12; r0 += 3)
            for (int64_t h = 1; h <= 15; h += 2)
                for (int64_t c0 = 0; c0 < 14; c0 += 2)
                    for (int64_t w = 1; w <= 9; w += 4)
                        ck_assert_uint_eq(nm_band_box_nnz(band, r0, r0 + h, c0, c0 + w),
                                          brute_box(band, r0, r0 + h, c0, c0 + w));
    /* square tiles that divide the tensor: the warm-up rows, their mirror
     * images and one steady row standing for the rest give exactly the
     * distribution over every tile position (and so does the scan of every
     * row where there is no steady state) */
    nm_band_pdf t;
    memset(&t, 0, sizeof t);
    static const int64_t sides[] = {12, 16, 24, 30};
    for (size_t si = 0; si < sizeof sides / sizeof *sides; si++) {
        int64_t W = sides[si];
        for (int64_t band = 0; band <= 7; band++)
            for (int64_t a = 1; a <= W; a++) {
                if (W % a)
                    continue;
                nm_density dm = band_model(W, band);
                ck_assert(nm_band_pdf_make(&dm, a, a, &t));
                uint64_t count[1024] = {0}, most = 0;
                for (int64_t r = 0; r < W; r += a)
                    for (int64_t c = 0; c < W; c += a) {
                        uint64_t k = brute_box(band, r, r + a, c, c + a);
                        count[k]++;
                        most = k > most ? k : most;
                    }
                uint64_t seen = 0, total = 0;
                for (size_t i = 0; i < t.n; i++) {
                    ck_assert_msg(t.w[i] == count[t.occ[i]],
                                  "W=%lld band=%lld tile %lld: count %llu at %llu positions, "
                                  "enumeration %llu", (long long)W, (long long)band,
                                  (long long)a, (unsigned long long)t.occ[i],
                                  (unsigned long long)t.w[i],
                                  (unsigned long long)count[t.occ[i]]);
                    seen += t.w[i];
                    total += t.w[i] * t.occ[i];
                }
                ck_assert_uint_eq(seen, (uint64_t)((W / a) * (W / a)));
                ck_assert_uint_eq(total, dm.nnz); /* the expected count is the band's */
                ck_assert_uint_eq(nm_band_max(&dm, a, a), most);
                ck_assert_double_eq_tol(nm_band_p_empty(&dm, a, a),
                                        (double)count[0] / (double)seen, 1e-15);
            }
    }
    /* a tile taller than wide: Timeloop's representative row stands for
     * the steady rows though the band crosses their tiles elsewhere (W 12,
     * band 0, tiles 2 x 3: row group 0 holds 2, then 0, 0, 0, taken for
     * all six row groups) */
    nm_density dm = band_model(12, 0);
    ck_assert(nm_band_pdf_make(&dm, 2, 3, &t));
    ck_assert_uint_eq(t.n, 2);
    ck_assert_uint_eq(t.occ[0], 0);
    ck_assert_uint_eq(t.w[0], 18);
    ck_assert_uint_eq(t.occ[1], 2);
    ck_assert_uint_eq(t.w[1], 6);
    ck_assert_double_eq(t.p[1], 0.25);
    nm_band_pdf_fini(&t);
    /* given its tile's count: W 16, band 1, 4 x 4 tiles of 2 x 2 boxes.
     * The tile at the origin holds 10 (2 + 3 + 3 + 2), every box in it
     * nonempty; the first holding 1 is at columns 4-7 ((3, 4) only: three
     * of its four boxes empty); one holding 0 is wholly empty */
    dm = band_model(16, 1);
    nm_dtile tile = {16, 4, 4}, box = {4, 2, 2};
    ck_assert_double_eq(nm_band_p_empty_given(&dm, &box, &tile, 10), 0.0);
    ck_assert_double_eq(nm_band_p_empty_given(&dm, &box, &tile, 1), 0.75);
    ck_assert_double_eq(nm_band_p_empty_given(&dm, &box, &tile, 0), 1.0);
    ck_assert_double_eq(nm_band_p_empty_given(&dm, &tile, &tile, 10), 0.0);
    /* the tile at the origin is the first of the scan: the share of empty
     * boxes in it, against counting elements, for boxes of every shape
     * that divides tiles of several shapes */
    for (int64_t band = 0; band <= 4; band++) {
        nm_density bm = band_model(24, band);
        for (int64_t th = 1; th <= 12; th++)
            for (int64_t tw = 1; tw <= 12; tw++)
                for (int64_t sh = 1; sh <= th; sh++)
                    for (int64_t sw = 1; sw <= tw; sw++) {
                        if (th % sh || tw % sw || 24 % th || 24 % tw)
                            continue;
                        uint64_t o = brute_box(band, 0, th, 0, tw), empty = 0;
                        for (int64_t r = 0; r < th; r += sh)
                            for (int64_t c = 0; c < tw; c += sw)
                                empty += !brute_box(band, r, r + sh, c, c + sw);
                        nm_dtile tt = {(uint64_t)(th * tw), th, tw};
                        nm_dtile ss = {(uint64_t)(sh * sw), sh, sw};
                        double want = (double)empty / (double)((th / sh) * (tw / sw));
                        ck_assert_msg(nm_band_p_empty_given(&bm, &ss, &tt, o) == want,
                                      "band %lld tile %lldx%lld box %lldx%lld: %g, not %g",
                                      (long long)band, (long long)th, (long long)tw,
                                      (long long)sh, (long long)sw,
                                      nm_band_p_empty_given(&bm, &ss, &tt, o), want);
                    }
    }
    /* the fullest 4 x 8 fiber holds 11 (rows 0-3, columns 0-7); both of
     * its 4 x 4 element tiles hold a nonzero */
    nm_dtile fiber = {32, 4, 8};
    ck_assert_uint_eq(nm_band_max(&dm, 4, 8), 11);
    ck_assert_uint_eq(nm_band_elements(&dm, &fiber, &tile), 2);
    /* through the generic entry points */
    ck_assert_uint_eq(nm_density_max_occupancy(&dm, &tile, 256), 10);
    ck_assert_uint_eq(nm_density_capacity(&dm, 16, 256), 3); /* one row of the band */
    ck_assert_double_eq_tol(nm_density_expected(&dm, 16, 256), 16.0 * 46.0 / 256.0, 1e-12);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("model");
    TCase *tc = tcase_create("hand-derived");
    tcase_add_test(tc, one_level_conv1d);
    tcase_add_test(tc, noc_by_hand);
    tcase_add_test(tc, noc_hop_count_by_hand);
    tcase_add_test(tc, two_level_conv1d);
    tcase_add_test(tc, strided_conv);
    tcase_add_test(tc, dilated_conv);
    tcase_add_test(tc, gemm_named_tensors);
    tcase_add_test(tc, depthwise_conv);
    tcase_add_test(tc, multicast);
    tcase_add_test(tc, spatial_reduction_and_links);
    tcase_add_test(tc, bypass);
    tcase_add_test(tc, throttling);
    tcase_add_test(tc, invalid_capacity);
    tcase_add_test(tc, tensor_widths_by_hand);
    tcase_add_test(tc, invalid_factors_and_fanout);
    tcase_add_test(tc, repeatable);
    tcase_add_test(tc, imperfect_outputs_exact);
    tcase_add_test(tc, imperfect_rules);
    tcase_add_test(tc, spatial_residual_counts);
    tcase_add_test(tc, spatial_residual_classes);
    tcase_add_test(tc, spatial_residual_always_applies);
    tcase_add_test(tc, spatial_residual_idle_class);
    tcase_add_test(tc, v04_parallel_and_area);
    tcase_add_test(tc, skipping_fanout_check);
    tcase_add_test(tc, banded_density_by_enumeration);
    suite_add_tcase(s, tc);
    return s;
}

TEST_MAIN(suite)
