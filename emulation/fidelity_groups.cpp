#include "emulation/fidelity_groups.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <ostream>
#include <tuple>

namespace kvstream::emulation {

namespace {

double relative_error(double simulated, double emulated) { return emulated > 0 ? simulated / emulated - 1 : 0.0; }

// The most requests of `results` (one run) at once between arrival and first token; a request that
// never completed stays in flight.
size_t max_in_flight(const std::vector<sim::RequestResult>& results) {
  std::vector<std::pair<double, int>> changes;  // (time, +1 arrival / -1 first token); ends first at ties
  for (const auto& r : results) {
    changes.push_back({r.arrival_s, +1});
    if (r.completed) changes.push_back({r.arrival_s + r.ttft_s, -1});
  }
  std::sort(changes.begin(), changes.end());
  size_t most = 0, now = 0;
  for (const auto& [time_s, change] : changes) most = std::max(most, now += change);
  return most;
}

std::string label(const FidelityGroup& g) {
  return g.policy + " | " + g.trace + " " + compact_number(g.rtt_ms) + " ms " + g.queue + " " + g.congestion_control +
         " | " + g.workload;
}

}  // namespace

double FidelityGroup::p50_error() const { return relative_error(simulated.p50_ttft_s, emulated.p50_ttft_s); }
double FidelityGroup::p95_error() const { return relative_error(simulated.p95_ttft_s, emulated.p95_ttft_s); }
double FidelityGroup::violation_points() const {
  return 100 * (simulated.slo_violation_rate - emulated.slo_violation_rate);
}

std::vector<FidelityGroup> fidelity_groups(const FidelityConfig& config, const std::vector<FidelityRun>& runs) {
  std::vector<FidelityGroup> groups;
  for (size_t m = 0; m < config.link_models.size(); ++m) {
    // A group's requests, both ways, in run order; requests pair by position within a run.
    struct Requests {
      std::vector<sim::RequestResult> emulated, simulated;
      PairedErrors same, different;
      size_t max_in_flight = 0;
    };
    using Key = std::tuple<std::string, size_t, double, size_t, std::string, size_t>;
    std::vector<Key> order;
    std::map<Key, Requests> pooled;
    for (const auto& run : runs) {
      const FidelityCase& c = run.fidelity_case;
      const Key key{c.policy, c.trace, c.rtt_ms, c.queue, c.congestion_control, c.workload};
      if (!pooled.count(key)) order.push_back(key);
      Requests& r = pooled[key];
      r.emulated.insert(r.emulated.end(), run.emulated.results.begin(), run.emulated.results.end());
      r.simulated.insert(r.simulated.end(), run.simulated[m].begin(), run.simulated[m].end());
      r.max_in_flight = std::max(r.max_in_flight, max_in_flight(run.emulated.results));
      for (auto [into, choices] : {std::pair{&r.same, Choices::kSame}, std::pair{&r.different, Choices::kDifferent}}) {
        const PairedErrors errors = paired_errors(run.simulated[m], run.emulated.results, choices);
        into->ttft.insert(into->ttft.end(), errors.ttft.begin(), errors.ttft.end());
      }
    }
    for (const Key& key : order) {
      const Requests& r = pooled.at(key);
      const auto& [policy, trace, rtt_ms, queue, cc, workload] = key;
      groups.push_back({config.link_models[m], policy, config.traces[trace].name, config.queues[queue].name, cc,
                        config.workloads[workload].name, rtt_ms, sim::summarize(r.emulated),
                        sim::summarize(r.simulated), error_stats(r.same.ttft), error_stats(r.different.ttft),
                        r.max_in_flight});
    }
  }
  return groups;
}

void write_fidelity_groups_csv(std::ostream& out, const std::vector<FidelityGroup>& groups) {
  out << "link_model,policy,trace,rtt_ms,queue,congestion_control,workload,requests,max_in_flight,"
         "emulated_p50_ttft_s,simulated_p50_ttft_s,p50_error,emulated_p95_ttft_s,simulated_p95_ttft_s,p95_error,"
         "emulated_violation_rate,simulated_violation_rate,violation_points,"
         "same_choices_requests,same_choices_median_abs_error,same_choices_p95_abs_error,"
         "different_choices_requests,different_choices_median_abs_error,different_choices_p95_abs_error\n";
  for (const auto& g : groups) {
    out << g.link_model << "," << g.policy << "," << g.trace << "," << compact_number(g.rtt_ms) << "," << g.queue << ","
        << g.congestion_control << "," << g.workload << "," << g.emulated.requests << "," << g.max_in_flight << ","
        << compact_number(g.emulated.p50_ttft_s) << "," << compact_number(g.simulated.p50_ttft_s) << ","
        << compact_number(g.p50_error()) << "," << compact_number(g.emulated.p95_ttft_s) << ","
        << compact_number(g.simulated.p95_ttft_s) << "," << compact_number(g.p95_error()) << ","
        << compact_number(g.emulated.slo_violation_rate) << "," << compact_number(g.simulated.slo_violation_rate) << ","
        << compact_number(g.violation_points());
    for (const ErrorStats* s : {&g.same_choices, &g.different_choices})
      out << "," << s->count << "," << compact_number(s->median_abs) << "," << compact_number(s->p95_abs);
    out << "\n";
  }
}

void print_group_summary(std::ostream& out, const std::vector<FidelityGroup>& groups) {
  std::vector<std::string> models;
  for (const auto& g : groups)
    if (std::find(models.begin(), models.end(), g.link_model) == models.end()) models.push_back(g.link_model);
  out << "per (policy, network path, workload) group, simulated against emulated: median over groups, and the worst\n";
  const auto median = [](std::vector<double> values) {
    std::sort(values.begin(), values.end());
    return sim::percentile(values, 50);
  };
  char line[512];
  for (const auto& model : models) {
    std::vector<const FidelityGroup*> of_model;
    for (const auto& g : groups)
      if (g.link_model == model) of_model.push_back(&g);
    // One measure of the model's groups: its median over groups and the group with the largest.
    const auto report = [&](const char* model_column, const char* name, const char* unit, double scale,
                            double (FidelityGroup::*measure)() const) {
      std::vector<double> magnitudes;
      const FidelityGroup* worst = of_model.front();
      for (const FidelityGroup* g : of_model) {
        magnitudes.push_back(std::abs((g->*measure)()));
        if (std::abs((g->*measure)()) > std::abs((worst->*measure)())) worst = g;
      }
      std::snprintf(line, sizeof line, "%-6s %-16s median %5.1f%s, worst %+6.1f%s (%s)\n",
                    model_column, name, scale * median(magnitudes), unit,
                    scale * (worst->*measure)(), unit, label(*worst).c_str());
      out << line;
    };
    report(model.c_str(), "TTFT p50", "%", 100, &FidelityGroup::p50_error);
    report("", "TTFT p95", "%", 100, &FidelityGroup::p95_error);
    report("", "violation rate", " points", 1, &FidelityGroup::violation_points);
    out << std::string(7, ' ') << of_model.size() << " groups\n";
  }
}

}  // namespace kvstream::emulation
