/* einsum.c — the einsum composite: the plan of einsum_plan.c lowered to views, sum, mul
 * and bmm, so that every matrix-shaped contraction runs through the batched matrix
 * product (BLAS for float32 and float64). Being a composite, it is its own meta function,
 * and its gradient comes from the ops it calls (See Note [Composites call their parts
 * through the dispatcher], ops_internal.h).
 *
 * Note [Einsum's contraction]
 * The lowering is PyTorch's, so results, result dtypes and errors agree with it (an
 * integer sum gives int64 there too; operands of two dtypes meet in bmm, which refuses
 * them, or in mul, which promotes):
 *   1. Each operand becomes a view with one dim per aligned index it has (repeated labels
 *      are diagonals: one dim whose stride is the sum of theirs), in index order.
 *   2. One operand: the view itself when nothing is summed (einsum("ij->ji", x) is a view
 *      of x, as in PyTorch), else its sum over the summed indices.
 *   3. Several: operands are contracted in pairs, left to right (or in the order of
 *      `path`, opt_einsum's format, the product going to the end of the list). Before a
 *      pair is multiplied, a summed index that no other operand has is summed away in the
 *      one operand that has it; a summed index that both have and no other operand does
 *      is summed in the product: the two are permuted to (shared kept, own kept, summed),
 *      flattened to 3-D and multiplied by bmm. When nothing is summed in the product, it
 *      is a broadcasting mul.
 * Unlike PyTorch, an operand here keeps only its dims of size other than 1 (a dim of size
 * one broadcasts, so it is as if the operand did not have the index): intermediate
 * results then have at most as many dims as the indices still needed, and the size-one
 * dims come back when the result is viewed with the output's shape. So only the output's
 * and the intermediates' dims count against PITH_MAX_DIMS, not every label of the
 * equation. */
#include <stdlib.h>
#include <string.h>

#include "kernels/einsum.h"
#include "kernels/ops_internal.h"
#include "kernels/reduce.h"

/* An operand or an intermediate result: a tensor whose dim d is aligned index index[d],
 * increasing with d. */
typedef struct {
    pith_tensor *t;
    int index[PITH_MAX_DIMS];
} einsum_term;

static int term_find(const einsum_term *term, int index)
{
    for (int d = 0; d < term->t->ndim; d++)
        if (term->index[d] == index)
            return d;
    return -1;
}

static int64_t add_wrap(int64_t a, int64_t b)
{
    return (int64_t)((uint64_t)a + (uint64_t)b);
}

/* Step 1's view of operand `t` made of ops, so that it records (See Note [Composites call
 * their parts through the dispatcher], ops_internal.h): a diagonal (a label repeated in the
 * operand) is an as_strided view; otherwise the operand's dims are permuted into index
 * order (unless they are in it) and the dims of size one that the term drops are dropped
 * by a view; with nothing to do, the view is the operand itself. */
static pith_tensor *operand_view_recorded(const einsum_operand *op, const pith_tensor *t,
                                          pith_int_list sizes, pith_int_list strides)
{
    int64_t perm[PITH_MAX_DIMS]; /* t's dims sorted by their index (stable) */
    bool diagonal = false, permuted = false;
    for (int d = 0; d < op->ndim; d++) {
        int at = d;
        for (; at > 0 && op->index_of_dim[perm[at - 1]] > op->index_of_dim[d]; at--)
            perm[at] = perm[at - 1];
        diagonal = diagonal || (at > 0 && op->index_of_dim[perm[at - 1]] == op->index_of_dim[d]);
        permuted = permuted || at != d;
        perm[at] = d;
    }
    pith_value v[1];
    if (diagonal) {
        pith_opt_int offset = {true, t->offset};
        return pith_call_as_strided(v, t, sizes, strides, offset) == PITH_OK ? v[0].u.t : NULL;
    }
    pith_tensor *in_order = (pith_tensor *)t;
    if (!permuted)
        pith_retain(in_order);
    else if (pith_call_permute(v, t, (pith_int_list){perm, (size_t)op->ndim}) == PITH_OK)
        in_order = v[0].u.t;
    else
        return NULL;
    if (sizes.n == (size_t)in_order->ndim)
        return in_order;
    pith_status status = pith_call_view(v, in_order, sizes);
    pith_release(in_order);
    return status == PITH_OK ? v[0].u.t : NULL;
}

