// Prefill timing profiles (`kvstream profile-prefill`): the time to prefill a chunk of n tokens
// after a prefix of p tokens already in the KV cache, the cost of recomputing a text chunk.
//
// Measured: time the model (real or random weights: timing does not depend on values) on a grid
// of (p, n), warm-up then the median of repetitions, possibly on a subset of layers scaled to the
// full depth. Analytic: FLOPs / (peak FLOP/s x efficiency) for a named GPU.
// Both fit t_s = a + b·n + c·n·(p + n/2): b covers the per-token matmuls, c the attention over
// the prefix and the causal half of the chunk. The profile JSON is what the simulator reads.
#pragma once
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "hardware_profile.h"
#include "llama_model.h"

namespace kvstream::experiments {

struct PrefillPoint {
  int64_t prefix_tokens = 0, chunk_tokens = 0;
  double seconds = 0;
};

using sim::PrefillCostModel;

// Least squares (Eigen) on the points, weighted by 1/seconds so that every point counts relatively.
PrefillCostModel fit_prefill_cost(const std::vector<PrefillPoint>& points);

struct ProfileGrid {
  std::vector<int64_t> prefix_tokens = {0, 128, 512};
  std::vector<int64_t> chunk_tokens = {16, 64, 256};
  int warmup = 1, repetitions = 3;
};

// Times `model` (its config.n_layers layers); `full_layers` > n_layers scales every time by
// full_layers / n_layers. Points with p + n beyond the model's max_seq_len are skipped.
std::vector<PrefillPoint> measure_prefill(const models::LlamaModel& model, const ProfileGrid& grid, int full_layers);

struct GpuSpec {
  std::string name;
  double peak_flops;   // dense fp16/bf16 tensor-core FLOP/s
  double efficiency;   // assumed fraction of peak reached by prefill
};
const std::vector<GpuSpec>& analytic_gpus();  // a40, a100, h100
std::vector<PrefillPoint> analytic_prefill(const models::LlamaConfig& config, const GpuSpec& gpu, const ProfileGrid& grid);

// The hardware-profile JSON (documented in README "Prefill timing profiles").
nlohmann::json prefill_profile_json(const std::string& kind, const std::string& device, const models::LlamaConfig& config,
                                    int layers_timed, const std::vector<PrefillPoint>& points, const std::string& notes);

}  // namespace kvstream::experiments
