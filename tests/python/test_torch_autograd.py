"""torch.autograd.grad / backward of the PyTorch face against PyTorch 1.13 (one torch_reference
subprocess): the same gradients for scalar and weighted non-scalar outputs, several inputs and
several roots, and PyTorch's errors for the misuses."""
import numpy as np
import pytest

import torch_reference

import gpuaccel.torch as torch

_RNG = np.random.default_rng(3)
X = _RNG.standard_normal((3, 4)).astype(np.float32)
W = _RNG.standard_normal((4, 2)).astype(np.float32)
V = _RNG.standard_normal((3, 2)).astype(np.float32)

# The same text runs on both sides; "torch" is that side's torch.
_COMPUTATION = """
def compute(torch, x0, w0, v0):
    x = torch.tensor(x0, requires_grad=True)
    w = torch.tensor(w0, requires_grad=True)
    y = torch.tanh(torch.matmul(x, w))
    gx, gw = torch.autograd.grad((y * y).sum(), [x, w], retain_graph=True)
    (gv,) = torch.autograd.grad(y, w, grad_outputs=torch.tensor(v0), retain_graph=True)
    torch.autograd.backward([y.sum(), (y * 2).mean()])
    return gx.numpy(), gw.numpy(), gv.numpy(), x.grad.numpy(), w.grad.numpy()
"""
_SCOPE = {}
exec(_COMPUTATION, _SCOPE)
compute = _SCOPE["compute"]


@pytest.fixture(scope="module")
def reference():
    result = torch_reference.run_once(_COMPUTATION + """
for k, value in enumerate(compute(torch, x0, w0, v0)):
    out[str(k)] = value
""", x0=X, w0=W, v0=V)
    assert "error" not in result, result
    return result


def test_grad_and_backward_match_pytorch(reference):
    for k, ours in enumerate(compute(torch, X, W, V)):
        np.testing.assert_allclose(ours, reference[str(k)], rtol=1e-5, atol=1e-6, err_msg=k)


def test_grad_leaves_dot_grad_alone_and_reports_misuse():
    x = torch.tensor(X, requires_grad=True)
    unused = torch.tensor(W, requires_grad=True)
    y = (x * 3).sum()
    (gx,) = torch.autograd.grad(y, x)
    np.testing.assert_array_equal(gx.numpy(), np.full_like(X, 3))
    assert x.grad is None
    assert torch.autograd.grad(y, [x, unused], allow_unused=True)[1] is None
    with pytest.raises(RuntimeError, match="not have been used in the graph"):
        torch.autograd.grad(y, [x, unused])
    with pytest.raises(RuntimeError, match="only for scalar outputs"):
        torch.autograd.grad(x * 3, x)
    with pytest.raises(RuntimeError, match="does not require grad"):
        torch.autograd.grad(y, torch.tensor(X))
    with pytest.raises(RuntimeError, match="Mismatch in shape"):
        torch.autograd.grad(x * 3, x, grad_outputs=torch.ones(2))
    with pytest.raises(NotImplementedError, match="create_graph"):
        torch.autograd.grad(y, x, create_graph=True)
    with pytest.raises(AttributeError, match="functional.hessian is not supported"):
        torch.autograd.functional.hessian  # noqa: B018


# torch.autograd.functional on both sides: tuple and single inputs and outputs, an unused input,
# vjp with and without v, and the inputs left as they were.
_FUNCTIONAL = """
def functional_results(torch, x0, w0):
    F = torch.autograd.functional
    x, w = torch.tensor(x0), torch.tensor(w0)
    mixed = lambda a, b: 2 * a.exp() + 3 * b
    two_outputs = lambda a: (torch.tanh(torch.matmul(a, w)), (a * a).sum())
    unused = lambda a, b: a * 4
    results = [F.jacobian(mixed, (x[0, :2], w[:2, 0])), F.jacobian(lambda a: a ** 3, x[1]),
               F.jacobian(two_outputs, x[:2]), F.jacobian(unused, (x[0], w[0])),
               F.vjp(lambda a: torch.matmul(a, w), x, v=torch.ones(3, 2) * 0.5),
               F.vjp(lambda a: (a * a).sum(), x[0]), F.vjp(two_outputs, x, (torch.ones(3, 2), torch.tensor(2.0)))]
    flat = []
    def walk(value):
        if isinstance(value, (tuple, list)):
            flat.append('(' + str(len(value)))
            for v in value:
                walk(v)
        else:
            flat.append(value.numpy())
    walk(results)
    errors = []
    for call in (lambda: F.jacobian(unused, (x[0], w[0]), strict=True),
                 lambda: F.vjp(lambda a: a * 2, x),
                 lambda: F.vjp(lambda a: a * 2, x, v=torch.ones(2))):
        try:
            call()
            errors.append(None)
        except RuntimeError as e:
            errors.append(type(e).__name__)
    return flat, errors, x.requires_grad
"""
_FUNCTIONAL_SCOPE = {}
exec(_FUNCTIONAL, _FUNCTIONAL_SCOPE)


def test_functional_jacobian_and_vjp_match_pytorch():
    expected = torch_reference.run(_FUNCTIONAL + """
flat, errors, touched = functional_results(torch, x0, w0)
out['count'] = len(flat)
for k, value in enumerate(flat):
    out[str(k)] = value
out['errors'] = errors
out['touched'] = touched
""", x0=X, w0=W)
    flat, errors, touched = _FUNCTIONAL_SCOPE["functional_results"](torch, X, W)
    assert len(flat) == expected["count"]
    for k, value in enumerate(flat):
        if isinstance(value, str):  # a tuple's length marker: the nesting is PyTorch's
            assert value == expected[str(k)], k
        else:
            np.testing.assert_allclose(value, expected[str(k)], rtol=1e-5, atol=1e-6,
                                       err_msg=str(k))
    assert errors == expected["errors"] and touched == expected["touched"]
    with pytest.raises(NotImplementedError, match="create_graph"):
        torch.autograd.functional.jacobian(lambda a: a * 2, torch.tensor(X), create_graph=True)
