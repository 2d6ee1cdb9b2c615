// eval::key_metrics (eval/key_sensitivity.h) on stories260K against the formula written out term by
// term: the attention tensors captured from the same forward pass, each query turned to each lag by
// the codec's own RoPE (codec/transform/rope.h, another implementation than the model's).
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "codec/transform/rope.h"
#include "eval/key_sensitivity.h"
#include "eval/kv_bridge.h"
#include "models/model_catalog.h"

namespace kvstream::eval {
namespace {

TEST(KeyMetrics, EqualTheSumWrittenOutTermByTerm) {
  const auto loaded = models::load_model("stories260K");
  const models::LlamaModel& model = *loaded.model;
  const auto& config = model.config();
  std::mt19937 rng(3);
  std::vector<int32_t> tokens(40);
  for (auto& t : tokens) t = int32_t(rng() % uint32_t(config.vocab_size));
  const int sinks = 4, heads = config.n_heads, kv_heads = config.n_kv_heads, group = heads / kv_heads;
  const int D = config.head_dim(), C = kv_heads * D;
  const auto metrics = key_metrics(model, {tokens}, sinks, 3);  // positions 5, 22, 39
  ASSERT_EQ(metrics.size(), size_t(config.n_layers));

  std::vector<models::LayerAttention> layers;
  model.forward(tokens, {}, nullptr, true, [&](const models::LayerAttention& a) {
    layers.push_back({a.layer, a.queries.to(torch::kFloat64).contiguous(), a.attention.to(torch::kFloat64).contiguous(),
                      a.values.to(torch::kFloat64).contiguous(), a.outputs.to(torch::kFloat64).contiguous()});
  });
  const codec::RopeSpec rope = rope_spec(config);
  for (const auto& layer : layers) {
    std::vector<double> want(size_t(C) * size_t(C), 0.0);
    const auto q = layer.queries.accessor<double, 3>(), a = layer.attention.accessor<double, 3>();
    const auto v = layer.values.accessor<double, 3>(), o = layer.outputs.accessor<double, 3>();
    for (int h = 0; h < heads; ++h)
      for (const int t : {5, 22, 39})
        for (int s = sinks; s <= t; ++s) {
          double distance = 0;
          for (int i = 0; i < D; ++i) distance += std::pow(v[h / group][s][i] - o[h][t][i], 2);
          const double weight = a[h][t][s] * a[h][t][s] * distance / D;
          std::vector<float> d(static_cast<size_t>(D));
          for (int i = 0; i < D; ++i) d[size_t(i)] = float(q[h][t][i]);
          codec::RopeAngles(rope, D, t - s, 1).rotate(d.data(), 1, 0, /*undo=*/false);
          const int base = (h / group) * D;
          for (int i = 0; i < D; ++i)
            for (int j = 0; j < D; ++j) want[size_t((base + i) * C + base + j)] += weight * d[size_t(i)] * d[size_t(j)];
        }
    double largest = 0;
    for (double w : want) largest = std::max(largest, std::abs(w));
    ASSERT_GT(largest, 0);
    const auto& got = metrics[size_t(layer.layer)];
    for (size_t k = 0; k < want.size(); ++k)
      ASSERT_NEAR(got[k], want[k], 1e-4 * largest) << "layer " << layer.layer << " entry " << k / C << ", " << k % C;
  }
  EXPECT_THROW(key_metrics(model, {}, sinks, 3), std::invalid_argument);
  EXPECT_THROW(key_metrics(model, {tokens}, sinks, 0), std::invalid_argument);
  EXPECT_THROW(key_metrics(model, {{1, 2, 3, 4, 5}}, sinks, 3), std::invalid_argument);
}

}  // namespace
}  // namespace kvstream::eval