/* Step 1: operand `k` as a term, keeping its dims of size one when `keep_ones`: a view of
 * it, made of ops when einsum runs at Autograd (`at_autograd`). */
static pith_status term_of_operand(const einsum_plan *plan, size_t k, const pith_tensor *t,
                                   bool keep_ones, bool at_autograd, einsum_term *term)
{
    const einsum_operand *op = &plan->ops[k];
    int64_t sizes[PITH_MAX_DIMS], strides[PITH_MAX_DIMS];
    int n = 0;
    for (int index = 0; index < plan->nindices; index++) {
        int64_t size = -1, stride = 0;
        for (int d = 0; d < op->ndim; d++)
            if (op->index_of_dim[d] == index) {
                size = t->sizes[d];
                stride = add_wrap(stride, t->strides[d]);
            }
        if (size < 0 || (size == 1 && !keep_ones))
            continue;
        sizes[n] = size;
        strides[n] = stride;
        term->index[n++] = index;
    }
    if (at_autograd)
        term->t = operand_view_recorded(op, t, (pith_int_list){sizes, (size_t)n},
                                        (pith_int_list){strides, (size_t)n});
    else
        term->t = tensor_view(t, n, sizes, strides, t->offset);
    return term->t ? PITH_OK : pith_last_status();
}

/* The term's sum over the dims holding `indices` (n > 0 of them). */
static pith_status term_sum(einsum_term *term, const int *indices, int n)
{
    int64_t dims[PITH_MAX_DIMS];
    int kept[PITH_MAX_DIMS], nkept = 0;
    for (int i = 0; i < n; i++)
        dims[i] = term_find(term, indices[i]);
    for (int d = 0; d < term->t->ndim; d++) {
        bool summed = false;
        for (int i = 0; i < n; i++)
            summed = summed || dims[i] == d;
        if (!summed)
            kept[nkept++] = term->index[d];
    }
    pith_value v[1];
    pith_opt_int_list list = {true, {dims, (size_t)n}};
    if (pith_call_sum(v, term->t, list, false, -1) != PITH_OK)
        return pith_last_status();
    pith_release(term->t);
    term->t = v[0].u.t;
    memcpy(term->index, kept, sizeof(int) * (size_t)nkept);
    return PITH_OK;
}

static pith_status too_many_dims(int n)
{
    return pith_set_error(PITH_ERR_NOT_IMPLEMENTED,
                          "einsum(): an intermediate result would have %d dims; a pith tensor "
                          "has at most %d",
                          n, PITH_MAX_DIMS);
}

/* `term` viewed over the indices `u` (a superset of its own, increasing), with size-one
 * dims where it has none: by the view op `at_autograd`. */
static pith_tensor *term_aligned(const einsum_term *term, const int *u, int nu, bool at_autograd)
{
    int64_t sizes[PITH_MAX_DIMS], strides[PITH_MAX_DIMS];
    for (int i = 0; i < nu; i++) {
        int d = term_find(term, u[i]);
        sizes[i] = d >= 0 ? term->t->sizes[d] : 1;
        strides[i] = d >= 0 ? term->t->strides[d] : 0;
    }
    if (!at_autograd)
        return tensor_view(term->t, nu, sizes, strides, term->t->offset);
    pith_value v[1];
    if (pith_call_view(v, term->t, (pith_int_list){sizes, (size_t)nu}) != PITH_OK)
        return NULL;
    return v[0].u.t;
}

/* Permutes `t` (whose dims are `order`'s positions in `term`) and reshapes it to 3-D. */
static pith_tensor *term_as_batch(const einsum_term *term, const int *order, int n,
                                  const int64_t shape[3])
{
    int64_t dims[PITH_MAX_DIMS];
    for (int i = 0; i < n; i++)
        dims[i] = term_find(term, order[i]);
    pith_value v[1];
    if (pith_call_permute(v, term->t, (pith_int_list){dims, (size_t)n}) != PITH_OK)
        return NULL;
    pith_tensor *permuted = v[0].u.t;
    pith_status status = pith_call_reshape(v, permuted, (pith_int_list){shape, 3});
    pith_release(permuted);
    return status == PITH_OK ? v[0].u.t : NULL;
}

