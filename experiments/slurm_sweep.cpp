#include "experiments/slurm_sweep.h"

#include <stdexcept>

#include "common/atomic_file.h"
#include "common/json_reader.h"
#include "experiments/experiment_config.h"

namespace kvstream::experiments {
namespace {

namespace fs = std::filesystem;

constexpr size_t kMaxTasks = 10'000;

// The #SBATCH header of a job: its name, log file, resources and the user's extra lines.
std::string header(const SlurmPlan& plan, const SlurmOptions& o, const std::string& stage, bool array, int gpus) {
  const std::string log = (plan.slurm_dir() / "logs" / (stage + (array ? "-%A_%a.out" : "-%j.out"))).string();
  std::string h = "#!/bin/bash\n";
  h.append("#SBATCH --job-name=kvstream-").append(plan.name).append("-").append(stage).append("\n");
  h.append("#SBATCH --output=").append(log).append("\n");
  h.append("#SBATCH --ntasks=1\n#SBATCH --cpus-per-task=").append(std::to_string(o.cpus_per_task)).append("\n");
  if (gpus > 0) h.append("#SBATCH --gpus-per-task=").append(std::to_string(gpus)).append("\n");
  if (!o.partition.empty()) h.append("#SBATCH --partition=").append(o.partition).append("\n");
  if (!o.account.empty()) h.append("#SBATCH --account=").append(o.account).append("\n");
  if (!o.time_limit.empty()) h.append("#SBATCH --time=").append(o.time_limit).append("\n");
  for (const auto& arg : o.sbatch_args) h.append("#SBATCH ").append(arg).append("\n");
  h.append("set -euo pipefail\ncd ").append(shell_quoted(o.work_dir.string())).append("\n");
  return h;
}

}  // namespace

std::string shell_quoted(const std::string& word) {
  std::string out = "'";
  for (const char c : word) {
    if (c == '\'') out += "'\\''";
    else out += c;
  }
  return out + "'";
}

bool shard_complete(const fs::path& dir) {
  std::error_code ec;
  if (!fs::is_regular_file(dir / "manifest.json", ec)) return false;
  try {
    return common::read_json_file((dir / "manifest.json").string()).value("state", std::string()) == "complete";
  } catch (const std::exception&) {
    return false;  // unreadable: the task runs again (--resume keeps what is there)
  }
}

bool holds_merged_results(const fs::path& out) {
  std::error_code ec;
  return fs::is_regular_file(out / "runs.jsonl", ec) && fs::file_size(out / "runs.jsonl", ec) > 0;
}

std::string SlurmPlan::grid_array() const {
  std::string ids;
  const bool whole = shards_to_run.size() == shards;
  if (whole) return "0-" + std::to_string(shards - 1);
  for (size_t i = 0; i < shards_to_run.size(); ++i) ids.append(i ? "," : "").append(std::to_string(shards_to_run[i]));
  return ids;
}

SlurmPlan plan_slurm_sweep(const fs::path& config_path, const fs::path& out, const SlurmOptions& o) {
  if (o.tasks == 0 || o.tasks > kMaxTasks)
    throw std::invalid_argument("--tasks must be in 1.." + std::to_string(kMaxTasks) + ", got " + std::to_string(o.tasks));
  if (o.gpus_per_task < 0) throw std::invalid_argument("--gpus-per-task must be >= 0");
  if (o.cpus_per_task < 1 || o.cpus_per_task > 256) throw std::invalid_argument("--cpus-per-task must be in 1..256");
  for (const auto& arg : o.sbatch_args)
    if (arg.find('\n') != std::string::npos || arg.rfind("--", 0) != 0)
      throw std::invalid_argument("--sbatch-arg \"" + arg + "\" is not one sbatch option (e.g. --qos=short)");
  const ExperimentConfig config = read_experiment_config(config_path.string());  // checked whole
  const nlohmann::json raw = common::read_json_file(config_path.string());
  SlurmPlan plan;
  plan.out = fs::absolute(out.empty() ? fs::path("results") / config.name : out);
  plan.name = config.name;
  plan.shards = o.tasks;
  const auto& contexts = raw.at("contexts");
  for (size_t i = 0; i < contexts.size(); ++i)
    if (contexts[i].value("source", std::string("model")) == "model") {
      plan.model_entries.push_back(i);
      plan.model_sets.push_back(contexts[i].value("name", std::string()));
    }
  plan.merged = holds_merged_results(plan.out);
  for (size_t i = 0; i < plan.shards && !plan.merged; ++i)
    if (!shard_complete(plan.shard_dir(i))) plan.shards_to_run.push_back(i);

  const fs::path cache = o.profile_cache.empty() ? plan.out / "profile-cache" : fs::absolute(o.profile_cache);
  const std::string kvstream = shell_quoted(o.kvstream.string()), config_copy = shell_quoted((plan.slurm_dir() / "config.json").string());
  const std::string cache_flag = " --profile-cache " + shell_quoted(cache.string());
  if (!plan.model_sets.empty())
    plan.profile_script = header(plan, o, "profile", true, o.gpus_per_task) + "# task k: context set k of the config\n" +
                          kvstream + " run " +
                          shell_quoted((plan.slurm_dir() / "profile-").string()) + "\"$SLURM_ARRAY_TASK_ID\".json --profiles-only" +
                          cache_flag + " --overwrite --no-figures --out " +
                          shell_quoted((plan.slurm_dir() / "profiled" / "").string()) + "\"$SLURM_ARRAY_TASK_ID\"\n";
  const std::string n = std::to_string(plan.shards);
  plan.grid_script = header(plan, o, "grid", true, 0) + "# task i: shard i of " + n + "\n" + kvstream + " run " +
                     config_copy + " --shard \"$SLURM_ARRAY_TASK_ID\"/" + n + " --out " +
                     shell_quoted((plan.out / "shards" / "").string()) + "\"$SLURM_ARRAY_TASK_ID\"-of-" + n + cache_flag +
                     " --resume --no-figures --jobs " + std::to_string(o.cpus_per_task) + "\n";
  std::string shard_dirs;
  for (size_t i = 0; i < plan.shards; ++i) shard_dirs.append(" ").append(shell_quoted(plan.shard_dir(i).string()));
  plan.merge_script = header(plan, o, "merge", false, 0);
  plan.merge_script.append(kvstream).append(" merge").append(shard_dirs).append(" --out ").append(shell_quoted(plan.out.string()));
  if (!o.figures) plan.merge_script.append(" --no-figures");
  plan.merge_script.append("\n");
  return plan;
}

void write_slurm_files(const SlurmPlan& plan, const fs::path& config_path) {
  fs::create_directories(plan.slurm_dir() / "logs");
  const nlohmann::json config = common::read_json_file(config_path.string());
  const auto write_json = [](const fs::path& path, const nlohmann::json& json) {
    common::write_file_atomically(path, [&json](std::ostream& s) { s << json.dump(2) << "\n"; });
  };
  write_json(plan.slurm_dir() / "config.json", config);
  // profile-<k>.json: the config with only the k-th measured "contexts" entry (the rest unchanged: the
  // profiles are cached by what they measure, not by the config).
  for (size_t k = 0; k < plan.model_entries.size(); ++k) {
    nlohmann::json one = config;
    one["contexts"] = nlohmann::json::array({config.at("contexts").at(plan.model_entries[k])});
    write_json(plan.slurm_dir() / ("profile-" + std::to_string(k) + ".json"), one);
  }
  const auto write_script = [](const fs::path& path, const std::string& text) {
    common::write_file_atomically(path, [&text](std::ostream& s) { s << text; });
  };
  if (!plan.profile_script.empty()) write_script(plan.slurm_dir() / "profile.sbatch", plan.profile_script);
  write_script(plan.slurm_dir() / "grid.sbatch", plan.grid_script);
  write_script(plan.slurm_dir() / "merge.sbatch", plan.merge_script);
}

}  // namespace kvstream::experiments
