// The oneDNN library the CPU backend runs on, as loaded at run time (which may differ from the
// headers it was compiled against when the shared library is upgraded). Reported by
// `gpuaccel.version.onednn` and `python -m gpuaccel.info`.
#pragma once

#include <string>

namespace gpuaccel::cpu {

struct OneDnnVersion {
  int major = 0;
  int minor = 0;
  int patch = 0;
  std::string hash;         // git hash of its sources; may be empty
  std::string cpu_runtime;  // "OpenMP", "TBB", "sequential", "threadpool"
  std::string str() const;  // "3.2.0"
};

// From dnnl_version(); never throws.
OneDnnVersion onednn_version();

}  // namespace gpuaccel::cpu
