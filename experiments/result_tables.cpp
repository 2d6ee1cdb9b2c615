#include "experiments/result_tables.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <ostream>
#include <thread>

#include "common/atomic_file.h"
#include "common/content_hash.h"
#include "sim/request_result.h"

namespace kvstream::experiments {

const std::vector<std::string> kSummaryColumns = {
    "context_set", "trace_set", "policy", "slo_s", "hardware", "workload", "rate_per_s", "runs", "requests",
    "completed", "trace_mean_gbps", "mean_ttft_s", "p50_ttft_s", "p95_ttft_s", "slo_violation_rate", "mean_bytes",
    "mean_quality", "mean_ttft_s_ci95_lo", "mean_ttft_s_ci95_hi", "p50_ttft_s_ci95_lo", "p50_ttft_s_ci95_hi",
    "p95_ttft_s_ci95_lo", "p95_ttft_s_ci95_hi", "slo_violation_rate_ci95_lo", "slo_violation_rate_ci95_hi"};
const std::vector<std::string> kNetworkColumns = {"link_model", "rtt_ms", "queue", "congestion_control",
                                                  "slow_start_after_idle"};
const std::vector<std::string> kLevelColumns = {
    "context_set", "model", "level", "codec", "contexts", "tokens", "bytes", "bytes_per_token", "ratio_vs_fp16",
    "quality", "ppl_ref", "ppl", "kl_mean", "encode_mb_per_s", "decode_mb_per_s"};

namespace {

// What summarize() needs of a recorded request.
sim::RequestResult request_from_json(const nlohmann::json& j) {
  sim::RequestResult r;
  r.completed = j.at("completed").get<bool>();
  r.ttft_s = r.completed ? j.at("ttft_s").get<double>() : INFINITY;
  r.slo_met = j.at("slo_met").get<bool>();
  r.bytes = j.at("bytes").get<double>();
  r.quality = j.at("quality").get<double>();
  return r;
}

std::string csv_cell(const nlohmann::json& value) {
  if (value.is_null()) return "";
  if (value.is_boolean()) return value.get<bool>() ? "true" : "false";
  if (value.is_number_integer() || value.is_number_unsigned()) return value.dump();
  if (value.is_number()) {
    const double x = value.get<double>();
    if (std::isnan(x)) return "nan";
    if (std::isinf(x)) return x > 0 ? "inf" : "-inf";
    char text[32];
    std::snprintf(text, sizeof text, "%.9g", x);
    return text;
  }
  std::string text = value.is_string() ? value.get<std::string>() : value.dump();
  if (text.find_first_of(",\"\n") == std::string::npos) return text;
  std::string quoted = "\"";
  for (const char c : text) quoted += c == '"' ? std::string("\"\"") : std::string(1, c);
  return quoted + "\"";
}

void write_csv(const std::filesystem::path& path, const std::vector<std::string>& columns,
               const std::vector<nlohmann::json>& rows) {
  common::write_file_atomically(path, [&](std::ostream& out) {
    for (size_t i = 0; i < columns.size(); ++i) out << (i ? "," : "") << columns[i];
    out << "\n";
    for (const auto& row : rows) {
      for (size_t i = 0; i < columns.size(); ++i)
        out << (i ? "," : "") << csv_cell(row.contains(columns[i]) ? row.at(columns[i]) : nlohmann::json(nullptr));
      out << "\n";
    }
  });
}

}  // namespace

nlohmann::json summary_group(const nlohmann::json& coordinates) {
  nlohmann::json group;
  for (const char* key : {"context_set", "trace_set", "policy", "slo_s", "hardware", "workload", "rate_per_s"})
    group[key] = coordinates.at(key);
  if (coordinates.contains("link_model"))  // a config with a network section: each path its own row
    for (const auto& key : kNetworkColumns) group[key] = coordinates.at(key);
  return group;
}

RunTotals run_totals(const nlohmann::json& record) {
  RunTotals run;
  run.group = summary_group(record);
  run.group_key = run.group.dump();
  run.trace_mean_gbps = record.at("trace_mean_gbps").get<double>();
  for (const auto& request : record.at("requests")) run.requests.push_back(request_from_json(request));
  return run;
}

void SummaryBuilder::add(RunTotals run) {
  const auto [it, inserted] = index_of_.emplace(std::move(run.group_key), groups_.size());
  if (inserted) groups_.push_back({{std::move(run.group), 0, 0, {}, {}}, {}});
  Group& group = groups_[it->second];
  ++group.row.runs;
  group.row.trace_mean_gbps += run.trace_mean_gbps;
  for (const auto& request : run.requests) group.requests.add(request);
}

std::vector<SummaryRow> SummaryBuilder::rows(int threads) const {
  std::vector<SummaryRow> rows(groups_.size());
  std::atomic<size_t> next{0};
  const auto worker = [&] {
    for (size_t i; (i = next++) < groups_.size();) {
      const Group& g = groups_[i];
      rows[i] = g.row;
      rows[i].trace_mean_gbps /= static_cast<double>(g.row.runs);
      rows[i].summary = g.requests.summary();
      const std::string key = g.row.group.dump();
      rows[i].intervals = sim::summary_intervals(g.requests.completed_ttfts_s(), g.requests.requests(),
                                                 g.requests.violations(), common::fnv1a64(key.data(), key.size()));
    }
  };
  std::vector<std::thread> pool;
  for (int t = 1; t < threads; ++t) pool.emplace_back(worker);
  worker();
  for (auto& thread : pool) thread.join();
  return rows;
}

void write_summary_csv(const std::filesystem::path& path, const std::vector<SummaryRow>& rows) {
  std::vector<nlohmann::json> objects;
  for (const auto& row : rows) {
    nlohmann::json j = row.group;
    j.update({{"runs", row.runs}, {"trace_mean_gbps", row.trace_mean_gbps}});
    // The simulator's summary fields; one over no completed request (null there) is nan here.
    const nlohmann::json summary = sim::to_json(row.summary);
    for (auto it = summary.begin(); it != summary.end(); ++it) j[it.key()] = it->is_null() ? nlohmann::json(NAN) : *it;
    const sim::SummaryIntervals& ci = row.intervals;
    for (const auto& [name, interval] : {std::pair{"mean_ttft_s", ci.mean_ttft_s}, {"p50_ttft_s", ci.p50_ttft_s},
                                         {"p95_ttft_s", ci.p95_ttft_s}, {"slo_violation_rate", ci.slo_violation_rate}}) {
      j[std::string(name).append("_ci95_lo")] = interval.lo;
      j[std::string(name).append("_ci95_hi")] = interval.hi;
    }
    objects.push_back(j);
  }
  std::vector<std::string> columns = kSummaryColumns;
  if (!rows.empty() && rows.front().group.contains("link_model")) {
    const auto after = std::find(columns.begin(), columns.end(), "rate_per_s") + 1;
    columns.insert(after, kNetworkColumns.begin(), kNetworkColumns.end());
  }
  write_csv(path, columns, objects);
}

void write_levels_csv(const std::filesystem::path& path, const std::vector<nlohmann::json>& rows) {
  write_csv(path, kLevelColumns, rows);
}

void print_summary_table(std::ostream& out, const std::vector<SummaryRow>& rows) {
  // Context set, hardware and rate columns only when the sweep varies them.
  const auto varies = [&](const char* key) {
    for (const auto& row : rows)
      if (row.group.at(key) != rows.front().group.at(key)) return true;
    return false;
  };
  const bool sets = varies("context_set"), hardware = varies("hardware"), rates = varies("rate_per_s");
  // The network path in a few characters ("tcp 20ms shallow cubic"), when the sweep has several.
  const auto path_of = [](const nlohmann::json& group) {
    if (!group.contains("link_model")) return std::string();
    std::string text = group.at("link_model").get<std::string>();
    text.append(" ").append(csv_cell(group.at("rtt_ms"))).append("ms");
    for (const char* key : {"queue", "congestion_control"})
      if (group.at(key).is_string()) text.append(" ").append(group.at(key).get<std::string>());
    if (group.at("slow_start_after_idle") == false) text.append(" no-restart");
    return text;
  };
  bool paths = false;
  for (const auto& row : rows) paths = paths || path_of(row.group) != path_of(rows.front().group);
  const auto text = [](const nlohmann::json& value) { return value.is_string() ? value.get<std::string>() : value.dump(); };
  // The policy column fits the longest spec (external ones name their program), within 26..120.
  int policy_width = 26;
  for (const auto& row : rows) policy_width = std::max(policy_width, int(text(row.group.at("policy")).size()));
  policy_width = std::min(policy_width, 120);
  char line[512];
  std::snprintf(line, sizeof line, "%-*s %6s %-16s%s%s%s%s %9s %9s %9s %6s %9s %7s\n", policy_width, "policy", "SLO s", "trace set",
                sets ? " context set     " : "", hardware ? " hardware        " : "", rates ? "   rate/s" : "",
                paths ? " network path            " : "", "TTFT mean", "p50", "p95", "viol%", "MB", "quality");
  out << line;
  for (const auto& row : rows) {
    const auto& s = row.summary;
    const auto cell = [](bool shown, const std::string& value) {
      char c[40];
      std::snprintf(c, sizeof c, " %-16.16s", value.c_str());
      return shown ? std::string(c) : std::string();
    };
    char rate[16] = "";
    if (rates) std::snprintf(rate, sizeof rate, " %8.3g", row.group.at("rate_per_s").is_null() ? NAN : row.group.at("rate_per_s").get<double>());
    char path[40] = "";
    if (paths) std::snprintf(path, sizeof path, " %-24.24s", path_of(row.group).c_str());
    std::snprintf(line, sizeof line, "%-*.*s %6.3g %-16.16s%s%s%s%s %9.4f %9.4f %9.4f %6.1f %9.2f %7.4f\n",
                  policy_width, policy_width, text(row.group.at("policy")).c_str(), row.group.at("slo_s").get<double>(),
                  text(row.group.at("trace_set")).c_str(), cell(sets, text(row.group.at("context_set"))).c_str(),
                  cell(hardware, text(row.group.at("hardware"))).c_str(), rate, path, s.completed ? s.mean_ttft_s : NAN,
                  s.completed ? s.p50_ttft_s : NAN, s.completed ? s.p95_ttft_s : NAN, 100 * s.slo_violation_rate,
                  s.mean_bytes / 1e6, s.completed ? s.mean_quality : NAN);
    out << line;
  }
}

}  // namespace kvstream::experiments
