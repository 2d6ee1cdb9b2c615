// End-to-end tests of `kvstream simulate`, `sim-bench`, `emulate` and `link-check` (KVSTREAM_CLI).
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "profiling/shipped_profiles.h"
#include "sim/context_profile.h"
#include "sim/hardware_profile.h"
#include "tests/cli/cli_test.h"

namespace kvstream {
namespace {

class SimCli : public test_support::CliTest {
 protected:
  // The default synthetic profile written to profile.json.
  void SetUp() override {
    CliTest::SetUp();
    std::ofstream(dir_ / "profile.json") << sim::to_json(sim::synthetic_profile({})).dump();
  }
};

TEST_F(SimCli, SimulateJsonOnAGeneratedTrace) {
  const auto j = json_of(
      "simulate --profile profile.json --trace constant:gbps=10 --policy fixed:cachegen:2 text cachegen --slo 2 "
      "--hardware a40_mistral-7b --query-tokens 32 --json");
  ASSERT_EQ(j["runs"].size(), 3u);
  const auto& fixed = j["runs"][0];
  EXPECT_EQ(fixed["policy"], "fixed:cachegen:2");
  const auto& request = fixed["requests"][0];
  // 10 chunks x 1500 tokens x 131072 / 3.78 bytes at 10 Gbps, over the default link model, tcp: without
  // a round trip its window never limits, and every 1,448 bytes of payload take a 1,500-byte packet.
  const double bytes = 10 * 1500 * 131072 / 3.78;
  EXPECT_NEAR(request["breakdown"]["transfer_s"].get<double>(), bytes * 8 / 10e9 * 1500 / 1448, 1e-9);
  EXPECT_NEAR(request["bytes"].get<double>(), bytes, 1e-3);
  EXPECT_EQ(request["choices"].size(), 10u);
  EXPECT_TRUE(request["slo_met"].get<bool>());
  for (const char* key : {"transfer_s", "decode_s", "recompute_s", "query_prefill_s", "queueing_s"})
    EXPECT_TRUE(request["breakdown"].contains(key)) << key;
  EXPECT_GT(request["breakdown"]["query_prefill_s"].get<double>(), 0);
  EXPECT_EQ(j["runs"][1]["requests"][0]["quality"], 1.0);  // text recomputes exactly
  EXPECT_EQ(fixed["summary"]["requests"], 1);
}

// --decode hardware: every level chunk takes tokens x fp16 bytes/token over the profile's measured
// throughput for the level's codec and level; --decode RATE: the same rate for every level.
TEST_F(SimCli, DecodeTimesFromTheHardwareProfileOrARate) {
  const auto hw = sim::read_hardware_profile(profiling::resolve_hardware_profile("cpu_mistral-7b"));
  ASSERT_TRUE(hw.decode);
  const double rate = hw.decode->find("cachegen", 2)->fp16_bytes_per_s;
  const std::string base = "simulate --profile profile.json --trace constant:gbps=10 --policy fixed:cachegen:2 --slo 2 ";
  auto j = json_of(base + "--hardware cpu_mistral-7b --decode hardware --json");
  EXPECT_NEAR(j["runs"][0]["requests"][0]["breakdown"]["decode_s"].get<double>(), 10 * 1500 * 131072.0 / rate, 1e-6);
  j = json_of(base + "--decode 2e10 --json");
  EXPECT_NEAR(j["runs"][0]["requests"][0]["breakdown"]["decode_s"].get<double>(), 10 * 1500 * 131072.0 / 2e10, 1e-9);
  EXPECT_EQ(run(base + "--decode hardware").rc, 2);  // needs --hardware
  EXPECT_EQ(run(base + "--decode fast").rc, 2);
  const auto r = run(base + "--hardware a40_mistral-7b --decode hardware");  // analytic: no decode section
  EXPECT_EQ(r.rc, 1);
  EXPECT_NE(r.err.find("has no decode section"), std::string::npos) << r.err;
}

TEST_F(SimCli, PoissonLoadAndDeterminism) {
  const std::string args =
      "simulate --profile profile.json --trace markov:seed=3,good_gbps=8,bad_gbps=1,good_s=2,bad_s=1,duration_s=60 "
      "--policy mpc --slo 3 --hardware a40_mistral-7b --requests 20 --rate 0.5 --seed 9 --json";
  const auto a = ok(args).out, b = ok(args).out;
  EXPECT_EQ(a, b);
  const auto j = nlohmann::json::parse(a);
  EXPECT_EQ(j["runs"][0]["requests"].size(), 20u);
  EXPECT_EQ(j["runs"][0]["summary"]["requests"], 20);
}

TEST_F(SimCli, HumanOutputAndErrors) {
  const auto human = ok("simulate --profile synthetic --trace constant:gbps=1 --policy quant8 cachegen --slo 1 --hardware a40_mistral-7b");
  EXPECT_NE(human.out.find("summary:"), std::string::npos) << human.out;
  EXPECT_NE(human.out.find("quant:bits=8"), std::string::npos) << human.out;
  // Bad usage: exit 2.
  EXPECT_EQ(run("simulate --profile profile.json --trace constant:gbps=1 --policy cachegen").rc, 2);  // no --slo
  EXPECT_EQ(run("simulate --profile profile.json --trace constant:gbps=1 --policy x --slo 1 --requests 3").rc, 2);
  // Bad input: exit 1 with a message that says what was wrong.
  test_support::expect_failure(run("simulate --profile profile.json --trace constant:gbps=1 --policy nope --slo 1"), 1,
                               "unknown policy \"nope\"");
  test_support::expect_failure(run("simulate --profile profile.json --trace constant:gbps=1 --policy text --slo 1"), 1,
                               "recompute time is unknown");
  std::ofstream(dir_ / "bad.json") << R"({"chunk_tokens": 10, "levels": [], "chunks": []})";
  test_support::expect_failure(run("simulate --profile bad.json --trace constant:gbps=1 --policy text --slo 1"), 1,
                               "bad.json: $.levels: expected at least one level");
  // An unknown hardware profile lists the shipped ones.
  test_support::expect_failure(
      run("simulate --profile profile.json --trace constant:gbps=1 --policy text --slo 1 --hardware h100-ish"), 1,
      "a40_mistral-7b");
  // Times and rates out of bounds name the flag and the bounds (no infinite simulated time).
  for (const auto& [flags, message] : std::vector<std::pair<std::string, std::string>>{
           {"--slo 1 --rtt-ms 1e308", "--rtt-ms must be in [0, 1e+06], got 1e+308"},
           {"--slo 1e300", "--slo must be in (0, 1e+06]"},
           {"--slo 1 --trace-offset -1", "--trace-offset must be in [0, 1e+09]"},
           {"--slo 1 --requests 3 --rate 1e-308", "--rate must be in [1e-06, 1e+09]"},
           {"--slo 1 --link tcp --queue-bytes -1", "--queue-bytes must be in [1500, 1e+12], got -1"},
           {"--slo 1 --link tcp --queue-bytes 100", "--queue-bytes must be in [1500, 1e+12], got 100"}})
    test_support::expect_failure(run("simulate --profile synthetic --trace constant:gbps=1 --policy quant8 " + flags), 2,
                                 message);
}

TEST_F(SimCli, SimBenchReportsItsKeys) {
  const auto j = json_of("sim-bench --runs 50 --load-requests 50 --threads 1 --json");
  EXPECT_GT(j["events_per_s"].get<double>(), 0);
  EXPECT_GT(j["runs_per_s"].get<double>(), 0);
  EXPECT_EQ(j["sweep_runs"], 50);
}

}  // namespace
}  // namespace kvstream

