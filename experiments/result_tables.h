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
#include <vector>

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

// `runs`: runs.jsonl records (sorted by index); groups appear in order of their first run.
std::vector<SummaryRow> summarize_runs(const std::vector<nlohmann::json>& runs);

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
