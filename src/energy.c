/* energy.c — ERT/ART tables applied to the architecture; see energy.h. */
#include <config.h>

#include <stdio.h>
#include <string.h>

#include "nestmap/compound.h"
#include "nestmap/energy.h"
#include "nestmap/estimate.h"
#include "nestmap/text.h"

const char *nm_energy_source_name(nm_energy_source src)
{
    switch (src) {
    case NM_ESRC_ERT:
        return "ERT";
    case NM_ESRC_USER:
        return "attributes";
    case NM_ESRC_BUILTIN:
        return "built-in";
    case NM_ESRC_COMPOUND:
        return "compound";
    case NM_ESRC_NONE:
        break;
    }
    return "none";
}

/* "system_top_level.PE[0..15].buffer[1..64]" -> "system_top_level.PE.buffer":
 * the path without its [a..b] ranges. */
static void strip_ranges(const char *full, char *out, size_t size)
{
    size_t n = 0;
    int depth = 0;
    for (const char *p = full; *p && n + 1 < size; p++) {
        if (*p == '[')
            depth++;
        else if (*p == ']' && depth > 0)
            depth--;
        else if (!depth)
            out[n++] = *p;
    }
    out[n] = '\0';
}

/* "system_top_level.PE[0..15].buffer[1..64]" -> "buffer". */
static void component_name(const char *full, char *out)
{
    char path[4 * NM_NAME_MAX];
    strip_ranges(full, path, sizeof path);
    const char *dot = strrchr(path, '.'), *start = dot ? dot + 1 : path;
    size_t len = strlen(start);
    if (len >= NM_NAME_MAX)
        len = NM_NAME_MAX - 1;
    memcpy(out, start, len);
    out[len] = '\0';
}

/* Energies named by an ERT entry's actions. */
struct actions {
    int n;
    char name[32][NM_NAME_MAX];
    double energy[32];
    const nm_ynode *at[32]; /* where each was named (NULL: not from a file) */
};

static double *action_slot(struct actions *a, const char *name, const nm_ynode *at)
{
    for (int i = 0; i < a->n; i++)
        if (!strcmp(a->name[i], name))
            return &a->energy[i];
    if (a->n >= 32)
        return NULL;
    snprintf(a->name[a->n], NM_NAME_MAX, "%s", name);
    a->energy[a->n] = 0.0;
    a->at[a->n] = at;
    return &a->energy[a->n++];
}

static const double *action_get(const struct actions *a, const char *const *names)
{
    for (; *names; names++)
        for (int i = 0; i < a->n; i++)
            if (!strcmp(a->name[i], *names))
                return &a->energy[i];
    return NULL;
}

/* Energy of one action entry: `energy:` or, in the v0.2 form, a list of
 * argument variants; the largest wins. */
static nm_status entry_energy(const nm_ynode *v, double *out, nm_error *err)
{
    if (v->kind == NM_Y_SEQ) {
        for (size_t i = 0; i < v->n; i++) {
            double e;
            nm_status st = entry_energy(v->items[i], &e, err);
            if (st != NM_OK)
                return st;
            if (e > *out)
                *out = e;
        }
        return NM_OK;
    }
    if (v->kind == NM_Y_MAP) {
        const nm_ynode *en = nm_ymap_get(v, "energy");
        if (!en)
            return nm_yerror(err, v, "ERT action has no 'energy'");
        double e;
        nm_status st = nm_yget_num(en, "an action energy", &e, err);
        if (st != NM_OK)
            return st;
        if (e < 0)
            return nm_yerror(err, en, "an action energy cannot be negative (%g pJ)", e);
        if (e > *out)
            *out = e;
        return NM_OK;
    }
    double e;
    nm_status st = nm_yget_num(v, "an action energy", &e, err);
    if (st == NM_OK && e > *out)
        *out = e;
    return st;
}

