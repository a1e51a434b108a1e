"""The multi-tensor optimizer kernels pith._fused_<opt>_ (kernels/optim.c).

Each kernel is compared, bit for bit, with torch 2.13's `_single_tensor_<opt>` formula
written with pith ops (the reference functions below, op by op as torch's
torch/optim/<opt>.py; pith has no lerp, addcmul or addcdiv, so they are written as
kernels/optim.c's Notes [lerp as pith's ops] and [The optimizer kernels round as pith's ops]
say), over several steps, for float32 and float64, with contiguous and non-contiguous
parameters and state, 0-dim and empty parameters, and every option that changes the
arithmetic. Then with torch.optim's own single-tensor step (close: torch's CPU kernels fuse
some multiply-adds that pith rounds twice). Then the errors of the contract
(/work/helpers/optim_contract.md).
"""
import itertools

import numpy as np
import pytest

import pith

torch = pytest.importorskip("torch")

SHAPES = [(3, 4), (), (0,), (7,), (2, 3, 5)]


# ---- the reference formulas, with pith ops ---------------------------------------------

def lerp_(start, end, weight):
    if abs(weight) < 0.5:
        start.add_(pith.sub(end, start), alpha=weight)
    else:
        start.copy_(pith.sub(end, pith.sub(end, start), alpha=1 - weight))


def addcmul_(self, t1, t2, value):
    self.add_(pith.mul(pith.mul(t1, value), t2))


def addcdiv_(self, t1, t2, value):
    self.add_(pith.div(pith.mul(t1, value), t2))


def first_grad(grad, param, *, maximize, weight_decay, grad_scale=None, decoupled=False):
    if grad_scale is not None:
        grad = pith.div(grad, grad_scale)
    grad = -grad if maximize else grad
    if weight_decay != 0 and not decoupled:
        grad = pith.add(grad, param, alpha=weight_decay)
    return grad


def skipped(found_inf):
    return found_inf is not None and found_inf.item() == 1.0


def ref_sgd(params, grads, momentum_buffer_list, *, weight_decay, momentum, lr, dampening,
            nesterov, maximize, is_first_step, grad_scale=None, found_inf=None):
    if skipped(found_inf):
        return
    for i, param in enumerate(params):
        grad = first_grad(grads[i], param, maximize=maximize, weight_decay=weight_decay,
                          grad_scale=grad_scale)
        if momentum != 0:
            buf = momentum_buffer_list[i]
            if is_first_step:
                buf.copy_(grad)
            else:
                buf.mul_(momentum).add_(grad, alpha=1 - dampening)
            grad = pith.add(grad, buf, alpha=momentum) if nesterov else buf
        param.add_(grad, alpha=-lr)


def ref_adam(params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, state_steps, *, lr,
             beta1, beta2, weight_decay, eps, amsgrad, maximize, grad_scale=None,
             found_inf=None, decoupled=False):
    if skipped(found_inf):
        return
    for i, param in enumerate(params):
        exp_avg, exp_avg_sq, step_t = exp_avgs[i], exp_avg_sqs[i], state_steps[i]
        step_t.add_(1)
        if weight_decay != 0 and decoupled:
            param.mul_(1 - lr * weight_decay)
        grad = first_grad(grads[i], param, maximize=maximize, weight_decay=weight_decay,
                          grad_scale=grad_scale, decoupled=decoupled)
        lerp_(exp_avg, grad, 1 - beta1)
        exp_avg_sq.mul_(beta2)
        addcmul_(exp_avg_sq, grad, grad, 1 - beta2)
        step = step_t.item()
        bias_correction1 = 1 - beta1 ** step
        bias_correction2 = 1 - beta2 ** step
        step_size = lr / bias_correction1
        bias_correction2_sqrt = bias_correction2 ** 0.5
        if amsgrad:
            max_exp_avg_sqs[i].copy_(pith.maximum(max_exp_avg_sqs[i], exp_avg_sq))
            denom = pith.div(max_exp_avg_sqs[i].sqrt(), bias_correction2_sqrt).add_(eps)
        else:
            denom = pith.div(exp_avg_sq.sqrt(), bias_correction2_sqrt).add_(eps)
        addcdiv_(param, exp_avg, denom, -step_size)


