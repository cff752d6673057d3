"""``torch.optim.lr_scheduler``: learning rates that change with each ``scheduler.step()`` (one
per epoch, after the optimizer's steps), with PyTorch 1.13's rules. Each scheduler says, from
the group's current rate, what the next one is (``get_lr``), as PyTorch's chainable forms do,
so the rates equal PyTorch's to rounding."""
import math


class LRScheduler:
    def __init__(self, optimizer, last_epoch=-1, verbose=False):
        if last_epoch != -1:
            raise ValueError("resuming a scheduler with last_epoch is not supported; use "
                             "load_state_dict(scheduler.state_dict())")
        self.optimizer = optimizer
        for group in optimizer.param_groups:
            group.setdefault("initial_lr", group["lr"])
        self.base_lrs = [group["initial_lr"] for group in optimizer.param_groups]
        self.last_epoch = last_epoch
        self._step_count = 0
        self.step()

    def get_lr(self):
        raise NotImplementedError(f"{type(self).__name__} does not define get_lr")

    def get_last_lr(self):
        return list(self._last_lr)

    def step(self):
        self._step_count += 1
        self.last_epoch += 1
        for group, lr in zip(self.optimizer.param_groups, self.get_lr()):
            group["lr"] = lr
        self._last_lr = [group["lr"] for group in self.optimizer.param_groups]

    def state_dict(self):
        return {k: v for k, v in self.__dict__.items() if k not in ("optimizer", "lr_lambdas")}

    def load_state_dict(self, state_dict):
        self.__dict__.update(state_dict)

    def _current(self):
        return [group["lr"] for group in self.optimizer.param_groups]


_LRScheduler = LRScheduler  # 1.13's name


class StepLR(LRScheduler):
    """Multiplies the rate by ``gamma`` every ``step_size`` epochs."""

    def __init__(self, optimizer, step_size, gamma=0.1, last_epoch=-1, verbose=False):
        self.step_size, self.gamma = int(step_size), float(gamma)
        super().__init__(optimizer, last_epoch, verbose)

    def get_lr(self):
        if self.last_epoch == 0 or self.last_epoch % self.step_size != 0:
            return self._current()
        return [lr * self.gamma for lr in self._current()]


class MultiStepLR(LRScheduler):
    """Multiplies the rate by ``gamma`` at each epoch listed in ``milestones``."""

    def __init__(self, optimizer, milestones, gamma=0.1, last_epoch=-1, verbose=False):
        self.milestones, self.gamma = sorted(int(m) for m in milestones), float(gamma)
        super().__init__(optimizer, last_epoch, verbose)

    def get_lr(self):
        times = self.milestones.count(self.last_epoch)
        return [lr * self.gamma ** times for lr in self._current()]


class ExponentialLR(LRScheduler):
    """Multiplies the rate by ``gamma`` every epoch."""

    def __init__(self, optimizer, gamma, last_epoch=-1, verbose=False):
        self.gamma = float(gamma)
        super().__init__(optimizer, last_epoch, verbose)

    def get_lr(self):
        if self.last_epoch == 0:
            return self._current()
        return [lr * self.gamma for lr in self._current()]


class LambdaLR(LRScheduler):
    """The initial rate times ``lr_lambda(epoch)`` (one function, or one per group)."""

    def __init__(self, optimizer, lr_lambda, last_epoch=-1, verbose=False):
        groups = len(optimizer.param_groups)
        functions = list(lr_lambda) if isinstance(lr_lambda, (list, tuple)) else \
            [lr_lambda] * groups
        if len(functions) != groups:
            raise ValueError(f"Expected {groups} lr_lambdas, but got {len(functions)}")
        self.lr_lambdas = functions
        super().__init__(optimizer, last_epoch, verbose)

    def get_lr(self):
        return [base * f(self.last_epoch) for base, f in zip(self.base_lrs, self.lr_lambdas)]


class CosineAnnealingLR(LRScheduler):
    """Half a cosine from the initial rate down to ``eta_min`` over ``T_max`` epochs (and back
    up after, as PyTorch's recursive form does)."""

    def __init__(self, optimizer, T_max, eta_min=0, last_epoch=-1, verbose=False):
        self.T_max, self.eta_min = int(T_max), float(eta_min)
        super().__init__(optimizer, last_epoch, verbose)

    def get_lr(self):
        epoch, period, low = self.last_epoch, self.T_max, self.eta_min
        if epoch == 0:
            return self._current()
        if (epoch - 1 - period) % (2 * period) == 0:
            return [lr + (base - low) * (1 - math.cos(math.pi / period)) / 2
                    for lr, base in zip(self._current(), self.base_lrs)]
        ratio = (1 + math.cos(math.pi * epoch / period)) / \
            (1 + math.cos(math.pi * (epoch - 1) / period))
        return [ratio * (lr - low) + low for lr in self._current()]
