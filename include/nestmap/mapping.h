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
    int8_t torder[NM_MAX_DIMS];   /* dims, innermost first */
    int64_t sfactor[NM_MAX_DIMS]; /* spatial factor per dimension */
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

/* Sets *m to the trivial mapping (all factors 1, natural order, keep all). */
void nm_mapping_init(nm_mapping *m, const nm_arch *arch, const nm_workload *wl);

/* Parses a `mapping:` list in Timeloop's format into *m (initialized first). */
nm_status nm_mapping_parse(nm_mapping *m, const nm_ynode *node, const nm_arch *arch,
                           const nm_workload *wl, nm_error *err);

#endif
