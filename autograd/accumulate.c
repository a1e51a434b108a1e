/* accumulate.c — AccumulateGrad, the node at each leaf that requires grad: it adds the
 * gradient that reaches it into the leaf's .grad. */
#include <pthread.h>

#include "autograd/autograd_internal.h"
#include "core/error.h"

static pith_status accumulate_apply(ag_node *node, pith_tensor *const *grads, pith_tensor **out)
{
    (void)out;
    pith_tensor *leaf = atomic_load_explicit(&node->leaf, memory_order_acquire);
    if (!leaf || !grads[0])
        return PITH_OK; /* the leaf died: its gradient has nowhere to go */
    pith_status st = ag_accumulate_into(leaf, grads[0]);
    if (st == PITH_OK && node->post_hooks) /* See Note [Hook order] */
        st = ag_run_post_accumulate_hooks(node, leaf);
    return st;
}

static const ag_node_vtable accumulate_vtable = {"AccumulateGrad", accumulate_apply, NULL,
                                                 sizeof(ag_node)};

ag_node *ag_accumulator_new(pith_tensor *leaf)
{
    ag_node *n = ag_node_new(&accumulate_vtable, 0, 1);
    if (!n)
        return NULL;
    n->sequence_nr = AG_SEQUENCE_ACCUMULATOR;
    n->flags |= AG_NODE_ACCUMULATOR;
    ag_input_meta_set(&n->input_meta[0], leaf);
    atomic_store_explicit(&n->leaf, leaf, memory_order_release);
    return n;
}

/* Whether `grad` can become .grad as it is: nobody else holds it or its bytes, and it is
 * contiguous (PyTorch's layout contract for a dense leaf with contiguous strides). */
static bool grad_stealable(const pith_tensor *grad)
{
    return atomic_load_explicit(&grad->refcount, memory_order_acquire) == 1 &&
           atomic_load_explicit(&grad->storage->refcount, memory_order_acquire) == 1 &&
           grad->contiguous && !grad->autograd && !(grad->keys & TENSOR_KEY_PYTHON) &&
           !(grad->flags & PITH_TENSOR_WRAPPED_NUMBER);
}

/* Note [Accumulating into .grad]
 * As PyTorch's AccumulateGrad: the first gradient becomes .grad as it is when nothing else
 * holds it, else a contiguous clone; later ones are added in place, unless backward
 * records (create_graph), where .grad becomes grad + new so that the sum has history.
 * Backwards on several threads may reach one leaf at once, so the read-modify-write of
 * .grad holds the leaf's lock, one of GRAD_LOCKS striped by address (PyTorch locks the
 * AccumulateGrad node): uncontended, that is one atomic instruction. The locks are
 * recursive, because the add may run Python (a subclass's .grad), which may run a backward
 * into a leaf of the same stripe. See Note [The engine's threads and the GIL] (engine.c). */
#define GRAD_LOCKS 64
static pthread_mutex_t grad_locks[GRAD_LOCKS];
static pthread_once_t grad_locks_once = PTHREAD_ONCE_INIT;

static void grad_locks_init(void)
{
    pthread_mutexattr_t attr;
    pthread_mutexattr_init(&attr);
    pthread_mutexattr_settype(&attr, PTHREAD_MUTEX_RECURSIVE);
    for (int i = 0; i < GRAD_LOCKS; i++)
        pthread_mutex_init(&grad_locks[i], &attr);
    pthread_mutexattr_destroy(&attr);
}

static pthread_mutex_t *grad_lock_of(const pith_tensor *leaf)
{
    pthread_once(&grad_locks_once, grad_locks_init);
    return &grad_locks[((uintptr_t)leaf >> 6) % GRAD_LOCKS];
}

static pith_status accumulate_locked(ag_meta *m, pith_tensor *grad)
{
    pith_value ret[PITH_MAX_RETURNS];
    if (!m->grad) {
        if (grad_mode_tls.grad_disabled && grad_stealable(grad)) {
            pith_retain(grad);
            m->grad = grad;
            return PITH_OK;
        }
        pith_status st = pith_call_clone(ret, grad);
        if (st != PITH_OK)
            return st;
        m->grad = ret[0].u.t;
        return PITH_OK;
    }
    if (grad_mode_tls.grad_disabled)
        return pith_call_add_(ret, m->grad, grad, scalar_from_int(1)) == PITH_OK
                   ? (pith_release(ret[0].u.t), PITH_OK)
                   : pith_last_status();
    pith_status st = pith_call_add(ret, m->grad, grad, scalar_from_int(1));
    if (st != PITH_OK)
        return st;
    pith_release(m->grad);
    m->grad = ret[0].u.t;
    return PITH_OK;
}

pith_status ag_accumulate_into(pith_tensor *leaf, pith_tensor *grad)
{
    pthread_mutex_t *lock = grad_lock_of(leaf);
    pthread_mutex_lock(lock);
    pith_status st = accumulate_locked(leaf->autograd, grad);
    pthread_mutex_unlock(lock);
    return st;
}
