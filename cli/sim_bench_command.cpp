// `kvstream sim-bench`: simulated events per second and single-request runs per second.
#include <iostream>

#include "bench/sim_bench.h"
#include "cli/command.h"

namespace kvstream::cli {

Command sim_bench_command() {
  return {"sim-bench", "simulator speed: events/s under load, runs/s of a 10,000-run sweep", [](const std::vector<std::string>& args) {
            bench::SimBenchOptions bench;
            bool json = false;
            po::options_description options("options");
            options.add_options()
              ("runs", po::value(&bench.sweep_runs)->default_value(10000), "single-request runs in the sweep")
              ("threads", po::value(&bench.threads)->default_value(2), "worker threads of the sweep")
              ("load-requests", po::value(&bench.load_requests)->default_value(20000), "Poisson requests of the events/s run")
              ("load-trace", po::value(&bench.load_trace)->default_value(bench.load_trace), "data-relative trace of the events/s run")
              ("json", po::bool_switch(&json), "JSON with events_per_s, runs_per_s and details");
            po::variables_map vm;
            if (!parse_or_help(args,
                               "usage: kvstream sim-bench [--runs N] [--threads T] [--load-requests N] [--json]\n\n"
                               "events_per_s: one simulation of Poisson requests sharing the link and GPU (arrivals filling 60%\n"
                               "of the mean capacity of --load-trace, scaled to a 2 Gbps mean), one core. Queries cost\n"
                               "O(log segments): a 1 ms-binned Mahimahi trace (~10^5 segments) runs slower.\n"
                               "runs_per_s: single-request runs over the real traces (each scaled to a 2 Gbps mean) x policies\n"
                               "(cachegen, mpc, oracle-dp, cachegen-artifact, fixed:cachegen:2, text) x SLOs (0.5-4 s), on a\n"
                               "Mistral-7B-shaped synthetic profile with the A40 analytic prefill profile.",
                               options, vm))
              return 0;
            if (bench.sweep_runs < 1 || bench.threads < 1 || bench.load_requests < 1)
              throw po::error("--runs, --threads and --load-requests must be >= 1");
            const auto result = bench::run_sim_bench(bench);
            if (json) {
              std::cout << result.dump(1) << "\n";
              return 0;
            }
            std::cout << "events/s: " << result["events_per_s"].get<double>() << " (" << result["load_events"] << " events, "
                      << result["load_requests"] << " requests, " << result["load_s"].get<double>() << " s, trace "
                      << result["load_trace"].get<std::string>() << ", " << result["load_trace_segments"] << " segments)\n"
                      << "runs/s:   " << result["runs_per_s"].get<double>() << " (" << result["sweep_runs"] << " runs in "
                      << result["sweep_s"].get<double>() << " s on " << result["threads"] << " threads)\n"
                      << "traces:   " << result["traces"].get<std::string>() << "\n";
            return 0;
          }};
}

}  // namespace kvstream::cli
