/* limits.h — compile-time caps.  Specs and per-evaluation state are fixed-size
 * plain structs so that evaluating a mapping allocates nothing; inputs that
 * exceed a cap are rejected at parse time with a located error. */
#ifndef NESTMAP_LIMITS_H
#define NESTMAP_LIMITS_H

#define NM_MAX_DIMS 12      /* problem dimensions */
#define NM_MAX_DS 6         /* data spaces (tensors) */
#define NM_MAX_RANKS 6      /* axes of one data space */
#define NM_MAX_TERMS 4      /* terms in one axis expression */
#define NM_MAX_COEFS 16     /* named coefficients (strides, dilations) */
#define NM_MAX_LEVELS 16    /* storage levels */
#define NM_MAX_SCOPES 40    /* nested subtrees / containers with attributes */
#define NM_MAX_LOOPS (NM_MAX_LEVELS * NM_MAX_DIMS * 2 + NM_MAX_LEVELS)
#define NM_NAME_MAX 64      /* names of levels, dimensions, data spaces */
#define NM_MAX_STANDINS 64  /* size-1 dimensions and absent data spaces one problem
                             * answers for (a chain's other operations', a network's
                             * other layers') */
#define NM_MAX_FANOUT (1 << 22) /* spatial instances under one level */
#define NM_WARM_STARTS 3   /* mappings one search hands a later one as warm starts */
#define NM_MAX_FAN_RESIDUALS 4 /* spatial loops with a residual in one fan-out */

#endif
