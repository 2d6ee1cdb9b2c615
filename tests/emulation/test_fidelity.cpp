// `kvstream fidelity`'s parts that need no network: the config (every error names its JSON path),
// the plan of cases and its rotations, rescoring stored runs (and refusing what does not fit), the
// error statistics, and the distributions per (policy, path, workload) group.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "emulation/fidelity.h"
#include "emulation/fidelity_errors.h"
#include "emulation/fidelity_groups.h"
#include "emulation/fidelity_rescore.h"
#include "tests/sim/sim_test_support.h"

namespace kvstream::emulation {
namespace {

namespace fs = std::filesystem;

// A config in a fresh folder, beside an (empty) profile file it names.
class FidelityConfigTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("kvstream_fidelity_" + std::to_string(::getpid()));
    fs::create_directories(dir_);
    std::ofstream(dir_ / "p.json") << "{}";
  }
  void TearDown() override { fs::remove_all(dir_); }
  nlohmann::json minimal() const {
    return nlohmann::json::parse(R"({
      "name": "t", "profiles": ["p.json"],
      "traces": [{"name": "c", "input": "constant:gbps=0.1", "mean_mbps": 50}],
      "rtt_ms": [0, 20], "queues": [{"name": "deep", "bytes": 2000000}, {"name": "shallow", "ms": 50}],
      "congestion_controls": ["cubic", "bbr"], "policies": ["fixed:cachegen:2", "mpc"], "slo_s": [1, 2],
      "workloads": [{"name": "single", "kind": "single", "offsets_s": [0, 10, 20]}]})");
  }
  FidelityConfig read(const nlohmann::json& config) const {
    std::ofstream(dir_ / "f.json") << config.dump();
    return read_fidelity_config((dir_ / "f.json").string());
  }
  // The error that reading `config` throws.
  std::string error(const nlohmann::json& config) const {
    try {
      read(config);
    } catch (const std::exception& e) {
      return e.what();
    }
    return "no error";
  }
  fs::path dir_;
};

TEST_F(FidelityConfigTest, ReadsEveryKey) {
  nlohmann::json j = minimal();
  j["slow_start_after_idle"] = false;
  j["link_models"] = {"tcp"};
  j["workloads"].push_back(nlohmann::json::parse(
      R"({"name": "p", "kind": "poisson", "requests": 4, "rate_per_s": 1, "seed": 3, "offset_s": 5, "rotate": "pairs"})"));
  const FidelityConfig c = read(j);
  EXPECT_EQ(c.profiles.at(0), (dir_ / "p.json").string());
  EXPECT_EQ(c.traces.at(0).mean_mbps, 50);
  EXPECT_EQ(c.queues.at(1).ms, 50);
  EXPECT_FALSE(c.slow_start_after_idle);
  EXPECT_EQ(c.link_models, std::vector<std::string>{"tcp"});
  const FidelityWorkload& p = c.workloads.at(1);
  EXPECT_TRUE(p.poisson);
  EXPECT_EQ(p.requests, 4);
  EXPECT_EQ(p.offsets_s, std::vector<double>{5});
  EXPECT_EQ(p.rotate, Rotation::kPairs);
}

TEST_F(FidelityConfigTest, ErrorsNameTheJsonPath) {
  const auto with = [&](const std::string& pointer, const nlohmann::json& value) {
    nlohmann::json j = minimal();
    j[nlohmann::json::json_pointer(pointer)] = value;
    return error(j);
  };
  EXPECT_NE(with("/rtt_ms/1", -5).find("rtt_ms[1]"), std::string::npos) << with("/rtt_ms/1", -5);
  EXPECT_NE(with("/queues/0/bytes", 100).find("queues[0].bytes"), std::string::npos);
  EXPECT_NE(with("/policies/1", "nope").find("policies[1]"), std::string::npos);
  EXPECT_NE(with("/workloads/0/kind", "burst").find("workloads[0].kind"), std::string::npos);
  EXPECT_NE(with("/workloads/0/rotate", "sideways").find("workloads[0].rotate"), std::string::npos);
  EXPECT_NE(with("/link_models", {"packet"}).find("link_models[0]"), std::string::npos);
  EXPECT_NE(with("/profiles/0", "missing.json").find("profiles[0]"), std::string::npos);
  EXPECT_NE(with("/bogus", 1).find("bogus"), std::string::npos);
  // The tcp link model has no vegas: refused before anything runs, unless only emulated and fluid.
  const std::string vegas = with("/congestion_controls/1", "vegas");
  EXPECT_NE(vegas.find("congestion_controls[1]"), std::string::npos) << vegas;
  nlohmann::json fluid_only = minimal();
  fluid_only["congestion_controls"][1] = "vegas";
  fluid_only["link_models"] = {"fluid"};
  EXPECT_EQ(error(fluid_only), "no error");
}

