/* op_table.h — every built-in operator, declared once.
 *
 * Note [One op table]
 * This file is the single list of built-in ops. Each row is
 *     _(id, "schema", KIND, (TYPE, arg), (TYPE, arg), ...)
 * and from it the preprocessor makes: the op ids (PITH_OPID_<id>), the typed signatures and
 * the typed call/redispatch functions pith_call_<id> and pith_redispatch_<id>
 * (dispatch/op_macros.h), the boxed adapters, and the registration of the kernels
 * <id>_cpu, <id>_meta or <id>_composite into the registry (kernels/op_register.c).
 * Registration checks each argument list against its schema, so they cannot drift apart.
 * Python's methods and functions come from the registry and from the Python surface at
 * the end of this file (See Note [The Python surface of the op table]).
 *
 * Generated code is found by grep (the kernels are ordinary functions named add_cpu,
 * add_meta, ...), and `python3 scripts/expand_op.py add` prints the rows of an op and
 * what the preprocessor makes of them.
 *
 * KIND is BACKEND (kernels <id>_cpu and <id>_meta) or COMPOSITE (one <id>_composite that
 * calls other ops, registered for CPU and Meta). See dispatch/op_macros.h.
 *
 * A bare name ("add") resolves to the overload with an empty name, or else to the first
 * overload of that name in this table: list the default first.
 *
 * The unary and binary elementwise ops are listed by name in the public header
 * (PITH_FORALL_UNARY_OPS / PITH_FORALL_BINARY_OPS, pith/ops.h); their rows here come from
 * that list, with the per-op facts in PITH_BINARY_INFO_<name>. */
#ifndef PITH_KERNELS_OP_TABLE_H
#define PITH_KERNELS_OP_TABLE_H

#include "pith/ops.h"

/* Per binary op: the functional, out and in-place schema names, and whether it takes
 * `alpha`. */
#define PITH_BINARY_INFO_add(M, n) M(n, "add.Tensor", "add.out", "add_.Tensor", ALPHA)
#define PITH_BINARY_INFO_sub(M, n) M(n, "sub.Tensor", "sub.out", "sub_.Tensor", ALPHA)
#define PITH_BINARY_INFO_mul(M, n) M(n, "mul.Tensor", "mul.out", "mul_.Tensor", PLAIN)
#define PITH_BINARY_INFO_div(M, n) M(n, "div.Tensor", "div.out", "div_.Tensor", PLAIN)
#define PITH_BINARY_INFO_floor_divide(M, n)                                                 \
    M(n, "floor_divide", "floor_divide.out", "floor_divide_.Tensor", PLAIN)
#define PITH_BINARY_INFO_remainder(M, n)                                                    \
    M(n, "remainder.Tensor", "remainder.Tensor_out", "remainder_.Tensor", PLAIN)
#define PITH_BINARY_INFO_pow(M, n)                                                          \
    M(n, "pow.Tensor_Tensor", "pow.Tensor_Tensor_out", "pow_.Tensor", PLAIN)
#define PITH_BINARY_INFO_maximum(M, n) M(n, "maximum", "maximum.out", "maximum_", PLAIN)
#define PITH_BINARY_INFO_minimum(M, n) M(n, "minimum", "minimum.out", "minimum_", PLAIN)
#define PITH_BINARY_INFO_eq(M, n) M(n, "eq.Tensor", "eq.Tensor_out", "eq_.Tensor", PLAIN)
#define PITH_BINARY_INFO_ne(M, n) M(n, "ne.Tensor", "ne.Tensor_out", "ne_.Tensor", PLAIN)
#define PITH_BINARY_INFO_lt(M, n) M(n, "lt.Tensor", "lt.Tensor_out", "lt_.Tensor", PLAIN)
#define PITH_BINARY_INFO_le(M, n) M(n, "le.Tensor", "le.Tensor_out", "le_.Tensor", PLAIN)
#define PITH_BINARY_INFO_gt(M, n) M(n, "gt.Tensor", "gt.Tensor_out", "gt_.Tensor", PLAIN)
#define PITH_BINARY_INFO_ge(M, n) M(n, "ge.Tensor", "ge.Tensor_out", "ge_.Tensor", PLAIN)
#define PITH_BINARY_INFO_logical_and(M, n)                                                  \
    M(n, "logical_and", "logical_and.out", "logical_and_", PLAIN)
#define PITH_BINARY_INFO_logical_or(M, n)                                                   \
    M(n, "logical_or", "logical_or.out", "logical_or_", PLAIN)
#define PITH_BINARY_INFO_bitwise_and(M, n)                                                  \
    M(n, "bitwise_and.Tensor", "bitwise_and.Tensor_out", "bitwise_and_.Tensor", PLAIN)
#define PITH_BINARY_INFO_bitwise_or(M, n)                                                   \
    M(n, "bitwise_or.Tensor", "bitwise_or.Tensor_out", "bitwise_or_.Tensor", PLAIN)
#define PITH_BINARY_INFO_bitwise_xor(M, n)                                                  \
    M(n, "bitwise_xor.Tensor", "bitwise_xor.Tensor_out", "bitwise_xor_.Tensor", PLAIN)

#define PITH_BINARY_SCHEMA_TAIL_ALPHA ", *, Scalar alpha=1"
#define PITH_BINARY_SCHEMA_OUT_ALPHA ", *, Scalar alpha=1, Tensor(a!) out"
#define PITH_BINARY_SCHEMA_TAIL_PLAIN ""
#define PITH_BINARY_SCHEMA_OUT_PLAIN ", *, Tensor(a!) out"
#define PITH_BINARY_ARGS_ALPHA , (SCALAR, alpha)
#define PITH_BINARY_ARGS_PLAIN

/* The three rows of one binary op: <name>, <name>_out, <name>_ (in place). The macro
 * parameters end in "_" so that they cannot capture argument names such as `out`. */
