/* callbacks.c — the entries of interpreter A's table besides decref (foreign_release.c),
 * reached from C through the public API in the three cases of Note [Entering an
 * interpreter from C] (A's thread state current; B's; none: a bare pthread, and this thread
 * once it released the GIL):
 *  - dispatch: pith_add on A's __pith_dispatch__ wrapper subclass, and a custom op whose
 *    kernel is A's Python function (Note [Python kernels belong to their interpreter]: from
 *    B's thread state that one is refused);
 *  - detach, and the metadata policies: sizes (ndim, numel), strides, is_contiguous, device.
 * Each time the answers are A's handler's, A's logs grew, the thread state is what it was,
 * A has no thread state left but its own, and a raising handler is a C error carrying its
 * message with no Python exception pending anywhere; its status follows the exception's
 * class, pith.InterpreterError by identity and not by name. Then A ends while C holds its tensors
 * (Note [Interpreter teardown]): every call fails with PITH_ERR_INTERPRETER, and releasing
 * them is a silent no-op. */
#include "embed.h"

/* A's Python: Wrap answers the metadata queries with values that differ from its inner
 * tensor's, detaches into a new Wrap, and passes every other op through to `elem` (plain
 * results, so that C reads their data); Raising raises from every call of its handler. */
static const char *A_CODE =
    "import pith, pith.utils, pith.library, weakref\n"
    "log, kernel_calls, raised, detached, freed = [], [], [], [], []\n"
    "ANSWERS = {'pith::size': [2, 5], 'pith::stride': (7, 1), 'pith::is_contiguous': False,\n"
    "           'pith::device': 'meta'}\n"
    "class Wrap(pith.Tensor):\n"
    "    @staticmethod\n"
    "    def __new__(cls, elem):\n"
    "        r = pith.Tensor._make_wrapper_subclass(cls, elem.shape, strides=elem.stride(),\n"
    "            dtype=elem.dtype, dispatch_sizes_strides_policy='sizes',\n"
    "            dispatch_device=True)\n"
    "        r.elem = elem\n"
    "        return r\n"
    "    @classmethod\n"
    "    def __pith_dispatch__(cls, func, types, args=(), kwargs=None):\n"
    "        log.append(func.name)\n"
    "        if func.name in ANSWERS:\n"
    "            return ANSWERS[func.name]\n"
    "        if func.name == 'pith::detach':\n"
    "            d = Wrap(args[0].elem.detach())\n"
    "            detached.append(weakref.ref(d, lambda r: freed.append(1)))\n"
    "            return d\n"
    "        unwrap = lambda e: e.elem if isinstance(e, Wrap) else e\n"
    "        return func(*map(unwrap, args), **{k: unwrap(v) for k, v in (kwargs or {}).items()})\n"
    "class EmbedError(ValueError):\n"
    "    pass\n"
    "class Raising(pith.Tensor):\n"
    "    @staticmethod\n"
    "    def __new__(cls, elem):\n"
    "        return pith.Tensor._make_wrapper_subclass(cls, elem.shape, dtype=elem.dtype,\n"
    "            dispatch_sizes_strides_policy='strides')\n"
    "    @classmethod\n"
    "    def __pith_dispatch__(cls, func, types, args=(), kwargs=None):\n"
    "        raised.append(func.name)\n"
    "        raise EmbedError(f\"EmbedError in A's handler for {func.name}\")\n"
    "pith.library.define('embedtest::twice(Tensor x) -> Tensor')\n"
    "@pith.library.impl('embedtest::twice', 'CPU')\n"
    "def twice(x):\n"
    "    kernel_calls.append(x.tolist())\n"
    "    return x * 2\n"
    "w = Wrap(pith.tensor([1.0, 2.0, 3.0]))\n"
    "bad = Raising(pith.ones(2))\n"
    "def raising(error, label):\n"
    "    class RaisingAs(pith.Tensor):\n"
    "        @staticmethod\n"
    "        def __new__(cls, elem):\n"
    "            return pith.Tensor._make_wrapper_subclass(cls, elem.shape, dtype=elem.dtype)\n"
    "        @classmethod\n"
    "        def __pith_dispatch__(cls, func, types, args=(), kwargs=None):\n"
    "            raise error(label + ' raised in A')\n"
    "    return RaisingAs(pith.ones(2))\n"
    "Impostor = type('pith.InterpreterError', (RuntimeError,), {})\n"
    "h_impostor = pith._C._stash(raising(Impostor, 'impostor'))\n"
    "h_genuine = pith._C._stash(raising(pith.InterpreterError, 'genuine'))\n"
    "h_w, h_bad = pith._C._stash(w), pith._C._stash(bad)\n"
    "del w, bad\n"; /* C owns both wrappers from here on */

