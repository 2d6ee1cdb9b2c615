// The flags `kvstream simulate` and `kvstream emulate` share, with the same meaning in both: the
// contexts, trace, policies, SLO, hardware, timing knobs and workload of a run, how they load into
// the simulator's inputs, and how a run's results are printed.
#pragma once
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli/command.h"
#include "sim/network_path.h"
#include "sim/request_result.h"
#include "sim/simulation.h"

namespace kvstream::cli {

struct StreamingOptions {
  std::vector<std::string> profile_paths, policies;
  std::string trace_arg, trace_format, hardware_arg;
  double scale = 1, rate = 0;
  int64_t requests = 1;
  uint64_t seed = 1;
  bool json = false;
  sim::SimConfig config;  // everything but the network path
  sim::NetworkPath path;  // written into the config once the trace is loaded (its mean sizes --queue-ms)
};

// Declares the shared flags into an options_description; finish() checks them and fills the
// config once the arguments are parsed (bad usage: po::error).
class StreamingFlags {
 public:
  // profile_required = false: a command with another source of contexts (emulate --model) checks
  // that it has one.
  explicit StreamingFlags(StreamingOptions& options, bool profile_required = true);
  po::options_description& description() { return description_; }
  void finish(const po::variables_map& vm);

 private:
  StreamingOptions& o_;
  po::options_description description_{"options"};
  std::string decode_;
  double rtt_ms_ = 0, chunk_rtt_ms_ = 0, recompute_s_ = -1;
  std::string link_;
  bool no_pipelining_ = false, shared_gpu_ = false, artifact_timing_ = false, no_decode_cost_ = false;
  bool no_slow_start_after_idle_ = false;
  double queue_bytes_ = 0;  // read as a number, so that "-1" is refused rather than wrapped to 2^64 - 1
};

// The inputs of one run (its policy set later): profiles, the trace (scaled), hardware, workload.
// `contexts`, when not empty, are the contexts instead of options.profile_paths.
sim::SimulationInputs load_streaming_inputs(const StreamingOptions& options,
                                            std::vector<sim::ContextProfile> contexts = {});

// One policy's results: printed for people, or appended to `runs` for the JSON output.
void report_policy(const StreamingOptions& options, const std::string& policy,
                   const std::vector<sim::RequestResult>& results, nlohmann::json& runs);
// The JSON output: {"trace", "slo_s", "hardware", "runs": [...]} (with `extra` merged in).
void print_json(const sim::SimulationInputs& inputs, const nlohmann::json& runs, const nlohmann::json& extra = {});

}  // namespace kvstream::cli
