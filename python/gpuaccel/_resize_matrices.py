"""The interpolation matrices of ``tf.image.resize`` (and so of Keras's Resizing on its
TensorFlow backend), computed on the host with NumPy from the sizes alone.

Every method TensorFlow offers is separable and linear: output row i is a fixed mix of input
rows, so a resize is a product with an (out, in) matrix per axis (``_preprocessing_layers``
applies them). The weights follow TensorFlow's kernels, which the tests compare with Keras:

- antialias=False: 'nearest' and 'bilinear' use the half-pixel rules of ResizeNearestNeighbor /
  ResizeBilinear; 'bicubic' is ResizeBicubic's Keys cubic (a = -0.5) read from its 1024-entry
  table at the rounded offset, taps outside the image dropped and the rest renormalised;
  'lanczos3'/'lanczos5' are ScaleAndTranslate's kernels; 'area' averages the input span each
  output pixel covers (ResizeArea).
- antialias=True (downsampling only changes): ScaleAndTranslate widens the kernel by the
  scale factor, so it averages over the pixels an output covers; 'nearest' and 'area' ignore it.
"""
import numpy as np

INTERPOLATIONS = ("bilinear", "nearest", "bicubic", "area", "lanczos3", "lanczos5")
_CUBIC_TABLE_SIZE = 1024  # ResizeBicubic's kKeysCubicTableSize... entries per unit of distance


def _keys_cubic(x, a=-0.5):
    x = np.abs(x)
    return np.where(x < 1, ((a + 2) * x - (a + 3)) * x * x + 1,
                    np.where(x < 2, ((a * x - 5 * a) * x + 8 * a) * x - 4 * a, 0.0))


def _triangle(x):
    return np.clip(1.0 - np.abs(x), 0.0, None)


def _lanczos(radius):
    def kernel(x):
        x = np.asarray(x, np.float64)
        safe = np.where(x == 0, 1.0, x)
        value = radius * np.sin(np.pi * safe) * np.sin(np.pi * safe / radius) / (np.pi * safe) ** 2
        return np.where(np.abs(x) < radius, np.where(x == 0, 1.0, value), 0.0)
    return kernel


_KERNELS = {"bilinear": _triangle, "bicubic": _keys_cubic, "lanczos3": _lanczos(3),
            "lanczos5": _lanczos(5)}


def _normalised(weights):
    totals = weights.sum(axis=1, keepdims=True)
    return np.where(totals != 0, weights / np.where(totals == 0, 1.0, totals), 0.0)


def _kernel_matrix(in_size, out_size, kernel, antialias):
    """ScaleAndTranslate: input pixel j weighs kernel((j + 1/2 - centre) / kernel scale)."""
    scale = in_size / out_size
    kernel_scale = max(scale, 1.0) if antialias else 1.0
    centres = (np.arange(out_size) + 0.5) * scale
    distances = (np.arange(in_size)[None, :] + 0.5 - centres[:, None]) / kernel_scale
    return _normalised(kernel(distances))


def _nearest(in_size, out_size):
    scale = np.float32(in_size) / np.float32(out_size)
    sources = np.floor((np.arange(out_size, dtype=np.float32) + np.float32(0.5)) * scale)
    matrix = np.zeros((out_size, in_size))
    matrix[np.arange(out_size), np.clip(sources.astype(np.int64), 0, in_size - 1)] = 1.0
    return matrix


def _half_pixel_taps(in_size, out_size):
    """Each output's float32 source position (half-pixel centres) split into its floor and
    fraction."""
    scale = np.float32(in_size) / np.float32(out_size)
    position = (np.arange(out_size, dtype=np.float32) + np.float32(0.5)) * scale - np.float32(0.5)
    low = np.floor(position)
    return low.astype(np.int64), (position - low).astype(np.float64)


def _bilinear(in_size, out_size):
    low, fraction = _half_pixel_taps(in_size, out_size)
    matrix = np.zeros((out_size, in_size))
    rows = np.arange(out_size)
    np.add.at(matrix, (rows, np.clip(low, 0, in_size - 1)), 1.0 - fraction)
    np.add.at(matrix, (rows, np.clip(low + 1, 0, in_size - 1)), fraction)
    return matrix


def _bicubic(in_size, out_size):
    low, fraction = _half_pixel_taps(in_size, out_size)
    steps = np.arange(_CUBIC_TABLE_SIZE + 1) / _CUBIC_TABLE_SIZE
    offsets = np.floor(fraction * _CUBIC_TABLE_SIZE + 0.5).astype(np.int64)
    # taps low - 1 .. low + 2 lie 1 + t, t, 1 - t and 2 - t away, t the tabulated fraction
    weights = np.stack([_keys_cubic(1 + steps[offsets]), _keys_cubic(steps[offsets]),
                        _keys_cubic(steps[_CUBIC_TABLE_SIZE - offsets]),
                        _keys_cubic(1 + steps[_CUBIC_TABLE_SIZE - offsets])], axis=1)
    columns = low[:, None] + np.arange(-1, 3)[None, :]
    weights = np.where((columns >= 0) & (columns < in_size), weights, 0.0)
    matrix = np.zeros((out_size, in_size))
    np.add.at(matrix, (np.repeat(np.arange(out_size), 4), np.clip(columns, 0, in_size - 1).ravel()),
              weights.ravel())
    return _normalised(matrix)


def _area(in_size, out_size):
    scale = in_size / out_size
    starts = np.arange(out_size)[:, None] * scale
    pixels = np.arange(in_size)[None, :]
    overlap = np.minimum(starts + scale, pixels + 1) - np.maximum(starts, pixels)
    return np.clip(overlap, 0.0, None) / scale


def resize_matrix(in_size, out_size, interpolation, antialias=False):
    """The (out_size, in_size) float32 matrix of ``tf.image.resize`` along one axis."""
    if interpolation == "nearest":
        matrix = _nearest(in_size, out_size)
    elif interpolation == "area":
        matrix = _area(in_size, out_size)
    elif antialias or interpolation.startswith("lanczos"):
        matrix = _kernel_matrix(in_size, out_size, _KERNELS[interpolation], antialias)
    elif interpolation == "bilinear":
        matrix = _bilinear(in_size, out_size)
    else:
        matrix = _bicubic(in_size, out_size)
    return matrix.astype(np.float32)