namespace kvstream {
namespace {

namespace fs = std::filesystem;

class EmulateCli : public test_support::CliTest {};

TEST_F(EmulateCli, HelpAndUsage) {
  const auto help = ok("emulate --help");
  EXPECT_NE(help.out.find("--queue-ms"), std::string::npos) << help.out;
  EXPECT_NE(help.out.find("--cc"), std::string::npos) << help.out;
  test_support::expect_failure(run("emulate --profile synthetic --trace constant:gbps=1 --policy text --slo 1 --rtt-ms 10 "
                                   "--chunk-rtt-ms 20"),
                               2, "one round trip");
  test_support::expect_failure(run("emulate --profile synthetic --trace constant:gbps=1 --policy text --slo 1 "
                                   "--queue-bytes 3000 --queue-ms 5"),
                               2, "not both");
}

// An emulation runs in real time: a run the simulator says never ends (a trace without capacity) or
// ends after --time-limit-s is refused before anything is set up, so these need no root.
TEST_F(EmulateCli, ARunThatWouldNeverEndIsRefused) {
  for (const char* trace : {"constant:gbps=0", "constant:gbps=1e-9"}) {
    const auto r = run(std::string("emulate --profile synthetic --trace ") + trace + " --policy quant8 --slo 1");
    EXPECT_EQ(r.rc, 1) << trace << ": " << r.err;
    EXPECT_TRUE(r.err.find("can never complete") != std::string::npos || r.err.find("would take about") != std::string::npos)
        << trace << ": " << r.err;
  }
  test_support::expect_failure(run("emulate --profile synthetic --trace constant:gbps=0.1 --policy quant8 --slo 1 "
                                   "--time-limit-s 1"),
                               1, "more than its limit of 1 s (--time-limit-s)");
  test_support::expect_failure(run("emulate --profile synthetic --trace constant:gbps=1 --policy quant8 --slo 1 "
                                   "--time-limit-s 0"),
                               2, "--time-limit-s must be in (0, 86400]");
}

// link-check's and fidelity's options are checked before anything is set up (these need no root).
TEST_F(EmulateCli, LinkCheckOptionsOutOfRangeAreRefused) {
  for (const auto& [flags, message] : std::vector<std::pair<std::string, std::string>>{
           {"--window-ms 1e-9", "--window-ms must be in [1, 10000]"},
           {"--seconds 1e300", "--seconds must be in (0, 3600]"},
           {"--seconds 0.05", "--window-ms is longer than --seconds"},
           {"--scale 0", "--scale must be in (0, 1e6]"},
           {"--scale 2 --mean-mbps 10", "give --scale or --mean-mbps, not both"}})
    test_support::expect_failure(run("link-check --trace constant:gbps=0.1 " + flags), 2, message);
  test_support::expect_failure(run("link-check --trace constant:gbps=0"), 1, "has no capacity");
  test_support::expect_failure(run("fidelity nothing.json --link-check-s 0.05"), 2,
                               "--link-check-s must be 0 (no check) or in [0.1, 3600]");
}

// --rescore reads its directory before anything is written: a directory with no results is an error
// that names the stored reference, and leaves no empty --out behind; --out cannot be that directory.
TEST_F(EmulateCli, RescoringNothingWritesNothing) {
  const fs::path repo = fs::path(__FILE__).parent_path().parent_path().parent_path();
  const std::string config = (repo / "experiments/configs/fidelity.json").string();
  const auto missing = run("fidelity " + config + " --rescore results/fidelity");
  test_support::expect_failure(missing, 1, "--rescore results/fidelity: no fidelity results there (no config.json)");
  EXPECT_NE(missing.err.find("experiments/reference/fidelity"), std::string::npos) << missing.err;
  EXPECT_FALSE(fs::exists(dir_ / "results")) << "an empty result directory was left behind";
  const std::string reference = (repo / "experiments/reference/fidelity").string();
  test_support::expect_failure(run("fidelity " + config + " --rescore " + reference + " --out " + reference + " --overwrite"),
                               1, "is the directory --rescore reads");
  const auto rescored = run("fidelity " + config + " --rescore " + reference + " --out out --no-figures");
  EXPECT_EQ(rescored.rc, 0) << rescored.err;
  EXPECT_TRUE(fs::exists(dir_ / "out/fidelity_groups.csv"));
}

// 40 requests at once under a 1 GB address-space limit: thread stacks run out. That is an error
// naming it (exit 1), not an uncaught std::system_error (SIGABRT, as before).
#if defined(__SANITIZE_ADDRESS__)
constexpr bool kAddressSanitizer = true;
#elif defined(__has_feature)
constexpr bool kAddressSanitizer = __has_feature(address_sanitizer);
#else
constexpr bool kAddressSanitizer = false;
#endif

TEST_F(EmulateCli, AThreadThatCannotStartIsAnErrorNotAnAbort) {
  if (::geteuid() != 0 || !fs::exists("/dev/net/tun")) GTEST_SKIP() << "emulation needs root and /dev/net/tun";
  if (kAddressSanitizer) GTEST_SKIP() << "ASan reserves terabytes of shadow memory: it cannot start under ulimit -v";
  const auto r = test_support::run_kvstream(
      dir_, "emulate --profile synthetic --trace constant:gbps=1 --policy quant8 --slo 1 --requests 40 --rate 1e9",
      "ulimit -v 1000000 &&");
  test_support::expect_failure(r, 1, "thread");
  EXPECT_NE(r.err.find("ulimit"), std::string::npos) << r.err;
}

TEST_F(EmulateCli, WithoutRootItSaysSoAndFails) {
  if (std::system("command -v setpriv > /dev/null") != 0) GTEST_SKIP() << "setpriv (util-linux) not found";
  // As nobody: the emulator cannot make namespaces and must say why instead of crashing.
  const auto r = test_support::run_kvstream(dir_, "emulate --profile synthetic --trace constant:gbps=1 --policy quant8 --slo 1",
                              "setpriv --reuid=65534 --regid=65534 --clear-groups");
  test_support::expect_failure(r, 1, "needs root");
}

}  // namespace
}  // namespace kvstream
