"""OpenMP's wait policy, chosen for machines whose cores are shared.

GNU OpenMP (the runtime oneDNN and our CPU loops run on) lets an idle thread spin at each
barrier for about 300,000 iterations before it sleeps. On a 2-core machine with other work on
it (a notebook server, a second process, our own prefetch thread), a spinning thread burns the
core its descheduled sibling needs, and every parallel region waits for that sibling: the
course CNN's step was measured 6-8x slower than with short spins (docs/benchmarks.md, "Shared
cores"). Unless the user chose a policy, gpuaccel shortens the spin to ``SPIN_COUNT`` iterations
(tens of microseconds), which keeps barriers fast on an idle machine and yields the core soon
on a busy one.

libgomp reads its environment once, when it is loaded, which is when ``gpuaccel._C`` is
imported: this runs just before that. If another library loaded OpenMP first (torch, say), the
process keeps that library's settings.
"""
import os

# The variables through which a user (or a launcher) states a policy; any of them disables ours.
USER_KNOBS = ("OMP_WAIT_POLICY", "GOMP_SPINCOUNT")
SPIN_COUNT = "1000"

applied = False  # whether this process runs with gpuaccel's default (gpuaccel.info reports it)


def apply_default_wait_policy(environ=os.environ):
    """Sets ``GOMP_SPINCOUNT`` unless the user set a wait policy; returns whether it did."""
    global applied
    if any(name in environ for name in USER_KNOBS):
        return False
    environ["GOMP_SPINCOUNT"] = SPIN_COUNT
    applied = True
    return True
