/* spec.c — input files merged and parsed into specs; see spec.h. */
#include <config.h>

#include <string.h>

#include "nestmap/alloc.h"
#include "nestmap/compound.h"
#include "nestmap/energy.h"
#include "nestmap/fusion.h"
#include "nestmap/override.h"
#include "nestmap/spec.h"
#include "nestmap/text.h"
#include "nestmap/variables.h"

/* Top-level keys nestmap reads. */
static const char *const used_keys[] = {
    "architecture", "problem", "mapping", "ERT", "ART", "mapper", "mapspace_constraints",
    "architecture_constraints", "constraints", "mapspace", "network", "compound_components",
    "components", "sweep", "dumped_by_timeloop_front_end", "variables",
    "extra_mapping_constraints", "sparse_optimizations",
    NULL};

/* Keys that Timeloop's front end writes into parsed-processed-input.yaml and
 * that do not change the model; accepted with a note. */
static const char *const ignored_keys[] = {
    "ERT_summary", "ART_summary", "globals", "model",
    "version", "automatic_ert",
    "automatic_art", "layout", NULL};

static nm_status check_top(nm_spec *spec, nm_error *err)
{
    const nm_ynode *root = spec->doc.root;
    for (size_t i = 0; i < root->n; i++) {
        const nm_ynode *k = nm_ymap_key(root, i);
        int known = 0;
        for (int j = 0; used_keys[j] && !known; j++)
            known = nm_text_key_equal(k->str, used_keys[j]);
        /* timeloopfe takes any key holding "ignore" as a place for anchors
         * (layer_shapes' problem_base_ignore: &problem_base). */
        if (known || strstr(k->str, "ignore"))
            continue;
        for (int j = 0; ignored_keys[j] && !known; j++)
            known = nm_text_key_equal(k->str, ignored_keys[j]);
        if (known) {
            if (nm_ydoc_warn(&spec->doc, k, "top-level key '%s' does not change the model; "
                             "ignored", k->str) != NM_OK)
                return nm_error_set(err, NM_ERR_NOMEM, NULL, 0, 0, "out of memory");
            continue;
        }
        const char *s = nm_text_suggest(k->str, used_keys, sizeof used_keys / sizeof *used_keys - 1);
        if (s)
            return nm_yerror(err, k, "unknown top-level key '%s'; did you mean '%s'?", k->str, s);
        return nm_yerror(err, k, "unknown top-level key '%s' (nestmap reads architecture, "
                         "problem, mapping, ERT, ART, mapper and constraints)", k->str);
    }
    return NM_OK;
}

/* The constraint targets of *a (a list, or {targets: [...]}, or NULL) and
 * then b's, as one {targets: [...]} in *a. */
static nm_status join_targets(nm_ydoc *doc, const nm_ynode **a, const nm_ynode *b, nm_error *err)
{
    const nm_ynode *src[2] = {*a, b};
    nm_ynode *list = nm_ydoc_seq(doc, b), *map = nm_ydoc_map(doc, b);
    if (!list || !map)
        return nm_error_set(err, NM_ERR_NOMEM, NULL, 0, 0, "out of memory");
    for (int k = 0; k < 2; k++) {
        const nm_ynode *t = src[k];
        if (!t || nm_yis_null(t))
            continue;
        if (t->kind == NM_Y_MAP) {
            static const char *const keys[] = {"targets", "version", NULL};
            nm_status st = nm_ycheck_keys(t, keys, "constraints", err);
            if (st != NM_OK)
                return st;
            t = nm_ymap_get(t, "targets");
            if (!t || nm_yis_null(t))
                continue;
        }
        nm_status st = nm_yexpect(t, NM_Y_SEQ, "constraint targets", err);
        if (st != NM_OK)
            return st;
        for (size_t i = 0; i < t->n; i++)
            if (nm_yseq_append(doc, list, t->items[i]) != NM_OK)
                return nm_error_set(err, NM_ERR_NOMEM, NULL, 0, 0, "out of memory");
    }
    if (nm_ymap_set(doc, map, "targets", list) != NM_OK)
        return nm_error_set(err, NM_ERR_NOMEM, NULL, 0, 0, "out of memory");
    *a = map;
    return NM_OK;
}

