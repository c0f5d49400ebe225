/* check_network.c — the shipped workloads against their sources' figures,
 * networks (parsing, identical layers, stand-in dimensions, mapping), and
 * the tree form's instance counts. */
#include <config.h>

#include <check.h>
#include <math.h>

#include "nestmap/alloc.h"
#include "nestmap/mapspace.h"
#include "nestmap/network.h"
#include "nestmap/pcg32.h"
#include "nestmap/spec.h"
#include "testutil.h"

/* Loads files (paths relative to the source tree) into spec and parses its
 * network into net. */
static void load_net(nm_spec *spec, nm_network *net, const char *f1, const char *f2)
{
    const char *src = getenv("NESTMAP_SRCDIR");
    char p1[1024], p2[1024];
    snprintf(p1, sizeof p1, "%s/%s", src ? src : ".", f1);
    snprintf(p2, sizeof p2, "%s/%s", src ? src : ".", f2 ? f2 : "");
    const char *files[] = {p1, p2};
    nm_error err;
    nm_status st = nm_spec_load(spec, files, f2 ? 2 : 1, 0, &err);
    if (st != NM_OK)
        ck_abort_msg("%s:%d:%d: %s", err.file, err.line, err.col, err.msg);
    st = nm_network_parse(net, nm_ymap_get(spec->doc.root, "network"), &spec->doc, &err);
    if (st != NM_OK)
        ck_abort_msg("%s:%d:%d: %s", err.file, err.line, err.col, err.msg);
}

static int64_t repeats(const nm_network *net, const char *skip)
{
    int64_t n = 0;
    for (int i = 0; i < net->nlayers; i++)
        if (!skip || !strstr(net->layer[i].name, skip))
            n += net->layer[i].repeat;
    return n;
}

START_TEST(mobilenet_v1)
{
    nm_spec spec;
    nm_network net;
    load_net(&spec, &net, "workloads/networks/mobilenet_v1.yaml", NULL);
    /* Table 1: 28 layers that multiply; "569 million mult-adds". */
    ck_assert_int_eq(net.nlayers, 28);
    ck_assert_int_eq(repeats(&net, NULL), 28);
    int dw = 0;
    for (int i = 0; i < net.nlayers; i++)
        dw += !strcmp(net.layer[i].wl.name, "depthwise");
    ck_assert_int_eq(dw, 13);
    double macs = nm_network_macs(&net);
    ck_assert_double_eq(macs, 568740352.0);
    ck_assert(fabs(macs - 569e6) / 569e6 < 0.005);
    nm_network_fini(&net);
    nm_spec_fini(&spec);
}
END_TEST

START_TEST(resnet50)
{
    nm_spec spec;
    nm_network net;
    load_net(&spec, &net, "workloads/networks/resnet50.yaml", NULL);
    /* 49 convolutions and the fully connected layer, besides the four
     * projection shortcuts; 3.8 x 10^9 multiply-adds in the paper. */
    ck_assert_int_eq(repeats(&net, "sc"), 50);
    ck_assert_int_eq(repeats(&net, NULL), 54);
    double macs = nm_network_macs(&net);
    ck_assert(fabs(macs - 3.8e9) / 3.8e9 < 0.10);
    nm_network_fini(&net);
    nm_spec_fini(&spec);
}
END_TEST