/* PyTorch's bmm refuses two dtypes, and bool unless a product is empty, where pith's bmm
 * takes bool: einsum keeps PyTorch's errors. Its message names the kernel that refuses
 * bool: its own loop for small products, addmm's otherwise. */
static pith_status bmm_dtypes_check(const pith_tensor *a, const pith_tensor *b)
{
    if (a->dtype == PITH_BOOL && a->numel > 0 && b->numel > 0) {
        bool small = a->sizes[1] * a->sizes[2] * b->sizes[2] < 400; /* sizes of tensors: fits */
        return pith_set_error(PITH_ERR_NOT_IMPLEMENTED, "\"%s\" not implemented for 'Bool'",
                              small ? "bmm" : "addmm_impl_cpu_");
    }
    if (a->dtype != b->dtype)
        return pith_set_error(PITH_ERR_VALUE, "expected scalar type %s but found %s",
                              reduce_torch_dtype_name(a->dtype), reduce_torch_dtype_name(b->dtype));
    return PITH_OK;
}

/* The product of a and b summed over `summed` (indices both have), as a new term. */
static pith_status term_product(const einsum_plan *plan, const einsum_term *a,
                                const einsum_term *b, const int *summed, int nsummed,
                                bool at_autograd, einsum_term *out)
{
    int u[EINSUM_MAX_INDICES], nu = 0, lro[PITH_MAX_DIMS], lo[PITH_MAX_DIMS], ro[PITH_MAX_DIMS];
    int nlro = 0, nlo = 0, nro = 0;
    int64_t lro_size = 1, lo_size = 1, ro_size = 1, sum_size = 1;
    for (int index = 0; index < plan->nindices; index++) {
        bool in_a = term_find(a, index) >= 0, in_b = term_find(b, index) >= 0, is_summed = false;
        for (int i = 0; i < nsummed; i++)
            is_summed = is_summed || summed[i] == index;
        if (is_summed) {
            sum_size *= plan->sizes[index];
            continue;
        }
        if (!in_a && !in_b)
            continue;
        u[nu++] = index;
        if (nu > PITH_MAX_DIMS)
            return too_many_dims(nu);
        if (in_a && in_b) {
            lro[nlro++] = index;
            lro_size *= plan->sizes[index];
        } else if (in_a) {
            lo[nlo++] = index;
            lo_size *= plan->sizes[index];
        } else {
            ro[nro++] = index;
            ro_size *= plan->sizes[index];
        }
    }
    pith_value v[1];
    memcpy(out->index, u, sizeof(int) * (size_t)nu);
    if (nsummed == 0) { /* a broadcasting product */
        pith_tensor *left = term_aligned(a, u, nu, at_autograd);
        pith_tensor *right = left ? term_aligned(b, u, nu, at_autograd) : NULL;
        pith_status status = right ? pith_call_mul(v, left, right) : pith_last_status();
        pith_release(left);
        pith_release(right);
        out->t = status == PITH_OK ? v[0].u.t : NULL;
        return status;
    }
    int left_order[PITH_MAX_DIMS], right_order[PITH_MAX_DIMS], nl = 0, nr = 0;
    for (int i = 0; i < nlro; i++)
        left_order[nl++] = right_order[nr++] = lro[i];
    for (int i = 0; i < nlo; i++)
        left_order[nl++] = lo[i];
    for (int i = 0; i < nsummed; i++)
        left_order[nl++] = right_order[nr++] = summed[i];
    for (int i = 0; i < nro; i++)
        right_order[nr++] = ro[i];
    int64_t left_shape[3] = {lro_size, lo_size, sum_size};
    int64_t right_shape[3] = {lro_size, sum_size, ro_size};
    pith_tensor *left = term_as_batch(a, left_order, nl, left_shape);
    pith_tensor *right = left ? term_as_batch(b, right_order, nr, right_shape) : NULL;
    pith_status status = right ? bmm_dtypes_check(left, right) : pith_last_status();
    if (status == PITH_OK)
        status = pith_call_bmm(v, left, right);
    pith_release(left);
    pith_release(right);
    if (status != PITH_OK)
        return status;
    /* bmm's [lro, lo, ro] result, unflattened and permuted into index order */
    pith_tensor *product = v[0].u.t;
    int64_t sizes[PITH_MAX_DIMS], perm[PITH_MAX_DIMS];
    int order[PITH_MAX_DIMS], n = 0;
    for (int i = 0; i < nlro; i++)
        order[n++] = lro[i];
    for (int i = 0; i < nlo; i++)
        order[n++] = lo[i];
    for (int i = 0; i < nro; i++)
        order[n++] = ro[i];
    for (int i = 0; i < n; i++) {
        sizes[i] = plan->sizes[order[i]];
        for (int k = 0; k < n; k++)
            if (order[k] == u[i])
                perm[i] = k;
    }
    status = pith_call_view(v, product, (pith_int_list){sizes, (size_t)n});
    pith_release(product);
    if (status != PITH_OK)
        return status;
    pith_tensor *unflat = v[0].u.t;
    status = pith_call_permute(v, unflat, (pith_int_list){perm, (size_t)n});
    pith_release(unflat);
    out->t = status == PITH_OK ? v[0].u.t : NULL;
    return status;
}

