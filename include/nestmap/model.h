/* model.h — evaluating one mapping: validity, accesses per level and data
 * space, energy, cycles.
 *
 * nm_model holds the (const) architecture and workload plus a per-thread
 * workspace; nm_model_eval fills a fixed-size nm_stats and allocates nothing,
 * so a search can call it millions of times.  Counts are per instance, as
 * Timeloop prints them.
 */
#ifndef NESTMAP_MODEL_H
#define NESTMAP_MODEL_H

#include <stddef.h>
#include <stdint.h>

#include "nestmap/arch.h"
#include "nestmap/mapping.h"
#include "nestmap/nest.h"
#include "nestmap/workload.h"

typedef enum nm_invalid_kind {
    NM_VALID = 0,
    NM_INV_FACTORS,     /* factors of a dimension do not multiply to its bound */
    NM_INV_NO_FANOUT,   /* spatial factors at a level that has no fan-out */
    NM_INV_BYPASS_ALL,  /* a data space is kept nowhere */
    NM_INV_CAPACITY,    /* tiles exceed a level's capacity */
    NM_INV_MIN_UTIL,    /* tiles fill less than the level's min_utilization */
    NM_INV_ARITH,       /* more arithmetic units (or X/Y) than the mesh has */
    NM_INV_INSTANCES,   /* more instances (or X/Y) of a storage level than it has */
    NM_INV_RESIDUAL,    /* a residual under a spatial loop of its dimension (got: that level) */
    NM_INV_FAN_RESIDUALS, /* more spatial residuals in one fan-out than NM_MAX_FAN_RESIDUALS */
    NM_INV_MULTICAST,    /* an M:N network below a fan-out of several multicast factors
                          * (level: the M:N level; index: data space) */
    NM_INV_MD_CAPACITY,  /* metadata bits exceed a level's metadata store (sparse.h) */
    NM_INV_FORMAT,       /* a tensor's representation does not fit the mapping: more
                          * loops than ranks (got 0), a compressed parent's ranks not
                          * the child's (1), decompression (2) or compression (3)
                          * not supported, compressed below uncompressed (4); level,
                          * index: data space */
    NM_INV_SKIP_FANOUT,  /* spatial skipping leaves a tensor needing more of a level's
                          * fan-out along axis X or Y than it has (Timeloop's check
                          * after skipping_spatial; level, index: data space) */
    NM_INV_KINDS         /* (the number of kinds) */
} nm_invalid_kind;

typedef struct nm_invalid {
    nm_invalid_kind kind;
    int level;       /* storage level (or -1 for the arithmetic level) */
    int index;       /* dimension or data space concerned, or -1 */
    char axis;       /* 'X', 'Y' or 0 */
    uint64_t got, limit;
} nm_invalid;

/* The three kinds of storage access, as nm_ds_stats' split counts index them. */
enum { NM_ACC_READ = 0, NM_ACC_FILL = 1, NM_ACC_UPDATE = 2 };

typedef struct nm_ds_stats {
    int kept;
    uint64_t partition_size, utilized_capacity, utilized_instances, utilized_clusters;
    uint64_t reads, fills, updates, temporal_reductions, address_generations;
    double energy_per_instance; /* pJ, per utilized instance */
    double energy;              /* pJ, all instances */
    double noc_energy;          /* pJ: its traffic on the networks to the child (noc.h) */
    /* With sparse tensors (nm_stats.sparse): reads, fills and updates split
     * into those performed, gated and skipped (NM_ACC_*); reads, fills and
     * updates above stay the dense (algorithmic) counts. */
    uint64_t actual[3], gated[3], skipped[3];
    /* ... and with representation formats: the utilized instances on average
     * (fewer when a parent with metadata holds empty tiles), the metadata's
     * traffic in data words for bandwidth ([0] reads, [1] fills and updates,
     * actual and gated), its energy and that of (de)compression per vector
     * access of a cluster, decompressions and compressions, and the factor
     * on vector accesses of a compressed tile in wide blocks. */
    double avg_instances;
    uint64_t tile_shape;        /* the dense tile (utilized_capacity: its nonzeros at most) */
    uint64_t meta_words[2];
    double meta_energy;
    uint64_t decompressions, compressions;
    double vec_ratio;
} nm_ds_stats;

