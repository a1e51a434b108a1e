// python_fallback_test.cc — the default fallback of the Python and PythonMode keys, with
// fake interpreters whose `dispatch` entry records the call and redispatches.
#include <string>
#include <vector>

#include "dispatch_shim.h"
#include "test_util.h"

namespace {

// What a fake interpreter saw; its `dispatch` runs the op below (the keys that the fallback
// excluded keep it from coming back) unless told to fail.
struct Fake {
    std::vector<std::string> ops;
    pith_keys_guard keys_inside{};
    bool fail = false;
};

pith_status fake_dispatch(const pith_interpreter *interp, const pith_op *op, pith_stack *s)
{
    auto *fake = static_cast<Fake *>(pith_interpreter_ctx(interp));
    fake->ops.push_back(pith_op_name(op));
    fake->keys_inside = pith_keys_current();
    if (fake->fail)
        return pith_set_error(PITH_ERR_VALUE, "handler failed");
    return pith_call_boxed(op, s);
}

const pith_interpreter_vtable fake_vtable = {nullptr, nullptr, fake_dispatch, nullptr,
                                             nullptr, nullptr, nullptr};

pith_status identity_cpu(const pith_op *, pith_stack *s, void *)
{
    pith_tensor *x = pith_stack_get_tensor(s, 0);
    pith_stack_drop(s, pith_stack_size(s));
    return pith_stack_push_tensor_steal(s, x);
}

pith_status first_of_list_cpu(const pith_op *, pith_stack *s, void *)
{
    size_t n = 0;
    pith_tensor *const *list = pith_stack_get_tensor_list(s, 0, &n);
    pith_tensor *x = list[0];
    pith_retain(x);
    pith_stack_drop(s, pith_stack_size(s));
    return pith_stack_push_tensor_steal(s, x);
}

class PythonFallback : public DispatchTest {
protected:
    static Fake fake_a, fake_b, fake_mode;
    static pith_interpreter *interp_a, *interp_b, *interp_mode;

    static void SetUpTestSuite()
    {
        interp_a = pith_interpreter_register("fake-A", &fake_vtable, &fake_a);
        interp_b = pith_interpreter_register("fake-B", &fake_vtable, &fake_b);
        interp_mode = pith_interpreter_register("fake-mode", &fake_vtable, &fake_mode);
        pith_op_define("t_py::f(Tensor x) -> Tensor");
        pith_kernel_register("t_py::f", "CPU", identity_cpu, nullptr);
        pith_op_define("t_py::g(Tensor a, Tensor b) -> Tensor");
        pith_kernel_register("t_py::g", "CPU", identity_cpu, nullptr);
        pith_op_define("t_py::l(Tensor[] xs) -> Tensor");
        pith_kernel_register("t_py::l", "CPU", first_of_list_cpu, nullptr);
    }
    void SetUp() override
    {
        DispatchTest::SetUp();
        fake_a = Fake{};
        fake_b = Fake{};
        fake_mode = Fake{};
    }
    void TearDown() override
    {
        pith_keys_guard g = pith_keys_current();
        EXPECT_EQ(g.included, 0u);
        EXPECT_EQ(g.excluded, 0u);
        DispatchTest::TearDown();
    }

    // A tensor with the Python key, tagged to `interp` (untagged when NULL).
    static pith_tensor *python_tensor(pith_interpreter *interp, float value = 1)
    {
        pith_tensor *t = make_tensor({value});
        if (interp) {
            EXPECT_EQ(pith_slot_claim(t, interp), PITH_OK) << pith_last_error();
        }
        pith_tensor_set_python_key(t, true);
        return t;
    }

