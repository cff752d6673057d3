"""torch.nn's modules of the PyTorch face against PyTorch 1.13 (torch_reference: one subprocess
for the module): the same small CNN, with PyTorch's initial weights copied over, gives the same
state_dict keys, outputs in train and eval mode, loss, parameter gradients and BatchNorm running
statistics; plus the default initialisation by rule and the Module bookkeeping."""
import copy
import math

import numpy as np
import pytest

import torch_reference

import gpuaccel.torch as torch
from gpuaccel.torch import nn

_RNG = np.random.default_rng(7)
X = _RNG.standard_normal((4, 2, 4, 4)).astype(np.float32)
LABELS = np.array([0, 3, 1, 2], dtype=np.int64)
TARGET = _RNG.standard_normal((4, 4)).astype(np.float32)

# Built with the same text on both sides ("nn" is torch.nn there, gpuaccel.torch.nn here).
_MODEL = """nn.Sequential(nn.Conv2d(2, 3, 3, padding=1), nn.BatchNorm2d(3), nn.ReLU(),
    nn.MaxPool2d(2), nn.Flatten(), nn.Dropout(0.5), nn.Linear(12, 4), nn.Tanh())"""

_SECOND_MODEL = """nn.Sequential(nn.Conv2d(2, 4, 3, stride=2, padding=1, bias=False),
    nn.BatchNorm2d(4, momentum=None), nn.LeakyReLU(0.2), nn.Flatten(), nn.Linear(16, 3),
    nn.LogSoftmax(dim=1))"""

TOKENS = _RNG.integers(0, 10, size=(4, 5)).astype(np.int64)
# (model text, its input): one training pass, the loss sum(y * weights) with fixed weights.
MORE_MODELS = [
    ("nn.Sequential(nn.AvgPool2d(2, stride=1), nn.AdaptiveAvgPool2d((2, 2)), nn.Flatten(), "
     "nn.BatchNorm1d(8), nn.Linear(8, 3), nn.LayerNorm(3))", "x"),
    ("nn.Sequential(nn.Embedding(10, 3), nn.LayerNorm([5, 3]), nn.GELU(), nn.SiLU())", "tokens"),
]

_REFERENCE = f"""
import torch.nn as nn
torch.manual_seed(0)
model = {_MODEL}
out["keys"] = list(model.state_dict().keys())
for k, v in model.state_dict().items():
    out["init_" + k] = v.numpy().copy()
model.eval()
out["eval_y"] = model(torch.from_numpy(x)).detach().numpy()
model.train()
model[5].p = 0.0  # dropout is random: compare the training path with p=0
y = model(torch.from_numpy(x))
out["train_y"] = y.detach().numpy()
loss = (nn.CrossEntropyLoss()(y, torch.from_numpy(labels))
        + nn.MSELoss()(y, torch.from_numpy(target)))
out["loss"] = loss.item()
loss.backward()
for k, p in model.named_parameters():
    out["grad_" + k] = p.grad.numpy()
for k, v in model.state_dict().items():
    out["after_" + k] = v.numpy()

# The second model: strided 'same'-free convolution without bias, the cumulative-average
# BatchNorm (momentum=None) over two training passes, LeakyReLU, LogSoftmax and NLLLoss.
second = {_SECOND_MODEL}
for k, v in second.state_dict().items():
    out["second_init_" + k] = v.numpy().copy()
for _ in range(2):
    y = second(torch.from_numpy(x))
loss = nn.NLLLoss()(y, torch.from_numpy(labels % 3))
loss.backward()
out["second_y"], out["second_loss"] = y.detach().numpy(), loss.item()
out["second_grad"] = second[0].weight.grad.numpy()
for k, v in second.state_dict().items():
    out["second_after_" + k] = v.numpy()

for m, (text, input_name) in enumerate({MORE_MODELS!r}):
    model = eval(text)
    out[f"more{{m}}_keys"] = list(model.state_dict())
    for k, v in model.state_dict().items():
        out[f"more{{m}}_init_" + k] = v.numpy().copy()
    y = model(torch.from_numpy(globals()[input_name]))
    (y * torch.cos(torch.arange(y.numel(), dtype=torch.float32)).reshape(y.shape)).sum().backward()
    out[f"more{{m}}_y"] = y.detach().numpy()
    for k, p in model.named_parameters():
        out[f"more{{m}}_grad_" + k] = p.grad.numpy()
    for k, v in model.state_dict().items():
        out[f"more{{m}}_after_" + k] = v.numpy()
"""


