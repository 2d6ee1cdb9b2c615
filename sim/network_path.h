// A run's network path (docs/EMULATION.md "The simulator's link models"): the simulator's link model
// and the path it models (the round trips, the bottleneck's drop-tail queue, the congestion control,
// restart after idle), and the one function that writes it into a SimConfig. `simulate`, `emulate`,
// `fidelity` and `run` each describe their path as a NetworkPath and apply it here, so an option
// reaches all four by construction (tests/cli/test_network_path.cpp holds them against each other).
#pragma once
#include <cstdint>
#include <string>

#include "sim/sim_config.h"

namespace kvstream::sim {

// The bottleneck's drop-tail queue: `bytes`, or `ms` at the (scaled) trace's mean rate; neither:
// unbounded (no loss).
struct QueueSize {
  uint64_t bytes = 0;
  double ms = 0;
  uint64_t bytes_at(double trace_mean_bps) const;  // 0: unbounded; else at least one packet
};

struct NetworkPath {
  LinkModel link_model = LinkModel::kFluid;
  // Paid once per request and before every chunk's bytes; a path with one round trip sets both.
  double request_rtt_s = 0, chunk_rtt_s = 0;
  QueueSize queue;
  std::string congestion_control = "cubic";  // sim/tcp/congestion_control.h (the emulator: any the kernel has)
  bool slow_start_after_idle = true;         // net.ipv4.tcp_slow_start_after_idle
};

// Sets `config`'s link_model, request_rtt_s, chunk_rtt_s and tcp: the modelled connection's round
// trip is the larger of the two, its queue `path.queue` at `trace_mean_bps`.
void apply_network_path(const NetworkPath& path, double trace_mean_bps, SimConfig& config);

}  // namespace kvstream::sim
