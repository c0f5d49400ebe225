/* fusion.h — chains of operations, and fused mappings of them.
 *
 * A chain is a list of Einsums whose tensors are named so that one's output
 * is a later one's input:
 *
 *   problem:
 *     chain:
 *     - {name: qk, einsum: "S[h,m,n] = Q[h,m,e] * K[h,n,e]"}
 *     - {name: pv, einsum: "O[h,m,d] = S[h,m,n] * V[h,n,d]"}
 *     bounds: {h: 12, m: 512, n: 512, e: 64, d: 64}
 *
 * An operation may say what each point of its einsum computes (`op: max`,
 * `exp`, `sum`, ...: nm_op_kind, charged by nm_arith_op_energy); it is a
 * multiply-accumulate when it does not.  An exponential's `online: n` is
 * FlashAttention's online softmax: a running max over the keys n, whose
 * compares and rescaling fusion_online.c counts.  The common blocks (`attention`,
 * `ffn`, `dw_pw`, `conv_pool`) expand to chains (chain_blocks.c).
 *
 * A fused mapping cuts the chain into groups of consecutive operations:
 *
 *   mapping:
 *     fused:
 *     - fuse_at: GlobalBuffer        # the group's intermediates live here
 *       shared: [ mapping entries of the levels above GlobalBuffer ]
 *       ops:
 *         qk: [ mapping entries of GlobalBuffer and below ]
 *         pv: [ ... ]
 *
 * In a group the loops above the fusion level are shared: the operations
 * step through them together, and at each step each operation in turn runs
 * its own mapping of the fusion level and the levels below over its tile.
 * A shared loop runs over an index every operation of the group has, and
 * not over one a producer of an intermediate reduces (the consumer would
 * take a partial tile).  The group's intermediates are kept at the fusion
 * level (and below, as each operation's mapping says), never above it:
 * the producer leaves each tile there for its consumers.  Between groups
 * tensors go through the backing store, as for a single Einsum; a group of
 * one operation with no shared entries is a plain mapping.
 *
 * The model follows LoopTree's view of fused dataflows (Gilbert et al.,
 * TCASAI 2024) with the single-Einsum analysis of model.h doing the
 * counting: each operation is evaluated on its composite mapping (the
 * shared loops above its own), in which an intermediate is kept at the
 * fusion level and bypassed above it.  The analysis then counts the
 * producer's updates and read-modify-write reads there, the consumers'
 * reads from there, and no backing-store access of it; every other count
 * is the single-Einsum one.  While one operation runs, a level holds its
 * tiles, the tiles the other operations keep there from one step to the
 * next (those whose reuse across steps the analyses count) and, at the
 * fusion level, the intermediates waiting for a later consumer: the largest
 * of these over the group's operations must fit, so every reuse counted is
 * one the level can hold.
 * Computes, accesses, energies and cycles add up: the operations of a
 * group run one after the other at each step, and groups one after the
 * other.
 *
 * Convolutions reading their producer through windows (a halo) fuse by
 * recomputing it: a group may say `recompute: {p: 4}`, and its operations
 * become those nm_chain_recompute makes of them, stepping through the last
 * operation's rows p in 4 steps with a new shared index (p_step), each
 * producer computing the band of rows its consumers' windows read at a
 * step (the rows two steps share computed twice).  Or by retaining it
 * (`retain: {p: 4}`, nm_chain_retain): each operation computes only the
 * rows a step adds, and the intermediates' earlier rows stay at the fusion
 * level for the windows that still reach them.  What the first windows
 * reach beyond a step's rows, each producer's head, is computed in the
 * first step (at every iteration of the shared loops around the steps),
 * the fusion level's loop over the rows running longer there
 * (nm_fused_step_map).  A retained group splits one index; its steps are
 * its innermost shared loop that steps (another inside them would sweep
 * other windows between two steps), and the shared loops around them run
 * over indices every tensor following the rows has.
 */
#ifndef NESTMAP_FUSION_H
#define NESTMAP_FUSION_H

