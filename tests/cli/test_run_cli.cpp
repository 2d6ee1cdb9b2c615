// End-to-end tests of `kvstream run` and `kvstream merge` (KVSTREAM_CLI): result files and their
// columns, resume after a kill, shards merged equal to one run, figures, errors.
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <random>
#include <set>
#include <sstream>
#include <thread>

#include "codec/transform/transform_calibration.h"
#include "experiments/experiment_runner.h"
#include "experiments/result_tables.h"
#include "experiments/run_log.h"
#include "experiments/run_log_file.h"
#include "sim/context_profile.h"
#include "tests/cli/cli_test.h"

namespace kvstream {
namespace {

using test_support::read_text;
namespace fs = std::filesystem;

// Synthetic contexts and generated traces: no model, no data files, fully deterministic.
nlohmann::json synthetic_config(const std::string& name) {
  auto config = nlohmann::json::parse(R"({
    "contexts": [{"name": "syn", "source": "synthetic", "chunks": 4, "chunk_tokens": 1500}],
    "traces": [{"name": "c1", "inputs": ["constant:gbps=1"]}, {"name": "c10", "inputs": ["constant:gbps=10"]},
               {"name": "markov", "inputs": ["markov:seed=3,good_gbps=8,bad_gbps=0.5,good_s=0.3,bad_s=0.2,duration_s=20"]}],
    "policies": ["quant8", "cachegen", "mpc", "oracle-dp", "text"],
    "slo_s": [0.5, 1.5],
    "hardware": "a40_mistral-7b",
    "repetitions": 2
  })");
  config["name"] = name;
  return config;
}

std::vector<std::string> lines_of(const fs::path& path) {
  std::vector<std::string> lines;
  std::istringstream in(read_text(path));
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

std::string joined(const std::vector<std::string>& columns) {
  std::string text;
  for (const auto& c : columns) text += (text.empty() ? "" : ",") + c;
  return text;
}

// Why the kvstream under test cannot profile stories260K contexts, or "" when it can.
std::string why_no_stories260k() {
  if (!KVSTREAM_WITH_TORCH) return "this kvstream was built without LibTorch";
  try {
    common::resolve_data("models/stories260K/stories260K.bin");
    return "";
  } catch (const common::DataNotFound&) {
    return "stories260K not found (shared/data or scripts/fetch-data.sh)";
  }
}

bool matplotlib_available() {
  return std::system("/usr/bin/python3 -c 'import matplotlib' > /dev/null 2>&1") == 0;
}

class RunCli : public test_support::CliTest {
 protected:
  fs::path write_config(const nlohmann::json& config) {
    const fs::path path = dir_ / (config["name"].get<std::string>() + ".json");
    std::ofstream(path) << config.dump(1);
    return path;
  }
  // `kvstream run` with the test's own profile cache.
  Result run_config(const fs::path& config, const std::string& extra) {
    return run("run " + config.string() + " --profile-cache " + (dir_ / "cache").string() + " " + extra);
  }
};

TEST_F(RunCli, WritesEveryResultFileWithItsColumns) {
  const auto config = write_config(synthetic_config("tiny"));
  const auto r = run_config(config, "--jobs 2");
  ASSERT_EQ(r.rc, 0) << r.err;
  const fs::path out = dir_ / "results" / "tiny";
  for (const char* file : {"config.json", "manifest.json", "runs.jsonl", "summary.csv", "levels.csv", "profiles/syn/syn.json"})
    EXPECT_TRUE(fs::exists(out / file)) << file;

  // runs.jsonl: the whole grid (3 traces x 5 policies x 2 SLOs x 2 repetitions), in index order.
  const auto runs = experiments::read_run_log(out / "runs.jsonl");
  ASSERT_EQ(runs.size(), 60u);
  for (size_t i = 0; i < runs.size(); ++i) {
    EXPECT_EQ(runs[i]["run"], i);
    for (const char* key : {"id", "context_set", "context", "trace_set", "trace", "trace_mean_gbps", "policy", "slo_s",
                            "hardware", "workload", "rate_per_s", "repetition", "summary", "requests"})
      EXPECT_TRUE(runs[i].contains(key)) << key;
    EXPECT_EQ(runs[i]["requests"].size(), 1u);
  }
  // Two repetitions on a constant trace (other trace offsets) give the same request, up to the
  // rounding of the trace times the tcp link reads.
  for (auto it = runs[0]["summary"].begin(); it != runs[0]["summary"].end(); ++it)
    EXPECT_NEAR(it->get<double>(), runs[1]["summary"][it.key()].get<double>(), 1e-12 * std::abs(it->get<double>())) << it.key();

  // summary.csv: one row per (trace set, policy, SLO), columns as documented.
  const auto summary = lines_of(out / "summary.csv");
  ASSERT_EQ(summary.size(), 1u + 3 * 5 * 2);
  // Without a network section the path is the default, tcp, and its columns follow rate_per_s.
  std::vector<std::string> columns = experiments::kSummaryColumns;
  columns.insert(std::find(columns.begin(), columns.end(), "rate_per_s") + 1, experiments::kNetworkColumns.begin(),
                 experiments::kNetworkColumns.end());
  EXPECT_EQ(summary[0], joined(columns));
  EXPECT_EQ(summary[1].rfind("syn,c1,quant8,0.5,a40_mistral-7b,single,,tcp,0,unbounded,cubic,true,2,2,2,1,", 0), 0u)
      << summary[1];
  // Each statistic lies within its 95 % interval, and the violation rate's within [0, 1].
  const auto cells_of = [](const std::string& line) {
    std::vector<std::string> cells;
    std::stringstream in(line);
    for (std::string cell; std::getline(in, cell, ',');) cells.push_back(cell);
    return cells;
  };
  const std::vector<std::string> header = cells_of(summary[0]);
  const auto column = [&](const std::string& name) {
    return size_t(std::find(header.begin(), header.end(), name) - header.begin());
  };
  for (size_t i = 1; i < summary.size(); ++i) {
    const std::vector<std::string> row = cells_of(summary[i]);
    ASSERT_EQ(row.size(), header.size()) << summary[i];
    for (const std::string stat : {"mean_ttft_s", "p50_ttft_s", "p95_ttft_s", "slo_violation_rate"}) {
      const double value = std::stod(row[column(stat)]), lo = std::stod(row[column(stat + "_ci95_lo")]),
                   hi = std::stod(row[column(stat + "_ci95_hi")]);
      EXPECT_TRUE(lo <= value && value <= hi) << stat << " in " << summary[i];
    }
    EXPECT_GE(std::stod(row[column("slo_violation_rate_ci95_lo")]), 0);
    EXPECT_LE(std::stod(row[column("slo_violation_rate_ci95_hi")]), 1);
  }
  EXPECT_EQ(lines_of(out / "levels.csv")[0], joined(experiments::kLevelColumns));
  EXPECT_EQ(lines_of(out / "levels.csv").size(), 1u + 4);  // cachegen:1..3, quant:bits=8

  const auto manifest = nlohmann::json::parse(read_text(out / "manifest.json"));
  EXPECT_EQ(manifest["state"], "complete");
  EXPECT_EQ(manifest["grid_runs"], 60);
  EXPECT_EQ(manifest["seed"], 1);
  for (const char* key : {"git_revision", "compiler", "libraries", "host"}) EXPECT_TRUE(manifest["build"].contains(key)) << key;
  EXPECT_EQ(manifest["hardware_profiles"][0]["kind"], "analytic");
  EXPECT_EQ(nlohmann::json::parse(read_text(out / "config.json"))["slo_s"], nlohmann::json({0.5, 1.5}));

  // The table on stdout.
  EXPECT_NE(r.out.find("TTFT mean"), std::string::npos);
  EXPECT_NE(r.out.find("oracle-dp"), std::string::npos);

  if (!matplotlib_available()) GTEST_SKIP() << "/usr/bin/python3 has no matplotlib (scripts/setup.sh installs it): figures not checked";
  for (const char* kind : {"ttft_cdf", "violation_vs_quality", "ttft_vs_bandwidth", "size_quality"})
    for (const char* ext : {".png", ".svg"}) {
      const fs::path figure = out / "figures" / (std::string(kind) + ext);
      EXPECT_TRUE(fs::exists(figure) && fs::file_size(figure) > 1000) << figure;
    }
  // `kvstream plot` draws them again, in the kinds and formats asked for.
  const auto plotted = run("plot " + out.string() + " --kind ttft_cdf rd --format pdf");
  test_support::expect_failure(plotted, 1, "rd.jsonl");  // a kind without its input is an error
  const auto pdf = run("plot " + out.string() + " --kind ttft_cdf --format pdf --width column");
  ASSERT_EQ(pdf.rc, 0) << pdf.err;
  EXPECT_EQ(pdf.out, (out / "figures/ttft_cdf.pdf").string() + "\n");
  EXPECT_GT(fs::file_size(out / "figures/ttft_cdf.pdf"), 1000u);
}

TEST_F(RunCli, ExistingResultsNeedResumeAndTheSameConfig) {
  auto config = synthetic_config("again");
  const auto path = write_config(config);
  ASSERT_EQ(run_config(path, "--no-figures").rc, 0);
  const auto again = run_config(path, "--no-figures");
  EXPECT_EQ(again.rc, 1);
  EXPECT_NE(again.err.find("already holds results (runs.jsonl); pass --resume"), std::string::npos) << again.err;
  EXPECT_EQ(run_config(path, "--resume --overwrite").rc, 2);
  // --overwrite measures again and gives the same deterministic runs.
  const std::string first = read_text(dir_ / "results/again/runs.jsonl");
  ASSERT_EQ(run_config(path, "--overwrite --no-figures").rc, 0);
  EXPECT_EQ(read_text(dir_ / "results/again/runs.jsonl"), first);
  // Resuming a finished run runs nothing and changes nothing.
  const std::string before = read_text(dir_ / "results/again/runs.jsonl");
  ASSERT_EQ(run_config(path, "--resume --no-figures").rc, 0);
  EXPECT_EQ(read_text(dir_ / "results/again/runs.jsonl"), before);
  config["slo_s"] = {0.7};
  write_config(config);
  const auto other = run_config(path, "--resume --no-figures");
  EXPECT_EQ(other.rc, 1);
  EXPECT_NE(other.err.find("holds results of another config"), std::string::npos) << other.err;
  // --overwrite with a config that fails to load leaves the earlier results alone.
  config["traces"][0]["inputs"] = {"traces/no/such/file.log"};
  write_config(config);
  EXPECT_EQ(run_config(path, "--overwrite --no-figures").rc, 1);
  EXPECT_EQ(read_text(dir_ / "results/again/runs.jsonl"), before);
}

TEST_F(RunCli, BadInputsFailWithThePathAndWriteNothing) {
  auto config = synthetic_config("bad");
  config["traces"][1]["inputs"] = {"traces/no/such/file.log"};
  const auto r = run_config(write_config(config), "");
  EXPECT_EQ(r.rc, 1);
  EXPECT_NE(r.err.find("bad.json: $.traces[1].inputs[0]: "), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(dir_ / "results/bad"));
  config = synthetic_config("bad");
  config["policies"] = {"fixed:cachegen:9"};
  const auto p = run_config(write_config(config), "");
  EXPECT_EQ(p.rc, 1);
  EXPECT_NE(p.err.find("$.policies[0]: "), std::string::npos) << p.err;
  // Text recompute without a hardware profile on a synthetic context (no measured recompute time)
  // fails before the first run, naming the policy.
  config = synthetic_config("bad");
  config.erase("hardware");
  const auto text = run_config(write_config(config), "");
  EXPECT_EQ(text.rc, 1);
  EXPECT_NE(text.err.find("$.policies[1]: cachegen may recompute text, but context syn"), std::string::npos) << text.err;
  EXPECT_FALSE(fs::exists(dir_ / "results/bad"));
  const auto usage = run_config(write_config(config), "--shard 2/2");
  EXPECT_EQ(usage.rc, 2);
  EXPECT_NE(usage.err.find("--shard expects i/N"), std::string::npos) << usage.err;
}

// A config whose run takes seconds (120 runs of 400 Poisson requests each): long enough to be
// killed, or written by a second run, while it runs.
nlohmann::json slow_config(const std::string& name) {
  auto config = synthetic_config(name);
  config["workload"] = {{"kind", "poisson"}, {"rate_per_s", {0.5, 1.0}}, {"requests", 400}};
  config["contexts"][0]["chunks"] = 8;
  config["traces"][0]["inputs"] = {"constant:gbps=3"};
  return config;
}

// Starts `argv` with its output discarded; returns its pid (-1 when it could not start).
pid_t spawn_quietly(std::vector<std::string> argv) {
  std::vector<char*> cargv;
  for (auto& a : argv) cargv.push_back(a.data());
  cargv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0);
  pid_t pid = 0;
  const int error = posix_spawn(&pid, argv.front().c_str(), &actions, nullptr, cargv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  return error == 0 ? pid : -1;
}

// Kills a run at random points (SIGKILL, as a crash or a batch system would: while it loads, in
// its runs, while it finishes), resuming after each kill, and expects the same runs.jsonl and
// summary.csv as an uninterrupted run: no run lost, none duplicated.
TEST_F(RunCli, ResumeAfterKillsAtRandomPointsLosesAndDuplicatesNothing) {
  const auto path = write_config(slow_config("killed"));
  const fs::path killed = dir_ / "killed", whole = dir_ / "whole";
  const std::string cache = (dir_ / "cache").string();
  const auto started = std::chrono::steady_clock::now();
  ASSERT_EQ(run("run " + path.string() + " --out " + whole.string() + " --profile-cache " + cache + " --no-figures").rc, 0);
  const auto whole_ms = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - started);
  const size_t total = experiments::read_run_log(whole / "runs.jsonl").size();
  ASSERT_EQ(total, 3u * 2 * 5 * 2 * 2);

  std::mt19937 random(20261203);  // the kill points: uniform over the time a whole run takes
  std::uniform_int_distribution<int64_t> delay_ms(0, whole_ms.count());
  int kills = 0;
  std::vector<size_t> survivors;
  for (int attempt = 0; attempt < 6; ++attempt) {
    const pid_t pid = spawn_quietly({KVSTREAM_CLI, "run", path.string(), "--out", killed.string(), "--jobs", "2",
                                     "--profile-cache", cache, "--no-figures", "--resume"});
    ASSERT_GT(pid, 0);
    std::this_thread::sleep_for(std::chrono::milliseconds(delay_ms(random)));
    ::kill(pid, SIGKILL);
    int status = 0;
    ::waitpid(pid, &status, 0);
    if (WIFEXITED(status)) {
      ASSERT_EQ(WEXITSTATUS(status), 0) << "a resumed run failed after " << kills << " kill(s)";
      break;  // it finished before this kill
    }
    ++kills;
    survivors.push_back(fs::exists(killed / "runs.jsonl") ? experiments::read_run_log(killed / "runs.jsonl").size() : 0);
  }
  EXPECT_GE(kills, 3) << "the run finished too early to be killed often";
  const auto resumed = run("run " + path.string() + " --out " + killed.string() + " --resume --profile-cache " + cache + " --no-figures");
  ASSERT_EQ(resumed.rc, 0) << resumed.err;
  std::string seen;
  for (size_t n : survivors) seen += std::to_string(n) + " ";
  EXPECT_EQ(read_text(killed / "runs.jsonl"), read_text(whole / "runs.jsonl")) << "runs after each kill: " << seen;
  EXPECT_EQ(read_text(killed / "summary.csv"), read_text(whole / "summary.csv")) << "runs after each kill: " << seen;
}

// A full disk, as a file size limit (ulimit -f): the run stops with an error naming the file and
// the reason, runs.jsonl holds whole lines only, and --resume completes it as if nothing happened.
TEST_F(RunCli, AFullDiskIsAClearErrorAndNothingIsHalfWritten) {
  const auto path = write_config(slow_config("full"));
  const fs::path full = dir_ / "full", whole = dir_ / "whole";
  const std::string cache = (dir_ / "cache").string();
  ASSERT_EQ(run("run " + path.string() + " --out " + whole.string() + " --profile-cache " + cache + " --no-figures").rc, 0);
  const auto half_kib = std::to_string(fs::file_size(whole / "runs.jsonl") / 2048);  // about half the runs fit

  const auto stopped = test_support::run_kvstream(
      dir_, "run " + path.string() + " --out " + full.string() + " --profile-cache " + cache + " --no-figures",
      "ulimit -f " + half_kib + " &&");
  test_support::expect_failure(stopped, 1, "File too large");
  EXPECT_NE(stopped.err.find("runs.jsonl"), std::string::npos) << stopped.err;
  const std::string log = read_text(full / "runs.jsonl");
  ASSERT_FALSE(log.empty());
  EXPECT_EQ(log.back(), '\n') << "a partial line was left";
  EXPECT_LT(experiments::read_run_log(full / "runs.jsonl").size(), experiments::read_run_log(whole / "runs.jsonl").size());
  // The manifest says the session failed, and why (it stayed "running" before).
  const auto manifest = nlohmann::json::parse(read_text(full / "manifest.json"));
  EXPECT_EQ(manifest["state"], "failed");
  EXPECT_NE(manifest["sessions"].back()["error"].get<std::string>().find("File too large"), std::string::npos) << manifest;
  // What a writer killed during a rewrite leaves (runs.jsonl's temporary file) goes with the next
  // session; a file of another name stays.
  std::ofstream(full / "runs.jsonl.tmp.otherhost.4242.0") << "{\"run\": 0";
  std::ofstream(full / "notes.tmp.txt") << "mine";

  const auto resumed = run("run " + path.string() + " --out " + full.string() + " --resume --profile-cache " + cache + " --no-figures");
  ASSERT_EQ(resumed.rc, 0) << resumed.err;
  EXPECT_EQ(read_text(full / "runs.jsonl"), read_text(whole / "runs.jsonl"));
  EXPECT_EQ(read_text(full / "summary.csv"), read_text(whole / "summary.csv"));
  EXPECT_FALSE(fs::exists(full / "runs.jsonl.tmp.otherhost.4242.0"));
  EXPECT_TRUE(fs::exists(full / "notes.tmp.txt"));
  EXPECT_EQ(nlohmann::json::parse(read_text(full / "manifest.json"))["state"], "complete");
}

// Two writers of one directory: the second is refused while the first runs, naming it, and the
// first's results are whole (before the lock: duplicated runs and a "complete" manifest).
TEST_F(RunCli, ASecondRunIntoTheSameDirectoryIsRefused) {
  const auto path = write_config(slow_config("busy"));
  const fs::path out = dir_ / "busy";
  const std::string cache = (dir_ / "cache").string();
  const pid_t first = spawn_quietly({KVSTREAM_CLI, "run", path.string(), "--out", out.string(), "--profile-cache",
                                     cache, "--no-figures"});
  ASSERT_GT(first, 0);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (std::chrono::steady_clock::now() < deadline && experiments::read_run_log(out / "runs.jsonl").empty())
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  const auto second = run("run " + path.string() + " --out " + out.string() + " --overwrite --profile-cache " + cache +
                          " --no-figures");
  int status = 0;
  ::waitpid(first, &status, 0);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  EXPECT_EQ(second.rc, 1);
  EXPECT_NE(second.err.find(out.string() + " is being written by kvstream run (pid " + std::to_string(first)),
            std::string::npos)
      << second.err;
  const auto runs = experiments::read_run_log(out / "runs.jsonl");
  EXPECT_EQ(runs.size(), 3u * 2 * 5 * 2 * 2);
  std::set<std::string> ids;
  for (const auto& line : runs) ids.insert(line.at("id").get<std::string>());
  EXPECT_EQ(ids.size(), runs.size());  // no run twice
}

TEST_F(RunCli, ShardsMergeIntoTheSingleRun) {
  const auto path = write_config(synthetic_config("sharded"));
  const std::string cache = " --profile-cache " + (dir_ / "cache").string() + " --no-figures";
  ASSERT_EQ(run("run " + path.string() + " --out single" + cache).rc, 0);
  for (int i = 0; i < 3; ++i)
    ASSERT_EQ(run("run " + path.string() + " --shard " + std::to_string(i) + "/3 --out shard" + std::to_string(i) + cache).rc, 0);
  EXPECT_EQ(experiments::read_run_log(dir_ / "shard1/runs.jsonl").size(), 20u);
  const auto missing = run("merge shard0 shard2 --out partial --no-figures");
  EXPECT_EQ(missing.rc, 1);
  EXPECT_NE(missing.err.find("hold 40 of the grid's 60 runs"), std::string::npos) << missing.err;
  EXPECT_FALSE(fs::exists(dir_ / "partial")) << "a failed merge left the directory it made";
  const auto merged = run("merge shard0 shard1 shard2 --out merged");
  ASSERT_EQ(merged.rc, 0) << merged.err;
  for (const char* file : {"runs.jsonl", "summary.csv", "levels.csv", "config.json"})
    EXPECT_EQ(read_text(dir_ / "merged" / file), read_text(dir_ / "single" / file)) << file;
  const auto manifest = nlohmann::json::parse(read_text(dir_ / "merged/manifest.json"));
  EXPECT_EQ(manifest["merged_from"].size(), 3u);
  if (matplotlib_available()) {
    EXPECT_TRUE(fs::exists(dir_ / "merged/figures/ttft_cdf.png"));
  }
}

// --compress-runs: runs.jsonl.zst holds runs.jsonl's text, the tables are the same; a resume after a
// write torn in its last frame, and a merge of compressed and plain shards, give the uninterrupted
// run's files; a corrupt file is an error naming it and the byte, and changes nothing.
TEST_F(RunCli, CompressedRunsResumeAndMergeLikePlainOnes) {
  const auto path = write_config(synthetic_config("packed"));
  const std::string options = " --profile-cache " + (dir_ / "cache").string() + " --no-figures";
  ASSERT_EQ(run("run " + path.string() + " --out plain" + options).rc, 0);
  const auto packed = run("run " + path.string() + " --out packed --jobs 2 --compress-runs" + options);
  ASSERT_EQ(packed.rc, 0) << packed.err;
  EXPECT_FALSE(fs::exists(dir_ / "packed/runs.jsonl"));
  const auto text_of = [](const fs::path& log) {
    std::string text;
    experiments::for_each_line(log, [&](std::string_view line, size_t) { text.append(line).append("\n"); });
    return text;
  };
  const std::string plain_runs = read_text(dir_ / "plain/runs.jsonl");
  EXPECT_EQ(text_of(dir_ / "packed/runs.jsonl.zst"), plain_runs);
  EXPECT_EQ(read_text(dir_ / "packed/summary.csv"), read_text(dir_ / "plain/summary.csv"));
  EXPECT_LT(fs::file_size(dir_ / "packed/runs.jsonl.zst"), plain_runs.size() / 4);

  // Killed while writing its second frame: the first frame's 25 runs are kept, the rest run again.
  fs::copy(dir_ / "packed", dir_ / "torn", fs::copy_options::recursive);
  const fs::path torn = dir_ / "torn/runs.jsonl.zst";
  fs::remove(torn);
  {
    experiments::RunLog log(torn);
    const auto lines = lines_of(dir_ / "plain/runs.jsonl");
    for (size_t i = 0; i < lines.size(); ++i) {
      log.append(lines[i] + "\n");
      if (i == 24) log.flush();
    }
    log.flush();
  }
  fs::resize_file(torn, fs::file_size(torn) - 40);
  EXPECT_EQ(experiments::read_run_log(torn).size(), 25u);
  const auto refused = run("run " + path.string() + " --out torn --resume" + options);
  test_support::expect_failure(refused, 1, "holds its runs in runs.jsonl.zst: resume with --compress-runs");
  const auto resumed = run("run " + path.string() + " --out torn --resume --compress-runs" + options);
  ASSERT_EQ(resumed.rc, 0) << resumed.err;
  EXPECT_NE(resumed.err.find("25 done before, 35 to run"), std::string::npos) << resumed.err;
  EXPECT_EQ(text_of(torn), plain_runs);
  EXPECT_EQ(read_text(dir_ / "torn/summary.csv"), read_text(dir_ / "plain/summary.csv"));

  // Shards, one of them compressed, merged into a compressed directory.
  for (int i = 0; i < 3; ++i)
    ASSERT_EQ(run("run " + path.string() + " --shard " + std::to_string(i) + "/3 --out shard" + std::to_string(i) +
                  (i == 1 ? " --compress-runs" : "") + options).rc, 0);
  const auto merged = run("merge shard0 shard1 shard2 --out merged --compress-runs --no-figures");
  ASSERT_EQ(merged.rc, 0) << merged.err;
  EXPECT_EQ(text_of(dir_ / "merged/runs.jsonl.zst"), plain_runs);
  EXPECT_EQ(read_text(dir_ / "merged/summary.csv"), read_text(dir_ / "plain/summary.csv"));

  // One byte changed in the middle of a frame.
  const fs::path shard_log = dir_ / "shard1/runs.jsonl.zst";
  {
    std::fstream file(shard_log, std::ios::in | std::ios::out | std::ios::binary);
    file.seekg(std::streamoff(fs::file_size(shard_log) / 2));
    const char byte = char(file.get());
    file.seekp(std::streamoff(fs::file_size(shard_log) / 2));
    file.put(char(byte ^ 0x5a));
  }
  const auto corrupt = run("merge shard0 shard1 shard2 --out remerged --no-figures");
  test_support::expect_failure(corrupt, 1, shard_log.string().substr(dir_.string().size() + 1) +
                                               ": corrupt zstd data in the frame starting at byte ");
  for (const char* file : {"runs.jsonl", "runs.jsonl.zst", "summary.csv", "manifest.json", "config.json"})
    EXPECT_FALSE(fs::exists(dir_ / "remerged" / file)) << file;
  const std::string summary_before = read_text(dir_ / "shard1/summary.csv");
  const auto resume_corrupt = run("run " + path.string() + " --shard 1/3 --out shard1 --resume --compress-runs" + options);
  test_support::expect_failure(resume_corrupt, 1, "corrupt zstd data");
  EXPECT_EQ(read_text(dir_ / "shard1/summary.csv"), summary_before);
}

// `kvstream run` inside a Slurm array (the variables sbatch --array=0-2 sets) runs task i's shard into
// DIR/shards/i-of-3; merged, the shards equal one machine's run. A list with holes is refused, and an
// explicit --shard wins.
TEST_F(RunCli, SlurmArrayTasksRunTheirShardsAndMergeIntoTheSingleRun) {
  const auto path = write_config(synthetic_config("arrayed"));
  const std::string cache = " --profile-cache " + (dir_ / "cache").string() + " --no-figures";
  ASSERT_EQ(run("run " + path.string() + " --out single" + cache).rc, 0);
  const auto array_env = [](int id) {
    return "SLURM_ARRAY_JOB_ID=41 SLURM_ARRAY_TASK_ID=" + std::to_string(id) +
           " SLURM_ARRAY_TASK_MIN=0 SLURM_ARRAY_TASK_MAX=2 SLURM_ARRAY_TASK_COUNT=3";
  };
  for (int i = 0; i < 3; ++i) {
    const auto task = test_support::run_kvstream(dir_, "run " + path.string() + " --out sweep" + cache, array_env(i));
    ASSERT_EQ(task.rc, 0) << task.err;
    EXPECT_NE(task.err.find("shard " + std::to_string(i) + "/3"), std::string::npos) << task.err;
  }
  EXPECT_EQ(experiments::read_run_log(dir_ / "sweep/shards/1-of-3/runs.jsonl").size(), 20u);
  const auto merged = run("merge sweep/shards/0-of-3 sweep/shards/1-of-3 sweep/shards/2-of-3 --out sweep --no-figures");
  ASSERT_EQ(merged.rc, 0) << merged.err;
  for (const char* file : {"runs.jsonl", "summary.csv", "levels.csv", "config.json"})
    EXPECT_EQ(read_text(dir_ / "sweep" / file), read_text(dir_ / "single" / file)) << file;

  test_support::expect_failure(test_support::run_kvstream(dir_, "run " + path.string() + " --out holes" + cache,
                              "SLURM_ARRAY_TASK_ID=3 SLURM_ARRAY_TASK_MIN=0 SLURM_ARRAY_TASK_MAX=7 SLURM_ARRAY_TASK_COUNT=3"),
                 1, "--array=0-2");
  const auto explicit_shard = test_support::run_kvstream(dir_, "run " + path.string() + " --shard 0/3 --out explicit" + cache, array_env(2));
  ASSERT_EQ(explicit_shard.rc, 0) << explicit_shard.err;
  EXPECT_NE(explicit_shard.err.find("is not used"), std::string::npos) << explicit_shard.err;
  EXPECT_EQ(read_text(dir_ / "explicit/runs.jsonl"), read_text(dir_ / "sweep/shards/0-of-3/runs.jsonl"));
}

// A measured context set: stories260K prefilled, every chunk encoded and decoded; the second run
// reads the profile cache.
TEST_F(RunCli, RealModelContextsAreProfiledOnceAndCached) {
  if (const std::string why = why_no_stories260k(); !why.empty()) GTEST_SKIP() << why;
  auto config = nlohmann::json::parse(R"({
    "name": "real",
    "contexts": [{"name": "ts", "model": "stories260K", "dataset": "text/tinystories/tinystories_val.txt",
                  "count": 2, "tokens": 128, "chunk_tokens": 64, "continuation_tokens": 16, "stride_chars": 3000}],
    "codecs": ["cachegen", "quant:bits=8"],
    "kv_scale": "mistral-7b",
    "traces": [{"name": "c5", "inputs": ["constant:gbps=5"]}],
    "policies": ["quant8", "cachegen"],
    "slo_s": 0.5,
    "hardware": "a40_mistral-7b",
    "figures": ["size_quality"]
  })");
  const auto path = write_config(config);
  const auto first = run_config(path, "--no-figures");
  ASSERT_EQ(first.rc, 0) << first.err;
  EXPECT_NE(first.err.find("profiled 128 tokens"), std::string::npos) << first.err;
  EXPECT_NE(first.err.find("scaled x204.8 to mistral-7b"), std::string::npos) << first.err;  // 131072 / 640
  const auto levels = lines_of(dir_ / "results/real/levels.csv");
  ASSERT_EQ(levels.size(), 1u + 4);
  EXPECT_EQ(levels[4].rfind("ts,stories260K,quant:bits=8,quant:bits=8,2,256,", 0), 0u) << levels[4];
  const auto profile = sim::read_context_profile((dir_ / "results/real/profiles/ts/tinystories_val-0.json").string());
  EXPECT_EQ(profile.chunks.size(), 2u);
  EXPECT_EQ(profile.levels[0].name, "cachegen:1");
  const auto runs = experiments::read_run_log(dir_ / "results/real/runs.jsonl");
  ASSERT_EQ(runs.size(), 2u * 2);  // 2 contexts x 2 policies
  // Simulated bytes are the measured bytes scaled to Mistral-7B's KV per token.
  const double quant_bytes = profile.chunks[0].levels[3].bytes + profile.chunks[1].levels[3].bytes;
  EXPECT_NEAR(runs[0]["requests"][0]["bytes"].get<double>(), quant_bytes * 131072 / 640, 1e-6 * quant_bytes * 204.8);

