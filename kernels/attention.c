/* attention.c — the fused attention of scaled_dot_product_attention (CPU and Meta
 * kernels): _scaled_dot_product_fused_attention (the output and each row's logsumexp) and
 * _scaled_dot_product_attention_weights (the weights again, from the logsumexp), for
 * float32 and float64.
 *
 * Note [Fused attention]
 * query (..., L, E), key (..., S, E) and value (..., S, Ev) have the same batch dims (no
 * broadcasting: pith.nn.functional broadcasts and upcasts before it calls); attn_mask, bool
 * (True attends) or additive of query's dtype, broadcasts to (..., L, S) and is read through
 * its strides; is_causal masks above the diagonal of the top-left aligned (L, S) matrix. Per
 * row of scores s = scale * q k^T (+ mask), in the dtype itself: m = max(s),
 * logsumexp = m + log(sum(exp(s - m))), weights = exp(s - m) / sum, output = weights @ v.
 * A row whose scores are all -inf attends nothing, as pith's composed path and PyTorch's
 * safe softmax: its weights and output are 0 and its logsumexp is -inf, from which the
 * weights kernel gives weights 0 again (not exp(-inf + inf)), so its gradients are 0 too.
 * A NaN score makes the row's weights, output and logsumexp NaN (the composed softmax's).
 * With E == 0 the scores are 0 whatever the scale, as in PyTorch. Only the output and the
 * logsumexp are kept: the derivative (ops/ops.toml) recomputes the weights with the second
 * op, so the (..., L, S) weights are not saved for backward, as PyTorch's fused CPU kernel
 * does. The weights live in a scratch buffer for the forward's duration. A 4-D output
 * (B, H, L, Ev) is laid out as (B, L, H, Ev), as PyTorch's kernel lays its output out: the
 * usual y.transpose(1, 2).contiguous().view(B, L, H * Ev) after it is then a view, so the
 * next layer saves the attention's output storage, not a copy of it (the GPT block of
 * benchmarks/autograd.py saves 512 KB less). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/parallel.h"
#include "kernels/linalg.h"
#include "kernels/ops_internal.h"
#include "kernels/reduce.h"
#include "kernels/vecmath.h"

typedef struct {
    int nbatch;                    /* query's dims before the last two */
    const int64_t *batch;          /* their sizes (query's) */
    int64_t n, L, S, E, Ev;        /* n: the product of the batch sizes */
    bool has_mask, mask_bool;
    int64_t mask_strides[PITH_MAX_DIMS]; /* broadcast to (batch..., L, S): 0 where it repeats */
} attn_shape;

