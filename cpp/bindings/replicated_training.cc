// Binding of fit's data-parallel step (train/replicated_trainer.h) for gpuaccel.distribute:
// Python hands over each replica's graph, optimizer and metrics, and either nothing (the
// replicas share this process: their collectives are made here, in-process for CPUs and NCCL
// for GPUs) or the collective of this worker's one replica (MultiWorkerMirroredStrategy: Gloo
// or NCCL, from gpuaccel._C.collective), and how gradients are all-reduced (`overlap`,
// `bucket_bytes`: train::AllReduceOptions). Steps release the GIL: the replica threads and
// their communication threads never call back into Python.
#include <pybind11/chrono.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "bindings/bindings.h"
#include "core/errors.h"
#include "distribute/collective.h"
#include "distribute/gradient_buckets.h"
#include "distribute/local_group.h"
#include "train/replicated_trainer.h"

namespace py = pybind11;

namespace gpuaccel::bindings {

namespace {

train::AllReduceOptions all_reduce_options(bool overlap, int64_t bucket_bytes) {
  if (bucket_bytes <= 0) {
    throw_value_error("distribute", "bucket_bytes must be a positive number of bytes, got " +
                                        std::to_string(bucket_bytes));
  }
  return {overlap, size_t(bucket_bytes)};
}

}  // namespace

void init_replicated_training(py::module_& m) {
  m.attr("DEFAULT_ALL_REDUCE_BUCKET_BYTES") = int64_t(distribute::kDefaultBucketBytes);
  py::class_<train::ReplicatedTrainer, std::shared_ptr<train::ReplicatedTrainer>>(m, "ReplicatedTrainer")
      .def(py::init([](const std::vector<nn::LayerGraphPtr>& graphs,
                       const std::vector<std::shared_ptr<optim::Optimizer>>& optimizers,
                       const std::vector<std::vector<nn::MetricPtr>>& metrics, nn::LossPtr loss,
                       int threads_per_replica, double timeout_seconds, bool overlap,
                       int64_t bucket_bytes) {
             const auto options = all_reduce_options(overlap, bucket_bytes);
             if (graphs.size() != optimizers.size() || graphs.size() != metrics.size()) {
               throw_value_error("distribute", "one graph, optimizer and metric list per replica "
                                               "(got " + std::to_string(graphs.size()) + ", " +
                                                   std::to_string(optimizers.size()) + ", " +
                                                   std::to_string(metrics.size()) + ")");
             }
             if (!(timeout_seconds > 0)) {
               throw_value_error("distribute", "timeout_seconds must be positive, got " +
                                                   std::to_string(timeout_seconds));
             }
             // Each replica's device is where its weights live (fit made them there).
             std::vector<LogicalDevice> devices;
             for (const nn::LayerGraphPtr& graph : graphs) {
               const std::vector<Tensor> weights = graph->trainable_weights();
               devices.push_back(weights.empty() ? LogicalDevice{} : weights[0].device());
             }
             py::gil_scoped_release release;  // GPU ranks join their communicator meanwhile
             const auto collectives = distribute::make_local_group(
                 devices, std::chrono::milliseconds(int64_t(timeout_seconds * 1000.0)));
             std::vector<train::ReplicatedTrainer::Replica> replicas;
             for (size_t i = 0; i < graphs.size(); ++i) {
               replicas.push_back({graphs[i], optimizers[i], metrics[i], collectives[i]});
             }
             return std::make_shared<train::ReplicatedTrainer>(std::move(replicas), std::move(loss),
                                                               threads_per_replica, options);
           }),
           py::arg("graphs"), py::arg("optimizers"), py::arg("metrics"), py::arg("loss"),
           py::arg("threads_per_replica"), py::arg("timeout_seconds"), py::arg("overlap") = true,
           py::arg("bucket_bytes") = int64_t(distribute::kDefaultBucketBytes))
      // MultiWorkerMirroredStrategy: one replica in this process, its collective (Gloo or NCCL)
      // joins the other workers' replicas.
      .def(py::init([](nn::LayerGraphPtr graph, std::shared_ptr<optim::Optimizer> optimizer,
                       std::vector<nn::MetricPtr> metrics, nn::LossPtr loss,
                       int threads_per_replica, std::shared_ptr<distribute::Collective> collective,
                       bool overlap, int64_t bucket_bytes) {
             const auto options = all_reduce_options(overlap, bucket_bytes);
             std::vector<train::ReplicatedTrainer::Replica> replicas;
             replicas.push_back({std::move(graph), std::move(optimizer), std::move(metrics),
                                 std::move(collective)});
             return std::make_shared<train::ReplicatedTrainer>(std::move(replicas), std::move(loss),
                                                               threads_per_replica, options);
           }),
           py::arg("graph"), py::arg("optimizer"), py::arg("metrics"), py::arg("loss"),
           py::arg("threads_per_replica"), py::arg("collective"), py::arg("overlap") = true,
           py::arg("bucket_bytes") = int64_t(distribute::kDefaultBucketBytes))
      .def("train_step", &train::ReplicatedTrainer::train_step, py::arg("x"), py::arg("y"),
           py::call_guard<py::gil_scoped_release>())
      .def("reset_metrics", &train::ReplicatedTrainer::reset_metrics)
      .def("results", &train::ReplicatedTrainer::results, py::call_guard<py::gil_scoped_release>())
      .def("results_across_workers", &train::ReplicatedTrainer::results_across_workers,
           py::call_guard<py::gil_scoped_release>())
      .def("sync_weights", &train::ReplicatedTrainer::sync_weights,
           py::call_guard<py::gil_scoped_release>())
      .def_property_readonly("local_replicas", &train::ReplicatedTrainer::local_replicas)
      .def_property_readonly("world_replicas", &train::ReplicatedTrainer::world_replicas);
}

}  // namespace gpuaccel::bindings
