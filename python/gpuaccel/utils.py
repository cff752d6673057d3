"""Small tools for the course notebooks.

``smi()`` prints an nvidia-smi-like table of the machine's NVIDIA GPUs (name, temperature, power,
memory, utilization) read through NVML, which gpuaccel loads at run time; on a machine without
an NVIDIA driver it says so and why, instead of failing.
"""
import sys

from . import _C

__all__ = ["smi", "format_smi"]


def _mib(value):
    return "N/A" if value is None else f"{value // 2**20}MiB"


def _text(value, fmt):
    return "N/A" if value is None else fmt.format(value)


def format_smi(report):
    """Renders a report from ``_C.nvml_report()`` as a table (separate so it can be tested)."""
    if not report["available"] or not report["gpus"]:
        return f"No NVIDIA GPU to show: {report['reason']}"
    cuda = report["cuda_driver_version"]
    cuda_text = _C.cuda_version_string(cuda) if cuda else "N/A"
    columns = [("GPU", 3), ("Name", 24), ("Temp", 5), ("Pwr:Usage/Cap", 15),
               ("Memory-Usage", 21), ("GPU-Util", 8)]
    rule = "+" + "+".join("-" * (width + 2) for _, width in columns) + "+"

    def row(cells):
        return "|" + "|".join(f" {str(c)[:w]:<{w}} " if i == 1 else f" {str(c)[:w]:>{w}} "
                              for i, (c, (_, w)) in enumerate(zip(cells, columns))) + "|"

    lines = [f"gpuaccel smi (NVML)   Driver Version: {report['driver_version'] or 'N/A'}   "
             f"CUDA Version: {cuda_text}", rule, row([name for name, _ in columns]), rule]
    for g in report["gpus"]:
        if g["error"]:
            lines.append(row([g["index"], g["name"] or "?", "", "", g["error"], ""]))
            continue
        power = (f"{_text(g['power_draw_w'], '{:.0f}W')} / {_text(g['power_limit_w'], '{:.0f}W')}")
        memory = f"{_mib(g['memory_used_bytes'])} / {_mib(g['memory_total_bytes'])}"
        lines.append(row([g["index"], g["name"], _text(g["temperature_c"], "{}C"), power, memory,
                          _text(g["gpu_utilization_pct"], "{}%")]))
    lines.append(rule)
    return "\n".join(lines)


def smi(file=None):
    """Prints the GPU table (or why there is none) to ``file`` (default stdout); returns it."""
    text = format_smi(_C.nvml_report())
    print(text, file=file if file is not None else sys.stdout)
    return text


# ---- how big a model fits ----

_BYTES_PER_ELEMENT = {"float32": 4, "float16": 2, "bfloat16": 2, "int8": 1}


def estimate_max_params(memory_bytes=None, dtype="float16", training=False, optimizer="adam",
                        activation_fraction=0.0):
    """The course's rule of thumb: parameters that fit in ``memory_bytes`` at ``dtype``
    (2 bytes per parameter in float16).

    ``memory_bytes`` defaults to the first GPU's total memory (``ValueError`` without a GPU).
    The plain rule counts weights only. With ``training=True`` it also counts a float32 gradient
    and the optimizer's float32 state per parameter (Adam: 2 moments; SGD with momentum: 1;
    plain SGD: 0) and, under mixed precision, the float32 master weights; and
    ``activation_fraction`` reserves that share of memory for activations, which depend on the
    batch size and the model and are not estimated here. Returns an int.
    """
    if memory_bytes is None:
        from . import cuda
        if not cuda.is_available():
            raise ValueError("no GPU to read memory from; pass memory_bytes= (e.g. 16 * 2**30 "
                             "for a 16 GB T4)")
        memory_bytes = cuda.get_device_properties(0).total_memory
    if memory_bytes <= 0:
        raise ValueError(f"memory_bytes must be positive, got {memory_bytes}")
    name = str(dtype).replace("gpuaccel.", "")
    if name not in _BYTES_PER_ELEMENT:
        raise ValueError(f"dtype must be one of {sorted(_BYTES_PER_ELEMENT)}, got {dtype!r}")
    if not 0.0 <= activation_fraction < 1.0:
        raise ValueError("activation_fraction must be in [0, 1)")
    per_param = _BYTES_PER_ELEMENT[name]
    if training:
        optimizer_states = {"adam": 2, "adamw": 2, "rmsprop": 1, "sgd_momentum": 1, "sgd": 0}
        if optimizer not in optimizer_states:
            raise ValueError(f"optimizer must be one of {sorted(optimizer_states)}, got {optimizer!r}")
        per_param += 4  # gradient in float32
        per_param += 4 * optimizer_states[optimizer]
        if name != "float32":
            per_param += 4  # float32 master weights under mixed precision
    usable = memory_bytes * (1.0 - activation_fraction)
    return int(usable // per_param)