@pytest.fixture(scope="module")
def reference():
    result = torch_reference.run_once(_REFERENCE, x=X, labels=LABELS, target=TARGET, tokens=TOKENS)
    assert "error" not in result, result
    return result


def _model_with_reference_weights(reference):
    model = eval(_MODEL)
    model.load_state_dict({k: torch.tensor(reference["init_" + k]) for k in reference["keys"]})
    return model


def test_state_dict_keys_and_outputs_match_pytorch(reference):
    model = _model_with_reference_weights(reference)
    assert list(model.state_dict().keys()) == reference["keys"]
    model.eval()
    np.testing.assert_allclose(model(torch.tensor(X)).detach().numpy(), reference["eval_y"],
                               rtol=1e-5, atol=1e-5)


def test_training_loss_gradients_and_running_stats_match_pytorch(reference):
    model = _model_with_reference_weights(reference)
    model.train()
    model[5].p = 0.0
    y = model(torch.tensor(X))
    np.testing.assert_allclose(y.detach().numpy(), reference["train_y"], rtol=1e-5, atol=1e-5)
    loss = nn.CrossEntropyLoss()(y, torch.tensor(LABELS)) + nn.MSELoss()(y, torch.tensor(TARGET))
    assert loss.item() == pytest.approx(reference["loss"], rel=1e-5)
    loss.backward()
    names = [k for k, _ in model.named_parameters()]
    assert names == [k[len("grad_"):] for k in reference if k.startswith("grad_")]
    for name, param in model.named_parameters():
        np.testing.assert_allclose(param.grad.numpy(), reference["grad_" + name], rtol=1e-4,
                                   atol=1e-5, err_msg=name)
    for key, value in model.state_dict().items():
        np.testing.assert_allclose(value.numpy(), reference["after_" + key], rtol=1e-5,
                                   atol=1e-6, err_msg=key)


def test_strided_conv_cumulative_batchnorm_and_nll_loss_match_pytorch(reference):
    model = eval(_SECOND_MODEL)
    keys = [k[len("second_init_"):] for k in reference if k.startswith("second_init_")]
    assert list(model.state_dict()) == keys
    model.load_state_dict({k: torch.tensor(reference["second_init_" + k]) for k in keys})
    for _ in range(2):
        y = model(torch.tensor(X))
    loss = nn.NLLLoss()(y, torch.tensor(LABELS % 3))
    loss.backward()
    np.testing.assert_allclose(y.detach().numpy(), reference["second_y"], rtol=1e-5, atol=1e-5)
    assert loss.item() == pytest.approx(reference["second_loss"], rel=1e-5)
    np.testing.assert_allclose(model[0].weight.grad.numpy(), reference["second_grad"],
                               rtol=1e-4, atol=1e-5)
    for key, value in model.state_dict().items():
        np.testing.assert_allclose(value.numpy(), reference["second_after_" + key], rtol=1e-5,
                                   atol=1e-6, err_msg=key)


@pytest.mark.parametrize("m", range(len(MORE_MODELS)), ids=[t for t, _ in MORE_MODELS])
def test_pooling_batchnorm1d_layernorm_embedding_match_pytorch(m, reference):
    text, input_name = MORE_MODELS[m]
    model = eval(text)
    keys = reference[f"more{m}_keys"]
    assert list(model.state_dict()) == keys
    model.load_state_dict({k: torch.tensor(reference[f"more{m}_init_" + k]) for k in keys})
    y = model(torch.tensor({"x": X, "tokens": TOKENS}[input_name]))
    weights = np.cos(np.arange(int(np.prod(y.shape)), dtype=np.float32)).reshape(tuple(y.shape))
    (y * torch.tensor(weights)).sum().backward()
    np.testing.assert_allclose(y.detach().numpy(), reference[f"more{m}_y"], rtol=1e-5,
                               atol=1e-5)
    for key, param in model.named_parameters():
        np.testing.assert_allclose(param.grad.numpy(), reference[f"more{m}_grad_" + key],
                                   rtol=1e-4, atol=1e-5, err_msg=key)
    for key, value in model.state_dict().items():
        np.testing.assert_allclose(value.numpy(), reference[f"more{m}_after_" + key],
                                   rtol=1e-5, atol=1e-6, err_msg=key)


