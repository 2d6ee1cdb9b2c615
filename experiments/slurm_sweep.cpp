#include "experiments/slurm_sweep.h"

#include <cstdio>
#include <regex>
#include <stdexcept>

#include "common/atomic_file.h"
#include "common/json_reader.h"
#include "experiments/experiment_config.h"
#include "experiments/run_log_file.h"

namespace kvstream::experiments {
namespace {

namespace fs = std::filesystem;

constexpr size_t kMaxTasks = 10'000;

bool is_control(char c) { return static_cast<unsigned char>(c) < 0x20 || c == 0x7f; }

// `value` for an error message: control characters as \n, \t or \xNN, so that the message is one line
// and a NUL does not end it.
std::string printable(const std::string& value) {
  std::string out;
  for (const char c : value) {
    if (c == '\n') out += "\\n";
    else if (c == '\t') out += "\\t";
    else if (is_control(c)) {
      char hex[8];
      std::snprintf(hex, sizeof hex, "\\x%02x", static_cast<unsigned char>(c));
      out += hex;
    } else out += c;
  }
  return out;
}

// What an #SBATCH line may hold unquoted.
bool plain_sbatch_word(const std::string& word) {
  return !word.empty() && word.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-.,:/+=@%") ==
                              std::string::npos;
}

// The #SBATCH header of a job: its name, log file, resources and the user's extra lines.
std::string header(const SlurmPlan& plan, const SlurmOptions& o, const std::string& stage, bool array, int gpus) {
  const fs::path log = plan.slurm_dir() / "logs" / (stage + (array ? "-%A_%a.out" : "-%j.out"));
  std::string h = "#!/bin/bash\n";
  h.append("#SBATCH --job-name=").append(sbatch_quoted("kvstream-" + plan.name + "-" + stage, "the job name")).append("\n");
  h.append("#SBATCH --output=").append(sbatch_output_pattern(log)).append("\n");
  h.append("#SBATCH --ntasks=1\n#SBATCH --cpus-per-task=").append(std::to_string(o.cpus_per_task)).append("\n");
  if (gpus > 0) h.append("#SBATCH --gpus-per-task=").append(std::to_string(gpus)).append("\n");
  if (!o.partition.empty()) h.append("#SBATCH --partition=").append(sbatch_quoted(o.partition, "--partition")).append("\n");
  if (!o.account.empty()) h.append("#SBATCH --account=").append(sbatch_quoted(o.account, "--account")).append("\n");
  if (!o.time_limit.empty()) h.append("#SBATCH --time=").append(sbatch_quoted(o.time_limit, "--time")).append("\n");
  for (const auto& arg : o.sbatch_args) h.append("#SBATCH ").append(sbatch_option(arg)).append("\n");
  h.append("set -euo pipefail\ncd ").append(shell_quoted(o.work_dir.string())).append("\n");
  return h;
}

// Slurm's time formats (sbatch --time): minutes, minutes:seconds, hours:minutes:seconds, days-hours,
// days-hours:minutes, days-hours:minutes:seconds, or unlimited.
bool is_time_limit(const std::string& t) {
  static const std::regex format(R"((\d+(:\d+){0,2})|(\d+-\d+(:\d+){0,2})|UNLIMITED|unlimited|INFINITE|infinite)");
  return std::regex_match(t, format);
}

}  // namespace

std::string sbatch_quoted(const std::string& value, const std::string& what) {
  for (const char c : value)
    if (is_control(c))
      throw std::invalid_argument(what + " \"" + printable(value) + "\" holds a control character (a newline would end the #SBATCH " +
                                  "line and start a line of the job's shell script): it cannot go into a job script");
  if (plain_sbatch_word(value)) return value;
  std::string out = "\"";
  for (const char c : value) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

std::string sbatch_output_pattern(const fs::path& log) {
  std::string pattern;
  const std::string path = log.string();
  const size_t file = path.rfind('/') + 1;  // the folder's % are literal; the file name's are Slurm's (%A, %a, %j)
  for (size_t i = 0; i < path.size(); ++i) pattern.append(i < file && path[i] == '%' ? "%%" : std::string(1, path[i]));
  return sbatch_quoted(pattern, "the log path " + printable(path));
}

std::string sbatch_option(const std::string& arg) {
  static const std::regex option(R"(--[A-Za-z][A-Za-z0-9-]*)");
  const size_t eq = arg.find('=');
  if (!std::regex_match(arg.substr(0, eq), option))
    throw std::invalid_argument("--sbatch-arg \"" + printable(arg) + "\" is not one sbatch option (--NAME or --NAME=VALUE, e.g. --qos=short)");
  return eq == std::string::npos ? arg : arg.substr(0, eq + 1) + sbatch_quoted(arg.substr(eq + 1), "--sbatch-arg " + arg.substr(0, eq));
}

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
  for (const auto format : {RunLogFormat::kPlain, RunLogFormat::kZstd})
    if (fs::is_regular_file(run_log_path(out, format), ec) && fs::file_size(run_log_path(out, format), ec) > 0) return true;
  return false;
}

nlohmann::json to_json(const SlurmJobs& jobs) {
  nlohmann::json out = {{"submitted_at", jobs.submitted_at}, {"shards", jobs.shards}, {"out", jobs.out}};
  for (const auto& [stage, id] : {std::pair{"profile", &jobs.profile}, {"grid", &jobs.grid}, {"merge", &jobs.merge}})
    if (!id->empty()) out[stage] = {{"job", *id}};
  return out;
}

SlurmJobs parse_slurm_jobs(const nlohmann::json& json, const std::string& where) {
  const common::JsonNode root(json, where);
  if (!json.is_object()) root.fail("expected an object (what kvstream slurm writes), got " + std::string(json.type_name()));
  root.only_keys({"submitted_at", "shards", "out", "profile", "grid", "merge"});
  SlurmJobs jobs;
  jobs.submitted_at = root.at("submitted_at").string();
  const common::JsonNode shards = root.at("shards");
  if (shards.integer_at_least(1) > int64_t(kMaxTasks)) shards.fail("expected at most " + std::to_string(kMaxTasks) + " shards");
  jobs.shards = size_t(shards.value().get<int64_t>());
  jobs.out = root.has("out") ? root.at("out").string() : "";
  for (const auto& [stage, id] : {std::pair{"profile", &jobs.profile}, {"grid", &jobs.grid}, {"merge", &jobs.merge}}) {
    if (!root.has(stage)) continue;
    const common::JsonNode job = root.at(stage).at("job");
    *id = job.string();
    // Slurm's job ids are numbers; anything else in an argument to squeue is refused here.
    if (id->empty() || id->size() > 19 || id->find_first_not_of("0123456789") != std::string::npos)
      job.fail("expected a Slurm job id (digits), got \"" + *id + "\"");
  }
  return jobs;
}

SlurmJobs read_slurm_jobs(const fs::path& path) {
  return parse_slurm_jobs(common::read_json_file(path.string()), path.string());
}

std::vector<std::string> squeue_command(const std::string& squeue, const SlurmJobs& jobs) {
  std::string ids;
  for (const std::string* id : {&jobs.profile, &jobs.grid, &jobs.merge})
    if (!id->empty()) ids.append(ids.empty() ? "" : ",").append(*id);
  if (ids.empty()) return {};
  return {squeue, "-h", "-r", "-o", "%i %T %r", "-j", ids};
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
  // Every value that goes into an #SBATCH line, checked before anything is written.
  for (const auto& arg : o.sbatch_args) sbatch_option(arg);
  if (!o.partition.empty()) sbatch_quoted(o.partition, "--partition");
  if (!o.account.empty()) sbatch_quoted(o.account, "--account");
  if (!o.time_limit.empty() && !is_time_limit(o.time_limit))
    throw std::invalid_argument("--time \"" + printable(o.time_limit) + "\" is not a Slurm time limit (MINUTES, HH:MM:SS, " +
                                "DAYS-HH[:MM[:SS]] or UNLIMITED)");
  const ExperimentConfig config = read_experiment_config(config_path.string());  // checked whole
  const nlohmann::json raw = common::read_json_file(config_path.string());
  SlurmPlan plan;
  plan.out = fs::absolute(out.empty() ? fs::path("results") / config.name : out);
  sbatch_quoted(plan.out.string(), "the result directory");  // its logs' path goes into #SBATCH --output
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
