// What the runner checks before its first run, and where that knowledge lives: a policy registered
// through the registry alone (sim::register_policy) is checked like the built-in ones, because the
// registry, not the runner, says which policies may recompute text.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "experiments/experiment_runner.h"
#include "sim/policy.h"
#include "tests/test_support.h"

namespace kvstream::experiments {
namespace {

namespace fs = std::filesystem;

// A policy the runner has never heard of: it sends every chunk as text unless text=0.
void register_test_policy() {
  static const bool registered = [] {
    sim::register_policy({"test-text-or-first", "test-text-or-first[:text=1]  text, or the first level with text=0",
                          false, sim::Recompute::kUnlessTextOff,
                          [](const sim::Spec& spec, const sim::ContextProfile& profile) {
                            spec.only({"text"});
                            return sim::make_policy(sim::text_allowed(spec) ? "text" : "fixed:cachegen:1", profile);
                          },
                          ""});
    return true;
  }();
  (void)registered;
}

class RunnerPreflight : public test_support::TempDirTest {
 protected:
  // A config over one profile file without recompute times (a synthetic profile: it has none) and
  // no hardware profile, so that text costs nothing the runner could know.
  ExperimentConfig config_with(const std::string& policy) {
    const fs::path profile = dir_ / "profile.json";
    std::ofstream(profile) << sim::to_json(sim::synthetic_profile({})).dump();
    const nlohmann::json json = {{"name", "preflight"},
                                 {"contexts", {{{"name", "files"}, {"source", "files"}, {"files", {profile.string()}}}}},
                                 {"traces", {"constant:gbps=1"}},
                                 {"policies", {policy}},
                                 {"slo_s", 1}};
    return parse_experiment_config(json, "preflight.json");
  }

  // The runner's error for `policy`, or "" when the sweep runs.
  std::string error_of(const std::string& policy) {
    RunnerOptions options;
    options.out_dir = dir_ / "results";
    options.overwrite = true;
    options.figures = false;
    options.profile_cache = dir_ / "cache";
    std::ostringstream log;
    try {
      run_experiment(config_with(policy), "preflight.json", options, log);
    } catch (const std::exception& e) {
      return e.what();
    }
    return "";
  }
};

TEST_F(RunnerPreflight, ARegisteredPolicyThatMayRecomputeNeedsRecomputeCosts) {
  register_test_policy();
  EXPECT_TRUE(sim::may_recompute("test-text-or-first"));
  EXPECT_FALSE(sim::may_recompute("test-text-or-first:text=0"));
  const std::string error = error_of("test-text-or-first");
  EXPECT_NE(error.find("preflight.json: $.policies[0]: test-text-or-first may recompute text, but context synthetic"),
            std::string::npos)
      << error;
  EXPECT_NE(error.find("has no recompute time"), std::string::npos) << error;
  EXPECT_FALSE(fs::exists(dir_ / "results" / "runs.jsonl")) << "the pre-flight check runs before anything is written";
  EXPECT_EQ(error_of("test-text-or-first:text=0"), "");
  EXPECT_TRUE(fs::exists(dir_ / "results" / "runs.jsonl"));
}

TEST_F(RunnerPreflight, BuiltInPoliciesAnswerThroughTheSameRegistry) {
  for (const std::string policy : {"text", "cachegen", "mpc", "oracle-dp", "cachegen-artifact"})
    EXPECT_TRUE(sim::may_recompute(policy)) << policy;
  for (const std::string policy : {"quant8", "fixed:cachegen:2", "cachegen:text=0", "mpc:text=0", "oracle-dp:text=0"})
    EXPECT_FALSE(sim::may_recompute(policy)) << policy;
  EXPECT_THROW(sim::may_recompute("mpc:text=2"), std::invalid_argument);
  EXPECT_THROW(sim::may_recompute("nope"), std::invalid_argument);
  EXPECT_NE(error_of("cachegen").find("cachegen may recompute text"), std::string::npos);
  EXPECT_EQ(error_of("quant8"), "");
}

// Measuring a model's contexts takes minutes: a policy spec that could never run fails before it,
// checked on the levels the config's codecs will give.
TEST_F(RunnerPreflight, PolicySpecsAreCheckedBeforeAnyContextIsMeasured) {
  const nlohmann::json json = {
      {"name", "preflight"},
      {"contexts", {{{"name", "wiki"}, {"model", "smollm2"}, {"dataset", "text/wikitext2/wiki.test.raw"}, {"tokens", 256},
                     {"chunk_tokens", 128}}}},
      {"codecs", {"cachegen", "quant:bits=8"}},
      {"traces", {"constant:gbps=1"}},
      {"policies", {"cachegen:ladder=quant:bits=8", "mpc:horizon=five"}},
      {"slo_s", 1}};
  RunnerOptions options;
  options.out_dir = dir_ / "results";
  options.figures = false;
  options.profile_cache = dir_ / "cache";
  bool measured = false;
  options.measure_model_contexts = [&](const auto&, const auto&, const auto&) -> profiling::MeasuredContextSet {
    measured = true;
    throw std::runtime_error("measured");
  };
  std::ostringstream log;
  for (const auto& [policy, expected] : std::vector<std::pair<std::string, std::string>>{
           {"mpc:horizon=five", "preflight.json: $.policies[1]: policy \"mpc:horizon=five\": option horizon=five"},
           {"cachegen:ladder=cachegne", "preflight.json: $.policies[1]: profile \"$.codecs\" has no levels of codec \"cachegne\""}}) {
    nlohmann::json with = json;
    with["policies"][1] = policy;
    try {
      run_experiment(parse_experiment_config(with, "preflight.json"), "preflight.json", options, log);
      ADD_FAILURE() << policy << " ran";
    } catch (const std::exception& e) {
      EXPECT_NE(std::string(e.what()).find(expected), std::string::npos) << e.what();
    }
  }
  EXPECT_FALSE(measured);
}

TEST_F(RunnerPreflight, ARegisteredNameIsNotTakenTwice) {
  register_test_policy();
  EXPECT_THROW(sim::register_policy({"mpc", "", false, sim::Recompute::kNever, nullptr, ""}), std::invalid_argument);
}

}  // namespace
}  // namespace kvstream::experiments
