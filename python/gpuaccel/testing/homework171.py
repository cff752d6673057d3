"""Class 171's homework, checked: optimize a model's training and report the speedup.

The homework (course text, class 171): 1. a baseline with the default configuration; 2. mixed
precision + memory growth; 3. profile and name the bottleneck; 4. apply a fix; 5. report the
wall-clock speedup. Acceptance: speedup >= 1.5x with mixed precision, bottleneck named correctly.

A student records the runs in a :class:`Report` while working in the notebook::

    from gpuaccel.testing import homework171
    informe = homework171.Report()
    informe.measure("baseline", modelo, datos)                 # float32, default settings
    ...  # set_memory_growth(gpu, True); set_global_policy('mixed_float16'); new model
    informe.measure("mixed_precision", modelo_mixto, datos)
    informe.add_profile("logs/tarea", bottleneck="input")     # what the student concluded
    informe.measure("fix", modelo_final, datos_arreglados, description="prefetch + map paralelo")
    informe.check()                                            # prints the rubric

Each run records what actually ran (the model's layer policies, each GPU's memory growth, the
device), so the rubric checks settings rather than claims, and the named bottleneck is compared
with ``gpuaccel.profiler.analyze`` of the same log directory. :func:`check` grades a Report
(or a saved one, ``Report.load``); :func:`grade_notebook` executes a notebook and grades the
Report it created (``python -m gpuaccel.grade notebook.ipynb``).
"""
from __future__ import annotations

import json
import math
import os
from dataclasses import asdict, dataclass, field

from ._rubric import CriterionResult, Rubric

__all__ = ["CRITERIA", "REQUIRED_SPEEDUP", "BOTTLENECK_NAMES", "Run", "ProfileClaim", "Report",
           "check", "grade_notebook", "normalize_bottleneck"]

#: The rubric's criteria, in the homework's order.
CRITERIA = ("baseline", "mixed_precision", "bottleneck", "fix", "speedup")
#: The acceptance threshold: wall-clock speedup of the final run over the baseline.
REQUIRED_SPEEDUP = 1.5
_FORMAT = "gpuaccel.homework171/1"

_STAGES = {"baseline": "baseline", "linea_base": "baseline", "línea_base": "baseline",
           "mixed_precision": "mixed_precision", "precision_mixta": "mixed_precision",
           "precisión_mixta": "mixed_precision", "fix": "fix", "arreglo": "fix"}

#: Accepted names for each of gpuaccel.profiler's bottleneck categories (Spanish included).
BOTTLENECK_NAMES = {
    "input": ("input", "entrada", "data loading", "carga de datos", "datos", "input pipeline",
              "pipeline de entrada"),
    "compute": ("compute", "cómputo", "computo", "cálculo", "calculo"),
    "transfer": ("transfer", "transferencia", "transferencias", "copias", "copies"),
    "sync": ("sync", "sincronización", "sincronizacion", "synchronization"),
    "host-overhead": ("host-overhead", "host overhead", "overhead", "python"),
}
_TITLES = {
    "notebook": "0. El cuaderno se ejecuta entero / The notebook runs top to bottom",
    "baseline": "1. Línea base / Baseline",
    "mixed_precision": "2. Precisión mixta + memory growth / Mixed precision + memory growth",
    "bottleneck": "3. Cuello de botella identificado / Bottleneck identified",
    "fix": "4. Arreglo aplicado / Fix applied",
    "speedup": f"5. Speedup >= {REQUIRED_SPEEDUP}x / Speedup >= {REQUIRED_SPEEDUP}x",
}
_GRADER_MARKER = "@@gpuaccel-homework171-report@@"


def _stage(name):
    key = str(name).strip().lower().replace(" ", "_")
    if key not in _STAGES:
        raise ValueError(f"stage must be one of 'baseline', 'mixed_precision', 'fix' (or "
                         f"'linea_base', 'precision_mixta', 'arreglo'), got {name!r}")
    return _STAGES[key]


def normalize_bottleneck(name):
    """The profiler's category for a name a student wrote ('entrada' -> 'input'), or None."""
    text = str(name).strip().lower().replace("_", " ")
    for category, names in BOTTLENECK_NAMES.items():
        if text in names or text == category:
            return category
    return None


def _is_mixed(policy_name):
    return policy_name.startswith("mixed_") or policy_name in ("float16", "bfloat16")


