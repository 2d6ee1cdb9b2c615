#include "eval/kv_sensitivity.h"

#include <algorithm>
#include <cmath>
#include <random>
#include <stdexcept>

#include "codec/transform/rope.h"
#include "codec/transform/transform_decode_stages.h"
#include "eval/kv_bridge.h"
#include "eval/metrics.h"

namespace kvstream::eval {

namespace {

// The core of both measures: for each row r, `perturb(r, w, prefix)` changes row r of window w's
// prefix (every window's KV but its last fed_tokens tokens), those tokens are fed on it, and the KL
// from the clean distributions is averaged over positions and windows.
template <typename Perturb>
std::vector<double> row_perturbation_kl(const models::LlamaModel& model, const std::vector<codec::KvCache>& windows,
                                        const std::vector<std::vector<int32_t>>& tokens, int fed_tokens, int first_token,
                                        Perturb&& perturb) {
  if (windows.empty() || windows.size() != tokens.size()) throw std::invalid_argument("row sensitivity: one token list per window");
  const int rows = windows.front().shape().rows();
  std::vector<double> kl(size_t(rows), 0.0);
  for (size_t w = 0; w < windows.size(); ++w) {
    const int64_t prefix = windows[w].shape().tokens - fed_tokens;
    if (fed_tokens < 2 || prefix <= first_token)
      throw std::invalid_argument("row sensitivity: window " + std::to_string(w) + " has too few tokens for " +
                                  std::to_string(fed_tokens) + " fed tokens");
    const codec::KvCache clean = codec::KvCache::from_view(windows[w].chunk(0, prefix));
    const std::vector<int32_t> fed(tokens[w].end() - fed_tokens, tokens[w].end());
    const auto device = model.device();
    const auto reference = next_token_log_probs(model, fed, to_kv_state(clean, model.config(), device));
    for (int r = 0; r < rows; ++r) {
      codec::KvCache perturbed = clean;
      perturb(r, w, perturbed);
      const auto log_probs = next_token_log_probs(model, fed, to_kv_state(perturbed, model.config(), device));
      kl[size_t(r)] += score_continuation(reference, log_probs, fed).kl_mean / double(windows.size());
    }
  }
  return kl;
}

}  // namespace

std::vector<double> row_decode_error_kl(const models::LlamaModel& model, const std::vector<codec::KvCache>& windows,
                                        const std::vector<codec::KvCache>& decoded,
                                        const std::vector<std::vector<int32_t>>& tokens, int fed_tokens) {
  if (decoded.size() != windows.size()) throw std::invalid_argument("row_decode_error_kl: one decoded KV per window");
  for (size_t w = 0; w < windows.size(); ++w)
    if (!(decoded[w].shape() == windows[w].shape()))
      throw std::invalid_argument("row_decode_error_kl: decoded window " + std::to_string(w) + " differs in shape");
  return row_perturbation_kl(model, windows, tokens, fed_tokens, 0, [&](int r, size_t w, codec::KvCache& kv) {
    const int channels = kv.shape().channels();
    for (int64_t t = 0; t < kv.shape().tokens; ++t) std::copy_n(decoded[w].row_token(r, t), channels, kv.row_token(r, t));
  });
}

std::vector<double> transform_row_weights(const models::LlamaModel& model, const WindowKv& windows, int count,
                                          const codec::TransformCalibration& cal) {
  constexpr double kNoise = 0.01;
  constexpr int kFedTokens = 32;
  const int rows = 2 * cal.layers(), channels = cal.channels();
  const auto n = static_cast<std::ptrdiff_t>(std::min(windows.kv.size(), size_t(std::max(count, 1))));
  const std::vector<codec::KvCache> kv(windows.kv.begin(), windows.kv.begin() + n);
  const std::vector<std::vector<int32_t>> tokens(windows.tokens.begin(), windows.tokens.begin() + n);
  // The noise has the shape of the row's coding error: the same variance on every component, through
  // the row's synthesis and, for keys, RoPE at the token's position (the windows start at position 0).
  // An orthonormal basis turns that into white noise of the same variance, drawn as such.
  std::mt19937 rng(1);
  std::vector<float> coefficients(static_cast<size_t>(channels)), error(static_cast<size_t>(channels));
  const auto kl = row_perturbation_kl(model, kv, tokens, kFedTokens, cal.sink_tokens(), [&](int r, size_t, codec::KvCache& x) {
    const auto& row = cal.row(r);
    std::normal_distribution<float> noise(0.0f, static_cast<float>(std::sqrt(kNoise * row.mean_variance)));
    const codec::RopeAngles angles(r < cal.layers() ? cal.rope() : codec::RopeSpec{}, cal.head_dim(), 0, x.shape().tokens);
    for (int64_t t = cal.sink_tokens(); t < x.shape().tokens; ++t) {
      float* values = x.row_token(r, t);
      if (row.synthesis.empty()) {
        for (int c = 0; c < channels; ++c) values[c] += noise(rng);
        continue;
      }
      for (auto& y : coefficients) y = noise(rng);
      for (int c = 0; c < channels; ++c)  // the decoder's stage 4 with a mean of 0
        error[size_t(c)] = codec::transform_value(coefficients.data(), channels, row.synthesis.data(), channels, c, 0.0f);
      angles.rotate(error.data(), cal.kv_heads(), t, /*undo=*/false);
      for (int c = 0; c < channels; ++c) values[c] += error[size_t(c)];
    }
  });
  double log_sum = 0;
  for (double k : kl) log_sum += std::log(std::max(k, 1e-12));
  const double geometric_mean = std::exp(log_sum / rows);
  std::vector<double> weights(static_cast<size_t>(rows));
  for (int r = 0; r < rows; ++r)
    weights[size_t(r)] = std::clamp(geometric_mean / std::max(kl[size_t(r)], 1e-12),
                                    codec::TransformCalibration::kMinRowWeight, codec::TransformCalibration::kMaxRowWeight);
  return weights;
}

}  // namespace kvstream::eval
