/* roofline.h — the roofline bound of a workload on a design, before any
 * mapping: the arithmetic units' peak and the outermost level's bandwidth,
 * with every tensor moved once to or from the outermost level (the least any
 * mapping can move), each tensor as a framework holds it (a padded input
 * without its padding: nm_workload_held_words).  `nestmap bound` prints it; searches and sweeps report
 * how far their results are from it.
 */
#ifndef NESTMAP_ROOFLINE_H
#define NESTMAP_ROOFLINE_H

#include "nestmap/arch.h"
#include "nestmap/error.h"
#include "nestmap/fusion.h"
#include "nestmap/mapspace.h"
#include "nestmap/workload.h"

typedef enum nm_roof_binding {
    NM_ROOF_COMPUTE_ONLY, /* the outermost level gives no bandwidth */
    NM_ROOF_COMPUTE,      /* compute-bound */
    NM_ROOF_MEMORY        /* bound by the outermost level's bandwidth */
} nm_roof_binding;

typedef struct nm_roofline {
    double macs;           /* multiply-accumulates */
    double effectual_macs; /* ... that a sparse design must compute (both operands
                            * nonzero); macs on a dense design */
    double words_in;       /* words of the read-only tensors */
    double words_out;      /* words of the outputs */
    double bytes;          /* (words_in + words_out) at the outermost level's word width */
    double compute_cycles; /* ceil(macs / arithmetic units) */
    nm_count compute_cycles_exact; /* the same, exact past 2^53 (for printing) */
    double mem_cycles;     /* traffic / outermost bandwidth (not rounded); NaN when unknown */
    double bound_cycles;   /* the larger of the two, rounded up */
    nm_roof_binding binding;
    const char *bw_note;   /* which bandwidth was used, in words */
    /* The least energy any mapping spends (pJ): every operation on the
     * arithmetic units, every input read once and every output written
     * once at the outermost level (leakage and all inner traffic left out). */
    double energy_pj;
} nm_roofline;

/* Fills *r for wl on arch. */
void nm_roofline_of(nm_roofline *r, const nm_arch *arch, const nm_workload *wl);

/* The roofline of operation i of chain c, as a bound on what the operation
 * costs in any mapping of the chain, fused or not: its own kind of
 * arithmetic (nm_arith_op_energy), and at the outermost level only the
 * tensors no fused group could keep on chip (neither written nor read by
 * another operation), an input several operations read counted at the
 * first.  Its cycles bound the operation's, as the model counts a group's
 * operations one after the other. */
void nm_roofline_op(nm_roofline *r, const nm_arch *arch, const nm_chain *c, int i);

/* Adds every operation of c (nm_roofline_op) to the bound sum *s (search.h):
 * a proven lower bound on its metric over every mapping of the chain. */
struct nm_bound_sum;
void nm_roofline_chain_bound(const nm_arch *arch, const nm_chain *c, struct nm_bound_sum *s);

/* A chain's result `total` on metric (an nm_metric) over its proven lower
 * bound (nm_roofline_chain_bound, into *lb): at most that far from the
 * optimum.  0 when there is no bound. */
double nm_roofline_chain_gap(const nm_arch *arch, const nm_chain *c, int metric,
                             const nm_fused_sum *total, double *lb);

/* A lower bound on every mapping of a mapspace (perfect factors), tighter
 * than the roofline where the operands cost: for each choice of spatial
 * factors the constraints allow (nm_mapspace_spatial_each), the roofline's
 * energy, leakage over the run, and each tensor's operand floor at the
 * cheapest level that may be its innermost (nm_model_operands) with the
 * footprints of the levels keeping it (nm_model_kept_floor: that
 * innermost and those the constraints make keep it); cycles at least the
 * temporal iterations, the roofline's and the floor's bandwidth cycles.
 * metric: the least value of that metric (an nm_metric) over the choices;
 * energy and cycles: the least of each. */
typedef struct nm_operand_bound {
    double metric, energy, cycles;
    uint64_t choices;             /* spatial choices weighed */
} nm_operand_bound;

/* Fills *b; returns 0 when there is no such bound: a sparse design, an M:N
 * network, residual factors, or more spatial choices than budget. */
int nm_roofline_operand_bound(const nm_mapspace *ms, int metric, uint64_t budget,
                              nm_operand_bound *b);

