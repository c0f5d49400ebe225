/* report.c — stats as JSON, text and loop nest; see report.h. */
#include <config.h>

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "nestmap/energy.h"
#include "nestmap/network.h"
#include "nestmap/report.h"
#include "nestmap/roofline.h"
#include "nestmap/search.h"

void nm_report_json_string(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            fprintf(f, "\\%c", c);
        else if (c == '\n')
            fputs("\\n", f);
        else if (c < 0x20)
            fprintf(f, "\\u%04x", c);
        else
            fputc(c, f);
    }
    fputc('"', f);
}

/* Doubles at full precision (JSON numbers; null when not finite).  Counts
 * go through kint instead, so that a reader sees them as integers. */
static void num(FILE *f, double v)
{
    if (isfinite(v))
        fprintf(f, "%.17g", v);
    else
        fputs("null", f);
}

static void key(FILE *f, int indent, const char *k)
{
    fprintf(f, "%*s", indent, "");
    nm_report_json_string(f, k);
    fputs(": ", f);
}

static void knum(FILE *f, int indent, const char *k, double v, int last)
{
    key(f, indent, k);
    num(f, v);
    fputs(last ? "\n" : ",\n", f);
}

/* A count, exact. */
static void kint(FILE *f, int indent, const char *k, uint64_t v, int last)
{
    key(f, indent, k);
    fprintf(f, "%llu", (unsigned long long)v);
    fputs(last ? "\n" : ",\n", f);
}

static void kstr(FILE *f, int indent, const char *k, const char *v, int last)
{
    key(f, indent, k);
    nm_report_json_string(f, v);
    fputs(last ? "\n" : ",\n", f);
}

/* The stats object without its closing brace. */
/* Where a component's energies came from: the built-in table entry, or
 * "ERT", "attributes", "none". */
static const char *source_text(nm_energy_source src, const char *note)
{
    return (src == NM_ESRC_BUILTIN || src == NM_ESRC_COMPOUND) && note ? note
                                                                        : nm_energy_source_name(src);
}

/* A compound class's composition, one "action = parts = total" per line,
 * indented under the component. */
static void compose_text(FILE *f, const char *name, const char *cls, const char *how)
{
    if (!how)
        return;
    fprintf(f, "  %s (compound class %s):\n", name, cls);
    for (const char *p = how; *p;) {
        size_t n = strcspn(p, "\n");
        fprintf(f, "    %.*s\n", (int)n, p);
        p += n;
        if (*p)
            p++;
    }
}

static void json_body(FILE *f, const nm_arch *arch, const nm_workload *wl, const nm_stats *st,
                      const nm_mapping *m);
static void mapping_json(FILE *f, const nm_arch *arch, const nm_workload *wl,
                         const nm_mapping *m);

void nm_report_json(FILE *f, const nm_arch *arch, const nm_workload *wl, const nm_stats *st,
                    const nm_mapping *m)
{
    json_body(f, arch, wl, st, m);
    fputs("\n}\n", f);
}

/* The networks between levels (noc.h), each under its name. */
static void noc_json(FILE *f, const nm_arch *arch, const nm_workload *wl, const nm_noc_stats *noc)
{
    key(f, 1, "on_chip_networks");
    fputs("{", f);
    int first = 1;
    for (int s = 0; s < arch->nlevels; s++) {
        const nm_level *L = &arch->level[s];
        for (int n = 0; n < L->nnet; n++) {
            const nm_noc *net = &L->net[n];
            fputs(first ? "\n" : ",\n", f);
            first = 0;
            key(f, 2, net->name);
            fputs("{\n", f);
            kstr(f, 3, "class", net->explicit_net ? net->cls : "(inferred Legacy)", 0);
            kint(f, 3, "connection_type", (uint64_t)net->directions, 0);
            kint(f, 3, "word_bits", (uint64_t)net->word_bits, 0);
            knum(f, 3, "energy_pj", noc->energy[s][n], 0);
            key(f, 3, "dataspaces");
            fputs("{", f);
            for (int ds = 0; ds < wl->nds; ds++) {
                const nm_noc_ds *d = &noc->ds[s][n][ds];
                fputs(ds ? ",\n" : "\n", f);
                key(f, 4, wl->ds[ds].name);
                fputs("{\n", f);
                kint(f, 5, "fanout", d->fanout, 0);
                kint(f, 5, "multicast_factor", d->multicast, 0);
                knum(f, 5, "ingresses", d->ingresses, 0);
                knum(f, 5, "distributed_ingresses", d->distributed, 0);
                knum(f, 5, "link_transfers", d->link_transfers, 0);
                knum(f, 5, "spatial_reductions", d->spatial_reductions, 0);
                knum(f, 5, "avg_hops", d->avg_hops, 0);
                knum(f, 5, "energy_per_hop_pj", d->energy_per_hop, 0);
                knum(f, 5, "energy_pj", d->energy, 1);
                fputs("    }", f);
            }
            fputs("\n   }\n  }", f);
        }
    }
    fputs("\n },\n", f);
}

static void fj_json(FILE *f, const nm_arch *arch, const nm_stats *st, const char *name,
                    double c);

/* A data space's sparse counts (sparse.h): its density model and the
 * accesses performed, gated and skipped, named as the conformance corpus
 * names Timeloop's. */
/* Per rank [metadata, payload] pairs, rank 0 (innermost) first; 0 when
 * every one is 0 (as the corpus writes what Timeloop prints). */
static void rank_pairs(FILE *f, const char *k, int nr, const uint64_t (*v)[2], int zero_as_0)
{
    int any = 0;
    for (int r = 0; r < nr; r++)
        any |= v[r][0] || v[r][1];
    key(f, 5, k);
    if (!any && zero_as_0) {
        fputs("0,\n", f);
        return;
    }
    fputc('[', f);
    for (int r = 0; r < nr; r++)
        fprintf(f, "%s[%llu, %llu]", r ? ", " : "", (unsigned long long)v[r][0],
                (unsigned long long)v[r][1]);
    fputs("],\n", f);
}

static void sparse_ds_json(FILE *f, const nm_density *dm, const nm_ds_stats *d,
                           const nm_fmt_stats *fs)
{
    static const char *const kind[3] = {"reads", "fills", "updates"};
    static const char *const how[3] = {"actual", "gated", "skipped"};
    const uint64_t *v[3] = {d->actual, d->gated, d->skipped};
    kstr(f, 5, "density_distribution", nm_density_name(dm), 0);
    kint(f, 5, "tile_shape", d->tile_shape, 0);
    for (int h = 0; h < 3; h++)
        for (int k = 0; k < 3; k++) {
            char name[32];
            snprintf(name, sizeof name, "%s_%s", how[h], kind[k]);
            kint(f, 5, name, v[h][k], 0);
        }
    knum(f, 5, "utilized_instances_avg", d->avg_instances, 0);
    kint(f, 5, "decompressions", d->decompressions, 0);
    kint(f, 5, "compressions", d->compressions, 0);
    if (!fs || !fs->nranks) {
        kstr(f, 5, "format", "none", 0);
        kint(f, 5, "format_capacity", 0, 0);
        return;
    }
    static const char *const fname[] = {"uop", "ub", "cp", "b", "rle"};
    char text[NM_MAX_FMT_RANKS * 5 + 1] = "";
    for (int r = fs->nranks - 1; r >= 0; r--) {
        strcat(text, fname[fs->fmt[r]]);
        if (r)
            strcat(text, " ");
    }
    kstr(f, 5, "format", text, 0);
    rank_pairs(f, "format_capacity", fs->nranks, fs->cap, 0);
    for (int h = 0; h < 3; h++)
        for (int k = 0; k < 3; k++) {
            char name[40];
            snprintf(name, sizeof name, "%s_format_%s", how[h], kind[k]);
            rank_pairs(f, name, fs->nranks, (const uint64_t(*)[2])fs->acc[h][k], 1);
        }
}

