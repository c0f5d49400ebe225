/* nestmapmodule.c — nestmap._nestmap, the CPython binding of libnestmap.
 *
 * Thin on purpose: each function loads the input files as the command line
 * does (nm_job_load), runs the same job (job.h) with the GIL released, and
 * returns the JSON object the command's --json prints, as text; the
 * package's __init__.py turns it into Python objects.  So a result from
 * Python is the command line's to the last digit.  Errors raise
 * nestmap.Error with the command line's "FILE:LINE:COL: error: ..." text.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <pythread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nestmap/alloc.h"
#include "nestmap/fusion.h"
#include "nestmap/job.h"
#include "nestmap/override.h"
#include "nestmap/report.h"
#include "nestmap/sweep_run.h"

static PyObject *nm_py_error; /* nestmap.Error */

/* Ctrl-C (a notebook's interrupt) while a search or a sweep runs in the
 * main thread: as on the command line, a handler of ours sets the run's
 * stop flag, the library ends the run cleanly, and KeyboardInterrupt is
 * raised once it has returned (a sweep directory is then resumable).  In
 * other threads runs are not interruptible and Python's handler stays. */
static unsigned long main_thread;
static volatile sig_atomic_t interrupted;

static void on_sigint(int sig)
{
    (void)sig;
    interrupted = 1;
}

typedef struct interrupt {
    int on;
    struct sigaction old;
} interrupt;

/* Returns the stop flag for the run (NULL outside the main thread). */
static volatile sig_atomic_t *interrupt_begin(interrupt *c)
{
    c->on = PyThread_get_thread_ident() == main_thread;
    if (!c->on)
        return NULL;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_sigint;
    sigemptyset(&sa.sa_mask);
    interrupted = 0;
    if (sigaction(SIGINT, &sa, &c->old) != 0) {
        c->on = 0;
        return NULL;
    }
    return &interrupted;
}

/* Restores Python's handler; 1 (KeyboardInterrupt set) when interrupted. */
static int interrupt_end(interrupt *c)
{
    if (!c->on)
        return 0;
    sigaction(SIGINT, &c->old, NULL);
    if (!interrupted)
        return 0;
    PyErr_SetNone(PyExc_KeyboardInterrupt);
    return 1;
}

/* The arguments every function takes, converted: files, --set overrides,
 * --jinja variables (their text copied, since the variables point into
 * it), and the reading rules. */
typedef struct py_input {
    nm_job_input in;
    const char **files;
    nm_override *sets;
    nm_tmpl_var *vars;
    char **var_text;
    size_t nvar_text;
} py_input;

static void input_fini(py_input *p)
{
    nm_free(p->files);
    nm_free(p->sets);
    nm_free(p->vars);
    for (size_t i = 0; i < p->nvar_text; i++)
        free(p->var_text[i]);
    nm_free(p->var_text);
}

/* Raises nestmap.Error for err. */
static PyObject *fail_with(const nm_error *err)
{
    char line[NM_ERROR_FILE_MAX + NM_ERROR_MSG_MAX + 64];
    nm_job_error_line(line, sizeof line, err);
    PyErr_SetString(nm_py_error, line);
    return NULL;
}

/* A sequence of str as a C array pointing into the objects (which the
 * caller's argument tuple keeps alive); *n its length. */
static const char **strings(PyObject *seq, const char *what, size_t *n)
{
    PyObject *fast = PySequence_Fast(seq, what);
    if (!fast)
        return NULL;
    Py_ssize_t len = PySequence_Fast_GET_SIZE(fast);
    const char **out = nm_calloc((size_t)len + 1, sizeof *out);
    if (!out) {
        Py_DECREF(fast);
        PyErr_NoMemory();
        return NULL;
    }
    for (Py_ssize_t i = 0; i < len; i++) {
        out[i] = PyUnicode_AsUTF8(PySequence_Fast_GET_ITEM(fast, i));
        if (!out[i]) {
            PyErr_Format(PyExc_TypeError, "%s must be strings", what);
            nm_free(out);
            Py_DECREF(fast);
            return NULL;
        }
    }
    /* The strings live in the items, which the argument keeps. */
    Py_DECREF(fast);
    *n = (size_t)len;
    return out;
}