@dataclass
class Run:
    """One measured training run and the settings it actually ran with."""

    stage: str
    seconds: float
    global_policy: str
    layer_policies: list = field(default_factory=list)
    gpus: list = field(default_factory=list)  # [{"name": ..., "memory_growth": bool}]
    device: str = "CPU"
    description: str = ""

    @property
    def mixed(self) -> bool:
        """Whether the model computed in float16/bfloat16 (its layers when recorded, else the
        global policy)."""
        if self.layer_policies:
            return any(_is_mixed(p) for p in self.layer_policies)
        return _is_mixed(self.global_policy)

    @property
    def policy(self) -> str:
        mixed = [p for p in self.layer_policies if _is_mixed(p)]
        return mixed[0] if mixed else (self.layer_policies[0] if self.layer_policies
                                       else self.global_policy)

    def summary(self, per_epoch="per epoch") -> str:
        text = f"{self.seconds:.3f} s {per_epoch}, {self.policy}, {self.device}"
        return text + (f", «{self.description}»" if self.description else "")


@dataclass
class ProfileClaim:
    """A profile's log directory and the bottleneck the student named for it."""

    log_dir: str
    bottleneck: str


def _snapshot(stage, seconds, model, description):
    """A Run with the policies, memory growth and device in force now."""
    from .. import config, cuda
    from ..keras import mixed_precision
    layer_policies = []
    for layer in getattr(model, "layers", None) or []:
        policy = getattr(layer, "dtype_policy", None)
        if policy is not None:
            layer_policies.append(policy.name)
    gpus = [{"name": d.name, "memory_growth": bool(config.experimental.get_memory_growth(d))}
            for d in config.list_physical_devices("GPU")]
    device = f"GPU {cuda.get_device_name(0)}" if cuda.is_available() else "CPU"
    return Run(stage=stage, seconds=float(seconds),
               global_policy=mixed_precision.global_policy().name,
               layer_policies=sorted(set(layer_policies)), gpus=gpus, device=device,
               description=str(description or ""))


def _checked_run(run):
    """``run`` as read from a saved report, with the types and values add_run records: a file
    edited by hand (or damaged) must not be graded on a negative time or break the grader."""
    def fail(what):
        raise ValueError(f"damaged homework 171 report: the {run.stage!r} run's {what}")
    seconds = run.seconds
    if isinstance(seconds, bool) or not isinstance(seconds, (int, float)) or \
            not math.isfinite(seconds) or seconds <= 0:
        fail(f"seconds must be a positive number, got {seconds!r}")
    for name in ("stage", "global_policy", "device", "description"):
        if not isinstance(getattr(run, name), str):
            fail(f"{name} must be a string, got {getattr(run, name)!r}")
    if not isinstance(run.layer_policies, list) or \
            not all(isinstance(p, str) for p in run.layer_policies):
        fail(f"layer_policies must be a list of policy names, got {run.layer_policies!r}")
    if not isinstance(run.gpus, list) or not all(
            isinstance(g, dict) and isinstance(g.get("name"), str) and
            isinstance(g.get("memory_growth"), bool) for g in run.gpus):
        fail("gpus must be a list of {'name': str, 'memory_growth': bool}, got "
             f"{run.gpus!r}")
    return run


def _checked_profile(profile):
    for name in ("log_dir", "bottleneck"):
        if not isinstance(getattr(profile, name), str):
            raise ValueError(f"damaged homework 171 report: the profile's {name} must be a "
                             f"string, got {getattr(profile, name)!r}")
    return profile


_latest_report = None