static nm_status parse(nm_spec *spec, unsigned need, nm_error *err)
{
    nm_status st = check_top(spec, err);
    if (st != NM_OK || (st = nm_variables_apply(&spec->doc, err)) != NM_OK)
        return st;
    const nm_ynode *root = spec->doc.root;
    const nm_ynode *arch = nm_ymap_get(root, "architecture");
    const nm_ynode *prob = nm_ymap_get(root, "problem");
    const nm_ynode *map = nm_ymap_get(root, "mapping");
    /* The file holding the first key is the best place to point at. */
    static const nm_ynode nowhere = {.kind = NM_Y_MAP, .str = "", .line = 1, .col = 1};
    nm_ynode top = nowhere;
    if (root->n) {
        top.file = nm_ymap_key(root, 0)->file;
    }
    if ((need & NM_NEED_ARCH) && !arch)
        return nm_yerror(err, &top, "no 'architecture' in the input files");
    if ((need & (NM_NEED_PROBLEM | NM_NEED_MAPPING)) && !prob)
        return nm_yerror(err, &top, "no 'problem' in the input files%s",
                         nm_ymap_get(root, "network") ? " (they hold a network: map its layers "
                                                        "with nestmap network)" : "");
    if ((need & NM_NEED_MAPPING) && !map)
        return nm_yerror(err, &top, "no 'mapping' in the input files (nestmap map searches "
                         "for one)");
    if (arch) {
        int tables = !(need & NM_BUILTIN_ENERGY);
        nm_arch_hints hints = {nm_compound_section(root), tables ? nm_ymap_get(root, "ERT") : NULL};
        if ((st = nm_arch_parse(&spec->arch, arch, &hints, &spec->doc, err)) != NM_OK)
            return st;
        if ((st = nm_energy_apply(&spec->arch, hints.ert, tables ? nm_ymap_get(root, "ART") : NULL,
                                  hints.compound, &spec->doc, err)) != NM_OK)
            return st;
        spec->has_arch = 1;
    }
    if (prob && (nm_chain_given(prob) || nm_chain_block_given(prob))) {
        if (!(need & NM_ACCEPT_CHAIN))
            return nm_yerror(err, prob, "the problem is a chain of operations: nestmap model "
                             "evaluates a fused mapping of it and nestmap map searches one; "
                             "this command takes one operation");
        if (nm_chain_block_given(prob) && (st = nm_chain_block(prob, &spec->doc, &prob,
                                                               err)) != NM_OK)
            return st;
        const nm_ynode *so = nm_ymap_get(root, "sparse_optimizations");
        if (so && !nm_yis_null(so))
            return nm_yerror(err, so, "sparse_optimizations with a chain of operations are not "
                             "modelled yet");
        if (!(spec->chain = nm_calloc(1, sizeof *spec->chain)))
            return nm_error_set(err, NM_ERR_NOMEM, NULL, 0, 0, "out of memory");
        if ((st = nm_chain_parse(spec->chain, prob, err)) != NM_OK)
            return st;
        for (int i = 0; spec->has_arch && i < spec->chain->nops; i++)
            if ((st = nm_arch_check_widths(&spec->arch, &spec->chain->op[i].wl, err)) != NM_OK)
                return st;
        if (map && spec->has_arch) {
            if (!(spec->fmap = nm_calloc(1, sizeof *spec->fmap)) ||
                !(spec->fchain = nm_calloc(1, sizeof *spec->fchain)))
                return nm_error_set(err, NM_ERR_NOMEM, NULL, 0, 0, "out of memory");
            *spec->fchain = *spec->chain;
            if ((st = nm_fused_map_parse(spec->fmap, map, &spec->arch, spec->fchain, &spec->doc,
                                         err)) != NM_OK)
                return st;
        }
        prob = NULL;
    }
    if (prob) {
        if ((st = nm_workload_parse(&spec->wl, prob, &spec->doc, err)) != NM_OK)
            return st;
        spec->has_problem = 1;
    }
    if (spec->has_arch && spec->has_problem &&
        ((st = nm_sparse_parse(&spec->arch.sparse, &spec->arch, &spec->wl,
                               nm_ymap_get(root, "sparse_optimizations"), err)) != NM_OK ||
         (st = nm_arch_check_widths(&spec->arch, &spec->wl, err)) != NM_OK))
        return st;
    if (map && spec->has_arch && spec->has_problem) {
        if ((st = nm_mapping_parse(&spec->map, map, &spec->arch, &spec->wl, err)) != NM_OK)
            return st;
        spec->has_mapping = 1;
    }
    spec->mapper = nm_ymap_get(root, "mapper");
    spec->constraints = nm_ymap_get(root, "architecture_constraints");
    if (!spec->constraints)
        spec->constraints = nm_ymap_get(root, "constraints");
    spec->constraints2 = nm_ymap_get(root, "mapspace_constraints");
    /* timeloopfe's extra_mapping_constraints (top.yaml.jinja2 puts a
     * design's mapping.yaml there) join the mapspace constraints. */
    const nm_ynode *extra = nm_ymap_get(root, "extra_mapping_constraints");
    if (extra && !nm_yis_null(extra) &&
        (st = join_targets(&spec->doc, &spec->constraints2, extra, err)) != NM_OK)
        return st;
    const nm_ynode *msp = nm_ymap_get(root, "mapspace");
    if (msp && msp->kind == NM_Y_MAP) {
        static const char *const keys[] = {"constraints", "template", "version", NULL};
        if ((st = nm_ycheck_keys(msp, keys, "mapspace", err)) != NM_OK)
            return st;
        if (!spec->constraints2)
            spec->constraints2 = nm_ymap_get(msp, "constraints");
        /* Timeloop's templates: uber (perfect factors, the default) and ruby
         * (residual factors too). */
        const nm_ynode *t = nm_ymap_get(msp, "template");
        const char *name;
        if (t) {
            if ((st = nm_yget_str(t, "template", &name, err)) != NM_OK)
                return st;
            if (!strcmp(name, "ruby"))
                spec->imperfect = 1;
            else if (strcmp(name, "uber"))
                return nm_yerror(err, t, "unknown mapspace template '%s' (uber: perfect factors; "
                                 "ruby: residual factors too)", name);
        }
    }
    return NM_OK;
}