static void json_body(FILE *f, const nm_arch *arch, const nm_workload *wl, const nm_stats *st,
                      const nm_mapping *m)
{
    if (m) {
        fputs("{\n", f);
        key(f, 1, "mapping");
        mapping_json(f, arch, wl, m);
        fputs(",\n", f);
    } else {
        fputs("{\n", f);
    }
    if (st->invalid.kind != NM_VALID) {
        char reason[512];
        nm_invalid_describe(&st->invalid, arch, wl, reason, sizeof reason);
        key(f, 1, "valid");
        fputs("false,\n", f);
        key(f, 1, "reason");
        nm_report_json_string(f, reason);
        return;
    }
    key(f, 1, "valid");
    fputs("true,\n", f);
    key(f, 1, "levels");
    fputs("[\n  {\n", f);
    const nm_arith *A = &arch->arith;
    kstr(f, 3, "name", A->name, 0);
    kint(f, 3, "instances", (uint64_t)A->instances, 0);
    kint(f, 3, "cycles", (uint64_t)st->compute_cycles, 0);
    kint(f, 3, "computes", (uint64_t)st->computes, 0);
    kint(f, 3, "utilized_instances", (uint64_t)st->arith_utilized, 0);
    if (st->sparse) {
        kint(f, 3, "algorithmic_computes", st->algorithmic_computes, 0);
        kint(f, 3, "actual_computes", st->computes, 0);
        kint(f, 3, "gated_computes", st->gated_computes, 0);
        kint(f, 3, "skipped_computes", st->skipped_computes, 0);
        knum(f, 3, "utilized_instances_avg", st->arith_avg, 0);
    }
    kint(f, 3, "word_bits", (uint64_t)(A->word_bits), 0);
    knum(f, 3, "energy_pj", st->compute_energy, 0);;
    knum(f, 3, "area_um2", st->compute_area, 0);;
    key(f, 3, "dataspaces");
    fputs("{}\n  }", f);
    for (int s = 0; s < arch->nlevels; s++) {
        const nm_level *L = &arch->level[s];
        const nm_level_stats *ls = &st->level[s];
        if (L->dummy)
            continue;
        fputs(",\n  {\n", f);
        kstr(f, 3, "name", L->name, 0);
        kint(f, 3, "instances", (uint64_t)L->instances, 0);
        kint(f, 3, "cycles", (uint64_t)ls->cycles, 0);
        if (L->has_size)
            kint(f, 3, "size", (uint64_t)L->size, 0);
        kint(f, 3, "word_bits", (uint64_t)(L->word_bits), 0);
        if (L->ntw) {
            key(f, 3, "tensor_datawidth");
            fputc('{', f);
            for (int i = 0; i < L->ntw; i++) {
                fputs(i ? ", " : "", f);
                nm_report_json_string(f, L->tw[i].name);
                fprintf(f, ": %d", L->tw[i].bits);
            }
            fputs("},\n", f);
        }
        kint(f, 3, "block_size", (uint64_t)(L->block_size), 0);
        knum(f, 3, "vector_access_energy_pj", L->vector_access_energy, 0);;
        knum(f, 3, "leakage_pj", ls->leakage, 0);;
        knum(f, 3, "bandwidth_throttling", ls->throttling, 0);;
        knum(f, 3, "energy_pj", ls->energy, 0);;
        knum(f, 3, "area_um2", ls->area, 0);;
        key(f, 3, "dataspaces");
        fputs("{", f);
        int first = 1;
        for (int ds = 0; ds < wl->nds; ds++) {
            const nm_ds_stats *d = &ls->ds[ds];
            if (!d->kept)
                continue;
            fputs(first ? "\n" : ",\n", f);
            first = 0;
            key(f, 4, wl->ds[ds].name);
            fputs("{\n", f);
            kint(f, 5, "partition_size", (uint64_t)d->partition_size, 0);
            kint(f, 5, "utilized_capacity", (uint64_t)d->utilized_capacity, 0);
            kint(f, 5, "utilized_instances", (uint64_t)d->utilized_instances, 0);
            kint(f, 5, "utilized_clusters", (uint64_t)d->utilized_clusters, 0);
            kint(f, 5, "reads", (uint64_t)d->reads, 0);
            kint(f, 5, "fills", (uint64_t)d->fills, 0);
            kint(f, 5, "updates", (uint64_t)d->updates, 0);
            kint(f, 5, "temporal_reductions", (uint64_t)d->temporal_reductions, 0);
            kint(f, 5, "address_generations", (uint64_t)d->address_generations, 0);
            if (st->sparse)
                sparse_ds_json(f, &wl->density[ds], d, st->spd ? &st->spd->f[s][ds] : NULL);
            knum(f, 5, "energy_per_instance_pj", d->energy_per_instance, 0);;
            knum(f, 5, "energy_pj", d->energy, 1);;
            fputs("    }", f);
        }
        fputs(first ? "}\n  }" : "\n   }\n  }", f);
    }
    fputs("\n ],\n", f);
    if (st->noc && arch->noc)
        noc_json(f, arch, wl, st->noc);
    key(f, 1, "summary");
    fputs("{\n", f);
    kint(f, 2, "cycles", (uint64_t)st->cycles, 0);
    kint(f, 2, "computes", (uint64_t)st->computes, 0);
    knum(f, 2, "utilization_pct", st->utilization * 100.0, 0);;
    knum(f, 2, "energy_pj", st->energy, 0);;
    knum(f, 2, "on_chip_network_energy_pj", st->noc_energy, 0);
    knum(f, 2, "energy_uj", st->energy / 1e6, 0);;
    knum(f, 2, "gflops", st->total_ops / (double)st->cycles, 0);;
    knum(f, 2, "edp_j_cycles", st->energy * 1e-12 * (double)st->cycles, 0);;
    kint(f, 2, "last_level_accesses", (uint64_t)st->last_level_accesses, 0);
    knum(f, 2, "area_mm2", st->area / 1e6, 0);;
    if (st->sparse) {
        kint(f, 2, "algorithmic_computes", st->algorithmic_computes, 0);
        kint(f, 2, "actual_computes", st->computes, 0);
        fj_json(f, arch, st, "fj_per_algorithmic_compute", (double)st->algorithmic_computes);
        fputs(",\n", f);
    }
    fj_json(f, arch, st, "fj_per_compute", (double)st->computes);
    fputs("\n }", f);
}

/* Energy per compute (fJ) by level and network and in total, as "key": {...}. */
static void fj_json(FILE *f, const nm_arch *arch, const nm_stats *st, const char *name,
                    double c)
{
    const nm_arith *A = &arch->arith;
    key(f, 2, name);
    fputs("{\n", f);
    key(f, 3, A->name);
    num(f, st->compute_energy * 1000.0 / c);
    for (int s = 0; s < arch->nlevels; s++) {
        if (arch->level[s].dummy)
            continue;
        fputs(",\n", f);
        key(f, 3, arch->level[s].name);
        num(f, st->level[s].energy * 1000.0 / c);
    }
    for (int s = 0; st->noc && s < arch->nlevels; s++)
        for (int n = 0; n < arch->level[s].nnet; n++)
            if (st->noc->energy[s][n] != 0.0) {
                fputs(",\n", f);
                key(f, 3, arch->level[s].net[n].name);
                num(f, st->noc->energy[s][n] * 1000.0 / c);
            }
    fputs(",\n", f);
    key(f, 3, "Total");
    num(f, st->energy * 1000.0 / c);
    fputs("\n  }", f);
}

/* A level's accesses split by sparsity: the dense counts above are what the
 * mapping asks for; these are what the storage does (sparse.h). */
static void sparse_text(FILE *f, const nm_workload *wl, const nm_level_stats *ls,
                        const nm_fmt_stats *fs)
{
    int any = 0;
    for (int ds = 0; ds < wl->nds; ds++)
        any |= ls->ds[ds].kept;
    if (!any)
        return;
    fprintf(f, "    %-12s %-9s %12s %12s %12s   %s\n", "sparse", "", "reads", "fills",
            "updates", "density");
    for (int ds = 0; ds < wl->nds; ds++) {
        const nm_ds_stats *d = &ls->ds[ds];
        if (!d->kept)
            continue;
        const uint64_t *v[3] = {d->actual, d->gated, d->skipped};
        static const char *const how[3] = {"performed", "gated", "skipped"};
        for (int h = 0; h < 3; h++) {
            if (h && !v[h][0] && !v[h][1] && !v[h][2])
                continue;
            fprintf(f, "    %-12s %-9s %12llu %12llu %12llu", h ? "" : wl->ds[ds].name, how[h],
                    (unsigned long long)v[h][0], (unsigned long long)v[h][1],
                    (unsigned long long)v[h][2]);
            if (!h)
                fprintf(f, "   %s %g", nm_density_name(&wl->density[ds]), wl->density[ds].d);
            fputc('\n', f);
        }
        if (d->decompressions || d->compressions)
            fprintf(f, "    %-12s %llu decompressions, %llu compressions\n", "",
                    (unsigned long long)d->decompressions, (unsigned long long)d->compressions);
        const nm_fmt_stats *ff = fs ? &fs[ds] : NULL;
        if (ff && ff->nranks) {
            static const char *const fname[] = {"UOP", "UB", "CP", "B", "RLE"};
            fprintf(f, "    %-12s format", "");
            for (int r = ff->nranks - 1; r >= 0; r--)
                fprintf(f, " %s", fname[ff->fmt[r]]);
            fprintf(f, " (outermost first): metadata up to %llu bits; metadata and payload "
                    "units read, innermost rank first:",
                    (unsigned long long)ff->cap_bits);
            for (int r = 0; r < ff->nranks; r++)
                fprintf(f, " %llu/%llu", (unsigned long long)ff->acc[0][NM_ACC_READ][r][0],
                        (unsigned long long)ff->acc[0][NM_ACC_READ][r][1]);
            fputc('\n', f);
        }
    }
}

