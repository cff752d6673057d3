"""The TF/PyTorch shape and array functions (``gpuaccel._array_ops``, the C++ ``concat``):
forward against NumPy, gradients against finite differences of a NumPy reference, NumPy and
list inputs, the calls whose meaning differs between TF and torch, and error types/texts."""
import numpy as np
import pytest

import gpuaccel as ga
import gpuaccel.torch as torch_face
from gpuaccel import errors
from test_autograd import check_gradients, rnd


def test_reshape_transpose_expand_dims_accept_numpy_and_lists():
    a = rnd((2, 3, 4))
    np.testing.assert_array_equal(ga.reshape(a, [4, -1]).numpy(), a.reshape(4, -1))
    np.testing.assert_array_equal(ga.transpose(a).numpy(), a.T)  # TF: reverse the axes
    np.testing.assert_array_equal(ga.transpose(a, perm=[1, 0, 2]).numpy(),
                                  a.transpose(1, 0, 2))
    np.testing.assert_array_equal(torch_face.transpose(a, 0, 2).numpy(), a.swapaxes(0, 2))
    np.testing.assert_array_equal(ga.expand_dims([1.0, 2.0], 0).numpy(), [[1.0, 2.0]])
    np.testing.assert_array_equal(ga.expand_dims(a, -1).shape, (2, 3, 4, 1))
    np.testing.assert_array_equal(ga.squeeze(np.ones((1, 3, 1))).shape, (3,))
    np.testing.assert_array_equal(ga.unsqueeze(ga.tensor([1.0]), 1).shape, (1, 1))


def test_transpose_and_expand_dims_errors():
    with pytest.raises(errors.InvalidArgumentError, match="permutation"):
        ga.transpose(rnd((2, 3)), perm=[0, 0])
    with pytest.raises(errors.InvalidArgumentError, match="out of range"):
        ga.expand_dims(rnd((2, 3)), 4)
    with pytest.raises(TypeError, match="axis must be an integer"):
        ga.expand_dims(rnd((2,)), 0.5)


@pytest.mark.parametrize("axis", [0, 1, -1])
def test_concat_forward_and_gradients(axis):
    a, b = rnd((2, 3), 1), rnd((2, 3), 2)
    c = rnd((2, 3), 3)
    check_gradients(lambda x, y, z: ga.concat([x, y, z], axis),
                    lambda x, y, z: np.concatenate([x, y, z], axis), [a, b, c])


def test_concat_of_different_lengths_and_cat_alias():
    a, b = rnd((2, 3), 1), rnd((2, 5), 2)
    np.testing.assert_array_equal(ga.cat([ga.tensor(a), ga.tensor(b)], dim=1).numpy(),
                                  np.concatenate([a, b], 1))
    np.testing.assert_array_equal(ga.concat([a, b], axis=-1).numpy(), np.concatenate([a, b], 1))


def test_concat_errors_name_the_mismatch():
    with pytest.raises(errors.InvalidArgumentError, match=r"\[ConcatV2\].*input 1 has shape"):
        ga.concat([rnd((2, 3)), rnd((3, 3))], 1)
    with pytest.raises(errors.InvalidArgumentError, match="ConcatV2"):
        ga.concat([ga.tensor([1.0]), ga.tensor([1], dtype="int64")], 0)
    with pytest.raises(ValueError, match="non-empty list"):
        ga.concat([], 0)


def test_stack_unstack_split_forward_and_gradients():
    a, b = rnd((2, 3), 1), rnd((2, 3), 2)
    check_gradients(lambda x, y: ga.stack([x, y], axis=1), lambda x, y: np.stack([x, y], 1),
                    [a, b])
    pieces = ga.unstack(ga.tensor(a), axis=1)
    assert len(pieces) == 3
    np.testing.assert_array_equal(pieces[2].numpy(), a[:, 2])
    x = rnd((6, 4))
    check_gradients(lambda t: ga.concat(ga.split(t, 3, axis=0)[::-1], 0),
                    lambda t: np.concatenate(np.split(t, 3, 0)[::-1], 0), [x])
    sizes = ga.split(x, [1, -1, 2], axis=1)
    assert [tuple(p.shape) for p in sizes] == [(6, 1), (6, 1), (6, 2)]
    with pytest.raises(errors.InvalidArgumentError, match="evenly divide"):
        ga.split(x, 4, axis=0)
    with pytest.raises(errors.InvalidArgumentError, match="Shapes of all inputs must match"):
        ga.stack([rnd((2,)), rnd((3,))])


def test_torch_split_and_chunk_use_piece_sizes():
    x = ga.arange(10)
    assert [p.tolist() for p in torch_face.split(x, 4, dim=0)] == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9]]
    assert [p.tolist() for p in x.split(3)] == [[0, 1, 2], [3, 4, 5], [6, 7, 8], [9]]
    assert [len(p) for p in ga.chunk(x, 3)] == [4, 4, 2]


@pytest.mark.parametrize("axis", [0, 1, 2])
def test_tf_gather_matches_numpy_take_with_gradients(axis):
    params = rnd((4, 5, 3))
    idx = np.array([[3, 0], [1, 1]])
    if axis == 2:
        idx = np.array([2, 0, 2])
    check_gradients(lambda p: ga.gather(p, idx, axis=axis),
                    lambda p: np.take(p, idx, axis=axis), [params])


