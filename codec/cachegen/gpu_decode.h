// CacheGen bitstreams decoded on the GPU (gpu_decode.cu), behind the CPU decoder's checks: the
// bitstream is parsed and validated on the host (cachegen_payload.h), the kernels decode every
// stream or group of the chunk in one launch and dequantize in another, and the host checks the
// symbols as the CPU decoder does. The result equals decode_bitstream's bit for bit (a test, run
// where a GPU exists; scripts/gpu-check.sh).
#pragma once
#include <span>
#include <string>

#include "codec/codec.h"
#include "codec/cuda/gpu_results.h"

namespace kvstream::codec {

// Throws BitstreamError for a malformed or corrupt bitstream (as decode_bitstream does), and
// std::runtime_error for one that is not cachegen or when no GPU can be used (saying why).
GpuDecoded gpu_decode_cachegen(std::span<const uint8_t> bitstream, const DecodeContext& context = {});

}  // namespace kvstream::codec
