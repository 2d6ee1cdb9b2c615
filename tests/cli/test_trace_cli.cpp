// End-to-end tests of `kvstream trace stats` (KVSTREAM_CLI): JSON and table output on real traces,
// FILE#k, directories and generator specs, and the exit codes of help, bad usage and bad input.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdlib>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "tests/cli/cli_test.h"

namespace fs = std::filesystem;
using namespace kvstream;

namespace {

class TraceCli : public test_support::CliTest {
 protected:
  void SetUp() override {
    TempDirTest::SetUp();
    try {
      common::resolve_data("traces/mahimahi/TMobile-LTE-short.down");
      have_traces_ = true;
    } catch (const common::DataNotFound&) {
      have_traces_ = false;
    }
  }

  bool have_traces_ = false;
};

TEST_F(TraceCli, StatsJsonOfRealTraces) {
  if (!have_traces_) {
    GTEST_SKIP() << "shared/data/traces not found (run scripts/fetch-data.sh)";
  }
  const nlohmann::json m = json_of("trace stats traces/mahimahi/TMobile-LTE-short.down --json");
  ASSERT_TRUE(m.is_object()) << m.dump();
  for (const char* key : {"duration_s", "mean_mbps", "p10_mbps", "p50_mbps", "p90_mbps", "cv"}) EXPECT_TRUE(m.contains(key)) << key;
  EXPECT_EQ(m["name"], "TMobile-LTE-short.down");
  EXPECT_EQ(m["format"], "mahimahi");
  EXPECT_NEAR(m["duration_s"].get<double>(), 139.986, 1e-9);
  EXPECT_NEAR(m["mean_mbps"].get<double>(), 16.70, 0.01);
  // Per-second statistics (docs/DATA.md §1: p50 13.9 Mbit/s), and --scale.
  const nlohmann::json s = json_of("trace stats traces/mahimahi/TMobile-LTE-short.down --bin-s 1 --scale 0.5 --json");
  EXPECT_NEAR(s["p50_mbps"].get<double>(), 13.9 / 2, 0.25);
  EXPECT_NEAR(s["mean_mbps"].get<double>(), 16.70 / 2, 0.01);
  // A multi-trace file gives an array; FILE#k one object.
  const nlohmann::json all = json_of("trace stats traces/cachegen/bw.jsonl --json");
  ASSERT_TRUE(all.is_array());
  EXPECT_EQ(all.size(), 10u);
  const nlohmann::json third = json_of("trace stats traces/cachegen/bw.jsonl#3 --format cachegen --json");
  EXPECT_EQ(third["name"], "bw.jsonl#3");
  EXPECT_EQ(third["chunk_indexed"], true);
  EXPECT_EQ(third, all[3]);
}

TEST_F(TraceCli, StatsTableOfADirectoryAndGenerators) {
  if (!have_traces_) {
    GTEST_SKIP() << "shared/data/traces not found (run scripts/fetch-data.sh)";
  }
  const Result r = run("trace stats traces/cachegen constant:gbps=1");
  ASSERT_EQ(r.rc, 0) << r.err;
  std::istringstream lines(r.out);
  std::vector<std::string> rows;
  for (std::string line; std::getline(lines, line);) rows.push_back(line);
  ASSERT_EQ(rows.size(), 1 + 10 + 3 + 1 + 1u) << r.out;  // header, bw.jsonl, generated_trace.jsonl, constant, note
  EXPECT_EQ(rows[0].rfind("name", 0), 0u) << rows[0];
  EXPECT_EQ(rows[1].rfind("bw.jsonl#0 ", 0), 0u) << rows[1];
  EXPECT_NE(rows[14].find("constant:gbps=1,duration_s=1"), std::string::npos) << rows[14];
  EXPECT_NE(rows[14].find("1000.000"), std::string::npos) << rows[14];
  EXPECT_NE(rows[15].find("chunk-indexed"), std::string::npos) << rows[15];
}

TEST_F(TraceCli, HelpUsageAndErrors) {
  for (const std::string args : {"trace --help", "trace stats --help"}) {
    const Result r = run(args);
    EXPECT_EQ(r.rc, 0) << args;
    EXPECT_NE(r.out.find("usage: kvstream trace"), std::string::npos) << r.out;
  }
  EXPECT_NE(run("--help").out.find("trace"), std::string::npos);
  for (const std::string args : {"trace", "trace frobnicate", "trace stats", "trace stats constant:gbps=1 --format nope",
                                 "trace stats constant:gbps=1 --scale -1", "trace stats constant:gbps=1 --bin-s -1"}) {
    const Result r = run(args);
    EXPECT_EQ(r.rc, 2) << "kvstream " << args << "\n" << r.err;
    EXPECT_FALSE(r.err.empty()) << args;
  }
  std::ofstream(dir_ / "bad.txt") << "0 1\n1 x\n";
  for (const auto& [args, message] : std::vector<std::pair<std::string, std::string>>{
           {"trace stats nothere.down", "nothere.down"},
           {"trace stats bad.txt", "bad.txt:2: expected a throughput in Mbps, found 'x'"},
           {"trace stats markov:seed=1", "missing key 'good_gbps'"}}) {
    const Result r = run(args);
    EXPECT_EQ(r.rc, 1) << args;
    EXPECT_NE(r.err.find(message), std::string::npos) << args << "\n" << r.err;
  }
}

}  // namespace
