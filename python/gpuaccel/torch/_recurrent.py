"""``torch.nn.LSTM``: PyTorch's parameters (``weight_ih_l{k}[_reverse]`` (4H, in),
``weight_hh_l{k}[_reverse]`` (4H, H) and the two biases, gates in the order input, forget,
cell, output; all drawn from U(-1/sqrt(H), 1/sqrt(H))) and shapes (``(L, N, H_in)``,
``batch_first``, an unbatched ``(L, H_in)``), so a PyTorch state_dict loads and the NLP
tutorials' taggers run. Each step is composed from ``F.linear``, ``sigmoid`` and ``tanh`` in a
Python loop over time (autograd covers it; there is no fused kernel, so long sequences are slow).
"""
import math

from .. import _torch_functional as F
from .._array_ops import cat, stack
from .._creation import empty, zeros
from . import init
from ._module import Module, Parameter


class LSTM(Module):
    """A multi-layer (optionally bidirectional) LSTM; ``forward(input, (h_0, c_0))`` returns
    ``output, (h_n, c_n)`` as PyTorch's."""

    def __init__(self, input_size, hidden_size, num_layers=1, bias=True, batch_first=False,
                 dropout=0.0, bidirectional=False, proj_size=0, device=None, dtype=None):
        super().__init__()
        if proj_size:
            raise ValueError("LSTM(proj_size) is not supported; use proj_size=0")
        if not 0 <= float(dropout) <= 1:
            raise ValueError(f"dropout should be a number in range [0, 1], got {dropout}")
        self.input_size, self.hidden_size = int(input_size), int(hidden_size)
        self.num_layers, self.bias, self.batch_first = int(num_layers), bool(bias), batch_first
        self.dropout, self.bidirectional, self.proj_size = float(dropout), bidirectional, 0
        self._directions = ["", "_reverse"] if bidirectional else [""]
        gates = 4 * self.hidden_size
        for layer in range(self.num_layers):
            width = self.input_size if layer == 0 else self.hidden_size * len(self._directions)
            for suffix in self._directions:
                names = {"weight_ih": (gates, width), "weight_hh": (gates, self.hidden_size)}
                if bias:
                    names.update({"bias_ih": (gates,), "bias_hh": (gates,)})
                for name, shape in names.items():
                    setattr(self, f"{name}_l{layer}{suffix}",
                            Parameter(empty(*shape, dtype=dtype or "float32", device=device)))
        self.reset_parameters()

    def reset_parameters(self):
        bound = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            init.uniform_(weight, -bound, bound)

    def _weights(self, layer, suffix):
        names = ("weight_ih", "weight_hh", "bias_ih", "bias_hh")
        return [getattr(self, f"{n}_l{layer}{suffix}", None) for n in names]

    def _run_direction(self, steps, h, c, weights, reverse):
        w_ih, w_hh, b_ih, b_hh = weights
        size = self.hidden_size
        outputs = []
        for x in (reversed(steps) if reverse else steps):
            gates = F.linear(x, w_ih, b_ih) + F.linear(h, w_hh, b_hh)
            i, f = gates[:, :size].sigmoid(), gates[:, size:2 * size].sigmoid()
            g, o = gates[:, 2 * size:3 * size].tanh(), gates[:, 3 * size:].sigmoid()
            c = f * c + i * g
            h = o * c.tanh()
            outputs.append(h)
        return (outputs[::-1] if reverse else outputs), h, c

    def forward(self, input, hx=None):
        unbatched = input.ndim == 2
        if input.ndim not in (2, 3) or input.shape[-1] != self.input_size:
            raise RuntimeError(f"LSTM: expected input of shape (L, N, {self.input_size}) or "
                               f"(L, {self.input_size}), got {list(input.shape)}")
        x = input.unsqueeze(1) if unbatched else (input.transpose(0, 1) if self.batch_first
                                                  else input)
        count = self.num_layers * len(self._directions)
        if hx is None:
            h0 = c0 = zeros(count, x.shape[1], self.hidden_size, dtype=x.dtype, device=x.device)
        else:
            h0, c0 = (t.unsqueeze(1) if unbatched else t for t in hx)
            expected = (count, x.shape[1], self.hidden_size)
            if tuple(h0.shape) != expected or tuple(c0.shape) != expected:
                raise RuntimeError(f"LSTM: expected hidden and cell states of shape "
                                   f"{list(expected)}, got {list(h0.shape)} and "
                                   f"{list(c0.shape)}")
        steps = [x[t] for t in range(x.shape[0])]
        last_h, last_c = [], []
        for layer in range(self.num_layers):
            per_direction = []
            for k, suffix in enumerate(self._directions):
                index = layer * len(self._directions) + k
                outs, h, c = self._run_direction(steps, h0[index], c0[index],
                                                 self._weights(layer, suffix), reverse=k == 1)
                per_direction.append(outs)
                last_h.append(h)
                last_c.append(c)
            steps = [cat(list(pair), 1) for pair in zip(*per_direction)] \
                if len(per_direction) > 1 else per_direction[0]
            if self.dropout and self.training and layer < self.num_layers - 1:
                steps = [F.dropout(s, self.dropout, True) for s in steps]
        output = stack(steps, 0)
        h_n, c_n = stack(last_h, 0), stack(last_c, 0)
        if unbatched:
            return output.squeeze(1), (h_n.squeeze(1), c_n.squeeze(1))
        return (output.transpose(0, 1) if self.batch_first else output), (h_n, c_n)

    def extra_repr(self):
        text = f"{self.input_size}, {self.hidden_size}"
        if self.num_layers != 1:
            text += f", num_layers={self.num_layers}"
        if self.batch_first:
            text += ", batch_first=True"
        if self.dropout:
            text += f", dropout={self.dropout}"
        if self.bidirectional:
            text += ", bidirectional=True"
        return text + ("" if self.bias else ", bias=False")
