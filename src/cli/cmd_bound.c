/* cmd_bound.c — `nestmap bound FILES...`: the roofline bound of a workload
 * on a design, before any mapping: operations, the least traffic (every
 * tensor moved once to or from the outermost level), arithmetic intensity,
 * and whether compute or memory bandwidth bounds the time. */
#include <config.h>

#include <math.h>
#include <stdio.h>
#include <string.h>

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

/* words x bits/8 bytes, exactly (an eighth of a byte written as .125). */
static char *bytes_text(nm_count words, int bits, char *buf, size_t size)
{
    nm_count b = words * (nm_count)bits;
    nm_count_text(b / 8, buf, size);
    if (b % 8) {
        size_t n = strlen(buf);
        snprintf(buf + n, size - n, ".%03d", (int)(b % 8) * 125);
    }
    return buf;
}

int nm_cmd_bound(int argc, char **argv)
{
    nm_cli_opts o;
    nm_spec spec;
    int rc = nm_cli_begin(argc, argv, "bound", usage, NM_OPT_SET | NM_OPT_JSON,
                          NM_NEED_ARCH | NM_NEED_PROBLEM, &o, &spec);
    if (rc >= 0)
        return rc;
    const nm_arch *arch = &spec.arch;
    const nm_workload *wl = &spec.wl;
    const nm_level *top = &arch->level[arch->nlevels - 1];
    nm_roofline r;
    nm_roofline_of(&r, arch, wl);
    double macs = r.macs, bytes = r.bytes;
    double mem_cycles = r.mem_cycles, bound = r.bound_cycles;
    const char *bw_note = r.bw_note, *binding = nm_roofline_binding_name(r.binding);
    /* The counts exactly (128 bits): a layer may pass 2^64 MACs. */
    char mac_text[48], words[NM_MAX_DS][48], byte_text[NM_MAX_DS][56], total_text[56];
    nm_count total_words = 0;
    nm_count_text(nm_workload_macs(wl), mac_text, sizeof mac_text);
    for (int ds = 0; ds < wl->nds; ds++) {
        nm_count w = nm_workload_words(wl, ds);
        total_words += w;
        nm_count_text(w, words[ds], sizeof words[ds]);
        bytes_text(w, top->word_bits, byte_text[ds], sizeof byte_text[ds]);
    }
    bytes_text(total_words, top->word_bits, total_text, sizeof total_text);
    char cc_text[48];
    nm_count_text(r.compute_cycles_exact, cc_text, sizeof cc_text);
    char bound_text[64];
    if (r.binding != NM_ROOF_MEMORY) /* the compute bound, exactly */
        snprintf(bound_text, sizeof bound_text, "%s", cc_text);
    else
        snprintf(bound_text, sizeof bound_text, "%.0f", bound);
    if (o.json) {
        nm_cli_json js;
        FILE *out = nm_cli_json_begin(&js);
        fprintf(out, "{\n \"macs\": %s,\n \"tensors\": [", mac_text);
        for (int ds = 0; ds < wl->nds; ds++) {
            fprintf(out, "%s\n  {\"name\": ", ds ? "," : "");
            nm_report_json_string(out, wl->ds[ds].name);
            fprintf(out, ", \"words\": %s, \"bytes\": %s, \"output\": %s}", words[ds], byte_text[ds],
                   wl->ds[ds].read_write ? "true" : "false");
        }
        fprintf(out, "\n ],\n \"min_bytes\": %s,\n \"arithmetic_intensity_macs_per_byte\": %.17g,\n"
               " \"compute_cycles\": %s,\n \"memory_cycles\": ",
               total_text, macs / bytes, cc_text);
        if (isnan(mem_cycles))
            fprintf(out, "null");
        else
            fprintf(out, "%.17g", mem_cycles);
        fprintf(out, ",\n \"bound_cycles\": %.17g,\n \"bound_by\": ", bound);
        nm_report_json_string(out, binding);
        fprintf(out, "\n}\n");
        if (!nm_cli_json_end(&js, &spec.doc))
            rc = 2;
    } else {
        printf("%s on %s .. %s (%lld %s units)\n\n", wl->name, top->name, arch->level[0].name,
               (long long)arch->arith.instances, arch->arith.name);
        printf("multiply-accumulates   %s\n", mac_text);
        for (int ds = 0; ds < wl->nds; ds++)
            printf("%-22s %s words, %s bytes%s\n", wl->ds[ds].name, words[ds], byte_text[ds],
                   wl->ds[ds].read_write ? " (output)" : "");
        printf("least traffic          %s bytes (each tensor once, %d-bit words at %s)\n",
               total_text, top->word_bits, top->name);
        printf("arithmetic intensity   %.3f MACs/byte\n", macs / bytes);
        printf("compute bound          %s cycles (%lld units)\n", cc_text,
               (long long)arch->arith.instances);
        if (isnan(mem_cycles))
            printf("memory bound           unknown (%s)\n", bw_note);
        else
            printf("memory bound           %.0f cycles (%s of %s)\n", ceil(mem_cycles), bw_note,
                   top->name);
        printf("roofline bound         %s cycles: bound by %s\n", bound_text, binding);
    }
    nm_spec_fini(&spec);
    return rc < 0 ? 0 : rc;
}
