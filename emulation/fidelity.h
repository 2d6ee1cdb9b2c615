// `kvstream fidelity` (docs/EMULATION.md "`kvstream fidelity`"): every case of a fidelity config
// run both ways on the same trace offsets, emulated (emulate.h) and simulated with each link model
// the config names, so that the simulator's TTFT and chunk transfer times can be held against a
// real network.
#pragma once
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "emulation/emulate.h"
#include "emulation/fidelity_config.h"
#include "sim/network_path.h"
#include "sim/simulation.h"

namespace kvstream::emulation {

// One run: a network path, a workload, a policy and an SLO, at a trace offset.
struct FidelityCase {
  size_t trace = 0, queue = 0, workload = 0;  // indices into the config's lists
  double rtt_ms = 0;
  std::string congestion_control, policy;
  double slo_s = 0, offset_s = 0;
  size_t context = 0;  // single requests: the context requested
};

// The cases in order: network paths (trace, RTT, queue, congestion control, nested in that order),
// then workloads, (policy, SLO) pairs, offsets (a rotating workload leaves some out, Rotation).
std::vector<FidelityCase> plan_fidelity(const FidelityConfig& config);

struct FidelityRun {
  FidelityCase fidelity_case;
  double trace_mean_mbps = 0;  // of the scaled trace
  uint64_t queue_bytes = 0;    // 0: unbounded
  EmulationReport emulated;
  std::vector<std::vector<sim::RequestResult>> simulated;  // per config.link_models
};

class FidelityRunner {
 public:
  // Loads the profiles and traces (scaled); throws for any that cannot be read. `hardware`: the
  // config's hardware profile, loaded by the caller (shipped names live in profiling/).
  FidelityRunner(const FidelityConfig& config, std::optional<sim::HardwareProfile> hardware);
  const FidelityConfig& config() const { return config_; }
  const traces::BandwidthTrace& trace(size_t index) const { return *traces_[index]; }
  const std::vector<sim::ContextProfile>& contexts() const { return contexts_; }  // as read (names, count)

  // The network path of `c` with `link_model` ("fluid" or "tcp"): round trips of c.rtt_ms before each
  // request and each chunk, the case's queue and congestion control.
  sim::NetworkPath path(const FidelityCase& c, const std::string& link_model) const;
  // The simulator's inputs of `c` with `link_model`: its path applied (sim/network_path.h).
  sim::SimulationInputs inputs(const FidelityCase& c, const std::string& link_model) const;
  uint64_t queue_bytes(const FidelityCase& c) const;
  // Emulates `c`, then simulates it with every link model. Throws what emulate() throws.
  FidelityRun run(const FidelityCase& c) const;
  // The run of `c` with an emulation made before (fidelity_rescore.h reads them back) simulated again
  // with every link model: the simulator's error after a change to it, without emulating again.
  FidelityRun rescore(const FidelityCase& c, EmulationReport emulated) const;

 private:
  // The run of `c` with its emulation and a simulation with each link model.
  FidelityRun simulated_beside(const FidelityCase& c, EmulationReport emulated) const;

  FidelityConfig config_;
  std::vector<sim::ContextProfile> contexts_;
  std::vector<std::vector<sim::ContextProfile>> trace_contexts_;  // per trace: its kv_bytes_scale applied
  std::vector<std::shared_ptr<const traces::BandwidthTrace>> traces_;
  std::optional<sim::HardwareProfile> hardware_;
};

// A run as one line of fidelity.jsonl (experiments/SCHEMA.md §10).
nlohmann::json to_json(const FidelityConfig& config, const FidelityRun& run);

}  // namespace kvstream::emulation
