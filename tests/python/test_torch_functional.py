"""``gpuaccel.nn.functional`` (torch.nn.functional): NCHW convolution, pooling and unfold
against NumPy loop references, activations and losses against their formulas (PyTorch's
definitions), gradients against finite differences, and the error texts."""
import numpy as np
import pytest

import gpuaccel as ga
import gpuaccel.nn.functional as F
from test_autograd import check_gradients, rnd


def conv2d_reference(x, w, b, stride, padding, dilation):
    x = np.pad(x, [[0, 0], [0, 0], [padding, padding], [padding, padding]])
    n, c, h, wd = x.shape
    f, _, kh, kw = w.shape
    eh, ew = (kh - 1) * dilation + 1, (kw - 1) * dilation + 1
    oh, ow = (h - eh) // stride + 1, (wd - ew) // stride + 1
    out = np.zeros((n, f, oh, ow))
    for i in range(oh):
        for j in range(ow):
            patch = x[:, :, i * stride:i * stride + eh:dilation, j * stride:j * stride + ew:dilation]
            out[:, :, i, j] = np.einsum("nchw,fchw->nf", patch, w)
    return out + (0 if b is None else b[None, :, None, None])


def unfold_reference(x, k, dilation, padding, stride):
    x = np.pad(x, [[0, 0], [0, 0], [padding, padding], [padding, padding]])
    n, c, h, w = x.shape
    e = (k - 1) * dilation + 1
    oh, ow = (h - e) // stride + 1, (w - e) // stride + 1
    cols = []
    for i in range(oh):
        for j in range(ow):
            patch = x[:, :, i * stride:i * stride + e:dilation, j * stride:j * stride + e:dilation]
            cols.append(patch.reshape(n, -1))  # channel-major, then rows, then columns
    return np.stack(cols, axis=-1)


@pytest.mark.parametrize("stride,padding,dilation", [(1, 0, 1), (2, 1, 1), (1, 2, 2)])
def test_conv2d_nchw_matches_reference_with_gradients(stride, padding, dilation):
    x, w, b = rnd((2, 3, 7, 6), 1), rnd((4, 3, 3, 3), 2), rnd((4,), 3)
    check_gradients(lambda x_, w_, b_: F.conv2d(x_, w_, b_, stride=stride, padding=padding,
                                                dilation=dilation),
                    lambda x_, w_, b_: conv2d_reference(x_, w_, b_, stride, padding, dilation),
                    [x, w, b], rtol=1e-3, atol=1e-4)


def test_conv2d_same_padding_and_errors():
    x, w = rnd((1, 2, 5, 5)), rnd((3, 2, 3, 3))
    np.testing.assert_allclose(F.conv2d(x, w, padding="same").numpy(),
                               conv2d_reference(x, w, None, 1, 1, 1), rtol=1e-4, atol=1e-5)
    with pytest.raises(RuntimeError, match="does not fit an input with 2 channels"):
        F.conv2d(x, rnd((3, 4, 3, 3)))
    with pytest.raises(ValueError, match="groups"):
        F.conv2d(x, w, groups=2)
    with pytest.raises(RuntimeError, match="4-D"):
        F.conv2d(rnd((2, 5, 5)), w)


@pytest.mark.parametrize("k,dilation,padding,stride", [(2, 1, 0, 1), (3, 1, 1, 2), (2, 2, 0, 1)])
def test_unfold_matches_reference_with_gradients(k, dilation, padding, stride):
    x = rnd((2, 3, 5, 6))
    check_gradients(lambda t: F.unfold(t, k, dilation=dilation, padding=padding, stride=stride),
                    lambda t: unfold_reference(t, k, dilation, padding, stride), [x])


def test_pooling_nchw():
    x = rnd((2, 3, 6, 6))
    pooled = x.reshape(2, 3, 3, 2, 3, 2)
    np.testing.assert_allclose(F.max_pool2d(x, 2).numpy(), pooled.max((3, 5)))
    np.testing.assert_allclose(F.avg_pool2d(x, 2).numpy(), pooled.mean((3, 5)), rtol=1e-6)
    padded = np.pad(x, [[0, 0], [0, 0], [1, 1], [1, 1]], constant_values=-np.inf)
    np.testing.assert_allclose(F.max_pool2d(x, 2, stride=2, padding=1).numpy(),
                               padded.reshape(2, 3, 4, 2, 4, 2).max((3, 5)))