void nm_report_text(FILE *f, const nm_arch *arch, const nm_workload *wl, const nm_stats *st)
{
    if (st->invalid.kind != NM_VALID) {
        char reason[512];
        nm_invalid_describe(&st->invalid, arch, wl, reason, sizeof reason);
        fprintf(f, "invalid mapping: %s\n", reason);
        return;
    }
    const nm_arith *A = &arch->arith;
    double c = (double)st->computes;
    fprintf(f, "=== %s (arithmetic) ===\n", A->name);
    fprintf(f, "    instances            : %lld (%lld x %lld), %llu in use\n",
            (long long)A->instances, (long long)A->meshX, (long long)A->meshY,
            (unsigned long long)st->arith_utilized);
    if (st->sparse)
        fprintf(f, "    computes             : %llu performed of %llu (%llu gated, %llu skipped, "
                "%llu removed by storage gating and skipping)\n",
                (unsigned long long)st->computes, (unsigned long long)st->algorithmic_computes,
                (unsigned long long)st->gated_computes, (unsigned long long)st->skipped_computes,
                (unsigned long long)(st->algorithmic_computes - st->computes -
                                     st->gated_computes - st->skipped_computes));
    else
        fprintf(f, "    computes             : %llu\n", (unsigned long long)st->computes);
    fprintf(f, "    cycles               : %llu\n", (unsigned long long)st->compute_cycles);
    fprintf(f, "    energy               : %.2f pJ (%.3f pJ/compute, from %s)\n",
            st->compute_energy, A->e_compute, source_text(A->esrc, A->esrc_note));
    fprintf(f, "    area                 : %.2f um^2 (%.2f per instance)\n", st->compute_area,
            A->area);
    for (int s = 0; s < arch->nlevels; s++) {
        const nm_level *L = &arch->level[s];
        const nm_level_stats *ls = &st->level[s];
        if (L->dummy)
            continue;
        fprintf(f, "\n=== %s ===\n", L->name);
        fprintf(f, "    instances            : %lld (%lld x %lld)\n", (long long)L->instances,
                (long long)L->meshX, (long long)L->meshY);
        if (L->has_size)
            fprintf(f, "    size                 : %lld words of %d bits (block %d)\n",
                    (long long)L->size, L->word_bits, L->block_size);
        else
            fprintf(f, "    size                 : unbounded, words of %d bits (block %d)\n",
                    L->word_bits, L->block_size);
        if (L->ntw) { /* tensor_datawidth: tiles above are in elements, sizes in words */
            fprintf(f, "    tensor widths        :");
            for (int i = 0; i < L->ntw; i++)
                fprintf(f, "%s %s %d bits", i ? "," : "", L->tw[i].name, L->tw[i].bits);
            fprintf(f, " (tiles in elements; each takes bits/%d words)\n", L->word_bits);
        }
        fprintf(f, "    energy source        : %s (read %.4g, fill %.4g, update %.4g pJ)\n",
                source_text(L->esrc, L->esrc_note), L->e_read, L->e_fill, L->e_update);
        fprintf(f, "    cycles               : %llu (bandwidth throttling %.4f)\n",
                (unsigned long long)ls->cycles, ls->throttling);
        fprintf(f, "    leakage              : %.2f pJ\n", ls->leakage);
        fprintf(f, "    area                 : %.2f um^2 (%.2f per instance)\n", ls->area, L->area);
        fprintf(f, "    energy               : %.2f pJ (%.2f fJ/compute)\n", ls->energy,
                ls->energy * 1000.0 / c);
        fprintf(f, "    %-12s %10s %10s %6s %12s %12s %12s %12s %14s\n", "data space", "tile",
                "partition", "inst", "reads", "fills", "updates", "reductions", "energy (pJ)");
        for (int ds = 0; ds < wl->nds; ds++) {
            const nm_ds_stats *d = &ls->ds[ds];
            if (!d->kept) {
                fprintf(f, "    %-12s %10s\n", wl->ds[ds].name, "bypassed");
                continue;
            }
            fprintf(f, "    %-12s %10llu %10llu %6llu %12llu %12llu %12llu %12llu %14.2f\n",
                    wl->ds[ds].name, (unsigned long long)d->utilized_capacity,
                    (unsigned long long)d->partition_size,
                    (unsigned long long)d->utilized_instances, (unsigned long long)d->reads,
                    (unsigned long long)d->fills, (unsigned long long)d->updates,
                    (unsigned long long)d->temporal_reductions, d->energy);
        }
        if (st->sparse)
            sparse_text(f, wl, ls, st->spd ? st->spd->f[s] : NULL);
    }
    for (int s = 0; st->noc && s < arch->nlevels; s++)
        for (int n = 0; n < arch->level[s].nnet; n++) {
            const nm_noc *net = &arch->level[s].net[n];
            if (st->noc->energy[s][n] == 0.0)
                continue;
            fprintf(f, "\n=== on-chip network %s ===\n", net->name);
            fprintf(f, "    class                : %s, %s, %d-bit words\n",
                    net->explicit_net ? net->cls : "Legacy (inferred)",
                    net->directions == NM_NOC_READ_FILL       ? "reads and fills"
                    : net->directions == NM_NOC_UPDATE_DRAIN ? "updates and drains"
                                                              : "both ways",
                    net->word_bits);
            fprintf(f, "    energy               : %.2f pJ (%.2f fJ/compute)\n",
                    st->noc->energy[s][n], st->noc->energy[s][n] * 1000.0 / c);
            fprintf(f, "    %-12s %6s %9s %12s %12s %9s %12s %14s\n", "data space", "fanout",
                    "multicast", "ingresses", "link xfers", "avg hops", "pJ/hop", "energy (pJ)");
            for (int ds = 0; ds < wl->nds; ds++) {
                const nm_noc_ds *d = &st->noc->ds[s][n][ds];
                fprintf(f, "    %-12s %6llu %9llu %12.0f %12.0f %9.3f %12.4g %14.2f\n",
                        wl->ds[ds].name, (unsigned long long)d->fanout,
                        (unsigned long long)d->multicast, d->ingresses, d->link_transfers,
                        d->avg_hops, d->energy_per_hop, d->energy);
            }
        }
    fprintf(f, "\nSummary\n-------\n");
    fprintf(f, "Cycles        : %llu\n", (unsigned long long)st->cycles);
    fprintf(f, "Computes      : %llu\n", (unsigned long long)st->computes);
    fprintf(f, "Utilization   : %.2f %%\n", st->utilization * 100.0);
    fprintf(f, "Energy        : %.2f pJ (%.6g uJ)\n", st->energy, st->energy / 1e6);
    fprintf(f, "Area          : %.6g mm^2\n", st->area / 1e6);
    fprintf(f, "EDP           : %.4e J*cycle\n", st->energy * 1e-12 * (double)st->cycles);
    fprintf(f, "GFLOPs @1GHz  : %.2f\n", st->total_ops / (double)st->cycles);
    if (arch->clock_given)
        fprintf(f, "Time          : %.6g s at %.6g MHz (%.2f GFLOPs)\n",
                (double)st->cycles * arch->cycle_seconds, 1e-6 / arch->cycle_seconds,
                st->total_ops / ((double)st->cycles * arch->cycle_seconds) * 1e-9);
    fprintf(f, "fJ/compute\n");
    fprintf(f, "    %-20s = %10.2f\n", A->name, st->compute_energy * 1000.0 / c);
    for (int s = 0; s < arch->nlevels; s++)
        if (!arch->level[s].dummy)
            fprintf(f, "    %-20s = %10.2f\n", arch->level[s].name,
                    st->level[s].energy * 1000.0 / c);
    for (int s = 0; s < arch->nlevels; s++) {
        const nm_level *L = &arch->level[s];
        if (st->noc) {
            for (int n = 0; n < L->nnet; n++)
                if (st->noc->energy[s][n] != 0.0)
                    fprintf(f, "    %-20s = %10.2f\n", L->net[n].name,
                            st->noc->energy[s][n] * 1000.0 / c);
        } else if (st->level[s].noc_energy != 0.0) {
            fprintf(f, "    %-20s = %10.2f\n", L->net[0].name,
                    st->level[s].noc_energy * 1000.0 / c);
        }
    }
    fprintf(f, "    %-20s = %10.2f\n", "Total", st->energy * 1000.0 / c);
}

void nm_report_loopnest(FILE *f, const nm_arch *arch, const nm_workload *wl, const nm_nest *nest,
                        const nm_mapping *m, const nm_stats *st)
{
    int depth = 0;
    for (int s = arch->nlevels - 1; s >= 0; s--) {
        const nm_level *L = &arch->level[s];
        fprintf(f, "%s [", L->name);
        int any = 0;
        for (int ds = 0; ds < wl->nds; ds++) {
            if (!((m->level[s].keep >> ds) & 1u))
                continue;
            fprintf(f, " %s", wl->ds[ds].name);
            if (st && st->invalid.kind == NM_VALID)
                fprintf(f, ":%llu", (unsigned long long)st->level[s].ds[ds].utilized_capacity);
            any = 1;
        }
        fprintf(f, "%s]\n", any ? " " : "");
        for (size_t i = 0; i < strlen(L->name) + 3; i++)
            fputc('-', f);
        fputc('\n', f);
        /* Temporal loops outer to inner, then the spatial fan-out below. */
        for (int pass = 0; pass < 2; pass++) {
            for (int l = nest->boundary[s]; l >= nest->first[s]; l--) {
                const nm_loop *lp = &nest->loop[l];
                if ((pass == 0) != (lp->space == NM_TIME) || lp->end < 2)
                    continue;
                char res[32] = "";
                if (lp->residual != lp->end)
                    snprintf(res, sizeof res, ",%lld", (long long)lp->residual);
                fprintf(f, "|%*sfor %s in [0:%lld%s)%s\n", 1 + 2 * depth, "", wl->dim[lp->dim],
                        (long long)lp->end, res,
                        lp->space == NM_SPACE_X ? " (Spatial-X)"
                        : lp->space == NM_SPACE_Y ? " (Spatial-Y)" : "");
                depth++;
            }
        }
        fputc('\n', f);
    }
    fprintf(f, "|%*s<< Compute >>\n", 1 + 2 * depth, "");
}

