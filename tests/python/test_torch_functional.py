"""``gpuaccel.nn.functional`` (torch.nn.functional): every function against PyTorch 1.13 itself
(torch_reference: values, dtypes, shapes and gradients, one table), NCHW convolution, pooling and
unfold against NumPy loop references too, gradients against finite differences, and the error
texts."""
import numpy as np
import pytest

import gpuaccel as ga
import gpuaccel.nn.functional as F
import torch_reference
from test_autograd import check_gradients, rnd
from torch_reference import Case


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
    with pytest.raises(RuntimeError, match="expected weight to be divisible by 2 at dimension 0"):
        F.conv2d(x, w, groups=2)
    with pytest.raises(RuntimeError, match=r"3-D \(C, H, W\) or 4-D"):
        F.conv2d(rnd((5, 5)), w)


def test_one_unbatched_image_runs_as_a_batch_of_one_against_torch():
    """torch's 2-D convolutions and poolings take a (C, H, W) image as well as a batch: the
    results and the input's gradient (through every op) match PyTorch's; a 2-D input is an
    error in both."""
    image, kernel = rnd((2, 6, 6), 11), rnd((3, 2, 3, 3), 12)
    weights = rnd((160,), 13)
    snippet = """
import torch.nn.functional as F
x = torch.tensor(image, requires_grad=True)
outs = [F.conv2d(x, torch.tensor(kernel), padding=1), F.max_pool2d(x, 3),
        F.avg_pool2d(x, 2, stride=2), F.adaptive_avg_pool2d(x, (2, 1)),
        F.adaptive_max_pool2d(x, 1), F.conv_transpose2d(x, torch.tensor(kernel).transpose(0, 1),
                                                         stride=1)[:, :1, :1]]
for i, o in enumerate(outs):
    out['shape%d' % i] = list(o.shape)
flat = torch.cat([o.reshape(-1) for o in outs])
out['flat'] = flat.detach().numpy()
(flat * torch.tensor(weights[:flat.numel()])).sum().backward()
out['grad'] = x.grad.numpy()
try:
    F.max_pool2d(x[0], 2)
except RuntimeError as e:
    out['error'] = type(e).__name__
"""
    expected = torch_reference.run(snippet, image=image, kernel=kernel, weights=weights)
    x = ga.tensor(image, requires_grad=True)
    outs = [F.conv2d(x, ga.tensor(kernel), padding=1), F.max_pool2d(x, 3),
            F.avg_pool2d(x, 2, stride=2), F.adaptive_avg_pool2d(x, (2, 1)),
            F.adaptive_max_pool2d(x, 1),
            F.conv_transpose2d(x, ga.tensor(kernel.transpose(1, 0, 2, 3)), stride=1)[:, :1, :1]]
    for i, o in enumerate(outs):
        assert list(o.shape) == expected[f"shape{i}"], i
    flat = ga.concat([ga.reshape(o, [-1]) for o in outs], 0)
    np.testing.assert_allclose(flat.detach().numpy(), expected["flat"], rtol=1e-4, atol=1e-5)
    (flat * ga.tensor(weights[:flat.shape[0]])).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), expected["grad"], rtol=1e-4, atol=1e-5)
    assert expected["error"] == "RuntimeError"
    with pytest.raises(RuntimeError, match=r"max_pool2d: expected a 3-D \(C, H, W\) or 4-D"):
        F.max_pool2d(x[0], 2)


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


# ---- against PyTorch 1.13 ------------------------------------------------------------------------

X = rnd((3, 5), 11)
IMG = rnd((2, 4, 6, 6), 12)
SEQ = rnd((2, 3, 9), 13)
P = rnd((3, 5), 14, low=0.05, high=0.95)
Y01 = rnd((3, 5), 15, low=0.0, high=1.0)
SIGNS = np.where(rnd((3,), 16) > 0, 1.0, -1.0).astype(np.float32)
LABELS = np.array([1, 0, 4], np.int64)
W_LIN, B_LIN = rnd((4, 5), 17), rnd((4,), 18)
CH = rnd((4,), 19, low=0.5, high=1.5)
CH_B = rnd((4,), 20)
POS_VAR = rnd((3, 5), 21, low=0.1, high=2.0)

