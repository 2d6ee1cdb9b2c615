// Transform chunks encoded on the GPU (gpu_transform_encode.cu): checked and planned as the CPU
// encoder does (transform_payload.h), the coded tokens go to the GPU, the stages of
// transform_encode_stages.h run there, and the host writes the bitstream with the CPU encoder's
// writer. The bytes equal the CPU stage launcher's (tests/codec/transform/test_gpu_transform.cpp, run
// where a GPU exists; scripts/gpu-check.sh), and so the CPU encoder's (projection.h sums in the
// stages' order).
#pragma once
#include "codec/codec.h"
#include "codec/cuda/gpu_results.h"
#include "codec/kv_cache.h"
#include "codec/transform/transform_calibration.h"

namespace kvstream::codec {

// Encodes `chunk` (its first token at position t0) at relative distortion d with sub_tokens per rANS
// group (0: each row's default), as transform:cal=...,d=D[,sub=N] would. Throws std::invalid_argument for a shape other than the calibration's,
// too many tokens, d outside (0, 1] or a value fp16 cannot hold (the CPU encoder's errors), and
// std::runtime_error when no GPU can be used (saying why). GpuEncoded's quantize_ms is the projection
// and quantization, compact_ms the scans and LOWB/ESCP placement, cdf_ms 0 (the tables are offline).
GpuEncoded gpu_encode_transform(const TransformCalibration& cal, double d, int sub_tokens, const KvChunkView& chunk,
                                int64_t t0, SourceDtype dtype = SourceDtype::kFp16);

}  // namespace kvstream::codec
