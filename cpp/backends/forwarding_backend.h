// A Backend that passes every call to another one. Decorators (call counters in tests, the
// fake capture-capable backend of the step-capture tests) derive from it and override only the
// calls they watch, so no decorator repeats the whole interface.
#pragma once

#include "backends/backend.h"

namespace gpuaccel {

class ForwardingBackend : public Backend {
 public:
  // `inner` must outlive the decorator.
  explicit ForwardingBackend(Backend& inner) : inner_(inner) {}
  Backend& inner() const { return inner_; }
  const char* name() const override { return inner_.name(); }

#define GPUACCEL_BACKEND_KERNEL(NAME, PARAMS, ARGS, TRACE) \
  void NAME PARAMS override { inner_.NAME ARGS; }
#define GPUACCEL_BACKEND_QUERY(TYPE, NAME, PARAMS, ARGS) \
  TYPE NAME PARAMS override { return inner_.NAME ARGS; }
#include "backends/backend_ops.def"

  // The device runtime.
  void copy_from_host(const void* host, const TensorView& dst) override {
    inner_.copy_from_host(host, dst);
  }
  void copy_to_host(const TensorView& src, void* host) override { inner_.copy_to_host(src, host); }
  void synchronize() override { inner_.synchronize(); }

  EventHandle create_event() override { return inner_.create_event(); }
  void destroy_event(EventHandle event) override { inner_.destroy_event(event); }
  void record_event(EventHandle event, Stream stream) override { inner_.record_event(event, stream); }
  void stream_wait_event(Stream waiter, EventHandle event) override {
    inner_.stream_wait_event(waiter, event);
  }
  void host_wait_event(EventHandle event) override { inner_.host_wait_event(event); }
  bool event_completed(EventHandle event) override { return inner_.event_completed(event); }
  void copy_from_host_on(Stream stream, const void* host, const TensorView& dst) override {
    inner_.copy_from_host_on(stream, host, dst);
  }

  bool supports_graph_capture() const override { return inner_.supports_graph_capture(); }
  void begin_capture() override { inner_.begin_capture(); }
  GraphHandle end_capture() override { return inner_.end_capture(); }
  void replay(GraphHandle graph) override { inner_.replay(graph); }
  void destroy_graph(GraphHandle graph) override { inner_.destroy_graph(graph); }
  void release_cached_memory() override { inner_.release_cached_memory(); }

 private:
  Backend& inner_;
};

}  // namespace gpuaccel
