// A result directory (experiments/SCHEMA.md §8): what `kvstream run` and `kvstream merge` write.
// Both finish one the same way: with runs.jsonl (or runs.jsonl.zst) final, sorted by run index, and
// summary.csv's rows computed from those records in that order (as they were written or by
// experiments/run_log_sort.h), they write summary.csv, manifest.json, then the figures. Every table
// is computed from the records alone, so an uninterrupted run, a resumed one and merged shards give
// the same files.
#pragma once
#include <filesystem>
#include <iosfwd>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "experiments/result_tables.h"

namespace kvstream::experiments {

class ResultDir {
 public:
  explicit ResultDir(std::filesystem::path dir) : dir_(std::move(dir)) {}

  const std::filesystem::path& path() const { return dir_; }
  std::filesystem::path file(const std::string& name) const { return dir_ / name; }
  // A JSON file of the directory (config.json, manifest.json, profiles/...), written atomically.
  void write_json(const std::string& name, const nlohmann::json& json) const;

  struct Finished {
    size_t runs = 0;
    std::vector<SummaryRow> summary;
    bool figures_written = false;
  };
  // With the run log final (`runs` records): writes summary.csv from `summary`, then `manifest` with
  // "runs" set, then (when `figures`) the figures; a failure to draw them is a warning on `log`.
  Finished finish(size_t runs, std::vector<SummaryRow> summary, nlohmann::json manifest, bool figures,
                  std::ostream& log) const;

 private:
  std::filesystem::path dir_;
};

}  // namespace kvstream::experiments
