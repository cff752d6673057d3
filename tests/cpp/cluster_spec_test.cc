// TF_CONFIG and mpirun environment parsing: TensorFlow's rank rules, and a ValueError naming
// the field, the value and what is expected for every malformed field.
#include "distribute/cluster_spec.h"

#include <map>

#include "test_helpers.h"

namespace gpuaccel::distribute {
namespace {

using test::expect_error;

ClusterSpec parse(const std::string& text) { return parse_tf_config(text); }

void expect_tf_config_error(const std::string& text, const std::string& fragment) {
  SCOPED_TRACE(text);
  expect_error(ErrorCode::kValue, fragment, [&] { parse(text); });
}

EnvironmentLookup environment(std::map<std::string, std::string> values) {
  auto shared = std::make_shared<std::map<std::string, std::string>>(std::move(values));
  return [shared](const char* name) -> const char* {
    auto it = shared->find(name);
    return it == shared->end() ? nullptr : it->second.c_str();
  };
}

TEST(ClusterSpec, ChiefIsRankZeroAndWorkersFollow) {
  const std::string cluster =
      R"({"cluster": {"worker": ["w0:2001", "w1:2002"], "chief": ["c:2000"]}, "task": )";
  ClusterSpec chief = parse(cluster + R"({"type": "chief", "index": 0}})");
  EXPECT_EQ(chief.rank, 0);
  EXPECT_EQ(chief.world_size, 3);
  EXPECT_EQ(chief.coordinator, "c:2000");
  EXPECT_EQ(chief.local_host, "c");
  EXPECT_EQ(chief.addresses, (std::vector<std::string>{"c:2000", "w0:2001", "w1:2002"}));
  ClusterSpec worker1 = parse(cluster + R"({"type": "worker", "index": 1}})");
  EXPECT_EQ(worker1.rank, 2);
  EXPECT_EQ(worker1.coordinator, "c:2000");
  EXPECT_EQ(worker1.local_host, "w1");
  EXPECT_EQ(worker1.source, "TF_CONFIG");
}

TEST(ClusterSpec, WithoutChiefWorkerZeroIsRankZeroAndServesTheRendezvous) {
  ClusterSpec spec = parse(
      R"({"cluster": {"worker": ["127.0.0.1:5000", "127.0.0.1:5001"]},
          "task": {"type": "worker", "index": 1}, "rpc_layer": "grpc"})");
  EXPECT_EQ(spec.rank, 1);
  EXPECT_EQ(spec.world_size, 2);
  EXPECT_EQ(spec.coordinator, "127.0.0.1:5000");
}

TEST(ClusterSpec, IndexAsStringAndMissingIndexAsTensorFlowAccepts) {
  EXPECT_EQ(parse(R"({"cluster": {"worker": ["a:1", "b:2"]}, "task": {"type": "worker", "index": "1"}})").rank, 1);
  EXPECT_EQ(parse(R"({"cluster": {"worker": ["a:1", "b:2"]}, "task": {"type": "worker"}})").rank, 0);
}

TEST(ClusterSpec, OneTaskNeedsNoTaskAndNoRendezvous) {
  ClusterSpec spec = parse(R"({"cluster": {"worker": ["localhost:1234"]}})");
  EXPECT_EQ(spec.rank, 0);
  EXPECT_EQ(spec.world_size, 1);
  EXPECT_EQ(spec.coordinator, "");
}

TEST(ClusterSpec, IPv6AddressesInBrackets) {
  ClusterSpec spec = parse(R"({"cluster": {"worker": ["[::1]:7000", "[::1]:7001"]}, "task": {"type": "worker", "index": 0}})");
  EXPECT_EQ(spec.local_host, "::1");
  HostPort hp = parse_host_port("x", "[fe80::1]:80");
  EXPECT_EQ(hp.host, "fe80::1");
  EXPECT_EQ(hp.port, 80);
}

TEST(ClusterSpec, MalformedJsonNamesThePosition) {
  expect_tf_config_error("", "is not valid JSON");
  expect_tf_config_error("{\"cluster\": ", "unexpected end");
  expect_tf_config_error("{'cluster': {}}", "expected a string in double quotes");
  expect_tf_config_error(R"({"cluster": {"worker": ["a:1"]}} trailing)", "unexpected text after");
  expect_tf_config_error(R"({"cluster": {"worker": ["a:1]}})", "unterminated string");
}