typedef struct nm_level_stats {
    uint64_t cycles;
    double throttling; /* bandwidth slowdown, 1 = none */
    double leakage;    /* pJ */
    double energy;     /* pJ: accesses, address generation and leakage */
    double area;       /* um^2, all instances (from the ART) */
    double noc_energy; /* pJ: the networks to the child (noc.h), all data spaces */
    nm_ds_stats ds[NM_MAX_DS];
} nm_level_stats;

/* What each network between levels carries and costs, per data space
 * (nm_model_noc_stats). */
typedef struct nm_noc_stats {
    double energy[NM_MAX_LEVELS][2];            /* pJ, per network of each level */
    nm_noc_ds ds[NM_MAX_LEVELS][2][NM_MAX_DS];
} nm_noc_stats;

typedef struct nm_stats {
    nm_invalid invalid;          /* kind == NM_VALID for a valid mapping */
    /* The networks' details for the reports, or NULL (the evaluation sets
     * none: nm_model_noc_stats does, on request; owned by the caller). */
    const nm_noc_stats *noc;
    /* The metadata per rank of tensors with representation formats, or
     * NULL (nm_model_sparse_stats sets it, on request; owned by the caller). */
    const nm_sparse_detail *spd;
    nm_level_stats level[NM_MAX_LEVELS];
    uint64_t computes;           /* operations performed (sparse: the actual ones) */
    /* Sparse tensors (sparse.h): set when the design has densities or sparse
     * optimizations; then the counts of each nm_ds_stats are split, and the
     * computes: algorithmic = the dense count, gated and skipped besides
     * the actual ones in `computes`. */
    int sparse;
    uint64_t algorithmic_computes, gated_computes, skipped_computes;
    int spatial_skip;            /* skipping_spatial shrank fan-outs: each data space's
                                  * utilized instances are its own, and the arithmetic's
                                  * average (arith_avg) sets its cycles */
    double arith_avg;            /* arithmetic units in use on average (sparse) */
    uint64_t compute_cycles;     /* cycles if nothing throttles */
    uint64_t cycles;             /* including bandwidth throttling */
    uint64_t arith_utilized;     /* arithmetic units in use */
    double compute_energy;       /* pJ */
    double compute_area;         /* um^2, all arithmetic instances */
    double area;                 /* um^2, the whole design */
    double energy;               /* pJ, total (networks included) */
    double noc_energy;           /* pJ, of the networks between levels */
    double utilization;          /* fraction of arithmetic-unit cycles doing work */
    double total_ops;            /* multiplies plus additions (Timeloop's GFLOPs basis) */
    uint64_t last_level_accesses;
} nm_stats;

typedef struct nm_model {
    const nm_arch *arch;
    const nm_workload *wl;
    const struct nm_sparse *sparse; /* the design's sparse optimizations, or NULL: none
                                     * given, so densities change nothing */
    int split;                      /* densities or optimizations given: the counts are
                                     * split for the reports (nm_stats.sparse) */
    struct nm_sparse_ws *spws;      /* scratch of the sparse analysis (optimizations given) */
    int sparse_bound;               /* the optimizations can remove some of wl's accesses
                                     * (nm_sparse_removes): the bounds are then these two */
    double sparse_energy, sparse_cycles; /* what any mapping of a sparse design spends at
                                          * least: the roofline of its effectual computes */
    nm_nest_ws *ws;
    struct nm_shape_memo *shape; /* the last valid perfect factorization's shape (model.c) */
    double noc_width[NM_MAX_LEVELS]; /* floor-planned tile width (um) under each level's
                                      * network: the square root of the child tile's area */
    /* tensor_datawidth (arch.h): the bits of each data space's words at
     * each level, and which levels hold one at another width than their
     * word_bits (0: none, the usual case, counted as Timeloop counts). */
    int ds_bits[NM_MAX_LEVELS][NM_MAX_DS];
    unsigned wide;                   /* bit s: level s */
    int bw_limited;                  /* some level has a read, write or shared bandwidth */
    /* For the operand floor: the iterations, the dimensions each data
     * space's projection uses, and (bit ds) whether each of its axes is
     * one index alone */
    double macs;
    uint32_t ds_dims[NM_MAX_DS];
    unsigned ds_plain;
} nm_model;

/* Prepares a model for evaluating mappings of wl on arch; both must outlive
 * it.  Returns NM_ERR_NOMEM on allocation failure. */
