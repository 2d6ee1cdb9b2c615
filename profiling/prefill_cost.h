// The prefill cost model of a hardware profile (docs/PROFILES.md, sim/hardware_profile.h):
// the time to prefill a chunk of n tokens after a prefix of p tokens already in the KV cache, which
// is what recomputing a text chunk costs. Timed points (profiling/prefill_profiler.h) or analytic ones
// (FLOPs / (peak FLOP/s x efficiency) for a named GPU) are fitted to
//   t_s = a + b·n + c·n·(p + n/2)
// where b covers the per-token matmuls and c the attention over the prefix and the causal half of the
// chunk. The profile JSON is what the simulator reads. No torch.
#pragma once
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "models/llama_config.h"
#include "sim/hardware_profile.h"

namespace kvstream::profiling {

struct PrefillPoint {
  int64_t prefix_tokens = 0, chunk_tokens = 0;
  double seconds = 0;
};

using sim::PrefillCostModel;

// Least squares (Eigen) on the points, weighted by 1/seconds so that every point counts relatively,
// with a, b, c >= 0 (a term that noise would make negative is 0).
PrefillCostModel fit_prefill_cost(const std::vector<PrefillPoint>& points);

struct ProfileGrid {
  std::vector<int64_t> prefix_tokens = {0, 128, 512};
  std::vector<int64_t> chunk_tokens = {16, 64, 256};
  int warmup = 1, repetitions = 3;
};

struct GpuSpec {
  std::string name;
  double peak_flops;   // dense fp16/bf16 tensor-core FLOP/s
  double efficiency;   // assumed fraction of peak reached by prefill
};
const std::vector<GpuSpec>& analytic_gpus();  // a40, a100, h100
std::vector<PrefillPoint> analytic_prefill(const models::LlamaConfig& config, const GpuSpec& gpu, const ProfileGrid& grid);

// The hardware-profile JSON (sim/README.md "Hardware profile JSON", docs/PROFILES.md).
nlohmann::json prefill_profile_json(const std::string& kind, const std::string& device, const models::LlamaConfig& config,
                                    int layers_timed, const std::vector<PrefillPoint>& points, const std::string& notes);

// A short lower-case name of a GPU for file names, from its runtime name: the first word that has
// a digit, after vendor and brand words, cut at '-' ("NVIDIA H200" -> "h200", "NVIDIA A100-SXM4-80GB"
// -> "a100", "NVIDIA GeForce RTX 4090" -> "rtx4090"). Throws std::invalid_argument when nothing is left.
std::string device_slug(const std::string& device_name);

}  // namespace kvstream::profiling