  fs::remove_all(dir_ / "results");
  const auto second = run_config(path, "");
  ASSERT_EQ(second.rc, 0) << second.err;
  EXPECT_EQ(second.err.find("profiled"), std::string::npos) << second.err;
  EXPECT_NE(second.err.find("profile from the cache"), std::string::npos) << second.err;
  if (matplotlib_available()) {
    EXPECT_TRUE(fs::exists(dir_ / "results/real/figures/size_quality.svg"));
  }
}

// A ladder file edited under the same path changes the codec, so its profiles are measured again
// (the cache key holds what the file says, not only its path), and only its levels change.
TEST_F(RunCli, AnEditedLadderFileIsProfiledAgain) {
  if (const std::string why = why_no_stories260k(); !why.empty()) GTEST_SKIP() << why;
  const auto ladder = [&](int key_bins) {
    const nlohmann::json level = {{"level", 1}, {"key", {{{"until", 5}, {"bins", key_bins}}}},
                                  {"value", {{{"until", 5}, {"bins", 8}}}}};
    std::ofstream(dir_ / "mine.json") << nlohmann::json{{"name", "mine"}, {"layers", 5}, {"layer_rule", "exact"},
                                                       {"levels", {level}}}.dump();
  };
  auto config = nlohmann::json::parse(R"({
    "name": "edited",
    "contexts": [{"name": "ts", "model": "stories260K", "dataset": "text/tinystories/tinystories_val.txt",
                  "count": 1, "tokens": 128, "chunk_tokens": 64, "continuation_tokens": 16}],
    "codecs": ["quant:bits=8"],
    "traces": [{"name": "c5", "inputs": ["constant:gbps=5"]}],
    "policies": ["quant8"],
    "slo_s": 0.5
  })");
  config["codecs"].push_back("cachegen:ladder=" + (dir_ / "mine.json").string());
  const auto path = write_config(config);
  const auto cachegen_bytes = [&] {
    for (const auto& line : lines_of(dir_ / "results/edited/levels.csv"))
      if (line.find(",cachegen:ladder=") != std::string::npos) {
        const size_t bytes = line.find(",1,128,") + 7;  // contexts, tokens, then bytes
        return line.substr(bytes, line.find(',', bytes) - bytes);
      }
    return std::string("(no cachegen row)");
  };
  ladder(8);
  const auto first = run_config(path, "--no-figures");
  ASSERT_EQ(first.rc, 0) << first.err;
  const std::string coarse = cachegen_bytes();

  ladder(8);  // the same content, written again: still the cached profile
  const auto same = run_config(path, "--no-figures --overwrite");
  ASSERT_EQ(same.rc, 0) << same.err;
  EXPECT_NE(same.err.find("profile from the cache"), std::string::npos) << same.err;

  ladder(32);
  const auto edited = run_config(path, "--no-figures --overwrite");
  ASSERT_EQ(edited.rc, 0) << edited.err;
  EXPECT_EQ(edited.err.find("profile from the cache"), std::string::npos) << edited.err;
  EXPECT_NE(edited.err.find("profiled 128 tokens"), std::string::npos) << edited.err;
  EXPECT_NE(cachegen_bytes(), coarse);  // 32 key bins cost more bytes than 8
}

