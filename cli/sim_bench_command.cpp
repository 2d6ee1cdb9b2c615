// `kvstream sim-bench`: simulated events per second and single-request runs per second (bench/sim_bench.h).
#include <iostream>

#include "bench/sim_bench.h"
#include "cli/command.h"

namespace kvstream::cli {
namespace {

struct Options {
  bench::SimBenchOptions bench;
  bool json = false;
};

std::optional<Options> parse(const std::vector<std::string>& args) {
  Options o;
  po::options_description options("options");
  options.add_options()
    ("runs", po::value(&o.bench.sweep_runs)->default_value(10000), "single-request runs in the sweep")
    ("threads", po::value(&o.bench.threads)->default_value(2), "worker threads of the sweep")
    ("load-requests", po::value(&o.bench.load_requests)->default_value(20000), "Poisson requests of the events/s run")
    ("load-trace", po::value(&o.bench.load_trace)->default_value(o.bench.load_trace), "data-relative trace of the events/s run")
    ("external", po::value(&o.bench.external_policy), "an external policy spec: also run the sweep with it alone and with --twin alone")
    ("twin", po::value(&o.bench.external_twin)->default_value(o.bench.external_twin), "the C++ policy that decides as --external does")
    ("json", po::bool_switch(&o.json), "JSON with events_per_s, runs_per_s and details");
  po::variables_map vm;
  if (!parse_or_help(args,
                     "usage: kvstream sim-bench [--runs N] [--threads T] [--load-requests N] [--external SPEC [--twin SPEC]]\n"
                     "                          [--json]\n\n"
                     "events_per_s: one simulation of Poisson requests sharing the link and GPU (arrivals filling 60%\n"
                     "of the mean capacity of --load-trace, scaled to a 2 Gbps mean), one core. Queries cost\n"
                     "O(log segments): a 1 ms-binned Mahimahi trace (~10^5 segments) runs slower.\n"
                     "runs_per_s: single-request runs over the real traces (each scaled to a 2 Gbps mean) x policies\n"
                     "(cachegen, mpc, oracle-dp, cachegen-artifact, fixed:cachegen:2, text) x SLOs (0.5-4 s), on a\n"
                     "Mistral-7B-shaped synthetic profile with the A40 analytic prefill profile.\n"
                     "oracle_dp_200_chunks_max_s: the slowest oracle-dp run on a 200-chunk context whose chunks\n"
                     "differ, over 8 traces x 2 binding SLOs.\n"
                     "external: the sweep with --twin alone and with --external alone (e.g.\n"
                     "  --external 'external:cmd=\"python3 examples/policies/fixed.py cachegen:2\"'); the difference per decision\n"
                     "  (thread-seconds) is the protocol's cost: messages, the process switch, the program's own JSON.",
                     options, vm))
    return std::nullopt;
  if (o.bench.sweep_runs < 1 || o.bench.threads < 1 || o.bench.load_requests < 1)
    throw po::error("--runs, --threads and --load-requests must be >= 1");
  return o;
}

int run(const Options& o) {
  const auto result = bench::run_sim_bench(o.bench);
  if (o.json) {
    std::cout << result.dump(1) << "\n";
    return 0;
  }
  std::cout << "events/s: " << result["events_per_s"].get<double>() << " (" << result["load_events"] << " events, "
            << result["load_requests"] << " requests, " << result["load_s"].get<double>() << " s, trace "
            << result["load_trace"].get<std::string>() << ", " << result["load_trace_segments"] << " segments)\n"
            << "runs/s:   " << result["runs_per_s"].get<double>() << " (" << result["sweep_runs"] << " runs in "
            << result["sweep_s"].get<double>() << " s on " << result["threads"] << " threads)\n"
            << "oracle-dp: " << result["oracle_dp_200_chunks_max_s"].get<double>()
            << " s at most to plan a 200-chunk request (16 runs: 8 traces x 2 SLOs)\n"
            << "traces:   " << result["traces"].get<std::string>() << "\n";
  if (result.contains("external")) {
    const auto& e = result["external"];
    std::cout << "external: " << e["overhead_us_per_decision"].get<double>() << " us per decision (" << e["runs"]
              << " runs, " << e["decisions"] << " decisions: " << e["twin"].get<std::string>() << " "
              << e["twin_s"].get<double>() << " s, " << e["policy"].get<std::string>() << " "
              << e["external_s"].get<double>() << " s)\n";
  }
  return 0;
}

}  // namespace

int sim_bench_main(const std::vector<std::string>& args) { return parse_and_run<Options>(args, parse, run); }

}  // namespace kvstream::cli
