/* generator.h — random generator states (pith_generator): a Philox key and a counter
 * offset, refcounted, one process-wide default. The numbers themselves are made in
 * kernels/random.c. See Note [Generators] in generator.c. */
#ifndef PITH_CORE_GENERATOR_H
#define PITH_CORE_GENERATOR_H

#include <stdint.h>

#include "pith/pith.h"

/* Reserves `nblocks` consecutive counter blocks of `g` (NULL: the default generator) for
 * one op: *seed gets the key and *first the first block. */
void generator_reserve(pith_generator *g, uint64_t nblocks, uint64_t *seed, uint64_t *first);

#endif /* PITH_CORE_GENERATOR_H */
