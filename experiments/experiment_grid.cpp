#include "experiments/experiment_grid.h"

#include <algorithm>
#include <map>
#include <regex>
#include <stdexcept>

#include "common/content_hash.h"

namespace kvstream::experiments {

std::vector<NetworkPathSpec> network_paths(const ExperimentConfig& config) {
  if (!config.network) {  // the default path: tcp over sim's round trips, the modelled connection's the larger
    NetworkPathSpec tcp;
    tcp.path.link_model = sim::LinkModel::kTcp;
    tcp.path.request_rtt_s = config.sim.request_rtt_ms / 1e3;
    tcp.path.chunk_rtt_s = config.sim.chunk_rtt_ms / 1e3;
    tcp.coordinates = {{"link_model", "tcp"}, {"rtt_ms", std::max(config.sim.request_rtt_ms, config.sim.chunk_rtt_ms)},
                       {"queue", "unbounded"}, {"congestion_control", tcp.path.congestion_control},
                       {"slow_start_after_idle", tcp.path.slow_start_after_idle}};
    return {tcp};
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
  // One fluid path without a round trip is the path of every config before network sections (the
  // paper's model): its runs keep the coordinates, ids and tables they had (SCHEMA.md §6a).
  if (paths.size() == 1 && paths[0].path.link_model == sim::LinkModel::kFluid && n.rtts_ms[0] == 0)
    paths[0].coordinates = nlohmann::json::object();
  return paths;
}

namespace {
// Runs per (context set, trace, path) block of one context; a Poisson run takes every context.
size_t contexts_per_run_block(const ExperimentConfig& config, const GridShape& shape, size_t context_set) {
  return config.workload.poisson ? 1 : std::max<size_t>(1, shape.contexts[context_set].size());
}

// The first position of `names` that repeats an earlier one, with that earlier one; nullopt when all differ.
std::optional<std::pair<size_t, size_t>> first_repeat(const std::vector<std::string>& names) {
  std::map<std::string, size_t> seen;
  for (size_t i = 0; i < names.size(); ++i) {
    const auto [it, inserted] = seen.emplace(names[i], i);
    if (!inserted) return std::pair{it->second, i};
  }
  return std::nullopt;
}
}  // namespace

Grid::Grid(const ExperimentConfig& config, const GridShape& shape)
    : config_(config), shape_(shape), paths_(network_paths(config)) {
  const size_t hardware = std::max<size_t>(1, config.hardware.size());
  const size_t rates = config.workload.poisson ? std::max<size_t>(1, config.workload.rates_per_s.size()) : 1;
  // The size first, in floating point (no overflow), so that a grid too large to run is an error
  // before anything is sized by it.
  double all_traces = 0, all_contexts = 0;
  for (const auto& set : shape.traces) all_traces += double(set.size());
  for (size_t cs = 0; cs < config.context_sets.size(); ++cs) all_contexts += double(contexts_per_run_block(config, shape, cs));
  double total = all_contexts * all_traces * double(paths_.size());
  total *= double(hardware * rates * config.slos_s.size() * config.policies.size()) * double(config.repetitions);
  if (total > double(kMaxGridRuns))
    throw std::invalid_argument("the grid has " + std::to_string(uint64_t(std::min(total, 1e18))) +
                                " runs (context sets x contexts x traces x network paths x hardware x rates x SLOs x "
                                "policies x repetitions), more than the " + std::to_string(kMaxGridRuns) +
                                " one config may hold");
  for (const auto& set : shape.traces) {
    set_first_trace_.push_back(traces_);
    traces_ += set.size();
  }
  per_context_ = hardware * rates * config.slos_s.size() * config.policies.size() * size_t(config.repetitions);
  for (size_t cs = 0; cs < config.context_sets.size(); ++cs) {
    set_first_run_.push_back(size_);
    size_ += traces_ * paths_.size() * contexts_per_run_block(config, shape, cs) * per_context_;
  }
  if (size_ == 0) return;
  // Every other axis holds distinct values (the config parser refuses repeats), so two runs have the
  // same coordinates exactly when a set lists a trace or (single requests) a context twice; the runs
  // named are the first such pair in grid order.
  std::optional<std::pair<size_t, size_t>> clash;
  const auto consider = [&](size_t a, size_t b) {
    if (!clash || b < clash->second) clash = std::pair{a, b};
  };
  for (size_t ts = 0; ts < shape.traces.size(); ++ts)
    if (const auto repeat = first_repeat(shape.traces[ts]))
      consider(index_of(0, set_first_trace_[ts] + repeat->first, 0, 0, 0),
               index_of(0, set_first_trace_[ts] + repeat->second, 0, 0, 0));
  if (!config.workload.poisson)
    for (size_t cs = 0; cs < shape.contexts.size(); ++cs)
      if (const auto repeat = first_repeat(shape.contexts[cs]))
        consider(index_of(cs, 0, 0, repeat->first, 0), index_of(cs, 0, 0, repeat->second, 0));
  if (clash)
    throw std::invalid_argument("runs " + std::to_string(clash->first) + " and " + std::to_string(clash->second) +
                                " have the same coordinates " + (*this)[clash->second].coordinates.dump() +
                                " (a trace or context listed twice in one set?)");
}

size_t Grid::index_of(size_t context_set, size_t flat_trace, size_t network, size_t context, size_t rest) const {
  const size_t contexts = contexts_per_run_block(config_, shape_, context_set);
  return set_first_run_[context_set] + ((flat_trace * paths_.size() + network) * contexts + context) * per_context_ + rest;
}

RunSpec Grid::operator[](size_t index) const {
  RunSpec run;
  run.index = index;
  const auto& c = config_;
  // The loops' mixed radix, innermost first: repetition, policy, SLO, rate, hardware; then context,
  // network path and trace within the context set's block of runs. upper_bound finds the last set
  // starting at or before the position, which is never an empty one.
  run.context_set = size_t(std::upper_bound(set_first_run_.begin(), set_first_run_.end(), index) - set_first_run_.begin()) - 1;
  size_t rest = index - set_first_run_[run.context_set];
  const auto digit = [&rest](size_t base) {
    const size_t d = rest % base;
    rest /= base;
    return d;
  };
  run.repetition = int(digit(size_t(c.repetitions)));
  run.policy = digit(c.policies.size());
  run.slo = digit(c.slos_s.size());
  if (c.workload.poisson && !c.workload.rates_per_s.empty()) run.rate = digit(c.workload.rates_per_s.size());
  if (!c.hardware.empty()) run.hardware = digit(c.hardware.size());
  const size_t context = digit(contexts_per_run_block(c, shape_, run.context_set));
  if (!c.workload.poisson && !shape_.contexts[run.context_set].empty()) run.context = context;
  run.network = digit(paths_.size());
  const size_t flat_trace = rest;
  run.trace_set = size_t(std::upper_bound(set_first_trace_.begin(), set_first_trace_.end(), flat_trace) - set_first_trace_.begin()) - 1;
  run.trace = flat_trace - set_first_trace_[run.trace_set];
  const auto name_or_null = [](const auto& i, const auto& names) {
    return i ? nlohmann::json(names[*i]) : nlohmann::json(nullptr);
  };
  run.coordinates = {{"context_set", c.context_sets[run.context_set].name},
                     {"context", name_or_null(run.context, shape_.contexts[run.context_set])},
                     {"trace_set", c.trace_sets[run.trace_set].name},
                     {"trace", shape_.traces[run.trace_set][run.trace]},
                     {"hardware", name_or_null(run.hardware, c.hardware)},
                     {"workload", c.workload.poisson ? "poisson" : "single"},
                     {"rate_per_s", name_or_null(run.rate, c.workload.rates_per_s)},
                     {"slo_s", c.slos_s[run.slo]},
                     {"policy", c.policies[run.policy]},
                     {"repetition", run.repetition}};
  run.coordinates.update(paths_[run.network].coordinates);
  run.id = common::content_hash(run.coordinates.dump());
  return run;
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
