// Measured prefill timing profiles (`kvstream profile-prefill`, profiling/gpu_prefill): time the model
// (real or random weights: timing does not depend on values) on a grid of (prefix p, chunk n)
// tokens, warm-up then the median of repetitions, possibly on a subset of layers scaled to the full
// depth, on the CPU or a CUDA GPU in the model's dtype; then fit the cost model of
// profiling/prefill_cost.h.
#pragma once
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "models/llama_model.h"
#include "profiling/prefill_cost.h"

namespace kvstream::profiling {

// Times `model` (its config.n_layers layers) on its device, in its dtype; `full_layers` > n_layers
// scales every time by full_layers / n_layers. Points with p + n beyond the model's max_seq_len are
// skipped. The clock is read only after the device has finished the work (CUDA is asynchronous).
std::vector<PrefillPoint> measure_prefill(const models::LlamaModel& model, const ProfileGrid& grid, int full_layers);

// "fp32" | "bf16" | "fp16" <-> torch dtype; parse_dtype throws std::invalid_argument otherwise.
torch::ScalarType parse_dtype(const std::string& name);
std::string dtype_name(torch::ScalarType dtype);

// The profile's `device`: "NVIDIA H200 (bf16)", or "cpu: <model name>, N torch thread(s) (fp32)".
std::string describe_device(torch::Device device, torch::ScalarType dtype);

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

}  // namespace kvstream::profiling
