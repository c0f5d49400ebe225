/* workload.h — the problem: dimensions, bounds, and data spaces as affine
 * projections of the loop indices.
 *
 * A data space (tensor) has ranks (axes); each axis is a sum of terms
 * coef * index[dim].  A convolution's input width is `P*Wstride + R*Wdilation`.
 * Names are whatever the user wrote: nothing assumes Weights/Inputs/Outputs
 * or C/M/P/Q.  The struct is plain and fixed-size; const after parsing.
 */
#ifndef NESTMAP_WORKLOAD_H
#define NESTMAP_WORKLOAD_H

#include <stdint.h>

#include "nestmap/limits.h"
#include "nestmap/sparse.h"
#include "nestmap/yaml.h"

typedef struct nm_term {
    int dim;      /* index into dims */
    int64_t coef; /* resolved coefficient (>= 0) */
} nm_term;

typedef struct nm_axis {
    int nterms;
    nm_term term[NM_MAX_TERMS];
} nm_axis;

typedef struct nm_dataspace {
    char name[NM_NAME_MAX];
    int nranks;
    nm_axis rank[NM_MAX_RANKS];
    int read_write; /* outputs: read-modify-write */
    int param;      /* a layer's parameters (weights, layernorm's scale and shift) */
    /* Another name the data space answers to (a chain's operation: its
     * role, Inputs, Weights or Outputs, as a design's constraints name
     * them); "" for none.  nm_workload_ds finds it after the names. */
    char role[NM_NAME_MAX];
    /* How much smaller each axis is in the tensor a framework holds than
     * the loop nest's projection reaches (a padded convolution's input:
     * the padding; may be negative, e.g. a 1x1 stride-2 input under
     * 'same').  Only the roofline counts it; the model moves the
     * projection, as Timeloop does. */
    int64_t pad[NM_MAX_RANKS];
} nm_dataspace;

typedef struct nm_workload {
    char name[NM_NAME_MAX];
    int ndims;
    char dim[NM_MAX_DIMS][NM_NAME_MAX];
    int64_t bound[NM_MAX_DIMS];
    int nds;
    nm_dataspace ds[NM_MAX_DS];
    /* Names of dimensions this problem lacks but that constraints written for
     * its siblings may use (a network's layers: a depthwise layer has no
     * output-channel dimension).  For this problem they are dimensions of
     * size 1: a factor of 1 on one holds, and orders skip them. */
    int nunit;
    char unit[NM_MAX_STANDINS][NM_NAME_MAX];
    /* Other names of its dimensions (a chain operation's `dims:`, which
     * lets the design's constraints on Timeloop's convolution dimensions
     * bind its own indices): alias[i] names dimension alias_of[i].
     * nm_workload_dim finds them after the dimensions' own names. */
    int nalias;
    char alias[NM_MAX_DIMS][NM_NAME_MAX];
    int8_t alias_of[NM_MAX_DIMS];
    /* Likewise, names of data spaces it lacks (a pooling layer's Weights):
     * keeping or bypassing one holds trivially. */
    int nabsent;
    char absent[NM_MAX_STANDINS][NM_NAME_MAX];
    /* For the roofline: operations (FLOPs) per loop iteration, 0 meaning 2
     * (a multiply-accumulate); and a bias, added once to every output
     * element and counted as one more multiply-accumulate per output, as
     * the CVPR 2024 full-stack tutorial counts it (bias_words parameters).
     * The model charges one arithmetic operation per iteration and does
     * not move the bias. */
    int flops_per_op;
    int bias;
    int64_t bias_words;
    /* Each data space's density (instance.densities; dense when not given)
     * and whether any was given. */
    nm_density density[NM_MAX_DS];
    int has_density;
} nm_workload;

/* Parses the `problem:` node (Timeloop's shape+instance form, or one of
 * nestmap's shorthands) into *wl.  Warnings (ignored instance keys) go to doc. */
nm_status nm_workload_parse(nm_workload *wl, const nm_ynode *problem, nm_ydoc *doc,
                            nm_error *err);

/* Parses an einsum ("Z[m,n] = A[m,k] * B[k,n]", the scalar expr) into *wl
 * (zeroed by the caller), with each index's size from the map b; others:
 * b may give sizes of indices this einsum lacks (a chain's other
 * operations).  The name is "einsum". */
nm_status nm_workload_einsum(nm_workload *wl, const nm_ynode *expr, const nm_ynode *b,
                             int others, nm_error *err);

/* 1 if name is one of wl's size-1 stand-in dimensions (wl->unit). */
int nm_workload_unit_dim(const nm_workload *wl, const char *name);

/* 1 if name is one of wl's absent data spaces (wl->absent). */
int nm_workload_absent_ds(const nm_workload *wl, const char *name);

/* Index of the dimension or data space called name (a data space also by
 * its role), or -1. */
int nm_workload_dim(const nm_workload *wl, const char *name);
int nm_workload_ds(const nm_workload *wl, const char *name);

/* Whether data space s follows dimension d: some term of one of its axes
 * is over d (0 for d < 0). */
int nm_dataspace_uses(const nm_dataspace *s, int d);

/* A count that 64 bits cannot always hold: a layer's MACs and tensor sizes
 * are exact up to NM_COUNT_LIMIT (nm_workload_parse refuses larger ones). */
__extension__ typedef unsigned __int128 nm_count;
#define NM_COUNT_LIMIT ((nm_count)1 << 120) /* about 1.3e36 */

/* Writes v in decimal to buf[size]; returns buf. */
char *nm_count_text(nm_count v, char *buf, size_t size);

/* Number of multiply-accumulates, the product of all bounds: exact. */
nm_count nm_workload_macs(const nm_workload *wl);

/* Number of distinct elements of data space ds over the whole problem: exact. */
nm_count nm_workload_words(const nm_workload *wl, int ds);

/* Elements of data space ds as a framework holds it (nm_dataspace.pad
 * applied): exact. */
nm_count nm_workload_held_words(const nm_workload *wl, int ds);

/* Operations for the roofline: flops_per_op per iteration, plus 2 per
 * output element when the layer has a bias.  Exact. */
nm_count nm_workload_flops(const nm_workload *wl);

/* Whether every count of the layer fits the cost model's 64 bits: at most
 * 2^60 MACs and words per tensor, so that access counts (a few times the
 * MACs) fit too.  The model refuses a layer that does not; `bound` takes
 * any. */
int nm_workload_fits64(const nm_workload *wl);

/* The same in 64 bits, for a layer that fits (nm_workload_fits64). */
uint64_t nm_workload_ops(const nm_workload *wl);
uint64_t nm_workload_ds_size(const nm_workload *wl, int ds);

#endif
