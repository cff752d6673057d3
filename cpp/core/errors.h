// Typed errors of the core. Frontends throw these with the op (or API) name that failed; the
// bindings map each code to the Python exception the course already knows (TF's error classes,
// ValueError, RuntimeError), so a message is written once, here in C++, and reads the same
// from GoogleTest and from a notebook.
#pragma once

#include <stdexcept>
#include <string>

namespace gpuaccel {

enum class ErrorCode {
  kValue,               // Python ValueError (TF raises it for bad configuration arguments)
  kRuntime,             // Python RuntimeError (TF: configuration after initialization)
  kInvalidArgument,     // gpuaccel.errors.InvalidArgumentError (also a ValueError)
  kNotFound,            // gpuaccel.errors.NotFoundError
  kFailedPrecondition,  // gpuaccel.errors.FailedPreconditionError
  kResourceExhausted,   // gpuaccel.errors.ResourceExhaustedError (out of memory)
  kUnimplemented,       // gpuaccel.errors.UnimplementedError
  kInternal,            // gpuaccel.errors.InternalError
};

const char* error_code_name(ErrorCode code);

class Error : public std::runtime_error {
 public:
  // `op` names what failed ("MatMul", "set_memory_growth"); it may be empty.
  Error(ErrorCode code, std::string op, const std::string& message);

  ErrorCode code() const { return code_; }
  const std::string& op() const { return op_; }
  // The message without the "[op] " prefix that what() carries.
  const std::string& message() const { return message_; }

 private:
  ErrorCode code_;
  std::string op_;
  std::string message_;
};

// Shorthands so call sites read as the Python exception they become.
[[noreturn]] void throw_value_error(const std::string& op, const std::string& message);
[[noreturn]] void throw_runtime_error(const std::string& op, const std::string& message);
[[noreturn]] void throw_error(ErrorCode code, const std::string& op, const std::string& message);

}  // namespace gpuaccel
