// The recorder behind profiler.h. Each thread appends to its own buffer (a shared_ptr held both
// by a thread_local and by the session, so events outlive the thread that recorded them); a
// per-buffer mutex is only ever contended by stop(), which closes every buffer before reading
// it, so an event in flight during stop() is dropped rather than torn.
#include "profiler/profiler.h"

#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <numeric>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include "core/errors.h"
#include "memory/allocation_observer.h"

namespace gpuaccel::profiler {

namespace detail {
std::atomic<bool> g_enabled{false};
}  // namespace detail

namespace {

constexpr const char* kOpName = "profiler";

struct Event {
  int64_t start_ns = 0;
  int64_t end_ns = 0;
  const char* name = nullptr;
  const char* stats = nullptr;
  const char* op = nullptr;    // kMemory: the innermost scope when it happened
  const char* pool = nullptr;  // kMemory: the pool's (interned) name
  int64_t value = 0;
  int64_t in_use_bytes = 0;
  int64_t reserved_bytes = 0;
  int64_t correlation_id = 0;
  int32_t device = -1;
  int32_t stream = -1;
  EventKind kind = EventKind::kOp;
};

// Events in fixed-size chunks: appending never moves recorded events (no reallocation spikes
// inside a traced step), and memory grows only as events arrive.
class EventChunks {
 public:
  static constexpr size_t kChunk = 4096;
  size_t size() const { return size_; }
  void push_back(const Event& e) {
    if (size_ % kChunk == 0) chunks_.emplace_back(new Event[kChunk]);
    chunks_.back()[size_ % kChunk] = e;
    ++size_;
  }
  template <typename F>
  void for_each(F&& f) const {
    for (size_t i = 0; i < size_; ++i) f(chunks_[i / kChunk][i % kChunk]);
  }

