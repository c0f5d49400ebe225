/* report_timeloop.c — stats in the layout of Timeloop's
 * timeloop-model.stats.txt, so that scripts written for Timeloop read
 * nestmap's output unchanged; see report.h.
 *
 * The layout (section titles, label widths, two-decimal fixed floats,
 * scientific EDP) follows what Timeloop's model prints for dense
 * workloads (its Topology, BufferLevel and ArithmeticUnits stream
 * operators, commit 4cf6d4c).  With sparse tensors the data spaces take
 * Timeloop's sparse layout (algorithmic, actual, gated and skipped counts;
 * the representation and its capacity per rank); left out are
 * network sections: nestmap charges no network energy, so Timeloop's
 * dense runs print none either. */
#include <config.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nestmap/energy.h"
#include "nestmap/report.h"
#include "nestmap/text.h"

#define IND "    "

/* "Label<pad>: " for the per-data-space block (Timeloop pads to 60). */
static void dsline(FILE *f, const char *label)
{
    fprintf(f, IND IND "%-60s: ", label);
}

static void specline(FILE *f, const char *label)
{
    fprintf(f, IND IND "%-32s: ", label);
}

/* A count, or "-" when the design gives none. */
static void spec_count(FILE *f, const char *label, int has, long long v)
{
    specline(f, label);
    if (has)
        fprintf(f, "%lld\n", v);
    else
        fputs("-\n", f);
}

static void bandwidth(FILE *f, const char *label, int has, double bw)
{
    specline(f, label);
    if (has)
        fprintf(f, "%.2f\n", bw);
    else
        fputs("-\n", f);
}

static void arith(FILE *f, const nm_arch *arch, const nm_stats *st)
{
    const nm_arith *A = &arch->arith;
    fprintf(f, "=== %s ===\n\n", A->name);
    fputs(IND "SPECS\n" IND "-----\n", f);
    fprintf(f, IND "Word bits             : %d\n", A->word_bits);
    fprintf(f, IND "Instances             : %lld (%lld*%lld)\n", (long long)A->instances,
            (long long)A->meshX, (long long)A->meshY);
    fprintf(f, IND "Compute energy        : %.2f pJ\n\n", A->e_compute);
    fputs(IND "STATS\n" IND "-----\n", f);
    fprintf(f, IND "Utilized instances (max)     : %llu\n", (unsigned long long)st->arith_utilized);
    fprintf(f, IND "Utilized instances (average) : %.2f\n",
            st->cycles ? (double)st->computes / (double)st->cycles : 0.0);
    fprintf(f, IND "Cycles                       : %llu\n", (unsigned long long)st->compute_cycles);
    fprintf(f, IND "Algorithmic Computes (total) : %llu\n",
            (unsigned long long)(st->sparse ? st->algorithmic_computes : st->computes));
    fprintf(f, IND "Actual Computes (total)      : %llu\n", (unsigned long long)st->computes);
    fprintf(f, IND "Gated Computes (total)       : %llu\n",
            (unsigned long long)(st->sparse ? st->gated_computes : 0));
    fprintf(f, IND "Skipped Computes (total)     : %llu\n",
            (unsigned long long)(st->sparse ? st->skipped_computes : 0));
    fprintf(f, IND "Energy (total)               : %.2f pJ\n", st->compute_energy);
    fprintf(f, IND "Area (total)                 : %.2f um^2\n\n", st->compute_area);
}

/* A data space's counts in Timeloop's sparse layout: the tile and its
 * representation, then each access split into algorithmic, actual, gated
 * and skipped. */
