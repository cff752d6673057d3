"""``gpuaccel.keras.ops`` against real ``keras.ops`` (TensorFlow backend): each name in the
table runs on the same inputs in both, and gives the same values, shape and dtype; where the op
has a gradient, GradientTape gives the same gradient of sum(output * cotangent) too. A name not
in gpuaccel.keras.ops raises an AttributeError that says so."""
import warnings

import numpy as np
import pytest

import gpuaccel as gt
from tf_comparison import (as_array, assert_forward_matches, assert_gradient_matches,
                           dtype_name)
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
INTS = np.array([[-7, 4, 0, 9], [3, -2, 5, 1]], np.int32)
HALVES = np.array([[-2.5, -1.5, -0.5, 0.5], [1.5, 2.5, -1.2, 3.7]], np.float32)
UNIT = (RNG.random((3, 4)) * 1.6 - 0.8).astype(np.float32)
WITH_ZEROS = np.where(RNG.random((3, 4)) < 0.3, 0.0, RNG.normal(size=(3, 4))).astype(np.float32)
SPECIAL = np.array([1.0, np.nan, np.inf, -np.inf, 0.0], np.float32)
TARGETS = (B > 0).astype(np.float32).tolist()  # a list: the gradient is the prediction's
ONE_HOT = np.eye(4, dtype=np.float32)[[1, 3, 0]]
IMAGES = RNG.normal(size=(2, 4, 4, 3)).astype(np.float32)
KERNEL = RNG.normal(size=(3, 3, 3, 2)).astype(np.float32)
POINTWISE = RNG.normal(size=(1, 1, 6, 4)).astype(np.float32)
QUERY = RNG.normal(size=(2, 3, 2, 4)).astype(np.float32)  # (batch, time, heads, head_dim)
KEY = RNG.normal(size=(2, 5, 2, 4)).astype(np.float32)
ATTENTION_MASK = RNG.random((2, 2, 3, 5)) < 0.7

