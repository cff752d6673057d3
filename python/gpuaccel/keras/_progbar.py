"""The text progress bar that ``fit``/``evaluate``/``predict`` draw (``keras.utils.Progbar``).

It exists apart from the callbacks because it is only about drawing: counting steps, timing
them, and formatting one Keras-style line::

      12/938 ━━━━━━━━━━━━━━━━━━━━ 5s 6ms/step - accuracy: 0.7100 - loss: 0.8300

Display modes, as in Keras:

* ``verbose=1`` in a terminal or a Jupyter kernel: the line is redrawn in place with ``\\r``,
  at most once per ``interval`` seconds (the last update always draws).
* ``verbose=1`` elsewhere (a pipe, a log file, pytest's capture): only the final line of each
  bar is printed, without colour codes. Keras 3 also treats every POSIX process as dynamic;
  we deliberately do not, so redirected logs hold one clean line per epoch.
* ``verbose=2``: one line when the bar finishes: ``938/938 - 5s - 6ms/step - loss: 0.83``.

The per-step cost matters (a tiny model's training step is ~50 us), so a throttled update does
no formatting: it records the step count and the latest values and returns. ``values`` may be
a dict, a list of ``(name, value)`` pairs, or a zero-argument callable returning either; a
callable is only called when a line is actually drawn.
"""
import math
import os
import sys
import time

from ._io_utils import print_msg

# The clock the bar reads; tests replace it to control elapsed times.
_clock = time.perf_counter

_BOLD = "\x1b[1m"
_GREEN = "\33[32m"
_GREY = "\33[37m"
_RESET = "\x1b[0m"
_BAR_CHAR = "\u2501"  # '━'


def is_dynamic_display():
    """Whether stdout redraws a line in place: a terminal, a Jupyter/Colab kernel, PyCharm."""
    stream = sys.stdout
    try:
        if stream is not None and stream.isatty():
            return True
    except (AttributeError, ValueError):  # no isatty, or a closed stream
        pass
    return "ipykernel" in sys.modules or "PYCHARM_HOSTED" in os.environ


def _write(text):
    """``text`` to stdout, or to logging while interactive logging is off (_io_utils.py)."""
    print_msg(text, line_break=False)


def format_duration_per_unit(seconds, unit_name):
    """``" 6ms/step"``: seconds below 1 shown in ms, below 1 ms in us (0 shows as ``0s``)."""
    if seconds >= 1 or seconds == 0:
        return f" {seconds:.0f}s/{unit_name}"
    if seconds >= 1e-3:
        return f" {seconds * 1e3:.0f}ms/{unit_name}"
    return f" {seconds * 1e6:.0f}us/{unit_name}"


