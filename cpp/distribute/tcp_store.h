// The rendezvous key-value store of a multi-worker job: rank 0 (the chief) serves it on the
// coordinator's port, every rank (rank 0 included) is a client. Gloo's ranks publish their
// transport addresses here and read each other's; the all-reduce itself never passes through
// it. Debian's Gloo has no TCP store (only file, hash and Redis stores), so this is the only
// socket code gpuaccel owns, kept small: one request at a time per client, values polled.
// Every wait is bounded by the timeout and fails with PeerUnavailableError naming what it
// waited for, so a worker that never arrives is an error, not a hang.
#pragma once

#include <atomic>
#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace gpuaccel::distribute {

class TcpStore {
 public:
  // `serve`: also listen on `port` (all interfaces) and answer the other ranks. Clients retry
  // connecting to host:port until `timeout`. Throws PeerUnavailableError past the timeout, and
  // ValueError (gpuaccel::Error) when the port cannot be served.
  TcpStore(const std::string& host, int port, bool serve, std::chrono::milliseconds timeout);
  ~TcpStore();
  TcpStore(const TcpStore&) = delete;
  TcpStore& operator=(const TcpStore&) = delete;

  void set(const std::string& key, const std::vector<char>& value);
  // Waits (up to the timeout) until `key` is set, then returns its value.
  std::vector<char> get(const std::string& key);
  // Waits until every key is set; PeerUnavailableError after `timeout` names the missing keys.
  void wait(const std::vector<std::string>& keys, std::chrono::milliseconds timeout);
  void wait(const std::vector<std::string>& keys) { wait(keys, timeout_); }

  std::chrono::milliseconds timeout() const { return timeout_; }
  // The port served (useful when `port` was 0); 0 for a client-only store.
  int served_port() const { return served_port_; }

 private:
  enum class Command : char { kSet = 'S', kGet = 'G' };
  // Sends one request and reads the reply; the reply of kGet is (found, value).
  bool request(Command command, const std::string& key, const std::vector<char>& value,
               std::vector<char>* reply);
  void stop();  // closes the client connection and stops serving
  void serve_loop();
  void serve_client(int fd);
  [[noreturn]] void connection_lost(const std::string& what) const;

  std::string host_;
  int port_;
  std::chrono::milliseconds timeout_;
  int client_fd_ = -1;
  std::mutex client_mutex_;

  // Server side (rank 0 only).
  int listen_fd_ = -1;
  int served_port_ = 0;
  std::atomic<bool> stopping_{false};
  std::thread accept_thread_;
  std::mutex server_mutex_;
  std::map<std::string, std::vector<char>> values_;
  std::vector<int> client_fds_;
  std::vector<std::thread> client_threads_;
};

}  // namespace gpuaccel::distribute