_ACTIVATIONS = [
    ("relu", lambda x: F.relu(x), "F.relu(x)"),
    ("elu", lambda x: F.elu(x, 0.7), "F.elu(x, 0.7)"),
    ("celu", lambda x: F.celu(x, 1.3), "F.celu(x, 1.3)"),
    ("selu", lambda x: F.selu(x), "F.selu(x)"),
    ("gelu", lambda x: F.gelu(x), "F.gelu(x)"),
    ("gelu_tanh", lambda x: F.gelu(x, approximate="tanh"), "F.gelu(x, approximate='tanh')"),
    ("silu", lambda x: F.silu(x), "F.silu(x)"),
    ("mish", lambda x: F.mish(x), "F.mish(x)"),
    ("leaky_relu", lambda x: F.leaky_relu(x, 0.2), "F.leaky_relu(x, 0.2)"),
    ("relu6", lambda x: F.relu6(x * 4), "F.relu6(x * 4)"),
    ("hardtanh", lambda x: F.hardtanh(x, -0.5, 1.5), "F.hardtanh(x, -0.5, 1.5)"),
    ("hardsigmoid", lambda x: F.hardsigmoid(x * 2), "F.hardsigmoid(x * 2)"),
    ("hardswish", lambda x: F.hardswish(x * 2), "F.hardswish(x * 2)"),
    ("sigmoid", lambda x: F.sigmoid(x), "F.sigmoid(x)"),
    ("tanh", lambda x: F.tanh(x), "F.tanh(x)"),
    ("logsigmoid", lambda x: F.logsigmoid(x * 10), "F.logsigmoid(x * 10)"),
    ("softplus", lambda x: F.softplus(x, beta=2.0), "F.softplus(x, beta=2.0)"),
    ("softsign", lambda x: F.softsign(x), "F.softsign(x)"),
    ("tanhshrink", lambda x: F.tanhshrink(x), "F.tanhshrink(x)"),
    ("hardshrink", lambda x: F.hardshrink(x, 0.6), "F.hardshrink(x, 0.6)"),
    ("softshrink", lambda x: F.softshrink(x, 0.6), "F.softshrink(x, 0.6)"),
    ("threshold", lambda x: F.threshold(x, 0.3, -2.0), "F.threshold(x, 0.3, -2.0)"),
    ("softmax", lambda x: F.softmax(x, dim=1), "F.softmax(x, dim=1)"),
    ("softmax_dim0", lambda x: F.softmax(x, 0), "F.softmax(x, 0)"),
    ("log_softmax", lambda x: F.log_softmax(x, dim=-1), "F.log_softmax(x, dim=-1)"),
    ("softmin", lambda x: F.softmin(x, dim=1), "F.softmin(x, dim=1)"),
    ("glu", lambda x: F.glu(x, 0), "F.glu(x[:2], 0)"),  # ours gets x[:2] below
    ("normalize", lambda x: F.normalize(x, dim=1), "F.normalize(x, dim=1)"),
    ("dropout_eval", lambda x: F.dropout(x, 0.5, training=False),
     "F.dropout(x, 0.5, training=False)"),
]