class Report:
    """The homework's record: measured runs by stage and the profile with the named bottleneck.

    Stages: ``'baseline'``, ``'mixed_precision'``, ``'fix'`` (Spanish aliases ``'linea_base'``,
    ``'precision_mixta'``, ``'arreglo'``). Measuring a stage again replaces its run.
    """

    def __init__(self):
        global _latest_report
        self.runs = {}
        self.profile = None
        _latest_report = self  # what the grader collects from an executed notebook

    # ---- recording
    def measure(self, stage, model, data, *, description="", epochs=1, warmup_epochs=0,
                **fit_kwargs):
        """Times ``epochs`` epochs of ``model.fit(data, ...)`` (:func:`measure_epoch`) and
        records them as ``stage``, with the settings in force; returns the EpochTiming."""
        from ._speed import measure_epoch
        stage = _stage(stage)
        timing = measure_epoch(model, data, epochs=epochs, warmup_epochs=warmup_epochs,
                               **fit_kwargs)
        run = self.add_run(stage, timing.seconds, model=model, description=description)
        print(f"{stage}: {timing.seconds:.3f} s por época / per epoch ({run.policy}, "
              f"{run.device})")
        return timing

    def add_run(self, stage, seconds, *, model=None, description=""):
        """Records a run timed by the student (seconds per epoch); ``model`` lets the record
        show the policy its layers computed in. Returns the Run."""
        stage = _stage(stage)
        if isinstance(seconds, bool) or not isinstance(seconds, (int, float)) or \
                not math.isfinite(seconds) or seconds <= 0:
            raise ValueError(f"seconds must be a positive number (seconds per epoch), got "
                             f"{seconds!r}")
        run = _snapshot(stage, seconds, model, description)
        self.runs[stage] = run
        return run

    def add_profile(self, log_dir, bottleneck):
        """Records the profile in ``log_dir`` and the bottleneck you read in it: one of
        'input', 'compute', 'transfer', 'sync', 'host-overhead' (or 'entrada', 'cómputo', ...)."""
        log_dir = os.path.abspath(os.fspath(log_dir))
        if not os.path.isdir(log_dir):
            raise FileNotFoundError(f"log_dir {log_dir!r} does not exist: pass the folder given "
                                    "to keras.callbacks.TensorBoard(log_dir=...)")
        if normalize_bottleneck(bottleneck) is None:
            raise ValueError(f"bottleneck must be one of {sorted(BOTTLENECK_NAMES)} (en "
                             f"español: entrada, cómputo, transferencia, sincronización, "
                             f"overhead), got {bottleneck!r}")
        self.profile = ProfileClaim(log_dir=log_dir, bottleneck=str(bottleneck))
        return self.profile

    # ---- results
    @property
    def speedup(self):
        """Baseline seconds / final seconds (the fix, else the mixed precision run), or None."""
        final = self.runs.get("fix") or self.runs.get("mixed_precision")
        baseline = self.runs.get("baseline")
        return None if final is None or baseline is None else baseline.seconds / final.seconds

    def check(self, print_rubric=True):
        """Grades this report (see :func:`check`); prints the rubric unless told not to."""
        rubric = check(self)
        if print_rubric:
            print(rubric)
        return rubric

    # ---- files
    def to_dict(self):
        return {"format": _FORMAT, "runs": {k: asdict(r) for k, r in self.runs.items()},
                "profile": asdict(self.profile) if self.profile else None}

    @classmethod
    def from_dict(cls, data):
        if not isinstance(data, dict) or data.get("format") != _FORMAT:
            raise ValueError(f"not a homework 171 report: expected format {_FORMAT!r}")
        report = cls()
        try:
            for stage, run in data.get("runs", {}).items():
                report.runs[_stage(stage)] = _checked_run(Run(**run))
            if data.get("profile"):
                report.profile = _checked_profile(ProfileClaim(**data["profile"]))
        except (TypeError, AttributeError) as e:
            raise ValueError(f"damaged homework 171 report: {e}") from e
        return report

    def save(self, path):
        """Writes the report as JSON (atomically); returns the path."""
        from .._atomic_file import atomic_write_bytes
        return atomic_write_bytes(path, json.dumps(self.to_dict(), indent=2,
                                                   ensure_ascii=False).encode("utf-8"))

    @classmethod
    def load(cls, path):
        with open(path, encoding="utf-8") as f:
            return cls.from_dict(json.load(f))


# ---------------------------------------------------------------------------- criteria
def _result(key, passed, es, en):
    return CriterionResult(key=key, title=_TITLES[key], passed=passed, detail_es=es,
                           detail_en=en)


def _check_baseline(report):
    run = report.runs.get("baseline")
    if run is None:
        return _result("baseline", False,
                       "Falta la línea base. Entrena el modelo con la configuración por defecto "
                       "(float32) y mídelo: informe.measure('baseline', modelo, datos).",
                       "The baseline is missing. Train the model with the default settings "
                       "(float32) and measure it: report.measure('baseline', model, data).")
    if run.mixed:
        return _result("baseline", False,
                       f"La línea base se ejecutó con {run.policy}: debe usar la política por "
                       "defecto float32 para que el speedup mida la precisión mixta. Mide la "
                       "línea base antes de set_global_policy, o vuelve a "
                       "set_global_policy('float32') y crea el modelo de nuevo.",
                       f"The baseline ran under {run.policy}: it must use the default float32 "
                       "policy so the speedup measures mixed precision. Measure it before "
                       "set_global_policy, or set_global_policy('float32') and rebuild the model.")
    return _result("baseline", True, f"línea base: {run.summary('por época')}.",
                   f"baseline: {run.summary()}.")