def test_activations_and_linear():
    x = rnd((3, 4))
    check_gradients(lambda t: F.leaky_relu(t, 0.1), lambda t: np.where(t > 0, t, 0.1 * t), [x])
    check_gradients(F.silu, lambda t: t / (1 + np.exp(-t)), [x])
    check_gradients(lambda t: F.softmax(t, dim=0),
                    lambda t: np.exp(t) / np.exp(t).sum(0, keepdims=True), [x])
    check_gradients(lambda t: F.log_softmax(t, dim=1),
                    lambda t: t - np.log(np.exp(t).sum(1, keepdims=True)), [x])
    w, b = rnd((5, 4), 1), rnd((5,), 2)
    check_gradients(F.linear, lambda x_, w_, b_: x_ @ w_.T + b_, [x, w, b])
    np.testing.assert_allclose(F.softplus(x, beta=2.0).numpy(), np.log1p(np.exp(2 * x)) / 2,
                               rtol=1e-5)


def _log_softmax(z):
    return z - np.log(np.exp(z).sum(1, keepdims=True))


def test_losses_against_formulas_and_gradients():
    logits, target = rnd((4, 3), 1), np.array([0, 2, 1, 2])
    onehot = np.eye(3)[target]
    check_gradients(lambda z: F.cross_entropy(z, ga.tensor(target)),
                    lambda z: -(onehot * _log_softmax(z)).sum(1).mean(), [logits])
    check_gradients(lambda z: F.cross_entropy(z, onehot.astype(np.float32), reduction="sum"),
                    lambda z: -(onehot * _log_softmax(z)).sum(), [logits])
    check_gradients(lambda z: F.nll_loss(F.log_softmax(z, 1), ga.tensor(target),
                                         reduction="none"),
                    lambda z: -(onehot * _log_softmax(z)).sum(1), [logits])
    y = rnd((4, 3), 5, low=0, high=1)
    check_gradients(lambda z: F.mse_loss(z, y), lambda z: ((z - y) ** 2).mean(), [logits])
    check_gradients(lambda z: F.l1_loss(z, y, reduction="sum"),
                    lambda z: np.abs(z - y).sum(), [logits])
    check_gradients(lambda z: F.binary_cross_entropy_with_logits(z, y),
                    lambda z: (np.maximum(z, 0) - z * y + np.log1p(np.exp(-np.abs(z)))).mean(),
                    [logits])
    p = rnd((4, 3), 6, low=0.05, high=0.95)
    check_gradients(lambda q: F.binary_cross_entropy(q, y),
                    lambda q: -(y * np.log(q) + (1 - y) * np.log(1 - q)).mean(), [p])


def test_cross_entropy_over_spatial_positions():
    logits, target = rnd((2, 3, 4), 1), np.array([[0, 1, 2, 0], [2, 2, 1, 0]])
    per_position = -np.take_along_axis(
        logits - np.log(np.exp(logits).sum(1, keepdims=True)), target[:, None], 1)[:, 0]
    np.testing.assert_allclose(F.cross_entropy(logits, ga.tensor(target)).numpy(),
                               per_position.mean(), rtol=1e-5)


def test_loss_errors():
    with pytest.raises(ValueError, match="is not a valid value for reduction"):
        F.mse_loss(rnd((2,)), rnd((2,)), reduction="avg")
    with pytest.raises(ValueError, match="ignore_index"):
        F.cross_entropy(rnd((2, 3)), ga.tensor([-100, 1]))
    with pytest.raises(ValueError, match="dropout probability"):
        F.dropout(rnd((2,)), p=1.5)


def test_one_hot_pad_and_functional_import_path():
    assert F.one_hot(ga.tensor([0, 2])).dtype == ga.int64
    np.testing.assert_array_equal(F.one_hot(ga.tensor([0, 2])).numpy(), np.eye(3)[[0, 2]])
    x = rnd((2, 3))
    np.testing.assert_array_equal(F.pad(x, (1, 2)).numpy(), np.pad(x, [[0, 0], [1, 2]]))
    np.testing.assert_array_equal(F.pad(x, (0, 0, 1, 0), value=5).numpy(),
                                  np.pad(x, [[1, 0], [0, 0]], constant_values=5))
    import importlib
    assert importlib.import_module("gpuaccel.nn.functional") is F is ga.nn.functional
