// How the CUDA backend reads a cuDNN status (backends/cuda/cudnn_status.h), without cuDNN: every
// status of cuDNN 9's families, and, where the build found cuDNN, every status the installed
// cudnn_graph.h declares, read from the header's text, so that a sub-code a newer header adds is
// checked against its family here before any GPU sees it.
#include "backends/cuda/cudnn_status.h"

#include <gtest/gtest.h>

#include <cctype>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>
#include <string>

namespace gpuaccel::cuda {
namespace {

// The family a status's name says it belongs to (CUDNN_STATUS_BAD_PARAM_NULL_POINTER: BAD_PARAM).
CudnnStatusFamily family_by_name(const std::string& name) {
  const auto starts = [&](const char* prefix) { return name.rfind(prefix, 0) == 0; };
  if (name == "CUDNN_STATUS_SUCCESS") return CudnnStatusFamily::kSuccess;
  if (starts("CUDNN_STATUS_BAD_PARAM") || name == "CUDNN_STATUS_INVALID_VALUE") return CudnnStatusFamily::kBadParam;
  if (starts("CUDNN_STATUS_NOT_SUPPORTED")) return CudnnStatusFamily::kNotSupported;
  if (starts("CUDNN_STATUS_INTERNAL_ERROR")) return CudnnStatusFamily::kInternalError;
  if (starts("CUDNN_STATUS_EXECUTION_FAILED")) return CudnnStatusFamily::kExecutionFailed;
  return CudnnStatusFamily::kUncategorized;
}

// What the backend must make of a status of `family` (`name` for the allocation failures).
CudaStatus expected_status(const std::string& name, CudnnStatusFamily family) {
  if (name == "CUDNN_STATUS_INTERNAL_ERROR_HOST_ALLOCATION_FAILED" ||
      name == "CUDNN_STATUS_INTERNAL_ERROR_DEVICE_ALLOCATION_FAILED") {
    return CudaStatus::kOutOfMemory;
  }
  switch (family) {
    case CudnnStatusFamily::kSuccess: return CudaStatus::kOk;
    case CudnnStatusFamily::kBadParam: return CudaStatus::kInvalidArgument;
    case CudnnStatusFamily::kNotSupported: return CudaStatus::kUnimplemented;
    default: return CudaStatus::kError;
  }
}

void expect_classified(const std::string& name, int value) {
  const CudnnStatusFamily family = family_by_name(name);
  EXPECT_EQ(cudnn_status_family(value), family) << name << " = " << value;
  EXPECT_EQ(cuda_status_for_cudnn(value), expected_status(name, family)) << name << " = " << value;
  const bool refusal = family == CudnnStatusFamily::kBadParam || family == CudnnStatusFamily::kNotSupported;
  EXPECT_EQ(cudnn_refused(value), refusal) << name << " = " << value;
}

// cuDNN 9.19's statuses (cudnn_graph.h), which the build machine's header may not have.
TEST(CudaCudnnStatus, EveryStatusOfCudnn9IsClassifiedByItsFamily) {
  const std::map<std::string, int> statuses = {
      {"CUDNN_STATUS_SUCCESS", 0},
      {"CUDNN_STATUS_NOT_INITIALIZED", 1001},
      {"CUDNN_STATUS_SUBLIBRARY_VERSION_MISMATCH", 1002},
      {"CUDNN_STATUS_SERIALIZATION_VERSION_MISMATCH", 1003},
      {"CUDNN_STATUS_DEPRECATED", 1004},
      {"CUDNN_STATUS_LICENSE_ERROR", 1005},
      {"CUDNN_STATUS_RUNTIME_IN_PROGRESS", 1006},
      {"CUDNN_STATUS_RUNTIME_FP_OVERFLOW", 1007},
      {"CUDNN_STATUS_SUBLIBRARY_LOADING_FAILED", 1008},
      {"CUDNN_STATUS_BAD_PARAM", 2000},
      {"CUDNN_STATUS_INVALID_VALUE", 2001},
      {"CUDNN_STATUS_BAD_PARAM_NULL_POINTER", 2002},
      {"CUDNN_STATUS_BAD_PARAM_MISALIGNED_POINTER", 2003},
      {"CUDNN_STATUS_BAD_PARAM_NOT_FINALIZED", 2004},
      {"CUDNN_STATUS_BAD_PARAM_OUT_OF_BOUND", 2005},
      {"CUDNN_STATUS_BAD_PARAM_SIZE_INSUFFICIENT", 2006},
      {"CUDNN_STATUS_BAD_PARAM_STREAM_MISMATCH", 2007},
      {"CUDNN_STATUS_BAD_PARAM_SHAPE_MISMATCH", 2008},
      {"CUDNN_STATUS_BAD_PARAM_DUPLICATED_ENTRIES", 2009},
      {"CUDNN_STATUS_BAD_PARAM_ATTRIBUTE_TYPE", 2010},
      {"CUDNN_STATUS_BAD_PARAM_CUDA_GRAPH_MISMATCH", 2011},
      {"CUDNN_STATUS_BAD_PARAM_DESCRIPTOR_TYPE", 2012},
      {"CUDNN_STATUS_NOT_SUPPORTED", 3000},
      {"CUDNN_STATUS_NOT_SUPPORTED_GRAPH_PATTERN", 3001},
      {"CUDNN_STATUS_NOT_SUPPORTED_SHAPE", 3002},
      {"CUDNN_STATUS_NOT_SUPPORTED_DATA_TYPE", 3003},
      {"CUDNN_STATUS_NOT_SUPPORTED_LAYOUT", 3004},
      {"CUDNN_STATUS_NOT_SUPPORTED_INCOMPATIBLE_CUDA_DRIVER", 3005},
      {"CUDNN_STATUS_NOT_SUPPORTED_INCOMPATIBLE_CUDART", 3006},
      {"CUDNN_STATUS_NOT_SUPPORTED_ARCH_MISMATCH", 3007},
      {"CUDNN_STATUS_NOT_SUPPORTED_RUNTIME_PREREQUISITE_MISSING", 3008},
      {"CUDNN_STATUS_NOT_SUPPORTED_SUBLIBRARY_UNAVAILABLE", 3009},
      {"CUDNN_STATUS_NOT_SUPPORTED_SHARED_MEMORY_INSUFFICIENT", 3010},
      {"CUDNN_STATUS_NOT_SUPPORTED_PADDING", 3011},
      {"CUDNN_STATUS_NOT_SUPPORTED_BAD_LAUNCH_PARAM", 3012},
      {"CUDNN_STATUS_NOT_SUPPORTED_CUDA_GRAPH_NATIVE_API", 3013},
      {"CUDNN_STATUS_NOT_SUPPORTED_INVALID_DYNAMIC_SHAPE", 3014},
      {"CUDNN_STATUS_INTERNAL_ERROR", 4000},
      {"CUDNN_STATUS_INTERNAL_ERROR_COMPILATION_FAILED", 4001},
      {"CUDNN_STATUS_INTERNAL_ERROR_UNEXPECTED_VALUE", 4002},
      {"CUDNN_STATUS_INTERNAL_ERROR_HOST_ALLOCATION_FAILED", 4003},
      {"CUDNN_STATUS_INTERNAL_ERROR_DEVICE_ALLOCATION_FAILED", 4004},
      {"CUDNN_STATUS_INTERNAL_ERROR_BAD_LAUNCH_PARAM", 4005},
      {"CUDNN_STATUS_INTERNAL_ERROR_TEXTURE_CREATION_FAILED", 4006},
      {"CUDNN_STATUS_EXECUTION_FAILED", 5000},
      {"CUDNN_STATUS_EXECUTION_FAILED_CUDA_DRIVER", 5001},
      {"CUDNN_STATUS_EXECUTION_FAILED_CUBLAS", 5002},
      {"CUDNN_STATUS_EXECUTION_FAILED_CUDART", 5003},
      {"CUDNN_STATUS_EXECUTION_FAILED_CURAND", 5004},
  };
  for (const auto& [name, value] : statuses) expect_classified(name, value);
}

TEST(CudaCudnnStatus, ASubCodeAFutureHeaderAddsFollowsItsFamily) {
  EXPECT_EQ(cuda_status_for_cudnn(2999), CudaStatus::kInvalidArgument);
  EXPECT_TRUE(cudnn_refused(2999));
  EXPECT_EQ(cuda_status_for_cudnn(3099), CudaStatus::kUnimplemented);
  EXPECT_TRUE(cudnn_refused(3099));
  EXPECT_EQ(cuda_status_for_cudnn(4099), CudaStatus::kError);
  EXPECT_FALSE(cudnn_refused(4099));
  EXPECT_EQ(cuda_status_for_cudnn(5099), CudaStatus::kError);
  EXPECT_FALSE(cudnn_refused(5099));
  EXPECT_EQ(cudnn_status_family(6000), CudnnStatusFamily::kUnknown);
  EXPECT_EQ(cuda_status_for_cudnn(6000), CudaStatus::kError);
  EXPECT_FALSE(cudnn_refused(6000));
  EXPECT_FALSE(cudnn_refused(0));
}

#ifdef GPUACCEL_TEST_CUDNN_STATUS_HEADER
// Every `CUDNN_STATUS_<NAME> [CUDNN_DEPRECATED_ENUM] = <value>` of the installed header, with
// aliases (`= CUDNN_STATUS_<OTHER>`) resolved through the entries before them.
TEST(CudaCudnnStatus, EveryStatusOfTheInstalledHeaderIsClassifiedByItsFamily) {
  std::ifstream in(GPUACCEL_TEST_CUDNN_STATUS_HEADER);
  ASSERT_TRUE(in) << "cannot read " << GPUACCEL_TEST_CUDNN_STATUS_HEADER;
  std::stringstream text;
  text << in.rdbuf();
  const std::string header = text.str();
  const std::regex entry(R"((CUDNN_STATUS_[A-Z0-9_]+)\s*(?:CUDNN_DEPRECATED_ENUM)?\s*=\s*(\d+|CUDNN_STATUS_[A-Z0-9_]+))");
  std::map<std::string, int> values;
  for (auto it = std::sregex_iterator(header.begin(), header.end(), entry); it != std::sregex_iterator(); ++it) {
    const std::string name = (*it)[1];
    const std::string rhs = (*it)[2];
    if (std::isdigit(static_cast<unsigned char>(rhs[0]))) {
      values[name] = std::stoi(rhs);
    } else {
      ASSERT_TRUE(values.count(rhs)) << name << " = " << rhs << " names an unknown status";
      values[name] = values[rhs];
    }
  }
  // cuDNN 9.0 already had BAD_PARAM, its NULL_POINTER sub-code and ALLOC_FAILED.
  ASSERT_GE(values.size(), 40u) << "the header's status list was not found";
  ASSERT_TRUE(values.count("CUDNN_STATUS_BAD_PARAM_NULL_POINTER"));
  for (const auto& [name, value] : values) {
    if (name == "CUDNN_STATUS_ALLOC_FAILED") {  // the deprecated name of HOST_ALLOCATION_FAILED
      EXPECT_EQ(cuda_status_for_cudnn(value), CudaStatus::kOutOfMemory);
      continue;
    }
    if (name == "CUDNN_STATUS_ARCH_MISMATCH" || name == "CUDNN_STATUS_MAPPING_ERROR" ||
        name == "CUDNN_STATUS_RUNTIME_PREREQUISITE_MISSING" || name == "CUDNN_STATUS_VERSION_MISMATCH") {
      continue;  // deprecated aliases: their targets are checked under their own names
    }
    expect_classified(name, value);
  }
}
#endif

}  // namespace
}  // namespace gpuaccel::cuda
