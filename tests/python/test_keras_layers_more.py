"""The built-in Keras layers gpuaccel writes in Python from its ops (reshaping, pooling,
activation, merging and regularization layers: python/gpuaccel/keras/_*_layers.py) against
real Keras 3 with the same weights and inputs: forward values, gradients with respect to the
inputs and the weights (tf.GradientTape), output shapes and dtypes (eager, compute_output_shape
and symbolic), get_config keys and values, from_config, and the loss history of a short `fit`
(shuffle=False, the same initial weights). Each layer's call is traced once per input signature
and replayed afterwards (python_calls stays 1)."""
import numpy as np
import pytest

import gpuaccel as ga
from gpuaccel import keras as gk
from gpuaccel.keras import layers as L

keras = pytest.importorskip("keras")
tf = pytest.importorskip("tensorflow")
K = keras.layers

from keras_layer_comparison import case_ids, normal, npy, same_random_weights  # noqa: E402


def scaled_square(x, k):
    return x * x * k


def ops_of(layers):
    """The tensor ops module a Lambda's function uses: gpuaccel's, or TensorFlow's for Keras."""
    return ga if layers is L else tf


# (id, factory taking the layers module, input shape with the batch). The same factory builds
# gpuaccel's layer (L) and Keras's (K), so the arguments are the same by construction.
SINGLE_INPUT = [
    ("ZeroPadding2D", lambda layers: layers.ZeroPadding2D(), (2, 3, 4, 2)),
    ("ZeroPadding2D-pairs", lambda layers: layers.ZeroPadding2D(((1, 2), (0, 3))), (2, 4, 5, 3)),
    ("ZeroPadding2D-sym", lambda layers: layers.ZeroPadding2D((2, 1)), (2, 3, 3, 2)),
    ("ZeroPadding1D", lambda layers: layers.ZeroPadding1D(), (2, 4, 3)),
    ("ZeroPadding1D-pair", lambda layers: layers.ZeroPadding1D((1, 2)), (2, 4, 3)),
    ("ZeroPadding3D", lambda layers: layers.ZeroPadding3D(), (2, 2, 3, 2, 2)),
    ("ZeroPadding3D-pairs", lambda layers:
         layers.ZeroPadding3D(((1, 0), (0, 2), (1, 1))), (2, 2, 3, 2, 2)),
    ("Cropping1D", lambda layers: layers.Cropping1D(), (2, 5, 3)),
    ("Cropping1D-pair", lambda layers: layers.Cropping1D((2, 0)), (2, 5, 3)),
    ("Cropping2D", lambda layers: layers.Cropping2D(((1, 0), (2, 1))), (2, 5, 6, 3)),
    ("Cropping3D", lambda layers: layers.Cropping3D(), (2, 4, 3, 5, 2)),
    ("Cropping3D-pairs", lambda layers:
         layers.Cropping3D(((1, 0), (0, 1), (2, 1))), (2, 4, 3, 5, 2)),
    ("UpSampling1D", lambda layers: layers.UpSampling1D(), (2, 3, 4)),
    ("UpSampling1D-3", lambda layers: layers.UpSampling1D(3), (2, 3, 4)),
    ("UpSampling3D", lambda layers: layers.UpSampling3D(), (2, 2, 3, 2, 2)),
    ("UpSampling3D-123", lambda layers: layers.UpSampling3D((1, 2, 3)), (2, 2, 3, 2, 2)),
    ("GlobalAveragePooling3D", lambda layers: layers.GlobalAveragePooling3D(), (2, 3, 2, 4, 3)),
    ("GlobalMaxPooling3D", lambda layers:
         layers.GlobalMaxPooling3D(keepdims=True), (2, 3, 2, 4, 3)),
    ("Cropping2D-int", lambda layers: layers.Cropping2D(1), (2, 4, 4, 2)),
    ("UpSampling2D", lambda layers: layers.UpSampling2D(), (2, 3, 4, 2)),
    ("UpSampling2D-2x3", lambda layers: layers.UpSampling2D((2, 3)), (2, 3, 2, 3)),
    ("GlobalMaxPooling2D", lambda layers: layers.GlobalMaxPooling2D(), (3, 4, 5, 3)),
    ("GlobalMaxPooling2D-keepdims", lambda layers:
         layers.GlobalMaxPooling2D(keepdims=True), (2, 4, 5, 3)),
    ("GlobalAveragePooling1D", lambda layers: layers.GlobalAveragePooling1D(), (3, 6, 4)),
    ("GlobalAveragePooling1D-keepdims", lambda layers: layers.GlobalAveragePooling1D(keepdims=True),
     (2, 6, 4)),
    ("GlobalMaxPooling1D", lambda layers: layers.GlobalMaxPooling1D(), (3, 6, 4)),
    ("MaxPooling1D", lambda layers: layers.MaxPooling1D(), (2, 7, 3)),
    ("MaxPooling1D-same", lambda layers:
         layers.MaxPooling1D(3, strides=2, padding="same"), (2, 7, 3)),
    ("AveragePooling1D", lambda layers: layers.AveragePooling1D(2), (2, 8, 3)),
    ("AveragePooling1D-same", lambda layers: layers.AveragePooling1D(3, strides=2, padding="same"),
     (2, 7, 3)),
    ("AdaptiveAveragePooling1D", lambda layers: layers.AdaptiveAveragePooling1D(3), (2, 7, 3)),
    ("AdaptiveMaxPooling1D", lambda layers: layers.AdaptiveMaxPooling1D(3), (2, 5, 3)),
    ("AdaptiveAveragePooling2D", lambda layers:
         layers.AdaptiveAveragePooling2D((2, 3)), (2, 5, 7, 2)),
    ("AdaptiveMaxPooling2D", lambda layers: layers.AdaptiveMaxPooling2D((3, 2)), (2, 7, 4, 2)),
    ("AdaptiveMaxPooling2D-same", lambda layers: layers.AdaptiveMaxPooling2D(4), (2, 4, 4, 2)),
    ("LeakyReLU", lambda layers: layers.LeakyReLU(), (4, 5)),
    ("LeakyReLU-0.1", lambda layers: layers.LeakyReLU(negative_slope=0.1), (2, 3, 4)),
    ("LeakyReLU-1.5", lambda layers: layers.LeakyReLU(negative_slope=1.5), (4, 5)),
    ("ReLU-max", lambda layers: layers.ReLU(max_value=0.8), (4, 6)),
    ("ReLU-6", lambda layers: layers.ReLU(max_value=6.0), (4, 6)),
    ("ReLU-threshold", lambda layers: layers.ReLU(threshold=0.3), (4, 6)),
    ("ReLU-slope", lambda layers: layers.ReLU(negative_slope=0.2), (4, 6)),
    ("ReLU-all", lambda layers:
         layers.ReLU(max_value=1.2, negative_slope=0.1, threshold=0.4), (4, 6)),
    ("Softmax-axis1", lambda layers: layers.Softmax(axis=1), (2, 3, 4)),
    ("Softmax-axis-2", lambda layers: layers.Softmax(axis=-2), (2, 3, 4, 2)),
    ("ELU", lambda layers: layers.ELU(), (4, 5)),
    ("ELU-0.5", lambda layers: layers.ELU(alpha=0.5), (4, 5)),
    ("PReLU", lambda layers: layers.PReLU(), (3, 4, 2)),
    ("PReLU-shared", lambda layers: layers.PReLU(shared_axes=[1, 2]), (3, 4, 5, 2)),
    ("Permute", lambda layers: layers.Permute((2, 1)), (2, 3, 4)),
    ("Permute-3", lambda layers: layers.Permute((3, 1, 2)), (2, 3, 4, 5)),
    ("RepeatVector", lambda layers: layers.RepeatVector(3), (2, 4)),
    ("Identity", lambda layers: layers.Identity(), (2, 4)),
    ("ActivityRegularization", lambda layers:
         layers.ActivityRegularization(l1=0.01, l2=0.02), (3, 4)),
    ("SpatialDropout1D", lambda layers: layers.SpatialDropout1D(0.4), (2, 5, 3)),
    ("SpatialDropout2D", lambda layers: layers.SpatialDropout2D(0.4), (2, 3, 4, 3)),
    ("SpatialDropout3D", lambda layers: layers.SpatialDropout3D(0.4), (2, 3, 2, 2, 3)),
    ("GroupNormalization", lambda layers: layers.GroupNormalization(groups=2), (3, 4, 5, 6)),
    ("GroupNormalization-3d", lambda layers:
         layers.GroupNormalization(groups=3, center=False), (3, 5, 6)),
    ("GroupNormalization-1", lambda layers:
         layers.GroupNormalization(groups=1, scale=False), (4, 6)),
    ("RMSNormalization", lambda layers: layers.RMSNormalization(), (3, 4, 6)),
    ("RMSNormalization-eps", lambda layers: layers.RMSNormalization(epsilon=1e-2), (4, 3)),
    ("UnitNormalization", lambda layers: layers.UnitNormalization(), (3, 5)),
    ("UnitNormalization-3d", lambda layers: layers.UnitNormalization(), (2, 3, 4)),
    ("CenterCrop", lambda layers: layers.CenterCrop(3, 2), (2, 6, 5, 3)),
    ("CenterCrop-odd", lambda layers: layers.CenterCrop(4, 4), (2, 7, 4, 2)),
    ("Lambda", lambda layers: layers.Lambda(lambda x: x * 2.0 + 1.0), (3, 4)),
    ("Lambda-arguments", lambda layers: layers.Lambda(scaled_square, arguments={"k": 0.5}), (3, 4)),
    ("Lambda-ops", lambda layers: layers.Lambda(
        lambda x: ops_of(layers).reduce_sum(x * x, axis=-1, keepdims=True)), (3, 4)),
    ("Lambda-output_shape", lambda layers: layers.Lambda(
        lambda x: ops_of(layers).reshape(x, (-1, 2, 2)), output_shape=(2, 2)), (3, 4)),
]