def _check_mixed_precision(report):
    run = report.runs.get("mixed_precision")
    if run is None:
        return _result(
            "mixed_precision", False,
            "Falta la ejecución con precisión mixta. Activa memory growth "
            "(config.experimental.set_memory_growth(gpu, True) para cada GPU), luego "
            "keras.mixed_precision.set_global_policy('mixed_float16') (T4, V100) o "
            "'mixed_bfloat16' (A100/H100, CPU con AMX), crea el modelo de nuevo y mídelo: "
            "informe.measure('mixed_precision', modelo, datos).",
            "The mixed precision run is missing. Turn on memory growth "
            "(config.experimental.set_memory_growth(gpu, True) for each GPU), then "
            "keras.mixed_precision.set_global_policy('mixed_float16') (T4, V100) or "
            "'mixed_bfloat16' (A100/H100, CPU with AMX), rebuild the model and measure it: "
            "report.measure('mixed_precision', model, data).")
    if not run.mixed:
        if _is_mixed(run.global_policy):
            return _result(
                "mixed_precision", False,
                f"La política global es {run.global_policy}, pero las capas del modelo "
                f"calculan en {', '.join(run.layer_policies)}: el modelo se creó antes de "
                "set_global_policy. Llama a set_global_policy primero y crea el modelo después.",
                f"The global policy is {run.global_policy}, but the model's layers compute in "
                f"{', '.join(run.layer_policies)}: the model was built before "
                "set_global_policy. Call set_global_policy first, then build the model.")
        return _result(
            "mixed_precision", False,
            f"La ejecución 'mixed_precision' usó {run.policy}, no precisión mixta. Llama a "
            "keras.mixed_precision.set_global_policy('mixed_float16') o 'mixed_bfloat16' "
            "antes de crear el modelo.",
            f"The 'mixed_precision' run used {run.policy}, not mixed precision. Call "
            "keras.mixed_precision.set_global_policy('mixed_float16') or 'mixed_bfloat16' "
            "before building the model.")
    without_growth = [g["name"] for g in run.gpus if not g["memory_growth"]]
    if without_growth:
        names = ", ".join(without_growth)
        return _result(
            "mixed_precision", False,
            f"Memory growth no está activado en {names}. Al principio del cuaderno, antes de "
            "usar la GPU: for gpu in config.list_physical_devices('GPU'): "
            "config.experimental.set_memory_growth(gpu, True) (si la GPU ya se usó, reinicia "
            "el entorno de ejecución).",
            f"Memory growth is not on for {names}. At the top of the notebook, before the GPU "
            "is used: for gpu in config.list_physical_devices('GPU'): "
            "config.experimental.set_memory_growth(gpu, True) (if the GPU was already used, "
            "restart the runtime).")
    fix = report.runs.get("fix")
    if fix is not None and not fix.mixed:
        return _result(
            "mixed_precision", False,
            f"La ejecución 'fix' volvió a {fix.policy}: el speedup final debe medirse con "
            "precisión mixta. Crea el modelo del arreglo con la política mixta activa.",
            f"The 'fix' run went back to {fix.policy}: the final speedup must be measured with "
            "mixed precision on. Build the fix's model with the mixed policy set.")
    if run.gpus:
        growth_es = "memory growth activado en " + ", ".join(g["name"] for g in run.gpus)
        growth_en = "memory growth on " + ", ".join(g["name"] for g in run.gpus)
    else:
        growth_es = "sin GPU: memory growth no se aplica en la CPU"
        growth_en = "no GPU: memory growth does not apply on the CPU"
    return _result("mixed_precision", True,
                   f"precisión mixta: {run.summary('por época')}; {growth_es}.",
                   f"mixed precision: {run.summary()}; {growth_en}.")