static int input_init(py_input *p, PyObject *files, PyObject *sets, PyObject *jinja,
                      int builtin_energy, int stride_2024)
{
    memset(p, 0, sizeof *p);
    p->in.builtin_energy = builtin_energy;
    p->in.stride_2024 = stride_2024;
    size_t n = 0;
    if (!(p->files = strings(files, "files", &n)))
        return 0;
    if (!n) {
        PyErr_SetString(PyExc_ValueError, "no input files given");
        return 0;
    }
    p->in.files = p->files;
    p->in.nfiles = n;
    const char **text = strings(sets, "set values ('COMPONENT.ATTRIBUTE=VALUE')", &n);
    if (!text)
        return 0;
    p->sets = nm_calloc(n + 1, sizeof *p->sets);
    nm_error err;
    nm_error_clear(&err);
    for (size_t i = 0; p->sets && i < n; i++)
        if (nm_override_parse(&p->sets[i], text[i], NULL, &err) != NM_OK) {
            nm_free(text);
            fail_with(&err);
            return 0;
        }
    nm_free(text);
    if (!p->sets) {
        PyErr_NoMemory();
        return 0;
    }
    p->in.sets = p->sets;
    p->in.nsets = n;
    if (!(text = strings(jinja, "jinja values ('NAME=VALUE')", &n)))
        return 0;
    p->vars = nm_calloc(n + 1, sizeof *p->vars);
    p->var_text = nm_calloc(n + 1, sizeof *p->var_text);
    for (size_t i = 0; p->vars && p->var_text && i < n; i++) {
        if (!(p->var_text[i] = strdup(text[i])))
            break;
        p->nvar_text++;
        if (nm_tmpl_var_parse(p->var_text[i], &p->vars[i], &err) != NM_OK) {
            nm_free(text);
            fail_with(&err);
            return 0;
        }
    }
    nm_free(text);
    if (!p->vars || !p->var_text || p->nvar_text != n) {
        PyErr_NoMemory();
        return 0;
    }
    p->in.vars = p->vars;
    p->in.nvars = n;
    return 1;
}

/* Loads the input (GIL released); raises on failure. */
static int load(py_input *p, unsigned need, nm_spec *spec)
{
    nm_error err;
    nm_error_clear(&err);
    nm_status st;
    Py_BEGIN_ALLOW_THREADS
    st = nm_job_load(spec, &p->in, need, &err);
    Py_END_ALLOW_THREADS
    if (st != NM_OK) {
        nm_spec_fini(spec);
        fail_with(&err);
        return 0;
    }
    return 1;
}

/* The search options, as (name, value) pairs (value None for a flag), over
 * the design's `mapper:`. */
static int search_opts(const nm_spec *spec, PyObject *options, nm_search_opts *o)
{
    nm_search_opts_init(o);
    nm_error err;
    nm_error_clear(&err);
    if (nm_search_opts_parse(o, spec->mapper, &err) != NM_OK) {
        fail_with(&err);
        return 0;
    }
    PyObject *fast = PySequence_Fast(options, "options must be (name, value) pairs");
    if (!fast)
        return 0;
    for (Py_ssize_t i = 0; i < PySequence_Fast_GET_SIZE(fast); i++) {
        const char *name, *value;
        if (!PyArg_ParseTuple(PySequence_Fast_GET_ITEM(fast, i), "sz", &name, &value)) {
            Py_DECREF(fast);
            return 0;
        }
        if (nm_job_search_option(o, name, value, &err) != NM_OK) {
            Py_DECREF(fast);
            fail_with(&err);
            return 0;
        }
    }
    /* The algorithm's name points into an item, which the caller's tuple
     * (immutable, built by __init__.py) keeps for the call. */
    Py_DECREF(fast);
    return 1;
}

/* Turns a JSON object written to a memory stream into a str with the
 * document's warnings appended. */
static PyObject *json_result(char *buf, size_t len, const nm_ydoc *doc)
{
    char *out = NULL;
    size_t outlen = 0;
    FILE *f = open_memstream(&out, &outlen);
    if (!f) {
        free(buf);
        return PyErr_NoMemory();
    }
    nm_job_json_warnings(f, buf ? buf : "", buf ? len : 0, doc);
    free(buf);
    if (fclose(f) != 0 || !out) {
        free(out);
        return PyErr_NoMemory();
    }
    PyObject *s = PyUnicode_FromStringAndSize(out, (Py_ssize_t)outlen);
    free(out);
    return s;
}

