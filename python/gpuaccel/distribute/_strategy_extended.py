"""``strategy.extended`` (``tf.distribute.StrategyExtended``): the strategy's placement facts for
code that goes below ``run`` and ``reduce``.

Why a class of its own: TF hands out a separate object here, and code checks it with
``isinstance(strategy.extended, tf.distribute.StrategyExtended)``. gpuaccel answers what it
knows for certain (the replica devices, whether shapes must be static) and leaves out TF's variable-update machinery (``update``,
``value_container``, ``colocate_vars_with``, ``reduce_to``, ``variable_created_in_scope``):
gpuaccel's variables are not
mirrored objects, ``fit`` copies them to the replicas itself."""

__all__ = ["StrategyExtended"]


class StrategyExtended:
    """What ``strategy.extended`` returns."""

    def __init__(self, strategy):
        self._strategy = strategy

    @property
    def worker_devices(self):
        """The devices this process runs replicas on, one per replica, in replica order."""
        return self._strategy.worker_devices

    @property
    def parameter_devices(self):
        """The devices the variables are mirrored on: the replica devices."""
        return self._strategy.parameter_devices

    @property
    def experimental_require_static_shapes(self):
        """False: gpuaccel's replicas take batches of any size (the last one may be short)."""
        return False

    def __repr__(self):
        return f"<gpuaccel.distribute.StrategyExtended of {self._strategy!r}>"
