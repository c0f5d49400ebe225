/* cmd_bound.c — `nestmap bound [DESIGN] WORKLOAD`: the roofline of a layer,
 * before any mapping, as a lecture computes it: operations (FLOPs), the bytes
 * of each tensor at a word width (each moved once: the least traffic),
 * arithmetic intensity, and the time the peak rate and the memory bandwidth
 * each impose.  The rates come from the design or from --peak and
 * --bandwidth; with a design, also the cycle bound that map and network
 * compare their results against. */
#include <config.h>

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "nestmap/alloc.h"
#include "nestmap/fusion.h"
#include "nestmap/model.h"
#include "nestmap/plot.h"
#include "nestmap/report.h"
#include "nestmap/roofline.h"
#include "nestmap/spec.h"
#include "nestmap/text.h"

static const char usage[] =
    "usage: nestmap bound [OPTIONS] [DESIGN] WORKLOAD\n\n"
    "The roofline of a layer: its operations (FLOPs: 2 per multiply-accumulate,\n"
    "and 2 per output when it adds a bias), the bytes of each tensor as a\n"
    "framework holds it (each moved once: the least traffic any mapping has),\n"
    "arithmetic intensity, and the time that the peak rate and the memory\n"
    "bandwidth each impose.  The rates come from the design (its arithmetic units\n"
    "and clock, its outermost level's bandwidth) or from --peak and --bandwidth,\n"
    "which need no design.  With a design, also the cycles that map and network\n"
    "compare their results against.\n\n"
    "options:\n"
    "  --precision P     word width of every tensor: fp64, fp32, tf32, fp16, bf16,\n"
    "                    fp8, int32, int16, int8, int4 (default: the design's\n"
    "                    outermost level's word)\n"
    "  --peak R          operations per second, with an SI prefix: 1T, 989.4TFLOP/s\n"
    "  --bandwidth R     memory bandwidth in bytes per second: 1000GB/s, 3.35TB/s\n"
    NM_CLI_SET_USAGE
    "  --json            the same as JSON (times in seconds, rates per second; the\n"
    "                    curve under \"curve\")\n"
    "  --curve           also the least off-chip traffic attainable with a buffer of\n"
    "                    each capacity (Orojenesis, ISCA 2024): every single-buffer\n"
    "                    mapping of the layer counted as the cost model counts, and\n"
    "                    the staircase none beats; with a design, its on-chip\n"
    "                    capacity on it, and with a mapping in the files, what that\n"
    "                    mapping moves off chip.  On a chain of operations (the\n"
    "                    only bound it has): every cut of the chain into groups,\n"
    "                    each operation alone or several fused with their\n"
    "                    intermediates kept in the buffer\n"
    "  --curve-budget N  the most single-buffer mappings --curve evaluates (20000000)\n"
    "  -o DIR            with --curve: DIR/curve.csv and a gnuplot figure (curve.gp,\n"
    "                    rendered to PNG and SVG when gnuplot is installed)\n"
    "  -q, --quiet       no warnings\n";

static const struct precision {
    const char *name;
    int bits;
} precisions[] = {
    {"fp64", 64}, {"fp32", 32}, {"tf32", 32}, {"fp16", 16}, {"bf16", 16},
    {"fp8", 8},   {"int32", 32}, {"int16", 16}, {"int8", 8}, {"int4", 4},
};

/* bits/8 bytes, exactly (an eighth of a byte written as .125). */
static char *bytes_text(nm_count bits, char *buf, size_t size)
{
    nm_count_text(bits / 8, buf, size);
    if (bits % 8) {
        size_t n = strlen(buf);
        snprintf(buf + n, size - n, ".%03d", (int)(bits % 8) * 125);
    }
    return buf;
}

/* What the roofline needs besides the design's cycle bound. */
typedef struct roof {
    int bits;                    /* word width */
    const char *precision;       /* its name, or NULL (the design's word) */
    nm_count macs, flops, bias_adds;
    int ds_bits[NM_MAX_DS];      /* each tensor's word: the precision's, else the
                                  * design's at its outermost level (tensor_datawidth) */
    nm_count words[NM_MAX_DS];   /* each tensor as a framework holds it */
    nm_count loop_words[NM_MAX_DS]; /* as the loop nest reaches it */
    nm_count bias_words, param_words;
    nm_count in_bits, out_bits;  /* read-only tensors (and bias), outputs */
    double peak, bandwidth;      /* per second; 0 when unknown */
    const char *peak_from, *bw_from; /* "given", "the design" */
    double compute_s, memory_s;  /* NaN when unknown */
    /* A design with sparse optimizations: what must still be computed and
     * moved (nm_roofline's effectual computes and words); flops and the
     * traffic above are then those. */
    int sparse;
    double eff_macs;
} roof;

/* --curve's figures: the staircase (of a layer or of a chain), the
 * design's capacity, the mapping; rows as they are printed. */
