/* network.h — a network: a list of layers, each a problem with a repeat
 * count, mapped one after another onto one design.
 *
 *   network:
 *     name: MobileNet-v1
 *     layers:
 *     - {name: conv1, problem: {conv2d: {C: 3, M: 32, P: 112, Q: 112, R: 3, S: 3, stride: 2}}}
 *     - {name: dw2, repeat: 5, problem: {depthwise: {C: 512, P: 14, Q: 14, R: 3, S: 3}}}
 *
 * `problem` takes any form `problem:` takes (shorthand or Timeloop's shape
 * and instance).  A dimension that some layers have and others lack (a
 * depthwise layer has no output channels) is a dimension of size 1 for the
 * layers that lack it, so one set of constraints serves them all.  Identical
 * layers are mapped once.
 */
#ifndef NESTMAP_NETWORK_H
#define NESTMAP_NETWORK_H

#include <stdint.h>

#include "nestmap/arch.h"
#include "nestmap/fusion.h"
#include "nestmap/search.h"
#include "nestmap/workload.h"
#include "nestmap/yaml.h"

#define NM_MAX_LAYERS 4096

typedef struct nm_layer {
    char name[NM_NAME_MAX];
    int64_t repeat;        /* how many times the layer runs */
    int same_as;           /* index of the first identical layer (itself if none before) */
    nm_workload wl;
    const nm_ynode *node;  /* the layer's entry, for messages */
} nm_layer;

typedef struct nm_network {
    char name[NM_NAME_MAX];
    int nlayers, ndistinct;
    nm_layer *layer;       /* owned */
} nm_network;

/* Parses the `network:` node.  Warnings go to doc. */
nm_status nm_network_parse(nm_network *net, const nm_ynode *node, nm_ydoc *doc, nm_error *err);
void nm_network_fini(nm_network *net);

/* Multiply-accumulates of the whole network (repeats counted). */
double nm_network_macs(const nm_network *net);

/* The outcome of mapping one layer. */
typedef struct nm_layer_result {
    nm_status status;       /* NM_OK: searched (res.found says whether a mapping fits);
                             * else err says why the layer could not be searched */
    nm_error err;
    nm_search_result res;
} nm_layer_result;

/* Maps every distinct layer of net onto arch under the constraints (as
 * nm_mapspace_init takes them) with the search options o.  Up to `threads`
 * layers are searched at once, each on one thread (or on several when there
 * are fewer layers than threads); the results do not depend on `threads`.  out has net->nlayers entries; only those of
 * distinct layers are filled: layer i's result is out[net->layer[i].same_as].
 * Release with nm_network_results_fini.  Returns NM_ERR_NOMEM or NM_OK: a
 * layer that cannot be searched is reported in its entry and the rest still
 * run. */
nm_status nm_network_map(const nm_network *net, const nm_arch *arch, const nm_ynode *constraints,
                         const nm_ynode *more, const nm_search_opts *o, int threads,
                         nm_layer_result *out, nm_error *err);

/* As nm_network_map, calling done(ctx, i, ndone) (one call at a time) as
 * each distinct layer i finishes, ndone of them so far; done may be NULL. */
nm_status nm_network_map_report(const nm_network *net, const nm_arch *arch,
                                const nm_ynode *constraints, const nm_ynode *more,
                                const nm_search_opts *o, int threads, nm_layer_result *out,
                                void (*done)(void *ctx, int i, int ndone), void *ctx,
                                nm_error *err);

/* As nm_network_map_report, each layer's search also starting warm from
 * the mappings of layer i in warm[s] for s < nwarm (nm_network_best_mappings
 * of another design): see nm_search_opts.warm.  Every source's best comes
 * first, then their runners-up, NM_MAX_WARM in all. */
nm_status nm_network_map_warm(const nm_network *net, const nm_arch *arch,
                              const nm_ynode *constraints, const nm_ynode *more,
                              const nm_search_opts *o, int threads,
                              const nm_mapping *const *warm, int nwarm, nm_layer_result *out,
                              void (*done)(void *ctx, int i, int ndone), void *ctx,
                              nm_error *err);