/* ---- refetches: the capacity a level has, and what it must fetch again ----
 *
 * A level keeping a tensor fills a tile of it every time the tile changes
 * while the loops above the level run (the tile-granular rule).  Seen from
 * one instance of the level, its share of the work splits in two: the tile
 * (every loop at and below the level) and the loops above, whatever levels
 * they are at.  Of a tensor each of whose axes is one dimension (no
 * window, no dimension on two axes: `clean` below), the tiles of one
 * split never overlap, so each is fetched anew each time it changes:
 * every distinct element G times over the run, G the product of the
 * loops above over dimensions the tensor ignores, but for those below its
 * innermost loop over a dimension it has (they leave the tile in place).
 * Several loops over one dimension above the level fetch at least as
 * often as one loop over their product at the innermost of them, so a
 * split with one loop per dimension above it bounds them all.  The least
 * refetches a level can reach are then those of the splits whose tiles
 * fit its capacity, over every order of the loops above: the floor the
 * operand bound adds at each level (nm_roofline_operand_bound), and, on a
 * layer whose every tensor is clean (with coefficient 1), the order
 * `bound --curve` takes for each split (nm_roofline_curve) instead of
 * evaluating them all.  Tensors kept at different levels share the loops
 * above the higher one, which each level's floor weighs alone; the floor
 * also weighs them coupled: at a level u, with each tensor kept innermost
 * below u (and not at u) beside those u keeps, by the loops above u alone.
 * Such a tensor either has no loop over a dimension of its own between
 * its level and u, and then its tile at its level spans u's tile over
 * those dimensions (so that tile must fit its level, beside the least
 * tile of each other such tensor there: one spanning the fan-outs below
 * it) and the loops above u leave it in place as they leave u's tensors,
 * or it has one, and then every loop above u over a dimension it ignores
 * refetches it.  Its G by
 * the loops above u alone is at most its G at its level, so the least
 * over u's splits and orders of u's refetches and those bounds their
 * refetches below, with the levels' above u, is a floor too; the floor
 * takes the highest of that and the levels' sum.  It sees that of the
 * one-word registers of the simple arrays only one tensor stays put, and
 * that a global buffer keeping only the outputs tiles them with loops
 * that refetch the weights or inputs the registers keep.  A refetch at a
 * tensor's outermost level below the top comes from the top: its words
 * (G - 1 times the tensor's) take the top's bandwidth beside each
 * tensor's once, weighed the same way (the least words alone), so the
 * floor's cycles are at least theirs. */

/* The data spaces of wl that are clean on a share of the work box[] (each
 * dimension's extent): each axis at most one dimension the box spans
 * (extent above 1), none on two axes (bit ds); with unit, each of those
 * with coefficient 1 too (a strided axis's tiles are the boxes around
 * its points, more than the points: G counts them exactly only then). */
uint32_t nm_roofline_clean_spaces(const nm_workload *wl, const int64_t *box, int unit);

/* G of a tensor ignoring the dimensions in `irrelevant` (bit d) under the
 * loops above a level: n loops over dimension dim[i] with factor
 * factor[i], innermost first (factors of 1 are no loops). */
double nm_roofline_refetches(uint32_t irrelevant, int n, const int8_t *dim,
                             const int64_t *factor);

/* The least of sum over i of weight[i] x G_i over every order of one loop
 * per dimension above a level, outer[d] each (1: none; nd dimensions), for
 * n <= NM_MAX_DS tensors ignoring irrelevant[i]; each tensor's G at that
 * least into g[], and an order reaching it (every dimension, innermost
 * first) into order[] (each when not NULL).  Exact: in a best order the
 * innermost loops are those every tensor ignores, then those all but the
 * first tensor to have a loop of its own ignore, and so on, so the least
 * is over the orders in which the tensors stop being left in place. */
double nm_roofline_least_refetch(int n, const uint32_t *irrelevant, const double *weight,
                                 const int64_t *outer, int nd, double *g, int8_t *order);

/* Cycles the outermost level `top` needs to read in_words and write
 * out_words of its words (its shared bandwidth, or the slower of its read
 * and write bandwidths); NaN when it gives none.  *note says which. */
double nm_roofline_memory_cycles(const nm_level *top, double in_words, double out_words,
                                 const char **note);