typedef struct curve_row {
    double capacity, traffic;
    char what[640];   /* the outer loops (a chain: of each group) */
} curve_row;

typedef struct curve_run {
    nm_curve c;          /* a layer's */
    nm_chain_curve cc;   /* a chain's */
    const char *name;
    int n;
    curve_row *row;      /* owned */
    double compulsory;
    uint64_t evaluated;
    double cap;   /* the design's on-chip words (0: none, or unbounded) */
    double mt;    /* the mapping's off-chip words, when placed */
    int placed;
} curve_run;

static void count(roof *rf, const nm_spec *spec)
{
    const nm_workload *wl = &spec->wl;
    for (int ds = 0; ds < wl->nds; ds++)
        rf->ds_bits[ds] = rf->precision || !spec->has_arch
                              ? rf->bits
                              : nm_level_ds_bits(&spec->arch.level[spec->arch.nlevels - 1], wl, ds);
    rf->macs = nm_workload_macs(wl);
    rf->flops = nm_workload_flops(wl);
    rf->bias_adds = 0;
    rf->param_words = rf->bias_words = (nm_count)wl->bias_words;
    rf->in_bits = rf->bias_words * (nm_count)rf->bits;
    rf->out_bits = 0;
    for (int ds = 0; ds < wl->nds; ds++) {
        rf->words[ds] = nm_workload_held_words(wl, ds);
        rf->loop_words[ds] = nm_workload_words(wl, ds);
        nm_count b = rf->words[ds] * (nm_count)rf->ds_bits[ds];
        if (wl->ds[ds].read_write) {
            rf->out_bits += b;
            if (wl->bias)
                rf->bias_adds += rf->words[ds];
        } else {
            rf->in_bits += b;
        }
        if (wl->ds[ds].param)
            rf->param_words += rf->words[ds];
    }
}

/* The peak and the memory time from the design, where the options do not
 * give them: the arithmetic units at the clock (flops_per_op each per
 * cycle), and the outermost level's bandwidth at the clock, which moves
 * its own words (the tensors at another width take proportionally longer). */
static void rates(roof *rf, const nm_spec *spec, const nm_roofline *r)
{
    if (r && nm_sparse_removes(&spec->arch, &spec->wl)) {
        /* what a sparse design must still do: its effectual computes, and
         * each tensor once, only its nonzeros where the design holds it
         * compressed (roofline.c) */
        rf->sparse = 1;
        rf->eff_macs = r->effectual_macs;
        rf->flops = (nm_count)((double)rf->flops * r->effectual_macs / r->macs);
        const nm_level *top = &spec->arch.level[spec->arch.nlevels - 1];
        int bits = rf->precision ? rf->bits : top->word_bits;
        rf->in_bits = (nm_count)(r->words_in * bits);
        rf->out_bits = (nm_count)(r->words_out * bits);
    }
    double bytes = (double)(rf->in_bits + rf->out_bits) / 8.0;
    rf->memory_s = rf->compute_s = NAN;
    if (rf->bandwidth > 0) {
        rf->bw_from = "given";
        rf->memory_s = bytes / rf->bandwidth;
    }
    if (rf->peak > 0)
        rf->peak_from = "given";
    if (!spec->has_arch || !spec->arch.clock_given) {
        if (rf->peak > 0)
            rf->compute_s = (double)rf->flops / rf->peak;
        return;
    }
    const nm_arch *arch = &spec->arch;
    const nm_level *top = &arch->level[arch->nlevels - 1];
    double hz = 1.0 / arch->cycle_seconds;
    if (rf->peak <= 0) {
        int per = spec->wl.flops_per_op ? spec->wl.flops_per_op : 2;
        rf->peak = (double)per * (double)arch->arith.instances * hz;
        rf->peak_from = "the design";
    }
    rf->compute_s = (double)rf->flops / rf->peak;
    if (rf->bandwidth <= 0) {
        const char *note;
        double cyc = nm_roofline_memory_cycles(top, (double)rf->in_bits / top->word_bits,
                                               (double)rf->out_bits / top->word_bits, &note);
        if (!isnan(cyc)) {
            rf->memory_s = cyc * arch->cycle_seconds;
            rf->bw_from = "the design";
            if (top->has_shared_bw) /* one figure to print */
                rf->bandwidth = top->shared_bw * (double)top->instances * top->word_bits / 8.0 * hz;
        }
    }
}

static void json_count(FILE *f, const char *key, nm_count v)
{
    char t[48];
    fprintf(f, ",\n \"%s\": %s", key, nm_count_text(v, t, sizeof t));
}

static void json_num(FILE *f, const char *key, double v)
{
    if (isnan(v) || v <= 0)
        fprintf(f, ",\n \"%s\": null", key);
    else
        fprintf(f, ",\n \"%s\": %.17g", key, v);
}