static nm_status parse_actions(const nm_ynode *acts, struct actions *a, nm_error *err)
{
    nm_status st;
    if (acts->kind == NM_Y_SEQ) { /* v0.3/v0.4: [{name, arguments, energy}] */
        for (size_t i = 0; i < acts->n; i++) {
            const nm_ynode *e = acts->items[i];
            if ((st = nm_yexpect(e, NM_Y_MAP, "an ERT action", err)) != NM_OK)
                return st;
            const nm_ynode *nn = nm_ymap_get(e, "name");
            const char *name;
            if (!nn)
                return nm_yerror(err, e, "ERT action has no 'name'");
            if ((st = nm_yget_str(nn, "action name", &name, err)) != NM_OK)
                return st;
            double *slot = action_slot(a, name, nn);
            if (!slot)
                return nm_yerror(err, e, "too many actions in one ERT entry");
            if ((st = entry_energy(e, slot, err)) != NM_OK)
                return st;
        }
        return NM_OK;
    }
    if (acts->kind == NM_Y_MAP) { /* v0.2: {read: [...], write: [...]} */
        for (size_t i = 0; i < acts->n; i++) {
            double *slot = action_slot(a, nm_ymap_key(acts, i)->str, nm_ymap_key(acts, i));
            if (!slot)
                return nm_yerror(err, acts, "too many actions in one ERT entry");
            if ((st = entry_energy(nm_ymap_val(acts, i), slot, err)) != NM_OK)
                return st;
        }
        return NM_OK;
    }
    return nm_yerror(err, acts, "ERT actions must be a list or a mapping");
}

/* Finds the component called name: storage index >= 0, -2 for the
 * arithmetic level, -1 for none. */
static int find_component(const nm_arch *arch, const char *name)
{
    int i = nm_arch_level(arch, name);
    if (i >= 0)
        return i;
    return strcmp(arch->arith.name, name) ? -1 : -2;
}

/* The action names the model reads, by what they cost (first found wins). */
static const char *const rd[] = {"random_read", "read", NULL};
static const char *const fl[] = {"random_fill", "random_write", "fill", "write", NULL};
static const char *const up[] = {"random_update", "random_write", "update", "write", NULL};
static const char *const lk[] = {"leak", NULL};
static const char *const cp[] = {"mac_random", "mult_random", "mac", "mult", "compute", NULL};
/* Sparse actions (Timeloop's topology.hpp lists): gated and skipped
 * operations and storage accesses.  A gated action absent costs nothing at
 * storage and the compute energy at the arithmetic; a skipped one costs the
 * gated one. */
static const char *const cp_g[] = {"mac_gated", "mult_gated", "compute_gated", NULL};
static const char *const cp_s[] = {"mac_skipped", "mult_skipped", "compute_skipped", NULL};
/* A chain's non-multiply operations (nm_op_kind), by kind; NULL: none read. */
static const char *const op_add[] = {"add", NULL}, *const op_mul[] = {"multiply", NULL},
                         *const op_max[] = {"compare", "max", NULL},
                         *const op_exp[] = {"exp", NULL}, *const op_div[] = {"divide", NULL};
static const char *const *const op_actions[NM_OP_KINDS] = {
    [NM_OP_ADD] = op_add, [NM_OP_MUL] = op_mul, [NM_OP_MAX] = op_max,
    [NM_OP_EXP] = op_exp, [NM_OP_DIV] = op_div};
static const char *const g_rd[] = {"gated_read", NULL};
static const char *const g_fl[] = {"gated_fill", "gated_write", NULL};
static const char *const g_up[] = {"gated_update", "gated_write", NULL};
static const char *const s_rd[] = {"skipped_read", NULL};
static const char *const s_fl[] = {"skipped_fill", "skipped_write", NULL};
static const char *const s_up[] = {"skipped_update", "skipped_write", NULL};
/* ... and of metadata, by the same rules */
static const char *const m_rd[] = {"random_metadata_read", "metadata_read", NULL};
static const char *const m_fl[] = {"random_metadata_fill", "random_metadata_write",
                                   "metadata_fill", "metadata_write", NULL};
