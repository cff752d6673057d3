"""CUDA graph capture of the training step on a real GPU (marked ``gpu``: run by
.ci/device_check on the device machine and on Colab). Without a GPU the same decisions
and numerics are tested against the fake CUDA library (test_library_backend.py) and in C++
(tests/cpp/step_capture_test.cc)."""
import numpy as np
import pytest

import gpuaccel as ga
from gpuaccel import keras


def _course_cnn_weights(jit_compile, steps=20, batch=32, predict_between=0):
    """The model and first-epoch loss after `steps` steps; with `predict_between`, a predict of
    that many examples in one batch (larger convolutions: cuDNN's workspace grows) and a second
    epoch follow."""
    rng = np.random.default_rng(0)
    x = rng.random((steps * batch, 28, 28, 1), dtype=np.float32)
    y = rng.integers(0, 10, len(x)).astype(np.int64)
    ga.random.set_seed(3)
    L = keras.layers
    with ga.device("/GPU:0"):
        model = keras.Sequential([keras.Input((28, 28, 1)), L.Conv2D(8, 3, activation="relu"),
                                  L.MaxPooling2D(2), L.Conv2D(16, 3, activation="relu"),
                                  L.Flatten(), L.Dense(10)])
        model.compile(optimizer="adam", metrics=["accuracy"], jit_compile=jit_compile,
                      loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
        history = model.fit(x, y, batch_size=batch, epochs=1, verbose=0, shuffle=False)
        if predict_between:
            big = rng.random((predict_between, 28, 28, 1), dtype=np.float32)
            model.predict(big, batch_size=predict_between, verbose=0)
            model.fit(x, y, batch_size=batch, epochs=1, verbose=0, shuffle=False)
    return model, history.history["loss"][0]


@pytest.mark.gpu
def test_graphs_on_and_off_give_the_same_weights_after_20_steps():
    on, loss_on = _course_cnn_weights(jit_compile=True)
    off, loss_off = _course_cnn_weights(jit_compile=False)
    trainer = on._cpp_trainer
    assert trainer.graph_fallback_reason == ""
    assert trainer.graph_captures == 1
    assert trainer.graph_replays == 19  # 20 steps: the warm-up, then 19 launches
    assert off._cpp_trainer.graph_captures == 0
    # cuDNN may pick algorithms whose sums are ordered differently between runs: close, not equal.
    assert loss_on == pytest.approx(loss_off, rel=1e-4)
    for a, b in zip(on.get_weights(), off.get_weights()):
        np.testing.assert_allclose(a, b, rtol=1e-3, atol=1e-5)


@pytest.mark.gpu
def test_a_graph_keeps_its_workspace_when_a_larger_predict_grows_it():
    # A replay writes cuDNN's workspace at the address it was captured with; if growing the
    # workspace for the large predict gave that block back to the pool, the second epoch's
    # replays would overwrite tensors (backends/cuda/workspace_arena.h). Same weights as eager.
    on, _ = _course_cnn_weights(jit_compile=True, steps=10, predict_between=2048)
    off, _ = _course_cnn_weights(jit_compile=False, steps=10, predict_between=2048)
    assert on._cpp_trainer.graph_fallback_reason == ""
    assert on._cpp_trainer.graph_replays >= 9
    for a, b in zip(on.get_weights(), off.get_weights()):
        np.testing.assert_allclose(a, b, rtol=1e-3, atol=1e-5)
