/* tagging_race.c — scenario 3: many threads, each in a thread state of a different
 * sub-interpreter, wrap one fresh tensor made in C at the same moment. Exactly one wins the
 * tag (Note [PyObject slot and interpreter tag]); every other one gets
 * pith.InterpreterError, and its reference stays with it. Repeated for many fresh tensors. */
#include "embed.h"

enum { INTERPRETERS = 8, ROUNDS = 25 };

typedef struct {
    PyInterpreterState *interp;
    pith_tensor *t;
    pthread_barrier_t *barrier;
    int won;
} racer;

static void *race(void *arg)
{
    racer *r = arg;
    PyThreadState *ts = PyThreadState_New(r->interp); /* this thread's, of its interpreter */
    CHECK(ts != NULL, "PyThreadState_New");
    pthread_barrier_wait(r->barrier);
    PyEval_RestoreThread(ts);
    embed_set_pointer("h", r->t);
    embed_run("try:\n"
              "    w = pith._C._testing_wrap_handle(h)\n"
              "    won = 1\n"
              "except pith.InterpreterError as e:\n"
              "    assert 'cannot use this tensor' in str(e), str(e)\n"
              "    won = 0\n");
    r->won = (int)embed_eval_int("won");
    if (!r->won)
        pith_release(r->t); /* the reference stayed with us */
    embed_run("w = None\n");
    PyThreadState_Clear(ts);
    PyThreadState_DeleteCurrent();
    return NULL;
}

int main(void)
{
    PyThreadState *main_ts = embed_start();
    PyThreadState *subs[INTERPRETERS];
    pith_interpreter *tables[INTERPRETERS];
    for (int i = 0; i < INTERPRETERS; i++) {
        subs[i] = embed_new_interpreter();
        embed_run("import pith\n");
        tables[i] = embed_current_table();
    }
    PyThreadState_Swap(main_ts);
    PyThreadState *saved = PyEval_SaveThread(); /* the racers need the GIL */

    int wins_per_interpreter[INTERPRETERS] = {0};
    for (int round = 0; round < ROUNDS; round++) {
        int64_t size = 3;
        pith_tensor *t = pith_zeros(1, &size, PITH_FLOAT32);
        CHECK(t != NULL, "pith_zeros: %s", pith_last_error());
        pthread_barrier_t barrier;
        pthread_barrier_init(&barrier, NULL, INTERPRETERS);
        racer racers[INTERPRETERS];
        pthread_t threads[INTERPRETERS];
        for (int i = 0; i < INTERPRETERS; i++) {
            pith_retain(t); /* one reference per racer */
            racers[i] = (racer){PyThreadState_GetInterpreter(subs[i]), t, &barrier, 0};
            CHECK(pthread_create(&threads[i], NULL, race, &racers[i]) == 0, "pthread_create");
        }
        int wins = 0, winner = -1;
        for (int i = 0; i < INTERPRETERS; i++) {
            pthread_join(threads[i], NULL);
            if (racers[i].won) {
                wins++;
                winner = i;
            }
        }
        pthread_barrier_destroy(&barrier);
        CHECK(wins == 1, "round %d: %d interpreters wrapped the tensor", round, wins);
        wins_per_interpreter[winner]++;
        for (int i = 0; i < INTERPRETERS; i++)
            CHECK((pith_slot_check(t, tables[i]) == PITH_OK) == (i == winner),
                  "round %d: interpreter %d: the tag disagrees with the winner %d", round, i,
                  winner);
        pith_clear_error();
        pith_release(t);
    }
    int distinct = 0;
    for (int i = 0; i < INTERPRETERS; i++)
        distinct += wins_per_interpreter[i] > 0;
    embed_log("tagging_race: %d rounds, won by %d different interpreters", ROUNDS, distinct);

    PyEval_RestoreThread(saved);
    for (int i = 0; i < INTERPRETERS; i++)
        embed_end_interpreter(subs[i], main_ts);
    CHECK(Py_FinalizeEx() == 0, "Py_FinalizeEx failed");
    CHECK(pith_live_tensors() == 0, "%zu tensors leaked", pith_live_tensors());
    embed_log("tagging_race: ok");
    return 0;
}
