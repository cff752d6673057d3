"""``tf.image``'s resizing, crops, flips, dtype conversion, colour adjustments and psnr/ssim against real
TensorFlow on the same seeded images: values, dtypes, shapes, gradients and error types. The
random_* names are checked by their rule (the output is one of the allowed results, and over
seeded draws more than one occurs), not against TF's draws."""
import numpy as np
import pytest

import gpuaccel as ga
from tf_comparison import raised

tf = pytest.importorskip("tensorflow")

RNG = np.random.default_rng(7)
IMAGES = RNG.uniform(0, 1, (2, 5, 7, 3)).astype(np.float32)
ONE_IMAGE = IMAGES[0]
UINT8_IMAGES = RNG.integers(0, 256, (2, 5, 7, 3)).astype(np.uint8)


def assert_same(ours, theirs, rtol=1e-5, atol=1e-5):
    theirs = theirs.numpy() if hasattr(theirs, "numpy") else np.asarray(theirs)
    assert ours.dtype.name == theirs.dtype.name, (ours.dtype, theirs.dtype)
    assert tuple(ours.shape) == theirs.shape
    np.testing.assert_allclose(ours.numpy().astype(np.float64), theirs.astype(np.float64),
                               rtol=rtol, atol=atol)


def assert_same_gradient(our_fn, their_fn, x, seed=0):
    """d sum(f(x) * W) / dx for a seeded W, gpuaccel's autograd against tf.GradientTape."""
    ours_in = ga.tensor(x, requires_grad=True)
    ours_out = our_fn(ours_in)
    weights = np.random.default_rng(seed).uniform(-1, 1, tuple(ours_out.shape)).astype(np.float32)
    (ours_out * ga.tensor(weights)).sum().backward()
    theirs_in = tf.Variable(x)
    with tf.GradientTape() as tape:
        loss = tf.reduce_sum(their_fn(theirs_in) * weights)
    np.testing.assert_allclose(ours_in.grad.numpy(), tape.gradient(loss, theirs_in).numpy(),
                               rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("method,antialias", [
    ("bilinear", False), ("nearest", False), ("bicubic", False), ("area", False),
    ("lanczos3", False), ("bilinear", True)])
def test_resize_matches_tensorflow(method, antialias):
    for size in ([3, 4], [8, 11]):
        assert_same(ga.image.resize(IMAGES, size, method=method, antialias=antialias),
                    tf.image.resize(IMAGES, size, method=method, antialias=antialias),
                    atol=1e-4)
    assert_same(ga.image.resize(ONE_IMAGE, [4, 9], method=method),
                tf.image.resize(ONE_IMAGE, [4, 9], method=method), atol=1e-4)


def test_resize_method_enum_dtypes_and_aspect_ratio():
    for name in ("BILINEAR", "NEAREST_NEIGHBOR", "BICUBIC", "AREA", "LANCZOS3", "LANCZOS5",
                 "GAUSSIAN", "MITCHELLCUBIC"):
        assert getattr(ga.image.ResizeMethod, name) == getattr(tf.image.ResizeMethod, name)
    # integer images: 'nearest' keeps the dtype, the other methods give float32
    for method in (ga.image.ResizeMethod.NEAREST_NEIGHBOR, ga.image.ResizeMethod.BILINEAR):
        assert_same(ga.image.resize(UINT8_IMAGES, [3, 9], method=method),
                    tf.image.resize(UINT8_IMAGES, [3, 9], method=method), atol=1e-3)
    for size in ([10, 20], [4, 3], [6, 6]):
        assert_same(ga.image.resize(IMAGES, size, preserve_aspect_ratio=True),
                    tf.image.resize(IMAGES, size, preserve_aspect_ratio=True), atol=1e-4)


def test_resize_and_resize_with_pad_gradients_match_tensorflow():
    assert_same_gradient(lambda t: ga.image.resize(t, [3, 10], method="bicubic"),
                         lambda t: tf.image.resize(t, [3, 10], method="bicubic"), IMAGES)
    assert_same_gradient(lambda t: ga.image.resize(t, [4, 4], antialias=True),
                         lambda t: tf.image.resize(t, [4, 4], antialias=True), IMAGES, seed=1)
    assert_same_gradient(lambda t: ga.image.resize_with_pad(t, 6, 6),
                         lambda t: tf.image.resize_with_pad(t, 6, 6), IMAGES, seed=2)


def test_resize_with_pad_matches_tensorflow():
    for height, width, method in ((6, 6, "bilinear"), (9, 4, "nearest"), (5, 14, "area")):
        assert_same(ga.image.resize_with_pad(IMAGES, height, width, method=method),
                    tf.image.resize_with_pad(IMAGES, height, width, method=method), atol=1e-4)
    assert_same(ga.image.resize_with_pad(ONE_IMAGE, 8, 8, antialias=True),
                tf.image.resize_with_pad(ONE_IMAGE, 8, 8, antialias=True), atol=1e-4)


def test_crops_and_pads_match_tensorflow():
    for image in (IMAGES, ONE_IMAGE, UINT8_IMAGES):
        for height, width in ((3, 9), (6, 4), (5, 7)):
            assert_same(ga.image.resize_with_crop_or_pad(image, height, width),
                        tf.image.resize_with_crop_or_pad(image, height, width))
        for fraction in (0.5, 0.75, 1.0):
            assert_same(ga.image.central_crop(image, fraction),
                        tf.image.central_crop(image, fraction))
        assert_same(ga.image.crop_to_bounding_box(image, 1, 2, 3, 4),
                    tf.image.crop_to_bounding_box(image, 1, 2, 3, 4))
        assert_same(ga.image.pad_to_bounding_box(image, 1, 2, 8, 10),
                    tf.image.pad_to_bounding_box(image, 1, 2, 8, 10))
    assert_same_gradient(lambda t: ga.image.resize_with_crop_or_pad(t, 3, 9),
                         lambda t: tf.image.resize_with_crop_or_pad(t, 3, 9), IMAGES)


@pytest.mark.parametrize("call", [
    lambda image: image.crop_to_bounding_box(IMAGES, -1, 0, 2, 2),
    lambda image: image.crop_to_bounding_box(IMAGES, 0, 0, 0, 2),
    lambda image: image.crop_to_bounding_box(IMAGES, 3, 0, 3, 2),
    lambda image: image.pad_to_bounding_box(IMAGES, 0, 1, 8, 7),
    lambda image: image.pad_to_bounding_box(IMAGES, -1, 0, 8, 8),
    lambda image: image.central_crop(IMAGES, 0.0),
    lambda image: image.central_crop(IMAGES, 1.5),
    lambda image: image.resize(IMAGES, [2, 3, 4]),
    lambda image: image.resize(IMAGES[0, 0], [2, 3]),
    lambda image: image.resize(IMAGES, [2, 3], method="cubic"),
    lambda image: image.resize_with_pad(IMAGES, 0, 4),
])
def test_bad_arguments_raise_tensorflows_error_type(call):
    with pytest.raises(ValueError):
        call(tf.image)
    with pytest.raises(ValueError, match="must|Resize method"):
        call(ga.image)


def test_flips_transpose_and_rot90_match_tensorflow():
    for image in (IMAGES, ONE_IMAGE, UINT8_IMAGES):
        assert_same(ga.image.flip_left_right(image), tf.image.flip_left_right(image))
        assert_same(ga.image.flip_up_down(image), tf.image.flip_up_down(image))
        assert_same(ga.image.transpose(image), tf.image.transpose(image))
        for k in (0, 1, 2, 3, -1, 5):
            assert_same(ga.image.rot90(image, k), tf.image.rot90(image, k))
    assert_same_gradient(lambda t: ga.image.rot90(ga.image.flip_left_right(t), 3),
                         lambda t: tf.image.rot90(tf.image.flip_left_right(t), 3), IMAGES)


@pytest.mark.parametrize("source,target", [
    ("uint8", "float32"), ("float32", "uint8"), ("uint8", "int32"), ("int32", "uint8"),
    ("float32", "int32"), ("float32", "float16"), ("uint8", "uint8")])
def test_convert_image_dtype_matches_tensorflow(source, target):
    values = {"uint8": UINT8_IMAGES, "int32": UINT8_IMAGES.astype(np.int32) * 8_388_608,
              "float32": RNG.uniform(-0.2, 1.2, (2, 5, 7, 3)).astype(np.float32)}[source]
    for saturate in (False, True):
        if source == "float32" and target in ("uint8", "int32") and not saturate:
            values = np.clip(values, 0, 0.999)  # out of range casts wrap differently per CPU
        assert_same(ga.image.convert_image_dtype(values, target, saturate=saturate),
                    tf.image.convert_image_dtype(values, target, saturate=saturate), rtol=1e-3,
                    atol=1e-3)


def test_convert_image_dtype_between_floats_passes_the_gradient():
    assert_same_gradient(lambda t: ga.image.convert_image_dtype(t, "float16") * 2.0,
                         lambda t: tf.cast(tf.image.convert_image_dtype(t, "float16"),
                                           "float32") * 2.0, IMAGES)


def test_grayscale_conversions_match_tensorflow():
    for image in (IMAGES, ONE_IMAGE, UINT8_IMAGES):
        assert_same(ga.image.rgb_to_grayscale(image), tf.image.rgb_to_grayscale(image),
                    atol=1e-5 if image.dtype == np.float32 else 1.0)
    gray = IMAGES[..., :1]
    assert_same(ga.image.grayscale_to_rgb(gray), tf.image.grayscale_to_rgb(tf.constant(gray)))
    assert_same_gradient(lambda t: ga.image.grayscale_to_rgb(ga.image.rgb_to_grayscale(t)),
                         lambda t: tf.image.grayscale_to_rgb(tf.image.rgb_to_grayscale(t)),
                         IMAGES)
    with pytest.raises(ValueError):
        tf.image.grayscale_to_rgb(tf.constant(IMAGES))
    with pytest.raises(ValueError, match="size 1"):
        ga.image.grayscale_to_rgb(IMAGES)


def test_brightness_contrast_and_standardization_match_tensorflow():
    for image in (IMAGES, ONE_IMAGE, UINT8_IMAGES):
        tolerance = 1e-5 if image.dtype == np.float32 else 1.0  # uint8: rounding of x.5
        for delta in (0.3, -0.2):
            assert_same(ga.image.adjust_brightness(image, delta),
                        tf.image.adjust_brightness(image, delta), atol=tolerance)
        for factor in (0.5, 1.7):
            assert_same(ga.image.adjust_contrast(image, factor),
                        tf.image.adjust_contrast(image, factor), atol=tolerance)
        assert_same(ga.image.per_image_standardization(image),
                    tf.image.per_image_standardization(image), atol=1e-4)
    flat = np.full((4, 4, 1), 3.0, np.float32)  # stddev 0: divided by 1/sqrt(16) instead
    assert_same(ga.image.per_image_standardization(flat),
                tf.image.per_image_standardization(flat))
    # (TF registers no gradient for adjust_contrast's kernel, so it stays out of this chain)
    assert_same_gradient(
        lambda t: ga.image.per_image_standardization(ga.image.adjust_brightness(t, 0.1)),
        lambda t: tf.image.per_image_standardization(tf.image.adjust_brightness(t, 0.1)), IMAGES)


def test_random_flips_pick_per_image_between_identity_and_flip():
    ga.random.set_seed(3)
    tf.random.set_seed(3)
    for random_flips, flip in (
            ((ga.image.random_flip_left_right, tf.image.random_flip_left_right),
             tf.image.flip_left_right),
            ((ga.image.random_flip_up_down, tf.image.random_flip_up_down), tf.image.flip_up_down)):
        for random_flip in random_flips:  # the rule holds for TF's draws as for ours
            seen = set()
            for _ in range(8):
                out = random_flip(IMAGES).numpy()
                for i in range(len(IMAGES)):
                    same = np.array_equal(out[i], IMAGES[i])
                    assert same or np.array_equal(out[i], flip(IMAGES[i]).numpy())
                    seen.add(same)
            assert seen == {True, False}
            assert tuple(random_flip(ONE_IMAGE).shape) == ONE_IMAGE.shape


def test_random_crop_brightness_and_contrast_follow_their_rules():
    ga.random.set_seed(4)
    starts = set()
    for _ in range(10):
        out = ga.image.random_crop(IMAGES, [1, 3, 4, 3]).numpy()
        windows = [(b, y, x) for b in range(2) for y in range(3) for x in range(4)
                   if np.array_equal(IMAGES[b:b + 1, y:y + 3, x:x + 4], out)]
        assert len(windows) == 1
        starts.add(windows[0])
    assert len(starts) > 3
    with pytest.raises(ga.errors.InvalidArgumentError, match="value.shape >= size"):
        ga.image.random_crop(IMAGES, [1, 6, 4, 3])
    with pytest.raises(tf.errors.InvalidArgumentError):
        tf.image.random_crop(IMAGES, [1, 6, 4, 3])
    deltas = set()
    for _ in range(5):
        delta = ga.image.random_brightness(IMAGES, 0.25).numpy() - IMAGES
        assert np.ptp(delta) < 1e-6 and abs(delta.flat[0]) <= 0.25
        deltas.add(round(float(delta.flat[0]), 5))
    assert len(deltas) > 1
    mean = IMAGES.mean(axis=(1, 2), keepdims=True)
    for _ in range(3):
        factor = (ga.image.random_contrast(IMAGES, 0.5, 1.5).numpy() - mean) / (IMAGES - mean)
        assert np.ptp(factor) < 1e-3 and 0.5 <= factor.flat[0] < 1.5
    for bad in (lambda image: image.random_brightness(IMAGES, -0.1),
                lambda image: image.random_contrast(IMAGES, 0.5, 0.5),
                lambda image: image.random_contrast(IMAGES, -0.5, 0.5)):
        with pytest.raises(ValueError):
            bad(tf.image)
        with pytest.raises(ValueError):
            bad(ga.image)


# ---- image quality: psnr and ssim ----

BIG = RNG.uniform(0, 1, (2, 12, 13, 3)).astype(np.float32)
BIG_NOISY = np.clip(BIG + RNG.normal(0, 0.1, BIG.shape), 0, 1).astype(np.float32)
BIG_UINT8 = (BIG * 255).astype(np.uint8)
BIG_NOISY_UINT8 = (BIG_NOISY * 255).astype(np.uint8)


@pytest.mark.parametrize("a,b,max_val", [(IMAGES, IMAGES[::-1], 1.0), (ONE_IMAGE, IMAGES, 1.0),
                                         (UINT8_IMAGES, UINT8_IMAGES[::-1], 255),
                                         (BIG, BIG_NOISY, 2.0)])
def test_psnr_matches_tensorflow(a, b, max_val):
    assert_same(ga.image.psnr(a, b, max_val), tf.image.psnr(a, b, max_val), rtol=1e-5)


@pytest.mark.parametrize("a,b,kwargs", [
    (BIG, BIG_NOISY, {"max_val": 1.0}),
    (BIG_UINT8, BIG_NOISY_UINT8, {"max_val": 255}),
    (BIG[:1], BIG_NOISY, {"max_val": 1.0, "filter_size": 5, "filter_sigma": 0.8, "k2": 0.05}),
    (BIG, BIG_NOISY, {"max_val": 1.0, "filter_size": 7, "return_index_map": True}),
])
def test_ssim_matches_tensorflow(a, b, kwargs):
    assert_same(ga.image.ssim(a, b, **kwargs), tf.image.ssim(a, b, **kwargs), rtol=1e-4,
                atol=1e-5)


def test_psnr_and_ssim_gradients_match_tensorflow():
    assert_same_gradient(lambda x: ga.image.psnr(x, BIG_NOISY, 1.0),
                         lambda x: tf.image.psnr(x, BIG_NOISY, 1.0), BIG)
    assert_same_gradient(lambda x: ga.image.ssim(x, BIG_NOISY, 1.0, filter_size=5),
                         lambda x: tf.image.ssim(x, BIG_NOISY, 1.0, filter_size=5), BIG)


@pytest.mark.parametrize("call", [
    lambda m: m.image.psnr(IMAGES[0, 0], IMAGES[0, 0], 1.0),
    lambda m: m.image.psnr(IMAGES, IMAGES[:, :4], 1.0),
    lambda m: m.image.ssim(IMAGES[:1].repeat(3, 0), IMAGES, 1.0, filter_size=3),
    lambda m: m.image.ssim(IMAGES, IMAGES, 1.0),
])
def test_psnr_and_ssim_bad_shapes_raise_tensorflows_errors(call):
    theirs = raised(call, tf)
    assert theirs is not None
    ours = raised(call, ga)
    assert ours[0] == theirs[0]
    if theirs[0] == "ValueError":
        assert ours == theirs


BOXES = np.array([[0.1, 0.2, 0.8, 0.9], [0.0, 0.0, 1.0, 1.0], [-0.2, 0.3, 0.5, 1.3],
                  [0.9, 0.7, 0.2, 0.1], [0.5, 0.5, 0.5, 0.5]], np.float32)  # out, flipped, point
BOX_INDICES = np.array([0, 1, 1, 0, 1], np.int32)


@pytest.mark.parametrize("method", ["bilinear", "nearest"])
def test_crop_and_resize_matches_tensorflow(method):
    for size in ([4, 5], [1, 3], [6, 1]):
        for image in (IMAGES, UINT8_IMAGES):
            assert_same(ga.image.crop_and_resize(image, BOXES, BOX_INDICES, size, method=method,
                                                 extrapolation_value=-1.0),
                        tf.image.crop_and_resize(image, BOXES, BOX_INDICES, size, method=method,
                                                 extrapolation_value=-1.0))


def test_crop_and_resize_gradients_reach_image_and_boxes_as_tensorflows():
    inner = np.array([[0.1, 0.2, 0.8, 0.9], [0.05, 0.03, 0.97, 0.96]], np.float32)
    weights = RNG.normal(size=(2, 4, 5, 3)).astype(np.float32)
    image, boxes = ga.tensor(IMAGES, requires_grad=True), ga.tensor(inner, requires_grad=True)
    (ga.image.crop_and_resize(image, boxes, [1, 0], [4, 5]) * ga.tensor(weights)).sum().backward()
    image_tf, boxes_tf = tf.Variable(IMAGES), tf.Variable(inner)
    with tf.GradientTape() as tape:
        loss = tf.reduce_sum(tf.image.crop_and_resize(image_tf, boxes_tf, [1, 0], [4, 5]) *
                             weights)
    image_grad, boxes_grad = tape.gradient(loss, [image_tf, boxes_tf])
    np.testing.assert_allclose(image.grad.numpy(), image_grad.numpy(), rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(boxes.grad.numpy(), boxes_grad.numpy(), rtol=1e-4, atol=1e-4)
    for call in (lambda image: image.crop_and_resize(IMAGES, BOXES, BOX_INDICES[:2], [2, 2]),
                 lambda image: image.crop_and_resize(IMAGES[0], BOXES, BOX_INDICES, [2, 2])):
        with pytest.raises((tf.errors.InvalidArgumentError, ValueError)):
            call(tf.image)
        with pytest.raises(ga.errors.InvalidArgumentError):
            call(ga.image)
    for image, error in ((tf.image, tf.errors.OutOfRangeError),
                         (ga.image, ga.errors.OutOfRangeError)):
        with pytest.raises(error, match="box_index"):
            image.crop_and_resize(IMAGES, BOXES, BOX_INDICES + 1, [2, 2])


@pytest.mark.parametrize("depth", [1, 3, 4])
def test_draw_bounding_boxes_matches_tensorflow(depth):
    images = RNG.uniform(size=(2, 9, 11, depth)).astype(np.float32)
    for seed in range(6):  # boxes partly outside, inverted, and overlapping
        boxes = np.random.default_rng(seed).uniform(-0.3, 1.3, (2, 4, 4)).astype(np.float32)
        for colors in (None, RNG.uniform(size=(3, 4)).astype(np.float32)):
            assert_same(ga.image.draw_bounding_boxes(images, boxes, colors),
                        tf.image.draw_bounding_boxes(images, boxes, colors), atol=0)


def test_draw_bounding_boxes_gradient_and_errors():
    boxes = np.array([[[0.1, 0.2, 0.6, 0.7]], [[0.0, 0.0, 1.0, 1.0]]], np.float32)
    # TF registers no gradient for the kernel: the reference is d/dx of x where no line is
    # (TF's own lines, drawn in white on black, mark where)
    lines = tf.image.draw_bounding_boxes(np.zeros_like(IMAGES), boxes, [[1.0, 1.0, 1.0, 1.0]])
    weights = RNG.normal(size=IMAGES.shape).astype(np.float32)
    x = ga.tensor(IMAGES, requires_grad=True)
    (ga.image.draw_bounding_boxes(x, boxes, None) * ga.tensor(weights)).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), weights * (1 - lines.numpy()))
    for call in (lambda image: image.draw_bounding_boxes(IMAGES[0], boxes, None),
                 lambda image: image.draw_bounding_boxes(IMAGES, boxes[:1], None),
                 lambda image: image.draw_bounding_boxes(IMAGES[..., :2], boxes, None)):
        with pytest.raises((tf.errors.InvalidArgumentError, ValueError)):
            call(tf.image)
        with pytest.raises(ga.errors.InvalidArgumentError):
            call(ga.image)


