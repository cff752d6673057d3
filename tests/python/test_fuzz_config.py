"""Property-based fuzzing of the configuration calls a course notebook makes first
(``config.set_logical_device_configuration`` with ``LogicalDeviceConfiguration``,
``config.experimental.set_memory_growth``, ``config.set_visible_devices``, the threading
setters, ``distribute.MirroredStrategy(devices=...)``, ``CommunicationOptions``, the mixed
precision policy names): every value a student might pass, valid or not. The contract: what
TF accepts works, anything else is a ValueError or TypeError naming the argument, without
pybind11 text; never a crash and never a silently different setting.

Every example runs in an isolated worker (crash_isolation.py) with a fixed seed. Device
configuration can change only before the devices are initialized, so these checks create no
tensor (the module-scoped worker serves this module alone).
"""
from hypothesis import example, given, seed, settings, strategies as st

from crash_isolation import isolated  # noqa: F401 -- module-scoped: this module's worker only

PYBIND_TEXT = ("incompatible function arguments", "Unable to cast", "invalid arguments",
               "must be sequence[", "(expected ")
MAX_LIMIT_MB = (2**63 - 1) // 2**20  # a limit in bytes must fit int64
FUZZ_SEED = 20261124

ODD_INT = st.one_of(st.none(), st.integers(-2, 4096), st.sampled_from(
    [0, MAX_LIMIT_MB, MAX_LIMIT_MB + 1, 2**50, 2**63 - 1, 2**63, 2**70, -2**63 - 1, True, 1.5,
     float("nan"), "64"]))


def _refusal(error):
    names = [c.__name__ for c in type(error).__mro__]
    assert "ValueError" in names or "TypeError" in names, \
        f"untyped {type(error).__name__}: {error}"
    assert not any(t in str(error) for t in PYBIND_TEXT), f"pybind11 text leaked: {error}"


def _is_int64(value):
    return isinstance(value, int) and not isinstance(value, bool) and -2**63 <= value < 2**63


def check_logical_devices(configs):
    from gpuaccel import config
    valid = bool(configs) and all(
        (limit is None or (_is_int64(limit) and 1 <= limit <= MAX_LIMIT_MB)) and
        priority is None and ordinal is None  # CPU logical devices take neither (as TF)
        for limit, priority, ordinal in configs)
    cpu = config.list_physical_devices("CPU")[0]
    try:
        entries = [config.LogicalDeviceConfiguration(*c) for c in configs]
        config.set_logical_device_configuration(cpu, entries)
    except RuntimeError as error:  # TF's: devices already initialized by an earlier example
        assert valid and "initialized" in str(error), f"{configs}: {error}"
        return "too late"
    except Exception as error:  # noqa: BLE001
        _refusal(error)
        assert not valid, f"refused {configs}: {error}"
        return "rejected"
    assert valid, f"accepted {configs}"
    got = config.get_logical_device_configuration(cpu)
    assert [c.memory_limit for c in got] == [c[0] for c in configs], got
    return "ok"


@settings()  # the profile's budget (conftest.py)
@seed(FUZZ_SEED)
@given(st.lists(st.tuples(ODD_INT, ODD_INT, ODD_INT), max_size=3))
# Regression: 2**50 MB wrapped to a limit of 0 bytes (every allocation then failed as an OOM).
@example([(2**50, None, None)])
@example([(None, "x", None)])  # these two were the binding's argument text
@example([(None, None, 8796093022207)])
def test_logical_device_configuration(isolated, configs):
    isolated.call("test_fuzz_config", "check_logical_devices", configs)


def check_device_calls(name, args):
    """Calls that name a device: a PhysicalDevice works, anything else is a clear refusal."""
    from gpuaccel import config, distribute
    from gpuaccel.config import threading
    from gpuaccel.keras import mixed_precision
    calls = {
        "set_memory_growth": config.experimental.set_memory_growth,
        "get_memory_growth": config.experimental.get_memory_growth,
        "set_visible_devices": config.set_visible_devices,
        "list_physical_devices": config.list_physical_devices,
        "set_intra_op_parallelism_threads": threading.set_intra_op_parallelism_threads,
        "set_inter_op_parallelism_threads": threading.set_inter_op_parallelism_threads,
        "MirroredStrategy": lambda devices: distribute.MirroredStrategy(devices=devices),
        "CommunicationOptions": lambda n: distribute.experimental.CommunicationOptions(
            bytes_per_pack=n),
        "set_global_policy": mixed_precision.set_global_policy,
    }
    args = [config.list_physical_devices("CPU")[0] if a == "<cpu>" else a for a in args]
    try:
        calls[name](*args)
    except (NotImplementedError, RuntimeError) as error:
        # a valid request this machine cannot honour (no GPU, float16 on a CPU) or one that
        # comes too late (threads after initialization) is TF's RuntimeError / ours
        assert not any(t in str(error) for t in PYBIND_TEXT), error
        return "unsupported"
    except Exception as error:  # noqa: BLE001
        _refusal(error)
        return "rejected"
    return "ok"


