// `kvstream fidelity CONFIG.json`: the simulator held against the emulator (docs/EMULATION.md
// "`kvstream fidelity`"): every case of the config emulated and simulated on the same trace
// offsets, the signed relative TTFT and chunk transfer-time errors, a table, a figure, and the
// emulator's own accuracy beside them.
#include <algorithm>
#include <chrono>
#include <exception>
#include <filesystem>
#include <iomanip>
#include <iostream>
#include <sstream>

#include "cli/command.h"
#include "common/atomic_file.h"
#include "common/directory_lock.h"
#include "emulation/fidelity.h"
#include "emulation/fidelity_errors.h"
#include "emulation/fidelity_groups.h"
#include "emulation/fidelity_rescore.h"
#include "emulation/link_check.h"
#include "emulation/network_namespace.h"
#include "experiments/build_info.h"
#include "experiments/figures.h"
#include "profiling/shipped_profiles.h"

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

std::string describe(const emulation::FidelityConfig& config, const emulation::FidelityCase& c) {
  std::ostringstream text;
  text << config.traces[c.trace].name << " rtt " << c.rtt_ms << " ms, queue " << config.queues[c.queue].name << ", "
       << c.congestion_control << ", " << config.workloads[c.workload].name << " @" << c.offset_s << " s, "
       << c.policy << ", SLO " << c.slo_s << " s";
  return text.str();
}

void write_text(const fs::path& path, const std::string& text) {
  common::write_file_atomically(path, [&](std::ostream& out) { out << text; });
}

// A run whose emulated link delivered its packets later than this on average (measured on a 2-core VM
// whose host stole ~20 % of its CPU: runs above it erred 5-20 % more, docs/EMULATION.md "Accuracy").
constexpr double kLateRunMs = 0.5;

// The emulator's accuracy per trace (`link-check`), measured before the cases.
nlohmann::json check_links(const emulation::FidelityConfig& config, const emulation::FidelityRunner& runner,
                           double seconds) {
  nlohmann::json accuracy = nlohmann::json::array();
  for (size_t t = 0; seconds > 0 && t < config.traces.size(); ++t) {
    emulation::LinkCheckOptions check;
    check.trace = std::make_shared<traces::BandwidthTrace>(runner.trace(t));
    check.seconds = seconds;
    check.offloads = config.offloads;
    const auto result = emulation::check_link(check);
    accuracy.push_back(emulation::to_json(result));
    accuracy.back()["trace"] = config.traces[t].name;
    std::cerr << "emulator accuracy, " << config.traces[t].name << " at " << std::setprecision(4) << result.mean_mbps
              << " Mbit/s: per 100 ms |delivered / integral - 1| median " << result.median_abs_error << ", p95 "
              << result.p95_abs_error << ", max " << result.max_abs_error << "\n";
  }
  return accuracy;
}

// The runs of an earlier result directory, checked (emulation/fidelity_rescore.h) and simulated again
// against their stored emulations.
std::vector<emulation::FidelityRun> rescore(const emulation::FidelityRunner& runner, const fs::path& dir) {
  std::error_code ec;
  if (!fs::is_regular_file(dir / "config.json", ec))
    throw std::runtime_error("--rescore " + dir.string() + ": no fidelity results there (no config.json): give the --out "
                             "of an earlier kvstream fidelity run, or the stored reference experiments/reference/fidelity");
  std::vector<emulation::FidelityRun> runs;
  for (auto& stored : emulation::read_stored_runs(runner, dir))
    runs.push_back(runner.rescore(stored.fidelity_case, std::move(stored.emulated)));
  if (runs.empty()) throw std::runtime_error((dir / "fidelity.jsonl").string() + ": no runs");
  return runs;
}

// The accuracy an earlier run measured, when its fidelity.json says.
nlohmann::json stored_accuracy(const fs::path& dir) {
  try {
    const nlohmann::json summary = common::read_json_file((dir / "fidelity.json").string());
    if (summary.contains("emulator_accuracy")) return summary["emulator_accuracy"];
  } catch (const std::exception&) {
  }
  return nlohmann::json::array();
}