static void json_str(FILE *f, const char *key, const char *v)
{
    fprintf(f, ",\n \"%s\": ", key);
    if (v)
        nm_report_json_string(f, v);
    else
        fprintf(f, "null");
}

static const char *time_binding(const roof *rf)
{
    if (isnan(rf->compute_s) || isnan(rf->memory_s))
        return NULL;
    return rf->compute_s >= rf->memory_s ? "compute" : "memory bandwidth";
}

static void curve_json(FILE *f, const curve_run *cr);

static void print_json(FILE *f, const nm_spec *spec, const roof *rf, const nm_roofline *r,
                       const curve_run *cr)
{
    const nm_workload *wl = &spec->wl;
    char t[56];
    fprintf(f, "{\n \"workload\": ");
    nm_report_json_string(f, wl->name);
    json_str(f, "precision", rf->precision);
    fprintf(f, ",\n \"word_bits\": %d", rf->bits);
    json_count(f, "macs", rf->macs);
    if (rf->sparse)
        fprintf(f, ",\n \"effectual_macs\": %.17g", rf->eff_macs);
    else
        fprintf(f, ",\n \"effectual_macs\": null");
    json_count(f, "bias_adds", rf->bias_adds);
    json_count(f, "flops", rf->flops);
    fprintf(f, ",\n \"tensors\": [");
    for (int ds = 0; ds < wl->nds; ds++) {
        fprintf(f, "%s\n  {\"name\": ", ds ? "," : "");
        nm_report_json_string(f, wl->ds[ds].name);
        fprintf(f, ", \"words\": %s", nm_count_text(rf->words[ds], t, sizeof t));
        fprintf(f, ", \"loop_nest_words\": %s", nm_count_text(rf->loop_words[ds], t, sizeof t));
        fprintf(f, ", \"bytes\": %s",
                bytes_text(rf->words[ds] * (nm_count)rf->ds_bits[ds], t, sizeof t));
        fprintf(f, ", \"output\": %s, \"parameter\": %s}", wl->ds[ds].read_write ? "true" : "false",
                wl->ds[ds].param ? "true" : "false");
    }
    fprintf(f, "\n ]");
    json_count(f, "bias_words", rf->bias_words);
    json_count(f, "parameter_words", rf->param_words);
    fprintf(f, ",\n \"parameter_bytes\": %s",
            bytes_text(rf->param_words * (nm_count)rf->bits, t, sizeof t));
    nm_count bits = rf->in_bits + rf->out_bits;
    fprintf(f, ",\n \"min_bytes\": %s", bytes_text(bits, t, sizeof t));
    double bytes = (double)bits / 8.0;
    fprintf(f, ",\n \"arithmetic_intensity_flops_per_byte\": %.17g", (double)rf->flops / bytes);
    fprintf(f, ",\n \"arithmetic_intensity_macs_per_byte\": %.17g", (double)rf->macs / bytes);
    json_num(f, "peak_flops_per_s", rf->peak);
    json_str(f, "peak_from", rf->peak > 0 ? rf->peak_from : NULL);
    json_num(f, "bandwidth_bytes_per_s", rf->bandwidth);
    json_str(f, "bandwidth_from", isnan(rf->memory_s) ? NULL : rf->bw_from);
    json_num(f, "compute_s", rf->compute_s);
    json_num(f, "memory_s", rf->memory_s);
    json_num(f, "bound_s", time_binding(rf) ? fmax(rf->compute_s, rf->memory_s) : NAN);
    json_str(f, "time_bound_by", time_binding(rf));
    if (r) {
        fprintf(f, ",\n \"compute_cycles\": %s",
                nm_count_text(r->compute_cycles_exact, t, sizeof t));
        json_num(f, "memory_cycles", r->mem_cycles);
        fprintf(f, ",\n \"bound_cycles\": %.17g", r->bound_cycles);
        json_str(f, "bound_by", nm_roofline_binding_name(r->binding));
    } else {
        fprintf(f, ",\n \"compute_cycles\": null,\n \"memory_cycles\": null,\n"
                   " \"bound_cycles\": null,\n \"bound_by\": null");
    }
    if (cr)
        curve_json(f, cr);
    fprintf(f, "\n}\n");
}