static void sparse_ds(FILE *f, const nm_workload *wl, const nm_stats *st, int s, int ds)
{
    const nm_ds_stats *d = &st->level[s].ds[ds];
    const nm_fmt_stats *fs = st->spd ? &st->spd->f[s][ds] : NULL;
    dsline(f, "Partition size");
    fprintf(f, "%llu\n", (unsigned long long)d->partition_size);
    dsline(f, "Tile density distribution");
    if (wl->density[ds].kind == NM_DENSITY_BANDED) /* Timeloop's type: "banded-<width>" */
        fprintf(f, "banded-%lld\n", (long long)wl->density[ds].band);
    else
        fprintf(f, "%s\n", nm_density_name(&wl->density[ds]));
    dsline(f, "Data tile shape");
    fprintf(f, "%llu\n", (unsigned long long)d->tile_shape);
    dsline(f, "Max utilized data storage capacity");
    fprintf(f, "%llu\n", (unsigned long long)d->utilized_capacity);
    dsline(f, "Representation format");
    static const char *const fname[] = {"uop", "ub", "cp", "b", "rle"};
    if (fs && fs->nranks)
        for (int r = fs->nranks - 1; r >= 0; r--)
            fprintf(f, "%s ", fname[fs->fmt[r]]);
    else
        fputs("none", f);
    fputc('\n', f);
    dsline(f, "Max utilized Repr format storage capacity");
    if (fs && fs->nranks) {
        fputc('\n', f);
        for (int r = 0; r < fs->nranks; r++)
            fprintf(f, IND IND IND "Rank %d (metadata, payload): (%llu, %llu)\n", r,
                    (unsigned long long)fs->cap[r][0], (unsigned long long)fs->cap[r][1]);
    } else {
        fputs("0\n", f);
    }
    dsline(f, "Utilized instances (max)");
    fprintf(f, "%llu\n", (unsigned long long)d->utilized_instances);
    dsline(f, "Utilized instances (average)");
    fprintf(f, "%.2f\n", d->avg_instances);
    dsline(f, "Utilized clusters (max)");
    fprintf(f, "%llu\n", (unsigned long long)d->utilized_clusters);
    static const char *const kind[3] = {"reads", "fills", "updates"};
    const uint64_t alg[3] = {d->reads, d->fills, d->updates};
    for (int k = 0; k < 3; k++) {
        const char *how[4] = {"Algorithmic", "Actual", "Gated", "Skipped"};
        const uint64_t v[4] = {alg[k], d->actual[k], d->gated[k], d->skipped[k]};
        for (int h = 0; h < 4; h++) {
            char label[64];
            snprintf(label, sizeof label, "%s scalar %s (per-instance)", how[h], kind[k]);
            dsline(f, label);
            fprintf(f, "%llu\n", (unsigned long long)v[h]);
        }
    }
    dsline(f, "Temporal reductions (per-instance)");
    fprintf(f, "%llu\n", (unsigned long long)d->temporal_reductions);
    dsline(f, "Address generations (per-cluster)");
    fprintf(f, "%llu\n", (unsigned long long)d->address_generations);
}