static char *kw_common[] = {"files", "sets", "jinja", "builtin_energy", "stride_2024", NULL};
static char *kw_search[] = {"files", "sets", "jinja", "options", "builtin_energy", NULL};

/* What every function but sweep begins with: its arguments (with search
 * options when options is not NULL) parsed and the input loaded with the
 * sections in `need`.  0 with an exception set (nothing to release). */
static int begin(PyObject *args, PyObject *kw, unsigned need, py_input *p, nm_spec *spec,
                 PyObject **options)
{
    PyObject *files, *sets, *jinja;
    int builtin = 0, stride = 0;
    int parsed = options ? PyArg_ParseTupleAndKeywords(args, kw, "OOOO|p", kw_search, &files,
                                                       &sets, &jinja, options, &builtin)
                         : PyArg_ParseTupleAndKeywords(args, kw, "OOO|pp", kw_common, &files,
                                                       &sets, &jinja, &builtin, &stride);
    if (!parsed)
        return 0;
    if (!input_init(p, files, sets, jinja, builtin, stride) || !load(p, need, spec)) {
        input_fini(p);
        return 0;
    }
    return 1;
}

/* What a job returns once it has run with status st: the JSON object its
 * command's --json prints (`write` puts it out, from a, b and c), with the
 * document's warnings, as a str; or the error raised.  stopped: by Ctrl-C,
 * KeyboardInterrupt already set. */
typedef struct job_json {
    void (*write)(FILE *f, const struct job_json *j);
    const nm_spec *spec;
    const void *a, *b, *c, *d;
} job_json;

static PyObject *finish(nm_status st, int stopped, const nm_error *err, const job_json *j)
{
    if (stopped)
        return NULL;
    if (st != NM_OK)
        return fail_with(err);
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f)
        return PyErr_NoMemory();
    j->write(f, j);
    fclose(f);
    return json_result(buf, len, &j->spec->doc);
}

static void write_model(FILE *f, const job_json *j)
{
    const nm_job_model_out *r = j->a;
    if (r->broken[0]) { /* as `model --json` writes it */
        fprintf(f, "{\n \"valid\": false,\n \"reason\": ");
        nm_report_json_string(f, r->broken);
        fprintf(f, "\n}\n");
    } else {
        nm_report_json(f, &j->spec->arch, &j->spec->wl, &r->st, &j->spec->map);
    }
}

static void write_fused_model(FILE *f, const job_json *j)
{
    nm_report_fused_json(f, &j->spec->arch, j->spec->fchain, j->spec->fmap, j->a);
}

/* model() on a chain of operations: its fused mapping evaluated. */
static PyObject *model_fused(nm_spec *spec)
{
    nm_fused_model fmdl;
    nm_fused_stats *st = nm_calloc(1, sizeof *st);
    nm_error err;
    nm_error_clear(&err);
    PyObject *out = NULL;
    if (!st) {
        PyErr_NoMemory();
    } else if (nm_fused_model_init(&fmdl, &spec->arch, spec->fchain, &err) != NM_OK) {
        fail_with(&err);
    } else {
        Py_BEGIN_ALLOW_THREADS
        nm_fused_model_eval(&fmdl, spec->fmap, st);
        Py_END_ALLOW_THREADS
        job_json j = {write_fused_model, spec, st, NULL, NULL, NULL};
        out = finish(NM_OK, 0, &err, &j);
        nm_fused_model_fini(&fmdl);
    }
    nm_free(st);
    return out;
}

static PyObject *py_model(PyObject *self, PyObject *args, PyObject *kw)
{
    (void)self;
    py_input p;
    nm_spec spec;
    if (!begin(args, kw, NM_NEED_ARCH | NM_NEED_PROBLEM | NM_NEED_MAPPING | NM_ACCEPT_CHAIN, &p,
               &spec, NULL))
        return NULL;
    if (spec.chain) {
        PyObject *out = model_fused(&spec);
        nm_spec_fini(&spec);
        input_fini(&p);
        return out;
    }
    nm_job_model_out *r = nm_calloc(1, sizeof *r);
    PyObject *out = NULL;
    if (!r) {
        PyErr_NoMemory();
    } else {
        nm_error err;
        nm_error_clear(&err);
        nm_status st;
        Py_BEGIN_ALLOW_THREADS
        st = nm_job_model(&spec, r, &err);
        Py_END_ALLOW_THREADS
        job_json j = {write_model, &spec, r, NULL, NULL, NULL};
        out = finish(st, 0, &err, &j);
    }
    nm_free(r);
    nm_spec_fini(&spec);
    input_fini(&p);
    return out;
}

