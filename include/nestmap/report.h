/* report.h — the only module that formats results.  Callers pass the stream;
 * the library never chooses one itself. */
#ifndef NESTMAP_REPORT_H
#define NESTMAP_REPORT_H

#include <stdio.h>

#include "nestmap/arch.h"
#include "nestmap/model.h"
#include "nestmap/nest.h"
#include "nestmap/workload.h"

/* Machine-readable stats (the corpus's expected.json fields): levels
 * innermost first, per-instance counts, energies at full precision.  For an
 * invalid mapping: {"valid": false, "reason": ...}. */
void nm_report_json(FILE *f, const nm_arch *arch, const nm_workload *wl, const nm_stats *st);

/* Human-readable stats per level and data space, then a summary. */
void nm_report_text(FILE *f, const nm_arch *arch, const nm_workload *wl, const nm_stats *st);

/* The loop nest, outermost level first, as Timeloop's map.txt shows it. */
void nm_report_loopnest(FILE *f, const nm_arch *arch, const nm_workload *wl, const nm_nest *nest,
                        const nm_mapping *m, const nm_stats *st);

/* Writes a JSON string literal (quotes and escapes). */
void nm_report_json_string(FILE *f, const char *s);

#endif