static void print_text(const nm_spec *spec, const roof *rf, const nm_roofline *r)
{
    const nm_workload *wl = &spec->wl;
    char a[56], b[56], c[56];
    if (rf->precision)
        printf("%s at %s (%d-bit words)\n\n", wl->name, rf->precision, rf->bits);
    else
        printf("%s at the design's %d-bit words\n\n", wl->name, rf->bits);
    int per = wl->flops_per_op ? wl->flops_per_op : 2;
    printf("%-22s %s\n", per == 2 ? "multiply-accumulates" : "loop iterations",
           nm_count_text(rf->macs, a, sizeof a));
    if (rf->bias_adds)
        printf("bias adds              %s (one per output, counted as a multiply-accumulate)\n",
               nm_count_text(rf->bias_adds, a, sizeof a));
    if (rf->sparse)
        printf("effectual              at least %.0f (both operands nonzero; the design's sparse "
               "optimizations may skip or gate the rest)\n", rf->eff_macs);
    printf("operations             %s FLOPs (%d per %s%s%s)\n", nm_count_text(rf->flops, a, sizeof a),
           per, rf->sparse ? "effectual " : "",
           per == 2 ? "multiply-accumulate" : "loop iteration", rf->bias_adds ? " and bias add" : "");
    printf("\n");
    for (int ds = 0; ds < wl->nds; ds++) {
        printf("%-22s %s words, %s bytes", wl->ds[ds].name,
               nm_count_text(rf->words[ds], a, sizeof a),
               bytes_text(rf->words[ds] * (nm_count)rf->ds_bits[ds], b, sizeof b));
        if (rf->ds_bits[ds] != rf->bits)
            printf(" (%d-bit words)", rf->ds_bits[ds]);
        if (wl->ds[ds].read_write)
            printf(" (output)");
        if (rf->loop_words[ds] != rf->words[ds])
            printf(" (without the padding; the loop nest's window covers %s)",
                   nm_count_text(rf->loop_words[ds], c, sizeof c));
        printf("\n");
    }
    if (rf->bias_words)
        printf("%-22s %s words, %s bytes\n", "bias", nm_count_text(rf->bias_words, a, sizeof a),
               bytes_text(rf->bias_words * (nm_count)rf->bits, b, sizeof b));
    if (rf->param_words)
        printf("parameters             %s words, %s bytes\n",
               nm_count_text(rf->param_words, a, sizeof a),
               bytes_text(rf->param_words * (nm_count)rf->bits, b, sizeof b));
    nm_count bits = rf->in_bits + rf->out_bits;
    double bytes = (double)bits / 8.0;
    printf("least traffic          %s bytes (each tensor moved once%s)\n",
           bytes_text(bits, a, sizeof a),
           rf->sparse ? "; only the nonzeros of a tensor the design holds compressed" : "");
    printf("arithmetic intensity   %.4g FLOPs/byte\n\n", (double)rf->flops / bytes);
    if (rf->peak > 0)
        printf("peak                   %s (%s)\n", nm_text_si(rf->peak, "FLOP/s", a, sizeof a),
               rf->peak_from);
    if (rf->bandwidth > 0)
        printf("bandwidth              %s (%s)\n", nm_text_si(rf->bandwidth, "B/s", a, sizeof a),
               rf->bw_from);
    else if (!isnan(rf->memory_s))
        printf("bandwidth              the design's read and write bandwidths\n");
    if (!isnan(rf->compute_s))
        printf("compute time           %s\n", nm_text_si(rf->compute_s, "s", a, sizeof a));
    else
        printf("compute time           unknown (give --peak, or a design with a clock)\n");
    if (!isnan(rf->memory_s))
        printf("memory time            %s\n", nm_text_si(rf->memory_s, "s", a, sizeof a));
    else
        printf("memory time            unknown (give --bandwidth, or a design with a clock and "
               "the outermost level's bandwidth)\n");
    const char *by = time_binding(rf);
    if (by)
        printf("roofline time          %s: %s-bound\n",
               nm_text_si(fmax(rf->compute_s, rf->memory_s), "s", a, sizeof a),
               !strcmp(by, "compute") ? "compute" : "memory");
    if (!r)
        return;
    const nm_arch *arch = &spec->arch;
    const nm_level *top = &arch->level[arch->nlevels - 1];
    printf("\non %s .. %s (%lld %s units, %d-bit words at %s); the bound map compares with:\n",
           top->name, arch->level[0].name, (long long)arch->arith.instances, arch->arith.name,
           top->word_bits, top->name);
    printf("compute bound          %s cycles (%lld units)\n",
           nm_count_text(r->compute_cycles_exact, a, sizeof a), (long long)arch->arith.instances);
    if (isnan(r->mem_cycles))
        printf("memory bound           unknown (%s)\n", r->bw_note);
    else
        printf("memory bound           %.0f cycles (%s of %s)\n", ceil(r->mem_cycles), r->bw_note,
               top->name);
    if (r->binding != NM_ROOF_MEMORY) /* the compute bound, exactly */
        nm_count_text(r->compute_cycles_exact, a, sizeof a);
    else
        snprintf(a, sizeof a, "%.0f", r->bound_cycles);
    printf("roofline bound         %s cycles: bound by %s\n", a,
           nm_roofline_binding_name(r->binding));
}

/* The design's on-chip words (every level below the backing store, each
 * instance); 0 when a level is unbounded or there is no design. */
static double onchip_words(const nm_spec *spec)
{
    if (!spec->has_arch)
        return 0.0;
    double w = 0.0;
    for (int l = 0; l + 1 < spec->arch.nlevels; l++) {
        const nm_level *L = &spec->arch.level[l];
        if (!L->has_size)
            return 0.0;
        w += (double)L->size * (double)L->instances;
    }
    return w;
}

