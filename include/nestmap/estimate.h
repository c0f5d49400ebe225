/* estimate.h — nestmap's own energy and area estimates, for components that
 * have no ERT/ART entry.
 *
 * A component's class (and subclass) picks a built-in class; its attributes
 * (depth, width, technology, operand widths, DRAM type) give the numbers.
 * Every default number lives in a table in estimate.c with its source next
 * to it.  The reference node of the tables is 45 nm (40 nm for the Aladdin
 * figures); other nodes are reached with the Stillmaker & Baas (2017)
 * scaling table.
 *
 * Names Timeloop/Accelergy designs use map onto the built-in classes:
 *   DRAM                                    DRAM by `type`
 *   SRAM, smartbuffer_SRAM                  SRAM (smartbuffer: + address generator)
 *   regfile, smartbuffer_RF                 register file
 *   aladdin_register, register              single register
 *   intmac, fpmac, intadder, intmultiplier, fpadder, fpmultiplier
 *   dummy_storage                           nothing (0 pJ)
 *   storage / compute with a `subclass`     the subclass
 */
#ifndef NESTMAP_ESTIMATE_H
#define NESTMAP_ESTIMATE_H

#include "nestmap/arch.h"
#include "nestmap/yaml.h"

typedef struct nm_estimate {
    double read, write, update; /* pJ per vector access (storage) */
    double compute;             /* pJ per operation (arithmetic) */
    double leak_w;              /* W of leakage per instance (storage; a cycle
                                 * leaks this x the clock period) */
    double area;                /* um^2 per instance */
    const char *source;         /* what the numbers came from (static text) */
} nm_estimate;

/* Estimates for a storage level / the arithmetic level.  An unknown class
 * is an error (with "did you mean"); so is an attribute the class needs
 * and does not have.  A default the user did not ask for (no technology,
 * no DRAM type) is a warning in doc (none when doc is NULL). */
nm_status nm_estimate_level(const nm_level *L, nm_ydoc *doc, nm_estimate *e, nm_error *err);
nm_status nm_estimate_arith(const nm_arith *A, nm_ydoc *doc, nm_estimate *e, nm_error *err);

/* A primitive inside an Accelergy compound component, by the attributes
 * the built-in classes read (0 or NULL when the subcomponent gives none). */
typedef struct nm_primitive {
    const char *path;      /* "glb.storage", for messages */
    const char *cls;
    double depth, width;   /* storage: entries, bits per access */
    double bits;           /* operand width: n_bits, else width, else datawidth */
    double mult_bits, adder_bits;
    double tech_nm;        /* 0: not given (45 nm) */
    const char *dram_type; /* DRAM: `type` */
} nm_primitive;

/* Energy of one `action` of a primitive (pJ) and its area (um^2), with the
 * table the figures come from in *source (static text).  Also knows
 * `counter`.  Fails, located at `at`, on a class that is not built in (with
 * "did you mean"), an action the class does not have, or a missing depth. */
nm_status nm_estimate_primitive(const nm_primitive *p, const char *action, const nm_ynode *at,
                                double *pj, double *um2, const char **source, nm_error *err);

/* Whether class/subclass names a built-in class (for area-only estimates). */
int nm_estimate_known(const char *cls, const char *subclass);

/* The peak bandwidth of one unit of DRAM type `type` ("HBM2": one stack) in
 * bytes per second, and the source of the figure (estimate.c's table);
 * 0 for a type without one. */
int nm_estimate_dram_peak(const char *type, double *bytes_per_s, const char **source);

/* The built-in class name closest to cls (for "did you mean"), or NULL. */
const char *nm_estimate_suggest(const char *cls);

/* Energy and area of one component at technology `nm` from the 45 nm
 * reference: factors to multiply by.  Negative when a node lies outside
 * the scaling table (7 to 130 nm). */
double nm_tech_energy_factor(double nm);
double nm_tech_area_factor(double nm);

/* The per-access energies behind the classes, at `nm` (tests and tables). */
double nm_estimate_sram_pj(double depth, double width_bits, double nm);
double nm_estimate_regfile_pj(double depth, double width_bits, double nm);
double nm_estimate_mac_pj(int mult_bits, int add_bits, int fp, double nm);

/* The energy (pJ) of one operation of kind k on the arithmetic A: a
 * compute's (A->e_compute) for a multiply-accumulate; the ERT's action for
 * the kind where the design gives one ("add", "multiply", "compare" or
 * "max", "exp", "divide"); else a compute's energy times the share the
 * operation's part takes of it in the built-in tables (Horowitz 2014, at
 * A's operand widths and number format): an addition or a comparison (a
 * subtraction) the adder's, a multiplication the multiplier's.  An
 * exponential or a division, which those tables do not give, costs a
 * whole compute; a copy nothing.  *how says which (static text). */
double nm_arith_op_energy(const nm_arith *A, nm_op_kind k, const char **how);

/* Makes A's compute an operation of kind k: its compute energy
 * nm_arith_op_energy's, its gated and skipped ones scaled alike. */
void nm_arith_as_op(nm_arith *A, nm_op_kind k);

/* "mac", "add", "mul", "max", "exp", "div", "copy". */
const char *nm_op_kind_name(nm_op_kind k);

#endif