/* Step 3's pair: sums what only one of them has, then multiplies them. Takes ownership of
 * a's and b's tensors. */
static pith_status terms_contract(einsum_plan *plan, einsum_term *a, einsum_term *b,
                                  bool at_autograd, einsum_term *out)
{
    int summed[EINSUM_MAX_INDICES], a_only[EINSUM_MAX_INDICES], b_only[EINSUM_MAX_INDICES];
    int nsummed = 0, na = 0, nb = 0;
    for (int index = plan->out_ndim; index < plan->nindices; index++) {
        bool in_a = term_find(a, index) >= 0, in_b = term_find(b, index) >= 0;
        if (in_a && in_b) {
            if (--plan->counts[index] == 1) {
                summed[nsummed++] = index;
                plan->counts[index] = 0;
            }
        } else if (plan->counts[index] == 1 && (in_a || in_b)) {
            if (in_a)
                a_only[na++] = index;
            else
                b_only[nb++] = index;
            plan->counts[index] = 0;
        }
    }
    pith_status status = PITH_OK;
    if (na > 0)
        status = term_sum(a, a_only, na);
    if (status == PITH_OK && nb > 0)
        status = term_sum(b, b_only, nb);
    if (status == PITH_OK)
        status = term_product(plan, a, b, summed, nsummed, at_autograd, out);
    pith_release(a->t);
    pith_release(b->t);
    a->t = b->t = NULL;
    return status;
}

static pith_status path_check(pith_opt_int_list path, size_t nops)
{
    size_t want = nops == 1 ? 1 : (nops - 1) * 2;
    if (path.present && path.list.n != want)
        return pith_set_error(PITH_ERR_VALUE,
                              "einsum(): expected contraction path given in path parameter to "
                              "have size %zu but got %zu",
                              want, path.list.n);
    return PITH_OK;
}

/* The pair of terms step `step` of `path` names (swapped into increasing order), checked
 * against the `n` terms left. */
static pith_status path_pair(pith_opt_int_list path, size_t step, size_t n, size_t *i, size_t *j)
{
    if (!path.present) {
        *i = 0;
        *j = 1;
        return PITH_OK;
    }
    int64_t x = path.list.data[2 * step], y = path.list.data[2 * step + 1];
    if (y < x) {
        int64_t t = x;
        x = y;
        y = t;
    }
    if (x == y || x < 0 || y >= (int64_t)n)
        return pith_set_error(PITH_ERR_VALUE, "einsum(): invalid contraction (%lld, %lld) %s",
                              (long long)x, (long long)y,
                              x == y ? "cannot contract an operand with itself"
                                     : "operand index is out of bounds");
    *i = (size_t)x;
    *j = (size_t)y;
    return PITH_OK;
}