/* Room for a factor or permutation string: every dimension's name, a
 * factor and a residual. */
#define DIRECTIVE_TEXT_MAX (NM_MAX_DIMS * (NM_NAME_MAX + 44))

/* Dims named as Timeloop's permutation strings expect: concatenated when
 * every name is one letter, else separated by spaces. */
static void dim_list(char *out, const nm_workload *wl, const int8_t *order, int n)
{
    int single = 1;
    for (int d = 0; d < wl->ndims; d++)
        single &= strlen(wl->dim[d]) == 1;
    size_t len = 0;
    out[0] = '\0';
    for (int i = 0; i < n && len < DIRECTIVE_TEXT_MAX; i++)
        len += (size_t)snprintf(out + len, DIRECTIVE_TEXT_MAX - len, "%s%s",
                                i && !single ? " " : "", wl->dim[order[i]]);
}

/* "C=2 P=8,7 ...": a residual, when there is one, follows its factor. */
static void factor_list(char *out, const nm_workload *wl, const int64_t *factor,
                        const int64_t *residual)
{
    size_t len = 0;
    out[0] = '\0';
    for (int d = 0; d < wl->ndims && len < DIRECTIVE_TEXT_MAX; d++) {
        len += (size_t)snprintf(out + len, DIRECTIVE_TEXT_MAX - len, "%s%s=%lld", d ? " " : "",
                                wl->dim[d], (long long)factor[d]);
        if (residual && residual[d] && residual[d] != factor[d] && len < DIRECTIVE_TEXT_MAX)
            len += (size_t)snprintf(out + len, DIRECTIVE_TEXT_MAX - len, ",%lld",
                                    (long long)residual[d]);
    }
}

/* Writes a mapping's directives in one of two forms with the same keys and
 * values: map.yaml's block entries ("- target: X\n  type: ...") or JSON
 * objects in a list. */
typedef struct directives {
    FILE *f;
    int json;
    int count;          /* directives begun */
    const char *indent; /* YAML: before each line (NULL: none) */
} directives;

static void directive_begin(directives *w, const char *target, const char *type)
{
    if (!w->json) {
        const char *in = w->indent ? w->indent : "";
        fprintf(w->f, "%s- target: %s\n%s  type: %s\n", in, target, in, type);
    } else {
        fputs(w->count ? ",\n  {\"target\": " : "\n  {\"target\": ", w->f);
        nm_report_json_string(w->f, target);
        fprintf(w->f, ", \"type\": \"%s\"", type);
    }
    w->count++;
}

static void directive_key(directives *w, const char *key)
{
    if (w->json)
        fprintf(w->f, ", \"%s\": ", key);
    else
        fprintf(w->f, "%s  %s: ", w->indent ? w->indent : "", key);
}

static void directive_text(directives *w, const char *key, const char *text)
{
    directive_key(w, key);
    if (w->json)
        nm_report_json_string(w->f, text);
    else
        fprintf(w->f, "%s\n", text);
}

static void directive_int(directives *w, const char *key, int v)
{
    directive_key(w, key);
    fprintf(w->f, w->json ? "%d" : "%d\n", v);
}

/* The data spaces in mask: [A, B] in YAML, ["A", "B"] in JSON. */
static void directive_ds(directives *w, const char *key, const nm_workload *wl, uint32_t mask)
{
    directive_key(w, key);
    int first = 1;
    fputc('[', w->f);
    for (int d = 0; d < wl->nds; d++) {
        if (!((mask >> d) & 1u))
            continue;
        fputs(first ? "" : ", ", w->f);
        if (w->json)
            nm_report_json_string(w->f, wl->ds[d].name);
        else
            fputs(wl->ds[d].name, w->f);
        first = 0;
    }
    fputs(w->json ? "]" : "]\n", w->f);
}

static void directive_end(directives *w)
{
    if (w->json)
        fputc('}', w->f);
}

/* Every directive of the mapping's levels lo..hi, outermost first:
 * temporal factors and order, spatial ones where the level fans out,
 * keep/bypass (unless no_bypass). */
static void write_levels(directives *w, const nm_arch *arch, const nm_workload *wl,
                         const nm_mapping *m, int lo, int hi, int no_bypass)
{
    uint32_t all = (1u << wl->nds) - 1u;
    char text[DIRECTIVE_TEXT_MAX];
    for (int l = hi; l >= lo; l--) {
        const nm_level *L = &arch->level[l];
        const nm_level_map *lm = &m->level[l];
        directive_begin(w, L->name, "temporal");
        factor_list(text, wl, lm->tfactor, lm->tresidual);
        directive_text(w, "factors", text);
        dim_list(text, wl, lm->torder, wl->ndims);
        directive_text(w, "permutation", text);
        if (lm->no_temporal_reuse)
            directive_ds(w, "no_temporal_reuse", wl, lm->no_temporal_reuse);
        directive_end(w);
        if (L->fanoutX * L->fanoutY > 1) {
            directive_begin(w, L->name, "spatial");
            factor_list(text, wl, lm->sfactor, lm->sresidual);
            directive_text(w, "factors", text);
            dim_list(text, wl, lm->sorder, wl->ndims);
            directive_text(w, "permutation", text);
            directive_int(w, "split", lm->split);
            if (lm->no_link)
                directive_ds(w, "no_link_transfer", wl, lm->no_link);
            if (lm->no_multicast)
                directive_ds(w, "no_multicast_no_reduction", wl, lm->no_multicast);
            directive_end(w);
        }
        if (no_bypass)
            continue;
        directive_begin(w, L->name, "bypass");
        directive_ds(w, "keep", wl, lm->keep & all);
        directive_ds(w, "bypass", wl, ~lm->keep & all);
        directive_end(w);
    }
}

static void write_directives(directives *w, const nm_arch *arch, const nm_workload *wl,
                             const nm_mapping *m)
{
    write_levels(w, arch, wl, m, 0, arch->nlevels - 1, 0);
}

void nm_report_mapping_yaml(FILE *f, const nm_arch *arch, const nm_workload *wl,
                            const nm_mapping *m)
{
    fputs("mapping:\n", f);
    directives w = {f, 0, 0, NULL};
    write_directives(&w, arch, wl, m);
}

void nm_report_mapping_levels_yaml(FILE *f, const nm_arch *arch, const nm_workload *wl,
                                   const nm_mapping *m, int lo, int hi, int no_bypass,
                                   const char *indent)
{
    directives w = {f, 0, 0, indent};
    write_levels(&w, arch, wl, m, lo, hi, no_bypass);
}

/* The mapping as map.yaml writes it: a list of directive objects. */
static void mapping_json(FILE *f, const nm_arch *arch, const nm_workload *wl,
                         const nm_mapping *m)
{
    directives w = {f, 1, 0, NULL};
    fputc('[', f);
    write_directives(&w, arch, wl, m);
    fputs("\n ]", f);
}

static const char *reject_name(int kind)
{
    switch (kind) {
    case NM_INV_FACTORS:
        return "factors";
    case NM_INV_NO_FANOUT:
        return "no_fanout";
    case NM_INV_BYPASS_ALL:
        return "bypassed_everywhere";
    case NM_INV_CAPACITY:
        return "capacity";
    case NM_INV_MIN_UTIL:
        return "min_utilization";
    case NM_INV_ARITH:
        return "arithmetic_fanout";
    case NM_INV_INSTANCES:
        return "instances";
    case NM_INV_RESIDUAL:
        return "residual_under_spatial";
    case NM_INV_FAN_RESIDUALS:
        return "fanout_residuals";
    case NM_INV_MULTICAST:
        return "distributed_multicast";
    case NM_INV_MD_CAPACITY:
        return "metadata_capacity";
    case NM_INV_FORMAT:
        return "representation_format";
    case NM_INV_SKIP_FANOUT:
        return "spatial_skip_fanout";
    case NM_REJECT_CONSTRAINT:
        return "constraints";
    }
    return "other";
}

