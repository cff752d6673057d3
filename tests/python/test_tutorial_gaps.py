"""Lines pasted from the TensorFlow/Keras tutorials and PyTorch's "Learn the Basics" (issue 28's
named gaps), each against the real framework with the same inputs and weights: TensorFlow/Keras
in this interpreter, PyTorch in a /usr/bin/python3 subprocess (torch_reference.py)."""
import sys

import numpy as np
import pytest

import gpuaccel
import torch_reference
from gpuaccel import keras

tf = pytest.importorskip("tensorflow")
tf_keras = pytest.importorskip("keras")


# ---- f'{train_loss.result():0.2f}' -------------------------------------------------------

@pytest.mark.parametrize("spec", ["0.2f", ".3e", "", "8.1f", "%"])
def test_scalar_tensor_formats_like_tensorflow(spec):
    value = np.float32(1.2345678)
    ours = format(gpuaccel.tensor(value), spec)
    assert ours == format(tf.constant(value), spec)


def test_non_scalar_refuses_a_format_spec_as_tensorflow_and_torch():
    with pytest.raises(TypeError) as theirs:
        format(tf.ones(2), "0.2f")
    assert "unsupported format string" in str(theirs.value)
    with pytest.raises(TypeError, match="unsupported format string passed to Tensor.__format__"):
        format(gpuaccel.ones(2), "0.2f")
    # the empty spec is str(), as for any object
    assert format(gpuaccel.ones(2), "") == str(gpuaccel.ones(2))


def test_metric_result_formats_in_an_fstring():
    ours, theirs = keras.metrics.Mean(), tf_keras.metrics.Mean()
    for v in (0.5, 1.25, 2.0):
        ours.update_state(v)
        theirs.update_state(v)
    epoch = 0
    assert f"Epoch {epoch + 1}, Loss: {ours.result():0.2f}" == \
        f"Epoch {epoch + 1}, Loss: {theirs.result():0.2f}"


# ---- dense1.kernel.dtype.name ---------------------------------------------------------------

def _layer_pairs():
    rng = np.random.default_rng(7)
    return [
        (lambda m: m.layers.Dense(3, name="d"), rng.normal(size=(2, 4)).astype(np.float32)),
        (lambda m: m.layers.Conv2D(2, 3, name="c"), rng.normal(size=(1, 5, 5, 2)).astype(np.float32)),
        (lambda m: m.layers.Conv1D(2, 3, name="c1"), rng.normal(size=(1, 6, 2)).astype(np.float32)),
        (lambda m: m.layers.BatchNormalization(name="bn"), rng.normal(size=(4, 3)).astype(np.float32)),
        (lambda m: m.layers.LayerNormalization(name="ln"), rng.normal(size=(4, 3)).astype(np.float32)),
        (lambda m: m.layers.Embedding(5, 2, name="e"), np.array([[0, 4, 2]], np.int32)),
    ]


ATTRIBUTES = ("kernel", "bias", "gamma", "beta", "moving_mean", "moving_variance", "embeddings")


@pytest.mark.parametrize("index", range(6))
def test_weight_attributes_match_keras(index):
    make, x = _layer_pairs()[index]
    ours, theirs = make(keras), make(tf_keras)
    ours(x)
    theirs(x)
    names = [a for a in ATTRIBUTES if hasattr(theirs, a) and getattr(theirs, a) is not None]
    assert names, "the Keras layer exposes none of the attributes"
    rng = np.random.default_rng(index)
    for attribute in names:
        mine, ref = getattr(ours, attribute), getattr(theirs, attribute)
        assert mine.name == ref.name == attribute
        assert mine.path == ref.path
        assert tuple(mine.shape) == tuple(ref.shape)
        assert mine.dtype == ref.dtype and mine.dtype.name == "float32"
        assert mine.trainable == ref.trainable
        # the same values in both, written through the variable: the layer computes with them
        value = rng.normal(size=tuple(ref.shape)).astype(np.float32)
        if attribute == "moving_variance":
            value = np.abs(value) + 0.5
        mine.assign(value)
        ref.assign(value)
        np.testing.assert_array_equal(mine.numpy(), value)
    np.testing.assert_allclose(np.asarray(ours(x)), np.asarray(theirs(x)), rtol=1e-5, atol=1e-5)


