// The GPU side of the transform codec (gpu_transform_decode.cu, gpu_transform_encode.cu), in
// plain C++17 so that nvcc can compile it: the host wrappers (codec/transform/gpu_transform_decode.h,
// codec/transform/gpu_transform_encode.h) check their input as the CPU codec does and hand over plain arrays,
// the calibration's packed by codec/transform/gpu_transform_model.h. Without CUDA,
// gpu_transform_kernels_stub.cc answers "built without CUDA".
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "codec/cuda/gpu_times.h"

namespace kvstream::codec {

// The calibration at one distortion, for one chunk shape: rows in CacheGen order (r < L keys),
// C = kv_heads * head_dim, T tokens of which the first S are sinks (fp16, not transformed).
struct GpuTransformModel {
  int layers = 0, kv_heads = 0, head_dim = 0;
  int64_t tokens = 0;  // T
  int sinks = 0;       // S
  int rope_pairs = 0;  // RopePairs (rope.h); 0: none
  const double* rope_cos = nullptr;        // [T][D/2] (RopeAngles of the chunk)
  const double* rope_sin = nullptr;
  const int* kept = nullptr;               // [2L]
  const double* step = nullptr;            // [2L]
  const uint8_t* classes = nullptr;        // [2L][C]: class of kept component i at r * C + i
  const uint16_t* class_cdf = nullptr;     // [2 parts][kTransformClasses][kTransformAlphabet + 1]
  const uint64_t* symbol_start = nullptr;  // [2L + 1]: row r's symbols are [start[r], start[r + 1]) of the chunk's
  int groups = 0;                          // rANS groups (TransformGroups, transform_payload.h)
  const int* group_row = nullptr;          // [groups]
  const uint64_t* group_start = nullptr;   // [groups + 1]: group g codes the chunk's symbols [start[g], start[g + 1])
  const float* mean = nullptr;             // [2L][C]
  const float* basis = nullptr;            // the kept components of every row, row after row: [sum kept][C]
  const float* synthesis = nullptr;        // the same of their syntheses (Row::synthesis_basis); `basis` when equal
  const uint64_t* basis_start = nullptr;   // [2L]: row r's first float in `basis` and `synthesis`
  uint64_t basis_floats = 0;

  int rows() const { return 2 * layers; }
  int channels() const { return kv_heads * head_dim; }
  uint64_t symbols() const { return symbol_start[rows()]; }
};

struct GpuTransformDecodeJob {
  GpuTransformModel model;
  const uint8_t* rans = nullptr;
  uint64_t rans_bytes = 0;
  const uint64_t* group_offset = nullptr;  // [groups + 1] into rans
  const uint8_t* low_bits = nullptr;
  uint64_t low_bits_bytes = 0;
  const uint8_t* escapes = nullptr;
  uint64_t escape_count = 0;
  const uint16_t* sink = nullptr;          // fp16 [2L][S][C]
};

struct GpuTransformDecodeResult : GpuDecodeTimes {
  std::vector<float> values;            // canonical [L][2][T][C]
  bool corrupt = false;                 // a rANS group did not end in its final states
  bool bad_escape = false;              // an escaped q out of range
  uint64_t low_bits_used = 0, escapes_used = 0;  // stage 2's totals, for TransformPayload::check_totals
  bool coefficients_skipped = false;    // the totals ran past LOWB or ESCP: stages 3-4 did not run
};

struct GpuTransformEncodeJob {
  GpuTransformModel model;
  // The chunk (checked finite by the host): token t of CacheGen row r = part·L + layer is the C floats
  // at kv + ((layer·2 + part)·kv_tokens + kv_t0 + t)·C, KvChunkView's layout.
  const float* kv = nullptr;
  int64_t kv_tokens = 0, kv_t0 = 0;
};

struct GpuTransformEncodeResult : GpuEncodeTimes {  // upload: the coded tokens
  std::vector<uint32_t> group_bytes;             // GRPS, per group
  std::vector<uint8_t> rans, low_bits, escapes;  // RANS, LOWB, ESCP
};

// Both return false with `error` set when no GPU can be used or the chunk has more symbols than one
// scan takes (2^31 - 1). Never throw for a missing device.
bool gpu_transform_decode_chunk(const GpuTransformDecodeJob& job, GpuTransformDecodeResult& result, std::string& error);
bool gpu_transform_encode_chunk(const GpuTransformEncodeJob& job, GpuTransformEncodeResult& result, std::string& error);

}  // namespace kvstream::codec
