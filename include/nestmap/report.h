/* report.h — the only module that formats results.  Callers pass the stream;
 * the library never chooses one itself. */
#ifndef NESTMAP_REPORT_H
#define NESTMAP_REPORT_H

#include <stdio.h>

#include "nestmap/arch.h"
#include "nestmap/fusion.h"
#include "nestmap/model.h"
#include "nestmap/nest.h"
#include "nestmap/workload.h"

/* Machine-readable stats (the corpus's expected.json fields): levels
 * innermost first, per-instance counts, energies at full precision.  For an
 * invalid mapping: {"valid": false, "reason": ...}.  With m (may be NULL),
 * first "mapping": the mapping in map.yaml's structure, a list of directives. */
void nm_report_json(FILE *f, const nm_arch *arch, const nm_workload *wl, const nm_stats *st,
                    const nm_mapping *m);

/* A chain's fused mapping evaluated (fusion.h): per group and operation,
 * each tensor's home and backing-store traffic, and the totals. */
void nm_report_fused_text(FILE *f, const nm_arch *arch, const nm_chain *c,
                          const nm_fused_map *fm, const nm_fused_stats *st);
/* The same as one JSON object, each operation's full stats inside. */
void nm_report_fused_json(FILE *f, const nm_arch *arch, const nm_chain *c,
                          const nm_fused_map *fm, const nm_fused_stats *st);

/* What `map --json` prints on a chain: {"best", "unfused" (null when an
 * operation has no mapping alone), "search"} (the schema's fused_map), for
 * nm_fused_search's result r under the options o. */
struct nm_search_opts;
void nm_report_fused_search_json(FILE *f, const nm_arch *arch, const nm_chain *c,
                                 const nm_fused_result *r, const struct nm_search_opts *o);

/* Human-readable stats per level and data space, then a summary. */
void nm_report_text(FILE *f, const nm_arch *arch, const nm_workload *wl, const nm_stats *st);

/* Two lines: the roofline's cycle bound and energy bound for wl on arch
 * (roofline.h) and how far the mapping whose stats are st lies above them. */
void nm_report_bound_text(FILE *f, const nm_arch *arch, const nm_workload *wl, const nm_stats *st);
/* The search result's gap: its score over its proven lower bound
 * (nm_search_lower_bound), and where that bound comes from. */
struct nm_search_result;
struct nm_search_opts;
void nm_report_gap_text(FILE *f, const nm_arch *arch, const nm_workload *wl,
                        const struct nm_search_result *res, const struct nm_search_opts *o);

/* The loop nest, outermost level first, as Timeloop's map.txt shows it. */
void nm_report_loopnest(FILE *f, const nm_arch *arch, const nm_workload *wl, const nm_nest *nest,
                        const nm_mapping *m, const nm_stats *st);

/* The mapping as the nested loops of a lecture (Python-like): each level's
 * loops outermost first under a comment naming the level and the tiles it
 * keeps, parallel_for for spatial loops, the composed indices and the
 * statement the arithmetic runs (report_explain.c). */
void nm_report_loops(FILE *f, const nm_arch *arch, const nm_workload *wl, const nm_nest *nest,
                     const nm_mapping *m);

/* The mapping in words.  Invalid (st->invalid): why, and for a capacity
 * overflow the tiles, the excess and the moves of one factor to the level
 * above that make it fit (checked with mdl).  Valid: utilization split into
 * units in use, bandwidth and partial tiles, each fan-out's use, and the
 * largest parts of the energy.  nest is m's nest (nm_model_eval's). */
void nm_report_explain(FILE *f, nm_model *mdl, const nm_mapping *m, const nm_nest *nest,
                       const nm_stats *st);

/* A mapping as Timeloop's `mapping:` list (every level: temporal, spatial
 * when it has a fan-out, and bypass), which nestmap model and Timeloop's
 * timeloop-model both read. */
void nm_report_mapping_yaml(FILE *f, const nm_arch *arch, const nm_workload *wl,
                            const nm_mapping *m);

/* The directives of mapping m's levels lo..hi alone, outermost first, each
 * line after indent; keep/bypass too unless no_bypass (a fused mapping's
 * parts: nm_report_fused_yaml). */
void nm_report_mapping_levels_yaml(FILE *f, const nm_arch *arch, const nm_workload *wl,
                                   const nm_mapping *m, int lo, int hi, int no_bypass,
                                   const char *indent);

/* A chain as `problem: {name, chain, bounds}`, each operation's einsum
 * with its roles and other names of its indices, which nm_chain_parse
 * reads back to the same operations (data spaces and indices in the
 * einsum's order). */
void nm_report_chain_yaml(FILE *f, const nm_chain *c);

/* A chain's fused mapping as `mapping: {fused: ...}`, which nestmap model
 * reads back. */
void nm_report_fused_yaml(FILE *f, const nm_arch *arch, const nm_chain *c,
                          const nm_fused_map *fm);

