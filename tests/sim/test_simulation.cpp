// The simulator end to end: hand-computed TTFTs, agreement with the timeline model, the artifact
// rule on CacheGen's own trace, load, determinism.
#include <gtest/gtest.h>

#include <random>

#include "common/data_resolver.h"
#include "sim/link.h"
#include "sim/policy.h"
#include "sim/request_timeline.h"
#include "sim/simulation.h"
#include "tests/sim/sim_test_support.h"
#include "traces/trace_readers.h"

namespace kvstream::sim {
namespace {

using test::gbps_trace;
using test::hand_profile;

// Two chunks of 1 MB (8 Mbit) at level 1, decode 5 ms each.
ContextProfile two_chunks() { return hand_profile(2, 100, {1e6}, {0.005}, {0.9}); }

RequestResult run_one(const ContextProfile& profile, const traces::BandwidthTrace& trace, const SimConfig& config,
                      const std::string& policy = "fixed:cachegen:1",
                      std::optional<HardwareProfile> hardware = std::nullopt) {
  SimulationInputs in{{profile}, std::make_shared<traces::BandwidthTrace>(trace), hardware, config, policy};
  return simulate(in).at(0);
}

TEST(Simulation, ConstantBandwidthWithAndWithoutPipelining) {
  SimConfig config;
  config.pipelining = true;
  // 1 Gbps: each chunk 8 ms. Chunk 1 flies while chunk 0 decodes: 8 + 8 + 5 ms.
  auto r = run_one(two_chunks(), gbps_trace({{1, 1.0}}), config);
  EXPECT_NEAR(r.ttft_s, 0.021, 1e-12);
  EXPECT_NEAR(r.transfer_s, 0.016, 1e-12);
  EXPECT_NEAR(r.decode_s, 0.010, 1e-12);
  EXPECT_DOUBLE_EQ(r.bytes, 2e6);
  EXPECT_DOUBLE_EQ(r.quality, 0.9);
  EXPECT_EQ(r.choices, (std::vector<std::string>{"cachegen:1", "cachegen:1"}));
  config.pipelining = false;  // chunk 1 waits for chunk 0's decode: 8 + 5 + 8 + 5 ms
  r = run_one(two_chunks(), gbps_trace({{1, 1.0}}), config);
  EXPECT_NEAR(r.ttft_s, 0.026, 1e-12);
}

TEST(Simulation, StepDropMidChunk) {
  // 1 Gbps for 4 ms (4 Mbit of chunk 0), then 0.5 Gbps: 4 Mbit more takes 8 ms -> chunk 0 at 12 ms,
  // chunk 1 at 12 + 16 = 28 ms, decoded at 33 ms.
  const auto r = run_one(two_chunks(), gbps_trace({{0.004, 1.0}, {1, 0.5}}), SimConfig{});
  EXPECT_NEAR(r.ttft_s, 0.033, 1e-12);
}

TEST(Simulation, ZeroCapacityGap) {
  // 4 ms at 1 Gbps, 6 ms of nothing, then 1 Gbps: chunk 0 arrives at 14 ms, chunk 1 at 22, done 27.
  const auto r = run_one(two_chunks(), gbps_trace({{0.004, 1.0}, {0.006, 0.0}, {1, 1.0}}), SimConfig{});
  EXPECT_NEAR(r.ttft_s, 0.027, 1e-12);
}

TEST(Simulation, TextChunksRecomputeAfterEarlierKvAndQueryPrefillEndsTtft) {
  SimConfig config;
  config.query_tokens = 10;
  config.chunk_rtt_s = 0.001;
  const auto hw = test::linear_prefill(1e-4);  // 100 tokens: 10 ms; query of 10 tokens: 1 ms
  // Text bytes 1000 (8 µs at 1 Gbps). Chunk 0: rtt 1 ms + 8 µs, recompute 10 ms -> 11.008 ms.
  // Chunk 1 issued at 1.008 ms: arrives 2.016 ms, waits for chunk 0's KV, recomputes to 21.008 ms.
  // Query prefill 1 ms: first token at 22.008 ms.
  const auto r = run_one(hand_profile(2, 100, {1e6}, {0.005}, {0.9}, 1000), gbps_trace({{1, 1.0}}), config, "text", hw);
  EXPECT_NEAR(r.ttft_s, 0.022008, 1e-12);
  EXPECT_NEAR(r.recompute_s, 0.020, 1e-12);
  EXPECT_NEAR(r.query_prefill_s, 0.001, 1e-12);
  EXPECT_DOUBLE_EQ(r.quality, 1.0);
  EXPECT_TRUE(r.slo_met);
}

TEST(Simulation, TextWithoutRecomputeCostIsAClearError) {
  try {
    run_one(two_chunks(), gbps_trace({{1, 1.0}}), SimConfig{}, "text");
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("recompute time is unknown"), std::string::npos) << e.what();
  }
}

TEST(Simulation, NoCapacityMeansNotCompleted) {
  const auto r = run_one(two_chunks(), traces::BandwidthTrace({{1, 0}}, "dead"), SimConfig{});
  EXPECT_FALSE(r.completed);
  EXPECT_FALSE(r.slo_met);
  EXPECT_TRUE(to_json(r)["ttft_s"].is_null());
}

// The artifact's own adaptation (docs/CACHEGEN.md §11.2) on the first line of traces/cachegen/bw.jsonl,
// worked by hand: 10 chunks of 1500 tokens, budget 0.5 s / 10 = 50 ms per chunk. Levels of 30, 20
// and 12 MB fit when the chunk's bandwidth exceeds 4.8, 3.2 and 1.92 Gbps; otherwise text at 0.2 s.
TEST(Simulation, CacheGenArtifactRuleOnItsOwnTrace) {
  std::filesystem::path path;
  try {
    path = common::resolve_data("traces/cachegen/bw.jsonl");
  } catch (const std::exception& e) {
    GTEST_SKIP() << e.what();
  }
  const auto trace = traces::read_trace(path.string() + "#0");
  ASSERT_TRUE(trace.chunk_indexed());
  // Level names follow quality: cachegen:3 is the best.
  const auto profile = hand_profile(10, 1500, {12e6, 20e6, 30e6}, {0, 0, 0}, {0.90, 0.95, 0.99}, 6000);
  SimConfig artifact;  // the artifact's timing: no pipelining, no decode cost, text = 0.2 s in all, no query
  artifact.slo_s = 0.5;
  artifact.pipelining = false;
  artifact.decode_costs_time = false;
  artifact.fixed_recompute_s = 0.2;
  const auto r = run_one(profile, trace, artifact, "cachegen-artifact");
  // bw (Gbps): 0.566 5.026 2.219 0.650 2.751 3.738 7.542 2.705 0.828 6.840
  EXPECT_EQ(r.choices, (std::vector<std::string>{"text", "cachegen:3", "cachegen:1", "text", "cachegen:1", "cachegen:2",
                                                 "cachegen:3", "cachegen:1", "text", "cachegen:3"}));
  const std::vector<double> gbps = {0.5658192386631183, 5.0257944021785015, 2.219284632798856, 0.6499744908681054,
                                    2.750630516846558,  3.7384816730975143, 7.5422648679571545, 2.70478745677676,
                                    0.8277842747245004, 6.840369705015657};
  const std::vector<double> mbit = {0, 240, 96, 0, 96, 160, 240, 96, 0, 240};
  double ttft_s = 0;
  for (size_t c = 0; c < 10; ++c) ttft_s += mbit[c] == 0 ? 0.2 : mbit[c] * 1e6 / (gbps[c] * 1e9);
  EXPECT_NEAR(r.ttft_s, ttft_s, 1e-12);
  EXPECT_FALSE(r.slo_met);  // 0.6 s of recompute alone exceeds the SLO: a violation, as the artifact counts it
}

// A request alone on the link and GPU: the event-driven run equals the timeline model's arithmetic
// for every policy, pipelining and executor setting.
TEST(Simulation, AgreesWithTimelineModelForSingleRequests) {
  std::mt19937_64 rng(7);
  auto uniform = [&rng](double lo, double hi) { return lo + (hi - lo) * static_cast<double>(rng() >> 11) * 0x1.0p-53; };
  for (int instance = 0; instance < 60; ++instance) {
    std::vector<std::pair<double, double>> pieces;
    for (int k = 0; k < 8; ++k) pieces.push_back({uniform(0.001, 0.05), k % 4 == 3 ? 0.0 : uniform(0.1, 5)});
    const auto trace = gbps_trace(pieces);
    auto profile = hand_profile(6, 200, {2e6, 3e6, 5e6}, {0.002, 0.003, 0.004}, {0.9, 0.95, 0.99}, 800);
    for (auto& chunk : profile.chunks)
      for (auto& level : chunk.levels) level.bytes *= uniform(0.5, 1.5);
    SimConfig config;
    config.slo_s = uniform(0.02, 0.2);
    config.pipelining = instance % 2 == 0;
    config.overlap_decode_prefill = instance % 3 != 0;
    config.chunk_rtt_s = instance % 4 == 0 ? 0.001 : 0;
    config.request_rtt_s = instance % 5 == 0 ? 0.002 : 0;
    config.query_tokens = 20;
    config.trace_offset_s = uniform(0, 0.1);
    const auto hw = test::linear_prefill(uniform(1e-5, 1e-4));
    for (const std::string policy : {"fixed:cachegen:2", "text", "cachegen", "cachegen:estimator=hm", "cachegen-artifact"}) {
      SCOPED_TRACE(policy + " instance " + std::to_string(instance));
      const auto r = run_one(profile, trace, config, policy, hw);
      // Replay the chosen plan through the timeline model.
      CostModel costs(profile, config, hw);
      TimelineModel model(costs, config, [&](double start_s, double bits, size_t chunk) {
        return solo_transfer_end_s(trace, config.trace_offset_s, start_s, bits, chunk);
      });
      Timeline state = model.start(0);
      for (size_t c = 0; c < r.choices.size(); ++c)
        state = model.advance(state, c, r.choices[c] == "text" ? kText : profile.level_index(r.choices[c]));
      ASSERT_TRUE(r.completed);
      EXPECT_NEAR(r.ttft_s, model.first_token_s(state), 1e-9);
      EXPECT_NEAR(r.quality * static_cast<double>(profile.context_tokens()), state.quality_tokens, 1e-6);
    }
  }
}

TEST(Simulation, LoadQueuesRequestsOnTheSharedLinkAndGpu) {
  const auto profile = hand_profile(4, 100, {1e6}, {0.004}, {0.9});
  SimConfig config;
  config.slo_s = 0.05;
  SimulationInputs alone{{profile}, std::make_shared<traces::BandwidthTrace>(gbps_trace({{1, 1.0}})), std::nullopt, config, "fixed:cachegen:1"};
  const double ttft_alone_s = simulate(alone).at(0).ttft_s;
  EXPECT_NEAR(ttft_alone_s, 0.036, 1e-12);  // 4 x 8 ms + 4 ms decode of the last chunk

  SimulationInputs together = alone;
  together.requests = {{0, 0}, {0, 0}};  // two at once: the link is shared, both finish later
  SimulationStats stats;
  const auto both = simulate(together, &stats);
  EXPECT_GT(stats.events, 0u);
  for (const auto& r : both) EXPECT_GT(r.ttft_s, ttft_alone_s + 0.02);
  // Poisson arrivals: deterministic in the seed.
  together.requests = poisson_requests(20, 30, 1, 42);
  const auto a = simulate(together), b = simulate(together);
  ASSERT_EQ(a.size(), 30u);
  for (size_t i = 0; i < a.size(); ++i) EXPECT_EQ(to_json(a[i]).dump(), to_json(b[i]).dump());
  together.requests = poisson_requests(20, 30, 1, 43);
  EXPECT_NE(to_json(simulate(together)[5]).dump(), to_json(a[5]).dump());
}

TEST(Simulation, ChunkIndexedTracesAreSingleRequestOnly) {
  SimulationInputs in{{two_chunks()}, std::make_shared<traces::BandwidthTrace>(std::vector<traces::TraceSegment>{{1, 1e9}}, "c", true),
                      std::nullopt, SimConfig{},
                      "fixed:cachegen:1"};
  in.requests = {{0, 0}, {1, 0}};
  EXPECT_THROW(simulate(in), std::invalid_argument);
}

TEST(Policies, RegistryRejectsUnknownNamesOptionsAndLevels) {
  const auto profile = two_chunks();
  EXPECT_THROW(make_policy("nope", profile), std::invalid_argument);
  EXPECT_THROW(make_policy("cachegen:bogus=1", profile), std::invalid_argument);
  EXPECT_THROW(make_policy("cachegen:estimator=psychic", profile), std::invalid_argument);
  EXPECT_THROW(make_policy("fixed:cachegen:9", profile), std::invalid_argument);
  EXPECT_THROW(make_policy("quant8", profile), std::invalid_argument);
  EXPECT_NO_THROW(make_policy("fixed:cachegen:1", profile));
  EXPECT_NE(policy_list_help().find("oracle-dp"), std::string::npos);
}

}  // namespace
}  // namespace kvstream::sim