/* What one round of run_calls leaves in A's logs. */
static const char *LOG_ROUND = "pith::add.Tensor,pith::detach,pith::is_contiguous,"
                               "pith::is_contiguous,pith::size,pith::size,pith::size,"
                               "pith::stride,pith::stride,pith::size,pith::device,"
                               "embedtest::twice";
static const char *RAISED_ROUND = "pith::add.Tensor,pith::is_contiguous,pith::detach";

/* A's wrappers whose handlers raise a RuntimeError named "pith.InterpreterError" and the
 * real pith.InterpreterError; released while A lives. */
static pith_tensor *impostor, *genuine;

typedef struct {
    const char *where;
    PyThreadState *state; /* the thread state current throughout (NULL: none) */
    bool from_b;          /* B's thread state: A's Python kernel is refused */
    pith_tensor *w, *bad, *plain;
    const pith_op *twice;
    long long id_a;
} calls;

#define CHECK_STATE(c, what)                                                                \
    CHECK(_PyThreadState_UncheckedGet() == (c)->state,                                      \
          "%s: %s changed the current thread state", (c)->where, (what))

/* Checks that the last call failed with `status` and a message holding `needle`. */
static void check_failed(const calls *c, const char *what, pith_status status,
                         const char *needle)
{
    CHECK(pith_last_status() == status, "%s: %s: %s instead of %s (%s)", c->where, what,
          pith_status_name(pith_last_status()), pith_status_name(status), pith_last_error());
    CHECK(embed_contains(pith_last_error(), needle), "%s: %s: '%s' does not say '%s'",
          c->where, what, pith_last_error(), needle);
    CHECK_STATE(c, what);
    pith_clear_error();
}

static void check_ok(const calls *c, const char *what)
{
    CHECK(pith_last_status() == PITH_OK, "%s: %s failed: %s", c->where, what,
          pith_last_error());
    CHECK_STATE(c, what);
}

/* A plain float32 result holding want[0..n). Releases it. */
static void check_values(const calls *c, const char *what, pith_tensor *r, const float *want,
                         int n)
{
    check_ok(c, what);
    CHECK(r != NULL, "%s: %s returned NULL", c->where, what);
    CHECK(!pith_tensor_has_python_key(r) && pith_tensor_dtype(r) == PITH_FLOAT32 &&
              pith_numel(r) == n,
          "%s: %s is not a plain float32 tensor of %d elements", c->where, what, n);
    const float *v = pith_data_ptr(r);
    for (int i = 0; i < n; i++)
        CHECK(v[i] == want[i], "%s: %s[%d] = %g, expected %g", c->where, what, i, v[i],
              want[i]);
    pith_release(r);
    CHECK_STATE(c, "releasing the result");
}

/* embedtest::twice(x) through a boxed call; NULL when it fails. */
static pith_tensor *call_twice(const calls *c, const pith_tensor *x)
{
    pith_stack *stack = pith_stack_new();
    CHECK(stack != NULL && pith_stack_push_tensor(stack, x) == PITH_OK, "%s: stack",
          c->where);
    pith_tensor *r = NULL;
    if (pith_call_boxed(c->twice, stack) == PITH_OK) {
        CHECK(pith_stack_size(stack) == 1, "%s: twice left %zu values", c->where,
              pith_stack_size(stack));
        r = pith_stack_get_tensor(stack, 0);
    }
    pith_status status = pith_last_status();
    char message[1024];
    snprintf(message, sizeof message, "%s", pith_last_error());
    pith_stack_free(stack);
    if (status != PITH_OK)
        pith_set_error(status, "%s", message);
    return r;
}