/* Every layer's warm starts for another design (nm_search_result_starts),
 * layer i's at [i * NM_WARM_STARTS ...] (repeats resolved; nlevels 0
 * where none), heap (NULL when out of memory). */
nm_mapping *nm_network_best_mappings(const nm_network *net, const nm_layer_result *out);

void nm_network_results_fini(const nm_network *net, nm_layer_result *out);

/* A network's totals over its mapped layers, repeats counted (layers run one
 * after another). */
typedef struct nm_network_total {
    int mapped, failed;                /* layers with and without a mapping */
    double macs, energy, cycles;       /* energy in pJ */
    double lla;                        /* last-level accesses */
    double busy;                       /* utilization x cycles, summed */
    double level[NM_MAX_LEVELS + 1];   /* pJ by level; level[arch->nlevels]: arithmetic */
    double noc;                        /* pJ of the networks between levels (noc.h) */
    double bound_cycles, bound_energy; /* the mapped layers' roofline bounds (roofline.h) */
} nm_network_total;
void nm_network_totals(const nm_arch *arch, const nm_network *net, const nm_layer_result *out,
                       nm_network_total *t);

/* Adds one mapped layer (or operation) wl with stats st, run k times, to *t. */
void nm_network_total_add(nm_network_total *t, const nm_arch *arch, const nm_workload *wl,
                          const nm_stats *st, double k);

struct nm_network_fusion;

/* The layers' roofline cycles (nm_roofline_of), repeats counted, over
 * every layer; with fu, a layer of a run whose fused mapping is used
 * counts its operation's (nm_roofline_op). */
double nm_network_roofline_cycles(const nm_arch *arch, const nm_network *net,
                                  const struct nm_network_fusion *fu);

/* Adds the mapped layers' proven bounds on o's first metric to *s (see
 * nm_bound_sum): no mapping of the network's layers scores below
 * nm_bound_sum_value(s) on the metric of their totals, and the network's
 * gap is its score over that.  With fu (the network fused, or NULL), a
 * layer of a run whose fused mapping is used adds its operation's roofline
 * instead (nm_roofline_op: its intermediates on chip). */
void nm_network_bound(const nm_arch *arch, const nm_network *net, const nm_layer_result *out,
                      const struct nm_network_fusion *fu, const nm_search_opts *o,
                      nm_bound_sum *s);

/* ---- fusing consecutive layers (network_fuse.c) ----
 *
 * A network file lists its layers in the order they run; `network --fuse`
 * takes a layer to read the output of the layer before it when one of its
 * inputs has that output's shape.  Where it reads it whole, point by point
 * (a 1x1 convolution after any convolution, a pointwise one after a
 * depthwise one), the two may fuse: consecutive such layers, run the same
 * number of times, form a run, searched as a chain (fusion.h) with the
 * layers' own dimension and tensor names as other names, so the design's
 * constraints bind as they do for the layer alone.  A layer reading
 * windows of the output before it (a 3x3 or strided convolution, a
 * depthwise one after a pointwise one) may fuse with it too, as the first
 * link of a run: the layer before then computes every row and column the
 * windows reach, where they reach past its output the next layer's zero
 * padding, counted as data (as Timeloop's layer shapes count the padded
 * input), and the fused search steps through the rows recomputing or
 * retaining the halos (fusion.h).  Runs may overlap by a layer (a run
 * beginning with the layer a run before ends with); those that stand for
 * their layers are chosen not to. */

typedef enum nm_link_kind {
    NM_LINK_NONE,   /* no input of the later layer has the earlier one's output shape */
    NM_LINK_READS,  /* the later layer reads the earlier one's output whole: they may fuse */
    NM_LINK_WINDOW, /* it reads it through windows reaching all of it (and perhaps its
                     * padding): they may fuse, the earlier first in its run */
    NM_LINK_STRIDE, /* through windows or strides that leave some of it unread: not fused */
    NM_LINK_REPEAT  /* it reads it whole, but they run different numbers of times */
} nm_link_kind;

