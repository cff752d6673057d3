"""``tf.image``/``tf.io`` image codecs (decode_jpeg, decode_png, decode_bmp, decode_gif,
decode_image, encode_jpeg, encode_png, is_jpeg, extract_jpeg_shape) through PIL.

Why PIL: TensorFlow decodes with libjpeg/libpng/giflib in its own kernels; gpuaccel has no
string tensors and no codec kernels, and image decoding runs on the host in both frameworks.
PIL (an optional dependency, imported on the first call, see _pil) wraps the same libraries, so
PNG, BMP and GIF pixels are TF's exactly; JPEG pixels are TF's with
``dct_method="INTEGER_ACCURATE"`` and differ from TF's default fast DCT by rounding. What is TF's and not PIL's is kept here: which op accepts
which format, the channel conversions (libpng's integer RGB-to-gray, libjpeg's luma for a gray
JPEG), the 16-bit-to-8-bit rule, the frames axis of GIFs, and InvalidArgumentError (with TF's
messages) for bytes that are not a valid image.

Encoded images are ``HostString`` (bytes) values, as TF's scalar string tensors; decoded ones
are uint8 Tensors (height, width, channels), or (frames, height, width, 3) for GIFs.
"""
import io

import numpy as np

from . import errors
from ._image_adjust import convert_image_dtype
from .dtypes import as_dtype
from ._host_strings import HostString, to_bytes
from ._pil import pil_image
from ._tensor import Tensor, tensor as _to_tensor

_JPEG, _PNG, _GIF, _BMP = "JPEG", "PNG", "GIF", "BMP"
_MAGIC = ((b"\xff\xd8\xff", _JPEG), (b"\x89PNG\r\n\x1a\n", _PNG), (b"GIF8", _GIF),
          (b"BM", _BMP))
_OPS = {"decode_jpeg": "DecodeJpeg", "decode_png": "DecodePng", "decode_gif": "DecodeGif",
        "decode_bmp": "DecodeBmp", "decode_image": "DecodeImage"}
# libpng's fixed-point RGB-to-gray weights (0.299, 0.587, 0.114 in 1/32768), truncated as libpng's
# 8-bit path truncates; TF's decode_png(channels=1) of a colour PNG uses them.
_GRAY_WEIGHTS = (9798, 19235, 3735)


def _format_of(data):
    for magic, name in _MAGIC:
        if data.startswith(magic):
            return name
    return None


def _contents(contents, op):
    if isinstance(contents, Tensor):
        raise TypeError(f"{op}: contents must be the encoded image as bytes (e.g. from "
                        "tf.io.read_file), got a numeric Tensor (gpuaccel has no string tensors)")
    return to_bytes(contents, f"{op}: contents")


def _check_channels(channels, op, allowed=(0, 1, 3, 4)):
    channels = 0 if channels is None else channels
    if not isinstance(channels, (int, np.integer)) or isinstance(channels, bool):
        raise TypeError(f"{op}: channels must be an int, got {type(channels).__name__}")
    if channels not in allowed:
        listed = ", ".join(str(c) for c in allowed[:-1]) + f" or {allowed[-1]}"
        suffix = " for BMP," if allowed == (0, 3, 4) else ""
        raise errors.InvalidArgumentError(
            f"`channels` must be {listed}{suffix} but got {channels}", _OPS.get(op, op))
    return int(channels)


def _open(data, op):
    """The PIL image of ``data``, loaded (so a corrupt file fails here, as TF's decoder does)."""
    image_module = pil_image(op)
    fmt = _format_of(data)
    try:
        img = image_module.open(io.BytesIO(data))
        img.load()
    except Exception as error:  # noqa: BLE001 - PIL raises OSError, SyntaxError, ValueError...
        what = {_JPEG: "Invalid JPEG data or crop window", _PNG: "Invalid PNG data",
                _GIF: "Invalid GIF data", _BMP: "Invalid BMP data"}.get(fmt, "Invalid image")
        raise errors.InvalidArgumentError(f"{what} ({len(data)} bytes): {error}",
                                          _OPS.get(op, op)) from None
    return img


