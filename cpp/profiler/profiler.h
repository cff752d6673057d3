// The profiler's trace recorder: what every instrumented place in the runtime calls to say
// "this op / layer / copy / wait ran from t0 to t1 on this thread". It exists so a training run
// can be explained (where did the step time go?) without paying for it when nobody asks: off,
// each instrumented place costs one relaxed atomic load and a branch. On, each thread appends to
// its own bounded buffer (no cross-thread contention), names are `const char*` (string literals
// on hot paths; dynamic names interned once into a session-owned store), and stop() turns the
// buffers into columns that the Python exporters (TensorBoard profile, Chrome trace) read.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace gpuaccel::profiler {

// The numbering is shared with the Python exporters: never renumber, only append.
enum class EventKind : uint8_t {
  kOp = 0,                  // a backend op (kernel) executed/launched by the host
  kLayer = 1,               // a Keras layer's forward call
  kBackward = 2,            // one autograd node's backward
  kCopyHostToDevice = 3,
  kCopyDeviceToHost = 4,
  kCopyDeviceToDevice = 5,
  kInputWait = 6,           // consumer waiting for the input pipeline (prefetcher next())
  kInputProduce = 7,        // the pipeline producing one batch (prefetch thread)
  kOptimizer = 8,           // optimizer update of all variables
  kCollective = 9,
  kSynchronize = 10,        // waiting for a device (synchronize, blocking copy to host)
  kStep = 11,               // a training/test step marker (normally created from Python)
  kUser = 12,               // a gpuaccel.profiler.Trace scope from Python
  kMemory = 13,             // instant: allocation/free
  kDeviceKernel = 14,       // device-plane interval measured on the GPU
  kDeviceCopy = 15,         // device-plane interval measured on the GPU
};
constexpr int kEventKindCount = 16;
// "OP", "LAYER", ..., "DEVICE_COPY" (the Python enum's names).
const char* event_kind_name(EventKind kind);

constexpr int64_t kDefaultMaxEventsPerThread = int64_t{1} << 20;

namespace detail {
extern std::atomic<bool> g_enabled;
}  // namespace detail

// True while a session records. The only thing instrumented code pays when profiling is off.
inline bool enabled() { return detail::g_enabled.load(std::memory_order_relaxed); }

// Starts a session (RuntimeError when one is active; ValueError when max_events_per_thread < 1).
// Installs the memory observer so allocations and frees become kMemory events.
void start(int64_t max_events_per_thread = kDefaultMaxEventsPerThread);

// The recorded session as columns of equal length, sorted by (thread, start_ns, -end_ns) so a
// parent comes before the events nested in it. Times are steady-clock ns since the session start.
struct Trace {
  struct Thread {
    std::string name;
    int64_t os_tid = 0;
  };
  std::vector<int64_t> start_ns, end_ns;
  std::vector<uint8_t> kind;
  std::vector<uint32_t> name, stats;  // indices into strings (stats 0: none)
  std::vector<int32_t> thread;        // index into threads; -1 for device-plane events
  std::vector<int32_t> device;        // -1: host
  std::vector<int32_t> stream;        // -1: none
  std::vector<int64_t> correlation_id;  // 0: none
  std::vector<int64_t> value, in_use_bytes, reserved_bytes;
  std::vector<std::string> strings;   // strings[0] == ""
  std::vector<Thread> threads;
  int64_t session_start_unix_ns = 0;
  int64_t session_stop_unix_ns = 0;
  int64_t dropped_events = 0;

  size_t size() const { return start_ns.size(); }
};

// Ends the session (RuntimeError when none is active) and returns what it recorded. Events still
// being recorded by other threads when stop() runs are dropped, never torn.
Trace stop();

bool is_active();
// Steady-clock ns since the session start (the clock of Trace::start_ns); 0 when inactive.
int64_t now_ns();

// Names the calling thread in traces (kept across sessions). Default: "thread <os tid>".
void set_current_thread_name(std::string name);

// A stable copy of `name` owned by the active session (same pointer for equal strings), for
// names that are not string literals. Returns "" when no session is active.
const char* intern(const std::string& name);

// Caches the interned copy of an owner's std::string name for the current session, so a layer
// (or anything long-lived) interns its name once per session, not once per call.
class CachedName {
 public:
  const char* get(const std::string& name);

