/* einsum_plan.c — einsum's equation parser: the subscripts of each operand and of the
 * output, checked against the operands' ranks and sizes, become the aligned indices of
 * Note [Einsum's aligned indices] (einsum.h). No tensors here: the einsum composite
 * (einsum.c) and the tests call it with plain shapes.
 *
 * The grammar and every message follow PyTorch 2.13's einsum (aten/src/ATen/native/
 * Linear.cpp), in the same order: the operands' subscripts ("ij,jk"; spaces ignored;
 * one "..." per operand), then each operand's rank, then the output after the first
 * "->", then the sizes. */
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "kernels/einsum.h"

#define ELLIPSIS EINSUM_LETTERS /* the subscript code of "..." */

static bool is_letter(unsigned char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

/* Labels code as A-Z = 0..25, a-z = 26..51: the order of an implicit output. */
static int label_code(unsigned char c)
{
    return c >= 'a' ? c - 'a' + 26 : c - 'A';
}

static char label_char(int code)
{
    return (char)(code < 26 ? 'A' + code : 'a' + code - 26);
}

/* Each operand's subscripts, one code per letter or ellipsis, operand i's at
 * codes[starts[i] .. starts[i + 1]). */
typedef struct {
    unsigned char *codes;
    size_t *starts;
} lhs_labels;

static void lhs_free(lhs_labels *l)
{
    free(l->codes);
    free(l->starts);
}

static pith_status lhs_parse(const char *lhs, size_t len, size_t nops, lhs_labels *l)
{
    l->codes = malloc(len + 1);
    l->starts = calloc(nops + 1, sizeof *l->starts);
    if (!l->codes || !l->starts)
        return pith_set_error(PITH_ERR_NOMEM, "einsum(): cannot allocate the equation's labels");
    size_t op = 0, n = 0;
    bool ellipsis = false;
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)lhs[i];
        switch (c) {
        case ' ':
            break;
        case '.':
            if (ellipsis)
                return pith_set_error(PITH_ERR_VALUE,
                                      "einsum(): found '.' for operand %zu for which an ellipsis "
                                      "was already found",
                                      op);
            if (!(i + 2 < len && lhs[i + 1] == '.' && lhs[i + 2] == '.'))
                return pith_set_error(PITH_ERR_VALUE,
                                      "einsum(): found '.' for operand %zu that is not part of "
                                      "any ellipsis",
                                      op);
            i += 2;
            l->codes[n++] = ELLIPSIS;
            ellipsis = true;
            break;
        case ',':
            if (++op >= nops)
                return pith_set_error(PITH_ERR_VALUE, "einsum(): fewer operands were provided "
                                                      "than specified in the equation");
            l->starts[op] = n;
            ellipsis = false;
            break;
        default:
            if (!is_letter(c))
                return pith_set_error(PITH_ERR_VALUE,
                                      "einsum(): invalid subscript given at index %zu in the "
                                      "equation string, subscripts must be in [a-zA-Z]",
                                      i);
            l->codes[n++] = (unsigned char)label_code(c);
        }
    }
    if (op != nops - 1)
        return pith_set_error(PITH_ERR_VALUE, "einsum(): more operands were provided than "
                                              "specified in the equation");
    l->starts[nops] = n;
    return PITH_OK;
}

/* What counting the operands' labels gives: how often each label occurs (over all
 * operands, repeats included) and the widest ellipsis. */
typedef struct {
    int64_t label_count[EINSUM_LETTERS];
    int ell_ndim;
    int perm[EINSUM_LETTERS]; /* each label's aligned index, -1 until given */
    int ell_index;            /* the aligned index of the ellipsis's first dim */
} label_table;

