"""``torch.Generator`` and the ``generator=`` argument of the PyTorch face's random functions.

PyTorch code seeds a private generator to make one stream repeatable without touching the
global one (``random_split(ds, [8, 2], generator=torch.Generator().manual_seed(42))``, a
DataLoader's shuffling). gpuaccel has one counter-based generator (Philox keyed by a seed,
indexed by an offset); a Generator here is its own (seed, offset) pair, swapped in around each
draw by ``_random_samplers.keyed_stream``, so

- a seeded Generator repeats its sequence, whatever ``torch.manual_seed`` did meanwhile, and its
  draws leave the global stream where it was;
- as in PyTorch, a Generator seeded with s draws what the global generator draws after
  ``torch.manual_seed(s)`` (both are the stream of key s from offset 0);
- its state is 16 bytes (seed and offset, the layout of ``torch.get_rng_state``), not PyTorch's
  5056-byte Mersenne-Twister state: states move between gpuaccel generators only.

The numbers are gpuaccel's, not PyTorch's (different algorithms); the rules above are PyTorch's.
"""
import contextlib
import numbers
import os

import numpy as np

from . import _C
from ._random_streams import _MASK64, keyed_stream

__all__ = ["Generator", "default_generator", "drawing_from"]

# What PyTorch seeds a new Generator with (c10's default_rng_seed_val).
DEFAULT_SEED = 67280421310721
_STATE_BYTES = 16


def _checked_seed(seed):
    """PyTorch's rule: any int that fits 64 bits, negatives as their two's complement."""
    if isinstance(seed, bool) or not isinstance(seed, numbers.Integral):
        raise RuntimeError(f"manual_seed expected a long, but got {type(seed).__name__}")
    if not -2 ** 63 <= seed < 2 ** 64:
        raise RuntimeError(f"Overflow when unpacking long: manual_seed needs a seed that fits "
                           f"64 bits, got {seed}")
    return int(seed) & _MASK64


def _entropy_seed():
    return int.from_bytes(os.urandom(7), "little")


def state_tensor(seed, offset):
    """A generator state as PyTorch hands one out: a uint8 tensor (here seed and offset)."""
    from ._tensor import tensor
    return tensor(np.array([seed, offset], np.uint64).view(np.uint8), dtype="uint8")


def seed_and_offset(new_state):
    """The (seed, offset) of a state made by ``state_tensor``, with PyTorch's TypeError for
    anything but a uint8 tensor."""
    from ._tensor import Tensor
    if not isinstance(new_state, Tensor):
        raise TypeError(f"expected a torch.ByteTensor, but got {type(new_state).__name__}")
    if new_state.dtype.name != "uint8":
        raise TypeError(f"RNG state must be a torch.ByteTensor (uint8), got "
                        f"{new_state.dtype.name}")
    values = np.ascontiguousarray(new_state.numpy().reshape(-1))
    if values.size != _STATE_BYTES:
        raise RuntimeError(f"RNG state is wrong size: gpuaccel's generator state is "
                           f"{_STATE_BYTES} bytes (seed and offset, from get_state or "
                           f"torch.get_rng_state), got {values.size}")
    seed, offset = values.view(np.uint64)
    return int(seed), int(offset)


def _generator_device(device):
    from ._placement import device as as_device
    place = as_device(device if device is not None else "cpu")
    if place.type == "cuda":
        from ._cuda_devices import is_available
        if not is_available():
            raise RuntimeError("Device type CUDA is not supported for torch.Generator() api: "
                               "no CUDA GPU is available")
    return place


class Generator:
    """``torch.Generator(device='cpu')``: a random stream of its own (see the module doc).

    gpuaccel draws the same numbers on every device, so a 'cuda' Generator (allowed where a GPU
    is) is the same kind of stream as a 'cpu' one."""

    def __init__(self, device="cpu"):
        self.device = _generator_device(device)
        self._seed, self._offset = DEFAULT_SEED, 0

    def manual_seed(self, seed):
        """Restarts the stream from ``seed``; returns the Generator (as PyTorch's)."""
        self._seed, self._offset = _checked_seed(seed), 0
        return self

    def seed(self):
        """Seeds from the operating system's entropy and returns the seed."""
        return self.manual_seed(_entropy_seed()).initial_seed()

    def initial_seed(self):
        return self._seed

    def get_state(self):
        """A uint8 tensor for ``set_state`` (16 bytes: seed and offset)."""
        return state_tensor(self._seed, self._offset)

    def set_state(self, new_state):
        self._seed, self._offset = seed_and_offset(new_state)
        return self

    @contextlib.contextmanager
    def _stream(self):
        with keyed_stream(self._seed, self._offset) as reached:
            yield
            self._offset = reached()

    def __repr__(self):
        return f"<torch.Generator device='{self.device}' initial_seed={self.initial_seed()}>"


class _DefaultGenerator(Generator):
    """``torch.default_generator``: the global stream that ``torch.manual_seed`` seeds, as a
    Generator object."""

    def __init__(self):
        self.device = _generator_device("cpu")

    def manual_seed(self, seed):
        _C.set_random_seed(_checked_seed(seed))
        return self

    def initial_seed(self):
        return int(_C.random_seed())

    def get_state(self):
        return state_tensor(int(_C.random_seed()), int(_C.random_offset()))

    def set_state(self, new_state):
        _C.set_random_state(*seed_and_offset(new_state))
        return self

    @contextlib.contextmanager
    def _stream(self):
        yield


default_generator = _DefaultGenerator()


def drawing_from(generator, op):
    """The context in which ``op``'s draws come from ``generator`` (None: the global stream),
    with a typed error for anything but a Generator."""
    if generator is None:
        return contextlib.nullcontext()
    if not isinstance(generator, Generator):
        raise TypeError(f"{op}(): argument 'generator' must be torch.Generator, not "
                        f"{type(generator).__name__}")
    return generator._stream()