static const char *const m_up[] = {"random_metadata_update", "random_metadata_write",
                                   "metadata_update", "metadata_write", NULL};
static const char *const mg_rd[] = {"gated_metadata_read", NULL};
static const char *const mg_fl[] = {"gated_metadata_fill", "gated_metadata_write", NULL};
static const char *const mg_up[] = {"gated_metadata_update", "gated_metadata_write", NULL};
static const char *const ms_rd[] = {"skipped_metadata_read", NULL};
static const char *const ms_fl[] = {"skipped_metadata_fill", "skipped_metadata_write", NULL};
static const char *const ms_up[] = {"skipped_metadata_update", "skipped_metadata_write", NULL};
static const char *const dcmp[] = {"decompression_count", NULL};
static const char *const cmp[] = {"compression_count", NULL};

/* Warns of an action the model does not read whose name is close to one it
 * does (`leek`): its energy would otherwise be dropped in silence.  Other
 * unread actions (Accelergy's idle, gated_read, ...) pass quietly. */
static nm_status warn_misspelt_actions(nm_ydoc *doc, int compute, const struct actions *a,
                                       const char *full, nm_error *err)
{
    /* The names read for this kind of component, from the lists above. */
    const char *const *const lists[] = {rd, fl, up, lk};
    const char *names[24];
    size_t nnames = 0;
    for (size_t k = 0; k < (compute ? 1 : 4); k++)
        for (const char *const *n = compute ? cp : lists[k]; *n && nnames < 24; n++)
            names[nnames++] = *n;
    for (int k = 0; compute && k < NM_OP_KINDS; k++)
        for (const char *const *n = op_actions[k]; n && *n && nnames < 24; n++)
            names[nnames++] = *n;
    for (int i = 0; i < a->n; i++) {
        int known = 0;
        for (size_t k = 0; k < nnames && !known; k++)
            known = !strcmp(a->name[i], names[k]);
        const char *s = known || !a->at[i] ? NULL : nm_text_suggest(a->name[i], names, nnames);
        if (s && nm_ydoc_warn(doc, a->at[i], "ERT action '%s' of '%s' is not one nestmap reads, "
                              "so its energy is not used; did you mean '%s'?", a->name[i], full,
                              s) != NM_OK)
            return nm_error_set(err, NM_ERR_NOMEM, NULL, 0, 0, "out of memory");
    }
    return NM_OK;
}

static nm_status apply_actions(nm_arch *arch, int which, const struct actions *a)
{
    double max = 0.0;
    for (int i = 0; i < a->n; i++)
        if (a->energy[i] > max)
            max = a->energy[i];
    const double *e;
    if (which == -2) {
        nm_arith *A = &arch->arith;
        A->e_compute = (e = action_get(a, cp)) ? *e : 0.0;
        A->e_gated = (e = action_get(a, cp_g)) ? *e : A->e_compute;
        A->e_skipped = (e = action_get(a, cp_s)) ? *e : A->e_gated;
        A->gs_given = 1;
        for (int k = 0; k < NM_OP_KINDS; k++)
            if (op_actions[k] && (e = action_get(a, op_actions[k]))) {
                A->e_op[k] = *e;
                A->op_given |= 1u << k;
            }
        A->esrc = NM_ESRC_ERT;
        return NM_OK;
    }
    nm_level *L = &arch->level[which];
    L->e_read = (e = action_get(a, rd)) ? *e : 0.0;
    L->e_fill = (e = action_get(a, fl)) ? *e : 0.0;
    L->e_update = (e = action_get(a, up)) ? *e : 0.0;
    L->e_leak = (e = action_get(a, lk)) ? *e : 0.0;
    const char *const *const gl[3] = {g_rd, g_fl, g_up}, *const *const sl[3] = {s_rd, s_fl, s_up};
    const char *const *const ml[3][3] = {{m_rd, m_fl, m_up}, {mg_rd, mg_fl, mg_up},
                                         {ms_rd, ms_fl, ms_up}};
    for (int k = 0; k < 3; k++) {
        L->e_gated[k] = (e = action_get(a, gl[k])) ? *e : 0.0;
        L->e_skipped[k] = (e = action_get(a, sl[k])) ? *e : L->e_gated[k];
        for (int h = 0; h < 3; h++)
            L->e_meta[h][k] = (e = action_get(a, ml[h][k])) ? *e : 0.0;
        if (L->e_meta[2][k] == 0.0 && !action_get(a, ml[2][k]))
            L->e_meta[2][k] = L->e_meta[1][k];
    }
    L->e_decompress = (e = action_get(a, dcmp)) ? *e : 0.0;
    L->e_compress = (e = action_get(a, cmp)) ? *e : 0.0;
    L->vector_access_energy = max / L->cluster_size;
    L->esrc = NM_ESRC_ERT;
    return NM_OK;
}

