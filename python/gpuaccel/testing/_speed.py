"""Wall-clock time of a training epoch, and the speedup check a homework is graded on.

The course reports speedups in wall-clock time per epoch (class 171: ">= 1.5x with mixed
precision"), so these helpers time whole ``fit`` epochs, with the device synchronized, rather
than single ops. They work for gpuaccel and real Keras models alike: anything with ``fit``.
"""
from __future__ import annotations

import math
import statistics
import time
from dataclasses import dataclass

__all__ = ["EpochTiming", "measure_epoch", "assert_speedup"]


def _positive_int(name, value, minimum):
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}, got {value!r}")
    return value


def _positive_seconds(name, value):
    if isinstance(value, EpochTiming):
        value = value.seconds
    if isinstance(value, bool) or not isinstance(value, (int, float)) or \
            not math.isfinite(value) or value <= 0:
        raise ValueError(f"{name} must be a positive, finite number of seconds, got {value!r}")
    return float(value)


@dataclass
class EpochTiming:
    """Seconds per timed epoch; ``seconds`` is their median (robust to one disturbed epoch)."""

    per_epoch: list

    @property
    def seconds(self) -> float:
        return statistics.median(self.per_epoch)

    def __float__(self):
        return self.seconds

    def __str__(self):
        return (f"{self.seconds:.3f} s per epoch (median of {len(self.per_epoch)}: "
                + ", ".join(f"{s:.3f}" for s in self.per_epoch) + ")")


def _synchronize(model):
    """Waits for a gpuaccel model's device work (a Keras model's fit returns synchronized)."""
    if type(model).__module__.startswith("gpuaccel."):
        from .. import cuda
        if cuda.is_available():
            cuda.synchronize()


def measure_epoch(model, data, *, epochs=1, warmup_epochs=0, **fit_kwargs) -> EpochTiming:
    """Trains ``model`` (compiled) for ``warmup_epochs`` untimed epochs, then ``epochs`` timed
    ones, one ``fit(..., epochs=1)`` call each; returns their wall-clock times.

    ``data`` is what ``fit`` takes first: a Dataset (or other iterable of batches), an array of
    inputs (pass ``y=`` in ``fit_kwargs``) or an ``(x, y)`` tuple. ``fit_kwargs`` go to every
    ``fit`` call (``batch_size``, ``callbacks``, ...); ``verbose`` defaults to 0. A warm-up epoch
    keeps one-off costs (kernel selection, memory-pool growth) out of the numbers; without one,
    the first epoch includes them, as a student's first ``fit`` does.
    """
    _positive_int("epochs", epochs, 1)
    _positive_int("warmup_epochs", warmup_epochs, 0)
    if not callable(getattr(model, "fit", None)):
        raise TypeError(f"model must have a fit method (a compiled Keras-style model), got "
                        f"{type(model).__name__}")
    if "epochs" in fit_kwargs or "initial_epoch" in fit_kwargs:
        raise ValueError("measure_epoch runs one epoch per fit call: pass epochs= and "
                         "warmup_epochs= to measure_epoch, not to fit")
    fit_kwargs.setdefault("verbose", 0)
    if isinstance(data, tuple):
        if len(data) != 2 or "y" in fit_kwargs:
            raise ValueError("data as a tuple must be (x, y), with no separate y=; got a tuple "
                             f"of {len(data)} items" + (" and y=" if "y" in fit_kwargs else ""))
        fit_kwargs["y"] = data[1]
        data = data[0]

    def one_epoch():
        model.fit(data, epochs=1, **fit_kwargs)
        _synchronize(model)

    for _ in range(warmup_epochs):
        one_epoch()
    per_epoch = []
    for _ in range(epochs):
        start = time.perf_counter()
        one_epoch()
        per_epoch.append(time.perf_counter() - start)
    return EpochTiming(per_epoch)


def assert_speedup(baseline_seconds, optimized_seconds, at_least=1.5) -> float:
    """Asserts ``baseline_seconds / optimized_seconds >= at_least``; returns the speedup.

    Times may be floats or :class:`EpochTiming`. The assertion message gives both times, the
    speedup and how much faster the optimized run would have to be.
    """
    baseline = _positive_seconds("baseline_seconds", baseline_seconds)
    optimized = _positive_seconds("optimized_seconds", optimized_seconds)
    if isinstance(at_least, bool) or not isinstance(at_least, (int, float)) or \
            not math.isfinite(at_least) or at_least <= 0:
        raise ValueError(f"at_least must be a positive, finite ratio, got {at_least!r}")
    speedup = baseline / optimized
    if speedup < at_least:
        raise AssertionError(
            f"speedup {speedup:.2f}x is below the required {at_least:g}x: baseline "
            f"{baseline:.3f} s, optimized {optimized:.3f} s; the optimized run must take at "
            f"most {baseline / at_least:.3f} s")
    return speedup
