#include "experiments/fidelity_session.h"

#include <algorithm>
#include <chrono>
#include <iomanip>
#include <optional>
#include <ostream>
#include <sstream>

#include "common/atomic_file.h"
#include "common/json_reader.h"
#include "emulation/fidelity_rescore.h"
#include "emulation/link_check.h"
#include "emulation/network_namespace.h"
#include "experiments/build_info.h"
#include "experiments/figures.h"
#include "experiments/result_dir_claim.h"
#include "profiling/shipped_profiles.h"
#include "sim/hardware_profile.h"

namespace kvstream::experiments {
namespace {

namespace fs = std::filesystem;

void write_text(const fs::path& path, const std::string& text) {
  common::write_file_atomically(path, [&](std::ostream& out) { out << text; });
}

// The emulator's accuracy per trace (`link-check`), measured before the cases.
nlohmann::json check_links(const emulation::FidelityConfig& config, const emulation::FidelityRunner& runner,
                           double seconds, std::ostream& log) {
  nlohmann::json accuracy = nlohmann::json::array();
  for (size_t t = 0; seconds > 0 && t < config.traces.size(); ++t) {
    emulation::LinkCheckOptions check;
    check.trace = std::make_shared<traces::BandwidthTrace>(runner.trace(t));
    check.seconds = seconds;
    check.offloads = config.offloads;
    const auto result = emulation::check_link(check);
    accuracy.push_back(emulation::to_json(result));
    accuracy.back()["trace"] = config.traces[t].name;
    log << "emulator accuracy, " << config.traces[t].name << " at " << std::setprecision(4) << result.mean_mbps
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

nlohmann::json to_json(const emulation::ErrorStats& s) {
  return {{"count", s.count}, {"median", s.median}, {"median_abs", s.median_abs}, {"p95_abs", s.p95_abs},
          {"max_abs", s.max_abs}};
}

}  // namespace

std::string describe_case(const emulation::FidelityConfig& config, const emulation::FidelityCase& c) {
  std::ostringstream text;
  text << config.traces[c.trace].name << " rtt " << c.rtt_ms << " ms, queue " << config.queues[c.queue].name << ", "
       << c.congestion_control << ", " << config.workloads[c.workload].name << " @" << c.offset_s << " s, "
       << c.policy << ", SLO " << c.slo_s << " s";
  return text.str();
}

FidelitySession run_fidelity_session(const emulation::FidelityConfig& config, const FidelitySessionOptions& options,
                                     std::ostream& log) {
  const fs::path& out = options.out;
  const bool rescoring = !options.rescore.empty();
  ResultDirClaim claim(out, "kvstream fidelity", [&] {
    std::error_code ec;
    if (fs::exists(out / "fidelity.jsonl", ec) && !options.overwrite)
      throw std::runtime_error(out.string() + " already holds fidelity results: choose another --out, or pass --overwrite");
  });
  std::error_code ec;
  if (rescoring && fs::equivalent(out, options.rescore, ec))
    throw std::runtime_error("--out " + out.string() + " is the directory --rescore reads: give another --out");
  if (!rescoring)
    if (const std::string why = emulation::emulation_unavailable_reason(); !why.empty()) throw std::runtime_error(why);
  std::optional<sim::HardwareProfile> hardware;
  if (!config.hardware.empty())
    hardware = sim::read_hardware_profile(profiling::resolve_hardware_profile(config.hardware));
  const emulation::FidelityRunner runner(config, hardware);
  const auto started = std::chrono::steady_clock::now();
  nlohmann::json accuracy;
  std::vector<emulation::FidelityRun> runs;
  if (rescoring) {  // read and simulated before anything is written
    runs = rescore(runner, options.rescore);
    accuracy = stored_accuracy(options.rescore);
  }
  claim.lock();  // from here to the last file written
  if (!rescoring) {
    accuracy = check_links(config, runner, options.link_check_s, log);
    const auto cases = emulation::plan_fidelity(config);
    for (size_t i = 0; i < cases.size(); ++i) {
      runs.push_back(runner.run(cases[i]));
      log << "[" << i + 1 << "/" << cases.size() << "] " << describe_case(config, cases[i]) << ":";
      for (size_t m = 0; m < config.link_models.size(); ++m) {
        const auto errors = emulation::paired_errors(runs.back().simulated[m], runs.back().emulated.results);
        log << " " << config.link_models[m] << " " << std::showpos << std::fixed << std::setprecision(1)
            << 100 * emulation::error_stats(errors.ttft).median << "%" << std::noshowpos << std::defaultfloat;
      }
      log << "\n";
    }
  }
  FidelitySession session;
  session.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  session.runs = runs.size();

  // How well the emulator kept its link on time, run by run: a run whose packets left the link late
  // on average measured the machine's load as much as the network (docs/EMULATION.md "Accuracy").
  std::vector<double> lateness_ms;
  for (const auto& run : runs) lateness_ms.push_back(1e3 * run.emulated.mean_lateness_s);
  std::sort(lateness_ms.begin(), lateness_ms.end());
  session.late_runs = size_t(std::count_if(lateness_ms.begin(), lateness_ms.end(), [](double ms) { return ms > kLateRunMs; }));
  if (!lateness_ms.empty()) {
    session.median_lateness_ms = lateness_ms[lateness_ms.size() / 2];
    session.max_lateness_ms = lateness_ms.back();
  }
  const nlohmann::json lateness = {{"median_run_mean_ms", session.median_lateness_ms},
                                   {"max_run_mean_ms", session.max_lateness_ms},
                                   {"late_run_threshold_ms", kLateRunMs},
                                   {"late_runs", session.late_runs}};

  std::string lines;
  for (const auto& run : runs) {
    lines += emulation::to_json(config, run).dump() + "\n";
    session.requests += run.emulated.results.size();
  }
  session.table = emulation::fidelity_table(config, runs);
  nlohmann::json rows = nlohmann::json::array();
  for (const auto& r : session.table)
    rows.push_back({{"link_model", r.link_model}, {"group", r.group}, {"value", r.value}, {"ttft", to_json(r.ttft)},
                    {"chunk", to_json(r.chunk)}});
  common::write_file_atomically(out / "config.json", [&](std::ostream& s) { s << config.source.dump(2) << "\n"; });
  write_text(out / "fidelity.jsonl", lines);
  claim.keep();
  std::ostringstream csv;
  emulation::write_fidelity_csv(csv, session.table);
  write_text(out / "fidelity.csv", csv.str());
  session.groups = emulation::fidelity_groups(config, runs);
  std::ostringstream groups_csv;
  emulation::write_fidelity_groups_csv(groups_csv, session.groups);
  write_text(out / "fidelity_groups.csv", groups_csv.str());
  nlohmann::json summary = {{"config", config.name}, {"runs", session.runs}, {"requests", session.requests},
                            {"wall_s", session.wall_s}, {"emulator_accuracy", accuracy}, {"link_lateness", lateness},
                            {"table", rows}, {"build", build_and_host_info()}};
  if (rescoring) summary["rescored_from"] = options.rescore.string();
  write_text(out / "fidelity.json", summary.dump(2) + "\n");
  if (options.figures) {
    std::string error;
    if (!render_figures(out, error)) log << "kvstream fidelity: warning: no figure: " << error << "\n";
    else session.figure_written = fs::exists(out / "figures" / "fidelity.png", ec);
  }
  return session;
}

}  // namespace kvstream::experiments
