"""The fused recurrent op (``_C.fused_rnn``, ops/rnn.h: oneDNN's RNN primitives on the CPU,
cuDNN's on a GPU) behind Keras's LSTM, GRU and SimpleRNN: which configurations take it (Keras's
cuDNN-eligible ones) and which keep the unrolled trace; forward values and gradients against
real Keras with the same weights for return_sequences, return_state, go_backwards,
initial_state and Bidirectional on the fused path; a few fit steps; the fused and unrolled paths
agreeing; a fit through the fake CUDA library. (test_keras_recurrent.py compares the layers more
broadly, many of its cases now fused too; test_fused_rnn_op.py holds the op's own and GPU
tests, free of TensorFlow, which the GPU machine lacks.)"""
import numpy as np
import pytest

import gpuaccel as ga
from gpuaccel import _C
from gpuaccel import keras as gk
from gpuaccel.keras import _recurrent_cells
from gpuaccel.keras import layers as L

keras = pytest.importorskip("keras")
tf = pytest.importorskip("tensorflow")
K = keras.layers

from keras_layer_comparison import case_ids, normal, npy, same_random_weights  # noqa: E402
from test_keras_recurrent import as_list, gradients_keras, gradients_ours  # noqa: E402


@pytest.fixture
def fused_calls(monkeypatch):
    """The cells ``_C.fused_rnn`` was traced with (a layer's call traces once, so each fused
    layer call adds one entry)."""
    calls = []
    real = _C.fused_rnn

    def counting(cell, *args):
        calls.append(cell)
        return real(cell, *args)
    monkeypatch.setattr(_recurrent_cells._C, "fused_rnn", counting)
    return calls


SHAPE = (3, 6, 4)
CASES = [
    ("LSTM-last", lambda m: m.LSTM(5), ["lstm"]),
    ("LSTM-sequences-state", lambda m: m.LSTM(3, return_sequences=True, return_state=True),
     ["lstm"]),
    ("LSTM-backwards-state", lambda m: m.LSTM(4, go_backwards=True, return_state=True),
     ["lstm"]),
    ("GRU-sequences-state", lambda m: m.GRU(4, return_sequences=True, return_state=True),
     ["gru"]),
    ("GRU-backwards-sequences", lambda m: m.GRU(3, go_backwards=True, return_sequences=True),
     ["gru"]),
    ("SimpleRNN-state", lambda m: m.SimpleRNN(4, return_state=True), ["simple_rnn"]),
    ("Bidirectional-LSTM", lambda m: m.Bidirectional(m.LSTM(3, return_sequences=True)),
     ["lstm", "lstm"]),
    ("Bidirectional-GRU-state", lambda m: m.Bidirectional(m.GRU(2, return_state=True)),
     ["gru", "gru"]),
]


@pytest.mark.parametrize("name,factory,cells", CASES, ids=case_ids(CASES))
def test_fused_layers_match_keras_forward_and_gradients(name, factory, cells, fused_calls):
    ours, theirs = factory(L), factory(K)
    ours.build((None,) + SHAPE[1:])
    theirs.build((None,) + SHAPE[1:])
    same_random_weights(ours, theirs)
    x = normal(SHAPE, 0)
    expected = [np.asarray(y) for y in as_list(theirs(x))]
    upstreams = [normal(y.shape, 50 + i) for i, y in enumerate(expected)]
    outputs, grads = gradients_ours(ours, x, upstreams)
    outputs_ref, grads_ref = gradients_keras(theirs, x, upstreams)
    assert fused_calls == cells
    for y, y_ref in zip(outputs, outputs_ref):
        np.testing.assert_allclose(y, y_ref, rtol=1e-5, atol=1e-5)
    assert len(grads) == len(grads_ref)
    for g, g_ref in zip(grads, grads_ref):
        np.testing.assert_allclose(g, g_ref, rtol=1e-4, atol=1e-5)
    assert ours._cpp.python_calls == 1 and ours._cpp.eager_reason == ""