#include <stdint.h>

#include "nestmap/arch.h"
#include "nestmap/error.h"
#include "nestmap/mapping.h"
#include "nestmap/model.h"
#include "nestmap/workload.h"
#include "nestmap/yaml.h"

#define NM_MAX_OPS 8 /* operations in one chain */

typedef struct nm_chain_op {
    char name[NM_NAME_MAX];
    /* The operation alone, as its einsum gives it; the chain's other
     * indices are its size-1 stand-ins and the other tensors its absent
     * ones, so that entries shared with other operations parse for it. */
    nm_workload wl;
    nm_op_kind kind;          /* what each point of its einsum computes (`op:`) */
    char kind_name[NM_NAME_MAX]; /* as written ("mac" when not) */
    int out;                  /* its output data space */
    int producer[NM_MAX_DS];  /* for each input: the operation writing it, or -1 */
    /* Its computes over those of the operation as written: above 1 when a
     * recomputed halo (nm_chain_recompute) has it compute rows again. */
    double recompute;
    /* When its group retains halos (nm_chain_retain): the rows its first
     * step computes besides a step's own (its head; 0: none, as for the
     * last operation), along index head_dim, the steps being head_step
     * (nm_chain_step_workload). */
    int retained;             /* in a group retaining its halo: its windows may slide */
    int64_t head;
    int head_dim, head_step;
    /* A causal mask (`causal: [m, n]`): the points whose n passes m +
     * mask_offset are masked, a row m seeing the keys up to its own
     * position, the last row all of them (mask_offset: |n| - |m|).  A
     * group stepping through blocks of n skips the steps the mask covers
     * whole (nm_fused_causal_plan); elsewhere every point is computed and
     * the mask applied to it, as a framework's unfused GEMM and softmax do. */
    int masked, mask_m, mask_n;
    int64_t mask_offset;
    /* FlashAttention's online softmax (`online: n` on an exponential): its
     * exponentials are taken against a running max over index online_dim,
     * not the row's max known ahead, so a group may step through blocks of
     * n; each block after a row's first rescales what the row holds
     * (fusion_online.c). */
    int online, online_dim;
    const nm_ynode *node;     /* its entry, for errors */
} nm_chain_op;

typedef struct nm_chain {
    char name[NM_NAME_MAX];
    int nops;
    nm_chain_op op[NM_MAX_OPS];
} nm_chain;

/* A group's rows split into steps whose halos are recomputed
 * (nm_chain_recompute) or retained (nm_chain_retain). */
typedef struct nm_fused_split {
    char rank[NM_NAME_MAX];  /* the last operation's index, as written */
    char step[NM_NAME_MAX];  /* the steps' index every operation of the group gains */
    int64_t steps;
    int retain;              /* the halo is kept, not computed again (the group's one split) */
} nm_fused_split;

#define NM_MAX_SPLITS 2 /* rows and columns */

typedef struct nm_fused_group {
    int first, nops;  /* operations first .. first + nops - 1 */
    int level;        /* fusion level: the backing store when nothing is fused */
    int nsplit;       /* recomputed halos: the chain's operations of the group are */
    nm_fused_split split[NM_MAX_SPLITS]; /* those nm_chain_recompute made of them */
    const nm_ynode *node;
} nm_fused_group;

/* Whether group g retains its halo (its one split), rather than
 * recomputing it or stepping through nothing. */
static inline int nm_fused_group_retains(const nm_fused_group *g)
{
    return g->nsplit == 1 && g->split[0].retain;
}

typedef struct nm_fused_map {
    int ngroups;
    nm_fused_group group[NM_MAX_OPS];
    int group_of[NM_MAX_OPS];
    /* Each operation's data spaces that are intermediates of its group
     * (kept at the fusion level, never above), and its composite mapping. */
    uint32_t onchip[NM_MAX_OPS];
    nm_mapping map[NM_MAX_OPS];
} nm_fused_map;

