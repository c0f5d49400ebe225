/* sweep_dir.c — the files of a sweep directory (sweep_run.h): points.csv written row by
 * row (each synced before the next point counts as done), the resume
 * fingerprint, and at the end pareto.csv, sweep.json and the gnuplot plots,
 * all made from points.csv so that a resumed sweep ends as an uninterrupted
 * one does. */
#include <config.h>

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "nestmap/alloc.h"
#include "nestmap/job.h"
#include "nestmap/plot.h"
#include "nestmap/report.h"
#include "nestmap/sweep_run.h"

/* ---- CSV rows back into fields ---- */

typedef struct row {
    char *line;                 /* the row as written, with its '\n' (owned) */
    char *buf;                  /* the fields' text (owned) */
    const char **f;             /* the fields (owned) */
    int n;
} row;

/* Splits one RFC 4180 line (no line break inside a field, as sweep writes). */
static int split_row(row *r, const char *line)
{
    size_t len = strlen(line), commas = 0;
    for (const char *c = line; *c; c++)
        commas += *c == ',';
    r->line = strdup(line);
    r->buf = malloc(len + 1);
    r->f = malloc((commas + 1) * sizeof *r->f); /* at most a field a comma, and one */
    if (!r->line || !r->buf || !r->f)
        return 0;
    char *o = r->buf;
    const char *p = line;
    r->n = 0;
    for (;;) {
        r->f[r->n++] = o;
        if (*p == '"') {
            for (p++; *p && !(*p == '"' && p[1] != '"'); p++) {
                if (*p == '"')
                    p++;
                *o++ = *p;
            }
            if (*p == '"')
                p++;
        } else {
            while (*p && *p != ',' && *p != '\n' && *p != '\r')
                *o++ = *p++;
        }
        *o++ = '\0';
        if (*p != ',')
            break;
        p++;
    }
    return 1;
}

static void row_free(row *r)
{
    free(r->line);
    free(r->buf);
    free(r->f);
}

/* ---- the directory ---- */

static int path_of(char *out, size_t size, const char *dir, const char *name)
{
    int n = snprintf(out, size, "%s/%s", dir, name);
    return n > 0 && (size_t)n < size;
}

static int sync_close(FILE *f, const char *path, FILE *diag)
{
    int ok = fflush(f) == 0 && fsync(fileno(f)) == 0;
    if (fclose(f) != 0)
        ok = 0;
    if (!ok)
        fprintf(diag, "nestmap: cannot write '%s': %s\n", path, strerror(errno));
    return ok;
}

/* Reads a whole file (NULL when absent). */
static char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    char *buf = NULL;
    size_t cap = 0, n = 0, got;
    do {
        if (n + 4096 + 1 > cap) {
            cap = (cap + 4096) * 2;
            char *nb = realloc(buf, cap);
            if (!nb) {
                free(buf);
                fclose(f);
                return NULL;
            }
            buf = nb;
        }
        got = fread(buf + n, 1, 4096, f);
        n += got;
    } while (got > 0);
    fclose(f);
    buf[n] = '\0';
    *len = n;
    return buf;
}

int nm_sweep_dir_open(nm_sweep_dir *d, const nm_sweep_run *run, const char *dir, int resume,
                      const char *header)
{
    memset(d, 0, sizeof *d);
    d->dir = dir;
    char pts[4096], kp[4096], want[64];
    if (!path_of(pts, sizeof pts, dir, "points.csv") || !path_of(kp, sizeof kp, dir, "sweep.key")) {
        fprintf(run->diag, "nestmap sweep: directory name too long\n");
        return 2;
    }
    if (resume && access(pts, F_OK) != 0) {
        /* Nothing to continue: running the whole sweep instead would hide
         * a mistyped directory. */
        fprintf(run->diag, "nestmap sweep: --resume: '%s' holds no sweep (no points.csv); "
                "without --resume a new sweep starts there\n", dir);
        return 2;
    }
    if (!nm_job_make_dir(dir, run->diag))
        return 2;
    snprintf(want, sizeof want, "nestmap sweep inputs %016llx\n",
             (unsigned long long)nm_sweep_run_key(run));
    size_t len = 0, klen = 0;
    char *old = slurp(pts, &len);
    char *oldkey = slurp(kp, &klen);
    int rc = 2;
    if (old && !resume) {
        fprintf(run->diag, "nestmap sweep: '%s' already holds a sweep: --resume continues it; "
                "give another directory (or remove this one) to start over\n", dir);
        goto done;
    }
    if (resume && old && (!oldkey || strcmp(oldkey, want))) {
        fprintf(run->diag, "nestmap sweep: the sweep in '%s' was run with other inputs or options "
                "(%s); it cannot be resumed with these: give another directory\n", dir,
                oldkey ? "its sweep.key differs" : "it has no sweep.key");
        goto done;
    }
    if (!old || strncmp(old, header, strlen(header))) {
        if (old) {
            fprintf(run->diag, "nestmap sweep: '%s' has points.csv with other columns; it cannot "
                    "be resumed\n", pts);
            goto done;
        }
        /* A new sweep: the fingerprint first, then the header. */
        FILE *f = fopen(kp, "w");
        if (!f || fputs(want, f) == EOF || !sync_close(f, kp, run->diag))
            goto done;
        f = fopen(pts, "w");
        if (!f || fputs(header, f) == EOF || !sync_close(f, pts, run->diag))
            goto done;
        len = strlen(header);
    } else {
        /* Keep the whole rows, numbered 0, 1, ... in order; cut the rest
         * (a row cut short by a crash). */
        size_t keep = strlen(header);
        const char *p = old + keep;
        for (;;) {
            const char *nl = strchr(p, '\n');
            char *end;
            if (!nl)
                break;
            unsigned long long k = strtoull(p, &end, 10);
            if (end == p || *end != ',' || k != d->done)
                break;
            d->done++;
            p = nl + 1;
        }
        keep = (size_t)(p - old);
        if (keep < len && truncate(pts, (off_t)keep) != 0) {
            fprintf(run->diag, "nestmap sweep: cannot cut the partial row of '%s': %s\n", pts,
                    strerror(errno));
            goto done;
        }
    }
    d->points = fopen(pts, "a");
    if (!d->points) {
        fprintf(run->diag, "nestmap: cannot open '%s': %s\n", pts, strerror(errno));
        goto done;
    }
    rc = 0;
done:
    free(old);
    free(oldkey);
    return rc;
}