def ref_adamw(*args, **kwargs):
    ref_adam(*args, **kwargs, decoupled=True)


def ref_adagrad(params, grads, state_sums, state_steps, *, lr, lr_decay, weight_decay, eps,
                maximize, grad_scale=None, found_inf=None):
    if skipped(found_inf):
        return
    for param, grad, state_sum, step_t in zip(params, grads, state_sums, state_steps):
        step_t.add_(1)
        step = step_t.item()
        grad = first_grad(grad, param, maximize=maximize, weight_decay=weight_decay,
                          grad_scale=grad_scale)
        clr = lr / (1 + (step - 1) * lr_decay)
        addcmul_(state_sum, grad, grad, 1)
        std = state_sum.sqrt().add_(eps)
        addcdiv_(param, grad, std, -clr)


def ref_rmsprop(params, grads, square_avgs, grad_avgs, momentum_buffer_list, state_steps, *,
                lr, alpha, eps, weight_decay, momentum, centered, maximize):
    for i, param in enumerate(params):
        state_steps[i].add_(1)
        grad = first_grad(grads[i], param, maximize=maximize, weight_decay=weight_decay)
        square_avg = square_avgs[i]
        square_avg.mul_(alpha)
        addcmul_(square_avg, grad, grad, 1 - alpha)
        if centered:
            grad_avg = grad_avgs[i]
            lerp_(grad_avg, grad, 1 - alpha)
            avg = square_avg.clone()
            addcmul_(avg, grad_avg, grad_avg, -1)
            avg = avg.sqrt()
        else:
            avg = square_avg.sqrt()
        avg = avg.add_(eps)
        if momentum > 0:
            buf = momentum_buffer_list[i]
            buf.mul_(momentum)
            addcdiv_(buf, grad, avg, 1)
            param.add_(buf, alpha=-lr)
        else:
            addcdiv_(param, grad, avg, -lr)


def ref_adamax(params, grads, exp_avgs, exp_infs, state_steps, *, lr, beta1, beta2, eps,
               weight_decay, maximize):
    for i, param in enumerate(params):
        exp_avg, exp_inf, step_t = exp_avgs[i], exp_infs[i], state_steps[i]
        step_t.add_(1)
        grad = first_grad(grads[i], param, maximize=maximize, weight_decay=weight_decay)
        lerp_(exp_avg, grad, 1 - beta1)
        exp_inf.copy_(pith.maximum(exp_inf.mul_(beta2), grad.abs().add_(eps)))
        bias_correction = 1 - beta1 ** step_t.item()
        clr = lr / bias_correction
        addcdiv_(param, exp_avg, exp_inf, -clr)


def ref_nadam(params, grads, exp_avgs, exp_avg_sqs, mu_products, state_steps, *, lr, beta1,
              beta2, weight_decay, eps, momentum_decay, decoupled_weight_decay, maximize):
    for i, param in enumerate(params):
        exp_avg, exp_avg_sq, mu_product, step_t = (exp_avgs[i], exp_avg_sqs[i],
                                                   mu_products[i], state_steps[i])
        step_t.add_(1)
        step = step_t.item()
        bias_correction2 = 1 - beta2 ** step
        if weight_decay != 0 and decoupled_weight_decay:
            param.mul_(1 - lr * weight_decay)
        grad = first_grad(grads[i], param, maximize=maximize, weight_decay=weight_decay,
                          decoupled=decoupled_weight_decay)
        mu = beta1 * (1.0 - 0.5 * (0.96 ** (step * momentum_decay)))
        mu_next = beta1 * (1.0 - 0.5 * (0.96 ** ((step + 1) * momentum_decay)))
        mu_product.mul_(mu)
        lerp_(exp_avg, grad, 1 - beta1)
        exp_avg_sq.mul_(beta2)
        addcmul_(exp_avg_sq, grad, grad, 1 - beta2)
        denom = pith.div(exp_avg_sq, bias_correction2).sqrt()
        mu_product_next = mu_product.item() * mu_next
        denom.add_(eps)
        addcdiv_(param, grad, denom, -lr * (1.0 - mu) / (1.0 - mu_product.item()))
        addcdiv_(param, exp_avg, denom, (-lr * mu_next) / (1.0 - mu_product_next))


