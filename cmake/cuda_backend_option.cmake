# Decides GPUACCEL_WITH_CUDA from GPUACCEL_CUDA (AUTO|ON|OFF) and records the CUDA and cuDNN
# versions the backend is built against (empty when it is not built).
set(GPUACCEL_WITH_CUDA OFF)
set(GPUACCEL_CUDA_BUILD_VERSION "")
set(GPUACCEL_CUDNN_BUILD_VERSION "")
string(TOUPPER "${GPUACCEL_CUDA}" _gpuaccel_cuda_mode)
if(NOT _gpuaccel_cuda_mode MATCHES "^(AUTO|ON|OFF)$")
  message(FATAL_ERROR "GPUACCEL_CUDA must be AUTO, ON or OFF, got '${GPUACCEL_CUDA}'")
endif()
if(NOT _gpuaccel_cuda_mode STREQUAL "OFF")
  include(CheckLanguage)
  if(NOT CMAKE_CUDA_COMPILER AND EXISTS /usr/local/cuda/bin/nvcc)
    set(CMAKE_CUDA_COMPILER /usr/local/cuda/bin/nvcc)
  endif()
  check_language(CUDA)
  if(CMAKE_CUDA_COMPILER)
    set(GPUACCEL_WITH_CUDA ON)
  elseif(_gpuaccel_cuda_mode STREQUAL "ON")
    message(FATAL_ERROR "GPUACCEL_CUDA=ON but no CUDA compiler (nvcc) was found")
  else()
    message(STATUS "gpuaccel: nvcc not found, building without the CUDA backend")
  endif()
endif()
if(GPUACCEL_WITH_CUDA)
  enable_language(CUDA)
  find_package(CUDAToolkit REQUIRED)
  set(GPUACCEL_CUDA_BUILD_VERSION "${CUDAToolkit_VERSION_MAJOR}.${CUDAToolkit_VERSION_MINOR}")
  # cuDNN is optional for the backend: without it the library still builds (cuBLAS only) and
  # reports cuDNN version 0. GPUACCEL_CUDNN_ROOT points at a non-standard install (e.g. the
  # nvidia-cudnn-cu12 wheel's folder on Colab).
  # Last resort: the nvidia-cudnn wheel of the building Python (Colab's PyTorch installs it), whose
  # library has only its versioned name, libcudnn.so.9.
  set(_gpuaccel_cudnn_wheel "")
  if(NOT GPUACCEL_CUDNN_ROOT)
    set(_gpuaccel_python "${Python_EXECUTABLE}")
    if(NOT _gpuaccel_python)
      set(_gpuaccel_python python3)
    endif()
    execute_process(
      COMMAND "${_gpuaccel_python}" -c "import nvidia.cudnn as m; print(list(m.__path__)[0])"
      OUTPUT_VARIABLE _gpuaccel_cudnn_wheel OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
  endif()
  find_path(GPUACCEL_CUDNN_INCLUDE_DIR cudnn_version.h
    HINTS ${GPUACCEL_CUDNN_ROOT} ${GPUACCEL_CUDNN_ROOT}/include ${CUDAToolkit_INCLUDE_DIRS} /usr/include /usr/local/include
          ${_gpuaccel_cudnn_wheel}/include)
  # NAMES_PER_DIR: both names in each folder before the next, so the library comes from the same
  # install as the headers (a wheel has only libcudnn.so.9, a system install also libcudnn.so).
  find_library(GPUACCEL_CUDNN_LIBRARY NAMES cudnn libcudnn.so.9 NAMES_PER_DIR
    HINTS ${GPUACCEL_CUDNN_ROOT} ${GPUACCEL_CUDNN_ROOT}/lib ${CUDAToolkit_LIBRARY_DIR} /usr/lib/x86_64-linux-gnu
          ${_gpuaccel_cudnn_wheel}/lib)
  if(GPUACCEL_CUDNN_INCLUDE_DIR AND GPUACCEL_CUDNN_LIBRARY)
    file(STRINGS "${GPUACCEL_CUDNN_INCLUDE_DIR}/cudnn_version.h" _cudnn_lines REGEX "#define CUDNN_(MAJOR|MINOR|PATCHLEVEL) ")
    foreach(_line ${_cudnn_lines})
      if(_line MATCHES "#define CUDNN_(MAJOR|MINOR|PATCHLEVEL) +([0-9]+)")
        set(_cudnn_${CMAKE_MATCH_1} ${CMAKE_MATCH_2})
      endif()
    endforeach()
    # torch.backends.cudnn.version() style: major*10000 + minor*100 + patch for cuDNN 9.
    math(EXPR GPUACCEL_CUDNN_BUILD_VERSION "${_cudnn_MAJOR} * 10000 + ${_cudnn_MINOR} * 100 + ${_cudnn_PATCHLEVEL}")
  endif()
  message(STATUS "gpuaccel: CUDA backend ON (CUDA ${GPUACCEL_CUDA_BUILD_VERSION}, cuDNN ${GPUACCEL_CUDNN_BUILD_VERSION}, archs ${GPUACCEL_CUDA_ARCHITECTURES})")
endif()
