/* disarm.c — scenario 4: tensors of interpreter A that C holds alone when A ends
 * (Note [Interpreter teardown]):
 *  - after Py_EndInterpreter(A) A's table is disarmed (pith_interpreter_is_disarmed);
 *  - wrapping such a tensor in B is a clean pith.InterpreterError that says A is dead;
 *  - releasing it from C runs the no-op, from this thread in B and from a bare pthread: a
 *    plain tensor, a preserved wrapper, A's imported memory, and an alias that B holds of
 *    A's imported memory;
 *  - phase 1 under fire: bare threads keep releasing A2's objects while A2 ends; the calls
 *    in flight drain, later ones are refused, and Py_EndInterpreter finds no stray thread
 *    state of A2. */
#include <sched.h>
#include <stdatomic.h>

#include "embed.h"

enum { RACE_THREADS = 3, RACE_PER_THREAD = 200 };

typedef struct {
    pith_tensor *tensors[RACE_PER_THREAD];
    atomic_int *released;
} race_batch;

static void *release_slowly(void *arg)
{
    race_batch *b = arg;
    for (int i = 0; i < RACE_PER_THREAD; i++) {
        pith_release(b->tensors[i]);
        atomic_fetch_add(b->released, 1);
        if (i % 16 == 0)
            sched_yield();
    }
    return NULL;
}

/* Phase 1 under fire. */
static void disarm_while_releasing(PyThreadState *main_ts)
{
    PyThreadState *a2 = embed_new_interpreter();
    embed_run("import pith\n"
              "bufs = []\n"
              "def imported():\n"
              "    bufs.append(bytearray(16))\n"
              "    return pith._C._testing_handle(pith.frombuffer(bufs[-1], dtype=pith.uint8))\n"
              "def count_released():\n"
              "    n = 0\n"
              "    for b in bufs:\n"
              "        try:\n"
              "            b.append(0)\n"
              "            n += 1\n"
              "        except BufferError:\n"
              "            pass\n"
              "    print('disarm:', n, 'of', len(bufs), 'imported buffers released before phase 1',"
              " flush=True)\n"
              "def preserved():\n"
              "    t = pith.ones(1)\n"
              "    t.note = 'x'\n"
              "    return pith._C._stash(t)\n");
    pith_interpreter *table = embed_current_table();
    embed_run("import atexit\natexit.register(count_released)\n");
    static race_batch batches[RACE_THREADS];
    atomic_int released = 0;
    for (int k = 0; k < RACE_THREADS; k++) {
        batches[k].released = &released;
        for (int i = 0; i < RACE_PER_THREAD; i++)
            batches[k].tensors[i] =
                embed_eval_pointer(i % 2 ? "preserved()" : "imported()");
    }
    pthread_t threads[RACE_THREADS];
    for (int k = 0; k < RACE_THREADS; k++)
        CHECK(pthread_create(&threads[k], NULL, release_slowly, &batches[k]) == 0, "create");
    PyThreadState *saved = PyEval_SaveThread(); /* let a third of them in first */
    while (atomic_load(&released) < RACE_THREADS * RACE_PER_THREAD / 3)
        sched_yield();
    PyEval_RestoreThread(saved);
    Py_EndInterpreter(a2); /* phase 1 drains the ones inside and refuses the rest */
    CHECK(pith_interpreter_is_disarmed(table), "A2's table is armed after Py_EndInterpreter");
    for (int k = 0; k < RACE_THREADS; k++)
        pthread_join(threads[k], NULL);
    CHECK(pith_interpreter_in_flight(table) == 0, "%lld calls into A2 still in flight",
          (long long)pith_interpreter_in_flight(table));
    PyThreadState_Swap(main_ts);
    embed_log("disarm: %d releases (imported memory and preserved wrappers) raced "
              "Py_EndInterpreter", RACE_THREADS * RACE_PER_THREAD);
}

