// The tables of a result directory (experiments/SCHEMA.md "Results"): summary.csv aggregates the
// requests of runs.jsonl per (context set, trace set, policy, SLO, hardware, workload, rate, and the
// network path when the config has a network section);
// levels.csv is what the codec measured per (context set, level). Both are computed from files
// alone, so a resumed or merged directory gets the same tables as an uninterrupted run.
#pragma once
#include <filesystem>
#include <iosfwd>
#include <nlohmann/json.hpp>
#include <string>
#include <unordered_map>
#include <vector>

#include "sim/request_result.h"
#include "sim/summary.h"
#include "sim/summary_intervals.h"

namespace kvstream::experiments {

struct SummaryRow {
  nlohmann::json group;  // context_set, trace_set, policy, slo_s, hardware, workload, rate_per_s[, kNetworkColumns]
  size_t runs = 0;
  double trace_mean_gbps = 0;  // mean over the group's runs
  sim::Summary summary;        // over every request of the group's runs
  // 95 % intervals of the TTFT mean, p50, p95 and the violation rate (sim/summary_intervals.h), the
  // bootstrap seeded by the group, so that a resumed or merged directory gets the same ones.
  sim::SummaryIntervals intervals;
};

// What summary.csv needs of one run: its group, its trace's mean rate and its requests (of which
// only what sim::SummaryAccumulator reads).
struct RunTotals {
  nlohmann::json group;
  std::string group_key;  // group.dump(): equal keys, one row
  double trace_mean_gbps = 0;
  std::vector<sim::RequestResult> requests;
};
// The group of a run from its coordinates or its runs.jsonl record (which holds them).
nlohmann::json summary_group(const nlohmann::json& coordinates);
// From a runs.jsonl record: the same totals the runner had when it wrote the record.
RunTotals run_totals(const nlohmann::json& record);

// summary.csv's rows from runs given one at a time in run index order, holding per group only counts,
// sums and the completed requests' TTFTs (sim::SummaryAccumulator): never the runs themselves. Groups
// appear in order of their first run.
class SummaryBuilder {
 public:
  void add(RunTotals run);
  // The rows, their intervals computed on `threads` threads (each group's bootstrap is seeded by the
  // group, so the threads change nothing but the time).
  std::vector<SummaryRow> rows(int threads) const;

 private:
  struct Group {
    SummaryRow row;  // group, runs and the sum of trace_mean_gbps
    sim::SummaryAccumulator requests;
  };
  std::vector<Group> groups_;
  std::unordered_map<std::string, size_t> index_of_;  // group key -> position in groups_
};

extern const std::vector<std::string> kSummaryColumns;  // the interval columns (`<stat>_ci95_lo`, `_hi`) last
// The network path's columns, after rate_per_s, in results of a config with a network section.
extern const std::vector<std::string> kNetworkColumns;
extern const std::vector<std::string> kLevelColumns;

void write_summary_csv(const std::filesystem::path& path, const std::vector<SummaryRow>& rows);
// `rows`: objects keyed by kLevelColumns.
void write_levels_csv(const std::filesystem::path& path, const std::vector<nlohmann::json>& rows);
// A fixed-width table for the terminal: policy, SLO, trace set, TTFT mean/p50/p95, violations, MB, quality.
void print_summary_table(std::ostream& out, const std::vector<SummaryRow>& rows);

}  // namespace kvstream::experiments
