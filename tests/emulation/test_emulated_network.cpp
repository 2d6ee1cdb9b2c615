// Real kernel TCP through an emulated link between two namespaces this process makes. These tests
// need root (CI runs as root); elsewhere they skip, saying why.
#include <gtest/gtest.h>

#include <dirent.h>

#include <chrono>
#include <thread>

#include "emulation/emulated_network.h"
#include "emulation/link_check.h"
#include "emulation/tcp.h"

namespace kvstream::emulation {
namespace {

#define SKIP_UNLESS_EMULATION_WORKS()                                              \
  if (const std::string why = emulation_unavailable_reason(); !why.empty()) \
  GTEST_SKIP() << why

std::shared_ptr<const traces::BandwidthTrace> constant_bps(double bps) {
  return std::make_shared<traces::BandwidthTrace>(std::vector<traces::TraceSegment>{{60, bps}}, "constant");
}

// Seconds for the client to fetch `bytes` from the server over one fresh connection, from connect to the last byte.
double fetch_s(EmulatedNetwork& net, size_t bytes, const std::string& cc) {
  uint16_t port = 0;
  TcpSocket listener;
  run_in(net.server(), [&] { listener = listen_tcp(kServerAddress, 0, &port, cc); });
  std::string server_cc;
  std::thread server([&] {
    ScopedNamespace inside(net.server());
    TcpSocket connection = accept_tcp(listener);
    server_cc = congestion_control_of(connection);
    std::vector<uint8_t> data(bytes, 0x5a);
    connection.write_all(data.data(), data.size());
  });
  double seconds = 0;
  run_in(net.client(), [&] {
    const auto start = std::chrono::steady_clock::now();
    TcpSocket connection = connect_tcp(kServerAddress, port, cc);
    connection.read_and_discard(bytes);
    seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  });
  server.join();
  EXPECT_EQ(server_cc, cc) << "the sender's congestion control";
  return seconds;
}

size_t open_descriptors() {
  size_t count = 0;
  if (DIR* dir = ::opendir("/proc/self/fd")) {
    while (::readdir(dir)) ++count;
    ::closedir(dir);
  }
  return count;
}

TEST(EmulatedNetwork, TcpGoodputIsTheLinkRateLessHeaders) {
  SKIP_UNLESS_EMULATION_WORKS();
  NetworkConfig config;
  config.link.down = {constant_bps(50e6), 0, 0.010};
  config.link.up = {nullptr, 0, 0.010};
  EmulatedNetwork net(config);
  const size_t bytes = 6'000'000;
  const double seconds = fetch_s(net, bytes, "cubic");
  // 1,448 of every 1,500 bytes are payload; the handshake and slow start cost a few round trips.
  const double ideal_s = bytes * 8.0 / (50e6 * 1448 / 1500);
  EXPECT_GT(seconds, ideal_s);
  EXPECT_LT(seconds, ideal_s + 0.5) << "goodput " << bytes * 8 / seconds / 1e6 << " Mbit/s";
  const auto stats = net.link().stats();
  EXPECT_GT(stats.down.bytes, bytes);
  EXPECT_EQ(stats.write_errors, 0u);
  EXPECT_LT(stats.mean_lateness_s, 0.002);
}

// With offloads the link reads super-packets and, when its queue drops part of one or its segments
// leave over more than a slice's span, writes slices with rewritten headers (gso_packet.h). Nothing
// verifies those packets' checksums on the way in (they stay partial), so the bytes are compared
// here: pseudo-random content through a queue that drops, both ways of running the link.
TEST(EmulatedNetwork, EveryByteArrivesInOrderThroughDropsWithAndWithoutOffloads) {
  SKIP_UNLESS_EMULATION_WORKS();
  for (const bool offloads : {true, false}) {
    NetworkConfig config;
    config.link.down = {constant_bps(200e6), 0, 0.002, 100'000};  // 4 ms of queue: slow start overflows it
    config.link.up = {nullptr, 0, 0.002};
    config.link.offloads = offloads;
    EmulatedNetwork net(config);
    std::vector<uint8_t> sent(12'000'000);
    uint64_t x = 88172645463325252ull;
    for (auto& byte : sent) {
      x ^= x << 13, x ^= x >> 7, x ^= x << 17;
      byte = uint8_t(x);
    }
    uint16_t port = 0;
    TcpSocket listener;
    run_in(net.server(), [&] { listener = listen_tcp(kServerAddress, 0, &port, "cubic"); });
    std::thread server([&] {
      ScopedNamespace inside(net.server());
      TcpSocket connection = accept_tcp(listener);
      connection.write_all(sent.data(), sent.size());
    });
    std::vector<uint8_t> received(sent.size());
    run_in(net.client(),
           [&] { connect_tcp(kServerAddress, port, "cubic").read_exact(received.data(), received.size()); });
    server.join();
    EXPECT_TRUE(received == sent) << (offloads ? "with" : "without") << " offloads";
    const auto stats = net.link().stats();
    EXPECT_GT(stats.down.dropped_packets, 0u) << "the queue never overflowed: no partial super-packet was tried";
    EXPECT_EQ(stats.write_errors, 0u);
  }
}

TEST(EmulatedNetwork, TheRoundTripIsTheTwoDelays) {
  SKIP_UNLESS_EMULATION_WORKS();
  NetworkConfig config;
  config.link.down = {nullptr, 0, 0.020};
  config.link.up = {nullptr, 0, 0.020};
  EmulatedNetwork net(config);
  // Handshake (one round trip) and one request's answer (another): about 80 ms for a tiny fetch.
  const double seconds = fetch_s(net, 100, "bbr");
  EXPECT_GT(seconds, 0.078);
  EXPECT_LT(seconds, 0.120);
}

TEST(EmulatedNetwork, NothingIsLeftBehind) {
  SKIP_UNLESS_EMULATION_WORKS();
  const size_t before = open_descriptors();
  {
    NetworkConfig config;
    config.link.down = {constant_bps(20e6), 0, 0.001};
    EmulatedNetwork net(config);
    fetch_s(net, 100'000, "cubic");
  }
  EXPECT_EQ(open_descriptors(), before);  // namespaces, TUN devices and the link's descriptors are gone
}

// link-check compares delivered bytes with the trace per window; with no capacity in any window of
// the span nothing is compared, which is an error rather than "median 0, p95 0, max 0" (as before).
TEST(LinkCheck, ASpanWithoutCapacityIsAnErrorNotAPerfectScore) {
  LinkCheckOptions check;
  check.seconds = 0.5;
  check.trace = std::make_shared<traces::BandwidthTrace>(std::vector<traces::TraceSegment>{{60, 0}}, "zeros");
  EXPECT_THROW(check_link(check), std::invalid_argument);  // refused before anything is set up
  check.window_s = 1e-12;
  check.trace = constant_bps(1e7);
  EXPECT_THROW(check_link(check), std::invalid_argument);  // 5e11 windows once asked for 4 TB
  SKIP_UNLESS_EMULATION_WORKS();
  check.window_s = 0.1;
  // 2 s without capacity (the warm-up and the whole span), then 10 Mbit/s.
  check.trace = std::make_shared<traces::BandwidthTrace>(std::vector<traces::TraceSegment>{{2, 0}, {60, 1e7}}, "outage");
  try {
    check_link(check);
    FAIL() << "a span without capacity was scored";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("has no capacity in any window"), std::string::npos) << e.what();
  }
}

TEST(EmulatedNetwork, AnUnknownCongestionControlIsRefused) {
  SKIP_UNLESS_EMULATION_WORKS();
  NetworkConfig config;
  config.congestion_control = "vegas-nope";
  EXPECT_THROW(EmulatedNetwork net(config), std::invalid_argument);
}

}  // namespace
}  // namespace kvstream::emulation