int main(void)
{
    PyThreadState *main_ts = embed_start();
    char text[1024];

    PyThreadState *a = embed_new_interpreter();
    long long id_a = embed_interpreter_id(a);
    embed_run("import pith\n"
              "t = pith.arange(3.)\n"
              "h_plain = pith._C._testing_handle(t)\n"
              "h_bare = pith._C._testing_handle(pith.arange(5.))\n"
              "ba = bytearray(32)\n"
              "u = pith.frombuffer(ba, dtype=pith.uint8)\n"
              "h_imported = pith._C._testing_handle(u)\n"
              "h_for_b = pith._C._testing_handle(u)\n"
              "p = pith.ones(2)\n"
              "p.note = 'preserved'\n"
              "h_preserved = pith._C._stash(p)\n"
              "del t, u, p\n");
    pith_tensor *plain = embed_eval_pointer("h_plain");
    pith_tensor *bare = embed_eval_pointer("h_bare");
    pith_tensor *imported = embed_eval_pointer("h_imported");
    pith_tensor *for_b = embed_eval_pointer("h_for_b");
    pith_tensor *preserved = embed_eval_pointer("h_preserved");
    pith_interpreter *table_a = embed_current_table();
    bool owns = false;
    CHECK(pith_slot_get(plain, &owns) == NULL || owns, "A's wrapper of `plain` is not C's");

    /* B holds an alias of A's imported memory across A's death (pith_alias does not copy:
     * only pith.share would). */
    PyThreadState *b = embed_new_interpreter();
    embed_run("import pith\n");
    embed_set_pointer("h", pith_alias(for_b));
    embed_run("alias = pith._C._testing_wrap_handle(h)\n");
    pith_release(for_b);

    embed_end_interpreter(a, b);
    CHECK(pith_interpreter_is_disarmed(table_a), "A's table is armed after Py_EndInterpreter");
    CHECK(!pith_interpreter_gate_open(table_a), "A's gate is open after Py_EndInterpreter");

    /* Wrapping in B: a clean error, and the reference stays with C. */
    embed_set_pointer("h", plain);
    embed_run("try:\n"
              "    pith._C._testing_wrap_handle(h)\n"
              "    err = None\n"
              "except pith.InterpreterError as e:\n"
              "    err = str(e)\n");
    CHECK(embed_eval_int("err is not None"), "B wrapped a tensor of the dead interpreter A");
    embed_eval_str("err", text, sizeof text);
    CHECK(embed_contains(text, "dead") && embed_contains(text, "finalised"),
          "the error does not say A is dead: %s", text);
    char needle[64];
    snprintf(needle, sizeof needle, "interpreter %lld", id_a);
    CHECK(embed_contains(text, needle), "the error does not name A: %s", text);
    CHECK(pith_slot_check(plain, table_a) == PITH_OK, "the tag moved");

    /* B still reads A's (leaked, never freed) imported memory through its alias. */
    CHECK(embed_eval_int("alias.sum().item() == 0 and alias.numel() == 32"), "alias");

    /* Releases: the disarmed no-ops, from this thread (in B) and from a bare pthread. */
    size_t live = pith_live_tensors();
    pith_release(plain);
    pith_release(imported);
    pith_release(preserved);
    PyThreadState *saved = PyEval_SaveThread();
    embed_on_bare_thread(embed_release_tensor, bare);
    PyEval_RestoreThread(saved);
    CHECK(PyThreadState_Get() == b, "a release changed the current thread state");
    CHECK(!PyErr_Occurred(), "a release left an exception in B");
    size_t freed = 4;
    CHECK(pith_live_tensors() == live - freed, "%zu of %zu tensors freed",
          live - pith_live_tensors(), freed);

    embed_run("del alias\n"); /* the last reference to A's imported storage: leaks it */
    embed_end_interpreter(b, main_ts);

    disarm_while_releasing(main_ts);

    CHECK(Py_FinalizeEx() == 0, "Py_FinalizeEx failed");
    CHECK(pith_live_tensors() == 0, "%zu tensors leaked", pith_live_tensors());
    embed_log("disarm: ok");
    return 0;
}
