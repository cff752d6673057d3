// TF_CONFIG and mpirun environment parsing (see cluster_spec.h). TF_CONFIG is JSON; the small
// reader below covers JSON's grammar (objects, arrays, strings with escapes, numbers, literals)
// because the core has no JSON dependency and this is its only JSON input.
#include "distribute/cluster_spec.h"

#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <map>
#include <memory>
#include <tuple>

#include "core/errors.h"

namespace gpuaccel::distribute {
namespace {

constexpr const char* kOp = "TF_CONFIG";

struct Json {
  enum class Kind { kNull, kBool, kNumber, kString, kArray, kObject } kind = Kind::kNull;
  bool boolean = false;
  double number = 0;
  std::string text;  // kString: the value; every kind: the source text, for messages
  std::vector<Json> items;
  std::vector<std::pair<std::string, Json>> members;

  const Json* find(const std::string& key) const {
    for (const auto& [name, value] : members)
      if (name == key) return &value;
    return nullptr;
  }
};

const char* kind_name(Json::Kind kind) {
  switch (kind) {
    case Json::Kind::kNull: return "null";
    case Json::Kind::kBool: return "a boolean";
    case Json::Kind::kNumber: return "a number";
    case Json::Kind::kString: return "a string";
    case Json::Kind::kArray: return "a list";
    case Json::Kind::kObject: return "an object";
  }
  return "?";
}

class JsonReader {
 public:
  explicit JsonReader(const std::string& text) : text_(text) {}

  Json read_document() {
    Json value = read_value();
    skip_space();
    if (pos_ != text_.size()) fail("unexpected text after the JSON value");
    return value;
  }