def _to_8bit(array):
    """uint8 pixels: 16-bit samples keep their high byte (libpng's strip_16, as TF)."""
    if array.dtype == np.uint8:
        return array
    if array.dtype == bool:
        return array.astype(np.uint8) * 255
    return (array.astype(np.uint32) >> 8).astype(np.uint8)


def _gray_of(rgb):
    r, g, b = (rgb[..., i].astype(np.uint32) for i in range(3))
    wr, wg, wb = _GRAY_WEIGHTS
    return ((wr * r + wg * g + wb * b) >> 15).astype(rgb.dtype)[..., None]


def _with_channels(pixels, channels):
    """(H, W, C) pixels converted to ``channels`` (0 keeps them) as libpng does for TF: gray is
    replicated, alpha dropped or added as opaque, colour turned gray with integer weights."""
    have = pixels.shape[-1]
    if channels in (0, have):
        return pixels
    opaque = np.full(pixels.shape[:-1] + (1,), np.iinfo(pixels.dtype).max, pixels.dtype)
    if have in (1, 2):  # gray, gray + alpha
        gray = pixels[..., :1]
        alpha = pixels[..., 1:2] if have == 2 else opaque
        return {1: gray, 3: np.repeat(gray, 3, -1),
                4: np.concatenate([np.repeat(gray, 3, -1), alpha], -1)}[channels]
    rgb = pixels[..., :3]
    alpha = pixels[..., 3:4] if have == 4 else opaque
    return {1: _gray_of(rgb), 3: rgb, 4: np.concatenate([rgb, alpha], -1)}[channels]


def _still_pixels(img, fmt, channels):
    """(H, W, C) pixels of a PNG, BMP or JPEG image at its stored depth (uint8 or uint16)."""
    mode = img.mode
    if mode == "P" or mode == "PA" or mode == "1" and fmt != _PNG:
        img = img.convert("RGBA" if "transparency" in img.info or mode == "PA" else "RGB")
    elif mode == "1":
        img = img.convert("L")
    elif mode == "CMYK":
        img = img.convert("RGB")
    elif mode in ("I", "I;16", "I;16B"):
        pixels = np.asarray(img).astype(np.uint16)[..., None]
        return _with_channels(pixels, channels)
    pixels = np.asarray(img)
    if pixels.ndim == 2:
        pixels = pixels[..., None]
    return _with_channels(pixels, channels)