int nm_sweep_dir_add(nm_sweep_dir *d, const nm_sweep_run *run, const nm_sweep_point_out *out)
{
    char sub[4096], path[4400];
    snprintf(sub, sizeof sub, "%s/points/%llu", d->dir, (unsigned long long)out->point);
    if (!nm_job_make_dir(sub, run->diag))
        return 0;
    for (int w = 0; w < run->sw.nworkloads; w++) {
        if (!out->layers[w])
            continue;
        snprintf(path, sizeof path, "%s/%s.layers.csv", sub, run->wl_name[w]);
        FILE *f = fopen(path, "w");
        if (!f || fputs(out->layers[w], f) == EOF || !sync_close(f, path, run->diag)) {
            if (f == NULL)
                fprintf(run->diag, "nestmap: cannot write '%s': %s\n", path, strerror(errno));
            return 0;
        }
    }
    if (fputs(out->row, d->points) == EOF || fflush(d->points) != 0 ||
        fsync(fileno(d->points)) != 0) {
        fprintf(run->diag, "nestmap: cannot write %s/points.csv: %s\n", d->dir, strerror(errno));
        return 0;
    }
    d->done++;
    return 1;
}

void nm_sweep_dir_close(nm_sweep_dir *d)
{
    if (d->points)
        fclose(d->points);
    d->points = NULL;
}

/* ---- the end: the rows read back ---- */

typedef struct table {
    row *r;
    uint64_t n;
    int c_energy, c_cycles, c_seconds, c_area, c_status; /* column indices */
} table;

static void table_free(table *t)
{
    for (uint64_t i = 0; i < t->n; i++)
        row_free(&t->r[i]);
    nm_free(t->r);
    t->r = NULL;
    t->n = 0;
}

/* The rows of text (header excluded) into t; 0 when one does not parse. */
static int table_read(table *t, const nm_sweep_run *run, char *const *lines, uint64_t n)
{
    memset(t, 0, sizeof *t);
    t->r = nm_calloc(n ? n : 1, sizeof *t->r);
    if (!t->r)
        return 0;
    int base = 1 + run->sw.naxes;
    t->c_energy = base;
    t->c_cycles = base + 1;
    t->c_seconds = base + 2;
    t->c_area = base + 4;
    t->c_status = base + nm_sweep_figure_columns(run);
    for (uint64_t i = 0; i < n; i++) {
        if (!split_row(&t->r[i], lines[i]) || t->r[i].n != t->c_status + 2) {
            t->n = i + 1;
            return 0;
        }
        t->n = i + 1;
    }
    return 1;
}

static int is_ok(const table *t, uint64_t i)
{
    return !strcmp(t->r[i].f[t->c_status], "ok");
}

/* Mapped and within every budget (over_budget, before status, is empty). */
static int is_within(const table *t, uint64_t i)
{
    return is_ok(t, i) && !t->r[i].f[t->c_status - 1][0];
}

static double val(const table *t, uint64_t i, int c)
{
    return strtod(t->r[i].f[c], NULL);
}

/* The points on the Pareto front (a heap array of t->n flags, NULL when
 * out of memory). */
static unsigned char *front_of(const table *t)
{
    unsigned char *front = nm_calloc(t->n ? t->n : 1, 1);
    nm_sweep_summary *s = nm_calloc(t->n ? t->n : 1, sizeof *s);
    if (front && s) {
        for (uint64_t i = 0; i < t->n; i++) {
            /* points over budget stay off the front */
            s[i].status = is_within(t, i) ? NM_SWEEP_OK : NM_SWEEP_UNMAPPED;
            s[i].energy_pj = val(t, i, t->c_energy);
            s[i].seconds = val(t, i, t->c_seconds);
            s[i].area_um2 = val(t, i, t->c_area);
        }
        nm_sweep_pareto(s, t->n, front);
    } else {
        nm_free(front);
        front = NULL;
    }
    nm_free(s);
    return front;
}

/* "point N (A=v, B=w)" */
static void point_name(FILE *f, const nm_sweep_run *run, const table *t, uint64_t i)
{
    fprintf(f, "point %s (", t->r[i].f[0]);
    for (int a = 0; a < run->sw.naxes; a++)
        fprintf(f, "%s%s=%s", a ? ", " : "", run->sw.axis[a].label, t->r[i].f[1 + a]);
    fputc(')', f);
}

#define SUMMARY_FAILED_SHOWN 5

/* The closing summary: the points, which failed and why (the first few),
 * the lowest energy and EDP, the Pareto front and, with -o, the files. */
static void print_summary(FILE *f, const nm_sweep_run *run, const table *t,
                          const unsigned char *front, const char *dir)
{
    uint64_t failed = 0, over = 0, nfront = 0;
    int64_t lo_e = -1, lo_edp = -1;
    const int c_edp = t->c_energy + 3; /* energy_uj, cycles, seconds, edp_j_s */
    for (uint64_t i = 0; i < t->n; i++) {
        if (!is_ok(t, i)) {
            failed++;
            continue;
        }
        if (!is_within(t, i)) {
            over++;
            continue;
        }
        nfront += front[i];
        if (lo_e < 0 || val(t, i, t->c_energy) < val(t, (uint64_t)lo_e, t->c_energy))
            lo_e = (int64_t)i;
        if (lo_edp < 0 || val(t, i, c_edp) < val(t, (uint64_t)lo_edp, c_edp))
            lo_edp = (int64_t)i;
    }
    fprintf(f, "%llu point%s: %llu mapped, %llu failed", (unsigned long long)t->n,
            t->n == 1 ? "" : "s", (unsigned long long)(t->n - failed),
            (unsigned long long)failed);
    if (run->sw.nbudgets)
        fprintf(f, "; %llu over budget (left out below)", (unsigned long long)over);
    fputc('\n', f);
    uint64_t shown = 0;
    for (uint64_t i = 0; i < t->n && shown < SUMMARY_FAILED_SHOWN; i++)
        if (!is_ok(t, i)) {
            fputs("  failed: ", f);
            point_name(f, run, t, i);
            fprintf(f, ": %s\n", t->r[i].f[t->c_status + 1]);
            shown++;
        }
    if (failed > shown)
        fprintf(f, "  (and %llu more failed: status and reason columns)\n",
                (unsigned long long)(failed - shown));
    if (lo_e >= 0) {
        fputs("lowest energy: ", f);
        point_name(f, run, t, (uint64_t)lo_e);
        fprintf(f, ", %.6g uJ\n", val(t, (uint64_t)lo_e, t->c_energy));
        fputs("lowest EDP:    ", f);
        point_name(f, run, t, (uint64_t)lo_edp);
        fprintf(f, ", %.4g J*s\n", val(t, (uint64_t)lo_edp, c_edp));
        fprintf(f, "Pareto front (energy x time x area): %llu point%s:",
                (unsigned long long)nfront, nfront == 1 ? "" : "s");
        for (uint64_t i = 0; i < t->n; i++)
            if (front[i])
                fprintf(f, " %s", t->r[i].f[0]);
        fputc('\n', f);
    }
    if (dir)
        fprintf(f, "written: %s/points.csv, pareto.csv, sweep.json, points/, plots/\n", dir);
}

