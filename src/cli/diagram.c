/* diagram.c — a picture of one mapping (`model`/`map` -o DIR --diagram):
 * on the left the storage hierarchy, outermost on top, each level with its
 * size, every tensor's tile there (or that it is bypassed) and its loops;
 * on the right the PE array (every fan-out, nested), each PE marked busy or
 * idle, with the dimensions each level spreads along X and Y.  Written as data
 * (mapping.dat) and a gnuplot script beside it (mapping.gp), rendered to
 * mapping.png and mapping.svg when gnuplot is installed. */
#include <config.h>

#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "nestmap/plot.h"
#include "nestmap/model.h"
#include "nestmap/spec.h"

/* Appends to buf (size n) as snprintf does, never past its end. */
static void cat(char *buf, size_t n, const char *fmt, const char *s, long long v)
{
    size_t len = strlen(buf);
    if (len + 1 < n)
        snprintf(buf + len, n - len, fmt, s, v);
}

/* A gnuplot data string: double quotes, none inside. */
static void dat_string(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; s++)
        fputc(*s == '"' ? '\'' : *s, f);
    fputc('"', f);
}

/* The loops of level s (outermost first, factors above 1): temporal, then
 * the spatial ones by axis. */
static void loops_text(const nm_workload *wl, const nm_level_map *lm, char *buf, size_t n)
{
    buf[0] = '\0';
    cat(buf, n, "%sloops, outer to inner:", "", 0);
    int any = 0;
    for (int i = wl->ndims - 1; i >= 0; i--) {
        int d = lm->torder[i];
        if (d >= 0 && lm->tfactor[d] > 1) {
            cat(buf, n, " %s%lld", wl->dim[d], (long long)lm->tfactor[d]);
            any = 1;
        }
    }
    if (!any)
        cat(buf, n, "%s none", "", 0);
    for (int axis = 0; axis < 2; axis++) {
        int first = 1;
        for (int i = 0; i < wl->ndims; i++) {
            int d = lm->sorder[i];
            if (d < 0 || lm->sfactor[d] <= 1 || (i < lm->split) != (axis == 0))
                continue;
            cat(buf, n, first ? (axis == 0 ? "%s   spatial X:" : "%s   spatial Y:") : "%s", "", 0);
            cat(buf, n, " %s%lld", wl->dim[d], (long long)lm->sfactor[d]);
            first = 0;
        }
    }
}

/* The dimensions level s spreads along one axis, and how many siblings
 * they use there. */
static int64_t axis_text(const nm_workload *wl, const nm_level_map *lm, int axis, char *buf,
                         size_t n)
{
    int64_t used = 1;
    buf[0] = '\0';
    for (int i = 0; i < wl->ndims; i++) {
        int d = lm->sorder[i];
        if (d < 0 || lm->sfactor[d] <= 1 || (i < lm->split) != (axis == 0))
            continue;
        cat(buf, n, buf[0] ? " x %s %lld" : "%s %lld", wl->dim[d], (long long)lm->sfactor[d]);
        used *= lm->sfactor[d];
    }
    if (!buf[0])
        cat(buf, n, "%snothing", "", 0);
    return used;
}