 private:
  [[noreturn]] void fail(const std::string& what) {
    throw_value_error(kOp, "is not valid JSON: " + what + " at character " +
                               std::to_string(pos_) + " of '" + text_ +
                               "'; expected e.g. {\"cluster\": {\"worker\": [\"host:port\", ...]}, "
                               "\"task\": {\"type\": \"worker\", \"index\": 0}}");
  }
  void skip_space() {
    while (pos_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[pos_]))) ++pos_;
  }
  bool consume(char c) {
    skip_space();
    if (pos_ < text_.size() && text_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }
  void expect(char c) {
    if (!consume(c)) fail(std::string("expected '") + c + "'");
  }

  Json read_value() {
    if (++depth_ > 64) fail("nesting too deep");
    skip_space();
    if (pos_ >= text_.size()) fail("unexpected end");
    size_t start = pos_;
    Json value;
    char c = text_[pos_];
    if (c == '{') {
      value.kind = Json::Kind::kObject;
      ++pos_;
      if (!consume('}')) {
        do {
          skip_space();
          std::string key = read_string();
          expect(':');
          value.members.emplace_back(key, read_value());
        } while (consume(','));
        expect('}');
      }
    } else if (c == '[') {
      value.kind = Json::Kind::kArray;
      ++pos_;
      if (!consume(']')) {
        do value.items.push_back(read_value());
        while (consume(','));
        expect(']');
      }
    } else if (c == '"') {
      value.kind = Json::Kind::kString;
      value.text = read_string();
      --depth_;
      return value;
    } else if (text_.compare(pos_, 4, "true") == 0 || text_.compare(pos_, 5, "false") == 0) {
      value.kind = Json::Kind::kBool;
      value.boolean = c == 't';
      pos_ += value.boolean ? 4 : 5;
    } else if (text_.compare(pos_, 4, "null") == 0) {
      pos_ += 4;
    } else if (c == '-' || std::isdigit(static_cast<unsigned char>(c))) {
      value.kind = Json::Kind::kNumber;
      char* end = nullptr;
      value.number = std::strtod(text_.c_str() + pos_, &end);
      pos_ = static_cast<size_t>(end - text_.c_str());
    } else {
      fail(std::string("unexpected character '") + c + "'");
    }
    value.text = text_.substr(start, pos_ - start);
    --depth_;
    return value;
  }

  std::string read_string() {
    if (pos_ >= text_.size() || text_[pos_] != '"') fail("expected a string in double quotes");
    ++pos_;
    std::string out;
    while (true) {
      if (pos_ >= text_.size()) fail("unterminated string");
      char c = text_[pos_++];
      if (c == '"') return out;
      if (c != '\\') {
        out += c;
        continue;
      }
      if (pos_ >= text_.size()) fail("unterminated escape");
      char e = text_[pos_++];
      switch (e) {
        case '"': case '\\': case '/': out += e; break;
        case 'b': out += '\b'; break;
        case 'f': out += '\f'; break;
        case 'n': out += '\n'; break;
        case 'r': out += '\r'; break;
        case 't': out += '\t'; break;
        case 'u': {
          if (pos_ + 4 > text_.size()) fail("short \\u escape");
          unsigned code = std::stoul(text_.substr(pos_, 4), nullptr, 16);
          pos_ += 4;
          if (code < 0x80) {
            out += static_cast<char>(code);
          } else if (code < 0x800) {
            out += static_cast<char>(0xC0 | (code >> 6));
            out += static_cast<char>(0x80 | (code & 0x3F));
          } else {
            out += static_cast<char>(0xE0 | (code >> 12));
            out += static_cast<char>(0x80 | ((code >> 6) & 0x3F));
            out += static_cast<char>(0x80 | (code & 0x3F));
          }
          break;
        }
        default: fail(std::string("unknown escape '\\") + e + "'");
      }
    }
  }

  const std::string& text_;
  size_t pos_ = 0;
  int depth_ = 0;
};

// The value as it reads in TF_CONFIG (strings in quotes).
std::string shown(const Json& value) {
  return value.kind == Json::Kind::kString ? "\"" + value.text + "\"" : value.text;
}

[[noreturn]] void bad_field(const std::string& field, const Json& value, const std::string& expected) {
  throw_value_error(kOp, "field '" + field + "' is " + shown(value) + "; expected " + expected);
}

const Json& require_kind(const std::string& field, const Json& value, Json::Kind kind) {
  if (value.kind != kind)
    bad_field(field, value, std::string(kind_name(kind)) + ", got " + kind_name(value.kind));
  return value;
}

std::vector<std::string> read_job(const std::string& job, const Json& tasks) {
  std::string field = "cluster." + job;
  if (tasks.kind != Json::Kind::kArray)
    bad_field(field, tasks, "a list of \"host:port\" strings, got " +
                                std::string(kind_name(tasks.kind)));
  if (tasks.items.empty()) bad_field(field, tasks, "at least one \"host:port\"");
  std::vector<std::string> addresses;
  for (size_t i = 0; i < tasks.items.size(); ++i) {
    std::string item_field = field + "[" + std::to_string(i) + "]";
    const Json& item = tasks.items[i];
    require_kind(item_field, item, Json::Kind::kString);
    parse_host_port(item_field, item.text);
    addresses.push_back(item.text);
  }
  return addresses;
}

int parse_positive_int(const std::string& name, const char* text, int minimum) {
  char* end = nullptr;
  errno = 0;
  long value = std::strtol(text, &end, 10);
  if (end == text || *end != '\0' || errno != 0 || value < minimum || value > (1 << 20))
    throw_value_error(kOp, "environment variable " + name + "='" + text +
                               "' is not an integer >= " + std::to_string(minimum));
  return static_cast<int>(value);
}

const char* lookup_or_getenv(const EnvironmentLookup& lookup, const char* name) {
  return lookup ? lookup(name) : std::getenv(name);
}

}  // namespace

HostPort parse_host_port(const std::string& field, const std::string& address) {
  auto fail = [&](const std::string& why) {
    throw_value_error(kOp, "field '" + field + "' is \"" + address + "\": " + why +
                               "; expected \"host:port\" with a port in 1..65535 (e.g. "
                               "\"127.0.0.1:12345\", \"[::1]:12345\")");
  };
  size_t colon = address.rfind(':');
  if (colon == std::string::npos) fail("no ':port'");
  std::string host = address.substr(0, colon);
  std::string port_text = address.substr(colon + 1);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']')
    host = host.substr(1, host.size() - 2);
  else if (host.find(':') != std::string::npos)
    fail("an IPv6 host must be in brackets");
  if (host.empty()) fail("empty host");
  if (port_text.empty() || port_text.size() > 5 ||
      port_text.find_first_not_of("0123456789") != std::string::npos)
    fail("the port is not a number");
  int port = std::stoi(port_text);
  if (port < 1 || port > 65535) fail("the port is out of range");
  return {host, port};
}

