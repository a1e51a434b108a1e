/* compile_subinterp.c — scenario: a sub-interpreter without compile never sees the hook.
 * The main interpreter and a sub-interpreter both import pith; a Python thread of the main
 * interpreter sits inside a compiled call (its frame falls back and waits on an Event), so
 * the main interpreter's frame hook is installed (Note [The frame hook]). Meanwhile the
 * sub-interpreter's frame function is still _PyEval_EvalFrameDefault, its
 * pith.compiler.hook_installed() is False, its stats saw no frame, and its Python calls and
 * pith ops work. Once the thread leaves the compiled call the main hook is gone too. */
#include "embed.h"

/* The thread's compiled function: `entered.set()` and `release.wait()` are calls the
 * translator does not know, so the frame falls back and runs eagerly, inside the region. */
static const char *START_HOLDER = "import pith, threading\n"
                                  "entered, release = threading.Event(), threading.Event()\n"
                                  "errors = []\n"
                                  "def wait_inside():\n"
                                  "    entered.set()\n"
                                  "    release.wait()\n"
                                  "    return 1\n"
                                  "compiled = pith.compile(wait_inside)\n"
                                  "def hold():\n"
                                  "    try:\n"
                                  "        assert compiled() == 1\n"
                                  "    except BaseException as e:\n"
                                  "        errors.append(repr(e))\n"
                                  "        entered.set()\n"
                                  "holder = threading.Thread(target=hold)\n"
                                  "holder.start()\n"
                                  "assert entered.wait(60), 'the holder never entered'\n";

static const char *SUB_WORK = "def add(a, b):\n"
                              "    return a + b\n"
                              "def chain(n):\n"
                              "    s = 0\n"
                              "    for i in range(n):\n"
                              "        s = add(s, i)\n"
                              "    return s\n"
                              "assert chain(100) == 4950\n"
                              "t = pith.arange(6.).reshape(2, 3)\n"
                              "r = ((t * 2) @ t.T).sum().item()\n"
                              "assert r == 166.0, r\n"
                              "assert not pith.compiler.hook_installed()\n";

static int eval_frame_is_default(PyInterpreterState *interp)
{
    return _PyInterpreterState_GetEvalFrameFunc(interp) == _PyEval_EvalFrameDefault;
}

int main(void)
{
    PyThreadState *main_ts = embed_start();
    PyInterpreterState *main_interp = PyThreadState_GetInterpreter(main_ts);
    embed_run("import pith\n");
    CHECK(eval_frame_is_default(main_interp), "the main hook is installed before any compile");

    PyThreadState *sub = embed_new_interpreter();
    PyInterpreterState *sub_interp = PyThreadState_GetInterpreter(sub);
    embed_run("import pith\n");
    CHECK(!embed_eval_int("pith.compiler.hook_installed()"),
          "the sub-interpreter reports a hook after importing pith");

    PyThreadState_Swap(main_ts);
    embed_run(START_HOLDER);
    char errors[512];
    CHECK(embed_eval_int("len(errors)") == 0, "the holder failed: %s",
          embed_eval_str("'; '.join(errors)", errors, sizeof errors));
    CHECK(embed_eval_int("holder.is_alive()"), "the holder left its compiled call early");
    CHECK(!eval_frame_is_default(main_interp),
          "the main interpreter's frame function is the default while a thread is inside a "
          "compiled call");
    CHECK(embed_eval_int("pith.compiler.hook_installed()"),
          "pith.compiler.hook_installed() is False in the main interpreter inside a region");
    CHECK(embed_eval_int("pith.compiler.stats()['frames_seen']") >= 1,
          "the main hook saw no frame of the compiled function");

    /* The sub-interpreter, while the main hook stays installed. */
    PyThreadState_Swap(sub);
    CHECK(eval_frame_is_default(sub_interp),
          "the sub-interpreter's frame function is not _PyEval_EvalFrameDefault");
    embed_run(SUB_WORK);
    CHECK(!embed_eval_int("pith.compiler.hook_installed()"),
          "the sub-interpreter reports the main interpreter's hook");
    CHECK(embed_eval_int("pith.compiler.stats()['frames_seen']") == 0,
          "the sub-interpreter's stats saw %lld frames",
          embed_eval_int("pith.compiler.stats()['frames_seen']"));
    CHECK(eval_frame_is_default(sub_interp),
          "running code in the sub-interpreter installed a hook there");

    PyThreadState_Swap(main_ts);
    CHECK(!eval_frame_is_default(main_interp),
          "the main hook went away while the holder is still inside its compiled call");
    embed_run("release.set()\n"
              "holder.join(60)\n"
              "assert not holder.is_alive(), 'the holder did not return'\n");
    CHECK(embed_eval_int("len(errors)") == 0, "the holder failed: %s",
          embed_eval_str("'; '.join(errors)", errors, sizeof errors));
    CHECK(eval_frame_is_default(main_interp),
          "the main hook is still installed after the last compiled call returned");
    CHECK(!embed_eval_int("pith.compiler.hook_installed()"),
          "pith.compiler.hook_installed() is True after the last compiled call returned");

    PyThreadState_Swap(sub);
    CHECK(eval_frame_is_default(sub_interp), "the sub-interpreter got a hook at the end");
    embed_run("assert chain(10) == 45\n");
    embed_end_interpreter(sub, main_ts);
    CHECK(eval_frame_is_default(main_interp), "ending the sub-interpreter installed a hook");
    CHECK(Py_FinalizeEx() == 0, "Py_FinalizeEx failed");
    embed_log("compile_subinterp: ok");
    return 0;
}