START_TEST(vgg16_bert_llama)
{
    nm_spec spec;
    nm_network net;
    load_net(&spec, &net, "workloads/networks/vgg16.yaml", NULL);
    ck_assert_int_eq(repeats(&net, NULL), 16); /* 13 convolutions, 3 fully connected */
    /* Per image: sum over layers of outputs x 3 x 3 x input channels. */
    double vgg = 224.0 * 224 * 9 * (3 * 64 + 64 * 64) + 112.0 * 112 * 9 * (64 * 128 + 128 * 128) +
                 56.0 * 56 * 9 * (128 * 256 + 2 * 256 * 256) +
                 28.0 * 28 * 9 * (256 * 512 + 2 * 512 * 512) + 14.0 * 14 * 9 * 3 * 512 * 512 +
                 25088.0 * 4096 + 4096.0 * 4096 + 4096.0 * 1000;
    ck_assert_double_eq(nm_network_macs(&net), vgg);
    nm_network_fini(&net);
    nm_spec_fini(&spec);

    /* BERT-base, sequence 128: per layer 4 projections of 768 x 768, the
     * attention products (12 heads of 64), and the 768 -> 3072 -> 768
     * feed-forward; 12 layers. */
    load_net(&spec, &net, "workloads/networks/bert_base_seq128.yaml", NULL);
    double L = 128, bert = 12 * (4 * L * 768 * 768 + 2 * 12 * L * L * 64 + 2 * L * 768 * 3072);
    ck_assert_double_eq(nm_network_macs(&net), bert);
    nm_network_fini(&net);
    nm_spec_fini(&spec);

    /* LLaMA-7B decode: one token through the ~6.5 G weights of the 32 layers
     * and the output projection, plus attention over 2048 cached tokens. */
    load_net(&spec, &net, "workloads/networks/llama7b_decode.yaml", NULL);
    double layer_weights = 4.0 * 4096 * 4096 + 3.0 * 4096 * 11008;
    double llama = 32 * (layer_weights + 2.0 * 32 * 128 * 2048) + 4096.0 * 32000;
    ck_assert_double_eq(nm_network_macs(&net), llama);
    nm_network_fini(&net);
    nm_spec_fini(&spec);
}
END_TEST

START_TEST(tutorial_conv)
{
    char path[1024];
    const char *files[] = {NULL};
    const char *src = getenv("NESTMAP_SRCDIR");
    snprintf(path, sizeof path, "%s/workloads/layers/tutorial_conv.yaml", src ? src : ".");
    files[0] = path;
    nm_spec spec;
    nm_error err;
    ck_assert_int_eq(nm_spec_load(&spec, files, 1, NM_NEED_PROBLEM, &err), NM_OK);
    /* 1x3x416x480 -> 1x16x208x240, 3x3, stride 2. */
    ck_assert_uint_eq(nm_workload_ops(&spec.wl), 21565440);
    int out = nm_workload_ds(&spec.wl, "Outputs");
    ck_assert_int_ge(out, 0);
    ck_assert_uint_eq(nm_workload_ops(&spec.wl) + nm_workload_ds_size(&spec.wl, out), 22364160);
    int in = nm_workload_ds(&spec.wl, "Inputs");
    /* The input the stride-2 window reads: (240 - 1) x 2 + 3 = 481 wide
     * and (208 - 1) x 2 + 3 = 417 high (the 416 x 480 image and padding). */
    ck_assert_uint_eq(nm_workload_ds_size(&spec.wl, in), 3u * 417 * 481);
    nm_spec_fini(&spec);
}
END_TEST

static void count_done(void *ctx, int i, int ndone)
{
    int *calls = ctx;
    (void)i;
    calls[0]++;
    calls[1] = ndone;
}

