// `kvstream simulate`: streaming contexts over a bandwidth trace with adaptation policies (sim/README.md).
#include <iomanip>
#include <iostream>

#include "cli/command.h"
#include "profiling/shipped_profiles.h"
#include "sim/policy.h"
#include "sim/simulation.h"
#include "sim/summary.h"
#include "traces/trace_inputs.h"
#include "traces/trace_transforms.h"

namespace kvstream::cli {
namespace {

struct Options {
  std::vector<std::string> profile_paths, policies;
  std::string trace_arg, trace_format, hardware_arg;
  double scale = 1, rate = 0;
  int64_t requests = 1;
  uint64_t seed = 1;
  bool json = false;
  sim::SimConfig config;
};

// The --decode argument: profile, hardware, or a rate in fp16 bytes/s.
void parse_decode(const std::string& decode, const std::string& hardware, sim::SimConfig& config) {
  if (decode == "profile") return;
  if (decode == "hardware") {
    if (hardware.empty()) throw po::error("--decode hardware needs --hardware");
    config.decode_time = sim::DecodeTime::kHardware;
    return;
  }
  try {
    size_t used = 0;
    config.decode_fp16_bytes_per_s = std::stod(decode, &used);
    if (used != decode.size()) throw std::invalid_argument(decode);
  } catch (const std::exception&) {
    throw po::error("--decode: expected profile, hardware or a rate in fp16 bytes/s, got \"" + decode + "\"");
  }
  if (!(config.decode_fp16_bytes_per_s > 0)) throw po::error("--decode: a rate must be > 0 fp16 bytes/s");
  config.decode_time = sim::DecodeTime::kThroughput;
}

std::optional<Options> parse(const std::vector<std::string>& args) {
  Options o;
  sim::SimConfig& config = o.config;
  std::string decode;
  double rtt_ms = 0, chunk_rtt_ms = 0, recompute_s = -1;
  bool no_pipelining = false, shared_gpu = false, artifact_timing = false, no_decode_cost = false;
  po::options_description options("options");
  options.add_options()
    ("profile", po::value(&o.profile_paths)->multitoken()->composing()->required(), "context profile JSON(s) (sim/README.md), or synthetic")
    ("trace", po::value(&o.trace_arg)->required(), "trace file, FILE#k, or generator spec (traces/README.md)")
    ("trace-format", po::value(&o.trace_format)->default_value("auto"), "auto, mahimahi, pensieve, lumos5g, cachegen, csv")
    ("scale", po::value(&o.scale)->default_value(1.0), "multiply the trace's capacity by X (cellular Mbps -> datacenter Gbps)")
    ("trace-offset", po::value(&config.trace_offset_s)->default_value(0.0), "trace time (s) at simulated time 0")
    ("policy", po::value(&o.policies)->multitoken()->composing()->required(), "policy spec(s); one simulation each")
    ("slo", po::value(&config.slo_s)->required(), "TTFT objective, seconds")
    ("hardware", po::value(&o.hardware_arg)->default_value(""), "hardware profile JSON or shipped name (e.g. a40_mistral-7b)")
    ("query-tokens", po::value(&config.query_tokens)->default_value(0), "query tokens prefilled after the context (needs --hardware)")
    ("rtt-ms", po::value(&rtt_ms)->default_value(0.0), "round trip once per request, ms")
    ("chunk-rtt-ms", po::value(&chunk_rtt_ms)->default_value(0.0), "round trip before every chunk's bytes, ms")
    ("no-pipelining", po::bool_switch(&no_pipelining), "request chunk i+1 only after chunk i's KV is ready (the artifact)")
    ("shared-gpu", po::bool_switch(&shared_gpu), "decode and prefill share one FIFO executor (no overlap)")
    ("no-decode-cost", po::bool_switch(&no_decode_cost), "decoding takes no time")
    ("decode", po::value(&decode)->default_value("profile"), "decode time per level chunk: profile (its decode_s), hardware (tokens x fp16 bytes/token over the --hardware profile's measured throughput of the level's codec and level), or a rate in fp16 KV bytes/s")
    ("recompute-s", po::value(&recompute_s), "every text chunk costs this many seconds in all (the artifact's chunk_delay)")
    ("artifact-timing", po::bool_switch(&artifact_timing), "the artifact's timing: --no-pipelining --no-decode-cost --recompute-s 0.2 unless given")
    ("requests", po::value(&o.requests)->default_value(1), "number of requests (> 1 needs --rate)")
    ("rate", po::value(&o.rate)->default_value(0.0), "Poisson arrival rate, requests/s; contexts drawn uniformly from the profiles")
    ("seed", po::value(&o.seed)->default_value(1), "seed of the arrivals")
    ("json", po::bool_switch(&o.json), "JSON: {\"runs\": [{\"policy\", \"summary\", \"requests\": [...]}], ...}");
  po::variables_map vm;
  if (!parse_or_help(args,
                     "usage: kvstream simulate --profile P.json [P2.json ...] --trace T [--trace-format F] [--scale X]\n"
                     "                         --policy NAME [NAME ...] --slo S [--hardware H.json] [options] [--json]\n\n"
                     "Streams each request's context chunk by chunk over a link whose capacity follows the trace;\n"
                     "before each chunk the policy picks a level of the profile or text (recompute); arrived chunks\n"
                     "are decoded while later ones are in flight; TTFT ends with the query's prefill.\n"
                     "Per request: ttft_s, slo_met, breakdown (busy seconds of transfer, decode, recompute,\n"
                     "query_prefill; queueing), bytes, quality (token-weighted profile quality, text = 1), choices.\n"
                     "--profile synthetic: a Mistral-7B-shaped 10 x 1500-token context at the codec's measured\n"
                     "ratios and stories260K's measured quality, with an assumed 2 GB/s decoder (sim/context_profile.h).\n\n" +
                         sim::policy_list_help(),
                     options, vm))
    return std::nullopt;
  if (o.requests < 1) throw po::error("--requests must be >= 1");
  if (o.requests > 1 && !(o.rate > 0)) throw po::error("--requests > 1 needs a Poisson --rate > 0");
  if (!(o.scale > 0)) throw po::error("--scale must be > 0");
  config.pipelining = !no_pipelining;
  config.overlap_decode_prefill = !shared_gpu;
  config.decode_costs_time = !no_decode_cost;
  parse_decode(decode, o.hardware_arg, config);
  if (vm.count("recompute-s")) {
    if (recompute_s < 0) throw po::error("--recompute-s must be >= 0");
    config.fixed_recompute_s = recompute_s;
  }
  if (artifact_timing) config = sim::with_artifact_timing(config);
  config.request_rtt_s = rtt_ms / 1e3;
  config.chunk_rtt_s = chunk_rtt_ms / 1e3;
  return o;
}

void print_human(const std::string& policy, const std::vector<sim::RequestResult>& results, const sim::Summary& summary) {
  std::cout << "policy " << policy << "\n";
  if (results.size() <= 20) {
    for (const auto& r : results) {
      std::cout << "  request " << r.request << " (" << r.context << ", arrival " << r.arrival_s << " s): ";
      if (!r.completed) {
        std::cout << "never completed (the trace delivers no bits)\n";
        continue;
      }
      std::cout << std::fixed << std::setprecision(4) << "TTFT " << r.ttft_s << " s" << (r.slo_met ? "" : " (SLO missed)")
                << ", " << std::setprecision(2) << r.bytes / 1e6 << " MB, quality " << std::setprecision(4) << r.quality
                << std::defaultfloat << "\n    chunks:";
      for (const auto& choice : r.choices) std::cout << " " << choice;
      std::cout << "\n    busy: transfer " << r.transfer_s << " s, decode " << r.decode_s << " s, recompute "
                << r.recompute_s << " s, query prefill " << r.query_prefill_s << " s, queueing " << r.queueing_s << " s\n";
    }
  }
  std::cout << std::fixed << std::setprecision(4) << "  summary: " << summary.completed << "/" << summary.requests
            << " completed, TTFT mean " << summary.mean_ttft_s << " s, p50 " << summary.p50_ttft_s << " s, p95 "
            << summary.p95_ttft_s << " s, SLO violations " << std::setprecision(1) << 100 * summary.slo_violation_rate
            << " %, mean " << std::setprecision(2) << summary.mean_bytes / 1e6 << " MB, quality " << std::setprecision(4)
            << summary.mean_quality << std::defaultfloat << "\n";
}

sim::SimulationInputs load_inputs(const Options& o) {
  sim::SimulationInputs in{{}, nullptr, std::nullopt, o.config};
  for (const auto& path : o.profile_paths)
    in.contexts.push_back(path == "synthetic" ? sim::synthetic_profile({}) : sim::read_context_profile(input_path(path)));
  auto trace = traces::load_one_trace(o.trace_arg, o.trace_format);
  if (o.scale != 1) trace = traces::scale(trace, o.scale);
  in.trace = std::make_shared<traces::BandwidthTrace>(std::move(trace));
  if (!o.hardware_arg.empty()) in.hardware = sim::read_hardware_profile(profiling::resolve_hardware_profile(o.hardware_arg));
  in.requests = o.requests == 1 ? sim::single_request()
                                : sim::poisson_requests(o.rate, static_cast<size_t>(o.requests), in.contexts.size(), o.seed);
  return in;
}

int run(const Options& o) {
  sim::SimulationInputs in = load_inputs(o);
  nlohmann::json runs = nlohmann::json::array();
  for (const auto& policy : o.policies) {
    in.policy = policy;
    const auto results = sim::simulate(in);
    const auto summary = sim::summarize(results);
    if (!o.json) {
      print_human(policy, results, summary);
      continue;
    }
    nlohmann::json rows = nlohmann::json::array();
    for (const auto& r : results) rows.push_back(sim::to_json(r));
    runs.push_back({{"policy", policy}, {"summary", sim::to_json(summary)}, {"requests", rows}});
  }
  if (o.json)
    std::cout << nlohmann::json{{"trace", in.trace->name()},
                                {"slo_s", o.config.slo_s},
                                {"hardware", in.hardware ? in.hardware->device + " (" + in.hardware->kind + ")" : ""},
                                {"runs", runs}}
                     .dump(1)
              << "\n";
  return 0;
}

}  // namespace

int simulate_main(const std::vector<std::string>& args) { return parse_and_run<Options>(args, parse, run); }

}  // namespace kvstream::cli