def on_tf_tensors(keras_op):
    """``keras_op`` with its NumPy arguments made TF tensors first (Keras's adaptive pools
    read ``.shape.as_list()``, which NumPy arrays lack)."""
    def op(*args, **kwargs):
        return keras_op(*(tf.constant(a) if isinstance(a, np.ndarray) else a for a in args),
                        **kwargs)
    op.__name__ = keras_op.__name__
    return op


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
    # element-wise math (the tf.math composites, under NumPy's names)
    (keras.ops.absolute, gk.ops.absolute, (A,), {}, True),
    (keras.ops.absolute, gk.ops.absolute, (INTS,), {}, False),
    (keras.ops.fabs, gk.ops.fabs, (A,), {}, True),
    (keras.ops.sign, gk.ops.sign, (A,), {}, False),
    (keras.ops.sign, gk.ops.sign, (INTS,), {}, False),
    (keras.ops.floor, gk.ops.floor, (HALVES,), {}, False),
    (keras.ops.floor, gk.ops.floor, (INTS,), {}, False),
    (keras.ops.ceil, gk.ops.ceil, (HALVES,), {}, False),
    (keras.ops.trunc, gk.ops.trunc, (HALVES,), {}, False),
    (keras.ops.round, gk.ops.round, (HALVES,), {}, False),
    (keras.ops.round, gk.ops.round, (A,), {"decimals": 2}, False),
    (keras.ops.sinh, gk.ops.sinh, (A,), {}, True),
    (keras.ops.cosh, gk.ops.cosh, (A,), {}, True),
    (keras.ops.arcsinh, gk.ops.arcsinh, (A,), {}, True),
    (keras.ops.arccosh, gk.ops.arccosh, (POSITIVE + 1.0,), {}, True),
    (keras.ops.arctanh, gk.ops.arctanh, (UNIT,), {}, True),
    (keras.ops.log1p, gk.ops.log1p, (POSITIVE,), {}, True),
    (keras.ops.expm1, gk.ops.expm1, (A,), {}, True),
    (keras.ops.log2, gk.ops.log2, (POSITIVE,), {}, True),
    (keras.ops.log10, gk.ops.log10, (POSITIVE,), {}, True),
    (keras.ops.exp2, gk.ops.exp2, (A,), {}, True),
    (keras.ops.cbrt, gk.ops.cbrt, (A,), {}, True),
    (keras.ops.erf, gk.ops.erf, (A,), {}, True),
    (keras.ops.erfc, gk.ops.erfc, (A,), {}, True),
    (keras.ops.reciprocal, gk.ops.reciprocal, (POSITIVE,), {}, True),
    (keras.ops.rsqrt, gk.ops.rsqrt, (POSITIVE,), {}, True),
    (keras.ops.deg2rad, gk.ops.deg2rad, (A,), {}, True),
    (keras.ops.rad2deg, gk.ops.rad2deg, (A,), {}, True),
    (keras.ops.true_divide, gk.ops.true_divide, (A, POSITIVE), {}, True),
    (keras.ops.floor_divide, gk.ops.floor_divide, (A, POSITIVE), {}, False),
    (keras.ops.floor_divide, gk.ops.floor_divide, (INTS, 3), {}, False),
    (keras.ops.mod, gk.ops.mod, (A, POSITIVE), {}, False),
    (keras.ops.mod, gk.ops.mod, (INTS, 3), {}, False),
    (keras.ops.fmod, gk.ops.fmod, (INTS, 3), {}, False),
    (keras.ops.fmod, gk.ops.fmod, (A, POSITIVE), {}, False),
    (keras.ops.divide_no_nan, gk.ops.divide_no_nan, (A, WITH_ZEROS), {}, True),
    (keras.ops.logaddexp, gk.ops.logaddexp, (A, B), {}, True),
    (keras.ops.hypot, gk.ops.hypot, (A, B), {}, True),
    (keras.ops.heaviside, gk.ops.heaviside, (WITH_ZEROS, 0.5), {}, False),
    (keras.ops.logical_xor, gk.ops.logical_xor, (A > 0, B > 0), {}, False),
    (keras.ops.isnan, gk.ops.isnan, (SPECIAL,), {}, False),
    (keras.ops.isfinite, gk.ops.isfinite, (SPECIAL,), {}, False),
    (keras.ops.isinf, gk.ops.isinf, (SPECIAL,), {}, False),
    (keras.ops.isclose, gk.ops.isclose, (A, A + 1e-6), {}, False),
    (keras.ops.allclose, gk.ops.allclose, (A, B), {}, False),
    # activations
    (keras.ops.elu, gk.ops.elu, (A,), {"alpha": 0.5}, True),
    (keras.ops.celu, gk.ops.celu, (A,), {}, True),
    (keras.ops.selu, gk.ops.selu, (A,), {}, True),
    (keras.ops.gelu, gk.ops.gelu, (A,), {}, True),
    (keras.ops.gelu, gk.ops.gelu, (A,), {"approximate": False}, True),
    (keras.ops.glu, gk.ops.glu, (A,), {}, True),
    (keras.ops.silu, gk.ops.silu, (A,), {}, True),
    (keras.ops.swish, gk.ops.swish, (A,), {}, True),
    (keras.ops.hard_sigmoid, gk.ops.hard_sigmoid, (A * 4,), {}, True),
    (keras.ops.hard_silu, gk.ops.hard_silu, (A * 4,), {}, True),
    (keras.ops.hard_swish, gk.ops.hard_swish, (A * 4,), {}, True),
    (keras.ops.hard_tanh, gk.ops.hard_tanh, (A * 2,), {}, True),
    (keras.ops.hard_shrink, gk.ops.hard_shrink, (A,), {}, True),
    (keras.ops.soft_shrink, gk.ops.soft_shrink, (A,), {}, True),
    (keras.ops.tanh_shrink, gk.ops.tanh_shrink, (A,), {}, True),
    (keras.ops.leaky_relu, gk.ops.leaky_relu, (A,), {"negative_slope": 0.1}, True),
    (keras.ops.log_sigmoid, gk.ops.log_sigmoid, (A,), {}, True),
    (keras.ops.relu6, gk.ops.relu6, (A * 8,), {}, True),
    (keras.ops.softplus, gk.ops.softplus, (A,), {}, True),
    (keras.ops.softsign, gk.ops.softsign, (A,), {}, True),
    (keras.ops.squareplus, gk.ops.squareplus, (A,), {}, True),
    (keras.ops.sparse_plus, gk.ops.sparse_plus, (A,), {}, True),
    (keras.ops.threshold, gk.ops.threshold, (A, 0.1, -1.0), {}, True),
    # reductions
    (keras.ops.all, gk.ops.all, (A > -1,), {"axis": 1}, False),
    (keras.ops.any, gk.ops.any, (A > 1,), {}, False),
    (keras.ops.any, gk.ops.any, (A > 1,), {"axis": 0, "keepdims": True}, False),
    (keras.ops.amax, gk.ops.amax, (A,), {"axis": 0}, True),
    (keras.ops.amin, gk.ops.amin, (A,), {"axis": (0, 1)}, True),
    (keras.ops.prod, gk.ops.prod, (A,), {"axis": 1}, False),
    (keras.ops.var, gk.ops.var, (A,), {"axis": 0}, True),
    (keras.ops.std, gk.ops.std, (A,), {}, True),
    (keras.ops.std, gk.ops.std, (INTS,), {"axis": -1, "keepdims": True}, False),
    (keras.ops.logsumexp, gk.ops.logsumexp, (A,), {"axis": 1}, True),
    (keras.ops.count_nonzero, gk.ops.count_nonzero, (WITH_ZEROS,), {"axis": 0}, False),
    (keras.ops.cumsum, gk.ops.cumsum, (A,), {}, True),
    (keras.ops.cumsum, gk.ops.cumsum, (A,), {"axis": 1}, True),
    (keras.ops.cumsum, gk.ops.cumsum, (INTS,), {"axis": 0}, False),
    (keras.ops.cumsum, gk.ops.cumsum, (A > 0,), {"axis": 1}, False),
    (keras.ops.sum, gk.ops.sum, (INTS,), {"axis": 1}, False),
    (keras.ops.sum, gk.ops.sum, (A > 0,), {}, False),
    (keras.ops.trace, gk.ops.trace, (INTS,), {}, False),
    (keras.ops.power, gk.ops.power, (INTS, 2), {}, False),
    (keras.ops.full, gk.ops.full, ((2, 2), 3), {}, False),
    (keras.ops.cumprod, gk.ops.cumprod, (A,), {"axis": -1}, True),
    (keras.ops.ptp, gk.ops.ptp, (A,), {"axis": 1}, True),
    (keras.ops.average, gk.ops.average, (A,), {"axis": 1, "weights": ROW}, True),
    (keras.ops.normalize, gk.ops.normalize, (A,), {}, True),
    (keras.ops.trace, gk.ops.trace, (A,), {"offset": 1}, True),
    (keras.ops.in_top_k, gk.ops.in_top_k, (LABELS[:3], A, 2), {}, False),
    (keras.ops.segment_sum, gk.ops.segment_sum, (A, np.array([0, 0, 2])), {"num_segments": 3},
     True),
    # shapes and arrays
    (keras.ops.flip, gk.ops.flip, (A,), {"axis": 1}, True),
    (keras.ops.flip, gk.ops.flip, (A,), {}, True),
    (keras.ops.fliplr, gk.ops.fliplr, (A,), {}, True),
    (keras.ops.flipud, gk.ops.flipud, (A,), {}, True),
    (keras.ops.roll, gk.ops.roll, (A, 1), {"axis": 1}, True),
    (keras.ops.roll, gk.ops.roll, (A, -5), {}, True),
    (keras.ops.rot90, gk.ops.rot90, (A,), {}, True),
    (keras.ops.rot90, gk.ops.rot90, (A, 3), {}, True),
    (keras.ops.tril, gk.ops.tril, (A,), {}, True),
    (keras.ops.triu, gk.ops.triu, (A,), {"k": 1}, True),
    (keras.ops.tril, gk.ops.tril, (INTS,), {"k": -1}, False),
    (keras.ops.diag, gk.ops.diag, (A,), {"k": 1}, True),
    (keras.ops.diag, gk.ops.diag, (ROW,), {"k": -1}, True),
    (keras.ops.diagflat, gk.ops.diagflat, (ROW[:3],), {}, True),
    (keras.ops.diagonal, gk.ops.diagonal, (A.reshape(3, 2, 2),), {"axis1": 1, "axis2": 2}, True),
    (keras.ops.moveaxis, gk.ops.moveaxis, (A.reshape(3, 2, 2), 0, -1), {}, True),
    (keras.ops.swapaxes, gk.ops.swapaxes, (A.reshape(3, 2, 2), 0, 2), {}, True),
    (keras.ops.repeat, gk.ops.repeat, (A, 2), {"axis": 1}, True),
    (keras.ops.repeat, gk.ops.repeat, (A, 2), {}, True),
    (keras.ops.tile, gk.ops.tile, (A, (2, 1)), {}, True),
    (keras.ops.tile, gk.ops.tile, (ROW, (2, 2)), {}, True),
    (keras.ops.outer, gk.ops.outer, (ROW, A[0]), {}, True),
    (keras.ops.inner, gk.ops.inner, (A, B), {}, True),
    (keras.ops.vdot, gk.ops.vdot, (A, B), {}, True),
    (keras.ops.dot, gk.ops.dot, (A, M), {}, True),
    (keras.ops.dot, gk.ops.dot, (A, ROW), {}, True),
    (keras.ops.tensordot, gk.ops.tensordot, (A, M), {"axes": 1}, True),
    (keras.ops.kron, gk.ops.kron, (A, M), {}, True),
    (keras.ops.ravel, gk.ops.ravel, (A,), {}, True),
    (keras.ops.diff, gk.ops.diff, (A,), {}, True),
    (keras.ops.diff, gk.ops.diff, (A,), {"n": 2, "axis": 0}, True),
    (keras.ops.append, gk.ops.append, (A, B), {"axis": 0}, True),
    (keras.ops.append, gk.ops.append, (A, ROW), {}, True),
    (keras.ops.take, gk.ops.take, (A, np.array([2, 0, -1])), {"axis": 1}, True),
    (keras.ops.take, gk.ops.take, (A, np.array([[5, 1]])), {}, True),
    (keras.ops.take_along_axis, gk.ops.take_along_axis, (A, np.array([[0], [3], [1]])),
     {"axis": 1}, True),
    (keras.ops.pad, gk.ops.pad, (A, ((1, 0), (0, 2))), {}, True),
    (keras.ops.pad, gk.ops.pad, (A, ((1, 1), (2, 0))), {"constant_values": 5.0}, True),
    (keras.ops.searchsorted, gk.ops.searchsorted, (np.sort(ROW), B[0]), {}, False),
    (keras.ops.searchsorted, gk.ops.searchsorted, (np.sort(ROW), np.sort(ROW)),
     {"side": "right"}, False),
    (keras.ops.digitize, gk.ops.digitize, (A, np.sort(ROW)), {}, False),
    (keras.ops.isin, gk.ops.isin, (INTS, np.array([1, 4, 9])), {}, False),
    (keras.ops.multi_hot, gk.ops.multi_hot, (np.array([[0, 2], [1, 1]]), 4), {}, False),
    (keras.ops.einsum, gk.ops.einsum, ("ij,jk->ik", A, M), {}, True),
    (keras.ops.hstack, gk.ops.hstack, ((A, B),), {}, False),
    (keras.ops.vstack, gk.ops.vstack, ((ROW, ROW),), {}, False),
    (keras.ops.dstack, gk.ops.dstack, ((A, B),), {}, False),
    (keras.ops.copy, gk.ops.copy, (A,), {}, True),
    (keras.ops.stop_gradient, gk.ops.stop_gradient, (A,), {}, False),
    (keras.ops.array, gk.ops.array, (A,), {}, False),
    (keras.ops.slice, gk.ops.slice, (A, (1, 0), (2, 3)), {}, True),
    (keras.ops.slice_update, gk.ops.slice_update, (A, (1, 2), B[:2, :2]), {}, False),
    (keras.ops.get_item, gk.ops.get_item, (A, 1), {}, True),
    (keras.ops.extract_sequences, gk.ops.extract_sequences, (A, 2, 1), {}, True),
    (keras.ops.trapezoid, gk.ops.trapezoid, (A,), {}, True),
    (keras.ops.trapezoid, gk.ops.trapezoid, (A,), {"x": np.sort(ROW)}, True),
    (keras.ops.trapezoid, gk.ops.trapezoid, (A,), {"dx": 0.5, "axis": 0}, True),
    (keras.ops.vander, gk.ops.vander, (ROW,), {}, True),
    (keras.ops.vander, gk.ops.vander, (ROW[:3],), {"N": 4, "increasing": True}, True),
    (keras.ops.cdist, gk.ops.cdist, (A, B), {}, True),
    (keras.ops.corrcoef, gk.ops.corrcoef, (A,), {}, True),
    (keras.ops.cross, gk.ops.cross, (A[:, :3], B[:, :3]), {}, True),
    (keras.ops.select, gk.ops.select, ([A > 0.5, A < -0.5], [A, B]), {}, False),
    (keras.ops.select, gk.ops.select, ([A > 0.5], [A]), {"default": 2.0}, False),
    (keras.ops.isposinf, gk.ops.isposinf, (SPECIAL,), {}, False),
    (keras.ops.isneginf, gk.ops.isneginf, (SPECIAL,), {}, False),
    (keras.ops.signbit, gk.ops.signbit, (np.append(SPECIAL, np.float32(-0.0)),), {}, False),
    (keras.ops.signbit, gk.ops.signbit, (INTS,), {}, False),
    (keras.ops.ldexp, gk.ops.ldexp, (A, INTS[0]), {}, True),
    (keras.ops.logaddexp2, gk.ops.logaddexp2, (A, B), {}, True),
    (keras.ops.saturate_cast, gk.ops.saturate_cast, (A * 1000, "uint8"), {}, False),
    (keras.ops.saturate_cast, gk.ops.saturate_cast, (np.float32([2e9, -3e9, 1.5]), "int32"), {},
     False),
    (keras.ops.bincount, gk.ops.bincount, (LABELS,), {"minlength": 5}, False),
    (keras.ops.bincount, gk.ops.bincount, (LABELS,), {"weights": ROW}, False),
    (keras.ops.segment_max, gk.ops.segment_max, (A, np.array([0, 0, 1])), {}, True),
    (keras.ops.segment_min, gk.ops.segment_min, (A, np.array([1, 0, 1])), {"num_segments": 2},
     True),
    # losses, normalizations, layer maths
    (keras.ops.binary_crossentropy, gk.ops.binary_crossentropy, (TARGETS, 0.98 * UNIT / 1.6 + 0.5),
     {}, True),
    (keras.ops.binary_crossentropy, gk.ops.binary_crossentropy, (TARGETS, B),
     {"from_logits": True}, True),
    (keras.ops.categorical_crossentropy, gk.ops.categorical_crossentropy, (ONE_HOT, POSITIVE),
     {}, True),
    (keras.ops.categorical_crossentropy, gk.ops.categorical_crossentropy, (ONE_HOT, A),
     {"from_logits": True}, True),
    (keras.ops.layer_normalization, gk.ops.layer_normalization, (A, ROW, ROW * 2), {}, True),
    (keras.ops.layer_normalization, gk.ops.layer_normalization, (A,), {"epsilon": 1e-5}, True),
    (keras.ops.rms_normalization, gk.ops.rms_normalization, (A, ROW), {}, True),
    (keras.ops.batch_normalization, gk.ops.batch_normalization,
     (A, ROW, POSITIVE[0], -1), {"offset": B[0], "scale": B[1]}, True),
    (keras.ops.psnr, gk.ops.psnr, (POSITIVE, POSITIVE + 0.1 * A, 2.0), {}, True),
    (keras.ops.conv, gk.ops.conv, (IMAGES, KERNEL), {}, True),
    (keras.ops.conv, gk.ops.conv, (IMAGES, KERNEL), {"strides": 2, "padding": "same"}, True),
    (keras.ops.max_pool, gk.ops.max_pool, (IMAGES, 2), {}, True),
    (keras.ops.average_pool, gk.ops.average_pool, (IMAGES, 3), {"strides": 1,
                                                                "padding": "same"}, True),
    (on_tf_tensors(keras.ops.adaptive_average_pool), gk.ops.adaptive_average_pool, (IMAGES, 3),
     {}, True),
    (on_tf_tensors(keras.ops.adaptive_max_pool), gk.ops.adaptive_max_pool, (IMAGES, (2, 3)),
     {}, True),
    (on_tf_tensors(keras.ops.adaptive_max_pool), gk.ops.adaptive_max_pool,
     (A.reshape(1, 4, 3), 2), {}, True),
    (keras.ops.depthwise_conv, gk.ops.depthwise_conv, (IMAGES, KERNEL), {}, True),
    (keras.ops.depthwise_conv, gk.ops.depthwise_conv, (IMAGES, KERNEL[:2, :2]),
     {"strides": 2, "padding": "same"}, True),
    (keras.ops.separable_conv, gk.ops.separable_conv, (IMAGES, KERNEL, POINTWISE), {}, True),
    (keras.ops.space_to_depth, gk.ops.space_to_depth, (IMAGES, 2), {}, True),
    (keras.ops.depth_to_space, gk.ops.depth_to_space, (IMAGES.reshape(2, 2, 2, 12), 2), {},
     True),
    (keras.ops.dot_product_attention, gk.ops.dot_product_attention, (QUERY, KEY, KEY), {}, True),
    (keras.ops.dot_product_attention, gk.ops.dot_product_attention, (QUERY, KEY, KEY),
     {"is_causal": True, "scale": 0.3}, True),
    (keras.ops.dot_product_attention, gk.ops.dot_product_attention, (QUERY, KEY, KEY),
     {"mask": ATTENTION_MASK}, True),
    (keras.ops.erfinv, gk.ops.erfinv, (UNIT,), {}, True),
    (keras.ops.erfinv, gk.ops.erfinv, (np.float32([-0.999999, -0.99, 0.0, 0.5, 0.9999]),), {},
     False),
    (keras.ops.isreal, gk.ops.isreal, (A,), {}, False),
    (keras.ops.associative_scan, gk.ops.associative_scan, (lambda a, b: a + b, A), {}, True),
    (keras.ops.associative_scan, gk.ops.associative_scan, (lambda a, b: a * b, A),
     {"axis": 1, "reverse": True}, True),
    # windows
    (keras.ops.bartlett, gk.ops.bartlett, (7,), {}, False),
    (keras.ops.blackman, gk.ops.blackman, (7,), {}, False),
    (keras.ops.hamming, gk.ops.hamming, (6,), {}, False),
    (keras.ops.hanning, gk.ops.hanning, (6,), {}, False),
    (keras.ops.kaiser, gk.ops.kaiser, (5, 2.5), {}, False),
    # creation
    (keras.ops.geomspace, gk.ops.geomspace, (1.0, 100.0, 5), {}, False),
    (keras.ops.arange, gk.ops.arange, (5,), {}, False),
    (keras.ops.arange, gk.ops.arange, (1, 2, 0.25), {}, False),
    (keras.ops.linspace, gk.ops.linspace, (0.0, 1.0, 5), {}, False),
    (keras.ops.logspace, gk.ops.logspace, (0.0, 2.0, 5), {}, False),
    (keras.ops.eye, gk.ops.eye, (3,), {}, False),
    (keras.ops.eye, gk.ops.eye, (3, 4), {"k": 1, "dtype": "int32"}, False),
    (keras.ops.identity, gk.ops.identity, (2,), {}, False),
    (keras.ops.tri, gk.ops.tri, (3, 4), {"k": -1}, False),
    (keras.ops.full, gk.ops.full, ((2, 3), 1.5), {}, False),
    (keras.ops.full_like, gk.ops.full_like, (A, 2), {}, False),
    (keras.ops.full_like, gk.ops.full_like, (INTS, 7), {}, False),
    (keras.ops.empty, gk.ops.empty, ((2, 2),), {}, False),
    (keras.ops.empty_like, gk.ops.empty_like, (A,), {}, False),
]


