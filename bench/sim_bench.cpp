#include "bench/sim_bench.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <chrono>
#include <filesystem>
#include <thread>

#include "common/data_resolver.h"
#include "profiling/shipped_profiles.h"
#include "sim/simulation.h"
#include "traces/trace_generators.h"
#include "traces/trace_inputs.h"
#include "traces/trace_transforms.h"

namespace kvstream::bench {

namespace {

using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

// Every real time-indexed trace under traces/ (Mahimahi, FCC, Norway 3G, Lumos5G), each scaled to a
// mean of 2 Gbps (datacenter rates, keeping the shape); generated Markov traces when data is absent.
std::vector<std::shared_ptr<const traces::BandwidthTrace>> sweep_traces(std::string& source) {
  std::vector<std::shared_ptr<const traces::BandwidthTrace>> out;
  for (const char* folder : {"traces/mahimahi", "traces/pensieve_fcc", "traces/pensieve_norway3g", "traces/lumos5g_5g"}) {
    std::vector<traces::NamedTrace> found;
    try {
      traces::collect_traces(folder, std::nullopt, found);
    } catch (const common::DataNotFound&) {
      continue;
    }
    for (const auto& [trace, format] : found)
      if (trace.mean_bps() > 0)
        out.push_back(std::make_shared<traces::BandwidthTrace>(traces::scale(trace, 2e9 / trace.mean_bps())));
  }
  source = "real (" + std::to_string(out.size()) + " files, each scaled to a 2 Gbps mean)";
  if (out.empty()) {
    for (int seed = 0; seed < 20; ++seed)
      out.push_back(std::make_shared<traces::BandwidthTrace>(traces::markov(static_cast<uint64_t>(seed), 4e9, 0.5e9, 2, 1, 120)));
    source = "generated (20 Markov traces; real traces not found)";
  }
  return out;
}

// The default synthetic profile (a Mistral-7B-shaped context, context_profile.h) and the A40
// analytic prefill profile for text and the query.
sim::SimulationInputs base_inputs() {
  sim::SimulationInputs in{{sim::synthetic_profile({})}, nullptr,
                           sim::read_hardware_profile(profiling::resolve_hardware_profile("a40_mistral-7b")), sim::SimConfig{}};
  in.config.query_tokens = 32;
  return in;
}

// A long context for oracle-dp: 200 chunks of 500 tokens whose level sizes and qualities vary
// from chunk to chunk (a deterministic hash), as a real profile's do; identical chunks make the
// planner's frontier small.
sim::SimulationInputs long_context_inputs() {
  auto in = base_inputs();
  sim::ContextProfile profile = sim::synthetic_profile({.n_chunks = 200, .chunk_tokens = 500});
  const auto spread = [](size_t chunk, size_t level) {  // in [0, 1)
    const double x = std::sin(static_cast<double>(chunk) * 12.9898 + static_cast<double>(level) * 78.233) * 43758.5453;
    return x - std::floor(x);
  };
  for (size_t c = 0; c < profile.chunks.size(); ++c)
    for (size_t l = 0; l < profile.chunks[c].levels.size(); ++l) {
      profile.chunks[c].levels[l].bytes *= 0.6 + 0.8 * spread(c, l);
      profile.chunks[c].levels[l].quality *= 1 - 0.1 * spread(c, l + 7);
    }
  in.contexts = {profile};
  in.policy = "oracle-dp";
  return in;
}

struct Sweep {
  double seconds = 0;
  uint64_t events = 0, decisions = 0;
};

// `runs` single-request runs on `threads` threads: run r on trace r mod traces, with the policy
// policies[r / traces mod policies], at the SLO and trace offset that follow from r.
Sweep sweep(const sim::SimulationInputs& base, const std::vector<std::shared_ptr<const traces::BandwidthTrace>>& traces,
            const std::vector<std::string>& policies, const std::vector<double>& slos_s, int runs, int threads) {
  std::atomic<int> next{0};
  std::atomic<uint64_t> events{0}, decisions{0};
  auto worker = [&] {
    for (int run = next++; run < runs; run = next++) {
      const size_t r = static_cast<size_t>(run);
      auto in = base;
      in.trace = traces[r % traces.size()];
      in.policy = policies[(r / traces.size()) % policies.size()];
      in.config.slo_s = slos_s[(r / traces.size() / policies.size()) % slos_s.size()];
      in.config.trace_offset_s = static_cast<double>(r % 97);
      sim::SimulationStats run_stats;
      for (const auto& result : sim::simulate(in, &run_stats)) decisions += result.choices.size();
      events += run_stats.events;
    }
  };
  const auto start = Clock::now();
  std::vector<std::thread> workers;
  for (int t = 0; t < threads; ++t) workers.emplace_back(worker);
  for (auto& w : workers) w.join();
  return {seconds_since(start), events.load(), decisions.load()};
}

}  // namespace

nlohmann::json run_sim_bench(const SimBenchOptions& options) {
  std::string trace_source;
  const auto traces = sweep_traces(trace_source);

  // Events per second: one long simulation under load (shared link and GPU), one core. Arrivals
  // at a rate that would fill 60% of the link's mean capacity at the middle level.
  const auto base = base_inputs();
  auto load = base;
  std::string load_trace_source = options.load_trace;
  try {
    const auto trace = traces::read_trace(common::resolve_data(options.load_trace).string());
    load.trace = std::make_shared<traces::BandwidthTrace>(traces::scale(trace, 2e9 / trace.mean_bps()));
  } catch (const common::DataNotFound&) {
    load.trace = traces.front();
    load_trace_source = load.trace->name() + " (" + options.load_trace + " not found)";
  }
  load.policy = "cachegen";
  double request_bits = 0;
  for (const auto& chunk : base.contexts.front().chunks) request_bits += 8 * chunk.levels[1].bytes;
  const double rate_per_s = 0.6 * load.trace->mean_bps() / request_bits;
  load.requests = sim::poisson_requests(rate_per_s, static_cast<size_t>(options.load_requests), 1, 1);
  sim::SimulationStats stats;
  auto start = Clock::now();
  sim::simulate(load, &stats);
  const double load_s = seconds_since(start);

  // Runs per second: single-request runs over traces x policies x SLOs x start offsets.
  const std::vector<std::string> policies = {"cachegen", "mpc", "oracle-dp", "cachegen-artifact", "fixed:cachegen:2",
                                             "text"};
  const std::vector<double> slos_s = {0.5, 1, 2, 4};
  const Sweep runs = sweep(base, traces, policies, slos_s, options.sweep_runs, options.threads);

  // oracle-dp on 200 chunks: the slowest single-request run over traces and SLOs that bind (half
  // and all of the time the middle level needs at the trace's mean rate).
  auto long_context = long_context_inputs();
  double middle_bits = 0;
  for (const auto& chunk : long_context.contexts.front().chunks) middle_bits += 8 * chunk.levels[1].bytes;
  double oracle_dp_max_s = 0;
  for (size_t t = 0; t < std::min<size_t>(traces.size(), 8); ++t)
    for (const double fraction : {0.5, 1.0}) {
      long_context.trace = traces[t];
      long_context.config.slo_s = fraction * middle_bits / traces[t]->mean_bps();
      start = Clock::now();
      sim::simulate(long_context);
      oracle_dp_max_s = std::max(oracle_dp_max_s, seconds_since(start));
    }

  nlohmann::json result = {{"events_per_s", static_cast<double>(stats.events) / load_s},
          {"oracle_dp_200_chunks_max_s", oracle_dp_max_s},
          {"load_events", stats.events},
          {"load_requests", options.load_requests},
          {"load_rate_per_s", rate_per_s},
          {"load_trace", load_trace_source},
          {"load_trace_segments", load.trace->segments().size()},
          {"load_s", load_s},
          {"runs_per_s", options.sweep_runs / runs.seconds},
          {"sweep_runs", options.sweep_runs},
          {"sweep_s", runs.seconds},
          {"sweep_events", runs.events},
          {"threads", options.threads},
          {"policies", policies},
          {"slos_s", slos_s},
          {"traces", trace_source}};

  // The external-policy protocol's cost: the same sweep with one policy, in C++ and as an external
  // program that decides alike (one process per thread, started in the first run).
  if (!options.external_policy.empty()) {
    const Sweep twin = sweep(base, traces, {options.external_twin}, slos_s, options.sweep_runs, options.threads);
    const Sweep external = sweep(base, traces, {options.external_policy}, slos_s, options.sweep_runs, options.threads);
    result["external"] = {{"policy", options.external_policy},
                          {"twin", options.external_twin},
                          {"runs", options.sweep_runs},
                          {"decisions", external.decisions},
                          {"twin_s", twin.seconds},
                          {"external_s", external.seconds},
                          {"overhead_us_per_decision",
                           1e6 * (external.seconds - twin.seconds) * options.threads / double(external.decisions)}};
  }
  return result;
}

}  // namespace kvstream::bench