TEST(ClusterSpec, EveryMalformedFieldIsNamed) {
  // top level
  expect_tf_config_error("[1, 2]", "field '(top level)' is [1, 2]; expected an object");
  expect_tf_config_error(R"({"task": {"type": "worker"}})", "has no field 'cluster'");
  expect_tf_config_error(R"({"cluster": {"worker": ["a:1"]}, "tsak": {}})", "field 'tsak'");
  // cluster
  expect_tf_config_error(R"({"cluster": ["a:1"]})", "field 'cluster' is [\"a:1\"]; expected an object");
  expect_tf_config_error(R"({"cluster": {}})", "expected a \"worker\"");
  expect_tf_config_error(R"({"cluster": {"workers": ["a:1"]}})", "field 'cluster.workers'");
  expect_tf_config_error(R"({"cluster": {"worker": "a:1"}})", "field 'cluster.worker' is \"a:1\"; expected a list");
  expect_tf_config_error(R"({"cluster": {"worker": []}})", "at least one");
  expect_tf_config_error(R"({"cluster": {"worker": [12]}})", "field 'cluster.worker[0]' is 12; expected a string");
  expect_tf_config_error(R"({"cluster": {"worker": ["a:1", "b"]}})", "field 'cluster.worker[1]' is \"b\": no ':port'");
  expect_tf_config_error(R"({"cluster": {"worker": ["a:http"]}})", "the port is not a number");
  expect_tf_config_error(R"({"cluster": {"worker": ["a:70000"]}})", "the port is out of range");
  expect_tf_config_error(R"({"cluster": {"worker": [":80"]}})", "empty host");
  expect_tf_config_error(R"({"cluster": {"worker": ["::1:80"]}})", "IPv6 host must be in brackets");
  expect_tf_config_error(R"({"cluster": {"chief": ["a:1", "b:2"]}})", "at most one 'chief'");
  expect_tf_config_error(R"({"cluster": {"worker": ["a:1"], "ps": ["p:1"]}})", "parameter servers");
  // task
  const std::string two = R"({"cluster": {"chief": ["c:1"], "worker": ["w:2"]}, "task": )";
  expect_tf_config_error(R"({"cluster": {"worker": ["a:1", "b:2"]}})", "has no field 'task.type'");
  expect_tf_config_error(two + "[]}", "field 'task' is []; expected an object");
  expect_tf_config_error(two + R"({"type": 1}})", "field 'task.type' is 1; expected a string");
  expect_tf_config_error(two + R"({"type": "master"}})", "field 'task.type' is \"master\"; expected \"chief\" or \"worker\"");
  expect_tf_config_error(two + R"({"type": "evaluator"}})", "takes no part in all-reduce");
  expect_tf_config_error(two + R"({"type": "worker", "index": -1}})", "field 'task.index' is -1; expected an integer >= 0");
  expect_tf_config_error(two + R"({"type": "worker", "index": 0.5}})", "field 'task.index' is 0.5");
  expect_tf_config_error(two + R"({"type": "worker", "index": "one"}})", "field 'task.index' is \"one\"");
  expect_tf_config_error(two + R"({"type": "worker", "index": 1}})", "the 'worker' job has 1 task(s); expected 0..0");
  expect_tf_config_error(two + R"({"type": "chief", "index": 1}})", "field 'task.index' is 1");
  expect_tf_config_error(two + R"({"type": "worker", "indx": 0}})", "field 'task.indx'");
  expect_tf_config_error(R"({"cluster": {"worker": ["w:2"]}, "task": {"type": "chief"}})",
                         "the cluster has no 'chief' job");
}

TEST(ClusterSpec, EnvironmentPrefersTfConfig) {
  ClusterSpec spec = cluster_spec_from_environment(environment({
      {"TF_CONFIG", R"({"cluster": {"worker": ["h:1", "h:2"]}, "task": {"type": "worker", "index": 1}})"},
      {"OMPI_COMM_WORLD_RANK", "0"}, {"OMPI_COMM_WORLD_SIZE", "4"}}));
  EXPECT_EQ(spec.rank, 1);
  EXPECT_EQ(spec.world_size, 2);
}