def test_assign_then_call_matches_keras_after_set_weights():
    rng = np.random.default_rng(3)
    x = rng.normal(size=(5, 4)).astype(np.float32)
    kernel, bias = rng.normal(size=(4, 3)).astype(np.float32), rng.normal(size=3).astype(np.float32)
    ours, theirs = keras.layers.Dense(3, activation="relu"), tf_keras.layers.Dense(3, activation="relu")
    ours(x)
    theirs(x)
    ours.kernel.assign(kernel)
    ours.bias.assign(bias)
    theirs.set_weights([kernel, bias])
    np.testing.assert_allclose(np.asarray(ours(x)), np.asarray(theirs(x)), rtol=1e-5, atol=1e-6)
    # the variable is the layer's weight, not a copy: the layer sees the write
    assert ours.kernel.dtype.name == "float32"
    np.testing.assert_array_equal(ours.get_weights()[0], kernel)


def test_weight_attributes_before_build_and_without_bias_as_keras():
    with pytest.raises(AttributeError, match="You must build the layer before accessing `kernel`"):
        tf_keras.layers.Dense(2).kernel
    with pytest.raises(AttributeError, match="You must build the layer before accessing `kernel`"):
        keras.layers.Dense(2).kernel
    # Named, so the paths do not depend on how many Dense layers earlier tests made (Keras numbers
    # unnamed layers per process: dense_103 here is dense_420 after another test file).
    ours = keras.layers.Dense(2, use_bias=False, name="no_bias")
    theirs = tf_keras.layers.Dense(2, use_bias=False, name="no_bias")
    ours(np.zeros((1, 2), np.float32))
    theirs(np.zeros((1, 2), np.float32))
    assert ours.bias is None and theirs.bias is None
    with pytest.raises(AttributeError):
        keras.layers.Flatten().kernel  # not a weight of this layer
    assert [w.path for w in ours.weights] == [w.path for w in theirs.weights] == ["no_bias/kernel"]


# ---- out.backward(torch.ones_like(out), retain_graph=True) -----------------------------------

_BACKWARD_TWICE = """
inp = torch.from_numpy(x).requires_grad_(True)
y = (inp + 1).pow(2).t()
y.backward(torch.ones_like(y), retain_graph=True)
out["first"] = inp.grad.numpy().copy()
y.backward(torch.ones_like(y))
out["second"] = inp.grad.numpy().copy()
try:
    y.backward(torch.ones_like(y))
except RuntimeError as e:
    out["error"] = str(e)
"""


def test_backward_retain_graph_accumulates_and_freed_graph_raises_as_torch():
    x = np.array([[1.0, 2.0, 3.0], [-1.0, 0.5, 4.0]], np.float32)
    ref = torch_reference.run(_BACKWARD_TWICE, x=x)
    inp = gpuaccel.tensor(x, requires_grad=True)
    out = (inp + 1).pow(2).t()
    out.backward(gpuaccel.ones_like(out), retain_graph=True)
    np.testing.assert_allclose(inp.grad.numpy(), ref["first"], rtol=1e-6)
    out.backward(gpuaccel.ones_like(out))
    np.testing.assert_allclose(inp.grad.numpy(), ref["second"], rtol=1e-6)
    with pytest.raises(RuntimeError) as error:
        out.backward(gpuaccel.ones_like(out))
    assert ref["error"].startswith("Trying to backward through the graph a second time")
    assert ref["error"] in str(error.value)
    # the failed backward accumulated nothing
    np.testing.assert_allclose(inp.grad.numpy(), ref["second"], rtol=1e-6)


