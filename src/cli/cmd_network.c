/* cmd_network.c — `nestmap network FILES...`: map every layer of a network. */
#include <config.h>

#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "nestmap/alloc.h"
#include "nestmap/job.h"
#include "nestmap/network.h"
#include "nestmap/report.h"
#include "nestmap/search.h"
#include "nestmap/spec.h"

static const char usage[] =
    "usage: nestmap network [OPTIONS] DESIGN NETWORK [FILES...]\n\n"
    "Maps every layer of the `network:` in the files onto the architecture,\n"
    "under its constraints and with the settings of `mapper:` (identical\n"
    "layers are mapped once; several layers are searched at once, one per\n"
    "thread), and prints per-layer and total energy, cycles and utilization,\n"
    "and the energy per MAC of each level.  A layer that no mapping fits is\n"
    "reported and the rest still run.\n\n"
    "options (each overrides `mapper:`):\n"
    NM_CLI_SET_USAGE
    NM_CLI_SEARCH_USAGE
    "  --fuse            also search fused mappings of runs of consecutive layers\n"
    "                    each reading the whole output of the one before (a 1x1\n"
    "                    convolution after any, a pointwise after a depthwise:\n"
    "                    the file's order is the network's), a run's second\n"
    "                    perhaps through windows of its first (a 3x3 after a\n"
    "                    1x1: the halos recomputed or retained), and report\n"
    "                    each run and the network's totals fused and unfused\n"
    "  -o DIR            write layers.csv, network.json and LAYER/map.yaml (and\n"
    "                    with --fuse FIRST..LAST/map.yaml for each fused run)\n"
    "  --json            print the results as JSON\n"
    "  --builtin-energy  ignore the input's ERT/ART: estimate every energy and area\n"
    "                    from the component classes (see nestmap energy)\n"
    "  -q, --quiet       no warnings\n\n"
    "exit status: 0 every layer mapped, 1 some layer has no mapping, 2 bad input\n";

/* A layer name as a directory name: letters, digits, '-', '_' and '.' kept. */
static void dir_name(char *out, size_t size, const char *name)
{
    size_t n = 0;
    for (; *name && n + 1 < size; name++)
        out[n++] = isalnum((unsigned char)*name) || strchr("-_.", *name) ? *name : '_';
    out[n] = '\0';
    if (!strcmp(out, ".") || !strcmp(out, ".."))
        out[0] = '_';
}

static int write_file(const char *dir, const char *name, const nm_arch *arch,
                      const nm_network *net, const nm_layer_result *out,
                      const nm_network_fusion *fu, const nm_search_opts *o, int format)
{
    char path[4096];
    FILE *f = nm_cli_open_out(dir, name, path, sizeof path);
    if (!f)
        return 0;
    nm_report_network_fused(f, arch, net, out, fu, o, format);
    return nm_cli_close_out(f, path);
}

/* DIR/NAME/map.yaml (NAME made a directory name), opened for writing;
 * NULL (said) when it cannot be. */
static FILE *open_map(const char *dir, const char *name, char *path, size_t size)
{
    char sub[NM_NAME_MAX], where[4096];
    dir_name(sub, sizeof sub, name);
    snprintf(where, sizeof where, "%s/%s", dir, sub);
    if (!nm_cli_mkdir(where))
        return NULL;
    return nm_cli_open_out(where, "map.yaml", path, size);
}

/* A fused run's mapping, RUN/map.yaml (RUN: its first layer's name and its
 * last's), with its chain: with the design, nestmap model evaluates it. */
static int write_run(const char *dir, const nm_arch *arch, const nm_network *net,
                     const nm_network_fusion *fu, int k)
{
    const nm_network_run *r = &fu->run[k], *s = &fu->run[r->same_as];
    if (!r->used)
        return 1;
    char path[4200];
    FILE *f = open_map(dir, r->chain.name, path, sizeof path);
    if (!f)
        return 0;
    fprintf(f, "# Layers %s of %s, fused: the best mapping nestmap network --fuse found.\n",
            r->chain.name, net->name);
    nm_report_chain_yaml(f, &r->chain);
    /* the mapping under this run's names, its halos recomputed as in the
     * run it shares its shapes with */
    nm_chain *mapped = nm_calloc(1, sizeof *mapped);
    char why[NM_ERROR_MSG_MAX];
    int ok = mapped != NULL;
    if (ok)
        *mapped = r->chain;
    for (int gi = 0; ok && gi < s->res.best.ngroups; gi++)
        ok = nm_fused_group_apply(mapped, &s->res.best.group[gi], why, sizeof why) == NM_OK;
    if (ok)
        nm_report_fused_yaml(f, arch, mapped, &s->res.best);
    nm_free(mapped);
    return nm_cli_close_out(f, path) && ok;
}

