#include "emulation/emulate.h"

#include <algorithm>
#include <chrono>
#include <iomanip>
#include <limits>
#include <memory>
#include <sstream>
#include <stdexcept>

#include "emulation/emulated_network.h"
#include "emulation/kv_server.h"
#include "emulation/tcp_link.h"

namespace kvstream::emulation {

namespace {

// Between the start of the link (the namespaces and devices are ready) and time 0, in which the
// server starts listening (about 1 ms).
constexpr std::chrono::milliseconds kHeadStart{20};

std::string seconds(double s) {
  std::ostringstream text;
  text << std::setprecision(3) << s << " s";
  return text.str();
}

// Refuses a run that would never end or end after the limit, by the simulator's account of it.
void check_duration(const sim::SimulationInputs& inputs, double time_limit_s) {
  if (!(time_limit_s > 0)) throw std::invalid_argument("the emulation's time limit must be > 0 s");
  double end_s = 0;
  for (const auto& r : sim::simulate(inputs)) {
    if (!r.completed)
      throw std::invalid_argument("trace \"" + inputs.trace->name() + "\" delivers no bits from its offset " +
                                  seconds(inputs.config.trace_offset_s) + " on: request " + std::to_string(r.request) +
                                  " can never complete (kvstream simulate reports it so), and an emulation would wait "
                                  "for ever");
    end_s = std::max(end_s, r.arrival_s + r.ttft_s);
  }
  if (end_s > time_limit_s)
    throw std::invalid_argument("this emulation would take about " + seconds(end_s) +
                                " of real time (the simulator's estimate on this trace), more than its limit of " +
                                seconds(time_limit_s) + " (--time-limit-s): give a trace with more capacity, fewer "
                                "requests, or a higher limit");
}

EmulationReport emulate_with(const sim::SimulationInputs& inputs, const RealKv* real, const EmulatorOptions& options) {
  const double time_limit_s = options.time_limit_s;
  const sim::TcpModel& path = inputs.config.tcp;
  if (!inputs.trace) throw std::invalid_argument("no bandwidth trace to emulate");
  if (inputs.trace->chunk_indexed())
    throw std::invalid_argument("trace \"" + inputs.trace->name() +
                                "\" is chunk-indexed (one rate per chunk): an emulated link needs capacity over time");
  if (!(path.rtt_s >= 0)) throw std::invalid_argument("the emulated round trip must be >= 0 s");
  check_duration(inputs, time_limit_s);
  if (const std::string why = emulation_unavailable_reason(); !why.empty()) throw std::runtime_error(why);

  sim::SimulationInputs in = inputs;  // the network pays the round trips the simulator adds
  in.config.request_rtt_s = 0;
  in.config.chunk_rtt_s = 0;

  NetworkConfig config;
  const uint64_t queue_limit_bytes = path.queue_bytes > 0 ? path.queue_bytes : std::numeric_limits<uint64_t>::max();
  config.link.down = {inputs.trace, inputs.config.trace_offset_s, path.rtt_s / 2, queue_limit_bytes};
  config.link.up = {nullptr, 0, path.rtt_s / 2};
  // Time 0 of the event queue and of the link is a moment after the setup, so that the first
  // request does not start late.
  config.link.head_start = kHeadStart;
  config.link.offloads = options.offloads;
  config.congestion_control = path.congestion_control;
  config.slow_start_after_idle = path.slow_start_after_idle;
  EmulatedNetwork net(config);
  KvServer server(net.server(), path.congestion_control, real ? &real->payloads : nullptr);

  const auto zero = net.link().zero();
  if (std::chrono::steady_clock::now() > zero)
    throw std::runtime_error("the emulated server took longer to start listening than the link's head start of " +
                             seconds(std::chrono::duration<double>(kHeadStart).count()) +
                             ": the first request would start late (an emulation needs idle cores)");
  sim::EventQueue events;
  events.use_real_time(zero, time_limit_s);
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
    try {
      report.results = sim::stream_requests(in, events, [&](size_t r) -> sim::Link& {
        links[r] = std::make_unique<TcpLink>(events, net.client(), server.port(), path.congestion_control,
                                             real ? &real->received : nullptr, r);
        return *links[r];
      }, real ? &real->runner : nullptr);
    } catch (const sim::RealTimeDeadlinePassed&) {
      throw std::runtime_error("the emulation ran past its time limit of " + seconds(time_limit_s) +
                               " (--time-limit-s) with requests unfinished: the real network delivered far more "
                               "slowly than the simulator's estimate");
    } catch (const std::exception& e) {
      if (const std::string failure = server.failure(); !failure.empty())
        throw std::runtime_error(std::string(e.what()) + "; " + failure);
      throw;
    }
  }
  const auto stats = net.link().stats();
  report.dropped_packets = stats.down.dropped_packets;
  report.delivered_packets = stats.down.packets;
  report.mean_lateness_s = stats.mean_lateness_s;
  report.max_lateness_s = stats.max_lateness_s;
  return report;
}

}  // namespace

EmulationReport emulate(const sim::SimulationInputs& inputs, const EmulatorOptions& options) {
  return emulate_with(inputs, nullptr, options);
}

EmulationReport emulate(const sim::SimulationInputs& inputs, const RealKv& real, const EmulatorOptions& options) {
  return emulate_with(inputs, &real, options);
}

}  // namespace kvstream::emulation
