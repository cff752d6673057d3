"""Memory statistics and controls for every device, with TensorFlow's and PyTorch's names.

Every device (the CPU included) has one pooling allocator (see ``docs/memory.md``). The same
numbers answer TF's ``tf.config.experimental.get_memory_info(device)`` and PyTorch's
``torch.cuda.memory_allocated()`` family, so the memory lesson can be followed on a laptop::

    gpuaccel.memory.memory_allocated('cpu')        # bytes in live allocations
    gpuaccel.memory.memory_reserved('/GPU:0')      # bytes the pool holds from the device
    print(gpuaccel.memory.memory_summary('cpu'))

``device`` may be a name ('/GPU:0', 'GPU:0', '/device:CPU:0', 'cuda:1', 'cpu'), a TF
``PhysicalDevice``/``LogicalDevice`` (anything with a ``.name``), a torch-style object with
``.type``/``.index``, an int (a GPU index, as in ``torch.cuda``) or None (the device of the
innermost ``gpuaccel.device`` scope, else GPU:0 when there is a GPU, else CPU:0).

Differences from the originals, on purpose: TF raises for the CPU in ``get_memory_info``; we
answer, since the CPU has a pool too. The PyTorch-named calls never start the runtime (they
return zeros before it starts, as ``torch.cuda`` does before CUDA is initialized); TF's calls
start it, as TF does.
"""
from collections import OrderedDict

from . import _C

__all__ = [
    "get_memory_info", "reset_memory_stats", "memory_allocated", "max_memory_allocated",
    "memory_reserved", "max_memory_reserved", "memory_stats", "memory_summary", "empty_cache",
    "reset_peak_memory_stats", "reset_accumulated_memory_stats", "set_gpu_memory_fraction",
    "get_gpu_memory_fraction", "caching_enabled",
]

_COUNTERS = ("allocated_bytes", "requested_bytes", "reserved_bytes", "allocation", "segment")
_METRICS = ("current", "peak", "allocated", "freed")


def _device_name(device):
    """The device argument as a name string for the core (None stays None)."""
    if device is None:
        return None
    if isinstance(device, bool):
        raise TypeError(f"device must be a device name, an index or a device object, got {device!r}")
    if isinstance(device, int):
        if device < 0:
            raise ValueError(f"Invalid device index {device}: it must be >= 0")
        return f"cuda:{device}"
    if isinstance(device, str):
        return device
    name = getattr(device, "name", None)
    if isinstance(name, str):
        return name
    device_type = getattr(device, "type", None)
    if isinstance(device_type, str):
        index = getattr(device, "index", None)
        return device_type if index is None else f"{device_type}:{int(index)}"
    raise TypeError(
        "device must be a name such as '/GPU:0', 'cuda:0' or 'cpu', a GPU index, a device "
        f"object with a .name, or None; got {device!r}")


def _raw_stats(device, initialize):
    return _C._memory_stats(_device_name(device), initialize)


# ---- TensorFlow: tf.config.experimental ----

def get_memory_info(device):
    """``{'current': bytes, 'peak': bytes}`` in use on a device (TF's get_memory_info).

    Counts bytes handed to live allocations (rounded chunk sizes), not what the pool holds from
    the device; that is ``memory_reserved``. Starts the runtime, as TF does.
    """
    raw = _raw_stats(device, True)
    return {"current": raw["allocated_bytes"]["current"], "peak": raw["allocated_bytes"]["peak"]}


def reset_memory_stats(device):
    """Sets the device's peak to its current usage (TF's reset_memory_stats)."""
    _C._memory_reset_peak(_device_name(device))


# ---- PyTorch: torch.cuda.memory_* ----

def memory_stats(device=None):
    """PyTorch's ``memory_stats``: an ordered dict of int counters, empty before the runtime starts.

    Keys as in PyTorch: ``"<stat>.all.<metric>"`` for stat in allocated_bytes, requested_bytes,
    reserved_bytes, active_bytes, allocation, segment, active and metric in current, peak,
    allocated, freed; ``inactive_split.all.current``, ``inactive_split_bytes.all.current``;
    ``num_alloc_retries``, ``num_ooms``, ``num_device_alloc``, ``num_device_free``,
    ``max_split_size``. There is one pool per device, so only the ``all`` pool is reported.
    gpuaccel adds ``memory_limit_bytes`` (0: none), ``largest_free_chunk_bytes``,
    ``free_chunks`` and ``fragmentation`` (a float: 1 - largest free chunk / free bytes).
    """
    raw = _raw_stats(device, False)
    if raw is None:
        return OrderedDict()
    out = {}
    for counter in _COUNTERS:
        for metric in _METRICS:
            out[f"{counter}.all.{metric}"] = int(raw[counter][metric])
    for metric in _METRICS:
        # Nothing waits on streams before reuse here, so active == allocated.
        out[f"active.all.{metric}"] = out[f"allocation.all.{metric}"]
        out[f"active_bytes.all.{metric}"] = out[f"allocated_bytes.all.{metric}"]
    out["inactive_split.all.current"] = int(raw["inactive_split"])
    out["inactive_split_bytes.all.current"] = int(raw["inactive_split_bytes"])
    for key in ("num_alloc_retries", "num_ooms", "num_device_alloc", "num_device_free"):
        out[key] = int(raw[key])
    out["max_split_size"] = -1  # every chunk may be split
    out["memory_limit_bytes"] = int(raw["limit_bytes"] or 0)
    out["largest_free_chunk_bytes"] = int(raw["largest_free_chunk"])
    out["free_chunks"] = int(raw["free_chunks"])
    out["fragmentation"] = float(raw["fragmentation"])
    return OrderedDict(sorted(out.items()))