def _jpeg_pixels(data, channels, ratio, op):
    """A JPEG decoded by libjpeg through PIL: ``ratio`` and a gray output are asked of libjpeg
    itself (its DCT scaling and its luma channel), as TF's decoder does."""
    image_module = pil_image(op)
    try:
        img = image_module.open(io.BytesIO(data))
        wanted_mode = "L" if channels == 1 else img.mode if img.mode in ("L", "RGB") else "RGB"
        # PIL picks libjpeg's largest scale 1/k with size // requested >= k
        img.draft(wanted_mode, (max(1, img.size[0] // ratio), max(1, img.size[1] // ratio)))
        img.load()
    except Exception as error:  # noqa: BLE001 - PIL's errors for a bad or truncated JPEG
        raise errors.InvalidArgumentError(
            f"jpeg::Uncompress failed. Invalid JPEG data or crop window ({len(data)} bytes): "
            f"{error}", _OPS.get(op, op)) from None
    if img.mode not in ("L", "RGB"):
        img = img.convert("L" if channels == 1 else "RGB")
    pixels = np.asarray(img)
    if pixels.ndim == 2:
        pixels = pixels[..., None]
    return _with_channels(pixels, channels)


def _gif_frames(img):
    """(frames, H, W, 3) of every frame, each composited over the ones before (as TF's)."""
    frames = []
    for index in range(getattr(img, "n_frames", 1)):
        img.seek(index)
        frames.append(np.asarray(img.convert("RGB")))
    return np.stack(frames)


def _decode(contents, channels, op, *, ratio=1, animations="still"):
    """Pixels as a NumPy array (uint8 or, for 16-bit PNGs, uint16), following TF's op ``op``.
    ``animations``: "still" (3-D; an animated GIF is an error), "frames" (always 4-D),
    "expand" (4-D for a GIF, 3-D otherwise), "first" (a GIF's first frame, 3-D)."""
    data = _contents(contents, op)
    fmt = _format_of(data)
    opname = _OPS[op]
    if fmt is None:
        raise errors.InvalidArgumentError(
            "Unknown image file format. One of JPEG, PNG, GIF, BMP required.", opname)
    if op == "decode_bmp" and fmt != _BMP:
        raise errors.InvalidArgumentError(
            f"Trying to decode {fmt} format using DecodeBmp op. Use `decode_{fmt.lower()}` or "
            "`decode_image` instead.", opname)
    if op in ("decode_jpeg", "decode_png", "decode_gif") and fmt == _BMP:
        raise errors.InvalidArgumentError(
            "Trying to decode BMP format using a wrong op. Use `decode_bmp` or `decode_image` "
            f"instead. Op used: {opname}", opname)
    if fmt == _GIF:
        if channels not in (0, 3):
            raise errors.InvalidArgumentError(
                f"channels must be 0 or 3 for GIF, got {channels}", opname)
        frames = _gif_frames(_open(data, op))
        if animations == "still" and len(frames) > 1:
            raise errors.InvalidArgumentError(
                f"Got {len(frames)} frames, but animated gifs can only be decoded by "
                "tf.io.decode_gif or tf.io.decode_image", opname)
        return frames if animations in ("frames", "expand") else frames[0]
    if fmt == _JPEG:
        if channels == 4:
            raise errors.InvalidArgumentError("JPEG does not support 4 channels", opname)
        pixels = _jpeg_pixels(data, channels, ratio, op)
    else:
        if fmt == _BMP and channels == 1:
            raise errors.InvalidArgumentError(
                f"`channels` must be 0, 3 or 4 for BMP, but got {channels}", opname)
        pixels = _still_pixels(_open(data, op), fmt, channels)
    return pixels[None] if animations == "frames" else pixels


def _uint8_tensor(pixels):
    return _to_tensor(np.ascontiguousarray(_to_8bit(pixels)))


def _check_uint8_dtype(dtype, op):
    name = getattr(dtype, "name", dtype)
    if name == "uint16" or dtype is np.uint16:
        raise TypeError(f"{op}: dtype uint16 is not supported: gpuaccel has no uint16 tensors; "
                        "decode 16-bit images with tf.image.decode_image(contents, "
                        "dtype=tf.float32), which keeps their 16-bit precision in [0, 1]")
    return as_dtype(dtype)


def decode_jpeg(contents, channels=0, ratio=1, fancy_upscaling=True,
                try_recover_truncated=False, acceptable_fraction=1, dct_method="", name=None):
    """``tf.io.decode_jpeg``: a JPEG (or PNG, or one-frame GIF, as TF's op also takes) as a uint8
    (H, W, C) tensor; ``channels`` 0 (as stored), 1 or 3; ``ratio`` 1, 2, 4 or 8 downscales in
    libjpeg. PIL's libjpeg always runs the accurate integer DCT: the pixels are TF's with
    ``dct_method="INTEGER_ACCURATE"`` exactly, and differ from TF's default (the fast DCT) by
    about a level on average (``dct_method`` is a hint in TF too)."""
    channels = _check_channels(channels, "decode_jpeg")
    if ratio not in (1, 2, 4, 8):
        raise errors.InvalidArgumentError(f"ratio must be 1, 2, 4 or 8, got {ratio}", "DecodeJpeg")
    if dct_method not in ("", "INTEGER_FAST", "INTEGER_ACCURATE"):
        raise errors.InvalidArgumentError(
            f"dct_method must be '', 'INTEGER_FAST' or 'INTEGER_ACCURATE', got {dct_method!r}",
            "DecodeJpeg")
    if not fancy_upscaling:
        raise errors.UnimplementedError(
            "decode_jpeg: fancy_upscaling=False is not supported (PIL's libjpeg always "
            "upsamples chroma smoothly, TF's default)", "DecodeJpeg")
    if try_recover_truncated:
        raise errors.UnimplementedError(
            "decode_jpeg: try_recover_truncated=True is not supported (PIL decodes only whole "
            "files); a truncated JPEG raises InvalidArgumentError", "DecodeJpeg")
    return _uint8_tensor(_decode(contents, channels, "decode_jpeg", ratio=ratio))


def decode_png(contents, channels=0, dtype="uint8", name=None):
    """``tf.io.decode_png``: a PNG (or JPEG, or one-frame GIF) as a uint8 (H, W, C) tensor;
    ``channels`` 0 (as stored), 1, 3 or 4. 16-bit PNGs keep their high byte."""
    channels = _check_channels(channels, "decode_png")
    if _check_uint8_dtype(dtype, "decode_png").name != "uint8":
        raise errors.InvalidArgumentError(
            f"Value for attr 'dtype' of {getattr(dtype, 'name', dtype)} is not in the list of "
            "allowed values: uint8, uint16", "DecodePng")
    return _uint8_tensor(_decode(contents, channels, "decode_png"))


def decode_bmp(contents, channels=0, name=None):
    """``tf.io.decode_bmp``: a BMP as a uint8 (H, W, C) tensor; ``channels`` 0, 3 or 4."""
    channels = _check_channels(channels, "decode_bmp", (0, 3, 4))
    return _uint8_tensor(_decode(contents, channels, "decode_bmp"))


def decode_gif(contents, name=None):
    """``tf.io.decode_gif``: every frame of a GIF as a uint8 (frames, H, W, 3) tensor (a PNG or
    JPEG gives one frame)."""
    return _uint8_tensor(_decode(contents, 0, "decode_gif", animations="frames"))


def decode_image(contents, channels=None, dtype="uint8", name=None, expand_animations=True):
    """``tf.io.decode_image``: any of BMP, GIF, JPEG or PNG. A GIF is (frames, H, W, 3) unless
    ``expand_animations=False`` (its first frame). A float ``dtype`` scales to [0, 1] as
    ``convert_image_dtype`` does (16-bit PNGs by 1/65535, keeping their precision)."""
    channels = _check_channels(channels, "decode_image")
    target = _check_uint8_dtype(dtype, "decode_image")
    pixels = _decode(contents, channels, "decode_image",
                     animations="expand" if expand_animations else "first")
    if target.is_floating_point and (pixels.dtype == np.uint16
                                     or _format_of(_contents(contents, "decode_image")) == _PNG):
        # TF's kernel decodes a PNG for a float result at 16 bits (an 8-bit sample x as 257 x)
        # and scales by float32(1/65535), which rounds otherwise than 8-bit x * float32(1/255)
        samples = pixels.astype(np.float32) * (257 if pixels.dtype == np.uint8 else 1)
        scaled = samples * np.float32(1.0 / 65535)
        return convert_image_dtype(_to_tensor(scaled), target)
    image = _uint8_tensor(pixels)
    return image if target.name == "uint8" else convert_image_dtype(image, target)


def _image_array(image, op, channel_counts):
    array = image.numpy() if isinstance(image, Tensor) else np.asarray(image)
    if array.dtype != np.uint8:
        raise TypeError(f"{op}: image must be uint8, got {array.dtype}; convert it with "
                        "tf.image.convert_image_dtype(image, tf.uint8, saturate=True)")
    if array.ndim != 3:
        raise errors.InvalidArgumentError(
            f"image must be 3-dimensional (height, width, channels), got shape "
            f"{list(array.shape)}", op)
    if array.shape[-1] not in channel_counts:
        raise errors.InvalidArgumentError(
            f"image must have {' or '.join(map(str, channel_counts))} channels, got shape "
            f"{list(array.shape)}", op)
    return np.ascontiguousarray(array)


def encode_png(image, compression=-1, name=None):
    """``tf.io.encode_png``: a uint8 (H, W, C) image, C in 1..4, as PNG bytes (a HostString);
    ``compression`` -1 (default) or 0..9."""
    array = _image_array(image, "encode_png", (1, 2, 3, 4))
    if compression not in range(-1, 10):
        raise errors.InvalidArgumentError(
            f"compression should be in [-1,9], got {compression}", "EncodePng")
    mode = {1: "L", 2: "LA", 3: "RGB", 4: "RGBA"}[array.shape[-1]]
    pixels = array[..., 0] if mode == "L" else array
    buffer = io.BytesIO()
    pil_image("encode_png").fromarray(pixels, mode).save(
        buffer, format="PNG", compress_level=6 if compression == -1 else compression)
    return HostString(buffer.getvalue())


def encode_jpeg(image, format="", quality=95, progressive=False, optimize_size=False,  # noqa: A002
                chroma_downsampling=True, density_unit="in", x_density=300, y_density=300,
                xmp_metadata="", name=None):
    """``tf.io.encode_jpeg``: a uint8 (H, W, 1 or 3) image as JPEG bytes (a HostString) by
    libjpeg through PIL, with TF's defaults (quality 95, 4:2:0 chroma, 300 dpi)."""
    array = _image_array(image, "encode_jpeg", (1, 3))
    expected = {"": array.shape[-1], "grayscale": 1, "rgb": 3}.get(format)
    if expected is None:
        raise errors.InvalidArgumentError(
            f"format must be '', 'grayscale' or 'rgb', got {format!r}", "EncodeJpeg")
    if expected != array.shape[-1]:
        raise errors.InvalidArgumentError(
            f"format {format} expects {expected} channels, got {list(array.shape)}", "EncodeJpeg")
    if not 0 <= quality <= 100:
        raise errors.InvalidArgumentError(f"quality must be in [0,100], got {quality}",
                                          "EncodeJpeg")
    if density_unit not in ("in", "cm"):
        raise errors.InvalidArgumentError(
            f"density_unit must be 'in' or 'cm', got {density_unit!r}", "EncodeJpeg")
    # PIL writes densities per inch only; a density per cm is stored as the same dots per inch
    per_inch = 2.54 if density_unit == "cm" else 1.0
    buffer = io.BytesIO()
    pixels = array[..., 0] if array.shape[-1] == 1 else array
    options = dict(quality=int(quality), progressive=bool(progressive),
                   optimize=bool(optimize_size), subsampling=2 if chroma_downsampling else 0,
                   dpi=(round(x_density * per_inch), round(y_density * per_inch)))
    if xmp_metadata:
        options["xmp"] = to_bytes(xmp_metadata, "encode_jpeg: xmp_metadata")
    pil_image("encode_jpeg").fromarray(pixels, "L" if pixels.ndim == 2 else "RGB").save(
        buffer, format="JPEG", **options)
    return HostString(buffer.getvalue())


def is_jpeg(contents, name=None):
    """``tf.io.is_jpeg``: whether the bytes start as a JPEG does (a bool scalar tensor; a list
    of contents gives a bool vector)."""
    if isinstance(contents, (list, tuple)) or (isinstance(contents, np.ndarray)
                                               and contents.ndim > 0):
        return _to_tensor(np.array([_format_of(to_bytes(c, "is_jpeg: contents")) == _JPEG
                                    for c in contents], dtype=bool))
    return _to_tensor(np.array(_format_of(_contents(contents, "is_jpeg")) == _JPEG))


def extract_jpeg_shape(contents, output_type="int32", name=None):
    """``tf.io.extract_jpeg_shape``: [height, width, channels] of a JPEG, read from its header."""
    target = as_dtype(output_type)
    if target.name not in ("int32", "int64"):
        raise errors.InvalidArgumentError(
            f"Value for attr 'output_type' of {target.name} is not in the list of allowed "
            "values: int32, int64", "ExtractJpegShape")
    data = _contents(contents, "extract_jpeg_shape")
    img = None
    if _format_of(data) == _JPEG:
        try:
            img = pil_image("extract_jpeg_shape").open(io.BytesIO(data))
        except Exception:  # noqa: BLE001 - reported below as TF reports it
            img = None
    if img is None:
        raise errors.InvalidArgumentError(f"Invalid JPEG data, size {len(data)}",
                                          "ExtractJpegShape")
    channels = {"L": 1, "RGB": 3, "YCbCr": 3, "CMYK": 4}.get(img.mode, len(img.getbands()))
    return _to_tensor(np.array([img.size[1], img.size[0], channels], dtype=target.name))
