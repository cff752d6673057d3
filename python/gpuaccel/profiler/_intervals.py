"""Interval-set arithmetic for the step-time analysis.

Profiler events nest (a layer holds ops, an op holds a copy) and overlap across streams, so
adding up durations counts the same nanosecond several times. The analysis instead works on
*sets* of time: each set is a sorted array of disjoint ``[start, end)`` intervals (shape
``(k, 2)``, int64 ns) and the operations below (union, intersection, difference, total
length) keep that form.
"""
from __future__ import annotations

import numpy as np

__all__ = ["EMPTY", "union", "merge", "intersect", "subtract", "clip", "total"]

EMPTY = np.zeros((0, 2), dtype=np.int64)


def union(starts, ends) -> np.ndarray:
    """The union of the intervals ``[starts[i], ends[i])`` as a canonical interval set."""
    s = np.asarray(starts, dtype=np.int64).ravel()
    e = np.asarray(ends, dtype=np.int64).ravel()
    keep = e > s
    s, e = s[keep], e[keep]
    if s.size == 0:
        return EMPTY.copy()
    order = np.argsort(s, kind="stable")
    s, e = s[order], e[order]
    reach = np.maximum.accumulate(e)
    # A new run starts where an interval begins after everything before it has ended.
    new_run = np.ones(s.size, dtype=bool)
    new_run[1:] = s[1:] > reach[:-1]
    run_id = np.cumsum(new_run) - 1
    out_s = s[new_run]
    out_e = np.zeros(out_s.size, dtype=np.int64)
    np.maximum.at(out_e, run_id, e)
    return np.stack([out_s, out_e], axis=1)


def merge(*sets: np.ndarray) -> np.ndarray:
    """The union of several interval sets."""
    parts = [x for x in sets if len(x)]
    if not parts:
        return EMPTY.copy()
    both = np.concatenate(parts)
    return union(both[:, 0], both[:, 1])


def clip(a: np.ndarray, lo: int, hi: int) -> np.ndarray:
    """``a`` restricted to the window ``[lo, hi)``."""
    if not len(a):
        return EMPTY.copy()
    # a is sorted and disjoint, so both columns are increasing: slice before clipping.
    first = int(np.searchsorted(a[:, 1], lo, side="right"))
    last = int(np.searchsorted(a[:, 0], hi, side="left"))
    a = a[first:last]
    s = np.maximum(a[:, 0], lo)
    e = np.minimum(a[:, 1], hi)
    keep = e > s
    return np.stack([s[keep], e[keep]], axis=1)


def intersect(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """The time in both ``a`` and ``b``."""
    if not len(a) or not len(b):
        return EMPTY.copy()
    out = []
    i = j = 0
    while i < len(a) and j < len(b):
        lo = max(a[i, 0], b[j, 0])
        hi = min(a[i, 1], b[j, 1])
        if hi > lo:
            out.append((lo, hi))
        if a[i, 1] < b[j, 1]:
            i += 1
        else:
            j += 1
    return np.asarray(out, dtype=np.int64).reshape(-1, 2)


def subtract(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """The time in ``a`` but not in ``b``."""
    if not len(a) or not len(b):
        return a.copy()
    out = []
    j = 0
    for lo, hi in a:
        cur = lo
        while j < len(b) and b[j, 1] <= cur:
            j += 1
        k = j
        while k < len(b) and b[k, 0] < hi:
            if b[k, 0] > cur:
                out.append((cur, b[k, 0]))
            cur = max(cur, b[k, 1])
            if cur >= hi:
                break
            k += 1
        if cur < hi:
            out.append((cur, hi))
    return np.asarray(out, dtype=np.int64).reshape(-1, 2)


def total(a: np.ndarray) -> int:
    """The length of an interval set, in its unit (ns)."""
    return int((a[:, 1] - a[:, 0]).sum()) if len(a) else 0
