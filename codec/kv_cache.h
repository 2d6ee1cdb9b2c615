// The KV cache in kvstream's canonical layout [L][2][T][C] (docs/ARCHITECTURE.md §3): for each layer,
// K then V, each token-major with C = H·D channels (channel = head·D + dim). fp32 in memory.
// A chunk is a token range [t0, t1) of one context, the unit of streaming and of independent decoding.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace kvstream::codec {

enum class KvPart : int { kKey = 0, kValue = 1 };

struct KvShape {
  int layers = 0;      // L
  int kv_heads = 0;    // H (KV heads only, GQA)
  int head_dim = 0;    // D
  int64_t tokens = 0;  // T

  int channels() const { return kv_heads * head_dim; }  // C
  int rows() const { return 2 * layers; }               // CacheGen rows: K layers 0..L-1, then V layers
  int64_t elements() const { return int64_t(2) * layers * tokens * channels(); }
  int64_t fp16_bytes() const { return elements() * 2; }
  bool operator==(const KvShape&) const = default;
  std::string to_string() const;  // "L=5 H=4 D=8 T=512"
};

// Read-only view of tokens [t0, t1) of a KvCache. Rows are addressed the CacheGen way:
// row r < L is K of layer r, row r >= L is V of layer r - L.
class KvChunkView {
 public:
  KvChunkView(const float* base, KvShape full_shape, int64_t t0, int64_t t1);
  KvShape shape() const { return shape_; }  // shape().tokens == t1 - t0
  int64_t t0() const { return t0_; }
  int64_t t1() const { return t0_ + shape_.tokens; }
  const float* base() const { return base_; }          // the whole context's values
  int64_t full_tokens() const { return full_tokens_; }  // its tokens
  // Pointer to the C channels of token t (0-based within the chunk) of CacheGen row r.
  const float* token(int row, int64_t t) const {
    const int layer = row % shape_.layers;
    const int part = row / shape_.layers;
    return base_ + ((int64_t(layer) * 2 + part) * full_tokens_ + t0_ + t) * shape_.channels();
  }

 private:
  const float* base_;
  KvShape shape_;
  int64_t full_tokens_;
  int64_t t0_;
};

class KvCache {
 public:
  KvCache() = default;
  explicit KvCache(KvShape shape);  // zero-filled
  KvCache(KvShape shape, std::vector<float> values);

  const KvShape& shape() const { return shape_; }
  const std::vector<float>& values() const { return values_; }
  std::vector<float>& values() { return values_; }

  float* token(int layer, KvPart part, int64_t t) { return values_.data() + offset(layer, part, t); }
  const float* token(int layer, KvPart part, int64_t t) const { return values_.data() + offset(layer, part, t); }
  // CacheGen row order (see KvChunkView).
  float* row_token(int row, int64_t t) {
    return token(row % shape_.layers, static_cast<KvPart>(row / shape_.layers), t);
  }
  const float* row_token(int row, int64_t t) const {
    return token(row % shape_.layers, static_cast<KvPart>(row / shape_.layers), t);
  }

  KvChunkView chunk(int64_t t0, int64_t t1) const;  // throws std::out_of_range on a bad range
  KvChunkView all() const { return chunk(0, shape_.tokens); }

  // Concatenate caches of equal L/H/D along tokens.
  static KvCache concat_tokens(const std::vector<KvCache>& parts);
  // Copy of a view.
  static KvCache from_view(const KvChunkView& view);

 private:
  int64_t offset(int layer, KvPart part, int64_t t) const {
    return ((int64_t(layer) * 2 + static_cast<int>(part)) * shape_.tokens + t) * shape_.channels();
  }
  KvShape shape_;
  std::vector<float> values_;
};

// Token chunk boundaries [t0, t1) of size chunk_tokens (the last may be shorter).
std::vector<std::pair<int64_t, int64_t>> chunk_ranges(int64_t tokens, int64_t chunk_tokens);

}  // namespace kvstream::codec