def ref_adadelta(params, grads, square_avgs, acc_deltas, state_steps, *, lr, rho, eps,
                 weight_decay, maximize):
    for param, grad, square_avg, acc_delta, step in zip(params, grads, square_avgs,
                                                         acc_deltas, state_steps):
        step.add_(1)
        grad = first_grad(grad, param, maximize=maximize, weight_decay=weight_decay)
        square_avg.mul_(rho)
        addcmul_(square_avg, grad, grad, 1 - rho)
        std = pith.add(square_avg, eps).sqrt_()
        delta = pith.add(acc_delta, eps).sqrt_()
        delta.div_(std).mul_(grad)
        acc_delta.mul_(rho)
        addcmul_(acc_delta, delta, delta, 1 - rho)
        param.add_(delta, alpha=-lr)


def ref_radam(params, grads, exp_avgs, exp_avg_sqs, state_steps, *, lr, beta1, beta2,
              weight_decay, eps, decoupled_weight_decay, maximize):
    for i, param in enumerate(params):
        exp_avg, exp_avg_sq, step_t = exp_avgs[i], exp_avg_sqs[i], state_steps[i]
        step_t.add_(1)
        step = step_t.item()
        if weight_decay != 0 and decoupled_weight_decay:
            param.mul_(1 - lr * weight_decay)
        grad = first_grad(grads[i], param, maximize=maximize, weight_decay=weight_decay,
                          decoupled=decoupled_weight_decay)
        lerp_(exp_avg, grad, 1 - beta1)
        exp_avg_sq.mul_(beta2)
        addcmul_(exp_avg_sq, grad, grad, 1 - beta2)
        bias_correction1 = 1 - beta1 ** step
        bias_correction2 = 1 - beta2 ** step
        bias_corrected_exp_avg = exp_avg / bias_correction1
        rho_inf = 2 / (1 - beta2) - 1
        rho_t = rho_inf - 2 * step * (beta2 ** step) / bias_correction2
        if rho_t > 5.0:
            rect = ((rho_t - 4) * (rho_t - 2) * rho_inf
                    / ((rho_inf - 4) * (rho_inf - 2) * rho_t)) ** 0.5
            adaptive_lr = (bias_correction2 ** 0.5) / exp_avg_sq.sqrt().add_(eps)
            param.add_(bias_corrected_exp_avg * lr * adaptive_lr * rect, alpha=-1.0)
        else:
            param.add_(bias_corrected_exp_avg * lr, alpha=-1.0)


# ---- the optimizers: lists, options, torch's class ---------------------------------------

class Spec:
    def __init__(self, name, states, options, ref, torch_class, torch_kwargs, steps=False,
                 scalar_states=(), used=None):
        self.name, self.states, self.options, self.ref = name, states, options, ref
        self.torch_class, self.torch_kwargs = torch_class, torch_kwargs
        self.steps, self.scalar_states = steps, scalar_states
        # which state lists the options use (the others are passed empty)
        self.used = used or (lambda state, o: True)

    @property
    def kernel(self):
        return getattr(pith, f"_fused_{self.name}_")


def grid(**choices):
    keys = list(choices)
    return [dict(zip(keys, values)) for values in itertools.product(*choices.values())]


def adam_torch(o):
    return dict(lr=o["lr"], betas=(o["beta1"], o["beta2"]), eps=o["eps"],
                weight_decay=o["weight_decay"], amsgrad=o["amsgrad"], maximize=o["maximize"])