void nm_report_search_json(FILE *f, const nm_arch *arch, const nm_workload *wl,
                           const nm_search_result *res, const nm_search_opts *o)
{
    if (res->found) {
        json_body(f, arch, wl, &res->best_stats, &res->best.map);
    } else {
        fputs("{\n", f);
        key(f, 1, "valid");
        fputs("false,\n", f);
        key(f, 1, "reason");
        nm_report_json_string(f, "no valid mapping found");
    }
    fputs(",\n", f);
    key(f, 1, "search");
    fputs("{\n", f);
    kstr(f, 2, "algorithm", o->algorithm, 0);
    key(f, 2, "metrics");
    fputc('[', f);
    for (int i = 0; i < o->nmetrics; i++) {
        if (i)
            fputs(", ", f);
        nm_report_json_string(f, nm_metric_name(o->metric[i]));
    }
    fputs("],\n", f);
    kint(f, 2, "seed", (uint64_t)o->seed, 0);
    kint(f, 2, "threads", (uint64_t)res->threads, 0);
    kint(f, 2, "proposed", (uint64_t)res->proposed, 0);
    kint(f, 2, "evaluated", (uint64_t)res->evaluated, 0);
    kint(f, 2, "valid", (uint64_t)res->valid, 0);
    kint(f, 2, "pruned", (uint64_t)res->pruned, 0);
    kint(f, 2, "refined", (uint64_t)res->refined, 0);
    key(f, 2, "invalid");
    fputs("{", f);
    int first = 1;
    for (int k = 1; k < NM_REJECT_KINDS; k++) {
        if (!res->invalid[k])
            continue;
        fputs(first ? "\n" : ",\n", f);
        first = 0;
        key(f, 3, reject_name(k));
        fprintf(f, "%llu", (unsigned long long)res->invalid[k]);
    }
    fputs(first ? "},\n" : "\n  },\n", f);
    knum(f, 2, "evaluations_per_second", res->evals_per_second, 0);;
    knum(f, 2, "wall_seconds", res->seconds, 0);;
    kstr(f, 2, "stopped_by", res->stopped_by, 0);
    key(f, 2, "proven_optimal");
    fputs(res->proven_optimal ? "true" : "false", f);
    /* the proven bound on the first metric, and how far the best lies above */
    double lb = nm_search_lower_bound(o, res, arch, wl);
    fputs(",\n", f);
    key(f, 2, "lower_bound");
    if (lb == lb && lb < INFINITY)
        num(f, lb);
    else
        fputs("null", f);
    fputs(",\n", f);
    key(f, 2, "gap");
    if (res->found && lb > 0 && lb < INFINITY)
        num(f, res->best.score[0] / lb);
    else
        fputs("null", f);
    fputs("\n },\n", f);
    /* How far the result is from what any mapping could do. */
    nm_roofline r;
    nm_roofline_of(&r, arch, wl);
    key(f, 1, "bound");
    fputs("{\n", f);
    kint(f, 2, "cycles", (uint64_t)r.bound_cycles, 0);
    kstr(f, 2, "bound_by", nm_roofline_binding_name(r.binding), 0);
    knum(f, 2, "least_energy_pj", r.energy_pj, 0);
    key(f, 2, "cycles_over_bound");
    if (res->found)
        num(f, (double)res->best_stats.cycles / r.bound_cycles);
    else
        fputs("null", f);
    fputs(",\n", f);
    key(f, 2, "energy_over_bound");
    if (res->found && r.energy_pj > 0)
        num(f, res->best_stats.energy / r.energy_pj);
    else
        fputs("null", f);
    fputs("\n }\n}\n", f);
}

void nm_report_bound_text(FILE *f, const nm_arch *arch, const nm_workload *wl, const nm_stats *st)
{
    nm_roofline r;
    nm_roofline_of(&r, arch, wl);
    fprintf(f, "Cycle bound   : %.0f (roofline, bound by %s); this mapping takes %.2fx\n",
            r.bound_cycles, nm_roofline_binding_name(r.binding),
            (double)st->cycles / r.bound_cycles);
    if (r.energy_pj > 0 && nm_sparse_removes(arch, wl))
        fprintf(f, "Energy bound  : %.2f pJ (every operation on two nonzero operands; sparse "
                   "optimizations may skip any traffic); this mapping spends %.2fx\n",
                r.energy_pj, st->energy / r.energy_pj);
    else if (r.energy_pj > 0)
        fprintf(f, "Energy bound  : %.2f pJ (every operation, each tensor once at %s); this "
                   "mapping spends %.2fx\n", r.energy_pj, arch->level[arch->nlevels - 1].name,
                st->energy / r.energy_pj);
}

/* What the operand floor counts, in the "Operand floor" line and the
 * gap's source (nm_roofline_operand_bound). */
#define OPERAND_FLOOR                                                                              \
    "every operand read from the innermost level keeping it, each level keeping a tensor "        \
    "filled with its share once or as often as its capacity forces, each word carried the "       \
    "fewest network hops its receivers' places allow, over the fan-outs the constraints allow"

void nm_report_gap_text(FILE *f, const nm_arch *arch, const nm_workload *wl,
                        const nm_search_result *res, const nm_search_opts *o)
{
    double lb = nm_search_lower_bound(o, res, arch, wl);
    if (!res->found || !(lb > 0) || lb == INFINITY)
        return;
    nm_roofline r, rf;
    nm_roofline_of(&r, arch, wl);
    nm_search_roofline(res, arch, wl, &rf);
    if (rf.bound_cycles > r.bound_cycles)
        fprintf(f, "Fill bound    : the constraints keep at most %.0f of %lld arithmetic units "
                   "busy at once: at least %.0f cycles; this mapping takes %.2fx\n",
                (double)res->fill, (long long)arch->arith.instances,
                rf.bound_cycles, (double)res->best_stats.cycles / rf.bound_cycles);
    if (res->operands.metric < INFINITY &&
        (res->operands.energy > r.energy_pj * (1 + 1e-9) ||
         res->operands.cycles > rf.bound_cycles))
        fprintf(f, "Operand floor : %.2f pJ and %.0f cycles at least (%s); "
                   "this mapping spends %.2fx and takes %.2fx\n", res->operands.energy,
                res->operands.cycles, OPERAND_FLOOR, res->best_stats.energy / res->operands.energy,
                (double)res->best_stats.cycles / res->operands.cycles);
    double with_fill = nm_metric_roofline(o->metric[0], &rf);
    double operands = res->operands.metric < INFINITY ? res->operands.metric : 0.0;
    int optimal = lb > fmax(with_fill, operands);
    int fill = with_fill > nm_metric_roofline(o->metric[0], &r);
    fprintf(f, "Gap           : %.4gx at most: the %s %.6g %s over its proven lower bound "
               "%.6g (%s)\n", res->best.score[0] / lb, nm_metric_name(o->metric[0]),
            res->best.score[0], nm_metric_unit(o->metric[0]), lb,
            res->proven_optimal  ? "optimal proved it"
            : optimal            ? "optimal's bound on what it did not search"
            : operands > with_fill ? "the operand floor: " OPERAND_FLOOR
            : fill                 ? "the roofline's energy and the fill bound's cycles"
                                   : "the roofline's energy and cycles");
}

void nm_report_search_text(FILE *f, const nm_arch *arch, const nm_workload *wl,
                           const nm_search_result *res, const nm_search_opts *o)
{
    fprintf(f, "search: %s, %llu proposed, %llu valid", o->algorithm,
            (unsigned long long)res->proposed, (unsigned long long)res->valid);
    if (res->pruned)
        fprintf(f, ", %llu pruned by the bound", (unsigned long long)res->pruned);
    for (int k = 1; k < NM_REJECT_KINDS; k++) {
        if (!res->invalid[k])
            continue;
        fprintf(f, ", %llu %s", (unsigned long long)res->invalid[k], reject_name(k));
        /* Name the levels at fault. */
        int first = 1;
        for (int l = 0; l < arch->nlevels; l++) {
            if (!res->invalid_at[k][l])
                continue;
            fprintf(f, "%s%s %llu", first ? " (" : ", ", arch->level[l].name,
                    (unsigned long long)res->invalid_at[k][l]);
            first = 0;
        }
        if (!first)
            fputc(')', f);
    }
    fprintf(f, "; %.2f s on %d thread%s (%.0f evaluations/s/thread); stopped: %s", res->seconds,
            res->threads, res->threads == 1 ? "" : "s", res->evals_per_second, res->stopped_by);
    if (res->refined)
        fprintf(f, "; then %llu mappings tried by local search",
                (unsigned long long)res->refined);
    if (!strcmp(o->algorithm, "optimal")) {
        if (res->proven_optimal)
            fprintf(f, "; proven optimal");
        else if (res->found && res->lower_bound == res->lower_bound && res->lower_bound > 0) {
            /* its own bound on what it did not search, or the roofline's
             * where that is higher (then the gap is the Gap line's) */
            double lb = nm_search_lower_bound(o, res, arch, wl);
            fprintf(f, "; not proven: the best %s is at most %.2f%% above the optimum "
                    "(bound %.6g %s%s)", nm_metric_name(o->metric[0]),
                    100.0 * (res->best.score[0] / lb - 1.0), lb, nm_metric_unit(o->metric[0]),
                    lb <= res->lower_bound                    ? ""
                    : res->operands.metric >= lb ? ", the operand floor's"
                                                 : ", the roofline's");
        }
        else
            fprintf(f, "; not proven optimal (bound unknown)");
    }
    fputc('\n', f);
}

