"""``tf.image`` names: ``extract_patches``, the im2col of the course's convolution slides, here;
resizing, crops, flips and rotations from ``_image_resize``; dtype conversion and colour
adjustments (and their random_* and stateless_random_* forms) from ``_image_adjust``; colour
spaces (HSV, YIQ, YUV) from ``_image_color_spaces``; gradients, total variation, PSNR and SSIM
from ``_image_measures``; draw_bounding_boxes from ``_image_boxes``;
non-maximum suppression from ``_image_nms``; decoding and encoding JPEG, PNG, GIF and BMP
files (through PIL) from ``_image_codecs``.

Patches are strided slices of the (padded) image stacked along a new axis, so the op runs on
any device and autograd differentiates it (``torch.nn.functional.unfold`` shares it).
"""
import numbers

from . import _C
from . import _unsupported
from ._int_range import INT32_MAX, check_range
from ._array_ops import pad
from ._convert import convert_to_tensor
from ._image_adjust import (adjust_brightness, adjust_contrast, adjust_gamma, adjust_hue,
                            adjust_saturation, convert_image_dtype, grayscale_to_rgb,
                            per_image_standardization, random_brightness, random_contrast,
                            random_crop, random_flip_left_right, random_flip_up_down,
                            random_hue, random_saturation, rgb_to_grayscale,
                            stateless_random_brightness, stateless_random_contrast,
                            stateless_random_crop, stateless_random_flip_left_right,
                            stateless_random_flip_up_down, stateless_random_hue,
                            stateless_random_saturation)
from ._image_codecs import (decode_bmp, decode_gif, decode_image, decode_jpeg, decode_png,
                             encode_jpeg, encode_png, extract_jpeg_shape, is_jpeg)
from ._image_boxes import (draw_bounding_boxes, sample_distorted_bounding_box,
                           stateless_sample_distorted_bounding_box)
from ._image_color_spaces import (hsv_to_rgb, rgb_to_hsv, rgb_to_yiq, rgb_to_yuv, yiq_to_rgb,
                                  yuv_to_rgb)
from ._image_nms import (combined_non_max_suppression, non_max_suppression,
                         non_max_suppression_overlaps, non_max_suppression_with_scores)
from ._image_measures import (image_gradients, psnr, sobel_edges, ssim, ssim_multiscale,
                              total_variation)
from ._image_resize import (ResizeMethod, central_crop, crop_and_resize, crop_to_bounding_box,
                            extract_glimpse, flip_left_right, flip_up_down,
                            pad_to_bounding_box, resize, resize_with_crop_or_pad,
                            resize_with_pad, rot90, transpose)

__all__ = ["extract_patches", "patch_slices", "ResizeMethod", "resize", "resize_with_pad",
           "resize_with_crop_or_pad", "central_crop", "crop_to_bounding_box",
           "pad_to_bounding_box", "flip_left_right", "flip_up_down", "transpose", "rot90",
           "convert_image_dtype", "rgb_to_grayscale", "grayscale_to_rgb", "adjust_brightness",
           "adjust_contrast", "per_image_standardization", "random_flip_left_right",
           "random_flip_up_down", "random_crop", "random_brightness", "random_contrast",
           "adjust_hue", "adjust_saturation", "adjust_gamma", "random_hue", "random_saturation",
           "stateless_random_brightness", "stateless_random_contrast", "stateless_random_crop",
           "stateless_random_flip_left_right", "stateless_random_flip_up_down",
           "stateless_random_hue", "stateless_random_saturation", "rgb_to_hsv", "hsv_to_rgb",
           "rgb_to_yiq", "yiq_to_rgb", "rgb_to_yuv", "yuv_to_rgb", "image_gradients",
           "sobel_edges", "total_variation", "psnr", "ssim", "ssim_multiscale",
           "crop_and_resize", "draw_bounding_boxes", "extract_glimpse", "non_max_suppression",
           "non_max_suppression_with_scores", "non_max_suppression_overlaps",
           "combined_non_max_suppression",
           "sample_distorted_bounding_box", "stateless_sample_distorted_bounding_box",
           "decode_bmp", "decode_gif", "decode_image", "decode_jpeg", "decode_png", "encode_jpeg",
           "encode_png", "extract_jpeg_shape", "is_jpeg"]