# (id, factory, input shapes): merging layers take a list of inputs.
MERGING = [
    ("Subtract", lambda layers: layers.Subtract(), [(3, 4), (3, 4)]),
    ("Multiply", lambda layers: layers.Multiply(), [(3, 4), (3, 4), (3, 4)]),
    ("Multiply-broadcast", lambda layers: layers.Multiply(), [(3, 2, 4), (3, 1, 4)]),
    ("Average", lambda layers: layers.Average(), [(3, 4), (3, 4), (3, 4)]),
    ("Maximum", lambda layers: layers.Maximum(), [(3, 4), (3, 4)]),
    ("Minimum", lambda layers: layers.Minimum(), [(3, 2, 4), (3, 2, 4), (3, 2, 4)]),
    ("Dot", lambda layers: layers.Dot(axes=1), [(3, 4), (3, 4)]),
    ("Dot-normalize", lambda layers: layers.Dot(axes=-1, normalize=True), [(3, 4), (3, 4)]),
    ("Dot-3d", lambda layers: layers.Dot(axes=(2, 1)), [(3, 2, 4), (3, 4, 5)]),
    ("Dot-3d-1", lambda layers: layers.Dot(axes=1), [(3, 4, 2), (3, 4, 5)]),
]


def forward_and_gradients_ours(layer, inputs, upstream):
    tensors = [ga.tensor(x) for x in inputs]
    with ga.GradientTape() as tape:
        for t in tensors:
            tape.watch(t)
        y = layer(tensors[0] if len(tensors) == 1 else tensors)
    grads = tape.gradient(y, tensors + list(layer.trainable_weights),
                          output_gradients=ga.tensor(upstream))
    return y, [npy(g) for g in grads]


