/* sharing_refused.c — scenario 2: a tensor wrapped in interpreter A, handed to B as a raw
 * pith_tensor*, cannot be wrapped in B: pith.InterpreterError naming both interpreters, as
 * often as B tries, and A's wrapper stays the only one. pith_alias and pith.share hand the
 * same data to B without a copy (pith.share copies memory that a Python object owns). */
#include "embed.h"

/* Tries to wrap handle `h` in the current interpreter; sets `err` to the error text or None
 * and `w` to the wrapper. */
static const char *TRY_WRAP = "try:\n"
                              "    w = pith._C._testing_wrap_handle(h)\n"
                              "    err = None\n"
                              "except pith.InterpreterError as e:\n"
                              "    assert isinstance(e, RuntimeError)\n"
                              "    w, err = None, str(e)\n";

int main(void)
{
    PyThreadState *main_ts = embed_start();
    char text[1024], needle[64];

    PyThreadState *a = embed_new_interpreter();
    long long id_a = embed_interpreter_id(a);
    embed_run("import pith\n"
              "t = pith.arange(4.)\n"
              "t.note = 'from A'\n"
              "h = pith._C._testing_handle(t)\n");
    pith_tensor *t = embed_eval_pointer("h"); /* one C reference, ours */
    void *data_a = embed_eval_pointer("t.data_ptr()");
    pith_interpreter *table_a = embed_current_table();

    PyThreadState *b = embed_new_interpreter();
    long long id_b = embed_interpreter_id(b);
    embed_run("import pith\n");
    pith_interpreter *table_b = embed_current_table();
    for (int attempt = 0; attempt < 3; attempt++) {
        pith_retain(t); /* B's attempt takes a reference only when it succeeds */
        embed_set_pointer("h", t);
        embed_run(TRY_WRAP);
        CHECK(embed_eval_int("w is None and err is not None"), "B wrapped A's tensor");
        embed_eval_str("err", text, sizeof text);
        snprintf(needle, sizeof needle, "interpreter %lld cannot use this tensor", id_b);
        CHECK(embed_contains(text, needle), "the error does not name B (%s): %s", needle, text);
        snprintf(needle, sizeof needle, "belongs to interpreter %lld", id_a);
        CHECK(embed_contains(text, needle), "the error does not name A (%s): %s", needle, text);
        CHECK(embed_contains(text, "alive"), "the error does not say A is alive: %s", text);
        pith_release(t); /* the failed attempt left the reference with us */
    }
    CHECK(pith_slot_check(t, table_a) == PITH_OK, "A lost its tensor");
    CHECK(pith_slot_check(t, table_b) == PITH_ERR_INTERPRETER, "B's check passed");
    pith_clear_error();

    /* pith_alias: an untagged tensor over the same storage; B wraps it, without a copy. */
    pith_tensor *alias = pith_alias(t);
    CHECK(alias != NULL, "pith_alias: %s", pith_last_error());
    embed_set_pointer("h", alias); /* its one reference goes to B */
    embed_run(TRY_WRAP);
    CHECK(embed_eval_int("err is None"), "B could not wrap the alias: %s",
          embed_eval_str("str(err)", text, sizeof text));
    CHECK(embed_eval_pointer("w.data_ptr()") == data_a, "the alias in B is a copy");
    CHECK(embed_eval_int("w.tolist() == [0.0, 1.0, 2.0, 3.0]"), "B reads other values");
    CHECK(embed_eval_int("not hasattr(w, 'note')"), "the alias shares A's wrapper");
    embed_run("w[0] = 42.0\n");
    PyThreadState_Swap(a);
    CHECK(embed_eval_double("t[0].item()") == 42.0, "A does not see B's write");

    /* pith.share: a handle for another interpreter to take with pith.from_shared, over the
     * same data; a copy for memory that a Python object of A owns (Note [Imported
     * memory]). */
    embed_run("hs = pith.share(t)\n"
              "ba = bytearray(b'\\x01\\x02\\x03')\n"
              "u = pith.frombuffer(ba, dtype=pith.uint8)\n"
              "hu = pith.share(u)\n");
    void *shared = embed_eval_pointer("hs"), *shared_imported = embed_eval_pointer("hu");
    void *data_u = embed_eval_pointer("u.data_ptr()");
    PyThreadState_Swap(b);
    embed_set_pointer("hs", shared);
    embed_set_pointer("hu", shared_imported);
    embed_run("s = pith.from_shared(hs)\n"
              "su = pith.from_shared(hu)\n");
    CHECK(embed_eval_pointer("s.data_ptr()") == data_a, "pith.share copied pith's memory");
    CHECK(embed_eval_int("s.tolist() == [42.0, 1.0, 2.0, 3.0]"), "B reads other values");
    CHECK(embed_eval_pointer("su.data_ptr()") != data_u,
          "pith.share aliased memory that a bytearray of A owns");
    CHECK(embed_eval_int("su.tolist() == [1, 2, 3]"), "B reads another copy");
    embed_run("del s, su\n");
    PyThreadState_Swap(a);
    embed_log("sharing_refused: pith.share checked");

    pith_release(t);
    embed_end_interpreter(b, a);
    CHECK(embed_eval_int("t.note == 'from A' and t[0].item() == 42.0"), "A's tensor changed");
    embed_end_interpreter(a, main_ts);
    CHECK(Py_FinalizeEx() == 0, "Py_FinalizeEx failed");
    CHECK(pith_live_tensors() == 0, "%zu tensors leaked", pith_live_tensors());
    embed_log("sharing_refused: ok");
    return 0;
}