static void json_value(FILE *f, const char *s)
{
    char *end;
    if (!*s) {
        fputs("null", f);
        return;
    }
    strtod(s, &end);
    if (*end == '\0' && (isdigit((unsigned char)s[0]) || s[0] == '-'))
        fputs(s, f);
    else
        nm_report_json_string(f, s);
}

static void write_json(FILE *f, const nm_sweep_run *run, const table *t, const unsigned char *front,
                      double wall, uint64_t computed, int ranks)
{
    const nm_sweep *sw = &run->sw;
    fputs("{\n  \"design\": ", f);
    if (sw->design_axis < 0) {
        nm_report_json_string(f, sw->design);
    } else { /* varied: the files, as the axis orders them */
        const nm_sweep_axis *ax = &sw->axis[sw->design_axis];
        fputc('[', f);
        for (int v = 0; v < ax->nvalues; v++) {
            fputs(v ? ", " : "", f);
            nm_report_json_string(f, ax->path[v]);
        }
        fputc(']', f);
    }
    fputs(",\n  \"workloads\": [", f);
    for (int w = 0; w < sw->nworkloads; w++) {
        fputs(w ? ", " : "", f);
        nm_report_json_string(f, sw->workload[w]);
    }
    fprintf(f, "],\n  \"objective\": \"%s\",\n  \"mode\": \"%s\",\n", sw->objective,
            sw->random ? "random" : "grid");
    if (sw->random)
        fprintf(f, "  \"samples\": %llu,\n  \"seed\": %llu,\n",
                (unsigned long long)sw->samples, (unsigned long long)sw->seed);
    /* how the points were searched: block 1, every point cold */
    fprintf(f, "  \"warm\": {\"block\": %d, \"first\": %.17g, \"effort\": %.17g},\n",
            sw->warm_block, sw->warm_first, sw->warm_effort);
    /* what fuses: chains (unless fuse: false), networks (fuse: true written) */
    fprintf(f, "  \"fuse\": {\"chains\": %s, \"networks\": %s},\n", sw->fuse ? "true" : "false",
            sw->fuse_networks ? "true" : "false");
    fputs("  \"vary\": [", f);
    for (int a = 0; a < sw->naxes; a++) {
        fputs(a ? ",\n    {\"set\": " : "\n    {\"set\": ", f);
        nm_report_json_string(f, sw->axis[a].label);
        fputs(", \"values\": [", f);
        for (int v = 0; v < sw->axis[a].nvalues; v++) {
            fputs(v ? ", " : "", f);
            json_value(f, sw->axis[a].value[v]);
        }
        fprintf(f, "], \"dimension\": %d}", sw->axis[a].group);
    }
    fputs("\n  ],\n", f);
    if (sw->nbudgets) {
        fputs("  \"budget\": {", f);
        for (int b = 0; b < sw->nbudgets; b++) {
            fputs(b ? ", " : "", f);
            nm_report_json_string(f, sw->budget[b].column);
            fprintf(f, ": %.17g", sw->budget[b].max);
        }
        fputs("},\n", f);
    }
    /* what decides the results besides the files: the options as given */
    fputs("  \"options\": [", f);
    for (int i = 0; i < run->nargs; i++) {
        fputs(i ? ", " : "", f);
        nm_report_json_string(f, run->args[i]);
    }
    fputs("],\n  \"points\": [", f);
    const row *hdr = &t->r[t->n]; /* the header, kept after the rows */
    for (uint64_t i = 0; i < t->n; i++) {
        const row *r = &t->r[i];
        fprintf(f, "%s\n    {\"point\": %s", i ? "," : "", r->f[0]);
        fputs(", \"set\": {", f);
        for (int a = 0; a < sw->naxes; a++) {
            fputs(a ? ", " : "", f);
            nm_report_json_string(f, sw->axis[a].label);
            fputs(": ", f);
            json_value(f, r->f[1 + a]);
        }
        fputs("}", f);
        /* Every column of points.csv by its name: one naming for both. */
        for (int c = 1 + sw->naxes; c < t->c_status; c++) {
            fputs(", ", f);
            nm_report_json_string(f, hdr->f[c]);
            fputs(": ", f);
            json_value(f, r->f[c]);
        }
        fprintf(f, ", \"status\": \"%s\", \"pareto\": %s, \"reason\": ", r->f[t->c_status],
                front[i] ? "true" : "false");
        nm_report_json_string(f, r->f[t->c_status + 1]);
        fputs("}", f);
    }
    fputs("\n  ],\n  \"pareto\": [", f);
    int first = 1;
    for (uint64_t i = 0; i < t->n; i++)
        if (front[i]) {
            fprintf(f, "%s%s", first ? "" : ", ", t->r[i].f[0]);
            first = 0;
        }
    fprintf(f, "],\n  \"run\": {\"wall_seconds\": %.6f, \"points_run\": %llu, "
            "\"points_per_second\": %.6g, \"ranks\": %d, \"threads\": %d}\n}\n",
            wall, (unsigned long long)computed, wall > 0 ? (double)computed / wall : 0.0, ranks,
            run->threads ? run->threads : 1);
}

