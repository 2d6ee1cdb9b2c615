// `kvstream slurm CONFIG --out DIR`: a sweep as Slurm jobs (experiments/slurm_sweep.h): writes the
// sbatch scripts into DIR/slurm/ and submits them chained by afterok dependencies, recording the job
// ids in DIR/slurm/jobs.json; `--status DIR` reports on them. Submitting again runs only what is
// missing.
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "cli/command.h"
#include "common/atomic_file.h"
#include "common/process.h"
#include "common/utc_time.h"
#include "experiments/slurm_sweep.h"

namespace kvstream::cli {
namespace {

namespace fs = std::filesystem;

struct Options {
  std::string config_path, out, status_dir;
  experiments::SlurmOptions slurm;
  bool dry_run = false;
};

std::optional<Options> parse(const std::vector<std::string>& args) {
  Options o;
  experiments::SlurmOptions& s = o.slurm;
  std::string cache;
  bool no_figures = false;
  po::options_description options("options");
  options.add_options()
    ("config", po::value(&o.config_path), "experiment config JSON (experiments/SCHEMA.md)")
    ("out", po::value(&o.out), "result directory (default results/<name>); the scripts go to DIR/slurm/")
    ("tasks", po::value(&s.tasks)->default_value(8), "grid shards, one array task each (1..10000)")
    ("partition", po::value(&s.partition), "sbatch --partition")
    ("account", po::value(&s.account), "sbatch --account")
    ("time", po::value(&s.time_limit), "sbatch --time of every job (e.g. 01:00:00)")
    ("gpus-per-task", po::value(&s.gpus_per_task)->default_value(0), "GPUs of each profiling task (model prefill)")
    ("cpus-per-task", po::value(&s.cpus_per_task)->default_value(1), "CPUs of every task; the grid tasks' --jobs")
    ("sbatch-arg", po::value(&s.sbatch_args)->multitoken(), "an extra sbatch option for every job, e.g. --qos=short")
    ("profile-cache", po::value(&cache), "profile cache the jobs share (default DIR/profile-cache)")
    ("no-figures", po::bool_switch(&no_figures), "the merge job draws no figures")
    ("dry-run", po::bool_switch(&o.dry_run), "write the scripts, submit nothing, and print the sbatch commands "
                                             "(with --array and --dependency) that would")
    ("status", po::value(&o.status_dir), "report on the jobs submitted for DIR, and exit");
  po::positional_options_description positional;
  positional.add("config", 1);
  po::variables_map vm;
  if (!parse_or_help(args,
                     "usage: kvstream slurm CONFIG.json [--out DIR] [--tasks N] [--partition P] [--account A]\n"
                     "                      [--time T] [--gpus-per-task G] [--cpus-per-task C] [--sbatch-arg OPT ...]\n"
                     "                      [--profile-cache DIR] [--no-figures] [--dry-run]\n"
                     "       kvstream slurm --status DIR\n\n"
                     "Runs a sweep on a Slurm cluster as three jobs, each waiting for the one before\n"
                     "(afterok): a profiling array (a task per context set measured on a model, filling the\n"
                     "shared profile cache), the grid array (a task per shard, into DIR/shards/<i>-of-<N>),\n"
                     "and a merge job that writes DIR as a one-machine run would. The scripts are written to\n"
                     "DIR/slurm/ (profile.sbatch, grid.sbatch, merge.sbatch; logs in DIR/slurm/logs/) and\n"
                     "submitted with sbatch; the job ids go to DIR/slurm/jobs.json. Submit again after a\n"
                     "failure: finished shards are left out. --status DIR says what is done, running, failed.\n"
                     "sbatch and squeue run without a shell; values in #SBATCH lines are quoted as sbatch reads\n"
                     "them, and one with a control character (a newline) is refused.",
                     options, vm, &positional))
    return std::nullopt;
  if (o.status_dir.empty() && o.config_path.empty()) throw po::error("give CONFIG.json, or --status DIR");
  if (!o.status_dir.empty() && !o.config_path.empty()) throw po::error("--status DIR takes no config");
  s.profile_cache = cache;
  s.figures = !no_figures;
  return o;
}

// The full path of `program` on PATH, or empty.
fs::path on_path(const std::string& program) {
  const char* path = std::getenv("PATH");
  std::stringstream dirs(path ? path : "");
  std::string dir;
  while (std::getline(dirs, dir, ':'))
    if (!dir.empty() && ::access((fs::path(dir) / program).c_str(), X_OK) == 0) return fs::path(dir) / program;
  return {};
}

// `text` as one word for a POSIX shell: as it is when it holds only safe characters, else in single
// quotes.
std::string shell_quoted(const std::string& text) {
  if (!text.empty() && text.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-./=:,+@%") ==
                           std::string::npos)
    return text;
  std::string quoted = "'";
  for (const char c : text) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return quoted + "'";
}

// sbatch --parsable [extra...] SCRIPT (no shell: common/process.h): the job id, or an error naming the
// script and what sbatch said.
std::string submit(const fs::path& sbatch, const fs::path& script, const std::vector<std::string>& extra) {
  std::vector<std::string> command = {sbatch.string(), "--parsable"};
  command.insert(command.end(), extra.begin(), extra.end());
  command.push_back(script.string());
  const auto [rc, output] = common::run_process(command);
  const std::string id = output.substr(0, output.find_first_of(";\n"));
  if (rc != 0 || id.empty() || id.find_first_not_of("0123456789") != std::string::npos)
    throw std::runtime_error("sbatch refused " + script.string() + " (exit " + std::to_string(rc) + "): " +
                             (output.empty() ? "no output" : output));
  return id;
}

int submit_sweep(const Options& o) {
  std::error_code ec;
  if (!fs::is_regular_file(o.config_path, ec)) throw std::runtime_error(o.config_path + ": no such config file");
  experiments::SlurmOptions s = o.slurm;
  s.kvstream = fs::read_symlink("/proc/self/exe", ec);
  if (ec) throw std::runtime_error("cannot find the kvstream binary (/proc/self/exe): " + ec.message());
  s.work_dir = fs::current_path();
  experiments::SlurmPlan plan;
  try {
    plan = experiments::plan_slurm_sweep(o.config_path, o.out, s);
  } catch (const std::invalid_argument& e) {
    throw po::error(e.what());
  }
  if (plan.merged) {
    std::cout << plan.out.string() << " already holds the merged results: nothing to submit\n";
    return 0;
  }
  const fs::path sbatch = o.dry_run ? fs::path() : on_path("sbatch");
  if (!o.dry_run && sbatch.empty())
    throw std::runtime_error("sbatch is not on PATH: is Slurm installed here? (--dry-run writes the scripts without submitting)");
  experiments::write_slurm_files(plan, o.config_path);
  const fs::path dir = plan.slurm_dir();
  std::cout << "scripts in " << dir.string() << ": ";
  if (!plan.profile_script.empty()) std::cout << "profile.sbatch (context sets: " << plan.model_sets.size() << "), ";
  std::cout << "grid.sbatch (shards " << (plan.shards_to_run.empty() ? "none" : plan.grid_array()) << " of " << plan.shards
            << "), merge.sbatch\n";
  // The jobs in order, each waiting for the one before.
  struct Stage {
    const char* name;
    std::string array;  // --array=..., or empty
  };
  std::vector<Stage> stages;
  if (!plan.profile_script.empty()) stages.push_back({"profile", "--array=0-" + std::to_string(plan.model_sets.size() - 1)});
  if (!plan.shards_to_run.empty()) stages.push_back({"grid", "--array=" + plan.grid_array()});
  stages.push_back({"merge", ""});
  if (o.dry_run) {
    std::cout << "--dry-run: nothing submitted; to submit by hand (bash):\n";
    for (size_t i = 0; i < stages.size(); ++i) {
      std::cout << stages[i].name << "=$(sbatch --parsable";
      if (!stages[i].array.empty()) std::cout << " " << stages[i].array;
      if (i > 0) std::cout << " --dependency=afterok:$" << stages[i - 1].name;
      std::cout << " " << shell_quoted((dir / (std::string(stages[i].name) + ".sbatch")).string()) << ")\n";
    }
    return 0;
  }
  // jobs.json is rewritten after every submission, so that --status and the user see what is queued
  // even when a later submission is refused.
  experiments::SlurmJobs jobs{common::utc_now(), plan.shards, plan.out.string(), "", "", ""};
  std::vector<std::string> submitted;
  const auto submit_stage = [&](const char* stage, std::string& job, const std::vector<std::string>& extra) {
    try {
      job = submit(sbatch, dir / (std::string(stage) + ".sbatch"), extra);
    } catch (const std::runtime_error& e) {
      std::string queued;
      for (const auto& id : submitted) queued.append(queued.empty() ? "" : " ").append(id);
      throw std::runtime_error(std::string(e.what()) +
                               (queued.empty() ? "" : "; already queued: job " + queued + " (scancel " + queued +
                                                          " to cancel, or fix the options and submit again)"));
    }
    submitted.push_back(job);
    const nlohmann::json text = experiments::to_json(jobs);
    common::write_file_atomically(dir / "jobs.json", [&text](std::ostream& file) { file << text.dump(2) << "\n"; });
    return job;
  };
  std::string previous;
  for (const Stage& stage : stages) {
    std::vector<std::string> extra;
    if (!stage.array.empty()) extra.push_back(stage.array);
    if (!previous.empty()) extra.push_back("--dependency=afterok:" + previous);
    const std::string name = stage.name;
    std::string& job = name == "profile" ? jobs.profile : name == "grid" ? jobs.grid : jobs.merge;
    previous = submit_stage(stage.name, job, extra);
    std::cout << name << ": job " << previous << (stage.array.empty() ? "" : " (" + stage.array.substr(2) + ")");
    std::cout << (name == "merge" ? "; then " + plan.out.string() + " holds the results (kvstream slurm --status " +
                                        plan.out.string() + ")" : "") << "\n";
  }
  return 0;
}

// Job (or array task, "123_4") -> state, from squeue (empty: not on PATH); empty when it says nothing.
std::map<std::string, std::string> queued_states(const fs::path& squeue, const experiments::SlurmJobs& jobs) {
  std::map<std::string, std::string> states;
  const std::vector<std::string> command = squeue.empty() ? std::vector<std::string>() : experiments::squeue_command(squeue.string(), jobs);
  if (command.empty()) return states;
  const auto [rc, output] = common::run_process(command);
  if (rc != 0) return states;
  std::stringstream lines(output);
  for (std::string line; std::getline(lines, line);) {
    std::stringstream fields(line);
    std::string id, state, reason;
    if (!(fields >> id >> state)) continue;
    fields >> reason;  // why a job waits, e.g. DependencyNeverSatisfied after a failed task
    states[id] = reason.empty() || reason == "None" ? state : state + " (" + reason + ")";
  }
  return states;
}

int status(const Options& o) {
  const fs::path out = fs::absolute(o.status_dir), jobs_file = out / "slurm" / "jobs.json";
  std::error_code ec;
  if (!fs::is_regular_file(jobs_file, ec))
    throw std::runtime_error(jobs_file.string() + " does not exist: nothing was submitted for " + out.string());
  const experiments::SlurmJobs jobs = experiments::read_slurm_jobs(jobs_file);
  const fs::path squeue = on_path("squeue");
  const auto states = queued_states(squeue, jobs);
  const auto queued = [&states](const std::string& prefix) {
    std::map<std::string, int> count;
    for (const auto& [id, state] : states)
      if (id == prefix || id.rfind(prefix + "_", 0) == 0) ++count[state];
    std::string text;
    for (const auto& [state, n] : count) text.append(text.empty() ? "" : ", ").append(std::to_string(n) + " " + state);
    return text;
  };
  const size_t shards = jobs.shards;
  std::cout << "submitted " << jobs.submitted_at << ", " << shards << " shards"
            << (squeue.empty() ? " (squeue not on PATH: only what " + out.string() + " holds)" : "") << "\n";
  if (!jobs.profile.empty()) {
    const std::string q = queued(jobs.profile);
    std::cout << "profile job " << jobs.profile << ": " << (q.empty() ? "not queued (ended)" : q) << "\n";
  }
  const bool merged = experiments::holds_merged_results(out);
  size_t complete = 0;
  std::vector<size_t> missing;
  for (size_t i = 0; i < shards; ++i)
    experiments::shard_complete(experiments::shard_result_dir(out, {i, shards})) ? void(++complete) : missing.push_back(i);
  const std::string grid = jobs.grid, grid_queue = grid.empty() ? "" : queued(grid);
  std::cout << "grid" << (grid.empty() ? "" : " job " + grid) << ": " << complete << " of " << shards << " shards complete"
            << (grid_queue.empty() ? "" : "; queued: " + grid_queue) << "\n";
  if (!missing.empty() && grid_queue.empty() && !merged) {
    std::cout << "  shards not complete and no longer queued (failed or cancelled); submit again to run only them:\n";
    for (const size_t i : missing)
      std::cout << "    shard " << i << ": log " << (out / "slurm" / "logs").string() << "/grid-" << (grid.empty() ? "*" : grid)
                << "_" << i << ".out\n";
  }
  const std::string merge_queue = jobs.merge.empty() ? "" : queued(jobs.merge);
  std::cout << "merge job " << jobs.merge << ": "
            << (merged ? "done: " + out.string() + " holds the results"
                       : !merge_queue.empty() ? merge_queue
                                              : "not queued and no results: see " + (out / "slurm" / "logs").string() +
                                                    "/merge-" + jobs.merge + ".out")
            << "\n";
  return 0;
}

int run(const Options& o) { return o.status_dir.empty() ? submit_sweep(o) : status(o); }

}  // namespace

int slurm_main(const std::vector<std::string>& args) { return parse_and_run<Options>(args, parse, run); }

}  // namespace kvstream::cli