/* The mapping in the files evaluated on the design: its backing-store
 * words in *traffic; 0 when there is none (or it is invalid: said). */
static int mapping_traffic(const nm_spec *spec, double *traffic)
{
    if (spec->chain ? !spec->fmap || !spec->has_arch : !spec->has_mapping)
        return 0;
    nm_error err;
    nm_error_clear(&err);
    char why[512];
    int ok;
    if (spec->chain) {
        nm_fused_model fmdl;
        if (nm_fused_model_init(&fmdl, &spec->arch, spec->fchain, &err) != NM_OK) {
            nm_cli_error(&err);
            return 0;
        }
        nm_fused_stats *st = nm_calloc(1, sizeof *st);
        if (!st) {
            nm_fused_model_fini(&fmdl);
            fprintf(stderr, "nestmap bound: out of memory\n");
            return 0;
        }
        ok = nm_fused_model_eval(&fmdl, spec->fmap, st);
        if (ok)
            *traffic = (double)st->total.backing;
        else
            nm_fused_describe_invalid(st, &spec->arch, spec->fchain, spec->fmap, why, sizeof why);
        nm_free(st);
        nm_fused_model_fini(&fmdl);
    } else {
        nm_model mdl;
        if (nm_model_init(&mdl, &spec->arch, &spec->wl, &err) != NM_OK) {
            nm_cli_error(&err);
            return 0;
        }
        static nm_stats st;
        ok = nm_model_eval(&mdl, &spec->map, &st, NULL);
        nm_model_fini(&mdl);
        if (ok)
            *traffic = (double)st.last_level_accesses;
        else
            nm_invalid_describe(&st.invalid, &spec->arch, &spec->wl, why, sizeof why);
    }
    if (!ok)
        fprintf(stderr, "nestmap bound: the mapping is not placed on the curve: %s\n", why);
    return ok;
}

/* A point's outer loops, outermost first, after prefix; none written as
 * `none`. */
static void tiling_text(const nm_workload *wl, const nm_curve_point *p, const char *prefix,
                        const char *none, char *buf, size_t size)
{
    size_t n = (size_t)snprintf(buf, size, "%s", prefix), start = n;
    for (int i = p->nouter - 1; i >= 0 && n < size; i--) { /* outermost first */
        int d = p->order[i];
        n += (size_t)snprintf(buf + n, size - n, "%s%s%lld", n > start ? " " : "", wl->dim[d],
                              (long long)p->outer[d]);
    }
    if (!p->nouter && n < size)
        snprintf(buf + n, size - n, "%s", none);
}

/* A chain point's groups: "a+b: shared loops; c: its outer loops". */
static void chain_text(const nm_chain *c, const nm_chain_curve *cc, const nm_chain_curve_point *q,
                       char *buf, size_t size)
{
    size_t n = 0;
    buf[0] = '\0';
    for (int a = 0; a < c->nops && n < size; a++) {
        if (!((q->cut >> a) & 1u))
            continue;
        int b = a;
        while (b + 1 < c->nops && !((q->cut >> (b + 1)) & 1u))
            b++;
        char prefix[4 * NM_NAME_MAX];
        size_t k = 0;
        for (int i = a; i <= b && k < sizeof prefix; i++)
            k += (size_t)snprintf(prefix + k, sizeof prefix - k, "%s%s", i > a ? "+" : "",
                                  c->op[i].name);
        if (k < sizeof prefix)
            k += (size_t)snprintf(prefix + k, sizeof prefix - k, ": ");
        /* a group recomputing halos: its steps (outermost), then its loops */
        const nm_curve_point *pt = &cc->range[a][b].pt[q->pt[a]];
        for (int j = 0; j < pt->nsplit && k < sizeof prefix; j++)
            k += (size_t)snprintf(prefix + k, sizeof prefix - k, "%s%s in %lld steps%s",
                                  j ? " and " : "", c->op[b].wl.dim[pt->split_dim[j]],
                                  (long long)pt->split_steps[j],
                                  j + 1 < pt->nsplit ? ""
                                  : pt->retain       ? " (halos retained), "
                                                     : " (halos recomputed), ");
        n += (size_t)snprintf(buf + n, size - n, "%s", n ? "; " : "");
        if (n < size)
            tiling_text(&c->op[a].wl, pt, prefix, pt->nsplit ? "no other loop" : "(none)",
                        buf + n, size - n);
        n = strlen(buf);
    }
}

