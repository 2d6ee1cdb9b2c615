// `kvstream merge`: joins the result directories of the shards of one experiment (`kvstream run
// --shard i/N`) into one directory whose config.json, runs.jsonl, summary.csv and levels.csv are
// identical to those of an uninterrupted single-machine run. The shards' run logs are streamed
// (experiments/run_log_sort.h), never held.
#pragma once
#include <filesystem>
#include <iosfwd>
#include <vector>

#include "experiments/result_dir.h"
#include "experiments/run_log_file.h"

namespace kvstream::experiments {

using MergeReport = ResultDir::Finished;

// Throws when the directories hold different configs, an unfinished shard, conflicting copies of a
// run, or do not cover the whole grid (naming what is missing), and when `out` already holds results;
// a merge that throws leaves no run log, table or manifest in `out`. `format`: of out's run log (the
// shards' may be either).
MergeReport merge_results(const std::vector<std::filesystem::path>& dirs, const std::filesystem::path& out, bool figures,
                          RunLogFormat format, std::ostream& log);

}  // namespace kvstream::experiments
