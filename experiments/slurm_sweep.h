// A sweep as Slurm jobs (`kvstream slurm`): the plan and the sbatch scripts, written under DIR/slurm/.
//   profile  an array with a task per context set measured on a model: `kvstream run --profiles-only`
//            on a copy of the config holding only that set, into the shared profile cache (each set's
//            profiles are their own cache files, written atomically);
//   grid     an array with a task per shard, afterok on profile: `kvstream run --shard i/N --resume`
//            into DIR/shards/<i>-of-<N>, reading the cache;
//   merge    one job, afterok on grid: `kvstream merge DIR/shards/*-of-<N> --out DIR`, which writes
//            what a one-machine run writes (results_merge.h).
// Planning again after a partial failure leaves out what is done: finished shards (their manifest
// says "complete"), and everything once DIR holds merged results. Profiling tasks always run again;
// the profile cache makes a finished one cheap.
#pragma once
#include <cstddef>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "experiments/slurm_array.h"

namespace kvstream::experiments {

struct SlurmOptions {
  size_t tasks = 8;  // grid shards (a shard with no run finishes at once)
  std::string partition, account, time_limit;
  int gpus_per_task = 0;  // for the profiling tasks (model prefill)
  int cpus_per_task = 1;  // also the grid tasks' --jobs
  std::vector<std::string> sbatch_args;  // extra #SBATCH lines, e.g. "--qos=short"
  std::filesystem::path profile_cache;   // empty: DIR/profile-cache
  bool figures = true;                   // the merge job draws them
  std::filesystem::path kvstream;        // the binary the jobs run (absolute)
  std::filesystem::path work_dir;        // where the jobs run (absolute): relative paths in the config resolve there
};

struct SlurmPlan {
  std::filesystem::path out;           // DIR (absolute)
  std::string name;                    // the config's name
  size_t shards = 0;
  std::vector<size_t> model_entries;   // the config's "contexts" entries measured on a model: profile task k runs entry k
  std::vector<std::string> model_sets; // their names
  std::vector<size_t> shards_to_run;   // unfinished shards, ascending
  bool merged = false;                 // DIR holds the merged results: nothing to submit
  std::string profile_script, grid_script, merge_script;  // sbatch scripts (profile empty without model sets)

  std::filesystem::path slurm_dir() const { return out / "slurm"; }
  std::filesystem::path shard_dir(size_t i) const { return shard_result_dir(out, Shard{i, shards}); }
  // "0-3" or "1,4": the grid array's ids.
  std::string grid_array() const;
};

// Reads and checks the config (its errors name the file and JSON path) and plans; an empty `out` is
// results/<name>. Throws std::invalid_argument for bad options (0 or more than 10,000 tasks, a
// negative GPU count).
SlurmPlan plan_slurm_sweep(const std::filesystem::path& config_path, const std::filesystem::path& out,
                           const SlurmOptions& options);

// Writes DIR/slurm/: config.json (the config the jobs run), profile-<k>.json, and the three scripts,
// each file atomically. The shards' and the merge's own files are the runner's.
void write_slurm_files(const SlurmPlan& plan, const std::filesystem::path& config_path);

// What `kvstream slurm` and its --status read back from DIR: whether a shard's result directory is
// finished (its manifest says "complete"), and whether DIR holds the merged results (a runs.jsonl).
bool shard_complete(const std::filesystem::path& shard_dir);
bool holds_merged_results(const std::filesystem::path& out);

// A word for a shell command line: single-quoted, quotes inside escaped.
std::string shell_quoted(const std::string& word);

// A value for an #SBATCH line as sbatch 22.05 reads one (measured on the real sbatch, not a shell:
// whitespace ends a word even after a backslash, an unquoted '#' starts a comment, double quotes
// group and take \" and \\ inside): as is when it holds only [A-Za-z0-9_-.,:/+=@%], else in double
// quotes with '"' and '\' escaped. A control character (a newline would end the line and start a
// line of the job's shell script) throws std::invalid_argument naming `what`.
std::string sbatch_quoted(const std::string& value, const std::string& what);
// A log file for #SBATCH --output: its folder's '%' doubled (Slurm expands %j, %A, ... in the
// pattern), the file name's patterns kept, then sbatch_quoted.
std::string sbatch_output_pattern(const std::filesystem::path& log);
// One --sbatch-arg as an #SBATCH line's option: --NAME or --NAME=VALUE with the value
// sbatch_quoted; anything else throws std::invalid_argument.
std::string sbatch_option(const std::string& arg);

// DIR/slurm/jobs.json: what was submitted for DIR, rewritten after every submission. --status reads
// it from directories that may come from elsewhere (docs/THREAT_MODEL.md), so every field is checked.
struct SlurmJobs {
  std::string submitted_at;
  size_t shards = 0;                 // 1..10,000
  std::string out;                   // DIR when submitted (informative)
  std::string profile, grid, merge;  // job ids, digits only; empty: not submitted
};
nlohmann::json to_json(const SlurmJobs& jobs);
// Throws common::JsonError naming `where` and the JSON path of the first bad field.
SlurmJobs parse_slurm_jobs(const nlohmann::json& json, const std::string& where);
SlurmJobs read_slurm_jobs(const std::filesystem::path& path);
// The squeue command asking for every task of the jobs, as an argument vector (common/process.h):
// squeue -h -r -o "%i %T %r" -j ID[,ID...]; empty when nothing was submitted.
std::vector<std::string> squeue_command(const std::string& squeue, const SlurmJobs& jobs);

}  // namespace kvstream::experiments
