"""Keras's interactive-logging switch (``keras.utils.enable_interactive_logging``,
``disable_interactive_logging``, ``is_interactive_logging_enabled``) and the one function the
Keras face prints its messages through.

Why a switch: on a server or in a batch job, progress bars and "Epoch 3/10" lines belong in the
log, not on stdout. As in Keras 3, while interactive logging is off the progress bars, the
callbacks' messages, ``get_file``'s, the directory datasets' and ``model.summary()``'s text go to
logging at INFO level (the "gpuaccel" logger; Keras's go to absl's) instead of stdout. The
setting is per thread and ``clear_session()`` turns it back on, as Keras's global state does.
"""
import logging
import sys
import threading

__all__ = ["enable_interactive_logging", "disable_interactive_logging",
           "is_interactive_logging_enabled", "print_msg", "reset"]

_log = logging.getLogger("gpuaccel")


class _State(threading.local):
    def __init__(self):
        super().__init__()
        self.interactive = True


_state = _State()


def enable_interactive_logging():
    """Messages go to stdout (the default)."""
    _state.interactive = True


def disable_interactive_logging():
    """Messages go to logging (INFO, the "gpuaccel" logger) instead of stdout."""
    _state.interactive = False


def is_interactive_logging_enabled():
    """Whether messages go to stdout."""
    return _state.interactive


def reset():
    """Interactive logging on again (``clear_session``)."""
    _state.interactive = True


def print_msg(message, line_break=True):
    """``message`` to stdout while interactive logging is on, else to logging."""
    message = str(message)
    if not _state.interactive:
        _log.info(message)
        return
    stream = sys.stdout
    if stream is None:
        return
    text = message + "\n" if line_break else message
    try:
        stream.write(text)
    except UnicodeEncodeError:
        # A stream that cannot encode a glyph (the bar's '━' on a latin-1 log file).
        encoding = getattr(stream, "encoding", None) or "ascii"
        stream.write(text.replace("\u2501", "=").encode(encoding, "replace").decode(encoding))
    stream.flush()
