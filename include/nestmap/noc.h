/* noc.h — energy of the on-chip networks that join each storage level to the
 * level inside it (buffer to PEs, PE to PE), as Timeloop's legacy network
 * model charges it (src/model/network-legacy.cpp).  "noc" keeps the name
 * apart from networks of layers (network.h).
 *
 * Every storage level has a network to its child (the next storage level
 * in, or the arithmetic).  Unless the level names one (`network_read`,
 * `network_update`), the network is inferred, named "<level> <==> <child>",
 * and reads its attributes from the level's own; a named one is a
 * component of class XY_NoC or Legacy in a `local` list, which the child
 * must name too (`network_fill`/`network_drain`, or `network_operand`/
 * `network_result` for the arithmetic).  Per data space, from the level's
 * tile (nm_tile) and its fan-out's multicast signature (nm_noc_sig):
 *
 *   ingresses   accesses from below, in buckets of (multicast m, scatter s)
 *   hops        per bucket; mean hops = hops / ingresses
 *   energy      sum over buckets of  ingresses x mean hops x energy_per_hop
 *                                  + ingresses x (1 + floor(mean hops)) x router_energy
 *               + ingresses x energy-per-ingress
 *               + link transfers x (energy_per_hop + 2 x router_energy)
 *   total       energy x the level's utilized instances
 *
 * Timeloop counts a delivery's hops once per word of the tile the nest
 * analysis delivers, so when the child bypasses its own storage and reads
 * the same words again at every step, the re-reads enter the network (as
 * ingresses) but travel no hops.  `hop_count: access` (nestmap's own
 * attribute; `tile`, Timeloop's, is the default) makes every access pay the
 * hops of its multicast group.
 *
 * energy_per_hop is the attribute, else word bits x tile width (mm) x
 * wire_energy (pJ/bit/mm), else 0.  The tile width is the attribute, else
 * the square root of the area of one child tile (the child and everything
 * under it, from the ART).  A read-write data space whose network's sink
 * cannot reduce (`reduction_supported: false`; DRAM by default) moves twice
 * its ingresses less the partition size (read-modify-write), unless the
 * network carries reads and fills only.  Spatial reductions are priced at
 * Timeloop's built-in adder energy, which is 0.
 */
#ifndef NESTMAP_NOC_H
#define NESTMAP_NOC_H

#include <stdint.h>

#include "nestmap/limits.h"
#include "nestmap/yaml.h"

/* network_type: 1:1, 1:N, M:N (distributed multicast). */
typedef enum nm_noc_type { NM_NOC_DEFAULT = 0, NM_NOC_1_1, NM_NOC_1_N, NM_NOC_M_N } nm_noc_type;

/* Directions a network carries: reads and fills (parent to child), updates
 * and drains (child to parent), or both (Timeloop's ConnectionType). */
enum { NM_NOC_READ_FILL = 1, NM_NOC_UPDATE_DRAIN = 2 };

typedef struct nm_noc {
    char name[2 * NM_NAME_MAX + 8]; /* "A <==> B" when inferred, else the component's */
    const nm_ynode *node;           /* the component, or the level it is inferred from */
    int explicit_net;               /* a component of class XY_NoC or Legacy */
    char cls[NM_NAME_MAX];          /* its class ("" when inferred) */
    int directions;                 /* NM_NOC_READ_FILL | NM_NOC_UPDATE_DRAIN */
    nm_noc_type type;
    int word_bits;
    int has_hop, has_router, has_wire, has_tile, has_ingress;
    double energy_per_hop;          /* pJ per word per hop */
    double router_energy;           /* pJ per word per router */
    double wire_energy;             /* pJ per bit per mm */
    double tile_width;              /* um */
    double ingress_energy;          /* pJ per word entering the network */
    int hops_per_access;            /* hop_count: access (nestmap's): every word the
                                     * network carries pays its group's hops */
} nm_noc;

/* Reads a network's attributes (inferred: the outer level's own; explicit:
 * the component's).  default_bits: its word bits when none is given. */
nm_status nm_noc_parse(nm_noc *net, const nm_ynode *attrs, int default_bits, nm_error *err);

/* Whether the network costs anything at all (any energy attribute given
 * and not 0). */
int nm_noc_charged(const nm_noc *net);

/* The energy of one word's hop (pJ): energy_per_hop, else word bits x
 * tile width x wire_energy (tile_width: the floor plan's, used when the
 * network gives none), else 0. */
double nm_noc_hop_energy(const nm_noc *net, double tile_width);

/* The traffic of one data space on one network, per instance of its
 * outer level. */
#define NM_NOC_MAX_BUCKETS 16
typedef struct nm_noc_traffic {
    int nb;
    struct {
        uint64_t m, s;        /* multicast, scatter */
        double acc, hops;     /* ingresses and hops (a sum: hops / acc is the mean) */
        double uhops;         /* hops were each receiver reached alone */
        int distributed;      /* distributed multicast (M:N) on the child's behalf */
    } b[NM_NOC_MAX_BUCKETS];
    double rt;                /* when nb < 0: routers past the first, summed per call */
    double hop_scale;         /* accesses per word the nest analysis delivered (> 1 when a
                               * bypassed child re-reads the level): Timeloop's hops
                               * ignore it, hop_count: access multiplies them by it */
    double acc, hops;         /* totals (when nb < 0, all there is) */
    double link;              /* link transfers */
    double partition;         /* the outer level's partition size */
    uint64_t fanout;
    double instances;         /* utilized instances of the outer level */
} nm_noc_traffic;

/* What one data space costs on one network. */
typedef struct nm_noc_ds {
    double ingresses;         /* words entering the network for the level's own receivers */
    double distributed;       /* ... and on a child's behalf (distributed multicast) */
    double link_transfers, spatial_reductions, avg_hops;
    uint64_t fanout, multicast;
    double energy_per_hop;    /* pJ */
    double energy;            /* pJ, all instances: ingresses and link transfers */
} nm_noc_ds;

/* Energy of data space traffic t on network net (tile_width: the floor
 * plan's, used when the network gives none); rw: a read-write data space;
 * sink_reduces: the level the updates land in can reduce.  Fills *out when
 * not NULL; returns the energy (pJ, all instances). */
double nm_noc_energy(const nm_noc *net, double tile_width, const nm_noc_traffic *t, int rw,
                     int sink_reduces, nm_noc_ds *out);

/* The mean hops of a word sent to a class of receivers, over the classes
 * of a fan-out of fan_x x fan_y whose n spatial loops (innermost first)
 * have ends f[0..n), the first nx along X: receivers are numbered in the
 * loops' mixed radix (innermost fastest) and placed row by row, and those
 * whose loops in `relevant` (bit i: loop i) agree form a class, which one
 * word reaches as the nest analysis routes a multicast group (fan_sig):
 * from the middle of the mesh's first column along that column's row to
 * the farthest column, then up and down each column it uses.  A word sent
 * to part of a class, or to it more than once, travels at least as far
 * (the hops of a union are at most the sum of its parts').  -1 when the
 * fan-out is too large to place here (over NM_NOC_PLACE_MAX receivers, or
 * NM_NOC_PLACE_CELLS classes times columns). */
#define NM_NOC_PLACE_MAX 1024
#define NM_NOC_PLACE_CELLS 8192
double nm_noc_class_hops(int64_t fan_x, int64_t fan_y, int n, const int64_t *f, int nx,
                         uint32_t relevant);

#endif