def case_id(case):
    theirs, _, _, kwargs, _ = case
    return theirs.__name__ + "".join(f"-{k}={v}" for k, v in kwargs.items())


@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_forward_matches_keras(case):
    theirs_op, ours_op, args, kwargs, _ = case
    assert_forward_matches(theirs_op, ours_op, args, kwargs, atol=1e-6)


@pytest.mark.parametrize("case", [c for c in CASES if c[4]], ids=case_id)
def test_gradient_matches_keras(case):
    theirs_op, ours_op, args, kwargs, _ = case
    assert_gradient_matches(theirs_op, ours_op, args, kwargs, rtol=1e-4, atol=1e-5)


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


def test_ops_that_return_several_tensors_or_python_values_match_keras():
    x = RNG.normal(size=(6, 4)).astype(np.float32)
    for theirs_op, ours_op, args in (
            (keras.ops.split, gk.ops.split, (x, 3)),
            (keras.ops.split, gk.ops.split, (x, [1, 4])),
            (keras.ops.array_split, gk.ops.array_split, (x, 4)),
            (keras.ops.hsplit, gk.ops.hsplit, (x, 2)),
            (keras.ops.vsplit, gk.ops.vsplit, (x, [2])),
            (keras.ops.unstack, gk.ops.unstack, (x,)),
            (keras.ops.meshgrid, gk.ops.meshgrid, (ROW, A[:, 0])),
            (keras.ops.dsplit, gk.ops.dsplit, (x.reshape(2, 3, 4), 2)),
            (keras.ops.unravel_index, gk.ops.unravel_index, (np.array([0, 5, 11]), (3, 4))),
            (keras.ops.nonzero, gk.ops.nonzero, (WITH_ZEROS,)),
            (keras.ops.histogram, gk.ops.histogram, (x.reshape(-1),)),
            (keras.ops.histogram, gk.ops.histogram, (x.reshape(-1), 4, (-1.0, 1.0))),
            (keras.ops.moments, gk.ops.moments, (x, [0]))):
        theirs, ours = theirs_op(*args), ours_op(*args)
        assert len(ours) == len(theirs)
        for o, t in zip(ours, theirs):
            np.testing.assert_allclose(as_array(o), as_array(t), rtol=1e-5, atol=1e-6)
    grids = zip(gk.ops.meshgrid(ROW, A[:, 0], indexing="ij"),
                keras.ops.meshgrid(ROW, A[:, 0], indexing="ij"))
    for o, t in grids:
        np.testing.assert_array_equal(as_array(o), as_array(t))
    t = gt.constant(A)
    assert gk.ops.ndim(t) == keras.ops.ndim(A) == 2
    assert gk.ops.size(t) == int(keras.ops.size(A)) == 12
    assert gk.ops.dtype(t) == keras.ops.dtype(A) == "float32"
    assert gk.ops.is_tensor(t) and keras.ops.is_tensor(keras.ops.convert_to_tensor(A))
    assert not gk.ops.is_tensor(A) and not keras.ops.is_tensor(A)
    np.testing.assert_array_equal(gk.ops.convert_to_numpy(t), keras.ops.convert_to_numpy(A))


