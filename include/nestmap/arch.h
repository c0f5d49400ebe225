/* arch.h — the architecture: storage levels from the innermost (index 0) to
 * the outermost (DRAM), and the arithmetic level below them.
 *
 * Instances come from names with ranges (PE[0..167]) and meshX x meshY; the
 * fan-out of level i is the ratio of its child's instances to its own, in X
 * and in Y.  Per-action energies and areas come from an ERT/ART (see
 * energy.h).  Const after parsing.
 */
#ifndef NESTMAP_ARCH_H
#define NESTMAP_ARCH_H

#include <stdint.h>

#include "nestmap/limits.h"
#include "nestmap/noc.h"
#include "nestmap/sparse.h"
#include "nestmap/yaml.h"

typedef enum nm_energy_source {
    NM_ESRC_NONE = 0, /* not set: energies are zero */
    NM_ESRC_ERT,      /* from the input's ERT */
    NM_ESRC_USER,     /* from the component's own attributes */
    NM_ESRC_BUILTIN,  /* from nestmap's built-in tables (see energy.c) */
    NM_ESRC_COMPOUND  /* summed over an Accelergy compound class's parts (compound.h) */
} nm_energy_source;

typedef struct nm_level {
    char name[NM_NAME_MAX];  /* without the [a..b] range */
    char cls[NM_NAME_MAX];   /* component class as written */
    char subclass[NM_NAME_MAX]; /* `subclass` ("" when absent) */
    const nm_ynode *node;    /* where it was declared (for errors) */
    const nm_ynode *cls_node; /* its `class` */
    const nm_ynode *attrs;   /* its attributes with those its scopes hand down */
    const nm_ynode *tech;    /* `technology`, its own or an enclosing subtree's; NULL */
    int dummy;               /* dummy_storage: a placeholder for a fan-out */
    /* v0.4 form: the !Container (or !Component with `spatial`) whose fan-out
     * this level stands for, as timeloopfe's inter_<name>_spatial; mappings
     * and constraints may name it by either name.  It keeps no data and has
     * no temporal loops.  "" for every other level. */
    char container[NM_NAME_MAX];
    int is_dram;
    int64_t instances, meshX, meshY;
    int64_t fanoutX, fanoutY; /* to the next inner level (or the arithmetic) */
    int has_size;
    int64_t size;            /* words; valid when has_size */
    int64_t effective_size;  /* size / multiple_buffering */
    int word_bits, block_size, cluster_size;
    /* `tensor_datawidth: {NAME: BITS}` (a nestmap extension): tensors
     * held at another width than word_bits, such as int32 partial sums
     * beside int8 operands.  A tile of BITS-bit words takes BITS/word_bits
     * of the level's words (rounded up), its accesses move BITS-bit words
     * in rows of word_bits x block_size bits, and its bandwidth is spent in
     * the level's words.  By name: the model finds each workload's tensors
     * (nm_level_ds_bits). */
    int ntw;
    struct nm_tensor_width {
        char name[NM_NAME_MAX];
        int bits;
        const nm_ynode *at;
    } tw[NM_MAX_DS];
    double multiple_buffering, min_utilization;
    int has_read_bw, has_write_bw, has_shared_bw;
    int bw_stated;           /* a bandwidth given, or `unlimited` written (no warning) */
    double read_bw, write_bw, shared_bw; /* words per cycle */
    /* Energy per vector access (pJ) for each action, and leakage per cycle. */
    double e_read, e_fill, e_update, e_leak;
    /* ... of a gated and of a skipped access (NM_ACC_* order; sparse.h),
     * with Timeloop's fall-backs: skipped to gated, gated to 0 */
    double e_gated[3], e_skipped[3];
    /* Metadata (sparse.h): its store (metadata_storage_width bits x
     * metadata_storage_depth), the default bits of a metadata unit
     * (metadata_datawidth), whether the level decompresses what its parent
     * holds compressed (and compresses its updates back); the energy of a
     * metadata access [actual/gated/skipped][read/fill/update] per vector
     * of md_width bits, and of one (de)compression. */
    int md_width, md_word_bits;
    int64_t md_depth;
    int decompression_supported, compression_supported;
    double e_meta[3][3], e_decompress, e_compress;
    double vector_access_energy; /* max over actions / cluster_size, as printed */
    double addr_gen_energy;      /* per address generation, 0 by default */
    double area;                 /* um^2 per instance */
    nm_energy_source esrc, asrc; /* where the energies / the area came from */
    const char *esrc_note;       /* for built-in energies: the table entry used */
    const char *compose;         /* compound class: how each action was composed, or NULL */
    char dram_type[16];          /* DRAM: the `type` attribute ("" when absent) */
    const nm_ynode *type_node;   /* where `type` was given */
    /* The network to the child (noc.h): net[0] carries reads and fills,
     * and updates and drains too when nnet == 1; net[1] the updates and
     * drains when the level names a network_update of its own. */
    nm_noc net[2];
    int nnet;
    int reduces;                 /* reduction_supported (default: not DRAM) */
} nm_level;

