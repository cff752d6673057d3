// gpuaccel._C.collective: the multi-worker engines as Python sees them (low level; the
// strategies in gpuaccel.distribute build on it). Creating a collective reads TF_CONFIG or
// mpirun's variables; PeerUnavailableError becomes gpuaccel.errors.UnavailableError, TF's class.
// (Named *_bindings so that it is not taken for distribute/collective.h, the engines' interface.)
#include <pybind11/chrono.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cmath>

#include "bindings/bindings.h"
#include "core/device_name.h"
#include "core/device_registry.h"
#include "core/errors.h"
#include "distribute/cluster_spec.h"
#include "distribute/collective.h"
#include "distribute/gloo_collective.h"
#include "distribute/mpi_collective.h"
#include "distribute/nccl_collective.h"

namespace py = pybind11;

namespace gpuaccel::bindings {
namespace {

using distribute::ClusterSpec;
using distribute::Collective;

std::chrono::milliseconds timeout_or_environment(const std::optional<double>& seconds) {
  if (!seconds) return distribute::collective_timeout_from_environment();
  if (!std::isfinite(*seconds) || *seconds <= 0)
    throw_value_error("collective", "timeout_seconds is " + std::to_string(*seconds) +
                                        "; expected a number of seconds > 0");
  return std::chrono::milliseconds(static_cast<long long>(std::ceil(*seconds * 1000)));
}

}  // namespace

void init_collective(py::module_& m) {
  py::module_ c = m.def_submodule("collective", "Multi-worker engines (Gloo, MPI, NCCL) and cluster configuration");

  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const distribute::PeerUnavailableError& e) {
      py::object cls = py::module_::import("gpuaccel.errors").attr("UnavailableError");
      py::object instance = cls(e.what(), py::arg("op_name") = "collective");
      PyErr_SetObject(cls.ptr(), instance.ptr());
    }
  });

  py::class_<ClusterSpec>(c, "ClusterSpec", "This worker's rank, the world size and the rendezvous address")
      .def(py::init<>())
      .def_readwrite("rank", &ClusterSpec::rank)
      .def_readwrite("world_size", &ClusterSpec::world_size)
      .def_readwrite("coordinator", &ClusterSpec::coordinator)
      .def_readwrite("local_host", &ClusterSpec::local_host)
      .def_readwrite("source", &ClusterSpec::source)
      .def_readwrite("addresses", &ClusterSpec::addresses)
      .def("__repr__", [](const ClusterSpec& s) {
        return "ClusterSpec(rank=" + std::to_string(s.rank) + ", world_size=" +
               std::to_string(s.world_size) + ", coordinator='" + s.coordinator + "', source='" +
               s.source + "')";
      });

  c.def("parse_tf_config", &distribute::parse_tf_config, py::arg("text"),
        "Parses TF_CONFIG's JSON text (ValueError naming any malformed field)");
  c.def("cluster_spec_from_environment", [] { return distribute::cluster_spec_from_environment(); },
        "TF_CONFIG, else mpirun's rank variables with GPUACCEL_COORDINATOR, else one worker");
  c.def("timeout_from_environment", [] {
    return distribute::collective_timeout_from_environment().count() / 1000.0;
  }, "GPUACCEL_COLLECTIVE_TIMEOUT_SECONDS, or the default, in seconds");
  c.def("gloo_available", &distribute::gloo_available, "Whether this build has the Gloo engine");

  // Shared ownership: fit's ReplicatedTrainer (replicated_training.cc) keeps the collective a
  // MultiWorkerMirroredStrategy made.
  py::class_<Collective, std::shared_ptr<Collective>>(c, "Collective", "One rank's handle on a collective engine")
      .def_property_readonly("rank", &Collective::rank)
      .def_property_readonly("world_size", &Collective::world_size)
      .def_property_readonly("engine", &Collective::engine)
      .def_property_readonly("timeout_seconds", [](const Collective& self) {
        return self.timeout().count() / 1000.0;
      })
      .def("all_reduce_sum", [](Collective& self, const std::vector<Tensor>& tensors) {
        py::gil_scoped_release release;  // other Python threads (other replicas) run meanwhile
        self.all_reduce_sum(tensors);
        for (const Tensor& t : tensors) t.bump_version();  // written in place
      }, py::arg("tensors"), "Sums each tensor across all ranks, in place")
      .def("broadcast", [](Collective& self, const std::vector<Tensor>& tensors, int root) {
        py::gil_scoped_release release;
        self.broadcast(tensors, root);
        for (const Tensor& t : tensors) t.bump_version();  // written in place
      }, py::arg("tensors"), py::arg("root") = 0, "Copies root's tensors into every rank's, in place")
      .def("barrier", [](Collective& self) {
        py::gil_scoped_release release;
        self.barrier();
      }, "Returns once every rank has called barrier");

  c.def("create_gloo", [](const std::optional<ClusterSpec>& spec, const std::optional<double>& timeout_seconds) {
    ClusterSpec resolved = spec ? *spec : distribute::cluster_spec_from_environment();
    std::chrono::milliseconds timeout = timeout_or_environment(timeout_seconds);
    py::gil_scoped_release release;  // the rendezvous waits for the other workers
    return std::shared_ptr<Collective>(distribute::make_gloo_collective(resolved, timeout));
  }, py::arg("spec") = py::none(), py::arg("timeout_seconds") = py::none(),
     "Joins the job (spec, or TF_CONFIG / mpirun's environment) through Gloo; returns this rank's Collective");

  c.def("create_mpi", [](const std::string& library, const std::optional<ClusterSpec>& spec,
                         const std::optional<double>& timeout_seconds) {
    ClusterSpec resolved = spec ? *spec : distribute::cluster_spec_from_environment();
    std::chrono::milliseconds timeout = timeout_or_environment(timeout_seconds);
    py::gil_scoped_release release;  // MPI_Init and the communicator's creation wait for the other ranks
    return std::shared_ptr<Collective>(distribute::make_mpi_collective(library, resolved, timeout));
  }, py::arg("library") = "", py::arg("spec") = py::none(), py::arg("timeout_seconds") = py::none(),
     "Joins the ranks mpiexec started through the MPI library at `library` (a libmpi_abi.so.1; "
     "empty: found by the dynamic loader); returns this rank's Collective");

  c.def("nccl_unique_id", [] { return py::bytes(distribute::nccl_unique_id()); },
        "A new NCCL communicator id, for create_nccl_rank (one rank makes it, all use it)");
  c.def("create_nccl", [](const std::string& device, const std::optional<ClusterSpec>& spec,
                          const std::optional<double>& timeout_seconds) {
    LogicalDevice placed = DeviceRegistry::instance().place_op("create_nccl", parse_device_name(device));
    ClusterSpec resolved = spec ? *spec : distribute::cluster_spec_from_environment();
    std::chrono::milliseconds timeout = timeout_or_environment(timeout_seconds);
    py::gil_scoped_release release;
    return std::shared_ptr<Collective>(distribute::make_nccl_collective(resolved, placed, timeout));
  }, py::arg("device") = "GPU:0", py::arg("spec") = py::none(), py::arg("timeout_seconds") = py::none(),
     "This process's NCCL rank on `device` (one GPU per worker process; TF_CONFIG/mpirun as create_gloo)");
  c.def("create_nccl_rank", [](const std::string& device, int rank, int world_size, const py::bytes& unique_id,
                               const std::optional<double>& timeout_seconds) {
    LogicalDevice placed = DeviceRegistry::instance().place_op("create_nccl_rank", parse_device_name(device));
    std::string id = unique_id;
    std::chrono::milliseconds timeout = timeout_or_environment(timeout_seconds);
    py::gil_scoped_release release;  // the other ranks join from other threads meanwhile
    return std::shared_ptr<Collective>(distribute::make_nccl_collective(placed, rank, world_size, id, timeout));
  }, py::arg("device"), py::arg("rank"), py::arg("world_size"), py::arg("unique_id"),
     py::arg("timeout_seconds") = py::none(),
     "One rank of an in-process NCCL communicator (one thread per GPU, all with one unique_id)");
}

}  // namespace gpuaccel::bindings