/* After the documents are merged: the overrides, then the sections. */
static nm_status finish_load(nm_spec *spec, const nm_override *ov, size_t nov, unsigned need,
                             const char *none, nm_error *err)
{
    if (!spec->doc.root)
        return nm_error_set(err, NM_ERR_INPUT, NULL, 0, 0, "%s", none);
    nm_status st = nm_override_apply(&spec->doc, ov, nov, err);
    if (st != NM_OK)
        return st;
    return parse(spec, need, err);
}

nm_status nm_spec_load(nm_spec *spec, const char *const *files, size_t n, unsigned need,
                       nm_error *err)
{
    return nm_spec_load_set(spec, files, n, NULL, 0, need, err);
}

nm_status nm_spec_load_set(nm_spec *spec, const char *const *files, size_t n,
                           const nm_override *ov, size_t nov, unsigned need, nm_error *err)
{
    nm_spec_opts opts = {ov, nov, NULL, 0};
    return nm_spec_load_opts(spec, files, n, &opts, need, err);
}

nm_status nm_spec_load_opts(nm_spec *spec, const char *const *files, size_t n,
                            const nm_spec_opts *opts, unsigned need, nm_error *err)
{
    static const nm_spec_opts none = {0};
    if (!opts)
        opts = &none;
    memset(spec, 0, sizeof *spec);
    nm_ydoc_init(&spec->doc);
    spec->doc.vars = opts->vars;
    spec->doc.nvars = opts->nvars;
    for (size_t i = 0; i < n; i++) {
        nm_status st = nm_ydoc_load_file(&spec->doc, files[i], err);
        if (st != NM_OK)
            return st;
    }
    return finish_load(spec, opts->ov, opts->nov, need, "no input files", err);
}

nm_status nm_spec_load_string(nm_spec *spec, const char *name, const char *text, unsigned need,
                              nm_error *err)
{
    size_t len = strlen(text);
    return nm_spec_load_strings(spec, 1, &name, &text, &len, NULL, 0, need, err);
}

nm_status nm_spec_load_strings(nm_spec *spec, size_t n, const char *const *names,
                               const char *const *texts, const size_t *lens,
                               const nm_override *ov, size_t nov, unsigned need, nm_error *err)
{
    memset(spec, 0, sizeof *spec);
    nm_ydoc_init(&spec->doc);
    for (size_t i = 0; i < n; i++) {
        nm_status st = nm_ydoc_load_string(&spec->doc, names[i], texts[i], lens[i], err);
        if (st != NM_OK)
            return st;
    }
    return finish_load(spec, ov, nov, need, "no input", err);
}

void nm_spec_fini(nm_spec *spec)
{
    if (!spec)
        return;
    nm_ydoc_fini(&spec->doc);
    nm_free(spec->chain);
    nm_free(spec->fmap);
    nm_free(spec->fchain);
    memset(spec, 0, sizeof *spec);
}