SPECS = {
    "sgd": Spec(
        "sgd", ["momentum_buffer_list"],
        grid(weight_decay=[0.0, 0.1], momentum=[0.0, 0.9], lr=[0.05], dampening=[0.0, 0.3],
             nesterov=[False, True], maximize=[False, True]),
        ref_sgd, "SGD",
        lambda o: dict(lr=o["lr"], momentum=o["momentum"], dampening=o["dampening"],
                       weight_decay=o["weight_decay"], nesterov=o["nesterov"],
                       maximize=o["maximize"]),
        used=lambda state, o: o["momentum"] != 0),
    "adam": Spec(
        "adam", ["exp_avgs", "exp_avg_sqs", "max_exp_avg_sqs"],
        grid(lr=[0.01], beta1=[0.9, 0.3], beta2=[0.999], weight_decay=[0.0, 0.1], eps=[1e-8],
             amsgrad=[False, True], maximize=[False, True]),
        ref_adam, "Adam", adam_torch, steps=True,
        used=lambda state, o: state != "max_exp_avg_sqs" or o["amsgrad"]),
    "adamw": Spec(
        "adamw", ["exp_avgs", "exp_avg_sqs", "max_exp_avg_sqs"],
        grid(lr=[0.01], beta1=[0.9, 0.3], beta2=[0.999], weight_decay=[0.0, 0.1], eps=[1e-8],
             amsgrad=[False, True], maximize=[False, True]),
        ref_adamw, "AdamW", adam_torch, steps=True,
        used=lambda state, o: state != "max_exp_avg_sqs" or o["amsgrad"]),
    "adagrad": Spec(
        "adagrad", ["state_sums"],
        grid(lr=[0.05], lr_decay=[0.0, 0.1], weight_decay=[0.0, 0.1], eps=[1e-10],
             maximize=[False, True]),
        ref_adagrad, "Adagrad",
        lambda o: dict(lr=o["lr"], lr_decay=o["lr_decay"], weight_decay=o["weight_decay"],
                       eps=o["eps"], maximize=o["maximize"]), steps=True),
    "rmsprop": Spec(
        "rmsprop", ["square_avgs", "grad_avgs", "momentum_buffer_list"],
        grid(lr=[0.01], alpha=[0.99, 0.3], eps=[1e-8], weight_decay=[0.0, 0.1],
             momentum=[0.0, 0.9], centered=[False, True], maximize=[False, True]),
        ref_rmsprop, "RMSprop",
        lambda o: dict(lr=o["lr"], alpha=o["alpha"], eps=o["eps"],
                       weight_decay=o["weight_decay"], momentum=o["momentum"],
                       centered=o["centered"], maximize=o["maximize"]), steps=True,
        used=lambda state, o: (state == "square_avgs" or (state == "grad_avgs" and o["centered"])
                               or (state == "momentum_buffer_list" and o["momentum"] > 0))),
    "adamax": Spec(
        "adamax", ["exp_avgs", "exp_infs"],
        grid(lr=[0.02], beta1=[0.9, 0.3], beta2=[0.999], eps=[1e-8], weight_decay=[0.0, 0.1],
             maximize=[False, True]),
        ref_adamax, "Adamax",
        lambda o: dict(lr=o["lr"], betas=(o["beta1"], o["beta2"]), eps=o["eps"],
                       weight_decay=o["weight_decay"], maximize=o["maximize"]), steps=True),
    "nadam": Spec(
        "nadam", ["exp_avgs", "exp_avg_sqs"],
        grid(lr=[0.02], beta1=[0.9, 0.3], beta2=[0.999], weight_decay=[0.0, 0.1], eps=[1e-8],
             momentum_decay=[4e-3], decoupled_weight_decay=[False, True],
             maximize=[False, True]),
        ref_nadam, "NAdam",
        lambda o: dict(lr=o["lr"], betas=(o["beta1"], o["beta2"]), eps=o["eps"],
                       weight_decay=o["weight_decay"], momentum_decay=o["momentum_decay"],
                       decoupled_weight_decay=o["decoupled_weight_decay"],
                       maximize=o["maximize"]), steps=True, scalar_states=["mu_products"]),
    "adadelta": Spec(
        "adadelta", ["square_avgs", "acc_deltas"],
        grid(lr=[1.0], rho=[0.9], eps=[1e-6], weight_decay=[0.0, 0.1], maximize=[False, True]),
        ref_adadelta, "Adadelta",
        lambda o: dict(lr=o["lr"], rho=o["rho"], eps=o["eps"], weight_decay=o["weight_decay"],
                       maximize=o["maximize"]), steps=True),
    "radam": Spec(
        "radam", ["exp_avgs", "exp_avg_sqs"],
        grid(lr=[0.01], beta1=[0.9, 0.3], beta2=[0.999, 0.5], weight_decay=[0.0, 0.1],
             eps=[1e-8], decoupled_weight_decay=[False, True], maximize=[False, True]),
        ref_radam, "RAdam",
        lambda o: dict(lr=o["lr"], betas=(o["beta1"], o["beta2"]), eps=o["eps"],
                       weight_decay=o["weight_decay"],
                       decoupled_weight_decay=o["decoupled_weight_decay"],
                       maximize=o["maximize"]), steps=True),
}