START_TEST(identical_layers_and_stand_ins)
{
    nm_spec spec;
    nm_network net;
    load_net(&spec, &net, "tests/data/network/design.yaml", "tests/data/network/small_net.yaml");
    ck_assert_int_eq(net.nlayers, 4);
    ck_assert_int_eq(net.ndistinct, 3);
    ck_assert_int_eq(net.layer[3].same_as, 0);
    ck_assert_int_eq(net.layer[2].same_as, 2);
    ck_assert_int_eq(net.layer[2].repeat, 2);
    /* The depthwise layer lacks M, which the others have. */
    ck_assert(nm_workload_unit_dim(&net.layer[1].wl, "M"));
    ck_assert(!nm_workload_unit_dim(&net.layer[0].wl, "M"));
    ck_assert_int_lt(nm_workload_dim(&net.layer[1].wl, "M"), 0);
    /* The design's constraints (M=1, an order naming M) hold for it. */
    nm_mapspace *ms = nm_calloc(1, sizeof *ms);
    nm_error err;
    ck_assert_int_eq(nm_mapspace_init(ms, &spec.arch, &net.layer[1].wl, spec.constraints,
                                      spec.constraints2, &err), NM_OK);
    nm_free(ms);

    /* Mapped with 1 and 2 threads: the same mappings (a tenth of the
     * default budget, the climb on: 20 s a run at the default) */
    nm_search_opts o;
    nm_search_opts_init(&o);
    ck_assert_int_eq(nm_search_opts_parse(&o, spec.mapper, &err), NM_OK);
    o.effort = 0.1;
    nm_layer_result *r1 = nm_calloc((size_t)net.nlayers, sizeof *r1);
    nm_layer_result *r2 = nm_calloc((size_t)net.nlayers, sizeof *r2);
    ck_assert_int_eq(nm_network_map(&net, &spec.arch, spec.constraints, spec.constraints2, &o, 1,
                                    r1, &err), NM_OK);
    int calls[2] = {0, 0}; /* calls, last ndone */
    ck_assert_int_eq(nm_network_map_report(&net, &spec.arch, spec.constraints, spec.constraints2,
                                           &o, 2, r2, count_done, calls, &err), NM_OK);
    ck_assert_int_eq(calls[0], net.ndistinct); /* once per distinct layer */
    ck_assert_int_eq(calls[1], net.ndistinct);
    for (int i = 0; i < net.nlayers; i++) {
        if (net.layer[i].same_as != i)
            continue;
        ck_assert_int_eq(r1[i].status, NM_OK);
        ck_assert(r1[i].res.found && r2[i].res.found);
        ck_assert(!memcmp(&r1[i].res.best.map, &r2[i].res.best.map, sizeof r1[i].res.best.map));
        ck_assert_double_eq(r1[i].res.best_stats.energy, r2[i].res.best_stats.energy);
    }
    nm_network_results_fini(&net, r1);
    nm_network_results_fini(&net, r2);
    nm_free(r1);
    nm_free(r2);
    nm_network_fini(&net);
    nm_spec_fini(&spec);
}
END_TEST

START_TEST(stand_in_factor_must_be_one)
{
    nm_spec spec;
    nm_network net;
    load_net(&spec, &net, "tests/data/network/design.yaml", "tests/data/network/small_net.yaml");
    nm_spec extra;
    nm_error err;
    static const char text[] =
        "constraints:\n- {target: GlobalBuffer, type: spatial, factors: M=4}\n";
    ck_assert_int_eq(nm_spec_load_string(&extra, "m4.yaml", text, 0, &err), NM_OK);
    nm_mapspace *ms = nm_calloc(1, sizeof *ms);
    /* The depthwise layer cannot split an M it does not have... */
    ck_assert_int_eq(nm_mapspace_init(ms, &spec.arch, &net.layer[1].wl, extra.constraints, NULL,
                                      &err), NM_ERR_INPUT);
    ck_assert_ptr_nonnull(strstr(err.msg, "no dimension 'M'"));
    ck_assert_str_eq(err.file, "m4.yaml");
    ck_assert_int_eq(err.line, 2);
    /* ...the convolution can. */
    ck_assert_int_eq(nm_mapspace_init(ms, &spec.arch, &net.layer[0].wl, extra.constraints, NULL,
                                      &err), NM_OK);
    nm_free(ms);
    nm_spec_fini(&extra);
    nm_network_fini(&net);
    nm_spec_fini(&spec);
}
END_TEST

