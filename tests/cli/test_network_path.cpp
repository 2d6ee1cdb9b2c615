// One network path through every front door (sim/network_path.h): `simulate`'s flags, an experiment
// config's network section (`run`) and a fidelity config give the same simulated TTFT to the bit, so
// an option reaches all of them by construction (`emulate` reads `simulate`'s flags, cli/streaming_flags.h);
// and a sweep over the network axes records each path and keeps them apart.
#include <fstream>

#include "emulation/fidelity.h"
#include "experiments/result_tables.h"
#include "experiments/run_log.h"
#include "sim/context_profile.h"
#include "tests/cli/cli_test.h"

namespace kvstream {
namespace {

namespace fs = std::filesystem;
using test_support::read_text;

class NetworkPathCli : public test_support::CliTest {
 protected:
  // The first request's TTFT of `kvstream run` on `network` (synthetic contexts, 1 Gbit/s, quant8).
  double run_ttft_s(const nlohmann::json& network) {
    nlohmann::json config = nlohmann::json::parse(R"({"name": "path",
      "contexts": [{"name": "syn", "source": "synthetic"}], "traces": [{"name": "c", "inputs": ["constant:gbps=1"]}],
      "policies": ["quant8"], "slo_s": 1})");
    config["network"] = network;
    std::ofstream(dir_ / "path.json") << config.dump();
    const auto r = run("run path.json --out ran --overwrite --no-figures --profile-cache cache");
    EXPECT_EQ(r.rc, 0) << r.err;
    return experiments::read_run_log(dir_ / "ran/runs.jsonl").at(0)["requests"][0]["ttft_s"].get<double>();
  }
};

TEST_F(NetworkPathCli, SimulateRunAndFidelityGiveTheSamePath) {
  std::ofstream(dir_ / "syn.json") << sim::to_json(sim::synthetic_profile({})).dump();
  // tcp, 80 ms, a 50 ms queue, bbr, no restart after idle.
  const auto simulated = json_of("simulate --profile syn.json --trace constant:gbps=1 --policy quant8 --slo 1 --link tcp "
                                 "--rtt-ms 80 --chunk-rtt-ms 80 --queue-ms 50 --cc bbr --no-slow-start-after-idle --json");
  const double by_flags = simulated["runs"][0]["requests"][0]["ttft_s"].get<double>();
  const double by_config = run_ttft_s(nlohmann::json::parse(R"({"link_model": "tcp", "rtt_ms": 80,
    "queue": {"name": "q", "ms": 50}, "congestion_control": "bbr", "slow_start_after_idle": false})"));
  std::ofstream(dir_ / "f.json") << R"({"name": "f", "profiles": ["syn.json"],
    "traces": [{"name": "c", "input": "constant:gbps=1"}], "rtt_ms": [80], "queues": [{"name": "q", "ms": 50}],
    "congestion_controls": ["bbr"], "slow_start_after_idle": false, "link_models": ["tcp"],
    "policies": ["quant8"], "slo_s": [1], "workloads": [{"name": "one", "kind": "single", "offsets_s": [0]}]})";
  const emulation::FidelityRunner fidelity(emulation::read_fidelity_config((dir_ / "f.json").string()), std::nullopt);
  const auto cases = emulation::plan_fidelity(fidelity.config());
  ASSERT_EQ(cases.size(), 1u);
  const double by_fidelity = sim::simulate(fidelity.inputs(cases[0], "tcp")).at(0).ttft_s;
  EXPECT_EQ(by_config, by_flags);
  EXPECT_EQ(by_fidelity, by_flags);
  // And the path matters: the same request on the fluid link without a round trip is faster.
  EXPECT_LT(run_ttft_s(nlohmann::json::parse(R"({"link_model": "fluid"})")), by_flags);
}

