// `kvstream slurm` without a cluster: the scripts --dry-run writes, the chain of sbatch calls (a fake
// sbatch on PATH records them), and the errors: no sbatch, a refused submission, bad options, --status
// with nothing submitted; values that would break out of an #SBATCH line or of squeue's arguments.
// tests/slurm/slurm_sweep.sh runs it against a real Slurm.
#include <sys/stat.h>

#include <fstream>

#include "common/process.h"
#include "tests/cli/cli_test.h"

namespace kvstream {
namespace {

using test_support::read_text;
namespace fs = std::filesystem;

constexpr const char* kConfig = R"({
  "name": "slurm-cli",
  "contexts": [{"name": "syn", "source": "synthetic", "chunks": 4, "chunk_tokens": 1500},
               {"name": "ts", "model": "stories260K", "dataset": "text/tinystories/tinystories_val.txt", "count": 2,
                "tokens": 128, "chunk_tokens": 64, "continuation_tokens": 16}],
  "traces": [{"name": "c1", "inputs": ["constant:gbps=1"]}],
  "policies": ["quant8", "cachegen"],
  "slo_s": 1.0,
  "hardware": "a40_mistral-7b"
})";

class SlurmCli : public test_support::CliTest {
 protected:
  void SetUp() override {
    CliTest::SetUp();
    std::ofstream(dir_ / "sweep.json") << kConfig;
    fs::create_directories(dir_ / "bin");
  }
  // A fake `name` on PATH (the only thing there besides the shell's own tools).
  void fake(const std::string& name, const std::string& body) {
    const fs::path path = dir_ / "bin" / name;
    std::ofstream(path) << "#!/bin/sh\n" << body << "\n";
    ::chmod(path.c_str(), 0755);
  }
  Result slurm(const std::string& args) {
    return test_support::run_kvstream(dir_, "slurm " + args, "PATH='" + (dir_ / "bin").string() + ":/usr/bin:/bin'");
  }
};

TEST_F(SlurmCli, DryRunWritesTheThreeScriptsAndSubmitsNothing) {
  fake("sbatch", "echo called >> sbatch.calls; echo 1");
  const auto result = slurm("sweep.json --out out --tasks 4 --partition short --time 00:10:00 --sbatch-arg=--qos=low "
                            "--gpus-per-task 1 --dry-run");
  ASSERT_EQ(result.rc, 0) << result.err;
  EXPECT_FALSE(fs::exists(dir_ / "sbatch.calls"));
  const std::string profile = read_text(dir_ / "out/slurm/profile.sbatch"), grid = read_text(dir_ / "out/slurm/grid.sbatch"),
                    merge = read_text(dir_ / "out/slurm/merge.sbatch");
  for (const std::string* script : {&profile, &grid, &merge}) {
    EXPECT_NE(script->find("#SBATCH --partition=short"), std::string::npos) << *script;
    EXPECT_NE(script->find("#SBATCH --time=00:10:00"), std::string::npos) << *script;
    EXPECT_NE(script->find("#SBATCH --qos=low"), std::string::npos) << *script;
  }
  EXPECT_NE(profile.find("#SBATCH --gpus-per-task=1"), std::string::npos) << profile;
  EXPECT_EQ(grid.find("--gpus-per-task"), std::string::npos) << grid;
  EXPECT_NE(profile.find("--profiles-only"), std::string::npos) << profile;
  EXPECT_NE(grid.find("--shard \"$SLURM_ARRAY_TASK_ID\"/4"), std::string::npos) << grid;
  EXPECT_NE(merge.find("shards/3-of-4'"), std::string::npos) << merge;
  // One profiling config per measured context set, holding only it.
  const auto one = nlohmann::json::parse(read_text(dir_ / "out/slurm/profile-0.json"));
  ASSERT_EQ(one["contexts"].size(), 1u);
  EXPECT_EQ(one["contexts"][0]["name"], "ts");
  EXPECT_FALSE(fs::exists(dir_ / "out/slurm/profile-1.json"));
  // The sbatch commands it prints submit the chain as kvstream itself would (a fake sbatch records them).
  const std::string marker = "to submit by hand (bash):\n";
  const size_t by_hand = result.out.find(marker);
  ASSERT_NE(by_hand, std::string::npos) << result.out;
  fake("sbatch", "echo \"$*\" >> sbatch.calls; n=$(wc -l < sbatch.calls); echo $((100 + n))");
  const auto ran = common::run_process({"bash", "-c", "set -e; cd '" + dir_.string() + "'; PATH='" + (dir_ / "bin").string() +
                                                          ":'\"$PATH\"\n" + result.out.substr(by_hand + marker.size())});
  ASSERT_EQ(ran.exit_code, 0) << ran.output;
  EXPECT_EQ(read_text(dir_ / "sbatch.calls"),
            "--parsable --array=0-0 " + (dir_ / "out/slurm/profile.sbatch").string() + "\n" +
            "--parsable --array=0-3 --dependency=afterok:101 " + (dir_ / "out/slurm/grid.sbatch").string() + "\n" +
            "--parsable --dependency=afterok:102 " + (dir_ / "out/slurm/merge.sbatch").string() + "\n");
}