START_TEST(network_errors)
{
    static const struct {
        const char *text, *msg;
        int line;
    } cases[] = {
        {"network: {name: x}\n", "has no 'layers'", 1},
        {"network: {layers: []}\n", "is empty", 1},
        {"network:\n  layers:\n  - {name: a, problem: {gemm: {M: 2, N: 2, K: 2}}}\n"
         "  - {name: a, problem: {gemm: {M: 4, N: 2, K: 2}}}\n", "two layers are called 'a'", 4},
        {"network:\n  layers:\n  - {name: a, repat: 2, problem: {gemm: {M: 2, N: 2, K: 2}}}\n",
         "did you mean 'repeat'", 3},
        {"network:\n  layers:\n  - {name: a}\n", "has no 'problem'", 3},
        {"network:\n  layers:\n  - {name: a, repeat: 0, problem: {gemm: {M: 2, N: 2, K: 2}}}\n",
         "repeat", 3},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        nm_spec spec;
        nm_network net;
        nm_error err;
        ck_assert_int_eq(nm_spec_load_string(&spec, "net.yaml", cases[i].text, 0, &err), NM_OK);
        nm_status st = nm_network_parse(&net, nm_ymap_get(spec.doc.root, "network"), &spec.doc,
                                        &err);
        ck_assert_msg(st == NM_ERR_INPUT, "case %zu parsed", i);
        ck_assert_msg(strstr(err.msg, cases[i].msg), "case %zu: %s", i, err.msg);
        ck_assert_int_eq(err.line, cases[i].line);
        nm_network_fini(&net);
        nm_spec_fini(&spec);
    }
}
END_TEST

/* How each layer of net stands to the one before it: want[i] for layer
 * i + 1. */
static void assert_links(const nm_network *net, const nm_link_kind *want)
{
    for (int i = 0; i + 1 < net->nlayers; i++) {
        nm_link l;
        nm_network_link(net, i, i + 1, &l);
        ck_assert_msg(l.kind == want[i], "%s -> %s: %d", net->layer[i].name,
                      net->layer[i + 1].name, (int)l.kind);
    }
}

/* net mapped layer by layer (3,000 evaluations a search, 2 threads; on
 * metric when it is not -1, else the design's mapper's), then fused into
 * *fu with the same options *o: the layers' results (release with
 * nm_network_results_fini and nm_free). */
static nm_layer_result *map_and_fuse(const nm_spec *spec, const nm_network *net, int metric,
                                     nm_search_opts *o, nm_network_fusion *fu)
{
    nm_error err;
    nm_search_opts_init(o);
    ck_assert_int_eq(nm_search_opts_parse(o, spec->mapper, &err), NM_OK);
    o->max_evals = 3000;
    if (metric >= 0)
        o->metric[0] = (nm_metric)metric;
    nm_layer_result *out = nm_calloc((size_t)net->nlayers, sizeof *out);
    ck_assert_int_eq(nm_network_map(net, &spec->arch, spec->constraints, spec->constraints2, o, 2,
                                    out, &err), NM_OK);
    ck_assert_int_eq(nm_network_fuse(net, &spec->arch, spec->constraints, spec->constraints2, o,
                                     out, fu, &err), NM_OK);
    return out;
}

/* network --fuse: which consecutive layers read the one before whole, the
 * runs they form as chains (indices and tensors shared where the layers
 * pass data, the layers' names as other names), random mappings of each
 * layer giving the same counts as the chain's operations as as the layer
 * alone, and the fused search over the runs. */
