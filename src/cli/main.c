/* main.c — the nestmap binary: git-style dispatch to one file per subcommand. */
#include <config.h>

#include <stdio.h>
#include <string.h>

#include <gsl/gsl_errno.h>

#include "cli.h"
#include "nestmap/text.h"

const nm_command nm_commands[] = {
    {"model", nm_cmd_model, "evaluate the mapping given in the input files; print its stats"},
    {"map", nm_cmd_map, "search the mapspace for the best mapping"},
    {"energy", nm_cmd_energy, "print the per-action energy and area table in use, with sources"},
    {"census", nm_cmd_census, "every valid mapping evaluated: counts, spread, optimal, histogram"},
    {"mapspace", nm_cmd_mapspace, "size of the mapspace; with --sample N, a census"},
    {"bound", nm_cmd_bound, "roofline bound of a workload on a design"},
    {"network", nm_cmd_network, "map every layer of a network"},
    {"sweep", nm_cmd_sweep, "design-space sweep with a Pareto front"},
    {"compare", nm_cmd_compare, "one workload on several designs or dataflows, side by side"},
    {NULL, NULL, NULL},
};

static void usage(FILE *f)
{
    fprintf(f, "usage: nestmap COMMAND [OPTIONS] FILES...\n\n"
               "nestmap explores how a loop nest (a conv layer, a GEMM, any affine nest) maps\n"
               "onto a deep-learning accelerator, and what each mapping costs.  FILES are YAML\n"
               "in Timeloop's formats; their top-level keys are merged.\n\ncommands:\n");
    for (const nm_command *c = nm_commands; c->name; c++)
        fprintf(f, "  %-10s %s%s\n", c->name, c->summary,
                c->run == nm_cmd_unimplemented ? " (not yet implemented)" : "");
    fprintf(f, "\ncommon options (each command's --help lists those it takes):\n"
               "  -o DIR        write results to files in DIR\n"
               "  --json        machine-readable stats on stdout\n"
               "  --threads N   worker threads\n"
               "  --seed S      random seed\n"
               "  --set C.A=V   change attribute A of component or subtree C of the design\n"
               "                (problem.NAME=V: a dimension of the workload)\n"
               "  -q, --quiet   no warnings or progress\n"
               "  -h, --help    help for a command: nestmap COMMAND --help\n"
               "  --version     print the version\n\n"
               "exit status: 0 ok, 1 no valid mapping or evaluation failed, 2 bad input or usage\n");
}

int main(int argc, char **argv)
{
    gsl_set_error_handler_off(); /* GSL's default handler aborts; every status is checked */
    if (argc < 2) {
        usage(stderr);
        return 2;
    }
    const char *cmd = argv[1];
    if (!strcmp(cmd, "--help") || !strcmp(cmd, "-h") || !strcmp(cmd, "help")) {
        if (argc > 2 && strcmp(cmd, "help") == 0) {
            for (const nm_command *c = nm_commands; c->name; c++) {
                if (!strcmp(c->name, argv[2])) {
                    char *args[] = {argv[2], (char *)"--help", NULL};
                    return c->run(2, args);
                }
            }
        }
        usage(stdout);
        return 0;
    }
    if (!strcmp(cmd, "--version") || !strcmp(cmd, "-V")) {
        printf("nestmap %s\n", PACKAGE_VERSION);
        return 0;
    }
    for (const nm_command *c = nm_commands; c->name; c++)
        if (!strcmp(c->name, cmd))
            return c->run(argc - 1, argv + 1);
    const char *names[16];
    size_t n = 0;
    for (const nm_command *c = nm_commands; c->name && n < 16; c++)
        names[n++] = c->name;
    const char *s = nm_text_suggest(cmd, names, n);
    if (s)
        fprintf(stderr, "nestmap: unknown command '%s'; did you mean '%s'?\n", cmd, s);
    else
        fprintf(stderr, "nestmap: unknown command '%s' (see 'nestmap --help')\n", cmd);
    return 2;
}
