// `kvstream run`: an experiment config in, results/<name>/ out (experiments/SCHEMA.md "Results").
//   1. profile the contexts (context_sets.h, cached), load traces and hardware profiles;
//   2. expand the grid (experiment_grid.h), keep this shard's runs, skip the ones runs.jsonl holds;
//   3. run the rest on `jobs` threads, appending each finished run to runs.jsonl;
//   4. when every run of the shard is done: runs.jsonl sorted by run index, summary.csv, levels.csv,
//      manifest.json, figures.
// Interrupting it at any point loses at most the runs in flight; `resume` continues.
#pragma once
#include <filesystem>
#include <iosfwd>
#include <string>
#include <vector>

#include "experiments/experiment_config.h"
#include "experiments/experiment_grid.h"
#include "experiments/result_tables.h"

namespace kvstream::experiments {

struct RunnerOptions {
  std::filesystem::path out_dir;        // empty: results/<name>
  int jobs = 1;
  bool resume = false;
  bool overwrite = false;               // replace the results in out_dir (the files the runner writes)
  Shard shard;
  std::filesystem::path profile_cache;  // empty: profiling::ProfileCache::default_dir()
  bool profiles_only = false;           // stop after the profiling stage (fills the cache)
  bool figures = true;
  bool terminal = false;                // draw a progress bar instead of progress lines
  std::string command_line;             // for the manifest
};

struct RunnerReport {
  std::filesystem::path out_dir;
  size_t grid_runs = 0, shard_runs = 0, resumed_runs = 0, new_runs = 0;
  std::vector<SummaryRow> summary;
  bool figures_written = false;
};

// Progress and notes go to `log`. Throws on bad inputs (with the config's JSON path), on results
// in out_dir from another config, and on existing results without `resume` or `overwrite`.
RunnerReport run_experiment(const ExperimentConfig& config, const std::string& config_path, const RunnerOptions& options,
                            std::ostream& log);

// The manifest's description of this build and machine: git revision, compiler, library versions, host.
nlohmann::json build_and_host_info();

}  // namespace kvstream::experiments
