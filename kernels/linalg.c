/* linalg.c — matmul (all of PyTorch's rank rules), mm, bmm, addmm and linear, and their
 * out= forms: validation, result shapes and the CPU and Meta kernels.
 * The product itself runs in linalg_gemm.c.
 *
 * Every op becomes a matmul_plan over strided views of its operands (linear's weight is
 * viewed transposed, without a copy), made by one function for both kernels. */
#include <string.h>

#include "core/dtype.h"
#include "kernels/elementwise.h"
#include "kernels/indexing.h"
#include "kernels/linalg.h"
#include "kernels/ops_internal.h"
#include "kernels/out_target.h"
#include "kernels/reduce.h"

/* Sizes and strides of an operand, possibly a transposed view of a tensor. */
typedef struct {
    int ndim;
    int64_t sizes[PITH_MAX_DIMS];
    int64_t strides[PITH_MAX_DIMS];
} mm_view;

static void view_of(const pith_tensor *t, mm_view *v)
{
    v->ndim = t->ndim;
    memcpy(v->sizes, t->sizes, sizeof(int64_t) * (size_t)t->ndim);
    memcpy(v->strides, t->strides, sizeof(int64_t) * (size_t)t->ndim);
}

/* A 2-D view transposed (1-D views are their own transpose, as torch.t). */
static void view_transposed(const pith_tensor *t, mm_view *v)
{
    view_of(t, v);
    if (t->ndim == 2) {
        v->sizes[0] = t->sizes[1];
        v->sizes[1] = t->sizes[0];
        v->strides[0] = t->strides[1];
        v->strides[1] = t->strides[0];
    }
}

static pith_status dtype_match(const char *name, const char *a_name, const pith_tensor *a,
                               const char *b_name, const pith_tensor *b)
{
    if (a->dtype != b->dtype)
        return pith_set_error(PITH_ERR_TYPE,
                              "%s: expected %s and %s to have the same dtype, but got: %s != %s",
                              name, a_name, b_name, pith_dtype_name(a->dtype),
                              pith_dtype_name(b->dtype));
    return PITH_OK;
}

static pith_status contraction_error(const char *name, const mm_view *a, const mm_view *b,
                                     const matmul_plan *p, int64_t kb)
{
    if (a->ndim == 1 && b->ndim == 1)
        return pith_set_error(PITH_ERR_VALUE,
                              "%s: inconsistent tensor size, expected tensor [%lld] and src "
                              "[%lld] to have the same number of elements, but got %lld and "
                              "%lld elements respectively",
                              name, (long long)p->k, (long long)kb, (long long)p->k,
                              (long long)kb);
    if (a->ndim == 2 && b->ndim == 1)
        return pith_set_error(PITH_ERR_VALUE,
                              "%s: size mismatch, got input (%lld), mat (%lldx%lld), vec (%lld)",
                              name, (long long)p->n, (long long)p->n, (long long)p->k,
                              (long long)kb);
    return pith_set_error(PITH_ERR_VALUE,
                          "%s: mat1 and mat2 shapes cannot be multiplied (%lldx%lld and "
                          "%lldx%lld)",
                          name, (long long)p->n, (long long)p->k, (long long)kb,
                          (long long)p->m);
}

/* PyTorch's matmul rules: 1-D operands gain a dim (a row for the first, a column for the
 * second) that the result drops; dims before the last two broadcast. */