/* Totals over some operations. */
typedef struct nm_fused_sum {
    double energy;            /* pJ */
    uint64_t cycles, computes;
    uint64_t backing;         /* backing-store accesses (words, all instances) */
} nm_fused_sum;

/* What an operation of FlashAttention's online softmax computes besides
 * its einsum's points (fusion_online.c): for the online exponential, a
 * compare per exponential (the running max) and, per row, a correction
 * factor exp(old max - new max) for each block of keys after its first;
 * for each consumer summing the exponentials over the keys, a multiply per
 * element of its partial sums for each such block.  Their energy is in the
 * operation's compute energy, their cycles in its compute cycles; its
 * computes stay its einsum's points. */
typedef struct nm_fused_online {
    int64_t blocks;     /* the online exponential's blocks of keys per row (its group's
                         * shared loops over them); 0 for other operations */
    uint64_t compares;  /* the running max */
    uint64_t exps;      /* the correction factors */
    uint64_t muls;      /* a consumer's rescaled partial sums */
    double energy;      /* pJ of those */
} nm_fused_online;

typedef struct nm_fused_stats {
    int valid;
    /* When invalid: the operation whose own mapping is invalid (its
     * stats' invalid says why), or -1 and the group and level that cannot
     * hold what it must while one operation runs (need and limit in words). */
    int bad_op, bad_group, bad_level;
    uint64_t need, limit;
    nm_stats op[NM_MAX_OPS];
    nm_fused_online online[NM_MAX_OPS];
    nm_fused_sum group[NM_MAX_OPS];
    nm_fused_sum total;
} nm_fused_stats;

/* The evaluator of one chain's mappings on one architecture: a model per
 * operation.  Both must outlive it. */
typedef struct nm_fused_model {
    const nm_arch *arch;
    const nm_chain *chain;
    nm_arch *op_arch[NM_MAX_OPS]; /* the design with operation i's kind of compute
                                   * (nm_fused_op_arch), or NULL: arch; owned */
    nm_model op[NM_MAX_OPS];
    int nready;
    /* Retained halos: for each operation with a head (nm_chain_op.head), one
     * step alone ([0]) and the first step ([1]): workloads (owned) and
     * models, or NULL; and scratch stats for the first step's fit. */
    nm_workload *step_wl[NM_MAX_OPS][2];
    nm_model step[NM_MAX_OPS][2];
    struct nm_fused_stats *first_st;
    /* Causal masks: for each masked operation a copy of its workload whose
     * rows and keys nm_fused_causal sets to those of each nest it counts,
     * and its model (NULL: not masked); owned. */
    nm_workload *causal_wl[NM_MAX_OPS];
    nm_model causal[NM_MAX_OPS];
    nm_stats *causal_st; /* scratch: three nests' stats */
} nm_fused_model;

/* Whether the problem node is a chain ({chain: [...], bounds: {...}}). */
int nm_chain_given(const nm_ynode *problem);

/* Whether the problem node is one of the common fused blocks, written as
 * one key (chain_blocks.c), each expanding to a chain:
 *   attention: {heads, seq, kv (seq), head_dim, value_dim (head_dim),
 *               batch (1), softmax: parts | online | single, causal (false:
 *               true masks each operation over queries m and keys n)}
 *   ffn: {tokens, d_model, d_ff, gated (false), activation: relu | gelu | silu}
 *   dw_pw: {C, M, P, Q (P), R (3), S (R), stride (1)}
 *   conv_pool: {C, M, P, Q (P), R (3), S (R), pool (2), stride (pool), rows
 *               (true: the convolution writes pooling windows, so rows are
 *               shared too; windows that overlap need false)} */
int nm_chain_block_given(const nm_ynode *problem);

/* The chain problem node ({name, chain, bounds}, in doc's arena, located
 * at the block's nodes) that the block in problem stands for. */
nm_status nm_chain_block(const nm_ynode *problem, nm_ydoc *doc, const nm_ynode **out,
                         nm_error *err);

/* Parses a chain problem into *c. */
nm_status nm_chain_parse(nm_chain *c, const nm_ynode *problem, nm_error *err);