ClusterSpec parse_tf_config(const std::string& text) {
  Json root = JsonReader(text).read_document();
  require_kind("(top level)", root, Json::Kind::kObject);
  for (const auto& [key, value] : root.members) {
    if (key != "cluster" && key != "task" && key != "rpc_layer" && key != "environment")
      bad_field(key, value, "only the keys \"cluster\", \"task\", \"rpc_layer\", \"environment\"");
  }
  const Json* cluster = root.find("cluster");
  if (!cluster) throw_value_error(kOp, "has no field 'cluster'; expected {\"cluster\": {\"worker\": [\"host:port\", ...]}, ...}");
  require_kind("cluster", *cluster, Json::Kind::kObject);

  std::map<std::string, std::vector<std::string>> jobs;
  for (const auto& [job, tasks] : cluster->members) {
    if (job != "chief" && job != "worker" && job != "evaluator" && job != "ps")
      bad_field("cluster." + job, tasks,
                "a job named \"chief\", \"worker\", \"evaluator\" or \"ps\" (TensorFlow's task types)");
    jobs[job] = read_job(job, tasks);
  }
  if (jobs.count("ps"))
    throw_value_error(kOp, "field 'cluster.ps' is " + cluster->find("ps")->text +
                               ": parameter servers (ParameterServerStrategy) are not supported; "
                               "MultiWorkerMirroredStrategy takes \"chief\" and \"worker\" jobs");
  if (jobs.count("chief") && jobs.at("chief").size() > 1)
    bad_field("cluster.chief", *cluster->find("chief"), "at most one task (there must be at most one 'chief' job)");
  if (!jobs.count("chief") && !jobs.count("worker"))
    bad_field("cluster", *cluster, "a \"worker\" (and optionally a \"chief\") job");

  ClusterSpec spec;
  spec.source = "TF_CONFIG";
  for (const char* job : {"chief", "worker"}) {
    auto it = jobs.find(job);
    if (it != jobs.end()) spec.addresses.insert(spec.addresses.end(), it->second.begin(), it->second.end());
  }
  spec.world_size = static_cast<int>(spec.addresses.size());

  const Json* task = root.find("task");
  std::string type;
  int index = 0;
  if (task) {
    require_kind("task", *task, Json::Kind::kObject);
    for (const auto& [key, value] : task->members)
      if (key != "type" && key != "index" && key != "trial")
        bad_field("task." + key, value, "only the keys \"type\" and \"index\"");
    if (const Json* type_json = task->find("type")) type = require_kind("task.type", *type_json, Json::Kind::kString).text;
    if (const Json* index_json = task->find("index")) {
      // TensorFlow accepts the index as a number or a numeric string.
      double number = index_json->number;
      if (index_json->kind == Json::Kind::kString) {
        char* end = nullptr;
        number = std::strtod(index_json->text.c_str(), &end);
        if (index_json->text.empty() || *end != '\0') bad_field("task.index", *index_json, "an integer >= 0");
      } else if (index_json->kind != Json::Kind::kNumber) {
        bad_field("task.index", *index_json, "an integer >= 0");
      }
      if (number < 0 || number != std::floor(number) || number > 1e6)
        bad_field("task.index", *index_json, "an integer >= 0");
      index = static_cast<int>(number);
    }
  }
  if (type.empty()) {
    if (spec.world_size > 1)
      throw_value_error(kOp, "has no field 'task.type' but the cluster has " +
                                 std::to_string(spec.world_size) +
                                 " tasks; expected \"task\": {\"type\": \"chief\" or \"worker\", \"index\": i}");
    type = jobs.count("chief") ? "chief" : "worker";
  }
  const Json* type_json = task ? task->find("type") : nullptr;
  if (type == "evaluator" || type == "ps")
    throw_value_error(kOp, "field 'task.type' is \"" + type +
                               "\": an " + type + " task takes no part in all-reduce; expected \"chief\" or \"worker\"");
  if (type != "chief" && type != "worker")
    bad_field("task.type", *type_json, "\"chief\" or \"worker\"");
  if (!jobs.count(type))
    throw_value_error(kOp, "field 'task.type' is \"" + type + "\" but the cluster has no '" + type + "' job");
  int job_size = static_cast<int>(jobs.at(type).size());
  if (index >= job_size)
    throw_value_error(kOp, "field 'task.index' is " + std::to_string(index) + " but the '" + type +
                               "' job has " + std::to_string(job_size) + " task(s); expected 0.." +
                               std::to_string(job_size - 1));

  spec.rank = type == "chief" ? 0 : index + static_cast<int>(jobs.count("chief"));
  spec.local_host = parse_host_port("task address", spec.addresses[spec.rank]).host;
  if (spec.world_size > 1) spec.coordinator = spec.addresses[0];
  return spec;
}

