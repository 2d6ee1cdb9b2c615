// An experiment config (experiments/SCHEMA.md): which contexts to profile or load, which codecs,
// traces, policies, SLOs, hardware profiles and workloads to sweep. Lists expand to a grid
// (experiment_grid.h). Parsing checks every key and value and names the JSON path of the first
// problem: `default.json: $.traces[1].scale: expected a number > 0, got -2`.
#pragma once
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "profiling/model_context_request.h"

namespace kvstream::experiments {

// Where a context set's profiles come from.
enum class ContextSource {
  kModel,      // measured: prefill a real model on text windows, encode/decode every chunk (profiling/model_context_request.h)
  kSynthetic,  // sim::synthetic_profile: Mistral-7B-shaped, the codec's measured ratios, no model run
  kFiles,      // context-profile JSON files (sim/README.md)
};

// The model-side fields of a measured context set (profiling::ModelContexts); `fallback` replaces
// them when the model's files are not found (e.g. SmolLM2 not fetched: stories260K on TinyStories).
using profiling::ModelContexts;

// A measured context's per-token costs laid out as a longer context: `chunks` chunks of
// `chunk_tokens` tokens, each level at the bytes, encode and decode seconds per token and the quality
// measured on the real context (the paper's ~9.6K-token contexts from a model whose window is short).
struct Extrapolation {
  int chunks = 0;
  int64_t chunk_tokens = 0;
};

struct ContextSetConfig {
  std::string name;
  ContextSource source = ContextSource::kModel;
  ModelContexts measured;                  // kModel
  std::optional<ModelContexts> fallback;   // kModel
  std::optional<Extrapolation> extrapolate;  // kModel: simulate the measured costs on a longer context
  int synthetic_chunks = 10;               // kSynthetic
  int64_t synthetic_chunk_tokens = 1500;   // kSynthetic
  std::vector<std::string> files;          // kFiles
  // fp16 KV bytes per token of the model behind the profiles (kFiles only; needed by kv_scale).
  std::optional<double> fp16_bytes_per_token;
  std::string json_path;  // of this set in the config, for errors found when profiling
};

// Scales KV bytes (and encode/decode times) from the profiled model to a real architecture's
// fp16 bytes per token, e.g. Mistral-7B's 128 KiB (profiling/kv_scale.h).
struct KvScaleConfig {
  std::string name;
  double fp16_bytes_per_token = 0;
};

// Replaces the measured decode time of every level by tokens x fp16 bytes per token / throughput
// (SCHEMA.md §4): either one throughput a (GPU) decoder delivers for every level, with where the
// number comes from, or ("hardware") each hardware profile's measured throughput per codec and level,
// or ({"profile"}) those of one named profile's decoders for every hardware profile's runs.
struct DecodeConfig {
  bool from_hardware = false;
  std::string profile;          // from_hardware: the profile whose decode section replaces $.hardware's, or ""
  double fp16_bytes_per_s = 0;  // !from_hardware: > 0
  std::string source;           // !from_hardware: non-empty
};

struct TraceSetConfig {
  std::string name;
  std::vector<std::string> inputs;  // files, FILE#k, directories, globs, generator specs
  std::vector<std::string> fallback;  // used instead when a data file of `inputs` is not found
  std::string format = "auto";
  double scale = 1;                 // capacity multiplier (cellular Mbps -> datacenter Gbps)
  std::string json_path;            // of this set in the config, for errors found when loading
};

struct WorkloadConfig {
  bool poisson = false;
  std::vector<double> rates_per_s;  // poisson: one grid point per rate
  int requests = 1;                 // poisson: requests per run
};

struct SimOptionsConfig {
  bool pipelining = true;
  bool shared_gpu = false;
  bool artifact_timing = false;  // sim/README.md "Artifact timing"
  int64_t query_tokens = 0;
  double request_rtt_ms = 0, chunk_rtt_ms = 0;
};

// A drop-tail queue of the network section: `bytes`, or `ms` at the (scaled) trace's mean rate;
// neither: unbounded.
struct QueueConfig {
  std::string name;
  uint64_t bytes = 0;
  double ms = 0;
};

// The network paths a config sweeps (SCHEMA.md §7a), every key a grid axis: the simulator's link
// model, the path's round trip (paid before each request and each chunk, as `simulate --rtt-ms R
// --chunk-rtt-ms R` pays it) and, for `tcp`, the queue, congestion control and restart after idle
// (a `fluid` path has none of those three: they would not change its result).
struct NetworkConfig {
  std::vector<std::string> link_models = {"fluid"};
  std::vector<double> rtts_ms = {0};
  std::vector<QueueConfig> queues = {{"unbounded", 0, 0}};
  std::vector<std::string> congestion_controls = {"cubic"};
  std::vector<bool> slow_start_after_idle = {true};
};

// Bounds that keep a config's work within what one machine holds: more is an error naming the field.
inline constexpr int kMaxRepetitions = 100'000;

struct ExperimentConfig {
  std::string name;
  std::string description;
  uint64_t seed = 1;
  std::vector<ContextSetConfig> context_sets;
  std::vector<std::string> codecs = {"cachegen", "quant:bits=8"};
  std::vector<int> levels;  // empty: every level of each multi-level codec
  std::optional<KvScaleConfig> kv_scale;
  std::optional<DecodeConfig> decode;  // none: "measured", the profiles' decode_s
  std::vector<TraceSetConfig> trace_sets;
  std::vector<std::string> policies;
  std::vector<double> slos_s;
  std::vector<std::string> hardware;  // shipped names or paths; empty: no hardware profile
  WorkloadConfig workload;
  SimOptionsConfig sim;
  // None: one fluid path with sim.request_rtt_ms and sim.chunk_rtt_ms, and no network coordinates in
  // the results (what configs before the network section ran, byte for byte).
  std::optional<NetworkConfig> network;
  int repetitions = 1;  // 1 … kMaxRepetitions
  std::vector<std::string> figures;  // plotting/plot.py kinds; empty: what the results hold
};

// Throws common::JsonError "<where>: <JSON path>: <what was expected, what was found>".
ExperimentConfig parse_experiment_config(const nlohmann::json& json, const std::string& where);
ExperimentConfig read_experiment_config(const std::string& path);
// Every field explicit (defaults filled in): what results/<name>/config.json holds, and what
// parse_experiment_config reads back to the same config.
nlohmann::json to_json(const ExperimentConfig& config);

const char* to_string(ContextSource source);

}  // namespace kvstream::experiments