static pith_status ranks_check(const lhs_labels *l, size_t nops, const int *ndims,
                               label_table *t)
{
    for (size_t i = 0; i < nops; i++) {
        int64_t nlabels = (int64_t)(l->starts[i + 1] - l->starts[i]);
        bool ellipsis = false;
        for (size_t k = l->starts[i]; k < l->starts[i + 1]; k++) {
            if (l->codes[k] == ELLIPSIS) {
                nlabels--;
                ellipsis = true;
                if (ndims[i] - nlabels > t->ell_ndim)
                    t->ell_ndim = (int)(ndims[i] - nlabels);
            } else {
                t->label_count[l->codes[k]]++;
            }
        }
        if (ellipsis ? nlabels > ndims[i] : nlabels != ndims[i])
            return pith_set_error(PITH_ERR_VALUE,
                                  "einsum(): the number of subscripts in the equation (%lld) %s "
                                  "the number of dimensions (%d) for operand %zu%s",
                                  (long long)nlabels,
                                  ellipsis ? "is more than" : "does not match", ndims[i], i,
                                  ellipsis ? "" : " and no ellipsis was given");
    }
    return PITH_OK;
}

/* The output's subscripts: the aligned indices [0, *out_ndim). */
static pith_status output_parse(const char *equation, size_t lhs_len, bool explicit_output,
                                label_table *t, int *out_ndim, bool *ell_in_output)
{
    int next = 0;
    if (!explicit_output) {
        next = t->ell_ndim;
        *ell_in_output = true;
        for (int c = 0; c < EINSUM_LETTERS; c++)
            if (t->label_count[c] == 1)
                t->perm[c] = next++;
        *out_ndim = next;
        return PITH_OK;
    }
    const char *rhs = equation + lhs_len + 2;
    size_t len = strlen(rhs);
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)rhs[i];
        if (c == ' ')
            continue;
        if (c == '.') {
            if (*ell_in_output)
                return pith_set_error(PITH_ERR_VALUE, "einsum(): found '.' for output but an "
                                                      "ellipsis (...) was already found");
            if (!(i + 2 < len && rhs[i + 1] == '.' && rhs[i + 2] == '.'))
                return pith_set_error(PITH_ERR_VALUE, "einsum(): found '.' for output that is "
                                                      "not part of any ellipsis (...)");
            i += 2;
            t->ell_index = next;
            next += t->ell_ndim;
            *ell_in_output = true;
            continue;
        }
        if (!is_letter(c))
            return pith_set_error(PITH_ERR_VALUE,
                                  "einsum(): invalid subscript given at index %zu in the "
                                  "equation string, subscripts must be in [a-zA-Z]",
                                  lhs_len + 2 + i);
        int code = label_code(c);
        if (t->label_count[code] == 0 || t->perm[code] != -1)
            return pith_set_error(PITH_ERR_VALUE, "einsum(): output subscript %c %s", c,
                                  t->perm[code] != -1
                                      ? "appears more than once in the output"
                                      : "does not appear in the equation for any input operand");
        t->perm[code] = next++;
    }
    *out_ndim = next;
    return PITH_OK;
}

/* Maps each operand's dims to aligned indices and checks their sizes, counting the
 * operands in which each index is not 1. */
static pith_status sizes_check(const lhs_labels *l, const int *ndims, const int64_t *const *sizes,
                               const label_table *t, einsum_plan *plan)
{
    for (int k = 0; k < plan->nindices; k++)
        plan->sizes[k] = 1;
    for (size_t i = 0; i < plan->nops; i++) {
        einsum_operand *op = &plan->ops[i];
        const int64_t *sz = sizes[i];
        int dim = 0;
        op->ndim = ndims[i];
        size_t nlabels = l->starts[i + 1] - l->starts[i];
        for (size_t k = l->starts[i]; k < l->starts[i + 1]; k++) {
            int s = l->codes[k];
            if (s == ELLIPSIS) {
                int covered = ndims[i] - (int)(nlabels - 1);
                for (int j = t->ell_ndim - covered; j < t->ell_ndim; j++, dim++) {
                    int index = t->ell_index + j;
                    if (sz[dim] != 1) {
                        if (plan->sizes[index] != 1 && plan->sizes[index] != sz[dim])
                            return pith_set_error(
                                PITH_ERR_VALUE,
                                "einsum(): dimension %d covered by ellipsis in operand %zuhas size "
                                "%lld which does not broadcast with previously seen ellipsis "
                                "with size %lld for the respective dimension",
                                dim, i, (long long)sz[dim], (long long)plan->sizes[index]);
                        plan->sizes[index] = sz[dim];
                        plan->counts[index]++;
                    }
                    op->index_of_dim[dim] = index;
                }
                continue;
            }
            int index = t->perm[s], first = -1;
            for (int d = 0; d < dim && first < 0; d++)
                if (op->index_of_dim[d] == index)
                    first = d;
            if (first >= 0) { /* a repeated label: a diagonal */
                if (sz[dim] != sz[first])
                    return pith_set_error(PITH_ERR_VALUE,
                                          "einsum(): subscript %c is repeated for operand %zu but "
                                          "the sizes don't match, %lld != %lld",
                                          label_char(s), i, (long long)sz[dim],
                                          (long long)sz[first]);
            } else if (sz[dim] != 1) {
                if (plan->sizes[index] != 1 && plan->sizes[index] != sz[dim])
                    return pith_set_error(PITH_ERR_VALUE,
                                          "einsum(): subscript %c has size %lld for operand %zu "
                                          "which does not broadcast with previously seen size "
                                          "%lld",
                                          label_char(s), (long long)sz[dim], i,
                                          (long long)plan->sizes[index]);
                plan->sizes[index] = sz[dim];
                plan->counts[index]++;
            }
            op->index_of_dim[dim++] = index;
        }
    }
    return PITH_OK;
}