/* What one operation of the arithmetic computes (a chain's operations,
 * fusion.h): a multiply-accumulate, or a non-multiply operation charged
 * its own energy (nm_arith_op_energy). */
typedef enum nm_op_kind {
    NM_OP_MAC,   /* multiply-accumulate (every plain problem) */
    NM_OP_ADD,   /* an addition: sums, bias, residual, subtraction */
    NM_OP_MUL,   /* a multiplication: scaling, element-wise products */
    NM_OP_MAX,   /* a comparison: max, min, relu, max-pooling */
    NM_OP_EXP,   /* an exponential */
    NM_OP_DIV,   /* a division */
    NM_OP_COPY,  /* no arithmetic: the data only moves */
    NM_OP_KINDS
} nm_op_kind;

typedef struct nm_arith {
    char name[NM_NAME_MAX];
    char cls[NM_NAME_MAX];
    char subclass[NM_NAME_MAX];
    const nm_ynode *node, *cls_node, *tech;
    const nm_ynode *attrs; /* its attributes with those its scopes hand down */
    int64_t instances, meshX, meshY;
    int word_bits;
    int mult_bits, adder_bits; /* operand widths (multiplier_width, adder_width, ...) */
    double e_compute; /* pJ per operation */
    double e_gated, e_skipped; /* per gated and skipped operation (sparse.h), when
                                * gs_given: from the ERT, with Timeloop's fall-backs
                                * (skipped to gated to the compute energy); without an
                                * ERT a gated or skipped operation costs nothing */
    int gs_given;
    double e_op[NM_OP_KINDS]; /* pJ per non-multiply operation, where the ERT gives it */
    unsigned op_given;        /* bit k: e_op[k] from the ERT */
    double area;
    nm_energy_source esrc, asrc;
    const char *esrc_note; /* for built-in energies: the table entry used */
    const char *compose;   /* compound class: how each action was composed, or NULL */
} nm_arith;

typedef struct nm_arch {
    int nlevels;                    /* storage levels */
    nm_level level[NM_MAX_LEVELS];  /* 0 = innermost storage */
    nm_arith arith;
    double cycle_seconds;           /* global_cycle_seconds, default 1e-9 */
    int clock_given;                /* the input gave global_cycle_seconds */
    /* v0.4 form: the `constraints:` written on components and containers,
     * as a list of targets (each with `target` and `type`, as timeloopfe
     * turns them into architecture_constraints), or NULL.  In the
     * document's arena; the entries point at the written nodes. */
    const nm_ynode *constraints;
    /* Count with Timeloop's tile-keeping rule from before 2025 (see
     * nm_nest_ws_stride_rule in nest.h); set by the caller, 0 by parsing. */
    int stride_rule_2024;
    /* Some network between levels costs energy (noc.h): the model then
     * counts multicast groups and hops. */
    int noc;
    /* sparse_optimizations (sparse.h); parsed with the problem, since its
     * targets name data spaces. */
    nm_sparse sparse;
} nm_arch;

/* The bits of a word of data space ds of wl at level L: its
 * tensor_datawidth, else the level's word_bits. */
int nm_level_ds_bits(const nm_level *L, const struct nm_workload *wl, int ds);

/* Every tensor_datawidth names a data space of wl: a located error
 * otherwise (and with sparse optimizations, whose formats give payload
 * widths of their own). */
nm_status nm_arch_check_widths(const nm_arch *arch, const struct nm_workload *wl, nm_error *err);

/* Sets arch->noc from the levels' networks (after their specs change). */
void nm_arch_noc_update(nm_arch *arch);

/* What the rest of the input says about classes the architecture names:
 * Accelergy's `compound_components:` and the `ERT:` (either may be NULL).
 * A class nestmap does not know by name is storage or compute by what they
 * say (a compound class's actions, the ERT entry's actions), or by the
 * component's `role: storage|compute` attribute. */
typedef struct nm_arch_hints {
    const nm_ynode *compound;
    const nm_ynode *ert;
} nm_arch_hints;

/* Parses the `architecture:` node (core subtree/local form or the v0.4
 * nodes form) into *arch.  hints may be NULL. */
nm_status nm_arch_parse(nm_arch *arch, const nm_ynode *node, const nm_arch_hints *hints,
                        nm_ydoc *doc, nm_error *err);

/* Index of the storage level called name (ranges ignored), or of the
 * level standing for the v0.4 container called name; -1 when none. */
int nm_arch_level(const nm_arch *arch, const char *name);

/* The level a mapping or constraint entry targets: as nm_arch_level, but a
 * spatial entry naming a v0.4 component with its own `spatial` goes to
 * that component's fan-out level, as timeloopfe moves it there. */
int nm_arch_target(const nm_arch *arch, const char *name, int spatial);

/* The storage level whose name is closest to name (for "did you mean"), or
 * NULL when none is close. */
const char *nm_arch_suggest_level(const nm_arch *arch, const char *name);

/* Whether key is an attribute nestmap reads or accepts on a component; when
 * not, *suggest is the closest one the model reads, or NULL. */
int nm_arch_attr_known(const char *key, const char **suggest);

#endif
