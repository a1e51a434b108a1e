/* foreign_release.c — the three cases of Note [Entering an interpreter from C]: C drops
 * the last reference to something interpreter A owns from
 *  1. a thread state of A (direct),
 *  2. a thread state of another interpreter B (swap to a temporary state of A and back),
 *  3. a thread with no thread state at all (a bare pthread; and the main thread after it
 *     released the GIL),
 * and A's object is released under A's GIL each time. The objects: imported memory (a
 * bytearray's buffer export, which blocks resizing the bytearray until it is released,
 * Note [Imported memory]), and a preserved wrapper whose weakref callback must run in A.
 * Last, many bare threads release at once while A runs. */
#include "embed.h"

/* In A: a tensor over a fresh bytearray, held by C alone; returns its handle. */
static pith_tensor *imported_in_a(const char *name)
{
    char code[512];
    snprintf(code, sizeof code,
             "%s = bytearray(8)\n"
             "h = pith._C._testing_handle(pith.frombuffer(%s, dtype=pith.uint8))\n"
             "try:\n"
             "    %s.append(0)\n"
             "    locked = False\n"
             "except BufferError:\n"
             "    locked = True\n",
             name, name, name);
    embed_run(code);
    CHECK(embed_eval_int("locked"), "%s is not locked by its export", name);
    return embed_eval_pointer("h");
}

/* In A: whether `name` was released (it can be resized again). */
static int released_in_a(const char *name)
{
    char expr[256];
    snprintf(expr, sizeof expr, "(lambda b: (b.append(0), b.pop(), True)[2])(%s)", name);
    PyObject *globals = embed_main_dict();
    PyObject *r = PyRun_String(expr, Py_eval_input, globals, globals);
    if (!r) {
        CHECK(PyErr_ExceptionMatches(PyExc_BufferError), "unexpected error");
        PyErr_Clear();
        return 0;
    }
    Py_DECREF(r);
    return 1;
}

/* In A: a preserved wrapper (C owns it after `del`), with a weakref whose callback counts. */
static pith_tensor *preserved_in_a(void)
{
    embed_run("t = pith.ones(2)\n"
              "t.note = 'kept'\n"
              "refs.append(weakref.ref(t, lambda r: fired.append(1)))\n"
              "h = pith._C._stash(t)\n"
              "del t\n"
              "assert refs[-1]() is not None and refs[-1]().note == 'kept'\n");
    return embed_eval_pointer("h");
}

enum { THREADS = 4, PER_THREAD = 50 };

typedef struct {
    pith_tensor *tensors[PER_THREAD];
} batch;

static void *release_batch(void *arg)
{
    batch *b = arg;
    for (int i = 0; i < PER_THREAD; i++)
        pith_release(b->tensors[i]);
    return NULL;
}

int main(void)
{
    PyThreadState *main_ts = embed_start();
    PyThreadState *a = embed_new_interpreter();
    embed_run("import pith, weakref\n"
              "refs, fired = [], []\n");
    PyThreadState *b = embed_new_interpreter();
    embed_run("import pith\n");

    /* 1. From A itself. */
    PyThreadState_Swap(a);
    pith_tensor *t = imported_in_a("b1");
    pith_release(t);
    CHECK(released_in_a("b1"), "case 1: the export was not released");

    /* 2. From B's thread state: A's GIL is B's GIL (3.11), through a temporary state. */
    t = imported_in_a("b2");
    PyThreadState_Swap(b);
    pith_release(t);
    CHECK(PyThreadState_Get() == b, "case 2 did not swap back to B");
    CHECK(!PyErr_Occurred(), "case 2 left an exception in B");
    PyThreadState_Swap(a);
    CHECK(released_in_a("b2"), "case 2: the export was not released");

    /* 3. From a bare pthread, and from this thread once it released the GIL. */
    t = imported_in_a("b3");
    pith_tensor *t4 = imported_in_a("b4");
    PyThreadState *saved = PyEval_SaveThread();
    embed_on_bare_thread(embed_release_tensor, t);
    pith_release(t4);
    PyEval_RestoreThread(saved);
    CHECK(PyThreadState_Get() == a, "case 3 changed this thread's state");
    CHECK(released_in_a("b3"), "case 3 (bare pthread): the export was not released");
    CHECK(released_in_a("b4"), "case 3 (this thread, no GIL): the export was not released");

    /* Preserved wrappers: the same three cases, and the weakref callbacks run in A. */
    pith_tensor *p1 = preserved_in_a(), *p2 = preserved_in_a(), *p3 = preserved_in_a();
    pith_release(p1);
    PyThreadState_Swap(b);
    pith_release(p2);
    saved = PyEval_SaveThread();
    embed_on_bare_thread(embed_release_tensor, p3);
    PyEval_RestoreThread(saved);
    PyThreadState_Swap(a);
    CHECK(embed_eval_int("len(fired) == 3 and all(r() is None for r in refs)"),
          "preserved wrappers released from C were not freed in A (%lld callbacks)",
          embed_eval_int("len(fired)"));

    /* Many bare threads at once, while A keeps running Python on this thread. */
    static batch batches[THREADS];
    embed_run("bufs = []\n");
    for (int k = 0; k < THREADS; k++)
        for (int i = 0; i < PER_THREAD; i++) {
            batches[k].tensors[i] = imported_in_a("buf");
            embed_run("bufs.append(buf)\n");
        }
    pthread_t threads[THREADS];
    for (int k = 0; k < THREADS; k++)
        CHECK(pthread_create(&threads[k], NULL, release_batch, &batches[k]) == 0, "create");
    embed_run("import time\n"
              "deadline = time.monotonic() + 60\n"
              "def all_released():\n"
              "    for b in bufs:\n"
              "        try:\n"
              "            b.append(0); b.pop()\n"
              "        except BufferError:\n"
              "            return False\n"
              "    return True\n"
              "while not all_released() and time.monotonic() < deadline:\n"
              "    sum(range(1000))\n");
    saved = PyEval_SaveThread();
    for (int k = 0; k < THREADS; k++)
        pthread_join(threads[k], NULL);
    PyEval_RestoreThread(saved);
    CHECK(embed_eval_int("all_released()"), "some of %d concurrent releases did not happen",
          THREADS * PER_THREAD);

    embed_end_interpreter(b, a);
    embed_end_interpreter(a, main_ts);
    CHECK(Py_FinalizeEx() == 0, "Py_FinalizeEx failed");
    CHECK(pith_live_tensors() == 0, "%zu tensors leaked", pith_live_tensors());
    embed_log("foreign_release: ok");
    return 0;
}
