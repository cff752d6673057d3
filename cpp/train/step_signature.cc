// StepSignature (step_signature.h): equality, a hash over every field, a readable form.
#include "train/step_signature.h"

#include <cstdint>
#include <cstring>
#include <functional>
#include <sstream>

namespace gpuaccel::train {

namespace {
// boost::hash_combine's mixing step.
void mix(size_t& seed, size_t value) { seed ^= value + 0x9e3779b97f4a7c15ULL + (seed << 6) + (seed >> 2); }
}  // namespace

bool StepSignature::operator==(const StepSignature& other) const {
  return input_shapes == other.input_shapes && input_dtypes == other.input_dtypes &&
         state == other.state && host_scalars == other.host_scalars;
}

std::string StepSignature::to_string() const {
  std::ostringstream out;
  out << "inputs ";
  for (size_t i = 0; i < input_shapes.size(); ++i) {
    out << (i ? ", " : "") << shape_to_string(input_shapes[i]) << ":"
        << (i < input_dtypes.size() ? dtype_name(input_dtypes[i]) : "?");
  }
  out << "; " << state.size() << " state buffers; host scalars";
  if (host_scalars.empty()) out << " none";
  for (size_t i = 0; i < host_scalars.size(); ++i) out << (i ? ", " : " ") << host_scalars[i];
  return out.str();
}

size_t StepSignatureHash::operator()(const StepSignature& s) const {
  size_t seed = 0;
  for (const Shape& shape : s.input_shapes) {
    mix(seed, shape.size());
    for (int64_t d : shape) mix(seed, std::hash<int64_t>()(d));
  }
  for (DType d : s.input_dtypes) mix(seed, static_cast<size_t>(d));
  for (const void* p : s.state) mix(seed, std::hash<const void*>()(p));
  for (double v : s.host_scalars) {
    uint64_t bits = 0;
    std::memcpy(&bits, &v, sizeof bits);
    mix(seed, std::hash<uint64_t>()(bits));
  }
  return seed;
}

}  // namespace gpuaccel::train