def test_control_flow_ops_give_keras_results_and_gradients():
    x = RNG.normal(size=(4, 3)).astype(np.float32)

    def run(lib, values):
        ops = lib.ops
        total = ops.fori_loop(0, 3, lambda i, v: v * 0.5 + ops.sum(values), 0.0)
        counted = ops.while_loop(lambda i, v: i < 4, lambda i, v: (i + 1, v + values), (0, values))
        capped = ops.while_loop(lambda v: ops.sum(v) < 1e9, lambda v: v * 2.0, values,
                                maximum_iterations=3)
        mapped = ops.map(lambda row: ops.sum(row * row), values)
        vmapped = ops.vectorized_map(lambda row: row[::1] * 3.0, values)
        carry, ys = ops.scan(lambda c, row: (c + row, c * row), ops.zeros((3,)), values)
        back_carry, back_ys = ops.scan(lambda c, row: (c * 0.5 + row, c), ops.ones((3,)),
                                       values, reverse=True)
        chosen = ops.cond(ops.sum(values) > 0, lambda: values * 2.0, lambda: values - 1.0)
        other = ops.cond(ops.sum(values) > 1e6, lambda: values * 2.0, lambda: values - 1.0)
        switched = [ops.switch(i, [lambda v: v + 1.0, lambda v: v * v], values)
                    for i in (-3, 0, 1, 9)]
        return [total, counted[1], capped, mapped, vmapped, carry, ys, back_carry, back_ys,
                chosen, other, *switched]

    theirs = run(keras, tf.constant(x))
    ours = run(gk, gt.constant(x))
    for o, t in zip(ours, theirs, strict=True):
        np.testing.assert_allclose(as_array(o), as_array(t), rtol=1e-5, atol=1e-5)
    assert int(run(gk, gt.constant(x))[1].shape[0]) == 4

    # tensor arguments where the examples above give Python ones
    for ours, theirs in (
            (gk.ops.fori_loop(gt.constant(1), gt.constant(4), lambda i, v: v * gk.ops.cast(
                i, "float32"), 1.0),
             keras.ops.fori_loop(tf.constant(1), tf.constant(4), lambda i, v: v * tf.cast(
                 i, "float32"), 1.0)),
            (gk.ops.switch(gt.constant(1), [lambda v: v, lambda v: -v], x),
             keras.ops.switch(tf.constant(1), [lambda v: v, lambda v: -v], x)),
            (gk.ops.map(lambda row: gk.ops.max(row), INTS),
             keras.ops.map(lambda row: keras.ops.max(row), INTS)),
            (gk.ops.vectorized_map(lambda row: gk.ops.cumsum(row), gt.constant(x)),
             keras.ops.vectorized_map(lambda row: keras.ops.cumsum(row), tf.constant(x)))):
        np.testing.assert_allclose(as_array(ours), as_array(theirs), rtol=1e-5, atol=1e-6)
        assert dtype_name(ours) == dtype_name(theirs)

    watched_tf, watched = tf.constant(x), gt.constant(x)
    with tf.GradientTape() as tape:
        tape.watch(watched_tf)
        loss = tf.reduce_sum(keras.ops.scan(lambda c, r: (c * r + r, c), tf.ones((3,)),
                                            watched_tf)[0])
    expected = tape.gradient(loss, watched_tf).numpy()
    with gt.GradientTape() as tape:
        tape.watch(watched)
        loss = gt.reduce_sum(gk.ops.scan(lambda c, r: (c * r + r, c), gk.ops.ones((3,)),
                                         watched)[0])
    np.testing.assert_allclose(as_array(tape.gradient(loss, watched)), expected, rtol=1e-5)