ClusterSpec cluster_spec_from_environment(const EnvironmentLookup& lookup) {
  const char* tf_config = lookup_or_getenv(lookup, "TF_CONFIG");
  if (tf_config && *tf_config) return parse_tf_config(tf_config);

  ClusterSpec spec;
  for (auto [rank_name, size_name, launcher] :
       {std::tuple{"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "mpirun (OpenMPI)"},
        std::tuple{"PMI_RANK", "PMI_SIZE", "mpirun (MPICH/Hydra)"}}) {
    const char* rank = lookup_or_getenv(lookup, rank_name);
    const char* size = lookup_or_getenv(lookup, size_name);
    if (!rank || !size) continue;
    spec.source = launcher;
    spec.world_size = parse_positive_int(size_name, size, 1);
    spec.rank = parse_positive_int(rank_name, rank, 0);
    if (spec.rank >= spec.world_size)
      throw_value_error(kOp, std::string("environment variable ") + rank_name + "=" + rank +
                                 " is not below " + size_name + "=" + size);
    break;
  }
  // Without GPUACCEL_COORDINATOR the spec suits the MPI engine, which joins the ranks mpirun
  // started by itself; Gloo and NCCL then refuse it (require_coordinator).
  const char* coordinator = lookup_or_getenv(lookup, "GPUACCEL_COORDINATOR");
  if (spec.world_size > 1 && coordinator && *coordinator) {
    parse_host_port("GPUACCEL_COORDINATOR", coordinator);
    spec.coordinator = coordinator;
  }
  return spec;
}

void require_coordinator(const ClusterSpec& spec, const std::string& engine) {
  if (spec.world_size <= 1 || !spec.coordinator.empty()) return;
  throw_value_error(kOp, "no TF_CONFIG and " + spec.source + " started " +
                             std::to_string(spec.world_size) + " ranks, but GPUACCEL_COORDINATOR is "
                             "not set, and the " + engine + " engine needs it; expected "
                             "GPUACCEL_COORDINATOR=host:port (rank 0's machine and a free port), "
                             "e.g. mpirun -x GPUACCEL_COORDINATOR=node0:29500 ...");
}

std::chrono::milliseconds collective_timeout_from_environment(const EnvironmentLookup& lookup) {
  const char* text = lookup_or_getenv(lookup, "GPUACCEL_COLLECTIVE_TIMEOUT_SECONDS");
  if (!text || !*text) return kDefaultCollectiveTimeout;
  char* end = nullptr;
  double seconds = std::strtod(text, &end);
  if (*end != '\0' || !(seconds > 0) || seconds > 86400.0 * 7)
    throw_value_error("GPUACCEL_COLLECTIVE_TIMEOUT_SECONDS",
                      std::string("is '") + text + "'; expected a number of seconds > 0");
  return std::chrono::milliseconds(static_cast<long long>(std::ceil(seconds * 1000)));
}

}  // namespace gpuaccel::distribute
