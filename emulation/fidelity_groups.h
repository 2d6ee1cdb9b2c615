// Fidelity at the distribution level (docs/EMULATION.md "Distributions per group"): for each link
// model and each group of runs that share a policy, a network path (trace, RTT, queue, congestion
// control) and a workload, what a sweep's summary.csv row would say each way — TTFT p50 and p95 and
// the SLO violation rate of the emulated requests against the simulated ones — and the per-request
// TTFT errors of the group split by whether the policy chose the same levels both ways.
#pragma once
#include <iosfwd>
#include <string>
#include <vector>

#include "emulation/fidelity.h"
#include "emulation/fidelity_errors.h"
#include "sim/summary.h"

namespace kvstream::emulation {

struct FidelityGroup {
  std::string link_model, policy, trace, queue, congestion_control, workload;
  double rtt_ms = 0;
  sim::Summary emulated, simulated;  // over the group's requests (SLOs as each run had them)
  ErrorStats same_choices, different_choices;  // per-request TTFT errors, simulated / emulated - 1
  size_t max_in_flight = 0;  // the most emulated requests of one run between arrival and first token

  // simulated / emulated - 1 of the TTFT percentile (0 when the emulated one is 0).
  double p50_error() const;
  double p95_error() const;
  // Simulated minus emulated violation rate, in points (percent of requests).
  double violation_points() const;
};

// The groups in order of first appearance, per link model in the config's order.
std::vector<FidelityGroup> fidelity_groups(const FidelityConfig& config, const std::vector<FidelityRun>& runs);

// fidelity_groups.csv (experiments/SCHEMA.md §10).
void write_fidelity_groups_csv(std::ostream& out, const std::vector<FidelityGroup>& groups);
// Per link model: the median over groups of |p50 error|, |p95 error| and |violation points|, and
// the group furthest off in each, named.
void print_group_summary(std::ostream& out, const std::vector<FidelityGroup>& groups);

}  // namespace kvstream::emulation