void nm_report_found_csv(FILE *f, const nm_search_result *res, const nm_search_opts *o,
                         int which)
{
    const nm_found *list = which ? res->top : res->pareto;
    int n = which ? res->ntop : res->npareto;
    fputs("rank,energy_pj,cycles,edp_j_cycles,last_level_accesses", f);
    for (int i = 0; i < o->nmetrics; i++)
        fprintf(f, ",objective_%s", nm_metric_name(o->metric[i]));
    fputs(",candidate,map\n", f);
    for (int i = 0; i < n; i++) {
        const nm_found *x = &list[i];
        fprintf(f, "%d,%.17g,%llu,%.17g,%llu", i + 1, x->energy, (unsigned long long)x->cycles,
                x->energy * 1e-12 * (double)x->cycles, (unsigned long long)x->lla);
        for (int k = 0; k < o->nmetrics; k++)
            fprintf(f, ",%.17g", x->score[k]);
        fprintf(f, ",%llu,%s/%d.map.yaml\n", (unsigned long long)x->index,
                which ? "top" : "pareto", i + 1);
    }
}

void nm_report_ert(FILE *f, const nm_arch *arch)
{
    const nm_arith *A = &arch->arith;
    fputs("ERT:\n  version: '0.4'\n  tables:\n", f);
    for (int l = arch->nlevels - 1; l >= 0; l--) { /* dummies too: a faithful copy */
        const nm_level *L = &arch->level[l];
        fprintf(f, "  - name: %s[1..%lld]\n    actions:\n", L->name, (long long)L->instances);
        fprintf(f, "    - {name: read, energy: %.17g}\n", L->e_read);
        fprintf(f, "    - {name: write, energy: %.17g}\n", L->e_fill);
        fprintf(f, "    - {name: update, energy: %.17g}\n", L->e_update);
        fprintf(f, "    - {name: leak, energy: %.17g}\n", L->e_leak);
        if (!arch->sparse.given)
            continue;
        /* the sparse actions, their fall-backs resolved (energy.c) */
        static const char *const acc[3] = {"read", "fill", "update"};
        static const char *const how[3] = {"random_", "gated_", "skipped_"};
        for (int k = 0; k < 3; k++)
            fprintf(f, "    - {name: gated_%s, energy: %.17g}\n"
                    "    - {name: skipped_%s, energy: %.17g}\n",
                    acc[k], L->e_gated[k], acc[k], L->e_skipped[k]);
        for (int h = 0; h < 3; h++)
            for (int k = 0; k < 3; k++)
                fprintf(f, "    - {name: %smetadata_%s, energy: %.17g}\n", how[h], acc[k],
                        L->e_meta[h][k]);
        fprintf(f, "    - {name: decompression_count, energy: %.17g}\n"
                "    - {name: compression_count, energy: %.17g}\n", L->e_decompress,
                L->e_compress);
    }
    fprintf(f, "  - name: %s[1..%lld]\n    actions:\n    - {name: compute, energy: %.17g}\n",
            A->name, (long long)A->instances, A->e_compute);
    if (arch->sparse.given)
        fprintf(f, "    - {name: mac_gated, energy: %.17g}\n"
                "    - {name: mac_skipped, energy: %.17g}\n", A->e_gated, A->e_skipped);
}

void nm_report_art(FILE *f, const nm_arch *arch)
{
    const nm_arith *A = &arch->arith;
    fputs("ART:\n  version: '0.4'\n  tables:\n", f);
    for (int l = arch->nlevels - 1; l >= 0; l--)
        fprintf(f, "  - {name: \"%s[1..%lld]\", area: %.17g}\n", arch->level[l].name,
                (long long)arch->level[l].instances, arch->level[l].area);
    fprintf(f, "  - {name: \"%s[1..%lld]\", area: %.17g}\n", A->name, (long long)A->instances,
            A->area);
}

void nm_report_energy(FILE *f, const nm_arch *arch, int format)
{
    const nm_arith *A = &arch->arith;
    if (format == 2) {
        nm_report_ert(f, arch);
        nm_report_art(f, arch);
        return;
    }
    if (format == 1) {
        fputs("{\n", f);
        key(f, 1, "components");
        fputs("[\n", f);
        int first = 1;
        for (int l = arch->nlevels - 1; l >= 0; l--) {
            const nm_level *L = &arch->level[l];
            if (L->dummy)
                continue;
            fputs(first ? "  {\n" : ",\n  {\n", f);
            first = 0;
            kstr(f, 3, "name", L->name, 0);
            kstr(f, 3, "class", L->cls, 0);
            if (L->subclass[0])
                kstr(f, 3, "subclass", L->subclass, 0);
            kint(f, 3, "instances", (uint64_t)L->instances, 0);
            knum(f, 3, "bits_per_access", (double)L->word_bits * L->block_size * L->cluster_size, 0);;
            knum(f, 3, "read_pj", L->e_read, 0);;
            knum(f, 3, "write_pj", L->e_fill, 0);;
            knum(f, 3, "update_pj", L->e_update, 0);;
            knum(f, 3, "leak_pj_per_cycle", L->e_leak, 0);;
            knum(f, 3, "area_um2", L->area, 0);;
            if (L->compose)
                kstr(f, 3, "composition", L->compose, 0);
            key(f, 3, "source");
            nm_report_json_string(f, source_text(L->esrc, L->esrc_note));
            fputs("\n  }", f);
        }
        fputs(first ? "  {\n" : ",\n  {\n", f);
        kstr(f, 3, "name", A->name, 0);
        kstr(f, 3, "class", A->cls, 0);
        kint(f, 3, "instances", (uint64_t)A->instances, 0);
        knum(f, 3, "compute_pj", A->e_compute, 0);;
        knum(f, 3, "area_um2", A->area, 0);;
        if (A->compose)
            kstr(f, 3, "composition", A->compose, 0);
        key(f, 3, "source");
        nm_report_json_string(f, source_text(A->esrc, A->esrc_note));
        fputs("\n  }\n ]\n}\n", f);
        return;
    }
    fprintf(f, "%-24s %-18s %9s %6s %11s %11s %11s %11s %12s  %s\n", "component", "class",
            "instances", "bits", "read pJ", "write pJ", "update pJ", "leak pJ/cyc", "area um^2",
            "source");
    for (int l = arch->nlevels - 1; l >= 0; l--) {
        const nm_level *L = &arch->level[l];
        if (L->dummy)
            continue;
        fprintf(f, "%-24s %-18s %9lld %6d %11.5g %11.5g %11.5g %11.5g %12.6g  %s\n", L->name,
                L->subclass[0] ? L->subclass : L->cls, (long long)L->instances, L->word_bits * L->block_size * L->cluster_size,
                L->e_read, L->e_fill, L->e_update, L->e_leak, L->area,
                source_text(L->esrc, L->esrc_note));
    }
    fprintf(f, "%-24s %-18s %9lld %6s %11s %11s %11s %11s %12.6g  %s (compute %.5g pJ)\n",
            A->name, A->cls, (long long)A->instances, "", "", "", "", "", A->area,
            source_text(A->esrc, A->esrc_note), A->e_compute);
    fputs("\nEnergies are per vector access of 'bits' bits (a block of words); area per "
          "instance.\n", f);
    int builtin = A->esrc == NM_ESRC_BUILTIN;
    for (int l = 0; l < arch->nlevels; l++)
        builtin |= arch->level[l].esrc == NM_ESRC_BUILTIN;
    if (builtin)
        fprintf(f, "Built-in leakage: SRAM and register files as Accelergy's CACTI and library "
                "plug-ins give it (fitted), at the %.4g ns clock; arithmetic and DRAM leak "
                "nothing (as in Timeloop's model).  Sources: src/estimate.c.\n",
                arch->cycle_seconds * 1e9);
    int compound = A->compose != NULL;
    for (int l = 0; l < arch->nlevels; l++)
        compound |= arch->level[l].compose != NULL;
    if (compound) {
        fputs("\nCompound components (pJ per action, parts as energy x count):\n", f);
        for (int l = arch->nlevels - 1; l >= 0; l--)
            compose_text(f, arch->level[l].name, arch->level[l].cls, arch->level[l].compose);
        compose_text(f, A->name, A->cls, A->compose);
    }

}

/* One row of the comparison: a component's action. */
static void compare_row(FILE *f, int json, int *first, const char *comp, const char *cls,
                        const char *action, double given, const char *src, double builtin,
                        int *within, int *rows)
{
    double ratio = given > 0 ? builtin / given : (builtin > 0 ? -1.0 : 1.0);
    int ok = ratio >= 1.0 / 1.5 && ratio <= 1.5;
    *within += ok;
    (*rows)++;
    if (json) {
        fputs(*first ? "  {\n" : ",\n  {\n", f);
        *first = 0;
        kstr(f, 3, "component", comp, 0);
        kstr(f, 3, "class", cls, 0);
        kstr(f, 3, "action", action, 0);
        knum(f, 3, "given_pj", given, 0);;
        kstr(f, 3, "given_source", src, 0);
        knum(f, 3, "builtin_pj", builtin, 0);;
        key(f, 3, "ratio");
        if (ratio < 0)
            fputs("null", f);
        else
            num(f, ratio);
        fputs(",\n", f);
        key(f, 3, "within_1_5x");
        fputs(ok ? "true\n  }" : "false\n  }", f);
        return;
    }
    char r[32];
    if (ratio < 0)
        snprintf(r, sizeof r, "-");
    else
        snprintf(r, sizeof r, "%.2f", ratio);
    fprintf(f, "%-24s %-18s %-8s %12.5g %12.5g %7s %s\n", comp, cls, action, given, builtin, r,
            ok ? "" : "  (beyond 1.5x)");
}