/* ---- plots ---- */

/* A label as a file name. */
static void file_name(char *out, size_t size, const char *label)
{
    size_t n = 0;
    for (; *label && n + 1 < size; label++)
        out[n++] = isalnum((unsigned char)*label) || strchr("-_.", *label) ? *label : '_';
    out[n] = '\0';
}

static int numeric_axis(const nm_sweep_axis *ax, int *geometric)
{
    double lo = INFINITY, hi = 0;
    for (int v = 0; v < ax->nvalues; v++) {
        char *end;
        double x = strtod(ax->value[v], &end);
        if (end == ax->value[v] || *end)
            return 0;
        lo = fmin(lo, x);
        hi = fmax(hi, x);
    }
    /* 1: a log scale; 2: one so wide (eight octaves and more) that a tic
     * every octave would run its labels together */
    *geometric = lo > 0 && hi / lo >= 16 ? 1 + (hi / lo >= 256) : 0;
    return 1;
}

/* Row i's line in the plot of axis a: its values on the other axes. */
static uint64_t group_key(const nm_sweep *sw, const table *t, uint64_t i, int a)
{
    int idx[NM_SWEEP_MAX_AXES];
    nm_sweep_point(sw, strtoull(t->r[i].f[0], NULL, 10), idx);
    uint64_t k = 0;
    for (int b = 0; b < sw->naxes; b++)
        if (sw->axis[b].group != sw->axis[a].group && nm_sweep_axis_leads(sw, b))
            k = k * (uint64_t)sw->axis[b].nvalues + (uint64_t)idx[b];
    return k;
}

/* A unit for times up to smax seconds, so that ticks read 8 us, not
 * 0.000008; *scale turns seconds into it. */
static const char *time_unit(double smax, double *scale)
{
    static const struct { double below, scale; const char *name; } u[] = {
        {1e-6, 1e9, "ns"}, {1e-3, 1e6, "\xc2\xb5s"}, {1.0, 1e3, "ms"}};
    for (size_t i = 0; i < sizeof u / sizeof *u; i++)
        if (smax < u[i].below) {
            *scale = u[i].scale;
            return u[i].name;
        }
    *scale = 1.0;
    return "s";
}

/* The shortest and longest time of the points that mapped (seconds). */
static void seconds_range(const table *t, double *lo, double *hi)
{
    *lo = INFINITY;
    *hi = 0.0;
    for (uint64_t i = 0; i < t->n; i++)
        if (is_ok(t, i)) {
            *lo = fmin(*lo, val(t, i, t->c_seconds));
            *hi = fmax(*hi, val(t, i, t->c_seconds));
        }
}

/* Whether the zip led by axis a moves its attributes by different values
 * (an array's sides, 16 by 8): its values are then the zip's values
 * together ("16/8"), a category each, not the first attribute's numbers,
 * which would put 16/8 and 16/16 at one x. */
static int zip_differs(const nm_sweep *sw, int a)
{
    for (int b = a + 1; b < sw->naxes && sw->axis[b].group == sw->axis[a].group; b++)
        for (int v = 0; v < sw->axis[a].nvalues; v++)
            if (strcmp(sw->axis[a].value[v], sw->axis[b].value[v]))
                return 1;
    return 0;
}

/* Whether the plots put axis a's values on a numeric x (geometric: on a
 * log scale, 2: with a tic every other octave), or as categories. */
static int axis_numeric(const nm_sweep *sw, int a, int *geometric)
{
    *geometric = 0;
    return !zip_differs(sw, a) && numeric_axis(&sw->axis[a], geometric);
}

/* Value v of axis a as the plots write it: a zip's values together when
 * they differ. */
static const char *axis_value(const nm_sweep *sw, int a, int v, char *buf, size_t size)
{
    if (!zip_differs(sw, a))
        return sw->axis[a].value[v];
    size_t n = (size_t)snprintf(buf, size, "%s", sw->axis[a].value[v]);
    for (int b = a + 1; b < sw->naxes && sw->axis[b].group == sw->axis[a].group && n < size; b++)
        n += (size_t)snprintf(buf + n, size - n, "/%s", sw->axis[b].value[v]);
    return buf;
}

/* The index of row i's value on axis a. */
static int row_value(const nm_sweep *sw, const table *t, uint64_t i, int a)
{
    int idx[NM_SWEEP_MAX_AXES];
    nm_sweep_point(sw, strtoull(t->r[i].f[0], NULL, 10), idx);
    return idx[a];
}

/* The time panels' y scale: logarithmic where the times span two decades
 * and more (a small array's 240 ms would flatten a large one's 2 ms). */
static const char *time_scale(double tlo, double thi)
{
    return tlo > 0 && thi >= 100 * tlo ? "set logscale y" : "unset logscale y";
}

/* The x label of axis a: a zip's attributes move together, so the axis
 * names them all ("PE.meshX = PE.meshY", or "MAC.meshX/MAC.meshY" when
 * their values differ). */
static void axis_label(const nm_sweep *sw, int a, char *buf, size_t size)
{
    const char *sep = zip_differs(sw, a) ? "/" : " = ";
    size_t n = (size_t)snprintf(buf, size, "%s", sw->axis[a].label);
    for (int b = a + 1; b < sw->naxes && sw->axis[b].group == sw->axis[a].group && n < size; b++)
        n += (size_t)snprintf(buf + n, size - n, "%s%s", sep, sw->axis[b].label);
}

/* One plot per varied attribute: energy and seconds against it, a line
 * for each combination of the other attributes' values. */
