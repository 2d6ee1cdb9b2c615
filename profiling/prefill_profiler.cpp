#include "profiling/prefill_profiler.h"

#include <algorithm>
#include <chrono>
#include <cctype>
#include <cmath>
#include <random>
#include <sstream>
#include <stdexcept>

#include "models/device_query.h"

namespace kvstream::profiling {
namespace {

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// Random KV of `tokens` tokens for every layer of `model`, on its device in its dtype (values do
// not matter for timing).
models::KvState random_prefix(const models::LlamaModel& model, int64_t tokens) {
  const auto& c = model.config();
  const auto options = torch::TensorOptions().device(model.device()).dtype(model.dtype());
  models::KvState kv;
  if (tokens == 0) return kv;
  for (int l = 0; l < c.n_layers; ++l) {
    kv.keys.push_back(torch::randn({c.n_kv_heads, tokens, c.head_dim()}, options));
    kv.values.push_back(torch::randn({c.n_kv_heads, tokens, c.head_dim()}, options));
  }
  return kv;
}

// Returns once `device` has finished all work queued on it; the CPU runs synchronously.
void synchronize(torch::Device device) {
  if (device.is_cuda()) torch::cuda::synchronize(device.index());
}

const std::vector<std::pair<std::string, torch::ScalarType>>& dtype_names() {
  static const std::vector<std::pair<std::string, torch::ScalarType>> names = {
      {"fp32", torch::kFloat32}, {"bf16", torch::kBFloat16}, {"fp16", torch::kFloat16}};
  return names;
}

}  // namespace

std::vector<PrefillPoint> measure_prefill(const models::LlamaModel& model, const ProfileGrid& grid, int full_layers) {
  const auto& c = model.config();
  const double scale = full_layers > c.n_layers ? double(full_layers) / c.n_layers : 1.0;
  std::mt19937 rng(1);
  std::uniform_int_distribution<int32_t> token(0, c.vocab_size - 1);
  std::vector<PrefillPoint> points;
  for (int64_t p : grid.prefix_tokens)
    for (int64_t n : grid.chunk_tokens) {
      if (p + n > c.max_seq_len) continue;
      const auto prefix = random_prefix(model, p);
      std::vector<int32_t> ids(static_cast<size_t>(n));
      for (auto& id : ids) id = token(rng);
      std::vector<double> times;
      for (int r = 0; r < grid.warmup + grid.repetitions; ++r) {
        synchronize(model.device());  // nothing earlier (the prefix, the last repetition) is timed
        const auto start = std::chrono::steady_clock::now();
        model.forward(ids, prefix, nullptr, /*last_logits_only=*/true);
        synchronize(model.device());
        const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        if (r >= grid.warmup) times.push_back(s);
      }
      points.push_back({p, n, median(times) * scale});
    }
  return points;
}

torch::ScalarType parse_dtype(const std::string& name) {
  for (const auto& [text, dtype] : dtype_names())
    if (text == name) return dtype;
  throw std::invalid_argument("dtype must be fp32, bf16 or fp16, got \"" + name + "\"");
}

std::string dtype_name(torch::ScalarType dtype) {
  for (const auto& [text, known] : dtype_names())
    if (known == dtype) return text;
  throw std::invalid_argument(std::string("no name for dtype ") + c10::toString(dtype));
}

std::string describe_device(torch::Device device, torch::ScalarType dtype) {
  const std::string name = models::query_device(device).name;
  const std::string precision = " (" + dtype_name(dtype) + ")";
  if (device.is_cpu()) return "cpu: " + name + ", " + std::to_string(torch::get_num_threads()) + " torch thread(s)" + precision;
  return name + precision;
}

int layers_that_fit(const models::LlamaConfig& c, const ProfileGrid& grid, torch::ScalarType dtype, int64_t free_bytes) {
  const double element = double(c10::elementSize(dtype));
  const double dim = c.dim, hidden = c.hidden_dim, heads = c.n_heads, head_dim = c.head_dim(), kv_dim = c.kv_channels();
  const double q_dim = heads * head_dim;
  // The largest activations of any point, and the longest prefix kept for every layer.
  double activations = 0, prefix = 0;
  for (int64_t p : grid.prefix_tokens)
    for (int64_t n : grid.chunk_tokens) {
      if (p + n > c.max_seq_len) continue;
      const double context = double(p + n), chunk = double(n);
      // scores, masked scores and softmax [heads, n, p+n]; K, V repeated per query head and
      // concatenated with the prefix; the FFN's three [n, hidden]; the boolean mask.
      activations = std::max(activations, element * (3 * heads * chunk * context + 2 * heads * context * head_dim +
                                                      2 * kv_dim * context + 3 * chunk * hidden) + chunk * context);
      prefix = std::max(prefix, double(p));
    }
  const double per_layer = element * (2 * q_dim * dim + 2 * kv_dim * dim + 3 * dim * hidden + 2 * dim + 2 * kv_dim * prefix);
  const double fixed = element * (c.tied_embeddings ? 1 : 2) * double(c.vocab_size) * dim + activations;
  const double budget = 0.9 * double(free_bytes) - fixed;
  const int layers = budget < per_layer ? 0 : int(std::min(double(c.n_layers), std::floor(budget / per_layer)));
  if (layers < 1)
    throw std::runtime_error(c.name + " in " + dtype_name(dtype) + ": not even one layer fits in " +
                             std::to_string(free_bytes >> 20) + " MiB of free memory (one layer needs " +
                             std::to_string(int64_t(per_layer) >> 20) + " MiB besides " + std::to_string(int64_t(fixed) >> 20) +
                             " MiB for the embedding, the classifier and the activations)");
  return layers;
}

nlohmann::json measured_prefill_profile(const models::LlamaModel& model, const ProfileGrid& grid, int full_layers,
                                        const std::string& weights) {
  const auto points = measure_prefill(model, grid, full_layers);
  auto config = model.config();
  const int timed = config.n_layers;
  std::string notes = weights + "; " + dtype_name(model.dtype()) + " on " + model.device().str();
  if (full_layers > timed) {
    notes += "; timed " + std::to_string(timed) + " of " + std::to_string(full_layers) + " layers and scaled by " +
             std::to_string(full_layers) + "/" + std::to_string(timed) + " (embedding and final logits scaled too)";
    config.n_layers = full_layers;
  }
  notes += "; median of " + std::to_string(grid.repetitions) + " after " + std::to_string(grid.warmup) + " warm-up";
  return prefill_profile_json("measured", describe_device(model.device(), model.dtype()), config, timed, points, notes);
}

}  // namespace kvstream::profiling