def test_default_initialisation_follows_pytorchs_rule():
    torch.manual_seed(3)
    layer = nn.Linear(400, 300)
    bound = 1 / math.sqrt(400)  # kaiming_uniform(a=sqrt(5)) and the bias rule
    for values in (layer.weight.detach().numpy(), layer.bias.detach().numpy()):
        assert np.abs(values).max() <= bound
        assert np.abs(values).max() > 0.95 * bound
        assert abs(values.std() - bound / math.sqrt(3)) < 0.1 * bound / math.sqrt(3)
    conv = nn.Conv2d(4, 8, 3)  # fan_in 4 * 3 * 3
    assert np.abs(conv.weight.detach().numpy()).max() <= 1 / 6
    embedding = nn.Embedding(1000, 20).weight.detach().numpy()  # N(0, 1)
    assert abs(embedding.mean()) < 0.02 and abs(embedding.std() - 1) < 0.02
    torch.manual_seed(3)
    again = nn.Linear(400, 300)
    np.testing.assert_array_equal(again.weight.detach().numpy(), layer.weight.detach().numpy())


class _Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(3, 2), nn.ReLU())
        self.scale = nn.Parameter(torch.ones(2))
        self.register_buffer("calls", torch.zeros(1))
        self.note = "not registered"

    def forward(self, x):
        return self.body(x) * self.scale


def test_module_registration_modes_and_errors():
    net = _Net()
    assert [k for k, _ in net.named_parameters()] == ["scale", "body.0.weight", "body.0.bias"]
    assert list(net.state_dict()) == ["scale", "calls", "body.0.weight", "body.0.bias"]
    assert [type(m).__name__ for m in net.modules()] == ["_Net", "Sequential", "Linear", "ReLU"]
    assert [n for n, _ in net.named_children()] == ["body"]
    assert net.eval() is net and not net.body[0].training
    assert net.train().body[1].training
    weight = net.body[0].weight
    assert net.to("cpu") is net and net.float().body[0].weight is weight  # nothing moved
    halved = copy.deepcopy(net).to(torch.float16)
    assert halved.body[0].weight.dtype == torch.float16
    assert isinstance(halved.body[0].weight, nn.Parameter)
    assert halved.calls.dtype == torch.float16 and weight.dtype == torch.float32
    out = net(torch.ones(4, 3))
    assert tuple(out.shape) == (4, 2)
    out.sum().backward()
    assert net.scale.grad is not None
    net.zero_grad(set_to_none=True)
    assert net.scale.grad is None
    with pytest.raises(RuntimeError, match='size mismatch for body.0.weight'):
        net.load_state_dict({**net.state_dict(), "body.0.weight": torch.zeros(3, 3)})
    with pytest.raises(RuntimeError, match='Unexpected key\\(s\\) in state_dict: "extra"'):
        net.load_state_dict({**net.state_dict(), "extra": torch.zeros(1)})
    result = net.load_state_dict({"scale": torch.full((2,), 2.0)}, strict=False)
    assert result.missing_keys == ["calls", "body.0.weight", "body.0.bias"]
    np.testing.assert_array_equal(net.scale.detach().numpy(), [2.0, 2.0])
    with pytest.raises(TypeError, match="cannot assign 'int' as parameter 'scale'"):
        net.scale = 3
    with pytest.raises(AttributeError, match="'_Net' object has no attribute 'missing'"):
        net.missing
    layers = nn.ModuleDict({"first": nn.Linear(2, 2)})
    layers["second"] = nn.ReLU()
    assert list(layers) == ["first", "second"] and "second" in layers
    assert list(layers.state_dict()) == ["first.weight", "first.bias"]
    with pytest.raises(ValueError, match="expected 4D input \\(got 2D input\\)"):
        nn.BatchNorm2d(3)(torch.zeros(2, 3))
    with pytest.raises(AttributeError, match="torch.nn.Transformer is not supported"):
        nn.Transformer


def test_deepcopy_of_state_dict_and_parameters_is_independent():
    net = _Net()
    saved = copy.deepcopy(net.state_dict())
    twin = copy.deepcopy(net.scale)
    assert isinstance(twin, nn.Parameter) and twin.requires_grad
    with torch.no_grad():
        net.scale.add_(1.0)
    np.testing.assert_array_equal(saved["scale"].numpy(), [1.0, 1.0])
    np.testing.assert_array_equal(twin.detach().numpy(), [1.0, 1.0])
    with pytest.raises(RuntimeError, match="graph leaves"):
        copy.deepcopy(net.scale * 2)
