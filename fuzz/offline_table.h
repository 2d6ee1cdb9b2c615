// The offline CDF table (codec/offline_cdf.h) that fuzz_bitstream hands the decoder and fuzz_seeds
// encodes its offline-CDF seeds with, so that those seeds reach the offline-CDF decoder: built the
// same way in both, from deterministic synthetic KV of the fixture's shape (L = 5, C = 4·8) with the
// generic ladder and raw tokens (cachegen's default), so it needs no data and its id never changes.
#pragma once
#include <cmath>
#include <memory>
#include <vector>

#include "codec/offline_cdf.h"

namespace kvstream::fuzz {

inline std::shared_ptr<const codec::OfflineCdfTable> offline_table() {
  static const auto table = [] {
    codec::KvCache kv(codec::KvShape{.layers = 5, .kv_heads = 4, .head_dim = 8, .tokens = 64});
    for (size_t i = 0; i < kv.values().size(); ++i) kv.values()[i] = float(std::sin(0.37 * double(i)) * (1 + i % 7));
    return std::make_shared<const codec::OfflineCdfTable>(
        codec::OfflineCdfTable::build({kv.all()}, codec::Ladder::from_name_or_path("generic"), codec::TokenMode{}));
  }();
  return table;
}

}  // namespace kvstream::fuzz
