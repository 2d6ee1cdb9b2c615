// One `kvstream fidelity` session (docs/EMULATION.md "`kvstream fidelity`"): every case of a
// fidelity config emulated and simulated on the same trace offsets (or, with `rescore`, an earlier
// directory's runs simulated again against their stored emulations), the emulator's own accuracy per
// trace, and the result directory written by the protocol every writer follows
// (experiments/result_dir_claim.h): fidelity.jsonl, fidelity.csv, fidelity_groups.csv,
// fidelity.json, config.json and figures/ (experiments/SCHEMA.md §10).
#pragma once
#include <filesystem>
#include <iosfwd>
#include <string>
#include <vector>

#include "emulation/fidelity.h"
#include "emulation/fidelity_config.h"
#include "emulation/fidelity_errors.h"
#include "emulation/fidelity_groups.h"

namespace kvstream::experiments {

struct FidelitySessionOptions {
  std::filesystem::path out;      // the result directory
  std::filesystem::path rescore;  // an earlier result directory to simulate again; empty: emulate
  bool overwrite = false;         // replace the fidelity results already in `out`
  bool figures = true;
  double link_check_s = 2;        // seconds of `link-check` per trace (0: none)
};

// A run whose emulated link delivered its packets later than this on average (measured on a 2-core VM
// whose host stole ~20 % of its CPU: runs above it erred 5-20 % more, docs/EMULATION.md "Accuracy").
inline constexpr double kLateRunMs = 0.5;

struct FidelitySession {
  std::vector<emulation::FidelityRow> table;
  std::vector<emulation::FidelityGroup> groups;
  size_t runs = 0, requests = 0;
  double wall_s = 0;
  // The emulated link's mean lateness per run: median and largest, and how many runs were late.
  double median_lateness_ms = 0, max_lateness_ms = 0;
  size_t late_runs = 0;
  bool figure_written = false;
};

// "<trace> rtt <ms> ms, queue <name>, <cc>, <workload> @<offset> s, <policy>, SLO <s> s".
std::string describe_case(const emulation::FidelityConfig& config, const emulation::FidelityCase& fidelity_case);

// Progress (a line per case, the emulator's accuracy) goes to `log`. Throws before any work when
// `options.out` already holds fidelity results (without `overwrite`), when it is the directory
// `rescore` reads, or when emulation is unavailable (without `rescore`); a failure before the
// results are written leaves no directory behind.
FidelitySession run_fidelity_session(const emulation::FidelityConfig& config, const FidelitySessionOptions& options,
                                     std::ostream& log);

}  // namespace kvstream::experiments