def forward_and_gradients_keras(layer, inputs, upstream):
    tensors = [tf.constant(x) for x in inputs]
    with tf.GradientTape() as tape:
        for t in tensors:
            tape.watch(t)
        y = layer(tensors[0] if len(tensors) == 1 else tensors)
    grads = tape.gradient(y, tensors + list(layer.trainable_weights),
                          output_gradients=tf.constant(upstream))
    return y.numpy(), [np.zeros(t.shape, np.float32) if g is None else g.numpy()
                       for g, t in zip(grads, tensors + list(layer.trainable_weights))]


def plain(value):
    """A config value with tuples and lists alike, for comparing with Keras's."""
    if isinstance(value, (tuple, list)):
        return [plain(v) for v in value]
    return value


def check_layer(factory, shapes, seed=0):
    ours, theirs = factory(L), factory(K)
    inputs = [normal(s, seed + i) for i, s in enumerate(shapes)]
    build_shape = [(None,) + tuple(s[1:]) for s in shapes]
    build_shape = build_shape[0] if len(shapes) == 1 else build_shape
    ours.build(build_shape)
    theirs.build(build_shape)
    assert [tuple(w.shape) for w in ours.weights] == [tuple(w.shape) for w in theirs.weights]
    same_random_weights(ours, theirs)

    expected = np.asarray(theirs(inputs[0] if len(inputs) == 1 else inputs))
    upstream = normal(expected.shape, 99)
    y, grads = forward_and_gradients_ours(ours, inputs, upstream)
    y_ref, grads_ref = forward_and_gradients_keras(theirs, inputs, upstream)
    assert y.dtype == ga.float32 and tuple(y.shape) == y_ref.shape
    np.testing.assert_allclose(npy(y), y_ref, rtol=1e-5, atol=1e-6)
    assert len(grads) == len(grads_ref)
    for g, g_ref in zip(grads, grads_ref):
        np.testing.assert_allclose(g, g_ref, rtol=1e-5, atol=1e-6)

    # The first call traced, the rest replayed (same signature): the values stay Keras's.
    again = ours(ga.tensor(inputs[0]) if len(inputs) == 1 else [ga.tensor(x) for x in inputs])
    np.testing.assert_allclose(npy(again), y_ref, rtol=1e-5, atol=1e-6)
    assert ours._cpp.python_calls == 1 and ours._cpp.eager_reason == ""

    # shapes: compute_output_shape and a symbolic call agree with Keras's
    assert tuple(ours.compute_output_shape(build_shape)) == \
        tuple(theirs.compute_output_shape(build_shape))
    return ours, theirs, inputs, y_ref


