// The profiling stage of an experiment (docs/ARCHITECTURE.md §1 step 1): every context set of the
// config becomes context profiles for the simulator, measured on a real model (through the profile
// cache and a measurer, profiling/model_context_request.h), synthetic, or read from files; then the config's kv_scale is applied, and each simulated profile
// gets the fp16 KV bytes per token (the target's under kv_scale) from which the simulator times
// decode when the config's `decode` names a throughput (sim::CostModel).
#pragma once
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "experiments/experiment_config.h"
#include "profiling/model_context_request.h"
#include "sim/context_profile.h"

namespace kvstream::experiments {

struct LoadedContextSet {
  std::vector<sim::ContextProfile> measured;  // as profiled (written to results/<name>/profiles/)
  std::vector<sim::ContextProfile> simulated; // kv_scale applied, fp16_bytes_per_token set: what the simulator runs on
  std::vector<nlohmann::json> level_rows;     // levels.csv rows (result_tables.h), unscaled
  nlohmann::json provenance;                  // for manifest.json: source, model asked/used, cache keys, scaling
};

// Throws with the config's JSON path for a context set whose model or data cannot be loaded (after
// trying its fallback), whose contexts do not fit the model, or which needs a model while
// `measure_model` is empty (a build without LibTorch); and for profile files that do not load.
std::vector<LoadedContextSet> load_context_sets(const ExperimentConfig& config, const std::string& where,
                                                const std::filesystem::path& cache_dir,
                                                const profiling::ModelContextMeasurer& measure_model,
                                                const profiling::ProgressLog& log);

}  // namespace kvstream::experiments
