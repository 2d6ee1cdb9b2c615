// The tcp link model (sim/tcp_connection_link.h) as arithmetic: headers, slow start to the
// bandwidth-delay product, restart after idle, and fluid sharing once the window covers the path.
#include <gtest/gtest.h>

#include "sim/simulation.h"
#include "sim/tcp_connection_link.h"
#include "tests/sim/sim_test_support.h"

namespace kvstream::sim {
namespace {

constexpr double kOverhead = 1500.0 / 1448;

// Seconds for one send of `bytes` on a fresh connection at `gbps` with round trip `rtt_s`.
struct Fixture {
  EventQueue events;
  traces::BandwidthTrace trace;
  SharedLink shared;
  TcpModel model;
  TcpConnectionLink link;
  Fixture(double gbps, double rtt_s)
      : trace(test::gbps_trace({{1000, gbps}})),
        shared(events, trace, 0),
        model{rtt_s},
        link(events, shared, model, [this](double t) { return trace.capacity_bps(t); }) {}
  double send_s(double bytes) {
    const double start = events.now_s();
    double end = -1;
    events.schedule(start, [&] { link.send(8 * bytes, 0, [&] { end = events.now_s(); }); });
    events.run();
    return end - start;
  }
};

TEST(TcpConnectionLink, WithoutARoundTripOnlyTheHeadersCost) {
  Fixture f(0.1, 0);
  EXPECT_NEAR(f.send_s(1e6), 8e6 * kOverhead / 1e8, 1e-12);
}

TEST(TcpConnectionLink, SlowStartDoublesTheWindowEveryRoundTrip) {
  // 1 Gbit/s x 10 ms: a BDP of 1.25 MB, far above the initial 14,480 bytes.
  Fixture f(1, 0.010);
  const double iw = 10 * 1448.0;
  // A chunk of 3 initial windows: a round of 1 window, then one of 2 windows.
  EXPECT_NEAR(f.send_s(3 * iw), 0.010 + 2 * iw * 8 * kOverhead / 1e9, 1e-12);
  EXPECT_DOUBLE_EQ(f.link.cwnd_bytes(), 4 * iw);
}

TEST(TcpConnectionLink, OnceTheWindowCoversThePathTheRestIsFluid) {
  Fixture f(0.01, 0.010);  // 10 Mbit/s x 10 ms: 12,500 bytes, less than the initial window
  EXPECT_NEAR(f.send_s(1e6), 8e6 * kOverhead / 1e7, 1e-12);
}

TEST(TcpConnectionLink, AnIdleConnectionRestartsItsWindow) {
  Fixture f(1, 0.010);
  f.send_s(10e6);
  const double grown = f.link.cwnd_bytes();
  EXPECT_GT(grown, 1e6);
  f.events.schedule(f.events.now_s() + 0.1, [] {});  // idle 0.1 s: less than one timeout (0.21 s)
  f.events.run();
  f.send_s(1);
  EXPECT_NEAR(f.link.cwnd_bytes(), grown, 1e-9);  // the window covers the path: no growth
  f.events.schedule(f.events.now_s() + 10, [] {});  // idle 10 s: many timeouts, back to the initial window
  f.events.run();
  f.send_s(1);
  EXPECT_NEAR(f.link.cwnd_bytes(), 10 * 1448.0 + 1, 1e-9);  // restarted, then grown by the byte sent
}

TEST(TcpConnectionLink, SimulateUsesItWhenAsked) {
  SimulationInputs in;
  in.contexts = {test::hand_profile(2, 100, {1e6}, {0.0}, {0.9})};
  in.trace = std::make_shared<traces::BandwidthTrace>(test::gbps_trace({{1000, 0.1}}));
  in.policy = "fixed:cachegen:1";
  const double fluid_s = simulate(in).at(0).ttft_s;
  in.config.link_model = LinkModel::kTcp;
  EXPECT_NEAR(simulate(in).at(0).ttft_s, fluid_s * kOverhead, 1e-9);
  in.trace = std::make_shared<traces::BandwidthTrace>(std::vector<traces::TraceSegment>{{1, 1e9}}, "bw", true);
  EXPECT_THROW(simulate(in), std::invalid_argument);
}

}  // namespace
}  // namespace kvstream::sim