@pytest.mark.parametrize("name,factory,shape", SINGLE_INPUT, ids=case_ids(SINGLE_INPUT))
def test_single_input_layer_matches_keras(name, factory, shape):
    ours, theirs, inputs, y_ref = check_layer(factory, [shape])
    symbolic = gk.Input(shape[1:])
    assert tuple(factory(L)(symbolic).shape) == tuple(factory(K)(keras.Input(shape[1:])).shape)
    check_config(ours, theirs, inputs, y_ref)


@pytest.mark.parametrize("name,factory,shapes", MERGING, ids=case_ids(MERGING))
def test_merging_layer_matches_keras(name, factory, shapes):
    ours, theirs, inputs, y_ref = check_layer(factory, shapes)
    symbolic = [gk.Input(s[1:]) for s in shapes]
    expected = factory(K)([keras.Input(s[1:]) for s in shapes]).shape
    assert tuple(factory(L)(symbolic).shape) == tuple(expected)
    check_config(ours, theirs, inputs, y_ref)


def check_config(ours, theirs, inputs, y_ref):
    config, keras_config = ours.get_config(), theirs.get_config()
    assert set(config) == set(keras_config)
    for key in {k for k in config if k not in ("name", "dtype", "function") and
                not k.endswith("_initializer")}:  # Keras's initializers are config dicts
        assert plain(config[key]) == plain(keras_config[key]), key
    rebuilt = type(ours).from_config(config)
    rebuilt.build((None,) + inputs[0].shape[1:] if len(inputs) == 1 else
                  [(None,) + x.shape[1:] for x in inputs])
    rebuilt.set_weights(ours.get_weights())
    out = rebuilt(ga.tensor(inputs[0]) if len(inputs) == 1 else [ga.tensor(x) for x in inputs])
    np.testing.assert_allclose(npy(out), y_ref, rtol=1e-5, atol=1e-6)


def test_activity_regularization_adds_keras_loss():
    ours, theirs = L.ActivityRegularization(l1=0.01, l2=0.02), K.ActivityRegularization(0.01, 0.02)
    x = normal((3, 4), 5)
    ours(x)
    theirs(x)
    assert len(ours.losses) == len(theirs.losses) == 1
    np.testing.assert_allclose(float(npy(ours.losses[0])), float(theirs.losses[0]), rtol=1e-6)


# Sequential models for the fit comparison: the layer between an input and a Dense head.
FIT_CASES = [c for c in SINGLE_INPUT if not c[0].startswith("SpatialDropout")]