def test_backward_inputs_restricts_accumulation_as_torch():
    a, b = np.array([1.0, -2.0], np.float32), np.array([3.0, 0.5], np.float32)
    ref = torch_reference.run("""
ta = torch.from_numpy(a).requires_grad_(True)
tb = torch.from_numpy(b).requires_grad_(True)
(ta * tb * ta).sum().backward(inputs=[tb])
out["a_grad_is_none"] = ta.grad is None
out["b_grad"] = tb.grad.numpy()
try:
    (ta * tb).sum().backward(inputs=[])
except RuntimeError as e:
    out["empty"] = str(e)
""", a=a, b=b)
    ta = gpuaccel.tensor(a, requires_grad=True)
    tb = gpuaccel.tensor(b, requires_grad=True)
    (ta * tb * ta).sum().backward(inputs=[tb])
    assert (ta.grad is None) == ref["a_grad_is_none"] is True
    np.testing.assert_allclose(tb.grad.numpy(), ref["b_grad"], rtol=1e-6)
    with pytest.raises(RuntimeError, match="'inputs' argument to backward\\(\\) cannot be empty"):
        (ta * tb).sum().backward(inputs=[])
    assert "cannot be empty" in ref["empty"]


def test_backward_create_graph_is_refused_with_a_typed_error():
    x = gpuaccel.tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(NotImplementedError, match="create_graph=True"):
        (x * x).sum().backward(create_graph=True)
    assert x.grad is None


# ---- t.numpy() / from_numpy share memory on the CPU ------------------------------------------

def test_numpy_and_from_numpy_share_memory_as_torch():
    ref = torch_reference.run("""
t = torch.ones(5)
n = t.numpy()
t.add_(1)
out["n_after_add"] = n.copy()
a = np.ones(5, np.float32)
u = torch.from_numpy(a)
np.add(a, 1, out=a)
out["u_after_add"] = u.numpy().copy()
v = torch.from_numpy(np.arange(6, dtype=np.float32).reshape(2, 3).T)
out["transposed"] = v.numpy().copy()
""")
    t = gpuaccel.ones(5)
    n = t.numpy()
    t.add_(1)
    np.testing.assert_array_equal(n, ref["n_after_add"])
    a = np.ones(5, np.float32)
    u = gpuaccel.from_numpy(a)
    np.add(a, 1, out=a)
    np.testing.assert_array_equal(u.numpy(), ref["u_after_add"])
    # a transposed (non-contiguous) array is shared too
    b = np.arange(6, dtype=np.float32).reshape(2, 3)
    v = gpuaccel.from_numpy(b.T)
    np.testing.assert_array_equal(v.numpy(), ref["transposed"])
    b[0, 1] = 50.0
    assert v.numpy()[1, 0] == 50.0


def test_numpy_of_a_view_shares_with_its_strides_and_keeps_the_tensor_alive():
    import gc
    t = gpuaccel.tensor(np.arange(12, dtype=np.float32).reshape(3, 4))
    view = t.T[1:]
    n = view.numpy()
    np.testing.assert_array_equal(n, np.arange(12, dtype=np.float32).reshape(3, 4).T[1:])
    t[0, 2] = -7.0
    assert n[1, 0] == -7.0
    del t, view
    gc.collect()
    np.testing.assert_array_equal(n[:, 0], [1.0, -7.0, 3.0])


def test_numpy_copies_where_it_cannot_or_should_not_share():
    variable = gpuaccel.Variable([1.0, 2.0])
    value = variable.numpy()  # TF: a variable's numpy() is its value at that time
    variable.assign([5.0, 6.0])
    np.testing.assert_array_equal(value, [1.0, 2.0])
    pytest.importorskip("ml_dtypes")
    half = gpuaccel.ones(3).bfloat16()
    copy = half.numpy()  # NumPy has no bfloat16 buffer format
    half.add_(1)
    assert float(copy[0]) == 1.0


