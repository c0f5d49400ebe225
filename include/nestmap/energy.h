/* energy.h — per-action energies and areas of the architecture's components.
 *
 * An `ERT:` / `ART:` in the input (Accelergy's energy and area reference
 * tables) sets them exactly; tables are matched to components by name (the
 * path prefix and [a..b] range of Accelergy's names are ignored).  Each action
 * takes the largest energy listed for it, as Timeloop does.
 */
#ifndef NESTMAP_ENERGY_H
#define NESTMAP_ENERGY_H

#include "nestmap/arch.h"
#include "nestmap/yaml.h"

/* Applies ERT and ART (either may be NULL) to *arch; a component of a
 * class that `compound_components:` (cc, may be NULL) defines takes the
 * energies and area its parts sum to (compound.h) where the tables give
 * none; the rest take the built-in estimates.  Warns (in doc) about tables
 * that match no component. */
nm_status nm_energy_apply(nm_arch *arch, const nm_ynode *ert, const nm_ynode *art,
                          const nm_ynode *cc, nm_ydoc *doc, nm_error *err);

/* What the ERT entry for component `name` says it is: 1 compute (mac,
 * compute actions), 0 storage (read/write/update), -2 unclear, -1 no entry. */
int nm_energy_ert_role(const nm_ynode *ert, const char *name);

/* Human name of an energy source ("ERT", "attributes", "none"). */
const char *nm_energy_source_name(nm_energy_source src);

#endif
