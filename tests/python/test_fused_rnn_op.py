"""The fused recurrent op itself (``_C.fused_rnn``, ops/rnn.h), without TensorFlow (the GPU
machine's image has none, so the gpu test lives here): typed errors for bad arguments, and
cuDNN's op on a GPU against the CPU's (oneDNN) op, outputs and every gradient. The Keras layers
over the op are compared with Keras in test_keras_fused_rnn.py."""
import numpy as np
import pytest

import gpuaccel as ga
from gpuaccel import _C


def normal(shape, seed):
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


def npy(t):
    return t.detach().numpy() if hasattr(t, "detach") else np.asarray(t)


def test_bad_fused_arguments_raise_typed_errors():
    x = ga.tensor(normal((2, 3, 2), 1))
    h = ga.tensor(np.zeros((2, 4), np.float32))
    kernel = ga.tensor(normal((2, 12), 2))
    recurrent = ga.tensor(normal((4, 12), 3))
    with pytest.raises(ValueError, match=r"bias of the fused gru must be float32 of shape \(2, 12\)"):
        _C.fused_rnn("gru", x, h, None, kernel, recurrent, ga.tensor(np.zeros(12, np.float32)))
    with pytest.raises(ValueError, match="cell must be 'lstm', 'gru' or 'simple_rnn'"):
        _C.fused_rnn("peephole", x, h, None, kernel, recurrent, ga.tensor(np.zeros(12, np.float32)))


@pytest.mark.gpu
@pytest.mark.parametrize("cell", ["lstm", "gru", "simple_rnn"])
def test_cudnn_fused_rnn_matches_the_cpu_op(cell):
    gates = {"lstm": 4, "gru": 3, "simple_rnn": 1}[cell]
    units, features = 8, 5
    arrays = [normal((4, 7, features), 1), normal((4, units), 2) * 0.5,
              normal((4, units), 3) * 0.5 if cell == "lstm" else None,
              normal((features, gates * units), 4) * 0.4, normal((units, gates * units), 5) * 0.4,
              normal((2, gates * units) if cell == "gru" else (gates * units,), 6) * 0.3]
    results = {}
    for device in ("/CPU:0", "/GPU:0"):
        with ga.device(device):
            tensors = [None if a is None else ga.tensor(a) for a in arrays]
            sources = [t for t in tensors if t is not None]
            with ga.GradientTape() as tape:
                for t in sources:
                    tape.watch(t)
                outputs = _C.fused_rnn(cell, *tensors)
                loss = sum(ga.reduce_sum(o * ga.tensor(normal(tuple(o.shape), 10 + i)))
                           for i, o in enumerate(outputs))
            grads = tape.gradient(loss, sources)
            results[device] = [npy(o) for o in outputs] + [npy(g) for g in grads]
    for a, b in zip(results["/CPU:0"], results["/GPU:0"]):
        np.testing.assert_allclose(b, a, rtol=1e-3, atol=1e-4)
