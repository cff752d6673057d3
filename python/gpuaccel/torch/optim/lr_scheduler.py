"""``torch.optim.lr_scheduler.StepLR``: every ``step_size`` calls of ``step()`` (one per
epoch) the learning rate of each group is multiplied by ``gamma``."""


class StepLR:
    def __init__(self, optimizer, step_size, gamma=0.1, last_epoch=-1, verbose=False):
        self.optimizer, self.step_size, self.gamma = optimizer, int(step_size), float(gamma)
        for group in optimizer.param_groups:
            group.setdefault("initial_lr", group["lr"])
        self.base_lrs = [group["initial_lr"] for group in optimizer.param_groups]
        self.last_epoch = last_epoch
        self.step()

    def get_last_lr(self):
        return list(self._last_lr)

    def step(self):
        self.last_epoch += 1
        for group in self.optimizer.param_groups:
            if self.last_epoch != 0 and self.last_epoch % self.step_size == 0:
                group["lr"] = group["lr"] * self.gamma
        self._last_lr = [group["lr"] for group in self.optimizer.param_groups]

    def state_dict(self):
        return {k: v for k, v in self.__dict__.items() if k != "optimizer"}

    def load_state_dict(self, state_dict):
        self.__dict__.update(state_dict)
