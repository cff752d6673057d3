"""``torch.autograd.profiler``: PyTorch's older profiler API, the same recorder and events.

Older tutorials write ``with torch.autograd.profiler.profile(use_cuda=True) as prof:`` and
``prof.table()``; it is ``torch.profiler.profile`` without a schedule, with ``use_cuda`` and
``use_cpu`` in place of ``activities`` and an ``enabled`` switch.
"""
from ._function_events import EventList, FunctionEvent, FunctionEventAvg
from ._profile import ProfilerActivity, record_function
from ._profile import profile as _profile

__all__ = ["profile", "record_function", "EventList", "FunctionEvent", "FunctionEventAvg"]


class profile(_profile):
    """``torch.autograd.profiler.profile``: profiles the block when ``enabled``."""

    def __init__(self, enabled=True, *, use_cuda=False, record_shapes=False, with_flops=False,
                 profile_memory=False, with_stack=False, with_modules=False, use_kineto=False,
                 use_cpu=True, experimental_config=None):
        activities = ({ProfilerActivity.CPU} if use_cpu else set()) | (
            {ProfilerActivity.CUDA} if use_cuda else set())
        super().__init__(activities=activities, record_shapes=record_shapes,
                         profile_memory=profile_memory, with_stack=with_stack,
                         with_flops=with_flops, with_modules=with_modules)
        self.enabled = bool(enabled)

    def start(self):
        if self.enabled:
            super().start()

    def stop(self):
        if self.enabled:
            super().stop()

    @property
    def function_events(self):
        return self.events()

    def table(self, sort_by=None, row_limit=100, max_src_column_width=75,
              max_name_column_width=55, max_shapes_column_width=80, header=None,
              top_level_events_only=False):
        return self.events().table(sort_by, row_limit, max_src_column_width,
                                   max_name_column_width, max_shapes_column_width, header,
                                   top_level_events_only)

    @property
    def self_cpu_time_total(self):
        return self.events().self_cpu_time_total