static void write_map(FILE *f, const job_json *j)
{
    nm_report_search_json(f, &j->spec->arch, &j->spec->wl, j->a, j->b);
}

static void write_fused_map(FILE *f, const job_json *j)
{
    nm_report_fused_search_json(f, &j->spec->arch, j->spec->chain, j->a, j->b);
}

/* map() on a chain of operations: the fused search (fusion.h). */
static PyObject *map_fused(nm_spec *spec, const nm_search_opts *o)
{
    nm_fused_result *r = nm_calloc(1, sizeof *r);
    if (!r)
        return PyErr_NoMemory();
    nm_error err;
    nm_error_clear(&err);
    nm_status st;
    interrupt ic;
    nm_search_opts oo = *o;
    oo.stop = interrupt_begin(&ic);
    Py_BEGIN_ALLOW_THREADS
    st = nm_fused_search(&spec->arch, spec->chain, spec->constraints, spec->constraints2, &oo, 1,
                         r, &err);
    Py_END_ALLOW_THREADS
    int stopped = interrupt_end(&ic);
    job_json j = {write_fused_map, spec, r, &oo, NULL, NULL};
    PyObject *out = finish(st, stopped, &err, &j);
    nm_fused_result_fini(r);
    nm_free(r);
    return out;
}

static PyObject *py_map(PyObject *self, PyObject *args, PyObject *kw)
{
    (void)self;
    PyObject *options;
    py_input p;
    nm_spec spec;
    if (!begin(args, kw, NM_NEED_ARCH | NM_NEED_PROBLEM | NM_ACCEPT_CHAIN, &p, &spec, &options))
        return NULL;
    if (spec.chain) {
        nm_search_opts co;
        PyObject *out = search_opts(&spec, options, &co) ? map_fused(&spec, &co) : NULL;
        nm_spec_fini(&spec);
        input_fini(&p);
        return out;
    }
    nm_search_opts o;
    nm_search_result *res = nm_calloc(1, sizeof *res);
    nm_job_detail *detail = nm_calloc(1, sizeof *detail);
    PyObject *out = NULL;
    if (!res || !detail) {
        PyErr_NoMemory();
    } else if (search_opts(&spec, options, &o)) {
        nm_error err;
        nm_error_clear(&err);
        nm_status st;
        interrupt ic;
        o.stop = interrupt_begin(&ic);
        Py_BEGIN_ALLOW_THREADS
        st = nm_job_map(&spec, &o, res, detail, &err);
        Py_END_ALLOW_THREADS
        int stopped = interrupt_end(&ic);
        job_json j = {write_map, &spec, res, &o, NULL, NULL};
        out = finish(st, stopped, &err, &j);
        nm_search_result_fini(res);
    }
    nm_free(detail);
    nm_free(res);
    nm_spec_fini(&spec);
    input_fini(&p);
    return out;
}

static void write_network(FILE *f, const job_json *j)
{
    nm_report_network_fused(f, &j->spec->arch, j->a, j->b, j->d, j->c, 1);
}

/* network() and, with fuse, network(fuse=True): `nestmap network --json
 * [--fuse]`. */
static PyObject *network_job(PyObject *args, PyObject *kw, int fuse)
{
    PyObject *options;
    py_input p;
    nm_spec spec;
    if (!begin(args, kw, NM_NEED_ARCH, &p, &spec, &options))
        return NULL;
    nm_search_opts o;
    nm_network net;
    memset(&net, 0, sizeof net);
    nm_network_fusion fu;
    memset(&fu, 0, sizeof fu);
    nm_layer_result *layers = NULL;
    PyObject *out = NULL;
    if (search_opts(&spec, options, &o)) {
        nm_error err;
        nm_error_clear(&err);
        nm_status st = nm_job_network_parse(&spec, &net, &err);
        int stopped = 0;
        if (st == NM_OK) {
            interrupt ic;
            o.stop = interrupt_begin(&ic);
            Py_BEGIN_ALLOW_THREADS
            st = nm_job_network_map(&spec, &net, &o, &layers, NULL, NULL, &err);
            if (st == NM_OK && fuse)
                st = nm_network_fuse(&net, &spec.arch, spec.constraints, spec.constraints2, &o,
                                     layers, &fu, &err);
            Py_END_ALLOW_THREADS
            stopped = interrupt_end(&ic);
        }
        job_json j = {write_network, &spec, &net, layers, &o, fuse ? &fu : NULL};
        out = finish(st, stopped, &err, &j);
    }
    nm_network_fusion_fini(&fu);
    if (layers)
        nm_network_results_fini(&net, layers);
    nm_free(layers);
    nm_network_fini(&net);
    nm_spec_fini(&spec);
    input_fini(&p);
    return out;
}