START_TEST(fuse_runs)
{
    nm_spec spec;
    nm_network net;
    load_net(&spec, &net, "tests/data/network/design.yaml", "tests/data/network/fuse_net.yaml");
    static const nm_link_kind want[] = {NM_LINK_WINDOW, NM_LINK_READS, NM_LINK_READS,
                                        NM_LINK_STRIDE, NM_LINK_REPEAT, NM_LINK_NONE,
                                        NM_LINK_WINDOW, NM_LINK_READS, NM_LINK_READS};
    ck_assert_int_eq(net.nlayers, 10);
    assert_links(&net, want);
    nm_error err;
    nm_chain *c = nm_calloc(1, sizeof *c);
    ck_assert_msg(nm_network_chain(&net, 1, 3, c, &err) == NM_OK, "%s", err.msg);
    ck_assert_int_eq(c->nops, 3);
    ck_assert_str_eq(c->op[1].name, "pw");
    for (int k = 1; k < 3; k++) {
        const nm_workload *pw = &c->op[k - 1].wl, *cw = &c->op[k].wl;
        const nm_dataspace *o = &pw->ds[c->op[k - 1].out];
        int in = nm_workload_ds(cw, "Inputs");
        ck_assert_int_ge(in, 0);
        ck_assert_str_eq(cw->ds[in].name, o->name);
        ck_assert_int_eq(c->op[k].producer[in], k - 1);
        /* axis by axis, the consumer follows the index the producer writes */
        for (int r = 0; r < o->nranks; r++) {
            const nm_axis *ax = &cw->ds[in].rank[r];
            int pd = o->rank[r].term[0].dim, found = 0;
            for (int t = 0; t < ax->nterms; t++)
                found |= !strcmp(cw->dim[ax->term[t].dim], pw->dim[pd]);
            ck_assert_msg(found, "axis %d of %s", r, o->name);
        }
        /* the consumer's C is the producer's output channel */
        ck_assert_int_eq(nm_workload_dim(cw, "C"), nm_workload_dim(cw, k == 1 ? "c1" : "m2"));
        ck_assert_int_ge(nm_workload_dim(cw, "M"), 0);
    }
    /* Random valid mappings of the three layers: the chain, unfused,
     * counts what each layer alone counts. */
    nm_fused_model fm;
    ck_assert_int_eq(nm_fused_model_init(&fm, &spec.arch, c, &err), NM_OK);
    nm_mapspace *ms = nm_calloc(3, sizeof *ms);
    nm_model *mdl = nm_calloc(3, sizeof *mdl);
    for (int k = 0; k < 3; k++) {
        ck_assert_int_eq(nm_mapspace_init(&ms[k], &spec.arch, &net.layer[1 + k].wl,
                                          spec.constraints, spec.constraints2, &err), NM_OK);
        ck_assert_int_eq(nm_model_init(&mdl[k], &spec.arch, &net.layer[1 + k].wl, &err), NM_OK);
    }
    nm_pcg32 rng;
    nm_pcg32_seed(&rng, 35u, 2026u);
    nm_mapping maps[3];
    nm_stats *own = nm_calloc(3, sizeof *own);
    nm_fused_stats *fst = nm_calloc(1, sizeof *fst);
    nm_fused_map *fmap = nm_calloc(1, sizeof *fmap);
    int compared = 0;
    for (int tries = 0; tries < 20000 && compared < 30; tries++) {
        int ok = 1;
        for (int k = 0; k < 3 && ok; k++) {
            nm_point pt;
            nm_mapspace_random(&ms[k], &rng, &pt);
            int wd, wl;
            ok = nm_mapspace_decode(&ms[k], &pt, &maps[k], &wd, &wl) &&
                 nm_model_eval(&mdl[k], &maps[k], &own[k], NULL);
        }
        if (!ok)
            continue;
        nm_fused_map_unfused(fmap, c, &spec.arch, maps);
        ck_assert(nm_fused_model_eval(&fm, fmap, fst));
        for (int k = 0; k < 3; k++) {
            const nm_stats *a = &own[k], *b = &fst->op[k];
            ck_assert_uint_eq(a->computes, b->computes);
            ck_assert_uint_eq(a->cycles, b->cycles);
            ck_assert_uint_eq(a->last_level_accesses, b->last_level_accesses);
            ck_assert(a->energy == b->energy);
            for (int s = 0; s < spec.arch.nlevels; s++)
                for (int ds = 0; ds < net.layer[1 + k].wl.nds; ds++) {
                    ck_assert_uint_eq(a->level[s].ds[ds].reads, b->level[s].ds[ds].reads);
                    ck_assert_uint_eq(a->level[s].ds[ds].fills, b->level[s].ds[ds].fills);
                    ck_assert_uint_eq(a->level[s].ds[ds].updates, b->level[s].ds[ds].updates);
                }
        }
        compared++;
    }
    ck_assert_int_ge(compared, 30);
    for (int k = 0; k < 3; k++)
        nm_model_fini(&mdl[k]);
    nm_fused_model_fini(&fm);
    nm_free(ms);
    nm_free(mdl);
    nm_free(own);
    nm_free(fst);
    nm_free(fmap);
    nm_free(c);

    /* The network mapped layer by layer, then fused. */
    nm_search_opts o;
    nm_network_fusion fu;
    nm_layer_result *out = map_and_fuse(&spec, &net, -1, &o, &fu);
    /* conv with the run after it (it reads conv's output through windows
     * that reach exactly: nothing grown), the run, and both again */
    static const int runs[][3] = {{0, 4, 0}, {1, 3, 1}, {6, 4, 0}, {7, 3, 1}};
    ck_assert_int_eq(fu.nruns, 4);
    for (int k = 0; k < 4; k++) {
        ck_assert_int_eq(fu.run[k].first, runs[k][0]);
        ck_assert_int_eq(fu.run[k].n, runs[k][1]);
        ck_assert_int_eq(fu.run[k].same_as, runs[k][2]);
        ck_assert_int_eq(fu.run[k].status, NM_OK);
    }
    /* six distinct layers alone, and the fourteen layers of the runs */
    ck_assert_int_eq(fu.checked, 20);
    ck_assert_int_eq(fu.equal, 20);
    double energy = 0;
    for (int i = 0; i < net.nlayers; i++)
        energy += (double)net.layer[i].repeat * out[net.layer[i].same_as].res.best_stats.energy;
    ck_assert(fabs(fu.unfused.energy - energy) <= 1e-9 * energy);
    for (int k = 0; k < 2; k++) {
        const nm_fused_sum *b = &fu.run[k].res.best_st->total, *u = &fu.run[k].unfused;
        double mb = nm_metric_value(o.metric[0], b->energy, (double)b->cycles, (double)b->backing);
        double mu = nm_metric_value(o.metric[0], u->energy, (double)u->cycles, (double)u->backing);
        ck_assert(fu.run[k].fused == (mb < mu && fu.run[k].res.best.ngroups < fu.run[k].n));
    }
    /* of two overlapping runs at most one is used, a run and the same
     * layers again alike, and the used ones' layers give way */
    ck_assert(!(fu.run[0].used && fu.run[1].used));
    ck_assert_int_eq(fu.run[0].used, fu.run[2].used);
    ck_assert_int_eq(fu.run[1].used, fu.run[3].used);
    double fused = energy;
    for (int k = 0; k < 4; k++)
        if (fu.run[k].used)
            fused += fu.run[runs[k][2]].res.best_st->total.energy - fu.run[k].unfused.energy;
    ck_assert(fabs(fu.fused.energy - fused) <= 1e-9 * energy);
    nm_network_fusion_fini(&fu);
    nm_network_results_fini(&net, out);
    nm_free(out);
    nm_network_fini(&net);
    nm_spec_fini(&spec);
}
END_TEST

