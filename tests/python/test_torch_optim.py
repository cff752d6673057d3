"""torch.optim of the PyTorch face against PyTorch 1.13 (one torch_reference subprocess for the
module): each optimizer configuration takes the same five steps on the same parameters and loss
and must give PyTorch's losses and final parameters; plus state_dict round trips, StepLR,
zero_grad and the argument errors."""
import copy

import numpy as np
import pytest

import torch_reference

import gpuaccel.torch as torch

_RNG = np.random.default_rng(11)
W0 = _RNG.standard_normal((3, 4)).astype(np.float32)
B0 = _RNG.standard_normal(3).astype(np.float32)
X = _RNG.standard_normal((6, 4)).astype(np.float32)

# The same text builds the optimizer on both sides ("params" is [w, b]).
CONFIGS = [
    "torch.optim.SGD(params, lr=0.1)",
    "torch.optim.SGD(params, lr=0.05, momentum=0.9, dampening=0.1, weight_decay=0.01)",
    "torch.optim.SGD(params, lr=0.05, momentum=0.8, nesterov=True, maximize=True)",
    "torch.optim.SGD([{'params': [params[0]]}, {'params': [params[1]], 'lr': 0.5}], lr=0.1)",
    "torch.optim.Adam(params, lr=0.1)",
    "torch.optim.Adam(params, lr=0.05, betas=(0.8, 0.9), eps=1e-3, weight_decay=0.1, "
    "amsgrad=True)",
    "torch.optim.AdamW(params, lr=0.1)",
    "torch.optim.AdamW(params, lr=0.05, weight_decay=0.3, amsgrad=True)",
]
STEPS = 5

# The loss's gradient changes from step to step (the squares) and is not the same per element.
_TRAINING = """
def train(torch, config, w0, b0, x, scheduled=False):
    w = torch.tensor(w0, requires_grad=True)
    b = torch.tensor(b0, requires_grad=True)
    params = [w, b]
    opt = eval(config)
    sched = torch.optim.lr_scheduler.StepLR(opt, step_size=2, gamma=0.5) if scheduled else None
    losses = []
    for _ in range(STEPS):
        opt.zero_grad()
        y = torch.matmul(torch.tensor(x), w.transpose(0, 1)) + b
        loss = (y * y * torch.tensor(np.linspace(0.5, 1.5, 3, dtype=np.float32))).mean()
        loss.backward()
        opt.step()
        if sched is not None:
            sched.step()
        losses.append(loss.item())
    return losses, w.detach().numpy(), b.detach().numpy(), opt
"""
# Gradient clipping between backward() and step(): (function, its arguments after params).
CLIPS = [("clip_grad_norm_", (0.5,)), ("clip_grad_norm_", (0.3, float("inf"))),
         ("clip_grad_norm_", (100.0,)), ("clip_grad_norm_", (0.4, 1.0)),
         ("clip_grad_value_", (0.05,))]
_TRAINING += """
def clipped(torch, clip, args, w0, b0, x):
    w = torch.tensor(w0, requires_grad=True)
    b = torch.tensor(b0, requires_grad=True)
    y = torch.matmul(torch.tensor(x), w.transpose(0, 1)) + b
    (y * y).mean().backward()
    norm = getattr(torch.nn.utils, clip)([w, b], *args)
    return (None if norm is None else norm.item()), (w.grad.numpy(), b.grad.numpy())
"""
# Learning-rate schedules: the rates of 12 epochs (two groups, so per-group state shows).
SCHEDULES = ["StepLR(opt, step_size=3, gamma=0.5)", "MultiStepLR(opt, [2, 5, 5, 9], 0.3)",
             "ExponentialLR(opt, 0.8)", "LambdaLR(opt, lambda epoch: 0.9 ** epoch + 0.01)",
             "CosineAnnealingLR(opt, T_max=5, eta_min=0.01)"]
_TRAINING += """
def rates(torch, text):
    w = torch.zeros(2, requires_grad=True)
    b = torch.zeros(1, requires_grad=True)
    opt = torch.optim.SGD([{"params": [w]}, {"params": [b], "lr": 0.5}], lr=0.1)
    sched = eval("torch.optim.lr_scheduler." + text, {"torch": torch, "opt": opt})
    seen = []
    for _ in range(12):
        opt.step()
        sched.step()
        seen.append([group["lr"] for group in opt.param_groups])
    return seen
"""
_SCOPE = {"np": np, "STEPS": STEPS}
exec(_TRAINING, _SCOPE)
train, clipped, rates = _SCOPE["train"], _SCOPE["clipped"], _SCOPE["rates"]