 private:
  std::atomic<uint64_t> session_{0};
  std::atomic<const char*> name_{nullptr};
};

// One complete event on the calling thread, with times from now_ns()'s clock.
struct EventArgs {
  int64_t value = 0;
  const char* stats = nullptr;  // "key=value;key=value" (literal or interned), or null
  int32_t device = -1;
  int32_t stream = -1;
  int64_t correlation_id = 0;
  int64_t in_use_bytes = 0;
  int64_t reserved_bytes = 0;
};
void record_complete(EventKind kind, const char* name, int64_t start_ns, int64_t end_ns,
                     const EventArgs& args = {});
// An instant event (start == end == now) on the calling thread.
void record_instant(EventKind kind, const char* name, const EventArgs& args = {});
// A device-plane interval (thread -1), e.g. a kernel timed with CUDA events, on the session
// clock. Thread-safe; usually called from a session-stop hook.
void record_device_interval(EventKind kind, const char* name, int64_t start_ns, int64_t end_ns,
                            const EventArgs& args);

// A fresh correlation id (> 0) tying a host event to its device-plane interval.
int64_t next_correlation_id();

// The correlation id of the device work the calling thread is launching now (0: none); the
// tracing backend sets it around each GPU op so the CUDA backend can tag its device interval.
int64_t current_correlation_id();
// Sets it and returns the previous value.
int64_t exchange_current_correlation_id(int64_t id);

// The innermost open TraceScope's name on this thread (null when none), so memory events can
// say which op they happened in.
const char* current_scope_name();

// Records [construction, destruction) on the current thread when a session is active at
// construction. `name` must outlive the session (a literal, or intern()'s result).
class TraceScope {
 public:
  TraceScope(EventKind kind, const char* name, int64_t value = 0) {
    if (enabled()) begin(kind, name, value);
  }
  ~TraceScope() {
    if (session_ != 0) end();
  }
  TraceScope(const TraceScope&) = delete;
  TraceScope& operator=(const TraceScope&) = delete;

  // Extra fields for the event, set while the scope is open (no-ops when not recording).
  bool recording() const { return session_ != 0; }
  void set_device(int32_t device) { args_.device = device; }
  void set_stream(int32_t stream) { args_.stream = stream; }
  void set_correlation_id(int64_t id) { args_.correlation_id = id; }
  void set_stats(const char* stats) { args_.stats = stats; }
  void set_value(int64_t value) { args_.value = value; }

 private:
  void begin(EventKind kind, const char* name, int64_t value);
  void end();

  uint64_t session_ = 0;
  const char* name_ = nullptr;
  const char* outer_ = nullptr;
  int64_t start_ns_ = 0;
  EventArgs args_;
  EventKind kind_ = EventKind::kOp;
};

// Scopes opened and closed by separate calls (Python's gpuaccel.profiler.Trace): a per-thread
// stack. push_scope is a no-op when inactive; pop_scope with an empty stack is a no-op; a scope
// begun in an earlier session is discarded.
void push_scope(EventKind kind, const char* name, int64_t value = 0, const char* stats = nullptr);
void pop_scope();

// Hooks run at session start (after enabling) and at stop (before collecting, while device
// intervals may still be recorded). The CUDA backend uses them to time kernels with events.
struct SessionHooks {
  std::function<void()> on_start;
  std::function<void()> on_stop;
};
// Returns an id for remove_session_hooks.
int add_session_hooks(SessionHooks hooks);
void remove_session_hooks(int id);

// Converts a TF device name ("/job:localhost/replica:0/task:0/device:GPU:1") to the trace's
// device index: N for GPU:N, -1 otherwise.
int32_t device_index_from_name(const std::string& device_name);

// What one TraceScope (the unit placed around every op) costs, in ns per scope, with profiling
// off and on. Runs `iterations` scopes each way in a short session of its own: ValueError when
// iterations < 1, RuntimeError while a session is active. For the overhead benchmark.
struct ScopeCost {
  double off_ns = 0;
  double on_ns = 0;
  int64_t recorded_events = 0;  // what the "on" run recorded (iterations unless some dropped)
};
ScopeCost measure_scope_cost(int64_t iterations);

}  // namespace gpuaccel::profiler