static PyObject *py_network(PyObject *self, PyObject *args, PyObject *kw)
{
    (void)self;
    return network_job(args, kw, 0);
}

static PyObject *py_network_fused(PyObject *self, PyObject *args, PyObject *kw)
{
    (void)self;
    return network_job(args, kw, 1);
}

static void write_energy(FILE *f, const job_json *j)
{
    nm_report_energy(f, &j->spec->arch, 1);
}

static PyObject *py_energy(PyObject *self, PyObject *args, PyObject *kw)
{
    (void)self;
    py_input p;
    nm_spec spec;
    if (!begin(args, kw, NM_NEED_ARCH, &p, &spec, NULL))
        return NULL;
    job_json j = {write_energy, &spec, NULL, NULL, NULL, NULL};
    PyObject *out = finish(NM_OK, 0, NULL, &j);
    nm_spec_fini(&spec);
    input_fini(&p);
    return out;
}

/* The text a memory stream gathered (closing it sets *buf and *len), as
 * a str; the buffer is freed. */
static PyObject *stream_text(FILE *f, char **buf, size_t *len)
{
    (void)fclose(f);
    PyObject *s = PyUnicode_DecodeUTF8(*buf ? *buf : "", *buf ? (Py_ssize_t)*len : 0,
                                       "replace");
    free(*buf);
    *buf = NULL;
    return s;
}

static char *kw_sweep[] = {"files", "sets", "jinja", "options", "args", "outdir", "resume",
                           "threads", "builtin_energy", NULL};

static PyObject *py_sweep(PyObject *self, PyObject *args, PyObject *kw)
{
    (void)self;
    PyObject *files, *sets, *jinja, *options, *argv;
    const char *outdir;
    int resume = 0, threads = 0, builtin = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "OOOOOs|pip", kw_sweep, &files, &sets, &jinja,
                                     &options, &argv, &outdir, &resume, &threads, &builtin))
        return NULL;
    py_input p;
    if (!input_init(&p, files, sets, jinja, builtin, 0)) {
        input_fini(&p);
        return NULL;
    }
    size_t nargs = 0;
    const char **argtext = strings(argv, "args", &nargs);
    nm_sweep_run *run = argtext ? nm_calloc(1, sizeof *run) : NULL;
    char *diag_buf = NULL, *out_buf = NULL;
    size_t diag_len = 0, out_len = 0;
    FILE *diag = run ? open_memstream(&diag_buf, &diag_len) : NULL;
    FILE *out = diag ? open_memstream(&out_buf, &out_len) : NULL;
    PyObject *result = NULL;
    if (!out) {
        if (argtext)
            PyErr_NoMemory();
        goto done;
    }
    run->diag = diag;
    run->out = out;
    run->extra = p.in.files;
    run->nextra = (int)p.in.nfiles;
    run->sets = p.in.sets;
    run->nsets = (int)p.in.nsets;
    run->vars = p.in.vars;
    run->nvars = (int)p.in.nvars;
    run->builtin_energy = builtin;
    run->threads = threads;
    run->args = (char *const *)argtext;
    run->nargs = (int)nargs;
    PyObject *fast = PySequence_Fast(options, "options must be (name, value) pairs");
    if (!fast)
        goto done;
    for (Py_ssize_t i = 0; i < PySequence_Fast_GET_SIZE(fast); i++) {
        if (run->nopt >= NM_SWEEP_MAX_OPTS) {
            PyErr_SetString(PyExc_ValueError, "too many search options");
            break;
        }
        if (!PyArg_ParseTuple(PySequence_Fast_GET_ITEM(fast, i), "sz", &run->opt_name[run->nopt],
                              &run->opt_value[run->nopt]))
            break;
        run->nopt++;
    }
    Py_DECREF(fast); /* the strings live in the caller's tuple */
    if (PyErr_Occurred())
        goto done;
    int rc;
    nm_ydoc doc;
    nm_ydoc_init(&doc);
    interrupt ic;
    run->stop = interrupt_begin(&ic);
    Py_BEGIN_ALLOW_THREADS
    rc = nm_sweep_run_load(run, &doc, p.in.files, (int)p.in.nfiles);
    if (rc == 0)
        rc = nm_sweep_run_check(run);
    if (rc == 0)
        rc = nm_sweep_execute(run, outdir, resume, NULL);
    nm_sweep_fini(&run->sw);
    Py_END_ALLOW_THREADS
    nm_ydoc_fini(&doc);
    if (interrupt_end(&ic))
        goto done;
    PyObject *d = stream_text(diag, &diag_buf, &diag_len);
    PyObject *o = stream_text(out, &out_buf, &out_len);
    diag = out = NULL;
    if (d && o)
        result = Py_BuildValue("(iOO)", rc, d, o);
    Py_XDECREF(d);
    Py_XDECREF(o);
