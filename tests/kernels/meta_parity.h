// meta_parity.h — the sample invocations of the meta parity suite (meta_parity_test.cc):
// a small DSL of argument builders, and the table made with it (meta_parity_cases.cc).
#ifndef PITH_TESTS_KERNELS_META_PARITY_H
#define PITH_TESTS_KERNELS_META_PARITY_H

#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "pith/pith.h"

namespace meta_parity {

using Shape = std::vector<int64_t>;

// One argument of a sample invocation; made by the builders of meta_parity_cases.cc
// (T, F, Idx, Mask: tensors; TL: a tensor list, whose None() entries are pushed as NULL;
// I, D, B, None, S, L, DT; Dev: the factory device).
struct Arg {
    enum Kind { TENSOR, TLIST, INT, DOUBLE, BOOL, NONE, STR, ILIST, DTYPE, DEVICE } kind = NONE;
    pith_dtype dtype = PITH_FLOAT32;
    Shape sizes, strides;  // no strides: contiguous
    int64_t base = 1, mod = 5;  // element i holds base + i % mod (bool: nonzero, so true)
    std::vector<Arg> list;
    int64_t i = 0;
    double d = 0;
    bool b = false;
    std::string s;
};

// OK / ERR: the outcome the CPU run must have. ANY: either (dtype sweeps of generated rows);
// each op still needs an actual success and an actual failure (MetaMatchesCpu checks).
// DATA: the result's shape depends on the data (nonzero, a mask index): the CPU run must
// succeed and the meta run must be PITH_ERR_NOT_IMPLEMENTED ("not supported on the meta
// device"), as in PyTorch.
enum Expect { OK, ERR, ANY, DATA };

struct Case {
    std::string op;  // the schema name without the "pith::" namespace
    Expect expect;
    std::vector<Arg> args;
};

// Every sample invocation, in table order.
const std::vector<Case> &all_cases();
// The ops that accept every input (so that no sample of theirs can fail).
const std::set<std::string> &ops_without_error_path();

}  // namespace meta_parity

#endif
