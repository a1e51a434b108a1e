/* random.h — the process-wide counter-based random generator (Philox-4x32-10).
 * See Note [Counter-based random numbers] in random.c. */
#ifndef PITH_KERNELS_RANDOM_H
#define PITH_KERNELS_RANDOM_H

#include <stdint.h>

/* One Philox-4x32-10 block: 4 random words from a 128-bit counter and a 64-bit key. */
void philox4x32_10(const uint32_t counter[4], const uint32_t key[2], uint32_t out[4]);


#endif /* PITH_KERNELS_RANDOM_H */
