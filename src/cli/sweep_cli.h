/* sweep_cli.h — the command line's part of `nestmap sweep` beyond
 * cmd_sweep.c: the MPI driver (sweep_mpi.c, with ./configure --with-mpi).
 * The run itself is the library's (nestmap/sweep_run.h). */
#ifndef NESTMAP_SWEEP_CLI_H
#define NESTMAP_SWEEP_CLI_H

#include <stdint.h>

#include "nestmap/sweep_run.h"

#ifdef NESTMAP_MPI
/* Runs the points from `first` on over every rank, rank 0 writing through
 * d (NULL without -o: rows collected in rows[]).  Returns the exit code. */
int sweep_mpi_run(const nm_sweep_run *run, nm_sweep_dir *d, char **rows, uint64_t first,
                  int tty);
#endif

#endif