static void storage(FILE *f, const nm_arch *arch, const nm_workload *wl, const nm_stats *st,
                    int s)
{
    const nm_level *L = &arch->level[s];
    const nm_level_stats *ls = &st->level[s];
    fprintf(f, "=== %s ===\n\n", L->name);
    fputs(IND "SPECS\n" IND "-----\n", f);
    specline(f, "Technology");
    fputs(L->is_dram ? "DRAM\n" : "SRAM\n", f);
    spec_count(f, "Size", L->has_size, (long long)L->size);
    spec_count(f, "Word bits", 1, L->word_bits);
    spec_count(f, "Block size", 1, L->block_size);
    spec_count(f, "Cluster size", 1, L->cluster_size);
    specline(f, "Instances");
    fprintf(f, "%lld (%lld*%lld)\n", (long long)L->instances, (long long)L->meshX,
            (long long)L->meshY);
    bandwidth(f, "Shared bandwidth", L->has_shared_bw, L->shared_bw);
    bandwidth(f, "Read bandwidth", L->has_read_bw, L->read_bw);
    bandwidth(f, "Write bandwidth", L->has_write_bw, L->write_bw);
    specline(f, "Multiple buffering");
    fprintf(f, "%.2f\n", L->multiple_buffering);
    spec_count(f, "Effective size", L->has_size, (long long)L->effective_size);
    specline(f, "Min utilization");
    fprintf(f, "%.2f\n", L->min_utilization);
    specline(f, "Vector access energy");
    fprintf(f, "%.2f pJ\n", L->vector_access_energy);
    specline(f, "Vector access energy source");
    fprintf(f, "%s\n", nm_energy_source_name(L->esrc));
    specline(f, "Per-instance-cycle leakage");
    fprintf(f, "%.2f pJ\n", L->e_leak);
    specline(f, "Instances sharing power gating");
    fputs("1.00\n", f);
    specline(f, "Non-power-gated utilization");
    fputs("100.00%\n", f);
    specline(f, "Leakage energy (total)");
    fprintf(f, "%.2f pJ\n", ls->leakage);
    specline(f, "Area");
    fprintf(f, "%.2f um^2\n\n", L->area);
    fputs(IND "STATS\n" IND "-----\n", f);
    fprintf(f, IND "Cycles               : %llu\n", (unsigned long long)ls->cycles);
    fprintf(f, IND "Bandwidth throttling : %.2f\n", ls->throttling);
    for (int ds = 0; ds < wl->nds; ds++) {
        const nm_ds_stats *d = &ls->ds[ds];
        if (!d->kept)
            continue;
        fprintf(f, IND "%s:\n", wl->ds[ds].name);
        if (st->sparse) {
            sparse_ds(f, wl, st, s, ds);
        } else {
        static const char *const labels[] = {
            "Partition size", "Utilized capacity", "Utilized instances (max)",
            "Utilized clusters (max)", "Scalar reads (per-instance)",
            "Scalar fills (per-instance)", "Scalar updates (per-instance)",
            "Temporal reductions (per-instance)", "Address generations (per-cluster)"};
        const uint64_t vals[] = {d->partition_size, d->utilized_capacity, d->utilized_instances,
                                 d->utilized_clusters, d->reads, d->fills, d->updates,
                                 d->temporal_reductions, d->address_generations};
        for (int i = 0; i < 9; i++) {
            dsline(f, labels[i]);
            fprintf(f, "%llu\n", (unsigned long long)vals[i]);
        }
        }
        dsline(f, "Energy (per-scalar-access)");
        uint64_t acc = d->reads + d->fills + d->updates;
        fprintf(f, "%.2f pJ\n", acc ? d->energy_per_instance / (double)acc : 0.0);
        dsline(f, "Energy (per-instance)");
        fprintf(f, "%.2f pJ\n", d->energy_per_instance);
        dsline(f, "Energy (total)");
        fprintf(f, "%.2f pJ\n", d->energy);
        double need = st->compute_cycles ? (double)acc / (double)st->compute_cycles : 0.0;
        dsline(f, "Shared Bandwidth (per-instance)");
        fprintf(f, "%.2f words/cycle\n", need * ls->throttling);
        dsline(f, "Shared Bandwidth (total)");
        fprintf(f, "%.2f words/cycle\n",
                need * ls->throttling * (double)d->utilized_instances);
    }
    fputc('\n', f);
}

