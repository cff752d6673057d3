// The rendezvous store: values cross between ranks, waits are bounded by the timeout and name
// what they waited for, and a client whose server is gone fails instead of hanging.
#include "distribute/tcp_store.h"

#include <gtest/gtest.h>

#include <thread>

#include "core/errors.h"
#include "distribute/collective.h"

namespace gpuaccel::distribute {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

std::vector<char> bytes(const std::string& s) { return {s.begin(), s.end()}; }

TEST(TcpStore, ClientsSeeEachOthersValues) {
  TcpStore server("127.0.0.1", 0, /*serve=*/true, 5s);
  ASSERT_GT(server.served_port(), 0);
  TcpStore client("127.0.0.1", server.served_port(), /*serve=*/false, 5s);
  server.set("rank_0", bytes("address of 0"));
  client.set("rank_1", bytes(std::string("\0binary\xff", 8)));
  EXPECT_EQ(client.get("rank_0"), bytes("address of 0"));
  EXPECT_EQ(server.get("rank_1"), bytes(std::string("\0binary\xff", 8)));
  client.set("rank_1", bytes("overwritten"));
  EXPECT_EQ(server.get("rank_1"), bytes("overwritten"));
}

TEST(TcpStore, GetWaitsForAValueSetLater) {
  TcpStore server("127.0.0.1", 0, true, 5s);
  std::thread late([port = server.served_port()] {
    TcpStore client("127.0.0.1", port, false, 5s);
    std::this_thread::sleep_for(200ms);
    client.set("late", bytes("here"));
  });
  EXPECT_EQ(server.get("late"), bytes("here"));
  late.join();
}

TEST(TcpStore, ClientRetriesUntilTheServerStarts) {
  // Find a free port, then start the server after the client began retrying.
  int port;
  {
    TcpStore probe("127.0.0.1", 0, true, 1s);
    port = probe.served_port();
  }
  std::unique_ptr<TcpStore> server;
  std::thread starter([&] {
    std::this_thread::sleep_for(300ms);
    server = std::make_unique<TcpStore>("127.0.0.1", port, true, 5s);
    server->set("k", bytes("v"));
  });
  TcpStore client("127.0.0.1", port, false, 5s);
  EXPECT_EQ(client.get("k"), bytes("v"));
  starter.join();
}

TEST(TcpStore, WaitPastTheTimeoutNamesTheMissingKeys) {
  TcpStore server("127.0.0.1", 0, true, 5s);
  server.set("rank_0", bytes("x"));
  auto start = Clock::now();
  try {
    server.wait({"rank_0", "rank_1", "rank_2"}, 300ms);
    FAIL() << "no error";
  } catch (const PeerUnavailableError& e) {
    std::string message = e.what();
    EXPECT_NE(message.find("'rank_1', 'rank_2'"), std::string::npos) << message;
    EXPECT_EQ(message.find("'rank_0'"), std::string::npos) << message;
    EXPECT_NE(message.find("300 ms"), std::string::npos) << message;
  }
  auto elapsed = Clock::now() - start;
  EXPECT_GE(elapsed, 300ms);
  EXPECT_LT(elapsed, 5s);
}

TEST(TcpStore, NoServerIsAnErrorAfterTheTimeout) {
  int port;
  {
    TcpStore probe("127.0.0.1", 0, true, 1s);
    port = probe.served_port();
  }
  auto start = Clock::now();
  try {
    TcpStore client("127.0.0.1", port, false, 400ms);
    FAIL() << "connected to nothing";
  } catch (const PeerUnavailableError& e) {
    EXPECT_NE(std::string(e.what()).find("could not reach rank 0's rendezvous at 127.0.0.1:" +
                                         std::to_string(port)),
              std::string::npos)
        << e.what();
  }
  EXPECT_LT(Clock::now() - start, 5s);
}

TEST(TcpStore, ServerGoneIsAnErrorNotAHang) {
  auto server = std::make_unique<TcpStore>("127.0.0.1", 0, true, 5s);
  TcpStore client("127.0.0.1", server->served_port(), false, 5s);
  server.reset();
  try {
    client.get("anything");
    FAIL() << "no error";
  } catch (const PeerUnavailableError& e) {
    EXPECT_NE(std::string(e.what()).find("lost the connection"), std::string::npos) << e.what();
  }
}

TEST(TcpStore, PortInUseIsAValueError) {
  TcpStore first("127.0.0.1", 0, true, 1s);
  EXPECT_THROW(TcpStore("127.0.0.1", first.served_port(), true, 1s), gpuaccel::Error);
}

}  // namespace
}  // namespace gpuaccel::distribute
