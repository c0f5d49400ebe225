/* cmd_model.c — `nestmap model FILES...`: evaluate the one mapping given. */
#include <config.h>

#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "nestmap/alloc.h"
#include "nestmap/fusion.h"
#include "nestmap/job.h"
#include "nestmap/mapspace.h"
#include "nestmap/model.h"
#include "nestmap/report.h"
#include "nestmap/spec.h"

static const char usage[] =
    "usage: nestmap model [OPTIONS] FILES...\n\n"
    "Evaluates the mapping given in FILES (architecture, problem, mapping, and an\n"
    "ERT/ART for energies) and prints per-level accesses, energy and cycles, as\n"
    "Timeloop's timeloop-model does.  A problem that is a chain of operations\n"
    "takes a fused mapping (nestmap(1), FUSED MAPPINGS): per group, operation\n"
    "and tensor, and in total.\n\n"
    "options:\n"
    NM_CLI_SET_USAGE
    "  -o DIR            also write stats.txt, stats.json, map.txt and the energy and\n"
    "                    area tables in use (ERT.yaml, ART.yaml) to DIR\n"
    "  --diagram         with -o, also draw the mapping (mapping.png: each level's\n"
    "                    tiles and loops, and the PE array's busy PEs) from\n"
    "                    mapping.dat and mapping.gp, which gnuplot renders\n"
    "  --timeloop-names\n"
    "                    with -o, name the files as Timeloop does\n"
    "                    (timeloop-model.stats.txt in Timeloop's layout,\n"
    "                    timeloop-model.map.txt, timeloop-model.ERT.yaml, .ART.yaml,\n"
    "                    and timeloop-input.yaml: the whole input for timeloop-model)\n"
    "  --json            print the stats as JSON on stdout\n"
    "  --builtin-energy\n"
    "                    ignore the ERT/ART: estimate every energy and area from the\n"
    "                    component classes (see nestmap energy)\n"
    NM_CLI_STRIDE_USAGE
    NM_CLI_TEACH_USAGE
    "  -q, --quiet       no warnings\n\n"
    "exit status: 0 valid mapping, 1 invalid mapping, 2 bad input\n";

static int write_file(const char *dir, const char *name, int kind, const nm_spec *spec,
                      const nm_stats *st, const nm_nest *nest)
{
    char path[4096];
    FILE *f = nm_cli_open_out(dir, name, path, sizeof path);
    if (!f)
        return 0;
    if (kind == 0)
        nm_report_text(f, &spec->arch, &spec->wl, st);
    else if (kind == 1)
        nm_report_json(f, &spec->arch, &spec->wl, st, &spec->map);
    else
        nm_report_loopnest(f, &spec->arch, &spec->wl, nest, &spec->map, st);
    return nm_cli_close_out(f, path);
}

/* A chain's fused mapping: evaluated, printed, written to -o DIR. */
static int model_fused(nm_spec *spec, const nm_cli_opts *o)
{
    nm_error err;
    nm_error_clear(&err);
    nm_fused_model fmdl;
    nm_fused_stats *st = nm_calloc(1, sizeof *st);
    if (!st || nm_fused_model_init(&fmdl, &spec->arch, spec->fchain, &err) != NM_OK) {
        if (!st)
            nm_error_set(&err, NM_ERR_NOMEM, NULL, 0, 0, "out of memory");
        nm_cli_error(&err);
        nm_free(st);
        return 2;
    }
    int valid = nm_fused_model_eval(&fmdl, spec->fmap, st);
    int rc = valid ? 0 : 1;
    if (o->json) {
        nm_cli_json js;
        nm_report_fused_json(nm_cli_json_begin(&js), &spec->arch, spec->fchain, spec->fmap, st);
        if (!nm_cli_json_end(&js, &spec->doc))
            rc = 2;
    } else if (valid) {
        nm_report_fused_text(stdout, &spec->arch, spec->fchain, spec->fmap, st);
    }
    if (!valid) {
        char why[1024];
        nm_fused_describe_invalid(st, &spec->arch, spec->fchain, spec->fmap, why, sizeof why);
        fprintf(stderr, "nestmap: invalid mapping: %s\n", why);
    }
    if (o->outdir) {
        char path[4096];
        FILE *f;
        if (!nm_cli_mkdir(o->outdir))
            rc = 2;
        if (rc != 2 && (f = nm_cli_open_out(o->outdir, "stats.json", path, sizeof path))) {
            nm_report_fused_json(f, &spec->arch, spec->fchain, spec->fmap, st);
            if (!nm_cli_close_out(f, path))
                rc = 2;
        } else {
            rc = 2;
        }
        if (rc != 2 && valid &&
            (f = nm_cli_open_out(o->outdir, "stats.txt", path, sizeof path))) {
            nm_report_fused_text(f, &spec->arch, spec->fchain, spec->fmap, st);
            for (int i = 0; i < spec->fchain->nops; i++) {
                fprintf(f, "\n==== operation %s ====\n\n", spec->fchain->op[i].name);
                nm_report_text(f, &spec->arch, &spec->fchain->op[i].wl, &st->op[i]);
            }
            if (!nm_cli_close_out(f, path))
                rc = 2;
        } else if (valid) {
            rc = 2;
        }
    }
    nm_fused_model_fini(&fmdl);
    nm_free(st);
    return rc;
}

