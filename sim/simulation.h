// One simulation: contexts (profiles), a trace, an optional hardware profile, a config, a policy
// and a workload in; one result per request out. Equal inputs give identical results.
#pragma once
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "sim/context_profile.h"
#include "sim/hardware_profile.h"
#include "sim/request_result.h"
#include "sim/sim_config.h"
#include "sim/workload.h"
#include "traces/bandwidth_trace.h"

namespace kvstream::sim {

struct SimulationInputs {
  std::vector<ContextProfile> contexts;
  std::shared_ptr<const traces::BandwidthTrace> trace;  // shared: sweeps run many simulations on one trace
  std::optional<HardwareProfile> hardware;
  SimConfig config;
  std::string policy = "cachegen";
  std::vector<Request> requests = single_request();
};

struct SimulationStats {
  uint64_t events = 0;
};

// Throws std::invalid_argument for inputs that cannot be simulated (no trace, an unknown policy or level,
// a request for a context that does not exist, text without a recompute cost, a chunk-indexed
// trace with concurrent requests, a negative SLO or RTT).
std::vector<RequestResult> simulate(const SimulationInputs& inputs, SimulationStats* stats = nullptr);

}  // namespace kvstream::sim