void nm_report_timeloop_stats(FILE *f, const nm_arch *arch, const nm_workload *wl,
                              const nm_stats *st)
{
    fputs("Buffer and Arithmetic Levels\n----------------------------\n", f);
    fputs("Level 0\n-------\n", f);
    arith(f, arch, st);
    for (int s = 0; s < arch->nlevels; s++) {
        fprintf(f, "Level %d\n-------\n", s + 1);
        storage(f, arch, wl, st, s);
    }
    fputs("Networks\n--------\n\n", f);
    /* Operational intensity: the outermost level's tile of each data space
     * is the least traffic; outputs are reduced into (Timeloop elides the
     * first read of each output). */
    uint64_t traffic = 0, outputs = 0;
    for (int ds = 0; ds < wl->nds; ds++) {
        for (int s = arch->nlevels - 1; s >= 0; s--) {
            uint64_t u = st->level[s].ds[ds].utilized_capacity;
            if (u > 0) {
                traffic += u;
                if (wl->ds[ds].read_write)
                    outputs += u;
                break;
            }
        }
    }
    uint64_t reductions = st->computes - outputs, ops = st->computes + reductions;
    fputs("Operational Intensity Stats\n---------------------------\n", f);
    fprintf(f, IND "%-40s: %llu\n", "Total elementwise ops", (unsigned long long)st->computes);
    fprintf(f, IND "%-40s: %llu\n", "Total reduction ops", (unsigned long long)reductions);
    fprintf(f, IND "%-40s: %llu\n", "Total ops", (unsigned long long)ops);
    fprintf(f, IND "%-40s: %llu\n", "Total memory accesses required",
            (unsigned long long)traffic);
    const nm_level *top = &arch->level[arch->nlevels - 1];
    double bytes = (double)top->word_bits * (double)traffic / 8.0;
    fprintf(f, IND "%-40s: %.2f\n", "Optimal Op per Byte", bytes > 0 ? (double)ops / bytes : 0.0);
    fputc('\n', f);
    for (int s = 0; s < arch->nlevels; s++) {
        const nm_level *L = &arch->level[s];
        uint64_t acc = 0;
        for (int ds = 0; ds < wl->nds; ds++) {
            const nm_ds_stats *d = &st->level[s].ds[ds];
            acc += (d->reads + d->fills + d->updates) * d->utilized_instances;
        }
        if (acc == 0)
            continue;
        fprintf(f, "=== %s ===\n", L->name);
        fprintf(f, IND "%-40s: %llu\n", "Total scalar accesses", (unsigned long long)acc);
        fprintf(f, IND "%-40s: %.2f\n", "Op per Byte",
                (double)ops / ((double)L->word_bits * (double)acc / 8.0));
    }
    fputc('\n', f);
    fputs("Summary Stats\n-------------\n", f);
    fprintf(f, "GFLOPs (@1GHz): %.2f\n", st->cycles ? st->total_ops / (double)st->cycles : 0.0);
    fprintf(f, "Utilization: %.2f%%\n", st->utilization * 100.0);
    fprintf(f, "Cycles: %llu\n", (unsigned long long)st->cycles);
    fprintf(f, "Energy: %.2f uJ\n", st->energy / 1e6);
    fprintf(f, "EDP(J*cycle): %.2e\n", (double)st->cycles * st->energy / 1e12);
    fprintf(f, "Area: %.2f mm^2\n\n", st->area / 1e6);
    size_t align = strlen("Total");
    for (int s = 0; s < arch->nlevels; s++)
        if (strlen(arch->level[s].name) > align)
            align = strlen(arch->level[s].name);
    if (strlen(arch->arith.name) > align)
        align = strlen(arch->arith.name);
    for (int s = 0; s < arch->nlevels; s++)
        for (int n = 0; n < arch->level[s].nnet; n++)
            if (strlen(arch->level[s].net[n].name) > align &&
                (st->noc ? st->noc->energy[s][n] : n ? 0.0 : st->level[s].noc_energy) != 0.0)
                align = strlen(arch->level[s].net[n].name);
    double c = st->computes ? (double)st->computes : 1.0;
    /* A level that spends nothing is left out, as Timeloop hides
     * inconsequential stats by default (TIMELOOP_HIDE_INCONSEQUENTIAL_STATS,
     * model/topology.cpp): a dummy level, a level every data space bypasses. */
    fprintf(f, "Computes = %llu\nfJ/Compute\n", (unsigned long long)st->computes);
    if (st->compute_energy != 0)
        fprintf(f, IND "%-*s= %.2f\n", (int)align + 1, arch->arith.name,
                st->compute_energy * 1000.0 / c);
    for (int s = 0; s < arch->nlevels; s++)
        if (st->level[s].energy != 0)
            fprintf(f, IND "%-*s= %.2f\n", (int)align + 1, arch->level[s].name,
                    st->level[s].energy * 1000.0 / c);
    /* then the networks that spend anything, in name order (Timeloop keeps
     * them in a map by name) */
    const char *done = "";
    for (;;) {
        const char *next = NULL;
        double e = 0.0;
        for (int s = 0; s < arch->nlevels; s++)
            for (int n = 0; n < arch->level[s].nnet; n++) {
                const char *name = arch->level[s].net[n].name;
                double en = st->noc ? st->noc->energy[s][n] : n ? 0.0 : st->level[s].noc_energy;
                if (en != 0.0 && strcmp(name, done) > 0 && (!next || strcmp(name, next) < 0)) {
                    next = name;
                    e = en;
                }
            }
        if (!next)
            break;
        fprintf(f, IND "%-*s= %.2f\n", (int)align + 1, next, e * 1000.0 / c);
        done = next;
    }
    fprintf(f, IND "%-*s= %.2f\n", (int)align + 1, "Total", st->energy * 1000.0 / c);
}

