// `emulate` against `simulate` on the same inputs: the simulator's streamer and policies over real
// TCP. These tests need root (CI runs as root); elsewhere they skip, saying why.
#include <gtest/gtest.h>

#include "emulation/emulate.h"
#include "emulation/network_namespace.h"
#include "tests/sim/sim_test_support.h"

namespace kvstream::emulation {
namespace {

sim::SimulationInputs inputs(double gbps, const std::string& policy) {
  sim::SimulationInputs in;
  // 4 chunks of 1,000 tokens: 1, 2 and 4 MB per chunk at levels 1-3, 5 ms to decode.
  in.contexts = {sim::test::hand_profile(4, 1000, {1e6, 2e6, 4e6}, {0.005, 0.005, 0.005}, {0.8, 0.9, 0.98})};
  in.trace = std::make_shared<traces::BandwidthTrace>(std::vector<traces::TraceSegment>{{60, gbps * 1e9}}, "constant");
  in.config.slo_s = 2;
  in.policy = policy;
  return in;
}

TEST(Emulate, FollowsTheSimulatorOnAFastConstantLink) {
  if (const std::string why = emulation_unavailable_reason(); !why.empty()) GTEST_SKIP() << why;
  // 50 Mbit/s keeps the emulator's own CPU (~75 us a packet) to a third of a core.
  const auto in = inputs(0.05, "fixed:cachegen:2");
  const sim::RequestResult simulated = sim::simulate(in).at(0);
  const EmulationReport emulated = emulate(in);
  ASSERT_EQ(emulated.results.size(), 1u);
  const sim::RequestResult& r = emulated.results[0];
  ASSERT_TRUE(r.completed);
  EXPECT_EQ(r.choices, simulated.choices);
  EXPECT_DOUBLE_EQ(r.bytes, simulated.bytes);
  // 8 MB at 50 Mbit/s: the fluid model takes 1.28 s; TCP adds 3.5 % of headers and a slow start.
  EXPECT_GT(r.ttft_s, simulated.ttft_s);
  EXPECT_LT(r.ttft_s, simulated.ttft_s * 1.25) << "emulated " << r.ttft_s << " s, simulated " << simulated.ttft_s << " s";
  EXPECT_EQ(emulated.dropped_packets, 0u);
  EXPECT_LT(emulated.mean_lateness_s, 0.002);
}

TEST(Emulate, PoliciesDecideFromWhatTheyMeasure) {
  if (const std::string why = emulation_unavailable_reason(); !why.empty()) GTEST_SKIP() << why;
  auto in = inputs(0.05, "cachegen:text=0");  // 50 Mbit/s: the best level of all 4 chunks does not fit 2 s
  in.requests = sim::poisson_requests(4, 3, 1, 7);
  in.config.tcp = sim::tcp_model_for(0.02, "bbr", false, 1 << 20);
  const EmulationReport emulated = emulate(in);
  ASSERT_EQ(emulated.results.size(), 3u);
  for (const auto& r : emulated.results) {
    EXPECT_TRUE(r.completed);
    EXPECT_EQ(r.choices.size(), 4u);
    EXPECT_LT(r.ttft_s, 10);
  }
}

std::string error_of(const sim::SimulationInputs& in, double time_limit_s = kEmulationTimeLimitS) {
  try {
    emulate(in, {time_limit_s});
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "no std::invalid_argument";
}

// Runs that would never end, or end only after the limit, are refused before any namespace is made
// (so these need no root): an emulation runs in real time.
TEST(Emulate, ARunThatWouldNeverEndIsRefusedNotWaitedFor) {
  auto in = inputs(0, "fixed:cachegen:1");  // a trace of zeros
  EXPECT_NE(error_of(in).find("delivers no bits from its offset 0 s on: request 0 can never complete"), std::string::npos)
      << error_of(in);
  in = inputs(1e-9, "fixed:cachegen:1");  // 1 bit/s
  EXPECT_NE(error_of(in).find("would take about"), std::string::npos) << error_of(in);
  in = inputs(0.05, "fixed:cachegen:1");  // 4 MB at 50 Mbit/s: 0.64 s
  EXPECT_NE(error_of(in, 0.5).find("more than its limit of 0.5 s (--time-limit-s)"), std::string::npos)
      << error_of(in, 0.5);
}

TEST(Emulate, AChunkIndexedTraceIsRefused) {
  auto in = inputs(1, "fixed:cachegen:1");
  in.trace = std::make_shared<traces::BandwidthTrace>(std::vector<traces::TraceSegment>{{1, 1e9}}, "bw.jsonl#0", true);
  EXPECT_THROW(emulate(in), std::invalid_argument);
}

}  // namespace
}  // namespace kvstream::emulation
