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
    "energy), nestmap's built-in tables (DRAM by type), or none.\n\n"
    "options:\n"
    "  --json       the table as JSON\n"
    "  --ert        the table as an ERT/ART in Timeloop's v0.4 form\n"
    "  -q, --quiet  no warnings\n";

int nm_cmd_energy(int argc, char **argv)
{
    int ert = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--ert")) {
            ert = 1;
            memmove(argv + i, argv + i + 1, (size_t)(argc - i) * sizeof *argv);
            argc--;
            i--;
        }
    }
    nm_cli_opts o;
    nm_spec spec;
    int rc = nm_cli_begin(argc, argv, usage, NM_NEED_ARCH, &o, &spec);
    if (rc >= 0)
        return rc;
    nm_report_energy(stdout, &spec.arch, ert ? 2 : o.json ? 1 : 0);
    nm_spec_fini(&spec);
    return 0;
}
