// Numbers in error messages written the way Python's repr writes a float ("0.9", "2.0",
// "1e-07", "inf"), so a C++ error reads exactly like the Keras message it mirrors.
#pragma once

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace gpuaccel::optim {

// The shortest round-tripping text of `v`, with ".0" on integral values as Python prints them.
inline std::string python_float(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  char buf[40];
  for (int precision = 1; precision <= 17; ++precision) {
    std::snprintf(buf, sizeof buf, "%.*g", precision, v);
    if (std::strtod(buf, nullptr) == v) break;
  }
  std::string s = buf;
  // printf's "1e-07" / "1e+20" already match Python's repr; integral values get ".0".
  if (s.find_first_of(".e") == std::string::npos) s += ".0";
  return s;
}

}  // namespace gpuaccel::optim
