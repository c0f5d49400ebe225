/* cmd_bound.c — `nestmap bound FILES...`: the roofline bound of a workload
 * on a design, before any mapping: operations, the least traffic (every
 * tensor moved once to or from the outermost level), arithmetic intensity,
 * and whether compute or memory bandwidth bounds the time. */
#include <config.h>

#include <math.h>
#include <stdio.h>

#include "cli.h"
#include "nestmap/report.h"
#include "nestmap/roofline.h"
#include "nestmap/spec.h"

static const char usage[] =
    "usage: nestmap bound [OPTIONS] FILES...\n\n"
    "The roofline bound of the problem on the architecture: multiply-accumulates,\n"
    "bytes of each tensor (each moved once to or from the outermost level, the\n"
    "least any mapping can move), arithmetic intensity, and the cycles that the\n"
    "arithmetic units and the outermost level's bandwidth each impose.\n\n"
    "options:\n"
    NM_CLI_SET_USAGE
    "  --json            the same as JSON\n"
    "  -q, --quiet       no warnings\n";

int nm_cmd_bound(int argc, char **argv)
{
    nm_cli_opts o;
    nm_spec spec;
    int rc = nm_cli_begin(argc, argv, "bound", usage, NM_OPT_SET | NM_OPT_JSON, NM_NEED_ARCH | NM_NEED_PROBLEM, &o, &spec);
    if (rc >= 0)
        return rc;
    const nm_arch *arch = &spec.arch;
    const nm_workload *wl = &spec.wl;
    const nm_level *top = &arch->level[arch->nlevels - 1];
    double bytes_per_word = top->word_bits / 8.0;
    nm_roofline r;
    nm_roofline_of(&r, arch, wl);
    double macs = r.macs, bytes = r.bytes, compute_cycles = r.compute_cycles;
    double mem_cycles = r.mem_cycles, bound = r.bound_cycles;
    const char *bw_note = r.bw_note, *binding = nm_roofline_binding_name(r.binding);
    if (o.json) {
        printf("{\n \"macs\": %llu,\n \"tensors\": [", (unsigned long long)nm_workload_ops(wl));
        for (int ds = 0; ds < wl->nds; ds++) {
            printf("%s\n  {\"name\": ", ds ? "," : "");
            nm_report_json_string(stdout, wl->ds[ds].name);
            printf(", \"words\": %llu, \"bytes\": %.17g, \"output\": %s}",
                   (unsigned long long)nm_workload_ds_size(wl, ds),
                   (double)nm_workload_ds_size(wl, ds) * bytes_per_word,
                   wl->ds[ds].read_write ? "true" : "false");
        }
        printf("\n ],\n \"min_bytes\": %.17g,\n \"arithmetic_intensity_macs_per_byte\": %.17g,\n"
               " \"compute_cycles\": %.0f,\n \"memory_cycles\": ",
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
