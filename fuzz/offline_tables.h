// The offline tables that fuzz_bitstream hands the decoder and fuzz_seeds encodes its seeds with, so
// that those seeds reach the decoders that need one: CacheGen's offline CDF table (codec/cachegen/offline_cdf.h)
// and the transform codec's calibration (codec/transform/transform_calibration.h). Both are built the same way
// in both programs from deterministic synthetic KV of the fixture's shape (L = 5, C = 4·8), so they
// need no data and their ids never change.
#pragma once
#include <cmath>
#include <memory>
#include <vector>

#include "codec/cachegen/offline_cdf.h"
#include "codec/transform/transform_calibration.h"

namespace kvstream::fuzz {

// Smooth, per-channel-scaled values with some correlation between channels, so that PCA has
// structure to find and the class tables are not degenerate.
inline codec::KvCache synthetic_kv(int64_t tokens) {
  codec::KvCache kv(codec::KvShape{.layers = 5, .kv_heads = 4, .head_dim = 8, .tokens = tokens});
  for (size_t i = 0; i < kv.values().size(); ++i) kv.values()[i] = float(std::sin(0.37 * double(i)) * (1 + i % 7));
  return kv;
}

// With the generic ladder and raw tokens (cachegen's default).
inline std::shared_ptr<const codec::OfflineCdfTable> offline_table() {
  static const auto table = [] {
    const codec::KvCache kv = synthetic_kv(64);
    return std::make_shared<const codec::OfflineCdfTable>(
        codec::OfflineCdfTable::build({kv.all()}, codec::Ladder::from_name_or_path("generic"), codec::TokenMode{}));
  }();
  return table;
}

// With rotate-half RoPE (the Llama convention), so that the keys' un-rotation is decoded too.
inline codec::TransformCalibration::Options transform_calibration_options() {
  codec::TransformCalibration::Options options;
  options.model = "fuzz-synthetic";
  options.rope = codec::RopeSpec{.pairs = codec::RopePairs::kRotateHalf, .theta = 10000.0};
  return options;
}

inline std::shared_ptr<const codec::TransformCalibration> transform_calibration() {
  static const auto calibration = std::make_shared<const codec::TransformCalibration>(
      codec::TransformCalibration::build({synthetic_kv(128).all()}, transform_calibration_options()));
  return calibration;
}

// The same with keys weighed by a metric (a synthesis per K row: a version-2 .kvcal): per layer a
// diagonal metric whose weights fall with the channel.
inline codec::TransformCalibration weighed_transform_calibration() {
  auto options = transform_calibration_options();
  const int channels = 32;
  options.key_metrics.assign(5, std::vector<double>(size_t(channels) * channels, 0.0));
  for (auto& metric : options.key_metrics)
    for (int c = 0; c < channels; ++c) metric[size_t(c) * channels + c] = 1.0 / (1 + c % 8);
  return codec::TransformCalibration::build({synthetic_kv(128).all()}, options);
}

}  // namespace kvstream::fuzz
