// Decode times from measured decoder throughputs: the hardware profile's "decode" section (parsing,
// errors with their JSON paths), a level's codec level, and the cost model's decode seconds.
#include <gtest/gtest.h>

#include <functional>

#include "common/json_reader.h"
#include "sim/cost_model.h"
#include "sim/hardware_profile.h"
#include "tests/sim/sim_test_support.h"

namespace kvstream::sim {
namespace {

nlohmann::json profile_json() {
  nlohmann::json json = nlohmann::json::parse(R"({
    "device": "cpu: test", "kind": "measured", "model": "mistral-7b",
    "prefill_cost_model": {"a": 0.01, "b": 0.001, "c": 0}
  })");
  json["decode"] = test::decode_section(
      "measured: kvstream profile-decode on a test CPU, 1 thread, kv/x.safetensors, chunk 512 tokens", "cpu: test", 1.0e8,
      2.0e9);
  return json;
}

TEST(DecodeThroughputs, ParsesTheDecodeSection) {
  const HardwareProfile hw = hardware_profile_from_json(profile_json(), "hw.json");
  ASSERT_TRUE(hw.decode);
  EXPECT_EQ(hw.decode->device, "cpu: test");
  EXPECT_EQ(hw.decode->source.rfind("measured: kvstream profile-decode", 0), 0u);
  ASSERT_EQ(hw.decode->throughputs.size(), 4u);
  ASSERT_NE(hw.decode->find("cachegen", 2), nullptr);
  EXPECT_EQ(hw.decode->find("cachegen", 2)->fp16_bytes_per_s, 2.0e8);
  EXPECT_EQ(hw.decode->find("quant:bits=8", 1)->fp16_bytes_per_s, 2.0e9);
  EXPECT_EQ(hw.decode->find("cachegen", 4), nullptr);
  EXPECT_EQ(hw.decode->find("quant:bits=4", 1), nullptr);

  // Written back, it reads back the same; a profile without the section has none.
  const auto again = decode_throughputs_from_json(to_json(*hw.decode), "again.json");
  EXPECT_EQ(to_json(again), to_json(*hw.decode));
  auto without = profile_json();
  without.erase("decode");
  EXPECT_FALSE(hardware_profile_from_json(without).decode);
}

TEST(DecodeThroughputs, BadSectionsNameTheJsonPath) {
  const std::vector<std::pair<std::function<void(nlohmann::json&)>, std::string>> cases = {
      {[](auto& d) { d.erase("source"); }, "hw.json: $.decode: missing key \"source\""},
      {[](auto& d) { d["source"] = ""; }, "hw.json: $.decode.source: expected a non-empty string"},
      {[](auto& d) { d["device"] = 3; }, "hw.json: $.decode.device: expected a string, got 3"},
      {[](auto& d) { d["gpu"] = true; }, "hw.json: $.decode: unknown key \"gpu\" (known: source, device, throughputs)"},
      {[](auto& d) { d["throughputs"] = nlohmann::json::array(); },
       "hw.json: $.decode.throughputs: expected at least one throughput"},
      {[](auto& d) { d["throughputs"] = {{"codec", "cachegen"}}; },
       "hw.json: $.decode.throughputs: expected an array, got {\"codec\":\"cachegen\"}"},
      {[](auto& d) { d["throughputs"][1].erase("codec"); }, "hw.json: $.decode.throughputs[1]: missing key \"codec\""},
      {[](auto& d) { d["throughputs"][0]["codec"] = ""; },
       "hw.json: $.decode.throughputs[0].codec: expected a non-empty string"},
      {[](auto& d) { d["throughputs"][1]["level"] = 0; },
       "hw.json: $.decode.throughputs[1].level: expected an integer >= 1, got 0"},
      {[](auto& d) { d["throughputs"][1]["level"] = 1.5; },
       "hw.json: $.decode.throughputs[1].level: expected an integer, got 1.5"},
      {[](auto& d) { d["throughputs"][2]["fp16_bytes_per_s"] = 0; },
       "hw.json: $.decode.throughputs[2].fp16_bytes_per_s: expected a throughput > 0 fp16 bytes/s, got 0"},
      {[](auto& d) { d["throughputs"][2]["fp16_bytes_per_s"] = 1e-300; },
       "hw.json: $.decode.throughputs[2].fp16_bytes_per_s: expected a throughput in [1, 1e15] fp16 bytes/s, got 1e-300"},
      {[](auto& d) { d["throughputs"][2]["fp16_bytes_per_s"] = "1e8"; },
       "hw.json: $.decode.throughputs[2].fp16_bytes_per_s: expected a number, got \"1e8\""},
      {[](auto& d) { d["throughputs"][3]["mb_s"] = 1; },
       "hw.json: $.decode.throughputs[3]: unknown key \"mb_s\" (known: codec, level, fp16_bytes_per_s)"},
      {[](auto& d) { d["throughputs"][2]["level"] = 1; },
       "hw.json: $.decode.throughputs[2]: codec \"cachegen\" level 1 is given twice"},
  };
  for (const auto& [mutate, expected] : cases) {
    auto json = profile_json();
    mutate(json["decode"]);
    try {
      hardware_profile_from_json(json, "hw.json");
      ADD_FAILURE() << "accepted: " << expected;
    } catch (const common::JsonError& e) {
      EXPECT_EQ(std::string(e.what()), expected);
    }
  }
  // A file holding the section alone has its paths from the root.
  try {
    decode_throughputs_from_json(nlohmann::json{{"source", "s"}, {"device", "d"}}, "gpu.json");
    ADD_FAILURE() << "accepted a section without throughputs";
  } catch (const common::JsonError& e) {
    EXPECT_EQ(std::string(e.what()), "gpu.json: $: missing key \"throughputs\"");
  }
}

TEST(DecodeThroughputs, LevelNamesGiveBackTheirCodecAndLevel) {
  auto level_of = [](const std::string& name, const std::string& codec) {
    const auto parsed = LevelName::parse(name, codec);
    return parsed ? std::optional<int>(parsed->level) : std::nullopt;
  };
  EXPECT_EQ(level_of("cachegen:2", "cachegen"), 2);
  EXPECT_EQ(level_of("cachegen:delta=10:3", "cachegen:delta=10"), 3);
  EXPECT_EQ(level_of("quant:bits=8", "quant:bits=8"), 1);
  EXPECT_EQ(level_of("cachegen:x", "cachegen"), std::nullopt);
  EXPECT_EQ(level_of("cachegen:", "cachegen"), std::nullopt);
  EXPECT_EQ(level_of("quant:bits=8", "quant"), std::nullopt);
  for (const LevelName& name : {LevelName{"cachegen:delta=10", 3, true}, LevelName{"quant:bits=8", 1, false},
                               LevelName{"cachegen", 1, true}}) {
    const auto back = LevelName::parse(name.format(), name.codec);
    ASSERT_TRUE(back) << name.format();
    EXPECT_EQ(back->level, name.level);
    EXPECT_EQ(back->ladder, name.ladder);
  }
  // The synthetic profile names its levels the profiler's way.
  const ContextProfile synthetic = synthetic_profile({});
  ASSERT_EQ(synthetic.levels.size(), 4u);
  EXPECT_EQ(synthetic.levels[1].name, "cachegen:2");
  EXPECT_EQ(synthetic.levels[1].codec, "cachegen");
  EXPECT_EQ(synthetic.levels[3].name, "quant:bits=8");
  EXPECT_EQ(synthetic.levels[3].codec, "quant:bits=8");
  EXPECT_EQ(synthetic.fp16_bytes_per_token, 131072);
}

TEST(DecodeThroughputs, CostModelTimesDecodeFromTheThroughput) {
  const ContextProfile profile = synthetic_profile({});  // 10 chunks of 1500 tokens, 131072 fp16 bytes/token
  const std::optional<HardwareProfile> hw = hardware_profile_from_json(profile_json());
  const double chunk_fp16_bytes = 1500.0 * 131072;

  SimConfig config;
  config.decode_time = DecodeTime::kHardware;
  const CostModel costs(profile, config, hw);
  const std::vector<double> rates = {1.0e8, 2.0e8, 4.0e8, 2.0e9};
  EXPECT_EQ(level_decode_fp16_bytes_per_s(profile, config, hw), rates);
  for (size_t c = 0; c < costs.chunks(); ++c)
    for (int l = 0; l < 4; ++l) {
      EXPECT_DOUBLE_EQ(costs.decode_s(c, l), chunk_fp16_bytes / rates[size_t(l)]);
      EXPECT_DOUBLE_EQ(costs.gpu_s(c, l), costs.decode_s(c, l));
    }

  config.decode_time = DecodeTime::kThroughput;  // one rate for every level
  config.decode_fp16_bytes_per_s = 1e10;
  const CostModel uniform(profile, config, hw);
  for (int l = 0; l < 4; ++l) EXPECT_DOUBLE_EQ(uniform.decode_s(0, l), chunk_fp16_bytes / 1e10);

  config.decode_time = DecodeTime::kProfile;  // the profile's measured decode_s
  const CostModel measured(profile, config, hw);
  for (int l = 0; l < 4; ++l) EXPECT_EQ(measured.decode_s(2, l), profile.chunks[2].levels[size_t(l)].decode_s);

  config.decode_time = DecodeTime::kHardware;  // artifact timing: decoding costs nothing, no throughput needed
  config.decode_costs_time = false;
  const CostModel free(profile, config, std::nullopt);
  EXPECT_EQ(free.decode_s(0, 0), 0.0);
}

std::string cost_model_error(const ContextProfile& profile, const SimConfig& config,
                             const std::optional<HardwareProfile>& hw) {
  try {
    CostModel costs(profile, config, hw);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "no error";
}

TEST(DecodeThroughputs, MissingThroughputsAreErrorsNamingTheLevel) {
  ContextProfile profile = synthetic_profile({});
  profile.name = "ctx";
  SimConfig config;
  config.decode_time = DecodeTime::kHardware;

  auto json = profile_json();
  json["decode"]["throughputs"].erase(3);  // no quant:bits=8
  const std::optional<HardwareProfile> hw = hardware_profile_from_json(json);
  EXPECT_EQ(cost_model_error(profile, config, hw),
            "hardware profile \"cpu: test\" has no decode throughput for level \"quant:bits=8\" of context \"ctx\" "
            "(codec \"quant:bits=8\", level 1); its decode section (cpu: test) has: cachegen level 1, cachegen level "
            "2, cachegen level 3. Measure it: kvstream profile-decode --codecs quant:bits=8 --hardware ...");

  auto without = profile_json();
  without.erase("decode");
  const std::optional<HardwareProfile> no_section = hardware_profile_from_json(without);
  EXPECT_EQ(cost_model_error(profile, config, no_section),
            "hardware profile \"cpu: test\" has no decode section (measure one: kvstream profile-decode --hardware ...)");
  EXPECT_EQ(cost_model_error(profile, config, std::nullopt),
            "decode times from the hardware profile need a hardware profile");

  profile.fp16_bytes_per_token.reset();
  EXPECT_EQ(cost_model_error(profile, config, hw),
            "context \"ctx\" has no fp16_bytes_per_token, which timing its decode from a throughput needs");

  ContextProfile odd = test::hand_profile(1, 100, {10}, {0.1}, {1});
  odd.fp16_bytes_per_token = 640;
  odd.levels[0].name = "cachegen-high";
  EXPECT_EQ(cost_model_error(odd, config, hw),
            "level \"cachegen-high\" of context \"hand\": its name is neither its codec \"cachegen\" nor "
            "\"cachegen:<level>\", so its decode throughput cannot be looked up");
}

TEST(DecodeThroughputs, ContextProfileJsonKeepsFp16BytesPerToken) {
  ContextProfile profile = synthetic_profile({});
  EXPECT_EQ(context_profile_from_json(to_json(profile)).fp16_bytes_per_token, 131072);
  auto json = to_json(profile);
  json["fp16_bytes_per_token"] = 0;
  try {
    context_profile_from_json(json, "p.json");
    ADD_FAILURE() << "accepted fp16_bytes_per_token 0";
  } catch (const common::JsonError& e) {
    EXPECT_EQ(std::string(e.what()), "p.json: $.fp16_bytes_per_token: expected a number in [1, 1e+09], got 0");
  }
  json.erase("fp16_bytes_per_token");
  EXPECT_FALSE(context_profile_from_json(json).fp16_bytes_per_token);
}

}  // namespace
}  // namespace kvstream::sim
