/* sparse_int.h — what sparse.c (densities, gating and skipping) and
 * sparse_format.c (representation formats and metadata) share.  Not
 * installed. */
#ifndef NESTMAP_SPARSE_INT_H
#define NESTMAP_SPARSE_INT_H

#include <stdint.h>

#include "nestmap/arch.h"
#include "nestmap/mapping.h"
#include "nestmap/model.h"
#include "nestmap/sparse.h"
#include "nestmap/workload.h"

/* ---- the banded density (sparse_banded.c) ---- */

/* Nonzeros of a banded tensor of the given side. */
uint64_t nm_band_total(int64_t side, int64_t band);

/* Nonzeros of the box [r0, r1) x [c0, c1) of a band. */
uint64_t nm_band_box_nnz(int64_t band, int64_t r0, int64_t r1, int64_t c0, int64_t c1);

/* P(empty) and the largest count of a box of rows x cols over the grid. */
double nm_band_p_empty(const nm_density *dm, int64_t rows, int64_t cols);
uint64_t nm_band_max(const nm_density *dm, int64_t rows, int64_t cols);

/* The distribution of a box's count: counts ascending, their weights (tile
 * positions) and probabilities.  The caller owns the table: zeroed before
 * the first nm_band_pdf_make, which reuses its arrays, and released with
 * nm_band_pdf_fini. */
typedef struct nm_band_pdf {
    size_t n, cap;
    uint64_t *occ, *w;
    double *p;
} nm_band_pdf;

/* 0 when memory runs out (the table then holds what fitted). */
int nm_band_pdf_make(const nm_density *dm, int64_t rows, int64_t cols, nm_band_pdf *t);
void nm_band_pdf_fini(nm_band_pdf *t);

/* P(box sub holds no nonzero) within a tile of box `tile` holding o. */
double nm_band_p_empty_given(const nm_density *dm, const nm_dtile *sub, const nm_dtile *tile,
                             uint64_t o);

/* The nonempty element tiles (box elem) of the fullest fiber (box fiber). */
uint64_t nm_band_elements(const nm_density *dm, const nm_dtile *fiber, const nm_dtile *elem);

/* Timeloop's complete loop nest: per storage level, innermost first, a loop
 * for every dimension of its fan-out (when it has one) in the spatial
 * order, then a loop for every dimension in the temporal order, trivial
 * loops included. */
typedef struct nm_cnest {
    int n;
    int first[NM_MAX_LEVELS], last[NM_MAX_LEVELS];
    int8_t dim[NM_MAX_LOOPS], level[NM_MAX_LOOPS];
    int8_t spatial[NM_MAX_LOOPS]; /* 0 temporal, 1 spatial X, 2 spatial Y */
    int64_t f[NM_MAX_LOOPS];
} nm_cnest;

void nm_cnest_build(nm_cnest *c, const nm_arch *arch, const nm_workload *wl,
                    const nm_mapping *m);

/* Extents of the operation space covered by loops 0..i (all 1 for i < 0). */
void nm_cnest_mold(const nm_cnest *c, int i, int ndims, int64_t *ext);

/* Elements of data space ds in the box of the given extents. */
uint64_t nm_ds_box(const nm_dataspace *ds, const int64_t *ext);

/* Whether data space ds is indexed by dimension dim. */
int nm_ds_uses(const nm_dataspace *ds, int dim);

/* One tensor at one level in one evaluation. */
typedef struct nm_sp_tile {
    uint64_t shape;     /* the dense tile (0: not kept here) */
    int parent, child;  /* the next level out and in keeping it (-1: none) */
    int md;             /* it has metadata here */
    int nr;             /* ranks of its representation here (1 without metadata) */
    int64_t ext[NM_MAX_FMT_RANKS][NM_MAX_DIMS]; /* each rank's loops, as extents */
    uint64_t ps[NM_MAX_FMT_RANKS + 1]; /* elements one entry of each rank stands for
                                        * (ps[r] for rank r; ps[0] the innermost's) */
    uint64_t fiber[NM_MAX_FMT_RANKS];
    double occ[NM_MAX_FMT_RANKS][2];   /* expected metadata and payload units */
    int bits[NM_MAX_FMT_RANKS][2];     /* their word bits (0 for an empty rank) */
    double density, occupancy;         /* expected density and nonzeros */
    double avg;                        /* share of the instances holding a nonempty tile */
    uint64_t maxocc;                   /* nonzeros at most */
    nm_dtile box;                      /* the tile as the density model sees it */
    nm_dtile sub[NM_MAX_FMT_RANKS];    /* an entry of each rank (sub[r]: rank r's) */
} nm_sp_tile;

