// What a codec's GPU path returns (codec/cachegen/gpu_*.h, codec/transform/gpu_transform_*.h): the
// result, equal bit for bit to the CPU codec's, with the kernels' times and the device's name.
#pragma once
#include <cstdint>
#include <vector>

#include "codec/cuda/gpu_times.h"
#include "codec/kv_cache.h"

namespace kvstream::codec {

struct GpuDecoded : GpuDecodeTimes {
  KvCache kv;
};

struct GpuEncoded : GpuEncodeTimes {
  std::vector<uint8_t> bitstream;
};

}  // namespace kvstream::codec