TEST_F(FidelityConfigTest, ThePlanCrossesEveryAxisAndRotationsLeaveOutInTurn) {
  nlohmann::json j = minimal();
  // 1 trace x 2 RTTs x 2 queues x 2 congestion controls = 8 paths; 4 (policy, SLO) pairs; 3 offsets.
  EXPECT_EQ(plan_fidelity(read(j)).size(), 8u * 4 * 3);
  j["workloads"][0]["rotate"] = "offsets";  // each path one offset, in turn
  const auto offsets = plan_fidelity(read(j));
  ASSERT_EQ(offsets.size(), 8u * 4);
  EXPECT_EQ(offsets[0].offset_s, 0);
  EXPECT_EQ(offsets[4].offset_s, 10);  // the second path
  EXPECT_EQ(offsets[8].offset_s, 20);
  EXPECT_EQ(offsets[12].offset_s, 10);  // shifted by one after every 3 paths
  j["workloads"][0]["rotate"] = "pairs";  // each path one (policy, SLO) pair, in turn
  const auto pairs = plan_fidelity(read(j));
  ASSERT_EQ(pairs.size(), 8u * 3);
  EXPECT_EQ(pairs[0].policy, "fixed:cachegen:2");
  EXPECT_EQ(pairs[0].slo_s, 1);
  EXPECT_EQ(pairs[3].slo_s, 2);
  EXPECT_EQ(pairs[6].policy, "mpc");
  EXPECT_EQ(pairs[0].rtt_ms, 0);
  EXPECT_EQ(pairs[12].rtt_ms, 20);
  EXPECT_EQ(pairs[12].slo_s, 2);  // shifted by one after every 4 paths
  // Congestion controls alternate with the paths, and so would the SLO without the shift.
  int cubic_at_slo1 = 0, bbr_at_slo1 = 0;
  for (const auto& c : pairs) (c.congestion_control == "cubic" ? cubic_at_slo1 : bbr_at_slo1) += c.slo_s == 1;
  EXPECT_GT(cubic_at_slo1, 0);
  EXPECT_GT(bbr_at_slo1, 0);
}

// A trace may run its own round trips, queues and workloads (a Gbit/s trace other paths than a
// cellular one), on contexts whose KV is kv_bytes_scale times larger.
TEST_F(FidelityConfigTest, ATraceMayNarrowTheAxesOfItsOwnPaths) {
  nlohmann::json j = minimal();
  j["workloads"].push_back(nlohmann::json::parse(R"({"name": "p", "kind": "poisson", "requests": 2, "rate_per_s": 1})"));
  j["traces"].push_back(nlohmann::json::parse(R"({"name": "fast", "input": "constant:gbps=1", "rtt_ms": [0.5, 5, 20],
      "queues": ["shallow"], "workloads": ["p"], "kv_bytes_scale": 16})"));
  const FidelityConfig c = read(j);
  EXPECT_EQ(c.traces[1].rtt_ms, (std::vector<double>{0.5, 5, 20}));
  EXPECT_EQ(c.traces[1].queues, std::vector<size_t>{1});
  EXPECT_EQ(c.traces[1].workloads, std::vector<size_t>{1});
  EXPECT_EQ(c.traces[1].kv_bytes_scale, 16);
  const auto plan = plan_fidelity(c);
  // The first trace: 8 paths x (4 pairs x 3 offsets + 4 pairs); the second: 3 RTTs x 1 queue x 2 ccs = 6 paths x 4 pairs.
  ASSERT_EQ(plan.size(), 8u * (12 + 4) + 6 * 4);
  for (size_t i = 8 * 16; i < plan.size(); ++i) {
    EXPECT_EQ(plan[i].trace, 1u);
    EXPECT_EQ(plan[i].queue, 1u);
    EXPECT_EQ(plan[i].workload, 1u);
  }
  EXPECT_EQ(plan[8 * 16].rtt_ms, 0.5);
  EXPECT_EQ(plan.back().rtt_ms, 20);
  nlohmann::json bad = j;
  bad["traces"][1]["queues"] = {"medium"};
  EXPECT_NE(error(bad).find("traces[1].queues[0]"), std::string::npos) << error(bad);
  bad = j;
  bad["traces"][1]["kv_bytes_scale"] = 0;
  EXPECT_NE(error(bad).find("traces[1].kv_bytes_scale"), std::string::npos) << error(bad);
}

