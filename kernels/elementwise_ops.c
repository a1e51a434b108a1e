/* elementwise_ops.c — the shared runners of the unary and binary ops (validation, type
 * promotion, outputs, the call into the engine) and the CPU/Meta kernels of every row of
 * op file's unary and binary families (ops/ops.toml), written by scripts/gen_ops.py. */
#include "kernels/elementwise_ops.h"
#include "kernels/elementwise_loops.h"
#include "kernels/promotion.h"
#include "core/parallel.h"

pith_status elementwise_not_implemented(const char *op, pith_dtype dtype)
{
    return pith_set_error(PITH_ERR_TYPE, "%s: not implemented for dtype %s", op,
                          pith_dtype_name(dtype));
}

pith_status scalar_convert(const char *op, const char *what, pith_scalar s, pith_dtype dtype,
                           elementwise_scalar *out)
{
    static const int64_t lo[] = {[PITH_UINT8] = 0, [PITH_INT8] = INT8_MIN,
                                 [PITH_INT16] = INT16_MIN, [PITH_INT32] = INT32_MIN};
    static const int64_t hi[] = {[PITH_UINT8] = UINT8_MAX, [PITH_INT8] = INT8_MAX,
                                 [PITH_INT16] = INT16_MAX, [PITH_INT32] = INT32_MAX};
    switch (s.kind) {
    case PITH_SCALAR_NONE:
        return pith_set_error(PITH_ERR_TYPE, "%s: %s must be a number, not None", op, what);
    case PITH_SCALAR_BOOL:
        out->i = s.u.b;
        out->d = s.u.b;
        return PITH_OK;
    case PITH_SCALAR_INT:
        out->i = s.u.i;
        out->d = (double)s.u.i;
        if (dtype >= PITH_UINT8 && dtype <= PITH_INT32 && (s.u.i < lo[dtype] || s.u.i > hi[dtype]))
            return pith_set_error(PITH_ERR_VALUE,
                                  "%s: %s %lld cannot be converted to type %s without overflow",
                                  op, what, (long long)s.u.i, pith_dtype_name(dtype));
        return PITH_OK;
    case PITH_SCALAR_DOUBLE:
        out->d = s.u.d;
        out->i = 0; /* unused: a float scalar only reaches float loops */
        return PITH_OK;
    }
    return pith_set_error(PITH_ERR_TYPE, "%s: %s is not a number", op, what);
}

/* The dtypes an op computes in and returns, by its rule. */
static void rule_dtypes(elementwise_rule rule, pith_dtype promoted, pith_dtype *compute,
                        pith_dtype *result)
{
    *compute = *result = promoted;
    switch (rule) {
    case RULE_PROMOTED:
        break;
    case RULE_FLOAT:
        *compute = *result = dtype_is_floating(promoted) ? promoted : PITH_DEFAULT_FLOAT;
        break;
    case RULE_TO_BOOL:
        *compute = promoted;
        *result = PITH_BOOL;
        break;
    case RULE_LOGICAL:
        *compute = *result = PITH_BOOL;
        break;
    }
}

/* Returns the op's result: the new tensor, or the target (retained) after bumping its
 * version for out= and in-place forms. */
static pith_status run_finish(pith_value *ret, pith_tensor *dst, elementwise_mode mode)
{
    if (mode == ELEMENTWISE_FUNCTIONAL)
        return ret_tensor(ret, dst);
    tensor_bump_version(dst);
    return ret_self(ret, dst);
}

pith_status unary_run(const unary_def *def, pith_value *ret, const pith_tensor *self,
                      const pith_tensor *target, elementwise_mode mode, bool meta)
{
    return unary_run_ctx(def, ret, self, NULL, target, mode, meta);
}

pith_status unary_run_ctx(const unary_def *def, pith_value *ret, const pith_tensor *self,
                          void *ctx, const pith_tensor *target, elementwise_mode mode, bool meta)
{
    const char *op = def->name;
    pith_dtype compute, result;
    pith_tensor *dst;
    if (elementwise_check_devices(op, meta, 1, &self, target) != PITH_OK)
        return pith_last_status();
    if (self->dtype == PITH_BOOL && def->bool_message)
        return pith_set_error(PITH_ERR_TYPE, "%s: %s", op, def->bool_message);
    rule_dtypes(def->rule, self->dtype, &compute, &result);
    elementwise_loop loop = def->loops[compute];
    if (!loop)
        return elementwise_not_implemented(op, compute);
    if (elementwise_output(op, mode, (pith_tensor *)target, self->ndim, self->sizes, result,
                           meta ? PITH_META : PITH_CPU, &dst) != PITH_OK)
        return pith_last_status();
    if (!meta && elementwise_apply(dst, result, 1, &self, &compute, loop, ctx, NULL) != PITH_OK) {
        if (mode == ELEMENTWISE_FUNCTIONAL)
            pith_release(dst);
        return pith_last_status();
    }
    return run_finish(ret, dst, mode);
}