def fit_history(lib, model, x, y):
    model.compile(optimizer=lib.optimizers.SGD(0.05), loss="mse")
    return model.fit(x, y, epochs=3, batch_size=4, shuffle=False, verbose=0).history["loss"]


@pytest.mark.parametrize("name,factory,shape", FIT_CASES, ids=case_ids(FIT_CASES))
def test_fit_in_sequential_matches_keras(name, factory, shape):
    x = normal((12,) + shape[1:], 1)
    y = normal((12, 1), 2)

    def model(lib, layers):
        return lib.Sequential([lib.Input(shape[1:]), factory(layers), layers.Flatten(),
                               layers.Dense(1)])

    ours, theirs = model(gk, L), model(keras, K)
    weights = [normal(w.shape, 10 + i) * 0.3 for i, w in enumerate(theirs.get_weights())]
    theirs.set_weights(weights)
    ours.set_weights(weights)
    np.testing.assert_allclose(fit_history(gk, ours, x, y), fit_history(keras, theirs, x, y),
                               rtol=2e-4)
    for a, b in zip(ours.get_weights(), theirs.get_weights()):
        np.testing.assert_allclose(a, b, rtol=1e-3, atol=1e-5)
    layer = ours.layers[0]
    assert layer._cpp.eager_reason == ""
    assert layer._cpp.python_calls <= 2  # training=True once; at most one more signature


@pytest.mark.parametrize("name,factory,shapes", MERGING, ids=case_ids(MERGING))
def test_fit_with_merging_layer_matches_keras(name, factory, shapes):
    xs = [normal((12,) + s[1:], 20 + i) for i, s in enumerate(shapes)]
    y = normal((12, 1), 3)

    def model(lib, layers):
        inputs = [lib.Input(s[1:]) for s in shapes]
        branches = [layers.Dense(s[-1])(t) for s, t in zip(shapes, inputs)]
        merged = factory(layers)(branches)
        return lib.Model(inputs, layers.Dense(1)(layers.Flatten()(merged)))

    ours, theirs = model(gk, L), model(keras, K)
    weights = [normal(w.shape, 40 + i) * 0.3 for i, w in enumerate(theirs.get_weights())]
    theirs.set_weights(weights)
    ours.set_weights(weights)
    np.testing.assert_allclose(fit_history(gk, ours, xs, y), fit_history(keras, theirs, xs, y),
                               rtol=2e-4)


@pytest.mark.parametrize("cls,rank", [(L.SpatialDropout1D, 3), (L.SpatialDropout2D, 4),
                                      (L.SpatialDropout3D, 5)])
def test_spatial_dropout_drops_whole_channels_with_a_fresh_mask_each_replay(cls, rank):
    ga.random.set_seed(7)
    layer = cls(0.5)
    shape = (8,) + (3,) * (rank - 2) + (16,)
    x = np.ones(shape, np.float32)
    masks = []
    for _ in range(3):
        out = npy(layer(x, training=True))
        per_channel = out.reshape(shape[0], -1, shape[-1])
        # each (example, channel) is all 0 or all 1 / (1 - rate), as Keras's noise_shape
        assert np.all(per_channel == per_channel[:, :1, :])
        assert set(np.unique(per_channel)) <= {0.0, 2.0}
        masks.append(per_channel[:, 0, :])
    assert layer._cpp.python_calls == 1  # replayed...
    assert not np.array_equal(masks[0], masks[1])  # ...with a new draw each call
    kept = np.mean(np.concatenate(masks) > 0)
    assert 0.35 < kept < 0.65
    np.testing.assert_array_equal(npy(layer(x)), x)  # inference: the identity


def test_default_relu_and_softmax_stay_cpp_layers_and_options_make_traced_ones():
    assert not L.ReLU()._is_python_layer()
    clipped = L.ReLU(max_value=1.0)
    assert isinstance(clipped, L.ReLU) and clipped._is_python_layer()
    assert clipped.name.startswith("re_lu")
    assert not L.Softmax()._is_python_layer()
    over_axis = L.Softmax(axis=1)
    assert isinstance(over_axis, L.Softmax) and over_axis._is_python_layer()
    assert over_axis.name.startswith("softmax")