_REFERENCE = (f"STEPS = {STEPS}\ninf = float('inf')\nCLIPS = {CLIPS!r}\n"
              f"SCHEDULES = {SCHEDULES!r}\n") + _TRAINING + f"""
for k, config in enumerate({CONFIGS!r}):
    losses, w, b, _ = train(torch, config, w0, b0, x)
    out[f"{{k}}_losses"], out[f"{{k}}_w"], out[f"{{k}}_b"] = np.array(losses), w, b
losses, w, b, opt = train(torch, {CONFIGS[1]!r}, w0, b0, x, scheduled=True)
out["sched_w"], out["sched_lr"] = w, opt.param_groups[0]["lr"]
for k, text in enumerate(SCHEDULES):
    out[f"schedule{{k}}"] = rates(torch, text)
for k, (clip, arg) in enumerate(CLIPS):
    norm, grads = clipped(torch, clip, arg, w0, b0, x)
    out[f"clip{{k}}_norm"], out[f"clip{{k}}_w"], out[f"clip{{k}}_b"] = norm, grads[0], grads[1]
"""


@pytest.fixture(scope="module")
def reference():
    result = torch_reference.run_once(_REFERENCE, w0=W0, b0=B0, x=X)
    assert "error" not in result, result
    return result


@pytest.mark.parametrize("index", range(len(CONFIGS)), ids=CONFIGS)
def test_optimizer_steps_match_pytorch(index, reference):
    losses, w, b, _ = train(torch, CONFIGS[index], W0, B0, X)
    np.testing.assert_allclose(losses, reference[f"{index}_losses"], rtol=1e-5)
    np.testing.assert_allclose(w, reference[f"{index}_w"], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(b, reference[f"{index}_b"], rtol=1e-5, atol=1e-6)


def test_step_lr_matches_pytorch(reference):
    _, w, _, opt = train(torch, CONFIGS[1], W0, B0, X, scheduled=True)
    assert opt.param_groups[0]["lr"] == pytest.approx(reference["sched_lr"])
    np.testing.assert_allclose(w, reference["sched_w"], rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("index", range(len(SCHEDULES)), ids=SCHEDULES)
def test_learning_rate_schedules_match_pytorch(index, reference):
    np.testing.assert_allclose(rates(torch, SCHEDULES[index]), reference[f"schedule{index}"],
                               rtol=1e-12)


@pytest.mark.parametrize("index", range(len(CLIPS)), ids=[f"{c}{a}" for c, a in CLIPS])
def test_gradient_clipping_matches_pytorch(index, reference):
    clip, args = CLIPS[index]
    norm, (w_grad, b_grad) = clipped(torch, clip, args, W0, B0, X)
    if reference[f"clip{index}_norm"] is None:
        assert norm is None
    else:
        assert norm == pytest.approx(reference[f"clip{index}_norm"], rel=1e-5)
    np.testing.assert_allclose(w_grad, reference[f"clip{index}_w"], rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(b_grad, reference[f"clip{index}_b"], rtol=1e-5, atol=1e-7)


def _steps(opt, w, count):
    for _ in range(count):
        opt.zero_grad()
        ((torch.tensor(X) @ w.transpose(0, 1)) ** 2).mean().backward()
        opt.step()


@pytest.mark.parametrize("config", ["SGD(params, lr=0.1, momentum=0.9)",
                                    "Adam(params, lr=0.1, amsgrad=True)"])
def test_state_dict_round_trip_continues_the_same_run(config):
    w = torch.tensor(W0, requires_grad=True)
    opt = eval("torch.optim." + config, {"torch": torch, "params": [w]})
    _steps(opt, w, 2)
    # PyTorch's state_dict holds the live state tensors: a checkpoint in memory is a deepcopy.
    saved_state, saved_w = copy.deepcopy(opt.state_dict()), w.detach().clone()
    _steps(opt, w, 2)
    resumed = torch.tensor(saved_w.numpy(), requires_grad=True)
    other = eval("torch.optim." + config.replace("0.1", "0.7"),
                 {"torch": torch, "params": [resumed]})
    other.load_state_dict(saved_state)
    assert other.param_groups[0]["lr"] == 0.1
    _steps(other, resumed, 2)
    np.testing.assert_array_equal(resumed.detach().numpy(), w.detach().numpy())


def test_zero_grad_and_argument_errors():
    w = torch.tensor(W0, requires_grad=True)
    opt = torch.optim.SGD([w], lr=0.1)
    (w * w).sum().backward()
    opt.zero_grad()  # 1.13's default: zeros, not None
    np.testing.assert_array_equal(w.grad.numpy(), np.zeros_like(W0))
    opt.zero_grad(set_to_none=True)
    assert w.grad is None
    opt.step()  # no gradient: the parameter stays
    np.testing.assert_array_equal(w.detach().numpy(), W0)
    with pytest.raises(ValueError, match="empty parameter list"):
        torch.optim.Adam([])
    with pytest.raises(ValueError, match="Invalid learning rate"):
        torch.optim.SGD([w], lr=-1.0)
    with pytest.raises(ValueError, match="required optimization parameter lr"):
        torch.optim.SGD([w])
    with pytest.raises(ValueError, match="Invalid beta parameter at index 1"):
        torch.optim.Adam([w], betas=(0.9, 1.0))
    with pytest.raises(ValueError, match="more than one parameter group"):
        torch.optim.SGD([{"params": [w]}, {"params": [w]}], lr=0.1)
    with pytest.raises(TypeError, match="iterable of Tensors"):
        torch.optim.SGD(w, lr=0.1)