#define PITH_BINARY_ROWS_(r_, n_, fn_, out_, inplace_, extra_)                              \
    PITH_BINARY_ROWS_EXPAND_(r_, n_, fn_, out_, inplace_, extra_, PITH_BINARY_ARGS_##extra_)
#define PITH_BINARY_ROWS_EXPAND_(r_, n_, fn_, out_, inplace_, extra_, ...)                  \
    r_(n_, fn_ "(Tensor self, Tensor other" PITH_BINARY_SCHEMA_TAIL_##extra_ ") -> Tensor", \
       BACKEND, (TENSOR, self), (TENSOR, other) __VA_ARGS__)                                \
    r_(n_##_out,                                                                            \
       out_ "(Tensor self, Tensor other" PITH_BINARY_SCHEMA_OUT_##extra_ ") -> Tensor(a!)", \
       BACKEND, (TENSOR, self), (TENSOR, other) __VA_ARGS__, (TENSOR, out))                 \
    r_(n_##_, inplace_ "(Tensor(a!) self, Tensor other" PITH_BINARY_SCHEMA_TAIL_##extra_    \
                       ") -> Tensor(a!)",                                                   \
       BACKEND, (TENSOR, self), (TENSOR, other) __VA_ARGS__)

/* The three rows of one unary op: <name>, <name>_out, <name>_ (in place). */
#define PITH_UNARY_ROWS_(r_, n_)                                                            \
    r_(n_, #n_ "(Tensor self) -> Tensor", BACKEND, (TENSOR, self))                          \
    r_(n_##_out, #n_ ".out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)", BACKEND,         \
       (TENSOR, self), (TENSOR, out))                                                       \
    r_(n_##_, #n_ "_(Tensor(a!) self) -> Tensor(a!)", BACKEND, (TENSOR, self))

#define PITH_FACTORY_KW "*, ScalarType? dtype=None, Device? device=None) -> Tensor"
#define PITH_FACTORY_ARGS (OPT_DTYPE, dtype), (OPT_DEVICE, device)
/* Random factories take a generator first (NULL: the default; See Note [Generators]). */
#define PITH_RANDOM_KW "*, Generator? generator=None, ScalarType? dtype=None, Device? device=None) -> Tensor"
#define PITH_RANDOM_ARGS (OPT_GENERATOR, generator), (OPT_DTYPE, dtype), (OPT_DEVICE, device)

#define PITH_FORALL_OPS(_)                                                                  \
    PITH_FORALL_OPS_ELEMENTWISE_(_)                                                         \
    PITH_FORALL_OPS_REDUCTIONS_(_)                                                          \
    PITH_FORALL_OPS_LINALG_(_)                                                              \
    PITH_FORALL_OPS_VIEWS_(_)                                                               \
    PITH_FORALL_OPS_COPYING_(_)                                                             \
    PITH_FORALL_OPS_ADVANCED_INDEXING_(_)                                                   \
    PITH_FORALL_OPS_NORMALISATION_(_)                                                       \
    PITH_FORALL_OPS_FACTORIES_(_)                                                           \
    PITH_FORALL_OPS_SORTING_(_)                                                             \
    PITH_FORALL_OPS_SHAPE_(_)

/* ---- elementwise (kernels/elementwise*.c) ---- */
#define PITH_UNARY_ROWS_FOR_(n_) PITH_UNARY_ROWS_(PITH_ROW_, n_)
#define PITH_BINARY_ROWS_FOR_(n_) PITH_BINARY_INFO_##n_(PITH_BINARY_ROWS_CALL_, n_)
#define PITH_BINARY_ROWS_CALL_(n_, fn_, out_, inplace_, extra_)                             \
    PITH_BINARY_ROWS_(PITH_ROW_, n_, fn_, out_, inplace_, extra_)

/* The row macro must be named PITH_ROW_ while a table is expanded: the sub-lists above
 * refer to it (the preprocessor cannot pass a macro through PITH_FORALL_UNARY_OPS). */
#define PITH_FORALL_OPS_ELEMENTWISE_(_)                                                     \
    PITH_FORALL_UNARY_OPS(PITH_UNARY_ROWS_FOR_)                                             \
    PITH_FORALL_BINARY_OPS(PITH_BINARY_ROWS_FOR_)                                           \
    _(gelu, "gelu(Tensor self, *, str approximate='none') -> Tensor", BACKEND,              \
      (TENSOR, self), (STR, approximate))                                                   \
    _(gelu_out, "gelu.out(Tensor self, *, str approximate='none', Tensor(a!) out) -> Tensor(a!)", \
      BACKEND, (TENSOR, self), (STR, approximate), (TENSOR, out))                           \
    _(gelu_, "gelu_(Tensor(a!) self, *, str approximate='none') -> Tensor(a!)", BACKEND,    \
      (TENSOR, self), (STR, approximate))                                                   \
    _(clamp, "clamp(Tensor self, Scalar? min=None, Scalar? max=None) -> Tensor", BACKEND,   \
      (TENSOR, self), (OPT_SCALAR, min), (OPT_SCALAR, max))                                 \
    _(clamp_, "clamp_(Tensor(a!) self, Scalar? min=None, Scalar? max=None) -> Tensor(a!)",  \
      BACKEND, (TENSOR, self), (OPT_SCALAR, min), (OPT_SCALAR, max))                        \
    _(isnan, "isnan(Tensor self) -> Tensor", BACKEND, (TENSOR, self))                       \
    _(isinf, "isinf(Tensor self) -> Tensor", BACKEND, (TENSOR, self))                       \
    _(isposinf, "isposinf(Tensor self) -> Tensor", BACKEND, (TENSOR, self))                 \
    _(isneginf, "isneginf(Tensor self) -> Tensor", BACKEND, (TENSOR, self))                 \
    _(isfinite, "isfinite(Tensor self) -> Tensor", BACKEND, (TENSOR, self))                 \
    _(where, "where.self(Tensor condition, Tensor self, Tensor other) -> Tensor", BACKEND,  \
      (TENSOR, condition), (TENSOR, self), (TENSOR, other))                                 \
    _(copy_, "copy_(Tensor(a!) self, Tensor src, bool non_blocking=False) -> Tensor(a!)",   \
      BACKEND, (TENSOR, self), (TENSOR, src), (BOOL, non_blocking))                         \
    _(to_dtype,                                                                             \
      "to.dtype(Tensor self, ScalarType dtype, bool non_blocking=False, bool copy=False) -> Tensor", \
      COMPOSITE, (TENSOR, self), (DTYPE, dtype), (BOOL, non_blocking), (BOOL, copy))        \
    _(clone, "clone(Tensor self) -> Tensor", COMPOSITE, (TENSOR, self))                     \
    _(contiguous, "contiguous(Tensor(a) self) -> Tensor(a)", COMPOSITE, (TENSOR, self))

/* ---- reductions (kernels/reduce*.c) ---- */
#define PITH_REDUCE_DIMS_ "(Tensor self, int[1]? dim=None, bool keepdim=False"
#define PITH_FORALL_OPS_REDUCTIONS_(_)                                                      \
    _(sum, "sum.dim_IntList" PITH_REDUCE_DIMS_ ", *, ScalarType? dtype=None) -> Tensor",    \
      BACKEND, (TENSOR, self), (OPT_INT_LIST, dim), (BOOL, keepdim), (OPT_DTYPE, dtype))    \
    _(sum_out, "sum.IntList_out" PITH_REDUCE_DIMS_                                          \
      ", *, ScalarType? dtype=None, Tensor(a!) out) -> Tensor(a!)", BACKEND,               \
      (TENSOR, self), (OPT_INT_LIST, dim), (BOOL, keepdim), (OPT_DTYPE, dtype), (TENSOR, out)) \
    _(mean, "mean.dim" PITH_REDUCE_DIMS_ ", *, ScalarType? dtype=None) -> Tensor", BACKEND, \
      (TENSOR, self), (OPT_INT_LIST, dim), (BOOL, keepdim), (OPT_DTYPE, dtype))             \
    _(mean_out, "mean.out" PITH_REDUCE_DIMS_                                                \
      ", *, ScalarType? dtype=None, Tensor(a!) out) -> Tensor(a!)", BACKEND,               \
      (TENSOR, self), (OPT_INT_LIST, dim), (BOOL, keepdim), (OPT_DTYPE, dtype), (TENSOR, out)) \
    _(prod, "prod.dim_IntList" PITH_REDUCE_DIMS_ ", *, ScalarType? dtype=None) -> Tensor",  \
      BACKEND, (TENSOR, self), (OPT_INT_LIST, dim), (BOOL, keepdim), (OPT_DTYPE, dtype))    \
    _(amax, "amax(Tensor self, int[1] dim=[], bool keepdim=False) -> Tensor", BACKEND,       \
      (TENSOR, self), (INT_LIST, dim), (BOOL, keepdim))                                     \
    _(amax_out,                                                                             \
      "amax.out(Tensor self, int[1] dim=[], bool keepdim=False, *, Tensor(a!) out) -> Tensor(a!)", \
      BACKEND, (TENSOR, self), (INT_LIST, dim), (BOOL, keepdim), (TENSOR, out))            \
    _(amin, "amin(Tensor self, int[1] dim=[], bool keepdim=False) -> Tensor", BACKEND,       \
      (TENSOR, self), (INT_LIST, dim), (BOOL, keepdim))                                     \
    _(amin_out,                                                                             \
      "amin.out(Tensor self, int[1] dim=[], bool keepdim=False, *, Tensor(a!) out) -> Tensor(a!)", \
      BACKEND, (TENSOR, self), (INT_LIST, dim), (BOOL, keepdim), (TENSOR, out))            \
    _(max, "max(Tensor self) -> Tensor", BACKEND, (TENSOR, self))                           \
    _(max_other, "max.other(Tensor self, Tensor other) -> Tensor", COMPOSITE, (TENSOR, self), \
      (TENSOR, other))                                                                      \
    _(max_dim,                                                                              \
      "max.dim(Tensor self, int dim, bool keepdim=False) -> (Tensor values, Tensor indices)", \
      BACKEND, (TENSOR, self), (INT, dim), (BOOL, keepdim))                                 \
    _(min, "min(Tensor self) -> Tensor", BACKEND, (TENSOR, self))                           \
    _(min_other, "min.other(Tensor self, Tensor other) -> Tensor", COMPOSITE, (TENSOR, self), \
      (TENSOR, other))                                                                      \
    _(min_dim,                                                                              \
      "min.dim(Tensor self, int dim, bool keepdim=False) -> (Tensor values, Tensor indices)", \
      BACKEND, (TENSOR, self), (INT, dim), (BOOL, keepdim))                                 \
    _(argmax, "argmax(Tensor self, int? dim=None, bool keepdim=False) -> Tensor", BACKEND,  \
      (TENSOR, self), (OPT_INT, dim), (BOOL, keepdim))                                      \
    _(argmax_out,                                                                           \
      "argmax.out(Tensor self, int? dim=None, bool keepdim=False, *, Tensor(a!) out) -> Tensor(a!)", \
      BACKEND, (TENSOR, self), (OPT_INT, dim), (BOOL, keepdim), (TENSOR, out))             \
    _(argmin, "argmin(Tensor self, int? dim=None, bool keepdim=False) -> Tensor", BACKEND,  \
      (TENSOR, self), (OPT_INT, dim), (BOOL, keepdim))                                      \
    _(argmin_out,                                                                           \
      "argmin.out(Tensor self, int? dim=None, bool keepdim=False, *, Tensor(a!) out) -> Tensor(a!)", \
      BACKEND, (TENSOR, self), (OPT_INT, dim), (BOOL, keepdim), (TENSOR, out))             \
    _(var_unbiased, "var(Tensor self, bool unbiased=True) -> Tensor", COMPOSITE,            \
      (TENSOR, self), (BOOL, unbiased))                                                     \
    _(var_dim, "var.dim(Tensor self, int[1]? dim, bool unbiased=True, bool keepdim=False) -> Tensor", \
      COMPOSITE, (TENSOR, self), (OPT_INT_LIST, dim), (BOOL, unbiased), (BOOL, keepdim))    \
    _(var, "var.correction" PITH_REDUCE_DIMS_ ", *, Scalar? correction=None) -> Tensor",    \
      BACKEND, (TENSOR, self), (OPT_INT_LIST, dim), (BOOL, keepdim), (OPT_SCALAR, correction)) \
    _(std_unbiased, "std(Tensor self, bool unbiased=True) -> Tensor", COMPOSITE,            \
      (TENSOR, self), (BOOL, unbiased))                                                     \
    _(std_dim, "std.dim(Tensor self, int[1]? dim, bool unbiased=True, bool keepdim=False) -> Tensor", \
      COMPOSITE, (TENSOR, self), (OPT_INT_LIST, dim), (BOOL, unbiased), (BOOL, keepdim))    \
    _(std, "std.correction" PITH_REDUCE_DIMS_ ", *, Scalar? correction=None) -> Tensor",    \
      BACKEND, (TENSOR, self), (OPT_INT_LIST, dim), (BOOL, keepdim), (OPT_SCALAR, correction)) \
    _(all, "all.dims" PITH_REDUCE_DIMS_ ") -> Tensor", BACKEND, (TENSOR, self),             \
      (OPT_INT_LIST, dim), (BOOL, keepdim))                                                 \
    _(any, "any.dims" PITH_REDUCE_DIMS_ ") -> Tensor", BACKEND, (TENSOR, self),             \
      (OPT_INT_LIST, dim), (BOOL, keepdim))

/* ---- linear algebra (kernels/linalg.c) ---- */
#define PITH_FORALL_OPS_LINALG_(_)                                                          \
    _(matmul, "matmul(Tensor self, Tensor other) -> Tensor", BACKEND, (TENSOR, self),       \
      (TENSOR, other))                                                                      \
    _(matmul_out, "matmul.out(Tensor self, Tensor other, *, Tensor(a!) out) -> Tensor(a!)", \
      BACKEND, (TENSOR, self), (TENSOR, other), (TENSOR, out))                              \
    _(mm, "mm(Tensor self, Tensor mat2) -> Tensor", BACKEND, (TENSOR, self), (TENSOR, mat2)) \
    _(mm_out, "mm.out(Tensor self, Tensor mat2, *, Tensor(a!) out) -> Tensor(a!)",          \
      BACKEND, (TENSOR, self), (TENSOR, mat2), (TENSOR, out))                               \
    _(bmm, "bmm(Tensor self, Tensor mat2) -> Tensor", BACKEND, (TENSOR, self),              \
      (TENSOR, mat2))                                                                       \
    _(bmm_out, "bmm.out(Tensor self, Tensor mat2, *, Tensor(a!) out) -> Tensor(a!)",        \
      BACKEND, (TENSOR, self), (TENSOR, mat2), (TENSOR, out))                               \
    _(addmm,                                                                                \
      "addmm(Tensor self, Tensor mat1, Tensor mat2, *, Scalar beta=1, Scalar alpha=1) -> Tensor", \
      BACKEND, (TENSOR, self), (TENSOR, mat1), (TENSOR, mat2), (SCALAR, beta),              \
      (SCALAR, alpha))                                                                      \
    _(addmm_out,                                                                            \
      "addmm.out(Tensor self, Tensor mat1, Tensor mat2, *, Scalar beta=1, Scalar alpha=1, Tensor(a!) out) -> Tensor(a!)", \
      BACKEND, (TENSOR, self), (TENSOR, mat1), (TENSOR, mat2), (SCALAR, beta),              \
      (SCALAR, alpha), (TENSOR, out))                                                       \
    _(linear, "linear(Tensor input, Tensor weight, Tensor? bias=None) -> Tensor", BACKEND,  \
      (TENSOR, input), (TENSOR, weight), (OPT_TENSOR, bias))                                \
    _(linear_out,                                                                           \
      "linear.out(Tensor input, Tensor weight, Tensor? bias=None, *, Tensor(a!) out) -> Tensor(a!)", \
      BACKEND, (TENSOR, input), (TENSOR, weight), (OPT_TENSOR, bias), (TENSOR, out))

/* ---- views (kernels/views.c); they work for every backend ---- */
#define PITH_FORALL_OPS_VIEWS_(_)                                                           \
    _(view, "view(Tensor(a) self, int[] size) -> Tensor(a)", COMPOSITE, (TENSOR, self),     \
      (INT_LIST, size))                                                                     \
    _(reshape, "reshape(Tensor(a) self, int[] shape) -> Tensor(a)", COMPOSITE,              \
      (TENSOR, self), (INT_LIST, shape))                                                    \
    _(permute, "permute(Tensor(a) self, int[] dims) -> Tensor(a)", COMPOSITE,               \
      (TENSOR, self), (INT_LIST, dims))                                                     \
    _(transpose, "transpose.int(Tensor(a) self, int dim0, int dim1) -> Tensor(a)",          \
      COMPOSITE, (TENSOR, self), (INT, dim0), (INT, dim1))                                  \
    _(t, "t(Tensor(a) self) -> Tensor(a)", COMPOSITE, (TENSOR, self))                       \
    _(expand, "expand(Tensor(a) self, int[] size, *, bool implicit=False) -> Tensor(a)",    \
      COMPOSITE, (TENSOR, self), (INT_LIST, size), (BOOL, implicit))                        \
    _(broadcast_to, "broadcast_to(Tensor(a) self, int[] size) -> Tensor(a)", COMPOSITE,     \
      (TENSOR, self), (INT_LIST, size))                                                     \
    _(expand_as, "expand_as(Tensor(a) self, Tensor other) -> Tensor(a)", COMPOSITE,         \
      (TENSOR, self), (TENSOR, other))                                                      \
    _(broadcast_tensors, "broadcast_tensors(Tensor[] tensors) -> Tensor[]", COMPOSITE,      \
      (TENSOR_LIST, tensors))                                                               \
    _(as_strided,                                                                           \
      "as_strided(Tensor(a) self, int[] size, int[] stride, int? storage_offset=None) -> Tensor(a)", \
      COMPOSITE, (TENSOR, self), (INT_LIST, size), (INT_LIST, stride),                      \
      (OPT_INT, storage_offset))                                                            \
    _(squeeze, "squeeze(Tensor(a) self) -> Tensor(a)", COMPOSITE, (TENSOR, self))           \
    _(squeeze_dim, "squeeze.dim(Tensor(a) self, int dim) -> Tensor(a)", COMPOSITE,          \
      (TENSOR, self), (INT, dim))                                                           \
    _(unsqueeze, "unsqueeze(Tensor(a) self, int dim) -> Tensor(a)", COMPOSITE,              \
      (TENSOR, self), (INT, dim))                                                           \
    _(flatten, "flatten.using_ints(Tensor(a) self, int start_dim=0, int end_dim=-1) -> Tensor(a)", \
      COMPOSITE, (TENSOR, self), (INT, start_dim), (INT, end_dim))                          \
    _(slice,                                                                                \
      "slice.Tensor(Tensor(a) self, int dim=0, int? start=None, int? end=None, int step=1) -> Tensor(a)", \
      COMPOSITE, (TENSOR, self), (INT, dim), (OPT_INT, start), (OPT_INT, end), (INT, step)) \
    _(select, "select.int(Tensor(a) self, int dim, int index) -> Tensor(a)", COMPOSITE,     \
      (TENSOR, self), (INT, dim), (INT, index))                                             \
    _(narrow, "narrow(Tensor(a) self, int dim, int start, int length) -> Tensor(a)",        \
      COMPOSITE, (TENSOR, self), (INT, dim), (INT, start), (INT, length))                   \
    _(split, "split.Tensor(Tensor(a) self, int split_size, int dim=0) -> Tensor[]",         \
      COMPOSITE, (TENSOR, self), (INT, split_size), (INT, dim))                             \
    _(split_sizes, "split.sizes(Tensor(a) self, int[] split_size, int dim=0) -> Tensor[]",  \
      COMPOSITE, (TENSOR, self), (INT_LIST, split_size), (INT, dim))                        \
    _(split_with_sizes,                                                                     \
      "split_with_sizes(Tensor(a) self, int[] split_sizes, int dim=0) -> Tensor[]",         \
      COMPOSITE, (TENSOR, self), (INT_LIST, split_sizes), (INT, dim))                       \
    _(chunk, "chunk(Tensor(a) self, int chunks, int dim=0) -> Tensor[]", COMPOSITE,         \
      (TENSOR, self), (INT, chunks), (INT, dim))                                            \
    _(unbind, "unbind.int(Tensor(a) self, int dim=0) -> Tensor[]", COMPOSITE,               \
      (TENSOR, self), (INT, dim))                                                           \
    _(alias, "alias(Tensor(a) self) -> Tensor(a)", COMPOSITE, (TENSOR, self))               \
    _(detach, "detach(Tensor(a) self) -> Tensor(a)", COMPOSITE, (TENSOR, self))

/* ---- copying and combining (kernels/combine.c, kernels/indexing.c) ---- */
#define PITH_FORALL_OPS_COPYING_(_)                                                         \
    _(cat, "cat(Tensor[] tensors, int dim=0) -> Tensor", BACKEND, (TENSOR_LIST, tensors),   \
      (INT, dim))                                                                           \
    _(cat_out, "cat.out(Tensor[] tensors, int dim=0, *, Tensor(a!) out) -> Tensor(a!)",     \
      BACKEND, (TENSOR_LIST, tensors), (INT, dim), (TENSOR, out))                           \
    _(stack, "stack(Tensor[] tensors, int dim=0) -> Tensor", COMPOSITE,                     \
      (TENSOR_LIST, tensors), (INT, dim))                                                   \
    _(stack_out, "stack.out(Tensor[] tensors, int dim=0, *, Tensor(a!) out) -> Tensor(a!)", \
      COMPOSITE, (TENSOR_LIST, tensors), (INT, dim), (TENSOR, out))                         \
    _(index_select, "index_select(Tensor self, int dim, Tensor index) -> Tensor", BACKEND,  \
      (TENSOR, self), (INT, dim), (TENSOR, index))                                          \
    _(index_select_out,                                                                     \
      "index_select.out(Tensor self, int dim, Tensor index, *, Tensor(a!) out) -> Tensor(a!)", \
      BACKEND, (TENSOR, self), (INT, dim), (TENSOR, index), (TENSOR, out))                  \
    _(gather, "gather(Tensor self, int dim, Tensor index, *, bool sparse_grad=False) -> Tensor", \
      BACKEND, (TENSOR, self), (INT, dim), (TENSOR, index), (BOOL, sparse_grad))            \
    _(gather_out,                                                                           \
      "gather.out(Tensor self, int dim, Tensor index, *, bool sparse_grad=False, Tensor(a!) out) -> Tensor(a!)", \
      BACKEND, (TENSOR, self), (INT, dim), (TENSOR, index), (BOOL, sparse_grad),            \
      (TENSOR, out))                                                                        \
    _(masked_fill, "masked_fill.Scalar(Tensor self, Tensor mask, Scalar value) -> Tensor",  \
      BACKEND, (TENSOR, self), (TENSOR, mask), (SCALAR, value))                             \
    _(masked_fill_,                                                                         \
      "masked_fill_.Scalar(Tensor(a!) self, Tensor mask, Scalar value) -> Tensor(a!)",      \
      BACKEND, (TENSOR, self), (TENSOR, mask), (SCALAR, value))                             \
    _(tril, "tril(Tensor self, int diagonal=0) -> Tensor", BACKEND, (TENSOR, self),         \
      (INT, diagonal))                                                                      \
    _(triu, "triu(Tensor self, int diagonal=0) -> Tensor", BACKEND, (TENSOR, self),         \
      (INT, diagonal))                                                                      \
    _(tril_, "tril_(Tensor(a!) self, int diagonal=0) -> Tensor(a!)", BACKEND,               \
      (TENSOR, self), (INT, diagonal))                                                      \
    _(triu_, "triu_(Tensor(a!) self, int diagonal=0) -> Tensor(a!)", BACKEND,               \
      (TENSOR, self), (INT, diagonal))                                                      \
    _(embedding,                                                                            \
      "embedding(Tensor weight, Tensor indices, int padding_idx=-1, bool scale_grad_by_freq=False, bool sparse=False) -> Tensor", \
      BACKEND, (TENSOR, weight), (TENSOR, indices), (INT, padding_idx),                     \
      (BOOL, scale_grad_by_freq), (BOOL, sparse))                                           \
    _(embedding_out,                                                                        \
      "embedding.out(Tensor weight, Tensor indices, int padding_idx=-1, bool scale_grad_by_freq=False, bool sparse=False, *, Tensor(a!) out) -> Tensor(a!)", \
      BACKEND, (TENSOR, weight), (TENSOR, indices), (INT, padding_idx),                     \
      (BOOL, scale_grad_by_freq), (BOOL, sparse), (TENSOR, out))

/* ---- advanced indexing (kernels/indexing_advanced.c, kernels/indexing_put.c) ---- */
#define PITH_FORALL_OPS_ADVANCED_INDEXING_(_)                                               \
    _(nonzero, "nonzero(Tensor self) -> Tensor", BACKEND, (TENSOR, self))                   \
    _(nonzero_numpy, "nonzero_numpy(Tensor self) -> Tensor[]", COMPOSITE, (TENSOR, self))   \
    _(index, "index.Tensor(Tensor self, Tensor?[] indices) -> Tensor", BACKEND,             \
      (TENSOR, self), (LIST_OPT_TENSOR, indices))                                           \
    _(index_put_,                                                                           \
      "index_put_(Tensor(a!) self, Tensor?[] indices, Tensor values, bool accumulate=False) -> Tensor(a!)", \
      BACKEND, (TENSOR, self), (LIST_OPT_TENSOR, indices), (TENSOR, values),                \
      (BOOL, accumulate))                                                                   \
    _(index_put,                                                                            \
      "index_put(Tensor self, Tensor?[] indices, Tensor values, bool accumulate=False) -> Tensor", \
      COMPOSITE, (TENSOR, self), (LIST_OPT_TENSOR, indices), (TENSOR, values),              \
      (BOOL, accumulate))                                                                   \
    _(masked_select, "masked_select(Tensor self, Tensor mask) -> Tensor", BACKEND,          \
      (TENSOR, self), (TENSOR, mask))

/* ---- normalisation (kernels/normalisation.c) ---- */
#define PITH_FORALL_OPS_NORMALISATION_(_)                                                   \
    _(softmax, "softmax.int(Tensor self, int dim, ScalarType? dtype=None) -> Tensor",       \
      BACKEND, (TENSOR, self), (INT, dim), (OPT_DTYPE, dtype))                              \
    _(softmax_out,                                                                          \
      "softmax.int_out(Tensor self, int dim, ScalarType? dtype=None, *, Tensor(a!) out) -> Tensor(a!)", \
      BACKEND, (TENSOR, self), (INT, dim), (OPT_DTYPE, dtype), (TENSOR, out))               \
    _(log_softmax, "log_softmax.int(Tensor self, int dim, ScalarType? dtype=None) -> Tensor", \
      BACKEND, (TENSOR, self), (INT, dim), (OPT_DTYPE, dtype))                              \
    _(log_softmax_out,                                                                      \
      "log_softmax.int_out(Tensor self, int dim, ScalarType? dtype=None, *, Tensor(a!) out) -> Tensor(a!)", \
      BACKEND, (TENSOR, self), (INT, dim), (OPT_DTYPE, dtype), (TENSOR, out))               \
    _(layer_norm,                                                                           \
      "layer_norm(Tensor input, int[] normalized_shape, Tensor? weight=None, Tensor? bias=None, float eps=1e-05, bool cudnn_enable=True) -> Tensor", \
      BACKEND, (TENSOR, input), (INT_LIST, normalized_shape), (OPT_TENSOR, weight),         \
      (OPT_TENSOR, bias), (FLOAT, eps), (BOOL, cudnn_enable))                               \
    _(layer_norm_out,                                                                       \
      "layer_norm.out(Tensor input, int[] normalized_shape, Tensor? weight=None, Tensor? bias=None, float eps=1e-05, bool cudnn_enable=True, *, Tensor(a!) out) -> Tensor(a!)", \
      BACKEND, (TENSOR, input), (INT_LIST, normalized_shape), (OPT_TENSOR, weight),         \
      (OPT_TENSOR, bias), (FLOAT, eps), (BOOL, cudnn_enable), (TENSOR, out))

/* ---- factories (kernels/factories.c, kernels/random.c) ---- */
#define PITH_FORALL_OPS_FACTORIES_(_)                                                       \
    _(empty, "empty(int[] size, " PITH_FACTORY_KW, BACKEND, (INT_LIST, size),               \
      PITH_FACTORY_ARGS)                                                                    \
    _(empty_strided, "empty_strided(int[] size, int[] stride, " PITH_FACTORY_KW, BACKEND,   \
      (INT_LIST, size), (INT_LIST, stride), PITH_FACTORY_ARGS)                              \
    _(zeros, "zeros(int[] size, " PITH_FACTORY_KW, BACKEND, (INT_LIST, size),               \
      PITH_FACTORY_ARGS)                                                                    \
    _(ones, "ones(int[] size, " PITH_FACTORY_KW, BACKEND, (INT_LIST, size),                 \
      PITH_FACTORY_ARGS)                                                                    \
    _(full, "full(int[] size, Scalar fill_value, " PITH_FACTORY_KW, BACKEND,                \
      (INT_LIST, size), (SCALAR, fill_value), PITH_FACTORY_ARGS)                            \
    _(arange_end, "arange(Scalar end, " PITH_FACTORY_KW, COMPOSITE, (SCALAR, end),          \
      PITH_FACTORY_ARGS)                                                                    \
    _(arange, "arange.start_step(Scalar start, Scalar end, Scalar step=1, " PITH_FACTORY_KW, \
      BACKEND, (SCALAR, start), (SCALAR, end), (SCALAR, step), PITH_FACTORY_ARGS)           \
    _(linspace, "linspace(Scalar start, Scalar end, int steps, " PITH_FACTORY_KW, BACKEND,  \
      (SCALAR, start), (SCALAR, end), (INT, steps), PITH_FACTORY_ARGS)                      \
    _(eye, "eye(int n, int? m=None, " PITH_FACTORY_KW, BACKEND, (INT, n), (OPT_INT, m),     \
      PITH_FACTORY_ARGS)                                                                    \
    _(rand, "rand(int[] size, " PITH_RANDOM_KW, BACKEND, (INT_LIST, size),                 \
      PITH_RANDOM_ARGS)                                                                     \
    _(randn, "randn(int[] size, " PITH_RANDOM_KW, BACKEND, (INT_LIST, size),               \
      PITH_RANDOM_ARGS)                                                                     \
    _(randint_high, "randint(int high, int[] size, " PITH_RANDOM_KW, BACKEND, (INT, high),  \
      (INT_LIST, size), PITH_RANDOM_ARGS)                                                   \
    _(randint, "randint.low(int low, int high, int[] size, " PITH_RANDOM_KW, BACKEND,      \
      (INT, low), (INT, high), (INT_LIST, size), PITH_RANDOM_ARGS)                          \
    _(randperm, "randperm(int n, " PITH_RANDOM_KW, BACKEND, (INT, n), PITH_RANDOM_ARGS)      \
    _(uniform_,                                                                             \
      "uniform_(Tensor(a!) self, float from=0, float to=1, *, Generator? generator=None) -> Tensor(a!)", \
      BACKEND, (TENSOR, self), (FLOAT, from), (FLOAT, to), (OPT_GENERATOR, generator))      \
    _(normal_,                                                                              \
      "normal_(Tensor(a!) self, float mean=0, float std=1, *, Generator? generator=None) -> Tensor(a!)", \
      BACKEND, (TENSOR, self), (FLOAT, mean), (FLOAT, std), (OPT_GENERATOR, generator))

/* ---- sorting, scans and sampling (kernels/sorting.c, kernels/scan.c,
 * kernels/multinomial.c) ---- */
#define PITH_SORT_OUTS_ "Tensor(a!) values, Tensor(b!) indices) -> (Tensor(a!) values, Tensor(b!) indices)"
/* The three rows of one scan: <name>, <name>_out, <name>_ (in place). */
#define PITH_SCAN_ROWS_(r_, n_)                                                             \
    r_(n_, #n_ "(Tensor self, int dim, *, ScalarType? dtype=None) -> Tensor", BACKEND,      \
       (TENSOR, self), (INT, dim), (OPT_DTYPE, dtype))                                      \
    r_(n_##_out,                                                                            \
       #n_ ".out(Tensor self, int dim, *, ScalarType? dtype=None, Tensor(a!) out) -> Tensor(a!)", \
       BACKEND, (TENSOR, self), (INT, dim), (OPT_DTYPE, dtype), (TENSOR, out))              \
    r_(n_##_, #n_ "_(Tensor(a!) self, int dim, *, ScalarType? dtype=None) -> Tensor(a!)",   \
       BACKEND, (TENSOR, self), (INT, dim), (OPT_DTYPE, dtype))
#define PITH_FORALL_OPS_SORTING_(_)                                                         \
    _(sort,                                                                                 \
      "sort(Tensor self, int dim=-1, bool descending=False) -> (Tensor values, Tensor indices)", \
      BACKEND, (TENSOR, self), (INT, dim), (BOOL, descending))                              \
    _(sort_stable,                                                                          \
      "sort.stable(Tensor self, *, bool? stable, int dim=-1, bool descending=False) -> (Tensor values, Tensor indices)", \
      BACKEND, (TENSOR, self), (OPT_BOOL, stable), (INT, dim), (BOOL, descending))          \
    _(sort_values,                                                                          \
      "sort.values(Tensor self, int dim=-1, bool descending=False, *, " PITH_SORT_OUTS_,    \
      BACKEND, (TENSOR, self), (INT, dim), (BOOL, descending), (TENSOR, values),            \
      (TENSOR, indices))                                                                    \
    _(sort_values_stable,                                                                   \
      "sort.values_stable(Tensor self, *, bool? stable, int dim=-1, bool descending=False, " \
      PITH_SORT_OUTS_,                                                                      \
      BACKEND, (TENSOR, self), (OPT_BOOL, stable), (INT, dim), (BOOL, descending),          \
      (TENSOR, values), (TENSOR, indices))                                                  \
    _(argsort, "argsort(Tensor self, int dim=-1, bool descending=False) -> Tensor", BACKEND, \
      (TENSOR, self), (INT, dim), (BOOL, descending))                                       \
    _(argsort_stable,                                                                       \
      "argsort.stable(Tensor self, *, bool stable, int dim=-1, bool descending=False) -> Tensor", \
      BACKEND, (TENSOR, self), (BOOL, stable), (INT, dim), (BOOL, descending))              \
    _(argsort_stable_out,                                                                   \
      "argsort.stable_out(Tensor self, *, bool stable, int dim=-1, bool descending=False, Tensor(a!) out) -> Tensor(a!)", \
      BACKEND, (TENSOR, self), (BOOL, stable), (INT, dim), (BOOL, descending), (TENSOR, out)) \
    _(topk,                                                                                 \
      "topk(Tensor self, int k, int dim=-1, bool largest=True, bool sorted=True) -> (Tensor values, Tensor indices)", \
      BACKEND, (TENSOR, self), (INT, k), (INT, dim), (BOOL, largest), (BOOL, sorted))       \
    _(topk_values,                                                                          \
      "topk.values(Tensor self, int k, int dim=-1, bool largest=True, bool sorted=True, *, " \
      PITH_SORT_OUTS_,                                                                      \
      BACKEND, (TENSOR, self), (INT, k), (INT, dim), (BOOL, largest), (BOOL, sorted),       \
      (TENSOR, values), (TENSOR, indices))                                                  \
    PITH_SCAN_ROWS_(_, cumsum)                                                              \
    PITH_SCAN_ROWS_(_, cumprod)                                                             \
    _(multinomial,                                                                          \
      "multinomial(Tensor self, int num_samples, bool replacement=False, *, Generator? generator=None) -> Tensor", \
      BACKEND, (TENSOR, self), (INT, num_samples), (BOOL, replacement),                     \
      (OPT_GENERATOR, generator))                                                           \
    _(multinomial_out,                                                                      \
      "multinomial.out(Tensor self, int num_samples, bool replacement=False, *, Generator? generator=None, Tensor(a!) out) -> Tensor(a!)", \
      BACKEND, (TENSOR, self), (INT, num_samples), (BOOL, replacement),                     \
      (OPT_GENERATOR, generator), (TENSOR, out))

/* ---- rearranging and replicating (kernels/shape_ops.c, kernels/einsum.c) ---- */
#define PITH_FORALL_OPS_SHAPE_(_)                                                           \
    _(roll, "roll(Tensor self, int[1] shifts, int[1] dims=[]) -> Tensor", BACKEND,          \
      (TENSOR, self), (INT_LIST, shifts), (INT_LIST, dims))                                 \
    _(flip, "flip(Tensor self, int[] dims) -> Tensor", BACKEND, (TENSOR, self),             \
      (INT_LIST, dims))                                                                     \
    _(repeat, "repeat(Tensor self, int[] repeats) -> Tensor", BACKEND, (TENSOR, self),      \
      (INT_LIST, repeats))                                                                  \
    _(repeat_interleave_Tensor,                                                             \
      "repeat_interleave.Tensor(Tensor repeats, *, int? output_size=None) -> Tensor",       \
      BACKEND, (TENSOR, repeats), (OPT_INT, output_size))                                   \
    _(repeat_interleave_self_Tensor,                                                        \
      "repeat_interleave.self_Tensor(Tensor self, Tensor repeats, int? dim=None, *, int? output_size=None) -> Tensor", \
      COMPOSITE, (TENSOR, self), (TENSOR, repeats), (OPT_INT, dim), (OPT_INT, output_size)) \
    _(repeat_interleave_self_int,                                                           \
      "repeat_interleave.self_int(Tensor self, int repeats, int? dim=None, *, int? output_size=None) -> Tensor", \
      BACKEND, (TENSOR, self), (INT, repeats), (OPT_INT, dim), (OPT_INT, output_size))    \
    _(outer, "outer(Tensor self, Tensor vec2) -> Tensor", COMPOSITE, (TENSOR, self),        \
      (TENSOR, vec2))                                                                       \
    _(ger, "ger(Tensor self, Tensor vec2) -> Tensor", COMPOSITE, (TENSOR, self),            \
      (TENSOR, vec2))                                                                       \
    _(meshgrid, "meshgrid(Tensor[] tensors) -> Tensor[]", COMPOSITE, (TENSOR_LIST, tensors)) \
    _(meshgrid_indexing, "meshgrid.indexing(Tensor[] tensors, *, str indexing) -> Tensor[]", \
      COMPOSITE, (TENSOR_LIST, tensors), (STR, indexing))                                   \
    _(einsum, "einsum(str equation, Tensor[] tensors, *, int[]? path=None) -> Tensor",      \
      COMPOSITE, (STR, equation), (TENSOR_LIST, tensors), (OPT_INT_LIST, path))

/* Note [The Python surface of the op table]
 * Which op names Python shows, where, and which of their Tensor arguments take Python
 * numbers. A row is
 *     _(name, VARIANTS, NUMBERS)
 * where `name` is a schema base name (it groups every overload of that name: "max" is max
 * and max.dim) and VARIANTS is
 *     BOTH      pith.<name>(...) and Tensor.<name>(...)
 *     FUNCTION  pith.<name>(...) only
 *     METHOD    Tensor.<name>(...) only
 *     INTERNAL  reachable only as pith.ops.pith.<name> (aliases, and ops whose Python form
 *               is written by hand in pith/_api.py or module.c)
 * The out overloads of a name (those with a mutable keyword-only argument) are chosen by
 * `out=`; a METHOD or BOTH name whose in-place ops exist (name_, e.g. add_) also gets the
 * method Tensor.<name>_ unless name_ has a row of its own.
 *
 * NUMBERS says where a Python bool, int or float binds a Tensor argument (as a wrapped
 * number; See Note [Python scalars as wrapped numbers]), following PyTorch:
 *     ALL    every Tensor argument that the op only reads (PyTorch's numbers-as-tensors
 *            ops, add/sub/mul/div/floor_divide/copy_, and the ops that have a Scalar
 *            overload for either operand: remainder, pow, bitwise_*)
 *     OTHER  every such argument but the first (the ops with a Scalar overload of `other`
 *            only: the comparisons; where's self and other)
 *     NONE   none (maximum(x, 2) is a TypeError, as in PyTorch)
 *
 * Every overload binds through one binder (python_bindings/_C/binder.c), so a new unary
 * op is one op row plus its loop. tests/python/test_op_surface.py fails when a built-in
 * op name has no row here.
 *
 * As with PITH_ROW_, the row macro must be named PITH_PYTHON_ROW_ while the list is expanded
 * (the unary names come from pith/ops.h's list through it). */
#define PITH_PYTHON_UNARY_(n) PITH_PYTHON_ROW_(n, BOTH, NONE)
#define PITH_FORALL_PYTHON_SURFACE(_)                                                       \
    PITH_FORALL_UNARY_OPS(PITH_PYTHON_UNARY_)                                               \
    _(add, BOTH, ALL) _(sub, BOTH, ALL) _(mul, BOTH, ALL) _(div, BOTH, ALL)                 \
    _(floor_divide, BOTH, ALL) _(remainder, BOTH, ALL) _(pow, BOTH, ALL)                    \
    _(maximum, BOTH, NONE) _(minimum, BOTH, NONE)                                           \
    _(eq, BOTH, OTHER) _(ne, BOTH, OTHER) _(lt, BOTH, OTHER) _(le, BOTH, OTHER)             \
    _(gt, BOTH, OTHER) _(ge, BOTH, OTHER)                                                   \
    _(logical_and, BOTH, NONE) _(logical_or, BOTH, NONE)                                    \
    _(bitwise_and, BOTH, ALL) _(bitwise_or, BOTH, ALL) _(bitwise_xor, BOTH, ALL)            \
    _(gelu, FUNCTION, NONE) _(gelu_, INTERNAL, NONE) _(clamp, BOTH, NONE)                   \
    _(where, BOTH, OTHER) _(copy_, METHOD, ALL) _(to, INTERNAL, NONE) _(clone, BOTH, NONE)  \
    _(contiguous, METHOD, NONE)                                                             \
    _(sum, BOTH, NONE) _(mean, BOTH, NONE) _(prod, BOTH, NONE) _(amax, BOTH, NONE)          \
    _(amin, BOTH, NONE) _(max, BOTH, NONE) _(min, BOTH, NONE) _(argmax, BOTH, NONE)         \
    _(argmin, BOTH, NONE) _(var, BOTH, NONE) _(std, BOTH, NONE) _(all, BOTH, NONE)          \
    _(any, BOTH, NONE)                                                                      \
    _(matmul, BOTH, NONE) _(mm, BOTH, NONE) _(bmm, BOTH, NONE) _(addmm, BOTH, NONE)         \
    _(linear, FUNCTION, NONE)                                                               \
    _(view, METHOD, NONE) _(reshape, BOTH, NONE) _(permute, BOTH, NONE)                     \
    _(transpose, BOTH, NONE) _(t, BOTH, NONE) _(expand, METHOD, NONE)                       \
    _(broadcast_to, BOTH, NONE) _(expand_as, METHOD, NONE) _(broadcast_tensors, FUNCTION, NONE) \
    _(as_strided, BOTH, NONE)                                                               \
    _(squeeze, BOTH, NONE) _(unsqueeze, BOTH, NONE) _(flatten, BOTH, NONE)                  \
    _(slice, INTERNAL, NONE) _(select, BOTH, NONE) _(narrow, BOTH, NONE)                    \
    _(split, BOTH, NONE) _(split_with_sizes, BOTH, NONE) _(chunk, BOTH, NONE)               \
    _(unbind, BOTH, NONE)                                                                   \
    _(alias, INTERNAL, NONE) _(detach, BOTH, NONE)                                          \
    _(cat, FUNCTION, NONE) _(stack, FUNCTION, NONE) _(index_select, BOTH, NONE)             \
    _(gather, BOTH, NONE) _(masked_fill, BOTH, NONE) _(tril, BOTH, NONE)                    \
    _(triu, BOTH, NONE) _(tril_, METHOD, NONE) _(triu_, METHOD, NONE)                         \
    _(embedding, FUNCTION, NONE)                                                            \
    _(isnan, BOTH, NONE) _(isinf, BOTH, NONE) _(isposinf, BOTH, NONE)                       \
    _(isneginf, BOTH, NONE) _(isfinite, BOTH, NONE)                                         \
    _(nonzero, BOTH, NONE) _(nonzero_numpy, INTERNAL, NONE) _(index, INTERNAL, NONE) _(index_put, BOTH, NONE)                \
    _(masked_select, BOTH, NONE)                                                            \
    _(softmax, BOTH, NONE) _(log_softmax, BOTH, NONE) _(layer_norm, FUNCTION, NONE)         \
    _(empty, FUNCTION, NONE) _(empty_strided, FUNCTION, NONE) _(zeros, FUNCTION, NONE)      \
    _(ones, FUNCTION, NONE) _(full, FUNCTION, NONE) _(arange, FUNCTION, NONE)               \
    _(linspace, FUNCTION, NONE) _(eye, FUNCTION, NONE) _(rand, FUNCTION, NONE)              \
    _(randn, FUNCTION, NONE) _(randint, FUNCTION, NONE) _(randperm, FUNCTION, NONE)         \
    _(uniform_, METHOD, NONE) _(normal_, METHOD, NONE)                                      \
    _(sort, BOTH, NONE) _(argsort, BOTH, NONE) _(topk, BOTH, NONE) _(cumsum, BOTH, NONE)    \
    _(cumprod, BOTH, NONE) _(multinomial, BOTH, NONE)                                      \
    _(roll, BOTH, NONE) _(flip, BOTH, NONE) _(repeat, METHOD, NONE)                         \
    _(repeat_interleave, BOTH, NONE) _(outer, BOTH, NONE) _(ger, BOTH, NONE)                \
    _(meshgrid, FUNCTION, NONE) _(einsum, FUNCTION, NONE)

/* Note [Tensors as varargs]
 * The functions named here take the tensors of their Tensor[] parameter (the last
 * positional one) either as one list or tuple or as separate positional arguments, as
 * torch.functional's `*tensors` wrappers do: einsum(eq, a, b) is einsum(eq, [a, b]) and
 * meshgrid(a, b) is meshgrid([a, b]). The binder's rule (bind_match, python_bindings/_C/
 * binder.c): when such a function's call has at least as many positional arguments as
 * come before the list, the arguments from the list's position on are the list, unless
 * there is exactly one and it is a list or tuple (or none, and the list is given by
 * keyword). Other Tensor[] functions (cat, stack) take one list only, as in PyTorch.
 * broadcast_tensors(a, b) is broadcast_tensors([a, b]) by the same rule. */
#define PITH_FORALL_PYTHON_TENSOR_VARARGS(_) _(meshgrid) _(einsum) _(broadcast_tensors)

/* Python's operators on tensors: _(slot, name) makes Py_nb_<slot> call pith_<name> and
 * Py_nb_inplace_<slot> call pith_<name>_ (python_bindings/_C/tensor_number.c), straight to
 * the typed op: an operator has two operands and nothing to bind. `@` (matmul), `**`
 * (pow, a ternary slot), the unary operators and the comparisons are written there. */
#define PITH_FORALL_PYTHON_BINARY_OPERATORS(_)                                              \
    _(add, add) _(subtract, sub) _(multiply, mul) _(true_divide, div)                       \
    _(floor_divide, floor_divide) _(remainder, remainder) _(and, bitwise_and)               \
    _(or, bitwise_or) _(xor, bitwise_xor)

#endif /* PITH_KERNELS_OP_TABLE_H */