/* add and sub (PyTorch's alpha_check), and the alpha value for the loop. */
static pith_status alpha_prepare(const char *op, pith_scalar alpha, pith_dtype compute,
                                 elementwise_scalar *value, bool *is_one)
{
    if (alpha.kind == PITH_SCALAR_INT && alpha.u.i == 1) { /* the default: nothing to check */
        value->d = 1.0;
        value->i = 1;
        *is_one = true;
        return PITH_OK;
    }
    if (alpha.kind == PITH_SCALAR_BOOL && compute != PITH_BOOL)
        return pith_set_error(PITH_ERR_TYPE,
                              "%s: Boolean alpha only supported for Boolean results.", op);
    if (alpha.kind == PITH_SCALAR_DOUBLE && !dtype_is_floating(compute))
        return pith_set_error(PITH_ERR_TYPE,
                              "%s: For integral input tensors, argument alpha must not be a "
                              "floating point number.",
                              op);
    if (scalar_convert(op, "alpha", alpha, compute, value) != PITH_OK)
        return pith_last_status();
    *is_one = alpha.kind == PITH_SCALAR_DOUBLE ? value->d == 1.0 : value->i == 1;
    return PITH_OK;
}

/* Whether any element of `t` (bool or integer) is zero. */
#define HAS_ZERO_LOOP(tag, unused)                                                          \
    static int has_zero_##tag(char **args, const int64_t *n, const int64_t *s, void *ctx)   \
    {                                                                                       \
        (void)ctx;                                                                          \
        for (int64_t i = 0; i < n[0]; i++)                                                  \
            if (*(const EW_STORE_T_##tag *)(args[0] + i * s[0]) == 0)                       \
                return 1;                                                                   \
        return 0;                                                                           \
    }
HAS_ZERO_LOOP(b, 0)
EW_TAGS_INT(HAS_ZERO_LOOP, 0)
static const elementwise_loop has_zero_loops[PITH_NUM_DTYPES] = {
    EW_LOOP_ENTRY(b, has_zero) EW_TAGS_INT(EW_LOOP_ENTRY, has_zero)};

static __attribute__((noinline)) bool tensor_has_zero(const pith_tensor *t)
{
    elementwise_geometry g;
    geometry_init(&g, t->ndim, t->sizes);
    geometry_add_operand(&g, t);
    return geometry_run(&g, has_zero_loops[t->dtype], NULL) != 0;
}

/* Note [Reduced-precision ops with a scalar]
 * PyTorch's CPU kernels of mul, div and floor_divide read a one-element `other` of a
 * float16/bfloat16 op at float32 precision instead of rounding it to the half type first
 * (their `original_scalar_value<opmath_t>` path): `half_zeros * tensor(65520, int32)` is 0,
 * not 0 * inf = nan, and `x / 3.1` divides by 3.1, not by float16(3.1). binary_run_general
 * does the same for the ops whose binary_def sets scalar_opmath: it runs the float32 loop
 * (exact for the half inputs) and rounds each result once into the half output. Other ops
 * (add, sub, remainder, pow, the comparisons) round the scalar first, as PyTorch's do. */

/* Note [Binary fast path]
 * Most binary calls are functional, on CPU, with two contiguous inputs of one dtype and
 * one shape, small enough to run serially (a + b in a loop over small tensors). For them
 * the device and broadcast checks hold by construction, the fresh output cannot overlap
 * an input, the inputs need no conversion when they are already of the compute dtype,
 * and the whole iteration is one call of the inner loop. binary_run_simple does exactly
 * that, keeping every remaining check (the op's own check, the loop for the dtype, alpha,
 * integer division by zero) in the same order as the general path, so it fails alike.
 * Anything else (broadcasting, strides, mixed dtypes, wrapped numbers, empty or large
 * tensors, out= and in-place forms, meta) takes the general path. */
static inline bool binary_is_simple(const pith_tensor *self, const pith_tensor *other)
{
    return self->dtype == other->dtype &&
           !((self->flags | other->flags) & PITH_TENSOR_WRAPPED_NUMBER) &&
           self->device == PITH_CPU && other->device == PITH_CPU && self->contiguous &&
           other->contiguous && self->numel > 0 && self->numel < PITH_GRAIN_SIZE &&
           sizes_equal(self->ndim, self->sizes, other->ndim, other->sizes);
}

/* See Note [Binary fast path]. The operands passed binary_is_simple, so their result_type
 * is their common dtype. Returns -1 (nothing done, no error set) when the op computes in
 * another dtype (the inputs would need a conversion), else the status. */
static inline __attribute__((always_inline)) int
binary_run_simple(const binary_def *def, pith_value *ret, const pith_tensor *self,
                  const pith_tensor *other, pith_scalar alpha)
{
    const char *op = def->name;
    pith_dtype compute, result;
    rule_dtypes(def->rule, self->dtype, &compute, &result);
    if (compute != self->dtype)
        return -1;
    if (def->check && def->check(self, other, compute) != PITH_OK)
        return pith_last_status();
    elementwise_loop loop = def->loops[compute];
    if (!loop)
        return elementwise_not_implemented(op, compute);
    elementwise_scalar alpha_value = {1.0, 1};
    if (def->alpha_loops && !(alpha.kind == PITH_SCALAR_INT && alpha.u.i == 1)) {
        bool alpha_is_one;
        if (alpha_prepare(op, alpha, compute, &alpha_value, &alpha_is_one) != PITH_OK)
            return pith_last_status();
        if (!alpha_is_one)
            loop = def->alpha_loops[compute];
    }
    pith_tensor *dst = tensor_new_shape_of(self, result);
    if (!dst)
        return pith_last_status();
    if (def->integer_division && !dtype_is_floating(compute) && tensor_has_zero(other)) {
        pith_release(dst);
        return pith_set_error(PITH_ERR_VALUE,
                              "%s: ZeroDivisionError: integer division or remainder by zero",
                              op);
    }
    /* dst is a fresh non-empty CPU tensor: its data is its storage's, at offset 0. */
    char *args[3] = {dst->storage->data, tensor_data(self), tensor_data(other)};
    int64_t in_stride = (int64_t)dtype_itemsize(compute);
    int64_t strides[3] = {(int64_t)dtype_itemsize(result), in_stride, in_stride};
    int64_t n = self->numel;
    loop(args, &n, strides, &alpha_value);
    ret[0].kind = PITH_VALUE_TENSOR;
    ret[0].u.t = dst;
    return PITH_OK;
}

/* What the general path of a binary op runs: the dtypes and the loop (See Note [Fused
 * elementwise calls] for its other user). */
typedef struct {
    pith_dtype compute, result, loop_dtype;
    elementwise_loop loop;
    elementwise_scalar alpha;
} binary_choice;

static pith_status binary_choose(const binary_def *def, const pith_tensor *self,
                                 const pith_tensor *other, pith_scalar alpha, binary_choice *ch)
{
    const char *op = def->name;
    bool alpha_is_one = true;
    rule_dtypes(def->rule, result_type_of2(self, other), &ch->compute, &ch->result);
    pith_dtype compute = ch->compute;
    if (def->check && def->check(self, other, compute) != PITH_OK)
        return pith_last_status();
    ch->loop = def->loops[compute];
    if (!ch->loop)
        return elementwise_not_implemented(op, compute);
    /* See Note [Reduced-precision ops with a scalar]. */
    ch->loop_dtype = compute;
    if (def->scalar_opmath && (compute == PITH_FLOAT16 || compute == PITH_BFLOAT16) &&
        other->numel == 1 && other->dtype != compute) {
        ch->loop_dtype = PITH_FLOAT32;
        ch->loop = def->loops[ch->loop_dtype];
    }
    if (def->wrapped_other_loops && (other->flags & PITH_TENSOR_WRAPPED_NUMBER) &&
        def->wrapped_other_loops[ch->loop_dtype])
        ch->loop = def->wrapped_other_loops[ch->loop_dtype];
    ch->alpha = (elementwise_scalar){1.0, 1};
    if (def->alpha_loops) {
        if (alpha_prepare(op, alpha, compute, &ch->alpha, &alpha_is_one) != PITH_OK)
            return pith_last_status();
        if (!alpha_is_one)
            ch->loop = def->alpha_loops[compute];
    }
    return PITH_OK;
}

/* Out of line, so that its large frame is not set up on the fast path. */
static __attribute__((noinline)) pith_status
binary_run_general(const binary_def *def, pith_value *ret, const pith_tensor *self,
                   const pith_tensor *other, pith_scalar alpha, const pith_tensor *target,
                   elementwise_mode mode, bool meta)
{
    const char *op = def->name;
    const pith_tensor *in[2] = {self, other};
    int ndim = 0;
    int64_t sizes[PITH_MAX_DIMS];
    binary_choice ch;
    pith_tensor *dst;
    if (elementwise_check_devices(op, meta, 2, in, target) != PITH_OK ||
        broadcast_shapes(op, 2, in, &ndim, sizes) != PITH_OK ||
        binary_choose(def, self, other, alpha, &ch) != PITH_OK)
        return pith_last_status();
    pith_dtype compute = ch.compute, result = ch.result, loop_dtype = ch.loop_dtype;
    elementwise_loop loop = ch.loop;
    elementwise_scalar alpha_value = ch.alpha;
    if (elementwise_output(op, mode, (pith_tensor *)target, ndim, sizes, result,
                           meta ? PITH_META : PITH_CPU, &dst) != PITH_OK)
        return pith_last_status();
    if (!meta) {
        pith_status status = PITH_OK;
        pith_dtype in_dtypes[2] = {loop_dtype, loop_dtype};
        /* Scanned before anything is written, so a failing in-place op changes nothing. */
        if (def->integer_division && !dtype_is_floating(compute) && dst->numel > 0 &&
            tensor_has_zero(other))
            status = pith_set_error(PITH_ERR_VALUE,
                                    "%s: ZeroDivisionError: integer division or remainder by "
                                    "zero",
                                    op);
        if (status == PITH_OK)
            status = elementwise_apply(dst, loop_dtype == compute ? result : loop_dtype, 2, in,
                                       in_dtypes, loop, &alpha_value, NULL);
        if (status != PITH_OK) {
            if (mode == ELEMENTWISE_FUNCTIONAL)
                pith_release(dst);
            return status;
        }
    }
    return run_finish(ret, dst, mode);
}

/* binary_run, inlined into each kernel so that the fast path of the functional CPU kernel
 * is one function. See Note [Binary fast path]. */
static inline __attribute__((always_inline)) pith_status
binary_run_inline(const binary_def *def, pith_value *ret, const pith_tensor *self,
                  const pith_tensor *other, pith_scalar alpha, const pith_tensor *target,
                  elementwise_mode mode, bool meta)
{
    if (mode == ELEMENTWISE_FUNCTIONAL && !meta && binary_is_simple(self, other)) {
        int status = binary_run_simple(def, ret, self, other, alpha);
        if (status >= 0)
            return (pith_status)status;
    }
    return binary_run_general(def, ret, self, other, alpha, target, mode, meta);
}

pith_status binary_run(const binary_def *def, pith_value *ret, const pith_tensor *self,
                       const pith_tensor *other, pith_scalar alpha,
                       const pith_tensor *target, elementwise_mode mode, bool meta)
{
    return binary_run_inline(def, ret, self, other, alpha, target, mode, meta);
}

/* ---- the kernels of every unary and binary op ----
 * <name>_cpu, <name>_meta and their _out and in-place forms, each a call of unary_run or
 * binary_run(_inline) with the op's description: written by scripts/gen_ops.py from the
 * op file's unary and binary families. Included here so that the functional CPU kernels
 * inline binary_run_inline (See Note [Binary fast path]). */
#include "kernels/generated/elementwise_kernels.inc"

/* Note [Fused elementwise calls]
 * A compiled graph may run a chain of elementwise calls tile by tile (compile/fusion.c,
 * See Note [Fusion legality]); its results must be eager's, bit for bit. So the fused
 * group runs each call's own loop, chosen here by the same code as eager's kernels
 * (rule_dtypes, binary_choose, the unary and gelu descriptions), on the same input values
 * in the same dtype, into a result of the same dtype. elementwise_fusable_of accepts only
 * the calls for which eager is exactly one loop over the broadcast shape:
 *  - the functional forms of the op file's unary and binary ops, and gelu;
 *  - clamp and where (its condition read as bool) with a floating result;
 *  - casts (to.dtype to a floating dtype, from any dtype) and clone of a floating
 *    tensor: eager's copy_ runs cast_loop over the shape (elementwise_copy), and a cast
 *    cannot fail;
 *  - a floating compute dtype, so no integer division (whose zero divisor eager finds
 *    before writing anything) and no loop that can fail;
 *  - a loop that writes the result dtype itself: eager's float32 loop for a float16 op
 *    with a float scalar (Note [Reduced-precision ops with a scalar]) writes through a
 *    temporary and is not fused.
 * Inputs of another dtype than the loop reads are converted by eager first, with cast_loop
 * (tensor_compact_copy); the group converts them with the same loop, once for constants
 * and tile by tile for tensors (an exact widening, or eager's own rounding). The
 * loops themselves give the same bits for any split of an array (the vector body and the
 * tail compute alike: See Note [Vectorised math functions]), so tiles do not change
 * results. Keep this in step with unary_run and binary_run_general. */
static bool unary_fusable(const unary_def *def, const pith_tensor *self, elementwise_fusable *f)
{
    pith_dtype compute, result;
    if (!def || !self || (self->dtype == PITH_BOOL && def->bool_message))
        return false;
    rule_dtypes(def->rule, self->dtype, &compute, &result);
    if (!dtype_is_floating(compute) || !def->loops[compute])
        return false;
    *f = (elementwise_fusable){.loop = def->loops[compute],
                               .ctx.scalar = {1.0, 1},
                               .nin = 1,
                               .in_dtypes = {compute},
                               .out_dtype = result};
    return true;
}

static bool binary_fusable(const binary_def *def, const pith_tensor *self,
                           const pith_tensor *other, pith_scalar alpha, elementwise_fusable *f)
{
    binary_choice ch;
    if (!self || !other || binary_choose(def, self, other, alpha, &ch) != PITH_OK)
        return false;
    pith_dtype writes = ch.loop_dtype == ch.compute ? ch.result : ch.loop_dtype;
    if (!dtype_is_floating(ch.compute) || def->integer_division || writes != ch.result)
        return false;
    *f = (elementwise_fusable){.loop = ch.loop,
                               .ctx.scalar = ch.alpha,
                               .nin = 2,
                               .in_dtypes = {ch.loop_dtype, ch.loop_dtype},
                               .out_dtype = ch.result};
    return true;
}

bool elementwise_fusable_of(const pith_op *op, const pith_value *args, size_t nargs,
                            elementwise_fusable *f)
{
    const pith_tensor *a = NULL, *b = NULL;
    const char *approximate = NULL;
    pith_scalar alpha = scalar_from_int(1);
    if (nargs < 1 || unbox_TENSOR(op, 0, &args[0], &a) != PITH_OK)
        return false;
    switch (op->builtin_id) {
        /* The unary and binary ops (scripts/gen_ops.py). */
#include "kernels/generated/elementwise_fusable_cases.inc"
    case PITH_OPID_gelu:
        return nargs == 2 && unbox_STR(op, 1, &args[1], &approximate) == PITH_OK &&
               unary_fusable(gelu_def(approximate), a, f);
    case PITH_OPID_to_dtype: {
        pith_dtype dtype;
        bool copy;
        if (nargs != 4 || unbox_DTYPE(op, 1, &args[1], &dtype) != PITH_OK ||
            unbox_BOOL(op, 3, &args[3], &copy) != PITH_OK || !dtype_valid((int)dtype) ||
            (dtype == a->dtype && !copy) || !dtype_is_floating(dtype) ||
            !cast_loop(dtype, a->dtype))
            return false; /* the same dtype without copy is `self` itself */
        *f = (elementwise_fusable){.loop = cast_loop(dtype, a->dtype),
                                   .nin = 1,
                                   .in_dtypes = {a->dtype},
                                   .out_dtype = dtype};
        return true;
    }
    case PITH_OPID_clone:
        if (nargs != 1 || !dtype_is_floating(a->dtype))
            return false;
        *f = (elementwise_fusable){.loop = cast_loop(a->dtype, a->dtype),
                                   .nin = 1,
                                   .in_dtypes = {a->dtype},
                                   .out_dtype = a->dtype};
        return true;
    case PITH_OPID_clamp: {
        pith_scalar min, max;
        return nargs == 3 && unbox_OPT_SCALAR(op, 1, &args[1], &min) == PITH_OK &&
               unbox_OPT_SCALAR(op, 2, &args[2], &max) == PITH_OK &&
               clamp_fusable(a, min, max, f);
    }
    case PITH_OPID_where: {
        const pith_tensor *c = NULL;
        return nargs == 3 && unbox_TENSOR(op, 1, &args[1], &b) == PITH_OK &&
               unbox_TENSOR(op, 2, &args[2], &c) == PITH_OK && where_fusable(a, b, c, f);
    }
    default:
        return false;
    }
}
