"""Keyed streams of gpuaccel's one counter-based generator: a draw from a stream of its own
(``tf.random``'s stateless functions and Generators, ``torch.Generator``) swaps the C++
generator's (key, offset) in around the draw and restores the global stream after, so such a
draw never moves the stream that ``set_seed``/``torch.manual_seed`` seeded."""
import contextlib

from . import _C

_MASK64 = (1 << 64) - 1


@contextlib.contextmanager
def keyed_stream(key, offset=0):
    """Draws inside come from the stream (key, offset); yields a callable giving the offset
    reached. The global stream is restored afterwards."""
    saved = (_C.random_seed(), _C.random_offset())
    _C.set_random_state(int(key) & _MASK64, int(offset))
    try:
        yield _C.random_offset
    finally:
        _C.set_random_state(*saved)
