"""``keras.utils.Config``: a dictionary whose keys are also attributes, which can be frozen.

Keras 3 offers it for experiment settings (``config = Config(learning_rate=0.1); config.epochs
= 5; config.freeze()``); code that builds its hyper-parameters with it runs unchanged. The rules
are Keras's: the Config's own methods and properties stay attributes, every other attribute
set is a key; a frozen Config refuses every change with a ValueError; an unknown attribute is an
AttributeError that suggests the closest key; iteration gives the keys sorted.
"""
import copy
import difflib
import json

__all__ = ["Config"]


class Config:
    """``Config(**kwargs)``: the keyword arguments are the first keys."""

    _own_names = None  # the attribute names that are not keys (set at the end of __init__)

    def __init__(self, **kwargs):
        self._config = kwargs
        self._frozen = False
        self._own_names = set(dir(self))

    @property
    def frozen(self):
        """Whether changes are refused."""
        return self._frozen

    def freeze(self):
        """Refuse every later change (until ``unfreeze``)."""
        self._frozen = True

    def unfreeze(self):
        self._frozen = False

    def _refuse_if_frozen(self):
        if self._frozen:
            raise ValueError("Cannot mutate attribute(s) because the config is frozen.")

    def as_dict(self):
        """A shallow copy of the keys and values."""
        return copy.copy(self._config)

    def to_json(self):
        return json.dumps(self._config)

    def keys(self):
        return self._config.keys()

    def values(self):
        return self._config.values()

    def items(self):
        return self._config.items()

    def get(self, keyname, value=None):
        return self._config.get(keyname, value)

    def pop(self, *args):
        self._refuse_if_frozen()
        return self._config.pop(*args)

    def update(self, *args, **kwargs):
        self._refuse_if_frozen()
        return self._config.update(*args, **kwargs)

    def __setattr__(self, name, value):
        own = object.__getattribute__(self, "_own_names")
        if own is None or name in own:
            object.__setattr__(self, name, value)
            return
        self._refuse_if_frozen()
        self._config[name] = value

    def __getattr__(self, name):  # only called for names that are not attributes
        config = object.__getattribute__(self, "_config")
        if name in config:
            return config[name]
        message = f"Unknown attribute: '{name}'."
        closest = difflib.get_close_matches(name, config.keys(), n=1, cutoff=0.7)
        if closest:
            message += f" Did you mean '{closest[0]}'?"
        raise AttributeError(message)

    def __setitem__(self, key, item):
        self._refuse_if_frozen()
        self._config[key] = item

    def __getitem__(self, key):
        return self._config[key]

    def __delitem__(self, key):
        self._refuse_if_frozen()
        del self._config[key]

    def __contains__(self, item):
        return item in self._config

    def __iter__(self):
        return iter(sorted(self._config.keys()))

    def __len__(self):
        return len(self._config)

    def __repr__(self):
        return f"<Config {self._config}>"
