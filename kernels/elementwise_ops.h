/* elementwise_ops.h — how the unary and binary ops are described to the shared runners
 * (elementwise_ops.c), which do the validation, promotion and output handling common to
 * the functional, out= and in-place forms on CPU and Meta. Each op file defines the
 * descriptions named here (unary_<op>, binary_<op>) with its loops. */
#ifndef PITH_KERNELS_ELEMENTWISE_OPS_H
#define PITH_KERNELS_ELEMENTWISE_OPS_H

#include "kernels/elementwise.h"
#include "kernels/ops_internal.h"

/* How the dtype an op computes in, and the dtype of its result, follow from the promoted
 * dtype of its inputs. */
typedef enum {
    RULE_PROMOTED, /* compute in and return the promoted dtype (add) */
    RULE_FLOAT,    /* bool and integers compute in the default float dtype (exp, div) */
    RULE_TO_BOOL,  /* compute in the promoted dtype, return bool (eq) */
    RULE_LOGICAL   /* read every input as bool, return bool (logical_not) */
} elementwise_rule;

/* What a loop's `ctx` points at when an op has a scalar argument (add's alpha, clamp's
 * bounds): the value as double and as int64 (bool as 0/1). */
typedef struct {
    double d;
    int64_t i;
} elementwise_scalar;

typedef struct {
    const char *name;
    elementwise_rule rule;
    const elementwise_loop *loops; /* by compute dtype; NULL: not implemented for it */
    const char *bool_message;      /* PyTorch's own error for a bool input, or NULL */
} unary_def;

typedef struct {
    const char *name;
    elementwise_rule rule;
    const elementwise_loop *loops;
    /* add and sub: the loops for alpha != 1 (ctx is an elementwise_scalar); NULL for ops
     * without alpha. */
    const elementwise_loop *alpha_loops;
    /* Extra validation given the operands and the compute dtype, or NULL. */
    pith_status (*check)(const pith_tensor *self, const pith_tensor *other,
                         pith_dtype compute);
    /* Integer division: a zero divisor is an error (never SIGFPE). */
    bool integer_division;
    /* A one-element `other` keeps float32 precision in float16/bfloat16 ops. See Note
     * [Reduced-precision ops with a scalar] (elementwise_ops.c). */
    bool scalar_opmath;
    /* The loops, by compute dtype, for an `other` that is a wrapped number (a Python
     * scalar, read by the loop from its stride-0 operand), where the op special-cases its
     * value (pow: See Note [Pow with a scalar exponent]); NULL, or a NULL entry: `loops`. */
    const elementwise_loop *wrapped_other_loops;
} binary_def;

/* unary_<name> and binary_<name> of every op of the op file's unary and binary families. */
#include "kernels/generated/elementwise_defs.h"

/* The whole of a unary op: `target` is the out= tensor (OUT) or self (INPLACE), NULL
 * for FUNCTIONAL. `meta` validates and computes metadata only. */
pith_status unary_run(const unary_def *def, pith_value *ret, const pith_tensor *self,
                      const pith_tensor *target, elementwise_mode mode, bool meta);
/* unary_run with `ctx` for the loop (the parameters of a parametrised activation). */
pith_status unary_run_ctx(const unary_def *def, pith_value *ret, const pith_tensor *self,
                          void *ctx, const pith_tensor *target, elementwise_mode mode, bool meta);
pith_status binary_run(const binary_def *def, pith_value *ret, const pith_tensor *self,
                       const pith_tensor *other, pith_scalar alpha,
                       const pith_tensor *target, elementwise_mode mode, bool meta);

/* gelu's description for its `approximate` argument ("none" or "tanh"), or NULL. */
const unary_def *gelu_def(const char *approximate);

/* One functional elementwise call as eager's CPU kernel makes it, for a fused group of a
 * compiled graph (See Note [Fused elementwise calls] in elementwise_ops.c). */
typedef struct {
    elementwise_scalar lo, hi; /* absent bounds are the type's extremes / infinities */
} clamp_bounds;

/* What a fused call's loop's ctx points at. */
typedef union {
    elementwise_scalar scalar; /* add's and sub's alpha */
    clamp_bounds bounds;       /* clamp's */
} elementwise_ctx;

typedef struct {
    elementwise_loop loop;
    elementwise_ctx ctx;           /* a copy per call */
    int nin;                       /* 1 to 3: the tensor arguments, in order */
    pith_dtype in_dtypes[3];       /* the dtype the loop reads each input as */
    pith_dtype out_dtype;          /* the dtype it writes: the call's result dtype */
} elementwise_fusable;

/* The fusable forms of clamp and where (elementwise_misc.c), for elementwise_fusable_of. */
bool clamp_fusable(const pith_tensor *self, pith_scalar min, pith_scalar max,
                   elementwise_fusable *f);
bool where_fusable(const pith_tensor *condition, const pith_tensor *self,
                   const pith_tensor *other, elementwise_fusable *f);

/* Whether built-in op `op` called with `args` (its arguments in schema order, tensors as
 * Meta stand-ins or CPU 0-dim constants) is, in eager, exactly one call of one loop over
 * the broadcast shape, reading every input converted to one dtype and writing the result
 * dtype, in a floating compute dtype (so its loop cannot fail); and if so, which. false
 * for every other op and case; it sets no error that matters (the call was validated by
 * its Meta kernel already). */
bool elementwise_fusable_of(const pith_op *op, const pith_value *args, size_t nargs,
                            elementwise_fusable *f);

/* "<op>: not implemented for dtype <dtype>" (PITH_ERR_TYPE). */
pith_status elementwise_not_implemented(const char *op, pith_dtype dtype);
/* Checks that an integral scalar fits `dtype` (PyTorch's checked Scalar conversion) and
 * fills `out` with it. */
pith_status scalar_convert(const char *op, const char *what, pith_scalar s, pith_dtype dtype,
                           elementwise_scalar *out);

#endif /* PITH_KERNELS_ELEMENTWISE_OPS_H */