def test_from_numpy_refuses_negative_strides_as_torch():
    a = np.arange(4, dtype=np.float32)[::-1]
    ref = torch_reference.run("torch.from_numpy(a)", a=np.ascontiguousarray(a))
    assert "error" not in ref
    ref = torch_reference.run("torch.from_numpy(a[::-1])", a=np.ascontiguousarray(a))
    assert ref["error"][0] == "ValueError"
    with pytest.raises(ValueError) as error:
        gpuaccel.from_numpy(a)
    assert str(error.value).startswith(ref["error"][1][:60])


# ---- MirroredStrategy over an empty GPU list -------------------------------------------------

def test_mirrored_strategy_over_no_gpus_mirrors_onto_the_cpu_as_tensorflow():
    theirs = tf.distribute.MirroredStrategy(tf.config.list_logical_devices("GPU"))
    ours = gpuaccel.distribute.MirroredStrategy(gpuaccel.config.list_logical_devices("GPU"))
    if gpuaccel.config.list_logical_devices("GPU"):
        pytest.skip("this machine has a GPU: the list is not empty")
    assert ours.num_replicas_in_sync == theirs.num_replicas_in_sync == 1
    assert ours.worker_devices[0].endswith("CPU:0")
    assert theirs.extended.worker_devices[0].endswith("CPU:0")
    x = np.random.default_rng(0).normal(size=(32, 4)).astype(np.float32)
    y = x.sum(axis=1, keepdims=True)
    with ours.scope():
        model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(1)])
        model.compile(optimizer="sgd", loss="mse")
    history = model.fit(x, y, epochs=2, batch_size=8, verbose=0)
    assert len(history.history["loss"]) == 2
    assert history.history["loss"][1] < history.history["loss"][0]


# ---- misuse: string axes, dtype names as devices, the missing notebook extra ------------------

@pytest.mark.parametrize("call", [
    lambda t: gpuaccel.math.argmax(t, axis="0"),
    lambda t: gpuaccel.math.argmin(t, axis="1"),
    lambda t: gpuaccel.torch.argmax(t, dim="0"),
    lambda t: gpuaccel.max(t, dim="0"),
    lambda t: gpuaccel.math.reduce_sum(t, axis="0"),
    lambda t: t.sum(dim="1"),
    lambda t: t.unsqueeze("0"),
    lambda t: gpuaccel.concat([t, t], axis="0"),
    lambda t: gpuaccel.nn.functional.normalize(t, dim="1"),
])
def test_string_axes_are_refused_with_a_type_error(call):
    with pytest.raises(TypeError, match="'0'|'1'"):
        call(gpuaccel.ones((2, 3)))
    with pytest.raises(TypeError):  # TF's type for argmax (torch's everywhere)
        tf.math.argmax(tf.ones((2, 3)), axis="0")


def test_numpy_integer_axes_still_work():
    t = gpuaccel.tensor(np.array([[1.0, 5.0, 2.0], [7.0, 0.0, 3.0]], np.float32))
    assert gpuaccel.math.argmax(t, axis=np.int64(1)).tolist() == [1, 0]
    assert t.sum(dim=np.int32(0)).tolist() == [8.0, 5.0, 5.0]


def test_to_with_a_dtype_gpuaccel_lacks_names_the_dtype():
    t = gpuaccel.ones(2)
    with pytest.raises(ValueError, match="'complex64' is a dtype that gpuaccel does not have"):
        t.to("complex64")
    with pytest.raises(ValueError, match="'uint16' is a dtype.*uint8 or int32"):
        t.to("uint16")
    with pytest.raises(AttributeError, match="two float32 tensors"):
        gpuaccel.complex64  # torch.complex64's spelling: the same kind of advice
    assert t.to("int16").dtype == gpuaccel.int16
    assert t.to("float64").dtype == gpuaccel.float64
    assert t.to("float16").dtype == gpuaccel.float16  # real dtype names still cast
    assert t.to("cpu").dtype == gpuaccel.float32  # and device names still move


