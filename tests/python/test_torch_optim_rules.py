"""``gpuaccel.torch.optim`` against PyTorch 1.13's torch.optim (torch_reference): one training
script runs with the real torch and with ``import gpuaccel.torch as torch``; the parameters
after each optimizer's steps (two parameter groups, a learning rate edited mid-run, zero_grad,
step with a closure), the errors on bad arguments and the printed optimizer must agree."""
import numpy as np
import pytest

import gpuaccel.torch as torch
import torch_reference

# Runs in both interpreters: `torch` is the real one or gpuaccel's face, `np` NumPy, `out` the
# results, x/y/w0/b0 the seeded data.
SCRIPT = """
CASES = [
    ("SGD", dict(lr=0.1)),
    ("SGD", dict(lr=0.05, momentum=0.9, dampening=0.1, weight_decay=0.01)),
    ("SGD", dict(lr=0.05, momentum=0.8, nesterov=True, maximize=False)),
    ("Adam", dict(lr=0.1)),
    ("Adam", dict(lr=0.05, amsgrad=True, weight_decay=0.1, betas=(0.8, 0.9))),
    ("AdamW", dict(lr=0.05)),
    ("AdamW", dict(lr=0.05, amsgrad=True, weight_decay=0.3, eps=1e-3)),
    ("RMSprop", dict(lr=0.01)),
    ("RMSprop", dict(lr=0.01, momentum=0.5, centered=True, weight_decay=0.1, alpha=0.9)),
]
for index, (name, kwargs) in enumerate(CASES):
    w = torch.tensor(w0, requires_grad=True)
    b = torch.tensor(b0, requires_grad=True)
    optimizer = getattr(torch.optim, name)(
        [{"params": [w]}, {"params": b, "lr": kwargs["lr"] * 2}], **kwargs)

    def closure():
        optimizer.zero_grad()
        loss = ((torch.tensor(x) @ w + b - torch.tensor(y)) ** 2).mean()
        loss.backward()
        return loss

    losses = []
    for step in range(4):
        if step == 2:
            optimizer.param_groups[0]["lr"] *= 0.5
        if step == 3:
            losses.append(optimizer.step(closure).item())
        else:
            losses.append(closure().item())
            optimizer.step()
    out[f"{index}_w"] = w.detach().numpy()
    out[f"{index}_b"] = b.detach().numpy()
    out[f"{index}_losses"] = np.array(losses, np.float32)

# maximize: the same steps as minimizing the negated loss
w = torch.tensor(w0, requires_grad=True)
optimizer = torch.optim.Adam([w], lr=0.1, maximize=True)
for _ in range(3):
    optimizer.zero_grad()
    (-(w ** 2).sum()).backward()
    optimizer.step()
out["maximize_w"] = w.detach().numpy()

# zero_grad zeroes (1.13's default) or drops the gradients
optimizer = torch.optim.SGD([w], lr=0.1)
(w ** 2).sum().backward()
optimizer.zero_grad()
out["zeroed"] = w.grad.numpy()
optimizer.zero_grad(set_to_none=True)
out["dropped"] = repr(w.grad)
out["repr_sgd"] = repr(torch.optim.SGD([w], lr=0.1, momentum=0.9))
out["repr_adam"] = repr(torch.optim.Adam([{"params": [w]}, {"params": [b], "lr": 0.5}]))

ERRORS = [
    "torch.optim.SGD(w, lr=0.1)",
    "torch.optim.SGD([], lr=0.1)",
    "torch.optim.SGD([w])",
    "torch.optim.SGD([w], lr=-1.0)",
    "torch.optim.SGD([w], lr=0.1, momentum=-0.5)",
    "torch.optim.SGD([w], lr=0.1, nesterov=True)",
    "torch.optim.SGD([w], lr=0.1, momentum=0.9, dampening=0.5, nesterov=True)",
    "torch.optim.SGD([w * 2], lr=0.1)",
    "torch.optim.SGD([w, 3.0], lr=0.1)",
    "torch.optim.SGD([w], lr=0.1).add_param_group({'params': {b}})",
    "torch.optim.SGD([{'params': [w]}, {'params': [w]}], lr=0.1)",
    "torch.optim.Adam([w], betas=(1.0, 0.9))",
    "torch.optim.Adam([w], betas=(0.9, -0.1))",
    "torch.optim.Adam([w], eps=-1.0)",
    "torch.optim.AdamW([w], weight_decay=-0.1)",
    "torch.optim.RMSprop([w], alpha=-0.5)",
]
record_errors(ERRORS, globals())
"""


@pytest.fixture(scope="module")
def runs():
    rng = np.random.default_rng(7)
    data = {"x": rng.normal(size=(8, 3)).astype(np.float32),
            "y": rng.normal(size=(8, 2)).astype(np.float32),
            "w0": rng.normal(size=(3, 2)).astype(np.float32),
            "b0": rng.normal(size=(2,)).astype(np.float32)}
    ours, reference = torch_reference.run_script_both(SCRIPT, torch, **data)
    return ours, reference, data


def test_parameters_after_each_optimizers_steps_match_torch(runs):
    ours, reference, data = runs
    trained = [key for key in reference if key.endswith(("_w", "_b", "_losses"))]
    assert len(trained) == 9 * 3 + 1
    for key in trained:
        np.testing.assert_allclose(ours[key], reference[key], rtol=1e-4, atol=1e-5,
                                   err_msg=key)
    for index in range(9):  # every optimizer moved the parameters: a no-op step fails here
        assert np.abs(reference[f"{index}_w"] - data["w0"]).max() > 1e-3, index


def test_zero_grad_and_printed_form_match_torch(runs):
    ours, reference, _ = runs
    np.testing.assert_array_equal(ours["zeroed"], reference["zeroed"])
    assert ours["dropped"] == reference["dropped"] == "None"
    assert ours["repr_sgd"] == reference["repr_sgd"]
    assert ours["repr_adam"] == reference["repr_adam"]


def test_bad_arguments_raise_torchs_errors(runs):
    ours, reference, _ = runs
    torch_reference.assert_same_errors(ours, reference, 16)