def test_auto_names_follow_keras():
    for name, factory, _ in SINGLE_INPUT + MERGING:
        ours, theirs = factory(L), factory(K)
        root = theirs.name.rstrip("0123456789").rstrip("_")
        assert ours.name.startswith(root), (ours.name, theirs.name)


@pytest.mark.parametrize("make,message", [
    (lambda layers: layers.ZeroPadding2D(-1), "padding"),
    (lambda layers: layers.ZeroPadding2D((1, 2, 3)), "padding"),
    (lambda layers: layers.Cropping2D("a"), "cropping"),
    (lambda layers: layers.LeakyReLU(negative_slope=-0.1), "negative_slope"),
    (lambda layers: layers.ReLU(max_value=-1.0), "max_value"),
    (lambda layers: layers.ReLU(negative_slope=-1.0), "negative_slope"),
    (lambda layers: layers.ReLU(threshold=-0.5), "threshold"),
    (lambda layers: layers.Permute((1, 3)), "dims"),
    (lambda layers: layers.SpatialDropout1D(1.5), "rate"),
    (lambda layers: layers.UpSampling2D(interpolation="cubic"), "interpolation"),
    (lambda layers: layers.GroupNormalization(groups=2), "Number of groups"),
])
def test_argument_errors_like_keras(make, message):
    # Keras checks some arguments only when the layer is called (gpuaccel mostly when it is
    # made): both are made and called.
    for lib, error in ((K, Exception), (L, ValueError)):
        with pytest.raises(error, match="(?i)" + message):
            make(lib)(np.ones((1, 3, 3, 1), np.float32))


def test_bad_inputs_raise_typed_errors():
    with pytest.raises(ValueError, match="exactly 2 inputs"):
        L.Subtract()([np.ones((2, 3), np.float32)] * 3)
    with pytest.raises(ValueError, match="exactly 2 inputs"):
        K.Subtract()([np.ones((2, 3), np.float32)] * 3)
    with pytest.raises(ValueError, match="A `Dot` layer should be called on .*2 inputs"):
        L.Dot(axes=1)([np.ones((2, 3), np.float32)] * 3)
    with pytest.raises(ValueError, match="A `Dot` layer should be called on .*2 inputs"):
        K.Dot(axes=1)([np.ones((2, 3), np.float32)] * 3)
    with pytest.raises(ValueError, match="Incompatible input shapes"):
        L.Dot(axes=1)([np.ones((2, 3), np.float32), np.ones((2, 4), np.float32)])
    with pytest.raises(ValueError, match="rank 3"):
        L.GlobalMaxPooling1D()(np.ones((2, 3, 4, 5), np.float32))
    with pytest.raises(ValueError, match="leaves nothing"):
        L.Cropping2D(2)(np.ones((1, 4, 5, 1), np.float32))
    with pytest.raises(NotImplementedError, match="bilinear"):
        L.UpSampling2D(interpolation="bilinear")
    small = normal((1, 4, 6, 1), 8)  # smaller than the window: cropped and resized, as Keras
    np.testing.assert_allclose(npy(L.CenterCrop(5, 5)(small)),
                               np.asarray(K.CenterCrop(5, 5)(small)), rtol=1e-5, atol=1e-6)
    one_image = normal((6, 5, 3), 7)  # CenterCrop also takes a single image, as Keras
    np.testing.assert_allclose(npy(L.CenterCrop(3, 3)(one_image)),
                               np.asarray(K.CenterCrop(3, 3)(one_image)))
    with pytest.raises(NotImplementedError, match="alpha_regularizer"):
        L.PReLU(alpha_regularizer="l2")


