// TcpStore (see tcp_store.h). Wire format, both directions little-endian on the same machine
// kind: request = command byte, u32 key length, key, u32 value length, value; reply to set =
// one byte; reply to get = found byte, u32 value length, value.
#include "distribute/tcp_store.h"

#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>

#include "core/errors.h"
#include "distribute/collective.h"

namespace gpuaccel::distribute {
namespace {

using Clock = std::chrono::steady_clock;
constexpr auto kPollInterval = std::chrono::milliseconds(10);
constexpr uint32_t kMaxMessageBytes = 64u << 20;

bool send_all(int fd, const void* data, size_t size) {
  const char* p = static_cast<const char*>(data);
  while (size > 0) {
    ssize_t n = ::send(fd, p, size, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    p += n;
    size -= static_cast<size_t>(n);
  }
  return true;
}

bool recv_all(int fd, void* data, size_t size) {
  char* p = static_cast<char*>(data);
  while (size > 0) {
    ssize_t n = ::recv(fd, p, size, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    p += n;
    size -= static_cast<size_t>(n);
  }
  return true;
}

bool send_bytes(int fd, const char* data, size_t size) {
  uint32_t length = static_cast<uint32_t>(size);
  return send_all(fd, &length, sizeof(length)) && send_all(fd, data, size);
}

bool recv_bytes(int fd, std::string* out) {
  uint32_t length = 0;
  if (!recv_all(fd, &length, sizeof(length)) || length > kMaxMessageBytes) return false;
  out->resize(length);
  return recv_all(fd, out->data(), length);
}

std::string milliseconds_text(std::chrono::milliseconds ms) {
  return std::to_string(ms.count()) + " ms";
}

}  // namespace

TcpStore::TcpStore(const std::string& host, int port, bool serve, std::chrono::milliseconds timeout)
    : host_(host), port_(port), timeout_(timeout) {
  if (serve) {
    listen_fd_ = ::socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC, 0);
    int off = 0, on = 1;
    bool dual_stack = listen_fd_ >= 0 &&
                      ::setsockopt(listen_fd_, IPPROTO_IPV6, IPV6_V6ONLY, &off, sizeof(off)) == 0;
    if (!dual_stack) {  // no IPv6 on this machine: IPv4 only
      if (listen_fd_ >= 0) ::close(listen_fd_);
      listen_fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    }
    ::setsockopt(listen_fd_, SOL_SOCKET, SO_REUSEADDR, &on, sizeof(on));
    sockaddr_storage address{};
    socklen_t length;
    if (dual_stack) {
      auto* a6 = reinterpret_cast<sockaddr_in6*>(&address);
      a6->sin6_family = AF_INET6;
      a6->sin6_addr = in6addr_any;
      a6->sin6_port = htons(static_cast<uint16_t>(port));
      length = sizeof(sockaddr_in6);
    } else {
      auto* a4 = reinterpret_cast<sockaddr_in*>(&address);
      a4->sin_family = AF_INET;
      a4->sin_addr.s_addr = htonl(INADDR_ANY);
      a4->sin_port = htons(static_cast<uint16_t>(port));
      length = sizeof(sockaddr_in);
    }
    if (::bind(listen_fd_, reinterpret_cast<sockaddr*>(&address), length) != 0 ||
        ::listen(listen_fd_, 128) != 0) {
      int error = errno;
      ::close(listen_fd_);
      throw_value_error("rendezvous", "rank 0 cannot serve the rendezvous on port " +
                                          std::to_string(port) + " (" + std::strerror(error) +
                                          "); expected a free port in the chief's address");
    }
    ::getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&address), &length);
    served_port_ = dual_stack ? ntohs(reinterpret_cast<sockaddr_in6*>(&address)->sin6_port)
                              : ntohs(reinterpret_cast<sockaddr_in*>(&address)->sin_port);
    accept_thread_ = std::thread([this] { serve_loop(); });
  }

