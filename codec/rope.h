// Rotary position embedding (RoPE) on the keys of one token, undone and redone by the transform codec
// (transform_codec.cpp): a model stores its keys *after* RoPE, which turns each pair of a head's
// dimensions by an angle that grows with the position, so the same content at two positions looks
// different and a basis fitted across positions has to spend components on the rotation. Undone,
// the keys of all positions share one distribution (KVTC, ICLR 2026, §3).
//
// Pair j of a head (j < D/2) turns by position * theta^(-2j/D), the same angle models/llama_model.cpp
// uses; the pairs are (2j, 2j+1) in the llama2.c / Meta layout and (j, j + D/2) in Hugging Face's.
// Undo then redo gives the keys back up to float rounding (the angles are computed in double); the
// rotation is not part of what is entropy-coded, so the encoder's and decoder's libm need not agree.
#pragma once
#include <cmath>
#include <cstdint>
#include <vector>

namespace kvstream::codec {

enum class RopePairs : uint8_t { kNone = 0, kInterleaved = 1, kRotateHalf = 2 };

struct RopeSpec {
  RopePairs pairs = RopePairs::kNone;  // kNone: the keys are used as they are
  double theta = 10000.0;
};

// The angles of tokens [t0, t0 + tokens), computed once per chunk and shared by every layer's keys.
class RopeAngles {
 public:
  RopeAngles(const RopeSpec& rope, int head_dim, int64_t t0, int64_t tokens)
      : pairs_(rope.pairs), half_(head_dim / 2), cos_(size_t(tokens) * size_t(half_)), sin_(cos_.size()) {
    if (pairs_ == RopePairs::kNone) return;
    for (int j = 0; j < half_; ++j) {
      const double frequency = std::pow(rope.theta, -2.0 * j / head_dim);
      for (int64_t t = 0; t < tokens; ++t) {
        const double angle = double(t0 + t) * frequency;
        cos_[size_t(t) * half_ + j] = std::cos(angle);
        sin_[size_t(t) * half_ + j] = std::sin(angle);
      }
    }
  }

  // Turns the `heads` heads of token t's key (t counted from t0) by -angle (undo) or +angle (redo).
  void rotate(float* key, int heads, int64_t t, bool undo) const {
    if (pairs_ == RopePairs::kNone) return;
    const double* c = cos_.data() + size_t(t) * half_;
    const double* s = sin_.data() + size_t(t) * half_;
    const double sign = undo ? -1.0 : 1.0;
    for (int h = 0; h < heads; ++h) {
      float* x = key + h * 2 * half_;
      for (int j = 0; j < half_; ++j) {
        const int a = pairs_ == RopePairs::kInterleaved ? 2 * j : j;
        const int b = pairs_ == RopePairs::kInterleaved ? 2 * j + 1 : j + half_;
        const double xa = x[a], xb = x[b], sj = sign * s[j];
        x[a] = static_cast<float>(xa * c[j] - xb * sj);
        x[b] = static_cast<float>(xb * c[j] + xa * sj);
      }
    }
  }

 private:
  RopePairs pairs_;
  int half_;
  std::vector<double> cos_, sin_;  // [tokens][half]
};

}  // namespace kvstream::codec
