"""``python -m gpuaccel.info``: what gpuaccel sees on this machine and, when a GPU is missing, why.

Prints versions (gpuaccel, CUDA runtime and driver, cuDNN, oneDNN), the CPU's instruction sets
(AVX-512, AVX512-BF16, AMX), the devices, and each known problem with a plain explanation and
its fix: no NVIDIA driver ("Could not find cuda drivers"), a driver older than the CUDA runtime,
a gpuaccel built without CUDA, CUDA libraries missing, GPUs hidden by ``set_visible_devices`` or
``CUDA_VISIBLE_DEVICES``. ``gpuaccel.cuda.diagnose()`` prints the same report. Building the
report never starts the runtime, so configuration calls still work afterwards.
"""
import platform
import sys

from . import _C
from . import version as _version

__all__ = ["problems", "report", "main"]

_ISA_LABELS = [("avx2", "AVX2"), ("fma", "FMA"), ("avx512f", "AVX-512F"),
               ("avx512_vnni", "AVX512-VNNI"), ("avx512_bf16", "AVX512-BF16"),
               ("avx512_fp16", "AVX512-FP16"), ("amx_tile", "AMX-TILE"),
               ("amx_bf16", "AMX-BF16"), ("amx_int8", "AMX-INT8")]


def _gpu_names(indices):
    return ", ".join(f"/physical_device:GPU:{i}" for i in indices)


def problems():
    """The known problems found now, as ``[{'kind': ..., 'explanation': ...}]`` (empty: none).

    ``kind`` is one of the CUDA backend's problem names (``no_driver``, ``driver_too_old``,
    ``not_built``, ``library_missing``, ``library_load_failed``, ``bad_library``, ``no_device``,
    ``hidden_by_cuda_visible_devices``, ``error``) or ``hidden_by_set_visible_devices``,
    ``cuda_visible_devices`` (set, limiting which GPUs are used), ``simulated_gpus`` and
    ``cudnn_older_than_build`` (a warning: the GPU works, cuDNN's operations may not).
    """
    found = []
    provider = _C.gpu_provider_kind()
    physical = [i for _t, i in _C.physical_devices("GPU")]
    visible = [i for _t, i in _C.visible_devices("GPU")]

    if provider == "simulated":
        found.append({"kind": "simulated_gpus", "explanation":
                      "The GPUs listed are simulated (a test set-up): they report properties but "
                      "cannot run anything. Fix: gpuaccel._C._reset_runtime_for_testing(None) "
                      "returns to the real devices."})
        if not physical:
            found.append({"kind": "no_device", "explanation": _C.gpu_unavailable_reason()})
    elif not physical:
        status = _C.cuda_backend_status()
        found.append({"kind": status["problem"] if status["problem"] != "none" else "error",
                      "explanation": _C.gpu_unavailable_reason()})

    hidden = [i for i in physical if i not in visible]
    if hidden:
        found.append({"kind": "hidden_by_set_visible_devices", "explanation":
                      f"{_gpu_names(hidden)} exist but are hidden by "
                      "gpuaccel.config.set_visible_devices, so no op runs there. Fix: call "
                      "gpuaccel.config.set_visible_devices(gpuaccel.config.list_physical_devices("
                      "'GPU'), 'GPU') before the first op (after it, restart Python)."})

    if provider == "cuda":
        cudnn_warning = _C.cuda_backend_status()["cudnn_warning"]
        if cudnn_warning:
            found.append({"kind": "cudnn_older_than_build", "explanation": cudnn_warning})

    if provider == "cuda" and physical:
        env = _C.cuda_backend_status()["cuda_visible_devices"]
        if env is not None:
            found.append({"kind": "cuda_visible_devices", "explanation":
                          f"CUDA_VISIBLE_DEVICES='{env}' limits gpuaccel to the GPUs it lists "
                          "(renumbered from 0). Fix: unset it before Python starts to use every "
                          "GPU."})
    return found


def _driver_text(cuda_driver):
    """'12.4 (NVIDIA driver 550.54.15)': the backend's answer, else NVML's, else 'none found'."""
    nvml = _C.nvml_report()
    if cuda_driver is None and nvml["cuda_driver_version"]:
        cuda_driver = _C.cuda_version_string(nvml["cuda_driver_version"])
    if cuda_driver is None:
        return "none found" if not nvml["available"] else "unknown"
    suffix = f" (NVIDIA driver {nvml['driver_version']})" if nvml["driver_version"] else ""
    return f"{cuda_driver}{suffix}"


def _section_versions(lines):
    status = _C.cuda_backend_status()
    runtime = _version.runtime()
    lines.append("Versions")
    lines.append(f"  gpuaccel            {_version.gpuaccel}")
    lines.append(f"  Python              {platform.python_version()}")
    onednn = _C.onednn_version()
    lines.append(f"  oneDNN              {onednn['version']} ({onednn['cpu_runtime']} runtime)")
    if _version.cuda is None:
        lines.append("  CUDA (built with)   none: this gpuaccel was built without the CUDA backend")
    else:
        cudnn = _C.cudnn_version_string(_version.cudnn) if _version.cudnn else "none"
        lines.append(f"  CUDA (built with)   {_version.cuda}, cuDNN {cudnn}")
    loaded = status["loaded"]
    lines.append(f"  CUDA runtime        {runtime['cuda_runtime'] or 'n/a'}"
                 f"{' (linked into the CUDA backend)' if loaded else ' (CUDA backend not loaded)'}")
    lines.append(f"  CUDA driver         {_driver_text(runtime['cuda_driver'])}")
    if loaded:
        cudnn = _C.cudnn_version_string(runtime["cudnn"]) if runtime["cudnn"] else "none"
        cublas = runtime["cublas"]
        cublas_text = f"{cublas // 10000}.{cublas // 100 % 100}.{cublas % 100}" if cublas else "n/a"
        lines.append(f"  cuDNN (loaded)      {cudnn}")
        lines.append(f"  cuBLAS (loaded)     {cublas_text}")


