// Prefill timing profiles (`kvstream profile-prefill`): the time to prefill a chunk of n tokens
// after a prefix of p tokens already in the KV cache, the cost of recomputing a text chunk.
//
// Measured: time the model (real or random weights: timing does not depend on values) on a grid
// of (p, n), warm-up then the median of repetitions, possibly on a subset of layers scaled to the
// full depth, on the CPU or a CUDA GPU in the model's dtype. Analytic: FLOPs / (peak FLOP/s x
// efficiency) for a named GPU.
// Both fit t_s = a + b·n + c·n·(p + n/2): b covers the per-token matmuls, c the attention over
// the prefix and the causal half of the chunk. The profile JSON is what the simulator reads.
#pragma once
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "models/llama_model.h"
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

// Times `model` (its config.n_layers layers) on its device, in its dtype; `full_layers` > n_layers
// scales every time by full_layers / n_layers. Points with p + n beyond the model's max_seq_len are
// skipped. The clock is read only after the device has finished the work (CUDA is asynchronous).
std::vector<PrefillPoint> measure_prefill(const models::LlamaModel& model, const ProfileGrid& grid, int full_layers);

// "fp32" | "bf16" | "fp16" <-> torch dtype; parse_dtype throws std::invalid_argument otherwise.
torch::ScalarType parse_dtype(const std::string& name);
std::string dtype_name(torch::ScalarType dtype);

// The profile's `device`: "NVIDIA H200 (bf16)", or "cpu: <model name>, N torch thread(s) (fp32)".
std::string describe_device(torch::Device device, torch::ScalarType dtype);

// A short lower-case name of a GPU for file names, from its runtime name: the first word that has
// a digit, after vendor and brand words, cut at '-' ("NVIDIA H200" -> "h200", "NVIDIA A100-SXM4-80GB"
// -> "a100", "NVIDIA GeForce RTX 4090" -> "rtx4090"). Throws std::invalid_argument when nothing is left.
std::string device_slug(const std::string& device_name);

// How many of config's layers (at most config.n_layers) can be timed over `grid` in `free_bytes` of
// device memory at `dtype`: their weights and prefix KV, plus the embedding, classifier and the
// activations of the largest point, within 90 % of free_bytes (the rest covers the allocator's
// fragmentation and library workspaces). Throws std::runtime_error when not even one layer fits.
int layers_that_fit(const models::LlamaConfig& config, const ProfileGrid& grid, torch::ScalarType dtype, int64_t free_bytes);

// measure_prefill, then prefill_profile_json of kind "measured" for the full depth: the device and
// dtype in `device`, and in `notes` where the weights came from (`weights`, e.g. "random weights"),
// the dtype, the layers timed and scaled, and the repetitions.
nlohmann::json measured_prefill_profile(const models::LlamaModel& model, const ProfileGrid& grid, int full_layers,
                                        const std::string& weights);

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

}  // namespace kvstream::profiling
