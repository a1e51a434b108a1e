/* two_interpreters.c — scenario 1: two sub-interpreters import pith and compute with their
 * own tensors, interleaved with PyThreadState_Swap. The results are right, the module
 * states are separate (module objects, Tensor types, default dtypes, interpreter tables),
 * and a second module instance in one interpreter shares its interpreter's table. */
#include "embed.h"

static const char *COMPUTE_A = "import pith\n"
                               "a = pith.arange(6.).reshape(2, 3)\n"
                               "ra = (a * 2).sum().item()\n";
static const char *COMPUTE_B = "import pith\n"
                               "b = pith.ones(4, dtype=pith.int64) + 1\n"
                               "rb = b.sum().item()\n"
                               "pith.set_default_dtype(pith.float64)\n";

int main(void)
{
    PyThreadState *main_ts = embed_start();

    PyThreadState *a = embed_new_interpreter();
    embed_run(COMPUTE_A);
    CHECK(embed_eval_double("ra") == 30.0, "A: (arange(6) * 2).sum() = %g",
          embed_eval_double("ra"));
    PyObject *module_a = embed_eval("pith._C");
    PyObject *type_a = embed_eval("pith.Tensor");
    pith_interpreter *table_a = embed_current_table();

    PyThreadState *b = embed_new_interpreter();
    embed_run(COMPUTE_B);
    CHECK(embed_eval_int("rb") == 8, "B: sum = %lld", embed_eval_int("rb"));
    PyObject *module_b = embed_eval("pith._C");
    PyObject *type_b = embed_eval("pith.Tensor");
    pith_interpreter *table_b = embed_current_table();
    char name[64];
    CHECK(strtoll(embed_eval_str("pith._C._interpreter_name()", name, sizeof name), NULL, 10) ==
              embed_interpreter_id(b),
          "B's table is named %s, its ID is %lld", name, (long long)embed_interpreter_id(b));

    /* Back to A: its tensors and its module are its own. The default dtype is the C core's,
     * process-wide as PyTorch's (docs/embedding.md), so B's float64 is A's too. */
    PyThreadState_Swap(a);
    embed_run("ra2 = (a @ a.T)[0, 1].item()\n"
              "da = str(pith.get_default_dtype())\n"
              "fa = str(pith.zeros(1).dtype)\n"
              "pith.set_default_dtype(pith.float32)\n");
    CHECK(embed_eval_double("ra2") == 0 * 3 + 1 * 4 + 2 * 5, "A: (a @ a.T)[0, 1] = %g",
          embed_eval_double("ra2"));
    CHECK(strcmp(embed_eval_str("da", name, sizeof name), "pith.float64") == 0,
          "B's set_default_dtype is not the process's default dtype in A: %s", name);
    CHECK(strcmp(embed_eval_str("fa", name, sizeof name), "pith.float64") == 0,
          "A's zeros do not follow the process's default dtype: %s", name);
    CHECK(strtoll(embed_eval_str("pith._C._interpreter_name()", name, sizeof name), NULL, 10) ==
              embed_interpreter_id(a),
          "A's table is named %s, its ID is %lld", name, (long long)embed_interpreter_id(a));

    CHECK(module_a != module_b, "both interpreters got the same pith._C module object");
    CHECK(type_a != type_b, "both interpreters got the same pith.Tensor type");
    CHECK(table_a != table_b, "both interpreters got the same interpreter table");
    Py_DECREF(module_a);
    Py_DECREF(type_a);
    PyThreadState_Swap(b);
    Py_DECREF(module_b);
    Py_DECREF(type_b);

    /* A second instance of pith._C in B (PEP 489: a fresh module object) finds B's table. */
    embed_run("import sys, importlib\n"
              "first = sys.modules.pop('pith._C')\n"
              "second = importlib.import_module('pith._C')\n"
              "assert second is not first\n"
              "assert second.Tensor is not first.Tensor\n"
              "assert second._interpreter_name() == first._interpreter_name()\n"
              "sys.modules['pith._C'] = first\n");
    CHECK(embed_current_table() == table_b, "a second module instance made a second table");

    /* Many interleaved rounds: each interpreter keeps computing with its own tensors. */
    for (int round = 0; round < 20; round++) {
        PyThreadState_Swap(round % 2 ? a : b);
        embed_run(round % 2 ? "a = a + 1\n" : "b = b * 1\n");
    }
    PyThreadState_Swap(a);
    CHECK(embed_eval_double("a.sum().item()") == 15.0 + 6 * 10, "A: %g",
          embed_eval_double("a.sum().item()"));

    CHECK(!pith_interpreter_is_disarmed(table_a) && !pith_interpreter_is_disarmed(table_b),
          "a live interpreter's table is disarmed");
    embed_end_interpreter(b, a);
    CHECK(pith_interpreter_is_disarmed(table_b), "Py_EndInterpreter(B) left B's table armed");
    CHECK(!pith_interpreter_is_disarmed(table_a), "ending B disarmed A");
    embed_end_interpreter(a, main_ts);
    CHECK(pith_interpreter_is_disarmed(table_a), "Py_EndInterpreter(A) left A's table armed");
    CHECK(Py_FinalizeEx() == 0, "Py_FinalizeEx failed");
    embed_log("two_interpreters: ok");
    return 0;
}
