// `kvstream run`: an experiment config in, results/<name>/ out (experiments/SCHEMA.md §8).
//   1. load the traces and hardware profiles, profile the contexts (experiments/profiling_stage.h,
//      cached), and check that every run of the grid can run;
//   2. expand the grid (experiments/experiment_grid.h), keep this shard's runs, skip the ones
//      runs.jsonl (or runs.jsonl.zst) holds;
//   3. run the rest on `jobs` threads, appending finished runs to the run log in run order
//      (experiments/in_order.h) and, in a session that starts from no runs, accumulating summary.csv's
//      rows as they are written;
//   4. when every run of the shard is done, sort a resumed session's log (experiments/run_log_sort.h)
//      and finish the result directory (experiments/result_dir.h).
// Memory does not grow with the runs: the grid is computed run by run, and records are streamed,
// never held (the summaries keep each completed request's TTFT: 8 bytes a request).
// Interrupting it at any point loses at most the runs in flight; `resume` continues.
#pragma once
#include <filesystem>
#include <iosfwd>
#include <string>
#include <vector>

#include "experiments/experiment_config.h"
#include "experiments/experiment_grid.h"
#include "experiments/result_dir.h"
#include "profiling/model_context_request.h"

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
  bool compress_runs = false;           // runs.jsonl.zst (zstd frames) instead of runs.jsonl
  std::string command_line;             // for the manifest
  // Measures context sets of source "model"; empty in a build without LibTorch, where such a set is
  // an error saying so.
  profiling::ModelContextMeasurer measure_model_contexts;
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

}  // namespace kvstream::experiments
