"""``gpuaccel.keras.ops`` against real ``keras.ops`` (TensorFlow backend): each name in the
table runs on the same inputs in both, and gives the same values, shape and dtype; where the op
has a gradient, GradientTape gives the same gradient of sum(output * cotangent) too. A name not
in gpuaccel.keras.ops raises an AttributeError that says so."""
import warnings

import numpy as np
import pytest

import gpuaccel as gt
from gpuaccel import keras as gk

keras = pytest.importorskip("keras")
tf = pytest.importorskip("tensorflow")

RNG = np.random.default_rng(7)
A = RNG.normal(size=(3, 4)).astype(np.float32)
B = RNG.normal(size=(3, 4)).astype(np.float32)
POSITIVE = (RNG.random((3, 4)) + 0.5).astype(np.float32)
M = RNG.normal(size=(4, 2)).astype(np.float32)
ROW = RNG.normal(size=(4,)).astype(np.float32)
LABELS = np.array([2, 0, 1, 2], np.int64)
WITH_TIES = np.array([[1.0, 3.0, 3.0], [-2.0, -2.0, -5.0]], np.float32)

# name, positional arguments (arrays are inputs; the first float array is differentiated),
# keyword arguments, whether the op has a gradient.
CASES = [
    ("matmul", (A, M), {}, True),
    ("add", (A, ROW), {}, True),
    ("subtract", (A, B), {}, True),
    ("multiply", (A, B), {}, True),
    ("divide", (A, POSITIVE), {}, True),
    ("maximum", (A, B), {}, True),
    ("minimum", (A, 0.1), {}, True),
    ("power", (POSITIVE, 1.5), {}, True),
    ("relu", (A,), {}, True),
    ("sigmoid", (A,), {}, True),
    ("tanh", (A,), {}, True),
    ("softmax", (A,), {}, True),
    ("softmax", (A,), {"axis": 0}, True),
    ("log_softmax", (A,), {}, True),
    ("square", (A,), {}, True),
    ("sqrt", (POSITIVE,), {}, True),
    ("exp", (A,), {}, True),
    ("log", (POSITIVE,), {}, True),
    ("abs", (A,), {}, True),
    ("negative", (A,), {}, True),
    ("clip", (A, -0.5, 0.5), {}, True),
    ("mean", (A,), {}, True),
    ("mean", (A,), {"axis": 1, "keepdims": True}, True),
    ("sum", (A,), {"axis": 0}, True),
    ("sum", (A,), {"axis": (0, 1)}, True),
    ("max", (A,), {"axis": -1}, True),
    ("min", (A,), {}, True),
    ("reshape", (A, (2, 6)), {}, True),
    ("reshape", (A, (-1,)), {}, True),
    ("transpose", (A,), {}, True),
    ("transpose", (A.reshape(3, 2, 2), (1, 0, 2)), {}, True),
    ("expand_dims", (A, 1), {}, True),
    ("squeeze", (A.reshape(3, 1, 4),), {}, True),
    ("squeeze", (A.reshape(3, 1, 4),), {"axis": 1}, True),
    ("broadcast_to", (ROW, (3, 4)), {}, True),
    ("norm", (A,), {}, True),
    ("norm", (A,), {"axis": -1}, True),
    ("norm", (A,), {"ord": 1, "axis": 0}, True),
    ("norm", (A,), {"ord": np.inf, "axis": 1, "keepdims": True}, False),
    ("cast", (A, "int32"), {}, False),
    ("cast", (LABELS, "float32"), {}, False),
    ("convert_to_tensor", (A,), {}, True),
    ("convert_to_tensor", ([[1, 2], [3, 4]],), {"dtype": "float32"}, False),
    ("equal", (WITH_TIES, 3.0), {}, False),
    ("not_equal", (A, B), {}, False),
    ("greater", (A, B), {}, False),
    ("greater_equal", (A, 0.0), {}, False),
    ("less", (A, B), {}, False),
    ("less_equal", (A, 0.0), {}, False),
    ("equal", (A > 0, True), {}, False),
    ("not_equal", (A > 0, B > 0), {}, False),
    ("logical_and", (A > 0, B > 0), {}, False),
    ("logical_or", (A > 0, B > 0), {}, False),
    ("logical_not", (A > 0,), {}, False),
    ("cast", (A, "bool"), {}, False),
    ("argmax", (A,), {}, False),
    ("argmax", (WITH_TIES,), {"axis": 1}, False),
    ("argmax", (A,), {"axis": 0, "keepdims": True}, False),
    ("argmin", (WITH_TIES,), {"axis": -1}, False),
    ("one_hot", (LABELS, 3), {}, False),
    ("one_hot", (LABELS, 3), {"axis": 0}, False),
    ("zeros", ((2, 3),), {}, False),
    ("ones", ((4,),), {"dtype": "int32"}, False),
    ("zeros_like", (A,), {}, False),
    ("ones_like", (A,), {"dtype": "float32"}, False),
]


