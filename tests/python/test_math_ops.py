"""``tf.math`` / top-level math (``gpuaccel.math``) and ``gpuaccel.linalg``: forward against
NumPy (tensors, NumPy arrays, lists and scalars as inputs), gradients of the composite ops
against finite differences, einsum against np.einsum, and the errors."""
import numpy as np
import pytest

import gpuaccel as ga
from test_autograd import check_gradients, rnd


def test_top_level_names_accept_numpy_arrays():
    a = rnd((3, 4))
    np.testing.assert_allclose(ga.sigmoid(a).numpy(), 1 / (1 + np.exp(-a)), rtol=1e-6)
    np.testing.assert_allclose(ga.nn.softmax(a).numpy(),
                               np.exp(a) / np.exp(a).sum(-1, keepdims=True), rtol=1e-5)
    np.testing.assert_allclose(ga.exp([0.0, 1.0]).numpy(), [1.0, np.e], rtol=1e-6)
    np.testing.assert_allclose(ga.add(a, 1.5).numpy(), a + 1.5)
    np.testing.assert_allclose(ga.multiply(2.0, a).numpy(), 2 * a)
    np.testing.assert_allclose(ga.maximum(a, np.zeros_like(a)).numpy(), np.maximum(a, 0))


@pytest.mark.parametrize("name,ref", [
    ("reduce_sum", np.sum), ("reduce_mean", np.mean), ("reduce_max", np.max),
    ("reduce_min", np.min), ("reduce_variance", np.var), ("reduce_std", np.std),
    ("reduce_prod", np.prod)])
@pytest.mark.parametrize("axis", [None, 0, 1, [0, 1]])
def test_reductions_match_numpy(name, ref, axis):
    a = rnd((3, 4))
    np_axis = tuple(axis) if isinstance(axis, list) else axis
    for keepdims in (False, True):
        out = getattr(ga, name)(a, axis=axis, keepdims=keepdims)
        np.testing.assert_allclose(out.numpy(), ref(a, axis=np_axis, keepdims=keepdims),
                                   rtol=1e-5, atol=1e-6)


def test_torch_style_dim_and_keepdim():
    a = rnd((3, 4))
    np.testing.assert_allclose(ga.reduce_sum(a, dim=1, keepdim=True).numpy(),
                               a.sum(1, keepdims=True), rtol=1e-6)
    values, indices = ga.max(ga.tensor(a), 1)
    np.testing.assert_allclose(values.numpy(), a.max(1))
    np.testing.assert_array_equal(indices.numpy(), a.argmax(1))
    assert float(ga.max(ga.tensor(a))) == pytest.approx(float(a.max()))
    np.testing.assert_allclose(ga.min(ga.tensor(a), ga.tensor(-a)).numpy(), np.minimum(a, -a))
    np.testing.assert_allclose(ga.sum(a, dim=0).numpy(), a.sum(0), rtol=1e-6)
    np.testing.assert_allclose(ga.std(a, dim=1).numpy(), a.std(1, ddof=1), rtol=1e-5)
    np.testing.assert_allclose(ga.var(a).numpy(), a.var(ddof=1), rtol=1e-5)


def test_composite_gradients():
    a = rnd((3, 4))
    check_gradients(lambda t: ga.reduce_logsumexp(t, axis=1),
                    lambda t: np.log(np.exp(t).sum(1)), [a])
    check_gradients(lambda t: ga.reduce_variance(t, axis=0), lambda t: t.var(0), [a])
    check_gradients(ga.math.softplus, lambda t: np.log1p(np.exp(t)), [a])
    check_gradients(lambda t: ga.squared_difference(t, 0.5), lambda t: (t - 0.5) ** 2, [a])
    check_gradients(lambda t: ga.math.l2_normalize(t, axis=1),
                    lambda t: t / np.sqrt((t * t).sum(1, keepdims=True)), [a])
    check_gradients(ga.log1p, np.log1p, [rnd((5,), low=0.1, high=2.0)])


def test_logsumexp_does_not_overflow():
    out = ga.reduce_logsumexp(np.array([1000.0, 1000.0], np.float32))
    assert float(out) == pytest.approx(1000.0 + np.log(2.0), rel=1e-6)


