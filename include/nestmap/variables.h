/* variables.h — timeloopfe's `variables:` and the expressions a design's
 * attributes may hold (`datawidth: DATAWIDTH`, `width: max(DATAWIDTH, 16)`,
 * `depth: 1024 * 2`), resolved in the document before the design is read.
 *
 * As Timeloop's front end does: the top-level `variables:` are evaluated in
 * order (each may use those before it); every attribute (and `spatial:`
 * mesh) of the architecture's nodes that is an expression is replaced by its
 * value, with the component's own attributes, then its enclosing containers'
 * (and subtrees'), then the variables in scope; and the variables become the
 * attributes of the design's top (technology, global_cycle_seconds, ...), which
 * its own top attributes override.  The language is expr.h's.  A lone word
 * that names nothing stays a word (`type: LPDDR4`).
 */
#ifndef NESTMAP_VARIABLES_H
#define NESTMAP_VARIABLES_H

#include "nestmap/error.h"
#include "nestmap/yaml.h"

/* Resolves doc's variables and attribute expressions in place (new nodes
 * located where the expressions were written).  A failing expression is a
 * located error. */
nm_status nm_variables_apply(nm_ydoc *doc, nm_error *err);

#endif
