/* function_subinterp.c — a custom pith.autograd.Function defined in sub-interpreter A
 * (Note [Python Function objects]):
 *  - a graph recorded through it in A runs backward in A;
 *  - backward from interpreter B while A lives is PITH_ERR_INTERPRETER naming A;
 *  - after Py_EndInterpreter(A), backward from C (in the main interpreter) is
 *    PITH_ERR_INTERPRETER saying A was finalised, never a crash;
 *  - releasing the graph then frees every tensor and node (the ctx object of the dead
 *    interpreter leaks, by the disarm rule): live counts return to where they began. */
#include "embed.h"

int main(void)
{
    PyThreadState *main_ts = embed_start();
    PyThreadState *a = embed_new_interpreter();
    long long id_a = embed_interpreter_id(a);
    embed_run("import pith\n"
              "class Cube(pith.autograd.Function):\n"
              "    @staticmethod\n"
              "    def forward(ctx, x):\n"
              "        ctx.save_for_backward(x)\n"
              "        return x * x * x\n"
              "    @staticmethod\n"
              "    def backward(ctx, g):\n"
              "        x, = ctx.saved_tensors\n"
              "        return 3 * x * x * g\n");
    size_t tensors_before = pith_live_tensors(), nodes_before = pith_live_nodes();
    embed_run("x = pith.tensor([1.0, 2.0], requires_grad=True)\n"
              "y = Cube.apply(x).sum()\n"
              "y.backward(retain_graph=True)\n"
              "assert x.grad.tolist() == [3.0, 12.0], x.grad\n"
              "assert type(y.grad_fn.next_functions[0][0]).__name__ == 'CubeBackward'\n"
              "h_y = pith._C._stash(y)\n"
              "h_x = pith._C._stash(x)\n");
    pith_tensor *y = embed_eval_pointer("h_y");
    pith_tensor *x = embed_eval_pointer("h_x");
    embed_run("del x, y\n");

    /* From B while A lives: refused, naming A. */
    PyThreadState *b = embed_new_interpreter();
    embed_run("import pith\n");
    pith_tensor *roots[] = {y};
    char needle[64];
    snprintf(needle, sizeof needle, "interpreter %lld", id_a);
    CHECK(pith_backward(roots, NULL, 1, PITH_RETAIN_GRAPH) == PITH_ERR_INTERPRETER,
          "backward from B ran A's Function: %s", pith_last_error());
    CHECK(embed_contains(pith_last_error(), "CubeBackward") &&
              embed_contains(pith_last_error(), needle),
          "the error does not name the node and A: %s", pith_last_error());
    embed_log("function_subinterp: from B: %s", pith_last_error());
    pith_clear_error();

    embed_end_interpreter(b, a);
    embed_end_interpreter(a, main_ts);

    /* After A ended: a clear error from the main interpreter. */
    CHECK(pith_backward(roots, NULL, 1, 0) == PITH_ERR_INTERPRETER,
          "backward after A ended: status %d (%s)", (int)pith_last_status(), pith_last_error());
    CHECK(embed_contains(pith_last_error(), "finalised") &&
              embed_contains(pith_last_error(), needle),
          "the error does not say A was finalised: %s", pith_last_error());
    embed_log("function_subinterp: after A ended: %s", pith_last_error());
    pith_clear_error();
    CHECK(!PyErr_Occurred(), "backward left an exception in the main interpreter");

    pith_release(y);
    pith_release(x);
    CHECK(pith_live_tensors() == tensors_before, "%zu tensors leaked",
          pith_live_tensors() - tensors_before);
    CHECK(pith_live_nodes() == nodes_before, "%zu nodes leaked",
          pith_live_nodes() - nodes_before);
    CHECK(Py_FinalizeEx() == 0, "Py_FinalizeEx failed");
    embed_log("function_subinterp: ok");
    return 0;
}