void nm_report_energy_compare(FILE *f, const nm_arch *given, const nm_arch *builtin, int json)
{
    int first = 1, within = 0, rows = 0;
    if (json)
        fputs("{\n \"rows\": [\n", f);
    else
        fprintf(f, "%-24s %-18s %-8s %12s %12s %7s\n", "component", "class", "action",
                "given pJ", "built-in pJ", "ratio");
    for (int l = given->nlevels - 1; l >= 0; l--) {
        const nm_level *G = &given->level[l], *B = &builtin->level[l];
        if (G->dummy)
            continue;
        const char *src = source_text(G->esrc, G->esrc_note);
        const char *cls = G->subclass[0] ? G->subclass : G->cls;
        compare_row(f, json, &first, G->name, cls, "read", G->e_read, src, B->e_read, &within,
                    &rows);
        compare_row(f, json, &first, G->name, cls, "write", G->e_fill, src, B->e_fill, &within,
                    &rows);
        compare_row(f, json, &first, G->name, cls, "update", G->e_update, src, B->e_update,
                    &within, &rows);
    }
    const nm_arith *GA = &given->arith;
    compare_row(f, json, &first, GA->name, GA->subclass[0] ? GA->subclass : GA->cls, "compute",
                GA->e_compute, source_text(GA->esrc, GA->esrc_note), builtin->arith.e_compute,
                &within, &rows);
    if (json) {
        fputs(first ? " ],\n" : "\n ],\n", f);
        kint(f, 1, "rows_within_1_5x", (uint64_t)within, 0);
        kint(f, 1, "row_count", (uint64_t)rows, 1);
        fputs("}\n", f);
        return;
    }
    fprintf(f, "\n%d of %d within 1.5x (ratio = built-in / given; leakage not compared)\n",
            within, rows);
}

/* ---- networks ---- */

#define WHY_MAX (NM_ERROR_FILE_MAX + NM_ERROR_MSG_MAX + 64)

/* Totals over the layers that have a mapping, repeats counted. */
static const nm_search_result *layer_result(const nm_network *net, const nm_layer_result *out,
                                            int i, const nm_layer_result **lr)
{
    *lr = &out[net->layer[i].same_as];
    return (*lr)->status == NM_OK && (*lr)->res.found ? &(*lr)->res : NULL;
}

/* The commonest reason a search's candidates failed, and at which level
 * (NM_MAX_LEVELS: none). */
static void worst_reject(const nm_search_result *r, int *kind, int *at)
{
    int worst = 0, l0 = NM_MAX_LEVELS;
    for (int k = 1; k < NM_REJECT_KINDS; k++)
        if (r->invalid[k] > r->invalid[worst])
            worst = k;
    for (int l = 0; l <= NM_MAX_LEVELS; l++)
        if (r->invalid_at[worst][l] > r->invalid_at[worst][l0])
            l0 = l;
    *kind = worst;
    *at = l0;
}

int nm_report_backing_note(char *buf, size_t size, const nm_arch *arch,
                           const nm_search_result *r)
{
    int kind, at;
    worst_reject(r, &kind, &at);
    const nm_level *top = arch->nlevels > 0 ? &arch->level[arch->nlevels - 1] : NULL;
    int small = !r->found && kind == NM_INV_CAPACITY && top && at == arch->nlevels - 1 &&
                !top->is_dram;
    if (buf && size)
        buf[0] = '\0';
    if (small && buf)
        snprintf(buf, size, "; %s, the outermost level, is the backing store (the design has "
                 "no DRAM) and must hold every tensor it keeps whole", top->name);
    return small;
}

void nm_report_layer_failure(char *buf, size_t size, const nm_arch *arch,
                             const nm_layer_result *lr)
{
    if (lr->status != NM_OK) {
        if (lr->err.file[0])
            snprintf(buf, size, "%s:%d:%d: %s", lr->err.file, lr->err.line, lr->err.col,
                     lr->err.msg);
        else
            snprintf(buf, size, "%s", lr->err.msg);
        return;
    }
    const nm_search_result *r = &lr->res;
    int worst, at;
    worst_reject(r, &worst, &at);
    char note[NM_REPORT_NOTE_MAX];
    nm_report_backing_note(note, sizeof note, arch, r);
    snprintf(buf, size, "no valid mapping among %llu candidates (mostly %s%s%s)%s",
             (unsigned long long)r->proposed, reject_name(worst),
             at < arch->nlevels ? " at " : "", at < arch->nlevels ? arch->level[at].name : "",
             note);
}

/* The network's score on o's first metric: the metric of its totals. */
static double network_score(const nm_search_opts *o, const nm_network_total *t)
{
    return nm_metric_value(o->metric[0], t->energy, t->cycles, t->lla);
}

static void network_text(FILE *f, const nm_arch *arch, const nm_network *net,
                         const nm_layer_result *out, const nm_search_opts *o)
{
    nm_network_total t;
    nm_network_totals(arch, net, out, &t);
    fprintf(f, "network %s: %d layers (%d distinct), %.4g MACs; %s search, %s", net->name,
            net->nlayers, net->ndistinct, nm_network_macs(net), o->algorithm,
            nm_metric_name(o->metric[0]));
    for (int m = 1; m < o->nmetrics; m++)
        fprintf(f, ", %s", nm_metric_name(o->metric[m]));
    fprintf(f, ", seed %llu\n\n", (unsigned long long)o->seed);
    fprintf(f, "%-20s %6s %14s %14s %14s %7s %9s %8s\n", "layer", "repeat", "MACs",
            "energy (uJ)", "cycles", "util %", "pJ/MAC", "/bound");
    for (int i = 0; i < net->nlayers; i++) {
        const nm_layer *ly = &net->layer[i];
        const nm_layer_result *lr;
        const nm_search_result *r = layer_result(net, out, i, &lr);
        double macs = (double)nm_workload_ops(&ly->wl);
        fprintf(f, "%-20s %6lld %14.0f ", ly->name, (long long)ly->repeat, macs);
        if (!r) {
            char why[WHY_MAX];
            nm_report_layer_failure(why, sizeof why, arch, lr);
            fprintf(f, "%s\n", why);
            continue;
        }
        const nm_stats *st = &r->best_stats;
        nm_roofline rl;
        nm_roofline_of(&rl, arch, &ly->wl);
        fprintf(f, "%14.4f %14llu %7.2f %9.4f %8.2f", st->energy * 1e-6,
                (unsigned long long)st->cycles, 100.0 * st->utilization, st->energy / macs,
                (double)st->cycles / rl.bound_cycles);
        if (ly->same_as != i)
            fprintf(f, "   (as %s)", net->layer[ly->same_as].name);
        fputc('\n', f);
    }
    fprintf(f, "%-20s %6s %14.0f %14.4f %14.0f %7.2f %9.4f %8.2f\n",
            t.failed ? "total (mapped)" : "total", "", t.macs, t.energy * 1e-6, t.cycles,
            t.cycles > 0 ? 100.0 * t.busy / t.cycles : 0.0, t.macs > 0 ? t.energy / t.macs : 0.0,
            t.bound_cycles > 0 ? t.cycles / t.bound_cycles : 0.0);
    fprintf(f, "/bound: cycles over the layer's roofline bound (nestmap bound); the energy is "
               "%.2fx its bound (every operation, each tensor once off-chip)\n",
            t.bound_energy > 0 ? t.energy / t.bound_energy : 0.0);
    nm_bound_sum bs;
    nm_bound_sum_init(&bs, o->metric[0]);
    nm_network_bound(arch, net, out, NULL, o, &bs);
    double lb = nm_bound_sum_value(&bs);
    if (t.mapped && lb > 0)
        fprintf(f, "gap: %.4gx at most: the total's %s over its proven lower bound %.6g %s "
                   "(the layers' bounds combined; see nestmap(1), network)\n",
                network_score(o, &t) / lb, nm_metric_name(o->metric[0]), lb,
                nm_metric_unit(o->metric[0]));
    if (t.failed)
        fprintf(f, "%d of %d layers have no mapping and are left out of the total\n", t.failed,
                net->nlayers);
    if (arch->clock_given && t.cycles > 0)
        fprintf(f, "at %.6g MHz: %.6g s, %.4g inferences/s, %.4g W average\n",
                1e-6 / arch->cycle_seconds, t.cycles * arch->cycle_seconds,
                1.0 / (t.cycles * arch->cycle_seconds),
                t.energy * 1e-12 / (t.cycles * arch->cycle_seconds));
    fprintf(f, "\nenergy per MAC by level (pJ/MAC; layers run one after another):\n");
    for (int l = 0; l <= arch->nlevels; l++)
        if (l == arch->nlevels || !arch->level[l].dummy)
            fprintf(f, "  %-24s %10.4f\n",
                    l < arch->nlevels ? arch->level[l].name : arch->arith.name,
                    t.macs > 0 ? t.level[l] / t.macs : 0.0);
}