TEST(ClusterSpec, NothingSetIsOneWorker) {
  ClusterSpec spec = cluster_spec_from_environment(environment({{"TF_CONFIG", ""}}));
  EXPECT_EQ(spec.rank, 0);
  EXPECT_EQ(spec.world_size, 1);
  EXPECT_EQ(spec.source, "single worker");
}

TEST(ClusterSpec, OpenMpiAndHydraRanksWithTheCoordinator) {
  ClusterSpec open_mpi = cluster_spec_from_environment(environment({
      {"OMPI_COMM_WORLD_RANK", "2"}, {"OMPI_COMM_WORLD_SIZE", "3"},
      {"GPUACCEL_COORDINATOR", "node0:29500"}}));
  EXPECT_EQ(open_mpi.rank, 2);
  EXPECT_EQ(open_mpi.world_size, 3);
  EXPECT_EQ(open_mpi.coordinator, "node0:29500");
  EXPECT_EQ(open_mpi.source, "mpirun (OpenMPI)");
  ClusterSpec hydra = cluster_spec_from_environment(environment({
      {"PMI_RANK", "1"}, {"PMI_SIZE", "2"}, {"GPUACCEL_COORDINATOR", "10.0.0.1:29500"}}));
  EXPECT_EQ(hydra.rank, 1);
  EXPECT_EQ(hydra.source, "mpirun (MPICH/Hydra)");
}

TEST(ClusterSpec, MpirunErrorsNameTheVariable) {
  // Without GPUACCEL_COORDINATOR the ranks suit the MPI engine; Gloo and NCCL refuse them.
  ClusterSpec without = cluster_spec_from_environment(environment({{"PMI_RANK", "0"}, {"PMI_SIZE", "2"}}));
  EXPECT_EQ(without.world_size, 2);
  EXPECT_EQ(without.coordinator, "");
  expect_error(ErrorCode::kValue, "GPUACCEL_COORDINATOR is not set, and the Gloo engine needs it",
               [&] { require_coordinator(without, "Gloo"); });
  require_coordinator(cluster_spec_from_environment(environment({{"PMI_RANK", "0"}, {"PMI_SIZE", "1"}})), "Gloo");
  expect_error(ErrorCode::kValue, "field 'GPUACCEL_COORDINATOR' is \"node0\"", [] {
    cluster_spec_from_environment(environment(
        {{"PMI_RANK", "0"}, {"PMI_SIZE", "2"}, {"GPUACCEL_COORDINATOR", "node0"}}));
  });
  expect_error(ErrorCode::kValue, "OMPI_COMM_WORLD_SIZE='two'", [] {
    cluster_spec_from_environment(environment(
        {{"OMPI_COMM_WORLD_RANK", "0"}, {"OMPI_COMM_WORLD_SIZE", "two"}}));
  });
  expect_error(ErrorCode::kValue, "OMPI_COMM_WORLD_RANK=3 is not below OMPI_COMM_WORLD_SIZE=2", [] {
    cluster_spec_from_environment(environment(
        {{"OMPI_COMM_WORLD_RANK", "3"}, {"OMPI_COMM_WORLD_SIZE", "2"}}));
  });
}

TEST(ClusterSpec, TimeoutFromEnvironment) {
  EXPECT_EQ(collective_timeout_from_environment(environment({})), kDefaultCollectiveTimeout);
  EXPECT_EQ(collective_timeout_from_environment(
                environment({{"GPUACCEL_COLLECTIVE_TIMEOUT_SECONDS", "2.5"}})),
            std::chrono::milliseconds(2500));
  for (const char* bad : {"0", "-1", "soon", "nan"}) {
    expect_error(ErrorCode::kValue, std::string("is '") + bad + "'; expected a number of seconds > 0", [&] {
      collective_timeout_from_environment(environment({{"GPUACCEL_COLLECTIVE_TIMEOUT_SECONDS", bad}}));
    });
  }
}

}  // namespace
}  // namespace gpuaccel::distribute