    pith_status call(const char *op, std::vector<const pith_tensor *> args, pith_tensor **out)
    {
        StackPtr s;
        for (const pith_tensor *t : args)
            pith_stack_push_tensor(s, t);
        pith_status st = pith_call_boxed(pith_op_find(op), s);
        *out = st == PITH_OK ? pith_stack_get_tensor(s, 0) : nullptr;
        return st;
    }
};
Fake PythonFallback::fake_a, PythonFallback::fake_b, PythonFallback::fake_mode;
pith_interpreter *PythonFallback::interp_a, *PythonFallback::interp_b,
    *PythonFallback::interp_mode;

TEST_F(PythonFallback, PythonKeyCallsTheTagsInterpreter)
{
    TensorPtr x(python_tensor(interp_a));
    TensorPtr r;
    ASSERT_EQ(call("t_py::f", {x}, &r.t), PITH_OK) << pith_last_error();
    EXPECT_EQ(fake_a.ops, std::vector<std::string>{"t_py::f"});
    EXPECT_TRUE(fake_b.ops.empty());
    EXPECT_EQ(r.get(), x.get()); // the handler's redispatch reached the CPU kernel
}

TEST_F(PythonFallback, PythonIsExcludedWhileTheHandlerRuns)
{
    TensorPtr x(python_tensor(interp_a));
    TensorPtr r;
    ASSERT_EQ(call("t_py::f", {x}, &r.t), PITH_OK) << pith_last_error();
    EXPECT_EQ(fake_a.keys_inside.excluded, shim_key_bit("Python"));
    EXPECT_EQ(pith_keys_current().excluded, 0u); // restored
}

TEST_F(PythonFallback, TypedCallGoesThroughTheFallback)
{
    TensorPtr x(python_tensor(interp_a, 2));
    TensorPtr y(make_tensor({5}));
    TensorPtr r(pith_add(x, y));
    ASSERT_NE(r.get(), nullptr) << pith_last_error();
    EXPECT_EQ(fake_a.ops, std::vector<std::string>{"pith::add.Tensor"});
    EXPECT_EQ(tensor_values(r), std::vector<float>{7});
}

TEST_F(PythonFallback, PlainArgumentsDoNotChooseTheInterpreter)
{
    TensorPtr plain(make_tensor({1}));
    TensorPtr x(python_tensor(interp_b));
    TensorPtr r;
    ASSERT_EQ(call("t_py::g", {plain, x}, &r.t), PITH_OK) << pith_last_error();
    EXPECT_EQ(fake_b.ops, std::vector<std::string>{"t_py::g"});
    EXPECT_TRUE(fake_a.ops.empty());
}

TEST_F(PythonFallback, TwoTensorsOfOneInterpreterAreFine)
{
    TensorPtr x(python_tensor(interp_a)), y(python_tensor(interp_a));
    TensorPtr r;
    ASSERT_EQ(call("t_py::g", {x, y}, &r.t), PITH_OK) << pith_last_error();
    EXPECT_EQ(fake_a.ops.size(), 1u);
}

TEST_F(PythonFallback, TwoInterpretersIsAnInterpreterError)
{
    TensorPtr x(python_tensor(interp_a)), y(python_tensor(interp_b));
    TensorPtr r;
    EXPECT_EQ(call("t_py::g", {x, y}, &r.t), PITH_ERR_INTERPRETER);
    EXPECT_ERROR(PITH_ERR_INTERPRETER, "t_py::g: arguments belong to two interpreters, fake-A "
                                       "and fake-B");
    EXPECT_TRUE(fake_a.ops.empty());
    EXPECT_TRUE(fake_b.ops.empty());
}

TEST_F(PythonFallback, UntaggedPythonTensorIsAnInterpreterError)
{
    TensorPtr x(python_tensor(nullptr));
    TensorPtr r;
    EXPECT_EQ(call("t_py::f", {x}, &r.t), PITH_ERR_INTERPRETER);
    EXPECT_ERROR(PITH_ERR_INTERPRETER, "t_py::f: argument 1 has the Python key but belongs to "
                                       "no interpreter");
}

TEST_F(PythonFallback, TensorListElementsChooseTheInterpreter)
{
    TensorPtr plain(make_tensor({1}));
    TensorPtr x(python_tensor(interp_b));
    const pith_tensor *list[2] = {plain, x};
    StackPtr s;
    pith_stack_push_tensor_list(s, list, 2);
    ASSERT_EQ(pith_call_boxed(pith_op_find("t_py::l"), s), PITH_OK) << pith_last_error();
    EXPECT_EQ(fake_b.ops, std::vector<std::string>{"t_py::l"});
}

TEST_F(PythonFallback, HandlerErrorPassesThroughAndKeysAreRestored)
{
    fake_a.fail = true;
    TensorPtr x(python_tensor(interp_a));
    TensorPtr r;
    EXPECT_EQ(call("t_py::f", {x}, &r.t), PITH_ERR_VALUE);
    EXPECT_ERROR(PITH_ERR_VALUE, "handler failed");
    EXPECT_EQ(pith_keys_current().excluded, 0u);
}

TEST_F(PythonFallback, PythonModeCallsTheModeInterpreter)
{
    shim_set_mode_interp(interp_mode);
    pith_keys_guard g;
    ASSERT_EQ(pith_keys_include("PythonMode", &g), PITH_OK);
    TensorPtr x(make_tensor({1}));
    TensorPtr r;
    pith_status st = call("t_py::f", {x}, &r.t);
    pith_keys_guard after = pith_keys_current();
    const pith_interpreter *mode_after = shim_mode_interp();
    pith_keys_restore(&g);
    shim_set_mode_interp(nullptr);
    ASSERT_EQ(st, PITH_OK) << pith_last_error();
    EXPECT_EQ(fake_mode.ops, std::vector<std::string>{"t_py::f"});
    EXPECT_EQ(fake_mode.keys_inside.excluded,
              shim_key_bit("Python") | shim_key_bit("PythonMode"));
    EXPECT_EQ(after.included, shim_key_bit("PythonMode"));
    EXPECT_EQ(after.excluded, 0u);
    EXPECT_EQ(mode_after, interp_mode);
}

TEST_F(PythonFallback, ModeComesBeforeThePythonKey)
{
    shim_set_mode_interp(interp_mode);
    pith_keys_guard g;
    pith_keys_include("PythonMode", &g);
    TensorPtr x(python_tensor(interp_a));
    TensorPtr r;
    pith_status st = call("t_py::f", {x}, &r.t);
    pith_keys_restore(&g);
    shim_set_mode_interp(nullptr);
    ASSERT_EQ(st, PITH_OK) << pith_last_error();
    EXPECT_EQ(fake_mode.ops.size(), 1u);
    EXPECT_TRUE(fake_a.ops.empty()); // the mode's redispatch had Python excluded
}

TEST_F(PythonFallback, PythonModeWithoutAnInterpreterIsAnError)
{
    pith_keys_guard g;
    pith_keys_include("PythonMode", &g);
    TensorPtr x(make_tensor({1}));
    TensorPtr r;
    pith_status st = call("t_py::f", {x}, &r.t);
    pith_keys_restore(&g);
    EXPECT_EQ(st, PITH_ERR_INTERPRETER);
    EXPECT_ERROR(PITH_ERR_INTERPRETER, "no dispatch mode interpreter");
}

TEST_F(PythonFallback, PerOpPythonKernelWinsOverTheFallback)
{
    ASSERT_EQ(pith_op_define("t_py::k(Tensor x) -> Tensor"), PITH_OK);
    ASSERT_EQ(pith_kernel_register("t_py::k", "CPU", identity_cpu, nullptr), PITH_OK);
    int calls = 0;
    ASSERT_EQ(pith_kernel_register("t_py::k", "Python",
                                   [](const pith_op *op, pith_stack *s, void *ctx) {
                                       ++*static_cast<int *>(ctx);
                                       return pith_call_boxed_below(op, s, "Python");
                                   },
                                   &calls),
              PITH_OK);
    TensorPtr x(python_tensor(interp_a));
    TensorPtr r;
    ASSERT_EQ(call("t_py::k", {x}, &r.t), PITH_OK) << pith_last_error();
    EXPECT_EQ(calls, 1);
    EXPECT_TRUE(fake_a.ops.empty());
}

TEST_F(PythonFallback, ClosedGateIsLeftToTheEntryAndCountedInFlight)
{
    // Note [Entries and the gate]: only the entry knows whether this thread runs the
    // interpreter itself (the bindings' entry refuses foreign threads), so the fallback
    // reaches it, counted in flight, while the gate is closed.
    static Fake fake_closing;
    pith_interpreter *closing = pith_interpreter_register("fake-closing", &fake_vtable,
                                                          &fake_closing);
    TensorPtr x(python_tensor(closing));
    pith_interpreter_close_gate(closing);
    TensorPtr r;
    pith_status st = call("t_py::f", {x}, &r.t);
    EXPECT_EQ(st, PITH_OK) << pith_last_error();
    EXPECT_EQ(fake_closing.ops.size(), 1u);
    EXPECT_EQ(pith_interpreter_in_flight(closing), 0);
}

TEST_F(PythonFallback, DisarmedInterpreterIsAnError)
{
    static Fake fake_dead;
    pith_interpreter *dead = pith_interpreter_register("fake-dead", &fake_vtable, &fake_dead);
    TensorPtr x(python_tensor(dead));
    pith_interpreter_close_gate(dead);
    pith_interpreter_wait_drained(dead);
    pith_interpreter_disarm(dead);
    TensorPtr r;
    pith_status st = call("t_py::f", {x}, &r.t);
    EXPECT_EQ(st, PITH_ERR_INTERPRETER);
    EXPECT_ERROR(PITH_ERR_INTERPRETER, "fake-dead was finalised");
    EXPECT_TRUE(fake_dead.ops.empty());
}

} // namespace
