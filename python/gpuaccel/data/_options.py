"""``gpuaccel.data.Options``: tf.data's options object, accepted and kept.

Why it exists: course code sets options before handing a pipeline to ``fit`` (``deterministic``,
``experimental_distribute.auto_shard_policy``, ``threading.private_threadpool_size``); gpuaccel's
pipeline has one behaviour (deterministic, one thread per prefetch), so the options change
nothing, but ``with_options`` must accept them, ``options()`` must give them back merged, and a
misspelt option must fail as in TensorFlow rather than be silently ignored.
"""
import enum


class AutoShardPolicy(enum.IntEnum):
    """tf.data.experimental.AutoShardPolicy (recorded only: gpuaccel's distribution feeds each
    replica a slice of every batch)."""
    OFF = -1
    AUTO = 0
    FILE = 1
    DATA = 2
    HINT = 3


class _OptionGroup:
    """A fixed set of options, each None until set; setting any other name is an error."""

    _FIELDS = ()

    def __init__(self):
        object.__setattr__(self, "_values", {name: None for name in self._FIELDS})

    def __getattr__(self, name):
        values = self.__dict__["_values"]
        if name in values:
            return values[name]
        raise AttributeError(f"{type(self).__name__} has no option {name!r}; the options are "
                             f"{sorted(values)}")

    def __setattr__(self, name, value):
        if name not in self._values or isinstance(self._values[name], _OptionGroup):
            raise AttributeError(f"Cannot set the property {name} on {type(self).__name__}. "
                                 f"The options that can be set are {sorted(self._settable())}")
        self._values[name] = value

    def _settable(self):
        return [n for n, v in self._values.items() if not isinstance(v, _OptionGroup)]

    def _merge_from(self, other):
        """Every option ``other`` set (not None) overrides this one's (later options win)."""
        for name, value in other._values.items():
            if isinstance(value, _OptionGroup):
                self._values[name]._merge_from(value)
            elif value is not None:
                self._values[name] = value

    def __eq__(self, other):
        return type(other) is type(self) and other._values == self._values

    def __repr__(self):
        set_values = {n: v for n, v in self._values.items() if v is not None and not (
            isinstance(v, _OptionGroup) and v == type(v)())}
        return f"{type(self).__name__}({set_values})"


class AutotuneOptions(_OptionGroup):
    _FIELDS = ("autotune_algorithm", "cpu_budget", "enabled", "initial_parallelism",
               "min_parallelism", "ram_budget")


class DistributeOptions(_OptionGroup):
    _FIELDS = ("auto_shard_policy", "num_devices")


class OptimizationOptions(_OptionGroup):
    _FIELDS = ("apply_default_optimizations", "filter_fusion", "filter_parallelization",
               "inject_prefetch", "map_and_batch_fusion", "map_and_filter_fusion", "map_fusion",
               "map_parallelization", "noop_elimination", "parallel_batch",
               "seq_interleave_prefetch", "shuffle_and_repeat_fusion")


class ThreadingOptions(_OptionGroup):
    _FIELDS = ("max_intra_op_parallelism", "private_threadpool_size")


class ServiceOptions(_OptionGroup):
    _FIELDS = ("pinned",)


class Options(_OptionGroup):
    """tf.data.Options: the options of a pipeline, set with ``Dataset.with_options``."""

    _FIELDS = ("dataset_name", "deterministic", "experimental_deterministic",
               "experimental_external_state_policy", "experimental_slack",
               "experimental_symbolic_checkpoint", "experimental_warm_start", "framework_type")
    _GROUPS = {"autotune": AutotuneOptions, "experimental_distribute": DistributeOptions,
               "experimental_optimization": OptimizationOptions,
               "experimental_service": ServiceOptions, "threading": ThreadingOptions}

    def __init__(self):
        super().__init__()
        for name, group in self._GROUPS.items():
            self._values[name] = group()
        # TF's older spelling of the same group
        self._values["experimental_threading"] = self._values["threading"]


def merged(options_list):
    """One Options holding ``options_list`` applied in order (later ones win)."""
    result = Options()
    for options in options_list:
        result._merge_from(options)
    return result
