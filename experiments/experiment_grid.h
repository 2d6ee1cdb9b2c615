// The grid of an experiment: every combination of context (one per run for single-request
// workloads, all of a set for Poisson ones), trace, network path, hardware profile, arrival rate, SLO,
// policy and repetition, in one fixed order. Each run has an index (its place in that order) and an id (a hash
// of its coordinates), so resumed, sharded and merged results name the same run the same way.
#pragma once
#include <cstddef>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "experiments/experiment_config.h"
#include "sim/network_path.h"

namespace kvstream::experiments {

// One network path of the grid (sim/network_path.h) and what runs.jsonl records of it: nothing for a
// config without a network section (its one fluid path, sim.request_rtt_ms and sim.chunk_rtt_ms);
// else link_model, rtt_ms, queue (its name), congestion_control and slow_start_after_idle, the last
// three null on a fluid path.
struct NetworkPathSpec {
  sim::NetworkPath path;
  nlohmann::json coordinates = nlohmann::json::object();
};
// In grid order: link models, round trips, then (tcp) queues, congestion controls, restart after idle.
std::vector<NetworkPathSpec> network_paths(const ExperimentConfig& config);

struct RunSpec {
  size_t index = 0;
  std::string id;                 // 16 hex digits of the coordinates' hash
  size_t context_set = 0;
  std::optional<size_t> context;  // single workload: this context; Poisson: every context of the set
  size_t trace_set = 0, trace = 0;
  size_t network = 0;             // index into network_paths(config)
  std::optional<size_t> hardware; // index into config.hardware
  std::optional<size_t> rate;     // index into config.workload.rates_per_s
  size_t slo = 0, policy = 0;
  int repetition = 0;
  // By name: context_set, context, trace_set, trace, hardware, workload, rate_per_s, slo_s, policy,
  // repetition, and the network path's (what runs.jsonl records; the id hashes it).
  nlohmann::json coordinates;
};

// Names of the contexts of each context set and of the traces of each trace set, as loaded.
struct GridShape {
  std::vector<std::vector<std::string>> contexts;  // [context set][context]
  std::vector<std::vector<std::string>> traces;    // [trace set][trace]
};

inline constexpr uint64_t kMaxGridRuns = 1'000'000;

// The grid, computed run by run: a run's spec is derived from its index (the loops' mixed radix), so
// the grid holds only the axes, whatever its number of runs.
class Grid {
 public:
  // Throws std::invalid_argument for a grid of more than kMaxGridRuns runs (naming its size), or when
  // two runs would have the same coordinates (the same trace twice in one set, two contexts of one
  // name).
  Grid(const ExperimentConfig& config, const GridShape& shape);
  size_t size() const { return size_; }
  RunSpec operator[](size_t index) const;  // index < size()

 private:
  // The index of the run at these axis positions (the loops' order, outermost first).
  size_t index_of(size_t context_set, size_t flat_trace, size_t network, size_t context, size_t rest) const;

  ExperimentConfig config_;
  GridShape shape_;
  std::vector<NetworkPathSpec> paths_;
  std::vector<size_t> set_first_run_;     // [context set]: index of its first run
  std::vector<size_t> set_first_trace_;   // [trace set]: its first trace in the flat order of all traces
  size_t traces_ = 0;                     // traces of all sets
  size_t per_context_ = 0;                // runs per (context set, trace, path, context): hardware x rates x SLOs x policies x repetitions
  size_t size_ = 0;
};

// `--shard i/N` (0 <= i < N): run r belongs to shard r.index mod N, so shards partition the grid.
struct Shard {
  size_t index = 0, count = 1;
  static Shard parse(const std::string& text);  // throws std::invalid_argument
  bool owns(size_t run_index) const { return run_index % count == index; }
  std::string to_string() const { return std::to_string(index) + "/" + std::to_string(count); }
};

}  // namespace kvstream::experiments
