// The final runs.jsonl of a result directory from run logs in any order: the records sorted by run
// index, each run once, written atomically (plain or compressed as `out` says), and summary.csv's
// rows computed from them as they pass. Used where the records are not already in order: a resumed
// session (earlier sessions' runs, then this one's) and `kvstream merge` (the shards' runs).
//
// An external merge sort, so memory does not grow with the runs: the records are read in chunks of
// kSortChunkBytes, each chunk sorted and, when there is more than one, spilled to an unnamed
// temporary file beside `out` (removed by the system even if the process is killed); the chunks are
// then merged. Memory: one chunk, plus a record per chunk while merging, plus the summaries'
// per-group state (result_tables.h).
#pragma once
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "experiments/result_tables.h"

namespace kvstream::experiments {

inline constexpr size_t kSortChunkBytes = size_t(64) << 20;

struct RunLogSource {
  std::filesystem::path path;
  std::string label;  // what errors call it (a directory of a merge)
};

struct SortedRunLog {
  size_t runs = 0;
  std::vector<SummaryRow> summary;
};

// A run found in two sources is kept once when its records are equal and an error naming both
// sources when they differ. `check(runs)` may throw before the file is committed (a merge that lacks
// runs): then, as on every error, `out` is left as it was. `chunk_bytes`: of record text per sorted
// chunk (tests make it small).
SortedRunLog write_sorted_run_log(const std::vector<RunLogSource>& sources, const std::filesystem::path& out,
                                  int threads, const std::function<void(size_t runs)>& check,
                                  size_t chunk_bytes = kSortChunkBytes);

}  // namespace kvstream::experiments
