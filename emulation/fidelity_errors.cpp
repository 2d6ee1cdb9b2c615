#include "emulation/fidelity_errors.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <map>
#include <ostream>

#include "sim/summary.h"

namespace kvstream::emulation {

PairedErrors paired_errors(const std::vector<sim::RequestResult>& simulated,
                           const std::vector<sim::RequestResult>& emulated, Choices choices) {
  PairedErrors errors;
  for (size_t r = 0; r < std::min(simulated.size(), emulated.size()); ++r) {
    const sim::RequestResult &s = simulated[r], &e = emulated[r];
    if (choices != Choices::kAll && (s.choices == e.choices) != (choices == Choices::kSame)) continue;
    if (s.completed && e.completed && e.ttft_s > 0) errors.ttft.push_back(s.ttft_s / e.ttft_s - 1);
    const size_t chunks = std::min({s.choices.size(), e.choices.size(), s.chunk_transfer_s.size(),
                                    e.chunk_transfer_s.size()});
    for (size_t c = 0; c < chunks; ++c)
      if (s.choices[c] == e.choices[c] && e.chunk_transfer_s[c] > 0)
        errors.chunk.push_back(s.chunk_transfer_s[c] / e.chunk_transfer_s[c] - 1);
  }
  return errors;
}

ErrorStats error_stats(const std::vector<double>& errors) {
  ErrorStats stats;
  stats.count = errors.size();
  if (errors.empty()) return stats;
  std::vector<double> sorted = errors, magnitudes;
  std::sort(sorted.begin(), sorted.end());
  for (const double e : errors) magnitudes.push_back(std::abs(e));
  std::sort(magnitudes.begin(), magnitudes.end());
  stats.median = sim::percentile(sorted, 50);
  stats.median_abs = sim::percentile(magnitudes, 50);
  stats.p95_abs = sim::percentile(magnitudes, 95);
  stats.max_abs = magnitudes.back();
  return stats;
}

std::string compact_number(double x) {
  char text[32];
  std::snprintf(text, sizeof text, "%g", x);
  return text;
}

namespace {

// The axes a table groups by, each as the value a run has on it.
const std::vector<std::pair<std::string, std::function<std::string(const FidelityConfig&, const FidelityCase&)>>>&
axes() {
  static const std::vector<std::pair<std::string, std::function<std::string(const FidelityConfig&, const FidelityCase&)>>>
      table = {
          {"all", [](const FidelityConfig&, const FidelityCase&) { return std::string("all"); }},
          {"trace", [](const FidelityConfig& f, const FidelityCase& c) { return f.traces[c.trace].name; }},
          {"rtt_ms", [](const FidelityConfig&, const FidelityCase& c) { return compact_number(c.rtt_ms); }},
          {"queue", [](const FidelityConfig& f, const FidelityCase& c) { return f.queues[c.queue].name; }},
          {"congestion_control", [](const FidelityConfig&, const FidelityCase& c) { return c.congestion_control; }},
          {"workload", [](const FidelityConfig& f, const FidelityCase& c) { return f.workloads[c.workload].name; }},
          {"policy", [](const FidelityConfig&, const FidelityCase& c) { return c.policy; }},
          {"slo_s", [](const FidelityConfig&, const FidelityCase& c) { return compact_number(c.slo_s); }},
      };
  return table;
}

void append(PairedErrors& into, const PairedErrors& from) {
  into.ttft.insert(into.ttft.end(), from.ttft.begin(), from.ttft.end());
  into.chunk.insert(into.chunk.end(), from.chunk.begin(), from.chunk.end());
}

}  // namespace

std::vector<FidelityRow> fidelity_table(const FidelityConfig& config, const std::vector<FidelityRun>& runs) {
  std::vector<FidelityRow> rows;
  for (size_t m = 0; m < config.link_models.size(); ++m) {
    for (const auto& [group, value_of] : axes()) {
      std::vector<std::string> order;  // values in order of first appearance
      std::map<std::string, PairedErrors> pooled;
      for (const auto& run : runs) {
        const std::string value = value_of(config, run.fidelity_case);
        if (!pooled.count(value)) order.push_back(value);
        append(pooled[value], paired_errors(run.simulated[m], run.emulated.results));
      }
      if (group != "all" && order.size() < 2) continue;  // one value: the same as "all"
      for (const auto& value : order)
        rows.push_back({config.link_models[m], group, value, error_stats(pooled[value].ttft),
                        error_stats(pooled[value].chunk)});
    }
    for (const auto& [value, choices] : {std::pair{"same", Choices::kSame}, std::pair{"different", Choices::kDifferent}}) {
      PairedErrors pooled;
      for (const auto& run : runs) append(pooled, paired_errors(run.simulated[m], run.emulated.results, choices));
      rows.push_back({config.link_models[m], "choices", value, error_stats(pooled.ttft), error_stats(pooled.chunk)});
    }
  }
  return rows;
}

void write_fidelity_csv(std::ostream& out, const std::vector<FidelityRow>& rows) {
  out << "link_model,group,value,requests,ttft_median_error,ttft_median_abs_error,ttft_p95_abs_error,"
         "ttft_max_abs_error,chunks,chunk_median_error,chunk_median_abs_error,chunk_p95_abs_error,chunk_max_abs_error\n";
  for (const auto& r : rows) {
    out << r.link_model << "," << r.group << "," << r.value;
    for (const ErrorStats* s : {&r.ttft, &r.chunk})
      out << "," << s->count << "," << compact_number(s->median) << "," << compact_number(s->median_abs) << ","
          << compact_number(s->p95_abs) << "," << compact_number(s->max_abs);
    out << "\n";
  }
}

void print_fidelity_table(std::ostream& out, const std::vector<FidelityRow>& rows) {
  char line[256];
  std::snprintf(line, sizeof line, "%-6s %-28s %5s %8s %8s %8s %8s  %6s %8s %8s\n", "model", "runs", "reqs",
                "median", "|med|", "|p95|", "|max|", "chunks", "|med|", "|p95|");
  out << "simulated / emulated - 1 (TTFT per request; transfer time per chunk fetched alike)\n" << line;
  for (const auto& r : rows) {
    const std::string runs = r.group == "all" ? "all" : r.group + "=" + r.value;
    std::snprintf(line, sizeof line, "%-6s %-28.28s %5zu %+7.1f%% %7.1f%% %7.1f%% %7.1f%%  %6zu %7.1f%% %7.1f%%\n",
                  r.link_model.c_str(), runs.c_str(), r.ttft.count, 100 * r.ttft.median, 100 * r.ttft.median_abs,
                  100 * r.ttft.p95_abs, 100 * r.ttft.max_abs, r.chunk.count, 100 * r.chunk.median_abs,
                  100 * r.chunk.p95_abs);
    out << line;
  }
}

}  // namespace kvstream::emulation