TEST_F(SlurmCli, SubmitsProfileGridAndMergeChainedByAfterok) {
  fake("sbatch", "echo \"$*\" >> sbatch.calls; n=$(wc -l < sbatch.calls); echo $((100 + n))");
  const auto result = slurm("sweep.json --out out --tasks 3");
  ASSERT_EQ(result.rc, 0) << result.err;
  const std::string calls = read_text(dir_ / "sbatch.calls");
  EXPECT_NE(calls.find("--parsable --array=0-0 " + (dir_ / "out/slurm/profile.sbatch").string()), std::string::npos) << calls;
  EXPECT_NE(calls.find("--array=0-2 --dependency=afterok:101"), std::string::npos) << calls;
  EXPECT_NE(calls.find("--dependency=afterok:102 " + (dir_ / "out/slurm/merge.sbatch").string()), std::string::npos) << calls;
  const auto jobs = nlohmann::json::parse(read_text(dir_ / "out/slurm/jobs.json"));
  EXPECT_EQ(jobs["profile"]["job"], "101");
  EXPECT_EQ(jobs["grid"]["job"], "102");
  EXPECT_EQ(jobs["merge"]["job"], "103");
  fake("squeue", "echo '102_1 RUNNING'; echo '102_2 PENDING'; echo '103 PENDING'");
  const auto status = slurm("--status out");
  ASSERT_EQ(status.rc, 0) << status.err;
  EXPECT_NE(status.out.find("0 of 3 shards complete; queued: 1 PENDING, 1 RUNNING"), std::string::npos) << status.out;
  EXPECT_NE(status.out.find("merge job 103: 1 PENDING"), std::string::npos) << status.out;
  // A failed grid task: the grid has left the queue, the merge waits for ever.
  fake("squeue", "echo '103 PENDING DependencyNeverSatisfied'");
  const auto failed = slurm("--status out");
  ASSERT_EQ(failed.rc, 0) << failed.err;
  EXPECT_NE(failed.out.find("shard 2: log " + (dir_ / "out/slurm/logs/grid-102_2.out").string()), std::string::npos)
      << failed.out;
  EXPECT_NE(failed.out.find("merge job 103: 1 PENDING (DependencyNeverSatisfied)"), std::string::npos) << failed.out;
}

TEST_F(SlurmCli, ErrorsNameWhatWentWrong) {
  // No sbatch on PATH.
  const auto missing = test_support::run_kvstream(dir_, "slurm sweep.json --out out", "PATH=/nonexistent");
  test_support::expect_failure(missing, 1, "sbatch is not on PATH");
  // A refused submission names the script and what sbatch said; what was queued before is named too.
  fake("sbatch", "case \"$*\" in *grid*) echo 'sbatch: error: invalid partition specified: nope' >&2; exit 1;; esac; echo 7");
  const auto refused = slurm("sweep.json --out out2 --partition nope");
  test_support::expect_failure(refused, 1, "sbatch refused " + (dir_ / "out2/slurm/grid.sbatch").string());
  EXPECT_NE(refused.err.find("invalid partition specified: nope"), std::string::npos) << refused.err;
  EXPECT_NE(refused.err.find("already queued: job 7 (scancel 7"), std::string::npos) << refused.err;
  EXPECT_EQ(nlohmann::json::parse(read_text(dir_ / "out2/slurm/jobs.json"))["profile"]["job"], "7");
  // Options, a config that does not parse, and --status with nothing submitted.
  test_support::expect_failure(slurm("sweep.json --tasks 0 --dry-run"), 2, "--tasks must be in 1..10000");
  test_support::expect_failure(slurm("sweep.json --sbatch-arg qos --dry-run"), 2, "is not one sbatch option");
  test_support::expect_failure(slurm("--dry-run"), 2, "give CONFIG.json, or --status DIR");
  std::ofstream(dir_ / "bad.json") << R"({"name": "x", "contexts": [], "polices": []})";
  test_support::expect_failure(slurm("bad.json --dry-run"), 1, "bad.json");
  test_support::expect_failure(slurm("--status nowhere"), 1, "nothing was submitted");
}

