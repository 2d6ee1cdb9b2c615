// `kvstream emulate`: `simulate`'s runs, but the KV crosses a real network (docs/EMULATION.md).
#include <algorithm>
#include <cmath>

#include "cli/command.h"
#include "cli/streaming_flags.h"
#include "emulation/emulate.h"
#include "sim/policy.h"

namespace kvstream::cli {
namespace {

struct Options {
  StreamingOptions streaming;
  emulation::EmulationOptions network;
  double queue_ms = 0;  // > 0: the queue limit in milliseconds at the trace's mean rate
};

std::optional<Options> parse(const std::vector<std::string>& args) {
  Options o;
  StreamingFlags flags(o.streaming);
  uint64_t queue_bytes = 0;
  po::options_description network("emulated network");
  network.add_options()
    ("queue-bytes", po::value(&queue_bytes), "the down link's drop-tail queue, bytes (default: unbounded)")
    ("queue-ms", po::value(&o.queue_ms), "or the queue as milliseconds at the (scaled) trace's mean rate");
  flags.description().add(network);
  po::variables_map vm;
  if (!parse_or_help(args,
                     "usage: kvstream emulate --profile P.json [P2.json ...] --trace T [--scale X] --policy NAME [NAME ...]\n"
                     "                        --slo S [--hardware H] [--rtt-ms R] [--queue-bytes B | --queue-ms M] [--cc CC]\n"
                     "                        [simulate's options] [--json]\n\n"
                     "What `kvstream simulate` does, with a real network: two network namespaces joined by a link that\n"
                     "replays the trace Mahimahi's way (a drop-tail queue, serialization at the trace's capacity, a\n"
                     "one-way delay of half the round trip), real kernel TCP, one connection per request, and the\n"
                     "simulator's streamer and policies deciding from the transfers they measure, in real time. The\n"
                     "server sends payloads of the profile's sizes; decode and recompute take the simulator's times.\n"
                     "--rtt-ms (or --chunk-rtt-ms; one network has one round trip) is the path's round trip, paid for\n"
                     "real by every handshake and chunk request. Needs root. The JSON is simulate's, with the link's\n"
                     "drops and timing added.\n\n" +
                         sim::policy_list_help(),
                     flags.description(), vm))
    return std::nullopt;
  flags.finish(vm);
  const sim::SimConfig& c = o.streaming.config;
  if (c.request_rtt_s > 0 && c.chunk_rtt_s > 0 && c.request_rtt_s != c.chunk_rtt_s)
    throw po::error("--rtt-ms and --chunk-rtt-ms differ: an emulated path has one round trip");
  o.network.rtt_s = std::max(c.request_rtt_s, c.chunk_rtt_s);
  if (vm.count("queue-bytes") && vm.count("queue-ms")) throw po::error("give --queue-bytes or --queue-ms, not both");
  if (vm.count("queue-bytes")) {
    if (queue_bytes < 1500) throw po::error("--queue-bytes must hold a packet (>= 1500)");
    o.network.queue_limit_bytes = queue_bytes;
  }
  if (vm.count("queue-ms") && !(o.queue_ms > 0)) throw po::error("--queue-ms must be > 0");
  o.network.congestion_control = o.streaming.congestion_control;
  o.network.slow_start_after_idle = o.streaming.slow_start_after_idle;
  return o;
}

int run(const Options& o) {
  sim::SimulationInputs in = load_streaming_inputs(o.streaming);
  emulation::EmulationOptions network = o.network;
  if (o.queue_ms > 0)
    network.queue_limit_bytes = std::max<uint64_t>(1500, uint64_t(o.queue_ms / 1e3 * in.trace->mean_bps() / 8));
  nlohmann::json runs = nlohmann::json::array(), links = nlohmann::json::array();
  for (const auto& policy : o.streaming.policies) {
    in.policy = policy;
    const auto report = emulation::emulate(in, network);
    report_policy(o.streaming, policy, report.results, runs);
    links.push_back({{"policy", policy},
                     {"dropped_packets", report.dropped_packets},
                     {"delivered_packets", report.delivered_packets},
                     {"mean_lateness_s", report.mean_lateness_s},
                     {"max_lateness_s", report.max_lateness_s}});
  }
  if (o.streaming.json)
    print_json(in, runs, {{"network", {{"rtt_s", network.rtt_s}, {"queue_limit_bytes", network.queue_limit_bytes},
                                       {"congestion_control", network.congestion_control},
                                       {"slow_start_after_idle", network.slow_start_after_idle}}},
                          {"links", links}});
  return 0;
}

}  // namespace

int emulate_main(const std::vector<std::string>& args) { return parse_and_run<Options>(args, parse, run); }

}  // namespace kvstream::cli
