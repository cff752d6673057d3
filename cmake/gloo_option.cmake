# Decides GPUACCEL_WITH_GLOO from GPUACCEL_GLOO (AUTO|ON|OFF) and defines the imported target
# gpuaccel_gloo. Gloo (Debian's libgloo-dev) is the engine of multi-worker all-reduce on CPUs;
# it is optional so `pip install .` builds without apt, and then multi-worker creation raises an
# error saying how to get it. Debian ships a CMake config whose target is named plainly `gloo`;
# finding the header and the library ourselves works with and without that config.
set(GPUACCEL_WITH_GLOO OFF)
string(TOUPPER "${GPUACCEL_GLOO}" _gpuaccel_gloo_mode)
if(NOT _gpuaccel_gloo_mode MATCHES "^(AUTO|ON|OFF)$")
  message(FATAL_ERROR "GPUACCEL_GLOO must be AUTO, ON or OFF, got '${GPUACCEL_GLOO}'")
endif()
if(NOT _gpuaccel_gloo_mode STREQUAL "OFF")
  find_path(GPUACCEL_GLOO_INCLUDE_DIR gloo/allreduce.h HINTS ${GPUACCEL_GLOO_ROOT}/include)
  find_library(GPUACCEL_GLOO_LIBRARY NAMES gloo HINTS ${GPUACCEL_GLOO_ROOT}/lib)
  if(GPUACCEL_GLOO_INCLUDE_DIR AND GPUACCEL_GLOO_LIBRARY
     AND EXISTS "${GPUACCEL_GLOO_INCLUDE_DIR}/gloo/transport/tcp/device.h")
    set(GPUACCEL_WITH_GLOO ON)
    add_library(gpuaccel_gloo UNKNOWN IMPORTED)
    set_target_properties(gpuaccel_gloo PROPERTIES
      IMPORTED_LOCATION "${GPUACCEL_GLOO_LIBRARY}"
      INTERFACE_INCLUDE_DIRECTORIES "${GPUACCEL_GLOO_INCLUDE_DIR}")
    message(STATUS "gpuaccel: Gloo found (${GPUACCEL_GLOO_LIBRARY}), multi-worker engine on")
  elseif(_gpuaccel_gloo_mode STREQUAL "ON")
    message(FATAL_ERROR "GPUACCEL_GLOO=ON but Gloo with its TCP transport was not found "
                        "(apt-get install libgloo-dev, or set GPUACCEL_GLOO_ROOT)")
  else()
    message(STATUS "gpuaccel: Gloo not found, building without the multi-worker engine "
                   "(apt-get install libgloo-dev to add it)")
  endif()
endif()
