// dnnl_version() wrapped for the rest of gpuaccel (see onednn_info.h); the only place outside
// the CPU primitives that includes oneDNN's header.
#include "backends/cpu/onednn_info.h"

#include <oneapi/dnnl/dnnl.h>

namespace gpuaccel::cpu {

namespace {

std::string runtime_name(unsigned runtime) {
  switch (runtime) {
    case DNNL_RUNTIME_NONE: return "none";
    case DNNL_RUNTIME_SEQ: return "sequential";
    case DNNL_RUNTIME_OMP: return "OpenMP";
    case DNNL_RUNTIME_TBB: return "TBB";
    case DNNL_RUNTIME_THREADPOOL: return "threadpool";
    default: return "unknown (" + std::to_string(runtime) + ")";
  }
}

}  // namespace

std::string OneDnnVersion::str() const {
  return std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(patch);
}

OneDnnVersion onednn_version() {
  OneDnnVersion v;
  const dnnl_version_t* d = dnnl_version();
  if (d == nullptr) return v;
  v.major = d->major;
  v.minor = d->minor;
  v.patch = d->patch;
  v.hash = d->hash ? d->hash : "";
  v.cpu_runtime = runtime_name(d->cpu_runtime);
  return v;
}

}  // namespace gpuaccel::cpu