def test_short_names_are_the_same_classes_as_in_keras():
    assert L.MaxPool1D is L.MaxPooling1D and K.MaxPool1D is K.MaxPooling1D
    assert L.AvgPool1D is L.AveragePooling1D and K.AvgPool1D is K.AveragePooling1D
    assert L.GlobalMaxPool1D is L.GlobalMaxPooling1D and K.GlobalMaxPool1D is K.GlobalMaxPooling1D
    assert L.GlobalMaxPool2D is L.GlobalMaxPooling2D and K.GlobalMaxPool2D is K.GlobalMaxPooling2D
    assert L.GlobalAvgPool1D is L.GlobalAveragePooling1D and \
        K.GlobalAvgPool1D is K.GlobalAveragePooling1D
    assert L.GlobalMaxPool3D is L.GlobalMaxPooling3D and K.GlobalMaxPool3D is K.GlobalMaxPooling3D
    # and the C++ layers' short names
    assert L.MaxPool2D is L.MaxPooling2D and K.MaxPool2D is K.MaxPooling2D
    assert L.AvgPool2D is L.AveragePooling2D and K.AvgPool2D is K.AveragePooling2D
    assert L.GlobalAvgPool2D is L.GlobalAveragePooling2D and \
        K.GlobalAvgPool2D is K.GlobalAveragePooling2D
    assert L.Convolution1D is L.Conv1D and K.Convolution1D is K.Conv1D
    assert L.Convolution2D is L.Conv2D and K.Convolution2D is K.Conv2D
    assert L.GlobalAvgPool3D is L.GlobalAveragePooling3D and \
        K.GlobalAvgPool3D is K.GlobalAveragePooling3D


def test_functional_merge_forms_match_keras():
    a, b, c = normal((3, 4), 80), normal((3, 4), 81), normal((3, 4), 82)

    def same(ours, theirs):
        ours = ours if isinstance(ours, np.ndarray) else npy(ours)
        np.testing.assert_allclose(ours, np.asarray(theirs), rtol=1e-6, atol=1e-6)

    same(L.add([a, b, c]), K.add([a, b, c]))
    same(L.subtract([a, b]), K.subtract([a, b]))
    same(L.multiply([a, b, c]), K.multiply([a, b, c]))
    same(L.average([a, b, c]), K.average([a, b, c]))
    same(L.maximum([a, b]), K.maximum([a, b]))
    same(L.minimum([a, b, c]), K.minimum([a, b, c]))
    same(L.concatenate([a, b], axis=1), K.concatenate([a, b], axis=1))
    same(L.dot([a, b], axes=1, normalize=True), K.dot([a, b], axes=1, normalize=True))
    # on keras.Input placeholders they build the same functional model
    inputs = [gk.Input((4,)), gk.Input((4,))]
    model = gk.Model(inputs, L.dot([L.maximum(inputs), L.subtract(inputs)], axes=-1))
    k_inputs = [keras.Input((4,)), keras.Input((4,))]
    k_model = keras.Model(k_inputs, K.dot([K.maximum(k_inputs), K.subtract(k_inputs)], axes=-1))
    same(model.predict([a, b], verbose=0), k_model.predict([a, b], verbose=0))