def _get(device, counter, metric):
    raw = _raw_stats(device, False)
    return 0 if raw is None else int(raw[counter][metric])


def memory_allocated(device=None):
    """Bytes in live allocations on the device (rounded chunk sizes)."""
    return _get(device, "allocated_bytes", "current")


def max_memory_allocated(device=None):
    """Peak of ``memory_allocated`` since the start or the last peak reset."""
    return _get(device, "allocated_bytes", "peak")


def memory_reserved(device=None):
    """Bytes the device's pool holds from the device (in use plus cached)."""
    return _get(device, "reserved_bytes", "current")


def max_memory_reserved(device=None):
    """Peak of ``memory_reserved``."""
    return _get(device, "reserved_bytes", "peak")


def reset_peak_memory_stats(device=None):
    """Peaks become the current values."""
    name = _device_name(device)  # validated even before the runtime starts
    if _C.is_initialized():
        _C._memory_reset_peak(name)


def reset_accumulated_memory_stats(device=None):
    """The cumulative counters (totals allocated and freed, OOMs, retries) return to zero."""
    name = _device_name(device)
    if _C.is_initialized():
        _C._memory_reset_accumulated(name)


def empty_cache(device=None):
    """Gives regions with nothing in use back to the device (all devices when None).

    Memory in use is never returned. Afterwards ``memory_reserved`` drops and other processes
    (another notebook) can use the memory; the next allocations grow the pool again.
    """
    if _C.is_initialized():
        _C._memory_empty_cache(_device_name(device))


def _fmt(nbytes):
    value = float(nbytes)
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if abs(value) < 1024 or unit == "TiB":
            return f"{int(value)} {unit}" if unit == "B" else f"{value:.2f} {unit}"
        value /= 1024


def _count(n, noun):
    return f"{n} {noun}" + ("" if n == 1 else "s")


def memory_summary(device=None, abbreviated=False):
    """A readable table of the device's allocator stats (PyTorch's ``memory_summary``)."""
    raw = _raw_stats(device, False)
    width = 77
    rule, double = "|" + "-" * (width - 2) + "|", "|" + "=" * (width - 2) + "|"

    def line(text):
        return "| " + text.ljust(width - 4) + " |"

    if raw is None:
        return "\n".join([double, line("gpuaccel memory summary"), rule,
                          line("The runtime has not started: nothing is allocated yet."), double])
    limit = raw["limit_bytes"]
    lines = [
        double,
        line(f"gpuaccel memory summary, device {raw['device']}"),
        line(f"pool {raw['pool']} ({'caching' if raw['caching'] else 'no caching: GPUACCEL_NO_CACHING=1'})"
             + ("" if raw["created"] else ", not used yet")),
        line(f"limit: {_fmt(limit) if limit else 'none'}   OOMs: {raw['num_ooms']}   "
             f"retries after releasing cache: {raw['num_alloc_retries']}"),
        double,
        line(f"{'Metric':<22}|{'Cur Usage':>11} |{'Peak Usage':>11} |{'Tot Alloc':>11} |"
             f"{'Tot Freed':>11}"),
        rule,
    ]
    rows = [("Allocated memory", "allocated_bytes", True), ("Requested memory", "requested_bytes", True),
            ("Reserved memory", "reserved_bytes", True), ("Allocations", "allocation", False),
            ("Regions (segments)", "segment", False)]
    if abbreviated:
        rows = rows[:1] + rows[2:3]
    for title, key, is_bytes in rows:
        c = raw[key]
        cells = [(_fmt(c[m]) if is_bytes else str(c[m])) for m in _METRICS]
        lines.append(line(f"{title:<22}|{cells[0]:>11} |{cells[1]:>11} |{cells[2]:>11} |{cells[3]:>11}"))
    lines += [
        rule,
        line(f"free in pool: {_fmt(raw['free_bytes'])} in {_count(raw['free_chunks'], 'chunk')}"),
        line(f"largest free chunk: {_fmt(raw['largest_free_chunk'])}; "
             f"fragmentation: {100 * raw['fragmentation']:.1f}%"),
        line(f"not releasable by empty_cache(): {_fmt(raw['inactive_split_bytes'])} in "
             f"{_count(raw['inactive_split'], 'chunk')}"),
        double,
    ]
    return "\n".join(lines)


# ---- gpuaccel's own knobs ----

def set_gpu_memory_fraction(fraction):
    """Share of a GPU's free memory that a preallocating pool takes (default 0.9; also
    ``GPUACCEL_GPU_MEMORY_FRACTION``). Applies to pools created afterwards."""
    _C._memory_set_gpu_memory_fraction(float(fraction))


def get_gpu_memory_fraction():
    return _C._memory_gpu_memory_fraction()


def caching_enabled():
    """False when ``GPUACCEL_NO_CACHING=1``: every allocation then goes to the device."""
    return _C._memory_caching_enabled()