static pith_status attn_check(const char *name, const pith_tensor *q, const pith_tensor *k,
                              const pith_tensor *v, const pith_tensor *lse,
                              const pith_tensor *mask, bool is_causal, pith_device device,
                              attn_shape *sh)
{
    const pith_tensor *all[] = {q, k, v, lse, mask};
    if (device == PITH_CPU)
        for (int i = 0; i < 5; i++)
            if (all[i] && reduce_check_cpu(name, all[i]) != PITH_OK)
                return pith_last_status();
    if (q->dtype != PITH_FLOAT32 && q->dtype != PITH_FLOAT64)
        return pith_set_error(PITH_ERR_TYPE, "%s: query must be float32 or float64, not %s",
                              name, pith_dtype_name(q->dtype));
    if (k->dtype != q->dtype || (v && v->dtype != q->dtype) || (lse && lse->dtype != q->dtype))
        return pith_set_error(PITH_ERR_TYPE, "%s: key, value and logsumexp must have "
                              "query's dtype (%s)", name, pith_dtype_name(q->dtype));
    int nb = q->ndim - 2;
    if (q->ndim < 2 || k->ndim != q->ndim || (v && v->ndim != q->ndim))
        return pith_set_error(PITH_ERR_VALUE, "%s: query, key and value must have the same "
                              "number of dims, at least 2 (got %d, %d and %d)", name, q->ndim,
                              k->ndim, v ? v->ndim : k->ndim);
    for (int d = 0; d < nb; d++)
        if (k->sizes[d] != q->sizes[d] || (v && v->sizes[d] != q->sizes[d]))
            return pith_set_error(PITH_ERR_VALUE, "%s: query, key and value must have the "
                                  "same batch sizes (dim %d: %lld, %lld, %lld)", name, d,
                                  (long long)q->sizes[d], (long long)k->sizes[d],
                                  (long long)(v ? v->sizes[d] : k->sizes[d]));
    sh->nbatch = nb;
    sh->batch = q->sizes;
    sh->L = q->sizes[nb];
    sh->E = q->sizes[nb + 1];
    sh->S = k->sizes[nb];
    sh->Ev = v ? v->sizes[nb + 1] : 0;
    if (k->sizes[nb + 1] != sh->E || (v && v->sizes[nb] != sh->S))
        return pith_set_error(PITH_ERR_VALUE, "%s: key must be (..., S, E) with query's E "
                              "(%lld) and value (..., S, Ev) with key's S (%lld)", name,
                              (long long)sh->E, (long long)sh->S);
    sh->n = 1;
    for (int d = 0; d < nb; d++)
        sh->n *= q->sizes[d];
    if (lse && (lse->ndim != nb + 1 || lse->sizes[nb] != sh->L ||
                !shape_equal(nb, lse->sizes, nb, q->sizes)))
        return pith_set_error(PITH_ERR_VALUE, "%s: logsumexp must have query's sizes "
                              "without its last dim", name);
    sh->has_mask = mask != NULL;
    sh->mask_bool = mask && mask->dtype == PITH_BOOL;
    if (!mask)
        return PITH_OK;
    if (is_causal)
        return pith_set_error(PITH_ERR_VALUE, "%s: attn_mask and is_causal cannot both be "
                              "set", name);
    if (mask->dtype != PITH_BOOL && mask->dtype != q->dtype)
        return pith_set_error(PITH_ERR_TYPE, "%s: attn_mask must be bool or of query's dtype "
                              "(%s), not %s", name, pith_dtype_name(q->dtype),
                              pith_dtype_name(mask->dtype));
    if (mask->ndim > q->ndim)
        return pith_set_error(PITH_ERR_VALUE, "%s: attn_mask has more dims (%d) than query "
                              "(%d)", name, mask->ndim, q->ndim);
    for (int d = 0; d < q->ndim; d++) {
        int md = d - (q->ndim - mask->ndim);
        int64_t want = d < nb ? q->sizes[d] : d == nb ? sh->L : sh->S;
        int64_t have = md < 0 ? 1 : mask->sizes[md];
        if (have != want && have != 1)
            return pith_set_error(PITH_ERR_VALUE, "%s: attn_mask (dim %d of size %lld) does "
                                  "not broadcast to the scores' size %lld", name, md,
                                  (long long)have, (long long)want);
        sh->mask_strides[d] = md < 0 || have == 1 ? 0 : mask->strides[md];
    }
    return PITH_OK;
}

/* C (batch..., n, m), contiguous = alpha * A @ B with A's and B's batch dims and strides. */
static pith_status attn_gemm(pith_dtype dtype, const attn_shape *sh, int64_t n, int64_t k,
                             int64_t m, const char *a_data, const int64_t *a_strides, const char *b_data,
                             const int64_t *b_strides, bool b_trans, char *c, double alpha)
{
    matmul_plan p = {0};
    int nb = sh->nbatch;
    p.nbatch = nb;
    for (int d = 0; d < nb; d++) {
        p.batch[d] = sh->batch[d];
        p.a_batch_strides[d] = a_strides[d];
        p.b_batch_strides[d] = b_strides[d];
        p.out_sizes[d] = sh->batch[d];
    }
    p.n = n;
    p.k = k;
    p.m = m;
    p.a_rs = a_strides[nb];
    p.a_cs = a_strides[nb + 1];
    p.b_rs = b_trans ? b_strides[nb + 1] : b_strides[nb];
    p.b_cs = b_trans ? b_strides[nb] : b_strides[nb + 1];
    p.out_ndim = nb + 2;
    p.out_sizes[nb] = n;
    p.out_sizes[nb + 1] = m;
    matmul_scalars s = {alpha, 0.0, 1, 0, true};
    return linalg_run(dtype, &p, a_data, b_data, c, s);
}

