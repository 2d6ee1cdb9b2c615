// `kvstream emulate` (docs/EMULATION.md): the simulator's inputs, but the KV really travels. An
// emulated network (emulation/emulated_network.h) joins a client and a KV server; every request
// opens its own TCP connection and its streamer (sim/streamer.h, the simulator's, with the same
// policy objects) fetches chunk after chunk over it, deciding from the transfers it has measured;
// the event queue runs in real time. With a context profile as input the server sends payloads of
// the profile's sizes, and decode and recompute take the times the simulator gives them.
#pragma once
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "sim/request_result.h"
#include "sim/simulation.h"

namespace kvstream::emulation {

struct EmulationOptions {
  double rtt_s = 0;  // the path's round trip: half each way, paid by every handshake and chunk request
  uint64_t queue_limit_bytes = std::numeric_limits<uint64_t>::max();  // of the down link's drop-tail queue
  std::string congestion_control = "cubic";
  bool slow_start_after_idle = true;
};

struct EmulationReport {
  std::vector<sim::RequestResult> results;
  uint64_t dropped_packets = 0, delivered_packets = 0;  // of the down link
  double mean_lateness_s = 0, max_lateness_s = 0;       // of the link's deliveries
};

// `inputs` as for sim::simulate; its config's request_rtt_s and chunk_rtt_s are not added (the
// network pays its round trips). Throws std::invalid_argument for inputs the simulator refuses or a
// chunk-indexed trace, and std::runtime_error when emulation is unavailable (root, namespaces, TUN)
// or a transfer fails.
EmulationReport emulate(const sim::SimulationInputs& inputs, const EmulationOptions& options);

}  // namespace kvstream::emulation
