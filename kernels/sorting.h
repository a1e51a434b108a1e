/* sorting.h — what sort, argsort and topk (kernels/sorting.c) share with the other ops
 * along one dim (kernels/scan.c, kernels/multinomial.c): the ordered keys and the stable
 * sort of (key, index) items. See Note [Sort keys] in sorting.c. */
#ifndef PITH_KERNELS_SORTING_H
#define PITH_KERNELS_SORTING_H

#include <stdbool.h>
#include <stdint.h>

#include "core/tensor.h"

/* One element of a line being sorted: its key and its position along the line. */
typedef struct {
    uint64_t key;
    int64_t index;
} sort_item;

/* The key of a double: ascending keys are ascending values, every NaN is one key above
 * +inf, and -0.0 and 0.0 are one key (they compare equal). */
uint64_t sort_key_of_double(double v);

/* Sorts items[0..n) by key, stably (equal keys keep their order); `scratch` holds n items. */
void sort_items(sort_item *items, int64_t n, sort_item *scratch);

/* Puts the first k items of the stable order of items[0..n) into items[0..k), in that
 * order (the rest are left in any order); `scratch` holds n items. The items' indices must
 * be distinct and, among equal keys, ascending in the array (as when they are loaded in
 * order): then this is sort_items followed by a truncation. */
void sort_items_first(sort_item *items, int64_t n, int64_t k, sort_item *scratch);

#endif /* PITH_KERNELS_SORTING_H */
