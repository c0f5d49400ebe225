/* mapping.h — one mapping of the loop nest onto the architecture.
 *
 * Per storage level: temporal factors and their order, spatial factors, order
 * and X/Y split (the fan-out below that level), and which data spaces the
 * level keeps.  Orders list loops from innermost to outermost, as Timeloop's
 * permutation strings do.  A plain fixed-size struct: the mapper fills one per
 * candidate without allocating.
 */
#ifndef NESTMAP_MAPPING_H
#define NESTMAP_MAPPING_H

#include <stdint.h>

#include "nestmap/arch.h"
#include "nestmap/limits.h"
#include "nestmap/workload.h"
#include "nestmap/yaml.h"

typedef struct nm_level_map {
    int64_t tfactor[NM_MAX_DIMS]; /* temporal factor per dimension */
    int64_t tresidual[NM_MAX_DIMS]; /* iterations of the loop's last instance (Timeloop's
                                     * "P=8,7"); 0: the factor itself (perfect) */
    int8_t torder[NM_MAX_DIMS];   /* dims, innermost first */
    int64_t sfactor[NM_MAX_DIMS]; /* spatial factor per dimension */
    int64_t sresidual[NM_MAX_DIMS]; /* siblings in use in the fan-out's last instance
                                     * ("P=16,8" spatial); 0: the factor itself */
    int8_t sorder[NM_MAX_DIMS];
    int split;                    /* sorder[i] for i < split is X, the rest Y */
    uint32_t keep;                /* bit d set: data space d is kept here */
    uint32_t no_link;             /* data spaces that may not use neighbour links below */
    uint32_t no_multicast;        /* data spaces that may not be multicast below */
    uint32_t no_temporal_reuse;   /* data spaces refetched on every step here */
} nm_level_map;

typedef struct nm_mapping {
    int nlevels;
    nm_level_map level[NM_MAX_LEVELS]; /* same indexing as nm_arch (0 = innermost) */
} nm_mapping;

/* Iterations of dimension d's loops at level s in their last instance. */
static inline int64_t nm_level_residual(const nm_level_map *lm, int d)
{
    return lm->tresidual[d] ? lm->tresidual[d] : lm->tfactor[d];
}

/* Siblings along dimension d of level s's fan-out in its last instance. */
static inline int64_t nm_level_sresidual(const nm_level_map *lm, int d)
{
    return lm->sresidual[d] ? lm->sresidual[d] : lm->sfactor[d];
}

/* Whether any loop of m has a residual (imperfect factorization). */
int nm_mapping_imperfect(const nm_mapping *m, int ndims);

/* The spatial instances that factors sf[] (indexed by dimension) put
 * under each instance of level L along X and Y, into *x and *y, when the
 * first n dimensions of `order` are its spatial loops, innermost first,
 * and the first `split` of them lie along X; whether they fit its fan-out
 * on both sides. */
int nm_mapping_fanout_sides(const nm_level *L, int n, const int64_t *sf, const int8_t *order,
                            int split, int64_t *x, int64_t *y);
/* The next order of the loops idx[0..k) (dims or positions) in
 * lexicographic order; 0 after the last.  From ascending idx it steps
 * through every order once. */
int nm_mapping_next_order(int8_t *idx, int k);

/* Sets *m to the trivial mapping (all factors 1, natural order, keep all). */
void nm_mapping_init(nm_mapping *m, const nm_arch *arch, const nm_workload *wl);

/* Parses a `mapping:` list in Timeloop's format into *m (initialized first). */
nm_status nm_mapping_parse(nm_mapping *m, const nm_ynode *node, const nm_arch *arch,
                           const nm_workload *wl, nm_error *err);

/* The pieces of the mapping syntax that constraints share. */

#define NM_MAX_FACTOR_TERMS (2 * NM_MAX_DIMS)

typedef struct nm_factor_term {
    int dim;
    char op;        /* '=', '<' (at most) or '>' (at least) */
    int64_t value;
    int64_t residual; /* "P=8,7": 7; 0 when none is written */
    size_t offset;  /* of the token within the factors string, for errors */
    const nm_ynode *at; /* the scalar holding the token (a list item for [N=1, C=1]) */
} nm_factor_term;

/* Parses `factors:` ("R=3 P=16", "C1 M8", a {P: 16} map, or a list of
 * such strings as timeloopfe writes them, [N=1, C=1]) into terms;
 * "P<=4" and "P>=2" only when allow_bounds.  "P=8,7" gives a residual: the
 * last instance of the loop runs 7 iterations instead of 8. */
nm_status nm_mapping_parse_factor_terms(const nm_ynode *n, const nm_workload *wl,
                                        int allow_bounds, nm_factor_term *out, int *count,
                                        nm_error *err);

/* Parses a permutation (one-letter names run together, names separated by
 * spaces or commas, or a list; '_' ends the listed part) into the dims it
 * lists, innermost first. */
nm_status nm_mapping_parse_dims(const nm_ynode *n, const nm_workload *wl, int8_t *out, int *count,
                                nm_error *err);

/* Parses a list of data space names into a bit mask. */
nm_status nm_mapping_parse_ds_list(const nm_ynode *n, const nm_workload *wl, uint32_t *mask,
                                   nm_error *err);

/* The `keep:` and `bypass:` lists of a bypass (dataspace) entry, as masks
 * (0 for a list not given). */
nm_status nm_mapping_parse_keep_bypass(const nm_ynode *entry, const nm_workload *wl,
                                       uint32_t *keep, uint32_t *bypass, nm_error *err);

/* A located "unknown dimension" error with a suggestion or the known names. */
nm_status nm_mapping_unknown_dim(const nm_ynode *at, size_t offset, const char *name,
                                 const nm_workload *wl, nm_error *err);

#endif