# ---- tensors -------------------------------------------------------------------------------

def make(values, dtype, layout):
    """A pith tensor holding `values` (NumPy), laid out: "dense"; "strided", every other
    element of a larger buffer; or "transposed" (2-D and more: the reversed dims of a
    dense buffer)."""
    if layout == "dense" or values.ndim == 0 and layout == "transposed":
        return pith.tensor(values, dtype=dtype)
    if layout == "transposed" and values.ndim >= 2:
        return pith.tensor(np.ascontiguousarray(values.T), dtype=dtype).permute(
            *reversed(range(values.ndim)))
    base = pith.zeros(values.shape + (2,), dtype=dtype)
    view = base.select(-1, 0)
    view.copy_(pith.tensor(values, dtype=dtype))
    return view


def build(spec, options, dtype, layouts, rng, shapes=SHAPES):
    """The kernel's arguments (lists) for one parameter per shape; `layouts` cycles over the
    tensors. Returns (lists, grads per step function)."""
    np_dtype = np.float32 if dtype == pith.float32 else np.float64
    cycle = itertools.cycle(layouts)
    lists = {"self": [make(rng.standard_normal(s).astype(np_dtype), dtype, next(cycle))
                      for s in shapes]}
    for state in spec.states:
        if not spec.used(state, options):
            lists[state] = []
            continue
        # SGD's buffers start as garbage: the first step (is_first_step) overwrites them.
        garbage = state == "momentum_buffer_list" and spec.name == "sgd"
        lists[state] = [make(rng.standard_normal(s).astype(np_dtype) if garbage
                             else np.zeros(s, np_dtype), dtype, next(cycle)) for s in shapes]
    for state in spec.scalar_states:
        # torch's state['mu_product']: 1, of the default scalar dtype (float32)
        lists[state] = [pith.ones((), dtype=pith.float32) for _ in shapes]
    if spec.steps:
        lists["state_steps"] = [pith.zeros((), dtype=pith.float32) for _ in shapes]
    return lists


def clone_lists(lists):
    def copy(t):
        c = pith.empty_strided(t.shape, t.stride(), dtype=t.dtype)
        return c.copy_(t)
    return {k: [copy(t) for t in v] for k, v in lists.items()}


def grads_for(lists, rng, layouts):
    cycle = itertools.cycle(layouts)
    return [make(rng.standard_normal(tuple(p.shape)).astype(
        np.float32 if p.dtype == pith.float32 else np.float64), p.dtype, next(cycle))
        for p in lists["self"]]


