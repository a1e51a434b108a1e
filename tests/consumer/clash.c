/* clash.c — an outside program that defines, with other types, names that libpith uses
 * internally (key_name, tensor_new, add_cpu, binary_add, tls_keys_value), and links the
 * installed static library. It links only because libpith.a defines nothing global but the
 * pith_* API (See Note [One object in libpith.a]); it checks that its names are its own and
 * that pith's internals still reach pith's (add kernel, dispatch key names). */
#include <stdio.h>
#include <string.h>

#include <pith/dispatch.h>
#include <pith/pith.h>

/* The clashing definitions: external linkage on purpose. libpith's are a const char
 * *(int), a tensor constructor, a CPU kernel, a binary-op table and a thread-local. */
const char *key_name(void);
const char *key_name(void)
{
    return "the consumer's key_name";
}

int tensor_new = 7;

double add_cpu(double x, double y);
double add_cpu(double x, double y)
{
    return x * y;
}

const char binary_add[] = "the consumer's binary_add";

long tls_keys_value = 11;

static int fail(const char *what)
{
    fprintf(stderr, "clash: %s failed: %s\n", what, pith_last_error());
    return 1;
}

int main(void)
{
    if (strcmp(key_name(), "the consumer's key_name") != 0 || tensor_new != 7 ||
        add_cpu(3, 4) != 12 || strcmp(binary_add, "the consumer's binary_add") != 0 ||
        tls_keys_value != 11) {
        fprintf(stderr, "clash: a name of the program resolved to something else\n");
        return 1;
    }

    /* pith_add goes through the dispatcher to pith's own add_cpu and binary_add table. */
    const double a_data[3] = {1, 2, 3};
    const double b_data[3] = {10, 20, 30};
    const int64_t sizes[1] = {3};
    int status = 1;
    pith_tensor *a = NULL, *b = NULL, *c = NULL;
    a = pith_from_data(a_data, 1, sizes, PITH_FLOAT64);
    b = pith_from_data(b_data, 1, sizes, PITH_FLOAT64);
    if (!a || !b) {
        status = fail("pith_from_data");
        goto done;
    }
    c = pith_add(a, b);
    if (!c) {
        status = fail("pith_add");
        goto done;
    }
    const double *values = pith_data_ptr(c);
    for (int i = 0; i < 3; i++) {
        if (values[i] != a_data[i] + b_data[i]) {
            fprintf(stderr, "clash: c[%d] = %g, want %g\n", i, values[i], a_data[i] + b_data[i]);
            goto done;
        }
    }

    /* The message names the key through pith's own key_name. */
    const char *want = "pith_fallback_unregister: dispatch key Meta has no fallback";
    if (pith_fallback_unregister("Meta") != PITH_ERR_VALUE ||
        strcmp(pith_last_error(), want) != 0) {
        fprintf(stderr, "clash: unexpected error message '%s'\n", pith_last_error());
        goto done;
    }
    pith_clear_error();
    printf("clash: pith %s OK beside the program's own key_name, tensor_new, add_cpu, "
           "binary_add and tls_keys_value\n",
           pith_version());
    status = 0;
done:
    pith_release(c);
    pith_release(b);
    pith_release(a);
    if (status == 0 && pith_live_tensors() != 0) {
        fprintf(stderr, "clash: %zu tensors leaked\n", pith_live_tensors());
        status = 1;
    }
    return status;
}