static int write_outputs(const char *dir, const nm_arch *arch, const nm_network *net,
                         const nm_layer_result *out, const nm_network_fusion *fu,
                         const nm_search_opts *o)
{
    if (!nm_cli_mkdir(dir) || !write_file(dir, "layers.csv", arch, net, out, fu, o, 2) ||
        !write_file(dir, "network.json", arch, net, out, fu, o, 1))
        return 0;
    for (int k = 0; fu && k < fu->nruns; k++)
        if (!write_run(dir, arch, net, fu, k))
            return 0;
    for (int i = 0; i < net->nlayers; i++) {
        const nm_layer_result *lr = &out[net->layer[i].same_as];
        if (lr->status != NM_OK || !lr->res.found)
            continue;
        char path[4200];
        FILE *f = open_map(dir, net->layer[i].name, path, sizeof path);
        if (!f)
            return 0;
        fprintf(f, "# Layer %s of %s: best mapping found by nestmap network (%s, %s, seed "
                "%llu).\n", net->layer[i].name, net->name, o->algorithm,
                nm_metric_name(o->metric[0]), (unsigned long long)o->seed);
        /* The layer's problem as the network file gives it: with the design,
         * the file is a complete input for nestmap model. */
        const nm_ynode *prob = nm_ymap_get(net->layer[i].node, "problem");
        if (prob) {
            fputs("problem: ", f);
            nm_yemit_flow(f, prob);
            fputc('\n', f);
        }
        nm_report_mapping_yaml(f, arch, &net->layer[i].wl, &lr->res.best.map);
        if (!nm_cli_close_out(f, path))
            return 0;
    }
    return 1;
}

/* Progress on a terminal: which layer just finished, how many are done. */
static void layer_done(void *ctx, int i, int ndone)
{
    const nm_network *net = ctx;
    fprintf(stderr, "\r%d of %d distinct layers mapped (last: %s)\033[K", ndone, net->ndistinct,
            net->layer[i].name);
    fflush(stderr);
}

int nm_cmd_network(int argc, char **argv)
{
    nm_search_opts o;
    nm_cli_opts co;
    nm_spec spec;
    int fuse = nm_cli_take_flag(&argc, argv, "--fuse");
    int rc = nm_cli_search_setup(argc, argv, "network", usage, NM_NEED_ARCH, &co, &spec, &o);
    if (rc >= 0)
        return rc;
    nm_error err;
    nm_error_clear(&err);
    nm_network net;
    memset(&net, 0, sizeof net);
    nm_layer_result *out = NULL;
    nm_network_fusion fu;
    memset(&fu, 0, sizeof fu);
    size_t warned = spec.doc.nwarnings;
    nm_status status = nm_job_network_parse(&spec, &net, &err);
    nm_cli_warnings(&spec.doc, co.quiet, warned); /* the layers' own, and the unused keys */
    if (status != NM_OK) {
        nm_cli_error(&err);
        rc = nm_status_exit_code(status);
        goto out;
    }
    o.stop = nm_cli_catch_sigint();
    int tty = isatty(STDERR_FILENO) && !co.quiet;
    warned = spec.doc.nwarnings;
    status = nm_job_network_map(&spec, &net, &o, &out, tty ? layer_done : NULL, &net, &err);
    if ((rc = nm_cli_search_end(status, tty, &err)) != 0)
        goto out;
    nm_cli_warnings(&spec.doc, co.quiet, warned);
    if (fuse) {
        if (tty)
            fprintf(stderr, "searching fused runs of layers...\033[K");
        status = nm_network_fuse(&net, &spec.arch, spec.constraints, spec.constraints2, &o, out,
                                 &fu, &err);
        if (tty)
            fprintf(stderr, "\r\033[K");
        if (status != NM_OK) {
            nm_cli_error(&err);
            rc = nm_status_exit_code(status);
            goto out;
        }
    }
    int json_ok = 1;
    const nm_network_fusion *fp = fuse ? &fu : NULL;
    if (co.json) {
        nm_cli_json js;
        nm_report_network_fused(nm_cli_json_begin(&js), &spec.arch, &net, out, fp, &o, 1);
        json_ok = nm_cli_json_end(&js, &spec.doc);
    } else {
        nm_report_network_fused(stdout, &spec.arch, &net, out, fp, &o, 0);
    }
    rc = json_ok ? 0 : 2;
    for (int i = 0; i < net.nlayers; i++) {
        const nm_layer_result *lr = &out[net.layer[i].same_as];
        if ((lr->status != NM_OK || !lr->res.found) && rc == 0)
            rc = 1;
    }
    if (co.outdir && !write_outputs(co.outdir, &spec.arch, &net, out, fp, &o))
        rc = 2;
out:
    nm_network_fusion_fini(&fu);
    if (out)
        nm_network_results_fini(&net, out);
    nm_free(out);
    nm_network_fini(&net);
    nm_spec_fini(&spec);
    return rc;
}