int nm_cmd_model(int argc, char **argv)
{
    int tl_names = nm_cli_take_flag(&argc, argv, "--timeloop-names");
    int diagram = nm_cli_take_flag(&argc, argv, "--diagram");
    nm_cli_teach teach;
    if (!nm_cli_teach_take(&argc, argv, "model", &teach))
        return 2;
    nm_cli_opts o;
    nm_spec spec;
    int rc = nm_cli_begin(argc, argv, "model", usage,
                          NM_OPT_SET | NM_OPT_OUT | NM_OPT_JSON | NM_OPT_BUILTIN | NM_OPT_STRIDE,
                          NM_NEED_ARCH | NM_NEED_PROBLEM | NM_NEED_MAPPING | NM_ACCEPT_CHAIN,
                          &o, &spec);
    if (rc >= 0)
        return rc;
    if (spec.chain) {
        if (!nm_cli_chain_flags_ok("model", diagram, tl_names, &teach)) {
            rc = 2;
        } else {
            rc = model_fused(&spec, &o);
        }
        nm_spec_fini(&spec);
        return rc;
    }
    if (diagram && !o.outdir) {
        fprintf(stderr, "nestmap model: --diagram needs -o DIR (where the diagram goes)\n");
        nm_spec_fini(&spec);
        return 2;
    }
    nm_error err;
    nm_error_clear(&err);
    nm_job_model_out *r = nm_calloc(1, sizeof *r);
    size_t warned = spec.doc.nwarnings;
    nm_status status = r ? nm_job_model(&spec, r, &err)
                         : nm_error_set(&err, NM_ERR_NOMEM, NULL, 0, 0, "out of memory");
    nm_cli_warnings(&spec.doc, o.quiet, warned);
    if (status != NM_OK) {
        nm_cli_error(&err);
        nm_free(r);
        nm_spec_fini(&spec);
        return nm_status_exit_code(status);
    }
    if (r->broken[0]) {
        fprintf(stderr, "nestmap: the mapping breaks a constraint: %s\n", r->broken);
        if (o.json) {
            nm_cli_json js;
            FILE *f = nm_cli_json_begin(&js);
            fprintf(f, "{\n \"valid\": false,\n \"reason\": ");
            nm_report_json_string(f, r->broken);
            fprintf(f, "\n}\n");
            rc = nm_cli_json_end(&js, &spec.doc) ? 1 : 2;
        } else {
            rc = 1;
        }
        nm_free(r);
        nm_spec_fini(&spec);
        return rc;
    }
    const nm_stats *st = &r->st;
    const nm_nest *nest = &r->nest;
    int valid = r->valid;
    if (o.json) {
        nm_cli_json js;
        nm_report_json(nm_cli_json_begin(&js), &spec.arch, &spec.wl, st, &spec.map);
        if (!nm_cli_json_end(&js, &spec.doc))
            rc = 2;
    } else if (teach.loops || teach.explain) {
        if (!nm_cli_teach_print(&teach, &spec, &spec.map, st))
            rc = 2;
    } else if (valid) {
        nm_report_loopnest(stdout, &spec.arch, &spec.wl, nest, &spec.map, st);
        fputc('\n', stdout);
        nm_report_text(stdout, &spec.arch, &spec.wl, st);
    }
    if (!valid) {
        char reason[512];
        nm_invalid_describe(&st->invalid, &spec.arch, &spec.wl, reason, sizeof reason);
        fprintf(stderr, "nestmap: invalid mapping: %s\n", reason);
        if ((st->invalid.kind == NM_INV_INSTANCES || st->invalid.kind == NM_INV_ARITH) &&
            st->invalid.axis && !teach.explain)
            fprintf(stderr, "nestmap: too many along %c: move a spatial factor to the temporal "
                            "loops, or give the spatial entry a split: that puts fewer loops "
                            "along %c (--explain says which fits)\n", st->invalid.axis,
                    st->invalid.axis);
        else if (st->invalid.kind == NM_INV_CAPACITY && !teach.explain)
            fprintf(stderr, "nestmap: --explain says which factor to move to fit\n");
    }
    rc = rc == 2 ? 2 : valid ? 0 : 1;
    if (o.outdir) {
        if (!nm_cli_mkdir(o.outdir) ||
            (!tl_names && !write_file(o.outdir, "stats.txt", 0, &spec, st, nest)) ||
            !write_file(o.outdir, "stats.json", 1, &spec, st, nest) ||
            (valid && !tl_names && !write_file(o.outdir, "map.txt", 2, &spec, st, nest)) ||
            !nm_cli_write_tables(o.outdir, tl_names ? "timeloop-model" : NULL, &spec,
                                 valid ? st : NULL, nest, &spec.map) ||
            (diagram && valid && !nm_cli_diagram("model", o.outdir, &spec, &spec.map, st)))
            rc = 2;
    }
    nm_free(r);
    nm_spec_fini(&spec);
    return rc;
}
