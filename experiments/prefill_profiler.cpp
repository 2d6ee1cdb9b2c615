#include "prefill_profiler.h"

#include <Eigen/Dense>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <random>
#include <stdexcept>

namespace kvstream::experiments {
namespace {

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// Random KV of `tokens` tokens for every layer (values do not matter for timing).
models::KvState random_prefix(const models::LlamaConfig& c, int64_t tokens, torch::Device device) {
  models::KvState kv;
  if (tokens == 0) return kv;
  for (int l = 0; l < c.n_layers; ++l) {
    kv.keys.push_back(torch::randn({c.n_kv_heads, tokens, c.head_dim()}).to(device));
    kv.values.push_back(torch::randn({c.n_kv_heads, tokens, c.head_dim()}).to(device));
  }
  return kv;
}

}  // namespace

PrefillCostModel fit_prefill_cost(const std::vector<PrefillPoint>& points) {
  if (points.size() < 3) throw std::invalid_argument("fitting the prefill cost needs at least 3 points");
  Eigen::MatrixXd x(points.size(), 3);
  Eigen::VectorXd y(points.size());
  for (size_t i = 0; i < points.size(); ++i) {
    const double p = double(points[i].prefix_tokens), n = double(points[i].chunk_tokens), w = 1.0 / points[i].seconds;
    x.row(Eigen::Index(i)) << w, w * n, w * n * (p + n / 2);
    y(Eigen::Index(i)) = 1.0;  // = w * seconds
  }
  const Eigen::Vector3d coef = x.colPivHouseholderQr().solve(y);
  PrefillCostModel model{coef(0), coef(1), coef(2), 0};
  double sum = 0;
  for (const auto& pt : points) {
    const double rel = (model.seconds(double(pt.prefix_tokens), double(pt.chunk_tokens)) - pt.seconds) / pt.seconds;
    sum += rel * rel;
  }
  model.rms_relative_error = std::sqrt(sum / double(points.size()));
  return model;
}

std::vector<PrefillPoint> measure_prefill(const models::LlamaModel& model, const ProfileGrid& grid, int full_layers) {
  const auto& c = model.config();
  const double scale = full_layers > c.n_layers ? double(full_layers) / c.n_layers : 1.0;
  std::mt19937 rng(1);
  std::uniform_int_distribution<int32_t> token(0, c.vocab_size - 1);
  std::vector<PrefillPoint> points;
  for (int64_t p : grid.prefix_tokens)
    for (int64_t n : grid.chunk_tokens) {
      if (p + n > c.max_seq_len) continue;
      const auto prefix = random_prefix(c, p, model.device());
      std::vector<int32_t> ids(static_cast<size_t>(n));
      for (auto& id : ids) id = token(rng);
      std::vector<double> times;
      for (int r = 0; r < grid.warmup + grid.repetitions; ++r) {
        const auto start = std::chrono::steady_clock::now();
        const auto logits = model.forward(ids, prefix, nullptr, /*last_logits_only=*/true);
        logits.sum().item<float>();  // waits for the device
        const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        if (r >= grid.warmup) times.push_back(s);
      }
      points.push_back({p, n, median(times) * scale});
    }
  return points;
}

const std::vector<GpuSpec>& analytic_gpus() {
  // Dense fp16/bf16 tensor-core peaks from NVIDIA's datasheets; 50% is a typical prefill efficiency.
  static const std::vector<GpuSpec> gpus = {{"a40", 149.7e12, 0.5}, {"a100", 312e12, 0.5}, {"h100", 989e12, 0.5}};
  return gpus;
}

std::vector<PrefillPoint> analytic_prefill(const models::LlamaConfig& c, const GpuSpec& gpu, const ProfileGrid& grid) {
  const double q_dim = double(c.n_heads) * c.head_dim(), kv_dim = c.kv_channels();
  const double layer_params = double(c.dim) * (2 * q_dim + 2 * kv_dim) + 3.0 * c.dim * c.hidden_dim;
  std::vector<PrefillPoint> points;
  for (int64_t p : grid.prefix_tokens)
    for (int64_t n : grid.chunk_tokens) {
      // per layer: 2 FLOPs per weight per token, and QK^T plus AV over the visible context
      const double flops = c.n_layers * (2.0 * double(n) * layer_params + 4.0 * double(n) * (double(p) + double(n) / 2) * q_dim) +
                           2.0 * c.dim * double(c.vocab_size);  // logits of the last position
      points.push_back({p, n, flops / (gpu.peak_flops * gpu.efficiency)});
    }
  return points;
}

nlohmann::json prefill_profile_json(const std::string& kind, const std::string& device, const models::LlamaConfig& c,
                                    int layers_timed, const std::vector<PrefillPoint>& points, const std::string& notes) {
  const PrefillCostModel fit = fit_prefill_cost(points);
  nlohmann::json pts = nlohmann::json::array();
  for (const auto& p : points) pts.push_back({{"prefix_tokens", p.prefix_tokens}, {"chunk_tokens", p.chunk_tokens}, {"seconds", p.seconds}});
  return {{"kind", kind},
          {"device", device},
          {"model", c.name},
          {"architecture",
           {{"layers", c.n_layers}, {"dim", c.dim}, {"hidden_dim", c.hidden_dim}, {"heads", c.n_heads},
            {"kv_heads", c.n_kv_heads}, {"head_dim", c.head_dim()}, {"vocab", c.vocab_size}}},
          {"layers_timed", layers_timed},
          {"prefill_cost_model",
           {{"formula", "seconds = a + b*n + c*n*(p + n/2), n = chunk tokens, p = prefix tokens"},
            {"a", fit.a}, {"b", fit.b}, {"c", fit.c}, {"rms_relative_error", fit.rms_relative_error}}},
          {"points", pts},
          {"notes", notes}};
}

}  // namespace kvstream::experiments