/* ---- timeloop-input.yaml: the evaluated input, for timeloop-model ---- */

/* Whether Timeloop's topology sorts a class the way nestmap did: it takes a
 * component for storage when its class holds DRAM, SRAM, regfile,
 * smartbuffer or storage, and for compute when it holds mac or compute
 * (Timeloop's model/topology.hpp, bufferClasses and computeClasses). */
static int timeloop_storage_class(const char *cls)
{
    static const char *const k[] = {"DRAM", "SRAM", "regfile", "smartbuffer", "storage"};
    return nm_text_has_any(cls, k, sizeof k / sizeof *k);
}

static int timeloop_compute_class(const char *cls)
{
    static const char *const k[] = {"mac", "compute"};
    return nm_text_has_any(cls, k, sizeof k / sizeof *k);
}

/* The coefficient name standing for value c in projections. */
static void coef_name(char *buf, size_t size, int64_t c)
{
    snprintf(buf, size, "nm_coef%lld", (long long)c);
}

/* The shortest text of v that reads back as v. */
static const char *shortest(char *buf, size_t size, double v)
{
    for (int p = 15; p <= 17; p++) {
        snprintf(buf, size, "%.*g", p, v);
        if (strtod(buf, NULL) == v)
            break;
    }
    return buf;
}

/* A network's energy attributes, as the level (inferred) or the network
 * component (explicit) carries them; its word bits when not bits. */
static void noc_attrs(FILE *f, const nm_noc *net, int bits)
{
    if (net->word_bits != bits)
        fprintf(f, ", network_word_bits: %d", net->word_bits);
    static const char *const key[] = {"energy_per_hop", "router_energy", "wire_energy",
                                      "tile_width", "energy-per-ingress"};
    const int has[] = {net->has_hop, net->has_router, net->has_wire, net->has_tile,
                       net->has_ingress};
    const double v[] = {net->energy_per_hop, net->router_energy, net->wire_energy,
                        net->tile_width, net->ingress_energy};
    for (int i = 0; i < 5; i++) {
        char num[32];
        if (has[i])
            fprintf(f, ", %s: %s", key[i], shortest(num, sizeof num, v[i]));
    }
    static const char *const type[] = {NULL, "1:1", "1:N", "M:N"};
    if (net->type != NM_NOC_DEFAULT)
        fprintf(f, ", network_type: '%s'", type[net->type]);
    if (net->hops_per_access)
        fprintf(f, ", hop_count: access");
}

/* The child's side of the explicit networks of its parent P (fill and
 * drain, or operand and result for the arithmetic). */