def test_tf_gather_rejects_out_of_range_indices():
    with pytest.raises(errors.InvalidArgumentError, match=r"5 is not in \[0, 4\)"):
        ga.gather(rnd((4, 2)), [0, 5])


def test_torch_gather_along_dim_with_gradients():
    x = rnd((3, 4))
    index = np.array([[0, 3], [2, 2], [1, 0]])
    check_gradients(lambda t: torch_face.gather(t, 1, ga.tensor(index)),
                    lambda t: np.take_along_axis(t, index, 1), [x])
    index0 = np.array([[2, 0, 1, 1]])
    np.testing.assert_array_equal(torch_face.gather(ga.tensor(x), 0, ga.tensor(index0)).numpy(),
                                  np.take_along_axis(x, index0, 0))


def test_cast_truncates_toward_zero_and_converts_numpy():
    out = ga.cast(np.array([-1.7, 2.9, 0.2]), ga.int32)
    assert out.dtype == ga.int32
    np.testing.assert_array_equal(out.numpy(), [-1, 2, 0])
    assert ga.cast([1, 2], "float16").dtype == ga.float16


def test_where_select_and_coordinates_with_gradients():
    x, y = rnd((3, 4), 1), rnd((3, 4), 2)
    cond = x > 0
    check_gradients(lambda a, b: ga.where(ga.tensor(cond), a, b),
                    lambda a, b: np.where(cond, a, b), [x, y])
    np.testing.assert_array_equal(ga.where(ga.tensor(x) > 0, x, 0.0).numpy(),
                                  np.where(x > 0, x, 0.0))
    np.testing.assert_array_equal(ga.where(np.array([[True, False], [False, True]])).numpy(),
                                  [[0, 0], [1, 1]])
    with pytest.raises(ValueError, match="both be given"):
        ga.where(cond, x)


def test_clip_by_value_and_clamp_gradients():
    x = rnd((3, 4))
    check_gradients(lambda t: ga.clip_by_value(t, -0.5, 1.0),
                    lambda t: np.clip(t, -0.5, 1.0), [x])
    np.testing.assert_allclose(ga.clamp(ga.tensor(x), min=0.0).numpy(), np.maximum(x, 0))
    with pytest.raises(RuntimeError, match="At least one of 'min' or 'max'"):
        ga.clamp(ga.tensor(x))


def test_pad_tile_one_hot_fill_and_shape():
    x = rnd((2, 3))
    check_gradients(lambda t: ga.pad(t, [[1, 0], [0, 2]]),
                    lambda t: np.pad(t, [[1, 0], [0, 2]]), [x])
    np.testing.assert_array_equal(ga.pad(x, [[0, 0], [1, 1]], constant_values=7).numpy(),
                                  np.pad(x, [[0, 0], [1, 1]], constant_values=7))
    check_gradients(lambda t: ga.tile(t, [2, 3]), lambda t: np.tile(t, [2, 3]), [x])
    np.testing.assert_array_equal(ga.one_hot([0, 2], 3).numpy(), np.eye(3)[[0, 2]])
    np.testing.assert_array_equal(ga.one_hot([1], 3, on_value=5.0, off_value=-1.0).numpy(),
                                  [[-1, 5, -1]])
    np.testing.assert_array_equal(ga.one_hot([0, 1], 3, axis=0).numpy(), np.eye(3)[[0, 1]].T)
    np.testing.assert_array_equal(ga.fill([2, 2], 3.0).numpy(), np.full((2, 2), 3.0))
    np.testing.assert_array_equal(ga.shape(x).numpy(), [2, 3])
    assert ga.numel(x) == 6 and int(ga.size(x)) == 6 and int(ga.rank(x)) == 2
    with pytest.raises(errors.InvalidArgumentError, match="paddings"):
        ga.pad(x, [[1, 1]])


def test_flatten_broadcast_to_identity_and_like_functions():
    x = rnd((2, 3, 4))
    assert tuple(ga.flatten(x, 1).shape) == (2, 12)
    np.testing.assert_array_equal(ga.broadcast_to([1.0, 2.0], [3, 2]).numpy(),
                                  np.broadcast_to([1.0, 2.0], (3, 2)))
    np.testing.assert_array_equal(ga.identity(x).numpy(), x)
    z = ga.zeros_like(np.ones((2, 2), np.int32))
    assert z.dtype == ga.int32 and z.numpy().sum() == 0
    assert ga.ones_like(ga.tensor(x), dtype="float16").dtype == ga.float16


def test_gather_is_exact_for_integers_and_non_finite_values():
    ints = np.array([[1, 2], [3, 2 ** 40], [5, 6]], np.int64)
    np.testing.assert_array_equal(ga.gather(ints, [1, 0, 1]).numpy(), ints[[1, 0, 1]])
    np.testing.assert_array_equal(ga.gather(ints, [1], axis=1).numpy(), ints[:, [1]])
    floats = np.array([[np.inf, 1.0], [2.0, np.nan], [3.0, 4.0]], np.float32)
    np.testing.assert_array_equal(ga.gather(floats, [2, 0]).numpy(), floats[[2, 0]])
    np.testing.assert_array_equal(
        torch_face.gather(ga.tensor(ints), 1, ga.tensor([[1], [0], [1]])).numpy(),
        np.take_along_axis(ints, np.array([[1], [0], [1]]), 1))
    np.testing.assert_array_equal(torch_face.gather(floats, 1, ga.tensor([[0], [0], [1]])).numpy(),
                                  np.take_along_axis(floats, np.array([[0], [0], [1]]), 1))