@pytest.mark.parametrize("make", [lambda m, **k: m.LSTM(3, return_sequences=True, **k),
                                  lambda m, **k: m.GRU(3, return_sequences=True, **k)],
                         ids=["LSTM", "GRU"])
def test_initial_states_reach_the_fused_op_and_get_gradients(make, fused_calls):
    ours, theirs = make(L), make(K)
    ours.build((None, 4, 2))
    theirs.build((None, 4, 2))
    same_random_weights(ours, theirs)
    count = len(ours.cell.state_size) if isinstance(ours.cell.state_size, list) else 1
    x = normal((2, 4, 2), 1)
    states = [normal((2, 3), 2 + i) for i in range(count)]
    upstream = normal((2, 4, 3), 4)
    tensors = [ga.tensor(s) for s in states]
    with ga.GradientTape() as tape:
        for t in tensors:
            tape.watch(t)
        y = ours(ga.tensor(x), initial_state=tensors)
        loss = ga.reduce_sum(y * ga.tensor(upstream))
    state_grads = tape.gradient(loss, tensors)
    constants = [tf.constant(s) for s in states]
    with tf.GradientTape() as keras_tape:
        for t in constants:
            keras_tape.watch(t)
        y_ref = theirs(x, initial_state=constants)
        loss_ref = tf.reduce_sum(y_ref * upstream)
    state_grads_ref = keras_tape.gradient(loss_ref, constants)
    assert fused_calls and set(fused_calls) == {type(ours).__name__.lower()}
    np.testing.assert_allclose(npy(y), y_ref.numpy(), rtol=1e-5, atol=1e-5)
    for g, g_ref in zip(state_grads, state_grads_ref):
        np.testing.assert_allclose(npy(g), g_ref.numpy(), rtol=1e-4, atol=1e-5)


def sequence_model(lib, layers, recurrent):
    return lib.Sequential([lib.Input((6, 4)), recurrent(layers), layers.Dense(2)])


@pytest.mark.parametrize("recurrent", [lambda m: m.LSTM(5), lambda m: m.GRU(5),
                                       lambda m: m.Bidirectional(m.LSTM(3))],
                         ids=["LSTM", "GRU", "Bidirectional-LSTM"])