/* The loops of one tensor's tile at a level, innermost first (its
 * dimensions only), as a representation deals them out to ranks. */
typedef struct nm_sp_loops {
    int n;
    int8_t dim[NM_MAX_LOOPS];
    int64_t f[NM_MAX_LOOPS];
    uint64_t ps[NM_MAX_LOOPS]; /* elements of the tile up to and including it */
} nm_sp_loops;

/* Ranks being dealt: a double-ended list (Timeloop inserts most at the
 * front, a flattening miss at the back). */
typedef struct nm_sp_ranks {
    int head, tail;
    int64_t ext[2 * NM_MAX_FMT_RANKS + 2][NM_MAX_DIMS];
    uint64_t ps[2 * NM_MAX_FMT_RANKS + 2];
} nm_sp_ranks;

/* Spatial skipping (Timeloop's spatial expansion per tensor): per tensor
 * and architecture level a (0: the arithmetic, s + 1: storage level s),
 * the instances needed along X and Y and the share used on average. */
typedef struct nm_sp_spatial {
    int on;                                   /* a skipping_spatial group ran */
    uint64_t x[NM_MAX_DS][NM_MAX_LEVELS + 1], y[NM_MAX_DS][NM_MAX_LEVELS + 1];
    double ratio[NM_MAX_DS][NM_MAX_LEVELS + 1];
    int mask[NM_MAX_DS][NM_MAX_LEVELS + 1];   /* a format already shrank it */
    uint64_t sx[NM_MAX_DS][NM_MAX_LEVELS], sy[NM_MAX_DS][NM_MAX_LEVELS]; /* storage's */
    double savg[NM_MAX_DS][NM_MAX_LEVELS];    /* storage's utilized instances on average */
    uint64_t cx, cy;                          /* the arithmetic's */
    double cavg;
    double prob[NM_MAX_LEVELS][NM_MAX_DS];    /* share skipped at a skipping level */
} nm_sp_spatial;

/* Timeloop's check after spatial skipping: for each of the nds tensors and
 * each storage level s, the expansion of the level below (z->x[ds][s], the
 * arithmetic's at s = 0) over its own (z->x[ds][s + 1]), in whole numbers,
 * must not exceed s's fan-out along X, nor likewise along Y.  0 with *inv
 * set (NM_INV_SKIP_FANOUT) at the first that does, tensor by tensor, from
 * the outermost level in. */
int nm_sparse_fanout_ok(const nm_arch *arch, int nds, const nm_sp_spatial *z, nm_invalid *inv);

struct nm_sparse_ws {
    nm_sp_tile t[NM_MAX_LEVELS][NM_MAX_DS];
    nm_sparse_detail det;
    nm_cnest c;          /* the mapping's complete loop nest */
    nm_sp_loops loops;   /* scratch of the rank dealing */
    nm_sp_ranks ranks;
    nm_sp_spatial spatial;
    nm_band_pdf band;    /* a banded tile's distribution (owned: nm_sparse_ws_free) */
};

/* The representations of one mapping: rank loops, fibers, expected
 * occupancy of every tensor at every level keeping it (formats or not), and
 * its metadata accesses (ws->det, all actual until sparse.c splits them).  0 with out->invalid set when a representation does
 * not fit the mapping. */
int nm_sparse_formats(const nm_sparse *sp, const nm_arch *arch, const nm_workload *wl,
                      const nm_cnest *c, nm_stats *out, struct nm_sparse_ws *ws);

/* Metadata capacity, traffic and energy of every level once the accesses
 * are split; fills ws->det.  0 with out->invalid set when the metadata does
 * not fit. */
int nm_sparse_metadata_costs(const nm_sparse *sp, const nm_arch *arch, const nm_workload *wl,
                             nm_stats *out, struct nm_sparse_ws *ws);

/* Nonzeros of a tensor of N elements: ceil(d N) (Timeloop's count). */
uint64_t nm_density_nnz(const nm_density *dm, uint64_t N);

/* C(N - r, n) / C(N, n): no marked element among n drawn from N with r
 * marked (the hypergeometric probability of an empty tile). */
double nm_hyper_p0(uint64_t n, uint64_t N, uint64_t r);

/* P(no nonzero) in sub-tile sub of tile S known to hold o nonzeros, under
 * density model dm. */
double nm_density_p_empty_given(const nm_density *dm, const nm_dtile *sub, const nm_dtile *S,
                                uint64_t o);

#endif