static pith_status plan_build(const char *name, const mm_view *a, const mm_view *b,
                              matmul_plan *p)
{
    int da = a->ndim, db = b->ndim;
    if (da == 0 || db == 0)
        return pith_set_error(PITH_ERR_VALUE,
                              "%s: both arguments to matmul need to be at least 1D, but they "
                              "are %dD and %dD",
                              name, da, db);
    int64_t kb;
    if (da == 1) {
        p->n = 1;
        p->k = a->sizes[0];
        p->a_rs = 0;
        p->a_cs = a->strides[0];
    } else {
        p->n = a->sizes[da - 2];
        p->k = a->sizes[da - 1];
        p->a_rs = a->strides[da - 2];
        p->a_cs = a->strides[da - 1];
    }
    if (db == 1) {
        kb = b->sizes[0];
        p->m = 1;
        p->b_rs = b->strides[0];
        p->b_cs = 1;
    } else {
        kb = b->sizes[db - 2];
        p->m = b->sizes[db - 1];
        p->b_rs = b->strides[db - 2];
        p->b_cs = b->strides[db - 1];
    }
    if (p->k != kb)
        return contraction_error(name, a, b, p, kb);
    int na = da > 2 ? da - 2 : 0, nb = db > 2 ? db - 2 : 0;
    p->nbatch = na > nb ? na : nb;
    for (int i = 0; i < p->nbatch; i++) {
        int ia = i - (p->nbatch - na), ib = i - (p->nbatch - nb);
        int64_t sa = ia >= 0 ? a->sizes[ia] : 1, sb = ib >= 0 ? b->sizes[ib] : 1;
        if (sa != sb && sa != 1 && sb != 1)
            return pith_set_error(PITH_ERR_VALUE,
                                  "%s: The size of tensor a (%lld) must match the size of "
                                  "tensor b (%lld) at non-singleton dimension %d",
                                  name, (long long)sa, (long long)sb, i);
        p->batch[i] = sa == 1 ? sb : sa;
        p->a_batch_strides[i] = sa == 1 ? 0 : a->strides[ia];
        p->b_batch_strides[i] = sb == 1 ? 0 : b->strides[ib];
    }
    p->out_ndim = 0;
    for (int i = 0; i < p->nbatch; i++)
        p->out_sizes[p->out_ndim++] = p->batch[i];
    if (da >= 2)
        p->out_sizes[p->out_ndim++] = p->n;
    if (db >= 2)
        p->out_sizes[p->out_ndim++] = p->m;
    return PITH_OK;
}

/* `src` must broadcast to `sizes` (PyTorch's expand rules). */
static pith_status broadcast_check(const char *name, const pith_tensor *src, int ndim,
                                   const int64_t *sizes)
{
    char want[256], have[256];
    for (int i = 0; i < src->ndim; i++) {
        int d = ndim - src->ndim + i;
        if (d < 0 || (src->sizes[i] != 1 && src->sizes[i] != sizes[d])) {
            shape_format(ndim, sizes, want, sizeof want);
            shape_format(src->ndim, src->sizes, have, sizeof have);
            if (d < 0)
                return pith_set_error(PITH_ERR_VALUE,
                                      "%s: the number of sizes provided (%d) must be greater "
                                      "or equal to the number of dimensions in the tensor "
                                      "(%d). Target sizes: %s. Tensor sizes: %s",
                                      name, ndim, src->ndim, want, have);
            return pith_set_error(PITH_ERR_VALUE,
                                  "%s: The expanded size of the tensor (%lld) must match the "
                                  "existing size (%lld) at non-singleton dimension %d.  Target "
                                  "sizes: %s.  Tensor sizes: %s",
                                  name, (long long)sizes[d], (long long)src->sizes[i], d, want,
                                  have);
        }
    }
    return PITH_OK;
}

/* Copies `src` broadcast to the shape of the contiguous `dst` (same dtype). */
static void broadcast_fill(pith_tensor *dst, const pith_tensor *src)
{
    if (dst->numel == 0)
        return;
    size_t elem = pith_dtype_size(dst->dtype);
    int n = dst->ndim;
    int64_t strides[PITH_MAX_DIMS], idx[PITH_MAX_DIMS] = {0};
    for (int d = 0; d < n; d++) {
        int i = d - (n - src->ndim);
        strides[d] = (i >= 0 && src->sizes[i] != 1) ? src->strides[i] * (int64_t)elem : 0;
    }
    int64_t len = n ? dst->sizes[n - 1] : 1, step = n ? strides[n - 1] : 0;
    const char *from = tensor_data(src);
    char *to = tensor_data(dst);
    for (int64_t done = 0; done < dst->numel; done += len) {
        int64_t off = 0;
        for (int d = 0; d < n - 1; d++)
            off += idx[d] * strides[d];
        if (step == (int64_t)elem) {
            memcpy(to, from + off, (size_t)len * elem);
        } else {
            for (int64_t j = 0; j < len; j++)
                memcpy(to + j * (int64_t)elem, from + off + j * step, elem);
        }
        to += len * (int64_t)elem;
        for (int d = n - 2; d >= 0; d--) {
            if (++idx[d] < dst->sizes[d])
                break;
            idx[d] = 0;
        }
    }
}

static bool scalar_is_zero(pith_scalar s)
{
    return s.kind == PITH_SCALAR_DOUBLE ? s.u.d == 0
           : s.kind == PITH_SCALAR_INT  ? s.u.i == 0
                                        : !s.u.b;
}