def _check_bottleneck(report):
    claim = report.profile
    if claim is None:
        return _result(
            "bottleneck", False,
            "Falta el perfil. Perfila unos pasos con keras.callbacks.TensorBoard("
            "log_dir='logs/tarea', profile_batch=(5, 10)), lee la tabla y anota el cuello de "
            "botella: informe.add_profile('logs/tarea', bottleneck='entrada').",
            "The profile is missing. Profile a few steps with keras.callbacks.TensorBoard("
            "log_dir='logs/homework', profile_batch=(5, 10)), read the table and record the "
            "bottleneck: report.add_profile('logs/homework', bottleneck='input').")
    from ..profiler import analyze
    try:
        found = analyze(claim.log_dir, print_table=False)
    except (FileNotFoundError, ValueError) as e:
        return _result("bottleneck", False,
                       f"No se puede leer el perfil de {claim.log_dir!r}: {e}",
                       f"The profile in {claim.log_dir!r} cannot be read: {e}")
    named = normalize_bottleneck(claim.bottleneck)
    shares = ", ".join(f"{k} {100 * v:.0f}%" for k, v in found.fractions.items())
    if named != found.bottleneck:
        return _result(
            "bottleneck", False,
            f"Nombraste '{claim.bottleneck}', pero gpuaccel.profiler.analyze del mismo perfil "
            f"encuentra '{found.bottleneck}' (reparto del paso: {shares}). Vuelve a leer la "
            "tabla del perfil: ¿en qué columna se va la mayor parte del paso?",
            f"You named '{claim.bottleneck}', but gpuaccel.profiler.analyze of the same profile "
            f"finds '{found.bottleneck}' (step time: {shares}). Read the profile table again: "
            "which column takes most of the step?")
    return _result("bottleneck", True,
                   f"cuello de botella '{found.bottleneck}', igual que analyze ({shares}).",
                   f"bottleneck '{found.bottleneck}', as analyze finds ({shares}).")


def _check_fix(report):
    run = report.runs.get("fix")
    if run is None:
        return _result(
            "fix", False,
            "Falta la ejecución con el arreglo. Aplica un cambio contra el cuello de botella "
            "(prefetch, map en paralelo, lotes más grandes...) y mídelo: informe.measure('fix', "
            "modelo, datos, description='qué cambiaste').",
            "The run with the fix is missing. Apply a change against the bottleneck (prefetch, "
            "parallel map, larger batches...) and measure it: report.measure('fix', model, "
            "data, description='what you changed').")
    if not run.description.strip():
        return _result("fix", False,
                       "Describe el arreglo: informe.measure('fix', ..., description='qué "
                       "cambiaste y por qué').",
                       "Describe the fix: report.measure('fix', ..., description='what you "
                       "changed and why').")
    return _result("fix", True, f"arreglo: {run.summary('por época')}.",
                   f"fix: {run.summary()}.")


def _check_speedup(report):
    baseline = report.runs.get("baseline")
    final = report.runs.get("fix") or report.runs.get("mixed_precision")
    if baseline is None or final is None:
        missing = "la línea base" if baseline is None else "la ejecución final"
        missing_en = "the baseline" if baseline is None else "the final run"
        return _result("speedup", False,
                       f"No se puede calcular el speedup: falta {missing} (ver arriba).",
                       f"The speedup cannot be computed: {missing_en} is missing (see above).")
    if baseline.device != final.device:
        return _result(
            "speedup", False,
            f"La línea base corrió en {baseline.device} y la ejecución final en {final.device}: "
            "mide las dos en el mismo dispositivo, para que el speedup sea de tus cambios.",
            f"The baseline ran on {baseline.device} and the final run on {final.device}: "
            "measure both on the same device, so the speedup comes from your changes.")
    speedup = baseline.seconds / final.seconds
    numbers = (f"{baseline.seconds:.3f} s -> {final.seconds:.3f} s ({final.stage}) = "
               f"{speedup:.2f}x")
    if speedup < REQUIRED_SPEEDUP:
        target = baseline.seconds / REQUIRED_SPEEDUP
        return _result(
            "speedup", False,
            f"Speedup {numbers}, menor que {REQUIRED_SPEEDUP}x: la ejecución final debe bajar a "
            f"{target:.3f} s por época o menos. Ataca el cuello de botella que encontraste y "
            "vuelve a medir.",
            f"Speedup {numbers}, below {REQUIRED_SPEEDUP}x: the final run must take "
            f"{target:.3f} s per epoch or less. Work on the bottleneck you found and measure "
            "again.")
    return _result("speedup", True, f"speedup {numbers}.", f"speedup {numbers}.")


_CHECKS = {"baseline": _check_baseline, "mixed_precision": _check_mixed_precision,
           "bottleneck": _check_bottleneck, "fix": _check_fix, "speedup": _check_speedup}


