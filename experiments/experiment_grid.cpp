#include "experiments/experiment_grid.h"

#include <algorithm>
#include <map>
#include <regex>
#include <stdexcept>

#include "common/content_hash.h"

namespace kvstream::experiments {

std::vector<NetworkPathSpec> network_paths(const ExperimentConfig& config) {
  if (!config.network) {
    NetworkPathSpec legacy;
    legacy.path.request_rtt_s = config.sim.request_rtt_ms / 1e3;
    legacy.path.chunk_rtt_s = config.sim.chunk_rtt_ms / 1e3;
    return {legacy};
  }
  const NetworkConfig& n = *config.network;
  std::vector<NetworkPathSpec> paths;
  for (const auto& model : n.link_models)
    for (const double rtt_ms : n.rtts_ms) {
      NetworkPathSpec spec;
      spec.path.link_model = sim::link_model_named(model);
      spec.path.request_rtt_s = spec.path.chunk_rtt_s = rtt_ms / 1e3;
      spec.coordinates = {{"link_model", model}, {"rtt_ms", rtt_ms}, {"queue", nullptr},
                          {"congestion_control", nullptr}, {"slow_start_after_idle", nullptr}};
      if (spec.path.link_model == sim::LinkModel::kFluid) {
        paths.push_back(spec);
        continue;
      }
      for (const auto& queue : n.queues)
        for (const auto& cc : n.congestion_controls)
          for (const bool restart : n.slow_start_after_idle) {
            NetworkPathSpec tcp = spec;
            tcp.path.queue = {queue.bytes, queue.ms};
            tcp.path.congestion_control = cc;
            tcp.path.slow_start_after_idle = restart;
            tcp.coordinates["queue"] = queue.name;
            tcp.coordinates["congestion_control"] = cc;
            tcp.coordinates["slow_start_after_idle"] = restart;
            paths.push_back(tcp);
          }
    }
  return paths;
}

std::vector<RunSpec> expand_grid(const ExperimentConfig& config, const GridShape& shape) {
  std::vector<RunSpec> runs;
  std::map<std::string, size_t> seen;  // id -> index
  const auto optional_indices = [](size_t n) {
    std::vector<std::optional<size_t>> out;
    for (size_t i = 0; i < n; ++i) out.emplace_back(i);
    if (out.empty()) out.emplace_back(std::nullopt);
    return out;
  };
  const auto hardware = optional_indices(config.hardware.size());
  const auto rates = optional_indices(config.workload.poisson ? config.workload.rates_per_s.size() : 0);
  // The size first, in floating point (no overflow), so that a grid too large to hold is an error
  // before memory grows (measured: "repetitions": 1e9 grew at ~50 MB/s until killed).
  double all_traces = 0, all_contexts = 0;
  for (const auto& set : shape.traces) all_traces += double(set.size());
  for (size_t cs = 0; cs < config.context_sets.size(); ++cs)
    all_contexts += double(config.workload.poisson ? 1 : std::max<size_t>(1, shape.contexts[cs].size()));
  const auto paths = network_paths(config);
  double total = all_contexts * all_traces * double(paths.size());
  total *= double(hardware.size() * rates.size() * config.slos_s.size() * config.policies.size()) *
           double(config.repetitions);
  if (total > double(kMaxGridRuns))
    throw std::invalid_argument("the grid has " + std::to_string(uint64_t(std::min(total, 1e18))) +
                                " runs (context sets x contexts x traces x network paths x hardware x rates x SLOs x "
                                "policies x repetitions), more than the " + std::to_string(kMaxGridRuns) +
                                " one config may hold");
  for (size_t cs = 0; cs < config.context_sets.size(); ++cs) {
    const auto contexts = config.workload.poisson ? optional_indices(0) : optional_indices(shape.contexts[cs].size());
    for (size_t ts = 0; ts < config.trace_sets.size(); ++ts)
      for (size_t t = 0; t < shape.traces[ts].size(); ++t)
        for (size_t net = 0; net < paths.size(); ++net)
          for (const auto& context : contexts)
            for (const auto& hw : hardware)
              for (const auto& rate : rates)
                for (size_t slo = 0; slo < config.slos_s.size(); ++slo)
                  for (size_t policy = 0; policy < config.policies.size(); ++policy)
                    for (int rep = 0; rep < config.repetitions; ++rep) {
                      RunSpec run{runs.size(), "", cs, context, ts, t, net, hw, rate, slo, policy, rep, {}};
                      const auto name_or_null = [](const auto& index, const auto& names) {
                        return index ? nlohmann::json(names[*index]) : nlohmann::json(nullptr);
                      };
                      run.coordinates = {
                          {"context_set", config.context_sets[cs].name},
                          {"context", name_or_null(context, shape.contexts[cs])},
                          {"trace_set", config.trace_sets[ts].name},
                          {"trace", shape.traces[ts][t]},
                          {"hardware", name_or_null(hw, config.hardware)},
                          {"workload", config.workload.poisson ? "poisson" : "single"},
                          {"rate_per_s", name_or_null(rate, config.workload.rates_per_s)},
                          {"slo_s", config.slos_s[slo]},
                          {"policy", config.policies[policy]},
                          {"repetition", rep}};
                      run.coordinates.update(paths[net].coordinates);
                      run.id = common::content_hash(run.coordinates.dump());
                      const auto [it, inserted] = seen.emplace(run.id, run.index);
                      if (!inserted)
                        throw std::invalid_argument("runs " + std::to_string(it->second) + " and " +
                                                    std::to_string(run.index) + " have the same coordinates " +
                                                    run.coordinates.dump() +
                                                    " (a trace or context listed twice in one set?)");
                      runs.push_back(std::move(run));
                    }
  }
  return runs;
}

Shard Shard::parse(const std::string& text) {
  static const std::regex form("([0-9]+)/([0-9]+)");
  std::smatch match;
  if (!std::regex_match(text, match, form))
    throw std::invalid_argument("--shard expects i/N with 0 <= i < N, got \"" + text + "\"");
  Shard shard{std::stoul(match[1]), std::stoul(match[2])};
  if (shard.count == 0 || shard.index >= shard.count)
    throw std::invalid_argument("--shard expects i/N with 0 <= i < N, got \"" + text + "\"");
  return shard;
}

}  // namespace kvstream::experiments
