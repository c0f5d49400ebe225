/* job.c — a command's work as one call (job.h), shared by the command line
 * and the Python module. */
#include <config.h>

#include <errno.h>
#include <sys/stat.h>
#include <time.h>
#include <stdlib.h>
#include <string.h>

#include "nestmap/alloc.h"
#include "nestmap/estimate.h"
#include "nestmap/job.h"
#include "nestmap/mapspace.h"
#include "nestmap/path.h"
#include "nestmap/report.h"
#include "nestmap/roofline.h"

nm_status nm_job_load(nm_spec *spec, const nm_job_input *in, unsigned need, nm_error *err)
{
    memset(spec, 0, sizeof *spec);
    if (in->builtin_energy)
        need |= NM_BUILTIN_ENERGY;
    char(*paths)[NM_PATH_MAX] = nm_calloc(in->nfiles ? in->nfiles : 1, sizeof *paths);
    const char **files = nm_calloc(in->nfiles ? in->nfiles : 1, sizeof *files);
    nm_status st = NM_OK;
    if (!paths || !files)
        st = nm_error_set(err, NM_ERR_NOMEM, NULL, 0, 0, "out of memory");
    size_t stdin_uses = 0;
    for (size_t i = 0; st == NM_OK && i < in->nfiles; i++) {
        files[i] = paths[i];
        stdin_uses += !strcmp(in->files[i], "-");
        /* An absolute path is not searched for: the loader says why it fails. */
        if (!nm_path_find(in->files[i], paths[i], NM_PATH_MAX) && in->files[i][0] != '/') {
            char roots[4096];
            nm_path_roots(roots, sizeof roots);
            st = nm_error_set(err, NM_ERR_IO, in->files[i], 0, 0, "no such file, nor a design "
                              "or workload of that name under %s (NESTMAP_PATH=DIR:DIR... adds "
                              "folders to look in)", roots);
        }
    }
    if (st == NM_OK && stdin_uses > 1)
        st = nm_error_set(err, NM_ERR_INPUT, NULL, 0, 0, "'-' (standard input) is named %zu "
                          "times; it can be read once", stdin_uses);
    if (st == NM_OK) {
        nm_spec_opts so = {in->sets, in->nsets, in->vars, in->nvars};
        st = nm_spec_load_opts(spec, files, in->nfiles, &so, need, err);
        spec->arch.stride_rule_2024 = in->stride_2024;
    }
    nm_free(paths);
    nm_free(files);
    return st;
}

/* err as one line: "FILE:LINE:COL: LABELMESSAGE", the place as far as known,
 * then `none` when there is no place ("nestmap: " or ""). */
static void error_text(char *buf, size_t size, const nm_error *err, const char *label,
                       const char *none)
{
    if (err->file[0] && err->line > 0)
        snprintf(buf, size, "%.*s:%d:%d: %s%s", (int)(size / 3), err->file, err->line, err->col,
                 label, err->msg);
    else if (err->file[0])
        snprintf(buf, size, "%.*s: %s%s", (int)(size / 3), err->file, label, err->msg);
    else
        snprintf(buf, size, "%s%s%s", none, label, err->msg);
}

void nm_job_error_line(char *buf, size_t size, const nm_error *err)
{
    error_text(buf, size, err, "error: ", "nestmap: ");
}

void nm_job_error_reason(char *buf, size_t size, const nm_error *err)
{
    error_text(buf, size, err, "", "");
    for (char *p = buf; *p; p++)
        if (*p == '\n' || *p == '\r')
            *p = ' ';
}

/* Prints line `line` (1-based) of `path` with a caret under column `col`. */
static void show_source(FILE *out, const char *path, int line, int col)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return;
    char buf[4096];
    int n = 1;
    while (n < line && fgets(buf, sizeof buf, f))
        if (strchr(buf, '\n'))
            n++;
    if (n == line && fgets(buf, sizeof buf, f)) {
        buf[strcspn(buf, "\r\n")] = '\0';
        /* Show only printable text; a binary file's bytes stay hidden. */
        int printable = 1;
        for (char *p = buf; *p; p++)
            if ((unsigned char)*p < 0x20 && *p != '\t')
                printable = 0;
        if (printable) {
            fprintf(out, "%5d | %s\n      | ", line, buf);
            for (int i = 1; i < col && buf[i - 1]; i++)
                fputc(buf[i - 1] == '\t' ? '\t' : ' ', out);
            fputs("^\n", out);
        }
    }
    fclose(f);
}

