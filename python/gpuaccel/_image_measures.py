"""``tf.image``'s measures of images: the finite differences (image_gradients, sobel_edges,
total_variation) and the comparisons of two images (psnr, ssim, ssim_multiscale), written as
TF writes them, from slices and depthwise convolutions, so autograd differentiates them and
they run on any device.
"""
import numpy as np

from . import _C, errors
from . import math as _math
from ._array_ops import concat, pad, reshape
from ._convert import convert_to_tensor
from ._image_adjust import convert_image_dtype

__all__ = ["image_gradients", "sobel_edges", "total_variation", "psnr", "ssim",
           "ssim_multiscale"]

_SOBEL = np.array([[[-1, -2, -1], [0, 0, 0], [1, 2, 1]],
                   [[-1, 0, 1], [-2, 0, 2], [-1, 0, 1]]], np.float32)  # vertical, horizontal
_MULTISCALE_WEIGHTS = (0.0448, 0.2856, 0.3001, 0.2363, 0.1333)  # TF's (Wang et al.)


def depthwise_valid(x, kernel):
    """tf.nn.depthwise_conv2d(x, kernel, 1, 'VALID') for a (kh, kw, C, M) ``kernel``: one
    grouped convolution (gpuaccel.nn's own sits above this module in the imports)."""
    kh, kw, channels, multiplier = kernel.shape
    grouped = _C.reshape(_C.contiguous(kernel), [kh, kw, 1, channels * multiplier])
    return _C.conv2d(x, grouped, None, 1, 1, "VALID", 1, 1, "linear", channels)


def _range_of(x, axis, start, stop):
    ranges = [(0, d, 1) for d in x.shape]
    ranges[axis] = (start, stop, 1)
    return _C.slice(x, ranges)


def _differences(x, axis):
    """x[i + 1] - x[i] along ``axis`` (one entry shorter)."""
    n = x.shape[axis]
    return _math.subtract(_range_of(x, axis, 1, n), _range_of(x, axis, 0, n - 1))


def image_gradients(image):
    """``tf.image.image_gradients``: (dy, dx) of a (batch, h, w, d) image, the forward
    differences I(y + 1, x) - I(y, x) and I(y, x + 1) - I(y, x), 0 on the last row / column."""
    x = convert_to_tensor(image)
    if x.ndim != 4:
        raise ValueError(f"image_gradients expects a 4D tensor [batch_size, h, w, d], not "
                         f"{list(x.shape)}.")
    return tuple(pad(_differences(x, axis), [[0, 1] if a == axis else [0, 0] for a in range(4)])
                 for axis in (1, 2))


def _reflect_one(x, axis):
    """x padded by one entry on each side of ``axis``, mirrored about the edge (REFLECT)."""
    n = x.shape[axis]
    return concat([_range_of(x, axis, 1, 2), x, _range_of(x, axis, n - 2, n - 1)], axis)


def sobel_edges(image):
    """``tf.image.sobel_edges``: the vertical and horizontal 3x3 Sobel responses of each
    channel of (batch, h, w, d) images, REFLECT-padded, as (batch, h, w, d, 2)."""
    x = convert_to_tensor(image)
    if x.ndim != 4:
        raise ValueError(f"sobel_edges expects a 4D tensor [batch_size, h, w, d], not "
                         f"{list(x.shape)}.")
    padded = _reflect_one(_reflect_one(x, 1), 2)
    kernels = np.tile(np.transpose(_SOBEL, (1, 2, 0))[:, :, None, :], (1, 1, x.shape[3], 1))
    kernels = _C.cast(_C.tensor_from_numpy(np.ascontiguousarray(kernels), x._device_name, None,
                                           True), x._dtype_name)
    edges = depthwise_valid(padded, kernels)  # (b, h, w, d * 2)
    return reshape(edges, list(x.shape) + [2])


def total_variation(images, name=None):
    """``tf.image.total_variation``: the sum of absolute differences between neighbouring
    pixels, per image of a batch (one number for a single image)."""
    x = convert_to_tensor(images)
    if x.ndim not in (3, 4):
        raise ValueError("'images' must be either 3 or 4-dimensional.")
    axes = None if x.ndim == 3 else [1, 2, 3]
    first = x.ndim - 3
    return _math.add(*(_math.reduce_sum(_math.abs(_differences(x, axis)), axis=axes)
                       for axis in (first, first + 1)))


def _float_pair(a, b, max_val, eager_psnr=False):
    """TF's preparation: both images and max_val converted to float32 images (integer ones
    scaled to [0, 1]) after the shapes are checked, with TF's words (shapes as tuples). Eager
    ``psnr`` meets a rank below 3 or different image sizes in its arithmetic first, so those
    are InvalidArgumentErrors there and ValueErrors in ssim."""
    a, b = convert_to_tensor(a), convert_to_tensor(b)
    for x in (a, b):
        if x.ndim < 3:
            if eager_psnr:
                raise errors.InvalidArgumentError(
                    f"Invalid reduction dimension (-3 for input with {x.ndim} dimension(s)")
            raise ValueError(f"Shape {tuple(x.shape)} must have rank at least 3")
    if list(a.shape[-3:]) != list(b.shape[-3:]):
        if eager_psnr:
            raise errors.InvalidArgumentError(
                f"Incompatible shapes: [{','.join(map(str, a.shape))}] vs. "
                f"[{','.join(map(str, b.shape))}]")
        raise ValueError(f"Shapes {tuple(a.shape[-3:])} and {tuple(b.shape[-3:])} are "
                         f"incompatible")
    for left, right in zip(reversed(a.shape[:-3]), reversed(b.shape[:-3])):
        if left != right and 1 not in (left, right):
            raise ValueError(f"Two images are not compatible: {tuple(a.shape)} and "
                             f"{tuple(b.shape)}")
    scale = 1.0
    if not a.dtype.is_floating_point:
        scale = float(np.iinfo(np.dtype(a.dtype.name)).max)
    return (convert_image_dtype(a, "float32"), convert_image_dtype(b, "float32"),
            float(max_val) / scale)