/* The element offset in the mask of row `row` (of n * L) at column 0. */
static int64_t attn_mask_offset(const attn_shape *sh, int64_t row)
{
    int64_t i = row % sh->L, b = row / sh->L, off = i * sh->mask_strides[sh->nbatch];
    for (int d = sh->nbatch - 1; d >= 0; d--) {
        off += (b % sh->batch[d]) * sh->mask_strides[d];
        b /= sh->batch[d];
    }
    return off;
}

/* One row of scores into weights (in place): masked, then normalised (lse_out) or
 * exponentiated against a given logsumexp (lse_in). See Note [Fused attention]. */
#define ATTN_ROW_FN_(T, SUFFIX)                                                             \
    static void attn_row_##SUFFIX(const vecmath_table *vm, const attn_shape *sh, T *row,    \
                                  int64_t r, const char *mask, bool is_causal,             \
                                  const T *lse_in, T *lse_out)                              \
    {                                                                                       \
        int64_t S = sh->S, i = r % sh->L;                                                   \
        /* causal: only [0, i] attends; the rest is 0 in the weights */                     \
        int64_t len = is_causal && i + 1 < S ? i + 1 : S;                                   \
        for (int64_t j = len; j < S; j++)                                                   \
            row[j] = 0;                                                                     \
        if (sh->has_mask) {                                                                 \
            int64_t off = attn_mask_offset(sh, r), step = sh->mask_strides[sh->nbatch + 1]; \
            if (sh->mask_bool) {                                                            \
                const bool *m = (const bool *)mask + off;                                   \
                for (int64_t j = 0; j < len; j++)                                           \
                    if (!m[j * step])                                                       \
                        row[j] = (T)-INFINITY;                                              \
            } else {                                                                        \
                const T *m = (const T *)mask + off;                                         \
                for (int64_t j = 0; j < len; j++)                                           \
                    row[j] += m[j * step];                                                  \
            }                                                                               \
        }                                                                                   \
        T shift;                                                                            \
        if (lse_in) {                                                                       \
            shift = lse_in[r];                                                              \
        } else {                                                                            \
            shift = (T)-INFINITY;                                                           \
            bool nan = false;                                                               \
            for (int64_t j = 0; j < len; j++) {                                             \
                if (row[j] > shift)                                                         \
                    shift = row[j];                                                         \
                else if (row[j] != row[j])                                                  \
                    nan = true;                                                             \
            }                                                                               \
            if (nan)                                                                        \
                shift = (T)NAN;                                                             \
        }                                                                                   \
        if (shift == (T)-INFINITY) { /* attends nothing */                                  \
            for (int64_t j = 0; j < len; j++)                                               \
                row[j] = 0;                                                                 \
            if (lse_out)                                                                    \
                lse_out[r] = shift;                                                         \
            return;                                                                         \
        }                                                                                   \
        for (int64_t j = 0; j < len; j++)                                                   \
            row[j] -= shift;                                                                \
        vm->exp_##SUFFIX(row, row, len);                                                    \
        if (!lse_out)                                                                       \
            return;                                                                         \
        double sum = 0;                                                                     \
        for (int64_t j = 0; j < len; j++)                                                   \
            sum += (double)row[j];                                                          \
        T inv = (T)(1.0 / sum);                                                             \
        for (int64_t j = 0; j < len; j++)                                                   \
            row[j] *= inv;                                                                  \
        lse_out[r] = (T)((double)shift + log(sum));                                         \
    }
ATTN_ROW_FN_(float, f32)
ATTN_ROW_FN_(double, f64)