nm_status nm_model_init(nm_model *mdl, const nm_arch *arch, const nm_workload *wl, nm_error *err);
/* Releases the workspace; safe on a zeroed model. */
void nm_model_fini(nm_model *mdl);

/* Evaluates mapping m: fills *out and returns 1 when valid, 0 when invalid
 * (out->invalid says why).  The nest built for m is written to *nest when not
 * NULL (for printing).  Allocates nothing (but the sparse pass's table of a
 * banded tensor's tile counts, grown in the workspace).  A mapping that differs from the
 * last valid one only in its temporal loop orders skips the checks and tile
 * sizes that do not depend on them, and the analysis carries over what the
 * inner loops left (nm_nest_ws_forget): runs of such mappings (the census,
 * exhaustive search) cost less each; the numbers are the same. */
int nm_model_eval(nm_model *mdl, const nm_mapping *m, nm_stats *out, nm_nest *nest);

/* a += plus - minus for the dense counts of passes on the same design and
 * data spaces (all valid; minus a part of a): accesses, computes, energies
 * and cycles add up, capacities and instances are the larger of a and
 * plus, utilization is over the cycles.  For a retained halo's first step
 * (fusion.h); sparse counts are not carried.  minus may be NULL. */
void nm_stats_add(nm_stats *a, const nm_stats *plus, const nm_stats *minus, int nlevels,
                  int nds);

/* a += k (plus - minus), as nm_stats_add (which is k = 1): for the nests
 * a causal mask's steps are counted from (fusion_causal.c). */
void nm_stats_add_times(nm_stats *a, int64_t k, const nm_stats *plus, const nm_stats *minus,
                        int nlevels, int nds);

/* Cycles, energies, utilization and totals of stats whose accesses,
 * computes and compute cycles are given (sums of nests' counts: a causal
 * mask's staircase, fusion_causal.c), for mapping m's shape (its spatial
 * fan-outs and tiles' instances; the nests' own), as nm_model_eval takes
 * them from a nest's counts.  out's sparse counts are not used. */
void nm_model_finish_counts(nm_model *mdl, const nm_mapping *m, nm_stats *out);

/* The words of level s that a tile of t elements of data space ds takes:
 * its nonzeros where the level holds it in a format, in the level's words
 * where its tensor_datawidth differs (what the capacity check sums). */
uint64_t nm_model_tile_words(const nm_model *mdl, int s, int ds, uint64_t t);

/* Distinct elements of data space ds that a box of iterations e[] (e[d]
 * along dimension d) reads at least, wherever the box lies: an axis of one
 * term takes e[d] values, one of several at least the sum of theirs less
 * one each; axes over distinct dimensions multiply, others give the
 * largest. */
double nm_model_distinct_at_least(const nm_workload *wl, int ds, const int64_t *e);

/* Forgets what the last evaluation left, so the next starts from scratch
 * (benchmarks of one evaluation; tests that warm and cold agree). */
void nm_model_forget(nm_model *mdl);

/* Runs only the checks that do not depend on loop order (factor products,
 * fan-outs, bypass, capacities, instances): 1 if they pass, else 0 with
 * out->invalid set.  Cheap: no data-movement analysis. */
int nm_model_precheck(nm_model *mdl, const nm_mapping *m, nm_stats *out);

/* Lower bounds on the energy (pJ), cycles and last-level accesses of any
 * mapping that differs from m only in its loop orders: compute energy,
 * leakage over the unthrottled run, every tensor moved at least once at
 * the outermost level, and the operands' accesses at the innermost level
 * keeping each (with perfect factors past a fan-out: nm_model_operands,
 * whose bandwidth needs also bound the cycles).  Requires
 * nm_model_precheck(m) to have passed. */
void nm_model_bound(nm_model *mdl, const nm_mapping *m, double *energy, double *cycles,
                    double *lla);

