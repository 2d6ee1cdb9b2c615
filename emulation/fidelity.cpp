#include "emulation/fidelity.h"

#include "emulation/fidelity_errors.h"
#include "traces/trace_inputs.h"
#include "traces/trace_transforms.h"

namespace kvstream::emulation {

namespace {

// The one of n items that network path `path` takes in a rotation: the next one per path, shifted
// by one every n paths, so that no item stays tied to an axis that alternates with the paths (with
// two congestion controls and (policy, SLO) pairs of two SLOs, a plain path % n would give every
// cubic path the first SLO).
size_t rotated(size_t path, size_t n) { return (path + path / n) % n; }

}  // namespace

std::vector<FidelityCase> plan_fidelity(const FidelityConfig& config) {
  std::vector<FidelityCase> cases;
  size_t path = 0;
  const auto all = [](size_t n) {
    std::vector<size_t> indices(n);
    for (size_t i = 0; i < n; ++i) indices[i] = i;
    return indices;
  };
  for (size_t t = 0; t < config.traces.size(); ++t) {
    const FidelityTrace& trace = config.traces[t];
    for (const double rtt_ms : trace.rtt_ms.empty() ? config.rtt_ms : trace.rtt_ms)
      for (const size_t q : trace.queues.empty() ? all(config.queues.size()) : trace.queues)
        for (const auto& cc : config.congestion_controls) {
          for (const size_t w : trace.workloads.empty() ? all(config.workloads.size()) : trace.workloads) {
            const FidelityWorkload& workload = config.workloads[w];
            const size_t pairs = config.policies.size() * config.slo_s.size();
            for (size_t pair = 0; pair < pairs; ++pair) {
              if (workload.rotate == Rotation::kPairs && pair != rotated(path, pairs)) continue;
              FidelityCase c{t, q, w, rtt_ms, cc, config.policies[pair / config.slo_s.size()],
                             config.slo_s[pair % config.slo_s.size()]};
              for (size_t o = 0; o < workload.offsets_s.size(); ++o) {
                if (workload.rotate == Rotation::kOffsets && o != rotated(path, workload.offsets_s.size())) continue;
                c.offset_s = workload.offsets_s[o];
                c.context = workload.poisson ? 0 : o % config.profiles.size();
                cases.push_back(c);
              }
            }
          }
          ++path;
        }
  }
  return cases;
}

FidelityRunner::FidelityRunner(const FidelityConfig& config, std::optional<sim::HardwareProfile> hardware)
    : config_(config), hardware_(std::move(hardware)) {
  for (const auto& path : config_.profiles) contexts_.push_back(sim::read_context_profile(path));
  for (const auto& t : config_.traces) {
    traces::BandwidthTrace trace = traces::load_one_trace(t.input, t.format);
    if (trace.chunk_indexed())
      throw std::invalid_argument("trace \"" + t.name + "\" is chunk-indexed: an emulated link needs capacity over time");
    const double factor = t.mean_mbps > 0 ? t.mean_mbps * 1e6 / trace.mean_bps() : t.scale;
    if (factor != 1) trace = traces::scale(trace, factor);
    traces_.push_back(std::make_shared<const traces::BandwidthTrace>(std::move(trace)));
    trace_contexts_.push_back(contexts_);
    for (auto& context : trace_contexts_.back())
      for (auto& chunk : context.chunks)
        for (auto& level : chunk.levels) level.bytes *= t.kv_bytes_scale;
  }
}

sim::NetworkPath FidelityRunner::path(const FidelityCase& c, const std::string& link_model) const {
  sim::NetworkPath path;
  path.link_model = sim::link_model_named(link_model);
  path.request_rtt_s = path.chunk_rtt_s = c.rtt_ms / 1e3;
  path.queue = {config_.queues[c.queue].bytes, config_.queues[c.queue].ms};
  path.congestion_control = c.congestion_control;
  path.slow_start_after_idle = config_.slow_start_after_idle;
  return path;
}

uint64_t FidelityRunner::queue_bytes(const FidelityCase& c) const {
  return path(c, "fluid").queue.bytes_at(traces_[c.trace]->mean_bps());
}

sim::SimulationInputs FidelityRunner::inputs(const FidelityCase& c, const std::string& link_model) const {
  sim::SimulationInputs in;
  in.contexts = trace_contexts_[c.trace];
  in.trace = traces_[c.trace];
  in.hardware = hardware_;
  in.policy = c.policy;
  in.config.slo_s = c.slo_s;
  in.config.trace_offset_s = c.offset_s;
  sim::apply_network_path(path(c, link_model), traces_[c.trace]->mean_bps(), in.config);
  const FidelityWorkload& w = config_.workloads[c.workload];
  if (w.poisson)
    in.requests = sim::poisson_requests(w.rate_per_s, size_t(w.requests), contexts_.size(), w.seed);
  else
    in.requests = {sim::Request{0, c.context}};
  return in;
}

// The emulated network is real TCP: its policies plan with the tcp link model's view of it (their
// transfer-time predictor and oracle-dp's timeline, sim/transfer_predictor.h), as under `--link tcp`.
FidelityRun FidelityRunner::run(const FidelityCase& c) const {
  EmulatorOptions emulator;
  emulator.offloads = config_.offloads;
  return simulated_beside(c, emulate(inputs(c, "tcp"), emulator));
}

FidelityRun FidelityRunner::simulated_beside(const FidelityCase& c, EmulationReport emulated) const {
  FidelityRun run{c, traces_[c.trace]->mean_bps() / 1e6, queue_bytes(c), std::move(emulated), {}};
  for (const auto& model : config_.link_models) run.simulated.push_back(sim::simulate(inputs(c, model)));
  return run;
}

FidelityRun FidelityRunner::rescore(const FidelityCase& c, EmulationReport emulated) const {
  return simulated_beside(c, std::move(emulated));
}

nlohmann::json to_json(const FidelityConfig& config, const FidelityRun& run) {
  const FidelityCase& c = run.fidelity_case;
  auto requests = [](const std::vector<sim::RequestResult>& results) {
    nlohmann::json rows = nlohmann::json::array();
    for (const auto& r : results) rows.push_back(sim::to_json(r));
    return rows;
  };
  nlohmann::json simulated = nlohmann::json::object();
  for (size_t m = 0; m < config.link_models.size(); ++m) {
    const PairedErrors errors = paired_errors(run.simulated[m], run.emulated.results);
    simulated[config.link_models[m]] = {{"requests", requests(run.simulated[m])},
                                        {"ttft_errors", errors.ttft},
                                        {"chunk_errors", errors.chunk}};
  }
  const EmulationReport& e = run.emulated;
  return {{"trace", config.traces[c.trace].name},
          {"trace_mean_mbps", run.trace_mean_mbps},
          {"rtt_ms", c.rtt_ms},
          {"queue", config.queues[c.queue].name},
          {"queue_bytes", run.queue_bytes > 0 ? nlohmann::json(run.queue_bytes) : nlohmann::json(nullptr)},
          {"congestion_control", c.congestion_control},
          {"workload", config.workloads[c.workload].name},
          {"policy", c.policy},
          {"slo_s", c.slo_s},
          {"offset_s", c.offset_s},
          {"emulated",
           {{"requests", requests(e.results)},
            {"link",
             {{"delivered_packets", e.delivered_packets},
              {"dropped_packets", e.dropped_packets},
              {"mean_lateness_s", e.mean_lateness_s},
              {"max_lateness_s", e.max_lateness_s}}}}},
          {"simulated", simulated}};
}

}  // namespace kvstream::emulation