done:
    if (out) {
        fclose(out);
        free(out_buf);
    }
    if (diag) {
        fclose(diag);
        free(diag_buf);
    }
    nm_free(run);
    nm_free(argtext);
    input_fini(&p);
    return result;
}

static PyMethodDef methods[] = {
    {"model", (PyCFunction)(void (*)(void))py_model, METH_VARARGS | METH_KEYWORDS,
     "model(files, sets, jinja, builtin_energy=False, stride_2024=False) -> str: the JSON "
     "object `nestmap model --json` prints"},
    {"map", (PyCFunction)(void (*)(void))py_map, METH_VARARGS | METH_KEYWORDS,
     "map(files, sets, jinja, options, builtin_energy=False) -> str: the JSON object "
     "`nestmap map --json` prints; options are (name, value) pairs of the command's "
     "search options"},
    {"network", (PyCFunction)(void (*)(void))py_network, METH_VARARGS | METH_KEYWORDS,
     "network(files, sets, jinja, options, builtin_energy=False) -> str: the JSON object "
     "`nestmap network --json` prints"},
    {"network_fused", (PyCFunction)(void (*)(void))py_network_fused, METH_VARARGS | METH_KEYWORDS,
     "network_fused(files, sets, jinja, options, builtin_energy=False) -> str: the JSON object "
     "`nestmap network --fuse --json` prints"},
    {"energy", (PyCFunction)(void (*)(void))py_energy, METH_VARARGS | METH_KEYWORDS,
     "energy(files, sets, jinja, builtin_energy=False) -> str: the JSON object "
     "`nestmap energy --json` prints"},
    {"sweep", (PyCFunction)(void (*)(void))py_sweep, METH_VARARGS | METH_KEYWORDS,
     "sweep(files, sets, jinja, options, args, outdir, resume=False, threads=0, "
     "builtin_energy=False) -> (exit code, messages, summary): `nestmap sweep -o OUTDIR` "
     "as the library runs it"},
    {NULL, NULL, 0, NULL}};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "nestmap._nestmap",
                                    "The C half of the nestmap package (see nestmap).", -1,
                                    methods, NULL, NULL, NULL, NULL};

PyMODINIT_FUNC PyInit__nestmap(void);
PyMODINIT_FUNC PyInit__nestmap(void)
{
    main_thread = PyThread_get_thread_ident();
    PyObject *m = PyModule_Create(&module);
    if (!m)
        return NULL;
    nm_py_error = PyErr_NewExceptionWithDoc("nestmap.Error",
                                            "Bad input or a failed job: the message is the "
                                            "command line's 'FILE:LINE:COL: error: ...'.",
                                            PyExc_ValueError, NULL);
    if (!nm_py_error || PyModule_AddObject(m, "Error", nm_py_error) < 0) {
        Py_XDECREF(nm_py_error);
        Py_DECREF(m);
        return NULL;
    }
    Py_INCREF(nm_py_error);
    if (PyModule_AddStringConstant(m, "__version__", NM_PY_VERSION) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
