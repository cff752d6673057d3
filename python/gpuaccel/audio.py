"""``tf.audio``: 16-bit PCM WAV files to and from float32 tensors.

Why through Python's ``wave`` module: TF's DecodeWav/EncodeWav kernels parse the RIFF header
and convert samples on the host; ``wave`` parses the same header, and the sample conversions
are TF's (decode: int16 / 32768; encode: round(x * 32768) clipped to int16), so the numbers and
the bytes are TF's. Encoded audio is a ``HostString`` (bytes), as TF's scalar string tensor.
"""
import collections
import io
import wave

import numpy as np

from . import errors
from ._host_strings import HostString, to_bytes
from ._tensor import Tensor, tensor as _to_tensor

__all__ = ["decode_wav", "encode_wav"]

DecodeWav = collections.namedtuple("DecodeWav", ["audio", "sample_rate"])

_INT16_SCALE = 32768.0


def _samples(data):
    """(int16 samples (frames, channels), sample rate) of a 16-bit PCM WAV."""
    if not data.startswith(b"RIFF"):
        raise errors.InvalidArgumentError(
            f"Header mismatch: Expected RIFF but found {data[:4].decode('latin-1')!r}",
            "DecodeWav")
    try:
        with wave.open(io.BytesIO(data), "rb") as reader:
            channels, width, rate = (reader.getnchannels(), reader.getsampwidth(),
                                     reader.getframerate())
            frames = reader.readframes(reader.getnframes())
    except (wave.Error, EOFError) as error:
        raise errors.InvalidArgumentError(f"Bad WAV file ({len(data)} bytes): {error}",
                                          "DecodeWav") from None
    if width != 2:
        raise errors.InvalidArgumentError(
            f"Can only read 16-bit WAV files, but received {8 * width}", "DecodeWav")
    samples = np.frombuffer(frames, dtype="<i2")
    return samples.reshape(-1, channels), rate


def decode_wav(contents, desired_channels=-1, desired_samples=-1, name=None):
    """``tf.audio.decode_wav``: (audio float32 (samples, channels) in [-1, 1), sample_rate int32
    scalar). ``desired_channels`` keeps the first channels or repeats the last one;
    ``desired_samples`` cuts or pads with zeros; -1 keeps the file's."""
    if isinstance(contents, Tensor):
        raise TypeError("decode_wav: contents must be the file's bytes (e.g. from "
                        "tf.io.read_file), got a numeric Tensor (gpuaccel has no string tensors)")
    samples, rate = _samples(to_bytes(contents, "decode_wav: contents"))
    channels = samples.shape[1]
    if desired_channels not in (-1, None) and desired_channels != channels:
        if desired_channels < 1:
            raise errors.InvalidArgumentError(
                f"desired_channels must be -1 or positive, got {desired_channels}", "DecodeWav")
        samples = samples[:, np.minimum(np.arange(desired_channels), channels - 1)]
    if desired_samples not in (-1, None):
        if desired_samples < 0:
            raise errors.InvalidArgumentError(
                f"desired_samples must be -1 or non-negative, got {desired_samples}", "DecodeWav")
        padded = np.zeros((desired_samples, samples.shape[1]), samples.dtype)
        kept = min(desired_samples, len(samples))
        padded[:kept] = samples[:kept]
        samples = padded
    audio = (samples.astype(np.float32) / np.float32(_INT16_SCALE)).astype(np.float32)
    return DecodeWav(_to_tensor(audio), _to_tensor(np.int32(rate)))


def encode_wav(audio, sample_rate, name=None):
    """``tf.audio.encode_wav``: float32 (samples, channels) audio as 16-bit PCM WAV bytes (a
    HostString); values outside [-1, 1] are clipped."""
    array = audio.numpy() if isinstance(audio, Tensor) else np.asarray(audio, np.float32)
    if array.ndim != 2:
        raise errors.InvalidArgumentError(
            f"audio must be 2-dimensional (samples, channels), got shape {list(array.shape)}",
            "EncodeWav")
    rate = int(sample_rate.numpy() if isinstance(sample_rate, Tensor) else sample_rate)
    if rate <= 0:
        raise errors.InvalidArgumentError(f"sample_rate must be positive, got {rate}",
                                          "EncodeWav")
    scaled = (array.astype(np.float32) * np.float32(_INT16_SCALE)).astype(np.float64)
    # C's roundf (halves away from zero), as TF's kernel; NumPy's round takes halves to even
    pcm = np.clip(np.sign(scaled) * np.floor(np.abs(scaled) + 0.5), -32768, 32767)
    buffer = io.BytesIO()
    with wave.open(buffer, "wb") as writer:
        writer.setnchannels(array.shape[1])
        writer.setsampwidth(2)
        writer.setframerate(rate)
        writer.writeframes(pcm.astype("<i2").tobytes())
    return HostString(buffer.getvalue())