def call(fn, spec, lists, grads, options, step):
    args = [lists["self"], grads] + [lists[s] for s in spec.states]
    args += [lists[s] for s in spec.scalar_states]
    if spec.steps:
        args.append(lists["state_steps"])
    kwargs = dict(options)
    if spec.name == "sgd":
        kwargs["is_first_step"] = step == 0
    fn(*args, **kwargs)


def bits(t):
    a = np.array(t.tolist(), dtype=np.float64 if t.dtype == pith.float64 else np.float32)
    return a.view(np.uint64 if a.dtype == np.float64 else np.uint32)


def assert_same_bits(a_lists, b_lists):
    for key in a_lists:
        for i, (a, b) in enumerate(zip(a_lists[key], b_lists[key])):
            np.testing.assert_array_equal(bits(a), bits(b), err_msg=f"{key}[{i}]")


LAYOUTS = {"dense": ["dense"], "mixed": ["strided", "dense", "transposed"]}


def case_ids(spec):
    return [",".join(f"{k}={v}" for k, v in o.items()) for o in spec.options]


@pytest.mark.parametrize("layout", sorted(LAYOUTS))
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name", sorted(SPECS))
def test_kernel_gives_the_bits_of_the_formula_with_pith_ops(name, dtype, layout):
    spec = SPECS[name]
    dtype = getattr(pith, dtype)
    for options in spec.options:
        rng = np.random.default_rng(0)
        kernel_lists = build(spec, options, dtype, LAYOUTS[layout], rng)
        ref_lists = clone_lists(kernel_lists)
        for step in range(8):
            grads = grads_for(kernel_lists, rng, LAYOUTS[layout])
            call(spec.kernel, spec, kernel_lists, grads, options, step)
            call(spec.ref, spec, ref_lists, grads, options, step)
            try:
                assert_same_bits(kernel_lists, ref_lists)
            except AssertionError as e:
                raise AssertionError(f"{name} {options} step {step}: {e}") from None


def test_radam_runs_both_branches_of_the_rectification():
    # beta2 = 0.999: rho_t <= 5 for the first steps, then > 5 (the bits test covers both).
    beta2 = 0.999
    rho_inf = 2 / (1 - beta2) - 1
    rho = [rho_inf - 2 * s * beta2 ** s / (1 - beta2 ** s) for s in range(1, 9)]
    assert rho[0] <= 5 < rho[-1]


@pytest.mark.parametrize("name", ["sgd", "adam", "adamw", "adagrad"])
def test_grad_scale_divides_the_gradient_and_found_inf_skips_the_step(name):
    spec = SPECS[name]
    options = spec.options[-1]
    rng = np.random.default_rng(1)
    kernel_lists = build(spec, options, pith.float32, ["strided", "dense"], rng)
    ref_lists = clone_lists(kernel_lists)
    scale = pith.tensor(4.0)
    for step in range(3):
        grads = grads_for(kernel_lists, rng, ["dense"])
        o = dict(options, grad_scale=scale)
        call(spec.kernel, spec, kernel_lists, grads, o, step)
        call(spec.ref, spec, ref_lists, grads, o, step)
        assert_same_bits(kernel_lists, ref_lists)
    before = clone_lists(kernel_lists)
    call(spec.kernel, spec, kernel_lists, grads, dict(options, found_inf=pith.tensor(1.0)), 3)
    assert_same_bits(kernel_lists, before)  # nothing written, steps not incremented
    call(spec.kernel, spec, kernel_lists, grads, dict(options, found_inf=pith.tensor(0.0)), 3)
    call(spec.ref, spec, ref_lists, grads, options, 3)
    assert_same_bits(kernel_lists, ref_lists)


def test_kernel_increments_the_steps_and_returns_none():
    p, g = [pith.ones(3)], [pith.ones(3)]
    steps = [pith.tensor(5.0)]
    r = pith._fused_adam_(p, g, [pith.zeros(3)], [pith.zeros(3)], [], steps, lr=0.1,
                          beta1=0.9, beta2=0.999, weight_decay=0.0, eps=1e-8, amsgrad=False,
                          maximize=False)
    assert r is None
    assert steps[0].item() == 6.0