/* Iterates over the tables of an ERT or ART: list of {name, ...} or a
 * mapping name -> entry.  Calls fn(arch, name node, component name, entry). */
typedef nm_status (*table_fn)(nm_arch *arch, nm_ydoc *doc, const nm_ynode *cc,
                              const nm_ynode *name_node, const char *full,
                              const nm_ynode *entry, nm_error *err);

static nm_status each_table(nm_arch *arch, nm_ydoc *doc, const nm_ynode *cc,
                            const nm_ynode *top, const char *what, table_fn fn, nm_error *err)
{
    static const char *const keys[] = {"version", "tables", NULL};
    nm_status st = nm_yexpect(top, NM_Y_MAP, what, err);
    if (st != NM_OK || (st = nm_ycheck_keys(top, keys, what, err)) != NM_OK)
        return st;
    const nm_ynode *tables = nm_ymap_get(top, "tables");
    if (!tables)
        return nm_yerror(err, top, "%s has no 'tables'", what);
    if (tables->kind == NM_Y_SEQ) {
        for (size_t i = 0; i < tables->n; i++) {
            const nm_ynode *t = tables->items[i];
            if ((st = nm_yexpect(t, NM_Y_MAP, "a table", err)) != NM_OK)
                return st;
            const nm_ynode *nn = nm_ymap_get(t, "name");
            if (!nn)
                return nm_yerror(err, t, "%s table has no 'name'", what);
            const char *full;
            if ((st = nm_yget_str(nn, "table name", &full, err)) != NM_OK)
                return st;
            if ((st = fn(arch, doc, cc, nn, full, t, err)) != NM_OK)
                return st;
        }
        return NM_OK;
    }
    if (tables->kind == NM_Y_MAP) {
        for (size_t i = 0; i < tables->n; i++)
            if ((st = fn(arch, doc, cc, nm_ymap_key(tables, i), nm_ymap_key(tables, i)->str,
                         nm_ymap_val(tables, i), err)) != NM_OK)
                return st;
        return NM_OK;
    }
    return nm_yerror(err, tables, "%s tables must be a list or a mapping", what);
}

/* Whether some compound class has a subcomponent of class cls. */
static int compound_part_class(const nm_ynode *cc, const char *cls)
{
    const nm_ynode *classes = cc ? nm_ymap_get(cc, "classes") : NULL;
    for (size_t i = 0; classes && classes->kind == NM_Y_SEQ && i < classes->n; i++) {
        const nm_ynode *subs = nm_ymap_get(classes->items[i], "subcomponents");
        for (size_t j = 0; subs && subs->kind == NM_Y_SEQ && j < subs->n; j++) {
            const nm_ynode *c = nm_ymap_get(subs->items[j], "class");
            if (c && c->kind == NM_Y_SCALAR && !strcmp(c->str, cls))
                return 1;
        }
    }
    return 0;
}

