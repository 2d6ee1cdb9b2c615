#include "profiling/prefill_cost.h"

#include <Eigen/Dense>
#include <algorithm>
#include <cctype>
#include <cmath>
#include <sstream>
#include <stdexcept>

namespace kvstream::profiling {

PrefillCostModel fit_prefill_cost(const std::vector<PrefillPoint>& points) {
  if (points.size() < 3) throw std::invalid_argument("fitting the prefill cost needs at least 3 points");
  Eigen::MatrixXd x(points.size(), 3);
  Eigen::VectorXd y(points.size());
  for (size_t i = 0; i < points.size(); ++i) {
    const double p = double(points[i].prefix_tokens), n = double(points[i].chunk_tokens), w = 1.0 / points[i].seconds;
    x.row(Eigen::Index(i)) << w, w * n, w * n * (p + n / 2);
    y(Eigen::Index(i)) = 1.0;  // = w * seconds
  }
  // Costs are >= 0 (the simulator rejects a negative coefficient), but timing noise can push a small
  // term below 0. The constrained optimum is the least-squares fit on some subset of the terms, so
  // take the best fit whose coefficients are all >= 0 over the 7 subsets; one with a single term
  // always qualifies (its coefficient is a ratio of positive sums).
  Eigen::Vector3d coef = Eigen::Vector3d::Zero();
  double best_residual = INFINITY;
  for (int subset = 1; subset < 8; ++subset) {
    std::vector<Eigen::Index> terms;
    for (Eigen::Index t = 0; t < 3; ++t)
      if (subset >> t & 1) terms.push_back(t);
    Eigen::MatrixXd columns(x.rows(), Eigen::Index(terms.size()));
    for (size_t k = 0; k < terms.size(); ++k) columns.col(Eigen::Index(k)) = x.col(terms[k]);
    const Eigen::VectorXd solution = columns.colPivHouseholderQr().solve(y);
    if ((solution.array() < 0).any()) continue;
    Eigen::Vector3d candidate = Eigen::Vector3d::Zero();
    for (size_t k = 0; k < terms.size(); ++k) candidate(terms[k]) = solution(Eigen::Index(k));
    const double residual = (x * candidate - y).squaredNorm();
    if (residual < best_residual) {
      best_residual = residual;
      coef = candidate;
    }
  }
  PrefillCostModel model{coef(0), coef(1), coef(2), 0};
  double sum = 0;
  for (const auto& pt : points) {
    const double rel = (model.seconds(double(pt.prefix_tokens), double(pt.chunk_tokens)) - pt.seconds) / pt.seconds;
    sum += rel * rel;
  }
  model.rms_relative_error = std::sqrt(sum / double(points.size()));
  return model;
}

std::string device_slug(const std::string& device_name) {
  std::string slug;
  std::istringstream words(device_name);
  for (std::string word; words >> word;) {
    std::string kept;
    for (char ch : word.substr(0, word.find('-')))
      if (std::isalnum(static_cast<unsigned char>(ch))) kept += char(std::tolower(static_cast<unsigned char>(ch)));
    if (kept.empty() || kept == "nvidia" || kept == "tesla" || kept == "geforce") continue;
    slug += kept;
    if (std::any_of(kept.begin(), kept.end(), [](char ch) { return std::isdigit(static_cast<unsigned char>(ch)); })) break;
  }
  if (slug.empty()) throw std::invalid_argument("no file-name slug in the device name \"" + device_name + "\"");
  return slug;
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

}  // namespace kvstream::profiling
