# Finds oneDNN 3.x (imported target DNNL::dnnl) for the CPU backend, so that `pip install .`
# needs no system package: by default the CMake config comes from PyPI's onednn-devel-cpu-gomp
# wheel installed in the Python environment that runs the build (a build requirement in
# pyproject.toml), whose library the runtime dependency onednn-cpu-gomp provides. An explicit
# -Ddnnl_DIR=<dir with dnnl-config.cmake> (any oneDNN 3.x build) takes precedence.
#
# Sets GPUACCEL_ONEDNN_LIBRARY_DIR: the folder holding the libdnnl.so.3 linked against.

# Both wheels put their files under the environment's data prefix ({prefix}/include,
# {prefix}/lib), not in site-packages; their RECORD lists the paths relative to site-packages,
# which importlib.metadata resolves (this works in pip's isolated build environments too).
function(gpuaccel_find_pypi_onednn_config out_dir out_error)
  set(script [=[
import importlib.metadata as md, pathlib, sys
try:
    dist = md.distribution("onednn-devel-cpu-gomp")
except md.PackageNotFoundError:
    sys.exit("onednn-devel-cpu-gomp is not installed in this Python environment")
for f in dist.files or []:
    if f.name == "dnnl-config.cmake":
        print(pathlib.Path(dist.locate_file(f)).resolve().parent)
        break
else:
    sys.exit("onednn-devel-cpu-gomp has no dnnl-config.cmake")
]=])
  execute_process(COMMAND "${Python_EXECUTABLE}" -c "${script}"
                  OUTPUT_VARIABLE dir ERROR_VARIABLE err RESULT_VARIABLE rc
                  OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_STRIP_TRAILING_WHITESPACE)
  if(rc EQUAL 0)
    set(${out_dir} "${dir}" PARENT_SCOPE)
  else()
    set(${out_dir} "" PARENT_SCOPE)
    set(${out_error} "${err}" PARENT_SCOPE)
  endif()
endfunction()

# Looked up again on every configure unless the user chose dnnl_DIR: pip's isolated build
# environment lives in a new temporary folder each time.
set(_gpuaccel_pypi_error "")
if(NOT dnnl_DIR OR dnnl_DIR STREQUAL _GPUACCEL_DNNL_DIR_FROM_PYTHON)
  find_package(Python 3.10 COMPONENTS Interpreter REQUIRED)
  gpuaccel_find_pypi_onednn_config(_gpuaccel_found_dir _gpuaccel_pypi_error)
  if(_gpuaccel_found_dir)
    set(dnnl_DIR "${_gpuaccel_found_dir}" CACHE PATH "Folder of oneDNN's dnnl-config.cmake" FORCE)
    set(_GPUACCEL_DNNL_DIR_FROM_PYTHON "${_gpuaccel_found_dir}" CACHE INTERNAL "")
  else()  # fall back on CMake's own search (dnnl_ROOT, CMAKE_PREFIX_PATH, system folders)
    unset(dnnl_DIR CACHE)
  endif()
endif()

# 3.x only: the CPU backend uses the 3.x API (primitive descriptors built directly). Debian's
# libdnnl-dev (2.6) is found by CMake's search but rejected by the version check.
find_package(dnnl 3.0 CONFIG QUIET)
if(NOT dnnl_FOUND)
  set(_gpuaccel_rejected "")
  foreach(config version IN ZIP_LISTS dnnl_CONSIDERED_CONFIGS dnnl_CONSIDERED_VERSIONS)
    string(APPEND _gpuaccel_rejected "\n  oneDNN ${version} (${config}): too old, the 3.x API does "
                                     "not compile against it")
  endforeach()
  message(FATAL_ERROR
    "gpuaccel needs oneDNN 3.x.${_gpuaccel_rejected}\n"
    "PyPI's onednn-devel-cpu-gomp, looked up with ${Python_EXECUTABLE}: ${_gpuaccel_pypi_error}\n"
    "`pip install .` installs it (a build requirement in pyproject.toml); a build without "
    "isolation (pip --no-build-isolation, or plain cmake) needs "
    "`${Python_EXECUTABLE} -m pip install onednn-devel-cpu-gomp==2023.2.0` first (or "
    "-DPython_EXECUTABLE=<a Python that has it>), or -Ddnnl_DIR=<folder with the "
    "dnnl-config.cmake of a oneDNN 3.x build>.")
endif()
get_target_property(_gpuaccel_dnnl_location DNNL::dnnl IMPORTED_LOCATION_RELEASE)
if(NOT _gpuaccel_dnnl_location)
  get_target_property(_gpuaccel_dnnl_location DNNL::dnnl IMPORTED_LOCATION)
endif()
get_filename_component(GPUACCEL_ONEDNN_LIBRARY_DIR "${_gpuaccel_dnnl_location}" DIRECTORY)
message(STATUS "oneDNN ${dnnl_VERSION}: ${_gpuaccel_dnnl_location}")
