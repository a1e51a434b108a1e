/* compile_internal.h — what the rest of pith._C sees of pith.compile, whose files are in
 * compile/ (compile/internal.h is what they share among themselves): the methods of
 * pith._C that pith.compiler calls, and the disarm at module teardown. */
#ifndef PITH_BINDINGS_COMPILE_H
#define PITH_BINDINGS_COMPILE_H

#include "state.h"

extern PyMethodDef compile_module_methods[];
/* The module state `st` goes away: the hook states that use it stop compiling (Note [The
 * frame hook]). */
void compile_disarm(pith_module_state *st);

#endif /* PITH_BINDINGS_COMPILE_H */
