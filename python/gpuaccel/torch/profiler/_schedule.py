"""``torch.profiler.schedule``: which steps of a loop ``prof.step()`` drives are recorded.

A training loop is profiled for a few steps, not all of them: the schedule maps each step number
to an action, and the profiler (``_profile.py``) turns each change of action into starting or
stopping the recorder and handing a finished cycle to ``on_trace_ready``. PyTorch's rule: the
first ``skip_first`` steps do nothing, then cycles of ``wait`` idle steps, ``warmup`` steps and
``active`` recorded steps repeat ``repeat`` times (0: forever); the last active step of a cycle
is RECORD_AND_SAVE, which is where the cycle's trace is handed over.
"""
import enum
import warnings

__all__ = ["ProfilerAction", "schedule", "record_every_step"]


class ProfilerAction(enum.Enum):
    """What the profiler does during one step (PyTorch's values)."""

    NONE = 0
    WARMUP = 1
    RECORD = 2
    RECORD_AND_SAVE = 3


def _non_negative_int(name, value, minimum=0):
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise ValueError(f"schedule's {name} must be an integer >= {minimum}, got {value!r}")
    return value


def schedule(*, wait, warmup, active, repeat=0, skip_first=0):
    """The step -> ProfilerAction function of PyTorch's ``torch.profiler.schedule``."""
    wait = _non_negative_int("wait", wait)
    warmup = _non_negative_int("warmup", warmup)
    active = _non_negative_int("active", active, minimum=1)
    repeat = _non_negative_int("repeat", repeat)
    skip_first = _non_negative_int("skip_first", skip_first)
    if warmup == 0:
        warnings.warn("Profiler won't be using warmup, this can skew profiler results")
    cycle = wait + warmup + active

    def action_of(step):
        if step < 0:
            raise ValueError(f"a profiler step number is >= 0, got {step}")
        if step < skip_first:
            return ProfilerAction.NONE
        step -= skip_first
        if repeat > 0 and step // cycle >= repeat:
            return ProfilerAction.NONE
        position = step % cycle
        if position < wait:
            return ProfilerAction.NONE
        if position < wait + warmup:
            return ProfilerAction.WARMUP
        return ProfilerAction.RECORD if position < cycle - 1 else ProfilerAction.RECORD_AND_SAVE

    return action_of


def record_every_step(step):
    """The schedule of a profiler given none: every step is recorded, one trace at the end."""
    return ProfilerAction.RECORD