static int curve_compute(const nm_spec *spec, uint64_t budget, curve_run *cr)
{
    nm_error err;
    nm_error_clear(&err);
    memset(cr, 0, sizeof *cr);
    nm_status st;
    if (spec->chain) {
        cr->name = spec->chain->name;
        if ((st = nm_roofline_chain_curve(spec->chain, budget, &cr->cc, &err)) == NM_OK) {
            cr->n = cr->cc.n;
            cr->compulsory = cr->cc.compulsory;
            cr->evaluated = cr->cc.evaluated;
        }
    } else {
        cr->name = spec->wl.name;
        if ((st = nm_roofline_curve(&spec->wl, budget, &cr->c, &err)) == NM_OK) {
            cr->n = cr->c.n;
            cr->compulsory = cr->c.compulsory;
            cr->evaluated = cr->c.evaluated;
        }
    }
    if (st == NM_OK && !(cr->row = nm_calloc((size_t)(cr->n ? cr->n : 1), sizeof *cr->row)))
        st = nm_error_set(&err, NM_ERR_NOMEM, NULL, 0, 0, "out of memory");
    if (st != NM_OK) {
        fprintf(stderr, "nestmap bound: --curve: %s\n", err.msg);
        return 2;
    }
    for (int i = 0; i < cr->n; i++) {
        curve_row *r = &cr->row[i];
        if (spec->chain) {
            r->capacity = cr->cc.pt[i].capacity;
            r->traffic = cr->cc.pt[i].traffic;
            chain_text(spec->chain, &cr->cc, &cr->cc.pt[i], r->what, sizeof r->what);
        } else {
            r->capacity = cr->c.pt[i].capacity;
            r->traffic = cr->c.pt[i].traffic;
            tiling_text(&spec->wl, &cr->c.pt[i], "", "(none: the whole layer in the buffer)",
                        r->what, sizeof r->what);
        }
    }
    cr->cap = onchip_words(spec);
    cr->placed = mapping_traffic(spec, &cr->mt);
    return 0;
}

static void curve_fini(curve_run *cr)
{
    nm_curve_fini(&cr->c);
    nm_chain_curve_fini(&cr->cc);
    nm_free(cr->row);
    cr->row = NULL;
}

/* The least traffic at `capacity` words (INFINITY below the first step). */
static double curve_at(const curve_run *cr, double capacity)
{
    double best = INFINITY;
    for (int i = 0; i < cr->n && cr->row[i].capacity <= capacity; i++)
        best = cr->row[i].traffic;
    return best;
}

static void curve_text(const nm_spec *spec, const curve_run *cr)
{
    if (spec->chain)
        printf("\nleast off-chip traffic of the chain by on-chip capacity (single-buffer\n"
               "mappings of every cut of the chain into groups, fused or alone, words;\n"
               "%llu mappings evaluated; Orojenesis, ISCA 2024):\n",
               (unsigned long long)cr->evaluated);
    else
        printf("\nleast off-chip traffic by on-chip capacity (single-buffer mappings, words;\n"
               "%llu mappings evaluated; Orojenesis, ISCA 2024):\n",
               (unsigned long long)cr->evaluated);
    printf("%16s %16s %12s  %s\n", "capacity", "least traffic", "x compulsory",
           spec->chain ? "groups and their outer loops, outermost first"
                       : "outer loops, outermost first");
    for (int i = 0; i < cr->n; i++)
        printf("%16.0f %16.0f %12.4g  %s\n", cr->row[i].capacity, cr->row[i].traffic,
               cr->row[i].traffic / cr->compulsory, cr->row[i].what);
    if (cr->cap > 0)
        printf("the design's on-chip capacity: %.0f words; there the least traffic is %.0f "
               "words (%.4gx compulsory)\n", cr->cap, curve_at(cr, cr->cap),
               curve_at(cr, cr->cap) / cr->compulsory);
    if (cr->placed)
        printf("the mapping moves %.0f words off chip: %.4gx the least at the design's "
               "capacity\n", cr->mt, cr->cap > 0 ? cr->mt / curve_at(cr, cr->cap) : NAN);
}

/* The "curve" member of bound's JSON (roofline.h's figures). */
static void curve_json(FILE *f, const curve_run *cr)
{
    fprintf(f, ",\n \"curve\": {\"evaluated\": %llu, \"compulsory_words\": %.17g, \"points\": [",
            (unsigned long long)cr->evaluated, cr->compulsory);
    for (int i = 0; i < cr->n; i++) {
        fprintf(f, "%s\n  {\"capacity_words\": %.17g, \"least_traffic_words\": %.17g, "
                   "\"x_compulsory\": %.17g, \"outer_loops\": ", i ? "," : "",
                cr->row[i].capacity, cr->row[i].traffic, cr->row[i].traffic / cr->compulsory);
        nm_report_json_string(f, cr->row[i].what);
        fputc('}', f);
    }
    fputs("],\n  \"design_capacity_words\": ", f);
    if (cr->cap > 0)
        fprintf(f, "%.17g, \"least_at_design_capacity_words\": %.17g", cr->cap,
                curve_at(cr, cr->cap));
    else
        fputs("null, \"least_at_design_capacity_words\": null", f);
    if (cr->placed)
        fprintf(f, ", \"mapping_traffic_words\": %.17g}", cr->mt);
    else
        fputs(", \"mapping_traffic_words\": null}", f);
}

