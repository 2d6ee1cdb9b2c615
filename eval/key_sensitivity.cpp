#include "eval/key_sensitivity.h"

#include <stdexcept>
#include <string>

namespace kvstream::eval {

KeyMetrics::KeyMetrics(const models::LlamaModel& model, int sinks, int query_positions, int top_keys)
    : model_(model), sinks_(sinks), query_positions_(query_positions), top_keys_(top_keys) {
  if (query_positions < 1 || top_keys < 1) throw std::invalid_argument("key metrics: query_positions and top_keys must be >= 1");
  const auto& config = model.config();
  sums_.resize(size_t(config.n_layers));
  for (auto& m : sums_) m = torch::zeros({config.n_kv_heads, config.head_dim(), config.head_dim()}, torch::kFloat64);
}

models::AttentionObserver KeyMetrics::observer(int64_t tokens) {
  const int64_t T = tokens;
  if (T <= sinks_ + 1)
    throw std::invalid_argument("key metrics: a window of " + std::to_string(T) + " tokens, more than " +
                                std::to_string(sinks_ + 1) + " needed");
  ++windows_;
  const auto& config = model_.config();
  const int64_t heads = config.n_heads, kv_heads = config.n_kv_heads, group = heads / kv_heads, head_dim = config.head_dim();
  const int64_t count = std::min<int64_t>(query_positions_, T - sinks_ - 1), keys = std::min<int64_t>(top_keys_, T);
  const auto index = torch::TensorOptions().dtype(torch::kInt64).device(model_.device());
  const auto t = torch::linspace(double(sinks_ + 1), double(T - 1), count, torch::kFloat64).round().to(index);  // [P]
  const auto s = torch::arange(T, index).unsqueeze(0);                                                            // [1][T]
  const auto outside = (s < sinks_).logical_or(s > t.unsqueeze(1));  // [P][T]: not a key of t
  return [this, t, outside, heads, kv_heads, group, head_dim, count, keys](const models::LayerAttention& layer) {
    // All query heads at once, [H][P][...]; query head h reads KV head h / group.
    const auto values = layer.values.repeat_interleave(group, 0);  // [H][T][D]
    const auto o = layer.outputs.index_select(1, t);                // [H][P][D]
    // Each position's `keys` keys of most attention, -1 marking a key outside [sinks, t].
    const auto [a, key] = layer.attention.index_select(1, t).masked_fill(outside, -1.0).topk(keys, 2);  // [H][P][K]
    const auto distance =
        (values.square().sum(2).unsqueeze(1) - 2 * o.bmm(values.transpose(1, 2)) + o.square().sum(2).unsqueeze(2))
            .clamp_min(0)
            .gather(2, key);  // |v_s - o_t|^2
    const auto weight = (a.clamp_min(0) * distance.sqrt()).reshape({-1, 1}) / std::sqrt(double(head_dim));
    // d_ts = R(t - s) q_t / sqrt(D): each query turned as RoPE turns one at position t - s.
    const auto q = layer.queries.index_select(1, t).unsqueeze(2).expand({heads, count, keys, head_dim}).reshape({-1, head_dim});
    const auto lag = (t.view({1, count, 1}) - key).clamp_min(0).reshape({-1});
    const auto x = (model_.rope_at(q, lag) * weight).view({kv_heads, -1, head_dim});  // a KV head's query heads together
    sums_[size_t(layer.layer)] += x.transpose(1, 2).bmm(x).to(torch::kCPU, torch::kFloat64);
  };
}

std::vector<std::vector<double>> KeyMetrics::metrics() const {
  if (windows_ == 0) throw std::invalid_argument("key metrics: no windows");
  const auto& config = model_.config();
  const int64_t kv_heads = config.n_kv_heads, head_dim = config.head_dim(), channels = kv_heads * head_dim;
  std::vector<std::vector<double>> out(sums_.size(), std::vector<double>(size_t(channels * channels), 0.0));
  for (size_t l = 0; l < sums_.size(); ++l) {
    const auto m = sums_[l].contiguous();
    const double* p = m.data_ptr<double>();
    for (int64_t h = 0; h < kv_heads; ++h)
      for (int64_t i = 0; i < head_dim; ++i)
        for (int64_t j = 0; j < head_dim; ++j)
          out[l][size_t((h * head_dim + i) * channels + h * head_dim + j)] = p[(h * head_dim + i) * head_dim + j];
  }
  return out;
}

std::vector<std::vector<double>> key_metrics(const models::LlamaModel& model,
                                             const std::vector<std::vector<int32_t>>& tokens, int sinks,
                                             int query_positions, int top_keys) {
  KeyMetrics metrics(model, sinks, query_positions, top_keys);
  for (const auto& window : tokens)
    model.forward(window, {}, nullptr, /*last_logits_only=*/true, metrics.observer(static_cast<int64_t>(window.size())));
  return metrics.metrics();
}

}  // namespace kvstream::eval
