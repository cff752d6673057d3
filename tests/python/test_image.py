"""``tf.image.extract_patches`` (the im2col of the course's convolution slide): against a NumPy
loop reference and real TensorFlow, its gradient against finite differences, and its errors."""
import numpy as np
import pytest

import gpuaccel as ga
from test_autograd import check_gradients, rnd


def patches_reference(x, k, s, r, padding):
    """Loops over output positions; the last axis runs over patch rows, columns, channels."""
    n, h, w, c = x.shape
    (kh, kw), (sh, sw), (rh, rw) = k, s, r
    eh, ew = (kh - 1) * rh + 1, (kw - 1) * rw + 1
    if padding == "SAME":
        oh, ow = -(-h // sh), -(-w // sw)
        ph, pw = max((oh - 1) * sh + eh - h, 0), max((ow - 1) * sw + ew - w, 0)
        x = np.pad(x, [[0, 0], [ph // 2, ph - ph // 2], [pw // 2, pw - pw // 2], [0, 0]])
    else:
        oh, ow = (h - eh) // sh + 1, (w - ew) // sw + 1
    out = np.zeros((n, oh, ow, kh * kw * c), x.dtype)
    for i in range(oh):
        for j in range(ow):
            patch = x[:, i * sh:i * sh + eh:rh, j * sw:j * sw + ew:rw, :]
            out[:, i, j, :] = patch.reshape(n, -1)
    return out


CASES = [((2, 2), (1, 1), (1, 1), "VALID"), ((3, 3), (2, 2), (1, 1), "SAME"),
         ((2, 3), (1, 2), (2, 1), "VALID"), ((3, 2), (2, 3), (1, 1), "SAME")]


@pytest.mark.parametrize("k,s,r,padding", CASES)
def test_extract_patches_matches_reference_and_gradients(k, s, r, padding):
    x = rnd((2, 6, 7, 2))
    check_gradients(
        lambda t: ga.image.extract_patches(t, [1, *k, 1], [1, *s, 1], [1, *r, 1], padding),
        lambda t: patches_reference(t, k, s, r, padding), [x])


@pytest.mark.parametrize("k,s,r,padding", CASES)
def test_extract_patches_matches_tensorflow(k, s, r, padding):
    tf = pytest.importorskip("tensorflow")
    x = rnd((1, 6, 7, 3))
    expected = tf.image.extract_patches(x, [1, *k, 1], [1, *s, 1], [1, *r, 1], padding).numpy()
    out = ga.image.extract_patches(x, [1, *k, 1], [1, *s, 1], [1, *r, 1], padding)
    np.testing.assert_array_equal(out.numpy(), expected)


def test_extract_patches_errors():
    x = rnd((1, 4, 4, 1))
    with pytest.raises(ValueError, match=r"sizes must be a list of 4 ints \[1, rows, cols, 1\]"):
        ga.image.extract_patches(x, [2, 2], [1, 1, 1, 1], [1, 1, 1, 1], "VALID")
    with pytest.raises(ValueError, match="padding must be 'VALID' or 'SAME'"):
        ga.image.extract_patches(x, [1, 2, 2, 1], [1, 1, 1, 1], [1, 1, 1, 1], "FULL")
    with pytest.raises(ValueError, match="4-D"):
        ga.image.extract_patches(rnd((4, 4)), [1, 2, 2, 1], [1, 1, 1, 1], [1, 1, 1, 1], "VALID")
    with pytest.raises(ValueError, match="larger than the image"):
        ga.image.extract_patches(x, [1, 5, 5, 1], [1, 1, 1, 1], [1, 1, 1, 1], "VALID")


def test_im2col_matmul_equals_convolution():
    """The slide's point: patches @ flattened kernel is the convolution."""
    x, kernel = rnd((1, 5, 5, 2), 1), rnd((3, 3, 2, 4), 2)
    cols = ga.image.extract_patches(x, [1, 3, 3, 1], [1, 1, 1, 1], [1, 1, 1, 1], "VALID")
    via_matmul = ga.matmul(ga.reshape(cols, [-1, 18]), ga.reshape(kernel, [18, 4]))
    direct = ga.nn.conv2d(x, kernel, 1, "VALID")
    np.testing.assert_allclose(ga.reshape(via_matmul, [1, 3, 3, 4]).numpy(), direct.numpy(),
                               rtol=1e-5, atol=1e-5)
