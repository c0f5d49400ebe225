/* path.h — finding an input file by name.
 *
 * The designs and workloads nestmap ships are installed under its data
 * directory ($(pkgdatadir): arch/, workloads/networks/, workloads/layers/)
 * and can be named without directory or suffix, from anywhere:
 * `eyeriss/eyeriss`, `mobilenet_v1`, `resnet50_conv1`.
 */
#ifndef NESTMAP_PATH_H
#define NESTMAP_PATH_H

#include <stddef.h>

#define NM_PATH_MAX 4096

/* Writes to out[size] the file that `name` names: `name` itself when it
 * exists or is "-" (standard input); else the first existing regular file
 * among ROOT/NAME, ROOT/NAME.yaml, ROOT/arch/NAME.yaml,
 * ROOT/workloads/networks/NAME.yaml and ROOT/workloads/layers/NAME.yaml,
 * for ROOT in: the current directory, each directory of $NESTMAP_PATH
 * (colon-separated), the installed data directory (the one configured, then
 * ../share/nestmap beside the running program, so a staged install finds
 * its own), and, when the program runs from its build tree, the source
 * tree it was built from.  Returns 1 when found, 0 when not (out then holds
 * `name`). */
int nm_path_find(const char *name, char *out, size_t size);

/* The roots nm_path_find searches, as text for a message. */
void nm_path_roots(char *out, size_t size);

#endif