def test_fit_steps_on_the_fused_op_match_keras(recurrent, fused_calls):
    x, y = normal((16, 6, 4), 1), normal((16, 2), 2)
    ours, theirs = sequence_model(gk, L, recurrent), sequence_model(keras, K, recurrent)
    weights = [normal(w.shape, 30 + i) * 0.4 for i, w in enumerate(theirs.get_weights())]
    ours.set_weights(weights)
    theirs.set_weights(weights)
    for model, lib in ((ours, gk), (theirs, keras)):
        model.compile(optimizer=lib.optimizers.Adam(0.01), loss="mse")
    losses = ours.fit(x, y, epochs=3, batch_size=4, shuffle=False, verbose=0).history["loss"]
    losses_ref = theirs.fit(x, y, epochs=3, batch_size=4, shuffle=False,
                            verbose=0).history["loss"]
    assert fused_calls  # the training step's trace holds the fused op
    np.testing.assert_allclose(losses, losses_ref, rtol=2e-4)
    for w, w_ref in zip(ours.get_weights(), theirs.get_weights()):
        np.testing.assert_allclose(w, w_ref, rtol=2e-3, atol=2e-4)
    np.testing.assert_allclose(ours.predict(x, verbose=0), np.asarray(theirs(x)),
                               rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("make", [lambda m, **k: m.LSTM(4, return_state=True, **k),
                                  lambda m, **k: m.GRU(4, return_state=True, **k),
                                  lambda m, **k: m.SimpleRNN(4, return_state=True, **k)],
                         ids=["LSTM", "GRU", "SimpleRNN"])
def test_unroll_true_keeps_the_trace_and_gives_the_fused_values(make, fused_calls):
    fused, unrolled = make(L), make(L, unroll=True)
    fused.build((None, 5, 3))
    unrolled.build((None, 5, 3))
    unrolled.set_weights(fused.get_weights())
    x = normal((2, 5, 3), 3)
    upstreams = [normal((2, 4), 60 + i) for i in range(3)]
    got, grads = gradients_ours(fused, x, upstreams)
    assert len(fused_calls) == 1
    want, grads_want = gradients_ours(unrolled, x, upstreams)
    assert len(fused_calls) == 1
    for a, b in zip(got + grads, want + grads_want):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("make,call", [
    (lambda: L.LSTM(3, recurrent_activation="hard_sigmoid"), {}),
    (lambda: L.GRU(3, reset_after=False), {}),
    (lambda: L.LSTM(3, use_bias=False), {}),
    (lambda: L.SimpleRNN(3, activation="relu"), {}),
    (lambda: L.LSTM(3, recurrent_dropout=0.5), {"training": True}),
    (lambda: L.GRU(3), {"mask": np.array([[1, 1, 0], [1, 0, 0]], bool)}),
    (lambda: L.RNN([L.LSTMCell(3), L.GRUCell(2)]), {}),
], ids=["hard-sigmoid", "reset-before", "no-bias", "relu", "recurrent-dropout", "mask",
        "stacked-cells"])
def test_configurations_keras_would_not_run_on_cudnn_stay_unrolled(make, call, fused_calls):
    layer = make()
    kwargs = {k: ga.tensor(v) if k == "mask" else v for k, v in call.items()}
    y = layer(ga.tensor(normal((2, 3, 2), 5)), **kwargs)
    assert fused_calls == []
    assert np.all(np.isfinite(npy(y)))


def test_recurrent_dropout_outside_training_and_input_dropout_run_fused(fused_calls):
    layer = L.LSTM(3, dropout=0.5, recurrent_dropout=0.5)
    layer(ga.tensor(normal((2, 3, 2), 5)))  # inference: no dropout at all
    assert fused_calls == ["lstm"]
    layer = L.GRU(3, dropout=0.5)
    layer(ga.tensor(normal((2, 3, 2), 5)), training=True)  # the mask scales the inputs first
    assert fused_calls == ["lstm", "gru"]


FAKE_GPU_FIT = r"""
import json
import numpy as np
import gpuaccel as ga
from gpuaccel import keras
from gpuaccel.keras import _recurrent_cells

calls = []
real = ga._C.fused_rnn
def counting(cell, *args):
    calls.append(cell)
    return real(cell, *args)
_recurrent_cells._C.fused_rnn = counting

rng = np.random.default_rng(0)
x = rng.normal(size=(16, 6, 3)).astype('float32')
y = rng.normal(size=(16, 2)).astype('float32')

def fit(device):
    ga.random.set_seed(1)
    with ga.device(device):
        model = keras.Sequential([keras.Input((6, 3)),
                                  keras.layers.LSTM(4, return_sequences=True),
                                  keras.layers.GRU(3, go_backwards=True), keras.layers.Dense(2)])
        model.compile(optimizer='adam', loss='mse')
        history = model.fit(x, y, epochs=3, batch_size=4, verbose=0)
    return history.history['loss'], [w.tolist() for w in model.get_weights()]

gpu_loss, gpu_weights = fit('/GPU:0')
cpu_loss, cpu_weights = fit('/CPU:0')
print(json.dumps({'calls': calls, 'gpu_loss': gpu_loss, 'cpu_loss': cpu_loss,
                  'gpu_weights': gpu_weights, 'cpu_weights': cpu_weights}))
"""


def test_fused_layers_fit_through_the_cuda_library_boundary_as_on_the_cpu():
    """The fake CUDA library (test_library_backend.py) runs rnn_forward/rnn_backward of a GPU
    model on its copy of the CPU backend: the op crosses the boundary inside fit's C++ step."""
    from test_library_backend import run_with_fake
    r = run_with_fake(FAKE_GPU_FIT)
    assert r["calls"] == ["lstm", "gru", "lstm", "gru"]  # one trace per model
    np.testing.assert_allclose(r["gpu_loss"], r["cpu_loss"], rtol=1e-5)
    for got, want in zip(r["gpu_weights"], r["cpu_weights"]):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