struct nm_search_result;
struct nm_search_opts;

/* The best mapping's stats as nm_report_json, plus a "search" object:
 * proposed, valid, invalid by reason, evaluations per second, wall seconds,
 * proven_optimal. */
void nm_report_search_json(FILE *f, const nm_arch *arch, const nm_workload *wl,
                           const struct nm_search_result *res, const struct nm_search_opts *o);

/* One line per search outcome: what ended it, counts, rate; for an
 * optimal search that stopped early, the gap its best is proven within
 * (the larger of its own bound and the roofline's, as the Gap line). */
void nm_report_search_text(FILE *f, const nm_arch *arch, const nm_workload *wl,
                           const struct nm_search_result *res, const struct nm_search_opts *o);

/* The Pareto front (which = 0) or the top-K (which = 1) as CSV. */
void nm_report_found_csv(FILE *f, const struct nm_search_result *res,
                         const struct nm_search_opts *o, int which);

/* The per-action energy and area table in use, with the source of each
 * number: as text (format 0), JSON (1), or an ERT/ART in Timeloop's v0.4
 * table form (2) that nestmap and Timeloop both read. */
void nm_report_energy(FILE *f, const nm_arch *arch, int format);

/* The energies and areas in use as an ERT / an ART in Timeloop's v0.4
 * form (what --ert prints, one table each): read back beside the design,
 * they give the same numbers. */
void nm_report_ert(FILE *f, const nm_arch *arch);
void nm_report_art(FILE *f, const nm_arch *arch);

/* A valid mapping's stats in the layout of Timeloop's
 * timeloop-model.stats.txt (report_timeloop.c). */
void nm_report_timeloop_stats(FILE *f, const nm_arch *arch, const nm_workload *wl,
                              const nm_stats *st);

/* The evaluated input as one file timeloop-model reads (timeloop-input.yaml):
 * the design flattened to Timeloop's core form (a class Timeloop would not
 * sort as storage written as `storage` with its class as subclass), the
 * problem in shape + instance form, the mapping, and the ERT and ART in
 * use (report_timeloop.c). */
void nm_report_timeloop_input(FILE *f, const nm_arch *arch, const nm_workload *wl,
                              const nm_mapping *m);

/* The energies of `given` (as loaded, with the input's ERT) beside those of
 * `builtin` (the same design, built-in estimates only), per component and
 * action, with their ratio and how many lie within 1.5x; text or JSON. */
void nm_report_energy_compare(FILE *f, const nm_arch *given, const nm_arch *builtin, int json);

struct nm_network;
struct nm_layer_result;

/* A network's results (nm_network_map): per layer and in total, energy per
 * MAC by level.  Text (format 0), JSON (1) or CSV, one row per layer (2). */
void nm_report_network(FILE *f, const nm_arch *arch, const struct nm_network *net,
                       const struct nm_layer_result *out, const struct nm_search_opts *o,
                       int format);

/* The same, with the runs `network --fuse` searched (nm_network_fuse; fu
 * may be NULL): after the layers, each run fused or not against its layers
 * one by one, the layers not fused and why, and the network's totals both
 * ways (text), or the object "fusion" (JSON).  CSV has no fusion part. */
struct nm_network_fusion;
void nm_report_network_fused(FILE *f, const nm_arch *arch, const struct nm_network *net,
                             const struct nm_layer_result *out,
                             const struct nm_network_fusion *fu,
                             const struct nm_search_opts *o, int format);
/* The fusion part alone (report_fused.c), as text or JSON (a member
 * "fusion" of the network object, with its leading comma); the fused
 * network's gap on o's first metric. */
void nm_report_network_fusion(FILE *f, const nm_arch *arch, const struct nm_network *net,
                              const struct nm_layer_result *out,
                              const struct nm_network_fusion *fu,
                              const struct nm_search_opts *o, int json);

/* Why a layer of nm_network_map has no mapping, in a few words: its error,
 * or the candidates tried and the commonest reason they failed (and where). */
void nm_report_layer_failure(char *buf, size_t size, const nm_arch *arch,
                             const struct nm_layer_result *lr);

/* Whether a search found nothing because its candidates failed mostly for
 * the capacity of the outermost level, which is not DRAM (no search can
 * help); then, in buf (when not NULL), a note starting "; " that this level
 * is the backing store and must hold whole tensors, else "". */
#define NM_REPORT_NOTE_MAX (2 * NM_NAME_MAX + 160)
int nm_report_backing_note(char *buf, size_t size, const nm_arch *arch,
                           const struct nm_search_result *r);

/* Writes a CSV field, quoted (RFC 4180) when it holds a comma, quote or
 * line break. */
void nm_report_csv_field(FILE *f, const char *s);

/* Writes a JSON string literal (quotes and escapes). */
void nm_report_json_string(FILE *f, const char *s);

#endif
