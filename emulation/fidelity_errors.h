// The simulator's error against the emulator (docs/EMULATION.md "`kvstream fidelity`"): signed
// relative errors simulated / emulated - 1 of each request's TTFT and of each chunk's transfer
// time, and their statistics per link model, overall and along each axis of a fidelity config.
#pragma once
#include <iosfwd>
#include <string>
#include <vector>

#include "emulation/fidelity.h"

namespace kvstream::emulation {

struct PairedErrors {
  std::vector<double> ttft;   // per request that completed both ways, in request order
  std::vector<double> chunk;  // per chunk that both ways fetched at the same level (or as text), in order
};
// Which requests count: all, or only those whose choices (level or text per chunk) were the same
// both ways, or differed (an adaptive policy that decided otherwise: the error is then the policy's
// divergence more than the link model's).
enum class Choices { kAll, kSame, kDifferent };
// Requests pair by position (both runs have the same workload).
PairedErrors paired_errors(const std::vector<sim::RequestResult>& simulated,
                           const std::vector<sim::RequestResult>& emulated, Choices choices = Choices::kAll);

struct ErrorStats {
  size_t count = 0;
  double median = 0;                              // signed: < 0 means the simulator is optimistic
  double median_abs = 0, p95_abs = 0, max_abs = 0;  // of |error|
};
ErrorStats error_stats(const std::vector<double>& errors);

// One row of fidelity.csv: a link model's errors over the runs whose `group` (all, trace, rtt_ms,
// queue, congestion_control, workload, policy, slo_s) has `value`, or (group "choices", values
// "same" and "different") over the requests whose choices were the same both ways or not.
struct FidelityRow {
  std::string link_model, group, value;
  ErrorStats ttft, chunk;
};
std::vector<FidelityRow> fidelity_table(const FidelityConfig& config, const std::vector<FidelityRun>& runs);

void write_fidelity_csv(std::ostream& out, const std::vector<FidelityRow>& rows);
void print_fidelity_table(std::ostream& out, const std::vector<FidelityRow>& rows);

// `x` as the fidelity files and labels write a number: printf's %g (20, 0.5, 1e+06).
std::string compact_number(double x);

}  // namespace kvstream::emulation
