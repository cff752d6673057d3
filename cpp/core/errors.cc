// Construction and naming of the core's typed errors (see errors.h).
#include "core/errors.h"

namespace gpuaccel {

const char* error_code_name(ErrorCode code) {
  switch (code) {
    case ErrorCode::kValue: return "ValueError";
    case ErrorCode::kRuntime: return "RuntimeError";
    case ErrorCode::kInvalidArgument: return "InvalidArgumentError";
    case ErrorCode::kNotFound: return "NotFoundError";
    case ErrorCode::kFailedPrecondition: return "FailedPreconditionError";
    case ErrorCode::kResourceExhausted: return "ResourceExhaustedError";
    case ErrorCode::kUnimplemented: return "UnimplementedError";
    case ErrorCode::kInternal: return "InternalError";
  }
  return "Error";
}

static std::string with_op_prefix(const std::string& op, const std::string& message) {
  return op.empty() ? message : "[" + op + "] " + message;
}

Error::Error(ErrorCode code, std::string op, const std::string& message)
    : std::runtime_error(with_op_prefix(op, message)),
      code_(code),
      op_(std::move(op)),
      message_(message) {}

void throw_error(ErrorCode code, const std::string& op, const std::string& message) {
  throw Error(code, op, message);
}
void throw_value_error(const std::string& op, const std::string& message) {
  throw Error(ErrorCode::kValue, op, message);
}
void throw_runtime_error(const std::string& op, const std::string& message) {
  throw Error(ErrorCode::kRuntime, op, message);
}

}  // namespace gpuaccel
