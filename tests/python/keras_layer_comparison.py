"""What the Keras layer comparisons (test_keras_attention_layers.py,
test_keras_layers_breadth.py, test_keras_layers_more.py, test_keras_recurrent.py) share: one layer of gpuaccel and its Keras twin with the same
weights, and their outputs and gradients (inputs and trainable weights) on both tapes."""
import numpy as np
import tensorflow as tf

import gpuaccel as ga
from gpuaccel.keras import layers as L

import keras

K = keras.layers


def npy(t):
    return np.asarray(t.detach().numpy() if isinstance(t, ga.Tensor) else t)


def normal(shape, seed):
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


def gradients(lib, layer, call, inputs, upstream, **kwargs):
    """(output, [d/d input for each input, d/d weight for each trainable weight]) of
    sum(output * upstream) on one framework's tape."""
    if lib is ga:
        tensors = [ga.tensor(x) for x in inputs]
        with ga.GradientTape() as tape:
            for t in tensors:
                tape.watch(t)
            y = call(layer, tensors, **kwargs)
            first = y[0] if isinstance(y, tuple) else y
        grads = tape.gradient(first, tensors + list(layer.trainable_weights),
                              output_gradients=ga.tensor(upstream))
        sources = tensors + list(layer.trainable_weights)
        return y, [np.zeros(tuple(s.shape), np.float32) if g is None else npy(g)
                   for g, s in zip(grads, sources)]
    tensors = [tf.constant(x) for x in inputs]
    with tf.GradientTape() as tape:
        for t in tensors:
            tape.watch(t)
        y = call(layer, tensors, **kwargs)
        first = y[0] if isinstance(y, tuple) else y
    sources = tensors + list(layer.trainable_weights)
    grads = tape.gradient(first, sources, output_gradients=tf.constant(upstream))
    return y, [np.zeros(s.shape, np.float32) if g is None else g.numpy()
               for g, s in zip(grads, sources)]


def built_pair(factory, shapes, call):
    """gpuaccel's and Keras's layer, built by a first call, with the same random weights."""
    ours, theirs = factory(L), factory(K)
    inputs = [normal(s, i) for i, s in enumerate(shapes)]
    call(ours, inputs)
    call(theirs, inputs)
    assert [tuple(w.shape) for w in ours.weights] == [tuple(w.shape) for w in theirs.weights]
    same_random_weights(ours, theirs, seed=30)
    return ours, theirs, inputs


def same_random_weights(ours, theirs, seed=3):
    """Both layers get the same non-trivial weights (PReLU's alpha starts at zero), drawn in
    the order and shapes of Keras's layer."""
    weights = [normal(tuple(w.shape), seed + i) * 0.5 for i, w in enumerate(theirs.weights)]
    theirs.set_weights(weights)
    ours.set_weights(weights)


def case_ids(cases):
    """pytest ids of (id, factory, ...) test cases."""
    return [case[0] for case in cases]


def assert_same(ours, theirs, call, inputs, **kwargs):
    expected = call(theirs, inputs, **kwargs)
    first = expected[0] if isinstance(expected, tuple) else expected
    upstream = normal(tuple(first.shape), 99)
    y, grads = gradients(ga, ours, call, inputs, upstream, **kwargs)
    y_ref, grads_ref = gradients(tf, theirs, call, inputs, upstream, **kwargs)
    for a, b in zip(y if isinstance(y, tuple) else (y,),
                    y_ref if isinstance(y_ref, tuple) else (y_ref,)):
        assert tuple(a.shape) == tuple(b.shape)
        np.testing.assert_allclose(npy(a), np.asarray(b), rtol=1e-5, atol=1e-5)
    assert len(grads) == len(grads_ref)
    for g, g_ref in zip(grads, grads_ref):
        np.testing.assert_allclose(g, g_ref, rtol=1e-4, atol=1e-5)
    return y


def fit_history(lib, model, xs, y):
    model.compile(optimizer=lib.optimizers.SGD(0.05), loss="mse")
    return model.fit(xs, y, epochs=3, batch_size=4, shuffle=False, verbose=0).history["loss"]