static pith_status scalars_make(const char *name, pith_dtype dtype, pith_scalar alpha,
                                pith_scalar beta, matmul_scalars *s)
{
    if (!dtype_is_floating(dtype)) {
        if (alpha.kind == PITH_SCALAR_DOUBLE || beta.kind == PITH_SCALAR_DOUBLE)
            return pith_set_error(PITH_ERR_TYPE,
                                  "%s: For integral input tensors, argument %s must not be a "
                                  "floating point number.",
                                  name, alpha.kind == PITH_SCALAR_DOUBLE ? "alpha" : "beta");
    }
    s->alpha = scalar_to_double(alpha);
    s->beta = scalar_to_double(beta);
    s->alpha_int = alpha.kind == PITH_SCALAR_INT ? (uint64_t)alpha.u.i : (uint64_t)alpha.u.b;
    s->beta_int = beta.kind == PITH_SCALAR_INT ? (uint64_t)beta.u.i : (uint64_t)beta.u.b;
    if (alpha.kind == PITH_SCALAR_DOUBLE)
        s->alpha_int = 0;
    if (beta.kind == PITH_SCALAR_DOUBLE)
        s->beta_int = 0;
    s->beta_zero = scalar_is_zero(beta);
    return PITH_OK;
}

/* Runs the plan into the contiguous `dst` of the plan's shape (CPU). */
static pith_status product_run(const matmul_plan *plan, const pith_tensor *a,
                               const pith_tensor *b, const pith_tensor *addend,
                               matmul_scalars s, pith_tensor *dst)
{
    if (addend && !s.beta_zero)
        broadcast_fill(dst, addend);
    return linalg_run(a->dtype, plan, tensor_data(a), tensor_data(b), tensor_data(dst), s);
}

/* Note [Matmul into out=]
 * The out= forms (matmul.out, mm.out, bmm.out, addmm.out, linear.out) take an `out` of
 * exactly the result dtype, as PyTorch does (no casting), of the result's shape or empty
 * (then resized, as every out= op: tensor_resize_out), and never expanded. The product goes
 * straight into `out` when `out` is contiguous and shares no memory with an operand (See
 * Note [Destination passing]). Otherwise it goes into a temporary that is then copied into
 * `out`, keeping out's strides: GEMM reads A and B while it writes C, so an `out` that
 * overlaps an operand (a.mm(a, out=a)) would be fed values it had already overwritten.
 * PyTorch writes into such an `out` directly and gives wrong values; pith gives the
 * product. */
typedef struct {
    const matmul_plan *plan;
    const pith_tensor *a, *b, *addend;
    matmul_scalars s;
} product_job;

static pith_status product_fill(const void *ctx, pith_tensor *dst)
{
    const product_job *job = ctx;
    return product_run(job->plan, job->a, job->b, job->addend, job->s, dst);
}

static pith_status product_into(pith_value *ret, const char *name, const matmul_plan *plan,
                                const pith_tensor *a, const pith_tensor *b,
                                const pith_tensor *addend, matmul_scalars s,
                                pith_tensor *target)
{
    if (out_target_check(name, target, plan->out_ndim, plan->out_sizes, a->dtype, a) !=
            PITH_OK ||
        devices_check(name, b, target) != PITH_OK)
        return pith_last_status();
    const pith_tensor *inputs[3] = {a, b, addend};
    product_job job = {plan, a, b, addend, s};
    return out_target_write(ret, name, target, inputs, 3, false, product_fill, &job);
}

/* The shared tail of every op: validate the addend, make the output (or check `target`,
 * the out= tensor, when not NULL), and (on CPU) run. */
static pith_status matmul_exec(pith_value *ret, const char *name, const pith_tensor *a,
                               const mm_view *va, const pith_tensor *b, const mm_view *vb,
                               const pith_tensor *addend, matmul_scalars s, pith_device device,
                               const pith_tensor *target)
{
    matmul_plan plan;
    if (plan_build(name, va, vb, &plan) != PITH_OK)
        return pith_last_status();
    if (addend && broadcast_check(name, addend, plan.out_ndim, plan.out_sizes) != PITH_OK)
        return pith_last_status();
    if (device == PITH_CPU &&
        (reduce_check_cpu(name, a) != PITH_OK || reduce_check_cpu(name, b) != PITH_OK ||
         reduce_check_cpu(name, addend) != PITH_OK))
        return pith_last_status();
    if (target)
        return product_into(ret, name, &plan, a, b, addend, s, (pith_tensor *)target);
    product_job job = {&plan, a, b, addend, s};
    return out_target_new(ret, plan.out_ndim, plan.out_sizes, a->dtype, device, product_fill,
                          &job);
}