def case_id(case):
    name, _, kwargs, _ = case
    return name + "".join(f"-{k}={v}" for k, v in kwargs.items())


def as_array(value):
    if isinstance(value, gt.Tensor):
        return np.asarray(gt.stop_gradient(value).numpy())
    return np.asarray(value)


def dtype_name(value):
    return str(getattr(value.dtype, "name", value.dtype))


@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_forward_matches_keras(case):
    name, args, kwargs, _ = case
    theirs = getattr(keras.ops, name)(*args, **kwargs)
    ours = getattr(gk.ops, name)(*args, **kwargs)
    assert tuple(ours.shape) == tuple(theirs.shape)
    assert dtype_name(ours) == dtype_name(theirs), (dtype_name(ours), dtype_name(theirs))
    np.testing.assert_allclose(as_array(ours), as_array(theirs), rtol=1e-5, atol=1e-6)


def _differentiated(args):
    return next(i for i, a in enumerate(args) if isinstance(a, np.ndarray)
                and a.dtype == np.float32)


@pytest.mark.parametrize("case", [c for c in CASES if c[3]], ids=case_id)
def test_gradient_matches_keras(case):
    name, args, kwargs, _ = case
    i = _differentiated(args)
    theirs_out = getattr(keras.ops, name)(*args, **kwargs)
    cotangent = RNG.normal(size=tuple(theirs_out.shape)).astype(np.float32)

    variable = tf.Variable(args[i])
    with tf.GradientTape() as tape:
        out = getattr(keras.ops, name)(*args[:i], variable, *args[i + 1:], **kwargs)
        loss = tf.reduce_sum(out * cotangent)
    expected = tape.gradient(loss, variable).numpy()

    watched = gt.constant(args[i])
    with gt.GradientTape() as tape:
        tape.watch(watched)
        out = getattr(gk.ops, name)(*args[:i], watched, *args[i + 1:], **kwargs)
        loss = gt.reduce_sum(out * gt.constant(cotangent))
    np.testing.assert_allclose(as_array(tape.gradient(loss, watched)), expected, rtol=1e-5,
                               atol=1e-6)


def test_shape_is_a_tuple_of_ints_and_stack_concatenate_where_take_lists():
    assert gk.ops.shape(gt.constant(A)) == keras.ops.shape(A) == (3, 4)
    for name, kwargs in (("concatenate", {}), ("concatenate", {"axis": 1}),
                         ("stack", {}), ("stack", {"axis": -1})):
        ours = getattr(gk.ops, name)([A, gt.constant(B)], **kwargs)
        theirs = getattr(keras.ops, name)([A, B], **kwargs)
        np.testing.assert_array_equal(as_array(ours), as_array(theirs))
    condition = A > B
    np.testing.assert_array_equal(as_array(gk.ops.where(condition, A, B)),
                                  as_array(keras.ops.where(condition, A, B)))
    for lib in (keras, gk):
        with pytest.raises(ValueError, match="both should be `None`"):
            lib.ops.where(condition, A)


def test_a_custom_layer_written_with_keras_ops_trains_as_in_keras():
    """The Keras guides' Linear layer, written with keras.ops in both libraries."""
    def linear_class(lib):
        class Linear(lib.layers.Layer):
            def __init__(self, units=3, **kwargs):
                super().__init__(**kwargs)
                self.units = units

            def build(self, input_shape):
                self.w = self.add_weight(shape=(input_shape[-1], self.units),
                                         initializer="random_normal")
                self.b = self.add_weight(shape=(self.units,), initializer="zeros")

            def call(self, inputs):
                return lib.ops.relu(lib.ops.add(lib.ops.matmul(inputs, self.w), self.b))
        return Linear

    models = []
    for lib in (keras, gk):
        model = lib.Sequential([lib.Input((4,)), linear_class(lib)(5), lib.layers.Dense(1)])
        model.compile("sgd", "mse")
        models.append(model)
    models[1].set_weights(models[0].get_weights())
    x = RNG.normal(size=(16, 4)).astype(np.float32)
    y = RNG.normal(size=(16, 1)).astype(np.float32)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        histories = [m.fit(x, y, batch_size=8, epochs=2, shuffle=False, verbose=0)
                     .history["loss"] for m in models]
    np.testing.assert_allclose(histories[1], histories[0], rtol=1e-5)
    # keras.ops record like the functions they call: the layer's call was traced, not eager
    assert not [w for w in caught if "runs its Python call()" in str(w.message)]


def test_a_name_keras_ops_has_but_gpuaccel_lacks_says_so():
    assert hasattr(keras.ops, "fft")
    with pytest.raises(AttributeError, match=r"keras\.ops\.fft is not supported by gpuaccel"):
        gk.ops.fft  # noqa: B018
    assert not hasattr(gk.ops, "fft")