// A `transform` spec without cal= is fitted to the context set's model (kvstream calibrate's default
// text and options) once, kept in the profile cache with a record of what was fitted (a calibration
// copied over it is fitted again), and its levels are a ladder the policies take.
TEST_F(RunCli, ATransformSpecIsFittedToTheModelOnceAndCached) {
  if (const std::string why = why_no_stories260k(); !why.empty()) GTEST_SKIP() << why;
  auto config = nlohmann::json::parse(R"({
    "name": "fitted",
    "contexts": [{"name": "ts", "model": "stories260K", "dataset": "text/tinystories/tinystories_val.txt",
                  "count": 1, "tokens": 128, "chunk_tokens": 64, "continuation_tokens": 16}],
    "codecs": ["transform", "transform:d=0.01", "quant:bits=8"],
    "traces": [{"name": "c1", "inputs": ["constant:gbps=1"]}],
    "policies": ["fixed:transform:6", "mpc:ladder=transform"],
    "slo_s": 0.5
  })");
  const auto path = write_config(config);
  const auto first = run_config(path, "--no-figures");
  ASSERT_EQ(first.rc, 0) << first.err;
  EXPECT_NE(first.err.find("transform codec for stories260K: fitted on 32 windows of 384 tokens"), std::string::npos)
      << first.err;
  const auto levels = lines_of(dir_ / "results/fitted/levels.csv");
  ASSERT_EQ(levels.size(), 1u + 12 + 1 + 1);  // the calibration's 12 levels, d=0.01, quant:bits=8
  EXPECT_EQ(levels[1].rfind("ts,stories260K,transform:1,transform,", 0), 0u) << levels[1];
  EXPECT_EQ(levels[13].rfind("ts,stories260K,transform:d=0.01:1,transform:d=0.01,", 0), 0u) << levels[13];
  size_t calibrations = 0;
  for (const auto& entry : fs::directory_iterator(dir_ / "cache/calibrations"))
    calibrations += entry.path().extension() == ".kvcal";
  EXPECT_EQ(calibrations, 1u);  // one per model, however many specs

  const auto second = run_config(path, "--no-figures --overwrite");
  ASSERT_EQ(second.rc, 0) << second.err;
  EXPECT_NE(second.err.find("transform codec for stories260K: calibration from the cache"), std::string::npos)
      << second.err;
  EXPECT_NE(second.err.find("profile from the cache"), std::string::npos) << second.err;
  // The manifest names the calibration, ladder or table every codec ran with.
  fs::path entry;
  for (const auto& file : fs::directory_iterator(dir_ / "cache/calibrations"))
    if (file.path().extension() == ".kvcal") entry = file.path();
  const auto record = nlohmann::json::parse(read_text(entry.string() + ".json"));
  const auto codecs = nlohmann::json::parse(read_text(dir_ / "results/fitted/manifest.json"))["context_sets"][0]["codecs"];
  EXPECT_EQ(codecs[1]["spec"], "transform:d=0.01");
  EXPECT_NE(codecs[1]["runs_as"].get<std::string>().find(entry.string()), std::string::npos) << codecs;
  EXPECT_NE(codecs[1]["content_id"].get<std::string>().find("cal=" + record["calibration_id"].get<std::string>()),
            std::string::npos) << codecs;

  // A valid calibration copied over the cache entry (another fit, another model's) is not used
  // silently: it is not what the entry's record names, so it is fitted again.
  codec::TransformCalibration other = codec::TransformCalibration::load(entry);
  other.set_row_weights(std::vector<double>(size_t(2 * other.layers()), 2.0));
  other.save(entry);
  const auto third = run_config(path, "--no-figures --overwrite");
  ASSERT_EQ(third.rc, 0) << third.err;
  EXPECT_NE(third.err.find("is not used (it is not the calibration its record names"), std::string::npos) << third.err;
  EXPECT_NE(third.err.find("fitting it again"), std::string::npos) << third.err;
  EXPECT_EQ(codec::TransformCalibration::load(entry).id(), std::stoull(record["calibration_id"].get<std::string>(), nullptr, 16));

  // Its options are checked with the config, before any model runs.
  config["name"] = "bad";
  config["codecs"][1] = "transform:d=2";
  const auto bad = run_config(write_config(config), "--no-figures");
  EXPECT_EQ(bad.rc, 1);
  EXPECT_NE(bad.err.find("$.codecs[1]"), std::string::npos) << bad.err;
  EXPECT_NE(bad.err.find("d=: relative distortion 2 is outside [1e-08, 1]"), std::string::npos) << bad.err;

  // A lighter fit (the set's transform_fit) is another calibration, under its own key.
  config["name"] = "light";
  config["codecs"][1] = "transform:d=0.01";
  config["contexts"][0]["transform_fit"] = {{"windows", 4}, {"sensitivity_windows", 1}};
  const auto light = run_config(write_config(config), "--no-figures");
  ASSERT_EQ(light.rc, 0) << light.err;
  EXPECT_NE(light.err.find("transform codec for stories260K: fitted on 4 windows of 384 tokens of "
                           "text/tinystories/tinystories_val.txt (sensitivity on 1, keys weighed by the queries of 4)"),
            std::string::npos)
      << light.err;
  calibrations = 0;
  for (const auto& file : fs::directory_iterator(dir_ / "cache/calibrations")) calibrations += file.path().extension() == ".kvcal";
  EXPECT_EQ(calibrations, 2u);
}