/* "compute", "memory bandwidth" or "compute (memory unbounded)". */
const char *nm_roofline_binding_name(nm_roof_binding b);

/* The least backing-store traffic attainable with an on-chip buffer of each
 * capacity, for one layer (Huang et al., "Mind the Gap: Attainable Data
 * Movement and Operational Intensity Bounds for Tensor Algorithms",
 * ISCA 2024, "Orojenesis"): over every single-buffer mapping (each
 * dimension's loop split in two with perfect factors, the outer loops in
 * every order above one buffer that holds a tile of every tensor), the
 * buffer words its tiles take and the words the backing store moves,
 * counted by the cost model (Timeloop's tile-granular rule, sliding windows
 * included).  The curve is the staircase of the mappings no other beats on
 * both.  Words are elements (one word each). */
typedef struct nm_curve_point {
    double capacity;              /* buffer words the tiles take */
    double traffic;               /* backing-store reads, fills and updates (words) */
    int64_t outer[NM_MAX_DIMS];   /* each dimension's outer factor (above the buffer) */
    int8_t order[NM_MAX_DIMS];    /* the outer loops, innermost first (dims) */
    int nouter;
    /* A chain's fused group recomputing halos (fusion.h): the last
     * operation's dimensions split_dim[] stepped through in split_steps[]
     * steps (outer and order then over the group's first operation's
     * dimensions as written, the steps' own loops outermost). */
    int nsplit;
    int8_t split_dim[NM_MAX_SPLITS];
    int64_t split_steps[NM_MAX_SPLITS];
    int retain;                   /* the halo retained (one split), not recomputed */
} nm_curve_point;

typedef struct nm_curve {
    int n;
    nm_curve_point *pt;           /* by capacity, ascending; traffic descending; owned */
    double compulsory;            /* each tensor once: the traffic at unbounded capacity */
    uint64_t evaluated;           /* mappings evaluated */
} nm_curve;

/* Fills *c for wl; an error when the single-buffer mappings number more
 * than budget (the count is in the message). */
nm_status nm_roofline_curve(const nm_workload *wl, uint64_t budget, nm_curve *c, nm_error *err);
void nm_curve_fini(nm_curve *c);

/* The least traffic of the curve at `capacity` words (the compulsory
 * traffic's ceiling: INFINITY below the smallest tiling). */
double nm_curve_at(const nm_curve *c, double capacity);

/* The same for a chain of operations (fusion.h): over every cut of the
 * chain into groups of consecutive operations, each group either one
 * operation alone (its single-buffer mappings, as above) or several fused
 * at the buffer, which keeps their intermediates (the loops the group may
 * share split in two, the outer ones in every order above the buffer, each
 * operation's other loops below it: nestmap's fused mappings on a design
 * of one buffer), and, where its last operation reads the others through
 * windows that overlap, the same over every split of the last operation's
 * rows, columns or both into steps recomputing the halos
 * (nm_chain_recompute: every number of steps dividing them); a group needs
 * the words nm_fused_group_need gives, and the groups run one after the
 * other, each with the whole buffer.  At every capacity the least total
 * over the cuts; the staircase of these. */
typedef struct nm_chain_curve_point {
    double capacity, traffic;
    uint32_t cut;           /* bit i: operation i begins a group */
    int pt[NM_MAX_OPS];     /* for the group beginning at operation i, ending
                             * before the next begins: its point in range[i][last] */
} nm_chain_curve_point;

typedef struct nm_chain_curve {
    int nops;
    /* [first][last]: the curve of operations first..last as one group
     * (first == last: the operation alone; no points: they cannot be one
     * group); a fused group's outer loops are over operation first's
     * dimensions */
    nm_curve range[NM_MAX_OPS][NM_MAX_OPS];
    int n;
    nm_chain_curve_point *pt;  /* by capacity, ascending; traffic descending; owned */
    double compulsory;         /* the traffic at unbounded capacity */
    uint64_t evaluated;        /* mappings evaluated */
} nm_chain_curve;

/* Fills *cc for c; an error when the single-buffer mappings of its
 * operations and groups number more than budget. */
nm_status nm_roofline_chain_curve(const nm_chain *c, uint64_t budget, nm_chain_curve *cc,
                                  nm_error *err);
void nm_chain_curve_fini(nm_chain_curve *cc);

#endif
