// `kvstream fidelity CONFIG.json`: the simulator held against the emulator (docs/EMULATION.md
// "`kvstream fidelity`"): parses the options, runs the session (experiments/fidelity_session.h),
// prints its table and checks the --check thresholds.
#include <algorithm>
#include <exception>
#include <filesystem>
#include <iomanip>
#include <iostream>
#include <sstream>

#include "cli/command.h"
#include "emulation/fidelity.h"
#include "emulation/link_check.h"
#include "experiments/fidelity_session.h"

namespace kvstream::cli {
namespace {

namespace fs = std::filesystem;

struct Options {
  std::string config, out, rescore;
  bool overwrite = false, figures = true, dry_run = false;
  double link_check_s = 2;
  std::vector<std::pair<std::string, double>> checks;  // --check MODEL=FRACTION
};

std::optional<Options> parse(const std::vector<std::string>& args) {
  Options o;
  std::vector<std::string> checks;
  po::options_description options("options");
  options.add_options()
    ("config", po::value(&o.config)->required(), "fidelity config JSON (experiments/SCHEMA.md §10)")
    ("out", po::value(&o.out), "result directory (default results/<name>)")
    ("overwrite", po::bool_switch(&o.overwrite), "replace the results already in --out")
    ("no-figures", po::bool_switch(&o.figures)->default_value(true, "")->implicit_value(false, ""),
     "do not draw figures/fidelity.png")
    ("link-check-s", po::value(&o.link_check_s)->default_value(2.0), "seconds of `link-check` per trace (0: none)")
    ("check", po::value(&checks)->multitoken()->composing(),
     "MODEL=FRACTION: exit 3 when that link model's median |TTFT error| over all runs exceeds FRACTION (e.g. tcp=0.05)")
    ("rescore", po::value(&o.rescore), "DIR: simulate the runs of DIR/fidelity.jsonl again against their stored emulations (after a change to the simulator; needs no root, emulates nothing)")
    ("dry-run", po::bool_switch(&o.dry_run), "print the cases and exit (needs no root)");
  po::positional_options_description positional;
  positional.add("config", 1);
  po::variables_map vm;
  if (!parse_or_help(args,
                     "usage: kvstream fidelity CONFIG.json [--out DIR] [--overwrite] [--check MODEL=FRACTION ...]\n"
                     "                         [--link-check-s S] [--no-figures] [--dry-run] [--rescore DIR]\n\n"
                     "Runs every case of the config (network paths x workloads x policies x SLOs x offsets) both\n"
                     "ways: emulated (`kvstream emulate`: real kernel TCP through the trace-shaped link) and\n"
                     "simulated with each of the config's link models on the same trace offsets and round trips.\n"
                     "Reports simulated / emulated - 1 of every request's TTFT and of every chunk's transfer time\n"
                     "(chunks both ways fetched at the same level): median, p95 and max, overall and per trace,\n"
                     "RTT, queue, congestion control, workload, policy and SLO; and per (policy, network path,\n"
                     "workload) group the emulated and simulated TTFT p50, p95 and SLO violation rate. Writes\n"
                     "DIR/fidelity.jsonl (every run), fidelity.csv (the table), fidelity_groups.csv (the groups),\n"
                     "fidelity.json (the table, the emulator's own accuracy per trace from link-check, timing),\n"
                     "config.json and figures/fidelity.png. Needs root, but not\n"
                     "with --rescore DIR, which simulates DIR's runs again against their stored emulations.",
                     options, vm, &positional))
    return std::nullopt;
  for (const auto& check : checks) {
    const size_t eq = check.find('=');
    double fraction = -1;
    try {
      if (eq != std::string::npos) fraction = std::stod(check.substr(eq + 1));
    } catch (const std::exception&) {
    }
    const std::string model = check.substr(0, eq);
    if (!(fraction >= 0)) throw po::error("--check: expected MODEL=FRACTION, got \"" + check + "\"");
    try {
      sim::link_model_named(model);
    } catch (const std::invalid_argument& e) {
      throw po::error("--check \"" + check + "\": " + e.what());
    }
    o.checks.emplace_back(model, fraction);
  }
  const double window_s = emulation::LinkCheckOptions{}.window_s;
  if (!(o.link_check_s == 0 || (o.link_check_s >= window_s && o.link_check_s <= emulation::kMaxLinkCheckS))) {
    std::ostringstream message;
    message << "--link-check-s must be 0 (no check) or in [" << window_s << ", " << emulation::kMaxLinkCheckS
            << "] (at least one window of the check)";
    throw po::error(message.str());
  }
  return o;
}

int run(const Options& o) {
  const auto config = emulation::read_fidelity_config(input_path(o.config));
  for (const auto& check : o.checks)  // a model the config does not run would pass unchecked
    if (std::find(config.link_models.begin(), config.link_models.end(), check.first) == config.link_models.end())
      throw std::runtime_error("--check " + check.first + ": the config's link_models do not include it");
  if (o.dry_run) {
    const auto cases = emulation::plan_fidelity(config);
    for (size_t i = 0; i < cases.size(); ++i)
      std::cout << i << "\t" << experiments::describe_case(config, cases[i]) << "\n";
    std::cout << cases.size() << " cases\n";
    return 0;
  }
  experiments::FidelitySessionOptions options;
  options.out = o.out.empty() ? fs::path("results") / config.name : fs::path(o.out);
  options.rescore = o.rescore;
  options.overwrite = o.overwrite;
  options.figures = o.figures;
  options.link_check_s = o.link_check_s;
  const auto session = experiments::run_fidelity_session(config, options, std::cerr);

  emulation::print_fidelity_table(std::cout, session.table);
  emulation::print_group_summary(std::cout, session.groups);
  std::cout << "emulated link lateness, mean per run: median " << std::setprecision(2) << session.median_lateness_ms
            << " ms, max " << session.max_lateness_ms << " ms; " << session.late_runs << " of " << session.runs
            << " runs above " << experiments::kLateRunMs << " ms"
            << (session.late_runs ? " (the machine did not keep the link on time: their errors are partly the emulator's)"
                                  : "")
            << std::defaultfloat << "\n";
  std::cout << session.runs << " runs, " << session.requests << " requests "
            << (o.rescore.empty() ? "emulated" : "rescored") << " in " << std::fixed << std::setprecision(0)
            << session.wall_s << " s; results: " << options.out.string() << std::defaultfloat << "\n";
  if (session.figure_written) std::cout << "figure: " << (options.out / "figures" / "fidelity.png").string() << "\n";
  int status = 0;
  for (const auto& [model, fraction] : o.checks)
    for (const auto& r : session.table)
      if (r.link_model == model && r.group == "all" && r.ttft.median_abs > fraction) {
        std::cerr << "kvstream fidelity: check failed: " << model << " median |TTFT error| " << r.ttft.median_abs
                  << " > " << fraction << "\n";
        status = 3;
      }
  return status;
}

}  // namespace

int fidelity_main(const std::vector<std::string>& args) { return parse_and_run<Options>(args, parse, run); }

}  // namespace kvstream::cli
