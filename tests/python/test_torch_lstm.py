"""torch.nn.LSTM of the PyTorch face against PyTorch 1.13 (torch_reference): PyTorch's module,
its initial weights copied over by state_dict, gives the same parameter names and shapes,
outputs, final states and gradients (input, initial states, weights) for a two-layer
bidirectional batch-first LSTM and an unbatched one-layer LSTM; the default initialisation and
the shape errors are checked by rule."""
import math

import numpy as np
import pytest

import torch_reference

import gpuaccel.torch as torch
from gpuaccel.torch import nn

_RNG = np.random.default_rng(5)
X = _RNG.standard_normal((2, 5, 3)).astype(np.float32)   # (N, L, H_in), batch_first
H0 = _RNG.standard_normal((4, 2, 4)).astype(np.float32)  # (layers * directions, N, H)
C0 = _RNG.standard_normal((4, 2, 4)).astype(np.float32)
SEQ = _RNG.standard_normal((6, 3)).astype(np.float32)    # unbatched (L, H_in)

_REFERENCE = """
torch.manual_seed(0)
deep = torch.nn.LSTM(3, 4, num_layers=2, batch_first=True, bidirectional=True)
flat = torch.nn.LSTM(3, 2)
for prefix, module in (('deep', deep), ('flat', flat)):
    for name, value in module.state_dict().items():
        out[prefix + ' ' + name] = value.numpy()
x, h0, c0 = (torch.tensor(a, requires_grad=True) for a in (X, H0, C0))
y, (h, c) = deep(x, (h0, c0))
(y.sum() + 2 * h.sum() + 3 * c.sum()).backward()
out.update({'y': y.detach().numpy(), 'h': h.detach().numpy(), 'c': c.detach().numpy(),
            'dx': x.grad.numpy(), 'dh0': h0.grad.numpy(), 'dc0': c0.grad.numpy(),
            'dw': deep.weight_hh_l1_reverse.grad.numpy(), 'db': deep.bias_ih_l0.grad.numpy()})
seq = torch.tensor(SEQ)
y1, (h1, c1) = flat(seq)
out.update({'y1': y1.detach().numpy(), 'h1': h1.detach().numpy(), 'c1': c1.detach().numpy()})
"""


@pytest.fixture(scope="module")
def reference():
    result = torch_reference.run(_REFERENCE, X=X, H0=H0, C0=C0, SEQ=SEQ)
    assert "error" not in result, result
    return result


def _copied(module, prefix, reference):
    names = [k[len(prefix) + 1:] for k in reference if k.startswith(prefix + " ")]
    assert sorted(names) == sorted(module.state_dict())
    module.load_state_dict({n: torch.tensor(reference[f"{prefix} {n}"]) for n in names})
    return module


def test_lstm_outputs_states_and_gradients_match_pytorch(reference):
    deep = _copied(nn.LSTM(3, 4, num_layers=2, batch_first=True, bidirectional=True), "deep",
                   reference)
    x, h0, c0 = (torch.tensor(a, requires_grad=True) for a in (X, H0, C0))
    y, (h, c) = deep(x, (h0, c0))
    (y.sum() + 2 * h.sum() + 3 * c.sum()).backward()
    ours = {"y": y, "h": h, "c": c, "dx": x.grad, "dh0": h0.grad, "dc0": c0.grad,
            "dw": deep.weight_hh_l1_reverse.grad, "db": deep.bias_ih_l0.grad}
    for key, value in ours.items():
        np.testing.assert_allclose(value.detach().numpy(), reference[key], rtol=1e-4,
                                   atol=1e-5, err_msg=key)
    flat = _copied(nn.LSTM(3, 2), "flat", reference)
    y1, (h1, c1) = flat(torch.tensor(SEQ))
    for key, value in {"y1": y1, "h1": h1, "c1": c1}.items():
        np.testing.assert_allclose(value.detach().numpy(), reference[key], rtol=1e-4,
                                   atol=1e-5, err_msg=key)


def test_lstm_initialisation_and_errors_follow_pytorchs_rules():
    lstm = nn.LSTM(5, 16, num_layers=2)
    bound = 1 / math.sqrt(16)
    for name, value in lstm.named_parameters():
        values = value.detach().numpy()
        assert values.min() >= -bound and values.max() <= bound, name
        assert values.std() > bound / 4, name  # drawn, not constant
    assert "LSTM(5, 16, num_layers=2)" == repr(lstm)
    with pytest.raises(RuntimeError, match=r"expected input of shape \(L, N, 5\)"):
        lstm(torch.zeros(4, 2, 3))
    with pytest.raises(RuntimeError, match="hidden and cell states of shape"):
        lstm(torch.zeros(4, 2, 5), (torch.zeros(1, 2, 16), torch.zeros(1, 2, 16)))
    with pytest.raises(ValueError, match="proj_size"):
        nn.LSTM(5, 16, proj_size=4)