static void child_names(FILE *f, const nm_level *P, int arith)
{
    for (int n = 0; n < P->nnet; n++) {
        if (!P->net[n].explicit_net)
            continue;
        fprintf(f, ", %s: %s", n ? (arith ? "network_result" : "network_drain")
                                 : (arith ? "network_operand" : "network_fill"),
                P->net[n].name);
        if (P->nnet == 1)
            fprintf(f, ", %s: %s", arith ? "network_result" : "network_drain", P->net[n].name);
    }
}

/* The tensors' densities (those given), inside the instance's braces. */
static void densities_yaml(FILE *f, const nm_workload *wl)
{
    int first = 1;
    for (int ds = 0; ds < wl->nds; ds++) {
        const nm_density *dm = &wl->density[ds];
        if (!dm->given)
            continue;
        fprintf(f, "%s%s: {distribution: %s", first ? ", densities: {" : ", ", wl->ds[ds].name,
                nm_density_name(dm));
        char num[32];
        if (dm->kind == NM_DENSITY_BANDED)
            fprintf(f, ", band_width: %lld}", (long long)dm->band);
        else
            fprintf(f, ", density: %s}", shortest(num, sizeof num, dm->d));
        first = 0;
    }
    if (!first)
        fputc('}', f);
}

/* The design's sparse_optimizations in Timeloop's top-level form: per
 * level its formats and action optimizations, and the arithmetic's
 * compute optimization.  Word bits are written as resolved (Timeloop's
 * defaults and adjustments give them back unchanged), but for UB, whose
 * bits Timeloop takes from the level. */
static void sparse_yaml(FILE *f, const nm_arch *arch, const nm_workload *wl)
{
    const nm_sparse *sp = &arch->sparse;
    if (!sp->given)
        return;
    static const char *const fmt[] = {"UOP", "UB", "CP", "B", "RLE"};
    static const char *const type[] = {"gating", "skipping", "skipping_spatial"};
    fputs(sp->active ? "sparse_optimizations:\n  targets:\n" : "sparse_optimizations:\n  targets:", f);
    for (int s = arch->nlevels - 1; s >= 0; s--) {
        int nfmt = 0, ngroups = 0;
        for (int ds = 0; ds < wl->nds; ds++)
            nfmt += sp->repr[s][ds].nranks > 0;
        for (int g = 0; g < sp->ngroups; g++)
            ngroups += sp->group[g].level == s;
        if (!nfmt && !ngroups)
            continue;
        fprintf(f, "  - name: %s\n", arch->level[s].name);
        if (nfmt)
            fputs("    representation_format:\n      data_spaces:\n", f);
        for (int ds = 0; ds < wl->nds; ds++) {
            const nm_repr *rp = &sp->repr[s][ds];
            if (!rp->nranks)
                continue;
            fprintf(f, "      - name: %s\n", wl->ds[ds].name);
            if (rp->inner_to_outer)
                fputs("        rank_application_order: inner_to_outer\n", f);
            fputs("        ranks:\n", f);
            for (int r = rp->nranks - 1; r >= 0; r--) { /* outermost first */
                const nm_rank_format *rf = &rp->rank[r];
                fprintf(f, "        - {format: %s", fmt[rf->fmt]);
                if (rf->fmt != NM_FMT_UB)
                    fprintf(f, ", metadata_word_bits: %d, payload_word_bits: %d", rf->md_bits,
                            rf->pl_bits);
                for (int k = 0; k < rf->ngroups; k++) {
                    fputs(k ? ", [" : ", flattened_rankIDs: [[", f);
                    int first = 1;
                    for (int d = 0; d < wl->ndims; d++)
                        if ((rf->group[k] >> d) & 1u) {
                            fprintf(f, "%s%s", first ? "" : ", ", wl->dim[d]);
                            first = 0;
                        }
                    fputc(']', f);
                }
                fputs(rf->ngroups ? "]}\n" : "}\n", f);
            }
        }
        if (ngroups)
            fputs("    action_optimization:\n", f);
        for (int g = 0; g < sp->ngroups; g++) {
            const nm_saf_group *G = &sp->group[g];
            if (G->level != s)
                continue;
            fprintf(f, "    - type: %s\n      options:\n", type[G->type]);
            for (int o = 0; o < G->nopt; o++) {
                fprintf(f, "      - {target: %s, condition_on: [", wl->ds[G->opt[o].target].name);
                for (int c = 0; c < G->opt[o].ncond; c++)
                    fprintf(f, "%s%s", c ? ", " : "", wl->ds[G->opt[o].cond[c]].name);
                fputs("]}\n", f);
            }
        }
    }
    if (sp->compute_gate || sp->compute_skip)
        fprintf(f, "  - name: %s\n    compute_optimization:\n%s%s", arch->arith.name,
                sp->compute_gate ? "    - type: gating\n" : "",
                sp->compute_skip ? "    - type: skipping\n" : "");
    if (!sp->active)
        fputs(" []\n", f); /* given, with nothing in it */
}