// The config of the rescore tests: a profile the simulator can stream (4 chunks of 1,000 tokens at
// 1, 2 and 4 MB), single requests and a Poisson workload.
class RescoreTest : public FidelityConfigTest {
 protected:
  void SetUp() override {
    FidelityConfigTest::SetUp();
    sim::ContextProfile profile = sim::test::hand_profile(4, 1000, {1e6, 2e6, 4e6}, {0.005, 0.005, 0.005}, {0.8, 0.9, 0.98});
    profile.name = "hand";
    std::ofstream(dir_ / "p.json") << sim::to_json(profile).dump();
  }
  nlohmann::json small() const {
    nlohmann::json j = minimal();
    j["rtt_ms"] = {20};
    j["queues"] = {{{"name", "deep"}, {"bytes", 2000000}}};
    j["congestion_controls"] = {"cubic"};
    j["policies"] = {"fixed:cachegen:2", "mpc:text=0"};  // the profile has no recompute times
    j["slo_s"] = {1};
    j["workloads"] = nlohmann::json::parse(R"([{"name": "single", "kind": "single", "offsets_s": [0, 10]},
                                                {"name": "p", "kind": "poisson", "requests": 3, "rate_per_s": 2}])");
    return j;
  }
  // A stored run whose "emulation" is the fluid simulation of its case.
  static nlohmann::json fluid_line(const FidelityRunner& runner, const FidelityCase& c) {
    FidelityRun stored;
    stored.fidelity_case = c;
    stored.trace_mean_mbps = runner.trace(c.trace).mean_bps() / 1e6;
    stored.queue_bytes = runner.queue_bytes(c);
    stored.emulated.results = sim::simulate(runner.inputs(c, "fluid"));
    for (const auto& model : runner.config().link_models) stored.simulated.push_back(sim::simulate(runner.inputs(c, model)));
    return to_json(runner.config(), stored);
  }
  // A result directory of every case of `runner`'s config, as `kvstream fidelity` writes it.
  std::vector<std::string> write_results(const FidelityRunner& runner, const fs::path& out) const {
    fs::create_directories(out);
    std::ofstream(out / "config.json") << runner.config().source.dump(2) << "\n";
    std::vector<std::string> lines;
    for (const auto& c : plan_fidelity(runner.config())) lines.push_back(fluid_line(runner, c).dump());
    write_lines(out, lines);
    return lines;
  }
  static void write_lines(const fs::path& out, const std::vector<std::string>& lines, bool last_newline = true) {
    std::ofstream file(out / "fidelity.jsonl", std::ios::trunc);
    for (size_t i = 0; i < lines.size(); ++i) file << lines[i] << (i + 1 < lines.size() || last_newline ? "\n" : "");
  }
  // The error read_stored_runs throws for `out`.
  static std::string rescore_error(const FidelityRunner& runner, const fs::path& out) {
    try {
      read_stored_runs(runner, out);
    } catch (const std::exception& e) {
      return e.what();
    }
    return "no error";
  }
};

TEST_F(RescoreTest, KvBytesScaleMultipliesTheLevelsOnItsTraceOnly) {
  nlohmann::json j = small();
  j["traces"].push_back({{"name", "fast"}, {"input", "constant:gbps=1"}, {"kv_bytes_scale", 16}});
  const FidelityRunner runner(read(j), std::nullopt);
  const auto plan = plan_fidelity(runner.config());
  const FidelityCase& slow = plan.front();
  const FidelityCase& fast = plan.back();
  ASSERT_EQ(fast.trace, 1u);
  const sim::ContextProfile slow_context = runner.inputs(slow, "fluid").contexts[0];
  const sim::ContextProfile fast_context = runner.inputs(fast, "fluid").contexts[0];
  EXPECT_EQ(slow_context.chunks[0].levels[1].bytes, 2e6);
  EXPECT_EQ(fast_context.chunks[0].levels[1].bytes, 32e6);
  EXPECT_EQ(fast_context.chunks[0].levels[1].decode_s, slow_context.chunks[0].levels[1].decode_s);
  EXPECT_EQ(fast_context.chunks[0].text_bytes, slow_context.chunks[0].text_bytes);
}

