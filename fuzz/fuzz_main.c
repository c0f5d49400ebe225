/* fuzz_main.c — libFuzzer's entry point for one of harness.h's functions,
 * chosen at build time with -DFUZZ_ENTRY=nm_fuzz_KIND (fuzz/build.sh). */
#include <config.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "harness.h"

#ifndef FUZZ_ENTRY
#error "build with -DFUZZ_ENTRY=nm_fuzz_spec (or another harness.h function)"
#endif
#ifndef FUZZ_SRCDIR
#define FUZZ_SRCDIR "."
#endif

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    const char *src = getenv("NESTMAP_SRCDIR");
    if (!nm_fuzz_init(src ? src : FUZZ_SRCDIR)) {
        fprintf(stderr, "fuzz: cannot read the base documents under %s\n",
                src ? src : FUZZ_SRCDIR);
        exit(2);
    }
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    return FUZZ_ENTRY(data, size);
}