def test_grade_without_the_notebook_extra_says_what_to_install(tmp_path, monkeypatch, capsys):
    from gpuaccel import grade
    notebook = tmp_path / "hw.ipynb"
    notebook.write_text('{"cells": [], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}')
    monkeypatch.setitem(sys.modules, "nbformat", None)  # import nbformat -> ImportError
    assert grade.main([str(notebook)]) == 2
    assert 'pip install "gpuaccel[notebooks]"' in capsys.readouterr().err


# ---- a trained model used as a layer --------------------------------------------------------

def _inner_pair(rng):
    """The same small model in gpuaccel and in Keras, with the same weights."""
    ours = keras.Sequential([keras.Input((4,)), keras.layers.Dense(5, activation="relu"),
                             keras.layers.Dense(3)])
    theirs = tf_keras.Sequential([tf_keras.Input((4,)), tf_keras.layers.Dense(5, activation="relu"),
                                  tf_keras.layers.Dense(3)])
    weights = [rng.normal(size=tuple(w.shape)).astype(np.float32) for w in theirs.weights]
    ours.set_weights(weights)
    theirs.set_weights(weights)
    return ours, theirs


def test_model_inside_sequential_matches_keras_and_shares_weights():
    rng = np.random.default_rng(11)
    x = rng.normal(size=(6, 4)).astype(np.float32)
    inner, inner_ref = _inner_pair(rng)
    ours = keras.Sequential([inner, keras.layers.Softmax()])
    theirs = tf_keras.Sequential([inner_ref, tf_keras.layers.Softmax()])
    np.testing.assert_allclose(ours.predict(x, verbose=0), theirs.predict(x, verbose=0),
                               rtol=1e-5, atol=1e-6)
    assert [layer.name for layer in ours.layers][0] == inner.name
    assert ours.count_params() == theirs.count_params()
    # shared weights: a write to the inner model shows in the outer one
    kernel = rng.normal(size=(5, 3)).astype(np.float32)
    inner.layers[1].kernel.assign(kernel)
    inner_ref.layers[1].kernel.assign(kernel)
    np.testing.assert_allclose(np.asarray(ours(x)), np.asarray(theirs(x)), rtol=1e-5, atol=1e-6)


def test_training_the_outer_model_trains_the_inner_one():
    rng = np.random.default_rng(12)
    x = rng.normal(size=(32, 4)).astype(np.float32)
    y = rng.integers(0, 3, size=32)
    inner, _ = _inner_pair(rng)
    before = inner.get_weights()
    outer = keras.Sequential([inner, keras.layers.Softmax()])
    outer.compile(optimizer="sgd", loss="sparse_categorical_crossentropy")
    outer.fit(x, y, epochs=1, batch_size=8, verbose=0)
    after = inner.get_weights()
    assert any(not np.array_equal(b, a) for b, a in zip(before, after))
    np.testing.assert_allclose(outer.predict(x, verbose=0),
                               keras.layers.Softmax()(inner.predict(x, verbose=0)).numpy(),
                               rtol=1e-5, atol=1e-6)


def test_model_called_in_a_functional_model_matches_keras():
    rng = np.random.default_rng(13)
    x = rng.normal(size=(6, 4)).astype(np.float32)
    inner, inner_ref = _inner_pair(rng)
    inputs = keras.Input((4,))
    ours = keras.Model(inputs, keras.layers.Softmax()(inner(inputs)))
    inputs_ref = tf_keras.Input((4,))
    theirs = tf_keras.Model(inputs_ref, tf_keras.layers.Softmax()(inner_ref(inputs_ref)))
    np.testing.assert_allclose(ours.predict(x, verbose=0), theirs.predict(x, verbose=0),
                               rtol=1e-5, atol=1e-6)
    assert ours.count_params() == theirs.count_params()