static const matmul_scalars plain_product = {1.0, 0.0, 1, 0, true};

static pith_status matmul_impl(pith_value *ret, const pith_tensor *self,
                               const pith_tensor *other, pith_device device,
                               const pith_tensor *target)
{
    mm_view va, vb;
    if (dtype_match("matmul", "m1", self, "m2", other) != PITH_OK)
        return PITH_ERR_TYPE;
    view_of(self, &va);
    view_of(other, &vb);
    return matmul_exec(ret, "matmul", self, &va, other, &vb, NULL, plain_product, device,
                       target);
}

static pith_status mm_impl(pith_value *ret, const pith_tensor *self, const pith_tensor *mat2,
                           pith_device device, const pith_tensor *target)
{
    mm_view va, vb;
    if (self->ndim != 2)
        return pith_set_error(PITH_ERR_VALUE, "mm: self must be a matrix, got %d-D", self->ndim);
    if (mat2->ndim != 2)
        return pith_set_error(PITH_ERR_VALUE, "mm: mat2 must be a matrix, got %d-D", mat2->ndim);
    if (dtype_match("mm", "m1", self, "m2", mat2) != PITH_OK)
        return PITH_ERR_TYPE;
    view_of(self, &va);
    view_of(mat2, &vb);
    return matmul_exec(ret, "mm", self, &va, mat2, &vb, NULL, plain_product, device,
                       target);
}

static pith_status bmm_impl(pith_value *ret, const pith_tensor *self, const pith_tensor *mat2,
                            pith_device device, const pith_tensor *target)
{
    mm_view va, vb;
    if (self->ndim != 3)
        return pith_set_error(PITH_ERR_VALUE, "bmm: batch1 must be a 3D tensor, got %d-D",
                              self->ndim);
    if (mat2->ndim != 3)
        return pith_set_error(PITH_ERR_VALUE, "bmm: batch2 must be a 3D tensor, got %d-D",
                              mat2->ndim);
    if (dtype_match("bmm", "m1", self, "m2", mat2) != PITH_OK)
        return PITH_ERR_TYPE;
    if (self->sizes[0] != mat2->sizes[0])
        return pith_set_error(PITH_ERR_VALUE,
                              "bmm: batch1 and batch2 must have same number of batches, got "
                              "%lld and %lld",
                              (long long)self->sizes[0], (long long)mat2->sizes[0]);
    if (self->sizes[2] != mat2->sizes[1])
        return pith_set_error(PITH_ERR_VALUE,
                              "bmm: Expected size for first two dimensions of batch2 tensor to "
                              "be: [%lld, %lld] but got: [%lld, %lld].",
                              (long long)self->sizes[0], (long long)self->sizes[2],
                              (long long)mat2->sizes[0], (long long)mat2->sizes[1]);
    view_of(self, &va);
    view_of(mat2, &vb);
    return matmul_exec(ret, "bmm", self, &va, mat2, &vb, NULL, plain_product, device,
                       target);
}

static pith_status addmm_impl(pith_value *ret, const pith_tensor *self, const pith_tensor *mat1,
                              const pith_tensor *mat2, pith_scalar beta, pith_scalar alpha,
                              pith_device device, const pith_tensor *target)
{
    mm_view va, vb;
    matmul_scalars s;
    if (mat1->ndim != 2)
        return pith_set_error(PITH_ERR_VALUE, "addmm: mat1 must be a matrix, got %d-D tensor",
                              mat1->ndim);
    if (mat2->ndim != 2)
        return pith_set_error(PITH_ERR_VALUE, "addmm: mat2 must be a matrix, got %d-D tensor",
                              mat2->ndim);
    if (dtype_match("addmm", "m1", mat1, "m2", mat2) != PITH_OK ||
        dtype_match("addmm", "self", self, "mat1", mat1) != PITH_OK ||
        scalars_make("addmm", mat1->dtype, alpha, beta, &s) != PITH_OK)
        return pith_last_status();
    view_of(mat1, &va);
    view_of(mat2, &vb);
    return matmul_exec(ret, "addmm", mat1, &va, mat2, &vb, self, s, device, target);
}

