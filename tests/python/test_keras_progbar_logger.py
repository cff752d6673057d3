"""``keras.callbacks.ProgbarLogger`` against Keras's: both are driven through the same hooks
(training epochs with known and unknown step counts, a stand-alone evaluate and predict) with
the same logs, and what each leaves on the screen must be the same text.

Keras draws in place on every POSIX process (``\\r``, backspaces, colour codes); gpuaccel prints
only each bar's final line when stdout is not a terminal (docs in keras/_progbar.py). So Keras's
output is first rendered as a terminal would show it, colour codes dropped; durations (``0s``,
``12us/step``) are the only other difference and are replaced by ``T``. Logs are given with
sorted names, as ``fit`` produces them."""
import contextlib
import io
import re

import pytest

from gpuaccel import keras as gk

keras = pytest.importorskip("keras")


def _screen(text):
    """What a terminal shows after ``text``: carriage returns and backspaces applied, ANSI
    colour codes removed, trailing blanks stripped."""
    text = re.sub("\x1b\\[[0-9;]*m", "", text)
    lines, line, cursor = [], [], 0
    for char in text:
        if char == "\n":
            lines.append("".join(line).rstrip())
            line, cursor = [], 0
        elif char == "\r":
            cursor = 0
        elif char == "\b":
            cursor = max(cursor - 1, 0)
        else:
            line[cursor:cursor + 1] = [char]
            cursor += 1
    if line:
        lines.append("".join(line).rstrip())
    return "\n".join(lines)


def _untimed(text):
    return re.sub(r"\b\d+(\.\d+)?(us|ms|s)\b", "T", text)


def _drive(callbacks, verbose, steps, epochs=2):
    """The screen after a 2-epoch training run, then an evaluate and a predict, through the
    hooks."""
    logger = callbacks.ProgbarLogger()
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        logger.set_params({"verbose": verbose, "epochs": epochs, "steps": steps})
        logger.on_train_begin()
        for epoch in range(epochs):
            logger.on_epoch_begin(epoch)
            for batch in range(3):
                logger.on_train_batch_begin(batch)
                logger.on_train_batch_end(batch, {"accuracy": 0.25 * batch,
                                                  "loss": 0.5 / (batch + 1 + epoch)})
            logger.on_epoch_end(epoch, {"accuracy": 0.5, "loss": 0.25 + epoch,
                                        "val_accuracy": 0.75, "val_loss": 1.5})
        logger.on_train_end()
        logger = callbacks.ProgbarLogger()  # evaluate and predict make their own, as Keras's
        logger.set_params({"verbose": verbose, "epochs": 1, "steps": steps})
        logger.on_test_begin()
        for batch in range(2):
            logger.on_test_batch_begin(batch)
            logger.on_test_batch_end(batch, {"loss": 2.0 + batch})
        logger.on_test_end({"loss": 2.5})
        logger.on_predict_begin()
        for batch in range(2):
            logger.on_predict_batch_begin(batch)
            logger.on_predict_batch_end(batch, {"outputs": None})
        logger.on_predict_end()
    return _untimed(_screen(out.getvalue()))


@pytest.mark.parametrize("verbose,steps", [(1, 3), (2, 3), (1, None), (2, None)])
def test_progbar_logger_prints_what_kerass_leaves_on_screen(verbose, steps):
    ours = _drive(gk.callbacks, verbose, steps)
    theirs = _drive(keras.callbacks, verbose, steps)
    assert ours == theirs
    assert "Epoch 2/2" in ours and "loss: 1.2500" in ours  # the drive reached the screen


def test_progbar_logger_is_silent_at_verbose_0():
    assert _drive(gk.callbacks, 0, 3) == _drive(keras.callbacks, 0, 3) == ""
