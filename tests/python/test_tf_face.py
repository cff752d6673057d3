"""The TensorFlow face end to end: ``tf.function`` stays eager, ``GradientTape`` with ``watch``
and persistent tapes, ``Variable`` updates, ``tf.random`` (``shuffle``, integer ``uniform``),
``tf.nn`` extras against their formulas, ``convert_to_tensor``, and a custom training loop in
the style of TensorFlow's beginner quickstart checked against NumPy."""
import numpy as np
import pytest

import gpuaccel as tf  # the TensorFlow face, as course code imports it
from test_autograd import check_gradients, rnd


def test_function_decorator_keeps_eager_semantics():
    calls = []

    @tf.function
    def square_sum(x):
        calls.append(1)  # a Python side effect runs on every call (no tracing)
        return tf.reduce_sum(x * x)

    @tf.function(jit_compile=True, reduce_retracing=True)
    def double(x):
        return 2 * x

    assert float(square_sum(tf.constant([1.0, 2.0]))) == 5.0
    assert float(square_sum(tf.constant([3.0]))) == 9.0
    assert len(calls) == 2
    assert double(tf.constant(2.0)).numpy() == 4.0
    assert square_sum.python_function.__name__ == "square_sum"
    assert tf.executing_eagerly()
    with pytest.raises(TypeError, match="unexpected keyword"):
        tf.function(lambda x: x, experimental_magic=True)

    class Model:
        @tf.function
        def __call__(self, x):
            return x + 1

    assert float(Model()(tf.constant(1.0))) == 2.0


def test_gradient_tape_watch_and_persistent():
    x = tf.constant(3.0)
    with tf.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = x * x
        z = y * y
    assert float(tape.gradient(y, x)) == 6.0
    assert float(tape.gradient(z, x)) == pytest.approx(108.0)
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = x * x
    tape.gradient(y, x)
    with pytest.raises(RuntimeError, match="non-persistent GradientTape"):
        tape.gradient(y, x)


def test_variables_numpy_and_assign_in_a_training_step():
    w = tf.Variable(np.array([[1.0], [2.0]], np.float32))
    assert w.numpy().shape == (2, 1)  # TF code reads variables with .numpy()
    x = tf.constant([[1.0, 1.0]])
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(tf.matmul(x, w) - 1.0))
    (grad,) = tape.gradient(loss, [w])
    w.assign_sub(0.1 * grad)
    np.testing.assert_allclose(w.numpy(), [[0.6], [1.6]], rtol=1e-6)


def test_convert_to_tensor():
    t = tf.convert_to_tensor(np.arange(3.0))
    assert t.dtype == tf.float32
    assert tf.convert_to_tensor(t) is t
    assert tf.convert_to_tensor([1, 2], dtype=tf.float16).dtype == tf.float16
    assert tuple(tf.convert_to_tensor([tf.constant([1.0]), tf.constant([2.0])]).shape) == (2, 1)
    with pytest.raises(ValueError, match="requested dtype"):
        tf.convert_to_tensor(t, dtype=tf.int32)
    with pytest.raises(TypeError, match="Failed to convert"):
        tf.convert_to_tensor({"a": 1})


def test_random_shuffle_uniform_and_normal():
    tf.random.set_seed(3)
    values = tf.random.shuffle(np.arange(20))
    assert sorted(values.numpy().tolist()) == list(range(20))
    assert values.numpy().tolist() != list(range(20))
    tf.random.set_seed(3)
    assert tf.random.shuffle(np.arange(20)).numpy().tolist() == values.numpy().tolist()
    ints = tf.random.uniform([500], minval=2, maxval=5, dtype=tf.int32)
    assert ints.dtype == tf.int32 and set(ints.numpy().tolist()) == {2, 3, 4}
    with pytest.raises(ValueError, match="Must specify maxval"):
        tf.random.uniform([2], dtype=tf.int64)
    n = tf.random.normal([4000], mean=1.0, stddev=2.0).numpy()
    assert abs(n.mean() - 1.0) < 0.15 and abs(n.std() - 2.0) < 0.15


def test_nn_extras_against_formulas():
    x = rnd((3, 4))
    y = rnd((3, 4), 1, low=0.0, high=1.0)
    check_gradients(lambda z: tf.nn.sigmoid_cross_entropy_with_logits(labels=y, logits=z),
                    lambda z: np.maximum(z, 0) - z * y + np.log1p(np.exp(-np.abs(z))), [x])
    check_gradients(tf.nn.l2_loss, lambda z: (z * z).sum() / 2, [x])
    check_gradients(tf.nn.elu, lambda z: np.where(z > 0, z, np.expm1(np.minimum(z, 0))), [x])
    check_gradients(tf.nn.log_sigmoid, lambda z: -np.log1p(np.exp(-z)), [x])
    np.testing.assert_allclose(tf.nn.relu6(x * 10).numpy(), np.clip(x * 10, 0, 6))
    np.testing.assert_allclose(tf.nn.leaky_relu(x).numpy(), np.where(x > 0, x, 0.2 * x))
    mean, var = tf.nn.moments(x, axes=[0])
    np.testing.assert_allclose(mean.numpy(), x.mean(0), rtol=1e-5)
    np.testing.assert_allclose(var.numpy(), x.var(0), rtol=1e-5)
    with pytest.raises(ValueError, match="range \\[0, 1\\)"):
        tf.nn.dropout(x, rate=1.0)


def test_beginner_quickstart_style_custom_loop_matches_numpy():
    """A softmax regression trained by GradientTape steps with the same updates done by hand
    in NumPy: both give the same weights."""
    rng = np.random.default_rng(0)
    x = rng.normal(size=(32, 5)).astype(np.float32)
    labels = rng.integers(0, 3, 32)
    w0 = rng.normal(size=(5, 3)).astype(np.float32) * 0.1
    w = tf.Variable(w0)
    b = tf.Variable(np.zeros(3, np.float32))
    onehot = tf.one_hot(labels, 3)
    for _ in range(5):
        with tf.GradientTape() as tape:
            logits = tf.matmul(x, w) + b
            loss = tf.reduce_mean(tf.nn.softmax_cross_entropy_with_logits(onehot, logits))
        gw, gb = tape.gradient(loss, [w, b])
        w.assign_sub(0.5 * gw)
        b.assign_sub(0.5 * gb)
    wn, bn = w0.astype(np.float64), np.zeros(3)
    for _ in range(5):
        z = x @ wn + bn
        p = np.exp(z - z.max(1, keepdims=True))
        p /= p.sum(1, keepdims=True)
        d = (p - np.eye(3)[labels]) / len(x)
        wn, bn = wn - 0.5 * x.T @ d, bn - 0.5 * d.sum(0)
    np.testing.assert_allclose(w.numpy(), wn, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(b.numpy(), bn, rtol=1e-4, atol=1e-5)
    predictions = tf.argmax(tf.nn.softmax(tf.matmul(x, w) + b), axis=1)
    np.testing.assert_array_equal(predictions.numpy(), (x @ wn + bn).argmax(1))
