#include "emulation/emulate.h"

#include <chrono>
#include <limits>
#include <memory>
#include <stdexcept>

#include "emulation/emulated_network.h"
#include "emulation/kv_server.h"
#include "emulation/tcp_link.h"

namespace kvstream::emulation {

namespace {

EmulationReport emulate_with(const sim::SimulationInputs& inputs, const RealKv* real) {
  const sim::TcpModel& path = inputs.config.tcp;
  if (!inputs.trace) throw std::invalid_argument("no bandwidth trace to emulate");
  if (inputs.trace->chunk_indexed())
    throw std::invalid_argument("trace \"" + inputs.trace->name() +
                                "\" is chunk-indexed (one rate per chunk): an emulated link needs capacity over time");
  if (!(path.rtt_s >= 0)) throw std::invalid_argument("the emulated round trip must be >= 0 s");
  if (const std::string why = emulation_unavailable_reason(); !why.empty()) throw std::runtime_error(why);

  sim::SimulationInputs in = inputs;  // the network pays the round trips the simulator adds
  in.config.request_rtt_s = 0;
  in.config.chunk_rtt_s = 0;

  // Time 0 of the event queue and of the link is a moment after the setup, so that the first
  // request does not start late.
  const auto zero = std::chrono::steady_clock::now() + std::chrono::milliseconds(300);
  NetworkConfig config;
  const uint64_t queue_limit_bytes = path.queue_bytes > 0 ? path.queue_bytes : std::numeric_limits<uint64_t>::max();
  config.link.down = {inputs.trace, inputs.config.trace_offset_s, path.rtt_s / 2, queue_limit_bytes};
  config.link.up = {nullptr, 0, path.rtt_s / 2};
  config.link.zero = zero;
  config.congestion_control = path.congestion_control;
  config.slow_start_after_idle = path.slow_start_after_idle;
  EmulatedNetwork net(config);
  KvServer server(net.server(), path.congestion_control, real ? &real->payloads : nullptr);

  sim::EventQueue events;
  events.use_real_time(zero);
  struct StopRunner {  // before the queue goes, also when an error ends the run
    sim::JobRunner* runner;
    ~StopRunner() {
      if (runner) runner->stop();
    }
  } stop_runner{real ? &real->runner : nullptr};
  std::vector<std::unique_ptr<TcpLink>> links(in.requests.size());
  EmulationReport report;
  {
    // The links go before the server: closing them ends the server's connections.
    struct CloseLinks {
      std::vector<std::unique_ptr<TcpLink>>& links;
      ~CloseLinks() { links.clear(); }
    } close_links{links};
    report.results = sim::stream_requests(in, events, [&](size_t r) -> sim::Link& {
      links[r] = std::make_unique<TcpLink>(events, net.client(), server.port(), path.congestion_control,
                                           real ? &real->received : nullptr, r);
      return *links[r];
    }, real ? &real->runner : nullptr);
  }
  const auto stats = net.link().stats();
  report.dropped_packets = stats.down.dropped_packets;
  report.delivered_packets = stats.down.packets;
  report.mean_lateness_s = stats.mean_lateness_s;
  report.max_lateness_s = stats.max_lateness_s;
  return report;
}

}  // namespace

EmulationReport emulate(const sim::SimulationInputs& inputs) { return emulate_with(inputs, nullptr); }

EmulationReport emulate(const sim::SimulationInputs& inputs, const RealKv& real) { return emulate_with(inputs, &real); }

}  // namespace kvstream::emulation
