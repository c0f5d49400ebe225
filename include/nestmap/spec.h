/* spec.h — everything read from the input files, parsed and checked.
 *
 * nestmap takes one or more YAML files whose top-level keys are merged
 * (architecture, problem, mapping, ERT, ART, mapper, constraints, ...).
 * nm_spec_load turns them into const specs; the YAML document stays alive so
 * that later stages can point at nodes in their errors.
 */
#ifndef NESTMAP_SPEC_H
#define NESTMAP_SPEC_H

#include <stddef.h>

#include "nestmap/arch.h"
#include "nestmap/mapping.h"
#include "nestmap/workload.h"
#include "nestmap/yaml.h"

enum {
    NM_NEED_ARCH = 1u << 0,
    NM_NEED_PROBLEM = 1u << 1,
    NM_NEED_MAPPING = 1u << 2,
    NM_BUILTIN_ENERGY = 1u << 3, /* ignore ERT/ART: every energy and area built in */
    NM_ACCEPT_CHAIN = 1u << 4    /* a chain of operations may stand for the problem
                                  * (fusion.h); without it a chain is refused */
};

struct nm_chain;
struct nm_fused_map;

typedef struct nm_spec {
    nm_ydoc doc;
    nm_arch arch;
    nm_workload wl;
    nm_mapping map;
    int has_arch, has_problem, has_mapping;
    /* A chain problem (NM_ACCEPT_CHAIN) and its fused mapping, or NULL;
     * owned by the spec.  With a chain, wl and map are unset. */
    struct nm_chain *chain;
    struct nm_fused_map *fmap;
    /* The chain fmap maps: chain with the halos fmap's groups recompute
     * rewritten (nm_fused_map_parse); evaluate fmap on it.  Owned. */
    struct nm_chain *fchain;
    const nm_ynode *mapper;        /* `mapper:` or NULL */
    const nm_ynode *constraints;   /* architecture_constraints (or constraints) or NULL */
    const nm_ynode *constraints2;  /* mapspace_constraints or NULL */
    int imperfect;                 /* mapspace: {template: ruby}: residual factors searched */
} nm_spec;

/* Loads and merges files[0..n), then parses the sections named in `need`
 * (NM_NEED_* bits; absent required sections are errors, present optional
 * ones are parsed too).  On failure *err says where; the spec must still be
 * released with nm_spec_fini. */
nm_status nm_spec_load(nm_spec *spec, const char *const *files, size_t n, unsigned need,
                       nm_error *err);

/* Same, with the design changed by ov[0..nov) before it is parsed (see
 * override.h). */
struct nm_override;
nm_status nm_spec_load_set(nm_spec *spec, const char *const *files, size_t n,
                           const struct nm_override *ov, size_t nov, unsigned need,
                           nm_error *err);

/* What else shapes the loading: the overrides (--set) applied to the
 * design, and the variables (--jinja) templates are rendered with. */
typedef struct nm_spec_opts {
    const struct nm_override *ov;
    size_t nov;
    const nm_tmpl_var *vars;
    size_t nvars;
} nm_spec_opts;

/* Same as nm_spec_load_set, with the options in *opts (NULL: none). */
nm_status nm_spec_load_opts(nm_spec *spec, const char *const *files, size_t n,
                            const nm_spec_opts *opts, unsigned need, nm_error *err);

/* Same from one string (tests). */
nm_status nm_spec_load_string(nm_spec *spec, const char *name, const char *text, unsigned need,
                              nm_error *err);

/* Same from n texts held in memory (texts[i] has lens[i] bytes, named
 * names[i] in messages), merged in order as files are, with the overrides
 * ov[0..nov) applied. */
nm_status nm_spec_load_strings(nm_spec *spec, size_t n, const char *const *names,
                               const char *const *texts, const size_t *lens,
                               const struct nm_override *ov, size_t nov, unsigned need,
                               nm_error *err);

/* Releases the spec; safe on a zeroed or half-loaded one. */
void nm_spec_fini(nm_spec *spec);

#endif