/* Links the operations of c, each with its workload, name, kind, output
 * and entry set (as nm_chain_parse does after reading them, and
 * nm_network_chain for a network's layers): each input's producer, the
 * checks that every intermediate is written once, before it is read, with
 * the shape it is read with, and the stand-ins (the other operations'
 * indices and tensors, Timeloop's convolution dimensions and the roles an
 * operation lacks). */
nm_status nm_chain_link(nm_chain *c, nm_error *err);

/* The extent of axis ax of one of wl's data spaces: what its projection
 * reaches. */
int64_t nm_axis_extent(const nm_workload *wl, const nm_axis *ax);

/* The operation called name, or -1. */
int nm_chain_op_index(const nm_chain *c, const char *name);

/* Parses the fused mapping node (the value of `mapping:`, holding `fused:`)
 * of chain c on arch into *fm; doc holds the composite lists it builds.  A
 * group that recomputes halos (`recompute:`) rewrites its operations in c
 * (nm_chain_recompute) before its mappings are read. */
nm_status nm_fused_map_parse(nm_fused_map *fm, const nm_ynode *node, const nm_arch *arch,
                             nm_chain *c, nm_ydoc *doc, nm_error *err);

/* Rewrites ops first .. first + nops - 1 of c to step through the last
 * one's index rank in `steps` steps, each operation computing per step the
 * band of rows the next ones read (fusion_halo.c): the index split gets
 * its band's size, a new index (its name into step, NM_NAME_MAX) the
 * steps, every term of the split index a term in the steps, and each
 * intermediate an axis of the steps (each step's band its own slice).
 * Refuses (NM_ERR_INPUT, the reason in why) what cannot step so: an
 * operation whose output no later one of the group reads, a consumer
 * reading an intermediate whole, steps not dividing the rows, densities. */
nm_status nm_chain_recompute(nm_chain *c, int first, int nops, const char *rank, int64_t steps,
                             char *step, char *why, size_t size);

/* As nm_chain_recompute, retaining the halos instead (fusion_halo.c): every
 * operation's split index gets the rows a step adds (its consumers'
 * advance through its output), every term of it a term in the steps, the
 * intermediates included; each producer's head (nm_chain_op.head) is what
 * the first step's windows reach beyond that.  Refuses what
 * nm_chain_recompute refuses, a producer with fewer rows than its readers
 * step through, and an operation split already. */
nm_status nm_chain_retain(nm_chain *c, int first, int nops, const char *rank, int64_t steps,
                          char *step, char *why, size_t size);

/* The workload of one step of op, an operation of a group retaining its
 * halo (op->retained): op's with one step, and when first its first step's
 * rows (its head's besides a step's own). */
void nm_chain_step_workload(const nm_chain_op *op, int first, nm_workload *out);

/* The mapping of that workload from op's composite mapping m in a group
 * fused at level: m with no loop over the steps, and when first the fusion
 * level's loop over the rows as much longer as the first step's rows need,
 * the levels below tiling them as they tile a step's.  Returns 0 when they
 * cannot (their tiles do not divide the first step's rows, or split them
 * imperfectly). */
int nm_fused_step_map(const nm_chain_op *op, int level, const nm_mapping *m, int first,
                      nm_mapping *out);

/* The last operation's dimensions of ops first .. first + nops - 1 along
 * which the group may recompute halos: an axis of its output alone that
 * the group cannot share as written and nm_chain_recompute accepts; up to
 * NM_MAX_SPLITS of them into dims.  Returns how many, or -1 when memory
 * runs out. */
int nm_chain_halo_dims(const nm_chain *c, int first, int nops, int *dims);

/* Applies group g's splits (g->split) to c, as the parser did. */
nm_status nm_fused_group_apply(nm_chain *c, const nm_fused_group *g, char *why, size_t size);

/* Sets *fm to the unfused mapping of c whose operation i maps as maps[i]
 * (a group of one per operation). */
