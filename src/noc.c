/* noc.c — on-chip network specs and their energy; see noc.h. */
#include <config.h>

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "nestmap/noc.h"

/* An energy, width or count: a number of 0 or more, when given. */
static nm_status num_attr(const nm_ynode *attrs, const char *key, double *out, int *found,
                          nm_error *err)
{
    nm_status st = nm_yget_attr_num(attrs, key, out, found, err);
    if (st == NM_OK && *found && !(*out >= 0.0 && isfinite(*out)))
        return nm_yerror(err, nm_ymap_get(attrs, key),
                         "attribute '%s' must be a number of 0 or more (got %g)", key, *out);
    return st;
}

/* An attribute naming one of words: *which its index, -1 when absent,
 * -2 when it names none of them (at: where). */
static nm_status word_attr(const nm_ynode *attrs, const char *key, const char *const *words,
                           int *which, const nm_ynode **at, nm_error *err)
{
    *which = -1;
    *at = nm_ymap_get(attrs, key);
    if (!*at || nm_yis_null(*at))
        return NM_OK;
    const char *s;
    nm_status st = nm_yget_str(*at, key, &s, err);
    if (st != NM_OK)
        return st;
    *which = -2;
    for (int i = 0; words[i]; i++)
        if (!strcmp(s, words[i]))
            *which = i;
    return NM_OK;
}

nm_status nm_noc_parse(nm_noc *net, const nm_ynode *attrs, int default_bits, nm_error *err)
{
    nm_status st;
    int found;
    double v;
    net->word_bits = default_bits;
    /* network_word_bits, else the component's word size (as Timeloop reads
     * the outer buffer's for an inferred network) */
    static const char *const wb[] = {"network_word_bits", "word_bits", "word_width", "datawidth",
                                     NULL};
    for (int i = 0; wb[i]; i++) {
        if ((st = num_attr(attrs, wb[i], &v, &found, err)) != NM_OK)
            return st;
        if (found) {
            if (v < 1 || v > 4096 || v != floor(v))
                return nm_yerror(err, nm_ymap_get(attrs, wb[i]),
                                 "attribute '%s' must be a whole number of bits (got %g)", wb[i], v);
            net->word_bits = (int)v;
            break;
        }
    }
    if ((st = num_attr(attrs, "energy_per_hop", &net->energy_per_hop, &net->has_hop, err)) ||
        (st = num_attr(attrs, "router_energy", &net->router_energy, &net->has_router, err)) ||
        (st = num_attr(attrs, "wire_energy", &net->wire_energy, &net->has_wire, err)) ||
        (st = num_attr(attrs, "tile_width", &net->tile_width, &net->has_tile, err)) ||
        (st = num_attr(attrs, "energy-per-ingress", &net->ingress_energy, &net->has_ingress,
                       err)))
        return st;
    static const char *const types[] = {"1:1", "1:N", "M:N", NULL};
    static const char *const counts[] = {"tile", "access", NULL};
    const nm_ynode *at;
    int type, count;
    if ((st = word_attr(attrs, "network_type", types, &type, &at, err)) != NM_OK)
        return st;
    if (type < -1) /* Timeloop: "Unrecognized legacy network subtype" */
        return nm_yerror(err, at, "network_type must be 1:1, 1:N or M:N (got '%s')", at->str);
    net->type = type < 0 ? NM_NOC_DEFAULT : (nm_noc_type)(NM_NOC_1_1 + type);
    if ((st = word_attr(attrs, "hop_count", counts, &count, &at, err)) != NM_OK)
        return st;
    if (count < -1)
        return nm_yerror(err, at, "hop_count must be 'tile' (Timeloop's: hops once per word "
                         "delivered) or 'access' (every access pays its hops) (got '%s')", at->str);
    net->hops_per_access = count == 1;
    return NM_OK;
}

int nm_noc_charged(const nm_noc *net)
{
    return (net->has_hop && net->energy_per_hop > 0) ||
           (net->has_router && net->router_energy > 0) ||
           (net->has_ingress && net->ingress_energy > 0) ||
           (!net->has_hop && net->has_wire && net->wire_energy > 0);
}

double nm_noc_hop_energy(const nm_noc *net, double tile_width)
{
    double width = net->has_tile ? net->tile_width : tile_width;
    return net->has_hop ? net->energy_per_hop
           : net->has_wire && net->wire_energy != 0.0
               ? (double)net->word_bits * (width / 1000.0) * net->wire_energy
               : 0.0; /* Timeloop's built-in wire model gives 0 */
}

