"""torch.cuda.amp (autocast and GradScaler) on ``import gpuaccel.torch as torch``: without a GPU
both disable themselves with PyTorch's warnings (compared with PyTorch 1.13's CPU build); on
the fake CUDA library the autocast dtypes, the loss scaling and the skipped inf step; on a real
GPU (marked ``gpu``) the same and autocast's accuracy against float32."""
import json
import warnings

import numpy as np
import pytest

import gpuaccel.torch as torch
from test_library_backend import run_with_fake
import torch_reference

amp = torch.cuda.amp

REFERENCE = r"""
import warnings
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter('always')
    block = torch.cuda.amp.autocast()
    scaler = torch.cuda.amp.GradScaler()
out['warnings'] = [str(w.message) for w in caught]
with block:
    out['enabled inside'] = torch.is_autocast_enabled()
loss = torch.ones(1)
out['scale is identity'] = scaler.scale(loss) is loss
out['scale'] = scaler.get_scale()
out['state'] = scaler.state_dict()
out['is_enabled'] = scaler.is_enabled()
class Stepper:
    def step(self):
        return 'stepped'
out['step'] = scaler.step(Stepper())
out['update'] = scaler.update()
"""


def test_without_a_gpu_autocast_and_scaler_disable_themselves_as_pytorch():
    if torch.cuda.is_available():
        pytest.skip("this machine has a usable GPU: the no-GPU answers do not apply")
    reference = torch_reference.run(REFERENCE)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        block = amp.autocast()
        scaler = amp.GradScaler()
    assert [str(w.message) for w in caught] == reference["warnings"]
    assert all(w.filename == __file__ for w in caught)  # they name the caller's line
    with block:
        assert torch.is_autocast_enabled() == reference["enabled inside"]
    loss = torch.ones(1)
    assert (scaler.scale(loss) is loss) == reference["scale is identity"]
    assert scaler.get_scale() == reference["scale"]
    assert scaler.state_dict() == reference["state"]
    assert scaler.is_enabled() == reference["is_enabled"]

    class Stepper:
        def step(self):
            return "stepped"
    assert scaler.step(Stepper()) == reference["step"]
    assert scaler.update() == reference["update"]
    assert not torch.is_autocast_enabled()


def test_autocast_checks_its_arguments():
    with pytest.raises(RuntimeError, match="unsupported autocast device_type 'tpu'"):
        torch.autocast("tpu")
    with pytest.raises(TypeError, match="enabled must be a bool"):
        amp.autocast(enabled="yes")


# A small CNN's step under autocast with a GradScaler, on whichever GPU the process sees.
AMP_STEP = r"""
import json
import numpy as np
import gpuaccel.torch as torch
out = {}
rng = np.random.default_rng(0)
model = torch.nn.Sequential(torch.nn.Conv2d(2, 4, 3), torch.nn.Flatten(),
                            torch.nn.Linear(4 * 4 * 4, 3)).to("cuda")
x = torch.tensor(rng.normal(size=(5, 2, 6, 6)).astype(np.float32), device="cuda")
y = torch.tensor(rng.integers(0, 3, size=5), device="cuda")
opt = torch.optim.SGD(model.parameters(), lr=0.1)
scaler = torch.cuda.amp.GradScaler(init_scale=1024.0, growth_interval=2)
with torch.cuda.amp.autocast():
    out["enabled"] = torch.is_autocast_enabled()
    conv_out = model[0](x)
    logits = model(x)
    loss = torch.nn.functional.cross_entropy(logits, y)
    flat = x.reshape(5, -1)
    products = [torch.matmul(flat, flat.T), flat @ flat.T, torch.mm(flat, flat.T)]
    on_cpu = torch.ones(2, 2, device="cpu") @ torch.ones(2, 2, device="cpu")
    with torch.cuda.amp.autocast(enabled=False):
        inner = model(x)
out["dtypes"] = [t.dtype.name for t in [conv_out, logits, loss, *products, on_cpu, inner]]
out["enabled_after"] = torch.is_autocast_enabled()
scaled = scaler.scale(loss)
out["scaled_ratio"] = float(scaled.item() / loss.item())
scaled.backward()
out["grad_dtype"] = model[2].weight.grad.dtype.name
before = model[2].weight.detach().numpy().copy()
scaler.step(opt)
scaler.update()
out["stepped"] = bool(np.abs(model[2].weight.detach().numpy() - before).max() > 0)
out["scale_after_clean"] = scaler.get_scale()
opt.zero_grad()
model[2].weight.grad = torch.full(tuple(model[2].weight.shape), float("inf"), device="cuda")
before = model[2].weight.detach().numpy().copy()
out["skipped_returns"] = scaler.step(opt)
scaler.update()
out["unchanged_after_inf"] = bool((model[2].weight.detach().numpy() == before).all())
out["scale_after_inf"] = scaler.get_scale()
for _ in range(2):
    opt.zero_grad()
    with torch.cuda.amp.autocast():
        scaler.scale(torch.nn.functional.cross_entropy(model(x), y)).backward()
    scaler.unscale_(opt)
    try:
        scaler.unscale_(opt)
        out["double_unscale"] = None
    except RuntimeError as e:
        out["double_unscale"] = str(e)
    scaler.step(opt)
    scaler.update()
out["scale_after_two_clean"] = scaler.get_scale()
out["state"] = scaler.state_dict()
print(json.dumps(out))
"""


def _check_amp_step(r):
    assert r["enabled"] and not r["enabled_after"]
    # conv, linear and the three matrix products in float16; the loss in float32 (PyTorch's
    # float32 list); a CPU product and a disabled inner block untouched
    assert r["dtypes"] == ["float16", "float16", "float32", "float16", "float16", "float16",
                           "float32", "float32"]
    assert r["scaled_ratio"] == 1024.0
    assert r["grad_dtype"] == "float32"  # the weights' gradients stay float32
    assert r["stepped"] and r["scale_after_clean"] == 1024.0  # one clean step: no growth yet
    assert r["skipped_returns"] is None and r["unchanged_after_inf"]
    assert r["scale_after_inf"] == 512.0  # backoff 0.5
    assert r["double_unscale"] == ("unscale_() has already been called on this optimizer "
                                   "since the last update().")
    assert r["scale_after_two_clean"] == 1024.0  # growth_interval=2 clean steps: x2
    assert r["state"] == {"scale": 1024.0, "growth_factor": 2.0, "backoff_factor": 0.5,
                          "growth_interval": 2, "_growth_tracker": 0}


def test_fake_gpu_autocast_dtypes_and_loss_scaling():
    _check_amp_step(run_with_fake(AMP_STEP))


@pytest.mark.gpu
def test_real_gpu_autocast_step_and_accuracy(capsys):
    scope = {}
    exec(AMP_STEP, scope)
    _check_amp_step(json.loads(capsys.readouterr().out.strip().splitlines()[-1]))
    rng = np.random.default_rng(1)
    a, w = rng.normal(size=(64, 128)).astype(np.float32), rng.normal(size=(32, 128)).astype(
        np.float32)
    with amp.autocast():
        half = torch.nn.functional.linear(torch.tensor(a, device="cuda"),
                                          torch.tensor(w, device="cuda"))
    assert half.dtype == torch.float16
    # float16 operands, float32 accumulation: within float16's rounding of the inputs
    np.testing.assert_allclose(half.float().numpy(), a.astype(np.float64) @ w.T, rtol=2e-2,
                               atol=5e-2)