static nm_status unmatched(nm_arch *arch, nm_ydoc *doc, const nm_ynode *cc, const nm_ynode *at,
                           const char *full, const char *name, const char *what, nm_error *err)
{
    if (compound_part_class(cc, name)) /* a primitive inside a compound class */
        return NM_OK;
    const char *cands[NM_MAX_LEVELS + 1];
    int n = 0;
    for (int i = 0; i < arch->nlevels; i++)
        cands[n++] = arch->level[i].name;
    cands[n++] = arch->arith.name;
    const char *s = nm_text_suggest(name, cands, (size_t)n);
    if (s)
        return nm_yerror(err, at, "%s entry '%s' names no component; did you mean '%s'?", what,
                         full, s);
    /* Accelergy also lists components the model has no level for (wires,
     * networks); they do not change the result. */
    if (nm_ydoc_warn(doc, at, "%s entry '%s' matches no component; ignored", what, full) != NM_OK)
        return nm_error_set(err, NM_ERR_NOMEM, NULL, 0, 0, "out of memory");
    return NM_OK;
}

static nm_status ert_entry(nm_arch *arch, nm_ydoc *doc, const nm_ynode *cc,
                           const nm_ynode *name_node, const char *full, const nm_ynode *entry,
                           nm_error *err)
{
    char name[NM_NAME_MAX];
    component_name(full, name);
    const nm_ynode *acts = entry;
    if (entry->kind == NM_Y_MAP && nm_ymap_get(entry, "actions"))
        acts = nm_ymap_get(entry, "actions");
    struct actions a;
    memset(&a, 0, sizeof a);
    nm_status st = parse_actions(acts, &a, err);
    if (st != NM_OK)
        return st;
    int which = find_component(arch, name);
    if (which == -1 && (!strcmp(name, "wire") || !strcmp(name, "Wire"))) {
        /* Timeloop reads a wire's transfer_random energy (as a float) into
         * the wire_energy of every inferred network (topology.cpp). */
        static const char *const tr[] = {"transfer_random", NULL};
        const double *e = action_get(&a, tr);
        if (e && *e != 0.0) {
            for (int i = 0; i < arch->nlevels; i++)
                for (int n = 0; n < arch->level[i].nnet; n++) {
                    nm_noc *net = &arch->level[i].net[n];
                    if (!net->explicit_net) {
                        net->has_wire = 1;
                        net->wire_energy = (double)(float)*e;
                    }
                }
            nm_arch_noc_update(arch);
        }
        return NM_OK;
    }
    if (which == -1)
        return unmatched(arch, doc, cc, name_node, full, name, "ERT", err);
    if ((st = warn_misspelt_actions(doc, which == -2, &a, full, err)) != NM_OK)
        return st;
    return apply_actions(arch, which, &a);
}

static nm_status art_entry(nm_arch *arch, nm_ydoc *doc, const nm_ynode *cc,
                           const nm_ynode *name_node, const char *full, const nm_ynode *entry,
                           nm_error *err)
{
    char name[NM_NAME_MAX];
    component_name(full, name);
    const nm_ynode *an = entry->kind == NM_Y_MAP ? nm_ymap_get(entry, "area") : entry;
    if (!an)
        return nm_yerror(err, entry, "ART entry '%s' has no 'area'", full);
    double area;
    nm_status st = nm_yget_num(an, "an area", &area, err);
    if (st != NM_OK)
        return st;
    int which = find_component(arch, name);
    if (which == -1)
        return unmatched(arch, doc, cc, name_node, full, name, "ART", err);
    if (which == -2) {
        arch->arith.area = area;
        arch->arith.asrc = NM_ESRC_ERT;
    } else {
        arch->level[which].area = area;
        arch->level[which].asrc = NM_ESRC_ERT;
    }
    return NM_OK;
}

/* What the built-in classes give one component: its energies when the
 * input gave none (then an unknown class or a missing attribute is the
 * user's error), its area when no ART gave one (then, the energies being
 * given, a class nestmap does not know just leaves the area at 0).  Sets
 * *energies when e holds energies to use. */
typedef nm_status (*estimate_fn)(const void *comp, nm_ydoc *doc, nm_estimate *e, nm_error *err);