double nm_noc_energy(const nm_noc *net, double tile_width, const nm_noc_traffic *t, int rw,
                     int sink_reduces, nm_noc_ds *out)
{
    double eph = nm_noc_hop_energy(net, tile_width);
    double er = net->has_router ? net->router_energy : 0.0;
    double ei = net->has_ingress ? net->ingress_energy : 0.0;
    /* Read-modify-write: outputs go up and come back when the sink cannot
     * reduce, unless the network carries reads and fills only. */
    int rmw = rw && !sink_reduces && net->directions != NM_NOC_READ_FILL;
    double ingresses = 0.0, distributed = 0.0, wire_hops = 0.0, reductions = 0.0;
    uint64_t routers = 0, multicast = 0;
    /* hop_count: access: every access pays the mean hops of a word the nest
     * analysis delivered (hop_scale accesses each), read-modify-writes too */
    int per_access = net->hops_per_access;
    if (t->nb < 0) { /* only totals known */
        double acc = rmw ? 2.0 * t->acc - t->partition : t->acc;
        ingresses = acc;
        wire_hops = per_access && t->acc > 0 ? t->hop_scale * t->hops / t->acc * acc : t->hops;
        routers = (uint64_t)(acc + t->rt);
        multicast = t->fanout > 1 ? 0 : 1;
    }
    for (int i = 0; i < t->nb; i++) {
        double acc = rmw ? 2.0 * t->b[i].acc - t->partition : t->b[i].acc;
        if (t->b[i].m > multicast)
            multicast = t->b[i].m;
        if (rw && (net->directions & NM_NOC_UPDATE_DRAIN))
            reductions += (double)(t->b[i].m - 1) * acc;
        ingresses += acc;
        if (t->b[i].distributed)
            distributed += acc;
        if (acc > 0) {
            double mean = per_access && !t->b[i].distributed
                              ? t->hop_scale * t->b[i].hops / t->b[i].acc
                              : t->b[i].hops / acc;
            /* Timeloop sums routers in an unsigned 64-bit count */
            routers = (uint64_t)((double)routers + (1.0 + floor(mean)) * acc);
            wire_hops += mean * acc;
        }
    }
    double e = wire_hops * eph + (double)routers * er + ei * ingresses;
    double link = t->link * (eph + 2.0 * er);
    double total = (e + link) * t->instances;
    if (out) {
        out->ingresses = ingresses - distributed;
        out->distributed = distributed;
        out->link_transfers = t->link;
        out->spatial_reductions = reductions;
        out->avg_hops = ingresses > 0 ? wire_hops / ingresses : 0.0;
        out->fanout = t->fanout;
        out->multicast = multicast;
        out->energy_per_hop = eph;
        out->energy = total;
    }
    return total;
}

double nm_noc_class_hops(int64_t fan_x, int64_t fan_y, int n, const int64_t *f, int nx,
                         uint32_t relevant)
{
    int64_t F = 1, fx = 1, ncls = 1, radix[NM_MAX_DIMS];
    for (int i = 0; i < n; i++) {
        radix[i] = (relevant >> i) & 1u ? ncls : 0;
        ncls *= (relevant >> i) & 1u ? f[i] : 1;
        F *= f[i];
        fx *= i < nx ? f[i] : 1;
    }
    int64_t hsize = fan_x > fx ? fan_x : fx, fy = F / fx, vsize = fan_y > fy ? fan_y : fy;
    /* per class: its farthest column, and the rows it spans in each column */
    int16_t far[NM_NOC_PLACE_MAX], lo[NM_NOC_PLACE_CELLS], hi[NM_NOC_PLACE_CELLS];
    if (F <= 1)
        return 0.0;
    if (F > NM_NOC_PLACE_MAX || ncls * hsize > NM_NOC_PLACE_CELLS)
        return -1.0;
    for (int64_t c = 0; c < ncls; c++)
        far[c] = -1;
    for (int64_t k = 0; k < ncls * hsize; k++)
        hi[k] = -1;
    int64_t idx[NM_MAX_DIMS] = {0}, cls = 0;
    for (int64_t e = 0; e < F; e++) {
        int16_t h = (int16_t)(e % hsize), v = (int16_t)(e / hsize);
        int16_t *l = &lo[cls * hsize + h], *u = &hi[cls * hsize + h];
        if (h > far[cls])
            far[cls] = h;
        if (*u < 0)
            *l = *u = v;
        else if (v < *l)
            *l = v;
        else if (v > *u)
            *u = v;
        for (int i = 0; i < n; i++) { /* the next receiver: innermost loop fastest */
            cls += radix[i];
            if (++idx[i] < f[i])
                break;
            cls -= radix[i] * f[i];
            idx[i] = 0;
        }
    }
    double vc = (double)(vsize - 1) / 2.0, sum = 0.0;
    for (int64_t c = 0; c < ncls; c++) {
        sum += far[c];
        for (int64_t h = 0; h < hsize; h++) {
            int64_t k = c * hsize + h;
            if (hi[k] < 0)
                continue;
            sum += fmax(0.0, vc - lo[k]) + fmax(0.0, hi[k] - vc);
        }
    }
    return sum / (double)ncls;
}
