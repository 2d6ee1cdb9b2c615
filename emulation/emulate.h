// `kvstream emulate` (docs/EMULATION.md): the simulator's inputs, but the KV really travels. An
// emulated network (emulation/emulated_network.h) joins a client and a KV server; every request
// opens its own TCP connection and its streamer (sim/streamer.h, the simulator's, with the same
// policy objects) fetches chunk after chunk over it, deciding from the transfers it has measured;
// the event queue runs in real time. With a context profile as input the server sends payloads of
// the profile's sizes, and decode and recompute take the times the simulator gives them; with real
// KV (RealKv, made by emulation/model/model_emulation.h from a model and a text) the server sends
// the real bitstreams and token ids and the client's executors decode, recompute and prefill them.
#pragma once
#include <cstdint>
#include <vector>

#include "emulation/chunk_payloads.h"
#include "sim/executor.h"
#include "sim/request_result.h"
#include "sim/simulation.h"

namespace kvstream::emulation {

struct EmulationReport {
  std::vector<sim::RequestResult> results;
  uint64_t dropped_packets = 0, delivered_packets = 0;  // of the down link
  double mean_lateness_s = 0, max_lateness_s = 0;       // of the link's deliveries
};

// An emulation runs in real time, so it has a limit (`kvstream emulate --time-limit-s`).
inline constexpr double kEmulationTimeLimitS = 600;

// How the emulator runs, not what it emulates.
struct EmulatorOptions {
  double time_limit_s = kEmulationTimeLimitS;
  // TUN devices with segmentation offload (tun_device.h, gso_packet.h): super-packets cross the link
  // thread, cut into wire segments only in its arithmetic, which is what reaches Gbit/s on two cores;
  // false: one read and one write per MTU packet (`--no-offloads`, the cross-check in docs/EMULATION.md).
  bool offloads = true;
};

// `inputs` as for sim::simulate. The emulated path is inputs.config.tcp: its round trip (half each
// way, paid by every handshake and chunk request; the config's request_rtt_s and chunk_rtt_s are not
// added), its drop-tail queue (0: unbounded), the kernel's congestion control by name, and
// tcp_slow_start_after_idle. Before anything is set up the run is simulated: a request the
// simulator says never completes (a trace without capacity from the offset on) or a run it says
// ends after the time limit is refused (std::invalid_argument, saying which and why); a run that
// is still going at the time limit in real time is stopped (std::runtime_error). Throws
// std::invalid_argument for inputs the simulator refuses or a chunk-indexed trace, and
// std::runtime_error when emulation is unavailable (root, namespaces, TUN), a transfer fails or no
// thread can be started for a connection.
EmulationReport emulate(const sim::SimulationInputs& inputs, const EmulatorOptions& options = {});

// What travels and what is done with it when the KV is real: the server's bytes, where each
// connection leaves what it reads (under its request's index), and the runner of the executors'
// jobs, which takes its bytes from there.
struct RealKv {
  const ChunkPayloads& payloads;
  ReceivedChunks& received;
  sim::JobRunner& runner;
};
EmulationReport emulate(const sim::SimulationInputs& inputs, const RealKv& real, const EmulatorOptions& options = {});

}  // namespace kvstream::emulation
