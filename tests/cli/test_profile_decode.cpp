// Decode throughputs end to end (KVSTREAM_CLI): `kvstream profile-decode` measures or merges a
// hardware profile's decode section that reads back, and `kvstream run` with config decode
// "hardware" times every level's decode from it (or fails naming the level it lacks).
#include <fstream>

#include "common/json_reader.h"
#include "experiments/experiment_config.h"
#include "experiments/run_log.h"
#include "profiling/shipped_profiles.h"
#include "sim/hardware_profile.h"
#include "tests/cli/cli_test.h"
#include "tests/sim/sim_test_support.h"

namespace kvstream {
namespace {

using test_support::read_text;
namespace fs = std::filesystem;

// What scripts/gpu-check.sh writes: the decode object alone.
nlohmann::json gpu_decode() {
  return sim::test::decode_section("measured: scripts/gpu-check.sh on a test GPU", "cuda: test GPU", 1.0e9, 8.0e9);
}

class ProfileDecodeCli : public test_support::CliTest {
 protected:
  fs::path write_json(const std::string& name, const nlohmann::json& json) {
    std::ofstream(dir_ / name) << json.dump(1);
    return dir_ / name;
  }
  static nlohmann::json shipped(const std::string& name) {
    return common::read_json_file(profiling::resolve_hardware_profile(name));
  }
};

TEST_F(ProfileDecodeCli, MeasuresThisCpuIntoAProfileThatReadsBack) {
  const std::string before = read_text(profiling::resolve_hardware_profile("cpu_stories260K"));
  const Result r = ok("profile-decode --hardware cpu_stories260K --out new.json --codecs cachegen quant:bits=8 "
                      "--chunk-tokens 512 --min-time 0");
  EXPECT_NE(r.out.find("new.json: decode section with 4 throughput(s)"), std::string::npos) << r.out;
  EXPECT_EQ(read_text(profiling::resolve_hardware_profile("cpu_stories260K")), before);  // --out: untouched

  const sim::HardwareProfile hw = sim::read_hardware_profile((dir_ / "new.json").string());
  ASSERT_TRUE(hw.decode);
  EXPECT_EQ(hw.decode->device.rfind("cpu: ", 0), 0u) << hw.decode->device;
  EXPECT_EQ(hw.decode->source.rfind("measured: kvstream profile-decode on ", 0), 0u) << hw.decode->source;
  EXPECT_NE(hw.decode->source.find("1 thread, kv/stories260K_tinystories_4x512.safetensors (4 contexts), chunk 512 "
                                   "tokens"),
            std::string::npos)
      << hw.decode->source;
  ASSERT_EQ(hw.decode->throughputs.size(), 4u);
  for (int level : {1, 2, 3}) {
    ASSERT_NE(hw.decode->find("cachegen", level), nullptr) << level;
    EXPECT_GT(hw.decode->find("cachegen", level)->fp16_bytes_per_s, 1e6);
  }
  ASSERT_NE(hw.decode->find("quant:bits=8", 1), nullptr);
  // Everything else of the profile is kept as it was.
  auto written = common::read_json_file((dir_ / "new.json").string());
  auto original = shipped("cpu_stories260K");
  written.erase("decode");
  original.erase("decode");  // the shipped profile carries a decode section of its own
  EXPECT_EQ(written, original);
}

// NAME=SPEC measures SPEC and records it as NAME, the name a config gives the codec (e.g. the
// transform codec fitted to its model is "transform" there, with a calibration file behind it).
TEST_F(ProfileDecodeCli, NamedSpecsAreRecordedUnderTheirName) {
  const Result r = ok("profile-decode --hardware cpu_stories260K --out named.json --codecs fast=cachegen:entropy=rans "
                      "quant:bits=8 --min-time 0");
  const sim::HardwareProfile hw = sim::read_hardware_profile((dir_ / "named.json").string());
  ASSERT_TRUE(hw.decode);
  for (int level : {1, 2, 3}) EXPECT_NE(hw.decode->find("fast", level), nullptr) << level;
  EXPECT_EQ(hw.decode->find("cachegen:entropy=rans", 1), nullptr);
  EXPECT_NE(hw.decode->find("quant:bits=8", 1), nullptr);
  EXPECT_NE(hw.decode->source.find("; codec fast is cachegen:entropy=rans"), std::string::npos) << hw.decode->source;
  const Result bad = run("profile-decode --hardware cpu_stories260K --out x.json --codecs =cachegen");
  EXPECT_EQ(bad.rc, 2);
  EXPECT_NE(bad.err.find("--codecs =cachegen: expected NAME=SPEC with a name and a spec"), std::string::npos) << bad.err;
}

TEST_F(ProfileDecodeCli, MergesADecodeSectionMadeElsewhere) {
  write_json("gpu.json", gpu_decode());
  ok("profile-decode --hardware a40_mistral-7b --from gpu.json --out a40.json");
  const sim::HardwareProfile hw = sim::read_hardware_profile((dir_ / "a40.json").string());
  ASSERT_TRUE(hw.decode);
  EXPECT_EQ(sim::to_json(*hw.decode), gpu_decode());
  EXPECT_EQ(hw.device, "a40");

  // Over an existing file (no --out) and from a file with a "decode" member: replaced, not appended.
  auto other = gpu_decode();
  other["throughputs"].erase(3);
  write_json("other.json", {{"decode", other}});
  ok("profile-decode --hardware a40.json --from other.json");
  EXPECT_EQ(sim::to_json(*sim::read_hardware_profile((dir_ / "a40.json").string()).decode), other);
}

TEST_F(ProfileDecodeCli, BadInputsAndUsageAreClearErrors) {
  auto bad = gpu_decode();
  bad["throughputs"][2]["level"] = 0;
  write_json("bad.json", bad);
  const Result r = run("profile-decode --hardware a40_mistral-7b --from bad.json --out a40.json");
  EXPECT_EQ(r.rc, 1);
  EXPECT_NE(r.err.find("bad.json: $.throughputs[2].level: expected an integer >= 1, got 0"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(dir_ / "a40.json"));

  auto broken = shipped("a40_mistral-7b");
  broken["prefill_cost_model"]["c"] = -1;
  write_json("broken.json", broken);
  write_json("gpu.json", gpu_decode());
  const Result b = run("profile-decode --hardware broken.json --from gpu.json");
  EXPECT_EQ(b.rc, 1);
  EXPECT_NE(b.err.find("broken.json: $.prefill_cost_model.c: expected a number >= 0, got -1"), std::string::npos) << b.err;

  const Result both = run("profile-decode --hardware a40_mistral-7b --from gpu.json --codecs cachegen --out x.json");
  EXPECT_EQ(both.rc, 2);
  EXPECT_NE(both.err.find("--from takes the decode section from a file"), std::string::npos) << both.err;
  EXPECT_EQ(run("profile-decode --from gpu.json").rc, 2);  // --hardware is required
  const Result unknown = run("profile-decode --hardware no_such_profile --from gpu.json");
  EXPECT_EQ(unknown.rc, 1);
  EXPECT_NE(unknown.err.find("no_such_profile"), std::string::npos) << unknown.err;
  const Result help = ok("profile-decode --help");
  EXPECT_NE(help.out.find("fp16_bytes_per_s"), std::string::npos);
  EXPECT_NE(ok("--help").out.find("profile-decode"), std::string::npos);
}

// Synthetic contexts (4 chunks of 1500 tokens, 131072 fp16 bytes per token) on a constant link.
nlohmann::json decode_config(const std::string& name, const nlohmann::json& decode) {
  return {{"name", name},
          {"contexts", {{{"name", "syn"}, {"source", "synthetic"}, {"chunks", 4}, {"chunk_tokens", 1500}}}},
          {"traces", {"constant:gbps=10"}},
          {"policies", {"fixed:cachegen:2", "quant8"}},
          {"slo_s", 2},
          {"hardware", "a40.json"},
          {"decode", decode}};
}

class DecodeFromHardwareRun : public ProfileDecodeCli {
 protected:
  // `kvstream run` of decode_config(name, decode), with a40.json = the A40 profile + `section`.
  // A null `section`: a40.json without a decode section.
  Result run_with(const std::string& name, const nlohmann::json& decode, const nlohmann::json& section) {
    auto profile = shipped("a40_mistral-7b");
    if (!section.is_null()) profile["decode"] = section;
    write_json("a40.json", profile);
    write_json(name + ".json", decode_config(name, decode));
    return run("run " + name + ".json --profile-cache cache");
  }
  // Each run's decode busy seconds, by policy.
  std::map<std::string, double> decode_s(const std::string& name) {
    std::map<std::string, double> out;
    for (const auto& line : experiments::read_run_log(dir_ / "results" / name / "runs.jsonl"))
      out[line["policy"].get<std::string>()] = line["requests"][0]["breakdown"]["decode_s"].get<double>();
    return out;
  }
};

TEST_F(DecodeFromHardwareRun, EveryLevelDecodesAtItsMeasuredThroughput) {
  const Result r = run_with("hw", "hardware", gpu_decode());
  ASSERT_EQ(r.rc, 0) << r.err;
  const double chunk_fp16_bytes = 1500.0 * 131072;
  const auto seconds = decode_s("hw");
  EXPECT_DOUBLE_EQ(seconds.at("fixed:cachegen:2"), 4 * (chunk_fp16_bytes / 2.0e9));
  EXPECT_DOUBLE_EQ(seconds.at("quant8"), 4 * (chunk_fp16_bytes / 8.0e9));

  const fs::path out = dir_ / "results" / "hw";
  EXPECT_EQ(common::read_json_file((out / "config.json").string())["decode"], "hardware");
  const auto manifest = common::read_json_file((out / "manifest.json").string());
  EXPECT_EQ(manifest["hardware_profiles"][0]["decode"], gpu_decode());
  EXPECT_EQ(manifest["context_sets"][0]["decode"]["source"], "hardware");

  // One stated throughput for every level still works.
  const Result uniform = run_with("uniform", {{"fp16_bytes_per_s", 1e10}, {"source", "ASSUMED"}}, gpu_decode());
  ASSERT_EQ(uniform.rc, 0) << uniform.err;
  for (const auto& [policy, s] : decode_s("uniform")) EXPECT_DOUBLE_EQ(s, 4 * (chunk_fp16_bytes / 1e10)) << policy;
  EXPECT_EQ(common::read_json_file((dir_ / "results/uniform/manifest.json").string())["context_sets"][0]["decode"],
            nlohmann::json({{"fp16_bytes_per_s", 1e10}, {"source", "ASSUMED"}}));
}

TEST_F(DecodeFromHardwareRun, ALevelWithoutAThroughputIsAnErrorNamingIt) {
  auto section = gpu_decode();
  section["throughputs"].erase(3);  // no quant:bits=8
  const Result r = run_with("missing", "hardware", section);
  EXPECT_EQ(r.rc, 1);
  EXPECT_NE(r.err.find("missing.json: $.decode: $.hardware[0]: hardware profile \"a40\" has no decode throughput for "
                       "level \"quant:bits=8\" of context \"syn\" (codec \"quant:bits=8\", level 1)"),
            std::string::npos)
      << r.err;
  EXPECT_FALSE(fs::exists(dir_ / "results/missing/runs.jsonl"));

  // A hardware profile without a decode section.
  auto profile = shipped("a40_mistral-7b");
  write_json("a40.json", profile);
  write_json("none.json", decode_config("none", "hardware"));
  const Result none = run("run none.json --profile-cache cache");
  EXPECT_EQ(none.rc, 1);
  EXPECT_NE(none.err.find("none.json: $.decode: $.hardware[0]: hardware profile \"a40\" has no decode section"),
            std::string::npos)
      << none.err;
}

TEST(DecodeConfig, HardwareParsesAndReadsBack) {
  const auto config = experiments::parse_experiment_config(decode_config("c", "hardware"), "c.json");
  ASSERT_TRUE(config.decode);
  EXPECT_TRUE(config.decode->from_hardware);
  EXPECT_EQ(experiments::to_json(config)["decode"], "hardware");
  EXPECT_EQ(experiments::to_json(experiments::parse_experiment_config(experiments::to_json(config), "again")),
            experiments::to_json(config));

  auto no_hardware = decode_config("c", "hardware");
  no_hardware.erase("hardware");
  try {
    experiments::parse_experiment_config(no_hardware, "c.json");
    ADD_FAILURE() << "accepted decode \"hardware\" without hardware profiles";
  } catch (const common::JsonError& e) {
    EXPECT_EQ(std::string(e.what()),
              "c.json: $.decode: \"hardware\" takes decode throughputs from the hardware profiles, but $.hardware "
              "names none");
  }
  try {
    experiments::parse_experiment_config(decode_config("c", "gpu"), "c.json");
    ADD_FAILURE() << "accepted decode \"gpu\"";
  } catch (const common::JsonError& e) {
    EXPECT_EQ(std::string(e.what()),
              "c.json: $.decode: expected \"measured\", \"hardware\", {\"profile\"} or {\"fp16_bytes_per_s\", "
              "\"source\"}");
  }
  const auto from_profile = experiments::parse_experiment_config(decode_config("c", {{"profile", "cpu.json"}}), "c.json");
  ASSERT_TRUE(from_profile.decode);
  EXPECT_TRUE(from_profile.decode->from_hardware);
  EXPECT_EQ(from_profile.decode->profile, "cpu.json");
  EXPECT_EQ(experiments::to_json(from_profile)["decode"], nlohmann::json({{"profile", "cpu.json"}}));
  auto profile_alone = decode_config("c", {{"profile", "cpu.json"}});
  profile_alone.erase("hardware");
  for (const auto& [bad, message] :
       std::vector<std::pair<nlohmann::json, std::string>>{
           {profile_alone, "c.json: $.decode: decode throughputs from a profile time the runs of $.hardware's profiles, "
                           "but $.hardware names none"},
           {decode_config("c", {{"profile", ""}}), "c.json: $.decode.profile: expected a hardware profile's name or path"},
           {decode_config("c", {{"profile", "cpu.json"}, {"source", "x"}}), "c.json: $.decode: unknown key \"source\""}})
    try {
      experiments::parse_experiment_config(bad, "c.json");
      ADD_FAILURE() << "accepted " << bad["decode"];
    } catch (const common::JsonError& e) {
      EXPECT_NE(std::string(e.what()).find(message), std::string::npos) << e.what();
    }
}

// Config decode {"profile"}: one profile's decoders (a CPU's, measured by profile-decode) time the
// runs of a hardware profile that has none, and the manifest says whose they are.
TEST_F(DecodeFromHardwareRun, AnotherProfilesDecodersTimeTheRuns) {
  auto cpu = shipped("cpu_stories260K");
  cpu["decode"] = gpu_decode();
  write_json("cpu.json", cpu);
  const Result r = run_with("other", {{"profile", "cpu.json"}}, nullptr);
  ASSERT_EQ(r.rc, 0) << r.err;
  const double chunk_fp16_bytes = 1500.0 * 131072;
  const auto seconds = decode_s("other");
  EXPECT_DOUBLE_EQ(seconds.at("fixed:cachegen:2"), 4 * (chunk_fp16_bytes / 2.0e9));
  EXPECT_DOUBLE_EQ(seconds.at("quant8"), 4 * (chunk_fp16_bytes / 8.0e9));
  const auto manifest = common::read_json_file((dir_ / "results/other/manifest.json").string());
  EXPECT_EQ(manifest["hardware_profiles"][0]["device"], "a40");
  EXPECT_EQ(manifest["hardware_profiles"][0]["decode"], gpu_decode());
  EXPECT_EQ(manifest["hardware_profiles"][0]["decode_profile"]["name"], "cpu.json");
  EXPECT_EQ(common::read_json_file((dir_ / "results/other/config.json").string())["decode"],
            nlohmann::json({{"profile", "cpu.json"}}));

  // A profile without a decode section is refused before any run.
  write_json("no_decoders.json", shipped("a40_mistral-7b"));
  const Result bare = run_with("bare", {{"profile", "no_decoders.json"}}, nullptr);
  EXPECT_EQ(bare.rc, 1);
  EXPECT_NE(bare.err.find("bare.json: $.decode.profile: hardware profile \"a40\""), std::string::npos) << bare.err;
  EXPECT_NE(bare.err.find("has no decode section"), std::string::npos) << bare.err;
  EXPECT_FALSE(fs::exists(dir_ / "results/bare/runs.jsonl"));
}

}  // namespace
}  // namespace kvstream
