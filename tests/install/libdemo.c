/* libdemo.c — a program built against the installed libnestmap with
 * `pkg-config --cflags --libs nestmap` (tests/install/installcheck.sh):
 * loads a design, a problem and a mapping and evaluates the mapping.
 * Prints "energy_pj cycles" on one line; exit 0 valid, 1 invalid, 2 error. */
#include <stdio.h>

#include <nestmap/model.h>
#include <nestmap/spec.h>

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: libdemo FILES...\n");
        return 2;
    }
    nm_spec spec;
    nm_error err;
    nm_error_clear(&err);
    if (nm_spec_load(&spec, (const char *const *)argv + 1, (size_t)argc - 1,
                     NM_NEED_ARCH | NM_NEED_PROBLEM | NM_NEED_MAPPING, &err) != NM_OK) {
        fprintf(stderr, "%s:%d:%d: %s\n", err.file, err.line, err.col, err.msg);
        nm_spec_fini(&spec);
        return 2;
    }
    nm_model mdl;
    if (nm_model_init(&mdl, &spec.arch, &spec.wl, &err) != NM_OK) {
        fprintf(stderr, "%s\n", err.msg);
        nm_spec_fini(&spec);
        return 2;
    }
    static nm_stats st; /* large: kept off the stack */
    int valid = nm_model_eval(&mdl, &spec.map, &st, NULL);
    printf("%.17g %llu\n", st.energy, (unsigned long long)st.cycles);
    nm_model_fini(&mdl);
    nm_spec_fini(&spec);
    return valid ? 0 : 1;
}