/* network --fuse through windows: a run's first layer grown to the rows
 * and columns the second's windows reach (its 'same' padding), the chain
 * linking them, a windowed read only as a run's first link, the grown
 * layer's bound at its own size, and the runs used: on energy, which adds
 * up, the best set of runs no two sharing a layer, against every such
 * set. */
START_TEST(fuse_windows)
{
    nm_spec spec;
    nm_network net;
    load_net(&spec, &net, "tests/data/network/design.yaml", "tests/data/network/fuse_pad.yaml");
    static const nm_link_kind want[] = {NM_LINK_WINDOW, NM_LINK_READS, NM_LINK_WINDOW,
                                        NM_LINK_READS};
    assert_links(&net, want);
    nm_error err;
    nm_chain *c = nm_calloc(1, sizeof *c);
    ck_assert_msg(nm_network_chain(&net, 0, 3, c, &err) == NM_OK, "%s", err.msg);
    const nm_workload *w0 = &c->op[0].wl, *w1 = &c->op[1].wl;
    int P = nm_workload_dim(w0, "P"), Q = nm_workload_dim(w0, "Q"), M = nm_workload_dim(w0, "M");
    ck_assert_int_eq(w0->bound[P], 16);
    ck_assert_int_eq(w0->bound[Q], 16);
    ck_assert_int_eq(nm_network_grown(&net, 0, c, 0, P), 2);
    ck_assert_int_eq(nm_network_grown(&net, 0, c, 0, M), 0);
    ck_assert_int_eq(nm_network_grown(&net, 0, c, 1, nm_workload_dim(w1, "P")), 0);
    ck_assert_uint_eq(nm_workload_macs(w0), 8u * 16u * 16u * 16u);
    /* dw1 reads pw1's output, its channels pw1's, its rows its own windows */
    int in = nm_workload_ds(w1, "Inputs");
    ck_assert_int_eq(c->op[1].producer[in], 0);
    ck_assert_int_eq(nm_workload_dim(w1, "C"), nm_workload_dim(w1, w0->dim[M]));
    ck_assert_int_lt(nm_workload_dim(w1, w0->dim[P]), 0);
    /* dw2 reading pw2 through windows is not a run's first link here */
    ck_assert_int_ne(nm_network_chain(&net, 1, 3, c, &err), NM_OK);
    ck_assert_msg(strstr(err.msg, "only a run's second layer") != NULL, "%s", err.msg);

    nm_search_opts o;
    nm_network_fusion fu;
    nm_layer_result *out = map_and_fuse(&spec, &net, NM_MET_ENERGY, &o, &fu);
    static const int runs[][2] = {{0, 3}, {1, 2}, {2, 3}, {3, 2}};
    ck_assert_int_eq(fu.nruns, 4);
    for (int k = 0; k < 4; k++) {
        ck_assert_int_eq(fu.run[k].first, runs[k][0]);
        ck_assert_int_eq(fu.run[k].n, runs[k][1]);
        ck_assert_int_eq(fu.run[k].status, NM_OK);
    }
    /* five layers alone, and the runs' layers but the two grown */
    ck_assert_int_eq(fu.checked, 13);
    ck_assert_int_eq(fu.equal, 13);
    ck_assert_int_eq(nm_network_grown(&net, 2, &fu.run[2].chain, 0,
                                      nm_workload_dim(&fu.run[2].chain.op[0].wl, "P")), 1);
    /* every set of runs no two of which share a layer: none lowers the
     * energy below what the runs used give */
    double least = INFINITY;
    for (unsigned set = 0; set < 16u; set++) {
        unsigned layers = 0;
        int ok = 1;
        double e = fu.unfused.energy;
        for (int k = 0; k < 4 && ok; k++) {
            if (!((set >> k) & 1u))
                continue;
            unsigned mine = ((1u << fu.run[k].n) - 1u) << fu.run[k].first;
            ok = !(layers & mine) && fu.run[k].fused;
            layers |= mine;
            e += fu.run[k].res.best_st->total.energy - fu.run[k].unfused.energy;
        }
        if (ok)
            least = fmin(least, e);
    }
    ck_assert(fabs(fu.fused.energy - least) <= 1e-9 * fu.unfused.energy);
    ck_assert(fu.fused.energy <= fu.unfused.energy);
    for (int i = 0; i < net.nlayers; i++) { /* each layer in one used run at most */
        int in_runs = 0;
        for (int k = 0; k < 4; k++)
            in_runs += fu.run[k].used && i >= fu.run[k].first &&
                       i < fu.run[k].first + fu.run[k].n;
        ck_assert_int_le(in_runs, 1);
    }
    /* a grown layer's bound is its own size's: the fused network's bound
     * no higher than the unfused one's */
    nm_roofline r0, rl;
    nm_network_run_roofline(&net, &spec.arch, &fu.run[0], 0, &r0);
    nm_roofline_of(&rl, &spec.arch, &net.layer[0].wl);
    ck_assert(r0.macs == rl.macs);
    fu.run[0].used = 1; /* (whichever the choice: the bound for each run) */
    fu.run[2].used = 1;
    nm_bound_sum fb, ub;
    nm_bound_sum_init(&fb, o.metric[0]);
    nm_bound_sum_init(&ub, o.metric[0]);
    nm_network_bound(&spec.arch, &net, out, &fu, &o, &fb);
    nm_network_bound(&spec.arch, &net, out, NULL, &o, &ub);
    ck_assert(nm_bound_sum_value(&fb) <= nm_bound_sum_value(&ub) * (1 + 1e-12));
    nm_network_fusion_fini(&fu);
    nm_network_results_fini(&net, out);
    nm_free(out);
    nm_free(c);
    nm_network_fini(&net);
    nm_spec_fini(&spec);
}
END_TEST

