/* roofline.c — the roofline bound of a workload on a design; see roofline.h. */
#include <config.h>

#include <math.h>

#include "nestmap/roofline.h"

double nm_roofline_memory_cycles(const nm_level *top, double in_words, double out_words,
                                 const char **note)
{
    /* Bandwidth in words per cycle per instance, times the instances. */
    double inst = (double)top->instances;
    if (top->has_shared_bw) {
        *note = "shared bandwidth";
        return (in_words + out_words) / (top->shared_bw * inst);
    }
    if (top->has_read_bw || top->has_write_bw) {
        double rd = top->has_read_bw ? in_words / (top->read_bw * inst) : 0.0;
        double wr = top->has_write_bw ? out_words / (top->write_bw * inst) : 0.0;
        *note = "read and write bandwidth";
        return rd > wr ? rd : wr;
    }
    *note = "no read/write/shared bandwidth given for the outermost level";
    return NAN;
}

void nm_roofline_of(nm_roofline *r, const nm_arch *arch, const nm_workload *wl)
{
    const nm_level *top = &arch->level[arch->nlevels - 1];
    r->macs = r->effectual_macs = (double)nm_workload_macs(wl);
    r->words_in = r->words_out = 0;
    /* Each tensor at its own width (tensor_datawidth): its bytes, and
     * bandwidth and rows in the outermost level's words. */
    double bits = 0.0, lw_in = 0.0, lw_out = 0.0;
    for (int ds = 0; ds < wl->nds; ds++) {
        double n = (double)nm_workload_held_words(wl, ds);
        int b = nm_level_ds_bits(top, wl, ds);
        double lw = b == top->word_bits ? n : n * b / top->word_bits;
        bits += n * b;
        if (wl->ds[ds].read_write) {
            r->words_out += n;
            lw_out += lw;
        } else {
            r->words_in += n;
            lw_in += lw;
        }
    }
    r->bytes = bits / 8.0;
    nm_count units = (nm_count)arch->arith.instances;
    r->compute_cycles_exact = (nm_workload_macs(wl) + units - 1) / units;
    r->compute_cycles = ceil(r->macs / (double)arch->arith.instances);
    r->mem_cycles = nm_roofline_memory_cycles(top, lw_in, lw_out, &r->bw_note);
    double b = top->block_size > 0 ? (double)top->block_size : 1.0;
    r->energy_pj = r->macs * arch->arith.e_compute + lw_in * top->e_read / b +
                   lw_out * top->e_update / b;
    if (arch->sparse.active) {
        /* Sparse optimizations may skip computes and traffic: what stays
         * is at least every compute whose operands are both nonzero (a
         * storage level's gating or skipping removes computes only where
         * an operand is empty; compute gating keeps them busy), each
         * costing a compute; and at the outermost level, each tensor once,
         * only its nonzeros where some level holds it in a representation
         * format, unless that level gates or skips (then no traffic
         * bound). */
        const nm_sparse *sp = &arch->sparse;
        double eff = r->macs;
        r->words_in = r->words_out = 0.0;
        for (int ds = 0; ds < wl->nds; ds++) {
            uint64_t N = nm_workload_ds_size(wl, ds);
            double d = nm_density_expected(&wl->density[ds], 1, N);
            if (!wl->ds[ds].read_write)
                eff *= d;
            int repr = 0;
            for (int s = 0; s < arch->nlevels; s++)
                repr |= sp->repr[s][ds].nranks > 0;
            double n = (double)nm_workload_held_words(wl, ds) * (repr ? d : 1.0);
            if (wl->ds[ds].read_write)
                r->words_out += n;
            else
                r->words_in += n;
        }
        /* (Timeloop rounds operand densities to six decimals: a margin) */
        eff = floor(eff * (1.0 - 1e-5));
        r->effectual_macs = eff;
        r->compute_cycles = ceil(eff / (double)arch->arith.instances);
        r->compute_cycles_exact = (nm_count)r->compute_cycles;
        r->bytes = (r->words_in + r->words_out) * (top->word_bits / 8.0);
        r->mem_cycles = nm_roofline_memory_cycles(top, r->words_in, r->words_out, &r->bw_note);
        for (int g = 0; g < sp->ngroups; g++)
            if (sp->group[g].level == arch->nlevels - 1) {
                r->mem_cycles = NAN;
                r->bw_note = "none: the outermost level gates or skips";
            }
        r->energy_pj = eff * arch->arith.e_compute;
    }
    if (isnan(r->mem_cycles)) {
        r->bound_cycles = r->compute_cycles;
        r->binding = NM_ROOF_COMPUTE_ONLY;
    } else {
        r->bound_cycles = fmax(r->compute_cycles, ceil(r->mem_cycles));
        r->binding = r->compute_cycles >= r->mem_cycles ? NM_ROOF_COMPUTE : NM_ROOF_MEMORY;
    }
}

const char *nm_roofline_binding_name(nm_roof_binding b)
{
    return b == NM_ROOF_COMPUTE_ONLY ? "compute (memory unbounded)"
           : b == NM_ROOF_COMPUTE   ? "compute"
                                    : "memory bandwidth";
}
