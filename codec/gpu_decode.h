// CacheGen bitstreams decoded on the GPU (cuda/gpu_decode.cu), behind the CPU decoder's checks: the
// bitstream is parsed and validated on the host (cachegen_payload.h), the kernels decode every
// stream or group of the chunk in one launch and dequantize in another, and the host checks the
// symbols as the CPU decoder does. The result equals decode_bitstream's bit for bit (a test, run
// where a GPU exists; scripts/gpu-check.sh).
#pragma once
#include <span>
#include <string>

#include "codec/codec.h"
#include "codec/kv_cache.h"

namespace kvstream::codec {

struct GpuDecoded {
  KvCache kv;
  float entropy_ms = 0, dequantize_ms = 0;  // kernel times (lookups + entropy decode; dequantize)
  float copy_ms = 0;                        // a device-to-device copy of the chunk's fp16 bytes, for scale
  std::string device;
};

// Throws BitstreamError for a malformed or corrupt bitstream (as decode_bitstream does), and
// std::runtime_error for one that is not cachegen or when no GPU can be used (saying why).
GpuDecoded gpu_decode_cachegen(std::span<const uint8_t> bitstream, const DecodeContext& context = {});

}  // namespace kvstream::codec