def format_eta(seconds):
    """``"5s"``, ``"2:05"`` or ``"1:02:05"``."""
    if seconds > 3600:
        return "%d:%02d:%02d" % (seconds // 3600, (seconds % 3600) // 60, seconds % 60)
    if seconds > 60:
        return "%d:%02d" % (seconds // 60, seconds % 60)
    return "%ds" % seconds


def format_metric_value(value):
    """Four decimals, or scientific notation for magnitudes at or below 1e-3 (as Keras)."""
    try:
        value = float(value)
    except (TypeError, ValueError):
        return str(value)
    if abs(value) > 1e-3:
        return f"{value:.4f}"
    return f"{value:.4e}"


def _pairs(values):
    if values is None:
        return ()
    if callable(values):
        values = values()
        if values is None:
            return ()
    if isinstance(values, dict):
        return values.items()
    return values


class Progbar:
    """``keras.utils.Progbar(target, width=20, verbose=1, interval=0.05,
    stateful_metrics=None, stateless_metrics=None, unit_name='step')``.

    Stateless metrics are averaged over the steps seen (weighted by steps per update);
    stateful ones are shown as given. With neither argument every metric is stateless, as in
    Keras. ``dynamic`` (ours) forces the in-place display on (True) or off (False); None
    detects it from stdout.
    """

    def __init__(self, target, width=20, verbose=1, interval=0.05, stateful_metrics=None,
                 stateless_metrics=None, unit_name="step", dynamic=None):
        if stateful_metrics is not None and stateless_metrics is not None:
            raise ValueError(
                "Only one of `stateful_metrics` or `stateless_metrics` can be provided: the "
                "first names the metrics shown as-is (all others are averaged), the second "
                "the metrics averaged (all others are shown as-is).")
        self.target = target
        self.width = width
        self.verbose = verbose
        self.interval = interval
        self.unit_name = unit_name
        if stateful_metrics is not None:
            self.stateful_metrics = set(stateful_metrics)
            self.stateless_metrics = None
        elif stateless_metrics is not None:
            self.stateful_metrics = None
            self.stateless_metrics = set(stateless_metrics)
        else:
            self.stateful_metrics = set()
            self.stateless_metrics = None
        # Nothing to average: keep only the latest values, unparsed, until a line is drawn.
        self._all_stateful = self.stateless_metrics is not None and not self.stateless_metrics
        self._dynamic_display = is_dynamic_display() if dynamic is None else bool(dynamic)
        self._seen_so_far = 0
        self._values = {}        # name -> [sum, count] (stateless) or [value, 1] (stateful)
        self._values_order = []
        self._pending = None     # latest values not yet merged (all-stateful mode)
        self._start = _clock()
        self._last_update = -math.inf
        self._time_after_first_step = None
        self._prev_total_width = 0
        # Names are shown in order of first appearance; the callback logger asks for each
        # update's new names sorted, as Keras's logs arrive sorted.
        self._sort_new_names = False

    # -- bookkeeping ------------------------------------------------------------------------

    def _merge(self, values, current, finalize):
        new_names = []
        for name, value in _pairs(values):
            if name not in self._values:
                new_names.append(name)
            if self._all_stateful:
                stateless = False
            elif self.stateful_metrics is not None:
                stateless = name not in self.stateful_metrics
            else:
                stateless = name in self.stateless_metrics
            if not stateless:
                self._values[name] = [value, 1]
            elif finalize:
                # A final value (e.g. the epoch's logs) replaces the running average.
                self._values[name] = [value, 1]
            else:
                steps = max(current - self._seen_so_far, 1)
                entry = self._values.get(name)
                if entry is None:
                    self._values[name] = [value * steps, steps]
                else:
                    entry[0] += value * steps
                    entry[1] += steps
        if new_names:
            if self._sort_new_names:
                new_names.sort(key=str)
            self._values_order.extend(new_names)

    def _step_duration(self, current, now):
        """Seconds per step, ignoring the first (warm-up) step once there are more."""
        if not current:
            return 0.0
        if self._time_after_first_step is not None and current > 1:
            return (now - self._time_after_first_step) / (current - 1)
        return (now - self._start) / current

    # -- public -----------------------------------------------------------------------------

    def update(self, current, values=None, finalize=None):
        """Record that ``current`` steps are done, with metric ``values``; draw if due.

        ``finalize`` defaults to ``current >= target`` (never, when the target is unknown).
        """
        if finalize is None:
            finalize = self.target is not None and current >= self.target
        now = _clock()
        if current == 1 and self._time_after_first_step is None:
            self._time_after_first_step = now
        if self._all_stateful:
            if values is not None:
                self._pending = values
            self._seen_so_far = current
        else:
            self._merge(values, current, finalize)
            self._seen_so_far = current

        if self.verbose == 1:
            if not finalize and (not self._dynamic_display
                                 or now - self._last_update < self.interval):
                return
        elif self.verbose == 2:
            if not finalize:
                return
        else:
            return
        if self._pending is not None:
            self._merge(self._pending, current, finalize)
            self._pending = None
        self._last_update = now
        if self.verbose == 1:
            self._draw_verbose1(current, now, finalize)
        else:
            self._draw_verbose2(current, now)

    def add(self, n, values=None):
        """Advance by ``n`` steps."""
        self.update(self._seen_so_far + n, values)

    # -- drawing ----------------------------------------------------------------------------

    def _metrics_text(self):
        parts = []
        for name in self._values_order:
            value, count = self._values[name]
            try:
                shown = format_metric_value(float(value) / max(1, count))
            except (TypeError, ValueError):
                shown = str(value)
            parts.append(f" - {name}: {shown}")
        return "".join(parts)

    def _draw_verbose1(self, current, now, finalize):
        color = self._dynamic_display
        bold, green, grey, reset = (_BOLD, _GREEN, _GREY, _RESET) if color else ("",) * 4
        target = self.target
        if target is not None and target > 0:
            digits = int(math.log10(target)) + 1
            count = f"{current:{digits}d}/{target}"
            filled = min(max(int(self.width * current / target), 0), self.width)
            plain_bar = f"{count} " + _BAR_CHAR * self.width
            bar = f"{bold}{count}{reset} "
            if filled > 0:
                bar += f"{green}{_BAR_CHAR * filled}{reset}"
            bar += f"{grey}{_BAR_CHAR * (self.width - filled)}{reset}"
        else:
            plain_bar = bar = "%7d/Unknown" % current

        per_step = self._step_duration(current, now)
        if target is not None and target > 0 and not finalize:
            when = format_eta(per_step * (target - current))
        else:
            when = f"{now - self._start:.0f}s"
        info = f" {when}" + format_duration_per_unit(per_step, self.unit_name)
        info += self._metrics_text()
        line = bar + f" {bold}{when}{reset}" + info[len(when) + 1:]

        width = len(plain_bar) + len(info)
        if not self._dynamic_display:
            _write(line + "\n")
            return
        pad = " " * max(self._prev_total_width - width, 0)
        self._prev_total_width = width
        _write("\r" + line + pad + ("\n" if finalize else ""))

    def _draw_verbose2(self, current, now):
        target = self.target
        if target is None or target <= 0:
            return
        digits = int(math.log10(target)) + 1
        line = f"{current:{digits}d}/{target} - {now - self._start:.0f}s -"
        line += format_duration_per_unit(self._step_duration(current, now), self.unit_name)
        line += self._metrics_text()
        _write(line + "\n")