static void level_object(FILE *f, int indent, const nm_arch *arch, const double *pj, double div)
{
    fputs("{\n", f);
    for (int l = 0; l <= arch->nlevels; l++)
        knum(f, indent + 2, l < arch->nlevels ? arch->level[l].name : arch->arith.name,
             div > 0 ? pj[l] / div : 0.0, l == arch->nlevels);
    fprintf(f, "%*s}", indent, "");
}

static void network_json(FILE *f, const nm_arch *arch, const nm_network *net,
                         const nm_layer_result *out, const nm_network_fusion *fu,
                         const nm_search_opts *o)
{
    nm_network_total t;
    nm_network_totals(arch, net, out, &t);
    fputs("{\n", f);
    kstr(f, 2, "network", net->name, 0);
    kstr(f, 2, "algorithm", o->algorithm, 0);
    kint(f, 2, "seed", (uint64_t)o->seed, 0);
    key(f, 2, "layers");
    fputs("[\n", f);
    for (int i = 0; i < net->nlayers; i++) {
        const nm_layer *ly = &net->layer[i];
        const nm_layer_result *lr;
        const nm_search_result *r = layer_result(net, out, i, &lr);
        fputs("    {\n", f);
        kstr(f, 6, "name", ly->name, 0);
        kstr(f, 6, "same_as", net->layer[ly->same_as].name, 0);
        kint(f, 6, "repeat", (uint64_t)ly->repeat, 0);
        kint(f, 6, "macs", (uint64_t)nm_workload_ops(&ly->wl), 0);
        key(f, 6, "valid");
        fputs(r ? "true" : "false", f);
        if (!r) {
            char why[WHY_MAX];
            nm_report_layer_failure(why, sizeof why, arch, lr);
            fputs(",\n", f);
            key(f, 6, "reason");
            nm_report_json_string(f, why);
            fputs("\n    }", f);
        } else {
            const nm_stats *st = &r->best_stats;
            fputs(",\n", f);
            knum(f, 6, "energy_pj", st->energy, 0);;
            kint(f, 6, "cycles", (uint64_t)st->cycles, 0);
            knum(f, 6, "utilization_pct", 100.0 * st->utilization, 0);;
            nm_roofline rl;
            nm_roofline_of(&rl, arch, &ly->wl);
            kint(f, 6, "bound_cycles", (uint64_t)rl.bound_cycles, 0);
            knum(f, 6, "cycles_over_bound", (double)st->cycles / rl.bound_cycles, 0);
            knum(f, 6, "energy_bound_pj", rl.energy_pj, 0);
            knum(f, 6, "energy_over_bound", rl.energy_pj > 0 ? st->energy / rl.energy_pj : 0.0, 0);
            double lb = nm_search_lower_bound(o, r, arch, &ly->wl);
            knum(f, 6, "lower_bound", lb, 0);
            knum(f, 6, "gap", lb > 0 ? r->best.score[0] / lb : 0.0, 0);
            double pj[NM_MAX_LEVELS + 1];
            for (int l = 0; l < arch->nlevels; l++)
                pj[l] = st->level[l].energy;
            pj[arch->nlevels] = st->compute_energy;
            key(f, 6, "energy_pj_by_level");
            level_object(f, 6, arch, pj, 1.0);
            if (arch->noc) { /* the networks between levels: in energy_pj, not by level */
                double noc = 0.0;
                for (int l = 0; l < arch->nlevels; l++)
                    noc += st->level[l].noc_energy;
                fputs(",\n", f);
                key(f, 6, "on_chip_network_energy_pj");
                num(f, noc);
            }
            fputs("\n    }", f);
        }
        fputs(i + 1 < net->nlayers ? ",\n" : "\n", f);
    }
    fputs("  ],\n", f);
    key(f, 2, "summary");
    fputs("{\n", f);
    kint(f, 4, "layers_mapped", (uint64_t)t.mapped, 0);
    kint(f, 4, "layers_failed", (uint64_t)t.failed, 0);
    kint(f, 4, "macs", (uint64_t)t.macs, 0);
    knum(f, 4, "energy_pj", t.energy, 0);;
    kint(f, 4, "cycles", (uint64_t)t.cycles, 0);
    knum(f, 4, "utilization_pct", t.cycles > 0 ? 100.0 * t.busy / t.cycles : 0.0, 0);;
    knum(f, 4, "pj_per_mac", t.macs > 0 ? t.energy / t.macs : 0.0, 0);;
    kint(f, 4, "bound_cycles", (uint64_t)t.bound_cycles, 0);
    knum(f, 4, "cycles_over_bound", t.bound_cycles > 0 ? t.cycles / t.bound_cycles : 0.0, 0);
    knum(f, 4, "energy_bound_pj", t.bound_energy, 0);
    knum(f, 4, "energy_over_bound", t.bound_energy > 0 ? t.energy / t.bound_energy : 0.0, 0);
    nm_bound_sum bs;
    nm_bound_sum_init(&bs, o->metric[0]);
    nm_network_bound(arch, net, out, NULL, o, &bs);
    double lb = nm_bound_sum_value(&bs);
    knum(f, 4, "lower_bound", lb, 0);
    knum(f, 4, "gap", lb > 0 ? network_score(o, &t) / lb : 0.0, 0);
    if (arch->clock_given) {
        knum(f, 4, "clock_hz", 1.0 / arch->cycle_seconds, 0);;
        knum(f, 4, "seconds", t.cycles * arch->cycle_seconds, 0);;
    }
    key(f, 4, "pj_per_mac_by_level");
    level_object(f, 4, arch, t.level, t.macs);
    fputs("\n  }", f);
    if (fu)
        nm_report_network_fusion(f, arch, net, out, fu, o, 1);
    fputs("\n}\n", f);
}

/* A CSV field, quoted (RFC 4180) when it holds a comma, quote or newline. */
void nm_report_csv_field(FILE *f, const char *s)
{
    if (!strpbrk(s, ",\"\n\r")) {
        fputs(s, f);
        return;
    }
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"')
            fputc('"', f);
        fputc(*s, f);
    }
    fputc('"', f);
}

static void network_csv(FILE *f, const nm_arch *arch, const nm_network *net,
                        const nm_layer_result *out, const nm_search_opts *o)
{
    fputs("layer,same_as,repeat,macs,valid,energy_pj,cycles,utilization_pct,pj_per_mac,"
          "bound_cycles,cycles_over_bound,energy_bound_pj,energy_over_bound,lower_bound,gap,"
          "reason\n", f);
    for (int i = 0; i < net->nlayers; i++) {
        const nm_layer *ly = &net->layer[i];
        const nm_layer_result *lr;
        const nm_search_result *r = layer_result(net, out, i, &lr);
        double macs = (double)nm_workload_ops(&ly->wl);
        nm_report_csv_field(f, ly->name);
        fputc(',', f);
        nm_report_csv_field(f, net->layer[ly->same_as].name);
        fprintf(f, ",%lld,%.0f,", (long long)ly->repeat, macs);
        if (r) {
            const nm_stats *st = &r->best_stats;
            nm_roofline rl;
            nm_roofline_of(&rl, arch, &ly->wl);
            double lb = nm_search_lower_bound(o, r, arch, &ly->wl);
            fprintf(f, "1,%.17g,%llu,%.17g,%.17g,%.0f,%.17g,%.17g,%.17g,%.17g,%.17g,\n",
                    st->energy, (unsigned long long)st->cycles, 100.0 * st->utilization,
                    st->energy / macs, rl.bound_cycles, (double)st->cycles / rl.bound_cycles,
                    rl.energy_pj, rl.energy_pj > 0 ? st->energy / rl.energy_pj : 0.0, lb,
                    lb > 0 ? r->best.score[0] / lb : 0.0);
        } else {
            char why[WHY_MAX];
            nm_report_layer_failure(why, sizeof why, arch, lr);
            fputs("0,,,,,,,,,,,", f);
            nm_report_csv_field(f, why);
            fputc('\n', f);
        }
    }
}

void nm_report_network_fused(FILE *f, const nm_arch *arch, const nm_network *net,
                             const nm_layer_result *out, const nm_network_fusion *fu,
                             const nm_search_opts *o, int format)
{
    if (format == 1) {
        network_json(f, arch, net, out, fu, o);
    } else if (format == 2) {
        network_csv(f, arch, net, out, o);
    } else {
        network_text(f, arch, net, out, o);
        if (fu)
            nm_report_network_fusion(f, arch, net, out, fu, o, 0);
    }
}

void nm_report_network(FILE *f, const nm_arch *arch, const nm_network *net,
                       const nm_layer_result *out, const nm_search_opts *o, int format)
{
    nm_report_network_fused(f, arch, net, out, NULL, o, format);
}