void nm_job_print_error(FILE *f, const nm_error *err)
{
    char line[NM_ERROR_FILE_MAX + NM_ERROR_MSG_MAX + 64];
    nm_job_error_line(line, sizeof line, err);
    fprintf(f, "%s\n", line);
    if (err->file[0] && err->line > 0)
        show_source(f, err->file, err->line, err->col);
}

void nm_job_print_warnings(FILE *f, const nm_ydoc *doc, size_t first)
{
    for (size_t i = first; i < doc->nwarnings; i++) {
        const nm_ywarning *w = &doc->warnings[i];
        if (w->file)
            fprintf(f, "%s:%d:%d: warning: %s\n", w->file, w->line, w->col, w->msg);
        else
            fprintf(f, "nestmap: warning: %s\n", w->msg);
    }
}

nm_status nm_job_mkdirs(const char *dir, nm_error *err)
{
    /* The parents too, as mkdir -p makes them. */
    char path[4096];
    snprintf(path, sizeof path, "%s", dir);
    for (char *p = path + 1; *p; p++) {
        if (*p != '/')
            continue;
        *p = '\0';
        if (mkdir(path, 0777) != 0 && errno != EEXIST)
            break;
        *p = '/';
    }
    errno = 0;
    if (mkdir(dir, 0777) == 0 || errno == EEXIST) {
        struct stat sb;
        if (stat(dir, &sb) == 0 && S_ISDIR(sb.st_mode))
            return NM_OK;
    }
    return nm_error_set(err, NM_ERR_IO, NULL, 0, 0, "cannot create directory '%s': %s", dir,
                        errno ? strerror(errno) : "not a directory");
}

int nm_job_make_dir(const char *dir, FILE *diag)
{
    nm_error err;
    nm_error_clear(&err);
    if (nm_job_mkdirs(dir, &err) == NM_OK)
        return 1;
    fprintf(diag, "nestmap: %s\n", err.msg);
    return 0;
}