/* The operand floor: what the arithmetic's operands cost at the innermost
 * level keeping each tensor, for any mapping with perfect factors whose
 * fan-outs have the spatial factors sf[l][d] (dimension d on level l's
 * fan-out).  With none right below level 0, level 0 serves every
 * temporal step (nothing below keeps an operand for the next), and the
 * levels above it that bypass the tensor pass that on, each fan-out
 * sending every distinct element its units use once (multicast) and
 * taking every update: at least macs x (distinct elements of the
 * fan-outs' box below the level) / (units below it) accesses in all, an
 * output's reads fewer by its instances' parts.  Below a fan-out of level
 * 0, Timeloop's deltas leave a unit's operand in place from one step to
 * the next while the innermost temporal loop runs over a dimension the
 * tensor ignores, and a window sliding along it renews only its edge:
 * those tensors are spared (spared below), every other one changes at
 * every step.  Fills are left out, and the networks but for the hops of
 * the operands read from the level the innermost fan-out leaves
 * (hop_level below). */
#define NM_HOP_ARRANGEMENTS 120 /* a fan-out over 4 dimensions: 4! orders, 5 splits */
typedef struct nm_operand_cost {
    /* for data space ds innermost at level s: the least energy (pJ) of
     * those accesses, and the words each instance reads and writes (in the
     * level's words) */
    double energy[NM_MAX_DS][NM_MAX_LEVELS];
    double rd[NM_MAX_DS][NM_MAX_LEVELS], wr[NM_MAX_DS][NM_MAX_LEVELS];
    /* Below a fan-out of level 0 the counts above hold for the tensors the
     * innermost temporal loop's dimension indexes alone on an axis: their
     * operands change at every step.  A tensor that dimension does not
     * index may stay in its units (Timeloop's deltas), one it indexes
     * through a window slides: those are spared, their floor 0.  The loop
     * being unknown, spared[k] is the set (bit ds) one dimension with
     * temporal iterations spares, for each of nspared such dimensions
     * (none inside another); a bound on every loop order takes the least
     * over them.  nspared is 0 with no fan-out right below level 0. */
    int nspared;
    uint32_t spared[NM_MAX_DIMS];
    /* The footprint, for data space ds at each level s:
     * each instance of s in use touches at least foot_words[ds][s] of its
     * distinct elements (in the level's words) over its share of the work
     * (the fan-outs above s split the iteration space; each instance
     * covers the rest, over time), whatever the tiles and orders;
     * foot_scale[ds][s] is that many accesses' energy per pJ of the
     * level's access energy, over the instances (nm_model_kept_floor). */
    double foot_words[NM_MAX_DS][NM_MAX_LEVELS], foot_scale[NM_MAX_DS][NM_MAX_LEVELS];
    /* The hops (noc.h) of the words entering the network of hop_level,
     * the innermost level the spatial choice fans out from, when that
     * network charges them and every word pays its group's hops
     * (hop_count: access): hop_words[ds] the words c counts read there (an
     * output's updates), hop_classes[ds] the classes of receivers all its
     * instances send a word of ds to, and hop_pj[a][ds] the least energy
     * (pJ) of one word's hops, router and ingress when the fan-out's
     * dimensions take the a-th of the narr arrangements on its axes the
     * mesh allows (0, and no classes, for a data space whose windows span
     * receivers; narr 0 when there is no such level).  nm_model_operands
     * sets hop_level and hop_words, nm_model_hop_costs the rest,
     * nm_model_hop_words and nm_model_hop_floor weigh them. */
    int hop_level, narr;
    double hop_words[NM_MAX_DS];
    double hop_classes[NM_MAX_DS]; /* the classes all instances of hop_level send to (0:
                                    * not weighed) */
    double hop_pj[NM_HOP_ARRANGEMENTS][NM_MAX_DS];
} nm_operand_cost;

/* Fills c's hop costs (c->narr, c->hop_pj) for the spatial choice sf that
 * nm_model_operands filled c for: over every arrangement of the hop
 * level's fan-out the mesh allows, or, when m is not NULL, m's own (its
 * spatial order and split there: a bound on m's loop orders alone). */
void nm_model_hop_costs(const nm_model *mdl, const int64_t sf[][NM_MAX_DIMS],
                        const nm_mapping *m, nm_operand_cost *c);

/* The words of each data space ds that enter c's hop network at least
 * when ds is innermost at level at[ds] (-1: left out) and kept at the
 * levels in keeps[ds] (bit s; those that may keep it, for a bound over
 * several): the reads (an output's updates) c counts where at[ds] is the
 * hop level; below it, when no level in between keeps it, the
 * footprint of each instance there, once per class of receivers. */
void nm_model_hop_words(const nm_model *mdl, const nm_operand_cost *c, const int8_t *at,
                        const uint32_t *keeps, double *words);