CASES = [Case(name, ours, theirs, {"x": X}, grad=("x",)) for name, ours, theirs in _ACTIVATIONS
         if name != "glu"] + [
    Case("glu", lambda x: F.glu(x, 0), "F.glu(x, 0)", {"x": X[:2]}, grad=("x",)),
    Case("glu_odd", lambda x: F.glu(x, 0), "F.glu(x, 0)", {"x": X}, raises=RuntimeError),
    Case("prelu", lambda x, w: F.prelu(x, w), "F.prelu(x, w)", {"x": IMG, "w": CH},
         grad=("x", "w")),
    Case("linear", lambda x, w, b: F.linear(x, w, b), "F.linear(x, w, b)",
         {"x": X, "w": W_LIN, "b": B_LIN}, grad=("x", "w", "b"), rtol=1e-4, atol=1e-5),
    Case("bilinear", lambda x, y, w, b: F.bilinear(x, y, w, b), "F.bilinear(x, y, w, b)",
         {"x": X, "y": X[:, :3], "w": rnd((2, 5, 3), 22), "b": rnd((2,), 23)},
         grad=("x", "y", "w", "b"), rtol=1e-4, atol=1e-5),
    Case("conv2d", lambda x, w, b: F.conv2d(x, w, b, stride=2, padding=1),
         "F.conv2d(x, w, b, stride=2, padding=1)",
         {"x": IMG, "w": rnd((3, 4, 3, 3), 24), "b": rnd((3,), 25)}, grad=("x", "w", "b"),
         rtol=1e-4, atol=1e-4),
    Case("conv1d", lambda x, w: F.conv1d(x, w, padding=2, dilation=2),
         "F.conv1d(x, w, padding=2, dilation=2)", {"x": SEQ, "w": rnd((5, 3, 3), 26)},
         grad=("x", "w"), rtol=1e-4, atol=1e-4),
    Case("max_pool2d", lambda x: F.max_pool2d(x, 3, stride=2, padding=1),
         "F.max_pool2d(x, 3, stride=2, padding=1)", {"x": IMG}, grad=("x",)),
    Case("avg_pool2d", lambda x: F.avg_pool2d(x, 2), "F.avg_pool2d(x, 2)", {"x": IMG},
         grad=("x",)),
    Case("max_pool1d", lambda x: F.max_pool1d(x, 3), "F.max_pool1d(x, 3)", {"x": SEQ},
         grad=("x",)),
    Case("avg_pool1d", lambda x: F.avg_pool1d(x, 2, stride=1), "F.avg_pool1d(x, 2, stride=1)",
         {"x": SEQ}, grad=("x",)),
    Case("adaptive_avg_pool2d", lambda x: F.adaptive_avg_pool2d(x, (4, 1)),
         "F.adaptive_avg_pool2d(x, (4, 1))", {"x": IMG}, grad=("x",)),
    Case("adaptive_avg_pool2d_1", lambda x: F.adaptive_avg_pool2d(x, 1),
         "F.adaptive_avg_pool2d(x, 1)", {"x": IMG}, grad=("x",)),
    Case("adaptive_max_pool2d", lambda x: F.adaptive_max_pool2d(x, (4, 5)),
         "F.adaptive_max_pool2d(x, (4, 5))", {"x": IMG}, grad=("x",)),
    Case("adaptive_avg_pool1d", lambda x: F.adaptive_avg_pool1d(x, 4),
         "F.adaptive_avg_pool1d(x, 4)", {"x": SEQ}, grad=("x",)),
    Case("adaptive_max_pool1d", lambda x: F.adaptive_max_pool1d(x, 4),
         "F.adaptive_max_pool1d(x, 4)", {"x": SEQ}, grad=("x",)),
    Case("lp_pool2d", lambda x: F.lp_pool2d(x * x + 0.1, 2, 2), "F.lp_pool2d(x * x + 0.1, 2, 2)",
         {"x": IMG}, grad=("x",), rtol=1e-4),
    Case("lp_pool1d", lambda x: F.lp_pool1d(x * x + 0.1, 3, 3), "F.lp_pool1d(x * x + 0.1, 3, 3)",
         {"x": SEQ}, grad=("x",), rtol=1e-4),
    Case("unfold", lambda x: F.unfold(x, 3, padding=1, stride=2),
         "F.unfold(x, 3, padding=1, stride=2)", {"x": IMG}, grad=("x",)),
    Case("pad", lambda x: F.pad(x, (1, 2, 0, 1), value=0.5), "F.pad(x, (1, 2, 0, 1), value=0.5)",
         {"x": IMG}, grad=("x",)),
    Case("pixel_shuffle", lambda x: F.pixel_shuffle(x, 2), "F.pixel_shuffle(x, 2)",
         {"x": IMG}, grad=("x",)),
    Case("pixel_unshuffle", lambda x: F.pixel_unshuffle(x, 3), "F.pixel_unshuffle(x, 3)",
         {"x": IMG}, grad=("x",)),
    Case("channel_shuffle", lambda x: F.channel_shuffle(x, 2), "F.channel_shuffle(x, 2)",
         {"x": IMG}),
    Case("one_hot", lambda t: F.one_hot(t, 6), "F.one_hot(t, 6)", {"t": LABELS}),
    Case("one_hot_auto", lambda t: F.one_hot(t), "F.one_hot(t)", {"t": LABELS}),
    Case("embedding", lambda t, w: F.embedding(t, w), "F.embedding(t, w)",
         {"t": LABELS, "w": W_LIN.T.copy()}, grad=("w",)),
    Case("batch_norm_train", lambda x, w, b: F.batch_norm(x, None, None, w, b, training=True),
         "F.batch_norm(x, None, None, w, b, training=True)", {"x": IMG, "w": CH, "b": CH_B},
         grad=("x", "w", "b"), rtol=1e-4, atol=1e-5),
    Case("batch_norm_eval", lambda x, m, v: F.batch_norm(x, m, v, eps=1e-3),
         "F.batch_norm(x, m, v, eps=1e-3)", {"x": IMG, "m": CH_B, "v": CH}, grad=("x",)),
    Case("layer_norm", lambda x, w, b: F.layer_norm(x, (6, 6), w, b),
         "F.layer_norm(x, (6, 6), w, b)", {"x": IMG, "w": rnd((6, 6), 27), "b": rnd((6, 6), 28)},
         grad=("x", "w", "b"), rtol=1e-4, atol=1e-5),
    Case("group_norm", lambda x, w, b: F.group_norm(x, 2, w, b), "F.group_norm(x, 2, w, b)",
         {"x": IMG, "w": CH, "b": CH_B}, grad=("x", "w", "b"), rtol=1e-4, atol=1e-5),
    Case("instance_norm", lambda x: F.instance_norm(x), "F.instance_norm(x)", {"x": IMG},
         grad=("x",), rtol=1e-4, atol=1e-5),
    Case("local_response_norm", lambda x: F.local_response_norm(x, 3, alpha=0.1),
         "F.local_response_norm(x, 3, alpha=0.1)", {"x": IMG}, grad=("x",), rtol=1e-4,
         atol=1e-5),
    Case("mse_loss", lambda x, y: F.mse_loss(x, y), "F.mse_loss(x, y)", {"x": X, "y": Y01},
         grad=("x", "y")),
    Case("l1_loss", lambda x, y: F.l1_loss(x, y, reduction="sum"),
         "F.l1_loss(x, y, reduction='sum')", {"x": X, "y": Y01}, grad=("x",)),
    Case("smooth_l1_loss", lambda x, y: F.smooth_l1_loss(x, y, beta=0.5, reduction="none"),
         "F.smooth_l1_loss(x, y, beta=0.5, reduction='none')", {"x": X, "y": Y01},
         grad=("x", "y")),
    Case("huber_loss", lambda x, y: F.huber_loss(x, y, delta=0.7), "F.huber_loss(x, y, delta=0.7)",
         {"x": X, "y": Y01}, grad=("x",)),
    Case("cross_entropy", lambda x, t: F.cross_entropy(x, t), "F.cross_entropy(x, t)",
         {"x": X, "t": LABELS}, grad=("x",)),
    Case("cross_entropy_probs", lambda x, y: F.cross_entropy(x, y, reduction="sum"),
         "F.cross_entropy(x, y, reduction='sum')", {"x": X, "y": P / P.sum(1, keepdims=True)},
         grad=("x",)),
    Case("nll_loss", lambda x, t: F.nll_loss(x, t, reduction="none"),
         "F.nll_loss(x, t, reduction='none')", {"x": X, "t": LABELS}, grad=("x",)),
    Case("binary_cross_entropy", lambda p, y: F.binary_cross_entropy(p, y),
         "F.binary_cross_entropy(p, y)", {"p": P, "y": Y01}, grad=("p",)),
    Case("binary_cross_entropy_with_logits",
         lambda x, y: F.binary_cross_entropy_with_logits(x, y),
         "F.binary_cross_entropy_with_logits(x, y)", {"x": X, "y": Y01}, grad=("x", "y")),
    Case("kl_div", lambda x, y: F.kl_div(x, y, reduction="batchmean"),
         "F.kl_div(x, y, reduction='batchmean')",
         {"x": np.log(P / P.sum(1, keepdims=True)), "y": np.where(Y01 > 0.2, Y01, 0.0)},
         grad=("x",)),
    Case("kl_div_log_target", lambda x, y: F.kl_div(x, y, reduction="sum", log_target=True),
         "F.kl_div(x, y, reduction='sum', log_target=True)", {"x": X, "y": -P}, grad=("x", "y")),
    Case("cosine_similarity", lambda x, y: F.cosine_similarity(x, y),
         "F.cosine_similarity(x, y)", {"x": X, "y": Y01}, grad=("x", "y")),
    Case("cosine_similarity_dim0", lambda x, y: F.cosine_similarity(x, y, dim=0),
         "F.cosine_similarity(x, y, dim=0)", {"x": X, "y": Y01}, grad=("x", "y")),
    Case("pairwise_distance", lambda x, y: F.pairwise_distance(x, y),
         "F.pairwise_distance(x, y)", {"x": X, "y": Y01}, grad=("x", "y")),
    Case("pairwise_distance_p1", lambda x, y: F.pairwise_distance(x, y, p=1, keepdim=True),
         "F.pairwise_distance(x, y, p=1, keepdim=True)", {"x": X, "y": Y01}, grad=("x",)),
    Case("margin_ranking_loss", lambda a, b, y: F.margin_ranking_loss(a, b, y, margin=0.3),
         "F.margin_ranking_loss(a, b, y, margin=0.3)", {"a": X[:, 0], "b": X[:, 1], "y": SIGNS},
         grad=("a", "b")),
    Case("hinge_embedding_loss", lambda x, y: F.hinge_embedding_loss(x, y),
         "F.hinge_embedding_loss(x, y)", {"x": X[:, 0], "y": SIGNS}, grad=("x",)),
    Case("soft_margin_loss", lambda x, y: F.soft_margin_loss(x, y), "F.soft_margin_loss(x, y)",
         {"x": X[:, 0], "y": SIGNS}, grad=("x",)),
    Case("triplet_margin_loss", lambda a, p, n: F.triplet_margin_loss(a, p, n, swap=True),
         "F.triplet_margin_loss(a, p, n, swap=True)", {"a": X, "p": Y01, "n": P},
         grad=("a", "p", "n")),
    Case("cosine_embedding_loss", lambda a, b, y: F.cosine_embedding_loss(a, b, y, margin=-0.5),
         "F.cosine_embedding_loss(a, b, y, margin=-0.5)", {"a": X, "b": Y01, "y": SIGNS},
         grad=("a", "b")),
    Case("poisson_nll_loss", lambda x, y: F.poisson_nll_loss(x, y), "F.poisson_nll_loss(x, y)",
         {"x": X, "y": Y01 * 3}, grad=("x",)),
    Case("poisson_nll_loss_rates", lambda x, y: F.poisson_nll_loss(x, y, log_input=False),
         "F.poisson_nll_loss(x, y, log_input=False)", {"x": P, "y": Y01 * 3}, grad=("x",)),
    Case("gaussian_nll_loss", lambda x, y, v: F.gaussian_nll_loss(x, y, v, full=True),
         "F.gaussian_nll_loss(x, y, v, full=True)", {"x": X, "y": Y01, "v": POS_VAR},
         grad=("x", "v")),
    Case("multilabel_soft_margin_loss", lambda x, y: F.multilabel_soft_margin_loss(x, y),
         "F.multilabel_soft_margin_loss(x, y)", {"x": X, "y": (Y01 > 0.5).astype(np.float32)},
         grad=("x",)),
]