static pith_status linear_impl(pith_value *ret, const pith_tensor *input,
                               const pith_tensor *weight, const pith_tensor *bias,
                               pith_device device, const pith_tensor *target)
{
    mm_view va, vb;
    matmul_scalars s = plain_product;
    if (weight->ndim < 1 || weight->ndim > 2)
        return pith_set_error(PITH_ERR_VALUE, "linear: weight must be 1-D or 2-D, got %d-D",
                              weight->ndim);
    if (dtype_match("linear", "input", input, "weight", weight) != PITH_OK ||
        (bias && dtype_match("linear", "input", input, "bias", bias) != PITH_OK))
        return PITH_ERR_TYPE;
    if (bias) {
        s.beta = 1.0;
        s.beta_int = 1;
        s.beta_zero = false;
    }
    view_of(input, &va);
    view_transposed(weight, &vb);
    return matmul_exec(ret, "linear", input, &va, weight, &vb, bias, s, device, target);
}

/* ---- a GEMM head of a fused group (compile/fusion.c, Note [GEMM epilogues]) ---- */

bool matmul_fusable_of(const pith_op *op, const pith_value *args, size_t nargs,
                       matmul_fusable *f)
{
    const pith_tensor *a, *b, *addend = NULL;
    mm_view va, vb;
    matmul_scalars s = plain_product;
    memset(f, 0, sizeof *f);
    f->a = 0;
    f->b = 1;
    f->addend = -1;
    switch (op->builtin_id) {
    case PITH_OPID_matmul:
    case PITH_OPID_mm:
        if (nargs != 2 || unbox_TENSOR(op, 0, &args[0], &a) != PITH_OK ||
            unbox_TENSOR(op, 1, &args[1], &b) != PITH_OK ||
            (op->builtin_id == PITH_OPID_mm && (a->ndim != 2 || b->ndim != 2)))
            return false;
        view_of(a, &va);
        view_of(b, &vb);
        break;
    case PITH_OPID_addmm: {
        pith_scalar beta, alpha;
        if (nargs != 5 || unbox_TENSOR(op, 0, &args[0], &addend) != PITH_OK ||
            unbox_TENSOR(op, 1, &args[1], &a) != PITH_OK ||
            unbox_TENSOR(op, 2, &args[2], &b) != PITH_OK ||
            unbox_SCALAR(op, 3, &args[3], &beta) != PITH_OK ||
            unbox_SCALAR(op, 4, &args[4], &alpha) != PITH_OK || a->ndim != 2 || b->ndim != 2 ||
            addend->dtype != a->dtype ||
            scalars_make("addmm", a->dtype, alpha, beta, &s) != PITH_OK)
            return false;
        f->a = 1;
        f->b = 2;
        f->addend = 0;
        view_of(a, &va);
        view_of(b, &vb);
        break;
    }
    case PITH_OPID_linear:
        if (nargs != 3 || unbox_TENSOR(op, 0, &args[0], &a) != PITH_OK ||
            unbox_TENSOR(op, 1, &args[1], &b) != PITH_OK ||
            unbox_OPT_TENSOR(op, 2, &args[2], &addend) != PITH_OK || b->ndim < 1 ||
            b->ndim > 2 || (addend && addend->dtype != a->dtype))
            return false;
        if (addend) {
            s.beta = 1.0;
            s.beta_int = 1;
            s.beta_zero = false;
            f->addend = 2;
        }
        view_of(a, &va);
        view_transposed(b, &vb);
        break;
    default:
        return false;
    }
    if (a->dtype != b->dtype || (a->dtype != PITH_FLOAT32 && a->dtype != PITH_FLOAT64) ||
        plan_build("matmul", &va, &vb, &f->plan) != PITH_OK ||
        !linalg_flat_of(&f->plan, &f->flat) || f->plan.out_ndim < 1)
        return false;
    if (s.beta_zero) /* C is not read: nothing is added */
        f->addend = -1;
    const matmul_plan *p = &f->plan;
    int nd = p->out_ndim;
    /* Panels split the last dim of the result: it must be the product's columns. */
    f->panelable = b->ndim >= 2 && p->out_sizes[nd - 1] == f->flat.m;
    if (f->addend >= 0) {
        if (broadcast_check("matmul", addend, nd, p->out_sizes) != PITH_OK)
            return false;
        /* The addend's element strides over the result's dims, then as [rows, columns]:
         * the dims before the last must chain into one. */
        int64_t st[PITH_MAX_DIMS];
        for (int d = 0; d < nd; d++) {
            int i = d - (nd - addend->ndim);
            st[d] = i >= 0 && addend->sizes[i] != 1 ? addend->strides[i] : 0;
        }
        f->addend_cs = st[nd - 1];
        f->addend_rs = nd >= 2 ? st[nd - 2] : 0;
        for (int d = nd - 3; d >= 0; d--)
            if (p->out_sizes[d] != 1 && st[d] != st[d + 1] * p->out_sizes[d + 1])
                f->panelable = false;
    }
    f->dtype = a->dtype;
    f->s = s;
    return true;
}