/* Step 3 over every operand; the result, viewed with the output's shape, goes to ret. */
static pith_status contract_all(pith_value *ret, einsum_plan *plan, pith_tensor_list tensors,
                                pith_opt_int_list path, bool at_autograd)
{
    size_t n = tensors.n;
    einsum_term *terms = calloc(n, sizeof *terms);
    if (!terms)
        return pith_set_error(PITH_ERR_NOMEM, "einsum(): cannot allocate %zu operands", n);
    pith_status status = PITH_OK;
    for (size_t k = 0; k < n && status == PITH_OK; k++)
        status = term_of_operand(plan, k, tensors.data[k], false, at_autograd, &terms[k]);
    for (size_t step = 0; status == PITH_OK && n > 1; step++) {
        size_t i, j;
        if ((status = path_pair(path, step, n, &i, &j)) != PITH_OK)
            break;
        einsum_term a = terms[i], b = terms[j], product = {0};
        memmove(terms + j, terms + j + 1, (n - j - 1) * sizeof *terms);
        memmove(terms + i, terms + i + 1, (n - i - 2) * sizeof *terms);
        n -= 2;
        status = terms_contract(plan, &a, &b, at_autograd, &product);
        if (status != PITH_OK)
            break;
        if (path.present) {
            terms[n] = product;
        } else {
            memmove(terms + 1, terms, n * sizeof *terms);
            terms[0] = product;
        }
        n++;
    }
    if (status == PITH_OK)
        status = pith_call_view(ret, terms[0].t,
                                (pith_int_list){plan->sizes, (size_t)plan->out_ndim});
    for (size_t k = 0; k < n; k++)
        pith_release(terms[k].t);
    free(terms);
    return status;
}

/* Step 2. */
static pith_status contract_one(pith_value *ret, const einsum_plan *plan, const pith_tensor *t,
                                bool at_autograd)
{
    einsum_term term;
    if (term_of_operand(plan, 0, t, true, at_autograd, &term) != PITH_OK)
        return pith_last_status();
    if (plan->nindices == plan->out_ndim) {
        if (term.t != t)
            return ret_tensor(ret, term.t);
        /* nothing to do ("ij->ij"): still a new view of t, as PyTorch's permute is */
        int64_t same[PITH_MAX_DIMS];
        for (int d = 0; d < t->ndim; d++)
            same[d] = d;
        pith_release(term.t);
        return pith_call_permute(ret, t, (pith_int_list){same, (size_t)t->ndim});
    }
    int64_t dims[PITH_MAX_DIMS];
    size_t n = 0;
    for (int d = plan->out_ndim; d < term.t->ndim; d++)
        dims[n++] = d;
    pith_opt_int_list list = {true, {dims, n}};
    pith_status status = pith_call_sum(ret, term.t, list, false, -1);
    pith_release(term.t);
    return status;
}

pith_status einsum_composite(pith_keyset ks, pith_value *ret, const char *equation,
                             pith_tensor_list tensors, pith_opt_int_list path)
{
    size_t n = tensors.n;
    if (n == 0)
        return pith_set_error(PITH_ERR_VALUE, "einsum(): must provide at least one operand");
    if (path_check(path, n) != PITH_OK)
        return pith_last_status();
    int small_ndims[16], *ndims = n <= 16 ? small_ndims : malloc(n * sizeof *ndims);
    const int64_t *small_sizes[16], **sizes = n <= 16 ? small_sizes : malloc(n * sizeof *sizes);
    pith_status status = PITH_OK;
    if (!ndims || !sizes) {
        status = pith_set_error(PITH_ERR_NOMEM, "einsum(): cannot allocate %zu operands", n);
    } else {
        for (size_t i = 0; i < n; i++) {
            ndims[i] = tensors.data[i]->ndim;
            sizes[i] = tensors.data[i]->sizes;
        }
        einsum_plan plan;
        status = einsum_plan_make(equation, n, ndims, sizes, &plan);
        if (status == PITH_OK) {
            bool at_autograd = composite_at_autograd(ks);
            status = n == 1 ? contract_one(ret, &plan, tensors.data[0], at_autograd)
                            : contract_all(ret, &plan, tensors, path, at_autograd);
            einsum_plan_free(&plan);
        }
    }
    if (ndims != small_ndims)
        free(ndims);
    if (sizes != small_sizes)
        free(sizes);
    return status;
}
