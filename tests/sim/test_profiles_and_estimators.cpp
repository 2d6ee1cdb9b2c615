// Context and hardware profile JSON (round trip, errors with JSON paths) and the throughput estimators.
#include <gtest/gtest.h>

#include "common/json_reader.h"
#include "sim/context_profile.h"
#include "sim/hardware_profile.h"
#include "sim/throughput_estimator.h"
#include "tests/sim/sim_test_support.h"

namespace kvstream::sim {
namespace {

std::string error_of(const nlohmann::json& json) {
  try {
    context_profile_from_json(json, "p.json");
  } catch (const common::JsonError& e) {
    return e.what();
  }
  return "";
}

TEST(ContextProfile, JsonRoundTrip) {
  auto profile = synthetic_profile({});
  profile.chunks[1].recompute_s = 0.25;
  const auto json = to_json(profile);
  const auto back = context_profile_from_json(json);
  EXPECT_EQ(to_json(back), json);
  EXPECT_EQ(back.context_tokens(), 15000);
  EXPECT_EQ(back.level_index("cachegen:2"), 1);
  EXPECT_THROW(back.level_index("cachegen:7"), std::invalid_argument);
}

TEST(ContextProfile, ErrorsNameTheJsonPath) {
  const auto good = to_json(synthetic_profile({}));
  auto bad = good;
  bad["chunks"][3]["levels"][1]["bytes"] = -1;
  EXPECT_EQ(error_of(bad), "p.json: $.chunks[3].levels[1].bytes: expected a number in [0, 1e+15], got -1");
  // Beyond the bounds: an infinite simulated time once followed.
  bad = good;
  bad["chunks"][1]["levels"][0]["decode_s"] = 1e308;
  EXPECT_EQ(error_of(bad), "p.json: $.chunks[1].levels[0].decode_s: expected a number in [0, 1e+06], got 1e+308");
  bad = good;
  bad["chunks"][2]["levels"][0]["quality"] = 1.5;
  EXPECT_NE(error_of(bad).find("$.chunks[2].levels[0].quality: expected a number in [0, 1]"), std::string::npos);
  bad = good;
  bad["chunks"][4]["start_token"] = 7;
  EXPECT_NE(error_of(bad).find("$.chunks[4].start_token: expected 6000"), std::string::npos);
  bad = good;
  bad["chunks"][0]["levels"].erase(2);
  EXPECT_NE(error_of(bad).find("$.chunks[0].levels: expected 4 entries"), std::string::npos);
  bad = good;
  bad.erase("chunk_tokens");
  EXPECT_EQ(error_of(bad), "p.json: $: missing key \"chunk_tokens\"");
  bad = good;
  bad["levels"][1]["name"] = "cachegen:1";
  EXPECT_NE(error_of(bad).find("$.levels[1].name: expected a unique"), std::string::npos);
  bad = good;
  bad["chunks"][0]["tokens"] = "1500";
  EXPECT_EQ(error_of(bad), "p.json: $.chunks[0].tokens: expected an integer, got \"1500\"");
  bad = good;
  bad["format"] = "nope";
  EXPECT_EQ(error_of(bad), "p.json: $.format: expected \"kvstream-context-profile\", got \"nope\"");
  bad = good;
  bad["version"] = 99;
  EXPECT_EQ(error_of(bad), "p.json: $.version: this kvstream reads context profiles of version 1, got 99");
  bad = good;
  bad.erase("format");
  bad.erase("version");
  EXPECT_EQ(error_of(bad), "");  // both optional
}

TEST(HardwareProfile, ReadsTheProfilerOutput) {
  const nlohmann::json json = {{"device", "a40"},
                               {"kind", "analytic"},
                               {"model", "mistral-7b"},
                               {"prefill_cost_model", {{"a", 0.001}, {"b", 2e-4}, {"c", 7e-9}}}};
  const auto hw = hardware_profile_from_json(json);
  EXPECT_DOUBLE_EQ(hw.prefill.seconds(1000, 100), 0.001 + 2e-4 * 100 + 7e-9 * 100 * 1050);
  auto bad = json;
  bad["prefill_cost_model"].erase("c");
  EXPECT_THROW(hardware_profile_from_json(bad, "hw.json"), common::JsonError);
}

TEST(ThroughputEstimators, KnownValues) {
  // Throughputs 1, 2, 4 Gbps (1 Gbit in 1 s, 0.5 s, 0.25 s).
  const std::vector<TransferSample> history = {{1e9, 0, 1}, {1e9, 1, 1.5}, {1e9, 1.5, 1.75}};
  EXPECT_FALSE(make_estimator("last")->estimate_bps({}));
  EXPECT_DOUBLE_EQ(*make_estimator("last")->estimate_bps(history), 4e9);
  EXPECT_NEAR(*make_estimator("hm", 5)->estimate_bps(history), 3 / (1 / 1e9 + 1 / 2e9 + 1 / 4e9), 1);
  EXPECT_NEAR(*make_estimator("hm", 2)->estimate_bps(history), 2 / (1 / 2e9 + 1 / 4e9), 1);
  EXPECT_NEAR(*make_estimator("ewma", 5, 0.5)->estimate_bps(history), 0.5 * 4e9 + 0.25 * 2e9 + 0.25 * 1e9, 1);
  // Robust: hm's past predictions were 1 (for 2: error 0.5) and 4/3 (for 4: error 2/3).
  const double hm = 3 / (1 / 1e9 + 1 / 2e9 + 1 / 4e9);
  EXPECT_NEAR(*make_estimator("robust", 5)->estimate_bps(history), hm / (1 + (4e9 - 4e9 / 3) / 4e9), 1);
  EXPECT_THROW(make_estimator("hm", 0), std::invalid_argument);
  EXPECT_THROW(make_estimator("ewma", 5, 1.5), std::invalid_argument);
  EXPECT_THROW(make_estimator("oracle"), std::invalid_argument);
}

}  // namespace
}  // namespace kvstream::sim
