// One simulation: contexts (profiles), a trace, an optional hardware profile, a config, a policy
// and a workload in; one result per request out. Equal inputs give identical results.
#pragma once
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "sim/context_profile.h"
#include "sim/event_queue.h"
#include "sim/executor.h"
#include "sim/hardware_profile.h"
#include "sim/link.h"
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

// The link a request's chunks travel over: the simulator gives every request its one shared link,
// the emulator each request its own TCP connection.
using LinkForRequest = std::function<Link&(size_t request)>;

// What simulate does once it has its event queue and links, shared with the emulator (which runs
// the queue in real time): a streamer per request from its arrival to its first token, with the
// policy, executors and costs of `inputs`. Throws as simulate does; checks nothing of the trace.
// With a `runner` (real-time events only), the executors do the jobs' real work (sim/executor.h).
std::vector<RequestResult> stream_requests(const SimulationInputs& inputs, EventQueue& events,
                                           const LinkForRequest& link_for, JobRunner* runner = nullptr);

}  // namespace kvstream::sim