def psnr(a, b, max_val, name=None):
    """``tf.image.psnr``: 20 log10(max_val) - 10 log10(mean squared difference), per image
    (the last three axes)."""
    a, b, max_val = _float_pair(a, b, max_val, eager_psnr=True)
    mse = _math.reduce_mean(_math.squared_difference(a, b), axis=[-3, -2, -1])
    return _math.subtract(float(20 * np.log(np.float32(max_val)) / np.log(10.0)),
                          _math.multiply(_math.log(mse), float(np.float32(10 / np.log(10)))))


def _gaussian_window(size, sigma):
    """TF's _fspecial_gauss: the size x size softmax of -(i^2 + j^2) / (2 sigma^2)."""
    coords = np.arange(size, dtype=np.float32) - np.float32(size - 1) / 2.0
    g = np.square(coords) * np.float32(-0.5 / np.square(np.float32(sigma)))
    g = (g[None, :] + g[:, None]).reshape(-1)
    g = np.exp(g - g.max())
    return (g / g.sum()).astype(np.float32).reshape(size, size)


def _ssim_per_channel(x, y, max_val, filter_size, filter_sigma, k1, k2, return_index_map):
    """(ssim, contrast-structure) per channel: means over the windows' 'VALID' positions
    unless ``return_index_map``."""
    for image in (x, y):
        if image.shape[-3] < filter_size or image.shape[-2] < filter_size:
            raise errors.InvalidArgumentError(
                f"ssim needs images of at least filter_size x filter_size ({filter_size}), "
                f"got shape {list(image.shape)}")
    channels = x.shape[-1]
    window = np.tile(_gaussian_window(filter_size, filter_sigma)[:, :, None, None],
                     (1, 1, channels, 1))
    kernel = _C.tensor_from_numpy(np.ascontiguousarray(window), x._device_name, None, True)

    def reducer(t):
        flat = reshape(t, [-1] + list(t.shape[-3:]))
        out = depthwise_valid(flat, kernel)
        return reshape(out, list(t.shape[:-3]) + list(out.shape[1:]))

    c1, c2 = (k1 * max_val) ** 2, (k2 * max_val) ** 2
    mean_x, mean_y = reducer(x), reducer(y)
    num0 = _math.multiply(_math.multiply(mean_x, mean_y), 2.0)
    den0 = _math.add(_math.square(mean_x), _math.square(mean_y))
    luminance = _math.divide(_math.add(num0, c1), _math.add(den0, c1))
    num1 = _math.multiply(reducer(_math.multiply(x, y)), 2.0)
    den1 = reducer(_math.add(_math.square(x), _math.square(y)))
    cs = _math.divide(_math.add(_math.subtract(num1, num0), c2),
                      _math.add(_math.subtract(den1, den0), c2))
    value = _math.multiply(luminance, cs)
    if return_index_map:
        return value, cs
    return (_math.reduce_mean(value, axis=[-3, -2]), _math.reduce_mean(cs, axis=[-3, -2]))


def ssim(img1, img2, max_val, filter_size=11, filter_sigma=1.5, k1=0.01, k2=0.03,
         return_index_map=False):
    """``tf.image.ssim``: the structural similarity of two images (batches broadcast), the
    mean over channels of the Gaussian-windowed SSIM (per pixel with return_index_map)."""
    x, y, max_val = _float_pair(img1, img2, max_val)
    value, _ = _ssim_per_channel(x, y, max_val, filter_size, filter_sigma, k1, k2,
                                 return_index_map)
    return _math.reduce_mean(value, axis=[-1])


def ssim_multiscale(img1, img2, max_val, power_factors=_MULTISCALE_WEIGHTS, filter_size=11,
                    filter_sigma=1.5, k1=0.01, k2=0.03):
    """``tf.image.ssim_multiscale``: contrast-structure at each of len(power_factors) scales
    (2x2 average pooling between them, odd sizes padded with TF's symmetric padding) and SSIM
    at the last, combined as a product of powers."""
    x, y, max_val = _float_pair(img1, img2, max_val)
    # TF works on (batch..., h, w, c) flattened to rank 4.
    batch_shape = list(x.shape[:-3])
    x, y = (reshape(t, [-1] + list(t.shape[-3:])) for t in (x, y))
    values = []
    for scale in range(len(power_factors)):
        if scale:
            x, y = (_halved(t) for t in (x, y))
        ssim_value, cs = _ssim_per_channel(x, y, max_val, filter_size, filter_sigma, k1, k2,
                                           False)
        values.append(_math.maximum(cs if scale < len(power_factors) - 1 else ssim_value, 0.0))
    weighted = [_math.pow(v, float(p)) for v, p in zip(values, power_factors)]
    product = weighted[0]
    for term in weighted[1:]:
        product = _math.multiply(product, term)
    return reshape(_math.reduce_mean(product, axis=[-1]), batch_shape)


def _halved(x):
    """TF's downscale between scales: SYMMETRIC padding to even sizes, then 2x2 'VALID'
    average pooling."""
    rows, columns = x.shape[1] % 2, x.shape[2] % 2
    for axis, extra in ((1, rows), (2, columns)):
        if extra:  # symmetric padding by one at the end repeats the last entry
            n = x.shape[axis]
            x = concat([x, _range_of(x, axis, n - 1, n)], axis)
    return _C.pool2d(x, False, 2, 2, 2, 2, "VALID")