def test_kernel_never_writes_the_grads():
    spec = SPECS["adam"]
    options = spec.options[-1]
    rng = np.random.default_rng(2)
    lists = build(spec, options, pith.float32, ["dense"], rng)
    grads = grads_for(lists, rng, ["strided"])
    before = [bits(g) for g in grads]
    call(spec.kernel, spec, lists, grads, options, 0)
    for b, g in zip(before, grads):
        np.testing.assert_array_equal(b, bits(g))


def test_threads_split_one_call_and_give_the_same_bits():
    # Large enough to run on several threads (above core/parallel.h's grain size).
    spec = SPECS["adamw"]
    options = spec.options[-1]
    shapes = [(300, 200), (5,), (70000,), ()]
    results = []
    old = pith.get_num_threads()
    try:
        for threads in (1, 2, 3):
            pith.set_num_threads(threads)
            rng = np.random.default_rng(3)
            lists = build(spec, options, pith.float32, ["dense", "strided"], rng, shapes)
            for step in range(2):
                call(spec.kernel, spec, lists, grads_for(lists, rng, ["dense"]), options, step)
            results.append(lists)
    finally:
        pith.set_num_threads(old)
    assert_same_bits(results[0], results[1])
    assert_same_bits(results[0], results[2])


# ---- against torch.optim's own single-tensor step ----------------------------------------

def to_torch(t):
    return torch.tensor(t.tolist(), dtype=getattr(torch, str(t.dtype).split(".")[1]))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name", sorted(SPECS))