def test_a_layer_branching_with_cond_takes_each_batchs_branch_in_a_model():
    """cond reads its condition on the host, which breaks the layer's C++ trace: the model
    must not replay the branch the first batch took."""
    class SignDependent(gk.layers.Layer):
        def call(self, inputs):
            return gk.ops.cond(gk.ops.sum(inputs) > 0, lambda: inputs * 2.0,
                               lambda: inputs - 1.0)

    model = gk.Sequential([gk.Input((3,)), SignDependent()])
    up = np.ones((2, 3), np.float32)
    down = -np.ones((2, 3), np.float32)
    with pytest.warns(RuntimeWarning, match="runs its Python call"):
        for batch, expected in ((up, up * 2.0), (down, down - 1.0), (up, up * 2.0)):
            np.testing.assert_array_equal(np.asarray(model.predict(batch, verbose=0)),
                                          expected)


def test_numpy_style_ops_reject_bad_arguments_by_name():
    with pytest.raises(ValueError, match="equal division"):
        gk.ops.split(A, 5, axis=1)
    with pytest.raises(ValueError, match=r"axis=2 is out of bounds for a tensor of rank 2"):
        gk.ops.flip(A, axis=2)
    with pytest.raises(IndexError, match=r"indices must be in \[-4, 4\)"):
        gk.ops.take(A, [4], axis=1)
    with pytest.raises(ValueError, match="repeats must be a non-negative int or 3"):
        gk.ops.repeat(A, [1, 2], axis=0)
    with pytest.raises(ValueError, match="side must be 'left' or 'right'"):
        gk.ops.searchsorted(ROW, ROW, side="middle")
    with pytest.raises(ValueError, match="tril/triu need a tensor of rank >= 2"):
        gk.ops.tril(ROW)


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


@pytest.mark.parametrize("name, advice", [("argpartition", "np.argpartition"),
                                          ("eig", "np.linalg")])
def test_names_that_need_a_kernel_are_refused_with_advice(name, advice):
    assert hasattr(keras.ops, name)
    with pytest.raises(AttributeError, match=rf"keras\.ops\.{name} is not supported by "
                                             rf"gpuaccel.*{advice}"):
        getattr(gk.ops, name)


def test_a_name_keras_ops_has_but_gpuaccel_lacks_says_so():
    assert hasattr(keras.ops, "fft")
    with pytest.raises(AttributeError, match=r"keras\.ops\.fft is not supported by gpuaccel"):
        gk.ops.fft  # noqa: B018
    assert not hasattr(gk.ops, "fft")
