// What `kvstream slurm` writes into #SBATCH lines and reads back from jobs.json
// (experiments/slurm_sweep.h): values quoted as the real sbatch reads them (tests/slurm/slurm_sweep.sh
// submits such a path to a real Slurm) or refused, and jobs.json checked field by field, so that no
// string from it reaches squeue's arguments unchecked.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "common/json_reader.h"
#include "experiments/slurm_sweep.h"

namespace kvstream::experiments {
namespace {

TEST(SbatchQuoting, PlainValuesStayAsTheyAre) {
  EXPECT_EQ(sbatch_quoted("short", "--partition"), "short");
  EXPECT_EQ(sbatch_quoted("gpu-a100.x,y:1/2+3=4@5%6", "--partition"), "gpu-a100.x,y:1/2+3=4@5%6");
}

TEST(SbatchQuoting, SpacesQuotesAndHashesAreQuoted) {
  EXPECT_EQ(sbatch_quoted("a b", "x"), "\"a b\"");
  EXPECT_EQ(sbatch_quoted("it's", "x"), "\"it's\"");
  EXPECT_EQ(sbatch_quoted("say \"hi\"", "x"), "\"say \\\"hi\\\"\"");
  EXPECT_EQ(sbatch_quoted("back\\slash", "x"), "\"back\\\\slash\"");
  EXPECT_EQ(sbatch_quoted("#1", "x"), "\"#1\"");  // unquoted, '#' would start a comment
  EXPECT_EQ(sbatch_quoted("", "x"), "\"\"");
}

TEST(SbatchQuoting, ControlCharactersAreRefused) {
  for (const std::string& bad : std::vector<std::string>{"a\nb", "a\rb", "a\tb", std::string("a\0b", 3), "a\x7f"}) {
    try {
      sbatch_quoted(bad, "--account");
      ADD_FAILURE() << "accepted a control character";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find("--account"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("control character"), std::string::npos) << e.what();
    }
  }
}

TEST(SbatchQuoting, TheLogPatternKeepsSlurmsPatternsOnlyInTheFileName) {
  EXPECT_EQ(sbatch_output_pattern("/r/slurm/logs/grid-%A_%a.out"), "/r/slurm/logs/grid-%A_%a.out");
  EXPECT_EQ(sbatch_output_pattern("/r 100%j/logs/merge-%j.out"), "\"/r 100%%j/logs/merge-%j.out\"");
}

TEST(SbatchQuoting, ExtraArgumentsAreOneOptionEach) {
  EXPECT_EQ(sbatch_option("--qos=short"), "--qos=short");
  EXPECT_EQ(sbatch_option("--exclusive"), "--exclusive");
  EXPECT_EQ(sbatch_option("--comment=two words"), "--comment=\"two words\"");
  for (const std::string bad : {"qos=short", "--", "--qos short", "-q", "--qos=a\nb", "--q#os=1"})
    EXPECT_THROW(sbatch_option(bad), std::invalid_argument) << bad;
}

SlurmJobs parse(const std::string& text) { return parse_slurm_jobs(nlohmann::json::parse(text), "jobs.json"); }

void expect_refused(const std::string& text, const std::string& message) {
  try {
    parse(text);
    ADD_FAILURE() << "accepted " << text;
  } catch (const common::JsonError& e) {
    EXPECT_NE(std::string(e.what()).find(message), std::string::npos) << e.what();
  }
}

TEST(SlurmJobsFile, RoundTrips) {
  const SlurmJobs jobs{"2026-12-06T10:00:00Z", 3, "/r", "", "12", "13"};
  const SlurmJobs back = parse_slurm_jobs(to_json(jobs), "jobs.json");
  EXPECT_EQ(back.shards, 3u);
  EXPECT_EQ(back.profile, "");
  EXPECT_EQ(back.grid, "12");
  EXPECT_EQ(back.merge, "13");
  EXPECT_EQ(squeue_command("squeue", back),
            (std::vector<std::string>{"squeue", "-h", "-r", "-o", "%i %T %r", "-j", "12,13"}));
  EXPECT_TRUE(squeue_command("squeue", SlurmJobs{"t", 1, "", "", "", ""}).empty());
}

TEST(SlurmJobsFile, AnythingButAJobIdIsRefused) {
  expect_refused(R"({"submitted_at": "t", "shards": 1, "grid": {"job": "1;touch PWNED;echo"}})",
                 "jobs.json: $.grid.job: expected a Slurm job id (digits), got \"1;touch PWNED;echo\"");
  expect_refused(R"({"submitted_at": "t", "shards": 1, "merge": {"job": "-h"}})", "$.merge.job");
  expect_refused(R"({"submitted_at": "t", "shards": 1, "merge": {"job": ""}})", "$.merge.job");
  expect_refused(R"({"submitted_at": "t", "shards": 1, "merge": {"job": 7}})", "$.merge.job");
  expect_refused(R"({"submitted_at": "t", "shards": 1, "merge": "7"})", "$.merge");
}

TEST(SlurmJobsFile, ShardCountsOutOfRangeAreRefused) {
  expect_refused(R"({"submitted_at": "t", "shards": -1})", "$.shards: expected an integer >= 1");
  expect_refused(R"({"submitted_at": "t", "shards": 0})", "$.shards");
  expect_refused(R"({"submitted_at": "t", "shards": 1e12})", "$.shards: expected an integer");
  expect_refused(R"({"submitted_at": "t", "shards": 1000000000000})", "$.shards: expected at most 10000 shards");
  expect_refused(R"({"submitted_at": "t"})", "$");
  expect_refused("[]", "jobs.json: $: expected an object");
  expect_refused(R"({"submitted_at": "t", "shards": 1, "extra": 1})", "extra");
}

}  // namespace
}  // namespace kvstream::experiments
