/* engine_shim.c — see engine_shim.h. */
#include "engine_shim.h"

#include "autograd/autograd_internal.h"
#include "core/error.h"

/* Runs `call` below Autograd (the shim's ops record by hand). */
#define BELOW(call)                                                                        \
    do {                                                                                   \
        ag_below_guard g_;                                                                 \
        (void)ag_below_enter(0, &g_);                                                      \
        call;                                                                              \
        ag_below_exit(&g_);                                                                \
    } while (0)

static pith_tensor *mul_number(const pith_tensor *t, double k)
{
    pith_value ret[PITH_MAX_RETURNS];
    pith_tensor *w = ag_wrapped_number(scalar_from_double(k));
    pith_status st = w ? pith_call_mul(ret, t, w) : pith_last_status();
    pith_release(w);
    return ag_result(st, ret);
}

/* ---- scale ---- */
typedef struct {
    ag_node node;
    double k;
} ScaleTest;

static pith_status scale_apply(ag_node *n, pith_tensor *const *grads, pith_tensor **out)
{
    if (ag_needs_grad(n, 0) && !(out[0] = mul_number(grads[0], ((ScaleTest *)n)->k)))
        return pith_last_status();
    return PITH_OK;
}
static const ag_node_vtable scale_vt = {"ScaleTest", scale_apply, NULL, sizeof(ScaleTest)};

pith_tensor *shim_scale(pith_tensor *x, double k)
{
    pith_tensor *y;
    BELOW(y = mul_number(x, k));
    const pith_tensor *in[] = {x};
    if (!y || !ag_should_record(in, 1))
        return y;
    ScaleTest *n = (ScaleTest *)ag_node_new(&scale_vt, 1, 1);
    n->k = k;
    ag_set_next_edge(&n->node, 0, x);
    ag_set_history(&n->node, 0, y);
    ag_node_release(&n->node);
    return y;
}

/* ---- add ---- */
static pith_status add_apply(ag_node *n, pith_tensor *const *grads, pith_tensor **out)
{
    for (uint32_t i = 0; i < 2; i++)
        if (ag_needs_grad(n, i)) {
            pith_retain(grads[0]);
            out[i] = grads[0];
        }
    return PITH_OK;
}
static const ag_node_vtable add_vt = {"AddTest", add_apply, NULL, sizeof(ag_node)};

pith_tensor *shim_add(pith_tensor *a, pith_tensor *b)
{
    pith_value ret[PITH_MAX_RETURNS];
    pith_tensor *y;
    BELOW(y = ag_result(pith_call_add(ret, a, b, scalar_from_int(1)), ret));
    const pith_tensor *in[] = {a, b};
    if (!y || !ag_should_record(in, 2))
        return y;
    ag_node *n = ag_node_new(&add_vt, 2, 1);
    ag_set_next_edge(n, 0, a);
    ag_set_next_edge(n, 1, b);
    ag_set_history(n, 0, y);
    ag_node_release(n);
    return y;
}

/* ---- square ---- */
typedef struct {
    ag_node node;
    ag_saved x;
} SquareTest;

static pith_status square_apply(ag_node *n, pith_tensor *const *grads, pith_tensor **out)
{
    if (!ag_needs_grad(n, 0))
        return PITH_OK;
    pith_tensor *x;
    pith_status st = ag_unpack(&((SquareTest *)n)->x, n, &x);
    if (st != PITH_OK)
        return st;
    pith_value ret[PITH_MAX_RETURNS];
    pith_tensor *two_x = mul_number(x, 2.0);
    pith_release(x);
    if (!two_x)
        return pith_last_status();
    st = pith_call_mul(ret, grads[0], two_x);
    pith_release(two_x);
    if (st == PITH_OK)
        out[0] = ret[0].u.t;
    return st;
}
static void square_release(ag_node *n)
{
    ag_saved_release(&((SquareTest *)n)->x);
}
static const ag_node_vtable square_vt = {"SquareTest", square_apply, square_release,
                                         sizeof(SquareTest)};

pith_tensor *shim_square(pith_tensor *x)
{
    pith_value ret[PITH_MAX_RETURNS];
    pith_tensor *y;
    BELOW(y = ag_result(pith_call_mul(ret, x, x), ret));
    const pith_tensor *in[] = {x};
    if (!y || !ag_should_record(in, 1))
        return y;
    SquareTest *n = (SquareTest *)ag_node_new(&square_vt, 1, 1);
    ag_set_next_edge(&n->node, 0, x);
    ag_save(&n->x, x, false);
    ag_set_history(&n->node, 0, y);
    ag_node_release(&n->node);
    return y;
}

void shim_bump_version(pith_tensor *t)
{
    tensor_bump_version(t);
}

double shim_at(const pith_tensor *t, int64_t i)
{
    double v;
    return pith_item_at(t, i, &v) == PITH_OK ? v : __builtin_nan("");
}
