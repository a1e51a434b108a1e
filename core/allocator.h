/* allocator.h — the 64-byte-aligned CPU allocator with its cache of large freed blocks.
 * See Note [Allocator cache] in allocator.c. Storage (storage.c) is its only user. */
#ifndef PITH_CORE_ALLOCATOR_H
#define PITH_CORE_ALLOCATOR_H

#include <stddef.h>

#define PITH_ALIGNMENT 64
/* Blocks of at least this many bytes go through the cache; smaller ones go straight to
 * the system allocator. */
#define PITH_CACHE_MIN_LOG2 16
#define PITH_CACHE_MIN_BLOCK ((size_t)1 << PITH_CACHE_MIN_LOG2) /* 64 KiB */
#define PITH_CACHE_DEFAULT_LIMIT ((size_t)256 << 20)

/* Returns PITH_ALIGNMENT-aligned memory of at least nbytes (> 0), or NULL with
 * PITH_ERR_NOMEM set. Pair with alloc_free(p, nbytes) using the same nbytes. */
void *alloc_bytes(size_t nbytes);
void alloc_free(void *p, size_t nbytes);
/* The bytes a request really occupies (its size class). */
size_t alloc_size_class(size_t nbytes);

#endif /* PITH_CORE_ALLOCATOR_H */
