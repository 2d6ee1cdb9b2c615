// `kvstream sim-bench`: how fast the simulator is. Its targets: >= 2 million events/s on one core;
// 10,000 single-request runs over real traces x policies x SLOs in < 10 s on 2 cores
// (docs/SIMULATION.md has the measurements).
#pragma once
#include <nlohmann/json.hpp>
#include <string>

namespace kvstream::bench {

struct SimBenchOptions {
  int sweep_runs = 10000;
  int threads = 2;
  int load_requests = 20000;  // Poisson requests of the events/s measurement
  // The trace of the events/s measurement (data-relative path), scaled to a 2 Gbps mean; a
  // generated Markov trace when it is not found.
  std::string load_trace = "traces/pensieve_norway3g/norway_bus_1";
  // When given: the sweep again with external_twin (a C++ policy) and with this external policy that
  // decides alike, each alone, for the protocol's cost per decision.
  std::string external_policy;
  std::string external_twin = "fixed:cachegen:2";
};

// Runs the measurements and returns {"events_per_s", "runs_per_s", ...details, "external" (when asked)}.
nlohmann::json run_sim_bench(const SimBenchOptions& options);

}  // namespace kvstream::bench
