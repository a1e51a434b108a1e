/* The interpreter table and the PyObject slot, with fake interpreters (core_shim.c). */
#include <atomic>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "core_test.h"

namespace {

class InterpreterTest : public CoreTest {
protected:
    std::vector<fake_interp *> fakes_;
    fake_interp *Fake(const char *name)
    {
        fake_interp *f = fake_new(name);
        fakes_.push_back(f);
        return f;
    }
    void TearDown() override
    {
        for (fake_interp *f : fakes_)
            fake_free(f);
        CoreTest::TearDown();
    }
    static Tensor NewTensor()
    {
        int64_t n = 4;
        return Tensor(pith_zeros(1, &n, PITH_FLOAT32));
    }
};

/* Stands in for a PyObject: any pointer with the low bit clear. */
alignas(16) char fake_wrapper[16];

/* ---- registration ---- */

TEST_F(InterpreterTest, RegisterKeepsNameCtxAndVtable)
{
    size_t before = shim_interp_registered_count();
    fake_interp *f = Fake("interp-7");
    pith_interpreter *t = fake_table(f);
    ASSERT_NE(t, nullptr);
    EXPECT_STREQ(pith_interpreter_name(t), "interp-7");
    EXPECT_EQ(pith_interpreter_ctx(t), static_cast<void *>(f));
    EXPECT_NE(pith_interpreter_vtable_of(t), nullptr);
    EXPECT_FALSE(pith_interpreter_is_disarmed(t));
    EXPECT_TRUE(pith_interpreter_gate_open(t));
    EXPECT_EQ(pith_interpreter_in_flight(t), 0);
    EXPECT_EQ(shim_interp_registered_count(), before + 1);
}

TEST_F(InterpreterTest, LongNamesAreTruncated)
{
    std::string name(200, 'n');
    fake_interp *f = Fake(name.c_str());
    EXPECT_EQ(std::string(pith_interpreter_name(fake_table(f))), std::string(63, 'n'));
}

TEST_F(InterpreterTest, RegisterRejectsNullArguments)
{
    pith_interpreter_vtable vt = {};
    EXPECT_EQ(pith_interpreter_register(nullptr, &vt, nullptr), nullptr);
    EXPECT_TRUE(HasError(PITH_ERR_VALUE, "name is NULL"));
    EXPECT_EQ(pith_interpreter_register("x", nullptr, nullptr), nullptr);
    EXPECT_TRUE(HasError(PITH_ERR_VALUE, "vtable is NULL"));
}

TEST_F(InterpreterTest, NullInterpreterGivesSentinelsAndValueErrors)
{
    EXPECT_EQ(pith_interpreter_name(nullptr), nullptr);
    EXPECT_TRUE(HasError(PITH_ERR_VALUE, "interpreter is NULL"));
    EXPECT_FALSE(pith_interpreter_is_disarmed(nullptr));
    EXPECT_TRUE(HasError(PITH_ERR_VALUE, "interpreter is NULL"));
    EXPECT_FALSE(pith_interpreter_enter(nullptr, true));
    EXPECT_TRUE(HasError(PITH_ERR_VALUE, "interpreter is NULL"));
    EXPECT_EQ(pith_interpreter_in_flight(nullptr), -1);
    EXPECT_TRUE(HasError(PITH_ERR_VALUE, "interpreter is NULL"));
    pith_interpreter_leave(nullptr); /* a no-op */
    EXPECT_EQ(pith_last_status(), PITH_OK);
}

/* ---- tag ---- */

TEST_F(InterpreterTest, FreshTensorsAreUntagged)
{
    Tensor t = NewTensor();
    EXPECT_EQ(pith_tensor_interpreter(t.get()), nullptr);
    EXPECT_EQ(pith_slot_check(t.get(), fake_table(Fake("A"))), PITH_OK);
}

TEST_F(InterpreterTest, ClaimTagsOnceAndIsIdempotentForTheOwner)
{
    pith_interpreter *a = fake_table(Fake("A"));
    Tensor t = NewTensor();
    EXPECT_EQ(pith_slot_claim(t.get(), a), PITH_OK);
    EXPECT_EQ(pith_tensor_interpreter(t.get()), a);
    EXPECT_EQ(pith_slot_claim(t.get(), a), PITH_OK);
    EXPECT_EQ(pith_slot_check(t.get(), a), PITH_OK);
}

TEST_F(InterpreterTest, ClaimOfAFreshTensorAndOfASharedOneBothTagOnce)
{
    pith_interpreter *a = fake_table(Fake("A"));
    pith_interpreter *b = fake_table(Fake("B"));
    Tensor fresh = NewTensor(); /* refcount 1: the plain store */
    ASSERT_EQ(pith_tensor_refcount(fresh.get()), 1);
    EXPECT_EQ(pith_slot_claim(fresh.get(), a), PITH_OK);
    EXPECT_EQ(pith_tensor_interpreter(fresh.get()), a);
    EXPECT_EQ(pith_slot_claim(fresh.get(), b), PITH_ERR_INTERPRETER);
    EXPECT_EQ(pith_tensor_interpreter(fresh.get()), a);
    pith_clear_error();
    Tensor shared = NewTensor();
    pith_retain(shared.get()); /* refcount 2: the CAS */
    EXPECT_EQ(pith_slot_claim(shared.get(), b), PITH_OK);
    EXPECT_EQ(pith_slot_claim(shared.get(), a), PITH_ERR_INTERPRETER);
    EXPECT_EQ(pith_tensor_interpreter(shared.get()), b);
    pith_release(shared.get());
}

TEST_F(InterpreterTest, AnotherInterpreterGetsAnErrorNamingBothAndAlive)
{
    pith_interpreter *a = fake_table(Fake("interp-A"));
    pith_interpreter *b = fake_table(Fake("interp-B"));
    Tensor t = NewTensor();
    ASSERT_EQ(pith_slot_claim(t.get(), a), PITH_OK);
    EXPECT_EQ(pith_slot_claim(t.get(), b), PITH_ERR_INTERPRETER);
    std::string msg = pith_last_error();
    EXPECT_NE(msg.find("interp-A"), std::string::npos) << msg;
    EXPECT_NE(msg.find("interp-B"), std::string::npos) << msg;
    EXPECT_TRUE(HasError(PITH_ERR_INTERPRETER, "alive"));
    EXPECT_EQ(pith_slot_check(t.get(), b), PITH_ERR_INTERPRETER);
    EXPECT_TRUE(HasError(PITH_ERR_INTERPRETER,
                         "interpreter interp-B cannot use this tensor: it belongs to "
                         "interpreter interp-A (which is alive)"));
    EXPECT_EQ(pith_tensor_interpreter(t.get()), a); /* never re-tagged */
}

TEST_F(InterpreterTest, ErrorSaysDeadAfterTheOwnerIsDisarmed)
{
    pith_interpreter *a = fake_table(Fake("interp-A"));
    pith_interpreter *b = fake_table(Fake("interp-B"));
    Tensor t = NewTensor();
    ASSERT_EQ(pith_slot_claim(t.get(), a), PITH_OK);
    pith_interpreter_disarm(a);
    EXPECT_EQ(pith_slot_check(t.get(), b), PITH_ERR_INTERPRETER);
    std::string msg = pith_last_error();
    EXPECT_NE(msg.find("interp-B"), std::string::npos) << msg;
    EXPECT_TRUE(HasError(PITH_ERR_INTERPRETER, "interp-A (which is dead"));
}

TEST_F(InterpreterTest, ClaimRejectsNullArguments)
{
    Tensor t = NewTensor();
    EXPECT_EQ(pith_slot_claim(t.get(), nullptr), PITH_ERR_VALUE);
    EXPECT_TRUE(HasError(PITH_ERR_VALUE, "interpreter is NULL"));
    EXPECT_EQ(pith_slot_claim(nullptr, fake_table(Fake("A"))), PITH_ERR_VALUE);
    EXPECT_TRUE(HasError(PITH_ERR_VALUE, "tensor is NULL"));
    EXPECT_EQ(pith_slot_check(nullptr, nullptr), PITH_ERR_VALUE);
    EXPECT_TRUE(HasError(PITH_ERR_VALUE, "tensor is NULL"));
}

TEST(CoreConcurrency, TagClaimRace)
{
    size_t live = pith_live_tensors();
    constexpr int kThreads = 8, kRounds = 200;
    static pith_interpreter *tables[kThreads];
    static fake_interp *fakes[kThreads];
    for (int i = 0; i < kThreads; i++) {
        std::string name = "racer-" + std::to_string(i);
        fakes[i] = fake_new(name.c_str());
        tables[i] = fake_table(fakes[i]);
    }
    for (int round = 0; round < kRounds; round++) {
        int64_t n = 1;
        pith_tensor *t = pith_empty(1, &n, PITH_FLOAT32);
        std::atomic<int> ready{0}, winners{0}, losers_with_message{0};
        std::atomic<int> winner{-1};
        std::vector<std::thread> threads;
        /* Each racer holds its own reference, as pith_slot_claim requires: the tensor is
         * shared, so the claim must be the CAS, not the fresh tensor's plain store. */
        for (int i = 0; i < kThreads; i++)
            pith_retain(t);
        for (int i = 0; i < kThreads; i++) {
            threads.emplace_back([&, i] {
                ready++;
                while (ready.load() < kThreads) /* start together; yield: 2 cores */
                    std::this_thread::yield();
                pith_status claimed = pith_slot_claim(t, tables[i]);
                pith_release(t);
                if (claimed == PITH_OK) {
                    winners++;
                    winner = i;
                } else if (pith_last_status() == PITH_ERR_INTERPRETER &&
                           std::string(pith_last_error()).find("racer-") != std::string::npos) {
                    losers_with_message++;
                }
            });
        }
        for (auto &th : threads)
            th.join();
        ASSERT_EQ(winners.load(), 1) << "round " << round;
        ASSERT_EQ(losers_with_message.load(), kThreads - 1) << "round " << round;
        ASSERT_EQ(pith_tensor_interpreter(t), tables[winner.load()]);
        pith_release(t);
    }
    for (int i = 0; i < kThreads; i++)
        fake_free(fakes[i]);
    EXPECT_EQ(pith_live_tensors(), live);
}

/* ---- slot ---- */

TEST_F(InterpreterTest, SlotSetAndGetWithTheOwnsBit)
{
    pith_interpreter *a = fake_table(Fake("A"));
    Tensor t = NewTensor();
    bool owns = true;
    EXPECT_EQ(pith_slot_get(t.get(), &owns), nullptr);
    EXPECT_FALSE(owns);
    ASSERT_EQ(pith_slot_claim(t.get(), a), PITH_OK);
    pith_slot_set(t.get(), fake_wrapper, false);
    EXPECT_EQ(pith_slot_get(t.get(), &owns), static_cast<void *>(fake_wrapper));
    EXPECT_FALSE(owns);
    pith_slot_set_owns(t.get(), true);
    EXPECT_EQ(pith_slot_get(t.get(), &owns), static_cast<void *>(fake_wrapper));
    EXPECT_TRUE(owns);
    pith_slot_set_owns(t.get(), false); /* re-wrapping flips it back */
    EXPECT_EQ(pith_slot_get(t.get(), &owns), static_cast<void *>(fake_wrapper));
    EXPECT_FALSE(owns);
    EXPECT_EQ(pith_last_status(), PITH_OK);
}

TEST_F(InterpreterTest, SlotSetNeedsATag)
{
    Tensor t = NewTensor();
    pith_slot_set(t.get(), fake_wrapper, false);
    EXPECT_TRUE(HasError(PITH_ERR_INTERPRETER, "not tagged; claim it first"));
    EXPECT_EQ(pith_slot_get(t.get(), nullptr), nullptr);
}

TEST_F(InterpreterTest, SlotClearForgetsTheWrapperButKeepsTheTag)
{
    pith_interpreter *a = fake_table(Fake("A"));
    Tensor t = NewTensor();
    ASSERT_EQ(pith_slot_claim(t.get(), a), PITH_OK);
    pith_slot_set(t.get(), fake_wrapper, true);
    pith_slot_clear(t.get());
    bool owns = true;
    EXPECT_EQ(pith_slot_get(t.get(), &owns), nullptr);
    EXPECT_FALSE(owns);
    EXPECT_EQ(pith_tensor_interpreter(t.get()), a);
}

TEST_F(InterpreterTest, OwnsNeedsAWrapper)
{
    Tensor t = NewTensor();
    pith_slot_set_owns(t.get(), true);
    bool owns = true;
    EXPECT_EQ(pith_slot_get(t.get(), &owns), nullptr);
    EXPECT_FALSE(owns);
}

/* ---- preservation ---- */

TEST_F(InterpreterTest, LastReleaseWhileCOwnsTheWrapperCallsDecrefOnce)
{
    fake_interp *fa = Fake("A");
    int64_t n = 2;
    pith_tensor *t = pith_zeros(1, &n, PITH_FLOAT32); /* the wrapper's reference */
    ASSERT_EQ(pith_slot_claim(t, fake_table(fa)), PITH_OK);
    pith_slot_set(t, fake_wrapper, false);
    pith_retain(t); /* a C holder */
    /* The wrapper dies while C holds a reference: it resurrects, C owns it, and its own
     * reference to the tensor becomes borrowed (the bindings release it). */
    ASSERT_EQ(pith_tensor_refcount(t), 2);
    pith_slot_set_owns(t, true);
    pith_release(t);
    EXPECT_EQ(fake_calls(fa, "decref"), 0);
    EXPECT_EQ(pith_live_tensors(), live_before_ + 1);
    /* The last C holder goes: the wrapper is dropped through the tag, once. */
    fake_set_watch(fa, t);
    pith_release(t);
    EXPECT_EQ(fake_calls(fa, "decref"), 1);
    EXPECT_EQ(fake_last_decref(fa), static_cast<void *>(fake_wrapper));
    EXPECT_EQ(fake_refcount_seen_in_decref(fa), 0); /* the wrapper sees C is done */
    EXPECT_EQ(pith_live_tensors(), live_before_);
}

TEST_F(InterpreterTest, ReleaseWhilePythonOwnsTheWrapperDoesNotCallDecref)
{
    fake_interp *fa = Fake("A");
    Tensor t = NewTensor();
    ASSERT_EQ(pith_slot_claim(t.get(), fake_table(fa)), PITH_OK);
    pith_slot_set(t.get(), fake_wrapper, false);
    t.reset();
    EXPECT_EQ(fake_calls(fa, "decref"), 0);
}

TEST_F(InterpreterTest, AfterDisarmDestroyingATensorCOwnsCallsNothing)
{
    fake_interp *fa = Fake("A");
    pith_interpreter *a = fake_table(fa);
    int64_t n = 2;
    pith_tensor *t = pith_zeros(1, &n, PITH_FLOAT32);
    ASSERT_EQ(pith_slot_claim(t, a), PITH_OK);
    pith_slot_set(t, fake_wrapper, true);
    pith_interpreter_close_gate(a);
    pith_interpreter_wait_drained(a);
    pith_interpreter_disarm(a);
    EXPECT_TRUE(pith_interpreter_is_disarmed(a));
    EXPECT_STREQ(pith_interpreter_name(a), "A"); /* the name survives */
    pith_release(t);
    for (const char *entry : {"decref", "detach", "dispatch", "is_contiguous", "device",
                              "sizes", "strides"})
        EXPECT_EQ(fake_calls(fa, entry), 0) << entry;
    EXPECT_EQ(pith_last_status(), PITH_OK); /* leaking is silent */
}

TEST_F(InterpreterTest, AfterDisarmEveryOtherEntryFailsNamingTheInterpreter)
{
    fake_interp *fa = Fake("interp-9");
    pith_interpreter *a = fake_table(fa);
    Tensor t = NewTensor();
    ASSERT_EQ(pith_slot_claim(t.get(), a), PITH_OK);
    pith_tensor_set_policy(t.get(), PITH_POLICY_SIZES | PITH_POLICY_DEVICE);
    pith_interpreter_disarm(a);
    EXPECT_EQ(shim_interp_dispatch(a), PITH_ERR_INTERPRETER);
    EXPECT_TRUE(HasError(PITH_ERR_INTERPRETER, "interpreter interp-9 was finalised"));
    pith_tensor *out = nullptr;
    EXPECT_EQ(shim_interp_detach(t.get(), &out), PITH_ERR_INTERPRETER);
    EXPECT_EQ(out, nullptr);
    pith_clear_error();
    /* Disarm closes the gate too, so a foreign caller is refused before reaching it. */
    EXPECT_EQ(pith_ndim(t.get()), -1);
    EXPECT_TRUE(HasError(PITH_ERR_INTERPRETER, "interp-9"));
    pith_interpreter_vtable const *vt = pith_interpreter_vtable_of(a);
    bool contiguous;
    EXPECT_EQ(vt->is_contiguous(a, t.get(), &contiguous), PITH_ERR_INTERPRETER);
    EXPECT_TRUE(HasError(PITH_ERR_INTERPRETER, "interp-9 was finalised"));
    int ndim;
    int64_t sizes[PITH_MAX_DIMS];
    EXPECT_EQ(vt->sizes(a, t.get(), &ndim, sizes), PITH_ERR_INTERPRETER);
    EXPECT_EQ(vt->strides(a, t.get(), &ndim, sizes), PITH_ERR_INTERPRETER);
    pith_device device;
    EXPECT_EQ(vt->device(a, t.get(), &device), PITH_ERR_INTERPRETER);
    EXPECT_TRUE(HasError(PITH_ERR_INTERPRETER, "finalised"));
    vt->decref(a, fake_wrapper); /* leaks, and sets no error */
    EXPECT_EQ(pith_last_status(), PITH_OK);
    for (const char *entry : {"decref", "detach", "dispatch", "sizes"})
        EXPECT_EQ(fake_calls(fa, entry), 0) << entry;
}

struct BlobLog {
    int calls = 0;
};
void blob_deleter(void *, void *ctx) { static_cast<BlobLog *>(ctx)->calls++; }

TEST_F(InterpreterTest, StorageOwnedByALiveInterpreterIsFreedThroughIt)
{
    pith_interpreter *a = fake_table(Fake("A"));
    static float buf[4];
    BlobLog log;
    int64_t n = 4;
    pith_tensor *t = pith_from_blob(buf, 1, &n, nullptr, PITH_FLOAT32, blob_deleter, &log);
    shim_set_storage_owner(t, a);
    pith_release(t);
    EXPECT_EQ(log.calls, 1);
    EXPECT_EQ(pith_interpreter_in_flight(a), 0);
}

TEST_F(InterpreterTest, StorageOwnedByADeadInterpreterLeaks)
{
    pith_interpreter *a = fake_table(Fake("A"));
    static float buf[4];
    BlobLog log;
    int64_t n = 4;
    pith_tensor *t = pith_from_blob(buf, 1, &n, nullptr, PITH_FLOAT32, blob_deleter, &log);
    shim_set_storage_owner(t, a);
    pith_interpreter_disarm(a);
    pith_release(t);
    EXPECT_EQ(log.calls, 0);
}

TEST_F(InterpreterTest, StorageOwnerIsRecordedAndSharedByViews)
{
    pith_interpreter *a = fake_table(Fake("A"));
    static float buf[4];
    BlobLog log;
    int64_t n = 4;
    pith_tensor *t = pith_from_blob(buf, 1, &n, nullptr, PITH_FLOAT32, blob_deleter, &log);
    EXPECT_EQ(pith_storage_owner(t), nullptr);
    ASSERT_EQ(pith_storage_set_owner(t, a), PITH_OK);
    EXPECT_EQ(pith_storage_owner(t), a);
    pith_tensor *alias = pith_alias(t);
    EXPECT_EQ(pith_storage_owner(alias), a);
    pith_release(alias);
    pith_release(t);
    EXPECT_EQ(log.calls, 1);
}

TEST_F(InterpreterTest, OnlyStorageWithADeleterCanHaveAnOwner)
{
    pith_interpreter *a = fake_table(Fake("A"));
    Tensor t = NewTensor();
    EXPECT_EQ(pith_storage_set_owner(t.get(), a), PITH_ERR_VALUE);
    EXPECT_NE(std::string(pith_last_error()).find("only storage with a deleter"),
              std::string::npos);
    EXPECT_EQ(pith_storage_owner(t.get()), nullptr);
    static float buf[4];
    int64_t n = 4;
    Tensor borrowed(pith_from_blob(buf, 1, &n, nullptr, PITH_FLOAT32, nullptr, nullptr));
    EXPECT_EQ(pith_storage_set_owner(borrowed.get(), a), PITH_ERR_VALUE);
    EXPECT_EQ(pith_storage_set_owner(nullptr, a), PITH_ERR_VALUE);
    EXPECT_EQ(pith_storage_owner(nullptr), nullptr);
}

/* ---- gate and in-flight calls ---- */

TEST_F(InterpreterTest, EnterAndLeaveCountCallsInFlight)
{
    pith_interpreter *a = fake_table(Fake("A"));
    ASSERT_TRUE(pith_interpreter_enter(a, false));
    ASSERT_TRUE(pith_interpreter_enter(a, true));
    EXPECT_EQ(pith_interpreter_in_flight(a), 2);
    pith_interpreter_leave(a);
    pith_interpreter_leave(a);
    EXPECT_EQ(pith_interpreter_in_flight(a), 0);
}

TEST_F(InterpreterTest, ClosedGateRefusesForeignThreadsButNotTheOwnThread)
{
    fake_interp *fa = Fake("interp-A");
    pith_interpreter *a = fake_table(fa);
    pith_interpreter_close_gate(a);
    EXPECT_FALSE(pith_interpreter_gate_open(a));
    EXPECT_FALSE(pith_interpreter_enter(a, false));
    EXPECT_TRUE(HasError(PITH_ERR_INTERPRETER, "interpreter interp-A is shutting down"));
    EXPECT_EQ(pith_interpreter_in_flight(a), 0);
    ASSERT_TRUE(pith_interpreter_enter(a, true));
    EXPECT_EQ(pith_interpreter_in_flight(a), 1);
    pith_interpreter_leave(a);
    /* Note [Entries and the gate]: core counts a dispatch in flight and leaves the gate to
     * the entry, which alone knows whose thread this is. */
    EXPECT_EQ(shim_interp_dispatch(a), PITH_OK);
    EXPECT_EQ(fake_calls(fa, "dispatch"), 1);
    EXPECT_EQ(pith_interpreter_in_flight(a), 0);
}

TEST_F(InterpreterTest, WaitDrainedBlocksUntilTheCallInFlightLeaves)
{
    fake_interp *fa = Fake("A");
    pith_interpreter *a = fake_table(fa);
    fake_set_block(fa, true);
    std::thread caller([a] { shim_interp_dispatch(a); });
    while (!fake_entered(fa))
        std::this_thread::yield();
    EXPECT_EQ(pith_interpreter_in_flight(a), 1);
    std::atomic<bool> drained{false};
    std::thread closer([a, &drained] {
        pith_interpreter_close_gate(a);
        pith_interpreter_wait_drained(a);
        drained = true;
    });
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    EXPECT_FALSE(drained.load());
    fake_unblock(fa);
    caller.join();
    closer.join();
    EXPECT_TRUE(drained.load());
    EXPECT_EQ(pith_interpreter_in_flight(a), 0);
}

TEST(CoreConcurrency, GateCloseRacingWithEnterNeverLeavesACallInFlight)
{
    for (int round = 0; round < 200; round++) {
        fake_interp *fa = fake_new("racer");
        pith_interpreter *a = fake_table(fa);
        std::atomic<bool> go{false}, after_drain_entered{false}, drained{false};
        std::thread enterer([&] {
            while (!go.load())
                std::this_thread::yield();
            for (int i = 0; i < 50; i++) {
                if (pith_interpreter_enter(a, false)) {
                    if (drained.load())
                        after_drain_entered = true;
                    pith_interpreter_leave(a);
                }
            }
        });
        go = true;
        pith_interpreter_close_gate(a);
        pith_interpreter_wait_drained(a);
        drained = true;
        enterer.join();
        ASSERT_FALSE(after_drain_entered.load()) << "round " << round;
        pith_clear_error();
        fake_free(fa);
    }
}

/* ---- detach and metadata through the table ---- */

TEST_F(InterpreterTest, DetachGoesThroughTheTag)
{
    fake_interp *fa = Fake("A");
    Tensor t = NewTensor();
    pith_tensor *out = nullptr;
    EXPECT_EQ(shim_interp_detach(t.get(), &out), PITH_ERR_INTERPRETER);
    EXPECT_TRUE(HasError(PITH_ERR_INTERPRETER, "belongs to no interpreter"));
    ASSERT_EQ(pith_slot_claim(t.get(), fake_table(fa)), PITH_OK);
    ASSERT_EQ(shim_interp_detach(t.get(), &out), PITH_OK);
    ASSERT_NE(out, nullptr);
    double v;
    ASSERT_EQ(pith_item(out, &v), PITH_OK);
    EXPECT_EQ(v, 7.0);
    pith_release(out);
    EXPECT_EQ(fake_calls(fa, "detach"), 1);
    EXPECT_EQ(pith_interpreter_in_flight(fake_table(fa)), 0);
}

TEST_F(InterpreterTest, PolicyAsksTheInterpreterForSizesStridesAndDevice)
{
    fake_interp *fa = Fake("A");
    const int64_t sizes[] = {4, 5}, strides[] = {1, 4};
    fake_set_sizes(fa, 2, sizes, strides);
    fake_set_device(fa, PITH_META, false);
    Tensor t = NewTensor(); /* its own geometry is [4] */
    pith_tensor_set_policy(t.get(), PITH_POLICY_SIZES | PITH_POLICY_DEVICE);
    EXPECT_EQ(pith_ndim(t.get()), 1); /* untagged: the policy does not apply */
    ASSERT_EQ(pith_slot_claim(t.get(), fake_table(fa)), PITH_OK);
    EXPECT_EQ(pith_ndim(t.get()), 2);
    EXPECT_EQ(pith_size(t.get(), -1), 5);
    EXPECT_EQ(pith_numel(t.get()), 20);
    EXPECT_EQ(pith_stride(t.get(), 1), 4);
    EXPECT_FALSE(pith_is_contiguous(t.get()));
    EXPECT_EQ(pith_tensor_device(t.get()), PITH_META);
    int64_t got[PITH_MAX_DIMS];
    EXPECT_EQ(pith_sizes(t.get(), got), 2);
    EXPECT_EQ(got[0], 4);
    EXPECT_EQ(pith_last_status(), PITH_OK);
    EXPECT_GE(fake_calls(fa, "sizes"), 4);
    EXPECT_GE(fake_calls(fa, "strides"), 1);
    EXPECT_EQ(fake_calls(fa, "is_contiguous"), 1);
    EXPECT_EQ(fake_calls(fa, "device"), 1);
    EXPECT_EQ(pith_interpreter_in_flight(fake_table(fa)), 0);
}

TEST_F(InterpreterTest, StridesPolicyAloneKeepsTheTensorsOwnSizes)
{
    fake_interp *fa = Fake("A");
    const int64_t sizes[] = {9}, strides[] = {3};
    fake_set_sizes(fa, 1, sizes, strides);
    Tensor t = NewTensor();
    ASSERT_EQ(pith_slot_claim(t.get(), fake_table(fa)), PITH_OK);
    pith_tensor_set_policy(t.get(), PITH_POLICY_STRIDES);
    EXPECT_EQ(pith_size(t.get(), 0), 4);
    EXPECT_EQ(pith_stride(t.get(), 0), 3);
    EXPECT_EQ(fake_calls(fa, "sizes"), 0);
    EXPECT_EQ(pith_tensor_device(t.get()), PITH_CPU);
    EXPECT_EQ(fake_calls(fa, "device"), 0);
}

TEST_F(InterpreterTest, MetadataFailureGivesTheSentinelWithTheStatus)
{
    fake_interp *fa = Fake("A");
    Tensor t = NewTensor();
    ASSERT_EQ(pith_slot_claim(t.get(), fake_table(fa)), PITH_OK);
    pith_tensor_set_policy(t.get(), PITH_POLICY_SIZES | PITH_POLICY_DEVICE);
    fake_set_fail(fa, true);
    EXPECT_EQ(pith_ndim(t.get()), -1);
    EXPECT_TRUE(HasError(PITH_ERR_RUNTIME, "fake sizes failed"));
    EXPECT_EQ(pith_size(t.get(), 0), -1);
    EXPECT_TRUE(HasError(PITH_ERR_RUNTIME, "fake sizes failed"));
    EXPECT_EQ(pith_numel(t.get()), -1);
    EXPECT_TRUE(HasError(PITH_ERR_RUNTIME, "fake sizes failed"));
    EXPECT_EQ(pith_stride(t.get(), 0), -1);
    EXPECT_TRUE(HasError(PITH_ERR_RUNTIME, "fake strides failed"));
    EXPECT_FALSE(pith_is_contiguous(t.get()));
    EXPECT_TRUE(HasError(PITH_ERR_RUNTIME, "fake is_contiguous failed"));
    pith_tensor_device(t.get());
    EXPECT_TRUE(HasError(PITH_ERR_RUNTIME, "fake device failed"));
}

TEST_F(InterpreterTest, InvalidAnswersFromTheInterpreterAreErrors)
{
    fake_interp *fa = Fake("interp-A");
    const int64_t sizes[] = {-2}, strides[] = {1};
    fake_set_sizes(fa, 1, sizes, strides);
    Tensor t = NewTensor();
    ASSERT_EQ(pith_slot_claim(t.get(), fake_table(fa)), PITH_OK);
    pith_tensor_set_policy(t.get(), PITH_POLICY_SIZES);
    EXPECT_EQ(pith_ndim(t.get()), -1);
    EXPECT_TRUE(HasError(PITH_ERR_INTERPRETER, "interpreter interp-A returned a negative sizes"));
    int64_t many[PITH_MAX_DIMS] = {};
    fake_set_sizes(fa, 0, many, many);
    EXPECT_EQ(pith_ndim(t.get()), 0);
}

pith_status null_entries_dispatch(const pith_interpreter *, const pith_op *, pith_stack *)
{
    return PITH_OK;
}

TEST_F(InterpreterTest, MissingEntriesAreNotImplementedAndMissingDecrefLeaks)
{
    static const pith_interpreter_vtable partial = {nullptr, nullptr, null_entries_dispatch,
                                                    nullptr, nullptr, nullptr, nullptr};
    pith_interpreter *p = pith_interpreter_register("partial", &partial, nullptr);
    ASSERT_NE(p, nullptr);
    EXPECT_EQ(shim_interp_dispatch(p), PITH_OK);
    Tensor t = NewTensor();
    ASSERT_EQ(pith_slot_claim(t.get(), p), PITH_OK);
    pith_tensor *out = nullptr;
    EXPECT_EQ(shim_interp_detach(t.get(), &out), PITH_ERR_NOT_IMPLEMENTED);
    EXPECT_TRUE(HasError(PITH_ERR_NOT_IMPLEMENTED, "interpreter partial does not implement detach"));
    pith_tensor_set_policy(t.get(), PITH_POLICY_STRIDES);
    EXPECT_FALSE(pith_is_contiguous(t.get()));
    EXPECT_TRUE(HasError(PITH_ERR_NOT_IMPLEMENTED, "is_contiguous"));
    pith_slot_set(t.get(), fake_wrapper, true);
    t.reset(); /* decref is missing: the wrapper leaks, nothing fails */
    EXPECT_EQ(pith_last_status(), PITH_OK);
    pith_interpreter_disarm(p);
}

/* ---- flags ---- */

TEST_F(InterpreterTest, PythonKeyIsBitTwoOfTheKeySet)
{
    Tensor t = NewTensor();
    EXPECT_FALSE(pith_tensor_has_python_key(t.get()));
    pith_tensor_set_python_key(t.get(), true);
    EXPECT_TRUE(pith_tensor_has_python_key(t.get()));
    EXPECT_EQ(shim_keys(t.get()), shim_key_cpu() | (uint64_t(1) << 2));
    EXPECT_EQ(shim_key_python(), uint64_t(1) << 2);
    pith_tensor_set_python_key(t.get(), false);
    EXPECT_EQ(shim_keys(t.get()), shim_key_cpu());
}

TEST_F(InterpreterTest, PolicyBitsMapToTensorFlags)
{
    Tensor t = NewTensor();
    pith_tensor_set_policy(t.get(), PITH_POLICY_STRIDES);
    EXPECT_EQ(shim_flags(t.get()), shim_flag_policy_strides());
    pith_tensor_set_policy(t.get(), PITH_POLICY_SIZES); /* sizes imply strides */
    EXPECT_EQ(shim_flags(t.get()), shim_flag_policy_sizes() | shim_flag_policy_strides());
    pith_tensor_set_policy(t.get(), PITH_POLICY_DEVICE);
    EXPECT_EQ(shim_flags(t.get()), shim_flag_policy_device());
    pith_tensor_set_policy(t.get(), 0);
    EXPECT_EQ(shim_flags(t.get()), 0u);
    pith_tensor_set_policy(t.get(), 64);
    EXPECT_TRUE(HasError(PITH_ERR_VALUE, "unknown policy bits 0x40"));
}

TEST_F(InterpreterTest, OnlyZeroDimTensorsAreWrappedNumbers)
{
    Tensor s(pith_scalar_tensor(2, PITH_INT64));
    pith_tensor_set_wrapped_number(s.get(), true);
    EXPECT_EQ(shim_flags(s.get()), shim_flag_wrapped_number());
    pith_tensor_set_wrapped_number(s.get(), false);
    EXPECT_EQ(shim_flags(s.get()), 0u);
    Tensor t = NewTensor();
    pith_tensor_set_wrapped_number(t.get(), true);
    EXPECT_TRUE(HasError(PITH_ERR_VALUE, "only a 0-dim tensor can be a wrapped number"));
    EXPECT_EQ(shim_flags(t.get()), 0u);
}

TEST_F(InterpreterTest, SlotFunctionsRejectNullTensors)
{
    EXPECT_EQ(pith_slot_get(nullptr, nullptr), nullptr);
    EXPECT_TRUE(HasError(PITH_ERR_VALUE, "pith_slot_get: tensor is NULL"));
    pith_slot_set(nullptr, nullptr, false);
    EXPECT_TRUE(HasError(PITH_ERR_VALUE, "pith_slot_set: tensor is NULL"));
    pith_slot_set_owns(nullptr, true);
    EXPECT_TRUE(HasError(PITH_ERR_VALUE, "tensor is NULL"));
    pith_slot_clear(nullptr);
    EXPECT_TRUE(HasError(PITH_ERR_VALUE, "tensor is NULL"));
    EXPECT_EQ(pith_tensor_refcount(nullptr), -1);
    EXPECT_TRUE(HasError(PITH_ERR_VALUE, "tensor is NULL"));
    EXPECT_EQ(pith_tensor_interpreter(nullptr), nullptr);
    EXPECT_TRUE(HasError(PITH_ERR_VALUE, "tensor is NULL"));
    pith_tensor_set_python_key(nullptr, true);
    EXPECT_TRUE(HasError(PITH_ERR_VALUE, "tensor is NULL"));
    EXPECT_FALSE(pith_tensor_has_python_key(nullptr));
    EXPECT_TRUE(HasError(PITH_ERR_VALUE, "tensor is NULL"));
    pith_tensor_set_policy(nullptr, 0);
    EXPECT_TRUE(HasError(PITH_ERR_VALUE, "tensor is NULL"));
    pith_tensor_set_wrapped_number(nullptr, true);
    EXPECT_TRUE(HasError(PITH_ERR_VALUE, "tensor is NULL"));
}

} // namespace
