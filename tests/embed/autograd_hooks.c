/* autograd_hooks.c — scenario: autograd hooks hold Python state of the interpreter that
 * registered them (Note [Python node hooks], Note [Python saved tensor hooks]):
 *  - sub-interpreter A records a graph under saved_tensors_hooks and registers a node
 *    post-hook and a post-accumulate-grad hook, then hands the root to C (a stash handle);
 *  - C runs backward from a bare pthread: every hook and unpack runs inside A (a temporary
 *    thread state of A), and A's logs show them;
 *  - A ends while C holds another such graph: backward from C is a clean
 *    PITH_ERR_INTERPRETER error that names A, never a call into a dead
 *    interpreter, and releasing the graph (its hooks, its packed values) is silent. */
#include "embed.h"

#include <pith/autograd.h>

static const char *A_CODE =
    "import pith\n"
    "log, leaves = [], []\n"
    "def graph():\n"
    "    x = pith.ones(3, requires_grad=True)\n"
    "    leaves.append(x)\n"
    "    hooks = pith.autograd.graph.saved_tensors_hooks(\n"
    "        lambda t: log.append('pack') or t.clone(),\n"
    "        lambda t: log.append('unpack') or t)\n"
    "    with hooks:\n"
    "        y = (x * x).sum()\n"
    "    y.grad_fn.register_hook(lambda gi, go: log.append('post'))\n"
    "    x.register_post_accumulate_grad_hook(lambda t: log.append('postacc'))\n"
    "    return pith._C._stash(y)\n";

static pith_status backward_status;
static char backward_error[1024];

static void *run_backward(void *root)
{
    pith_tensor *roots[] = {root};
    backward_status = pith_backward(roots, NULL, 1, 0);
    snprintf(backward_error, sizeof backward_error, "%s", pith_last_error());
    pith_clear_error();
    return NULL;
}

int main(void)
{
    PyThreadState *main_ts = embed_start();
    PyThreadState *a = embed_new_interpreter();
    embed_run(A_CODE);
    pith_tensor *live = embed_eval_pointer("graph()");
    pith_tensor *orphan = embed_eval_pointer("graph()");
    char buf[256];
    CHECK(strcmp(embed_eval_str("','.join(log)", buf, sizeof buf), "pack,pack,pack,pack") == 0,
          "A packed %s", buf);
    embed_run("log.clear()\n");

    /* backward from a bare thread while A lives: the hooks run inside A */
    PyThreadState *saved = PyEval_SaveThread();
    embed_on_bare_thread(run_backward, live);
    PyEval_RestoreThread(saved);
    CHECK(backward_status == PITH_OK, "backward from a bare thread failed: %s", backward_error);
    CHECK(strcmp(embed_eval_str("','.join(log)", buf, sizeof buf),
                 "post,unpack,unpack,postacc") == 0,
          "A's hooks ran as %s", buf);
    pith_release(live);

    /* A ends while C holds `orphan`: backward is refused, release is silent */
    pith_interpreter *table = embed_current_table();
    char needle[64];
    snprintf(needle, sizeof needle, "interpreter %lld", (long long)embed_interpreter_id(a));
    embed_end_interpreter(a, main_ts);
    CHECK(pith_interpreter_is_disarmed(table), "A's table is armed after it ended");
    run_backward(orphan);
    CHECK(backward_status == PITH_ERR_INTERPRETER, "backward after A ended: %s (%s)",
          pith_status_name(backward_status), backward_error);
    CHECK(embed_contains(backward_error, needle), "'%s' does not name %s", backward_error,
          needle);
    pith_release(orphan);
    CHECK(PyErr_Occurred() == NULL, "a Python exception is pending in the main interpreter");
    embed_log("autograd_hooks: hooks ran in A from a bare thread; after A ended backward "
              "was refused and the graph released silently");
    Py_FinalizeEx();
    return 0;
}
