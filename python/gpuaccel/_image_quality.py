"""``tf.image.psnr`` and ``tf.image.ssim``: how alike two batches of images are.

Why: the super-resolution and denoising examples report them (4 and 2 example files). Both are
compositions, written after TF's definitions: images are converted to float32 in [0, 1]
(``convert_image_dtype``, so uint8 images and a uint8 ``max_val`` agree with float ones),
PSNR from the mean squared difference over each image's last three axes, SSIM from local
means, variances and covariance under an 11x11 Gaussian window (a depthwise convolution,
'VALID'). Gradients flow through the ops, as in TF."""
import numpy as np

from . import _C, errors
from . import math as _math
from ._convert import convert_to_tensor
from ._image_adjust import convert_image_dtype
from ._tensor_shape import TensorShape


def _compatible_images(a, b):
    """TF's static checks: rank >= 3, the same last three axes, broadcastable batch axes."""
    shape_a = TensorShape(tuple(a.shape)).with_rank_at_least(3)
    shape_b = TensorShape(tuple(b.shape)).with_rank_at_least(3)
    shape_a[-3:].assert_is_compatible_with(shape_b[-3:])
    for dim_a, dim_b in zip(reversed(shape_a.as_list()[:-3]), reversed(shape_b.as_list()[:-3])):
        if not (dim_a == 1 or dim_b == 1 or dim_a == dim_b):
            raise ValueError(f"Two images are not compatible: {shape_a} and {shape_b}")


def _as_float_images(a, b, max_val):
    a, b = convert_to_tensor(a), convert_to_tensor(b)
    max_val = _C.cast(convert_to_tensor(max_val), a._dtype_name)
    return (convert_image_dtype(a, "float32"), convert_image_dtype(b, "float32"),
            convert_image_dtype(max_val, "float32"))


def psnr(a, b, max_val, name=None):
    """Peak signal-to-noise ratio (dB) of each image pair: 20 log10(max_val) - 10 log10(mse)."""
    a, b, max_val = _as_float_images(a, b, max_val)
    mse = _math.reduce_mean(_math.squared_difference(a, b), [-3, -2, -1])  # first, as in TF
    _compatible_images(a, b)
    return _math.subtract(20 * _math.log(max_val) / np.log(np.float32(10.0)),
                          np.float32(10 / np.log(10)) * _math.log(mse))


def _gaussian_window(size, sigma):
    """TF's _fspecial_gauss: a (size, size, 1, 1) window, softmax of -(x^2 + y^2) / 2 sigma^2."""
    coords = np.arange(size, dtype=np.float32) - np.float32(size - 1) / 2
    exponent = np.square(coords) * np.float32(-0.5 / np.square(np.float32(sigma)))
    exponent = (exponent[None, :] + exponent[:, None]).reshape(-1)
    window = np.exp(exponent - exponent.max())
    return (window / window.sum()).astype(np.float32).reshape(size, size, 1, 1)


def ssim(img1, img2, max_val, filter_size=11, filter_sigma=1.5, k1=0.01, k2=0.03,
         return_index_map=False):
    """Structural similarity of each image pair, averaged over positions and channels (or the
    per-position map with ``return_index_map``); images at least ``filter_size`` square."""
    img1, img2, max_val = _as_float_images(img1, img2, max_val)
    _compatible_images(img1, img2)
    for image in (img1, img2):
        if min(image.shape[-3:-1]) < filter_size:
            raise errors.InvalidArgumentError(
                f"ssim: images of shape {tuple(image.shape)} are smaller than the "
                f"{filter_size}x{filter_size} filter window; use a smaller filter_size", "ssim")
    channels = img1.shape[-1]
    # a depthwise convolution: one window per channel, as a conv2d with groups=channels
    window = convert_to_tensor(np.tile(_gaussian_window(filter_size, filter_sigma),
                                       (1, 1, 1, channels)))

    def local_mean(x):
        leading = list(x.shape[:-3])
        flat = _C.reshape(x, [-1, *x.shape[-3:]])
        out = _C.conv2d(flat, window, None, 1, 1, "VALID", 1, 1, "linear", channels)
        return _C.reshape(out, leading + list(out.shape[1:]))

    c1 = _math.square(k1 * max_val)
    c2 = _math.square(k2 * max_val)
    mean1, mean2 = local_mean(img1), local_mean(img2)
    num0 = mean1 * mean2 * 2.0
    den0 = _math.square(mean1) + _math.square(mean2)
    luminance = (num0 + c1) / (den0 + c1)
    num1 = local_mean(img1 * img2) * 2.0
    den1 = local_mean(_math.square(img1) + _math.square(img2))
    contrast_structure = (num1 - num0 + c2) / (den1 - den0 + c2)
    per_channel = luminance * contrast_structure
    if not return_index_map:
        per_channel = _math.reduce_mean(per_channel, [-3, -2])
    return _math.reduce_mean(per_channel, [-1])