 private:
  std::vector<std::unique_ptr<Event[]>> chunks_;
  size_t size_ = 0;
};

struct ThreadBuffer {
  std::mutex mutex;
  EventChunks events;
  int64_t capacity = 0;
  int64_t dropped = 0;
  bool closed = false;
  std::string name;
  int64_t os_tid = 0;
  uint64_t session_id = 0;
};

struct Session {
  uint64_t id = 0;
  int64_t capacity = 0;
  int64_t start_unix_ns = 0;
  std::mutex mutex;  // guards the members below
  std::vector<std::shared_ptr<ThreadBuffer>> buffers;
  std::vector<Event> device_events;
  std::unordered_set<std::string> interned;
};

std::mutex g_mutex;                    // guards g_session and session start/stop
std::shared_ptr<Session> g_session;    // null when inactive
bool g_stopping = false;               // stop() is running its hooks
std::atomic<uint64_t> g_active_session{0};  // the active session's id; 0 when inactive
std::atomic<int64_t> g_start_steady_ns{0};
uint64_t g_next_session_id = 1;
std::atomic<int64_t> g_next_correlation_id{1};

// Never destroyed: backends that live until exit remove their hooks from static destructors.
std::mutex& hooks_mutex() {
  static auto* m = new std::mutex();
  return *m;
}
std::map<int, SessionHooks>& hooks_map() {
  static auto* h = new std::map<int, SessionHooks>();
  return *h;
}
int g_next_hook_id = 1;

thread_local std::shared_ptr<ThreadBuffer> tl_buffer;
thread_local std::string tl_thread_name;
thread_local const char* tl_innermost = nullptr;
thread_local int64_t tl_correlation_id = 0;

struct PyScope {
  uint64_t session;
  EventKind kind;
  const char* name;
  int64_t value;
  const char* stats;
  int64_t start_ns;
  const char* outer;
};
thread_local std::vector<PyScope> tl_py_stack;

int64_t steady_now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

int64_t unix_now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

int64_t relative_now_ns() { return steady_now_ns() - g_start_steady_ns.load(std::memory_order_relaxed); }

int64_t os_tid() { return static_cast<int64_t>(::syscall(SYS_gettid)); }

std::shared_ptr<Session> active_session() {
  std::lock_guard<std::mutex> lock(g_mutex);
  return g_session;
}

// The calling thread's buffer for `session_id`, registering one on first use; null when that
// session is no longer active.
ThreadBuffer* buffer_for(uint64_t session_id) {
  ThreadBuffer* b = tl_buffer.get();
  if (b != nullptr && b->session_id == session_id) return b;
  std::shared_ptr<Session> session = active_session();
  if (!session || session->id != session_id) return nullptr;
  auto buffer = std::make_shared<ThreadBuffer>();
  buffer->capacity = session->capacity;
  buffer->os_tid = os_tid();
  buffer->name = tl_thread_name.empty() ? "thread " + std::to_string(buffer->os_tid) : tl_thread_name;
  buffer->session_id = session_id;
  {
    std::lock_guard<std::mutex> lock(session->mutex);
    session->buffers.push_back(buffer);
  }
  tl_buffer = std::move(buffer);
  return tl_buffer.get();
}

void push_event(uint64_t session_id, const Event& e) {
  ThreadBuffer* b = buffer_for(session_id);
  if (b == nullptr) return;
  std::lock_guard<std::mutex> lock(b->mutex);
  if (b->closed) return;
  if (static_cast<int64_t>(b->events.size()) >= b->capacity) {
    ++b->dropped;
    return;
  }
  b->events.push_back(e);
}

Event make_event(EventKind kind, const char* name, int64_t start_ns, int64_t end_ns,
                 const EventArgs& args) {
  Event e;
  e.kind = kind;
  e.name = name;
  e.start_ns = start_ns;
  e.end_ns = end_ns;
  e.stats = args.stats;
  e.value = args.value;
  e.in_use_bytes = args.in_use_bytes;
  e.reserved_bytes = args.reserved_bytes;
  e.correlation_id = args.correlation_id;
  e.device = args.device;
  e.stream = args.stream;
  return e;
}

const char* intern_in(Session& session, const std::string& name) {
  std::lock_guard<std::mutex> lock(session.mutex);
  return session.interned.insert(name).first->c_str();
}

// Per-thread memo of the last pool and device names seen by the memory observer, so an
// allocation interns nothing and parses nothing in the common case.
struct MemoryNameCache {
  uint64_t session = 0;
  std::string pool;
  const char* pool_interned = nullptr;
  std::string device;
  int32_t device_index = -1;
};
thread_local MemoryNameCache tl_memory_names;

void on_allocation(const AllocationEvent& ev) {
  if (ev.kind != AllocationEventKind::kAllocate && ev.kind != AllocationEventKind::kDeallocate) {
    return;
  }
  if (!enabled()) return;
  const uint64_t session_id = g_active_session.load(std::memory_order_acquire);
  if (session_id == 0) return;
  MemoryNameCache& cache = tl_memory_names;
  static const std::string kNoPool;
  const std::string& pool = ev.pool ? *ev.pool : kNoPool;
  if (cache.session != session_id || cache.pool_interned == nullptr || cache.pool != pool) {
    std::shared_ptr<Session> session = active_session();
    if (!session || session->id != session_id) return;
    cache.session = session_id;
    cache.pool = pool;
    cache.pool_interned = intern_in(*session, pool);
    cache.device.clear();
    cache.device_index = -1;
  }
  if (ev.device != nullptr && cache.device != *ev.device) {
    cache.device = *ev.device;
    cache.device_index = device_index_from_name(cache.device);
  }
  Event e;
  e.kind = EventKind::kMemory;
  const bool alloc = ev.kind == AllocationEventKind::kAllocate;
  e.name = alloc ? "allocate" : "deallocate";
  e.start_ns = e.end_ns = relative_now_ns();
  e.value = alloc ? static_cast<int64_t>(ev.bytes) : -static_cast<int64_t>(ev.bytes);
  e.in_use_bytes = ev.allocated_after;
  e.reserved_bytes = ev.reserved_after;
  e.device = cache.device_index;
  e.op = tl_innermost;
  e.pool = cache.pool_interned;
  push_event(session_id, e);
}

std::vector<SessionHooks> hooks_snapshot() {
  std::lock_guard<std::mutex> lock(hooks_mutex());
  std::vector<SessionHooks> out;
  for (const auto& entry : hooks_map()) out.push_back(entry.second);
  return out;
}

// Assigns string ids: pointers first (literals repeat), then contents (dedup across pointers).
class StringTable {
 public:
  explicit StringTable(std::vector<std::string>& strings) : strings_(strings) {
    strings_.assign(1, std::string());
    by_text_.emplace(std::string(), 0);
  }
  uint32_t id(const char* s) {
    if (s == nullptr || *s == '\0') return 0;
    auto it = by_ptr_.find(s);
    if (it != by_ptr_.end()) return it->second;
    const uint32_t v = id(std::string(s));
    by_ptr_.emplace(s, v);
    return v;
  }
  uint32_t id(const std::string& s) {
    auto it = by_text_.find(s);
    if (it != by_text_.end()) return it->second;
    const uint32_t v = static_cast<uint32_t>(strings_.size());
    strings_.push_back(s);
    by_text_.emplace(s, v);
    return v;
  }