TEST_F(RescoreTest, StoredRunsAreSimulatedAgain) {
  const FidelityConfig config = read(small());
  const FidelityRunner runner(config, std::nullopt);
  const auto lines = write_results(runner, dir_ / "out");
  const auto runs = read_stored_runs(runner, dir_ / "out");
  ASSERT_EQ(runs.size(), plan_fidelity(config).size());
  for (size_t i = 0; i < runs.size(); ++i) {
    const FidelityRun again = runner.rescore(runs[i].fidelity_case, runs[i].emulated);
    EXPECT_EQ(to_json(config, again).dump(), lines[i]);  // fluid against itself: every error 0
    for (const double e : nlohmann::json::parse(lines[i])["simulated"]["fluid"]["ttft_errors"]) EXPECT_EQ(e, 0);
  }
}

// Every way a stored directory can fail to be the measurement of the config given is refused, naming
// where (each of these once moved the reported errors with exit 0).
TEST_F(RescoreTest, ADirectoryThatIsNotTheConfigsMeasurementIsRefused) {
  const FidelityConfig config = read(small());
  const FidelityRunner runner(config, std::nullopt);
  const fs::path out = dir_ / "out";
  const auto lines = write_results(runner, out);
  const auto expect = [&](std::vector<std::string> edited, const std::string& message, bool last_newline = true) {
    write_lines(out, edited, last_newline);
    const std::string error = rescore_error(runner, out);
    EXPECT_NE(error.find(message), std::string::npos) << error;
  };
  const auto with = [&](size_t i, const std::string& pointer, const nlohmann::json& value) {
    std::vector<std::string> edited = lines;
    nlohmann::json line = nlohmann::json::parse(edited[i]);
    line[nlohmann::json::json_pointer(pointer)] = value;
    edited[i] = line.dump();
    return edited;
  };
  const std::string first = (out / "fidelity.jsonl").string() + ":1: ";
  expect(with(0, "/emulated/requests/0/chunk_transfer_s", std::vector<double>(50, 0.1)),
         first + "$.emulated.requests[0].chunk_transfer_s: expected one time per chunk of hand (4), got 50");
  expect(with(0, "/emulated/requests/0/choices/2", "cachegen:9"), first + "$.emulated.requests[0].choices[2]: not a level");
  expect(with(0, "/emulated/requests/0/ttft_s", 0), first + "$.emulated.requests[0].ttft_s: expected an emulated TTFT > 0");
  expect(with(0, "/policy", "quant8"), first + "$: this run (");
  expect(with(0, "/slo_s", 3), "is not a case of the config");
  expect(with(0, "/trace_mean_mbps", 40), first + "$.trace_mean_mbps: the trace was emulated at a mean of 40");
  expect(with(0, "/queue_bytes", nullptr), first + "$.queue_bytes: the queue was 0 bytes");
  expect(with(lines.size() - 1, "/emulated/requests", nlohmann::json::array()), "workload p has 3 request(s), the run 0");
  std::vector<std::string> twice = lines;
  twice.push_back(lines[1]);
  expect(twice, ":" + std::to_string(lines.size() + 1) + ": the run of line 2 again");
  expect({lines.begin(), lines.end() - 2}, "holds " + std::to_string(lines.size() - 2) + " of the config's " +
                                               std::to_string(lines.size()) + " runs");
  std::vector<std::string> cut = lines;
  cut.back().resize(cut.back().size() / 2);
  expect(cut, "the last line has no newline (the file was cut)", /*last_newline=*/false);
  // Another config than the one the directory was emulated with.
  write_lines(out, lines);
  nlohmann::json other = small();
  other["slo_s"] = {1.5};
  const FidelityConfig changed = read(other);
  const std::string error = rescore_error(FidelityRunner(changed, std::nullopt), out);
  EXPECT_NE(error.find("config.json is not the config given (they differ at $.slo_s[0])"), std::string::npos) << error;
  EXPECT_EQ(rescore_error(runner, out), "no error");
}

sim::RequestResult result(double ttft_s, std::vector<std::string> choices, std::vector<double> chunk_s) {
  sim::RequestResult r;
  r.completed = true;
  r.ttft_s = ttft_s;
  r.choices = std::move(choices);
  r.chunk_transfer_s = std::move(chunk_s);
  return r;
}