/* With -o: curve.csv and the gnuplot figure beside it. */
static int curve_files(const char *dir, const curve_run *cr)
{
    const double cap = cr->cap, mt = cr->mt;
    const int placed = cr->placed;
    int rc = 0;
    if (dir) {
        char path[4200];
        FILE *f = NULL;
        rc = 2;
        if (nm_cli_mkdir(dir) && (f = nm_cli_open_out(dir, "curve.csv", path, sizeof path))) {
            fputs("capacity_words,least_traffic_words,x_compulsory,outer_loops\n", f);
            for (int i = 0; i < cr->n; i++) {
                fprintf(f, "%.0f,%.0f,%.17g,", cr->row[i].capacity, cr->row[i].traffic,
                        cr->row[i].traffic / cr->compulsory);
                nm_report_csv_field(f, cr->row[i].what);
                fputc('\n', f);
            }
            if (nm_cli_close_out(f, path) && (f = nm_cli_open_out(dir, "curve.gp", path,
                                                                  sizeof path))) {
                fprintf(f, "# nestmap bound --curve: the least off-chip traffic of %s by on-chip\n"
                           "# capacity (single-buffer mappings).  Data in curve.csv; restyle\n"
                           "# freely, then run: gnuplot curve.gp\n", cr->name);
                fputs("base = 'curve'\nset datafile separator ','\nset grid\nset logscale xy 2\n"
                      "set xlabel 'on-chip capacity (words)'\nset ylabel 'off-chip traffic "
                      "(words)'\nset key bottom left\n", f);
                fprintf(f, "compulsory = %.17g\n", cr->compulsory);
                nm_plot_series_styles(f);
                if (cap > 0) /* the design's capacity: a vertical line */
                    fprintf(f, "set arrow from %.17g, graph 0 to %.17g, graph 1 nohead lt 2 dt 3\n"
                               "set label \"the design's\\non-chip capacity\" at %.17g, graph 0.93 "
                               "right offset char -0.6, 0 font ',9'\nset xrange [*:%.17g]\n", cap, cap, cap,
                            2 * fmax(cap, cr->n ? cr->row[cr->n - 1].capacity : cap));
                nm_plot_terminals(f, 900, 500);
                fputs("  set title ", f);
                char title[200];
                snprintf(title, sizeof title, "%s: the least traffic attainable (%d steps)",
                         cr->name, cr->n);
                nm_plot_string(f, title);
                fputs("\n  plot 'curve.csv' every ::1 using 1:2 with steps lt 1 lw 2 title "
                      "'least traffic', \\\n       compulsory with lines lt 8 dt 2 title "
                      "'each tensor once'", f);
                if (placed && cap > 0)
                    fprintf(f, ", \\\n       '+' using (%.17g):(%.17g) every ::0::0 with points "
                            "lt 3 pt 7 ps 1.6 title 'the mapping'", cap, mt);
                fputs("\n}\n", f);
                if (nm_cli_close_out(f, path)) {
                    rc = 0;
                    const char *names[] = {"curve"};
                    if (nm_plot_have_gnuplot() && !nm_cli_gnuplot("bound", dir, names, 1))
                        rc = 2;
                }
            }
        }
    }
    return rc;
}

/* `bound` on a chain of operations: its curve (the roofline is each
 * operation's: run bound on each). */
static int chain_bound(nm_spec *spec, const nm_cli_opts *o, int curve, uint64_t budget,
                       int rates)
{
    int rc = 0;
    if (!curve || rates) {
        fprintf(stderr, "nestmap bound: %s is a chain of operations: its bound is the least "
                "off-chip traffic by on-chip capacity (give --curve, and no --precision, "
                "--peak or --bandwidth); for an operation's roofline, run bound on it alone\n",
                spec->chain->name);
        nm_spec_fini(spec);
        return 2;
    }
    if (o->nsets && !spec->has_arch) {
        fprintf(stderr, "nestmap bound: --set changes the design, and none was given\n");
        nm_spec_fini(spec);
        return 2;
    }
    static curve_run cr;
    if ((rc = curve_compute(spec, budget, &cr)) != 0) {
        nm_spec_fini(spec);
        return rc;
    }
    if (o->json) {
        nm_cli_json js;
        FILE *f = nm_cli_json_begin(&js);
        fputs("{\n \"chain\": ", f);
        nm_report_json_string(f, spec->chain->name);
        fputs(",\n \"operations\": [", f);
        for (int i = 0; i < spec->chain->nops; i++) {
            fputs(i ? ", " : "", f);
            nm_report_json_string(f, spec->chain->op[i].name);
        }
        fputc(']', f);
        curve_json(f, &cr);
        fputs("\n}\n", f);
        if (!nm_cli_json_end(&js, &spec->doc))
            rc = 2;
    } else {
        printf("%s: a chain of %d operation%s (", spec->chain->name, spec->chain->nops,
               spec->chain->nops == 1 ? "" : "s");
        for (int i = 0; i < spec->chain->nops; i++)
            printf("%s%s", i ? ", " : "", spec->chain->op[i].name);
        printf(")\n");
        curve_text(spec, &cr);
    }
    if (o->outdir && curve_files(o->outdir, &cr) != 0)
        rc = 2;
    curve_fini(&cr);
    nm_spec_fini(spec);
    return rc;
}