 private:
  std::vector<std::string>& strings_;
  std::unordered_map<const char*, uint32_t> by_ptr_;
  std::unordered_map<std::string, uint32_t> by_text_;
};

Trace collect(Session& session, int64_t stop_unix_ns) {
  Trace t;
  t.session_start_unix_ns = session.start_unix_ns;
  t.session_stop_unix_ns = stop_unix_ns;
  struct Ref {
    int32_t thread;
    const Event* e;
  };
  std::vector<EventChunks> per_thread;
  std::vector<Event> device_events;
  {
    std::lock_guard<std::mutex> lock(session.mutex);
    for (const auto& b : session.buffers) {
      std::lock_guard<std::mutex> block(b->mutex);
      b->closed = true;
      per_thread.push_back(std::move(b->events));
      b->events = {};
      t.dropped_events += b->dropped;
      t.threads.push_back({b->name, b->os_tid});
    }
    device_events = std::move(session.device_events);
  }
  std::vector<Ref> refs;
  for (const Event& e : device_events) refs.push_back({-1, &e});
  for (size_t i = 0; i < per_thread.size(); ++i) {
    per_thread[i].for_each([&](const Event& e) { refs.push_back({static_cast<int32_t>(i), &e}); });
  }
  std::stable_sort(refs.begin(), refs.end(), [](const Ref& a, const Ref& b) {
    if (a.thread != b.thread) return a.thread < b.thread;
    if (a.e->start_ns != b.e->start_ns) return a.e->start_ns < b.e->start_ns;
    return a.e->end_ns > b.e->end_ns;
  });
  const size_t n = refs.size();
  t.start_ns.reserve(n); t.end_ns.reserve(n); t.kind.reserve(n); t.name.reserve(n);
  t.stats.reserve(n); t.thread.reserve(n); t.device.reserve(n); t.stream.reserve(n);
  t.correlation_id.reserve(n); t.value.reserve(n); t.in_use_bytes.reserve(n);
  t.reserved_bytes.reserve(n);
  StringTable strings(t.strings);
  std::map<std::pair<const char*, const char*>, uint32_t> memory_stats;
  for (const Ref& r : refs) {
    const Event& e = *r.e;
    t.start_ns.push_back(e.start_ns);
    t.end_ns.push_back(e.end_ns);
    t.kind.push_back(static_cast<uint8_t>(e.kind));
    t.name.push_back(strings.id(e.name));
    uint32_t stats = 0;
    if (e.kind == EventKind::kMemory) {
      auto key = std::make_pair(e.op, e.pool);
      auto it = memory_stats.find(key);
      if (it == memory_stats.end()) {
        std::string text = std::string("op=") + (e.op ? e.op : "") + ";pool=" + (e.pool ? e.pool : "");
        if (e.stats != nullptr && *e.stats != '\0') text += std::string(";") + e.stats;
        it = memory_stats.emplace(key, strings.id(text)).first;
      }
      stats = it->second;
    } else {
      stats = strings.id(e.stats);
    }
    t.stats.push_back(stats);
    t.thread.push_back(r.thread);
    t.device.push_back(e.device);
    t.stream.push_back(e.stream);
    t.correlation_id.push_back(e.correlation_id);
    t.value.push_back(e.value);
    t.in_use_bytes.push_back(e.in_use_bytes);
    t.reserved_bytes.push_back(e.reserved_bytes);
  }
  return t;
}

}  // namespace

const char* event_kind_name(EventKind kind) {
  switch (kind) {
    case EventKind::kOp: return "OP";
    case EventKind::kLayer: return "LAYER";
    case EventKind::kBackward: return "BACKWARD";
    case EventKind::kCopyHostToDevice: return "COPY_HOST_TO_DEVICE";
    case EventKind::kCopyDeviceToHost: return "COPY_DEVICE_TO_HOST";
    case EventKind::kCopyDeviceToDevice: return "COPY_DEVICE_TO_DEVICE";
    case EventKind::kInputWait: return "INPUT_WAIT";
    case EventKind::kInputProduce: return "INPUT_PRODUCE";
    case EventKind::kOptimizer: return "OPTIMIZER";
    case EventKind::kCollective: return "COLLECTIVE";
    case EventKind::kSynchronize: return "SYNCHRONIZE";
    case EventKind::kStep: return "STEP";
    case EventKind::kUser: return "USER";
    case EventKind::kMemory: return "MEMORY";
    case EventKind::kDeviceKernel: return "DEVICE_KERNEL";
    case EventKind::kDeviceCopy: return "DEVICE_COPY";
  }
  return "UNKNOWN";
}

void start(int64_t max_events_per_thread) {
  if (max_events_per_thread < 1) {
    throw_value_error(kOpName, "max_events_per_thread must be at least 1, got " +
                                   std::to_string(max_events_per_thread));
  }
  {
    std::lock_guard<std::mutex> lock(g_mutex);
    if (g_session || g_stopping) {
      throw_runtime_error(kOpName, "a profiling session is already active; call "
                                   "gpuaccel.profiler.stop() first");
    }
    auto session = std::make_shared<Session>();
    session->id = g_next_session_id++;
    session->capacity = max_events_per_thread;
    g_start_steady_ns.store(steady_now_ns(), std::memory_order_relaxed);
    session->start_unix_ns = unix_now_ns();
    g_session = session;
    g_active_session.store(session->id, std::memory_order_release);
    detail::g_enabled.store(true, std::memory_order_release);
  }
  set_allocation_observer(&on_allocation);
  for (const SessionHooks& hooks : hooks_snapshot()) {
    if (hooks.on_start) hooks.on_start();
  }
}

Trace stop() {
  {
    std::lock_guard<std::mutex> lock(g_mutex);
    if (!g_session || g_stopping) throw_runtime_error(kOpName, "no profiling session is active");
    g_stopping = true;
  }
  // Hooks run while the session still records (device intervals land in it).
  std::exception_ptr hook_error;
  for (const SessionHooks& hooks : hooks_snapshot()) {
    try {
      if (hooks.on_stop) hooks.on_stop();
    } catch (...) {
      if (!hook_error) hook_error = std::current_exception();
    }
  }
  set_allocation_observer({});
  std::shared_ptr<Session> session;
  {
    std::lock_guard<std::mutex> lock(g_mutex);
    detail::g_enabled.store(false, std::memory_order_release);
    g_active_session.store(0, std::memory_order_release);
    session = std::move(g_session);
    g_session.reset();
    g_stopping = false;
  }
  const int64_t stop_unix = unix_now_ns();
  Trace trace = collect(*session, stop_unix);
  if (hook_error) std::rethrow_exception(hook_error);
  return trace;
}

bool is_active() { return g_active_session.load(std::memory_order_acquire) != 0; }

int64_t now_ns() { return is_active() ? relative_now_ns() : 0; }

void set_current_thread_name(std::string name) {
  tl_thread_name = std::move(name);
  ThreadBuffer* b = tl_buffer.get();
  if (b != nullptr) {
    std::lock_guard<std::mutex> lock(b->mutex);
    if (!b->closed) b->name = tl_thread_name;
  }
}

const char* intern(const std::string& name) {
  std::shared_ptr<Session> session = active_session();
  if (!session) return "";
  return intern_in(*session, name);
}

const char* CachedName::get(const std::string& name) {
  const uint64_t current = g_active_session.load(std::memory_order_acquire);
  if (current == 0) return "";
  if (session_.load(std::memory_order_acquire) == current) {
    return name_.load(std::memory_order_relaxed);
  }
  const char* interned = intern(name);
  name_.store(interned, std::memory_order_relaxed);
  session_.store(current, std::memory_order_release);
  return interned;
}

void record_complete(EventKind kind, const char* name, int64_t start_ns, int64_t end_ns,
                     const EventArgs& args) {
  if (!enabled()) return;
  const uint64_t session_id = g_active_session.load(std::memory_order_acquire);
  if (session_id == 0) return;
  push_event(session_id, make_event(kind, name, start_ns, end_ns, args));
}

void record_instant(EventKind kind, const char* name, const EventArgs& args) {
  if (!enabled()) return;
  const int64_t now = relative_now_ns();
  record_complete(kind, name, now, now, args);
}

void record_device_interval(EventKind kind, const char* name, int64_t start_ns, int64_t end_ns,
                            const EventArgs& args) {
  std::shared_ptr<Session> session = active_session();
  if (!session) return;
  std::lock_guard<std::mutex> lock(session->mutex);
  session->device_events.push_back(make_event(kind, name, start_ns, end_ns, args));
}

int64_t next_correlation_id() {
  return g_next_correlation_id.fetch_add(1, std::memory_order_relaxed);
}

const char* current_scope_name() { return tl_innermost; }

int64_t current_correlation_id() { return tl_correlation_id; }

int64_t exchange_current_correlation_id(int64_t id) { return std::exchange(tl_correlation_id, id); }

void TraceScope::begin(EventKind kind, const char* name, int64_t value) {
  session_ = g_active_session.load(std::memory_order_acquire);
  if (session_ == 0) return;
  kind_ = kind;
  name_ = name;
  args_.value = value;
  outer_ = tl_innermost;
  tl_innermost = name;
  start_ns_ = relative_now_ns();
}

void TraceScope::end() {
  const int64_t end_ns = relative_now_ns();
  tl_innermost = outer_;
  if (g_active_session.load(std::memory_order_acquire) != session_) return;
  push_event(session_, make_event(kind_, name_, start_ns_, end_ns, args_));
}

void push_scope(EventKind kind, const char* name, int64_t value, const char* stats) {
  if (!enabled()) return;
  const uint64_t session_id = g_active_session.load(std::memory_order_acquire);
  if (session_id == 0) return;
  // Scopes left open by an earlier session all sit below this session's: drop them.
  if (!tl_py_stack.empty() && tl_py_stack.back().session != session_id) {
    for (auto it = tl_py_stack.rbegin(); it != tl_py_stack.rend(); ++it) {
      tl_innermost = it->outer;
    }
    tl_py_stack.clear();
  }
  tl_py_stack.push_back({session_id, kind, name, value, stats, relative_now_ns(), tl_innermost});
  tl_innermost = name;
}

void pop_scope() {
  if (tl_py_stack.empty()) return;
  const PyScope s = tl_py_stack.back();
  tl_py_stack.pop_back();
  tl_innermost = s.outer;
  if (!enabled() || g_active_session.load(std::memory_order_acquire) != s.session) return;
  EventArgs args;
  args.value = s.value;
  args.stats = s.stats;
  push_event(s.session, make_event(s.kind, s.name, s.start_ns, relative_now_ns(), args));
}

int add_session_hooks(SessionHooks hooks) {
  std::lock_guard<std::mutex> lock(hooks_mutex());
  const int id = g_next_hook_id++;
  hooks_map().emplace(id, std::move(hooks));
  return id;
}

void remove_session_hooks(int id) {
  std::lock_guard<std::mutex> lock(hooks_mutex());
  hooks_map().erase(id);
}

int32_t device_index_from_name(const std::string& device_name) {
  static const std::string kGpu = "GPU:";
  const size_t pos = device_name.rfind(kGpu);
  if (pos == std::string::npos) return -1;
  size_t i = pos + kGpu.size();
  if (i >= device_name.size()) return -1;
  int32_t index = 0;
  for (; i < device_name.size() && device_name[i] >= '0' && device_name[i] <= '9'; ++i) {
    index = index * 10 + (device_name[i] - '0');
  }
  return index;
}

ScopeCost measure_scope_cost(int64_t iterations) {
  if (iterations < 1) throw_value_error(kOpName, "iterations must be at least 1");
  auto time_scopes = [iterations] {
    const int64_t t0 = steady_now_ns();
    for (int64_t i = 0; i < iterations; ++i) TraceScope scope(EventKind::kOp, "scope_cost");
    return double(steady_now_ns() - t0) / double(iterations);
  };
  ScopeCost cost;
  cost.off_ns = time_scopes();  // start() below refuses if a session is already active
  start(iterations);
  cost.on_ns = time_scopes();
  cost.recorded_events = static_cast<int64_t>(stop().size());
  return cost;
}

}  // namespace gpuaccel::profiler
