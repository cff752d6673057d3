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

# Keras's op, gpuaccel's, positional arguments (arrays are inputs; the first float array is
# differentiated), keyword arguments, whether the op has a gradient.
CASES = [
    (keras.ops.matmul, gk.ops.matmul, (A, M), {}, True),
    (keras.ops.add, gk.ops.add, (A, ROW), {}, True),
    (keras.ops.subtract, gk.ops.subtract, (A, B), {}, True),
    (keras.ops.multiply, gk.ops.multiply, (A, B), {}, True),
    (keras.ops.divide, gk.ops.divide, (A, POSITIVE), {}, True),
    (keras.ops.maximum, gk.ops.maximum, (A, B), {}, True),
    (keras.ops.minimum, gk.ops.minimum, (A, 0.1), {}, True),
    (keras.ops.power, gk.ops.power, (POSITIVE, 1.5), {}, True),
    (keras.ops.relu, gk.ops.relu, (A,), {}, True),
    (keras.ops.sigmoid, gk.ops.sigmoid, (A,), {}, True),
    (keras.ops.tanh, gk.ops.tanh, (A,), {}, True),
    (keras.ops.softmax, gk.ops.softmax, (A,), {}, True),
    (keras.ops.softmax, gk.ops.softmax, (A,), {"axis": 0}, True),
    (keras.ops.log_softmax, gk.ops.log_softmax, (A,), {}, True),
    (keras.ops.square, gk.ops.square, (A,), {}, True),
    (keras.ops.sqrt, gk.ops.sqrt, (POSITIVE,), {}, True),
    (keras.ops.exp, gk.ops.exp, (A,), {}, True),
    (keras.ops.log, gk.ops.log, (POSITIVE,), {}, True),
    (keras.ops.abs, gk.ops.abs, (A,), {}, True),
    (keras.ops.negative, gk.ops.negative, (A,), {}, True),
    (keras.ops.clip, gk.ops.clip, (A, -0.5, 0.5), {}, True),
    (keras.ops.mean, gk.ops.mean, (A,), {}, True),
    (keras.ops.mean, gk.ops.mean, (A,), {"axis": 1, "keepdims": True}, True),
    (keras.ops.sum, gk.ops.sum, (A,), {"axis": 0}, True),
    (keras.ops.sum, gk.ops.sum, (A,), {"axis": (0, 1)}, True),
    (keras.ops.max, gk.ops.max, (A,), {"axis": -1}, True),
    (keras.ops.min, gk.ops.min, (A,), {}, True),
    (keras.ops.reshape, gk.ops.reshape, (A, (2, 6)), {}, True),
    (keras.ops.reshape, gk.ops.reshape, (A, (-1,)), {}, True),
    (keras.ops.transpose, gk.ops.transpose, (A,), {}, True),
    (keras.ops.transpose, gk.ops.transpose, (A.reshape(3, 2, 2), (1, 0, 2)), {}, True),
    (keras.ops.expand_dims, gk.ops.expand_dims, (A, 1), {}, True),
    (keras.ops.squeeze, gk.ops.squeeze, (A.reshape(3, 1, 4),), {}, True),
    (keras.ops.squeeze, gk.ops.squeeze, (A.reshape(3, 1, 4),), {"axis": 1}, True),
    (keras.ops.broadcast_to, gk.ops.broadcast_to, (ROW, (3, 4)), {}, True),
    (keras.ops.norm, gk.ops.norm, (A,), {}, True),
    (keras.ops.norm, gk.ops.norm, (A,), {"axis": -1}, True),
    (keras.ops.norm, gk.ops.norm, (A,), {"ord": 1, "axis": 0}, True),
    (keras.ops.norm, gk.ops.norm, (A,), {"ord": np.inf, "axis": 1, "keepdims": True}, False),
    (keras.ops.cast, gk.ops.cast, (A, "int32"), {}, False),
    (keras.ops.cast, gk.ops.cast, (LABELS, "float32"), {}, False),
    (keras.ops.convert_to_tensor, gk.ops.convert_to_tensor, (A,), {}, True),
    (keras.ops.convert_to_tensor, gk.ops.convert_to_tensor, ([[1, 2], [3, 4]],),
     {"dtype": "float32"}, False),
    (keras.ops.equal, gk.ops.equal, (WITH_TIES, 3.0), {}, False),
    (keras.ops.not_equal, gk.ops.not_equal, (A, B), {}, False),
    (keras.ops.greater, gk.ops.greater, (A, B), {}, False),
    (keras.ops.greater_equal, gk.ops.greater_equal, (A, 0.0), {}, False),
    (keras.ops.less, gk.ops.less, (A, B), {}, False),
    (keras.ops.less_equal, gk.ops.less_equal, (A, 0.0), {}, False),
    (keras.ops.equal, gk.ops.equal, (A > 0, True), {}, False),
    (keras.ops.not_equal, gk.ops.not_equal, (A > 0, B > 0), {}, False),
    (keras.ops.logical_and, gk.ops.logical_and, (A > 0, B > 0), {}, False),
    (keras.ops.logical_or, gk.ops.logical_or, (A > 0, B > 0), {}, False),
    (keras.ops.logical_not, gk.ops.logical_not, (A > 0,), {}, False),
    (keras.ops.cast, gk.ops.cast, (A, "bool"), {}, False),
    (keras.ops.argmax, gk.ops.argmax, (A,), {}, False),
    (keras.ops.argmax, gk.ops.argmax, (WITH_TIES,), {"axis": 1}, False),
    (keras.ops.argmax, gk.ops.argmax, (A,), {"axis": 0, "keepdims": True}, False),
    (keras.ops.argmin, gk.ops.argmin, (WITH_TIES,), {"axis": -1}, False),
    (keras.ops.one_hot, gk.ops.one_hot, (LABELS, 3), {}, False),
    (keras.ops.one_hot, gk.ops.one_hot, (LABELS, 3), {"axis": 0}, False),
    (keras.ops.zeros, gk.ops.zeros, ((2, 3),), {}, False),
    (keras.ops.ones, gk.ops.ones, ((4,),), {"dtype": "int32"}, False),
    (keras.ops.zeros_like, gk.ops.zeros_like, (A,), {}, False),
    (keras.ops.ones_like, gk.ops.ones_like, (A,), {"dtype": "float32"}, False),
]


