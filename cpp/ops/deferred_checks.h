// Value checks that need the data, without reading it back inside a training step. An op that
// must reject out-of-range indices (labels of a sparse crossentropy, embedding ids) normally
// reads their min and max to the host and throws at once; while a DeferredChecks is active on
// the thread (the Trainer activates one around each step), it instead folds the batch's min and
// max into running device scalars, and the owner raises the very same error at its next read of
// the step's results. The check then costs two reductions and no synchronization.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tensor/tensor.h"

namespace gpuaccel {

// InvalidArgumentError "[op] <what> must be in [0, limit), got values from <min> to <max>".
[[noreturn]] void throw_index_range_error(const std::string& op, const std::string& what,
                                          int64_t limit, int64_t min_value, int64_t max_value);

class DeferredChecks {
 public:
  // Makes `checks` the active one on this thread for the scope's lifetime (scopes nest).
  class Scope {
   public:
    explicit Scope(DeferredChecks& checks);
    ~Scope();
    Scope(const Scope&) = delete;
    Scope& operator=(const Scope&) = delete;

   private:
    DeferredChecks* previous_;
  };

  // The checks active on this thread, or null (then ops check at once).
  static DeferredChecks* active();

  // Folds one batch's smallest and largest index (int64 scalars on the data's device) into the
  // running ones of the check (op, what, limit).
  void record_index_range(const std::string& op, const std::string& what, int64_t limit,
                          const Tensor& min_value, const Tensor& max_value);

  // The running scalars to read, two per check (min, max), in the order of scalar_count().
  std::vector<Tensor> scalars() const;
  size_t scalar_count() const { return 2 * checks_.size(); }
  // Given the values of scalars() (in order), restarts every check in place (its storage is
  // kept, so a captured step that folds into it stays valid), then throws the first violated
  // one's error, if any.
  void settle(const std::vector<double>& values);

 private:
  struct IndexRange {
    std::string op;
    std::string what;
    int64_t limit = 0;
    Tensor min_value;
    Tensor max_value;
  };
  std::vector<IndexRange> checks_;
};

}  // namespace gpuaccel
