"""torch.autograd.Function on gpuaccel's autograd node with a Python backward
(cpp/bindings/python_function_node.cc): the "Extending PyTorch" examples run as the same source
text under gpuaccel.torch and under PyTorch (tests/python/torch_reference.py), values and
gradients compared; PyTorch's errors for a backward returning the wrong number or shape of
gradients; the Python exception of a backward coming out of backward(); and the node dropping
the Python backward (and what its ctx holds) exactly when the graph goes."""
import gc
import weakref

import numpy as np
import pytest

import gpuaccel.torch as gtorch
from torch_reference import run_once

# The examples, as one text executed with `torch` bound to either implementation.
EXAMPLES = r'''
class Exp(torch.autograd.Function):
    @staticmethod
    def forward(ctx, i):
        result = i.exp()
        ctx.save_for_backward(result)
        return result

    @staticmethod
    def backward(ctx, grad_output):
        result, = ctx.saved_tensors
        return grad_output * result


class LinearFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, input, weight, bias=None):
        ctx.save_for_backward(input, weight, bias)
        output = input.mm(weight.t())
        if bias is not None:
            output = output + bias.unsqueeze(0).expand_as(output)
        return output

    @staticmethod
    def backward(ctx, grad_output):
        input, weight, bias = ctx.saved_tensors
        grad_input = grad_weight = grad_bias = None
        if ctx.needs_input_grad[0]:
            grad_input = grad_output.mm(weight)
        if ctx.needs_input_grad[1]:
            grad_weight = grad_output.t().mm(input)
        if bias is not None and ctx.needs_input_grad[2]:
            grad_bias = grad_output.sum(0)
        return grad_input, grad_weight, grad_bias


class StraightThroughClip(torch.autograd.Function):
    """Clips in the forward pass, passes the gradient through unchanged."""
    @staticmethod
    def forward(ctx, x, low, high):
        return x.clamp(low, high)

    @staticmethod
    def backward(ctx, grad_output):
        return grad_output, None, None


class SortedWithIndex(torch.autograd.Function):
    """Two outputs, the second marked non-differentiable; materialization off."""
    @staticmethod
    def forward(ctx, x):
        ctx.set_materialize_grads(False)
        doubled = x * 2
        index = torch.zeros_like(x)
        ctx.mark_non_differentiable(index)
        return doubled, index

    @staticmethod
    def backward(ctx, grad_doubled, grad_index):
        return None if grad_doubled is None else grad_doubled * 2


class TwoOutputs(torch.autograd.Function):
    """Used with its second output discarded: that output's gradient arrives as zeros."""
    @staticmethod
    def forward(ctx, x):
        return x * 2, x * 3

    @staticmethod
    def backward(ctx, grad_first, grad_second):
        return grad_first * 2 + grad_second * 3


class WrongCount(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, y):
        return x * y

    @staticmethod
    def backward(ctx, grad_output):
        return grad_output


class WrongShape(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x * 2

    @staticmethod
    def backward(ctx, grad_output):
        return grad_output[:1]


class BroadcastGrad(torch.autograd.Function):
    """A gradient of the broadcast shape: PyTorch sums it to the input's shape."""
    @staticmethod
    def forward(ctx, bias):
        return bias * 1

    @staticmethod
    def backward(ctx, grad_output):
        return grad_output.unsqueeze(0).expand(3, grad_output.shape[0])


class GradForNonTensor(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, scale):
        return x * scale

    @staticmethod
    def backward(ctx, grad_output):
        return grad_output, grad_output


def run_examples(x, w, b):
    out = {}
    def leaf(a):
        return torch.tensor(a, requires_grad=True)
    xt = leaf(x)
    y = Exp.apply(xt)
    (y * torch.tensor(np.array([1.0, -2.0, 0.5], np.float32))).sum().backward()
    out["exp"], out["exp_grad"] = y.detach().numpy(), xt.grad.numpy()
    inp, wt, bt = leaf(w[:2]), leaf(w), leaf(b)
    y = LinearFunction.apply(inp, wt, bt)
    (y * y).sum().backward()
    out["linear"] = y.detach().numpy()
    out["linear_gx"], out["linear_gw"], out["linear_gb"] = (
        inp.grad.numpy(), wt.grad.numpy(), bt.grad.numpy())
    inp, wt = leaf(w[:2]), torch.tensor(w)
    LinearFunction.apply(inp, wt).sum().backward()
    out["linear_nobias_gx"] = inp.grad.numpy()
    out["linear_weight_grad_is_none"] = wt.grad is None
    xt = leaf(x * 3)
    y = StraightThroughClip.apply(xt, -1.0, 1.0)
    (y * torch.tensor(np.array([3.0, 1.0, -1.0], np.float32))).sum().backward()
    out["clip"], out["clip_grad"] = y.detach().numpy(), xt.grad.numpy()
    xt = leaf(x)
    doubled, index = SortedWithIndex.apply(xt)
    out["index_requires_grad"] = index.requires_grad
    out["doubled_requires_grad"] = doubled.requires_grad
    doubled.sum().backward()
    out["sorted_grad"] = xt.grad.numpy()
    xt = leaf(x)
    TwoOutputs.apply(xt)[0].sum().backward()
    out["discarded_output_grad"] = xt.grad.numpy()
    xt = leaf(b)
    BroadcastGrad.apply(xt).sum().backward()
    out["broadcast_grad"] = xt.grad.numpy()
    for name, fn, args in (("count", WrongCount, lambda: (leaf(x), leaf(x))),
                           ("shape", WrongShape, lambda: (leaf(x),)),
                           ("nontensor", GradForNonTensor, lambda: (leaf(x), 2.0))):
        try:
            fn.apply(*args()).sum().backward()
            out[name + "_error"] = None
        except Exception as e:
            out[name + "_error"] = [type(e).__name__, str(e)]
    return out
'''