static nm_status builtin(estimate_fn fn, const void *comp, const char *cls, const char *subclass,
                         nm_energy_source *esrc, nm_energy_source *asrc, double *area,
                         nm_estimate *e, int *energies, nm_ydoc *doc, nm_error *err)
{
    *energies = 0;
    if (*esrc == NM_ESRC_NONE) {
        nm_status st = fn(comp, doc, e, err);
        if (st != NM_OK)
            return st;
        *energies = 1;
        *esrc = NM_ESRC_BUILTIN;
    } else {
        nm_error ignored;
        if (*asrc != NM_ESRC_NONE || !nm_estimate_known(cls, subclass) ||
            fn(comp, NULL, e, &ignored) != NM_OK)
            return NM_OK;
    }
    if (*asrc == NM_ESRC_NONE) {
        *area = e->area;
        *asrc = NM_ESRC_BUILTIN;
    }
    return NM_OK;
}

static nm_status level_estimate(const void *comp, nm_ydoc *doc, nm_estimate *e, nm_error *err)
{
    return nm_estimate_level(comp, doc, e, err);
}

static nm_status arith_estimate(const void *comp, nm_ydoc *doc, nm_estimate *e, nm_error *err)
{
    return nm_estimate_arith(comp, doc, e, err);
}

static nm_status builtin_level(nm_level *L, double cycle_seconds, nm_ydoc *doc, nm_error *err)
{
    nm_estimate e;
    int energies;
    if (L->dummy)
        return NM_OK;
    nm_status st = builtin(level_estimate, L, L->cls, L->subclass, &L->esrc, &L->asrc, &L->area,
                           &e, &energies, doc, err);
    if (st != NM_OK || !energies)
        return st;
    L->e_read = e.read;
    L->e_fill = e.write;
    L->e_update = e.update;
    L->e_leak = e.leak_w * cycle_seconds * 1e12; /* pJ a cycle */
    double max = e.read > e.write ? e.read : e.write;
    L->vector_access_energy = (max > e.update ? max : e.update) / L->cluster_size;
    L->esrc_note = e.source;
    return NM_OK;
}

static nm_status builtin_arith(nm_arith *A, nm_ydoc *doc, nm_error *err)
{
    nm_estimate e;
    int energies;
    nm_status st = builtin(arith_estimate, A, A->cls, A->subclass, &A->esrc, &A->asrc, &A->area,
                           &e, &energies, doc, err);
    if (st != NM_OK || !energies)
        return st;
    A->e_compute = e.compute;
    A->esrc_note = e.source;
    return NM_OK;
}

/* The ERT entry whose name ends in `name` (a component or a subcomponent
 * path such as "glb.storage", ranges ignored), parsed into *a; 0 when none
 * or when the ERT is malformed (its own pass reports that). */
static int ert_find(const nm_ynode *ert, const char *name, struct actions *a)
{
    const nm_ynode *tables = ert ? nm_ymap_get(ert, "tables") : NULL;
    if (!tables || (tables->kind != NM_Y_SEQ && tables->kind != NM_Y_MAP))
        return 0;
    size_t want = strlen(name);
    for (size_t i = 0; i < tables->n; i++) {
        const nm_ynode *entry, *nn;
        if (tables->kind == NM_Y_SEQ) {
            entry = tables->items[i];
            nn = nm_ymap_get(entry, "name");
        } else {
            nn = nm_ymap_key(tables, i);
            entry = nm_ymap_val(tables, i);
        }
        if (!nn || nn->kind != NM_Y_SCALAR)
            continue;
        char full[4 * NM_NAME_MAX];
        strip_ranges(nn->str, full, sizeof full);
        size_t n = strlen(full);
        if (n < want || strcmp(full + n - want, name) || (n > want && full[n - want - 1] != '.'))
            continue;
        const nm_ynode *acts = entry;
        if (entry->kind == NM_Y_MAP && nm_ymap_get(entry, "actions"))
            acts = nm_ymap_get(entry, "actions");
        nm_error ignored;
        memset(a, 0, sizeof *a);
        return parse_actions(acts, a, &ignored) == NM_OK;
    }
    return 0;
}