TEST(FidelityErrors, PairRequestsAndOnlyChunksFetchedAlike) {
  const auto errors = paired_errors({result(0.9, {"a", "b", "a"}, {0.3, 0.3, 0.3})},
                                    {result(1.0, {"a", "text", "a"}, {0.4, 0.1, 0.2})});
  ASSERT_EQ(errors.ttft.size(), 1u);
  EXPECT_NEAR(errors.ttft[0], -0.1, 1e-12);
  ASSERT_EQ(errors.chunk.size(), 2u);  // the second chunk went as text in one run
  EXPECT_NEAR(errors.chunk[0], -0.25, 1e-12);
  EXPECT_NEAR(errors.chunk[1], 0.5, 1e-12);
  // Only the requests that chose alike, or only those that did not.
  const std::vector<sim::RequestResult> simulated = {result(0.9, {"a"}, {0.3}), result(2, {"b"}, {1})};
  const std::vector<sim::RequestResult> emulated = {result(1.0, {"a"}, {0.4}), result(1, {"text"}, {0.1})};
  EXPECT_EQ(paired_errors(simulated, emulated, Choices::kSame).ttft.size(), 1u);
  EXPECT_NEAR(paired_errors(simulated, emulated, Choices::kDifferent).ttft.at(0), 1.0, 1e-12);
  EXPECT_EQ(paired_errors(simulated, emulated).ttft.size(), 2u);
  sim::RequestResult lost = result(1, {}, {});
  lost.completed = false;
  EXPECT_TRUE(paired_errors({lost}, {result(1, {}, {})}).ttft.empty());
}

TEST(FidelityErrors, StatisticsAreSignedMedianAndMagnitudes) {
  const ErrorStats s = error_stats({-0.3, -0.1, 0.02, 0.05, -0.04});
  EXPECT_EQ(s.count, 5u);
  EXPECT_NEAR(s.median, -0.04, 1e-12);
  EXPECT_NEAR(s.median_abs, 0.05, 1e-12);
  EXPECT_NEAR(s.max_abs, 0.3, 1e-12);
  EXPECT_GT(s.p95_abs, 0.1);
  EXPECT_LE(s.p95_abs, 0.3);
  EXPECT_EQ(error_stats({}).count, 0u);
}

// A config whose runs' indices all name one trace, queue and workload.
FidelityConfig one_path_config(std::string trace, std::string queue, std::string workload,
                               std::vector<std::string> link_models) {
  FidelityConfig config;
  config.traces.resize(1);
  config.traces[0].name = std::move(trace);
  config.queues.resize(1);
  config.queues[0].name = std::move(queue);
  config.workloads.resize(1);
  config.workloads[0].name = std::move(workload);
  config.link_models = std::move(link_models);
  return config;
}