  // Every rank, rank 0 included, talks to the server through one client connection.
  std::string connect_host = serve ? "127.0.0.1" : host_;
  int connect_port = serve ? served_port_ : port_;
  auto deadline = Clock::now() + timeout_;
  std::string last_error = "no attempt";
  while (client_fd_ < 0) {
    addrinfo hints{};
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    addrinfo* found = nullptr;
    int status = ::getaddrinfo(connect_host.c_str(), std::to_string(connect_port).c_str(), &hints, &found);
    if (status != 0) {
      last_error = std::string("cannot resolve host: ") + gai_strerror(status);
    } else {
      for (addrinfo* a = found; a && client_fd_ < 0; a = a->ai_next) {
        int fd = ::socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
        if (fd < 0) continue;
        if (::connect(fd, a->ai_addr, a->ai_addrlen) == 0) {
          client_fd_ = fd;
        } else {
          last_error = std::strerror(errno);
          ::close(fd);
        }
      }
      ::freeaddrinfo(found);
    }
    if (client_fd_ >= 0) break;
    if (Clock::now() >= deadline) {
      stop();  // the server thread this constructor may have started
      throw PeerUnavailableError(
          "[rendezvous] could not reach rank 0's rendezvous at " + host + ":" +
          std::to_string(port) + " within the timeout of " + milliseconds_text(timeout_) +
          " (last error: " + last_error + "); is the chief running, and is its address right?");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  int on = 1;
  ::setsockopt(client_fd_, IPPROTO_TCP, TCP_NODELAY, &on, sizeof(on));
  // A server that stops answering (but keeps the connection) is bounded too.
  timeval tv{};
  tv.tv_sec = static_cast<time_t>(timeout_.count() / 1000);
  tv.tv_usec = static_cast<suseconds_t>((timeout_.count() % 1000) * 1000);
  ::setsockopt(client_fd_, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
  ::setsockopt(client_fd_, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
}

TcpStore::~TcpStore() { stop(); }

void TcpStore::stop() {
  if (client_fd_ >= 0) {
    ::close(client_fd_);
    client_fd_ = -1;
  }
  if (listen_fd_ >= 0) {
    stopping_ = true;
    ::shutdown(listen_fd_, SHUT_RDWR);  // wakes accept()
    if (accept_thread_.joinable()) accept_thread_.join();
    {
      std::lock_guard<std::mutex> lock(server_mutex_);
      for (int fd : client_fds_) ::shutdown(fd, SHUT_RDWR);  // wakes each recv()
    }
    for (auto& thread : client_threads_) thread.join();
    client_threads_.clear();
    for (int fd : client_fds_) ::close(fd);
    client_fds_.clear();
    ::close(listen_fd_);
    listen_fd_ = -1;
  }
}

void TcpStore::serve_loop() {
  while (!stopping_) {
    int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0) {
      if (errno == EINTR || errno == ECONNABORTED) continue;
      return;  // shut down
    }
    int on = 1;
    ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &on, sizeof(on));
    std::lock_guard<std::mutex> lock(server_mutex_);
    client_fds_.push_back(fd);
    client_threads_.emplace_back([this, fd] { serve_client(fd); });
  }
}

void TcpStore::serve_client(int fd) {
  while (true) {
    char command = 0;
    std::string key, value;
    if (!recv_all(fd, &command, 1) || !recv_bytes(fd, &key) || !recv_bytes(fd, &value)) return;
    if (command == static_cast<char>(Command::kSet)) {
      {
        std::lock_guard<std::mutex> lock(server_mutex_);
        values_[key] = std::vector<char>(value.begin(), value.end());
      }
      char ok = 1;
      if (!send_all(fd, &ok, 1)) return;
    } else if (command == static_cast<char>(Command::kGet)) {
      std::vector<char> found_value;
      char found = 0;
      {
        std::lock_guard<std::mutex> lock(server_mutex_);
        auto it = values_.find(key);
        if (it != values_.end()) {
          found = 1;
          found_value = it->second;
        }
      }
      if (!send_all(fd, &found, 1) || !send_bytes(fd, found_value.data(), found_value.size())) return;
    } else {
      return;  // not our protocol: drop the connection
    }
  }
}

bool TcpStore::request(Command command, const std::string& key, const std::vector<char>& value,
                       std::vector<char>* reply) {
  std::lock_guard<std::mutex> lock(client_mutex_);
  char code = static_cast<char>(command);
  if (!send_all(client_fd_, &code, 1) || !send_bytes(client_fd_, key.data(), key.size()) ||
      !send_bytes(client_fd_, value.data(), value.size()))
    connection_lost("sending '" + key + "'");
  char status = 0;
  if (!recv_all(client_fd_, &status, 1)) connection_lost("waiting for the answer about '" + key + "'");
  if (command == Command::kGet) {
    std::string bytes;
    if (!recv_bytes(client_fd_, &bytes)) connection_lost("reading '" + key + "'");
    if (reply) reply->assign(bytes.begin(), bytes.end());
  }
  return status != 0;
}

void TcpStore::connection_lost(const std::string& what) const {
  throw PeerUnavailableError("[rendezvous] lost the connection to rank 0's rendezvous at " +
                             host_ + ":" + std::to_string(port_) + " while " + what +
                             " (timeout " + milliseconds_text(timeout_) +
                             "); the chief (rank 0) stopped or is unreachable");
}

void TcpStore::set(const std::string& key, const std::vector<char>& value) {
  request(Command::kSet, key, value, nullptr);
}

std::vector<char> TcpStore::get(const std::string& key) {
  wait({key}, timeout_);
  std::vector<char> value;
  request(Command::kGet, key, {}, &value);
  return value;
}

void TcpStore::wait(const std::vector<std::string>& keys, std::chrono::milliseconds timeout) {
  auto deadline = Clock::now() + timeout;
  size_t next = 0;  // keys before `next` are known to be set
  while (next < keys.size()) {
    if (request(Command::kGet, keys[next], {}, nullptr)) {
      ++next;
      continue;
    }
    if (Clock::now() >= deadline) {
      std::string missing;
      for (size_t i = next; i < keys.size(); ++i) missing += (missing.empty() ? "'" : ", '") + keys[i] + "'";
      throw PeerUnavailableError("[rendezvous] waited " + milliseconds_text(timeout) +
                                 " (the timeout) at " + host_ + ":" + std::to_string(port_) +
                                 " for " + missing +
                                 ", which the other worker(s) never published: a worker did "
                                 "not start, crashed, or has a different TF_CONFIG");
    }
    std::this_thread::sleep_for(kPollInterval);
  }
}

}  // namespace gpuaccel::distribute
