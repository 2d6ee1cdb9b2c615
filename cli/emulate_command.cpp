// `kvstream emulate`: `simulate`'s runs, but the KV crosses a real network (docs/EMULATION.md).
#include "cli/command.h"
#include "cli/streaming_flags.h"
#include "emulation/emulate.h"
#include "sim/policy.h"

namespace kvstream::cli {
namespace {

struct Options {
  StreamingOptions streaming;
};

std::optional<Options> parse(const std::vector<std::string>& args) {
  Options o;
  StreamingFlags flags(o.streaming);
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
                     "real by every handshake and chunk request. The emulator's defaults: an unbounded drop-tail queue\n"
                     "(--queue-bytes / --queue-ms bound it), cubic (--cc: any the kernel offers), restart after idle\n"
                     "(--no-slow-start-after-idle turns it off). Needs root. The JSON is simulate's, with the path\n"
                     "(\"network\") and the link's drops and timing (\"links\") added.\n\n" +
                         sim::policy_list_help(),
                     flags.description(), vm))
    return std::nullopt;
  flags.finish(vm);
  const sim::SimConfig& c = o.streaming.config;
  if (c.request_rtt_s > 0 && c.chunk_rtt_s > 0 && c.request_rtt_s != c.chunk_rtt_s)
    throw po::error("--rtt-ms and --chunk-rtt-ms differ: an emulated path has one round trip");
  return o;
}

int run(const Options& o) {
  sim::SimulationInputs in = load_streaming_inputs(o.streaming);
  const sim::TcpModel& path = in.config.tcp;
  nlohmann::json runs = nlohmann::json::array(), links = nlohmann::json::array();
  for (const auto& policy : o.streaming.policies) {
    in.policy = policy;
    const auto report = emulation::emulate(in);
    report_policy(o.streaming, policy, report.results, runs);
    links.push_back({{"policy", policy},
                     {"dropped_packets", report.dropped_packets},
                     {"delivered_packets", report.delivered_packets},
                     {"mean_lateness_s", report.mean_lateness_s},
                     {"max_lateness_s", report.max_lateness_s}});
  }
  if (o.streaming.json)
    print_json(in, runs, {{"network", {{"rtt_s", path.rtt_s},
                                       {"queue_bytes", path.queue_bytes > 0 ? nlohmann::json(path.queue_bytes) : nlohmann::json(nullptr)},
                                       {"congestion_control", path.congestion_control},
                                       {"slow_start_after_idle", path.slow_start_after_idle}}},
                          {"links", links}});
  return 0;
}

}  // namespace

int emulate_main(const std::vector<std::string>& args) { return parse_and_run<Options>(args, parse, run); }

}  // namespace kvstream::cli
