#include "cli/streaming_flags.h"

#include <algorithm>
#include <iomanip>
#include <iostream>
#include <sstream>

#include "profiling/shipped_profiles.h"
#include "sim/policy.h"
#include "sim/sim_config.h"
#include "sim/summary.h"
#include "sim/tcp/congestion_control.h"
#include "sim/workload.h"
#include "traces/trace_inputs.h"
#include "traces/trace_transforms.h"

namespace kvstream::cli {

namespace {

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

}  // namespace

StreamingFlags::StreamingFlags(StreamingOptions& o, bool profile_required) : o_(o) {
  sim::SimConfig& config = o.config;
  auto* profiles = po::value(&o.profile_paths)->multitoken()->composing();
  if (profile_required) profiles->required();
  description_.add_options()
    ("profile", profiles, "context profile JSON(s) (sim/README.md), or synthetic")
    ("trace", po::value(&o.trace_arg)->required(), "trace file, FILE#k, or generator spec (traces/README.md)")
    ("trace-format", po::value(&o.trace_format)->default_value("auto"), "auto, mahimahi, pensieve, lumos5g, cachegen, csv")
    ("scale", po::value(&o.scale)->default_value(1.0), "multiply the trace's capacity by X (cellular Mbps -> datacenter Gbps)")
    ("trace-offset", po::value(&config.trace_offset_s)->default_value(0.0), "trace time (s) at time 0 (0 to 1e9)")
    ("policy", po::value(&o.policies)->multitoken()->composing()->required(), "policy spec(s); one run each")
    ("slo", po::value(&config.slo_s)->required(), "TTFT objective, seconds (up to 1e6)")
    ("hardware", po::value(&o.hardware_arg)->default_value(""), "hardware profile JSON or shipped name (e.g. a40_mistral-7b)")
    ("query-tokens", po::value(&config.query_tokens)->default_value(0), "query tokens prefilled after the context (needs --hardware)")
    ("rtt-ms", po::value(&rtt_ms_)->default_value(0.0), "round trip once per request, ms (0 to 1e6)")
    ("chunk-rtt-ms", po::value(&chunk_rtt_ms_)->default_value(0.0), "round trip before every chunk's bytes, ms (0 to 1e6)")
    ("no-pipelining", po::bool_switch(&no_pipelining_), "request chunk i+1 only after chunk i's KV is ready (the artifact)")
    ("shared-gpu", po::bool_switch(&shared_gpu_), "decode and prefill share one FIFO executor (no overlap)")
    ("no-decode-cost", po::bool_switch(&no_decode_cost_), "decoding takes no time")
    ("decode", po::value(&decode_)->default_value("profile"), "decode time per level chunk: profile (its decode_s), hardware (tokens x fp16 bytes/token over the --hardware profile's measured throughput of the level's codec and level), or a rate in fp16 KV bytes/s")
    ("recompute-s", po::value(&recompute_s_), "every text chunk costs this many seconds in all (the artifact's chunk_delay)")
    ("artifact-timing", po::bool_switch(&artifact_timing_), "the artifact's timing: --no-pipelining --no-decode-cost --recompute-s 0.2 unless given")
    ("requests", po::value(&o.requests)->default_value(1), "number of requests (> 1 needs --rate; at most 1,000,000)")
    ("rate", po::value(&o.rate)->default_value(0.0), "Poisson arrival rate, requests/s (1e-6 to 1e9); contexts drawn uniformly from the profiles")
    ("seed", po::value(&o.seed)->default_value(1), "seed of the arrivals")
    ("link", po::value(&link_)->default_value("tcp"), "the link model: tcp (one modelled TCP connection per request: headers, slow start, the congestion control's window, drop-tail losses, restart after idle; docs/EMULATION.md) or fluid (the trace's capacity, shared: the paper's and the artifact's model). Policies plan with it (emulate: with the real network's model)")
    ("cc", po::value(&o.path.congestion_control)->default_value("cubic"), "TCP congestion control (default cubic, Linux's): emulate takes any the kernel offers; the tcp link model has cubic, reno, bbr")
    ("no-slow-start-after-idle", po::bool_switch(&no_slow_start_after_idle_), "TCP keeps its window over idle gaps (net.ipv4.tcp_slow_start_after_idle=0; default: restarts, as Linux)")
    ("queue-bytes", po::value(&queue_bytes_), "the bottleneck's drop-tail queue, bytes (1500 to 1e12; default: unbounded, no loss)")
    ("queue-ms", po::value(&o.path.queue.ms), "or the queue as milliseconds at the (scaled) trace's mean rate")
    ("json", po::bool_switch(&o.json), "JSON: {\"runs\": [{\"policy\", \"summary\", \"requests\": [...]}], ...}");
}

void StreamingFlags::finish(const po::variables_map& vm) {
  sim::SimConfig& config = o_.config;
  if (o_.requests < 1) throw po::error("--requests must be >= 1");
  if (uint64_t(o_.requests) > sim::kMaxRequests)
    throw po::error("--requests must be <= " + std::to_string(sim::kMaxRequests) + " (each keeps its result in memory)");
  if (o_.requests > 1 && !(o_.rate > 0)) throw po::error("--requests > 1 needs a Poisson --rate > 0");
  // Times and rates within bounds no experiment comes near, so that every simulated time is finite
  // (a round trip of 1e308 ms once gave a TTFT of 1e305 s; a rate of 1e-308 an infinite arrival).
  const auto within = [](const char* flag, double value, double lo, double hi, bool lo_open = false) {
    if ((lo_open ? value > lo : value >= lo) && value <= hi) return;
    std::ostringstream message;
    message << "--" << flag << " must be in " << (lo_open ? "(" : "[") << lo << ", " << hi << "], got " << value;
    throw po::error(message.str());
  };
  within("scale", o_.scale, 0, sim::kMaxTraceScale, true);
  within("slo", config.slo_s, 0, sim::kMaxSloS, true);
  within("rtt-ms", rtt_ms_, 0, sim::kMaxRttMs);
  within("chunk-rtt-ms", chunk_rtt_ms_, 0, sim::kMaxRttMs);
  within("trace-offset", config.trace_offset_s, 0, sim::kMaxTraceOffsetS);
  if (o_.requests > 1) within("rate", o_.rate, sim::kMinRatePerS, sim::kMaxRatePerS);
  if (vm.count("queue-ms")) within("queue-ms", o_.path.queue.ms, 0, sim::kMaxRttMs, true);
  config.pipelining = !no_pipelining_;
  config.overlap_decode_prefill = !shared_gpu_;
  config.decode_costs_time = !no_decode_cost_;
  parse_decode(decode_, o_.hardware_arg, config);
  if (vm.count("recompute-s")) {
    within("recompute-s", recompute_s_, 0, sim::kMaxSloS);
    config.fixed_recompute_s = recompute_s_;
  }
  if (artifact_timing_) config = sim::with_artifact_timing(config);
  sim::NetworkPath& path = o_.path;
  path.request_rtt_s = rtt_ms_ / 1e3;
  path.chunk_rtt_s = chunk_rtt_ms_ / 1e3;
  try {
    path.link_model = sim::link_model_named(link_);
  } catch (const std::invalid_argument& e) {
    throw po::error(std::string("--link: ") + e.what());
  }
  if (vm.count("queue-bytes") && vm.count("queue-ms")) throw po::error("give --queue-bytes or --queue-ms, not both");
  if (vm.count("queue-bytes")) within("queue-bytes", queue_bytes_, 1500, sim::kMaxQueueBytes);  // >= one packet
  path.queue.bytes = uint64_t(queue_bytes_);
  path.slow_start_after_idle = !no_slow_start_after_idle_;
  if (path.link_model == sim::LinkModel::kTcp) {
    try {
      sim::make_congestion_control(sim::tcp_model_for(0, path.congestion_control, true, 0));
    } catch (const std::invalid_argument& e) {
      throw po::error(std::string("--cc: ") + e.what());
    }
  }
}

sim::SimulationInputs load_streaming_inputs(const StreamingOptions& o, std::vector<sim::ContextProfile> contexts) {
  sim::SimulationInputs in{std::move(contexts), nullptr, std::nullopt, o.config};
  if (in.contexts.empty())
    for (const auto& path : o.profile_paths)
      in.contexts.push_back(path == "synthetic" ? sim::synthetic_profile({}) : sim::read_context_profile(input_path(path)));
  auto trace = traces::load_one_trace(o.trace_arg, o.trace_format);
  if (o.scale != 1) trace = traces::scale(trace, o.scale);
  in.trace = std::make_shared<traces::BandwidthTrace>(std::move(trace));
  sim::apply_network_path(o.path, in.trace->mean_bps(), in.config);
  if (!o.hardware_arg.empty()) in.hardware = sim::read_hardware_profile(profiling::resolve_hardware_profile(o.hardware_arg));
  in.requests = o.requests == 1 ? sim::single_request()
                                : sim::poisson_requests(o.rate, static_cast<size_t>(o.requests), in.contexts.size(), o.seed);
  return in;
}

void report_policy(const StreamingOptions& o, const std::string& policy, const std::vector<sim::RequestResult>& results,
                   nlohmann::json& runs) {
  const auto summary = sim::summarize(results);
  if (!o.json) {
    print_human(policy, results, summary);
    return;
  }
  nlohmann::json rows = nlohmann::json::array();
  for (const auto& r : results) rows.push_back(sim::to_json(r));
  runs.push_back({{"policy", policy}, {"summary", sim::to_json(summary)}, {"requests", rows}});
}

void print_json(const sim::SimulationInputs& in, const nlohmann::json& runs, const nlohmann::json& extra) {
  nlohmann::json out = {{"trace", in.trace->name()},
                        {"slo_s", in.config.slo_s},
                        {"hardware", in.hardware ? in.hardware->device + " (" + in.hardware->kind + ")" : ""},
                        {"runs", runs}};
  if (extra.is_object()) out.update(extra);
  std::cout << out.dump(1) << "\n";
}

}  // namespace kvstream::cli
