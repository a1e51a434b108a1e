/* consumer.c — an outside program built against an *installed* pith (find_package or
 * pkg-config): two tensors, their sum and product checked value by value, one error path,
 * and the file of the OpenBLAS that the product loaded, printed for run.sh to check (Note
 * [OpenBLAS is loaded on first use], kernels/linalg_blas.c). */
#define _GNU_SOURCE /* dladdr */
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#include <pith/pith.h>

static int fail(const char *what)
{
    fprintf(stderr, "consumer: %s failed: %s\n", what, pith_last_error());
    return 1;
}

/* a (2, 3) @ b (3,), the first product of the process, which loads OpenBLAS; then prints
 * the file it was loaded from: "consumer: OpenBLAS <path>". */
static int check_product(const pith_tensor *a, const float *a_data, const pith_tensor *b,
                         const float *b_data)
{
    pith_tensor *p = pith_matmul(a, b);
    if (!p)
        return fail("pith_matmul");
    int status = 1;
    if (pith_ndim(p) != 1 || pith_size(p, 0) != 2) {
        fprintf(stderr, "consumer: wrong product metadata\n");
        goto done;
    }
    const float *values = pith_data_ptr(p);
    for (int r = 0; r < 2; r++) {
        float want = 0;
        for (int k = 0; k < 3; k++)
            want += a_data[r * 3 + k] * b_data[k];
        if (values[r] != want) {
            fprintf(stderr, "consumer: (a @ b)[%d] = %g, want %g\n", r, values[r], want);
            goto done;
        }
    }
    void *blas = dlopen("libopenblas.so.0", RTLD_LAZY | RTLD_NOLOAD);
    void *config = blas ? dlsym(blas, "openblas_get_config") : NULL;
    Dl_info info;
    if (!config || !dladdr(config, &info) || !info.dli_fname) {
        fprintf(stderr, "consumer: a product ran, but no libopenblas.so.0 is loaded\n");
        goto done;
    }
    printf("consumer: OpenBLAS %s\n", info.dli_fname);
    status = 0;
done:
    pith_release(p);
    return status;
}

int main(void)
{
    const float a_data[6] = {1, 2, 3, 4, 5, 6};
    const float b_data[3] = {10, 20, 30};
    const int64_t a_sizes[2] = {2, 3};
    const int64_t b_sizes[1] = {3};
    int status = 1;
    pith_tensor *a = NULL, *b = NULL, *c = NULL, *bad = NULL;

    a = pith_from_data(a_data, 2, a_sizes, PITH_FLOAT32);
    if (!a)
        return fail("pith_from_data(a)");
    b = pith_from_data(b_data, 1, b_sizes, PITH_FLOAT32);
    if (!b) {
        status = fail("pith_from_data(b)");
        goto done;
    }
    c = pith_add(a, b); /* broadcasts b over the rows of a */
    if (!c) {
        status = fail("pith_add");
        goto done;
    }
    if (pith_ndim(c) != 2 || pith_size(c, 0) != 2 || pith_size(c, 1) != 3 ||
        pith_tensor_dtype(c) != PITH_FLOAT32 || !pith_is_contiguous(c)) {
        fprintf(stderr, "consumer: wrong result metadata\n");
        goto done;
    }
    const float *values = pith_data_ptr(c);
    for (int i = 0; i < 6; i++) {
        float want = a_data[i] + b_data[i % 3];
        if (values[i] != want) {
            fprintf(stderr, "consumer: c[%d] = %g, want %g\n", i, values[i], want);
            goto done;
        }
    }

    if (check_product(a, a_data, b, b_data) != 0)
        goto done;

    /* An error path: shapes (2, 3) and (2,) do not broadcast. */
    const int64_t bad_sizes[1] = {2};
    bad = pith_zeros(1, bad_sizes, PITH_FLOAT32);
    if (!bad) {
        status = fail("pith_zeros");
        goto done;
    }
    pith_tensor *none = pith_add(a, bad);
    if (none != NULL || pith_last_status() != PITH_ERR_VALUE ||
        strstr(pith_last_error(), "size") == NULL) {
        fprintf(stderr, "consumer: expected a PITH_ERR_VALUE shape error, got status %d: '%s'\n",
                (int)pith_last_status(), pith_last_error());
        pith_release(none);
        goto done;
    }
    pith_clear_error();
    if (pith_last_status() != PITH_OK || strcmp(pith_last_error(), "") != 0) {
        fprintf(stderr, "consumer: pith_clear_error did not clear the error\n");
        goto done;
    }
    printf("consumer: pith %s OK\n", pith_version());
    status = 0;
done:
    pith_release(bad);
    pith_release(c);
    pith_release(b);
    pith_release(a);
    if (status == 0 && pith_live_tensors() != 0) {
        fprintf(stderr, "consumer: %zu tensors leaked\n", pith_live_tensors());
        status = 1;
    }
    return status;
}
