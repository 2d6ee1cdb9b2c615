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
// zero between heads, summed over `tokens` (each window prefilled from position 0) at
// `query_positions` query positions per window spread evenly over [sinks + 1, T). Throws
// std::invalid_argument for no windows, query_positions < 1 or a window of no more than sinks + 1 tokens.
std::vector<std::vector<double>> key_metrics(const models::LlamaModel& model,
                                             const std::vector<std::vector<int32_t>>& tokens, int sinks,
                                             int query_positions);

}  // namespace kvstream::eval