/* One round of calls into A, from whatever thread state `c` says; Python-free. */
static void run_calls(const calls *c)
{
    static const float sum[] = {2, 4, 6}, ones_twice[] = {2, 2};
    char needle[128];
    pith_clear_error();
    CHECK_STATE(c, "nothing");

    /* dispatch: A's handler adds the inner tensors. */
    check_values(c, "pith_add(w, w)", pith_add(c->w, c->w), sum, 3);

    /* detach: a new wrapper of A, whose release (a decref into A) frees it there. */
    pith_tensor *d = pith_detach(c->w);
    check_ok(c, "pith_detach(w)");
    CHECK(d != NULL && d != c->w && pith_tensor_has_python_key(d) &&
              pith_tensor_interpreter(d) == pith_tensor_interpreter(c->w),
          "%s: pith_detach(w) is not a new wrapper of A", c->where);
    CHECK(!pith_is_contiguous(d), "%s: detach's wrapper is contiguous", c->where);
    check_ok(c, "pith_is_contiguous(detached)");
    pith_release(d);
    CHECK_STATE(c, "releasing the detached wrapper");

    /* The metadata policies: A's answers, not the inner tensor's (3 contiguous floats). */
    CHECK(!pith_is_contiguous(c->w), "%s: w is contiguous", c->where);
    check_ok(c, "pith_is_contiguous(w)");
    CHECK(pith_ndim(c->w) == 2 && pith_size(c->w, 0) == 2 && pith_size(c->w, 1) == 5,
          "%s: w's sizes are not A's [2, 5]: ndim %d", c->where, pith_ndim(c->w));
    check_ok(c, "pith_size(w)");
    CHECK(pith_stride(c->w, 0) == 7 && pith_stride(c->w, 1) == 1,
          "%s: w's strides are not A's (7, 1)", c->where);
    check_ok(c, "pith_stride(w)");
    CHECK(pith_numel(c->w) == 10, "%s: w's numel is %lld", c->where,
          (long long)pith_numel(c->w));
    check_ok(c, "pith_numel(w)");
    CHECK(pith_tensor_device(c->w) == PITH_META, "%s: w's device is not A's 'meta'",
          c->where);
    check_ok(c, "pith_tensor_device(w)");

    /* A custom op: on w through A's handler, which calls A's kernel on the inner tensor; on
     * a plain tensor straight to A's kernel, which B may not call. */
    check_values(c, "twice(w)", call_twice(c, c->w), sum, 3);
    pith_tensor *r = call_twice(c, c->plain);
    if (c->from_b) {
        CHECK(r == NULL, "%s: B ran A's Python kernel", c->where);
        snprintf(needle, sizeof needle, "belongs to interpreter %lld", c->id_a);
        check_failed(c, "twice(plain)", PITH_ERR_INTERPRETER, needle);
    } else {
        check_values(c, "twice(plain)", r, ones_twice, 2);
    }

    /* A raising handler: a C error with its message, whichever entry reached it. */
    CHECK(pith_add(c->bad, c->bad) == NULL, "%s: pith_add(bad) succeeded", c->where);
    check_failed(c, "pith_add(bad)", PITH_ERR_VALUE,
                 "EmbedError in A's handler for pith::add.Tensor");
    CHECK(!pith_is_contiguous(c->bad), "%s: pith_is_contiguous(bad) is true", c->where);
    check_failed(c, "pith_is_contiguous(bad)", PITH_ERR_VALUE,
                 "EmbedError in A's handler for pith::is_contiguous");
    CHECK(pith_detach(c->bad) == NULL, "%s: pith_detach(bad) succeeded", c->where);
    check_failed(c, "pith_detach(bad)", PITH_ERR_VALUE,
                 "EmbedError in A's handler for pith::detach");

    /* Only pith's own class is PITH_ERR_INTERPRETER, not one that has its name. */
    CHECK(pith_add(impostor, impostor) == NULL, "%s: pith_add(impostor) succeeded", c->where);
    check_failed(c, "pith_add(impostor)", PITH_ERR_RUNTIME, "impostor raised in A");
    CHECK(pith_add(genuine, genuine) == NULL, "%s: pith_add(genuine) succeeded", c->where);
    check_failed(c, "pith_add(genuine)", PITH_ERR_INTERPRETER, "genuine raised in A");
}

