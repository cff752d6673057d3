"""``torch.profiler`` of the PyTorch face, on gpuaccel's profiler (docs/profiling.md).

    with torch.profiler.profile(activities=[ProfilerActivity.CPU]) as prof:
        with torch.profiler.record_function("forward"):
            model(x)
    print(prof.key_averages().table(sort_by="cpu_time_total", row_limit=10))
"""
from ._function_events import DeviceType, EventList, FunctionEvent, FunctionEventAvg
from ._profile import (ProfilerActivity, profile, record_function, supported_activities,
                       tensorboard_trace_handler)
from ._schedule import ProfilerAction, schedule

__all__ = ["ProfilerActivity", "ProfilerAction", "DeviceType", "profile", "record_function",
           "schedule", "supported_activities", "tensorboard_trace_handler", "EventList",
           "FunctionEvent", "FunctionEventAvg"]
