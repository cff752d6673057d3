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