pith_status matmul_fusable_run(const matmul_fusable *f, const pith_tensor *a,
                               const pith_tensor *b, const pith_tensor *addend,
                               pith_tensor *dst)
{
    return product_run(&f->plan, a, b, f->addend >= 0 ? addend : NULL, f->s, dst);
}

void matmul_fusable_panel(const matmul_fusable *f, const char *a, const char *b,
                          const char *addend, char *c, int64_t lo, int64_t hi)
{
    size_t elem = pith_dtype_size(f->dtype);
    if (f->addend >= 0) /* the addend broadcast into the panel, as broadcast_fill does */
        for (int64_t r = 0; r < f->flat.n; r++) {
            char *to = c + ((size_t)(r * f->flat.m + lo)) * elem;
            const char *from = addend + (r * f->addend_rs + lo * f->addend_cs) * (int64_t)elem;
            if (f->addend_cs == 1)
                memcpy(to, from, (size_t)(hi - lo) * elem);
            else
                for (int64_t j = 0; j < hi - lo; j++)
                    memcpy(to + (size_t)j * elem, from + j * f->addend_cs * (int64_t)elem, elem);
        }
    linalg_panel_run(f->dtype, &f->flat, a, b, c, f->s, lo, hi);
}

/* ---- the kernels ---- */

/* The functional and out= kernels of each product, for both devices (device_kernel in
 * ops/ops.toml: their <id>_cpu and <id>_meta are in ops/generated/device_forwarders.c). */
pith_status matmul_kernel(pith_keyset ks, pith_value *ret, const pith_tensor *self,
                         const pith_tensor *other, pith_device device)
{
    return matmul_impl(ret, self, other, device, NULL);
}

pith_status matmul_out_kernel(pith_keyset ks, pith_value *ret, const pith_tensor *self,
                             const pith_tensor *other, const pith_tensor *out, pith_device device)
{
    return matmul_impl(ret, self, other, device, out);
}

pith_status mm_kernel(pith_keyset ks, pith_value *ret, const pith_tensor *self,
                     const pith_tensor *mat2, pith_device device)
{
    return mm_impl(ret, self, mat2, device, NULL);
}

pith_status mm_out_kernel(pith_keyset ks, pith_value *ret, const pith_tensor *self,
                         const pith_tensor *mat2, const pith_tensor *out, pith_device device)
{
    return mm_impl(ret, self, mat2, device, out);
}

pith_status bmm_kernel(pith_keyset ks, pith_value *ret, const pith_tensor *self,
                      const pith_tensor *mat2, pith_device device)
{
    return bmm_impl(ret, self, mat2, device, NULL);
}

pith_status bmm_out_kernel(pith_keyset ks, pith_value *ret, const pith_tensor *self,
                          const pith_tensor *mat2, const pith_tensor *out, pith_device device)
{
    return bmm_impl(ret, self, mat2, device, out);
}

pith_status addmm_kernel(pith_keyset ks, pith_value *ret, const pith_tensor *self,
                         const pith_tensor *mat1, const pith_tensor *mat2, pith_scalar beta,
                         pith_scalar alpha, pith_device device)
{
    return addmm_impl(ret, self, mat1, mat2, beta, alpha, device, NULL);
}

pith_status addmm_out_kernel(pith_keyset ks, pith_value *ret, const pith_tensor *self,
                             const pith_tensor *mat1, const pith_tensor *mat2, pith_scalar beta,
                             pith_scalar alpha, const pith_tensor *out, pith_device device)
{
    return addmm_impl(ret, self, mat1, mat2, beta, alpha, device, out);
}

pith_status linear_kernel(pith_keyset ks, pith_value *ret, const pith_tensor *input,
                          const pith_tensor *weight, const pith_tensor *bias, pith_device device)
{
    return linear_impl(ret, input, weight, bias, device, NULL);
}

pith_status linear_out_kernel(pith_keyset ks, pith_value *ret, const pith_tensor *input,
                              const pith_tensor *weight, const pith_tensor *bias,
                              const pith_tensor *out, pith_device device)
{
    return linear_impl(ret, input, weight, bias, device, out);
}
