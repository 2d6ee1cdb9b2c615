// `kvstream fidelity --rescore DIR` (docs/EMULATION.md "`kvstream fidelity`"): the runs of an earlier
// fidelity result directory, read back with their stored emulations so that the simulator can be
// held against them again without emulating (nor root). DIR may come from elsewhere
// (docs/THREAT_MODEL.md): a run that does not fit the config would move the reported errors without
// anyone noticing, so everything is checked before a run is simulated, and the first problem is an
// error naming the file, the line and the JSON path:
//   - DIR/config.json is the config given (else: the first JSON path where they differ);
//   - every line of DIR/fidelity.jsonl is a case the config plans (plan_fidelity: its trace, round
//     trip, queue, congestion control, workload, policy, SLO, offset and context), with the trace
//     mean and queue the config gives now;
//   - no case twice (both lines named) and none missing (a file cut at a line end names the first
//     missing case);
//   - every stored request: the workload's count, indices in order, completed with a TTFT > 0, one
//     choice and one chunk time per chunk of its context, each choice a level of its profile or text.
#pragma once
#include <filesystem>
#include <vector>

#include "common/json_reader.h"
#include "emulation/fidelity.h"

namespace kvstream::emulation {

// One line of fidelity.jsonl: the case it ran and what the emulator measured.
struct StoredRun {
  FidelityCase fidelity_case;
  EmulationReport emulated;
};

// One line, checked against `runner`'s config and contexts (the per-line checks above). Throws
// common::JsonError naming `line`'s JSON path.
StoredRun parse_stored_run(const FidelityRunner& runner, const common::JsonNode& line);

// DIR's runs in file order, every check above made. Throws common::JsonError (a line's JSON path) or
// std::runtime_error (the file, a missing or duplicate case, a config that differs).
std::vector<StoredRun> read_stored_runs(const FidelityRunner& runner, const std::filesystem::path& dir);

}  // namespace kvstream::emulation
