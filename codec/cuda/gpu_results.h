// What a codec's GPU path returns (codec/cachegen/gpu_*.h, codec/transform/gpu_transform_*.h): the
// result, equal bit for bit to the CPU codec's, with the kernels' times and the device's name.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "codec/kv_cache.h"

namespace kvstream::codec {

struct GpuDecoded {
  KvCache kv;
  float entropy_ms = 0, dequantize_ms = 0;  // kernel times (lookups + entropy decode; dequantize)
  float copy_ms = 0;                        // a device-to-device copy of the chunk's fp16 bytes, for scale
  std::string device;
};

struct GpuEncoded {
  std::vector<uint8_t> bitstream;
  float quantize_ms = 0, cdf_ms = 0, entropy_ms = 0, compact_ms = 0;  // the encode kernels
  float upload_ms = 0;  // the fp32 KV to the GPU (in use it is there already)
  float copy_ms = 0;    // a device-to-device copy of the chunk's fp16 bytes, for scale
  std::string device;
  float encode_ms() const { return quantize_ms + cdf_ms + entropy_ms + compact_ms; }
};

}  // namespace kvstream::codec