int nm_cli_diagram(const char *cmd, const char *dir, const nm_spec *spec, const nm_mapping *m,
                   const nm_stats *st)
{
    const nm_arch *arch = &spec->arch;
    const nm_workload *wl = &spec->wl;
    char line[1024];
    FILE *f = nm_plot_open(dir, "mapping.dat");
    if (!f) {
        fprintf(stderr, "nestmap %s: cannot write %s/mapping.dat\n", cmd, dir);
        return 0;
    }
    /* The array drawn on the right: every fan-out from the outermost down
     * to the arithmetic, nested (each level's X and Y inside its parent's);
     * past 32 PEs along an axis, in blocks, each shaded by its busy share
     * (so that the picture stays small). */
    int fl[NM_MAX_LEVELS], nf = 0;
    int64_t FX = 1, FY = 1;
    for (int s = arch->nlevels - 1; s >= 0; s--) {
        const nm_level *L = &arch->level[s];
        if (L->fanoutX * L->fanoutY <= 1)
            continue;
        fl[nf++] = s;
        FX *= L->fanoutX;
        FY *= L->fanoutY;
    }
    int64_t bx = (FX + 31) / 32, by = (FY + 31) / 32; /* PEs per block */
    /* index 0: a box per level (x, y, half width, half height), outermost
     * on top; the arithmetic at the bottom.  index 1: their text. */
    int rows = arch->nlevels + 1;
    fputs("# mapping.gp draws this.  index 0: a box per level (x y dx dy), outermost on top;\n"
          "# index 1: the text in them (x y \"text\"); index 2: the PE array, every fan-out\n"
          "# nested, in blocks past 32 PEs an axis (x y busy: the share of the block's PEs busy)\n", f);
    for (int r = 0; r < rows; r++)
        fprintf(f, "50 %d 49 0.42\n", rows - 1 - r);
    fputs("\n\n", f);
    for (int r = 0; r < arch->nlevels; r++) {
        int s = arch->nlevels - 1 - r;
        const nm_level *L = &arch->level[s];
        double y = rows - 1 - r;
        line[0] = '\0';
        cat(line, sizeof line, "%s", L->name, 0);
        if (L->dummy || L->container[0]) {
            cat(line, sizeof line, "%s: a fan-out, holding nothing", "", 0);
        } else if (L->has_size)
            cat(line, sizeof line, "%s: %lld words", "", (long long)L->size);
        else
            cat(line, sizeof line, "%s: unbounded", "", 0);
        if (L->instances > 1)
            cat(line, sizeof line, "%s x %lld instances", "", (long long)L->instances);
        fprintf(f, "2 %.2f ", y + 0.22);
        dat_string(f, line);
        fputc('\n', f);
        line[0] = '\0';
        cat(line, sizeof line, "%stiles (words):", "", 0);
        int bypassed = 0, kept = 0;
        for (int d = 0; d < wl->nds; d++) {
            if (!(m->level[s].keep >> d & 1)) {
                bypassed = 1;
                continue;
            }
            cat(line, sizeof line, " %s", wl->ds[d].name, 0);
            cat(line, sizeof line, "%s %lld", "",
                (long long)st->level[s].ds[d].utilized_capacity);
            kept = 1;
        }
        if (!kept)
            cat(line, sizeof line, "%s none", "", 0);
        if (bypassed && (kept || !(L->dummy || L->container[0]))) {
            cat(line, sizeof line, "%s;  bypassed:", "", 0);
            for (int d = 0; d < wl->nds; d++)
                if (!(m->level[s].keep >> d & 1))
                    cat(line, sizeof line, " %s", wl->ds[d].name, 0);
        }
        fprintf(f, "2 %.2f ", y);
        dat_string(f, line);
        fputc('\n', f);
        loops_text(wl, &m->level[s], line, sizeof line);
        fprintf(f, "2 %.2f ", y - 0.22);
        dat_string(f, line);
        fputc('\n', f);
    }
    line[0] = '\0';
    cat(line, sizeof line, "%s: ", arch->arith.name, 0);
    cat(line, sizeof line, "%s%lld computes", "", (long long)st->computes);
    cat(line, sizeof line, "%s on %lld units", "", (long long)arch->arith.instances);
    fprintf(f, "2 0.1 ");
    dat_string(f, line);
    fputc('\n', f);
    line[0] = '\0';
    cat(line, sizeof line, "%sutilization %lld %%", "", (long long)(100.0 * st->utilization + 0.5));
    fprintf(f, "2 -0.12 ");
    dat_string(f, line);
    fputs("\n\n\n", f);
    char xs[512] = "", ys[512] = "", title[512] = "";
    int64_t fx = FX, fy = FY, busy = 1;
    int64_t lx[NM_MAX_LEVELS], ly[NM_MAX_LEVELS], ux[NM_MAX_LEVELS], uy[NM_MAX_LEVELS];
    for (int k = 0; k < nf; k++) {
        int s = fl[k];
        char ax[2][256];
        lx[k] = arch->level[s].fanoutX;
        ly[k] = arch->level[s].fanoutY;
        ux[k] = axis_text(wl, &m->level[s], 0, ax[0], sizeof ax[0]);
        uy[k] = axis_text(wl, &m->level[s], 1, ax[1], sizeof ax[1]);
        /* a mapping spreading more along an axis than the mesh holds folds
         * onto the other: count what is used, within the mesh */
        if (ux[k] > lx[k]) {
            uy[k] *= (ux[k] + lx[k] - 1) / lx[k];
            ux[k] = lx[k];
        }
        if (uy[k] > ly[k])
            uy[k] = ly[k];
        busy *= ux[k] * uy[k];
        for (int a = 0; a < 2; a++) {
            char *to = a ? ys : xs;
            if ((a ? ly[k] : lx[k]) <= 1)
                continue;
            size_t len = strlen(to);
            snprintf(to + len, sizeof xs - len, "%s%s (%s)", len ? ", inside: " : "", ax[a],
                     arch->level[s].container[0] ? arch->level[s].container
                                                 : arch->level[s].name);
        }
    }
    int64_t nbx = (fx + bx - 1) / bx, nby = (fy + by - 1) / by;
    for (int64_t b = 0; b < nbx * nby; b++) {
        int64_t cx = b % nbx, cy = b / nbx, on = 0, all = 0;
        for (int64_t y = cy * by; y < fy && y < (cy + 1) * by; y++)
            for (int64_t x = cx * bx; x < fx && x < (cx + 1) * bx; x++) {
                /* the innermost fan-out is the least significant digit */
                int busy_pe = 1;
                int64_t rx = x, ry = y;
                for (int k = nf - 1; k >= 0; k--) {
                    busy_pe &= rx % lx[k] < ux[k] && ry % ly[k] < uy[k];
                    rx /= lx[k];
                    ry /= ly[k];
                }
                on += busy_pe;
                all++;
            }
        fprintf(f, "%lld %lld %.4g\n", (long long)cx, (long long)cy, (double)on / (double)all);
    }
    if (nf && bx * by > 1)
        snprintf(title, sizeof title, "PEs: %lld x %lld in blocks of %lld x %lld, %lld busy",
                 (long long)fx, (long long)fy, (long long)bx, (long long)by, (long long)busy);
    else if (nf)
        snprintf(title, sizeof title, "PEs: %lld x %lld, %lld busy", (long long)fx,
                 (long long)fy, (long long)busy);
    else
        snprintf(title, sizeof title, "no spatial fan-out");
    if (!xs[0])
        snprintf(xs, sizeof xs, "nothing");
    if (!ys[0])
        snprintf(ys, sizeof ys, "nothing");
    if (fclose(f) != 0)
        return 0;

    if (!(f = nm_plot_open(dir, "mapping.gp")))
        return 0;
    fprintf(f, "# nestmap %s --diagram: the mapping's storage levels (outermost on top: size,\n"
               "# each tensor's tile in words, loops) and its PE array (green: busy PEs).\n"
               "# Data: mapping.dat.  Restyle freely, then run: gnuplot mapping.gp\n", cmd);
    fprintf(f, "base = 'mapping'\nrows = %d\nfx = %lld\nfy = %lld\n", rows, (long long)nbx,
            (long long)nby);
    int width = 1400, height = 160 + 110 * rows;
    if (height < 560)
        height = 560;
    nm_plot_terminals(f, width, height);
    fputs("  set multiplot layout 1,2 columnsfirst title ", f);
    char top[512];
    snprintf(top, sizeof top, "%s: %.6g uJ, %.0f cycles, %.1f pJ/MAC",
             wl->name[0] ? wl->name : "workload", st->energy / 1e6, (double)st->cycles,
             st->computes ? st->energy / (double)st->computes : 0.0);
    nm_plot_string(f, top);
    fputs("\n  set size 0.62, 1\n  set origin 0, 0\n  unset border\n  unset tics\n  unset key\n"
          "  set xrange [0:100]\n  set yrange [-0.6:rows - 0.4]\n"
          "  set style fill solid 0.15 border lc rgb '#404040'\n"
          "  plot 'mapping.dat' index 0 using 1:2:3:4 with boxxyerror lc rgb '#4e79a7', \\\n"
          "       '' index 1 using 1:2:3 with labels left font ',9'\n"
          "  set size 0.36, 0.9\n  set origin 0.63, 0.05\n  set border\n  set tics\n"
          "  set size ratio -1\n  set xtics 1 format ''\n  set ytics 1 format ''\n"
          "  set xrange [-0.5:fx - 0.5]\n  set yrange [fy - 0.5:-0.5]\n"
          "  set style fill solid 0.9 border lc rgb '#808080'\n", f);
    fputs("  set xlabel ", f);
    snprintf(line, sizeof line, "X: %s", xs);
    nm_plot_string(f, line);
    fputs("\n  set ylabel ", f);
    snprintf(line, sizeof line, "Y: %s", ys);
    nm_plot_string(f, line);
    fputs("\n  set title ", f);
    nm_plot_string(f, title);
    fputs("\n  set palette defined (0 '#e8e8e8', 1 '#59a14f')\n  set cbrange [0:1]\n"
          "  unset colorbox\n"
          "  plot 'mapping.dat' index 2 using 1:2:(0.45):(0.45):3 with boxxyerror fc palette\n"
          "  unset multiplot\n}\n", f);
    if (fclose(f) != 0)
        return 0;
    if (!nm_plot_have_gnuplot()) {
        fprintf(stderr, "nestmap %s: gnuplot is not installed: the diagram is left as "
                        "%s/mapping.gp (Debian: apt-get install gnuplot-nox)\n", cmd, dir);
        return 1;
    }
    const char *names[] = {"mapping"};
    return nm_cli_gnuplot(cmd, dir, names, 1);
}
