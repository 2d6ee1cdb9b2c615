// How much each direction of a layer's key error moves what attention reads, in the coordinates the
// transform codec codes keys in (RoPE undone, codec/transform/rope.h): the metric its key basis
// whitens (TransformCalibration::Options::key_metrics, docs/CODECS.md "Keys weighed by the queries").
//
// An error e in the un-turned key of token s moves query t's logit by d_ts . e, d_ts = R(t - s) q_t /
// sqrt(D) (q_t before RoPE, R the model's rotation), and the head's output by a_ts (v_s - o_t) times
// that, to first order. So the mean square output error of an error e that is the same for every key
// is e^T M e with, per KV head,
//   M = sum over its query heads, sampled query positions t, keys s in [sinks, t] of
//       a_ts^2 |v_s - o_t|^2 d_ts d_ts^T,
// a_ts the attention weight, v_s the value, o_t the head's output. The KL is a function of those
// outputs; M is its proxy (docs/RATE_DISTORTION.md "What limits the 8-bit end").
#pragma once
#include <cstdint>
#include <vector>

#include "models/llama_model.h"

namespace kvstream::eval {

// One metric per layer, C x C row-major (C = n_kv_heads * head_dim, channel = head * head_dim + dim),
// zero between heads, summed over windows (each prefilled from position 0) at `query_positions`
// query positions per window spread evenly over [sinks + 1, T), over the `top_keys` keys s of each
// position and query head with the most attention a_ts (all of them when there are no more). What
// that leaves out is small where attention is concentrated: the keys left have a_ts <= a, the
// smallest kept, and sum a_ts <= 1, so their a_ts^2 add up to at most a. The cost is query heads x
// positions x top_keys x D^2 per layer, not x T, and no forward pass of its own: the sums grow as
// the windows' passes report their attention (window_kv's observer, eval/text_windows.h).
class KeyMetrics {
 public:
  // Throws std::invalid_argument for query_positions or top_keys < 1.
  KeyMetrics(const models::LlamaModel& model, int sinks, int query_positions, int top_keys);
  // What the forward pass of a window of `tokens` tokens from position 0 reports to; it adds that
  // window. Throws std::invalid_argument for a window of no more than sinks + 1 tokens.
  models::AttentionObserver observer(int64_t tokens);
  // Throws std::invalid_argument when no window was observed.
  std::vector<std::vector<double>> metrics() const;

 private:
  const models::LlamaModel& model_;
  int sinks_, query_positions_, top_keys_, windows_ = 0;
  std::vector<torch::Tensor> sums_;  // [L] of [kv_heads][D][D], float64 on the CPU
};

// The same over `tokens`, running their forward passes.
std::vector<std::vector<double>> key_metrics(const models::LlamaModel& model,
                                             const std::vector<std::vector<int32_t>>& tokens, int sinks,
                                             int query_positions, int top_keys);

}  // namespace kvstream::eval