void nm_fused_map_unfused(nm_fused_map *fm, const nm_chain *c, const nm_arch *arch,
                          const nm_mapping *maps);

nm_status nm_fused_model_init(nm_fused_model *fmdl, const nm_arch *arch, const nm_chain *c,
                              nm_error *err);

/* arch with its compute made operation i's kind (nm_arith_as_op): a copy
 * on the heap, or NULL when the operation multiply-accumulates (then arch
 * itself serves) or memory runs out (*err says so).  The model of an
 * operation, and any search for its own mapping, evaluate on this. */
nm_arch *nm_fused_op_arch(const nm_arch *arch, const nm_chain *c, int i, nm_error *err);
void nm_fused_model_fini(nm_fused_model *fmdl);

/* Evaluates fm: fills *out; returns out->valid. */

/* The words group gi of fm needs at level s, its operations' stats in
 * out->op (evaluated): the largest, over its operations, of what the level
 * holds while one runs (see nm_fused_group_fits). */
uint64_t nm_fused_group_need(const nm_fused_model *fmdl, const nm_fused_map *fm, int gi,
                             const nm_fused_stats *out, int s);
int nm_fused_model_eval(nm_fused_model *fmdl, const nm_fused_map *fm, nm_fused_stats *out);

/* Whether group g (retaining its halo) may step so with its operations'
 * composite mappings maps[] (indexed as the chain's operations): its
 * steps are its innermost shared loops that step, temporal, and no own
 * loop's; the shared loops around them run over indices every tensor
 * following the rows has (so their iterations start the rows anew, as the
 * first step computing the heads does); each producer's loops below the
 * fusion level tile its first step's rows too (nm_fused_step_map).  Says
 * why not in why. */
int nm_fused_retain_ok(const nm_arch *arch, const nm_chain *c, const nm_fused_group *g,
                       const nm_mapping *maps, char *why, size_t size);

/* Completes the evaluation of fm's groups that retain halos, each
 * operation's stats in out->op (evaluated, every group fitting): adds
 * each producer's first step (fusion_halo.c), and checks that the group
 * fits while it runs, whose tiles at the fusion level are larger.  Returns
 * out->valid.  nm_fused_model_eval calls it; the stats of those first
 * steps stay in fmdl->first_st for nm_fused_group_peak. */
int nm_fused_first_steps(nm_fused_model *fmdl, const nm_fused_map *fm, nm_fused_stats *out);

/* The words group gi of fm needs at level s at its peak: nm_fused_group_need
 * of its steps, and of its first step when it retains its halo (after
 * nm_fused_first_steps). */
uint64_t nm_fused_group_peak(const nm_fused_model *fmdl, const nm_fused_map *fm, int gi,
                             const nm_fused_stats *out, int s);

/* Whether group gi of fm fits at every level, its operations' stats in
 * out->op (evaluated): while one operation runs, a level holds its tiles,
 * the tiles the other operations keep there from one step to the next, and
 * at the fusion level the intermediates waiting for a later consumer; the
 * largest of these must fit.  Sets out's overflow (bad_group, bad_level,
 * need, limit) when not. */
int nm_fused_group_fits(nm_fused_model *fmdl, const nm_fused_map *fm, int gi,
                        nm_fused_stats *out);

/* Whether data space ds's tiles may overlap from one step of index d to
 * the next: an axis holding d also holds other indices that reach as far
 * as d's coefficient or further (a window wider than its stride: a halo).
 * 2*p+w with w < 2 does not; p+r with r of 3 does. */
int nm_fused_halo(const nm_workload *wl, int ds, int d);

/* Whether ops first .. first + nops - 1, as one group, may share a loop over
 * index: every one has it, no producer of an intermediate reduces it, and
 * no intermediate's tiles along it overlap (nm_fused_halo). */
int nm_fused_can_share(const nm_chain *c, int first, int nops, const char *index);

/* The indices ops first .. first + nops - 1 may share as one group
 * (nm_fused_can_share), in the first operation's order, with their bounds:
 * up to max of them into names and bound; returns how many. */