# same-text cases: the expression runs with gpuaccel's F and with torch's
_SAME_TEXT = [
    "F.relu_(x.clone())", "F.relu_(-x)", "F.elu_(x.clone())", "F.elu_(x * 2, alpha=0.5)",
    "F.celu_(x.clone())", "F.celu_(x * 2, alpha=2.0)", "F.selu_(x.clone())", "F.selu_(x * 3)",
    "F.hardtanh_(x.clone())", "F.hardtanh_(x * 2, -0.5, 0.5)", "F.leaky_relu_(x.clone())",
    "F.leaky_relu_(x * 2, 0.3)", "F.threshold_(x.clone(), 0.5, -1.0)",
    "F.threshold_(x * 2, -0.1, 7.0)", "F.elu(x, inplace=True)", "F.relu(x * 1, inplace=True)",
    "F.dropout1d(img[0], 0.3, training=False)", "F.dropout1d(img[:, :, 0], training=False)",
    "F.dropout2d(img, 0.3, training=False)", "F.dropout2d(img[0], p=0.0)",
    "F.dropout3d(img[None], 0.3, training=False)", "F.dropout3d(img, p=0.0)",
    "F.gelu(x * 3, approximate='tanh')", "F.glu(img, 1)",
]
CASES += [Case(f"same{k}", None, expr, {"x": X, "img": IMG}) for k, expr in enumerate(_SAME_TEXT)]


