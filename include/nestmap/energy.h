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

/* Applies ERT and ART (either may be NULL) to *arch.  Warns (in doc) about
 * tables that match no component and components left without energies. */
nm_status nm_energy_apply(nm_arch *arch, const nm_ynode *ert, const nm_ynode *art, nm_ydoc *doc,
                          nm_error *err);

/* Human name of an energy source ("ERT", "attributes", "none"). */
const char *nm_energy_source_name(nm_energy_source src);

#endif
