// Preloading the CUDA libraries of PyPI's nvidia-* wheels (see cuda_wheel_libraries.h). The
// backend's DT_NEEDED list is read from its ELF headers (a few pread calls, not the whole
// file: the backend carries fat binaries for five GPU architectures).
#include "core/cuda_loader/cuda_wheel_libraries.h"

#include <dirent.h>
#include <dlfcn.h>
#include <elf.h>
#include <fcntl.h>
#include <link.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <mutex>

namespace gpuaccel {

namespace {

// Reads exactly `size` bytes at `offset`; false on a short read.
bool read_at(int fd, uint64_t offset, void* out, size_t size) {
  size_t done = 0;
  while (done < size) {
    const ssize_t n = ::pread(fd, static_cast<char*>(out) + done, size - done,
                              static_cast<off_t>(offset + done));
    if (n <= 0) return false;
    done += static_cast<size_t>(n);
  }
  return true;
}

// The file offset of virtual address `vaddr`, through the PT_LOAD segment that maps it.
bool vaddr_to_offset(const std::vector<Elf64_Phdr>& phdrs, uint64_t vaddr, uint64_t* offset) {
  for (const Elf64_Phdr& p : phdrs) {
    if (p.p_type == PT_LOAD && vaddr >= p.p_vaddr && vaddr < p.p_vaddr + p.p_filesz) {
      *offset = vaddr - p.p_vaddr + p.p_offset;
      return true;
    }
  }
  return false;
}

std::vector<std::string> needed_from_fd(int fd, std::string* error) {
  Elf64_Ehdr eh{};
  if (!read_at(fd, 0, &eh, sizeof(eh)) || std::memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 ||
      eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_phentsize != sizeof(Elf64_Phdr)) {
    *error = "not a 64-bit ELF file";
    return {};
  }
  std::vector<Elf64_Phdr> phdrs(eh.e_phnum);
  if (!read_at(fd, eh.e_phoff, phdrs.data(), phdrs.size() * sizeof(Elf64_Phdr))) {
    *error = "truncated program headers";
    return {};
  }
  const auto dynamic = std::find_if(phdrs.begin(), phdrs.end(),
                                    [](const Elf64_Phdr& p) { return p.p_type == PT_DYNAMIC; });
  if (dynamic == phdrs.end()) {
    *error = "no dynamic section (not a shared library)";
    return {};
  }
  std::vector<Elf64_Dyn> entries(dynamic->p_filesz / sizeof(Elf64_Dyn));
  if (!read_at(fd, dynamic->p_offset, entries.data(), entries.size() * sizeof(Elf64_Dyn))) {
    *error = "truncated dynamic section";
    return {};
  }
  uint64_t strtab = 0, strsz = 0;
  std::vector<uint64_t> needed_offsets;
  for (const Elf64_Dyn& d : entries) {
    if (d.d_tag == DT_NULL) break;
    if (d.d_tag == DT_STRTAB) strtab = d.d_un.d_ptr;
    if (d.d_tag == DT_STRSZ) strsz = d.d_un.d_val;
    if (d.d_tag == DT_NEEDED) needed_offsets.push_back(d.d_un.d_val);
  }
  uint64_t strtab_offset = 0;
  if (strsz == 0 || !vaddr_to_offset(phdrs, strtab, &strtab_offset)) {
    *error = "no dynamic string table";
    return {};
  }
  std::string strings(strsz, '\0');
  if (!read_at(fd, strtab_offset, strings.data(), strsz)) {
    *error = "truncated dynamic string table";
    return {};
  }
  std::vector<std::string> needed;
  for (uint64_t at : needed_offsets) {
    if (at < strsz) needed.emplace_back(strings.c_str() + at);
  }
  return needed;
}

bool is_dir(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

bool is_file(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

std::vector<std::string> subdirectories(const std::string& dir) {
  std::vector<std::string> names;
  DIR* d = ::opendir(dir.c_str());
  if (d == nullptr) return names;
  while (const dirent* e = ::readdir(d)) {
    const std::string name = e->d_name;
    if (name != "." && name != ".." && is_dir(dir + "/" + name)) names.push_back(name);
  }
  ::closedir(d);
  std::sort(names.begin(), names.end());
  return names;
}

bool starts_with(const std::string& s, const std::string& prefix) {
  return s.compare(0, prefix.size(), prefix) == 0;
}

// Load order: a library before those that need it (cuBLAS needs cuBLASLt; every library may use
// the runtime). Lower ranks first; the rest keep the backend's order.
int load_rank(const std::string& soname) {
  if (starts_with(soname, "libcudart.")) return 0;
  if (starts_with(soname, "libcublasLt.")) return 1;
  if (starts_with(soname, "libcublas.")) return 2;
  return 3;
}

std::mutex& paths_mutex() {
  static std::mutex m;
  return m;
}

std::vector<std::string>& python_paths() {
  static std::vector<std::string> paths;
  return paths;
}

}  // namespace

std::vector<std::string> elf_needed_libraries(const std::string& path, std::string* error) {
  std::string ignored;
  if (error == nullptr) error = &ignored;
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    *error = "cannot open " + path + ": " + std::strerror(errno);
    return {};
  }
  std::vector<std::string> needed = needed_from_fd(fd, error);
  ::close(fd);
  if (!error->empty() && needed.empty()) *error = path + ": " + *error;
  return needed;
}

bool is_cuda_wheel_library(const std::string& soname) {
  for (const char* prefix : {"libcudart.so", "libcublas.so", "libcublasLt.so", "libnccl.so"}) {
    if (starts_with(soname, prefix)) return true;
  }
  return starts_with(soname, "libcudnn") && soname.find(".so") != std::string::npos;
}

std::string find_in_nvidia_wheels(const std::vector<std::string>& roots, const std::string& soname) {
  for (const std::string& root : roots) {
    const std::string nvidia = root + "/nvidia";
    for (const std::string& package : subdirectories(nvidia)) {
      const std::string candidate = nvidia + "/" + package + "/lib/" + soname;
      if (is_file(candidate)) return candidate;
    }
  }
  return "";
}

std::vector<CudaLibraryCopy> preload_cuda_wheel_libraries(const std::vector<std::string>& sonames,
                                                          const std::vector<std::string>& roots) {
  std::vector<CudaLibraryCopy> copies;
  for (const std::string& soname : sonames) {
    if (!is_cuda_wheel_library(soname)) continue;
    CudaLibraryCopy c;
    c.soname = soname;
    c.wheel_path = find_in_nvidia_wheels(roots, soname);
    copies.push_back(c);
  }
  std::stable_sort(copies.begin(), copies.end(), [](const CudaLibraryCopy& a, const CudaLibraryCopy& b) {
    return load_rank(a.soname) < load_rank(b.soname);
  });
  for (CudaLibraryCopy& c : copies) {
    if (c.wheel_path.empty()) continue;
    // If the process already has this soname (PyTorch imported first, or LD_PRELOAD), a second
    // copy would only split the library's global state: keep the one that is there.
    if (void* existing = dlopen(c.soname.c_str(), RTLD_LAZY | RTLD_NOLOAD)) {
      dlclose(existing);
      continue;
    }
    dlerror();
    if (dlopen(c.wheel_path.c_str(), RTLD_NOW | RTLD_GLOBAL) != nullptr) {
      c.preloaded = true;  // stays loaded for the process, like the backend itself
    } else {
      const char* why = dlerror();
      c.error = why ? why : "dlopen failed";
    }
  }
  return copies;
}

void record_loaded_copies(std::vector<CudaLibraryCopy>* copies) {
  for (CudaLibraryCopy& c : *copies) {
    void* handle = dlopen(c.soname.c_str(), RTLD_LAZY | RTLD_NOLOAD);
    if (handle == nullptr) continue;
    link_map* map = nullptr;
    if (dlinfo(handle, RTLD_DI_LINKMAP, &map) == 0 && map != nullptr && map->l_name != nullptr) {
      c.loaded_path = map->l_name;
    }
    if (starts_with(c.soname, "libnccl.")) {
      using NcclGetVersion = int (*)(int*);
      if (auto get = reinterpret_cast<NcclGetVersion>(dlsym(handle, "ncclGetVersion"))) {
        int version = 0;
        if (get(&version) == 0) c.version = version;
      }
    }
    dlclose(handle);
  }
}

void set_python_search_paths(const std::vector<std::string>& paths) {
  std::lock_guard<std::mutex> lock(paths_mutex());
  python_paths() = paths;
}

std::vector<std::string> nvidia_wheel_search_roots(const std::string& core_binary_dir) {
  std::vector<std::string> roots;
  if (!core_binary_dir.empty()) {
    const size_t slash = core_binary_dir.rfind('/');
    if (slash != std::string::npos && slash > 0) roots.push_back(core_binary_dir.substr(0, slash));
  }
  {
    std::lock_guard<std::mutex> lock(paths_mutex());
    for (const std::string& p : python_paths()) {
      if (!p.empty() && std::find(roots.begin(), roots.end(), p) == roots.end()) roots.push_back(p);
    }
  }
  return roots;
}

}  // namespace gpuaccel