static int bad_option(const char *opt, const char *val, const char *what)
{
    fprintf(stderr, "nestmap bound: %s '%s': %s\n", opt, val, what);
    return 2;
}

int nm_cmd_bound(int argc, char **argv)
{
    static const char *const flop_units[] = {"FLOP/s", "FLOPS", "OP/s", "OPS", NULL};
    static const char *const byte_units[] = {"B/s", NULL};
    roof rf;
    memset(&rf, 0, sizeof rf);
    int missing = 0;
    const char *prec = nm_cli_take(&argc, argv, "--precision", &missing);
    const char *peak = nm_cli_take(&argc, argv, "--peak", &missing);
    const char *bw = nm_cli_take(&argc, argv, "--bandwidth", &missing);
    int curve = nm_cli_take_flag(&argc, argv, "--curve");
    const char *cb = nm_cli_take(&argc, argv, "--curve-budget", &missing);
    uint64_t budget = 20000000;
    if (cb && !nm_cli_count("--curve-budget", cb, &budget))
        return 2;
    if (missing) {
        fprintf(stderr, "nestmap bound: --precision, --peak and --bandwidth need a value\n%s",
                usage);
        return 2;
    }
    if (prec) {
        for (size_t i = 0; i < sizeof precisions / sizeof *precisions; i++)
            if (!strcmp(prec, precisions[i].name)) {
                rf.precision = precisions[i].name;
                rf.bits = precisions[i].bits;
            }
        if (!rf.precision)
            return bad_option("--precision", prec, "not a precision (fp64, fp32, tf32, fp16, "
                              "bf16, fp8, int32, int16, int8, int4)");
    }
    if (peak && !nm_text_rate(peak, flop_units, &rf.peak))
        return bad_option("--peak", peak, "give operations per second, e.g. 1T, 312TFLOP/s, "
                          "1e12");
    if (bw && !nm_text_rate(bw, byte_units, &rf.bandwidth))
        return bad_option("--bandwidth", bw, "give bytes per second, e.g. 1000GB/s, 3.35TB/s, "
                          "1.5e12");
    nm_cli_opts o;
    nm_spec spec;
    int rc = nm_cli_begin(argc, argv, "bound", usage, NM_OPT_SET | NM_OPT_JSON | NM_OPT_OUT,
                          NM_NEED_PROBLEM | NM_ACCEPT_CHAIN, &o, &spec);
    if (rc >= 0)
        return rc;
    rc = 0;
    if (spec.chain)
        return chain_bound(&spec, &o, curve, budget, prec || peak || bw);
    if (o.outdir && !curve) {
        fprintf(stderr, "nestmap bound: -o writes the --curve files; give --curve\n");
        rc = 2;
    }
    if (o.nsets && !spec.has_arch) {
        fprintf(stderr, "nestmap bound: --set changes the design, and none was given\n");
        rc = 2;
    } else if (!rf.bits && !spec.has_arch) {
        fprintf(stderr, "nestmap bound: give the word width with --precision (fp32, fp16, bf16, "
                        "int8, ...): there is no design to take it from\n");
        rc = 2;
    }
    if (rc) {
        nm_spec_fini(&spec);
        return rc;
    }
    if (!rf.bits)
        rf.bits = spec.arch.level[spec.arch.nlevels - 1].word_bits;
    count(&rf, &spec);
    nm_roofline r;
    if (spec.has_arch)
        nm_roofline_of(&r, &spec.arch, &spec.wl);
    rates(&rf, &spec, spec.has_arch ? &r : NULL);
    static curve_run cr;
    if (curve && (rc = curve_compute(&spec, budget, &cr)) != 0) {
        nm_spec_fini(&spec);
        return rc;
    }
    if (o.json) {
        nm_cli_json js;
        print_json(nm_cli_json_begin(&js), &spec, &rf, spec.has_arch ? &r : NULL,
                   curve ? &cr : NULL);
        if (!nm_cli_json_end(&js, &spec.doc))
            rc = 2;
    } else {
        print_text(&spec, &rf, spec.has_arch ? &r : NULL);
        if (curve)
            curve_text(&spec, &cr);
    }
    if (curve) {
        if (o.outdir && curve_files(o.outdir, &cr) != 0)
            rc = 2;
        curve_fini(&cr);
    }
    nm_spec_fini(&spec);
    return rc;
}