int nm_fused_shareable(const nm_chain *c, int first, int nops, char names[][NM_NAME_MAX],
                       int64_t *bound, int max);

/* Operation i's composite mapping for group g sharing the nsh indices
 * names[] with factors f[] (order[]: indices into names, innermost first,
 * all nsh of them): the shared loops at the backing store, every own loop
 * at the fusion level (temporal, in the problem's order), everything kept
 * at the fusion level and above but the intermediates onchip above it,
 * nothing below it.  Its backing-store traffic is that of any own mapping
 * that keeps every tensor at the fusion level. */
void nm_fused_canonical(const nm_arch *arch, const nm_chain *c, int i, const nm_fused_group *g,
                        char names[][NM_NAME_MAX], int nsh, const int64_t *f,
                        const int8_t *order, uint32_t onchip, nm_mapping *m);

/* An operation of ops first .. first + nops - 1 whose output is read both
 * inside the group and after it (such a group cannot keep it on chip: it
 * must reach the backing store), or -1. */
int nm_fused_leaks(const nm_chain *c, int first, int nops);

/* The data spaces of operation i that are intermediates of the group of
 * ops first .. first + nops - 1 (written and read inside it), as a mask. */
uint32_t nm_fused_onchip(const nm_chain *c, int first, int nops, int i);

/* Adds an operation's stats to a total. */
void nm_fused_sum_add(nm_fused_sum *s, const nm_stats *st);

/* Writes why an evaluation was invalid. */
void nm_fused_describe_invalid(const nm_fused_stats *st, const nm_arch *arch, const nm_chain *c,
                               const nm_fused_map *fm, char *buf, size_t size);

/* ---- causal masks (fusion_causal.c) ---- */

/* How a group steps through a causal mask: whether it skips the steps the
 * mask covers whole, and the steps it computes. */
typedef struct nm_causal_plan {
    int skips;          /* some steps are skipped */
    int64_t mb, nb;     /* steps over the rows and over the keys */
    int64_t bm, bn;     /* rows and keys of a step */
    int64_t q;          /* row steps whose rows see one step of keys */
    int64_t computed;   /* key steps computed over all row steps (of nb x mb) */
} nm_causal_plan;

/* How group g of chain c, its operations mapped as maps[] (composite,
 * indexed as the chain's operations), steps through its masks, into *p:
 * a group sharing no loop over the keys of a mask skips nothing (p->skips
 * 0; returns 1).  One that does skips the steps a mask covers whole when
 * it masks its operations alike, dense, keeps its stepping shared loops at
 * the backing store, temporal, the one over the keys innermost, splits
 * rows and keys exactly, moves each tensor by row or key steps and steps
 * through no index a tensor does not follow; else it computes every step
 * (p->skips 0), and this returns 0 and says which rule in why (NULL: not
 * said). */
int nm_fused_causal_plan(const nm_arch *arch, const nm_chain *c, const nm_fused_group *g,
                         const nm_mapping *maps, nm_causal_plan *p, char *why, size_t size);

/* Counts the masked groups of fm that skip steps (nm_fused_causal_plan;
 * each operation's stats in out->op, evaluated as the full rectangle,
 * every group fitting): each such operation's stats become those of the
 * steps it computes.  Returns out->valid (0 when the model refuses one of
 * the nests counted, as it would not a valid mapping's). */
int nm_fused_causal(nm_fused_model *fmdl, const nm_fused_map *fm, nm_fused_stats *out);

/* ---- the online softmax (fusion_online.c) ---- */

/* Checks chain c's online exponentials (nm_chain_op.online) once linked:
 * each consumer summing one's exponentials over its keys keeps its rows
 * (every other index of the exponentials) in its output; located errors. */
nm_status nm_chain_online_link(const nm_chain *c, nm_error *err);

/* The online exponential whose exponentials operation j sums over their
 * keys (j reads its output, and j's output lacks the keys), or -1; the
 * data space of j they are into *ds when ds is not NULL. */