def test_kernel_is_close_to_torch_optim_single_tensor_step(name, dtype):
    spec = SPECS[name]
    pdt = getattr(pith, dtype)
    rtol, atol = (1e-6, 1e-6) if dtype == "float32" else (1e-12, 1e-12)
    # torch refuses nesterov without momentum or with dampening; the kernel computes them
    options_torch_takes = [o for o in spec.options
                           if not (o.get("nesterov") and (o["momentum"] <= 0 or o["dampening"]))]
    for options in options_torch_takes[:: max(1, len(options_torch_takes) // 6)]:
        rng = np.random.default_rng(4)
        shapes = [(3, 4), (), (6,)]
        lists = build(spec, options, pdt, ["dense"], rng, shapes)
        tparams = [to_torch(p).requires_grad_() for p in lists["self"]]
        topt = getattr(torch.optim, spec.torch_class)(tparams, foreach=False,
                                                      **spec.torch_kwargs(options))
        for step in range(5):
            grads = grads_for(lists, rng, ["dense"])
            for tp, g in zip(tparams, grads):
                tp.grad = to_torch(g)
            topt.step()
            call(spec.kernel, spec, lists, grads, options, step)
            for i, (p, tp) in enumerate(zip(lists["self"], tparams)):
                np.testing.assert_allclose(
                    np.array(p.tolist()), tp.detach().numpy(), rtol=rtol, atol=atol,
                    err_msg=f"{name} {options} step {step} param {i}")


# ---- errors --------------------------------------------------------------------------------

def adam_call(params, grads=None, exp_avgs=None, exp_avg_sqs=None, steps=None, **kw):
    n = len(params)
    grads = grads if grads is not None else [pith.zeros_like(p) for p in params]
    exp_avgs = exp_avgs if exp_avgs is not None else [pith.zeros_like(p) for p in params]
    exp_avg_sqs = (exp_avg_sqs if exp_avg_sqs is not None
                   else [pith.zeros_like(p) for p in params])
    steps = steps if steps is not None else [pith.zeros(()) for _ in range(n)]
    options = dict(lr=0.1, beta1=0.9, beta2=0.999, weight_decay=0.0, eps=1e-8,
                   amsgrad=False, maximize=False)
    options.update(kw)
    pith._fused_adam_(params, grads, exp_avgs, exp_avg_sqs, [], steps, **options)


def test_error_list_lengths_differ():
    with pytest.raises(RuntimeError, match=r"grads has 1 tensors, but self has 2"):
        adam_call([pith.ones(2), pith.ones(2)], grads=[pith.ones(2)])
    with pytest.raises(RuntimeError, match=r"state_steps has 0 tensors, but self has 1"):
        adam_call([pith.ones(2)], steps=[])


def test_error_amsgrad_without_max_exp_avg_sqs():
    p = [pith.ones(2)]
    with pytest.raises(RuntimeError, match=r"max_exp_avg_sqs has 0 tensors, but self has 1"):
        pith._fused_adam_(p, [pith.ones(2)], [pith.zeros(2)], [pith.zeros(2)], [],
                          [pith.zeros(())], lr=0.1, beta1=0.9, beta2=0.999, weight_decay=0.0,
                          eps=1e-8, amsgrad=True, maximize=False)


def test_error_state_of_another_dtype_or_shape():
    with pytest.raises(RuntimeError, match=r"exp_avgs\[0\] has dtype float64, but its "
                                           r"parameter self\[0\] has float32"):
        adam_call([pith.ones(2)], exp_avgs=[pith.zeros(2, dtype=pith.float64)])
    with pytest.raises(RuntimeError, match=r"exp_avg_sqs\[0\] has shape \[3\], but its "
                                           r"parameter self\[0\] has \[2\]"):
        adam_call([pith.ones(2)], exp_avg_sqs=[pith.zeros(3)])
    with pytest.raises(RuntimeError, match=r"grads\[0\] has dtype float64"):
        adam_call([pith.ones(2)], grads=[pith.zeros(2, dtype=pith.float64)])


def test_error_non_floating_or_half_param():
    with pytest.raises(NotImplementedError, match=r"self\[0\] has dtype int64; the optimizer "
                                                  r"kernels update float32 and float64"):
        adam_call([pith.ones(2, dtype=pith.int64)])
    with pytest.raises(NotImplementedError, match=r"has dtype float16"):
        adam_call([pith.ones(2, dtype=pith.float16)])


def test_error_step_not_a_0_dim_floating_tensor():
    with pytest.raises(RuntimeError, match=r"state_steps\[0\] must be a 0-dim float32 or "
                                           r"float64 tensor, got a 1-dim float32 tensor"):
        adam_call([pith.ones(2)], steps=[pith.zeros(1)])
    with pytest.raises(RuntimeError, match=r"got a 0-dim int64 tensor"):
        adam_call([pith.ones(2)], steps=[pith.zeros((), dtype=pith.int64)])


def test_error_missing_grad():
    with pytest.raises(TypeError):
        adam_call([pith.ones(2)], grads=[None])


def test_error_written_tensor_with_overlapping_elements():
    with pytest.raises(ValueError, match=r"more than one element of the written-to tensor"):
        adam_call([pith.ones(1).expand(3)])


def test_error_grad_scale_of_several_elements():
    with pytest.raises(RuntimeError, match=r"grad_scale must be a floating tensor of one "
                                           r"element, got 2 elements"):
        adam_call([pith.ones(2)], grad_scale=pith.ones(2))


def test_a_refused_call_writes_nothing():
    params = [pith.ones(2), pith.ones(2)]
    steps = [pith.zeros(()), pith.zeros(())]
    with pytest.raises(RuntimeError):
        adam_call(params, exp_avgs=[pith.zeros(2), pith.zeros(3)], steps=steps)
    assert params[0].tolist() == [1.0, 1.0] and steps[0].item() == 0.0


def test_empty_lists_do_nothing():
    adam_call([])
    pith._fused_sgd_([], [], [], weight_decay=0.0, momentum=0.9, lr=0.1, dampening=0.0,
                     nesterov=False, maximize=False, is_first_step=True)