/* The hop floor of c for those words: the least over the arrangements of
 * their hops' energy (0 when c has no hop level). */
double nm_model_hop_floor(const nm_model *mdl, const nm_operand_cost *c, const double *words);

/* The data spaces a fan-out below level 0 spares in m, its loop orders
 * as they are: those m's innermost temporal loop does not index alone on
 * an axis (none when m has no temporal loop). */
uint32_t nm_model_spared(const nm_model *mdl, const nm_mapping *m);

/* Fills *c for each data space ds at the levels in keep_at[ds] (bit s:
 * level s may be its innermost); returns 0 (filling nothing) for a sparse
 * design or one with an M:N (distributed) network. */
int nm_model_operands(const nm_model *mdl, const int64_t sf[][NM_MAX_DIMS],
                      const uint32_t keep_at[], nm_operand_cost *c);

/* The least cycles the levels' bandwidths allow when each data space ds is
 * innermost at level at[ds] (-1: left out), by c. */
double nm_model_operand_cycles(const nm_model *mdl, const nm_operand_cost *c, const int8_t *at);

/* The same with more words per instance read (xrd[s]) and written
 * (xwr[s]) at each level s: nm_model_kept_floor's. */
double nm_model_operand_cycles_plus(const nm_model *mdl, const nm_operand_cost *c,
                                    const int8_t *at, const double *xrd, const double *xwr);

/* The footprint floor's energy (pJ) by c when each data space ds is
 * innermost at level inner[ds] (-1: left out) and the levels in must[ds]
 * (bit s) keep it as well, below the top.  Each of those levels fills
 * the footprint (an output's innermost none: its first visit reads
 * nothing); one above the innermost also reads each element out once to
 * pass it down (an output's: updated once, instead of fills and reads).
 * At the innermost level the operands' own reads (an output's updates)
 * are at least the footprint too: the floor adds what c's operand counts
 * leave (all of it for the data spaces in spared, which those count as
 * nothing).  None of it is in c's operand counts or the top's once.
 * Adds the words per instance to rd[s] and wr[s]
 * (nm_model_operand_cycles_plus's xrd and xwr). */
double nm_model_kept_floor(const nm_model *mdl, const nm_operand_cost *c, const int8_t *inner,
                           const uint32_t *must, uint32_t spared, double *rd, double *wr);

/* The floor's energy (pJ) by c when each data space ds is innermost at
 * level at[ds] (-1: none), leaving out the data spaces in spared (those a
 * fan-out below level 0 spares) and in skip (bounded elsewhere); at the top
 * level only what exceeds once[ds] (already counted), nothing when once
 * is NULL.  in[ds] gets at[ds], -1 for the spared: nm_model_operand_cycles's
 * argument. */
double nm_model_operand_energy(const nm_model *mdl, const nm_operand_cost *c, const int8_t *at,
                               uint32_t spared, uint32_t skip, const double *once, int8_t *in);

/* Tighter lower bounds for the same mappings, at the price of a few
 * analyses: the model run on the least accesses any order of m's loops can
 * cause (nm_nest_floor; the model is monotone in them), with the outermost
 * level's loops in each of their orders when there are at most 120; never
 * below nm_model_bound's.  Residual factors get nm_model_bound's. */
void nm_model_floor(nm_model *mdl, const nm_mapping *m, double *energy, double *cycles,
                    double *lla);

/* Evaluates m again and fills *noc with what each network carries and
 * costs (the reports print it), pointing st->noc at it; st gets m's stats.
 * Returns nm_model_eval's result. */
int nm_model_noc_stats(nm_model *mdl, const nm_mapping *m, nm_stats *st, nm_noc_stats *noc);

/* Evaluates m again and fills *detail with the metadata of every tensor
 * with a representation format (the reports print it), pointing st->spd at
 * it; st gets m's stats.  Returns nm_model_eval's result. */
int nm_model_sparse_stats(nm_model *mdl, const nm_mapping *m, nm_stats *st,
                          nm_sparse_detail *detail);

/* Writes why a mapping is invalid, in Timeloop's words where it has them
 * ("couldn't map level RF: mapped tile size 84 exceeds buffer capacity 64"). */
void nm_invalid_describe(const nm_invalid *inv, const nm_arch *arch, const nm_workload *wl,
                         char *buf, size_t size);

#endif