int nm_energy_ert_role(const nm_ynode *ert, const char *name)
{
    struct actions a;
    if (!ert_find(ert, name, &a))
        return -1;
    static const char *const stores[] = {"read", "write", "update", "random_read", NULL};
    int store = action_get(&a, stores) != NULL, comp = action_get(&a, cp) != NULL;
    return store == comp ? -2 : comp;
}

/* Subcomponent energies from the ERT, for compound classes: by the
 * subcomponent's path, else by its class. */
static int ert_for_part(void *ctx, const char *path, const char *cls, const char *action,
                        double *pj)
{
    struct actions a;
    const char *const names[] = {action, NULL};
    const double *e;
    for (int k = 0; k < 2; k++)
        if (ert_find(ctx, k ? cls : path, &a) && (e = action_get(&a, names))) {
            *pj = *e;
            return 1;
        }
    return 0;
}

/* Energies (when none were given) and area (when no ART gave one) of the
 * component `which` whose class `def` is a compound class of the input. */
static nm_status compound(nm_arch *arch, int which, const nm_ynode *cc, const nm_ynode *def,
                          const nm_ynode *ert, nm_ydoc *doc, nm_error *err)
{
    nm_level *L = which >= 0 ? &arch->level[which] : NULL;
    nm_arith *A = which >= 0 ? NULL : &arch->arith;
    nm_energy_source *esrc = L ? &L->esrc : &A->esrc, *asrc = L ? &L->asrc : &A->asrc;
    const char *name = L ? L->name : A->name;
    const nm_ynode *attrs = L ? L->attrs : A->attrs;
    int need_energy = *esrc == NM_ESRC_NONE;
    if (!need_energy && *asrc != NM_ESRC_NONE)
        return NM_OK;
    nm_compound c;
    nm_error quiet;
    nm_status st = nm_compound_eval(cc, def, name, attrs, ert_for_part, (void *)ert, doc, &c,
                                    need_energy ? err : &quiet);
    if (st != NM_OK)
        return need_energy ? st : NM_OK;
    if (*asrc == NM_ESRC_NONE) {
        if (L)
            L->area = c.area;
        else
            A->area = c.area;
        *asrc = NM_ESRC_COMPOUND;
    }
    if (!need_energy)
        return NM_OK;
    struct actions a;
    memset(&a, 0, sizeof a);
    for (int i = 0; i < c.nactions; i++) {
        double *slot = action_slot(&a, c.action[i], NULL);
        if (slot)
            *slot = c.pj[i];
    }
    apply_actions(arch, which, &a);
    *esrc = NM_ESRC_COMPOUND;
    if (L) {
        L->compose = c.how;
        L->esrc_note = "compound class: the sum of its parts";
    } else {
        A->compose = c.how;
        A->esrc_note = "compound class: the sum of its parts";
    }
    return NM_OK;
}

nm_status nm_energy_apply(nm_arch *arch, const nm_ynode *ert, const nm_ynode *art,
                          const nm_ynode *cc, nm_ydoc *doc, nm_error *err)
{
    nm_status st;
    if (ert && (st = each_table(arch, doc, cc, ert, "ERT", ert_entry, err)) != NM_OK)
        return st;
    if (art && (st = each_table(arch, doc, cc, art, "ART", art_entry, err)) != NM_OK)
        return st;
    for (int i = -1; i < arch->nlevels; i++) {
        const char *cls = i < 0 ? arch->arith.cls : arch->level[i].cls;
        const nm_ynode *def = nm_compound_find(cc, cls);
        int which = i < 0 ? -2 : i;
        if (def && (st = compound(arch, which, cc, def, ert, doc, err)) != NM_OK)
            return st;
    }
    for (int i = 0; i < arch->nlevels; i++)
        if ((st = builtin_level(&arch->level[i], arch->cycle_seconds, doc, err)) != NM_OK)
            return st;
    return builtin_arith(&arch->arith, doc, err);
}
