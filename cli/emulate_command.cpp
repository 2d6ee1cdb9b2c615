// `kvstream emulate`: `simulate`'s runs, but the KV crosses a real network (docs/EMULATION.md).
#include <iostream>

#include "cli/command.h"
#include "cli/model_backend.h"
#include "cli/streaming_flags.h"
#include "emulation/emulate.h"
#include "sim/policy.h"

namespace kvstream::cli {
namespace {

struct Options {
  StreamingOptions streaming;
  emulation::EmulatorOptions emulator;
  bool no_offloads = false;
  std::optional<emulation::RealKvOptions> real_kv;  // --model: the KV is real
};

std::optional<Options> parse(const std::vector<std::string>& args) {
  Options o;
  StreamingFlags flags(o.streaming, /*profile_required=*/false);
  emulation::RealKvOptions real;
  po::options_description model_options("real KV (instead of --profile; needs LibTorch)");
  model_options.add_options()
    ("model", po::value(&real.model), "model: catalog name or checkpoint path (as `run`'s contexts; models/README.md)")
    ("text", po::value(&real.text), "text file the context is taken from (data-resolved, e.g. tinystories/TinyStories-valid.txt)")
    ("context", po::value(&real.context)->default_value(0), "which window of the text: the i-th that `run` takes (it starts at character 20,000 i)")
    ("tokens", po::value(&real.tokens)->default_value(512), "context tokens")
    ("chunk-tokens", po::value(&real.chunk_tokens)->default_value(256), "tokens per chunk")
    ("codec", po::value(&real.codecs)->multitoken()->composing(), "codec spec(s) of the levels (default cachegen; docs/CODECS.md)")
    ("levels", po::value(&real.levels)->multitoken()->composing(), "ladder levels to keep (default all)")
    ("continuation-tokens", po::value(&real.continuation_tokens)->default_value(32), "K: the query is the K-1 tokens after the context, scored against the next K-1");
  po::options_description emulation_options("emulation");
  emulation_options.add_options()
    ("time-limit-s", po::value(&o.emulator.time_limit_s)->default_value(emulation::kEmulationTimeLimitS),
     "real seconds a policy's run may take: a run the simulator says takes longer (or never ends, on a trace "
     "without capacity) is refused before it starts, and one still going then is stopped")
    ("no-offloads", po::bool_switch(&o.no_offloads),
     "the link thread reads and writes every MTU packet (default: TSO super-packets, cut into segments only in "
     "its arithmetic; docs/EMULATION.md)");
  po::options_description all;
  all.add(flags.description()).add(model_options).add(emulation_options);
  po::variables_map vm;
  if (!parse_or_help(args,
                     "usage: kvstream emulate (--profile P.json [P2.json ...] | --model M --text FILE [--tokens T] ...)\n"
                     "                        --trace T [--scale X] --policy NAME [NAME ...] --slo S [--rtt-ms R]\n"
                     "                        [--queue-bytes B | --queue-ms M] [--cc CC] [simulate's options] [--json]\n\n"
                     "What `kvstream simulate` does, with a real network: two network namespaces joined by a link that\n"
                     "replays the trace Mahimahi's way (a drop-tail queue, serialization at the trace's capacity, a\n"
                     "one-way delay of half the round trip), real kernel TCP, one connection per request, and the\n"
                     "simulator's streamer and policies deciding from the transfers they measure, in real time.\n"
                     "With --profile the server sends payloads of the profile's sizes, and decode and recompute take\n"
                     "the simulator's times. With --model and --text the KV is real: the context is profiled as `run`\n"
                     "profiles it, the server sends every chunk's real bitstream or token ids, and the client decodes\n"
                     "them with the real decoder, recomputes text chunks and prefills the query with the model (CPU);\n"
                     "every time is measured, and each request's quality is the measured top-1 agreement of the\n"
                     "query's predictions after its own KV with those after the fp16 KV.\n"
                     "--rtt-ms (or --chunk-rtt-ms; one network has one round trip) is the path's round trip, paid for\n"
                     "real by every handshake and chunk request. The emulator's defaults: an unbounded drop-tail queue\n"
                     "(--queue-bytes / --queue-ms bound it), cubic (--cc: any the kernel offers), restart after idle\n"
                     "(--no-slow-start-after-idle turns it off). Needs root. The JSON is simulate's, with the path\n"
                     "(\"network\") and the link's drops and timing (\"links\") added.\n\n" +
                         sim::policy_list_help(),
                     all, vm))
    return std::nullopt;
  flags.finish(vm);
  o.emulator.offloads = !o.no_offloads;
  if (!(o.emulator.time_limit_s > 0 && o.emulator.time_limit_s <= 86400))
    throw po::error("--time-limit-s must be in (0, 86400]");
  const sim::NetworkPath& path = o.streaming.path;
  if (path.request_rtt_s > 0 && path.chunk_rtt_s > 0 && path.request_rtt_s != path.chunk_rtt_s)
    throw po::error("--rtt-ms and --chunk-rtt-ms differ: an emulated path has one round trip");
  const bool with_profile = vm.count("profile") > 0, with_model = vm.count("model") > 0;
  if (with_profile == with_model) throw po::error("give --profile or --model (with --text), one of them");
  if (!with_model) {
    for (const char* flag : {"text", "codec", "levels"})
      if (vm.count(flag)) throw po::error(std::string("--") + flag + " goes with --model");
    return o;
  }
  if (real.text.empty()) throw po::error("--model needs --text, the file its context is taken from");
  if (o.streaming.config.query_tokens > 0)
    throw po::error("--query-tokens: with --model the query is the continuation's tokens (--continuation-tokens)");
  if (real.context < 0) throw po::error("--context must be >= 0");
  if (real.tokens < 1) throw po::error("--tokens must be >= 1");
  if (real.chunk_tokens < 1) throw po::error("--chunk-tokens must be >= 1");
  if (real.continuation_tokens < 2) throw po::error("--continuation-tokens must be >= 2");
  if (real.codecs.empty()) real.codecs = {"cachegen"};
  o.real_kv = real;
  return o;
}

int run(const Options& o) {
  std::unique_ptr<emulation::RealKvContext> real_kv;
  if (o.real_kv) {
    const RealKvPreparer prepare = real_kv_preparer();
    if (!prepare)
      throw std::runtime_error("kvstream emulate --model runs a model: this kvstream was built without LibTorch "
                               "(-DWITH_TORCH=OFF); build it with LibTorch (bash scripts/setup.sh), or give --profile");
    real_kv = prepare(*o.real_kv, [](const std::string& line) { std::cerr << line << "\n"; });
  }
  sim::SimulationInputs in = real_kv ? load_streaming_inputs(o.streaming, {real_kv->profile()})
                                     : load_streaming_inputs(o.streaming);
  const sim::TcpModel& path = in.config.tcp;
  nlohmann::json runs = nlohmann::json::array(), links = nlohmann::json::array();
  for (const auto& policy : o.streaming.policies) {
    in.policy = policy;
    const auto report = real_kv ? real_kv->emulate(in, o.emulator) : emulation::emulate(in, o.emulator);
    report_policy(o.streaming, policy, report.results, runs);
    links.push_back({{"policy", policy},
                     {"dropped_packets", report.dropped_packets},
                     {"delivered_packets", report.delivered_packets},
                     {"mean_lateness_s", report.mean_lateness_s},
                     {"max_lateness_s", report.max_lateness_s}});
  }
  if (o.streaming.json) {
    nlohmann::json extra = {{"network", {{"rtt_s", path.rtt_s},
                                         {"queue_bytes", path.queue_bytes > 0 ? nlohmann::json(path.queue_bytes) : nlohmann::json(nullptr)},
                                         {"congestion_control", path.congestion_control},
                                         {"slow_start_after_idle", path.slow_start_after_idle}}},
                            {"links", links}};
    if (real_kv) extra["context"] = {{"kv", "real"}, {"model", real_kv->profile().model}, {"profile", sim::to_json(real_kv->profile())}};
    print_json(in, runs, extra);
  }
  return 0;
}

}  // namespace

int emulate_main(const std::vector<std::string>& args) { return parse_and_run<Options>(args, parse, run); }

}  // namespace kvstream::cli
