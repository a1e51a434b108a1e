/* exit_order.c — scenario 5: tensors that the main interpreter wrapped, held in C globals
 * after every sub-interpreter ended and Py_FinalizeEx ran, are released without a crash:
 * the main interpreter's table is disarmed by then (its dict died in Py_FinalizeEx), so
 * each release runs the no-ops, on this thread and on a bare pthread. The globals: a
 * tensor whose wrapper died, a preserved wrapper, and imported memory (a bytearray's
 * buffer). */
#include "embed.h"

static pith_tensor *held_plain, *held_imported, *held_preserved, *held_bare;
static pith_interpreter *main_table;

int main(void)
{
    PyThreadState *main_ts = embed_start();
    embed_run("import pith\n"
              "t = pith.arange(4.)\n"
              "t.note = 'main'\n"
              "h_plain = pith._C._testing_handle(t)\n"
              "h_bare = pith._C._testing_handle(t * 2)\n"
              "ba = bytearray(16)\n"
              "h_imported = pith._C._testing_handle(pith.frombuffer(ba, dtype=pith.uint8))\n"
              "p = pith.ones(3)\n"
              "p.note = 'preserved'\n"
              "h_preserved = pith._C._stash(p)\n"
              "del p\n");
    held_plain = embed_eval_pointer("h_plain");
    held_bare = embed_eval_pointer("h_bare");
    held_imported = embed_eval_pointer("h_imported");
    held_preserved = embed_eval_pointer("h_preserved");
    main_table = embed_current_table();

    /* Sub-interpreters come and go meanwhile, each with its own pith. */
    for (int i = 0; i < 3; i++) {
        PyThreadState *sub = embed_new_interpreter();
        embed_run("import pith\n"
                  "x = pith.ones(5).sum().item()\n");
        CHECK(embed_eval_double("x") == 5.0, "sub-interpreter %d computed %g", i,
              embed_eval_double("x"));
        embed_end_interpreter(sub, main_ts);
    }

    CHECK(!pith_interpreter_is_disarmed(main_table), "the main table is already disarmed");
    CHECK(Py_FinalizeEx() == 0, "Py_FinalizeEx failed");
    CHECK(pith_interpreter_is_disarmed(main_table),
          "Py_FinalizeEx left the main interpreter's table armed");

    size_t live = pith_live_tensors();
    size_t expected = 4;
    CHECK(live == expected, "%zu tensors alive after Py_FinalizeEx, expected %zu", live,
          expected);
    pith_release(held_plain);
    pith_release(held_imported);
    pith_release(held_preserved);
    embed_on_bare_thread(embed_release_tensor, held_bare);
    CHECK(pith_live_tensors() == 0, "%zu tensors leaked", pith_live_tensors());
    embed_log("exit_order: ok");
    return 0;
}
