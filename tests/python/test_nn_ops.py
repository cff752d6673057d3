"""Neural-network ops (gpuaccel.nn, tf.nn names) against NumPy float64 references and, for the
Keras/TF semantics (padding rules, batch-norm statistics, cross-entropy gradients), against real
TensorFlow run in float64 with the same inputs and weights."""
import numpy as np
import pytest

import gpuaccel as ga
from gpuaccel import _C, errors, nn

F32 = dict(rtol=1e-4, atol=1e-5)
# bf16 keeps 8 significand bits: inputs are rounded to ~2^-9 relative, sums accumulate in f32.
BF16_RTOL = 2e-2


def rng(seed=0):
    return np.random.default_rng(seed)


def T(a, grad=False, dtype="float32"):
    t = ga.tensor(np.asarray(a, dtype=np.float32))
    if dtype != "float32":
        t = t.to(dtype)
    if grad:
        t.requires_grad = True
    return t


def ga_grads(fn, arrays, upstream, dtype="float32"):
    """Output of fn(*tensors) and the gradients of sum(fn(...) * upstream) wrt every input."""
    ts = [T(a, grad=True, dtype=dtype) for a in arrays]
    with ga.GradientTape() as tape:
        y = fn(*ts)
    gs = tape.gradient(y, ts, output_gradients=T(upstream, dtype=dtype))
    return y.detach().numpy().astype(np.float64), [g.numpy().astype(np.float64) for g in gs]


def tf_grads(fn, arrays, upstream):
    tf = pytest.importorskip("tensorflow")
    ts = [tf.Variable(np.asarray(a, np.float64)) for a in arrays]
    with tf.GradientTape() as tape:
        y = fn(*ts)
    gs = tape.gradient(y, ts, output_gradients=tf.constant(np.asarray(upstream, np.float64)))
    return y.numpy(), [g.numpy() for g in gs]


def f32_round(a):
    """Inputs as the f32 the op really sees, widened to float64 for the references."""
    return np.asarray(a, np.float32).astype(np.float64)


# --------------------------------------------------------------------------------------------
# conv2d
# --------------------------------------------------------------------------------------------