X = np.array([0.5, -1.0, 0.25], np.float32)
W = np.random.default_rng(3).normal(size=(4, 3)).astype(np.float32)
B = np.array([0.1, -0.2, 0.3, 0.4], np.float32)


@pytest.fixture(scope="module")
def both():
    theirs = run_once(EXAMPLES + "\nout.update(run_examples(x, w, b))\n", x=X, w=W, b=B)
    assert "error" not in theirs, theirs
    scope = {"torch": gtorch, "np": np}
    exec(EXAMPLES, scope)
    return scope["run_examples"](X, W, B), theirs


@pytest.mark.parametrize("key", [
    "exp", "exp_grad", "linear", "linear_gx", "linear_gw", "linear_gb", "linear_nobias_gx",
    "clip", "clip_grad", "sorted_grad", "broadcast_grad",
    "discarded_output_grad"])
def test_values_and_gradients_match_pytorch(both, key):
    ours, theirs = both
    np.testing.assert_allclose(ours[key], theirs[key], rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("key", ["linear_weight_grad_is_none", "index_requires_grad",
                                 "doubled_requires_grad"])
def test_flags_match_pytorch(both, key):
    ours, theirs = both
    assert ours[key] == theirs[key]


@pytest.mark.parametrize("key", ["count_error", "shape_error", "nontensor_error"])
def test_backward_errors_match_pytorch(both, key):
    ours, theirs = both
    assert theirs[key] is not None
    assert ours[key] == list(theirs[key])


def test_grad_fn_is_named_after_the_function():
    scope = {"torch": gtorch, "np": np}
    exec(EXAMPLES, scope)
    y = scope["Exp"].apply(gtorch.tensor([1.0], requires_grad=True))
    assert y.grad_fn == "Exp" and "grad_fn=<ExpBackward>" in repr(y)
    assert y.requires_grad


class BackwardFailure(Exception):
    pass


def test_exception_raised_in_backward_comes_out_of_backward():
    class Failing(gtorch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, grad_output):
            raise BackwardFailure("the backward refused")

    x = gtorch.tensor([1.0, 2.0], requires_grad=True)
    y = (Failing.apply(x) * 3).sum()
    with pytest.raises(BackwardFailure, match="the backward refused"):
        y.backward()
    with pytest.raises(BackwardFailure):
        gtorch.autograd.grad(Failing.apply(x).sum(), [x])


class Payload:
    pass


def _function_holding(payload_refs):
    class Holding(gtorch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.payload = Payload()
            payload_refs.append(weakref.ref(ctx.payload))
            return x * 2

        @staticmethod
        def backward(ctx, grad_output):
            assert ctx.payload is not None
            return grad_output * 2

    return Holding


def test_python_backward_lives_exactly_as_long_as_the_graph():
    refs = []
    holding = _function_holding(refs)
    x = gtorch.tensor([1.0, 2.0], requires_grad=True)
    y = holding.apply(x).sum()
    gc.collect()
    assert refs[0]() is not None  # the graph is alive: so is its backward
    y.backward(retain_graph=True)
    assert refs[0]() is not None and x.grad.numpy().tolist() == [2.0, 2.0]
    y.backward()  # without retain_graph the graph's saved state is released
    gc.collect()
    assert refs[0]() is None
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        y.backward()
    z = holding.apply(x)
    del z  # the graph dies with its output, never run
    gc.collect()
    assert refs[1]() is None


def test_nothing_is_recorded_without_grad():
    refs = []
    holding = _function_holding(refs)
    y = holding.apply(gtorch.tensor([1.0]))
    assert not y.requires_grad
    with gtorch.no_grad():
        y = holding.apply(gtorch.tensor([1.0], requires_grad=True))
    assert not y.requires_grad


def test_forward_returning_its_input_keeps_the_input_a_leaf():
    class Identity(gtorch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x

        @staticmethod
        def backward(ctx, grad_output):
            return grad_output * 5

    x = gtorch.tensor([1.0, 2.0], requires_grad=True)
    y = Identity.apply(x)
    assert x.is_leaf and not y.is_leaf
    y.sum().backward()
    assert x.grad.numpy().tolist() == [5.0, 5.0]


def test_once_differentiable_backward_runs():
    from gpuaccel.torch.autograd.function import once_differentiable

    class Square(gtorch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        @once_differentiable
        def backward(ctx, grad_output):
            x, = ctx.saved_tensors
            return 2 * x * grad_output

    x = gtorch.tensor([3.0], requires_grad=True)
    Square.apply(x).backward()
    assert x.grad.numpy().tolist() == [6.0]


def test_gradcheck_agrees_on_a_function():
    scope = {"torch": gtorch, "np": np}
    exec(EXAMPLES, scope)
    x = gtorch.tensor([0.3, -0.2, 0.1], requires_grad=True)
    assert gtorch.autograd.gradcheck(scope["Exp"].apply, (x,))

    class WrongGradient(gtorch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 3

        @staticmethod
        def backward(ctx, grad_output):
            return grad_output * 2

    with pytest.raises(RuntimeError, match="Jacobian mismatch"):
        gtorch.autograd.gradcheck(WrongGradient.apply, (x,))
    assert not gtorch.autograd.gradcheck(WrongGradient.apply, (x,), raise_exception=False)


def test_setup_context_form():
    """PyTorch 2's forward(*args) + setup_context (the reference PyTorch, 1.13, predates it)."""
    class MulConstant(gtorch.autograd.Function):
        @staticmethod
        def forward(x, constant):
            return x * constant

        @staticmethod
        def setup_context(ctx, inputs, output):
            ctx.constant = inputs[1]

        @staticmethod
        def backward(ctx, grad_output):
            return grad_output * ctx.constant, None

    x = gtorch.tensor([1.0, 2.0], requires_grad=True)
    y = MulConstant.apply(x, 2.5)
    y.sum().backward()
    assert y.detach().numpy().tolist() == [2.5, 5.0] and x.grad.numpy().tolist() == [2.5, 2.5]