def _four(value, name):
    values = list(value) if not isinstance(value, numbers.Integral) else None
    if values is None or len(values) != 4 or values[0] != 1 or values[3] != 1:
        raise ValueError(f"{name} must be a list of 4 ints [1, rows, cols, 1], got {value!r}")
    if not all(isinstance(v, numbers.Integral) and not isinstance(v, bool) for v in values):
        raise TypeError(f"{name} entries must be ints, got {value!r}")
    for i in (1, 2):
        # past int32 the padded image's size would not fit the int64 shapes of the ops below
        check_range(int(values[i]), f"{name}[{i}]", 1, INT32_MAX)
    return int(values[1]), int(values[2])


def same_padding(size, kernel, stride, rate):
    """TF's SAME rule: (before, after) padding so the output has ceil(size / stride) entries."""
    effective = (kernel - 1) * rate + 1
    out = -(-size // stride)
    total = max((out - 1) * stride + effective - size, 0)
    return total // 2, total - total // 2


def patch_slices(images, kernel, strides, rates):
    """The kh*kw strided slices (N, OH, OW, C) of an already padded NHWC ``images``, one per
    kernel offset in row-major order."""
    (kh, kw), (sh, sw), (rh, rw) = kernel, strides, rates
    n, h, w, c = images.shape
    oh = (h - (kh - 1) * rh - 1) // sh + 1
    ow = (w - (kw - 1) * rw - 1) // sw + 1
    if oh <= 0 or ow <= 0:
        raise ValueError(f"the patch ({kh}x{kw}, rates {rh}x{rw}) is larger than the image "
                         f"({h}x{w}); use padding='SAME' or a smaller patch")
    slices = []
    for i in range(kh):
        for j in range(kw):
            slices.append(_C.slice(images, [(0, n, 1), (i * rh, i * rh + (oh - 1) * sh + 1, sh),
                                            (j * rw, j * rw + (ow - 1) * sw + 1, sw), (0, c, 1)]))
    return slices


def extract_patches(images, sizes, strides, rates, padding, name=None):
    """``tf.image.extract_patches``: (N, H, W, C) images to (N, OH, OW, kh*kw*C) patches whose
    last axis runs over patch rows, then columns, then channels (TF's order)."""
    x = convert_to_tensor(images)
    if x.ndim != 4:
        raise ValueError(f"images must be a 4-D (batch, height, width, channels) tensor, got "
                         f"shape {list(x.shape)}")
    kernel = _four(sizes, "sizes")
    stride = _four(strides, "strides")
    rate = _four(rates, "rates")
    mode = str(padding).upper()
    if mode not in ("VALID", "SAME"):
        raise ValueError(f"padding must be 'VALID' or 'SAME', got {padding!r}")
    if mode == "SAME":
        rows = same_padding(x.shape[1], kernel[0], stride[0], rate[0])
        cols = same_padding(x.shape[2], kernel[1], stride[1], rate[1])
        x = pad(x, [[0, 0], list(rows), list(cols), [0, 0]])
    slices = patch_slices(x, kernel, stride, rate)
    stacked = _C.concat([_C.expand_dims(s, 3) for s in slices], 3)  # (N, OH, OW, K, C)
    n, oh, ow = stacked.shape[:3]
    return _C.reshape(stacked, [n, oh, ow, -1])


__getattr__ = _unsupported.module_getattr(__name__, "tf.image", {
    "decode_and_crop_jpeg": "tf.image.crop_to_bounding_box(tf.image.decode_jpeg(contents), ...)",
    "decode_webp": "PIL.Image.open(io.BytesIO(contents)) and np.asarray on the host",
})
