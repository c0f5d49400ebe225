/* sparse.h — sparse tensors as Timeloop's sparse model (Sparseloop, Wu et
 * al., MICRO 2022) counts them: density models per tensor, gating and
 * skipping of storage accesses conditioned on other tensors, and gating and
 * skipping at the arithmetic units.
 *
 * The pass runs on the dense counts of one evaluation (model.c) and splits
 * them into actual, gated and skipped accesses, in Timeloop's order:
 * the probability that each optimization's condition tile is empty → the
 * impact propagated down the target tensor's storage chain → the compute
 * classification.  Gated accesses cost the ERT's gated_* energy and still
 * use bandwidth; skipped ones cost skipped_* (else gated_*) and use none.
 * A design without sparse_optimizations never enters it, and densities
 * alone change nothing (as in Timeloop).
 *
 * Representation formats (representation_format: UOP, UB, CP, B, RLE per
 * rank, flattened ranks) give a tensor metadata at a level: its accesses
 * shrink to the expected nonzeros, metadata reads, fills and updates are
 * counted per rank (as metadata and payload units), a compressed tile
 * occupies its largest nonzero count, and uncompressed levels under a
 * compressed one count decompressions (and compressions for outputs).
 * skipping_spatial shrinks a tensor's spatial expansion below a level to
 * the siblings whose condition tiles hold nonzeros.  Banded densities and
 * the inner_to_outer rank order are refused with a located error: not
 * modelled yet.
 */
#ifndef NESTMAP_SPARSE_H
#define NESTMAP_SPARSE_H

#include <stdint.h>

#include "nestmap/error.h"
#include "nestmap/limits.h"
#include "nestmap/yaml.h"

/* How a tensor's nonzeros are spread (problem.instance.densities). */
typedef enum nm_density_kind {
    NM_DENSITY_FIXED = 0,      /* fixed_structured (Timeloop's default, density 1):
                                * every tile of s elements holds s*d nonzeros,
                                * rounded down or up; 2:4 is 0.5 */
    NM_DENSITY_HYPERGEOMETRIC, /* ceil(d*N) nonzeros placed uniformly at random
                                * among the tensor's N elements */
    NM_DENSITY_BANDED          /* a square two-rank tensor whose nonzeros are
                                * the elements within `band` of its diagonal
                                * (band 0: a diagonal matrix); a tile's count
                                * depends on where the band crosses it */
} nm_density_kind;

typedef struct nm_density {
    nm_density_kind kind;
    double d;      /* in [0, 1] (banded: the band's share of the tensor) */
    int given;     /* written in the input (else dense: fixed, 1) */
    int64_t band;  /* banded: elements each side of the diagonal */
    int64_t side;  /* banded: the tensor's side */
    uint64_t nnz;  /* banded: the band's elements */
} nm_density;

/* A tile as the density models see it: its elements, and the extents of
 * its box along a two-rank tensor's ranks (rows, cols; 0 for other
 * tensors), anchored at the origin, as Timeloop's tile molds are.  Only a
 * banded density reads the box. */
typedef struct nm_dtile {
    uint64_t n;
    int64_t rows, cols;
} nm_dtile;

/* The tile of data space ds over a box of the operation space with the
 * given extents per dimension. */
struct nm_dataspace;
nm_dtile nm_dtile_box(const struct nm_dataspace *ds, const int64_t *ext);

/* A tile of n elements with no box (the models other than banded). */
static inline nm_dtile nm_dtile_n(uint64_t n)
{
    return (nm_dtile){n, 0, 0};
}

/* Probability that tile t of a tensor of N elements holds no nonzero. */
double nm_density_p_empty(const nm_density *dm, const nm_dtile *t, uint64_t N);

/* Expected nonzeros in a tile of n elements of a tensor of N elements. */
double nm_density_expected(const nm_density *dm, uint64_t n, uint64_t N);

/* Name of the model as Timeloop prints it ("fixed_structured"). */
const char *nm_density_name(const nm_density *dm);

/* ---- representation formats ---- */

#define NM_MAX_FMT_RANKS 12
#define NM_MAX_FLAT_GROUPS 4

typedef enum nm_rank_fmt {
    NM_FMT_UOP = 0, /* uncompressed offset pairs: shape + 1 offsets per fiber */
    NM_FMT_UB,      /* uncompressed bitmask: a bit per coordinate, every fiber */
    NM_FMT_CP,      /* coordinate/payload per nonzero (compressed) */
    NM_FMT_B,       /* bitmask with payloads of the nonzeros (compressed) */
    NM_FMT_RLE      /* run lengths (compressed) */
} nm_rank_fmt;

/* One rank of a tensor's representation at a level. */
typedef struct nm_rank_format {
    int8_t fmt;            /* nm_rank_fmt */
    int md_bits, pl_bits;  /* bits per metadata and per payload unit, Timeloop's
                            * defaults and adjustments applied */
    int ngroups;           /* flattened_rankIDs: groups of dimensions one rank
                            * may flatten (0: one loop per rank) */
    uint32_t group[NM_MAX_FLAT_GROUPS]; /* each a mask of dimensions */
} nm_rank_format;

/* A tensor's representation at a level. */
typedef struct nm_repr {
    int nranks;     /* 0: none given, no metadata */
    int compressed; /* some rank is CP, B or RLE */
    int inner_to_outer; /* rank_application_order: inner_to_outer (else outer_to_inner) */
    nm_rank_format rank[NM_MAX_FMT_RANKS]; /* rank 0 innermost (listed last) */
} nm_repr;

