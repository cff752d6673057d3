"""TensorFlow's variable option enums (``tf.VariableAggregation``,
``tf.VariableSynchronization``), with TF's member names and values.

Distributed TF code passes them to ``tf.Variable(..., aggregation=..., synchronization=...)``
and to ``add_weight``; gpuaccel's data-parallel trainer averages gradients itself (an all-reduce
in C++), so the values are accepted for compatibility and compare equal to TF's.
"""
import enum

__all__ = ["VariableAggregation", "VariableSynchronization"]


class VariableAggregation(enum.Enum):
    """How replicas' updates to a variable combine (TF's VariableAggregationV2)."""
    NONE = 0
    SUM = 1
    MEAN = 2
    ONLY_FIRST_REPLICA = 3


class VariableSynchronization(enum.Enum):
    """When a distributed variable is synchronized."""
    AUTO = 0
    NONE = 1
    ON_WRITE = 2
    ON_READ = 3