ODD_DEVICE = st.one_of(st.sampled_from(["<cpu>", "/CPU:0", "/GPU:0", "cpu", "CPU", "GPU",
                                        "TPU", "", "/CPU:-1", "/CPU:" + "9" * 30, "cuda:1"]),
                       ODD_INT, st.lists(st.sampled_from(["<cpu>", "/CPU:0", "/CPU:0", 5,
                                                          "bogus"]), max_size=3))
CALLS = st.one_of(
    st.tuples(st.sampled_from(["set_memory_growth"]), st.tuples(ODD_DEVICE, st.booleans())),
    st.tuples(st.sampled_from(["get_memory_growth", "list_physical_devices",
                               "MirroredStrategy"]), st.tuples(ODD_DEVICE)),
    st.tuples(st.just("set_visible_devices"), st.tuples(ODD_DEVICE, ODD_DEVICE)),
    st.tuples(st.sampled_from(["set_intra_op_parallelism_threads",
                               "set_inter_op_parallelism_threads", "CommunicationOptions"]),
              st.tuples(ODD_INT)),
    st.tuples(st.just("set_global_policy"),
              st.tuples(st.one_of(st.sampled_from(["mixed_float16", "mixed_bfloat16", "float32",
                                                   "float64", "int32", "mixed_float64", "",
                                                   "MIXED_FLOAT16"]), ODD_INT))))


@settings()
@seed(FUZZ_SEED)
@given(CALLS)
@example(("CommunicationOptions", (2**70,)))  # reached the trainer's binding as pybind11 text
@example(("set_visible_devices", ("<cpu>", "<cpu>")))  # device_type: the binding's text
@example(("set_intra_op_parallelism_threads", (-2**63 - 1,)))  # beyond int: the binding's text
def test_device_calls_refuse_odd_arguments_clearly(isolated, call):
    isolated.call("test_fuzz_config", "check_device_calls", call[0], list(call[1]))


def check_cross_device_ops(token, devices):
    """MirroredStrategy(cross_device_ops=...): TF's CrossDeviceOps (or None) are honoured or
    refused saying why; anything else is a TypeError; nothing is accepted and ignored."""
    from gpuaccel import distribute
    made = {"<nccl>": lambda: distribute.NcclAllReduce(),
            "<nccl2>": lambda: distribute.NcclAllReduce(num_packs=2),
            "<hierarchical>": lambda: distribute.HierarchicalCopyAllReduce(),
            "<one>": lambda: distribute.ReductionToOneDevice(),
            "<one_cpu0>": lambda: distribute.ReductionToOneDevice("/cpu:0"),
            "<base>": lambda: distribute.CrossDeviceOps()}
    value = made[token]() if token in made else token
    try:
        strategy = distribute.MirroredStrategy(devices, cross_device_ops=value)
    except NotImplementedError as error:
        assert isinstance(value, distribute.CrossDeviceOps), f"{value!r}: {error}"
        assert "cross_device_ops=" in str(error), error
        return "not implemented"
    except Exception as error:  # noqa: BLE001
        _refusal(error)
        assert "cross_device_ops" in str(error) or "device" in str(error), error
        return "rejected"
    assert value is None or isinstance(value, distribute.CrossDeviceOps), f"accepted {value!r}"
    assert strategy._cross_device_ops is value
    return "ok"


@settings()
@seed(FUZZ_SEED)
@given(st.one_of(st.sampled_from(["<nccl>", "<nccl2>", "<hierarchical>", "<one>", "<one_cpu0>",
                                  "<base>", "nccl", "NcclAllReduce", ""]), ODD_INT),
       st.sampled_from([None, ["/CPU:0"]]))
# Regression: a string (or anything else) was accepted and silently ignored.
@example("nccl", None)
@example(5, ["/CPU:0"])
def test_mirrored_strategy_cross_device_ops(isolated, token, devices):
    isolated.call("test_fuzz_config", "check_cross_device_ops", token, devices)