/* The same calls once A is dead: each one refused, none reaching A. */
static void run_refused(const calls *c)
{
    char finalised[128], foreign[128];
    snprintf(finalised, sizeof finalised, "interpreter %lld was finalised", c->id_a);
    snprintf(foreign, sizeof foreign, "belongs to interpreter %lld", c->id_a);
    pith_clear_error();
    CHECK(pith_add(c->w, c->w) == NULL, "%s: pith_add(w) succeeded", c->where);
    check_failed(c, "pith_add(w)", PITH_ERR_INTERPRETER, finalised);
    CHECK(call_twice(c, c->w) == NULL, "%s: twice(w) succeeded", c->where);
    check_failed(c, "twice(w)", PITH_ERR_INTERPRETER, finalised);
    CHECK(pith_add(c->bad, c->bad) == NULL, "%s: pith_add(bad) succeeded", c->where);
    check_failed(c, "pith_add(bad)", PITH_ERR_INTERPRETER, finalised);
    CHECK(pith_detach(c->w) == NULL, "%s: pith_detach(w) succeeded", c->where);
    check_failed(c, "pith_detach(w)", PITH_ERR_INTERPRETER, finalised);
    CHECK(!pith_is_contiguous(c->w), "%s: pith_is_contiguous(w) is true", c->where);
    check_failed(c, "pith_is_contiguous(w)", PITH_ERR_INTERPRETER, finalised);
    CHECK(pith_ndim(c->w) == -1, "%s: pith_ndim(w) answered", c->where);
    check_failed(c, "pith_ndim(w)", PITH_ERR_INTERPRETER, finalised);
    CHECK(pith_size(c->w, 0) == -1, "%s: pith_size(w) answered", c->where);
    check_failed(c, "pith_size(w)", PITH_ERR_INTERPRETER, finalised);
    CHECK(pith_stride(c->w, 0) == -1, "%s: pith_stride(w) answered", c->where);
    check_failed(c, "pith_stride(w)", PITH_ERR_INTERPRETER, finalised);
    CHECK(pith_numel(c->w) == -1, "%s: pith_numel(w) answered", c->where);
    check_failed(c, "pith_numel(w)", PITH_ERR_INTERPRETER, finalised);
    pith_tensor_device(c->w); /* returns a device whatever happens: the status tells */
    check_failed(c, "pith_tensor_device(w)", PITH_ERR_INTERPRETER, finalised);
    /* From B, A's kernel refuses before it looks at A's table. */
    CHECK(call_twice(c, c->plain) == NULL, "%s: twice(plain) succeeded", c->where);
    check_failed(c, "twice(plain)", PITH_ERR_INTERPRETER, c->from_b ? foreign : finalised);
}

static void *run_calls_thread(void *arg)
{
    run_calls(arg);
    return NULL;
}

static void *run_refused_thread(void *arg)
{
    run_refused(arg);
    return NULL;
}

/* In A: the logs hold `rounds` rounds of run_calls, whose calls of A's kernel on the plain
 * tensor ran when `plain_ran`; then empties them. */
static void check_logs(const char *where, int rounds, bool plain_ran)
{
    char text[4096], want[4096] = "", expr[256];
    for (int i = 0; i < rounds; i++)
        snprintf(want + strlen(want), sizeof want - strlen(want), "%s%s", i ? "," : "",
                 LOG_ROUND);
    embed_eval_str("','.join(log)", text, sizeof text);
    CHECK(strcmp(text, want) == 0, "%s: A's handler log is\n  %s\nexpected\n  %s", where, text,
          want);
    want[0] = '\0';
    for (int i = 0; i < rounds; i++)
        snprintf(want + strlen(want), sizeof want - strlen(want), "%s%s", i ? "," : "",
                 RAISED_ROUND);
    embed_eval_str("','.join(raised)", text, sizeof text);
    CHECK(strcmp(text, want) == 0, "%s: A's raising handler saw\n  %s\nexpected\n  %s", where,
          text, want);
    snprintf(expr, sizeof expr, "kernel_calls == ([[1.0, 2.0, 3.0]] + [[1.0, 1.0]] * %d) * %d",
             plain_ran, rounds);
    CHECK(embed_eval_int(expr), "%s: A's kernel saw %s", where,
          embed_eval_str("str(kernel_calls)", text, sizeof text));
    CHECK(embed_eval_int("len(detached) == len(freed)"),
          "%s: %lld of %lld detached wrappers were not freed in A", where,
          embed_eval_int("len(detached) - len(freed)"), embed_eval_int("len(detached)"));
    CHECK(!PyErr_Occurred(), "%s: an exception is pending in A", where);
    embed_run("for l in (log, kernel_calls, raised, detached, freed):\n"
              "    l.clear()\n");
}

/* A has no thread state but `a`: no temporary one was left behind. */
static void check_only_state(const char *where, PyThreadState *a)
{
    PyInterpreterState *is = PyThreadState_GetInterpreter(a);
    CHECK(PyInterpreterState_ThreadHead(is) == a && PyThreadState_Next(a) == NULL,
          "%s left a thread state in A", where);
}

