/* anomaly.c — anomaly detection (torch.autograd.detect_anomaly): the process-wide switch,
 * the record each node keeps of where it was made, the NaN check, and the report of a
 * failing node. What a record is (a Python traceback) is the installer's. */
#include <stdio.h>
#include <string.h>

#include "autograd/autograd_internal.h"
#include "core/error.h"

/* Note [Anomaly mode]
 * As PyTorch's AnomalyMode: one switch per process, with check_nan.
 *  - While it is on, ag_node_new asks the installed hooks for a record of where the node is
 *    being made (the Python bindings give the forward's traceback, formatted as text with
 *    no Python object in it, so it belongs to no interpreter); the node keeps the record,
 *    with the hooks that made it, and releases it when it is freed.
 *  - The engine checks each gradient a node gives, after its post-hooks, and fails with
 *    PyTorch's "Function 'X' returned nan values in its 0th output." when check_nan is on.
 *  - When a node fails in backward (its hooks, its apply, a saved tensor's version, the NaN
 *    check), the engine reports the node's record before unwinding (the bindings warn, as
 *    PyTorch does, "Error detected in X. Traceback of forward call that caused the error:");
 *    the error itself is kept exactly, since the bindings may rethrow a kept Python
 *    exception by its message (Note [Handler exceptions cross C]).
 *  - The hooks are one pointer per process, installed by whichever bindings load; the
 *    switch and the hooks are read with relaxed atomics: a node made while another thread
 *    flips the switch may or may not keep a record. */

static atomic_bool enabled, check_nan = true; /* PyTorch's defaults */
static _Atomic(const pith_anomaly_hooks *) installed;

void pith_set_detect_anomaly(bool on, bool nan)
{
    atomic_store_explicit(&check_nan, nan, memory_order_relaxed);
    atomic_store_explicit(&enabled, on, memory_order_relaxed);
}

bool pith_is_anomaly_enabled(void)
{
    return atomic_load_explicit(&enabled, memory_order_relaxed);
}

bool pith_is_anomaly_check_nan_enabled(void)
{
    return atomic_load_explicit(&check_nan, memory_order_relaxed);
}

void pith_set_anomaly_hooks(const pith_anomaly_hooks *hooks)
{
    atomic_store_explicit(&installed, hooks, memory_order_release);
}

bool ag_anomaly_enabled(void)
{
    return atomic_load_explicit(&enabled, memory_order_relaxed);
}

void ag_anomaly_record(ag_node *node)
{
    const pith_anomaly_hooks *hooks = atomic_load_explicit(&installed, memory_order_acquire);
    if (!hooks || !hooks->record)
        return;
    node->anomaly_record = hooks->record();
    node->anomaly_hooks = node->anomaly_record ? hooks : NULL;
}

void ag_anomaly_release(ag_node *node)
{
    if (node->anomaly_record && node->anomaly_hooks->release)
        node->anomaly_hooks->release(node->anomaly_record);
    node->anomaly_record = NULL;
}

pith_status ag_anomaly_check_nan(const ag_node *node, pith_tensor *const *out)
{
    if (!atomic_load_explicit(&check_nan, memory_order_relaxed) || !out)
        return PITH_OK;
    bool grad_disabled = grad_mode_tls.grad_disabled;
    grad_mode_tls.grad_disabled = true;
    pith_status st = PITH_OK;
    for (uint32_t j = 0; j < node->num_next && st == PITH_OK; j++) {
        if (!out[j] || !dtype_is_floating(out[j]->dtype) || out[j]->device == PITH_META)
            continue; /* a meta gradient has no values to look at */
        pith_value ret[PITH_MAX_RETURNS];
        pith_tensor *nan = ag_result(pith_call_isnan(ret, out[j]), ret);
        pith_tensor *any = nan ? ag_result(pith_call_any(ret, nan, (pith_opt_int_list){0}, false),
                                           ret)
                               : NULL;
        double found = 0;
        st = any ? pith_item_at(any, 0, &found) : pith_last_status();
        pith_release(nan);
        pith_release(any);
        if (st == PITH_OK && found != 0)
            st = pith_set_error(PITH_ERR_RUNTIME,
                                "Function '%s' returned nan values in its %uth output.",
                                node->vt->name, j);
    }
    grad_mode_tls.grad_disabled = grad_disabled;
    return st;
}

void ag_anomaly_report(const ag_node *node)
{
    if (!node->anomaly_record || !node->anomaly_hooks->report)
        return;
    pith_status status = pith_last_status();
    char message[2048];
    snprintf(message, sizeof message, "%s", pith_last_error());
    node->anomaly_hooks->report(node->anomaly_record, node->vt->name);
    pith_set_error(status, "%s", message);
}