int nm_chain_rescales(const nm_chain *c, int j, int *ds);

/* Counts what fm's online softmaxes compute besides their points into
 * out->online, each operation's stats in out->op (evaluated, every group
 * fitting, masks and first steps counted), and adds their energy and
 * cycles to those stats. */
void nm_fused_online_count(nm_fused_model *fmdl, const nm_fused_map *fm, nm_fused_stats *out);

/* The same for the operations of group gi of fm alone (the fused search
 * scores one group at a time). */
void nm_fused_online_group(nm_fused_model *fmdl, const nm_fused_map *fm, int gi,
                           nm_fused_stats *out);

/* ---- the search (fusion_search.c) ---- */

struct nm_search_opts;

/* One single-operation search a fused search ran, by what it ran under:
 * the operation, the share of the levels below the fusion level its tiles
 * had (0: the operation alone, on the whole design), its intermediates,
 * and the constraints text pinning the group's shared loops ("" alone).
 * A later search of a design near this one (a sweep's next point) starts
 * each of its searches with the same key from the mapping found here
 * (nm_fused_search_given). */
typedef struct nm_fused_seed {
    int op, share;
    uint32_t onchip;
    char *pins;     /* owned */
    int found;      /* 0, or the mappings in map: the best found and the best of
                     * other shapes (nm_search_result_starts) */
    nm_mapping map[NM_WARM_STARTS];
} nm_fused_seed;

/* Releases n seeds and the array holding them. */
void nm_fused_seeds_free(nm_fused_seed *seeds, int n);

typedef struct nm_fused_result {
    nm_fused_map best, unfused;            /* the best found, and each operation alone */
    /* The chain best maps: the searched one with the halos of best's
     * groups recomputed (nm_fused_group_apply); unfused maps the searched
     * chain itself.  Owned. */
    nm_chain *chain;
    nm_fused_stats *best_st, *unfused_st;  /* their stats; owned */
    int alone;            /* an operation the search found no mapping of alone (then
                           * there is no unfused run), or -1 */
    uint64_t candidates;  /* shared tilings scored */
    int searches;         /* single-operation searches run */
    nm_fused_seed *seeds; /* every single-operation search's key and result, for the
                           * next search's warm starts; owned */
    int nseeds;
    uint64_t evaluated;   /* mappings those searches evaluated */
    double seconds;
} nm_fused_result;

/* Searches chain c's mappings on arch under the design's constraints
 * (constraints, more: as nm_mapspace_init takes them; entries above a
 * fusion level give way to the shared loops there) with the single-Einsum
 * search options o: every operation alone, and, when fuse, every range of
 * consecutive operations fused at the level below the backing store
 * (shared loops at the backing store).  The best by o's first metric over
 * every cut of the chain into groups goes to res->best, the all-unfused
 * one to res->unfused (unless res->alone says an operation had no mapping
 * alone).  Fails when no cut has a valid mapping.  Release with
 * nm_fused_result_fini. */
nm_status nm_fused_search(const nm_arch *arch, const nm_chain *c, const nm_ynode *constraints,
                          const nm_ynode *more, const struct nm_search_opts *o, int fuse,
                          nm_fused_result *res, nm_error *err);

/* As nm_fused_search, with each operation's mapping alone given where
 * alone[i] has levels (its best found elsewhere, as `network --fuse` has
 * each layer's): that operation is not searched alone; and with warm
 * starts from the nwarm seeds warm (a search's of the same chain on a
 * design near this one): each single-operation search with a seed of its
 * key also starts from that seed's mappings, made legal for the design
 * (search.h's warm starts).  alone and warm may be NULL. */
nm_status nm_fused_search_given(const nm_arch *arch, const nm_chain *c,
                                const nm_ynode *constraints, const nm_ynode *more,
                                const struct nm_search_opts *o, int fuse,
                                const nm_mapping *alone, const nm_fused_seed *warm, int nwarm,
                                nm_fused_result *res, nm_error *err);
void nm_fused_result_fini(nm_fused_result *res);

#endif