/* Per tensor and level, the metadata of one evaluation (for the reports;
 * nm_model_sparse_stats fills it). Units per rank, rank 0 innermost; [0]
 * metadata, [1] payload. */
typedef struct nm_fmt_stats {
    int nranks;
    int8_t fmt[NM_MAX_FMT_RANKS];           /* nm_rank_fmt of each rank */
    uint64_t fiber[NM_MAX_FMT_RANKS];       /* fiber shape of each rank */
    uint64_t cap[NM_MAX_FMT_RANKS][2];      /* at the largest occupancy, rounded up */
    uint64_t acc[3][3][NM_MAX_FMT_RANKS][2]; /* [actual/gated/skipped][read/fill/update] */
    uint64_t cap_bits;                      /* metadata capacity in use */
} nm_fmt_stats;

typedef struct nm_sparse_detail {
    nm_fmt_stats f[NM_MAX_LEVELS][NM_MAX_DS];
} nm_sparse_detail;

#define NM_MAX_SAF_GROUPS 32
#define NM_MAX_SAF_OPTIONS 4

enum { NM_SAF_GATE = 0, NM_SAF_SKIP = 1, NM_SAF_SPATIAL = 2 };

/* One choice of an action optimization: the target tensor's accesses at the
 * level are gated or skipped when the tiles of every condition tensor that
 * go with one access are empty. */
typedef struct nm_saf_option {
    int target;
    int ncond;
    int8_t cond[NM_MAX_DS];
} nm_saf_option;

/* An `action_optimization` entry: a type, a level and its options, of which
 * the one that saves the most read energy applies (Timeloop's rule). */
typedef struct nm_saf_group {
    int type;  /* NM_SAF_GATE, NM_SAF_SKIP or NM_SAF_SPATIAL (skipping_spatial: the
                * target's fan-out below the level shrinks to the instances whose
                * condition tiles are not empty) */
    int level; /* storage level named by the target */
    int nopt;
    nm_saf_option opt[NM_MAX_SAF_OPTIONS];
} nm_saf_group;

typedef struct nm_sparse {
    int given;            /* the input has sparse_optimizations (Timeloop then
                           * reports the split counts, even with none active) */
    int active;           /* some optimization given: the pass runs */
    int ngroups;          /* in the order the pass applies them: gating groups by
                           * level, then skipping groups by level */
    nm_saf_group group[NM_MAX_SAF_GROUPS];
    int formats;          /* some representation_format given */
    nm_repr repr[NM_MAX_LEVELS][NM_MAX_DS];
    int compute_gate;     /* compute_optimization gating (gate_on_zero_operand) */
    int compute_skip;     /* ... skipping (skip_on_not_aligned_operands) */
    int op_a, op_b;       /* the two input operands of the computes */
} nm_sparse;

struct nm_arch;
struct nm_workload;
struct nm_sparse_ws;

/* Parses `sparse_optimizations:` (NULL: none) for arch and wl into *sp. */
nm_status nm_sparse_parse(nm_sparse *sp, const struct nm_arch *arch,
                          const struct nm_workload *wl, const nm_ynode *node, nm_error *err);

/* Parses `densities:` of a problem instance into dens[0..wl->nds). */
nm_status nm_sparse_parse_densities(nm_density *dens, const struct nm_workload *wl,
                                    const nm_ynode *node, nm_error *err);

/* Whether the design's sparse optimizations can remove anything from wl's
 * accesses and computes: it has some, and some tensor of wl holds zeros.
 * Where they cannot, every mapping costs at least what the dense model
 * charges it, and the dense bounds hold (model.c, roofline.c). */
int nm_sparse_removes(const struct nm_arch *arch, const struct nm_workload *wl);

/* Largest nonzero count of tile t (of a tensor of N elements). */
uint64_t nm_density_max_occupancy(const nm_density *dm, const nm_dtile *t, uint64_t N);

/* What a compressed tile of n elements, or one with metadata, occupies in
 * a buffer's capacity check: its largest nonzero count (a banded tensor's
 * tile: at most one row of the band, 2 band + 1, as Timeloop counts it). */
uint64_t nm_density_capacity(const nm_density *dm, uint64_t n, uint64_t N);

struct nm_mapping;
struct nm_stats;

/* Splits the dense counts in *out (a valid evaluation of m) into actual,
 * gated and skipped ones, per level and data space and for the computes,
 * adds the metadata's traffic and energy, and sets out->sparse; ws (from
 * nm_sparse_ws_new, NULL only when no optimization is active) is the
 * scratch, and keeps the metadata per rank.  Returns 0 when the representation makes the
 * mapping invalid (out->invalid says why), else 1.  Allocates nothing but a
 * banded tensor's table of tile counts, kept in ws and grown as needed. */
int nm_sparse_apply(const nm_sparse *sp, const struct nm_arch *arch,
                    const struct nm_workload *wl, const struct nm_mapping *m,
                    struct nm_stats *out, struct nm_sparse_ws *ws);

/* The analysis' scratch (one per model; NULL when out of memory), and the
 * metadata detail of its last evaluation. */
struct nm_sparse_ws *nm_sparse_ws_new(void);
void nm_sparse_ws_free(struct nm_sparse_ws *ws);
const nm_sparse_detail *nm_sparse_ws_detail(const struct nm_sparse_ws *ws);

#endif