/* Timeloop's tree form: a component inside subtree PE[0..3] exists once per
 * PE, times its own name's range. */
START_TEST(tree_instances)
{
    static const char text[] =
        "architecture:\n"
        "  subtree:\n"
        "  - name: system\n"
        "    local:\n"
        "    - {name: DRAM, class: DRAM, attributes: {width: 64, datawidth: 8}}\n"
        "    subtree:\n"
        "    - name: PE[0..3]\n"
        "      local:\n"
        "      - {name: Buf, class: regfile, attributes: {depth: 16, width: 8, datawidth: 8, "
        "meshX: 4}}\n"
        "      - {name: \"Lane[0..1]\", class: regfile, attributes: {depth: 4, width: 8, "
        "datawidth: 8, meshX: 8}}\n"
        "      - {name: \"MAC[0..1]\", class: intmac, attributes: {datawidth: 8, meshX: 8}}\n";
    nm_spec spec;
    nm_error err;
    nm_status st = nm_spec_load_string(&spec, "tree.yaml", text, NM_NEED_ARCH, &err);
    if (st != NM_OK)
        ck_abort_msg("%s:%d:%d: %s", err.file, err.line, err.col, err.msg);
    ck_assert_int_eq(spec.arch.nlevels, 3);
    /* Levels innermost first: Lane, Buf, DRAM. */
    ck_assert_str_eq(spec.arch.level[0].name, "Lane");
    ck_assert_int_eq(spec.arch.level[0].instances, 8);
    ck_assert_str_eq(spec.arch.level[1].name, "Buf");
    ck_assert_int_eq(spec.arch.level[1].instances, 4);
    ck_assert_int_eq(spec.arch.level[2].instances, 1);
    ck_assert_int_eq(spec.arch.arith.instances, 8);
    nm_spec_fini(&spec);
}
END_TEST

static Suite *network_suite(void)
{
    Suite *s = suite_create("network");
    TCase *tc = tcase_create("network");
    /* identical_layers_and_stand_ins maps a small network twice with the
     * default search: about a minute under ASan, past 120 s when the
     * machine's other core runs another suite (seen in CI) */
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, mobilenet_v1);
    tcase_add_test(tc, resnet50);
    tcase_add_test(tc, vgg16_bert_llama);
    tcase_add_test(tc, tutorial_conv);
    tcase_add_test(tc, identical_layers_and_stand_ins);
    tcase_add_test(tc, stand_in_factor_must_be_one);
    tcase_add_test(tc, network_errors);
    tcase_add_test(tc, tree_instances);
    tcase_add_test(tc, fuse_runs);
    tcase_add_test(tc, fuse_windows);
    suite_add_tcase(s, tc);
    return s;
}

TEST_MAIN(network_suite)
