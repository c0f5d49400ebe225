/* cmd_energy.c — `nestmap energy FILES...`: the energy and area table the
 * model will use, with where each number came from. */
#include <config.h>

#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "nestmap/report.h"
#include "nestmap/spec.h"

static const char usage[] =
    "usage: nestmap energy [OPTIONS] FILES...\n\n"
    "Prints the per-action energy (pJ per vector access) and area (um^2 per\n"
    "instance) of every component, and where each number came from: the\n"
    "input's ERT/ART, the component's attributes (vector_access_energy,\n"
    "energy), or nestmap's built-in classes:\n"
    "  DRAM (by type: LPDDR4, HBM2, GDDR5, DDR3, GDDR6, GDDR6X), SRAM,\n"
    "  smartbuffer_SRAM, regfile, smartbuffer_RF, aladdin_register, intmac,\n"
    "  fpmac, intadder, intmultiplier, fpadder, fpmultiplier, dummy_storage;\n"
    "  `storage` and `compute` take their `subclass`.\n"
    "Built-in energies follow the component's depth, width, operand widths and\n"
    "technology (7 to 130 nm); their sources are cited in src/estimate.c.\n\n"
    "options:\n"
    NM_CLI_SET_USAGE
    "  --json            the table as JSON\n"
    "  --ert             the table as an ERT/ART in Timeloop's v0.4 form\n"
    "  --builtin-energy\n"
    "                    ignore the input's ERT/ART: every number from the built-in\n"
    "                    classes\n"
    "  --compare         the input's ERT beside the built-in estimate, per action,\n"
    "                    with their ratio\n"
    "  -q, --quiet       no warnings\n";

int nm_cmd_energy(int argc, char **argv)
{
    int ert = nm_cli_take_flag(&argc, argv, "--ert");
    int compare = nm_cli_take_flag(&argc, argv, "--compare");
    nm_cli_opts o;
    nm_spec spec;
    int rc = nm_cli_begin(argc, argv, "energy", usage,
                          NM_OPT_SET | NM_OPT_JSON | NM_OPT_BUILTIN, NM_NEED_ARCH, &o, &spec);
    if (rc >= 0)
        return rc;
    if (ert && o.json) {
        fprintf(stderr, "nestmap energy: --ert (YAML) and --json are alternatives\n");
        nm_spec_fini(&spec);
        return 2;
    }
    nm_spec builtin;
    memset(&builtin, 0, sizeof builtin);
    if (compare) {
        nm_cli_opts ob = o;
        ob.builtin_energy = 1;
        ob.quiet = 1; /* its warnings were printed with the first load */
        if ((rc = nm_cli_load(&ob, NM_NEED_ARCH, &builtin)) != 0) {
            nm_spec_fini(&spec);
            return rc;
        }
    }
    nm_cli_json js;
    FILE *out = o.json ? nm_cli_json_begin(&js) : stdout;
    if (compare)
        nm_report_energy_compare(out, &spec.arch, &builtin.arch, o.json);
    else
        nm_report_energy(out, &spec.arch, ert ? 2 : o.json ? 1 : 0);
    rc = o.json && !nm_cli_json_end(&js, &spec.doc) ? 2 : 0;
    nm_spec_fini(&builtin);
    nm_spec_fini(&spec);
    return rc;
}