/* The weights (n, L, S), contiguous, into `w`: the scores, then each row. */
static pith_status attn_weights(const attn_shape *sh, pith_dtype dtype, const pith_tensor *q,
                                const pith_tensor *k, const pith_tensor *mask, bool is_causal,
                                double scale, const char *lse_in, char *lse_out, char *w)
{
    if (sh->S == 0) { /* no source positions: every row attends nothing */
        for (int64_t r = 0; lse_out && r < sh->n * sh->L; r++) {
            if (dtype == PITH_FLOAT32)
                ((float *)lse_out)[r] = -INFINITY;
            else
                ((double *)lse_out)[r] = -INFINITY;
        }
        return PITH_OK;
    }
    if (sh->E == 0) { /* the scores are 0 whatever the scale */
        size_t bytes = (size_t)(sh->n * sh->L * sh->S) * (dtype == PITH_FLOAT32 ? 4 : 8);
        memset(w, 0, bytes);
    } else if (attn_gemm(dtype, sh, sh->L, sh->E, sh->S, tensor_data(q), q->strides,
                         tensor_data(k), k->strides, true, w, scale) != PITH_OK) {
        return pith_last_status();
    }
    const vecmath_table *vm = vecmath_active();
    const char *m = mask ? tensor_data(mask) : NULL;
    int64_t rows = sh->n * sh->L, S = sh->S;
    int nthreads = parallel_threads_for(rows * S);
    if (dtype == PITH_FLOAT32)
        PITH_PARALLEL_FOR(r, rows, nthreads,
                          attn_row_f32(vm, sh, (float *)w + r * S, r, m, is_causal,
                                       (const float *)lse_in, (float *)lse_out););
    else
        PITH_PARALLEL_FOR(r, rows, nthreads,
                          attn_row_f64(vm, sh, (double *)w + r * S, r, m, is_causal,
                                       (const double *)lse_in, (double *)lse_out););
    return PITH_OK;
}

/* output = weights @ value into `out`: directly when it is contiguous, else (heads_last:
 * 4-D, laid out as (B, L, H, Ev)) through a contiguous buffer, copied row by row. */
static pith_status attention_output(const attn_shape *sh, pith_dtype dtype, const char *w,
                                    const int64_t *w_strides, const pith_tensor *value,
                                    pith_tensor *out, bool heads_last)
{
    if (!heads_last)
        return attn_gemm(dtype, sh, sh->L, sh->S, sh->Ev, w, w_strides, tensor_data(value),
                         value->strides, false, tensor_data(out), 1.0);
    size_t esize = dtype == PITH_FLOAT32 ? 4 : 8, row = (size_t)sh->Ev * esize;
    /* scratch from the tensor allocator, which reuses its blocks (a malloc this size is a
     * fresh mmap, page faults and all, at every call) */
    pith_tensor *scratch = tensor_new(out->ndim, out->sizes, dtype, PITH_CPU);
    if (!scratch)
        return pith_last_status();
    char *tmp = tensor_data(scratch);
    pith_status st = attn_gemm(dtype, sh, sh->L, sh->S, sh->Ev, w, w_strides,
                               tensor_data(value), value->strides, false, tmp, 1.0);
    if (st == PITH_OK) {
        int64_t B = out->sizes[0], H = out->sizes[1], L = sh->L;
        char *dst = tensor_data(out);
        for (int64_t b = 0; b < B; b++)
            for (int64_t h = 0; h < H; h++)
                for (int64_t i = 0; i < L; i++)
                    memcpy(dst + (size_t)(b * out->strides[0] + h * out->strides[1] +
                                          i * out->strides[2]) * esize,
                           tmp + (size_t)((b * H + h) * L + i) * row, row);
    }
    pith_release(scratch);
    return st;
}

/* The sizes of query with the last dim `last` (drop: without it). */
static int attn_sizes(const pith_tensor *q, int64_t last, bool drop, int64_t *sizes)
{
    for (int d = 0; d < q->ndim - 1; d++)
        sizes[d] = q->sizes[d];
    if (drop)
        return q->ndim - 1;
    sizes[q->ndim - 1] = last;
    return q->ndim;
}