torch_results, test_matches_pytorch = torch_reference.comparison_tests(CASES)


def test_batch_norm_updates_running_statistics_as_pytorch():
    ref = torch_reference.run("""
m, v = torch.zeros(4), torch.ones(4)
F.batch_norm(torch.from_numpy(x), m, v, training=True, momentum=0.3)
out["m"], out["v"] = m.numpy(), v.numpy()
""".replace("F.", "torch.nn.functional."), x=IMG)
    m, v = ga.zeros([4]), ga.ones([4])
    F.batch_norm(ga.tensor(IMG), m, v, training=True, momentum=0.3)
    np.testing.assert_allclose(m.numpy(), ref["m"], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(v.numpy(), ref["v"], rtol=1e-5, atol=1e-6)


def test_in_place_forms_write_into_their_input_as_pytorch():
    ref = torch_reference.run("""
import torch.nn.functional as F
outs = {}
for name, fn in [("relu_", F.relu_), ("elu_", F.elu_), ("leaky_relu_", F.leaky_relu_),
                 ("hardtanh_", F.hardtanh_), ("selu_", F.selu_), ("celu_", F.celu_)]:
    t = torch.from_numpy(x.copy())
    r = fn(t)
    out[name] = t.numpy()
    out[name + "_same"] = r is t
t = torch.from_numpy(x.copy())
F.threshold_(t, 0.1, 9.0)
out["threshold_"] = t.numpy()
""", x=X)
    for name in ("relu_", "elu_", "leaky_relu_", "hardtanh_", "selu_", "celu_"):
        t = ga.tensor(X)
        assert (getattr(F, name)(t) is t) == ref[name + "_same"], name
        np.testing.assert_allclose(t.numpy(), ref[name], rtol=1e-5, atol=1e-6, err_msg=name)
    t = ga.tensor(X)
    F.threshold_(t, 0.1, 9.0)
    np.testing.assert_allclose(t.numpy(), ref["threshold_"])


@pytest.mark.parametrize("fn", [F.dropout1d, F.dropout2d, F.dropout3d])
def test_feature_dropout_drops_whole_channels(fn):
    ga.random.set_seed(3) if hasattr(ga.random, "set_seed") else None
    dims = int(fn.__name__[-2])
    x = ga.ones([8, 16] + [3] * dims)
    out = fn(x, p=0.5).numpy().reshape(8, 16, -1)
    per_channel = out[:, :, 0]
    assert set(np.unique(per_channel)) == {0.0, 2.0}  # dropped, or kept and scaled by 1/(1-p)
    np.testing.assert_array_equal(out, np.repeat(per_channel[:, :, None], out.shape[2], 2))
    np.testing.assert_array_equal(fn(x, p=0.5, training=False).numpy(), x.numpy())
    ref = torch_reference.run(f"out['y'] = torch.nn.functional.{fn.__name__}(torch.ones("
                              f"{[2, 3] + [3] * dims}), 0.5, training=False).numpy()")
    np.testing.assert_array_equal(F.__dict__[fn.__name__](ga.ones([2, 3] + [3] * dims), 0.5,
                                                          training=False).numpy(), ref["y"])
