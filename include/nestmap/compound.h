/* compound.h — Accelergy compound components: a class built from
 * subcomponents whose actions make up its own.
 *
 * Read from the input's `compound_components:` (Accelergy v0.3/v0.4 form):
 *
 *   compound_components:
 *     version: 0.4
 *     classes:
 *     - name: smartbuffer_SRAM
 *       attributes: {technology: must_specify, width: must_specify, depth: must_specify}
 *       subcomponents:
 *       - {name: storage, class: SRAM, attributes: {width: width, depth: depth}}
 *       - name: address_generators[0..1]
 *         class: intadder
 *         attributes: {n_bits: max(1, ceil(log2(depth)))}
 *       actions:
 *       - name: read
 *         subcomponents:
 *         - {name: storage, actions: [{name: read}]}
 *         - {name: address_generators[1], actions: [{name: add, energy_scale: 1}]}
 *
 * An action's energy is the sum over the subcomponent actions it lists of
 * (scale x count x their energy), where the scale is `energy_scale`,
 * `action_share` or `repeat` (an expression; 1 when absent) and the count
 * is how many subcomponents the name covers (`x[0..3]` covers 4).  A
 * subcomponent's energy comes from an ERT entry for its class (or its path,
 * `buf.storage`), else from its own compound class, else from nestmap's
 * built-in classes (estimate.h).  Area: the subcomponents' areas times their
 * counts and `area_scale`/`area_share`.  Attribute values are expressions
 * (expr.h) over the enclosing component's attributes; a class's defaults
 * fill what the component does not give, and `must_specify` must be given.
 */
#ifndef NESTMAP_COMPOUND_H
#define NESTMAP_COMPOUND_H

#include "nestmap/limits.h"
#include "nestmap/yaml.h"

#define NM_COMPOUND_MAX_ACTIONS 24

/* Energy of a primitive's action from an ERT, by name: the subcomponent's
 * path ("glb.storage") or its class.  Returns 1 and sets *pj when found. */
typedef int (*nm_compound_ert)(void *ctx, const char *path, const char *cls, const char *action,
                               double *pj);

typedef struct nm_compound {
    int nactions;
    char action[NM_COMPOUND_MAX_ACTIONS][NM_NAME_MAX];
    double pj[NM_COMPOUND_MAX_ACTIONS]; /* per action of one instance */
    double area;                        /* um^2 per instance */
    const char *how;                    /* one line per action: how it was composed
                                           (in the document's arena) */
} nm_compound;

/* The definition of class cls in `compound_components:` (cc, may be NULL),
 * or NULL when it defines none. */
const nm_ynode *nm_compound_find(const nm_ynode *cc, const char *cls);

/* The compound classes of a merged input: Timeloop's `compound_components`,
 * else the v0.4 front end's `components` (both {version, classes: [...]});
 * NULL when neither is there. */
const nm_ynode *nm_compound_section(const nm_ynode *root);

/* The class closest to cls among those cc defines (for "did you mean"). */
const char *nm_compound_suggest(const nm_ynode *cc, const char *cls);

/* Whether class def's actions say it computes (mac, compute, multiply...)
 * rather than stores (read, write, update): 1 compute, 0 storage, -1 unsure. */
int nm_compound_is_compute(const nm_ynode *def);

/* Energies of every action class `def` defines, and its area, for the
 * component `name` with attributes `attrs` (a mapping; may be NULL).
 * Subcomponent classes are looked up in cc, then through ert (may be
 * NULL), then in the built-in classes.  Errors are located at the
 * offending node. */
nm_status nm_compound_eval(const nm_ynode *cc, const nm_ynode *def, const char *name,
                           const nm_ynode *attrs, nm_compound_ert ert, void *ert_ctx,
                           nm_ydoc *doc, nm_compound *out, nm_error *err);

#endif