// The main job's promise: without the model's files or the trace data it still runs, on the
// fallbacks, and says so.
TEST_F(RunCli, MissingModelAndTracesFallBack) {
  if (const std::string why = why_no_stories260k(); !why.empty()) GTEST_SKIP() << why;
  auto config = nlohmann::json::parse(R"({
    "name": "fallbacks",
    "contexts": [{"name": "c", "model": "models/none/missing.gguf", "dataset": "text/none/missing.txt", "tokens": 4096,
                  "chunk_tokens": 1024,
                  "fallback": {"model": "stories260K", "dataset": "text/tinystories/tinystories_val.txt", "tokens": 128,
                               "chunk_tokens": 64, "continuation_tokens": 16, "stride_chars": 3000}}],
    "traces": [{"name": "t", "inputs": ["traces/none/*.log"], "fallback": ["constant:gbps=0.01"]}],
    "policies": ["quant8", "cachegen"],
    "slo_s": 1
  })");
  const auto r = run_config(write_config(config), "--no-figures");
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_NE(r.err.find("model models/none/missing.gguf is not available"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("using the fallback stories260K"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("trace set t: "), std::string::npos) << r.err;
  const auto manifest = nlohmann::json::parse(read_text(dir_ / "results/fallbacks/manifest.json"));
  EXPECT_EQ(manifest["context_sets"][0]["model_used"], "stories260K");
  EXPECT_EQ(manifest["context_sets"][0]["fallback_used"], true);
  EXPECT_EQ(manifest["trace_sets"][0]["fallback_used"], true);
  EXPECT_EQ(experiments::read_run_log(dir_ / "results/fallbacks/runs.jsonl").size(), 2u);
}

TEST(RunLog, APartialLastLineIsDroppedAndCutOff) {
  const fs::path path = fs::temp_directory_path() / ("kvstream_runlog_" + std::to_string(::getpid()) + ".jsonl");
  std::ofstream(path) << "{\"run\": 0, \"id\": \"a\"}\n{\"run\": 1, \"i";
  EXPECT_EQ(experiments::read_run_log(path).size(), 1u);
  {
    experiments::RunLog log(path);
    log.append("{\"run\": 2, \"id\": \"c\"}\n");
  }
  const auto lines = experiments::read_run_log(path);
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[1]["id"], "c");
  std::ofstream(path) << "{\"run\": 0, \"id\": \"a\"}\nnot json\n";
  try {
    experiments::read_run_log(path);
    ADD_FAILURE() << "a malformed line must be an error";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find(path.string() + ":2: invalid JSON"), std::string::npos) << e.what();
  }
  fs::remove(path);
}

}  // namespace
}  // namespace kvstream
