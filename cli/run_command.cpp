// `kvstream run CONFIG.json`: an experiment sweep (experiments/SCHEMA.md) into results/<name>/.
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <optional>
#include <iostream>

#include "cli/command.h"
#include "cli/model_backend.h"
#include "experiments/experiment_runner.h"
#include "experiments/slurm_array.h"

namespace kvstream::cli {
namespace {

constexpr int kMaxJobs = 256;  // threads; thousands failed to start after the runs

struct Options {
  std::string config_path;
  experiments::RunnerOptions runner;
  bool shard_given = false;  // --shard on the command line: a Slurm array task's shard is not used
};

std::optional<Options> parse(const std::vector<std::string>& args) {
  Options o;
  experiments::RunnerOptions& r = o.runner;
  std::string out, shard, cache;
  bool no_figures = false;
  po::options_description options("options");
  options.add_options()
    ("config", po::value(&o.config_path)->required(), "experiment config JSON (experiments/SCHEMA.md)")
    ("out", po::value(&out), "result directory (default results/<name>)")
    ("jobs,j", po::value(&r.jobs)->default_value(1), "simulation threads (1..256)")
    ("resume", po::bool_switch(&r.resume), "continue an interrupted run in --out: finished runs are kept, none repeated")
    ("overwrite", po::bool_switch(&r.overwrite), "replace the results in --out instead of refusing to touch them")
    ("shard", po::value(&shard)->default_value("0/1"), "run only shard i of N (runs with index mod N = i), 0 <= i < N")
    ("profile-cache", po::value(&cache), "context-profile cache directory (default $KVSTREAM_PROFILE_CACHE or ~/.cache/kvstream/profiles)")
    ("profiles-only", po::bool_switch(&r.profiles_only), "stop after profiling the contexts (fills the cache for shards)")
    ("no-figures", po::bool_switch(&no_figures), "do not call plotting/plot.py")
    ("compress-runs", po::bool_switch(&r.compress_runs), "write runs.jsonl.zst (zstd frames) instead of runs.jsonl; --resume must repeat it");
  po::positional_options_description positional;
  positional.add("config", 1);
  po::variables_map vm;
  if (!parse_or_help(args,
                     "usage: kvstream run CONFIG.json [--out DIR] [--jobs N] [--resume | --overwrite] [--shard i/N]\n"
                     "                    [--profile-cache DIR] [--profiles-only] [--no-figures] [--compress-runs]\n\n"
                     "Profiles the config's contexts (cached), expands its grid of traces x policies x SLOs x\n"
                     "hardware x workloads x repetitions, runs it, and writes DIR/config.json, manifest.json,\n"
                     "runs.jsonl (one line per run, appended in run order as runs finish; with --compress-runs\n"
                     "runs.jsonl.zst, which zstd -d turns into runs.jsonl), summary.csv, levels.csv,\n"
                     "profiles/ and figures/. Interrupted? Run again with --resume. On a cluster, run shards\n"
                     "i/N into separate directories (sharing --profile-cache) and join them with kvstream merge.\n"
                     "In a Slurm array task (sbatch --array=0-<N-1>) without --shard, runs shard\n"
                     "<task>/<N> into DIR/shards/<task>-of-<N>; join them with kvstream merge DIR/shards/* --out DIR.",
                     options, vm, &positional))
    return std::nullopt;
  if (r.jobs < 1 || r.jobs > kMaxJobs)
    throw po::error("--jobs must be in 1.." + std::to_string(kMaxJobs) + " (simulation threads), got " + std::to_string(r.jobs));
  if (r.resume && r.overwrite) throw po::error("--resume and --overwrite exclude each other");
  o.shard_given = !vm["shard"].defaulted();
  try {
    r.shard = experiments::Shard::parse(shard);
  } catch (const std::invalid_argument& e) {
    throw po::error(e.what());
  }
  r.out_dir = out;
  r.profile_cache = cache;
  r.figures = !no_figures;
  r.terminal = ::isatty(STDERR_FILENO);
  r.command_line = "kvstream run";
  for (const auto& a : args) r.command_line += " " + a;
  r.measure_model_contexts = model_context_measurer();
  return o;
}

int run(const Options& o) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(o.config_path, ec)) throw std::runtime_error(o.config_path + ": no such config file");
  const auto config = experiments::read_experiment_config(o.config_path);
  experiments::RunnerOptions runner = o.runner;
  std::optional<experiments::Shard> array_shard;
  try {
    array_shard = experiments::slurm_array_shard([](const char* name) { return std::getenv(name); });
  } catch (const std::invalid_argument& e) {
    throw std::runtime_error(std::string("Slurm array task: ") + e.what());
  }
  if (array_shard && o.shard_given) {
    std::cerr << "kvstream run: --shard " << runner.shard.to_string() << " given, so the Slurm array task's shard ("
              << array_shard->to_string() << ") is not used\n";
  } else if (array_shard) {
    runner.shard = *array_shard;
    const std::filesystem::path base = runner.out_dir.empty() ? std::filesystem::path("results") / config.name : runner.out_dir;
    runner.out_dir = experiments::shard_result_dir(base, *array_shard);
    std::cerr << "kvstream run: Slurm array task, shard " << array_shard->to_string() << " into " << runner.out_dir.string()
              << "\n";
  }
  const auto report = experiments::run_experiment(config, o.config_path, runner, std::cerr);
  if (runner.profiles_only) {
    std::cout << "profiles in " << report.out_dir.string() << "/profiles and the cache\n";
    return 0;
  }
  if (!report.summary.empty()) experiments::print_summary_table(std::cout, report.summary);
  std::cout << "results: " << report.out_dir.string() << " (" << report.shard_runs << " runs"
            << (report.resumed_runs ? ", " + std::to_string(report.resumed_runs) + " resumed" : "")
            << (report.figures_written ? ", figures in figures/" : "") << ")\n";
  return 0;
}

}  // namespace

int run_main(const std::vector<std::string>& args) { return parse_and_run<Options>(args, parse, run); }

}  // namespace kvstream::cli