static int plot_axis(const char *pdir, const nm_sweep_run *run, const table *t, int a)
{
    const nm_sweep *sw = &run->sw;
    const nm_sweep_axis *ax = &sw->axis[a];
    char name[2 * NM_NAME_MAX], path[4400];
    file_name(name, sizeof name, ax->label);
    snprintf(path, sizeof path, "%s/%s.dat", pdir, name);
    FILE *f = fopen(path, "w");
    if (!f)
        return 0;
    int geometric, numeric = axis_numeric(sw, a, &geometric);
    /* Groups: the other axes' value indices, in order of first appearance. */
    uint64_t ngroups = 0;
    uint64_t *gkey = nm_calloc(t->n ? t->n : 1, sizeof *gkey);
    char (*gtitle)[256] = nm_calloc(t->n ? t->n : 1, sizeof *gtitle);
    if (!gkey || !gtitle) {
        nm_free(gkey);
        nm_free(gtitle);
        fclose(f);
        return 0;
    }
    for (uint64_t i = 0; i < t->n; i++) {
        uint64_t k = group_key(sw, t, i, a), g;
        for (g = 0; g < ngroups && gkey[g] != k; g++)
            ;
        if (g < ngroups)
            continue;
        gkey[ngroups] = k;
        size_t n = 0;
        gtitle[ngroups][0] = '\0';
        for (int b = 0; b < sw->naxes; b++)
            if (sw->axis[b].group != sw->axis[a].group && n < sizeof gtitle[0])
                n += (size_t)snprintf(gtitle[ngroups] + n, sizeof gtitle[0] - n, "%s%s=%s",
                                      n ? ", " : "", sw->axis[b].label, t->r[i].f[1 + b]);
        ngroups++;
    }
    fprintf(f, "# nestmap sweep: energy and time against %s, one block per line of the plot\n"
            "# value\tx\tenergy_uj\tseconds\n", ax->label);
    for (uint64_t g = 0; g < ngroups; g++) {
        fprintf(f, "%s# %s\n", g ? "\n\n" : "", gtitle[g][0] ? gtitle[g] : ax->label);
        for (uint64_t i = 0; i < t->n; i++) {
            if (group_key(sw, t, i, a) != gkey[g] || !is_ok(t, i))
                continue;
            char vb[256];
            fprintf(f, "\"%s\"\t%s\t%s\t%s\n", axis_value(sw, a, row_value(sw, t, i, a), vb, sizeof vb),
                    numeric ? t->r[i].f[1 + a] : "", t->r[i].f[t->c_energy],
                    t->r[i].f[t->c_seconds]);
        }
    }
    if (fclose(f) != 0) {
        nm_free(gkey);
        nm_free(gtitle);
        return 0;
    }
    snprintf(path, sizeof path, "%s/%s.gp", pdir, name);
    f = fopen(path, "w");
    if (!f) {
        nm_free(gkey);
        nm_free(gtitle);
        return 0;
    }
    fprintf(f, "# nestmap sweep: energy and time against %s.\n"
            "# Data in %s.dat (a block per line); restyle freely, then run: gnuplot %s.gp\n",
            ax->label, name, name);
    fprintf(f, "base = '%s'\nset datafile separator '\\t'\nset grid\nset key outside bottom "
            "center horizontal spacing 1.2 samplen 3 width 2\n", name);
    nm_plot_series_styles(f);
    if (numeric && geometric)
        fputs(geometric > 1 ? "set logscale x 2\nset xtics 1, 4\n" : "set logscale x 2\n", f);
    if (!numeric)
        fputs("set offsets 0.5, 0.5, 0, 0\n", f); /* categories off the frame */
    /* a time that no point changes gets no panel of its own: the title
     * says it */
    double tscale, tlo, thi;
    seconds_range(t, &tlo, &thi);
    const char *tunit = time_unit(thi, &tscale);
    int panels = thi > tlo * (1 + 1e-12) ? 2 : 1;
    /* the key below the panels, a line a series: the image grows with it;
     * past the 16 styles the series are grey and unnamed (the combined
     * figure marks the lowest) */
    int many = ngroups > 16;
    if (many)
        fputs("unset key\n", f);
    int height = ngroups > 9 && !many ? 280 + 19 * (int)ngroups : 450;
    nm_plot_terminals(f, panels == 2 ? 1100 : 700, height);
    fprintf(f, "  set multiplot layout 1,%d title ", panels);
    char xlabel[256], title[512];
    axis_label(sw, a, xlabel, sizeof xlabel);
    int tl = snprintf(title, sizeof title, "%s: %d point%s", xlabel, (int)t->n,
                      t->n == 1 ? "" : "s");
    if (many && tl > 0 && (size_t)tl < sizeof title)
        tl += snprintf(title + tl, sizeof title - (size_t)tl, ", in grey the "
                       "%llu combinations of the other attributes", (unsigned long long)ngroups);
    if (panels == 1 && thi > 0 && tl > 0 && (size_t)tl < sizeof title)
        snprintf(title + tl, sizeof title - (size_t)tl, "; time %.4g %s at every point",
                 thi * tscale, tunit);
    nm_plot_string(f, title);
    fputs("\n  set xlabel ", f);
    nm_plot_string(f, xlabel);
    fputc('\n', f);
    fprintf(f, "  tscale = %g\n", tscale);
    for (int y = 0; y < panels; y++) {
        if (y)
            fprintf(f, "  %s\n  set ylabel 'time (%s)'\n  plot ", time_scale(tlo, thi), tunit);
        else
            fputs("  set ylabel 'energy (\xc2\xb5J)'\n  plot ", f);
        for (uint64_t g = 0; g < ngroups; g++) {
            if (g)
                fputs(", \\\n       ", f);
            fprintf(f, "base.'.dat' index %llu using ", (unsigned long long)g);
            if (numeric)
                fprintf(f, y ? "2:($4*tscale)" : "2:3");
            else
                fprintf(f, y ? "0:($4*tscale):xtic(1)" : "0:3:xtic(1)");
            /* lines join a numeric axis' values; categories stand apart */
            if (many) {
                fprintf(f, " with %s lc rgb '#999999' pt 7 ps 0.5 notitle",
                        numeric ? "linespoints" : "points");
                continue;
            }
            fprintf(f, " with %s lt %llu title ", numeric ? "linespoints" : "points",
                    (unsigned long long)(g % 16 + 1));
            nm_plot_string(f, gtitle[g][0] ? gtitle[g] : ax->label);
        }
        fputc('\n', f);
    }
    fputs("  unset multiplot\n}\n", f);
    nm_free(gkey);
    nm_free(gtitle);
    return fclose(f) == 0;
}

/* Every point that mapped: seconds against energy, colored by area, the
 * Pareto front marked. */
#define PARETO_LABELS 30

