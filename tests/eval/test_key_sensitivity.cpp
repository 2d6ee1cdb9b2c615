// eval::key_metrics (eval/key_sensitivity.h) on stories260K against the formula written out term by
// term: the attention tensors captured from the same forward pass, each query turned to each lag by
// the codec's own RoPE (codec/transform/rope.h, another implementation than the model's), every key
// of a position or its few of most attention.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>

#include "codec/transform/rope.h"
#include "eval/key_sensitivity.h"
#include "eval/kv_bridge.h"
#include "models/model_catalog.h"

namespace kvstream::eval {
namespace {

// The metric written out: for each query head and position t of {5, 22, 39}, the `top_keys` keys s
// in [sinks, t] of most attention, each adding a_ts^2 |v_s - o_t|^2 d d^T / D with d = R(t - s) q_t.
std::vector<std::vector<double>> written_out(const models::LlamaModel& model, const std::vector<int32_t>& tokens,
                                             int sinks, size_t top_keys) {
  const auto& config = model.config();
  const int heads = config.n_heads, group = heads / config.n_kv_heads, D = config.head_dim();
  const int C = config.n_kv_heads * D;
  std::vector<std::vector<double>> out;
  const codec::RopeSpec rope = rope_spec(config);
  model.forward(tokens, {}, nullptr, true, [&](const models::LayerAttention& layer) {
    const auto q = layer.queries.to(torch::kFloat64).contiguous(), a = layer.attention.to(torch::kFloat64).contiguous();
    const auto v = layer.values.to(torch::kFloat64).contiguous(), o = layer.outputs.to(torch::kFloat64).contiguous();
    const auto qa = q.accessor<double, 3>(), aa = a.accessor<double, 3>(), va = v.accessor<double, 3>(), oa = o.accessor<double, 3>();
    std::vector<double> want(size_t(C) * size_t(C), 0.0);
    for (int h = 0; h < heads; ++h)
      for (const int t : {5, 22, 39}) {
        std::vector<int> keys;
        for (int s = sinks; s <= t; ++s) keys.push_back(s);
        std::sort(keys.begin(), keys.end(), [&](int x, int y) { return aa[h][t][x] > aa[h][t][y]; });
        keys.resize(std::min(keys.size(), top_keys));
        for (const int s : keys) {
          double distance = 0;
          for (int i = 0; i < D; ++i) distance += std::pow(va[h / group][s][i] - oa[h][t][i], 2);
          const double weight = aa[h][t][s] * aa[h][t][s] * distance / D;
          std::vector<float> d(static_cast<size_t>(D));
          for (int i = 0; i < D; ++i) d[size_t(i)] = float(qa[h][t][i]);
          codec::RopeAngles(rope, D, t - s, 1).rotate(d.data(), 1, 0, /*undo=*/false);
          const int base = (h / group) * D;
          for (int i = 0; i < D; ++i)
            for (int j = 0; j < D; ++j) want[size_t((base + i) * C + base + j)] += weight * d[size_t(i)] * d[size_t(j)];
        }
      }
    out.push_back(std::move(want));
  });
  return out;
}

TEST(KeyMetrics, EqualTheSumWrittenOutTermByTerm) {
  const auto loaded = models::load_model("stories260K");
  const models::LlamaModel& model = *loaded.model;
  std::mt19937 rng(3);
  std::vector<int32_t> tokens(40);
  for (auto& t : tokens) t = int32_t(rng() % uint32_t(model.config().vocab_size));
  const int sinks = 4;
  for (const int top_keys : {128, 8}) {  // every key of a position, and its 8 of most attention
    const auto metrics = key_metrics(model, {tokens}, sinks, 3, top_keys);  // positions 5, 22, 39
    const auto want = written_out(model, tokens, sinks, size_t(top_keys));
    ASSERT_EQ(metrics.size(), want.size());
    for (size_t l = 0; l < want.size(); ++l) {
      double largest = 0;
      for (double w : want[l]) largest = std::max(largest, std::abs(w));
      ASSERT_GT(largest, 0);
      for (size_t k = 0; k < want[l].size(); ++k)
        ASSERT_NEAR(metrics[l][k], want[l][k], 1e-4 * largest) << "top " << top_keys << " layer " << l << " entry " << k;
    }
  }
  EXPECT_THROW(key_metrics(model, {}, sinks, 3, 8), std::invalid_argument);
  EXPECT_THROW(key_metrics(model, {tokens}, sinks, 0, 8), std::invalid_argument);
  EXPECT_THROW(key_metrics(model, {tokens}, sinks, 3, 0), std::invalid_argument);
  EXPECT_THROW(key_metrics(model, {{1, 2, 3, 4, 5}}, sinks, 3, 8), std::invalid_argument);
}

}  // namespace
}  // namespace kvstream::eval