TEST_F(SlurmCli, StatusNeverHandsAJobIdToAShell) {
  // A result directory from elsewhere whose jobs.json holds a command instead of a job id.
  fake("squeue", "echo \"$@\" >> squeue.calls");
  fs::create_directories(dir_ / "shared/slurm");
  const auto status_of = [&](const std::string& jobs) {
    std::ofstream(dir_ / "shared/slurm/jobs.json") << jobs;
    return slurm("--status shared");
  };
  const auto hostile = status_of(R"({"submitted_at": "t", "shards": 1, "grid": {"job": "1;touch PWNED;echo"}})");
  test_support::expect_failure(hostile, 1, "$.grid.job: expected a Slurm job id (digits), got \"1;touch PWNED;echo\"");
  EXPECT_FALSE(fs::exists(dir_ / "PWNED"));
  EXPECT_FALSE(fs::exists(dir_ / "squeue.calls"));
  // Shard counts that used to loop for ever, and a file of another shape.
  test_support::expect_failure(status_of(R"({"submitted_at": "t", "shards": -1})"), 1, "$.shards: expected an integer >= 1");
  test_support::expect_failure(status_of(R"({"submitted_at": "t", "shards": 1e12})"), 1, "$.shards: expected an integer");
  test_support::expect_failure(status_of("[]"), 1, "jobs.json: $: expected an object");
  // Valid ids reach squeue as one argument each.
  const auto fine = status_of(R"({"submitted_at": "t", "shards": 2, "grid": {"job": "41"}, "merge": {"job": "42"}})");
  ASSERT_EQ(fine.rc, 0) << fine.err;
  EXPECT_EQ(read_text(dir_ / "squeue.calls"), "-h -r -o %i %T %r -j 41,42\n");
}

TEST_F(SlurmCli, SbatchLinesAreQuotedOrRefused) {
  // A result directory with a space, quotes, '#' and '%' in its path: quoted as sbatch reads it.
  const auto odd = slurm("sweep.json --out \"it's a \\\"dir\\\" #1 100%\" --tasks 2 --sbatch-arg '--comment=two words' --dry-run");
  ASSERT_EQ(odd.rc, 0) << odd.err;
  const fs::path out = dir_ / "it's a \"dir\" #1 100%";
  const std::string grid = read_text(out / "slurm/grid.sbatch");
  EXPECT_NE(grid.find("#SBATCH --output=\"" + (dir_ / "it's a \\\"dir\\\" #1 100%%").string() + "/slurm/logs/grid-%A_%a.out\"\n"),
            std::string::npos) << grid;
  EXPECT_NE(grid.find("#SBATCH --comment=\"two words\"\n"), std::string::npos) << grid;
  // A newline in any value that goes into an #SBATCH line would start a line of the job's script.
  for (const std::string flag : {"--partition", "--account", "--sbatch-arg=--qos"}) {
    const std::string value = flag.find('=') == std::string::npos ? " \"$(printf 'a\\nhostname')\"" : "=\"$(printf 'a\\nhostname')\"";
    test_support::expect_failure(slurm("sweep.json --out o2 --dry-run " + flag + value), 2, "control character");
  }
  test_support::expect_failure(slurm("sweep.json --out \"$(printf 'o\\nhostname')\" --dry-run"), 2,
                               "the result directory");
  test_support::expect_failure(slurm("sweep.json --out o3 --time \"$(printf '1\\n#SBATCH --x')\" --dry-run"), 2,
                               "is not a Slurm time limit");
  test_support::expect_failure(slurm("sweep.json --out o3 --time soon --dry-run"), 2, "is not a Slurm time limit");
  for (const char* dir : {"o2", "o3"}) EXPECT_FALSE(fs::exists(dir_ / dir / "slurm")) << dir;
  ASSERT_EQ(slurm("sweep.json --out o4 --time 2-12:00 --dry-run").rc, 0);
}

}  // namespace
}  // namespace kvstream