void nm_report_timeloop_input(FILE *f, const nm_arch *arch, const nm_workload *wl,
                              const nm_mapping *m)
{
    fputs("# The evaluated input as timeloop-model reads it (written by nestmap): the\n"
          "# design flattened to one subtree, the problem expanded, the mapping, and the\n"
          "# energy and area tables nestmap used.\n", f);
    fputs("architecture:\n  version: '0.4'\n  subtree:\n  - name: system\n", f);
    char clock[32];
    fprintf(f, "    attributes: {global_cycle_seconds: %s}\n    local:\n",
            shortest(clock, sizeof clock, arch->cycle_seconds));
    for (int l = arch->nlevels - 1; l >= 0; l--) {
        const nm_level *L = &arch->level[l];
        /* A class Timeloop would not take for storage goes as `storage`
         * with the class as its subclass (the ERT below sets its energy). */
        int keep = L->dummy || timeloop_storage_class(L->cls);
        fprintf(f, "    - name: %s[1..%lld]\n      class: %s\n", L->name, (long long)L->instances,
                L->dummy ? "dummy_storage" : keep ? L->cls : "storage");
        if (!keep)
            fprintf(f, "      subclass: %s\n", L->cls);
        fprintf(f, "      attributes: {meshX: %lld, meshY: %lld, word_bits: %d, block_size: %d, "
                "cluster_size: %d",
                (long long)L->meshX, (long long)L->meshY, L->word_bits, L->block_size,
                L->cluster_size);
        if (L->has_size)
            fprintf(f, ", depth: %lld", (long long)(L->size / L->block_size));
        if (L->multiple_buffering != 1.0)
            fprintf(f, ", multiple_buffering: %.17g", L->multiple_buffering);
        if (L->min_utilization != 0.0)
            fprintf(f, ", min_utilization: %.17g", L->min_utilization);
        if (L->has_read_bw)
            fprintf(f, ", read_bandwidth: %.17g", L->read_bw);
        if (L->has_write_bw)
            fprintf(f, ", write_bandwidth: %.17g", L->write_bw);
        if (L->has_shared_bw)
            fprintf(f, ", shared_bandwidth: %.17g", L->shared_bw);
        if (L->reduces == L->is_dram) /* not Timeloop's default */
            fprintf(f, ", reduction_supported: %s", L->reduces ? "true" : "false");
        /* the metadata store and (de)compression (sparse.h; 0 / false by default) */
        if (L->md_word_bits)
            fprintf(f, ", metadata_datawidth: %d", L->md_word_bits);
        if (L->md_width)
            fprintf(f, ", metadata_storage_width: %d", L->md_width);
        if (L->md_depth)
            fprintf(f, ", metadata_storage_depth: %lld", (long long)L->md_depth);
        if (L->decompression_supported)
            fputs(", decompression_supported: true", f);
        if (L->compression_supported)
            fputs(", compression_supported: true", f);
        /* its networks: the inferred one's attributes, or the names of
         * explicit ones (written below); the child names them too */
        if (L->nnet >= 1 && !L->net[0].explicit_net)
            noc_attrs(f, &L->net[0], L->word_bits);
        for (int n = 0; n < L->nnet; n++)
            if (L->net[n].explicit_net)
                fprintf(f, ", %s: %s", n ? "network_update" : "network_read", L->net[n].name);
        if (L->nnet == 1 && L->net[0].explicit_net)
            fprintf(f, ", network_update: %s", L->net[0].name);
        if (l + 1 < arch->nlevels)
            child_names(f, &arch->level[l + 1], 0);
        fputs("}\n", f);
        for (int n = 0; n < L->nnet; n++) {
            const nm_noc *net = &L->net[n];
            if (!net->explicit_net)
                continue;
            fprintf(f, "    - name: %s\n      class: %s\n      attributes: {word_bits: %d",
                    net->name, net->cls, net->word_bits);
            noc_attrs(f, net, net->word_bits);
            fputs("}\n", f);
        }
    }
    const nm_arith *A = &arch->arith;
    fprintf(f, "    - name: %s[1..%lld]\n      class: %s\n", A->name, (long long)A->instances,
            timeloop_compute_class(A->cls) ? A->cls : "compute");
    fprintf(f, "      attributes: {meshX: %lld, meshY: %lld, word_bits: %d",
            (long long)A->meshX, (long long)A->meshY, A->word_bits);
    if (arch->nlevels > 0)
        child_names(f, &arch->level[0], 1);
    fputs("}\n", f);

    /* The problem in Timeloop's shape + instance form; coefficients other
     * than 1 become named coefficients. */
    fprintf(f, "problem:\n  shape:\n    name: \"%s\"\n    dimensions: [", wl->name[0] ? wl->name : "layer");
    for (int d = 0; d < wl->ndims; d++)
        fprintf(f, "%s%s", d ? ", " : "", wl->dim[d]);
    fputs("]\n    coefficients:", f);
    int64_t seen[NM_MAX_DS * NM_MAX_RANKS * NM_MAX_TERMS];
    int nseen = 0;
    for (int ds = 0; ds < wl->nds; ds++)
        for (int r = 0; r < wl->ds[ds].nranks; r++)
            for (int t = 0; t < wl->ds[ds].rank[r].nterms; t++) {
                int64_t c = wl->ds[ds].rank[r].term[t].coef;
                int known = c == 1;
                for (int i = 0; i < nseen && !known; i++)
                    known = seen[i] == c;
                if (known)
                    continue;
                seen[nseen++] = c;
                char name[32];
                coef_name(name, sizeof name, c);
                fprintf(f, "\n    - {name: %s, default: %lld}", name, (long long)c);
            }
    fputs(nseen ? "\n" : " []\n", f);
    fputs("    data_spaces:\n", f);
    for (int ds = 0; ds < wl->nds; ds++) {
        const nm_dataspace *D = &wl->ds[ds];
        fprintf(f, "    - name: %s\n      projection:\n", D->name);
        for (int r = 0; r < D->nranks; r++) {
            fputs("      - [", f);
            for (int t = 0; t < D->rank[r].nterms; t++) {
                const nm_term *T = &D->rank[r].term[t];
                fprintf(f, "%s[%s", t ? ", " : "", wl->dim[T->dim]);
                if (T->coef != 1) {
                    char name[32];
                    coef_name(name, sizeof name, T->coef);
                    fprintf(f, ", %s", name);
                }
                fputc(']', f);
            }
            fputs("]\n", f);
        }
        if (D->read_write)
            fputs("      read_write: true\n", f);
    }
    fputs("  instance: {", f);
    for (int d = 0; d < wl->ndims; d++)
        fprintf(f, "%s%s: %lld", d ? ", " : "", wl->dim[d], (long long)wl->bound[d]);
    densities_yaml(f, wl);
    fputs("}\n", f);
    sparse_yaml(f, arch, wl);
    nm_report_mapping_yaml(f, arch, wl, m);
    nm_report_ert(f, arch);
    nm_report_art(f, arch);
}
