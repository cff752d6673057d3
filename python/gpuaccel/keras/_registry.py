"""The ``serialize``/``deserialize``/``get`` that Keras gives each family of configurable
objects (constraints, regularizers, initializers, learning-rate schedules).

Why: those families look their classes up the same way (Keras's
``serialize_keras_object``/``deserialize_keras_object`` plus each module's ``get``); only the
family's name in the error texts, its Keras module, its base class and its table of names
differ. Each family's module keeps its public functions and delegates to one
``KerasObjectRegistry``. (Activations are plain functions serialized by name, so
activations.py keeps its own.)
"""

import dataclasses

__all__ = ["KerasObjectRegistry"]


@dataclasses.dataclass(frozen=True, eq=False)
class KerasObjectRegistry:
    """One family's lookup.

    ``kind``: the family's word in Keras's errors ("constraint", "decay"); ``module``: the
    Keras module written into a serialized dict; ``base``: the class ``serialize`` accepts;
    ``by_name``: Keras's names (class names and their aliases) -> class; ``unknown_hint``:
    text added in parentheses when ``deserialize`` meets an unknown class name, with
    ``{names}`` standing for the sorted accepted names; ``accepts_names``: whether
    ``deserialize`` takes a bare name as ``get`` does; ``resolve_name``: the family's own
    name lookup for such a bare name where its ``get`` is not this one (losses and metrics,
    whose names have aliases and depend on the compiled loss).
    """

    kind: str
    module: str
    base: type
    by_name: dict
    unknown_hint: str = None
    accepts_names: bool = True
    resolve_name: object = None

    def _not_interpreted(self, identifier, hint=None):
        message = f"Could not interpret {self.kind} identifier: {identifier}"
        if hint:
            message += f" ({hint.format(names=sorted(self.by_name))})"
        return ValueError(message)

    def serialize(self, obj):
        """Keras's dict: module, class_name, config, registered_name."""
        if not isinstance(obj, self.base):
            base = self.base.__name__
            article = "an" if base[:1] in "AEIOU" else "a"
            raise TypeError(f"serialize() takes {article} {base}, received {obj!r}")
        return {"module": self.module, "class_name": type(obj).__name__,
                "config": obj.get_config(), "registered_name": None}

    def deserialize(self, config, custom_objects=None):
        """An object from Keras's dict (``class_name`` and ``config``), or from a name where
        the family accepts one; ``custom_objects`` maps further class names to classes."""
        if self.accepts_names and isinstance(config, str):
            return (self.resolve_name or self.get)(config)
        if not isinstance(config, dict) or "class_name" not in config:
            raise self._not_interpreted(config)
        name = config["class_name"]
        cls = (custom_objects or {}).get(name) or self.by_name.get(name)
        if cls is None:
            raise self._not_interpreted(name, self.unknown_hint)
        return cls.from_config(dict(config.get("config") or {}))

    def get(self, identifier):
        """None -> None; a name -> a new instance with the defaults; a dict -> deserialize;
        an object or other callable -> itself (a class -> an instance)."""
        if identifier is None:
            return None
        if isinstance(identifier, dict):
            return self.deserialize(identifier)
        obj = self.by_name.get(identifier) if isinstance(identifier, str) else identifier
        if callable(obj):
            return obj() if isinstance(obj, type) else obj
        raise self._not_interpreted(identifier)
