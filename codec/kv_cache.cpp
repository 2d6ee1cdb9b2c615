#include "codec/kv_cache.h"

#include <algorithm>
#include <stdexcept>

namespace kvstream::codec {

std::string KvShape::to_string() const {
  return "L=" + std::to_string(layers) + " H=" + std::to_string(kv_heads) + " D=" + std::to_string(head_dim) +
         " T=" + std::to_string(tokens);
}

KvChunkView::KvChunkView(const float* base, KvShape full_shape, int64_t t0, int64_t t1)
    : base_(base), shape_(full_shape), full_tokens_(full_shape.tokens), t0_(t0) {
  shape_.tokens = t1 - t0;
}

KvCache::KvCache(KvShape shape) : shape_(shape), values_(static_cast<size_t>(shape.elements()), 0.0f) {}

KvCache::KvCache(KvShape shape, std::vector<float> values) : shape_(shape), values_(std::move(values)) {
  if (static_cast<int64_t>(values_.size()) != shape_.elements())
    throw std::invalid_argument("KvCache: " + std::to_string(values_.size()) + " values for shape " +
                                shape_.to_string() + " (expected " + std::to_string(shape_.elements()) + ")");
}

KvChunkView KvCache::chunk(int64_t t0, int64_t t1) const {
  if (t0 < 0 || t1 > shape_.tokens || t0 >= t1)
    throw std::out_of_range("KvCache::chunk: range [" + std::to_string(t0) + ", " + std::to_string(t1) +
                            ") is not a non-empty part of [0, " + std::to_string(shape_.tokens) + ")");
  return KvChunkView(values_.data(), shape_, t0, t1);
}

KvCache KvCache::from_view(const KvChunkView& view) {
  KvCache out(view.shape());
  const int64_t c = view.shape().channels();
  for (int row = 0; row < view.shape().rows(); ++row)
    for (int64_t t = 0; t < view.shape().tokens; ++t) std::copy_n(view.token(row, t), c, out.row_token(row, t));
  return out;
}

KvCache KvCache::concat_tokens(const std::vector<KvCache>& parts) {
  if (parts.empty()) throw std::invalid_argument("KvCache::concat_tokens: nothing to concatenate");
  KvShape shape = parts.front().shape();
  shape.tokens = 0;
  for (const auto& p : parts) {
    if (p.shape().layers != shape.layers || p.shape().kv_heads != shape.kv_heads || p.shape().head_dim != shape.head_dim)
      throw std::invalid_argument("KvCache::concat_tokens: shapes differ (" + parts.front().shape().to_string() +
                                  " vs " + p.shape().to_string() + ")");
    shape.tokens += p.shape().tokens;
  }
  KvCache out(shape);
  const int64_t c = shape.channels();
  int64_t t_out = 0;
  for (const auto& p : parts) {
    for (int row = 0; row < shape.rows(); ++row)
      std::copy_n(p.values().data() + (int64_t(row % shape.layers) * 2 + row / shape.layers) * p.shape().tokens * c,
                  p.shape().tokens * c, out.row_token(row, t_out));
    t_out += p.shape().tokens;
  }
  return out;
}

std::vector<std::pair<int64_t, int64_t>> chunk_ranges(int64_t tokens, int64_t chunk_tokens) {
  if (chunk_tokens <= 0) throw std::invalid_argument("chunk_tokens must be positive");
  std::vector<std::pair<int64_t, int64_t>> ranges;
  for (int64_t t0 = 0; t0 < tokens; t0 += chunk_tokens) ranges.emplace_back(t0, std::min(tokens, t0 + chunk_tokens));
  return ranges;
}

}  // namespace kvstream::codec