static int plot_pareto(const char *pdir, const table *t, const unsigned char *front)
{
    FILE *f = nm_plot_open(pdir, "pareto.dat");
    if (!f)
        return 0;
    fputs("# nestmap sweep: every point that mapped; block 1 the Pareto front by time\n"
          "# point\tseconds\tenergy_uj\tarea_mm2\n", f);
    for (uint64_t i = 0; i < t->n; i++)
        if (is_ok(t, i))
            fprintf(f, "%s\t%s\t%s\t%s\n", t->r[i].f[0], t->r[i].f[t->c_seconds],
                    t->r[i].f[t->c_energy], t->r[i].f[t->c_area]);
    fputs("\n\n", f);
    /* The front in order of time (insertion sort: fronts are short). */
    uint64_t *ord = nm_calloc(t->n ? t->n : 1, sizeof *ord), m = 0;
    if (!ord) {
        fclose(f);
        return 0;
    }
    for (uint64_t i = 0; i < t->n; i++) {
        if (!front[i])
            continue;
        uint64_t j = m++;
        while (j > 0 && val(t, ord[j - 1], t->c_seconds) > val(t, i, t->c_seconds)) {
            ord[j] = ord[j - 1];
            j--;
        }
        ord[j] = i;
    }
    for (uint64_t k = 0; k < m; k++)
        fprintf(f, "%s\t%s\t%s\t%s\n", t->r[ord[k]].f[0], t->r[ord[k]].f[t->c_seconds],
                t->r[ord[k]].f[t->c_energy], t->r[ord[k]].f[t->c_area]);
    nm_free(ord);
    if (fclose(f) != 0)
        return 0;
    if (!(f = nm_plot_open(pdir, "pareto.gp")))
        return 0;
    fputs("# nestmap sweep: energy against time of every point that mapped, colored by\n"
          "# area; the energy x time x area front circled (not joined: a point can\n"
          "# be on it by its area alone).  Data in pareto.dat.\n"
          "base = 'pareto'\nset datafile separator '\\t'\nset grid\n", f);
    double tscale;
    double tlo, thi;
    seconds_range(t, &tlo, &thi);
    const char *tunit = time_unit(thi, &tscale);
    fprintf(f, "tscale = %g\nset xlabel 'time (%s)'\nset ylabel 'energy (\xc2\xb5J)'\n"
               "set cblabel 'area (mm\xc2\xb2)'\nset palette rgb 33,13,10\nset key top right\n",
            tscale, tunit);
    if (tlo > 0 && thi >= 100 * tlo)
        fputs("set logscale x\n", f); /* times over two decades and more */
    nm_plot_terminals(f, 1100, 450);
    /* the points coloured by area without a key entry (a coloured dot in
     * the key reads as data); the front circled and labelled by point
     * (up to PARETO_LABELS of them: more run together; pareto.csv names
     * them) */
    int labels = m <= PARETO_LABELS;
    fprintf(f, "  plot base.'.dat' index 0 using ($2*tscale):3:4 with points pt 7 ps 1.2 "
            "lc palette notitle, \\\n"
            "       base.'.dat' index 1 using ($2*tscale):3 with points pt 6 ps 2.2 lw 1.5 "
            "lc rgb 'black' title 'on the energy x time x area front (%s)'%s\n}\n",
            labels ? "labels: point" : "points in pareto.csv",
            labels ? ", \\\n       base.'.dat' index 1 using ($2*tscale):3:1 with labels "
                     "offset char 1.2,0.8 font ',9' notitle" : "");
    return fclose(f) == 0;
}

/* The combined figure: a row per dimension of the grid (a zip's first
 * attribute), energy and time against it, every point that mapped in grey
 * and the lowest over the other attributes' values joined, so one image
 * says what each attribute does.  Only for sweeps of two dimensions or
 * more (one has its axis plot). */
