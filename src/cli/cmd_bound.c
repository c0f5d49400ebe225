/* cmd_bound.c — `nestmap bound FILES...`: the roofline bound of a workload
 * on a design, before any mapping: operations, the least traffic (every
 * tensor moved once to or from the outermost level), arithmetic intensity,
 * and whether compute or memory bandwidth bounds the time. */
#include <config.h>

#include <math.h>
#include <stdio.h>

#include "cli.h"
#include "nestmap/report.h"
#include "nestmap/spec.h"

static const char usage[] =
    "usage: nestmap bound [OPTIONS] FILES...\n\n"
    "The roofline bound of the problem on the architecture: multiply-accumulates,\n"
    "bytes of each tensor (each moved once to or from the outermost level, the\n"
    "least any mapping can move), arithmetic intensity, and the cycles that the\n"
    "arithmetic units and the outermost level's bandwidth each impose.\n\n"
    "options:\n"
    "  --json       the same as JSON\n"
    "  -q, --quiet  no warnings\n";

int nm_cmd_bound(int argc, char **argv)
{
    nm_cli_opts o;
    nm_spec spec;
    int rc = nm_cli_begin(argc, argv, usage, NM_NEED_ARCH | NM_NEED_PROBLEM, &o, &spec);
    if (rc >= 0)
        return rc;
    const nm_arch *arch = &spec.arch;
    const nm_workload *wl = &spec.wl;
    const nm_level *top = &arch->level[arch->nlevels - 1];
    double macs = (double)nm_workload_ops(wl);
    double bytes_per_word = top->word_bits / 8.0;
    double words_in = 0, words_out = 0;
    for (int ds = 0; ds < wl->nds; ds++) {
        double n = (double)nm_workload_ds_size(wl, ds);
        if (wl->ds[ds].read_write)
            words_out += n;
        else
            words_in += n;
    }
    double bytes = (words_in + words_out) * bytes_per_word;
    double compute_cycles = ceil(macs / (double)arch->arith.instances);
    /* Outermost-level bandwidth in words per cycle (per instance x instances). */
    double mem_cycles = NAN;
    const char *bw_note = "no read/write/shared bandwidth given for the outermost level";
    double inst = (double)top->instances;
    if (top->has_shared_bw) {
        mem_cycles = (words_in + words_out) / (top->shared_bw * inst);
        bw_note = "shared bandwidth";
    } else if (top->has_read_bw || top->has_write_bw) {
        double r = top->has_read_bw ? words_in / (top->read_bw * inst) : 0.0;
        double w = top->has_write_bw ? words_out / (top->write_bw * inst) : 0.0;
        mem_cycles = r > w ? r : w;
        bw_note = "read and write bandwidth";
    }
    double bound = isnan(mem_cycles) ? compute_cycles : fmax(compute_cycles, ceil(mem_cycles));
    const char *binding = isnan(mem_cycles) ? "compute (memory unbounded)"
                          : compute_cycles >= mem_cycles ? "compute" : "memory bandwidth";
    if (o.json) {
        printf("{\n \"macs\": %.17g,\n \"tensors\": [", macs);
        for (int ds = 0; ds < wl->nds; ds++) {
            printf("%s\n  {\"name\": ", ds ? "," : "");
            nm_report_json_string(stdout, wl->ds[ds].name);
            printf(", \"words\": %.17g, \"bytes\": %.17g, \"output\": %s}",
                   (double)nm_workload_ds_size(wl, ds),
                   (double)nm_workload_ds_size(wl, ds) * bytes_per_word,
                   wl->ds[ds].read_write ? "true" : "false");
        }
        printf("\n ],\n \"min_bytes\": %.17g,\n \"arithmetic_intensity_macs_per_byte\": %.17g,\n"
               " \"compute_cycles\": %.17g,\n \"memory_cycles\": ",
               bytes, macs / bytes, compute_cycles);
        if (isnan(mem_cycles))
            printf("null");
        else
            printf("%.17g", mem_cycles);
        printf(",\n \"bound_cycles\": %.17g,\n \"bound_by\": ", bound);
        nm_report_json_string(stdout, binding);
        printf("\n}\n");
    } else {
        printf("%s on %s .. %s (%lld %s units)\n\n", wl->name, top->name, arch->level[0].name,
               (long long)arch->arith.instances, arch->arith.name);
        printf("multiply-accumulates   %.0f\n", macs);
        for (int ds = 0; ds < wl->nds; ds++)
            printf("%-22s %.0f words, %.0f bytes%s\n", wl->ds[ds].name,
                   (double)nm_workload_ds_size(wl, ds),
                   (double)nm_workload_ds_size(wl, ds) * bytes_per_word,
                   wl->ds[ds].read_write ? " (output)" : "");
        printf("least traffic          %.0f bytes (each tensor once, %g-bit words at %s)\n", bytes,
               top->word_bits * 1.0, top->name);
        printf("arithmetic intensity   %.3f MACs/byte\n", macs / bytes);
        printf("compute bound          %.0f cycles (%lld units)\n", compute_cycles,
               (long long)arch->arith.instances);
        if (isnan(mem_cycles))
            printf("memory bound           unknown (%s)\n", bw_note);
        else
            printf("memory bound           %.0f cycles (%s of %s)\n", ceil(mem_cycles), bw_note,
                   top->name);
        printf("roofline bound         %.0f cycles: bound by %s\n", bound, binding);
    }
    nm_spec_fini(&spec);
    return 0;
}