double nm_job_wall(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* A non-negative count for option `name`. */
static nm_status count(const char *name, const char *text, uint64_t *out, nm_error *err)
{
    char *end;
    errno = 0;
    unsigned long long v = text ? strtoull(text, &end, 10) : 0;
    if (!text || !*text || *end || errno || text[0] == '-')
        return nm_error_set(err, NM_ERR_INPUT, NULL, 0, 0, "--%s needs a non-negative integer "
                            "(got '%s')", name, text ? text : "nothing");
    *out = v;
    return NM_OK;
}

/* A flag's value: none or "true" sets it, "false" clears it. */
static nm_status flag(const char *name, const char *text, int *on, nm_error *err)
{
    if (!text || !strcmp(text, "true") || !strcmp(text, "1"))
        *on = 1;
    else if (!strcmp(text, "false") || !strcmp(text, "0"))
        *on = 0;
    else
        return nm_error_set(err, NM_ERR_INPUT, NULL, 0, 0, "--%s is a flag: true or false "
                            "(got '%s')", name, text);
    return NM_OK;
}

static nm_status set_metrics(nm_search_opts *o, const char *text, nm_error *err)
{
    nm_metric m[NM_MAX_METRICS];
    int n = 0;
    const char *p = text ? text : "";
    while (*p) {
        size_t len = strcspn(p, ",");
        char tok[64];
        snprintf(tok, sizeof tok, "%.*s", (int)(len < sizeof tok ? len : sizeof tok - 1), p);
        int k = nm_metric_parse(tok);
        if (k < 0 || n >= NM_MAX_METRICS)
            return nm_error_set(err, NM_ERR_INPUT, NULL, 0, 0, "unknown metric '%s' (energy, "
                                "delay, edp, ed2p, last_level_accesses)", tok);
        m[n++] = (nm_metric)k;
        p += len + (p[len] == ',');
    }
    if (!n)
        return nm_error_set(err, NM_ERR_INPUT, NULL, 0, 0, "--metric needs at least one "
                            "metric");
    memcpy(o->metric, m, sizeof m);
    o->nmetrics = n;
    return NM_OK;
}

nm_status nm_job_search_option(nm_search_opts *o, const char *name, const char *value,
                               nm_error *err)
{
    uint64_t v;
    nm_status st = NM_OK;
    if (!strcmp(name, "algorithm")) {
        if (!value || !nm_strategy_find(value))
            return nm_error_set(err, NM_ERR_INPUT, NULL, 0, 0, "unknown algorithm '%s' (one "
                                "of %s)", value ? value : "", nm_strategy_names());
        o->algorithm = value;
    } else if (!strcmp(name, "metric")) {
        st = set_metrics(o, value, err);
    } else if (!strcmp(name, "max-evals")) {
        st = count(name, value, &o->max_evals, err);
    } else if (!strcmp(name, "search-size")) {
        st = count(name, value, &o->search_size, err);
    } else if (!strcmp(name, "victory")) {
        if ((st = count(name, value, &o->victory, err)) == NM_OK)
            o->victory_set = 1;
    } else if (!strcmp(name, "timeout")) {
        if ((st = count(name, value, &o->timeout, err)) == NM_OK)
            o->timeout_set = 1;
    } else if (!strcmp(name, "top")) {
        if ((st = count(name, value, &v, err)) == NM_OK)
            o->topk = (int)(v > 1000 ? 1000 : v);
    } else if (!strcmp(name, "time-limit")) {
        char *end;
        double s = value ? strtod(value, &end) : 0;
        if (!value || *end || !(s > 0))
            return nm_error_set(err, NM_ERR_INPUT, NULL, 0, 0, "--time-limit needs a "
                                "positive number of seconds");
        o->time_limit = s;
    } else if (!strcmp(name, "effort")) {
        char *end;
        double e = value ? strtod(value, &end) : 0;
        if (!value || *end || !(e > 0 && e <= 1000))
            return nm_error_set(err, NM_ERR_INPUT, NULL, 0, 0, "--effort needs a number above "
                                "0 (1: the default search's budget)");
        o->effort = e;
    } else if (!strcmp(name, "lanes")) {
        if ((st = count(name, value, &v, err)) != NM_OK)
            return st;
        if (v < 1 || v > NM_MAX_LANES)
            return nm_error_set(err, NM_ERR_INPUT, NULL, 0, 0, "--lanes must be 1 to %d",
                                NM_MAX_LANES);
        o->lanes = (int)v;
    } else if (!strcmp(name, "threads")) {
        if ((st = count(name, value, &v, err)) != NM_OK)
            return st;
        if (v < 1 || v > 4096)
            return nm_error_set(err, NM_ERR_INPUT, NULL, 0, 0, "--threads must be 1 to 4096");
        o->threads = (int)v;
    } else if (!strcmp(name, "seed")) {
        st = count(name, value, &o->seed, err);
    } else if (!strcmp(name, "imperfect")) {
        st = flag(name, value, &o->imperfect, err);
    } else if (!strcmp(name, "no-refine")) {
        int off = 0;
        if ((st = flag(name, value, &off, err)) == NM_OK && off)
            o->refine = o->fill = 0;
    } else {
        return nm_error_set(err, NM_ERR_INPUT, NULL, 0, 0, "unknown search option '%s' "
                            "(algorithm, metric, max-evals, search-size, victory, timeout, "
                            "top, time-limit, effort, lanes, threads, seed, imperfect, no-refine)", name);
    }
    return st;
}

void nm_job_bandwidth_warn(nm_ydoc *doc, const nm_arch *arch)
{
    char names[1024] = "", peak[256] = "";
    size_t n = 0;
    int count = 0;
    const nm_ynode *at = NULL;
    for (int l = arch->nlevels - 1; l >= 0; l--) { /* outermost first */
        const nm_level *L = &arch->level[l];
        if (L->dummy || L->bw_stated)
            continue;
        if (!at)
            at = L->node;
        count++;
        if (n < sizeof names)
            n += (size_t)snprintf(names + n, sizeof names - n, "%s%s", n ? ", " : "", L->name);
        double bps;
        const char *src;
        if (L->is_dram && !peak[0] &&
            nm_estimate_dram_peak(L->dram_type[0] ? L->dram_type : "LPDDR4", &bps, &src))
            snprintf(peak, sizeof peak, "; for %s, %s peaks at %.4g GB/s (--set %s.type=TYPE "
                     "sets a type's peak)", L->name, src, bps * 1e-9, L->name);
    }
    if (count)
        (void)nm_ydoc_warn(doc, at, "no bandwidth given for %s: %s unlimited, as Timeloop "
                           "assumes, so no cycle waits on %s; give read_bandwidth and "
                           "write_bandwidth or shared_bandwidth (words per cycle, or bytes per "
                           "second: 400GB/s), or write 'unlimited' to say so%s", names,
                           count == 1 ? "it is" : "they are", count == 1 ? "it" : "them", peak);
}

nm_status nm_job_model(nm_spec *spec, nm_job_model_out *out, nm_error *err)
{
    out->valid = 0;
    out->broken[0] = '\0';
    nm_job_bandwidth_warn(&spec->doc, &spec->arch);
    /* Inputs that carry constraints (a map.yaml beside the design it was
     * searched on, or a v0.4 design's own): the mapping must meet them. */
    if (spec->constraints || spec->constraints2 || spec->arch.constraints) {
        nm_mapspace *ms = nm_calloc(1, sizeof *ms);
        if (!ms)
            return nm_error_set(err, NM_ERR_NOMEM, NULL, 0, 0, "out of memory");
        nm_status st = nm_mapspace_init(ms, &spec->arch, &spec->wl, spec->constraints,
                                        spec->constraints2, err);
        if (st == NM_OK)
            nm_mapspace_check(ms, &spec->map, out->broken, sizeof out->broken);
        nm_free(ms);
        if (st != NM_OK)
            return st;
        if (out->broken[0])
            return NM_OK;
    }
    nm_model mdl;
    nm_status st = nm_model_init(&mdl, &spec->arch, &spec->wl, err);
    if (st != NM_OK)
        return st;
    out->valid = nm_model_eval(&mdl, &spec->map, &out->st, &out->nest);
    if (out->valid && spec->arch.noc) /* what each network carries, for the reports */
        out->valid = nm_model_noc_stats(&mdl, &spec->map, &out->st, &out->noc);
    if (out->valid && spec->arch.sparse.formats) /* the metadata, for the reports */
        out->valid = nm_model_sparse_stats(&mdl, &spec->map, &out->st, &out->spd);
    nm_model_fini(&mdl);
    return NM_OK;
}

nm_status nm_job_map(nm_spec *spec, const nm_search_opts *o, nm_search_result *res,
                     nm_job_detail *detail, nm_error *err)
{
    memset(res, 0, sizeof *res);
    nm_mapspace *ms = nm_calloc(1, sizeof *ms);
    if (!ms)
        return nm_error_set(err, NM_ERR_NOMEM, NULL, 0, 0, "out of memory");
    nm_status st = nm_mapspace_init(ms, &spec->arch, &spec->wl, spec->constraints,
                                    spec->constraints2, err);
    if (st == NM_OK && (spec->imperfect || o->imperfect))
        st = nm_mapspace_enable_imperfect(ms, err);
    if (st == NM_OK)
        st = nm_search_run(ms, o, res, err);
    nm_free(ms);
    if (st != NM_OK)
        return st;
    nm_job_bandwidth_warn(&spec->doc, &spec->arch);
    (void)nm_job_search_warn(&spec->doc, &spec->arch, &spec->wl, res, o);
    if (res->found && detail && (spec->arch.noc || spec->arch.sparse.formats)) {
        nm_model mdl;
        if (nm_model_init(&mdl, &spec->arch, &spec->wl, err) == NM_OK) {
            if (spec->arch.noc) /* what each network carries */
                nm_model_noc_stats(&mdl, &res->best.map, &res->best_stats, &detail->noc);
            if (spec->arch.sparse.formats) /* the metadata per rank, as model prints it */
                nm_model_sparse_stats(&mdl, &res->best.map, &res->best_stats, &detail->spd);
            nm_model_fini(&mdl);
        }
    }
    return NM_OK;
}

nm_status nm_job_network_parse(nm_spec *spec, nm_network *net, nm_error *err)
{
    memset(net, 0, sizeof *net);
    const nm_ynode *root = spec->doc.root;
    const nm_ynode *node = nm_ymap_get(root, "network");
    if (!node)
        return nm_error_set(err, NM_ERR_INPUT, NULL, 0, 0, "no 'network' in the input files (a "
                            "list of layers; see nestmap network --help)");
    nm_status st = nm_network_parse(net, node, &spec->doc, err);
    for (size_t i = 0; i < root->n && st == NM_OK; i++) {
        const nm_ynode *k = nm_ymap_key(root, i);
        if (!strcmp(k->str, "problem") || !strcmp(k->str, "mapping"))
            st = nm_ydoc_warn(&spec->doc, k, "'%s' is not used: the network's layers are "
                              "mapped instead", k->str);
    }
    if (st == NM_ERR_NOMEM)
        nm_error_set(err, NM_ERR_NOMEM, NULL, 0, 0, "out of memory");
    return st;
}

nm_status nm_job_network_map(nm_spec *spec, const nm_network *net, const nm_search_opts *o,
                             nm_layer_result **out, void (*done)(void *, int, int),
                             void *ctx, nm_error *err)
{
    *out = nm_calloc((size_t)(net->nlayers ? net->nlayers : 1), sizeof **out);
    if (!*out)
        return nm_error_set(err, NM_ERR_NOMEM, NULL, 0, 0, "out of memory");
    nm_status st = nm_network_map_report(net, &spec->arch, spec->constraints, spec->constraints2,
                                         o, o->threads, *out, done, ctx, err);
    if (st == NM_OK) {
        nm_job_bandwidth_warn(&spec->doc, &spec->arch);
        (void)nm_job_network_warn(&spec->doc, &spec->arch, net, *out, o);
    }
    return st;
}

/* Where a found result's cycles lie: FAR above twice the larger of its
 * bounds (roofline or fill: a longer search may help), LIMITED above twice
 * the roofline only because the fill bound is (the constraints and the
 * layer's factors keep the array from filling), else NEAR.  *x: the cycles
 * over the larger bound (FAR) or over the roofline (LIMITED); r and rf get
 * the roofline and the one raised to the fill bound. */
enum { CYCLES_NEAR, CYCLES_FAR, CYCLES_LIMITED };

static int cycles_verdict(const nm_arch *arch, const nm_workload *wl,
                          const nm_search_result *res, double *x, nm_roofline *r,
                          nm_roofline *rf)
{
    nm_roofline_of(r, arch, wl);
    nm_search_roofline(res, arch, wl, rf);
    double c = (double)res->best_stats.cycles;
    if ((*x = c / rf->bound_cycles) > 2.0)
        return CYCLES_FAR;
    return (*x = c / r->bound_cycles) > 2.0 ? CYCLES_LIMITED : CYCLES_NEAR;
}

size_t nm_job_search_warn(nm_ydoc *doc, const nm_arch *arch, const nm_workload *wl,
                          const nm_search_result *res, const nm_search_opts *o)
{
    size_t before = doc->nwarnings;
    if (res->found) {
        nm_roofline r, rf;
        double x;
        int v = cycles_verdict(arch, wl, res, &x, &r, &rf);
        nm_status st = NM_OK;
        if (v == CYCLES_FAR)
            st = nm_ydoc_warn(doc, NULL, "the best mapping takes %.1fx the %s bound of %.0f "
                              "cycles: a longer search may do better (try --victory %llu, or "
                              "--algorithm hybrid)", x, rf.bound_cycles > r.bound_cycles ?
                              "fill" : "roofline", rf.bound_cycles,
                              (unsigned long long)(o->victory ? 10 * o->victory : 1000));
        else if (v == CYCLES_LIMITED)
            st = nm_ydoc_warn(doc, NULL, "the best mapping takes %.1fx the roofline bound of "
                              "%.0f cycles because the constraints and the layer's factors keep "
                              "at most %llu of the %lld arithmetic units busy at once (at least "
                              "%.0f cycles): a longer search cannot do better; the design's "
                              "constraints or its array can", x, r.bound_cycles,
                              (unsigned long long)res->fill, (long long)arch->arith.instances,
                              rf.bound_cycles);
        if (st != NM_OK)
            return before;
    }
    /* (not when the backing store is too small: no search can help) */
    if (strstr(res->stopped_by, "timeout") && res->valid < 1000 &&
        !nm_report_backing_note(NULL, 0, arch, res))
        (void)nm_ydoc_warn(doc, NULL, "the search ended by its timeout after only %llu valid "
                           "mapping%s: most candidates are invalid here; raise --timeout "
                           "(now %llu) or constrain the space", (unsigned long long)res->valid,
                           res->valid == 1 ? "" : "s", (unsigned long long)o->timeout);
    return before;
}

size_t nm_job_network_warn(nm_ydoc *doc, const nm_arch *arch, const nm_network *net,
                           const nm_layer_result *out, const nm_search_opts *o)
{
    size_t before = doc->nwarnings;
    int far = 0, starved = 0, worst = -1, limited = 0, wlim = -1;
    double worst_x = 0, wlim_x = 0;
    for (int i = 0; i < net->nlayers; i++) {
        if (net->layer[i].same_as != i || out[i].status != NM_OK)
            continue;
        const nm_search_result *r = &out[i].res;
        if (strstr(r->stopped_by, "timeout") && r->valid < 1000 &&
            !nm_report_backing_note(NULL, 0, arch, r))
            starved++;
        if (!r->found)
            continue;
        nm_roofline rl, rf;
        double x;
        int v = cycles_verdict(arch, &net->layer[i].wl, r, &x, &rl, &rf);
        if (v == CYCLES_FAR) {
            far++;
            if (x > worst_x) {
                worst_x = x;
                worst = i;
            }
        } else if (v == CYCLES_LIMITED) {
            limited++;
            if (x > wlim_x) {
                wlim_x = x;
                wlim = i;
            }
        }
    }
    if (limited && nm_ydoc_warn(doc, NULL, "%d distinct layer%s end%s above 2x the roofline "
                                "cycle bound because the constraints and the layer's factors "
                                "keep the arithmetic units from filling (the worst, %s, at "
                                "%.1fx, keeps at most %llu of %lld busy): a longer search "
                                "cannot do better; the design's constraints or its array can",
                                limited, limited == 1 ? "" : "s", limited == 1 ? "s" : "",
                                net->layer[wlim].name, wlim_x,
                                (unsigned long long)out[wlim].res.fill,
                                (long long)arch->arith.instances) != NM_OK)
        return before;
    if (far && nm_ydoc_warn(doc, NULL, "%d distinct layer%s end%s above 2x the cycle bound "
                            "(roofline or fill; the worst, %s, at %.1fx): a longer search may "
                            "do better "
                            "(try --victory %llu, or --algorithm hybrid)", far,
                            far == 1 ? "" : "s", far == 1 ? "s" : "", net->layer[worst].name,
                            worst_x, (unsigned long long)(o->victory ? 10 * o->victory : 1000))
                            != NM_OK)
        return before;
    if (starved)
        (void)nm_ydoc_warn(doc, NULL, "%d distinct layer%s ended by the timeout with fewer than "
                           "1000 valid mappings: raise --timeout (now %llu) or constrain the "
                           "space", starved, starved == 1 ? "" : "s",
                           (unsigned long long)o->timeout);
    return before;
}

int nm_job_json_warnings(FILE *f, const char *text, size_t len, const nm_ydoc *doc)
{
    /* The object's closing brace is its last non-space character. */
    size_t end = len;
    while (end && text[end - 1] != '}')
        end--;
    if (!end) {
        fwrite(text, 1, len, f);
        return 0;
    }
    size_t body = end - 1;
    while (body && (text[body - 1] == '\n' || text[body - 1] == ' '))
        body--;
    fwrite(text, 1, body, f);
    fputs(",\n \"warnings\": [", f);
    for (size_t i = 0; doc && i < doc->nwarnings; i++) {
        const nm_ywarning *w = &doc->warnings[i];
        fputs(i ? ",\n  {\"file\": " : "\n  {\"file\": ", f);
        if (w->file)
            nm_report_json_string(f, w->file);
        else
            fputs("null", f);
        fprintf(f, ", \"line\": %d, \"col\": %d, \"message\": ", w->line, w->col);
        nm_report_json_string(f, w->msg);
        fputc('}', f);
    }
    fputs(doc && doc->nwarnings ? "\n ]\n}\n" : "]\n}\n", f);
    return 1;
}