static int plot_overview(const char *pdir, const nm_sweep_run *run, const table *t, int *made)
{
    const nm_sweep *sw = &run->sw;
    *made = 0;
    if (sw->ngroups < 2)
        return 1;
    FILE *f = nm_plot_open(pdir, "overview.dat");
    if (!f)
        return 0;
    fputs("# nestmap sweep: each varied attribute (a zip's first), two blocks each: every point\n"
          "# that mapped, then the lowest energy and time at each value over the other\n"
          "# attributes' values (of the points within the budgets)\n"
          "# value\tx\tenergy_uj\tseconds\n", f);
    double tlo, thi;
    seconds_range(t, &tlo, &thi);
    int block = 0;
    for (int a = 0; a < sw->naxes; a++) {
        if (!nm_sweep_axis_leads(sw, a))
            continue;
        const nm_sweep_axis *ax = &sw->axis[a];
        int geometric, numeric = axis_numeric(sw, a, &geometric);
        char vb[256];
        fprintf(f, "%s# %s: every point\n", block ? "\n\n" : "", ax->label);
        for (uint64_t i = 0; i < t->n; i++) {
            if (!is_ok(t, i))
                continue;
            int v = row_value(sw, t, i, a);
            fprintf(f, "\"%s\"\t", axis_value(sw, a, v, vb, sizeof vb));
            if (numeric)
                fputs(t->r[i].f[1 + a], f);
            else
                fprintf(f, "%d", v);
            fprintf(f, "\t%s\t%s\n", t->r[i].f[t->c_energy], t->r[i].f[t->c_seconds]);
        }
        fprintf(f, "\n\n# %s: the lowest at each value\n", ax->label);
        for (int v = 0; v < ax->nvalues; v++) {
            double e = INFINITY, sec = INFINITY;
            for (uint64_t i = 0; i < t->n; i++) {
                if (!is_within(t, i) || row_value(sw, t, i, a) != v)
                    continue; /* the lowest within the budgets */
                e = fmin(e, val(t, i, t->c_energy));
                sec = fmin(sec, val(t, i, t->c_seconds));
            }
            if (e == INFINITY)
                continue; /* no point at this value mapped */
            fprintf(f, "\"%s\"\t", axis_value(sw, a, v, vb, sizeof vb));
            if (numeric)
                fputs(ax->value[v], f);
            else
                fprintf(f, "%d", v);
            fprintf(f, "\t%.17g\t%.17g\n", e, sec);
        }
        block += 2;
    }
    if (fclose(f) != 0 || !(f = nm_plot_open(pdir, "overview.gp")))
        return 0;
    int rows = block / 2, cols = thi > tlo * (1 + 1e-12) ? 2 : 1;
    double tscale;
    const char *tunit = time_unit(thi, &tscale);
    fputs("# nestmap sweep: the combined figure, a row per varied attribute: energy and time\n"
          "# against it, every point in grey, the lowest over the other attributes joined.\n"
          "# Data in overview.dat; restyle freely, then run: gnuplot overview.gp\n"
          "base = 'overview'\nset datafile separator '\\t'\nset grid\n"
          "unset key\n", f);
    nm_plot_series_styles(f);
    fprintf(f, "tscale = %g\n", tscale);
    /* room for the title above and the key below the panels, and for each
     * row's x label between them (in the image's fractions) */
    int height = 80 + 300 * rows;
    nm_plot_terminals(f, cols == 2 ? 1100 : 700, height);
    char title[256];
    int tl = snprintf(title, sizeof title, "%llu point%s: energy and time against each varied "
                      "attribute (grey: every point; joined: the lowest%s over the other "
                      "attributes)", (unsigned long long)t->n, t->n == 1 ? "" : "s",
                      sw->nbudgets ? " within budget" : "");
    if (cols == 1 && thi > 0 && tl > 0 && (size_t)tl < sizeof title)
        snprintf(title + tl, sizeof title - (size_t)tl, "; time %.4g %s at every point",
                 thi * tscale, tunit);
    fprintf(f, "  set multiplot layout %d,%d margins 0.08, 0.98, %.4f, %.4f spacing 0.09, %.4f "
            "title ", rows, cols, 55.0 / height, 1.0 - 30.0 / height, 60.0 / height);
    nm_plot_string(f, title);
    fputc('\n', f);
    int r = 0;
    for (int a = 0; a < sw->naxes; a++) {
        if (!nm_sweep_axis_leads(sw, a))
            continue;
        int geometric, numeric = axis_numeric(sw, a, &geometric);
        char xlabel[256];
        axis_label(sw, a, xlabel, sizeof xlabel);
        fputs("  set xlabel ", f);
        nm_plot_string(f, xlabel);
        fprintf(f, "\n  %s\n  %s\n  %s\n", geometric > 1 ? "set xtics 1, 4" : "set xtics autofreq",
                numeric && geometric ? "set logscale x 2" : "unset logscale x",
                numeric ? "set offsets graph 0.04, graph 0.04, graph 0.05, graph 0.05"
                        : "set offsets 0.5, 0.5, graph 0.05, graph 0.05");
        for (int y = 0; y < cols; y++) {
            const char *ycol = y ? "($4*tscale)" : "3";
            if (y)
                fprintf(f, "  %s\n  set ylabel 'time (%s)'\n", time_scale(tlo, thi), tunit);
            else
                fputs("  unset logscale y\n  set ylabel 'energy (\xc2\xb5J)'\n", f);
            /* lines join a numeric axis' values; categories stand apart */
            fprintf(f, "  plot base.'.dat' index %d using 2:%s with points pt 7 ps 0.5 "
                    "lc rgb '#999999', \\\n"
                    "       base.'.dat' index %d using 2:%s%s with %s lt 1 pt 7\n",
                    2 * r, ycol, 2 * r + 1, ycol, numeric ? "" : ":xtic(1)",
                    numeric ? "linespoints" : "points");
        }
        r++;
    }
    fputs("  unset multiplot\n}\n", f);
    *made = 1;
    return fclose(f) == 0;
}

static int write_plots(const char *dir, const nm_sweep_run *run, const table *t,
                       const unsigned char *front)
{
    char pdir[4096];
    snprintf(pdir, sizeof pdir, "%s/plots", dir);
    if (!nm_job_make_dir(pdir, run->diag))
        return 0;
    char names[NM_SWEEP_MAX_AXES + 2][2 * NM_NAME_MAX];
    int n = 0;
    for (int a = 0; a < run->sw.naxes; a++) {
        if (!nm_sweep_axis_leads(&run->sw, a))
            continue; /* a zip is plotted once, against its first attribute */
        if (!plot_axis(pdir, run, t, a)) {
            fprintf(run->diag, "nestmap: cannot write the plots in '%s'\n", pdir);
            return 0;
        }
        file_name(names[n++], sizeof names[0], run->sw.axis[a].label);
    }
    if (!plot_pareto(pdir, t, front)) {
        fprintf(run->diag, "nestmap: cannot write the plots in '%s'\n", pdir);
        return 0;
    }
    snprintf(names[n++], sizeof names[0], "pareto");
    int overview;
    if (!plot_overview(pdir, run, t, &overview)) {
        fprintf(run->diag, "nestmap: cannot write the plots in '%s'\n", pdir);
        return 0;
    }
    if (overview)
        snprintf(names[n++], sizeof names[0], "overview");
    if (!nm_plot_have_gnuplot()) {
        if (!run->quiet)
            fprintf(run->diag, "nestmap sweep: gnuplot is not installed: the plots are left as "
                    "scripts in %s (Debian: apt-get install gnuplot-nox)\n", pdir);
        return 1;
    }
    char log[4200];
    snprintf(log, sizeof log, "%s/gnuplot.log", pdir);
    unlink(log);
    const char *scripts[NM_SWEEP_MAX_AXES + 2];
    for (int i = 0; i < n; i++)
        scripts[i] = names[i];
    nm_error err;
    nm_error_clear(&err);
    if (nm_plot_render(pdir, scripts, n, &err) == NM_OK)
        return 1;
    fprintf(run->diag, "nestmap sweep: %s\n", err.msg);
    return 0;
}

/* Writes name in dir through a temporary file renamed into place. */
static FILE *open_tmp(const char *dir, const char *name, char *tmp, char *final, size_t size,
                      FILE *diag)
{
    snprintf(final, size, "%s/%s", dir, name);
    snprintf(tmp, size, "%s/.%s.tmp", dir, name);
    FILE *f = fopen(tmp, "w");
    if (!f)
        fprintf(diag, "nestmap: cannot write '%s': %s\n", tmp, strerror(errno));
    return f;
}

static int close_tmp(FILE *f, const char *tmp, const char *final, FILE *diag)
{
    if (!sync_close(f, tmp, diag))
        return 0;
    if (rename(tmp, final) != 0) {
        fprintf(diag, "nestmap: cannot write '%s': %s\n", final, strerror(errno));
        return 0;
    }
    return 1;
}