def test_extract_glimpse_matches_tensorflow_and_fills_with_its_noise_rule():
    rng = np.random.default_rng(9)
    images = rng.uniform(2, 5, (2, 6, 8, 3)).astype(np.float32)
    for case in range(40):  # every centred/normalised combination, windows partly outside
        centered, normalized = bool(case % 2), bool(case // 2 % 2)
        size = (int(rng.integers(1, 5)), int(rng.integers(1, 5)))
        offsets = (rng.uniform(-1.2, 1.2, (2, 2)) if normalized else
                   rng.uniform(-4, 9, (2, 2))).astype(np.float32)
        assert_same(ga.image.extract_glimpse(images, size, offsets, centered=centered,
                                             normalized=normalized, noise="zero"),
                    tf.image.extract_glimpse(images, size, offsets, centered=centered,
                                             normalized=normalized, noise="zero"), atol=0)
    ga.random.set_seed(1)
    corner = [[-3.0, -3.0], [0.0, 0.0]]  # image 0's window is mostly outside
    for glimpse in (ga.image.extract_glimpse, tf.image.extract_glimpse):
        out = np.asarray(glimpse(images, (4, 4), corner, centered=False, normalized=False))
        np.testing.assert_array_equal(out[0, 3, 3], images[0, 0, 0])
        np.testing.assert_array_equal(out[1], images[1, :4, :4])
        noise = out[0, :3].reshape(-1)
        assert images[0].min() <= noise.min() and noise.max() <= images[0].max()
        assert np.ptp(noise) > 0.5
    weights = rng.normal(size=(2, 3, 4, 3)).astype(np.float32)
    x = ga.tensor(images, requires_grad=True)
    out = ga.image.extract_glimpse(x, (3, 4), corner, centered=False, normalized=False,
                                   noise="zero")
    (out * ga.tensor(weights)).sum().backward()  # linear in x: <x, grad> = <out, weights>
    np.testing.assert_allclose(np.sum(images * x.grad.numpy()),
                               np.sum(out.detach().numpy() * weights), rtol=1e-5)
    for image in (ga.image, tf.image):
        with pytest.raises((ga.errors.InvalidArgumentError, tf.errors.InvalidArgumentError,
                            ValueError)):
            image.extract_glimpse(images, (2, 2), corner, noise="pink")


def test_non_max_suppression_matches_tensorflow():
    rng = np.random.default_rng(10)
    for case in range(60):  # corner orders swapped, boxes of no area, tied scores
        n = int(rng.integers(1, 25))
        corners = rng.uniform(0, 1, (n, 2))
        boxes = np.concatenate([corners, corners + rng.uniform(0.05, 0.5, (n, 2))], 1)
        boxes = (boxes[:, [2, 3, 0, 1]] if case % 3 == 0 else boxes).astype(np.float32)
        if case % 5 == 0:
            boxes[0, 2] = boxes[0, 0]
        scores = np.round(rng.uniform(0, 1, n), 1).astype(np.float32)
        overlaps = rng.uniform(0, 1, (n, n)).astype(np.float32)
        limit, threshold = int(rng.integers(0, 12)), float(rng.uniform(0, 1))
        floor = float(rng.choice([-np.inf, 0.3]))
        assert_same(ga.image.non_max_suppression(boxes, scores, limit, threshold, floor),
                    tf.image.non_max_suppression(boxes, scores, limit, threshold, floor), atol=0)
        assert_same(ga.image.non_max_suppression_overlaps(overlaps, scores, limit, threshold,
                                                          floor),
                    tf.image.non_max_suppression_overlaps(overlaps, scores, limit, threshold,
                                                          floor), atol=0)
        for ours, theirs in zip(
                ga.image.non_max_suppression_with_scores(boxes, scores, limit, threshold, floor),
                tf.image.non_max_suppression_with_scores(boxes, scores, limit, threshold, floor)):
            assert_same(ours, theirs, atol=0)
    with pytest.raises(NotImplementedError, match="soft_nms_sigma"):
        ga.image.non_max_suppression_with_scores(BOXES[:, :4], BOXES[:, 0], 3, soft_nms_sigma=0.5)
    for image in (ga.image, tf.image):
        with pytest.raises((ga.errors.InvalidArgumentError, tf.errors.InvalidArgumentError,
                            ValueError)):
            image.non_max_suppression(BOXES, BOXES[:3, 0], 3)


def test_combined_non_max_suppression_matches_tensorflow():
    """Boxes shared by the classes (q = 1) or per class, padding with fewer detections than
    slots, pad_per_class's smaller output, clipping, a score floor, swapped corners; the named
    fields and dtypes. Tied scores are left out of the comparison: TF's kernel pops a class's
    candidates from a std::priority_queue, so its order among equal scores is the heap's
    (gpuaccel's: index order within a class, class order across, asserted below)."""
    rng = np.random.default_rng(12)
    for case in range(24):
        batch, n, classes = 2, int(rng.integers(1, 15)), int(rng.integers(1, 4))
        q = 1 if case % 2 else classes
        corners = rng.uniform(-0.2, 1.0, (batch, n, q, 2))
        boxes = np.concatenate([corners, corners + rng.uniform(0.05, 0.5, (batch, n, q, 2))],
                               -1).astype(np.float32)
        if case % 3 == 0:
            boxes = boxes[..., [2, 3, 0, 1]]
        scores = rng.uniform(0, 1, (batch, n, classes)).astype(np.float32)
        per_class, total = int(rng.integers(1, 5)), int(rng.integers(1, 12))
        arguments = dict(iou_threshold=float(rng.uniform(0.2, 0.8)),
                         score_threshold=float(rng.choice([-np.inf, 0.4])),
                         pad_per_class=bool(case % 5 == 0), clip_boxes=bool(case % 7))
        ours = ga.image.combined_non_max_suppression(boxes, scores, per_class, total, **arguments)
        theirs = tf.image.combined_non_max_suppression(boxes, scores, per_class, total,
                                                       **arguments)
        assert ours._fields == ("nmsed_boxes", "nmsed_scores", "nmsed_classes",
                                "valid_detections")
        for mine, reference in zip(ours, theirs):
            assert_same(mine, reference, atol=0)
    tied = np.array([[[0.5, 0.5], [0.5, 0.9], [0.5, 0.5]]], np.float32)
    apart = np.array([[[[0, 0, .1, .1]], [[.2, .2, .3, .3]], [[.4, .4, .5, .5]]]], np.float32)
    ours = ga.image.combined_non_max_suppression(apart, tied, 3, 6)
    np.testing.assert_array_equal(ours.nmsed_boxes.numpy()[0, :, 0],
                                  np.float32([.2, 0, .2, .4, 0, .4]))
    np.testing.assert_array_equal(ours.nmsed_classes.numpy()[0], [1, 0, 0, 0, 1, 1])
    for image in (ga.image, tf.image):
        with pytest.raises((ga.errors.InvalidArgumentError, tf.errors.InvalidArgumentError,
                            ValueError)):
            image.combined_non_max_suppression(np.zeros((1, 3, 2, 4), np.float32),
                                               np.zeros((1, 3, 3), np.float32), 2, 4)


def test_sample_distorted_bounding_box_follows_tensorflows_rule():
    """Checked by rule on TF's draws and ours (the numbers cannot be TF's)."""
    ga.random.set_seed(3)
    tf.random.set_seed(3)
    box = np.array([[[0.1, 0.2, 0.6, 0.7]]], np.float32)
    height, width = 40, 60
    for sample in (ga.image.sample_distorted_bounding_box, tf.image.sample_distorted_bounding_box):
        windows = set()
        for _ in range(12):
            begin, size, boxes = (np.asarray(t) for t in sample(
                [height, width, 3], box, min_object_covered=0.3, aspect_ratio_range=(0.5, 2.0),
                area_range=(0.1, 0.8)))
            (y, x, zero), (h, w, minus_one) = begin, size
            assert (zero, minus_one) == (0, -1) and begin.dtype == np.int32
            assert 0 <= y and y + h <= height and 0 <= x and x + w <= width
            assert 0.1 * height * width <= h * w <= 0.8 * height * width
            assert 0.5 - 1 / h <= w / h <= 2.0 + 1 / h
            covered = max(0, min(42, x + w) - max(12, x)) * max(0, min(24, y + h) - max(4, y))
            assert covered >= 0.3 * (42 - 12) * (24 - 4)  # the box in pixels: x 12..42, y 4..24
            np.testing.assert_allclose(boxes, [[[y / height, x / width, (y + h) / height,
                                                 (x + w) / width]]], rtol=1e-6)
            windows.add((y, x, h, w))
        assert len(windows) > 3
    for sample in (ga.image.stateless_sample_distorted_bounding_box,
                   tf.image.stateless_sample_distorted_bounding_box):
        first = [np.asarray(t) for t in sample([height, width, 3], box, seed=(4, 5))]
        again = [np.asarray(t) for t in sample([height, width, 3], box, seed=(4, 5))]
        for a, b in zip(first, again):
            np.testing.assert_array_equal(a, b)
    # nothing can cover all of a box of the whole image within 10% of its area: the whole image
    begin, size, _ = ga.image.sample_distorted_bounding_box(
        [height, width, 3], [[[0.0, 0.0, 1.0, 1.0]]], min_object_covered=1.0,
        area_range=(0.05, 0.1))
    assert begin.numpy().tolist() == [0, 0, 0] and size.numpy().tolist() == [height, width, -1]
    empty = np.zeros((1, 0, 4), np.float32)
    with pytest.raises(tf.errors.InvalidArgumentError, match="No bounding boxes"):
        tf.image.sample_distorted_bounding_box([height, width, 3], empty)
    with pytest.raises(ga.errors.InvalidArgumentError, match="No bounding boxes"):
        ga.image.sample_distorted_bounding_box([height, width, 3], empty)
    whole = ga.image.sample_distorted_bounding_box([height, width, 3], empty, area_range=(1, 1),
                                                   use_image_if_no_bounding_boxes=True)
    assert whole[1].numpy().tolist() == [height, width, -1]
