// Transform bitstreams (codec/FORMAT.md §3a) decoded on the GPU (gpu_transform_decode.cu),
// behind the CPU decoder's checks: the host parses and checks the bitstream (transform_payload.h),
// the kernels run the stages of transform_decode_stages.h, and the host checks what they report (a
// corrupt group, LOWB or ESCP not used up exactly, an escaped value out of range) as the CPU decoder
// does. Symbols and coefficients equal the CPU's; the values equal the stages' ordered sums, which
// differ from the CPU decoder's GEMM by float rounding only (tests/codec/transform/test_gpu_transform.cpp,
// run where a GPU exists; scripts/gpu-check.sh).
#pragma once
#include <span>

#include "codec/codec.h"
#include "codec/cuda/gpu_results.h"

namespace kvstream::codec {

// Throws BitstreamError for a malformed or corrupt bitstream or a calibration missing from `context`
// (as decode_bitstream does), and std::runtime_error for one that is not a transform bitstream or
// when no GPU can be used (saying why).
GpuDecoded gpu_decode_transform(std::span<const uint8_t> bitstream, const DecodeContext& context);

}  // namespace kvstream::codec