def test_functional_model_of_merges_repeat_and_identity_matches_keras():
    def model(lib):
        a, b = lib.Input((4,)), lib.Input((4,))
        da, db = lib.layers.Dense(3)(a), lib.layers.Dense(3)(b)
        merged = lib.layers.Average()([lib.layers.Maximum()([da, db]),
                                       lib.layers.Minimum()([da, db])])
        repeated = lib.layers.Identity()(lib.layers.RepeatVector(2)(merged))
        return lib.Model([a, b], lib.layers.Dense(1)(lib.layers.Flatten()(repeated)))

    ours, theirs = model(gk), model(keras)
    weights = [normal(w.shape, 60 + i) * 0.4 for i, w in enumerate(theirs.get_weights())]
    theirs.set_weights(weights)
    ours.set_weights(weights)
    xs = [normal((12, 4), 70), normal((12, 4), 71)]
    y = normal((12, 1), 72)
    np.testing.assert_allclose(ours.predict(xs, verbose=0), theirs.predict(xs, verbose=0),
                               rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(fit_history(gk, ours, xs, y), fit_history(keras, theirs, xs, y),
                               rtol=2e-4)


def test_keras_archives_of_python_written_layers_load_in_keras_and_back(tmp_path):
    def model(lib, layers):
        return lib.Sequential([
            lib.Input((6, 4, 2)), layers.ZeroPadding2D(((1, 0), (0, 1))), layers.Cropping2D(1),
            layers.UpSampling2D(), layers.ReLU(max_value=0.7, threshold=0.1),
            layers.GroupNormalization(groups=2), layers.GlobalMaxPooling2D(),
            layers.LeakyReLU(0.2), layers.Dense(3), layers.PReLU(), layers.RepeatVector(2),
            layers.Permute((2, 1)), layers.Softmax(axis=1), layers.GlobalAveragePooling1D()])

    ours, theirs = model(gk, L), model(keras, K)
    weights = [normal(w.shape, 90 + i) * 0.5 for i, w in enumerate(theirs.get_weights())]
    ours.set_weights(weights)
    theirs.set_weights(weights)
    x = normal((5, 6, 4, 2), 91)
    expected = theirs.predict(x, verbose=0)
    np.testing.assert_allclose(ours.predict(x, verbose=0), expected, rtol=1e-5, atol=1e-6)
    ours.save(tmp_path / "ours.keras")
    loaded_in_keras = keras.models.load_model(tmp_path / "ours.keras")
    assert type(loaded_in_keras.layers[3]) is K.ReLU  # the ClippedReLU saved as Keras's ReLU
    np.testing.assert_allclose(loaded_in_keras.predict(x, verbose=0), expected, rtol=1e-5,
                               atol=1e-6)
    theirs.save(tmp_path / "theirs.keras")
    loaded_here = gk.models.load_model(tmp_path / "theirs.keras")
    np.testing.assert_allclose(loaded_here.predict(x, verbose=0), expected, rtol=1e-5, atol=1e-6)


def test_a_lambda_is_not_written_to_a_keras_archive(tmp_path):
    model = gk.Sequential([gk.Input((3,)), L.Lambda(lambda x: x * 2.0), L.Dense(1)])
    with pytest.raises(NotImplementedError, match="save_weights"):
        model.save(tmp_path / "m.keras")


MIXED = [c for c in SINGLE_INPUT + MERGING if c[0] in (
    "ZeroPadding2D", "UpSampling2D", "GlobalMaxPooling1D", "LeakyReLU", "ReLU-all", "PReLU",
    "GroupNormalization", "Multiply", "Dot", "Softmax-axis1", "Lambda")]


@pytest.mark.parametrize("name,factory,shapes", MIXED, ids=case_ids(MIXED))
def test_mixed_float16_policy_gives_keras_dtypes_and_values(name, factory, shapes):
    shapes = shapes if isinstance(shapes, list) else [shapes]

    def made(m):
        layer = factory(m)
        layer.dtype_policy = "mixed_float16" if m is L else keras.DTypePolicy("mixed_float16")
        return layer

    ours, theirs = made(L), made(K)
    inputs = [normal(s, 30 + i) for i, s in enumerate(shapes)]
    theirs(inputs[0] if len(inputs) == 1 else inputs)  # builds it
    ours.build((None,) + shapes[0][1:] if len(shapes) == 1 else [(None,) + s[1:] for s in shapes])
    same_random_weights(ours, theirs)
    expected = theirs(inputs[0] if len(inputs) == 1 else inputs)
    got = ours(inputs[0] if len(inputs) == 1 else inputs)
    assert expected.dtype.name == "float16" and got._dtype_name == "float16"
    assert [w._dtype_name for w in ours.weights] == ["float32"] * len(theirs.weights)
    np.testing.assert_allclose(npy(got).astype(np.float32), np.asarray(expected, np.float32),
                               rtol=1e-2, atol=1e-2)


def test_adaptive_pooling_heads_match_keras():
    def model(lib, layers):
        images, sequences = lib.Input((7, 5, 2)), lib.Input((9, 3))
        pooled = [layers.AdaptiveAveragePooling2D((2, 2))(images),
                  layers.AdaptiveMaxPooling2D((3, 2))(images),
                  layers.AdaptiveAveragePooling1D(4)(sequences),
                  layers.AdaptiveMaxPooling1D(2)(sequences)]
        flat = layers.Concatenate()([layers.Flatten()(p) for p in pooled])
        return lib.Model([images, sequences], layers.Dense(2)(flat))

    ours, theirs = model(gk, L), model(keras, K)
    weights = [normal(w.shape, 50 + i) for i, w in enumerate(theirs.get_weights())]
    ours.set_weights(weights)
    theirs.set_weights(weights)
    xs = [normal((4, 7, 5, 2), 51), normal((4, 9, 3), 52)]
    np.testing.assert_allclose(ours.predict(xs, verbose=0), theirs.predict(xs, verbose=0),
                               rtol=1e-5, atol=1e-5)