typedef struct nm_link {
    nm_link_kind kind;
    int ds;                    /* the later layer's data space reading the output */
    int8_t axis[NM_MAX_RANKS]; /* its axis reading the output's axis r */
} nm_link;

/* How layer j stands to layer i's output. */
void nm_network_link(const nm_network *net, int i, int j, nm_link *l);

/* Layers first .. first + n - 1, each reading the one before whole (the
 * second may read the first through windows: NM_LINK_WINDOW), as a chain:
 * each an operation named as the layer, its indices renamed ("c1" for the
 * first layer's C; a consumer's indices over the intermediate take the
 * producer's, but for the windows' own) and its tensors ("conv2.Weights"),
 * with the layer's own names as other names (aliases, roles), and each
 * data space and index in the layer's order, so that a layer's mapping
 * serves its operation.  A first layer read through windows reaching past
 * its output grows to what they reach (nm_network_grown). */
nm_status nm_network_chain(const nm_network *net, int first, int n, nm_chain *c, nm_error *err);

typedef struct nm_network_run {
    int first, n;           /* layers first .. first + n - 1 */
    int same_as;            /* the first run of the same layers (its search serves) */
    nm_status status;       /* NM_OK: searched; else err says why not */
    nm_error err;
    nm_chain chain;
    nm_fused_result res;    /* the fused search (res.best: the best cut found) */
    nm_fused_sum unfused;   /* the layers' own mappings, each alone (once) */
    int fused;              /* the fused search's best beats them (set on the run
                             * searched: run[same_as]) */
    int used;               /* this run's fused mapping stands for its layers: it beats
                             * them, and no overlapping run chosen instead saves more */
} nm_network_run;

/* How many more of dimension d operation k of chain c (nm_network_chain
 * of layers from first) computes than its layer: the rows and columns the
 * next layer's windows reach past its output.  0 for most. */
int64_t nm_network_grown(const nm_network *net, int first, const nm_chain *c, int k, int d);

/* The roofline of layer i as operation i - r->first of run r
 * (nm_roofline_op: its intermediates on chip), at the layer's own size
 * where the run grows it: a bound on the layer in any mapping. */
void nm_network_run_roofline(const nm_network *net, const nm_arch *arch,
                             const nm_network_run *r, int i, nm_roofline *out);

typedef struct nm_network_fusion {
    int nruns;
    nm_network_run *run;    /* owned */
    /* Every mapped layer's mapping evaluated as an operation alone, in a
     * chain of its own and in its run: how many evaluations, and how many
     * gave the layer's own figures exactly (they all should). */
    int checked, equal;
    nm_fused_sum fused, unfused; /* the network's totals, repeats counted */
    double seconds;
} nm_network_fusion;

/* Finds net's runs (ordered by first layer, then length), searches each
 * (nm_fused_search with o, its operations' own mappings at an eighth of
 * o's effort, one run after another), chooses the runs used and sets the
 * totals, the layer-by-layer results in out (nm_network_map) standing for
 * the unfused network.  Release with nm_network_fusion_fini. */
nm_status nm_network_fuse(const nm_network *net, const nm_arch *arch, const nm_ynode *constraints,
                          const nm_ynode *more, const nm_search_opts *o,
                          const nm_layer_result *out, nm_network_fusion *fu, nm_error *err);
void nm_network_fusion_fini(nm_network_fusion *fu);

/* The run holding layer i whose fused mapping is used, or NULL. */
const nm_network_run *nm_network_fused_run(const nm_network_fusion *fu, int i);

/* Calls fn(arg, wl, st, repeat) for what stands for each mapped layer in
 * the network as fused: the layer's own best mapping's stats, or, for the
 * layers of a run whose fused mapping is used, each operation's stats in
 * it (once, at the run's first layer; wl the operation's, its data spaces'
 * roles the layer's tensor names). */
typedef void (*nm_network_visit_fn)(void *arg, const nm_workload *wl, const nm_stats *st,
                                    int64_t repeat);
void nm_network_fused_each(const nm_network *net, const nm_layer_result *out,
                           const nm_network_fusion *fu, nm_network_visit_fn fn, void *arg);

#endif
