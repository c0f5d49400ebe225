/* plot.h — gnuplot plots as nestmap writes them: a script beside its data,
 * so that a user can restyle it, rendered to PNG and SVG when gnuplot is
 * installed.  Used by sweeps, census, compare and the mapping diagram.
 */
#ifndef NESTMAP_PLOT_H
#define NESTMAP_PLOT_H

#include <stdio.h>

#include "nestmap/error.h"

/* s as a gnuplot single-quoted string. */
void nm_plot_string(FILE *f, const char *s);

/* The lines that render a script's plot to base.png and base.svg (`base`
 * set by the script) at the size given, opening a `do for` block the script
 * closes with "}". */
void nm_plot_terminals(FILE *f, int width, int height);

/* Line types 1-16 that stay apart: 8 colour-blind-safe colours, solid for
 * the first 8 series and dashed (with open points) for the next 8. */
void nm_plot_series_styles(FILE *f);

/* dir/name opened for writing a plot's data or script (NULL on failure). */
FILE *nm_plot_open(const char *dir, const char *name);

/* Whether gnuplot is on PATH. */
int nm_plot_have_gnuplot(void);

/* Runs gnuplot in dir on each NAME.gp of names[0..n) (its output in
 * dir/gnuplot.log); an error names the script that failed. */
nm_status nm_plot_render(const char *dir, const char *const *names, int n, nm_error *err);

#endif
