"""tf.custom_gradient and keras.ops.custom_gradient on gpuaccel's autograd node with a Python
backward, against TensorFlow: the same decorated functions (TF's log1pexp example, a
straight-through clip, a function reading a variable with the ``variables=`` form, Keras's
``grad(*args, upstream=None)`` form) give TensorFlow's values and GradientTape gradients."""
import numpy as np
import pytest
import tensorflow as real_tf

import gpuaccel as ga
from gpuaccel import keras as ga_keras

X = np.array([0.0, 2.0, 100.0], np.float32)
CLIP_X = np.array([-2.0, 0.5, 3.0], np.float32)


def _array(t):
    """A tensor's values (gpuaccel's .numpy() refuses a tensor recorded under a tape, as torch
    does for one requiring grad: detach first)."""
    return np.asarray(t.detach().numpy() if hasattr(t, "detach") else t.numpy())


def _log1pexp(tf):
    @tf.custom_gradient
    def log1pexp(x):
        e = tf.exp(x)

        def grad(upstream):
            return upstream * (1 - 1 / (1 + e))

        return tf.math.log(1 + e), grad

    return log1pexp


def _straight_through_clip(tf):
    @tf.custom_gradient
    def clip(x):
        def grad(upstream):
            return upstream

        return tf.clip_by_value(x, -1.0, 1.0), grad

    return clip


def _values_and_gradient(tf, fn, x_value, weights):
    x = tf.constant(x_value)
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = fn(x)
        loss = tf.reduce_sum(y * tf.constant(weights))
    return _array(y), _array(tape.gradient(loss, x))


@pytest.mark.parametrize("make, x_value", [(_log1pexp, X[:2]), (_straight_through_clip, CLIP_X)],
                         ids=["log1pexp", "straight_through_clip"])
def test_matches_tensorflow(make, x_value):
    weights = np.array([1.0, -2.0, 0.5], np.float32)[:len(x_value)]
    ours = _values_and_gradient(ga, make(ga), x_value, weights)
    theirs = _values_and_gradient(real_tf, make(real_tf), x_value, weights)
    np.testing.assert_allclose(ours[0], theirs[0], rtol=1e-6)
    np.testing.assert_allclose(ours[1], theirs[1], rtol=1e-6)


def test_custom_gradient_is_used_where_autodiff_would_overflow():
    y, grad = _values_and_gradient(ga, _log1pexp(ga), X, np.ones(3, np.float32))
    assert np.isfinite(grad).all() and grad[2] == 1.0  # autodiff gives nan (inf / inf) here


def _scale_by_variable(tf):
    v = tf.Variable(2.0)

    @tf.custom_gradient
    def scale(x):
        def grad(upstream, variables=None):
            assert len(variables) == 1
            return upstream * v * 3, [tf.reduce_sum(upstream * x) * 10]

        return x * v, grad

    x = tf.constant([1.0, 2.0])
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = scale(x)
    gx, gv = tape.gradient(y, [x, v])
    return _array(y), _array(gx), _array(gv)


def test_variables_form_matches_tensorflow():
    ours, theirs = _scale_by_variable(ga), _scale_by_variable(real_tf)
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(a, b, rtol=1e-6)


def test_grad_fn_without_variables_keyword_is_refused_when_variables_are_read():
    v = ga.Variable(2.0)

    @ga.custom_gradient
    def scale(x):
        return x * v, lambda upstream: upstream * v

    with pytest.raises(TypeError, match="must accept a keyword argument 'variables'"):
        scale(ga.constant([1.0]))


def test_wrong_number_of_gradients_is_an_error():
    @ga.custom_gradient
    def two_inputs(x, y):
        return x * y, lambda upstream: upstream

    x, y = ga.constant([1.0]), ga.constant([2.0])
    with ga.GradientTape() as tape:
        tape.watch([x, y])
        z = two_inputs(x, y)
    with pytest.raises(ValueError, match="expected to return 2 gradients, but returned 1"):
        tape.gradient(z, [x, y])


def test_keras_ops_custom_gradient_upstream_form():
    def make(ops):
        @ops.custom_gradient
        def log1pexp(x):
            e = ops.exp(x)

            def grad(*args, upstream=None):
                if upstream is None:
                    (upstream,) = args
                return ops.multiply(upstream, 1.0 - 1.0 / ops.add(1, e))

            return ops.log(1 + e), grad

        return log1pexp

    ours = _values_and_gradient(ga, make(ga_keras.ops), X, np.ones(3, np.float32))
    theirs = _values_and_gradient(real_tf, make(real_tf.keras.ops), X, np.ones(3, np.float32))
    np.testing.assert_allclose(ours[0], theirs[0], rtol=1e-6)
    np.testing.assert_allclose(ours[1], theirs[1], rtol=1e-6)


def _halved_gradient_model(keras_module, ops):
    """Dense -> a layer whose call() halves the gradient (identity forward) -> Dense."""
    @ops.custom_gradient
    def halve_gradient(x):
        def grad(*args, upstream=None):
            if upstream is None:
                (upstream,) = args
            return upstream * 0.5

        return x * 1.0, grad

    class HalveGradient(keras_module.layers.Layer):
        def call(self, inputs):
            return halve_gradient(inputs)

    return keras_module.Sequential([keras_module.Input((3,)), keras_module.layers.Dense(4),
                                    HalveGradient(), keras_module.layers.Dense(1)])


def test_fit_through_a_custom_gradient_layer_matches_keras():
    """The C++ training step runs the backward pass with the GIL released: the node takes it
    to call the Python gradient."""
    import warnings
    rng = np.random.default_rng(5)
    x = rng.normal(size=(16, 3)).astype(np.float32)
    y = rng.normal(size=(16, 1)).astype(np.float32)
    ours = _halved_gradient_model(ga_keras, ga_keras.ops)
    theirs = _halved_gradient_model(real_tf.keras, real_tf.keras.ops)
    ours.set_weights(theirs.get_weights())
    for model, keras_module in ((ours, ga_keras), (theirs, real_tf.keras)):
        model.compile(optimizer=keras_module.optimizers.SGD(0.1), loss="mse")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            model.fit(x, y, batch_size=8, epochs=2, shuffle=False, verbose=0)
    for mine, reference in zip(ours.get_weights(), theirs.get_weights()):
        np.testing.assert_allclose(mine, reference, rtol=1e-4, atol=1e-5)
