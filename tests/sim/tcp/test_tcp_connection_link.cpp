// The tcp link model (sim/tcp/tcp_connection_link.h) as arithmetic: headers, slow start to the
// bandwidth-delay product, drop-tail losses, restart after idle, and fluid sharing once the window
// covers the path.
#include <gtest/gtest.h>

#include "sim/simulation.h"
#include "sim/tcp/tcp_connection_link.h"
#include "tests/sim/sim_test_support.h"

namespace kvstream::sim {
namespace {

constexpr double kOverhead = 1500.0 / 1448;
constexpr double kPacketBits = 8 * 1500.0;

// One connection over a constant `gbps` link with round trip `rtt_s`.
struct Fixture {
  EventQueue events;
  traces::BandwidthTrace trace;
  SharedLink shared;
  TcpConnectionLink link;
  Fixture(double gbps, double rtt_s, const std::string& cc = "reno", uint64_t queue_bytes = 0)
      : trace(test::gbps_trace({{1000, gbps}})),
        shared(events, trace, 0),
        link(events, shared, tcp_model_for(rtt_s, cc, true, queue_bytes), trace, 0) {}
  // Seconds for one send of `bytes`, from now.
  double send_s(double bytes) {
    const double start = events.now_s();
    double end = -1;
    events.schedule(start, [&] { link.send(8 * bytes, 0, 0, [&] { end = events.now_s(); }); });
    events.run();
    return end - start;
  }
  void idle(double s) {
    events.schedule(events.now_s() + s, [] {});
    events.run();
  }
  double window() const { return link.congestion_control().window_packets(); }
};

TEST(TcpConnectionLink, WithoutARoundTripOnlyTheHeadersCost) {
  Fixture f(0.1, 0);
  EXPECT_NEAR(f.send_s(1e6), 8e6 * kOverhead / 1e8, 1e-12);
}

TEST(TcpConnectionLink, SlowStartDoublesTheWindowEveryRoundTrip) {
  // 1 Gbit/s x 10 ms: a BDP of 833 packets, far above the initial 10.
  Fixture f(1, 0.010);
  const double iw_bytes = 10 * 1448.0;
  // A chunk of 3 initial windows: a round of 1 window, then one of 2 windows.
  EXPECT_NEAR(f.send_s(3 * iw_bytes), 0.010 + 20 * kPacketBits / 1e9, 1e-12);
  EXPECT_DOUBLE_EQ(f.window(), 40);
}

TEST(TcpConnectionLink, OnceTheWindowCoversThePathTheRestIsFluid) {
  Fixture f(0.01, 0.010);  // 10 Mbit/s x 10 ms: 8 packets, fewer than the initial window
  EXPECT_NEAR(f.send_s(1e6), 8e6 * kOverhead / 1e7, 1e-12);
}

TEST(TcpConnectionLink, AWindowBeyondPipeAndQueueLosesTheRestAndSendsItAgain) {
  // 100 Mbit/s x 20 ms: a pipe of 166.7 packets, and a queue of 20 packets.
  Fixture f(0.1, 0.020, "reno", 20 * 1500);
  const double bytes = 5e6;
  const double lossless_s = Fixture(0.1, 0.020).send_s(bytes);
  const double s = f.send_s(bytes);
  // Slow start doubles past pipe + queue (160 -> 320 packets): 133 packets are lost and reno halves.
  EXPECT_NEAR(f.link.lost_bits(), (320 - 166.667 - 20) * kPacketBits, 1e-3 * kPacketBits);
  EXPECT_GT(s, lossless_s);
  // Everything arrives once: the link carried the chunk, its headers and the resent packets.
  EXPECT_GE(s, (8 * bytes * kOverhead) / 1e8);
}

TEST(TcpConnectionLink, AnUnboundedQueueLosesNothing) {
  Fixture f(0.1, 0.020);
  f.send_s(5e6);
  EXPECT_EQ(f.link.lost_bits(), 0);
}

// Connections share one drop-tail queue: what others have in flight beyond the path's
// bandwidth-delay product stands in it, every round of a newcomer waits behind it, and it takes the
// queue's room, so a newcomer's burst overflows what would have held it alone.
TEST(TcpConnectionLink, ANewcomerWaitsBehindTheQueueOthersKeepAndLosesWhereItIsFull) {
  const double bytes = 3 * 10 * 1448.0;  // two rounds alone: 10 packets, then 20
  {
    Fixture f(0.1, 0.020);  // 100 Mbit/s x 20 ms: a pipe of 2 Mbit; the queue unbounded
    const double alone_s = Fixture(0.1, 0.020).send_s(bytes);
    f.shared.send(20e6, 0, 0, [] {});  // 20 Mbit of another connection: 18 of them queued
    const double s = f.send_s(bytes);
    // The first round's acknowledgements return after the round trip and 18 Mbit at 100 Mbit/s;
    // by then the other connection has drained, and the second round goes as it would alone.
    EXPECT_NEAR(s, alone_s + 0.18, 2e-3) << "alone " << alone_s;
    EXPECT_EQ(f.link.lost_bits(), 0);
  }
  {
    Fixture f(0.1, 0.020, "reno", 20 * 1500);  // a queue of 20 packets: the first burst of 10 fits alone
    Fixture alone(0.1, 0.020, "reno", 20 * 1500);
    alone.send_s(bytes);
    EXPECT_EQ(alone.link.lost_bits(), 0);
    f.shared.send(20e6, 0, 0, [] {});  // fills the queue
    f.send_s(bytes);
    EXPECT_GE(f.link.lost_bits(), 9 * kPacketBits - 1e-6) << "all but one packet of the first burst";
  }
}

TEST(TcpConnectionLink, WithoutARoundTripANewcomersBitsFlowOnceTheQueueAheadHasDrained) {
  Fixture f(0.1, 0, "reno", 1'000'000);  // 100 Mbit/s, no round trip, an 8 Mbit queue
  f.shared.send(20e6, 0, 0, [] {});     // another connection's 20 Mbit: 8 of them fit the queue
  const double s = f.send_s(1e6);
  // 8 Mbit drain in 0.08 s; then the two share the link until the newcomer's 8.29 Mbit are through.
  EXPECT_NEAR(s, 0.08 + 2 * 8e6 * kOverhead / 1e8, 1e-9);
}

TEST(TcpConnectionLink, AnIdleConnectionRestartsItsWindowUnderCubicButNotBbr) {
  for (const std::string cc : {"cubic", "bbr"}) {
    Fixture f(1, 0.010, cc);
    f.send_s(10e6);
    const double grown = f.window();
    EXPECT_GT(grown, 100) << cc;
    f.idle(0.1);  // less than one timeout (0.21 s)
    EXPECT_NEAR(f.send_s(1e6), 8e6 * kOverhead / 1e9 + (grown * 1500 < 1e6 * kOverhead ? 0.01 : 0), 0.011) << cc;
    f.idle(10);  // many timeouts
    const double after_idle_s = f.send_s(1e6);
    if (cc == "cubic")  // from 10 packets again: 1 MB takes 6 round trips
      EXPECT_GT(after_idle_s, 0.05) << cc;
    else
      EXPECT_LT(after_idle_s, 0.025) << cc;
  }
}

TEST(TcpConnectionLink, SimulateUsesItWhenAsked) {
  SimulationInputs in;
  in.contexts = {test::hand_profile(2, 100, {1e6}, {0.0}, {0.9})};
  in.trace = std::make_shared<traces::BandwidthTrace>(test::gbps_trace({{1000, 0.1}}));
  in.policy = "fixed:cachegen:1";
  const double fluid_s = simulate(in).at(0).ttft_s;
  in.config.link_model = LinkModel::kTcp;
  EXPECT_NEAR(simulate(in).at(0).ttft_s, fluid_s * kOverhead, 1e-9);
  in.config.tcp = tcp_model_for(0.02, "cubic", true, 0);
  EXPECT_GT(simulate(in).at(0).ttft_s, fluid_s * kOverhead + 0.02);  // slow start's round trips
  in.config.tcp.congestion_control = "vegas";
  EXPECT_THROW(simulate(in), std::invalid_argument);
  in.config.tcp.congestion_control = "cubic";
  in.trace = std::make_shared<traces::BandwidthTrace>(std::vector<traces::TraceSegment>{{1, 1e9}}, "bw", true);
  EXPECT_THROW(simulate(in), std::invalid_argument);
}

}  // namespace
}  // namespace kvstream::sim