int run(const Options& o) {
  const auto config = emulation::read_fidelity_config(input_path(o.config));
  for (const auto& check : o.checks)  // a model the config does not run would pass unchecked
    if (std::find(config.link_models.begin(), config.link_models.end(), check.first) == config.link_models.end())
      throw std::runtime_error("--check " + check.first + ": the config's link_models do not include it");
  const auto cases = emulation::plan_fidelity(config);
  if (o.dry_run) {
    for (size_t i = 0; i < cases.size(); ++i) std::cout << i << "\t" << describe(config, cases[i]) << "\n";
    std::cout << cases.size() << " cases\n";
    return 0;
  }
  const fs::path out = o.out.empty() ? fs::path("results") / config.name : fs::path(o.out);
  std::error_code ec;
  const auto refuse_if_written = [&] {
    if (fs::exists(out / "fidelity.jsonl", ec) && !o.overwrite)
      throw std::runtime_error(out.string() + " already holds fidelity results: choose another --out, or pass --overwrite");
  };
  refuse_if_written();  // before the inputs load, and again under the lock
  if (!o.rescore.empty() && fs::equivalent(out, o.rescore, ec))
    throw std::runtime_error("--out " + out.string() + " is the directory --rescore reads: give another --out");
  if (o.rescore.empty())
    if (const std::string why = emulation::emulation_unavailable_reason(); !why.empty()) throw std::runtime_error(why);
  std::optional<sim::HardwareProfile> hardware;
  if (!config.hardware.empty())
    hardware = sim::read_hardware_profile(profiling::resolve_hardware_profile(config.hardware));
  const emulation::FidelityRunner runner(config, hardware);
  const auto started = std::chrono::steady_clock::now();
  nlohmann::json accuracy;
  std::vector<emulation::FidelityRun> runs;
  if (!o.rescore.empty()) {  // read and simulated before anything is written
    runs = rescore(runner, o.rescore);
    accuracy = stored_accuracy(o.rescore);
  }
  // One writer at a time, from here to the last file written. A directory this run made is removed
  // again when the run fails before writing into it.
  const bool made_out = !fs::exists(out, ec);
  const common::DirectoryLock lock(out, "kvstream fidelity");
  struct RemoveIfUnused {
    const fs::path& dir;
    bool made;
    ~RemoveIfUnused() {
      std::error_code ec;
      if (made && std::uncaught_exceptions() > 0 && !fs::exists(dir / "fidelity.jsonl", ec)) {
        fs::remove(dir / ".lock", ec);
        fs::remove(dir, ec);  // only when nothing else is in it
      }
    }
  } remove_if_unused{out, made_out};
  refuse_if_written();
  if (o.rescore.empty()) {
    accuracy = check_links(config, runner, o.link_check_s);
    for (size_t i = 0; i < cases.size(); ++i) {
      runs.push_back(runner.run(cases[i]));
      std::cerr << "[" << i + 1 << "/" << cases.size() << "] " << describe(config, cases[i]) << ":";
      for (size_t m = 0; m < config.link_models.size(); ++m) {
        const auto errors = emulation::paired_errors(runs.back().simulated[m], runs.back().emulated.results);
        std::cerr << " " << config.link_models[m] << " " << std::showpos << std::fixed << std::setprecision(1)
                  << 100 * emulation::error_stats(errors.ttft).median << "%" << std::noshowpos << std::defaultfloat;
      }
      std::cerr << "\n";
    }
  }
  const double wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();

  // How well the emulator kept its link on time, run by run: a run whose packets left the link late
  // on average measured the machine's load as much as the network (docs/EMULATION.md "Accuracy").
  std::vector<double> lateness_ms;
  for (const auto& run : runs) lateness_ms.push_back(1e3 * run.emulated.mean_lateness_s);
  std::sort(lateness_ms.begin(), lateness_ms.end());
  const size_t late_runs = size_t(std::count_if(lateness_ms.begin(), lateness_ms.end(),
                                                [](double ms) { return ms > kLateRunMs; }));
  const nlohmann::json lateness = {
      {"median_run_mean_ms", lateness_ms.empty() ? 0.0 : lateness_ms[lateness_ms.size() / 2]},
      {"max_run_mean_ms", lateness_ms.empty() ? 0.0 : lateness_ms.back()},
      {"late_run_threshold_ms", kLateRunMs},
      {"late_runs", late_runs}};

  std::string lines;
  size_t requests = 0;
  for (const auto& run : runs) {
    lines += emulation::to_json(config, run).dump() + "\n";
    requests += run.emulated.results.size();
  }
  const auto table = emulation::fidelity_table(config, runs);
  nlohmann::json rows = nlohmann::json::array();
  for (const auto& r : table) {
    auto stats = [](const emulation::ErrorStats& s) {
      return nlohmann::json{{"count", s.count}, {"median", s.median}, {"median_abs", s.median_abs},
                            {"p95_abs", s.p95_abs}, {"max_abs", s.max_abs}};
    };
    rows.push_back({{"link_model", r.link_model}, {"group", r.group}, {"value", r.value}, {"ttft", stats(r.ttft)},
                    {"chunk", stats(r.chunk)}});
  }
  common::write_file_atomically(out / "config.json", [&](std::ostream& s) { s << config.source.dump(2) << "\n"; });
  write_text(out / "fidelity.jsonl", lines);
  std::ostringstream csv;
  emulation::write_fidelity_csv(csv, table);
  write_text(out / "fidelity.csv", csv.str());
  const auto groups = emulation::fidelity_groups(config, runs);
  std::ostringstream groups_csv;
  emulation::write_fidelity_groups_csv(groups_csv, groups);
  write_text(out / "fidelity_groups.csv", groups_csv.str());
  nlohmann::json summary = {{"config", config.name}, {"runs", runs.size()}, {"requests", requests},
                            {"wall_s", wall_s}, {"emulator_accuracy", accuracy}, {"link_lateness", lateness},
                            {"table", rows},
                            {"build", experiments::build_and_host_info()}};
  if (!o.rescore.empty()) summary["rescored_from"] = o.rescore;
  write_text(out / "fidelity.json", summary.dump(2) + "\n");

  emulation::print_fidelity_table(std::cout, table);
  emulation::print_group_summary(std::cout, groups);
  std::cout << "emulated link lateness, mean per run: median " << std::setprecision(2) << lateness["median_run_mean_ms"].get<double>()
            << " ms, max " << lateness["max_run_mean_ms"].get<double>() << " ms; " << late_runs << " of " << runs.size()
            << " runs above " << kLateRunMs << " ms" << (late_runs ? " (the machine did not keep the link on time: their errors are partly the emulator's)" : "")
            << std::defaultfloat << "\n";
  std::cout << runs.size() << " runs, " << requests << " requests " << (o.rescore.empty() ? "emulated" : "rescored")
            << " in " << std::fixed << std::setprecision(0) << wall_s << " s; results: " << out.string()
            << std::defaultfloat << "\n";
  if (o.figures) {
    std::string error;
    if (!experiments::render_figures(out, error))
      std::cerr << "kvstream fidelity: warning: no figure: " << error << "\n";
    else if (fs::exists(out / "figures" / "fidelity.png", ec))
      std::cout << "figure: " << (out / "figures" / "fidelity.png").string() << "\n";
  }
  int status = 0;
  for (const auto& [model, fraction] : o.checks)
    for (const auto& r : table)
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