// The shipped paper configs say "network": {"link_model": "fluid"}: their runs record no network
// coordinates and keep their ids (tests/experiments: the id of before), where a config without the
// section runs, and records, the default tcp path.
TEST_F(NetworkPathCli, PaperConfigsNameFluidAndTheDefaultIsTcp) {
  const auto run_with = [&](const std::string& out, const std::string& network) {
    std::ofstream(dir_ / (out + ".json")) << R"({"name": "same",
      "contexts": [{"name": "syn", "source": "synthetic"}], "traces": [{"name": "m", "inputs": ["markov:seed=3,good_gbps=2,bad_gbps=0.2,good_s=0.5,bad_s=0.5,duration_s=60"]}],
      "policies": ["quant8", "mpc"], "slo_s": [0.5, 1], "hardware": "a40_mistral-7b", "repetitions": 2)" + network + "}";
    const auto r = run("run " + out + ".json --out " + out + " --no-figures --profile-cache cache");
    EXPECT_EQ(r.rc, 0) << r.err;
  };
  run_with("without", "");
  run_with("fluid", R"(, "network": {"link_model": "fluid"})");
  run_with("fluid80", R"(, "network": {"link_model": "fluid", "rtt_ms": 80})");
  EXPECT_EQ(read_text(dir_ / "fluid/runs.jsonl").find("link_model"), std::string::npos);
  EXPECT_EQ(read_text(dir_ / "fluid/summary.csv").find("link_model"), std::string::npos);
  EXPECT_NE(read_text(dir_ / "without/runs.jsonl").find("\"link_model\":\"tcp\""), std::string::npos);
  EXPECT_NE(read_text(dir_ / "fluid80/runs.jsonl").find("\"link_model\":\"fluid\""), std::string::npos);
  // tcp puts headers on the wire: no request of the default path is faster than on the fluid one.
  const auto fluid_runs = experiments::read_run_log(dir_ / "fluid/runs.jsonl");
  const auto tcp_runs = experiments::read_run_log(dir_ / "without/runs.jsonl");
  ASSERT_EQ(fluid_runs.size(), tcp_runs.size());
  for (size_t i = 0; i < fluid_runs.size(); ++i) {
    if (fluid_runs[i]["policy"] != "quant8") continue;
    EXPECT_GT(tcp_runs[i]["requests"][0]["ttft_s"].get<double>(), fluid_runs[i]["requests"][0]["ttft_s"].get<double>());
  }
}

TEST_F(NetworkPathCli, ASweepRecordsEveryPathAndKeepsThemApart) {
  std::ofstream(dir_ / "sweep.json") << R"({"name": "sweep",
    "contexts": [{"name": "syn", "source": "synthetic"}], "traces": [{"name": "c", "inputs": ["constant:gbps=1"]}],
    "policies": ["quant8"], "slo_s": 1,
    "network": {"link_model": ["fluid", "tcp"], "rtt_ms": [0, 80], "queue": {"name": "shallow", "ms": 50}}})";
  const auto r = run("run sweep.json --out swept --no-figures --profile-cache cache");
  ASSERT_EQ(r.rc, 0) << r.err;
  const auto runs = experiments::read_run_log(dir_ / "swept/runs.jsonl");
  ASSERT_EQ(runs.size(), 4u);  // fluid at 0 and 80 ms, tcp at 0 and 80 ms
  std::map<std::string, double> ttft;
  for (const auto& line : runs) {
    for (const auto& key : experiments::kNetworkColumns) EXPECT_TRUE(line.contains(key)) << key;
    ttft[line["link_model"].get<std::string>() + "@" + line["rtt_ms"].dump()] =
        line["requests"][0]["ttft_s"].get<double>();
  }
  EXPECT_EQ(runs[0]["queue"], nullptr);  // a fluid path has no queue
  EXPECT_EQ(runs[2]["queue"], "shallow");
  EXPECT_LT(ttft["fluid@0.0"], ttft["fluid@80.0"]);
  EXPECT_LT(ttft["fluid@80.0"], ttft["tcp@80.0"]);
  // summary.csv: one row per path, with the path's columns after rate_per_s.
  const std::string summary = read_text(dir_ / "swept/summary.csv");
  EXPECT_EQ(summary.substr(0, summary.find('\n')).find(
                "rate_per_s,link_model,rtt_ms,queue,congestion_control,slow_start_after_idle,runs"),
            summary.substr(0, summary.find('\n')).find("rate_per_s"))
      << summary;
  EXPECT_EQ(std::count(summary.begin(), summary.end(), '\n'), 1 + 4) << summary;
  EXPECT_NE(summary.find(",tcp,80,shallow,cubic,true,"), std::string::npos) << summary;
  EXPECT_NE(summary.find(",fluid,80,,,,"), std::string::npos) << summary;
  // The terminal table names the paths.
  EXPECT_NE(r.out.find("tcp 80ms shallow cubic"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace kvstream