int main(void)
{
    PyThreadState *main_ts = embed_start();
    PyThreadState *a = embed_new_interpreter();
    long long id_a = embed_interpreter_id(a);
    embed_run(A_CODE);
    pith_interpreter *table_a = embed_current_table();
    pith_tensor *w = embed_eval_pointer("h_w"), *bad = embed_eval_pointer("h_bad");
    impostor = embed_eval_pointer("h_impostor");
    genuine = embed_eval_pointer("h_genuine");
    const pith_op *twice = pith_op_find("embedtest::twice");
    CHECK(twice != NULL, "embedtest::twice is not registered: %s", pith_last_error());
    static const float ones[] = {1, 1};
    pith_tensor *plain = pith_from_data(ones, 1, (const int64_t[]){2}, PITH_FLOAT32);
    CHECK(plain != NULL, "pith_from_data: %s", pith_last_error());
    CHECK(pith_tensor_interpreter(w) == table_a && pith_tensor_interpreter(bad) == table_a,
          "A's wrappers are not tagged to A");

    PyThreadState *b = embed_new_interpreter();
    embed_run("import pith\n");

    /* 1. A's own thread state. */
    PyThreadState_Swap(a);
    calls c = {"case 1 (A's thread state)", a, false, w, bad, plain, twice, id_a};
    run_calls(&c);
    CHECK(!PyErr_Occurred(), "case 1 left an exception in A");
    check_logs("case 1", 1, true);

    /* 2. B's thread state: A runs on a temporary thread state, then B is current again. */
    PyThreadState_Swap(b);
    c = (calls){"case 2 (B's thread state)", b, true, w, bad, plain, twice, id_a};
    run_calls(&c);
    CHECK(PyThreadState_Get() == b, "case 2 did not swap back to B");
    CHECK(!PyErr_Occurred(), "case 2 left an exception in B");
    PyThreadState_Swap(a);
    check_only_state("case 2", a);
    check_logs("case 2", 1, false);

    /* 3. No thread state: a bare pthread, then this thread, while nobody holds the GIL. */
    c = (calls){"case 3 (bare pthread)", NULL, false, w, bad, plain, twice, id_a};
    PyThreadState *saved = PyEval_SaveThread();
    embed_on_bare_thread(run_calls_thread, &c);
    c.where = "case 3 (this thread, no GIL)";
    run_calls(&c);
    PyEval_RestoreThread(saved);
    CHECK(PyThreadState_Get() == a, "case 3 changed this thread's state");
    check_only_state("case 3", a);
    check_logs("case 3", 2, true);
    pith_release(impostor); /* from A's thread state: the wrappers die in A */
    pith_release(genuine);
    CHECK(!PyErr_Occurred() && pith_last_status() == PITH_OK, "releasing the raising wrappers");

    /* A ends while C holds its wrappers (C owns them: See Note [PyObject preservation]). */
    bool owns = false;
    CHECK(pith_slot_get(w, &owns) != NULL && owns, "C does not own w's wrapper");
    embed_end_interpreter(a, b);
    CHECK(pith_interpreter_is_disarmed(table_a), "A's table is armed after Py_EndInterpreter");

    c = (calls){"dead A, from B", b, true, w, bad, plain, twice, id_a};
    run_refused(&c);
    CHECK(!PyErr_Occurred(), "a refused call left an exception in B");
    c = (calls){"dead A, from a bare pthread", NULL, false, w, bad, plain, twice, id_a};
    saved = PyEval_SaveThread();
    embed_on_bare_thread(run_refused_thread, &c);
    PyEval_RestoreThread(saved);

    /* Releasing A's wrappers now leaks them, silently, from B and from a bare pthread. */
    size_t live = pith_live_tensors();
    pith_clear_error();
    pith_release(w);
    pith_release(plain);
    saved = PyEval_SaveThread();
    embed_on_bare_thread(embed_release_tensor, bad);
    PyEval_RestoreThread(saved);
    CHECK(PyThreadState_Get() == b, "a release changed the current thread state");
    CHECK(!PyErr_Occurred(), "a release left an exception in B");
    CHECK(pith_last_status() == PITH_OK, "a release set an error: %s", pith_last_error());
    CHECK(pith_live_tensors() == live - 3, "%zu of 3 tensors freed", live - pith_live_tensors());

    embed_end_interpreter(b, main_ts);
    CHECK(Py_FinalizeEx() == 0, "Py_FinalizeEx failed");
    /* w's wrapper leaked with A, and with it its `elem`. */
    CHECK(pith_live_tensors() == 1, "%zu tensors live, expected w.elem alone",
          pith_live_tensors());
    embed_log("callbacks: ok");
    return 0;
}