def _same_pads(size, window, stride, dilation):
    out = -(-size // stride)
    eff = (window - 1) * dilation + 1
    total = max((out - 1) * stride + eff - size, 0)
    return out, total // 2, total - total // 2


def conv2d_im2col(x, w, strides=(1, 1), padding="VALID", dilations=(1, 1), bias=None):
    """NumPy float64 im2col convolution, NHWC input and HWIO kernel (TF's padding rule)."""
    x = np.asarray(x, np.float64)
    w = np.asarray(w, np.float64)
    n, h, wd, c = x.shape
    kh, kw, _, f = w.shape
    (sh, sw), (dh, dw) = strides, dilations
    if padding == "VALID":
        oh = (h - ((kh - 1) * dh + 1)) // sh + 1
        ow = (wd - ((kw - 1) * dw + 1)) // sw + 1
        pt = pb = pl = pr = 0
    else:
        oh, pt, pb = _same_pads(h, kh, sh, dh)
        ow, pl, pr = _same_pads(wd, kw, sw, dw)
    xp = np.pad(x, ((0, 0), (pt, pb), (pl, pr), (0, 0)))
    cols = np.empty((n, oh, ow, kh, kw, c))
    for i in range(kh):
        for j in range(kw):
            cols[:, :, :, i, j, :] = xp[:, i * dh:i * dh + (oh - 1) * sh + 1:sh,
                                        j * dw:j * dw + (ow - 1) * sw + 1:sw, :]
    y = cols.reshape(n * oh * ow, kh * kw * c) @ w.reshape(kh * kw * c, f)
    y = y.reshape(n, oh, ow, f)
    if bias is not None:
        y = y + np.asarray(bias, np.float64)
    return y


CONV_CASES = [
    # (input shape, kernel shape, strides, padding, dilations)
    ((2, 7, 7, 3), (3, 3, 3, 4), (1, 1), "VALID", (1, 1)),
    ((2, 7, 7, 3), (3, 3, 3, 4), (1, 1), "SAME", (1, 1)),
    ((1, 8, 6, 2), (2, 2, 2, 3), (1, 1), "SAME", (1, 1)),    # even kernel: asymmetric pads
    ((1, 8, 9, 2), (4, 3, 2, 3), (2, 2), "SAME", (1, 1)),    # even/odd sizes with stride
    ((2, 9, 10, 3), (3, 3, 3, 2), (2, 3), "VALID", (1, 1)),
    ((1, 10, 10, 2), (3, 3, 2, 2), (1, 1), "VALID", (2, 2)),
    ((1, 10, 9, 2), (3, 2, 2, 2), (1, 1), "SAME", (2, 3)),
    ((1, 5, 5, 1), (5, 5, 1, 1), (1, 1), "VALID", (1, 1)),   # output 1x1
    ((1, 3, 3, 2), (1, 1, 2, 5), (1, 1), "SAME", (1, 1)),    # 1x1 kernel
]


@pytest.mark.parametrize("xs,ws,strides,padding,dil", CONV_CASES)
@pytest.mark.parametrize("with_bias", [False, True])
def test_conv2d_forward_matches_numpy_im2col(xs, ws, strides, padding, dil, with_bias):
    r = rng(1)
    x = f32_round(r.standard_normal(xs))
    w = f32_round(r.standard_normal(ws))
    b = f32_round(r.standard_normal(ws[3])) if with_bias else None
    y = nn.conv2d(T(x), T(w), strides=strides, padding=padding, dilations=dil,
                  bias=T(b) if with_bias else None)
    ref = conv2d_im2col(x, w, strides, padding, dil, b)
    assert y.shape == ref.shape
    np.testing.assert_allclose(y.numpy(), ref, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("xs,ws,strides,padding,dil", [c for c in CONV_CASES if c[4] == (1, 1)])
def test_conv2d_gradients_match_tensorflow(xs, ws, strides, padding, dil):
    tf = pytest.importorskip("tensorflow")
    r = rng(2)
    x = f32_round(r.standard_normal(xs))
    w = f32_round(r.standard_normal(ws))
    b = f32_round(r.standard_normal(ws[3]))
    ref_y = conv2d_im2col(x, w, strides, padding, dil, b)
    g = f32_round(r.standard_normal(ref_y.shape))

    def ours(x_, w_, b_):
        return nn.conv2d(x_, w_, strides=strides, padding=padding, dilations=dil, bias=b_)

    def theirs(x_, w_, b_):
        return tf.nn.conv2d(x_, w_, strides=strides, padding=padding, dilations=dil) + b_

    y, (dx, dw, db) = ga_grads(ours, [x, w, b], g)
    ty, (tdx, tdw, tdb) = tf_grads(theirs, [x, w, b], g)
    np.testing.assert_allclose(ty, ref_y, rtol=1e-10, atol=1e-10)  # the reference agrees with TF
    np.testing.assert_allclose(y, ty, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(dx, tdx, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(dw, tdw, rtol=1e-4, atol=2e-4)
    np.testing.assert_allclose(db, tdb, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("xs,ws,args", [
    ((1, 9, 8, 2), (3, 2, 2, 2), dict(strides=(2, 2), padding="SAME", dilations=(2, 2))),
    ((1, 10, 10, 2), (3, 3, 2, 2), dict(strides=(1, 1), padding="VALID", dilations=(2, 2))),
    ((1, 10, 9, 2), (3, 2, 2, 2), dict(strides=(1, 1), padding="SAME", dilations=(2, 3))),
])
def test_conv2d_dilated_gradients_vs_finite_differences(xs, ws, args):
    """TF's CPU kernels have no dilated backprop (and reject strides with dilation): check these
    against central differences of the float64 im2col reference (exact: the op is linear in x
    and in w)."""
    r = rng(3)
    x = f32_round(r.standard_normal(xs))
    w = f32_round(r.standard_normal(ws))
    ref_y = conv2d_im2col(x, w, **args)
    g = f32_round(r.standard_normal(ref_y.shape))
    y, (dx, dw) = ga_grads(lambda a, b: nn.conv2d(a, b, **args), [x, w], g)
    np.testing.assert_allclose(y, ref_y, rtol=1e-4, atol=1e-4)

    def numeric(arr, f):
        out = np.zeros_like(arr)
        it = np.nditer(arr, flags=["multi_index"])
        for _ in it:
            idx = it.multi_index
            p, m = arr.copy(), arr.copy()
            p[idx] += 1e-3
            m[idx] -= 1e-3
            out[idx] = ((f(p) - f(m)) * g).sum() / 2e-3
        return out

    np.testing.assert_allclose(dx, numeric(x, lambda a: conv2d_im2col(a, w, **args)), atol=1e-4)
    np.testing.assert_allclose(dw, numeric(w, lambda b: conv2d_im2col(x, b, **args)), atol=1e-4)


FUSED_CONV_CASES = [
    ((2, 7, 6, 3), (3, 3, 3, 4), (1, 1), "VALID", (1, 1)),
    ((1, 7, 6, 2), (3, 2, 2, 3), (2, 2), "SAME", (1, 1)),
    ((1, 9, 8, 2), (3, 2, 2, 2), (1, 1), "SAME", (2, 2)),
]


def _fused_conv(strides, padding, dil):
    return lambda x_, w_, b_=None: _C.conv2d(x_, w_, b_, strides[0], strides[1], padding,
                                             dil[0], dil[1], activation="relu")


@pytest.mark.parametrize("xs,ws,strides,padding,dil", FUSED_CONV_CASES)
@pytest.mark.parametrize("with_bias", [True, False])
def test_conv2d_fused_relu_vs_finite_differences(xs, ws, strides, padding, dil, with_bias):
    """conv2d(..., activation='relu'): bias and relu run in the convolution's own pass, one
    autograd node differentiates all three. Forward against relu of the NumPy im2col reference,
    gradients of x, w and b against central differences of it (inputs away from relu's kink)."""
    r = rng(40)
    x = f32_round(r.standard_normal(xs))
    w = f32_round(r.standard_normal(ws))
    b = f32_round(r.standard_normal(ws[3]))
    args = dict(strides=strides, padding=padding, dilations=dil)
    z = conv2d_im2col(x, w, bias=b if with_bias else None, **args)
    assert (z > 0).any() and (z < 0).any() and np.abs(z).min() > 1e-3
    g = f32_round(r.standard_normal(z.shape))
    op = _fused_conv(strides, padding, dil)
    arrays = [x, w, b] if with_bias else [x, w]
    y, grads = ga_grads(op, arrays, g)
    np.testing.assert_allclose(y, np.maximum(z, 0), rtol=1e-4, atol=1e-4)

    def f(*a):
        return np.maximum(conv2d_im2col(a[0], a[1], bias=a[2] if with_bias else None, **args), 0)

    for i, (arr, got) in enumerate(zip(arrays, grads)):
        numeric = np.zeros_like(arr)
        for idx in np.ndindex(arr.shape):
            plus, minus = [a.copy() for a in arrays], [a.copy() for a in arrays]
            plus[i][idx] += 1e-6
            minus[i][idx] -= 1e-6
            numeric[idx] = ((f(*plus) - f(*minus)) * g).sum() / 2e-6
        np.testing.assert_allclose(got, numeric, rtol=1e-4, atol=2e-4)


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
def test_conv2d_fused_relu_in_low_precision(dtype):
    """The bf16 convolution (native) and the f16 one (staged through f32) with bias and relu
    fused: output and gradients within bf16's rounding of the float64 reference on the same
    (rounded) operands."""
    r = rng(41)
    arrays = [r.standard_normal(s) for s in [(2, 8, 7, 3), (3, 3, 3, 4), (4,)]]
    bf = [v.to("float32").numpy().astype(np.float64) for v in (T(a, dtype=dtype) for a in arrays)]
    z = conv2d_im2col(bf[0], bf[1], bias=bf[2])
    g = T(r.standard_normal(z.shape), dtype=dtype).to("float32").numpy().astype(np.float64)
    y, (dx, dw, db) = ga_grads(_fused_conv((1, 1), "VALID", (1, 1)), arrays, g, dtype=dtype)
    dz = np.where(z > 0, g, 0.0)
    # dx and dw of the linear convolution applied to the masked gradient, by differences
    # (exact: the convolution is linear in each operand).
    ref_dw = np.zeros_like(bf[1])
    for idx in np.ndindex(bf[1].shape):
        e = np.zeros_like(bf[1])
        e[idx] = 1.0
        ref_dw[idx] = (conv2d_im2col(bf[0], e) * dz).sum()
    ref_dx = np.zeros_like(bf[0])
    for idx in np.ndindex(bf[0].shape):
        e = np.zeros_like(bf[0])
        e[idx] = 1.0
        ref_dx[idx] = (conv2d_im2col(e, bf[1]) * dz).sum()
    for got, ref in [(y, np.maximum(z, 0)), (dx, ref_dx), (dw, ref_dw), (db, dz.sum((0, 1, 2)))]:
        np.testing.assert_allclose(got, ref, rtol=0, atol=BF16_RTOL * np.abs(ref).max())


@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
def test_fused_relu_keeps_nan_and_gives_positive_zero(dtype):
    """A NaN reaching the fused relu stays NaN (as tf.nn.relu and our own relu), so a diverged
    layer shows in the loss; negative values become +0, as Keras's relu."""
    x = np.ones((1, 3, 3, 1))
    x[0, 1, 1, 0] = np.nan
    w = np.array([1.0, -1.0]).reshape(1, 1, 1, 2)
    y = _C.conv2d(T(x, dtype=dtype), T(w, dtype=dtype), None, 1, 1, "VALID", 1, 1,
                  activation="relu").to("float32").numpy()
    assert np.isnan(y[0, 1, 1]).all()
    finite = y[~np.isnan(y)]
    assert set(finite.tolist()) == {0.0, 1.0} and not np.signbit(finite).any()
    a = np.ones((2, 64))
    a[0, 3] = np.nan
    out = _C.linear(T(a, dtype=dtype), T(np.ones((64, 70)), dtype=dtype), T(-np.ones(70) * 65, dtype=dtype),
                    activation="relu").to("float32").numpy()
    assert np.isnan(out[0]).all()
    assert (out[1] == 0).all() and not np.signbit(out[1]).any()


def test_conv2d_activation_names_the_allowed_ones():
    x, w = T(np.ones((1, 3, 3, 1))), T(np.ones((2, 2, 1, 1)))
    with pytest.raises(ValueError, match=r"\[Conv2D\].*'linear' or 'relu'.*'sigmoid'"):
        _C.conv2d(x, w, None, 1, 1, "VALID", 1, 1, activation="sigmoid")
    # 'linear' is the plain convolution: negative outputs stay.
    y = _C.conv2d(x, T(-np.ones((2, 2, 1, 1))), None, 1, 1, "VALID", 1, 1, activation="linear")
    np.testing.assert_array_equal(y.numpy(), np.full((1, 2, 2, 1), -4.0))


def test_conv2d_same_padding_matches_tensorflow_forward():
    tf = pytest.importorskip("tensorflow")
    r = rng(4)
    for xs, ws, st in [((1, 6, 7, 2), (2, 3, 2, 2), (2, 2)), ((1, 5, 4, 1), (4, 4, 1, 1), (3, 1))]:
        x = f32_round(r.standard_normal(xs))
        w = f32_round(r.standard_normal(ws))
        ref = tf.nn.conv2d(x, w, strides=st, padding="SAME").numpy()
        np.testing.assert_allclose(nn.conv2d(T(x), T(w), strides=st, padding="same").numpy(),
                                   ref, rtol=1e-4, atol=1e-4)


def test_conv2d_tf_style_strides_list():
    r = rng(5)
    x = f32_round(r.standard_normal((1, 6, 6, 2)))
    w = f32_round(r.standard_normal((3, 3, 2, 2)))
    y = nn.conv2d(T(x), T(w), strides=[1, 2, 2, 1], padding="VALID")
    np.testing.assert_allclose(y.numpy(), conv2d_im2col(x, w, (2, 2)), rtol=1e-4, atol=1e-4)


def test_conv2d_non_contiguous_input_from_nchw():
    r = rng(35)
    x_nchw = f32_round(r.standard_normal((2, 3, 6, 5)))
    w = f32_round(r.standard_normal((3, 3, 3, 2)))
    xt = ga.tensor(x_nchw.astype(np.float32)).permute(0, 2, 3, 1)  # a strided NHWC view
    x = x_nchw.transpose(0, 2, 3, 1)
    g = f32_round(r.standard_normal((2, 6, 5, 2)))
    xt.requires_grad = True
    with ga.GradientTape() as tape:
        tape.watch(xt)
        y = nn.conv2d(xt, T(w), padding="SAME")
    dx = tape.gradient(y, xt, output_gradients=T(g)).numpy()
    np.testing.assert_allclose(y.detach().numpy(), conv2d_im2col(x, w, padding="SAME"),
                               rtol=1e-4, atol=1e-4)
    # d/dx of sum(conv(x, w) * g): the im2col reference is linear in x, so its adjoint is
    # the convolution of g with the flipped, transposed kernel ("full" correlation).
    w_adj = w[::-1, ::-1].transpose(0, 1, 3, 2)
    np.testing.assert_allclose(dx, conv2d_im2col(g, w_adj, padding="SAME"), rtol=1e-4, atol=1e-4)


def test_conv2d_f16_forward_close_to_f32():
    r = rng(36)
    x = r.standard_normal((1, 6, 6, 8)).astype(np.float16)
    w = (r.standard_normal((3, 3, 8, 4)) / 8).astype(np.float16)
    y = nn.conv2d(ga.tensor(x), ga.tensor(w), padding="VALID")
    assert y.dtype == ga.float16
    ref = conv2d_im2col(x.astype(np.float64), w.astype(np.float64))
    np.testing.assert_allclose(y.to("float32").numpy(), ref, rtol=2 ** -10, atol=2e-3)


def test_conv2d_bf16_forward_close_to_f32():
    r = rng(6)
    x = r.standard_normal((2, 8, 8, 16)).astype(np.float32)
    w = (r.standard_normal((3, 3, 16, 8)) / 12).astype(np.float32)
    b = r.standard_normal(8).astype(np.float32)
    y = nn.conv2d(T(x, dtype="bfloat16"), T(w, dtype="bfloat16"), padding="SAME",
                  bias=T(b, dtype="bfloat16"))
    assert y.dtype == ga.bfloat16
    ref = conv2d_im2col(x, w, padding="SAME", bias=b)
    got = y.to("float32").numpy()
    # Error bound: each product carries ~2^-8 relative error from rounding x and w, plus the
    # output's own rounding; scale by the sum of |terms|.
    scale = conv2d_im2col(np.abs(x), np.abs(w), padding="SAME", bias=np.abs(b))
    assert np.all(np.abs(got - ref) <= BF16_RTOL * scale + 1e-2)
    assert np.abs(got - ref).max() > 0  # really computed in bf16, not f32


def test_conv2d_errors_name_shapes():
    x = T(np.zeros((2, 5, 5, 3)))
    with pytest.raises(ValueError) as e:
        nn.conv2d(T(np.zeros((5, 5, 3))), T(np.zeros((3, 3, 3, 4))))
    assert "(5, 5, 3)" in str(e.value) and "rank 4" in str(e.value)
    with pytest.raises(ValueError) as e:
        nn.conv2d(x, T(np.zeros((3, 3, 4))))
    assert "(3, 3, 4)" in str(e.value)
    with pytest.raises(errors.InvalidArgumentError) as e:
        nn.conv2d(x, T(np.zeros((3, 3, 2, 4))))
    msg = str(e.value)
    assert "3 channels" in msg and "(3, 3, 2, 4)" in msg
    with pytest.raises(ValueError) as e:
        nn.conv2d(x, T(np.zeros((3, 3, 3, 4))), bias=T(np.zeros(3)))
    assert "(4,)" in str(e.value)
    with pytest.raises(ValueError, match="padding"):
        nn.conv2d(x, T(np.zeros((3, 3, 3, 4))), padding="full")
    with pytest.raises(ValueError, match="smaller than the window"):
        nn.conv2d(T(np.zeros((1, 2, 2, 3))), T(np.zeros((3, 3, 3, 4))))


# --------------------------------------------------------------------------------------------
# pooling
# --------------------------------------------------------------------------------------------

def pool_ref(x, k, s, padding, kind):
    """NumPy float64 pooling; padded cells are ignored (max) or not counted (average)."""
    n, h, w, c = x.shape
    (kh, kw), (sh, sw) = k, s
    if padding == "VALID":
        oh, ow, pt, pl = (h - kh) // sh + 1, (w - kw) // sw + 1, 0, 0
    else:
        oh, pt, _ = _same_pads(h, kh, sh, 1)
        ow, pl, _ = _same_pads(w, kw, sw, 1)
    y = np.zeros((n, oh, ow, c))
    for i in range(oh):
        for j in range(ow):
            r0, c0 = i * sh - pt, j * sw - pl
            win = x[:, max(r0, 0):min(r0 + kh, h), max(c0, 0):min(c0 + kw, w), :]
            y[:, i, j, :] = win.max(axis=(1, 2)) if kind == "max" else win.mean(axis=(1, 2))
    return y


def pool_grad_ref(x, k, s, padding, kind, g):
    """Max: the upstream gradient goes to the (unique) maximum; average: spread over the
    counted cells of each window."""
    n, h, w, c = x.shape
    (kh, kw), (sh, sw) = k, s
    if padding == "VALID":
        oh, ow, pt, pl = (h - kh) // sh + 1, (w - kw) // sw + 1, 0, 0
    else:
        oh, pt, _ = _same_pads(h, kh, sh, 1)
        ow, pl, _ = _same_pads(w, kw, sw, 1)
    dx = np.zeros_like(x)
    for b in range(n):
        for i in range(oh):
            for j in range(ow):
                r0, c0 = i * sh - pt, j * sw - pl
                r1, c1 = max(r0, 0), max(c0, 0)
                r2, c2 = min(r0 + kh, h), min(c0 + kw, w)
                for ch in range(c):
                    win = x[b, r1:r2, c1:c2, ch]
                    if kind == "max":
                        a, bb = np.unravel_index(np.argmax(win), win.shape)
                        dx[b, r1 + a, c1 + bb, ch] += g[b, i, j, ch]
                    else:
                        dx[b, r1:r2, c1:c2, ch] += g[b, i, j, ch] / win.size
    return dx


POOL_CASES = [
    ((2, 6, 6, 3), (2, 2), (2, 2), "VALID"),
    ((1, 7, 7, 2), (3, 3), (2, 2), "VALID"),
    ((1, 7, 6, 2), (3, 3), (2, 2), "SAME"),
    ((1, 5, 5, 2), (2, 2), (1, 1), "SAME"),   # even window: pad only after
    ((2, 6, 5, 1), (3, 2), (1, 2), "SAME"),
    ((1, 4, 4, 1), (4, 4), (1, 1), "SAME"),   # big window: many padded cells
    ((1, 7, 7, 2), (2, 2), (3, 3), "VALID"),  # stride > window: skipped cells get no gradient
    ((2, 7, 5, 3), (2, 2), (2, 2), "VALID"),  # odd sizes: the last row and column get none
    ((1, 7, 5, 2), (2, 2), (2, 2), "SAME"),   # disjoint windows cut by the bottom/right padding
]


@pytest.mark.parametrize("kind", ["max", "avg"])
@pytest.mark.parametrize("xs,k,s,padding", POOL_CASES)
def test_pool2d_forward_and_backward_vs_numpy(kind, xs, k, s, padding):
    r = rng(7)
    # A permutation: all values distinct, so the max is unique.
    x = f32_round(r.permutation(np.prod(xs)).reshape(xs) / 7.0 - 3.0)
    ref = pool_ref(x, k, s, padding, kind)
    g = f32_round(r.standard_normal(ref.shape))
    op = nn.max_pool2d if kind == "max" else nn.avg_pool2d
    y, (dx,) = ga_grads(lambda a: op(a, ksize=k, strides=s, padding=padding), [x], g)
    np.testing.assert_allclose(y, ref, **F32)
    np.testing.assert_allclose(dx, pool_grad_ref(x, k, s, padding, kind, g), **F32)


@pytest.mark.parametrize("kind", ["max", "avg"])
def test_pool2d_same_padding_matches_tensorflow(kind):
    tf = pytest.importorskip("tensorflow")
    r = rng(8)
    x = f32_round(r.standard_normal((2, 7, 6, 3)))
    g = f32_round(r.standard_normal((2, 3, 2, 3)))
    op = nn.max_pool2d if kind == "max" else nn.avg_pool2d
    tf_op = tf.nn.max_pool2d if kind == "max" else tf.nn.avg_pool2d
    y, (dx,) = ga_grads(lambda a: op(a, 3, 3, "SAME"), [x], g)
    ty, (tdx,) = tf_grads(lambda a: tf_op(a, 3, 3, "SAME"), [x], g)
    np.testing.assert_allclose(y, ty, **F32)
    np.testing.assert_allclose(dx, tdx, **F32)


def test_max_pool_ties_match_tensorflow():
    """Equal values in a window: the gradient goes to one of them, the same one TF picks."""
    tf = pytest.importorskip("tensorflow")
    x = np.zeros((1, 4, 4, 1))
    x[0, 1, 1, 0] = x[0, 0, 2, 0] = x[0, 1, 3, 0] = 1.0     # ties of 1s in two windows
    g = np.arange(1, 5, dtype=np.float64).reshape(1, 2, 2, 1)
    y, (dx,) = ga_grads(lambda a: nn.max_pool2d(a, 2, 2), [x], g)
    ty, (tdx,) = tf_grads(lambda a: tf.nn.max_pool2d(a, 2, 2, "VALID"), [x], g)
    np.testing.assert_array_equal(y, ty)
    np.testing.assert_array_equal(dx, tdx)
    assert dx.sum() == g.sum()  # each window sends its gradient to exactly one cell


def test_max_pool_gradient_through_watched_tensor():
    """A tensor watched by a tape (not requires_grad) still gets max pooling's gradient."""
    x = f32_round(rng(30).permutation(32).reshape(1, 4, 4, 2))
    xt = T(x)
    with ga.GradientTape() as tape:
        tape.watch(xt)
        y = nn.max_pool2d(xt, 2, 2)
    g = f32_round(rng(31).standard_normal((1, 2, 2, 2)))
    dx = tape.gradient(y, xt, output_gradients=T(g)).numpy()
    np.testing.assert_allclose(dx, pool_grad_ref(x, (2, 2), (2, 2), "VALID", "max", g), **F32)


@pytest.mark.parametrize("kind", ["max", "avg"])
def test_pool2d_bf16_forward(kind):
    tf = pytest.importorskip("tensorflow")
    xb = T(rng(32).standard_normal((2, 7, 6, 3)), dtype="bfloat16")
    seen = xb.to("float32").numpy()
    op = nn.max_pool2d if kind == "max" else nn.avg_pool2d
    tf_op = tf.nn.max_pool2d if kind == "max" else tf.nn.avg_pool2d
    y = op(xb, 3, 2, "SAME")
    assert y.dtype == ga.bfloat16
    ref = tf_op(seen.astype(np.float64), 3, 2, "SAME").numpy()
    if kind == "max":  # the max of bf16 values is one of them: exact
        np.testing.assert_array_equal(y.to("float32").numpy(), ref)
    else:  # one bf16 rounding of the mean: 2^-8 relative
        np.testing.assert_allclose(y.to("float32").numpy(), ref, rtol=2 ** -8, atol=1e-6)


@pytest.mark.parametrize("k,s,padding", [((2, 2), (2, 2), "VALID"), ((3, 3), (2, 2), "SAME"),
                                          ((2, 2), (2, 2), "SAME")])
def test_max_pool_bf16_backward_is_exact(k, s, padding):
    """bf16 max pooling's gradient: each upstream value lands unrounded at its window's argmax
    (summed in f32 and rounded once where windows overlap)."""
    r = rng(33)
    x = T(r.permutation(2 * 7 * 6 * 3).reshape(2, 7, 6, 3) / 8.0 - 3.0, dtype="bfloat16")
    xs = x.to("float32").numpy().astype(np.float64)
    ref_y = pool_ref(xs, k, s, padding, "max")
    g = T(r.standard_normal(ref_y.shape), dtype="bfloat16")
    gs = g.to("float32").numpy().astype(np.float64)
    x.requires_grad = True
    with ga.GradientTape() as tape:
        y = nn.max_pool2d(x, ksize=k, strides=s, padding=padding)
    (dx,) = tape.gradient(y, [x], output_gradients=g)
    assert dx.dtype == ga.bfloat16
    ref = pool_grad_ref(xs, k, s, padding, "max", gs)
    got = dx.to("float32").numpy()
    if s[0] >= k[0]:
        np.testing.assert_array_equal(got, ref)
    else:
        np.testing.assert_allclose(got, ref, rtol=2 ** -8, atol=0)


def test_pool_errors():
    with pytest.raises(ValueError) as e:
        nn.max_pool2d(T(np.zeros((4, 4, 1))), 2, 2)
    assert "(4, 4, 1)" in str(e.value)
    with pytest.raises(ValueError, match="smaller than the window"):
        nn.avg_pool2d(T(np.zeros((1, 2, 2, 1))), 3, 1)
    with pytest.raises(ValueError):
        nn.max_pool2d(T(np.zeros((1, 4, 4, 1))), 2, 0)


# --------------------------------------------------------------------------------------------
# activations, softmax
# --------------------------------------------------------------------------------------------

def np_softmax(x, axis):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


@pytest.mark.parametrize("axis", [-1, 0, 1, 2])
@pytest.mark.parametrize("log", [False, True])
def test_softmax_forward_and_gradient(axis, log):
    r = rng(9)
    x = f32_round(r.standard_normal((3, 4, 5)) * 3)
    g = f32_round(r.standard_normal(x.shape))
    s = np_softmax(x, axis)
    if log:
        ref = np.log(s)
        ref_dx = g - s * g.sum(axis=axis, keepdims=True)
        op = nn.log_softmax
    else:
        ref = s
        ref_dx = s * (g - (g * s).sum(axis=axis, keepdims=True))
        op = nn.softmax
    y, (dx,) = ga_grads(lambda a: op(a, axis=axis), [x], g)
    # oneDNN's log-softmax is accurate to a few ulps of the row's largest logit (|x| <= ~10
    # here), not of each output: an absolute tolerance of 1e-5.
    np.testing.assert_allclose(y, ref, rtol=1e-5, atol=1e-5 if log else 1e-6)
    np.testing.assert_allclose(dx, ref_dx, rtol=1e-4, atol=1e-5)


def test_log_softmax_gradient_when_output_is_not_kept():
    """The output is dropped right away (sum's backward does not hold it): the backward pass
    must still see the right probabilities."""
    r = rng(33)
    x = f32_round(r.standard_normal((3, 5)))
    g = f32_round(r.standard_normal(3))
    _, (dx,) = ga_grads(lambda a: nn.log_softmax(a).sum(axis=-1), [x], g)
    np.testing.assert_allclose(dx, g[:, None] * (1 - 5 * np_softmax(x, -1)), rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("axis", [-1, 0])
def test_softmax_bf16_close_to_f32(axis):
    xb = T(rng(34).standard_normal((6, 9)) * 2, dtype="bfloat16")
    seen = xb.to("float32").numpy().astype(np.float64)
    y = nn.softmax(xb, axis=axis)
    assert y.dtype == ga.bfloat16
    # oneDNN's bf16 softmax is not correctly rounded (errors of ~1.6 bf16 ulps were seen, not
    # the half ulp of one final rounding): allow 2 ulps, 2^-7 relative.
    np.testing.assert_allclose(y.to("float32").numpy(), np_softmax(seen, axis), rtol=2 ** -7,
                               atol=1e-6)


def test_softmax_large_logits_are_stable():
    x = np.array([[1000.0, 1001.0, 1002.0], [-1000.0, 0.0, 1000.0]])
    np.testing.assert_allclose(nn.softmax(T(x)).numpy(), np_softmax(x, -1), rtol=1e-6, atol=1e-7)
    ls = nn.log_softmax(T(x)).numpy()
    assert np.all(np.isfinite(ls[0]))
    np.testing.assert_allclose(ls[0], np.log(np_softmax(x[:1], -1))[0], rtol=1e-5)


def test_softmax_bad_axis():
    with pytest.raises((ValueError, IndexError)):
        nn.softmax(T(np.zeros((2, 3))), axis=2)


@pytest.mark.parametrize("name", ["relu", "sigmoid", "tanh", "gelu"])
def test_activations_forward_and_gradient(name):
    from math import erf
    r = rng(10)
    x = f32_round(r.standard_normal((4, 7)) * 2)
    x[0, 0] = 0.5  # keep away from relu's kink
    x = np.where(np.abs(x) < 1e-3, 0.1, x)
    g = f32_round(r.standard_normal(x.shape))
    verf = np.vectorize(erf)
    cdf = 0.5 * (1 + verf(x / np.sqrt(2)))
    pdf = np.exp(-x * x / 2) / np.sqrt(2 * np.pi)
    sig = 1 / (1 + np.exp(-x))
    ref, d = {
        "relu": (np.maximum(x, 0), (x > 0).astype(float)),
        "sigmoid": (sig, sig * (1 - sig)),
        "tanh": (np.tanh(x), 1 - np.tanh(x) ** 2),
        "gelu": (x * cdf, cdf + x * pdf),
    }[name]
    y, (dx,) = ga_grads(getattr(nn, name), [x], g)
    np.testing.assert_allclose(y, ref, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(dx, d * g, rtol=1e-4, atol=1e-5)


# --------------------------------------------------------------------------------------------
# dropout
# --------------------------------------------------------------------------------------------

@pytest.mark.parametrize("rate", [0.1, 0.5, 0.8])
def test_dropout_training_statistics(rate):
    ga.random.set_seed(123)
    n = 200_000
    x = np.full(n, 2.0)
    y = nn.dropout(T(x), rate, training=True).numpy()
    zeros = (y == 0).mean()
    # Binomial: sd of the zero fraction is sqrt(r(1-r)/n) <= 0.0012; allow ~5 sd.
    assert abs(zeros - rate) < 0.006
    kept = y[y != 0]
    np.testing.assert_allclose(kept, 2.0 / (1 - rate), rtol=1e-6)
    assert abs(y.mean() - 2.0) < 5 * 2.0 * np.sqrt(rate / (1 - rate) / n)


def test_dropout_identity_when_not_training_and_rate_zero():
    x = f32_round(rng(11).standard_normal((5, 6)))
    np.testing.assert_array_equal(nn.dropout(T(x), 0.5, training=False).numpy(), x)
    np.testing.assert_array_equal(nn.dropout(T(x), 0.0, training=True).numpy(), x)
    # still differentiable: identity gradient
    g = f32_round(rng(12).standard_normal(x.shape))
    _, (dx,) = ga_grads(lambda a: nn.dropout(a, 0.5, training=False) * 1.0, [x], g)
    np.testing.assert_allclose(dx, g)


def test_dropout_gradient_uses_the_same_mask():
    ga.random.set_seed(7)
    r = rng(13)
    x = f32_round(r.uniform(1, 2, (64, 33)))  # never zero, so zeros in y mark dropped cells
    g = f32_round(r.standard_normal(x.shape))
    y, (dx,) = ga_grads(lambda a: nn.dropout(a, 0.3), [x], g)
    keep = y != 0
    assert 0.5 < keep.mean() < 0.9
    np.testing.assert_allclose(y, np.where(keep, x / 0.7, 0), rtol=1e-6)
    np.testing.assert_allclose(dx, np.where(keep, g / 0.7, 0), rtol=1e-6, atol=1e-7)


def test_dropout_seeded_is_reproducible():
    x = T(np.ones((100,)))
    ga.random.set_seed(5)
    a = nn.dropout(x, 0.5).numpy()
    ga.random.set_seed(5)
    b = nn.dropout(x, 0.5).numpy()
    c = nn.dropout(x, 0.5).numpy()
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(b, c)


@pytest.mark.parametrize("rate", [-0.1, 1.0, 1.5, float("nan")])
def test_dropout_rate_validation(rate):
    with pytest.raises(ValueError, match="rate"):
        nn.dropout(T(np.ones(3)), rate)


# --------------------------------------------------------------------------------------------
# batch and layer normalization
# --------------------------------------------------------------------------------------------

def _keras_bn(shape, gamma, beta, mm, mv):
    tf = pytest.importorskip("tensorflow")
    layer = tf.keras.layers.BatchNormalization(momentum=0.99, epsilon=1e-3, dtype="float64")
    layer.build(shape)
    layer.set_weights([gamma, beta, mm, mv])
    return tf, layer


@pytest.mark.parametrize("shape", [(16, 5), (4, 3, 3, 6)])
def test_batch_norm_training_matches_keras(shape):
    r = rng(14)
    c = shape[-1]
    x = f32_round(r.standard_normal(shape) * 2 + 1)
    gamma = f32_round(r.uniform(0.5, 1.5, c))
    beta = f32_round(r.standard_normal(c))
    mm = f32_round(r.standard_normal(c))
    mv = f32_round(r.uniform(0.5, 2, c))
    g = f32_round(r.standard_normal(shape))

    tf, layer = _keras_bn(shape, gamma, beta, mm, mv)
    xv = tf.Variable(x)
    with tf.GradientTape() as tape:
        ty = layer(xv, training=True)
    tdx, tdgamma, tdbeta = tape.gradient(ty, [xv, layer.gamma, layer.beta], output_gradients=g)
    t_mm, t_mv = layer.moving_mean.numpy(), layer.moving_variance.numpy()

    moving_mean, moving_var = T(mm), T(mv)
    xs, gs, bs = T(x, grad=True), T(gamma, grad=True), T(beta, grad=True)
    with ga.GradientTape() as tape:
        y = nn.keras_batch_normalization(xs, gs, bs, moving_mean, moving_var, momentum=0.99,
                                   epsilon=1e-3, training=True)
    dx, dgamma, dbeta = tape.gradient(y, [xs, gs, bs], output_gradients=T(g))

    np.testing.assert_allclose(y.detach().numpy(), ty.numpy(), rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(moving_mean.numpy(), t_mm, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(moving_var.numpy(), t_mv, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(dx.numpy(), tdx.numpy(), rtol=1e-3, atol=1e-4)
    np.testing.assert_allclose(dgamma.numpy(), tdgamma.numpy(), rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(dbeta.numpy(), tdbeta.numpy(), rtol=1e-4, atol=1e-4)


def test_batch_norm_inference_matches_keras_and_keeps_moving_stats():
    r = rng(15)
    shape, c = (6, 4, 4, 3), 3
    x = f32_round(r.standard_normal(shape))
    gamma = f32_round(r.uniform(0.5, 1.5, c))
    beta = f32_round(r.standard_normal(c))
    mm = f32_round(r.standard_normal(c))
    mv = f32_round(r.uniform(0.5, 2, c))
    g = f32_round(r.standard_normal(shape))
    tf, layer = _keras_bn(shape, gamma, beta, mm, mv)
    xv = tf.Variable(x)
    with tf.GradientTape() as tape:
        ty = layer(xv, training=False)
    tdx, tdgamma, tdbeta = tape.gradient(ty, [xv, layer.gamma, layer.beta], output_gradients=g)

    moving_mean, moving_var = T(mm), T(mv)
    xs, gs, bs = T(x, grad=True), T(gamma, grad=True), T(beta, grad=True)
    with ga.GradientTape() as tape:
        y = nn.keras_batch_normalization(xs, gs, bs, moving_mean, moving_var, training=False)
    dx, dgamma, dbeta = tape.gradient(y, [xs, gs, bs], output_gradients=T(g))
    np.testing.assert_allclose(y.detach().numpy(), ty.numpy(), rtol=1e-5, atol=1e-5)
    np.testing.assert_array_equal(moving_mean.numpy(), mm)
    np.testing.assert_array_equal(moving_var.numpy(), mv)
    np.testing.assert_allclose(dx.numpy(), tdx.numpy(), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(dgamma.numpy(), tdgamma.numpy(), rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(dbeta.numpy(), tdbeta.numpy(), rtol=1e-4, atol=1e-4)


def test_batch_norm_errors():
    x = T(np.zeros((4, 3)))
    ok = T(np.zeros(3))
    with pytest.raises(ValueError) as e:
        nn.keras_batch_normalization(x, T(np.zeros(4)), ok, ok, ok)
    assert "(3,)" in str(e.value)
    with pytest.raises(ValueError):
        nn.keras_batch_normalization(T(np.zeros(3)), ok, ok, ok, ok)


def test_layer_norm_matches_numpy_and_keras():
    tf = pytest.importorskip("tensorflow")
    r = rng(16)
    shape, c = (3, 5, 8), 8
    x = f32_round(r.standard_normal(shape) * 3 + 2)
    gamma = f32_round(r.uniform(0.5, 1.5, c))
    beta = f32_round(r.standard_normal(c))
    g = f32_round(r.standard_normal(shape))
    mean = x.mean(-1, keepdims=True)
    var = x.var(-1, keepdims=True)
    ref = (x - mean) / np.sqrt(var + 1e-3) * gamma + beta

    xs, gs, bs = T(x, grad=True), T(gamma, grad=True), T(beta, grad=True)
    with ga.GradientTape() as tape:
        y = nn.layer_normalization(xs, gs, bs, epsilon=1e-3)
    dx, dgamma, dbeta = tape.gradient(y, [xs, gs, bs], output_gradients=T(g))
    np.testing.assert_allclose(y.detach().numpy(), ref, rtol=1e-4, atol=1e-5)

    layer = tf.keras.layers.LayerNormalization(epsilon=1e-3, dtype="float64")
    layer.build(shape)
    layer.set_weights([gamma, beta])
    xv = tf.Variable(x)
    with tf.GradientTape() as tape:
        ty = layer(xv)
    tdx, tdgamma, tdbeta = tape.gradient(ty, [xv, layer.gamma, layer.beta], output_gradients=g)
    np.testing.assert_allclose(ty.numpy(), ref, rtol=1e-10)
    np.testing.assert_allclose(dx.numpy(), tdx.numpy(), rtol=1e-3, atol=1e-4)
    np.testing.assert_allclose(dgamma.numpy(), tdgamma.numpy(), rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(dbeta.numpy(), tdbeta.numpy(), rtol=1e-4, atol=1e-4)


def test_layer_norm_errors():
    with pytest.raises(ValueError) as e:
        nn.layer_normalization(T(np.zeros((2, 4))), T(np.ones(3)), T(np.zeros(4)))
    assert "(4,)" in str(e.value)


# --------------------------------------------------------------------------------------------
# embedding, attention
# --------------------------------------------------------------------------------------------

def test_embedding_lookup_forward_and_gradient_scatter():
    r = rng(17)
    table = f32_round(r.standard_normal((7, 4)))
    ids = np.array([[1, 3, 1], [6, 0, 1]])
    g = f32_round(r.standard_normal((2, 3, 4)))
    p = T(table, grad=True)
    with ga.GradientTape() as tape:
        y = nn.embedding_lookup(p, ids)
    (dp,) = tape.gradient(y, [p], output_gradients=T(g))
    np.testing.assert_array_equal(y.detach().numpy(), table[ids])
    ref = np.zeros_like(table)
    np.add.at(ref, ids, g)
    np.testing.assert_allclose(dp.numpy(), ref, rtol=1e-6, atol=1e-6)
    assert np.all(dp.numpy()[[2, 4, 5]] == 0)


def test_embedding_lookup_int32_ids_and_scalar_id():
    table = f32_round(rng(18).standard_normal((5, 3)))
    ids = ga.tensor(np.array([4, 0], np.int32))
    np.testing.assert_array_equal(nn.embedding_lookup(T(table), ids).numpy(), table[[4, 0]])
    np.testing.assert_array_equal(nn.embedding_lookup(T(table), 2).numpy(), table[2])


@pytest.mark.parametrize("bad", [[0, 5], [-1, 2]])
def test_embedding_lookup_out_of_range(bad):
    with pytest.raises(errors.InvalidArgumentError) as e:
        nn.embedding_lookup(T(np.zeros((5, 3))), bad)
    assert "[0, 5)" in str(e.value)


def test_embedding_lookup_errors_name_the_problem():
    with pytest.raises(errors.InvalidArgumentError) as e:
        nn.embedding_lookup(T(np.zeros((5, 3))), T([1.0, 2.0]))
    assert "ids must be int32 or int64" in str(e.value) and "float32" in str(e.value)
    with pytest.raises(errors.InvalidArgumentError) as e:
        nn.embedding_lookup(T(np.zeros(5)), [1])
    assert "(5,)" in str(e.value)


def np_attention(q, k, v, mask=None):
    s = q @ np.swapaxes(k, -1, -2) / np.sqrt(q.shape[-1])
    if mask is not None:
        s = s + mask
    return np_softmax(s, -1) @ v


@pytest.mark.parametrize("masked", [False, True])
def test_attention_matches_numpy(masked):
    tf = pytest.importorskip("tensorflow")
    r = rng(19)
    q = f32_round(r.standard_normal((2, 5, 8)))
    k = f32_round(r.standard_normal((2, 6, 8)))
    v = f32_round(r.standard_normal((2, 6, 3)))
    g = f32_round(r.standard_normal((2, 5, 3)))
    mask = None
    if masked:
        mask = np.where(np.tril(np.ones((5, 6)), 1) > 0, 0.0, -1e9)
    ref = np_attention(q, k, v, mask)

    def ours(a, b, c):
        return nn.scaled_dot_product_attention(a, b, c, mask=T(mask) if masked else None)

    def theirs(a, b, c):
        s = tf.matmul(a, b, transpose_b=True) / np.sqrt(8.0)
        if masked:
            s = s + mask
        return tf.matmul(tf.nn.softmax(s, -1), c)

    y, grads = ga_grads(ours, [q, k, v], g)
    ty, tgrads = tf_grads(theirs, [q, k, v], g)
    np.testing.assert_allclose(ty, ref, rtol=1e-10)
    np.testing.assert_allclose(y, ref, rtol=1e-4, atol=1e-5)
    for a, b in zip(grads, tgrads):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-4)
    if masked:  # hidden keys get no attention: v rows never reached get no gradient from them
        probs = np_softmax(q @ np.swapaxes(k, -1, -2) / np.sqrt(8) + mask, -1)
        assert probs[:, 0, 2:].max() < 1e-30


def test_attention_heads_and_broadcast_mask():
    r = rng(37)
    q = f32_round(r.standard_normal((2, 3, 4, 8)))   # (batch, heads, seq, d)
    k = f32_round(r.standard_normal((2, 3, 4, 8)))
    v = f32_round(r.standard_normal((2, 3, 4, 5)))
    mask = np.triu(np.full((4, 4), -1e9), 1)          # causal, broadcast over batch and heads
    y = nn.scaled_dot_product_attention(T(q), T(k), T(v), mask=T(mask))
    np.testing.assert_allclose(y.numpy(), np_attention(q, k, v, mask), rtol=1e-4, atol=1e-5)
    # the first query sees only the first key
    np.testing.assert_allclose(y.numpy()[:, :, 0], v[:, :, 0], rtol=1e-5, atol=1e-6)


def test_attention_boolean_mask_keeps_true_positions():
    """A bool mask says where to attend (Keras's attention_mask, torch's bool attn_mask); it
    must not be added to the scores as 0/1."""
    r = rng(38)
    q = f32_round(r.standard_normal((2, 4, 8)))
    k = f32_round(r.standard_normal((2, 5, 8)))
    v = f32_round(r.standard_normal((2, 5, 3)))
    keep = np.tril(np.ones((4, 5), bool))
    y = nn.scaled_dot_product_attention(T(q), T(k), T(v), mask=ga.tensor(keep))
    ref = np_attention(q, k, v, np.where(keep, 0.0, -np.inf))
    np.testing.assert_allclose(y.numpy(), ref, rtol=1e-4, atol=1e-5)


def test_attention_bf16_close_to_f32():
    r = rng(20)
    q = r.standard_normal((2, 16, 32)).astype(np.float32)
    k = r.standard_normal((2, 16, 32)).astype(np.float32)
    v = r.standard_normal((2, 16, 32)).astype(np.float32)
    y = nn.scaled_dot_product_attention(T(q, dtype="bfloat16"), T(k, dtype="bfloat16"),
                                        T(v, dtype="bfloat16"))
    assert y.dtype == ga.bfloat16
    ref = np_attention(q.astype(np.float64), k.astype(np.float64), v.astype(np.float64))
    # scores of size ~sqrt(32)/sqrt(32)*... carry bf16 rounding through exp: a few percent of |v|.
    np.testing.assert_allclose(y.to("float32").numpy(), ref, atol=0.1)
    assert np.abs(y.to("float32").numpy() - ref).mean() < 0.02


def test_embedding_bf16_exact_rows():
    table = rng(21).standard_normal((6, 4)).astype(np.float32)
    t = T(table, dtype="bfloat16")
    rows = t.to("float32").numpy()
    y = nn.embedding_lookup(t, [5, 2, 2])
    np.testing.assert_array_equal(y.to("float32").numpy(), rows[[5, 2, 2]])


# --------------------------------------------------------------------------------------------
# losses
# --------------------------------------------------------------------------------------------

def test_sparse_softmax_cross_entropy_matches_tensorflow():
    tf = pytest.importorskip("tensorflow")
    r = rng(22)
    logits = f32_round(r.standard_normal((6, 5)) * 3)
    labels = np.array([0, 4, 2, 2, 1, 3])
    g = f32_round(r.uniform(0.5, 1.5, 6))
    lt = T(logits, grad=True)
    with ga.GradientTape() as tape:
        loss = nn.sparse_softmax_cross_entropy_with_logits(labels, lt)
    (dl,) = tape.gradient(loss, [lt], output_gradients=T(g))
    lv = tf.Variable(logits)
    with tf.GradientTape() as tape:
        tl = tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=lv)
    tdl = tape.gradient(tl, lv, output_gradients=g)
    assert loss.shape == (6,)
    # Same absolute precision as log_softmax (a few ulps of the largest logit, ~10).
    np.testing.assert_allclose(loss.detach().numpy(), tl.numpy(), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(dl.numpy(), tdl.numpy(), rtol=1e-4, atol=1e-6)
    # and the closed form: -log softmax at the label
    np.testing.assert_allclose(loss.detach().numpy(),
                               -np.log(np_softmax(logits, -1))[np.arange(6), labels], atol=1e-5)


def test_sparse_cross_entropy_batched_labels():
    tf = pytest.importorskip("tensorflow")
    r = rng(23)
    logits = f32_round(r.standard_normal((2, 3, 4)))
    labels = np.array([[0, 3, 1], [2, 2, 0]], np.int32)
    ours = nn.sparse_softmax_cross_entropy_with_logits(ga.tensor(labels), T(logits))
    ref = tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits)
    np.testing.assert_allclose(ours.numpy(), ref.numpy(), rtol=1e-5, atol=1e-6)


def test_softmax_cross_entropy_dense_matches_tensorflow():
    tf = pytest.importorskip("tensorflow")
    r = rng(24)
    logits = f32_round(r.standard_normal((4, 6)) * 2)
    labels = f32_round(np_softmax(r.standard_normal((4, 6)), -1))  # soft labels
    g = f32_round(r.uniform(0.5, 1.5, 4))
    _, (dlab, dlog) = ga_grads(
        lambda a, b: nn.softmax_cross_entropy_with_logits(a, b), [labels, logits], g)
    loss = nn.softmax_cross_entropy_with_logits(T(labels), T(logits)).numpy()
    tl, (tdlab, tdlog) = tf_grads(
        lambda a, b: tf.nn.softmax_cross_entropy_with_logits(labels=a, logits=b), [labels, logits], g)
    np.testing.assert_allclose(loss, tl, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(dlog, tdlog, rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(dlab, tdlab, rtol=1e-4, atol=1e-5)


def test_cross_entropy_bf16_logits_compute_in_f32():
    logits = rng(25).standard_normal((3, 5)).astype(np.float32)
    lt = T(logits, dtype="bfloat16")
    seen = lt.to("float32").numpy().astype(np.float64)
    loss = nn.sparse_softmax_cross_entropy_with_logits([1, 0, 4], lt)
    assert loss.dtype == ga.float32
    ref = -np.log(np_softmax(seen, -1))[np.arange(3), [1, 0, 4]]
    np.testing.assert_allclose(loss.detach().numpy(), ref, rtol=1e-5)


def test_cross_entropy_label_errors():
    logits = T(np.zeros((4, 3)))
    with pytest.raises(errors.InvalidArgumentError) as e:
        nn.sparse_softmax_cross_entropy_with_logits([0, 1, 2], logits)
    assert "(3,)" in str(e.value) and "(4, 3)" in str(e.value)
    with pytest.raises(errors.InvalidArgumentError) as e:
        nn.sparse_softmax_cross_entropy_with_logits([0, 1, 3, 2], logits)
    assert "[0, 3)" in str(e.value)
    with pytest.raises(errors.InvalidArgumentError):
        nn.sparse_softmax_cross_entropy_with_logits([0, -1, 1, 2], logits)
    with pytest.raises(errors.InvalidArgumentError) as e:
        nn.softmax_cross_entropy_with_logits(T(np.zeros((4, 2))), logits)
    assert "(4, 2)" in str(e.value) and "(4, 3)" in str(e.value)


def test_mean_squared_error_vs_numpy():
    r = rng(26)
    yt = f32_round(r.standard_normal((5, 3)))
    yp = f32_round(r.standard_normal((5, 3)))
    g = f32_round(r.standard_normal(5))
    loss, (dt, dp) = ga_grads(nn.mean_squared_error, [yt, yp], g)
    np.testing.assert_allclose(loss, ((yp - yt) ** 2).mean(-1), rtol=1e-5)
    np.testing.assert_allclose(dp, 2 * (yp - yt) / 3 * g[:, None], rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(dt, -2 * (yp - yt) / 3 * g[:, None], rtol=1e-4, atol=1e-6)


@pytest.mark.parametrize("true_shape,pred_shape", [((5,), (5, 1)), ((5, 1), (5,)),
                                                   ((4, 3), (4, 3, 1)), ((4, 3, 1), (4, 3))])
def test_mean_squared_error_rank_mismatch_matches_keras(true_shape, pred_shape):
    """Keras pairs (N,) labels with (N, 1) predictions element by element (no (N, N)
    broadcast)."""
    pytest.importorskip("tensorflow")
    keras = pytest.importorskip("keras")
    r = rng(27)
    yt = f32_round(r.standard_normal(true_shape))
    yp = f32_round(r.standard_normal(pred_shape))
    ref = keras.losses.mean_squared_error(yt, yp).numpy()
    got = nn.mean_squared_error(T(yt), T(yp))
    assert got.shape == ref.shape
    np.testing.assert_allclose(got.numpy(), ref, rtol=1e-5, atol=1e-7)


def test_mean_squared_error_shape_mismatch():
    with pytest.raises(ValueError):
        nn.mean_squared_error(T(np.zeros((4, 3))), T(np.zeros((4, 2))))


def test_one_hot():
    np.testing.assert_array_equal(nn.one_hot([2, 0, 1], 3).numpy(), np.eye(3)[[2, 0, 1]])
    # out-of-range indices give a zero row, as in TF
    np.testing.assert_array_equal(nn.one_hot([1, -1, 3], 3).numpy(), [[0, 1, 0], [0, 0, 0],
                                                                      [0, 0, 0]])
    with pytest.raises(errors.InvalidArgumentError, match="depth"):
        nn.one_hot([1], -1)


# ---- issue 18: NaN propagation and invalid shapes that reached the libraries ----
from crash_isolation import isolated  # noqa: E402,F401 -- the module-scoped worker fixture


@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16"])
def test_softmax_of_a_row_holding_nan_is_nan_for_the_whole_row(dtype):
    logits = ga.tensor(np.array([[1.0, np.nan, 2.0], [1.0, 2.0, 3.0]], np.float32)).to(dtype)
    for fn in (nn.softmax, nn.log_softmax):
        out = fn(logits).to("float32").numpy()
        assert np.isnan(out[0]).all(), (fn.__name__, out)
        assert np.isfinite(out[1]).all(), (fn.__name__, out)
    # Along another axis: the column holding the NaN.
    out = nn.softmax(logits, axis=0).to("float32").numpy()
    assert np.isnan(out[:, 1]).all() and np.isfinite(out[:, [0, 2]]).all()


def test_losses_of_nan_logits_are_nan_for_that_example():
    logits = ga.tensor([[1.0, float("nan")], [0.5, 0.25]])
    sparse = nn.sparse_softmax_cross_entropy_with_logits([1, 0], logits).numpy()
    dense = nn.softmax_cross_entropy_with_logits(ga.tensor([[0., 1.], [1., 0.]]), logits).numpy()
    for loss in (sparse, dense):
        assert np.isnan(loss[0]) and np.isfinite(loss[1]), loss


def test_a_convolution_with_zero_channels_is_an_invalid_argument(isolated):
    for x_shape, w_shape in (((1, 4, 4, 0), (3, 3, 0, 2)), ((1, 4, 4, 2), (3, 3, 2, 0))):
        outcome = isolated.run(
            "import gpuaccel\n"
            f"result = gpuaccel.nn.conv2d(gpuaccel.ones{x_shape}, gpuaccel.ones{w_shape})")
        assert outcome.raised("InvalidArgumentError"), outcome
        assert "at least one input channel and one filter" in outcome.message
        assert "oneDNN" not in outcome.message


def test_nn_arguments_give_typed_errors():
    x = ga.ones(1, 4, 4, 1)
    w = ga.ones(2, 2, 1, 1)
    with pytest.raises(TypeError, match="strides must be an int"):
        nn.conv2d(x, w, strides=1.5)
    with pytest.raises(errors.InvalidArgumentError, match="stride 0"):
        nn.conv2d(x, w, strides=0)
    with pytest.raises(TypeError, match="rate must be a float"):
        nn.dropout(x, "0.5")
    np.testing.assert_allclose(nn.softmax(np.array([0.0, 0.0])).numpy(), [0.5, 0.5])


def test_huge_strides_windows_and_dilations_do_not_wrap_around(isolated):
    x = "gpuaccel.ones(1, 5, 5, 1)"
    w = "gpuaccel.ones(2, 2, 1, 1)"
    outcome = isolated.run(f"import gpuaccel\nresult = tuple(gpuaccel.nn.conv2d({x}, {w}, "
                           "strides=2**62, padding='SAME').shape)")
    assert outcome.value == "(1, 1, 1, 1)", outcome
    for call in (f"gpuaccel.nn.conv2d({x}, {w}, dilations=2**62, padding='SAME')",
                 f"gpuaccel.nn.max_pool2d({x}, 2**62, 1, padding='SAME')"):
        outcome = isolated.run(f"import gpuaccel\nresult = {call}")
        assert outcome.raised("InvalidArgumentError"), (call, outcome)
        assert "spans more than 2^40 elements" in outcome.message
