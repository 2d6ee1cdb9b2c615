#include "experiments/experiment_runner.h"

#include <atomic>
#include <chrono>
#include <mutex>
#include <ostream>
#include <stdexcept>
#include <thread>

#include "codec/codec.h"
#include "common/content_hash.h"
#include "common/data_resolver.h"
#include "common/error_text.h"
#include "common/json_reader.h"
#include "common/utc_time.h"
#include "experiments/build_info.h"
#include "experiments/in_order.h"
#include "experiments/profiling_stage.h"
#include "experiments/progress.h"
#include "experiments/result_dir_claim.h"
#include "experiments/run_log.h"
#include "experiments/run_log_sort.h"
#include "profiling/level_plan.h"
#include "profiling/shipped_profiles.h"
#include "sim/policy.h"
#include "sim/simulation.h"
#include "traces/trace_inputs.h"
#include "traces/trace_transforms.h"

namespace kvstream::experiments {

namespace {

namespace fs = std::filesystem;

// --- 1. Inputs ---------------------------------------------------------------------------------

struct TraceSet {
  std::vector<std::shared_ptr<const traces::BandwidthTrace>> traces;
  std::vector<std::string> names;
  bool fallback_used = false;
};

// The traces of a set's `inputs` (`key`), every error naming the input's JSON path.
std::vector<traces::NamedTrace> collect_set(const TraceSetConfig& set, const std::string& key, const std::string& where) {
  const auto& inputs = key == "inputs" ? set.inputs : set.fallback;
  std::vector<traces::NamedTrace> found;
  for (size_t i = 0; i < inputs.size(); ++i) try {
      traces::collect_traces(inputs[i], traces::parse_trace_format(set.format), found);
    } catch (const common::DataNotFound& e) {
      const std::string message = where + ": " + set.json_path + "." + key + "[" + std::to_string(i) + "]: " + e.what();
      if (key == "inputs" && !set.fallback.empty()) throw common::DataNotFound(message);  // the caller falls back
      throw std::runtime_error(message);
    } catch (const std::exception& e) {
      throw std::runtime_error(where + ": " + set.json_path + "." + key + "[" + std::to_string(i) + "]: " + e.what());
    }
  return found;
}

std::vector<TraceSet> load_trace_sets(const ExperimentConfig& config, const std::string& where, std::ostream& log) {
  std::vector<TraceSet> sets;
  for (const auto& set : config.trace_sets) {
    TraceSet loaded;
    std::vector<traces::NamedTrace> found;
    try {
      found = collect_set(set, "inputs", where);
    } catch (const common::DataNotFound& e) {
      log << "trace set " << set.name << ": " << common::first_line(e)
          << "; using its fallback: " << nlohmann::json(set.fallback).dump() << std::endl;
      found = collect_set(set, "fallback", where);
      loaded.fallback_used = true;
    }
    for (auto& named : found) {
      auto trace = set.scale == 1 ? std::move(named.trace) : traces::scale(named.trace, set.scale);
      loaded.names.push_back(trace.name());
      loaded.traces.push_back(std::make_shared<const traces::BandwidthTrace>(std::move(trace)));
    }
    if (config.workload.poisson)
      for (const auto& trace : loaded.traces)
        if (trace->chunk_indexed())
          throw std::runtime_error(where + ": " + set.json_path + ": " + trace->name() +
                                   " is chunk-indexed (one rate per chunk of one request): it cannot carry a Poisson "
                                   "workload; use a time-indexed trace");
    sets.push_back(std::move(loaded));
  }
  return sets;
}

struct HardwareInputs {
  std::vector<sim::HardwareProfile> profiles;
  nlohmann::json info = nlohmann::json::array();  // manifest.json's hardware_profiles
};

// Config decode {"profile"}: that profile's decode section, which times the runs of every profile.
std::optional<sim::DecodeThroughputs> config_decoders(const ExperimentConfig& config, const std::string& where,
                                                      nlohmann::json& info) {
  if (!config.decode || config.decode->profile.empty()) return std::nullopt;
  try {
    const profiling::HardwareProfileChoice choice = profiling::choose_hardware_profile(config.decode->profile);
    const sim::HardwareProfile decoders = sim::read_hardware_profile(choice.file);
    if (!decoders.decode)
      throw std::invalid_argument("hardware profile \"" + decoders.device + "\" (" + choice.file +
                                  ") has no decode section (measure one: kvstream profile-decode --hardware ...)");
    info = {{"name", config.decode->profile}, {"file", choice.file}, {"device", decoders.device}};
    return decoders.decode;
  } catch (const std::exception& e) {
    throw std::runtime_error(where + ": $.decode.profile: " + e.what());
  }
}

HardwareInputs load_hardware(const ExperimentConfig& config, const std::string& where, std::ostream& log) {
  HardwareInputs hardware;
  nlohmann::json decoders_info;
  const std::optional<sim::DecodeThroughputs> decoders = config_decoders(config, where, decoders_info);
  for (size_t h = 0; h < config.hardware.size(); ++h) {
    try {
      const profiling::HardwareProfileChoice choice = profiling::choose_hardware_profile(config.hardware[h]);
      sim::HardwareProfile& profile = hardware.profiles.emplace_back(sim::read_hardware_profile(choice.file));
      hardware.info.push_back({{"name", config.hardware[h]}, {"file", choice.file}, {"device", profile.device},
                               {"kind", profile.kind}, {"model", profile.model},
                               {"replaces", choice.replaced.empty() ? nlohmann::json() : nlohmann::json(choice.replaced)}});
      if (decoders) {
        profile.decode = decoders;
        hardware.info.back()["decode_profile"] = decoders_info;
      }
      if (config.decode && config.decode->from_hardware && profile.decode)  // the throughputs behind every decode time
        hardware.info.back()["decode"] = sim::to_json(*profile.decode);
      if (!choice.replaced.empty())
        log << "hardware " << config.hardware[h] << ": the measured profile " << choice.file << " (" << profile.device
            << ") replaces " << choice.replaced << std::endl;
    } catch (const std::exception& e) {
      throw std::runtime_error(where + ": $.hardware[" + std::to_string(h) + "]: " + e.what());
    }
  }
  return hardware;
}

// The simulator's knobs for one SLO of the config, but the network path (apply_network_path).
sim::SimConfig sim_config(const ExperimentConfig& c, double slo_s) {
  sim::SimConfig sc;
  sc.slo_s = slo_s;
  sc.pipelining = c.sim.pipelining;
  sc.overlap_decode_prefill = !c.sim.shared_gpu;
  if (c.decode) {
    sc.decode_time = c.decode->from_hardware ? sim::DecodeTime::kHardware : sim::DecodeTime::kThroughput;
    sc.decode_fp16_bytes_per_s = c.decode->fp16_bytes_per_s;
  }
  sc.query_tokens = c.sim.query_tokens;
  return c.sim.artifact_timing ? sim::with_artifact_timing(sc) : sc;
}

// Policy specs checked before any context is measured (minutes with a model): each is built on a
// stand-in profile with the levels the config's codecs will give, so that an unknown option, a bad
// value or a ladder of no codec fails at once. check_runnable checks again on the real profiles;
// this one is skipped where those levels are not known beforehand (a transform codec without cal=,
// whose levels follow its calibration).
void check_policy_specs(const ExperimentConfig& config, const std::string& where) {
  bool measures = false;
  for (const auto& set : config.context_sets) measures = measures || set.source == ContextSource::kModel;
  for (const auto& spec : config.codecs)
    if (codec::transform_needs_calibration(spec)) return;
  if (!measures) return;
  sim::ContextProfile stand_in;
  stand_in.name = "$.codecs";
  stand_in.chunk_tokens = 1;
  try {
    stand_in.levels = profiling::profile_levels(profiling::ProfilingOptions{1, config.codecs, config.levels});
  } catch (const std::invalid_argument&) {
    return;  // load_context_sets says what is wrong with $.codecs
  }
  stand_in.chunks.push_back({0, 1, 1, 1.0, std::vector<sim::LevelCost>(stand_in.levels.size(), {1, 0, 0, 1})});
  for (size_t p = 0; p < config.policies.size(); ++p) try {
      sim::make_policy(config.policies[p], stand_in);
    } catch (const std::exception& e) {
      throw std::runtime_error(where + ": $.policies[" + std::to_string(p) + "]: " + e.what());
    }
}

// What would fail in the middle of the runs, found before the first: every policy must be buildable
// on every context set (its ladder exists, its options are known), the query needs a prefill cost,
// and a policy that may recompute text needs a recompute cost (a hardware profile or measured times).
void check_runnable(const ExperimentConfig& config, const std::string& where, const std::vector<LoadedContextSet>& sets,
                    const std::vector<sim::HardwareProfile>& hardware) {
  const sim::SimConfig sc = sim_config(config, 1.0);
  for (size_t s = 0; s < sets.size(); ++s) {
    const std::string set = " (context set " + config.context_sets[s].name + ")";
    for (size_t p = 0; p < config.policies.size(); ++p) try {
        sim::make_policy(config.policies[p], sets[s].simulated.front());
      } catch (const std::exception& e) {
        throw std::runtime_error(where + ": $.policies[" + std::to_string(p) + "]: " + e.what() + set);
      }
    for (size_t h = 0; h < std::max<size_t>(1, hardware.size()); ++h) {
      std::optional<sim::HardwareProfile> hw;
      if (!hardware.empty()) hw = hardware[h];
      for (const auto& profile : sets[s].simulated) {
        try {
          sim::level_decode_fp16_bytes_per_s(profile, sc, hw);
        } catch (const std::exception& e) {
          throw std::runtime_error(where + ": $.decode: " + (hardware.empty() ? "" : "$.hardware[" + std::to_string(h) + "]: ") +
                                   e.what() + set);
        }
        std::optional<sim::CostModel> costs;
        try {
          costs.emplace(profile, sc, hw);
        } catch (const std::exception& e) {
          throw std::runtime_error(where + ": $.sim.query_tokens: " + e.what() + set);
        }
        bool text_costed = true;
        for (size_t c = 0; c < costs->chunks(); ++c) try {
            costs->recompute_s(c);
          } catch (const std::exception&) {
            text_costed = false;
          }
        if (text_costed) continue;
        for (size_t p = 0; p < config.policies.size(); ++p)
          if (sim::may_recompute(config.policies[p]))
            throw std::runtime_error(where + ": $.policies[" + std::to_string(p) + "]: " + config.policies[p] +
                                     " may recompute text, but context " + profile.name + set +
                                     " has no recompute time: give a hardware profile ($.hardware), or text=0");
      }
    }
  }
}

// Notes on what the results will and will not show.
void warn_about_inputs(const ExperimentConfig& config, const std::vector<LoadedContextSet>& contexts,
                       const std::vector<TraceSet>& trace_sets, const HardwareInputs& hardware, std::ostream& log) {
  if (config.kv_scale && hardware.profiles.empty() && !config.policies.empty())
    log << "warning: KV bytes are scaled to " << config.kv_scale->name << " but no hardware profile is given: text "
        << "recompute costs the profiled model's measured time, not " << config.kv_scale->name << "'s" << std::endl;
  for (size_t s = 0; s < contexts.size(); ++s)
    if (contexts[s].provenance.contains("kv_scale"))
      log << "context set " << config.context_sets[s].name << ": KV bytes and codec times scaled x"
          << contexts[s].provenance["kv_scale"]["factor"].get<double>() << " to " << config.kv_scale->name << " ("
          << config.kv_scale->fp16_bytes_per_token << " fp16 bytes/token); quality as measured" << std::endl;
  if (config.repetitions > 1 && !config.workload.poisson)
    for (const auto& set : trace_sets)
      for (const auto& trace : set.traces)
        if (trace->chunk_indexed()) {
          log << "warning: repetitions of a single request on chunk-indexed traces (" << trace->name()
              << ") are identical: their rates are per chunk, not per second" << std::endl;
          return;
        }
}

// A hash of the profiles as measured or read: what --resume and merge compare.
std::string profiles_hash(const std::vector<LoadedContextSet>& contexts) {
  std::string texts;
  for (const auto& set : contexts)
    for (const auto& profile : set.measured) texts += sim::to_json(profile).dump();
  return common::content_hash(texts);
}

// --- 2. The grid ---------------------------------------------------------------------------------

Grid expand(const ExperimentConfig& config, const std::string& where, const std::vector<LoadedContextSet>& contexts,
            const std::vector<TraceSet>& trace_sets) {
  GridShape shape;
  for (const auto& set : contexts) {
    shape.contexts.emplace_back();
    for (const auto& profile : set.measured) shape.contexts.back().push_back(profile.name);
  }
  for (const auto& set : trace_sets) shape.traces.push_back(set.names);
  try {
    return Grid(config, shape);
  } catch (const std::invalid_argument& e) {
    throw std::runtime_error(where + ": " + e.what());
  }
}

// The trace offset of repetition r > 0 of a single-request run: a seeded uniform point of the
// trace's period, so repetitions see different stretches of the trace (0 for chunk-indexed traces).
double repetition_offset_s(uint64_t seed, const std::string& trace_name, int repetition,
                           const traces::BandwidthTrace& trace) {
  if (repetition == 0 || trace.chunk_indexed()) return 0;
  uint64_t x = common::fnv1a64(trace_name.data(), trace_name.size(), seed * 0x9E3779B97F4A7C15ull + uint64_t(repetition));
  x ^= x >> 31;  // splitmix-style finaliser: the top 53 bits become a uniform double in [0, 1)
  x *= 0xbf58476d1ce4e5b9ull;
  x ^= x >> 27;
  return static_cast<double>(x >> 11) * 0x1.0p-53 * trace.duration_s();
}

struct Inputs {
  const ExperimentConfig& config;
  const std::vector<LoadedContextSet>& contexts;
  const std::vector<TraceSet>& traces;
  const std::vector<sim::HardwareProfile>& hardware;
  const std::vector<NetworkPathSpec>& paths;
};

// A finished run: its runs.jsonl line and, when the session accumulates summary.csv as runs finish,
// what that needs of it.
struct FinishedRun {
  std::string line;  // with its newline
  std::optional<RunTotals> totals;
};

FinishedRun execute(const Inputs& in, const RunSpec& run, bool with_totals) {
  const auto& c = in.config;
  const auto& trace = in.traces[run.trace_set].traces[run.trace];
  sim::SimulationInputs sim_in;
  sim_in.trace = trace;
  if (run.hardware) sim_in.hardware = in.hardware[*run.hardware];
  sim_in.policy = c.policies[run.policy];
  auto& sc = sim_in.config;
  sc = sim_config(c, c.slos_s[run.slo]);
  sim::apply_network_path(in.paths[run.network].path, trace->mean_bps(), sc);
  const auto& profiles = in.contexts[run.context_set].simulated;
  if (run.context) {
    sim_in.contexts = {profiles[*run.context]};
    sim_in.requests = sim::single_request();
    sc.trace_offset_s = repetition_offset_s(c.seed, trace->name(), run.repetition, *trace);
  } else {
    sim_in.contexts = profiles;
    const uint64_t arrivals_seed = c.seed * 1000003ull + static_cast<uint64_t>(run.repetition);
    sim_in.requests = sim::poisson_requests(c.workload.rates_per_s[*run.rate], static_cast<size_t>(c.workload.requests),
                                            profiles.size(), arrivals_seed);
  }
  auto results = sim::simulate(sim_in);
  nlohmann::json line = {{"run", run.index}, {"id", run.id}};
  line.update(run.coordinates);
  line["trace_mean_gbps"] = trace->mean_bps() / 1e9;
  line["summary"] = sim::to_json(sim::summarize(results));
  nlohmann::json requests = nlohmann::json::array();
  for (const auto& r : results) requests.push_back(sim::to_json(r));
  line["requests"] = std::move(requests);
  FinishedRun finished{line.dump(), std::nullopt};
  finished.line += '\n';
  if (with_totals) {
    // The values the record holds, so the same totals as run_totals(record) gives on reading it back.
    RunTotals& totals = finished.totals.emplace();
    totals.group = summary_group(run.coordinates);
    totals.group_key = totals.group.dump();
    totals.trace_mean_gbps = trace->mean_bps() / 1e9;
    totals.requests = std::move(results);
  }
  return finished;
}

// How far a thread may run ahead of the first run not yet written, per thread (InOrder's window).
constexpr size_t kRunsAheadPerThread = 64;

// Runs this shard's runs that `done` lacks on `jobs` threads, appending them to `log` in run order (and
// to `summaries`, when given); the first failure stops the others and is rethrown with the run's
// coordinates.
void execute_all(const Inputs& in, const Grid& grid, const Shard& shard, const std::vector<bool>& done, int jobs,
                 RunLog& log, SummaryBuilder* summaries, Progress& progress) {
  const size_t positions = grid.size() > shard.index ? (grid.size() - shard.index + shard.count - 1) / shard.count : 0;
  std::string batch;  // lines handed on and not yet given to the log
  InOrder<FinishedRun> order(
      kRunsAheadPerThread * size_t(jobs),
      [&](FinishedRun&& run) {
        batch += run.line;
        if (summaries) summaries->add(std::move(*run.totals));
      },
      [&] {
        log.append(batch);
        batch.clear();
      });
  std::atomic<size_t> next{0};
  std::atomic<bool> failed{false};
  std::string error;
  std::mutex error_mutex;
  const auto worker = [&] {
    for (size_t p; !failed && (p = next++) < positions && order.wait_turn(p);) {
      const size_t index = p * shard.count + shard.index;  // the shard's p-th run
      try {
        if (done[index]) {
          order.deliver(p, std::nullopt);
          continue;
        }
        order.deliver(p, execute(in, grid[index], summaries != nullptr));
        progress.advance();
      } catch (const std::exception& e) {
        std::lock_guard<std::mutex> lock(error_mutex);
        if (!failed.exchange(true)) error = "run " + std::to_string(index) + " " + grid[index].coordinates.dump() + ": " + e.what();
        order.stop();
      }
    }
  };
  std::vector<std::thread> threads;
  for (int t = 1; t < jobs; ++t) threads.emplace_back(worker);
  worker();
  for (auto& thread : threads) thread.join();
  log.flush();  // the runs handed on are kept even when one failed
  if (failed) throw std::runtime_error(error);
}

// --- 3. The result directory ------------------------------------------------------------------------

// What a session compares with the results already in its directory: the same resolved config
// (read back through the parser, so defaults added by a newer build do not matter), shard and
// profiles. Results of anything else are never mixed in; --overwrite replaces them instead.
void check_out_dir(const ResultDir& result, const nlohmann::json& resolved, const RunnerOptions& options) {
  const fs::path& out = result.path();
  std::error_code ec;
  if (options.overwrite) return;  // --overwrite removes them once the inputs have loaded
  const auto runs = find_run_log(out);
  const bool has_runs = runs.has_value();
  if (!fs::exists(out / "config.json", ec)) {
    if (has_runs)
      throw std::runtime_error(out.string() + " holds a " + runs->filename().string() + " without config.json: not a kvstream result "
                               "directory; choose another --out, or pass --overwrite");
    return;
  }
  const auto earlier = to_json(parse_experiment_config(common::read_json_file((out / "config.json").string()),
                                                       (out / "config.json").string()));
  if (earlier != resolved)
    throw std::runtime_error(out.string() + " holds results of another config (its config.json differs): choose "
                             "another --out, or pass --overwrite to replace them");
  if (!has_runs) return;
  if (!options.resume)
    throw std::runtime_error(out.string() + " already holds results (" + runs->filename().string() +
                             "); pass --resume to continue them, --overwrite to replace them, or choose another --out");
  if ((run_log_format(*runs) == RunLogFormat::kZstd) != options.compress_runs)
    throw std::runtime_error(out.string() + " holds its runs in " + runs->filename().string() + ": resume " +
                             (options.compress_runs ? "without" : "with") + " --compress-runs");
  const auto manifest = common::read_json_file((out / "manifest.json").string());
  if (manifest.value("shard", std::string("0/1")) != options.shard.to_string())
    throw std::runtime_error(out.string() + " holds shard " + manifest.value("shard", std::string("0/1")) +
                             ", not " + options.shard.to_string());
}

void check_profiles_match(const ResultDir& result, const std::string& profiles_hash, const RunnerOptions& options) {
  const fs::path& out = result.path();
  std::error_code ec;
  if (options.overwrite || !find_run_log(out)) return;
  const auto manifest = common::read_json_file((out / "manifest.json").string());
  if (manifest.value("profiles_hash", std::string()) != profiles_hash)
    throw std::runtime_error(out.string() + " was run on other context profiles (manifest profiles_hash " +
                             manifest.value("profiles_hash", std::string("?")) + ", now " + profiles_hash +
                             "): a different or cleared --profile-cache? Resuming would mix measurements");
}

// The files of the directory that do not depend on the runs: config.json, levels.csv, profiles/.
void write_inputs(const ResultDir& result, const ExperimentConfig& config, const nlohmann::json& resolved,
                  const std::vector<LoadedContextSet>& contexts, bool overwrite) {
  if (overwrite)
    for (const char* file : {kPlainRunLog, kZstdRunLog, "summary.csv", "levels.csv", "manifest.json", "config.json", "profiles", "figures"})
      fs::remove_all(result.file(file));
  fs::create_directories(result.path());
  result.write_json("config.json", resolved);
  std::vector<nlohmann::json> level_rows;
  for (size_t s = 0; s < contexts.size(); ++s) {
    level_rows.insert(level_rows.end(), contexts[s].level_rows.begin(), contexts[s].level_rows.end());
    const std::string folder = "profiles/" + config.context_sets[s].name;
    fs::create_directories(result.file(folder));
    for (const auto& profile : contexts[s].measured)
      result.write_json(folder + "/" + profile.name + ".json", sim::to_json(profile));
  }
  write_levels_csv(result.file("levels.csv"), level_rows);
}

// Which of the grid's runs the directory's run log holds (each a run of this shard, once); counts
// the shard's runs and those into `report`. Reads the log a line at a time.
std::vector<bool> runs_done(const Grid& grid, const Shard& shard, const ResultDir& result, RunnerReport& report) {
  std::vector<bool> done(grid.size(), false);
  report.grid_runs = grid.size();
  report.shard_runs = grid.size() > shard.index ? (grid.size() - shard.index + shard.count - 1) / shard.count : 0;
  const auto log = find_run_log(result.path());
  if (!log) return done;
  for_each_line(*log, [&](std::string_view line, size_t number) {
    if (line.empty()) return;
    const std::string where = log->string() + ":" + std::to_string(number);
    const nlohmann::json record = parse_run_record(line, where);
    const size_t index = record.at("run").get<size_t>();
    if (index >= grid.size() || !shard.owns(index) || done[index] || grid[index].id != record.at("id"))
      throw std::runtime_error(log->string() + " holds runs that are not in this grid or shard (" + where + ": run " +
                               std::to_string(index) + ", id " + record.at("id").dump() + ")");
    done[index] = true;
    ++report.resumed_runs;
  });
  return done;
}

nlohmann::json manifest_of(const ExperimentConfig& config, const std::string& config_path, const RunnerOptions& options,
                           const fs::path& cache_dir, const std::vector<LoadedContextSet>& contexts,
                           const std::vector<TraceSet>& trace_sets, const HardwareInputs& hardware,
                           const RunnerReport& report, const std::string& profiles_hash) {
  nlohmann::json provenance = nlohmann::json::array();
  for (const auto& set : contexts) provenance.push_back(set.provenance);
  nlohmann::json traces_info = nlohmann::json::array();
  for (size_t t = 0; t < trace_sets.size(); ++t)
    traces_info.push_back({{"trace_set", config.trace_sets[t].name}, {"traces", trace_sets[t].names.size()},
                           {"scale", config.trace_sets[t].scale}, {"inputs", config.trace_sets[t].inputs},
                           {"fallback_used", trace_sets[t].fallback_used}});
  return {{"format", "kvstream-results"}, {"version", 1}, {"name", config.name}, {"description", config.description},
          {"config_file", config_path}, {"command", options.command_line}, {"seed", config.seed},
          {"shard", options.shard.to_string()}, {"grid_runs", report.grid_runs}, {"shard_runs", report.shard_runs},
          {"build", build_and_host_info()}, {"profile_cache", cache_dir.string()}, {"context_sets", provenance},
          {"hardware_profiles", hardware.info}, {"trace_sets", traces_info}, {"profiles_hash", profiles_hash}};
}

}  // namespace

RunnerReport run_experiment(const ExperimentConfig& config, const std::string& config_path, const RunnerOptions& options,
                            std::ostream& log) {
  const auto started = std::chrono::steady_clock::now();
  RunnerReport report;
  report.out_dir = options.out_dir.empty() ? fs::path("results") / config.name : options.out_dir;
  const ResultDir result(report.out_dir);
  const nlohmann::json resolved = to_json(config);
  ResultDirClaim claim(report.out_dir, "kvstream run", [&] { check_out_dir(result, resolved, options); });

  // 1. Inputs, all loaded and checked before anything is written: the cheap ones first.
  const auto trace_sets = load_trace_sets(config, config_path, log);
  const HardwareInputs hardware = load_hardware(config, config_path, log);
  const fs::path cache_dir = options.profile_cache.empty() ? profiling::ProfileCache::default_dir() : options.profile_cache;
  check_policy_specs(config, config_path);
  const auto contexts = load_context_sets(config, config_path, cache_dir, options.measure_model_contexts,
                                          [&](const std::string& line) { log << line << std::endl; });
  check_runnable(config, config_path, contexts, hardware.profiles);
  const std::string hash = profiles_hash(contexts);
  check_profiles_match(result, hash, options);
  warn_about_inputs(config, contexts, trace_sets, hardware, log);

  // 2. The grid, this shard's part of it, and what earlier sessions finished.
  const Grid grid = expand(config, config_path, contexts, trace_sets);
  claim.lock();
  check_profiles_match(result, hash, options);
  write_inputs(result, config, resolved, contexts, options.overwrite);
  claim.keep();
  const std::vector<bool> done = runs_done(grid, options.shard, result, report);
  const fs::path log_path = run_log_path(result.path(), options.compress_runs ? RunLogFormat::kZstd : RunLogFormat::kPlain);

  nlohmann::json manifest = manifest_of(config, config_path, options, cache_dir, contexts, trace_sets, hardware, report, hash);
  if (options.profiles_only) {  // a directory that already holds runs keeps its manifest
    if (report.resumed_runs > 0) return report;
    manifest.update({{"state", "profiled"}, {"sessions", nlohmann::json::array()}});
    result.write_json("manifest.json", manifest);
    return report;
  }
  std::error_code ec;
  manifest["sessions"] = fs::exists(result.file("manifest.json"), ec) && options.resume
                             ? common::read_json_file(result.file("manifest.json").string()).value("sessions", nlohmann::json::array())
                             : nlohmann::json::array();
  manifest["sessions"].push_back({{"started_at", common::utc_now()}, {"jobs", options.jobs}, {"resumed_runs", report.resumed_runs},
                                  {"host", manifest["build"]["host"]}});
  manifest["state"] = "running";  // until the last run: an interrupted session leaves it so
  result.write_json("manifest.json", manifest);

  try {
    // 3. The runs.
    log << config.name << ": " << grid.size() << " runs in the grid, " << report.shard_runs << " in shard "
        << options.shard.to_string() << ", " << report.resumed_runs << " done before, "
        << report.shard_runs - report.resumed_runs << " to run on "
        << options.jobs << " thread(s)" << std::endl;
    // A session that starts from no runs writes them all, in order: its summaries accumulate as they
    // finish. One that continues earlier runs sorts the whole log once its runs are done.
    const bool from_scratch = report.resumed_runs == 0;
    const int jobs = std::max(1, options.jobs);
    SummaryBuilder summaries;
    {
      RunLog run_log(log_path);
      Progress progress(report.shard_runs, report.resumed_runs, log, options.terminal);
      const auto paths = network_paths(config);
      const Inputs inputs{config, contexts, trace_sets, hardware.profiles, paths};
      execute_all(inputs, grid, options.shard, done, jobs, run_log, from_scratch ? &summaries : nullptr, progress);
      progress.finish();
    }
    report.new_runs = report.shard_runs - report.resumed_runs;

    // 4. The tables, manifest and figures.
    auto& session = manifest["sessions"].back();
    session["finished_at"] = common::utc_now();
    session["new_runs"] = report.new_runs;
    session["wall_s"] = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    manifest["state"] = "complete";
    SortedRunLog sorted;
    if (from_scratch) {
      sorted.runs = report.new_runs;
      sorted.summary = summaries.rows(jobs);
    } else {
      sorted = write_sorted_run_log({{log_path, log_path.string()}}, log_path, jobs, [](size_t) {});
    }
    const auto finished = result.finish(sorted.runs, std::move(sorted.summary), manifest, options.figures, log);
    report.summary = finished.summary;
    report.figures_written = finished.figures_written;
  } catch (const std::exception& e) {
    // An error that ends the session cleanly (a run's error, a full disk, "File too large") is said in
    // the manifest; only a killed session leaves "running".
    manifest["state"] = "failed";
    manifest["sessions"].back()["failed_at"] = common::utc_now();
    manifest["sessions"].back()["error"] = common::first_line(e);
    try {
      result.write_json("manifest.json", manifest);
    } catch (const std::exception&) {
      // The disk that failed the runs may fail this too: the error below says what happened.
    }
    throw;
  }
  return report;
}

}  // namespace kvstream::experiments