pith_status einsum_plan_make(const char *equation, size_t nops, const int *ndims,
                             const int64_t *const *sizes, einsum_plan *plan)
{
    memset(plan, 0, sizeof *plan);
    if (nops == 0)
        return pith_set_error(PITH_ERR_VALUE, "einsum(): must provide at least one operand");
    for (size_t i = 0; i < nops; i++)
        if (ndims[i] < 0 || ndims[i] > PITH_MAX_DIMS)
            return pith_set_error(PITH_ERR_VALUE, "einsum(): operand %zu has %d dims", i,
                                  ndims[i]);
    const char *arrow = strstr(equation, "->");
    size_t lhs_len = arrow ? (size_t)(arrow - equation) : strlen(equation);
    lhs_labels l = {NULL, NULL};
    label_table t;
    memset(&t, 0, sizeof t);
    for (int c = 0; c < EINSUM_LETTERS; c++)
        t.perm[c] = -1;
    bool ell_in_output = false;
    int out_ndim = 0;
    if (lhs_parse(equation, lhs_len, nops, &l) != PITH_OK ||
        ranks_check(&l, nops, ndims, &t) != PITH_OK ||
        output_parse(equation, lhs_len, arrow != NULL, &t, &out_ndim, &ell_in_output) != PITH_OK)
        goto fail;
    int next = out_ndim;
    if (!ell_in_output) { /* the ellipsis's dims are summed */
        t.ell_index = next;
        next += t.ell_ndim;
    }
    for (int c = 0; c < EINSUM_LETTERS; c++)
        if (t.label_count[c] > 0 && t.perm[c] == -1)
            t.perm[c] = next++;
    plan->nops = nops;
    plan->out_ndim = out_ndim;
    plan->nindices = next;
    for (int c = 0; c < EINSUM_LETTERS; c++)
        if (t.perm[c] >= 0)
            plan->names[t.perm[c]] = label_char(c);
    for (int j = 0; j < t.ell_ndim; j++)
        plan->names[t.ell_index + j] = '.';
    if (!(plan->ops = calloc(nops, sizeof *plan->ops))) {
        pith_set_error(PITH_ERR_NOMEM, "einsum(): cannot allocate %zu operands", nops);
        goto fail;
    }
    if (sizes_check(&l, ndims, sizes, &t, plan) != PITH_OK)
        goto fail;
    if (out_ndim > PITH_MAX_DIMS) {
        pith_set_error(PITH_ERR_NOT_IMPLEMENTED,
                       "einsum(): the output would have %d dims; a pith tensor has at most %d",
                       out_ndim, PITH_MAX_DIMS);
        goto fail;
    }
    lhs_free(&l);
    return PITH_OK;
fail:
    lhs_free(&l);
    einsum_plan_free(plan);
    return pith_last_status();
}

void einsum_plan_free(einsum_plan *plan)
{
    free(plan->ops);
    plan->ops = NULL;
}