def check(report, title="Tarea 171 / Homework 171"):
    """The rubric of ``report`` (a :class:`Report`, or the path of a saved one)."""
    if isinstance(report, (str, os.PathLike)):
        report = Report.load(report)
    if not isinstance(report, Report):
        raise TypeError(f"report must be a homework171.Report or the path of a saved one, got "
                        f"{type(report).__name__}")
    return Rubric(title=title, results=[_CHECKS[key](report) for key in CRITERIA])


# -------------------------------------------------------------------------- notebooks
def _print_latest_for_grader():
    """Run by the grader in the student's kernel after the last cell."""
    data = None if _latest_report is None else _latest_report.to_dict()
    print(_GRADER_MARKER + json.dumps(data))


_COLLECT_CELL = ("import gpuaccel.testing.homework171 as _gpuaccel_homework171\n"
                 "_gpuaccel_homework171._print_latest_for_grader()")


def _collected_report(cell):
    for output in cell.get("outputs", []):
        for line in output.get("text", "").splitlines() if output.get("name") == "stdout" else []:
            if line.startswith(_GRADER_MARKER):
                data = json.loads(line[len(_GRADER_MARKER):])
                return None if data is None else Report.from_dict(data)
    return None


def grade_notebook(path, workdir=None, budget_seconds=None):
    """Executes the notebook at ``path`` in a fresh kernel (current folder ``workdir``, default
    the notebook's folder) and grades the last :class:`Report` it created.

    The rubric starts with whether every cell ran; the five criteria follow, graded on what
    the notebook recorded even when a cell failed. ``budget_seconds`` bounds the run (default:
    the notebook's own budget, see :mod:`gpuaccel.testing.notebook`).
    """
    from .notebook import _require, execute_notebook, read_notebook
    # The notebook extra's packages, each refused with what to install when missing.
    nbformat = _require("nbformat")
    _require("nbclient")
    path = os.fspath(path)
    notebook = read_notebook(path)
    notebook.cells.append(nbformat.v4.new_code_cell(_COLLECT_CELL))
    workdir = workdir if workdir is not None else (os.path.dirname(os.path.abspath(path)))
    title = f"Tarea 171 / Homework 171: {os.path.basename(path)}"
    from nbclient.exceptions import CellTimeoutError, DeadKernelError
    try:
        result = execute_notebook(notebook, workdir, budget_seconds=budget_seconds,
                                  allow_errors=True)
    except (CellTimeoutError, DeadKernelError) as e:
        first_line = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        return Rubric(title=title, results=[
            _result("notebook", False,
                    f"El cuaderno no terminó ({first_line}). Reduce los datos o las épocas "
                    "para que quepa en el tiempo, o pide un límite mayor (--timeout).",
                    f"The notebook did not finish ({first_line}). Use less data or fewer "
                    "epochs so it fits in time, or ask for a larger limit (--timeout)."),
            *(_result(key, False, "Sin calificar: el cuaderno no terminó.",
                      "Not graded: the notebook did not finish.") for key in CRITERIA)])
    collect_index = len(result.notebook.cells) - 1
    student_errors = [e for e in result.errors if e.cell_index != collect_index]
    report = _collected_report(result.notebook.cells[collect_index])
    if student_errors:
        first = student_errors[0]
        ran = _result("notebook", False,
                      f"{len(student_errors)} celda(s) fallaron; la primera, {first}. "
                      "Arréglala y ejecuta el cuaderno entero (Reiniciar y ejecutar todo).",
                      f"{len(student_errors)} cell(s) raised; the first, {first}. Fix it and "
                      "run the whole notebook (Restart and run all).")
    else:
        ran = _result("notebook", True,
                      f"todas las celdas se ejecutaron en {result.seconds:.0f} s.",
                      f"every cell ran, in {result.seconds:.0f} s.")
    if report is None:
        missing = [
            _result(key, False,
                    "El cuaderno no creó un informe: empieza con `from gpuaccel.testing import "
                    "homework171` e `informe = homework171.Report()`, y registra cada paso.",
                    "The notebook created no report: start with `from gpuaccel.testing import "
                    "homework171` and `report = homework171.Report()`, and record each step.")
            for key in CRITERIA]
        return Rubric(title=title, results=[ran, *missing])
    graded = check(report, title=title)
    return Rubric(title=title, results=[ran, *graded.results])