def case_id(case):
    theirs, _, _, kwargs, _ = case
    return theirs.__name__ + "".join(f"-{k}={v}" for k, v in kwargs.items())


def as_array(value):
    if isinstance(value, gt.Tensor):
        return np.asarray(gt.stop_gradient(value).numpy())
    return np.asarray(value)


def dtype_name(value):
    return str(getattr(value.dtype, "name", value.dtype))


@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_forward_matches_keras(case):
    theirs_op, ours_op, args, kwargs, _ = case
    theirs = theirs_op(*args, **kwargs)
    ours = ours_op(*args, **kwargs)
    assert tuple(ours.shape) == tuple(theirs.shape)
    assert dtype_name(ours) == dtype_name(theirs), (dtype_name(ours), dtype_name(theirs))
    np.testing.assert_allclose(as_array(ours), as_array(theirs), rtol=1e-5, atol=1e-6)


def _differentiated(args):
    return next(i for i, a in enumerate(args) if isinstance(a, np.ndarray)
                and a.dtype == np.float32)


@pytest.mark.parametrize("case", [c for c in CASES if c[4]], ids=case_id)
def test_gradient_matches_keras(case):
    theirs_op, ours_op, args, kwargs, _ = case
    i = _differentiated(args)
    theirs_out = theirs_op(*args, **kwargs)
    cotangent = RNG.normal(size=tuple(theirs_out.shape)).astype(np.float32)

    variable = tf.Variable(args[i])
    with tf.GradientTape() as tape:
        out = theirs_op(*args[:i], variable, *args[i + 1:], **kwargs)
        loss = tf.reduce_sum(out * cotangent)
    expected = tape.gradient(loss, variable).numpy()

    watched = gt.constant(args[i])
    with gt.GradientTape() as tape:
        tape.watch(watched)
        out = ours_op(*args[:i], watched, *args[i + 1:], **kwargs)
        loss = gt.reduce_sum(out * gt.constant(cotangent))
    np.testing.assert_allclose(as_array(tape.gradient(loss, watched)), expected, rtol=1e-5,
                               atol=1e-6)


def test_shape_is_a_tuple_of_ints_and_stack_concatenate_where_take_lists():
    assert gk.ops.shape(gt.constant(A)) == keras.ops.shape(A) == (3, 4)
    for theirs_op, ours_op, kwargs in (
            (keras.ops.concatenate, gk.ops.concatenate, {}),
            (keras.ops.concatenate, gk.ops.concatenate, {"axis": 1}),
            (keras.ops.stack, gk.ops.stack, {}), (keras.ops.stack, gk.ops.stack, {"axis": -1})):
        ours = ours_op([A, gt.constant(B)], **kwargs)
        theirs = theirs_op([A, B], **kwargs)
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

    keras.utils.set_random_seed(0)
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