// Two runs of one (policy, path, workload) group pool their requests; a run of another policy is a
// group of its own; each link model gets its groups, in order of first appearance.
TEST(FidelityGroups, PoolRunsByPolicyPathAndWorkloadAndCompareTheirDistributions) {
  const FidelityConfig config = one_path_config("lte", "shallow", "single", {"fluid", "tcp"});
  const auto met = [](double ttft_s, std::vector<std::string> choices, bool slo_met) {
    sim::RequestResult r = result(ttft_s, std::move(choices), {});
    r.slo_met = slo_met;
    return r;
  };
  const auto run = [&](std::string policy, sim::RequestResult emulated, sim::RequestResult fluid,
                       sim::RequestResult tcp) {
    FidelityRun r;
    r.fidelity_case.policy = std::move(policy);
    r.fidelity_case.rtt_ms = 20;
    r.fidelity_case.congestion_control = "cubic";
    r.emulated.results = {std::move(emulated)};
    r.simulated = {{std::move(fluid)}, {std::move(tcp)}};
    return r;
  };
  const std::vector<FidelityRun> runs = {
      run("mpc", met(2.0, {"a"}, false), met(1.0, {"a"}, true), met(2.2, {"a"}, false)),
      run("mpc", met(1.0, {"a"}, true), met(0.5, {"b"}, true), met(1.0, {"b"}, true)),
      run("quant8", met(3.0, {"q"}, false), met(3.0, {"q"}, false), met(3.0, {"q"}, false))};
  const std::vector<FidelityGroup> groups = fidelity_groups(config, runs);
  ASSERT_EQ(groups.size(), 4u);
  const FidelityGroup& fluid_mpc = groups[0];
  EXPECT_EQ(fluid_mpc.link_model, "fluid");
  EXPECT_EQ(fluid_mpc.policy, "mpc");
  EXPECT_EQ(fluid_mpc.trace + "," + fluid_mpc.queue + "," + fluid_mpc.congestion_control + "," + fluid_mpc.workload,
            "lte,shallow,cubic,single");
  EXPECT_EQ(fluid_mpc.emulated.requests, 2u);
  EXPECT_DOUBLE_EQ(fluid_mpc.emulated.p50_ttft_s, 1.5);   // of 1 and 2 s
  EXPECT_DOUBLE_EQ(fluid_mpc.simulated.p50_ttft_s, 0.75);  // of 0.5 and 1 s
  EXPECT_DOUBLE_EQ(fluid_mpc.p50_error(), -0.5);
  EXPECT_DOUBLE_EQ(fluid_mpc.violation_points(), -50);  // 0 % simulated against 50 % emulated
  EXPECT_EQ(fluid_mpc.same_choices.count, 1u);  // the second request chose "b" in the simulator
  EXPECT_DOUBLE_EQ(fluid_mpc.same_choices.median_abs, 0.5);
  EXPECT_EQ(fluid_mpc.different_choices.count, 1u);
  EXPECT_EQ(groups[1].policy, "quant8");
  EXPECT_DOUBLE_EQ(groups[1].p95_error(), 0);
  const FidelityGroup& tcp_mpc = groups[2];
  EXPECT_EQ(tcp_mpc.link_model, "tcp");
  EXPECT_NEAR(tcp_mpc.p95_error(), 2.14 / 1.95 - 1, 1e-12);  // p95 of {1, 2.2} against of {1, 2}
  EXPECT_DOUBLE_EQ(tcp_mpc.violation_points(), 0);
  EXPECT_EQ(tcp_mpc.max_in_flight, 1u);  // one request per run

  std::ostringstream csv;
  write_fidelity_groups_csv(csv, groups);
  std::istringstream lines(csv.str());
  std::string header, first;
  std::getline(lines, header);
  std::getline(lines, first);
  EXPECT_EQ(header,
            "link_model,policy,trace,rtt_ms,queue,congestion_control,workload,requests,max_in_flight,"
            "emulated_p50_ttft_s,simulated_p50_ttft_s,p50_error,emulated_p95_ttft_s,simulated_p95_ttft_s,p95_error,"
            "emulated_violation_rate,simulated_violation_rate,violation_points,"
            "same_choices_requests,same_choices_median_abs_error,same_choices_p95_abs_error,"
            "different_choices_requests,different_choices_median_abs_error,different_choices_p95_abs_error");
  EXPECT_EQ(first.substr(0, 42), "fluid,mpc,lte,20,shallow,cubic,single,2,1,");
  std::ostringstream worst;
  print_group_summary(worst, groups);
  // fluid's groups: violation points -50 (mpc) and 0 (quant8), so the median is 25.
  EXPECT_NE(worst.str().find("violation rate   median  25.0 points, worst  -50.0 points (mpc | lte 20 ms shallow cubic | single)"),
            std::string::npos)
      << worst.str();
}

// Requests in flight: from arrival to first token, one that never completed until the end.
TEST(FidelityGroups, RequestsInFlightCountOverlapsOfArrivalToFirstToken) {
  const FidelityConfig config = one_path_config("c", "deep", "poisson", {"tcp"});
  const auto at = [](double arrival_s, double ttft_s, bool completed) {
    sim::RequestResult r = result(ttft_s, {}, {});
    r.arrival_s = arrival_s;
    r.completed = completed;
    return r;
  };
  FidelityRun run;
  run.fidelity_case.policy = "mpc";
  // In flight: [0, 2), [1, 1.5), [1.5, 3) (touching ends do not overlap), [2.5, never).
  run.emulated.results = {at(0, 2, true), at(1, 0.5, true), at(1.5, 1.5, true), at(2.5, 0, false)};
  run.simulated = {run.emulated.results};
  EXPECT_EQ(fidelity_groups(config, {run}).at(0).max_in_flight, 2u);  // e.g. at 1 s, and from 2.5 s
  run.emulated.results.push_back(at(1.2, 5, true));                    // [1.2, 6.2): 3 at 1.2 s, 1.5 s, 2.5 s
  EXPECT_EQ(fidelity_groups(config, {run}).at(0).max_in_flight, 3u);
}

}  // namespace
}  // namespace kvstream::emulation
