"""Module full backward hooks (register_full_backward_hook and
register_full_backward_pre_hook), as torch.utils.hooks.BackwardHook: an identity
pith.autograd.Function (BackwardHookFunction) wraps the module's tensor inputs and another
its tensor outputs; the outputs' node sees the gradients of the outputs (pre-hooks run
there), the inputs' node those of the inputs (hooks run there). PyTorch registers node hooks
on BackwardHookFunction's nodes; pith's nodes call the hooks from the Function's backward,
which is the same place in the graph (docs/autograd.md, "Custom functions")."""
import warnings

from ... import _C
from ..._grad_mode import is_grad_enabled
from ...autograd.function import Function

Tensor = _C.Tensor


class BackwardHookFunction(Function):
    """The identity, whose backward hands the gradients to `on_grads(grads)`."""

    @staticmethod
    def forward(ctx, on_grads, *args):
        ctx.mark_non_differentiable(*[arg for arg in args if not arg.requires_grad])
        ctx.on_grads = on_grads
        return args

    @staticmethod
    def backward(ctx, *grads):
        return (None,) + tuple(ctx.on_grads(grads))


class BackwardHook:
    """One module call's backward hooks (torch.utils.hooks.BackwardHook)."""

    def __init__(self, module, user_hooks, user_pre_hooks):
        self.user_hooks = user_hooks
        self.user_pre_hooks = user_pre_hooks
        self.module = module
        self.grad_outputs = None
        self.n_outputs = -1
        self.output_tensors_index = None
        self.n_inputs = -1
        self.input_tensors_index = None

    @staticmethod
    def _pack_with_none(indices, values, size):
        res = [None] * size
        for idx, val in zip(indices, values):
            res[idx] = val
        return tuple(res)

    @staticmethod
    def _unpack_none(indices, values):
        return tuple(values[idx] for idx in indices)

    def _input_grads(self, grad_input):
        if self.grad_outputs is None:
            # the gradient reached the inputs without passing through the outputs (double
            # backward, for one)
            return grad_input
        res = self._pack_with_none(self.input_tensors_index, grad_input, self.n_inputs)
        for hook in self.user_hooks:
            out = hook(self.module, res, self.grad_outputs)
            if out is None:
                continue
            if len(out) != len(res):
                raise RuntimeError("Backward hook returned an invalid number of grad_input, "
                                   f"got {len(out)}, but expected {len(res)}")
            res = out
        self.grad_outputs = None
        return self._unpack_none(self.input_tensors_index, res)

    def _output_grads(self, grad_output):
        self.grad_outputs = self._pack_with_none(self.output_tensors_index, grad_output,
                                                 self.n_outputs)
        if self.user_pre_hooks:
            expected_len = len(self.grad_outputs)
            for user_pre_hook in self.user_pre_hooks:
                hook_grad_outputs = user_pre_hook(self.module, self.grad_outputs)
                if hook_grad_outputs is None:
                    continue
                actual_len = len(hook_grad_outputs)
                if actual_len != expected_len:
                    raise RuntimeError("Backward pre hook returned an invalid number of "
                                       f"grad_output, got {actual_len}, but expected "
                                       f"{expected_len}")
                self.grad_outputs = hook_grad_outputs
        local_grad_outputs = self.grad_outputs
        if self.input_tensors_index is None:
            warnings.warn("Full backward hook is firing when gradients are computed with "
                          "respect to module outputs since no inputs require gradients. See "
                          "https://docs.pytorch.org/docs/main/generated/torch.nn.Module.html"
                          "#torch.nn.Module.register_full_backward_hook for more details.",
                          stacklevel=5)
            grad_inputs = self._pack_with_none([], [], self.n_inputs)
            for user_hook in self.user_hooks:
                res = user_hook(self.module, grad_inputs, self.grad_outputs)
                if res is not None and not (isinstance(res, tuple)
                                            and all(el is None for el in res)):
                    raise RuntimeError("Backward hook for Modules where no input requires "
                                       "gradient should always return None or None for all "
                                       "gradients.")
            self.grad_outputs = None
        return tuple(local_grad_outputs[i] for i in self.output_tensors_index)

    def _apply_on_tensors(self, on_grads, args):
        tensors_idx, tensors = [], []
        requires_grad = False
        for i, arg in enumerate(args):
            if isinstance(arg, Tensor):
                tensors_idx.append(i)
                tensors.append(arg)
                requires_grad |= arg.requires_grad
        if not (requires_grad and is_grad_enabled()):
            return args, None
        new_tensors = BackwardHookFunction.apply(on_grads, *tensors)
        if len(new_tensors) == 0:
            raise RuntimeError("Cannot set Module backward hook for a Module with no input "
                               "Tensors.")
        arg_list = list(args)
        for idx, val in zip(tensors_idx, new_tensors):
            arg_list[idx] = val
        out = tuple(arg_list) if type(args) is tuple else type(args)(*arg_list)
        return out, tensors_idx

    def setup_input_hook(self, args):
        res, input_idx = self._apply_on_tensors(self._input_grads, args)
        self.n_inputs = len(args)
        self.input_tensors_index = input_idx
        return res

    def setup_output_hook(self, args):
        is_tuple = isinstance(args, tuple)
        if not is_tuple:
            args = (args,)
        res, output_idx = self._apply_on_tensors(self._output_grads, args)
        self.n_outputs = len(args)
        self.output_tensors_index = output_idx
        return res if is_tuple else res[0]
