/* override.h — changes to a design before it is parsed: `--set
 * COMPONENT.ATTRIBUTE=VALUE` on every command that reads a design, and each
 * point of a sweep.
 *
 * COMPONENT names a component (GlobalBuffer, DRAM), a subtree or v0.4
 * container (PE, column), or the design's top subtree, whose attributes
 * (technology, global_cycle_seconds) its components inherit.  ATTRIBUTE is
 * one that nestmap reads (depth, width, type, read_bandwidth, ...).  VALUE
 * is a scalar; a count may carry a binary suffix: 64Ki = 65536 (Ki, Mi, Gi,
 * Ti).
 *
 * Fan-outs.  meshX, meshY and instances of a subtree resize it: in the core
 * form its range becomes the new count and every component inside it gets
 * the mesh that follows, so the design stays consistent (PE.meshX=32 makes
 * a 16x16 PE[0..255] a 32x16 PE[0..511]; `instances` grows the one axis the
 * subtree spreads along).  On a v0.4 !Container they set its spatial mesh.
 * When a subtree and a component share the name (a MAC[0..N] subtree
 * holding a MAC), the fan-out attributes go to the subtree, the others to
 * the component.
 *
 * The workload.  `problem.NAME=V` sets NAME in the input's problem and in
 * every layer of its network: a dimension of the full form's `instance:`,
 * or a key of a shorthand (problem.N=4 is a batch of 4 for conv2d; any key
 * the shorthand takes, checked when the problem is read).
 *
 * Sparse options.  `sparse.LEVEL.action=gating|skipping` makes every
 * gating or skipping group of LEVEL's action_optimization that kind (its
 * targets and conditions kept); `sparse.LEVEL.compute=gating|skipping` the
 * same for the compute's compute_optimization; `sparse.LEVEL.format.TENSOR=
 * UOP,CP` gives TENSOR at LEVEL those rank formats, outermost first (the
 * ranks' word bits are the defaults), and `=none` takes its format away.
 * LEVEL's options are found where the design writes them: a target of the
 * top-level `sparse_optimizations:`, or the component's own
 * `sparse_optimizations:` (v0.4); a format for a level with neither becomes
 * a new target.
 *
 * Errors are located where the override was written: at `at` (a sweep
 * file's node), else on the command line ("--set PE.meshX=0: error: ...").
 */
#ifndef NESTMAP_OVERRIDE_H
#define NESTMAP_OVERRIDE_H

#include "nestmap/limits.h"
#include "nestmap/yaml.h"

#define NM_OVERRIDE_VALUE_MAX 128
#define NM_OVERRIDE_PROBLEM "problem" /* the component name that means the workload */
#define NM_OVERRIDE_DENSITY "problem.densities" /* ... and its tensors' densities, as
                                                 * Timeloop writes them (sparse.h) */
#define NM_OVERRIDE_SPARSE "sparse"              /* sparse.LEVEL..., the sparse options */

typedef struct nm_override {
    char component[NM_NAME_MAX];
    char attribute[NM_NAME_MAX];
    char value[NM_OVERRIDE_VALUE_MAX]; /* suffixes expanded: "65536" for "64Ki" */
    char text[NM_NAME_MAX * 2 + NM_OVERRIDE_VALUE_MAX + 8]; /* "--set C.A=V", for messages */
    const nm_ynode *at;                /* where written, or NULL: the command line */
} nm_override;

/* Parses "COMPONENT.ATTRIBUTE=VALUE" into *ov.  Checks the form, the
 * attribute's name (a "did you mean" for a misspelling) and the suffix;
 * the component is checked when applied. */
nm_status nm_override_parse(nm_override *ov, const char *text, const nm_ynode *at,
                            nm_error *err);

/* Expands a binary suffix ("64Ki" -> "65536") into out; other text is
 * copied as it is.  0 when a suffixed count overflows 64 bits. */
int nm_override_expand(const char *text, char *out, size_t size);

/* Applies ov[0..n) in order to the `architecture:` of doc (an error when
 * there is none).  Unknown components get a "did you mean". */
nm_status nm_override_apply(nm_ydoc *doc, const nm_override *ov, size_t n, nm_error *err);

#endif
