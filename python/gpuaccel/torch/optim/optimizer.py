"""``torch.optim.Optimizer``: parameter groups, per-parameter state, zero_grad and the
state_dict format of PyTorch 1.13 (parameters numbered in group order), which the optimizers
here (SGD, Adam, AdamW) build on. Updates run in place under no_grad with gpuaccel's tensor ops.
"""
import collections
import copy

from ..._tensor import Tensor, no_grad
from ..._torch_functions import typename
from ..._torch_ops import enable_grad
from .._module import zero_gradients


class _RequiredParameter:
    def __repr__(self):
        return "<required parameter>"


required = _RequiredParameter()


class Optimizer:
    def __init__(self, params, defaults):
        self.defaults = defaults
        self.state = collections.defaultdict(dict)
        self.param_groups = []
        if isinstance(params, Tensor):
            raise TypeError("params argument given to the optimizer should be an iterable of "
                            "Tensors or dicts, but got " + typename(params))
        groups = list(params)
        if not groups:
            raise ValueError("optimizer got an empty parameter list")
        if not isinstance(groups[0], dict):
            groups = [{"params": groups}]
        for group in groups:
            self.add_param_group(group)

    def __getstate__(self):
        return {"defaults": self.defaults, "state": self.state,
                "param_groups": self.param_groups}

    def __repr__(self):
        lines = [f"{type(self).__name__} ("]
        for index, group in enumerate(self.param_groups):
            if index:
                lines.append("")  # PyTorch prints a blank line between groups
            lines.append(f"Parameter Group {index}")
            lines += [f"    {key}: {group[key]}" for key in sorted(group) if key != "params"]
        return "\n".join(lines) + "\n)"

    def add_param_group(self, param_group):
        if not isinstance(param_group, dict):
            raise TypeError(f"param group must be a dict, got {type(param_group).__name__}")
        params = param_group["params"]
        if isinstance(params, set):
            raise TypeError("optimizer parameters need to be organized in ordered collections, "
                            "but the ordering of tensors in sets will change between runs. "
                            "Please use a list instead.")
        params = [params] if isinstance(params, Tensor) else list(params)
        for param in params:
            if not isinstance(param, Tensor):
                raise TypeError("optimizer can only optimize Tensors, but one of the params is "
                                + typename(param))
            if not param.is_leaf:
                raise ValueError("can't optimize a non-leaf Tensor")
        group = {"params": params}
        for name, default in self.defaults.items():
            if default is required and name not in param_group:
                raise ValueError(f"parameter group didn't specify a value of required "
                                 f"optimization parameter {name}")
            group[name] = param_group.get(name, default)
        group.update({k: v for k, v in param_group.items() if k not in group})
        seen = {id(p) for g in self.param_groups for p in g["params"]}
        if any(id(p) in seen for p in params) or len({id(p) for p in params}) != len(params):
            raise ValueError("some parameters appear in more than one parameter group")
        self.param_groups.append(group)

    def zero_grad(self, set_to_none=False):
        """PyTorch 1.13's default keeps the gradients, as zeros (set_to_none=False)."""
        zero_gradients((p for group in self.param_groups for p in group["params"]), set_to_none)

    def step(self, closure=None):
        """Evaluates ``closure`` (with gradients on) if given, updates every parameter that
        has a gradient, and returns the closure's loss."""
        loss = None
        if closure is not None:
            with enable_grad():
                loss = closure()
        with no_grad():
            for group in self.param_groups:
                for param in group["params"]:
                    if param.grad is not None:
                        self._update(param, param.grad, self.state[param], group)
        return loss

    def _update(self, param, grad, state, group):
        raise NotImplementedError(f"{type(self).__name__} does not define its update")

    # ---- checkpoints ----

    def state_dict(self):
        """{"state": {index: state}, "param_groups": [group with "params": [indices]]}, the
        parameters numbered in group order (PyTorch's layout)."""
        index_of, groups = {}, []
        for group in self.param_groups:
            packed = {k: v for k, v in group.items() if k != "params"}
            for param in group["params"]:
                index_of.setdefault(id(param), len(index_of))
            packed["params"] = [index_of[id(p)] for p in group["params"]]
            groups.append(packed)
        state = {index_of[id(p)]: s for p, s in self.state.items() if id(p) in index_of}
        return {"state": state, "param_groups": groups}

    def load_state_dict(self, state_dict):
        groups = state_dict["param_groups"]
        if len(groups) != len(self.param_groups):
            raise ValueError("loaded state dict has a different number of parameter groups")
        for ours, theirs in zip(self.param_groups, groups):
            if len(ours["params"]) != len(theirs["params"]):
                raise ValueError("loaded state dict contains a parameter group that doesn't "
                                 "match the size of optimizer's group")
        param_of = {index: param for ours, theirs in zip(self.param_groups, groups)
                    for index, param in zip(theirs["params"], ours["params"])}
        self.state = collections.defaultdict(dict)
        for index, values in state_dict["state"].items():
            param = param_of.get(int(index))
            if param is None:
                continue
            self.state[param] = {k: _state_value_for(param, k, v) for k, v in values.items()}
        for ours, theirs in zip(self.param_groups, groups):
            ours.update({k: copy.deepcopy(v) for k, v in theirs.items() if k != "params"})


def _state_value_for(param, key, value):
    """A copy of a saved state value on ``param``'s device (and, for the moment tensors, its
    dtype; ``step`` keeps its own)."""
    if not isinstance(value, Tensor):
        return copy.deepcopy(value)
    if key == "step":
        return value.clone()
    return value.to(device=param.device, dtype=param.dtype).clone()
