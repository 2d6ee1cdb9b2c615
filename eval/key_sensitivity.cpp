#include "eval/key_sensitivity.h"

#include <stdexcept>
#include <string>

namespace kvstream::eval {

std::vector<std::vector<double>> key_metrics(const models::LlamaModel& model,
                                             const std::vector<std::vector<int32_t>>& tokens, int sinks,
                                             int query_positions) {
  if (tokens.empty()) throw std::invalid_argument("key_metrics: no windows");
  if (query_positions < 1) throw std::invalid_argument("key_metrics: query_positions must be >= 1");
  const auto& config = model.config();
  const int64_t heads = config.n_heads, kv_heads = config.n_kv_heads, group = heads / kv_heads;
  const int64_t head_dim = config.head_dim(), channels = kv_heads * head_dim;
  const auto f64 = torch::TensorOptions().dtype(torch::kFloat64);
  std::vector<torch::Tensor> metric(size_t(config.n_layers));  // [kv_heads][D][D] each, float64 on the CPU
  for (auto& m : metric) m = torch::zeros({kv_heads, head_dim, head_dim}, f64);

  for (const auto& window : tokens) {
    const auto T = static_cast<int64_t>(window.size());
    if (T <= sinks + 1)
      throw std::invalid_argument("key_metrics: a window of " + std::to_string(T) + " tokens, more than " +
                                  std::to_string(sinks + 1) + " needed");
    const int64_t count = std::min<int64_t>(query_positions, T - sinks - 1);
    const auto index = torch::TensorOptions().dtype(torch::kInt64).device(model.device());
    // Positions t, and for each the key s = t - lag of every lag 0 .. T - 1 (valid for s >= sinks).
    const auto t = torch::linspace(double(sinks + 1), double(T - 1), count, f64).round().to(index);
    const auto s = t.unsqueeze(1) - torch::arange(T, index).unsqueeze(0);  // [P][T]
    const auto valid = (s >= sinks).to(model.dtype());
    const auto s_index = s.clamp_min(0);
    model.forward(window, {}, nullptr, /*last_logits_only=*/true, [&](const models::LayerAttention& layer) {
      for (int64_t qh = 0; qh < heads; ++qh) {
        const auto v = layer.values[qh / group];                        // [T][D]
        const auto o = layer.outputs[qh].index_select(0, t);           // [P][D]
        const auto a = layer.attention[qh].index_select(0, t).gather(1, s_index) * valid;  // a_ts, [P][T] by lag
        const auto distance = (v.square().sum(1).unsqueeze(0) - 2 * o.matmul(v.t()) + o.square().sum(1).unsqueeze(1))
                                  .clamp_min(0)
                                  .gather(1, s_index);                 // |v_s - o_t|^2, [P][T] by lag
        // d_ts = R(lag) q_t / sqrt(D): q_t turned to each lag, as RoPE turns a query at position `lag`.
        const auto q = layer.queries[qh].index_select(0, t).unsqueeze(1).expand({count, T, head_dim});
        const auto d = model.rope(q.contiguous(), 0) / std::sqrt(double(head_dim));
        const auto x = (d * (a.square() * distance).sqrt().unsqueeze(2)).reshape({count * T, head_dim});
        metric[size_t(layer.layer)][qh / group] += x.t().matmul(x).to(torch::kCPU, torch::kFloat64);
      }
    });
  }

  std::vector<std::vector<double>> out(metric.size(), std::vector<double>(size_t(channels * channels), 0.0));
  for (size_t l = 0; l < metric.size(); ++l) {
    const auto m = metric[l].contiguous();
    const double* p = m.data_ptr<double>();
    for (int64_t h = 0; h < kv_heads; ++h)
      for (int64_t i = 0; i < head_dim; ++i)
        for (int64_t j = 0; j < head_dim; ++j)
          out[l][size_t((h * head_dim + i) * channels + h * head_dim + j)] = p[(h * head_dim + i) * head_dim + j];
  }
  return out;
}

}  // namespace kvstream::eval
