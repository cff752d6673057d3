"""``gpuaccel.torch.autograd`` (grad, backward, Variable) against PyTorch 1.13's
(torch_reference): one script takes the same gradients with the real torch and with
``import gpuaccel.torch as torch``; the gradients, the untouched or accumulated ``.grad`` and
the error texts must agree."""
import numpy as np
import pytest

import gpuaccel.torch as torch
import torch_reference

SCRIPT = """
w = torch.tensor(w0, requires_grad=True)
b = torch.tensor(b0, requires_grad=True)
unused = torch.tensor(b0, requires_grad=True)
inputs = torch.tensor(x)
hidden = torch.tanh(inputs @ w + b)
loss = (hidden ** 2).mean()
gw, gb = torch.autograd.grad(loss, [w, b], retain_graph=True)
out["gw"], out["gb"] = gw.numpy(), gb.numpy()
out["grad_untouched"] = repr(w.grad)
(gh,) = torch.autograd.grad(loss, hidden, retain_graph=True)
out["g_hidden"] = gh.numpy()
weights = torch.tensor(x[:, :2])
(gw2,) = torch.autograd.grad(hidden, w, grad_outputs=weights, retain_graph=True)
out["gw_weighted"] = gw2.numpy()
gs = torch.autograd.grad([loss, hidden.sum()], (w,), retain_graph=True)
out["g_two_outputs"] = gs[0].numpy()
g_unused = torch.autograd.grad(loss, [w, unused], retain_graph=True, allow_unused=True)
out["unused_is_none"] = g_unused[1] is None
torch.autograd.backward([loss], retain_graph=True)
out["accumulated_w"] = w.grad.numpy()
torch.autograd.backward(hidden, grad_tensors=weights, inputs=[b])
out["accumulated_b"] = b.grad.numpy()
v = torch.autograd.Variable(torch.tensor(b0), requires_grad=True)
out["variable"] = [v.requires_grad, isinstance(v, torch.Tensor)]
hidden = torch.tanh(inputs @ w + b)
loss = (hidden ** 2).mean()
ERRORS = [
    "torch.autograd.grad(loss, [w, unused], retain_graph=True)",
    "torch.autograd.grad(hidden, w, retain_graph=True)",
    "torch.autograd.grad(loss, torch.tensor(b0), retain_graph=True)",
    "torch.autograd.grad(torch.tensor(b0).sum(), w, retain_graph=True)",
    "torch.autograd.backward(hidden)",
]
record_errors(ERRORS, globals())
"""


def test_grad_backward_and_variable_match_torch():
    rng = np.random.default_rng(4)
    data = {"x": rng.normal(size=(5, 3)).astype(np.float32),
            "w0": rng.normal(size=(3, 2)).astype(np.float32),
            "b0": rng.normal(size=(2,)).astype(np.float32)}
    ours, reference = torch_reference.run_script_both(SCRIPT, torch, **data)
    for key in ("gw", "gb", "g_hidden", "gw_weighted", "g_two_outputs", "accumulated_w",
                "accumulated_b"):
        np.testing.assert_allclose(ours[key], reference[key], rtol=1e-5, atol=1e-6,
                                   err_msg=key)
    for key in ("grad_untouched", "unused_is_none", "variable"):
        assert ours[key] == reference[key], key
    torch_reference.assert_same_errors(ours, reference, 5)


def test_higher_order_gradients_are_refused_with_the_reason():
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(NotImplementedError, match="higher-order"):
        torch.autograd.grad((x ** 3).sum(), x, create_graph=True)
