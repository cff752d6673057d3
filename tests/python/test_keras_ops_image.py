"""``gpuaccel.keras.ops.image`` (resize, rgb_to_grayscale, extract_patches) against real
``keras.ops.image`` on its TensorFlow backend: the same values, shapes and dtypes for each case,
gradients of sum(output * cotangent) for the float ones, Keras's error types and texts, and a
refusal naming the names not there yet."""
import numpy as np
import pytest

from tf_comparison import assert_forward_matches, assert_gradient_matches, raised
from gpuaccel.keras import ops as gops

keras = pytest.importorskip("keras")
ops = keras.ops

RNG = np.random.default_rng(11)
BATCH = RNG.normal(size=(2, 6, 9, 3)).astype(np.float32)
IMAGE = RNG.normal(size=(5, 4, 3)).astype(np.float32)
CHANNELS_FIRST = RNG.normal(size=(2, 3, 6, 9)).astype(np.float32)
BYTES = RNG.integers(0, 256, size=(2, 6, 9, 3)).astype(np.uint8)
GRAY = RNG.normal(size=(2, 6, 9, 1)).astype(np.float32)

RESIZES = [
    (BATCH, (3, 4), {}),
    (IMAGE, (8, 7), {"interpolation": "nearest"}),
    (BATCH, (4, 5), {"interpolation": "bicubic", "antialias": True}),
    (BATCH, (3, 3), {"interpolation": "area"}),
    (BATCH, (7, 5), {"interpolation": "lanczos3"}),
    (BATCH, (4, 4), {"crop_to_aspect_ratio": True}),
    (BATCH, (6, 4), {"crop_to_aspect_ratio": True, "interpolation": "nearest"}),
    (BATCH, (4, 4), {"pad_to_aspect_ratio": True, "fill_value": 0.5}),
    (IMAGE, (6, 9), {"pad_to_aspect_ratio": True}),
    (CHANNELS_FIRST, (4, 5), {"data_format": "channels_first"}),
    (BYTES, (4, 5), {}),
    (BATCH, (5, 5), {"interpolation": "nearest", "pad_to_aspect_ratio": True}),
]
GRAYSCALES = [(BATCH, {}), (IMAGE, {}), (CHANNELS_FIRST, {"data_format": "channels_first"}),
              (BYTES, {}), (GRAY, {})]
PATCHES = [
    (BATCH, 2, {}),
    (BATCH, (2, 3), {"strides": (1, 2), "padding": "same"}),
    (BATCH, 2, {"strides": 1, "dilation_rate": 2}),
    (IMAGE, (3, 2), {"strides": 1}),
    (CHANNELS_FIRST, 3, {"data_format": "channels_first", "padding": "same"}),
]


def _keras_op(name):
    def op(*args, **kwargs):
        return getattr(ops.image, name)(*args, **kwargs)
    op.__name__ = name
    return op


def _ours(name):
    return getattr(gops.image, name)


@pytest.mark.parametrize("images,size,kwargs", RESIZES)
def test_resize_matches_keras(images, size, kwargs):
    assert_forward_matches(_keras_op("resize"), _ours("resize"), (images, size), kwargs,
                           atol=1e-4 if images.dtype == np.float32 else 0)
    if images.dtype == np.float32 and kwargs.get("interpolation") in (None, "bicubic"):
        assert_gradient_matches(_keras_op("resize"), _ours("resize"), (images, size), kwargs,
                                rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("images,kwargs", GRAYSCALES)
def test_rgb_to_grayscale_matches_keras(images, kwargs):
    assert_forward_matches(_keras_op("rgb_to_grayscale"), _ours("rgb_to_grayscale"), (images,),
                           kwargs, atol=1e-5 if images.dtype == np.float32 else 0)
    if images is BATCH:
        assert_gradient_matches(_keras_op("rgb_to_grayscale"), _ours("rgb_to_grayscale"),
                                (images,), kwargs, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("images,size,kwargs", PATCHES)
def test_extract_patches_matches_keras(images, size, kwargs):
    assert_forward_matches(_keras_op("extract_patches"), _ours("extract_patches"),
                           (images, size), kwargs, atol=1e-6)
    if images is BATCH:
        assert_gradient_matches(_keras_op("extract_patches"), _ours("extract_patches"),
                                (images, size), kwargs, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("name,args,kwargs", [
    ("resize", (BATCH, (3, 4, 5)), {}),
    ("resize", (BATCH, (0, 4)), {}),
    ("resize", (BATCH[0, 0], (3, 4)), {}),
    ("resize", (BATCH, (3, 4)), {"crop_to_aspect_ratio": True, "pad_to_aspect_ratio": True}),
    ("resize", (BATCH, (3, 4)), {"interpolation": "mitchell"}),
    ("resize", (BATCH, (3, 4)), {"fill_mode": "reflect"}),
    ("resize", (BATCH, (3, 4)), {"data_format": "channels_middle"}),
    ("rgb_to_grayscale", (BATCH[..., :2],), {}),
    ("rgb_to_grayscale", (BATCH[0, 0],), {}),
    ("extract_patches", (BATCH, "2"), {}),
    ("extract_patches", (BATCH, (2, 2, 2, 2)), {}),
])
def test_bad_arguments_raise_kerass_errors(name, args, kwargs):
    theirs = raised(getattr(ops.image, name), *args, **kwargs)
    assert theirs is not None
    assert raised(getattr(gops.image, name), *args, **kwargs) == theirs


def test_names_not_there_yet_are_refused():
    assert callable(ops.image.affine_transform)
    with pytest.raises(AttributeError, match="keras.ops.image.affine_transform is not supported"):
        gops.image.affine_transform  # noqa: B018 - the lookup is what is tested