/* points.csv's lines, each with its '\n' (heap): [0] the header, then
 * one per row.  NULL when the file cannot be read. */
static char **read_lines(const char *path, uint64_t *n)
{
    size_t len;
    char *text = slurp(path, &len);
    if (!text)
        return NULL;
    uint64_t count = 0;
    for (size_t i = 0; i < len; i++)
        count += text[i] == '\n';
    char **lines = nm_calloc(count + 1, sizeof *lines);
    const char *p = text;
    for (uint64_t k = 0; lines && k < count; k++) {
        const char *nl = strchr(p, '\n');
        if (!(lines[k] = strndup(p, (size_t)(nl - p) + 1))) {
            while (k > 0)
                free(lines[--k]);
            nm_free(lines);
            lines = NULL;
        }
        p = nl + 1;
    }
    free(text);
    *n = count;
    return lines;
}

int nm_sweep_dir_finish(nm_sweep_dir *d, const nm_sweep_run *run, double wall, uint64_t computed,
                     int ranks)
{
    char path[4200], tmp[4200], final[4200];
    snprintf(path, sizeof path, "%s/points.csv", d->dir);
    fflush(d->points);
    uint64_t nl = 0;
    char **own = read_lines(path, &nl);
    if (!own || nl == 0) {
        fprintf(run->diag, "nestmap: cannot read '%s'\n", path);
        nm_free(own);
        return 0;
    }
    table t;
    int ok = table_read(&t, run, own + 1, nl - 1);
    if (!ok)
        fprintf(run->diag, "nestmap: '%s' does not read back as this sweep's rows\n", path);
    row hdr;
    int hdr_in = 0; /* hdr moved to the table's end */
    memset(&hdr, 0, sizeof hdr);
    if (ok && !(ok = split_row(&hdr, own[0])))
        fprintf(run->diag, "nestmap: out of memory\n");
    unsigned char *front = ok ? front_of(&t) : NULL;
    if (ok && !front) {
        fprintf(run->diag, "nestmap: out of memory\n");
        ok = 0;
    }
    if (ok) {
        /* The table keeps the header after its rows (for sweep.json). */
        row *grown = realloc(t.r, (t.n + 1) * sizeof *t.r);
        if (grown) {
            t.r = grown;
            t.r[t.n] = hdr;
            memset(&hdr, 0, sizeof hdr);
            hdr_in = 1;
        } else {
            ok = 0;
        }
    }
    if (ok) {
        FILE *f = open_tmp(d->dir, "pareto.csv", tmp, final, sizeof tmp, run->diag);
        ok = f != NULL;
        if (ok) {
            fputs(own[0], f);
            for (uint64_t i = 0; i < t.n; i++)
                if (front[i])
                    fputs(t.r[i].line, f);
            ok = close_tmp(f, tmp, final, run->diag);
        }
        /* A finished sweep resumed computes nothing: its sweep.json keeps
         * the run that did. */
        char json[4200];
        snprintf(json, sizeof json, "%s/sweep.json", d->dir);
        if (!ok || (computed == 0 && access(json, F_OK) == 0))
            ;
        else if ((f = open_tmp(d->dir, "sweep.json", tmp, final, sizeof tmp, run->diag)) != NULL) {
            write_json(f, run, &t, front, wall, computed, ranks);
            ok = close_tmp(f, tmp, final, run->diag);
        } else {
            ok = 0;
        }
        if (ok)
            ok = write_plots(d->dir, run, &t, front);
        if (ok && run->json) {
            char *buf = NULL;
            size_t len = 0;
            FILE *js = open_memstream(&buf, &len);
            if (js) {
                write_json(js, run, &t, front, wall, computed, ranks);
                ok = fclose(js) == 0 && buf;
            }
            if (ok && js) {
                nm_job_json_warnings(run->out, buf, len, run->doc);
                ok = fflush(run->out) == 0;
            } else {
                fprintf(run->diag, "nestmap: out of memory for the JSON output\n");
                ok = 0;
            }
            free(buf);
        }
        if (ok && !run->json)
            print_summary(run->out, run, &t, front, d->dir);
    }
    t.n += (uint64_t)hdr_in; /* the header too */
    table_free(&t);
    row_free(&hdr);
    for (uint64_t k = 0; k < nl; k++)
        free(own[k]);
    nm_free(own);
    nm_free(front);
    return ok;
}

void nm_sweep_print(FILE *f, const nm_sweep_run *run, char *const *rows, uint64_t n)
{
    table t;
    if (!table_read(&t, run, rows, n)) {
        table_free(&t);
        return;
    }
    fprintf(f, "%-6s", "point");
    for (int a = 0; a < run->sw.naxes; a++)
        fprintf(f, " %18s", run->sw.axis[a].label);
    fprintf(f, " %14s %14s %12s %10s %7s  %s\n", "energy (uJ)", "cycles", "EDP (J*s)",
            "area mm2", "x bound", "status");
    for (uint64_t i = 0; i < t.n; i++) {
        const row *r = &t.r[i];
        fprintf(f, "%-6s", r->f[0]);
        for (int a = 0; a < run->sw.naxes; a++)
            fprintf(f, " %18s", r->f[1 + a]);
        if (r->f[t.c_energy][0])
            fprintf(f, " %14.6g %14.0f %12.4g %10.4g %7.2f", val(&t, i, t.c_energy),
                    val(&t, i, t.c_cycles), val(&t, i, t.c_energy + 3), val(&t, i, t.c_area),
                    val(&t, i, t.c_energy + 9));
        else
            fprintf(f, " %14s %14s %12s %10s %7s", "-", "-", "-", "-", "-");
        if (r->f[t.c_status - 1][0])
            fprintf(f, "  over budget: %s\n", r->f[t.c_status - 1]);
        else
            fprintf(f, "  %s%s%s\n", r->f[t.c_status], r->f[t.c_status + 1][0] ? ": " : "",
                    r->f[t.c_status + 1]);
    }
    unsigned char *front = front_of(&t);
    if (front) {
        fputc('\n', f);
        print_summary(f, run, &t, front, NULL);
    }
    nm_free(front);
    table_free(&t);
}