pith_status _scaled_dot_product_fused_attention_kernel(pith_keyset ks, pith_value *ret,
                                                       const pith_tensor *query,
                                                       const pith_tensor *key,
                                                       const pith_tensor *value,
                                                       const pith_tensor *attn_mask,
                                                       bool is_causal, double scale,
                                                       pith_device device)
{
    (void)ks;
    static const char name[] = "_scaled_dot_product_fused_attention";
    attn_shape sh;
    if (attn_check(name, query, key, value, NULL, attn_mask, is_causal, device, &sh) != PITH_OK)
        return pith_last_status();
    int64_t sizes[PITH_MAX_DIMS];
    int nd = attn_sizes(query, sh.Ev, false, sizes);
    /* 4-D: (B, H, L, Ev) laid out as (B, L, H, Ev) (See Note [Fused attention]) */
    bool heads_last = query->ndim == 4;
    int64_t heads_strides[4] = {sh.L * sizes[1] * sh.Ev, sh.Ev, sizes[1] * sh.Ev, 1};
    pith_tensor *out = heads_last ? tensor_new_strided(nd, sizes, heads_strides, query->dtype,
                                                       device)
                                  : tensor_new(nd, sizes, query->dtype, device);
    nd = attn_sizes(query, 0, true, sizes);
    pith_tensor *lse = out ? tensor_new(nd, sizes, query->dtype, device) : NULL;
    if (!lse)
        goto fail;
    if (device == PITH_CPU && lse->numel > 0) {
        size_t esize = query->dtype == PITH_FLOAT32 ? 4 : 8;
        int64_t w_sizes[PITH_MAX_DIMS];
        pith_tensor *scratch = tensor_new(attn_sizes(query, sh.S, false, w_sizes), w_sizes,
                                          query->dtype, PITH_CPU);
        if (!scratch)
            goto fail;
        char *w = tensor_data(scratch);
        int64_t w_strides[PITH_MAX_DIMS];
        w_strides[sh.nbatch + 1] = 1;
        w_strides[sh.nbatch] = sh.S;
        for (int d = sh.nbatch - 1; d >= 0; d--)
            w_strides[d] = w_strides[d + 1] * (d + 1 == sh.nbatch ? sh.L : sh.batch[d + 1]);
        pith_status st = attn_weights(&sh, query->dtype, query, key, attn_mask, is_causal,
                                      scale, NULL, tensor_data(lse), w);
        if (st == PITH_OK && out->numel > 0) {
            if (sh.S == 0)
                memset(tensor_data(out), 0, (size_t)out->numel * esize);
            else
                st = attention_output(&sh, query->dtype, w, w_strides, value, out, heads_last);
        }
        pith_release(scratch);
        if (st != PITH_OK)
            goto fail;
    }
    ret[0].kind = ret[1].kind = PITH_VALUE_TENSOR;
    ret[0].u.t = out;
    ret[1].u.t = lse;
    return PITH_OK;
fail:
    pith_release(out);
    pith_release(lse);
    return pith_last_status();
}

pith_status _scaled_dot_product_attention_weights_kernel(pith_keyset ks, pith_value *ret,
                                                         const pith_tensor *query,
                                                         const pith_tensor *key,
                                                         const pith_tensor *logsumexp,
                                                         const pith_tensor *attn_mask,
                                                         bool is_causal, double scale,
                                                         pith_device device)
{
    (void)ks;
    static const char name[] = "_scaled_dot_product_attention_weights";
    attn_shape sh;
    if (attn_check(name, query, key, NULL, logsumexp, attn_mask, is_causal, device, &sh) !=
        PITH_OK)
        return pith_last_status();
    int64_t sizes[PITH_MAX_DIMS];
    int nd = attn_sizes(query, sh.S, false, sizes);
    pith_tensor *w = tensor_new(nd, sizes, query->dtype, device);
    if (!w)
        return pith_last_status();
    if (device == PITH_CPU && w->numel > 0) {
        pith_tensor *lse = NULL;
        pith_value r[1];
        if (pith_call_contiguous(r, logsumexp) != PITH_OK) {
            pith_release(w);
            return pith_last_status();
        }
        lse = r[0].u.t;
        pith_status st = attn_weights(&sh, query->dtype, query, key, attn_mask, is_causal,
                                      scale, tensor_data(lse), NULL, tensor_data(w));
        pith_release(lse);
        if (st != PITH_OK) {
            pith_release(w);
            return st;
        }
    }
    return ret_tensor(ret, w);
}