def _section_cpu(lines):
    cpu = _C.cpu_info()
    flags = cpu["flags"]
    lines.append("CPU")
    lines.append(f"  Model               {cpu['model_name'] or 'unknown'}")
    lines.append(f"  CPUs                {cpu['logical_cpus']} logical, {cpu['physical_cores']} "
                 f"physical cores, {cpu['usable_cpus']} usable by this process")
    present = [label for key, label in _ISA_LABELS if flags.get(key)]
    missing = [label for key, label in _ISA_LABELS if not flags.get(key)]
    lines.append(f"  ISA                 {', '.join(present) or 'none of the tracked extensions'}")
    if missing:
        lines.append(f"  Not available       {', '.join(missing)}")
    if cpu["isa_cap"] is not None:
        variable = cpu["isa_cap_variable"]
        if cpu["isa_cap_recognized"]:
            scope = ("gpuaccel's oneDNN and kernels" if variable == "GPUACCEL_MAX_CPU_ISA"
                     else "every oneDNN in this process and gpuaccel's kernels")
            lines.append(f"  ISA ceiling         {variable}={cpu['isa_cap']}: the flags above are "
                         f"capped at it, for {scope}")
        else:
            lines.append(f"  ISA ceiling         ignored: {variable}={cpu['isa_cap']!r} is not a "
                         "oneDNN ISA name (AVX2, AVX512_CORE, AVX512_CORE_BF16, AVX512_CORE_AMX, "
                         "...)")
    if flags.get("amx_bf16"):
        note = "bfloat16 matmuls run on AMX tiles (much faster than float32)"
    elif flags.get("avx512_bf16"):
        note = "bfloat16 matmuls use AVX512-BF16 (faster than float32)"
    else:
        note = "no native bfloat16 (no AMX or AVX512-BF16): mixed_bfloat16 will be slow here"
    lines.append(f"  bfloat16            {note}")


def _section_devices(lines):
    provider = _C.gpu_provider_kind()
    visible = set(_C.visible_devices())
    lines.append(f"Devices (GPU provider: {provider})")
    for kind, index in _C.physical_devices():
        name = f"/physical_device:{kind}:{index}"
        extra = ""
        if kind == "GPU":
            g = _C.gpu_info(index)
            extra = (f"  {g['name']}, {g['total_memory'] / 2**30:.1f} GiB, compute capability "
                     f"{g['major']}.{g['minor']}")
            if g["multi_processor_count"]:
                extra += f", {g['multi_processor_count']} SMs"
            if g["memory_bandwidth_gbps"]:
                extra += f", {g['memory_bandwidth_gbps']:.0f} GB/s"
        hidden = "" if (kind, index) in visible else "  [hidden by set_visible_devices]"
        lines.append(f"  {name}{extra}{hidden}")
    status = _C.cuda_backend_status()
    if status["built"] or status["library_path"]:
        state = "loaded" if status["loaded"] else "not loaded"
        lines.append(f"  CUDA backend        {status['library_path']} ({state})")
        # A release wheel holds a CUDA 13 and a CUDA 12 backend: which one, why, why not the other.
        if status.get("backend_choice"):
            lines.append(f"  backend chosen      {status['backend_choice']}")
        for refused in status.get("refused_backends", []):
            lines.append(f"  backend not chosen  {refused}")
        lines.extend(_cuda_library_lines(status))


def _cuda_library_lines(status):
    """One line per CUDA library the backend links: the copy loaded, and whether it is an
    nvidia-* wheel's (PyPI, as PyTorch uses them) or the system's."""
    lines = []
    for lib in status.get("libraries", []):
        loaded, wheel = lib["loaded_path"], lib["wheel_path"]
        if loaded and wheel and loaded == wheel:
            origin = "nvidia-* wheel"
        elif loaded:
            origin = "system" if not wheel else "loaded before gpuaccel looked; wheel at " + wheel
        else:
            origin = "not loaded"
        version = f", version {lib['version']}" if lib.get("version") else ""
        text = f"  {lib['soname']:<20}{loaded or '-'} ({origin}{version})"
        if lib["error"]:
            text += f"; the wheel's copy {wheel} failed to load: {lib['error']}"
        lines.append(text)
    return lines


def report():
    """The whole report as a string. Never raises: a section that fails shows its error."""
    lines = [f"gpuaccel {_version.gpuaccel} environment report", ""]
    for section in (_section_versions, _section_cpu, _section_devices):
        try:
            section(lines)
        except Exception as e:  # noqa: BLE001 -- the report must always come out
            lines.append(f"  (this section failed: {type(e).__name__}: {e})")
        lines.append("")
    lines.append("Problems")
    try:
        found = problems()
    except Exception as e:  # noqa: BLE001
        found = [{"kind": "error", "explanation": f"{type(e).__name__}: {e}"}]
    if not found:
        lines.append("  none: every device is usable")
    for p in found:
        lines.append(f"  - [{p['kind']}] {p['explanation']}")
    return "\n".join(lines)


def main(argv=None):
    print(report())
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
