/* The per-kind operations table (engine/kinds.h). */
#include "engine/kinds.h"

#include <stddef.h>

static const hy_kind_ops* const table[] = {&hy_kind_cloth, &hy_kind_body, &hy_kind_obstacle, &hy_kind_fem,
                                           &hy_kind_mass_spring};

const hy_kind_ops* hy_kind_ops_of(hy_object_kind kind) {
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
        if (table[i]->kind == kind) return table[i];
    return NULL;
}