def test_comparisons_and_logic_return_bool():
    a, b = np.array([1.0, 2.0, 3.0]), np.array([3.0, 2.0, 1.0])
    for name, ref in [("equal", np.equal), ("not_equal", np.not_equal), ("less", np.less),
                      ("less_equal", np.less_equal), ("greater", np.greater),
                      ("greater_equal", np.greater_equal)]:
        out = getattr(ga, name)(a, b)
        assert out.dtype == ga.bool
        np.testing.assert_array_equal(out.numpy(), ref(a, b))
    np.testing.assert_array_equal(ga.logical_and([True, False], [True, True]).numpy(),
                                  [True, False])
    np.testing.assert_array_equal(ga.is_nan(np.array([np.nan, 1.0], np.float32)).numpy(),
                                  [True, False])
    np.testing.assert_array_equal(
        ga.math.is_finite(np.array([np.inf, 1.0, np.nan], np.float32)).numpy(),
        [False, True, False])
    np.testing.assert_array_equal(ga.math.count_nonzero([0, 3, 0, 1]).numpy(), 2)


def test_argmax_follows_tf_default_axis_and_torch_dim():
    import gpuaccel.torch as torch_face
    a = rnd((3, 4))
    np.testing.assert_array_equal(ga.argmax(a).numpy(), a.argmax(0))
    np.testing.assert_array_equal(ga.argmax(a, axis=1).numpy(), a.argmax(1))
    np.testing.assert_array_equal(torch_face.argmax(a, dim=1).numpy(), a.argmax(1))
    assert int(torch_face.argmax(a)) == a.argmax()  # torch: the flattened index
    assert int(ga.tensor(a).argmax()) == a.argmax()


def test_allclose_isclose_and_torch_equal():
    a = np.array([1.0, 2.0], np.float32)
    assert ga.allclose(ga.tensor(a), a + 1e-7) is True
    assert ga.allclose(ga.tensor(a), a + 1e-3) is False
    np.testing.assert_array_equal(ga.isclose(a, [1.0, 2.1]).numpy(), [True, False])
    assert ga.tensor(a).allclose(ga.tensor(a))


@pytest.mark.parametrize("ta,tb", [(False, False), (True, False), (False, True), (True, True)])
def test_matmul_transpose_flags(ta, tb):
    a, b = rnd((2, 3, 4), 1), rnd((2, 4, 5), 2)
    a_in = np.swapaxes(a, -1, -2).copy() if ta else a
    b_in = np.swapaxes(b, -1, -2).copy() if tb else b
    check_gradients(lambda x, y: ga.matmul(x, y, transpose_a=ta, transpose_b=tb),
                    lambda x, y: (np.swapaxes(x, -1, -2) if ta else x) @ (
                        np.swapaxes(y, -1, -2) if tb else y), [a_in, b_in])


@pytest.mark.parametrize("equation,shapes", [
    ("ij,jk->ik", [(2, 3), (3, 4)]), ("bij,bjk->bik", [(2, 2, 3), (2, 3, 2)]),
    ("ij->ji", [(2, 3)]), ("i,i->", [(4,), (4,)]), ("ij,kj", [(2, 3), (4, 3)]),
    ("bhqd,bhkd->bhqk", [(1, 2, 3, 4), (1, 2, 5, 4)]), ("i,j->ij", [(2,), (3,)])])
def test_einsum_matches_numpy_with_gradients(equation, shapes):
    inputs = [rnd(s, seed=k) for k, s in enumerate(shapes)]
    check_gradients(lambda *t: ga.einsum(equation, *t),
                    lambda *t: np.einsum(equation, *t), inputs)


def test_einsum_and_tensordot_errors_and_tensordot():
    with pytest.raises(ValueError, match="do not match an operand of rank"):
        ga.einsum("ij,jk->ik", rnd((2, 3)), rnd((3,)))
    with pytest.raises(ValueError, match="sizes 3 and 4"):
        ga.einsum("ij,jk->ik", rnd((2, 3)), rnd((4, 2)))
    with pytest.raises(ValueError, match="ellipses"):
        ga.einsum("...ij->...ji", rnd((2, 3)))
    a, b = rnd((2, 3, 4)), rnd((4, 3, 5))
    np.testing.assert_allclose(ga.tensordot(a, b, [[1, 2], [1, 0]]).numpy(),
                               np.tensordot(a, b, [[1, 2], [1, 0]]), rtol=1e-5, atol=1e-6)


def test_norm_and_mm_bmm():
    a = rnd((3, 4))
    assert float(ga.linalg.norm(a)) == pytest.approx(float(np.linalg.norm(a)), rel=1e-5)
    np.testing.assert_allclose(ga.mm(a, a.T).numpy(), a @ a.T, rtol=1e-5, atol=1e-6)
    with pytest.raises(RuntimeError, match="3-D"):
        ga.bmm(a, a.T)


def test_argmax_output_type_accepts_dtype_objects():
    out = ga.argmax(np.array([[1.0, 3.0], [4.0, 2.0]]), axis=1, output_type=ga.int32)
    assert out.dtype == ga.int32
    np.testing.assert_array_equal(out.numpy(), [1, 0])
