// The GPU side of decoding a transform chunk (cuda/gpu_transform_decode.cu), in plain C++17 so that
// nvcc can compile it: the host wrapper (codec/gpu_transform_decode.h) parses and checks the bitstream
// (transform_payload.h) and hands over its arrays and the calibration's, packed. Without CUDA,
// gpu_transform_decode_kernels_stub.cc answers "built without CUDA".
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace kvstream::codec {

// Host arrays of one parsed chunk; rows in CacheGen order (r < L keys), C = kv_heads * head_dim.
struct GpuTransformDecodeJob {
  int layers = 0, kv_heads = 0, head_dim = 0;
  int64_t tokens = 0;  // T
  int sinks = 0;       // S: tokens [0, S) come from `sink`
  int rope_pairs = 0;  // RopePairs (rope.h); 0: none
  const double* rope_cos = nullptr;  // [T][D/2] (RopeAngles of the chunk)
  const double* rope_sin = nullptr;
  const int* kept = nullptr;               // [2L]
  const double* step = nullptr;            // [2L]
  const uint8_t* classes = nullptr;        // [2L][C]: class of kept component i at r * C + i
  const uint16_t* class_cdf = nullptr;     // [2 parts][kTransformClasses][kTransformAlphabet + 1]
  const uint64_t* symbol_start = nullptr;  // [2L + 1]: row r's symbols are [start[r], start[r + 1]) of the chunk's
  const uint8_t* rans = nullptr;
  uint64_t rans_bytes = 0;
  const uint64_t* group_offset = nullptr;  // [2L + 1] into rans
  const uint8_t* low_bits = nullptr;
  uint64_t low_bits_bytes = 0;
  const uint8_t* escapes = nullptr;
  uint64_t escape_count = 0;
  const uint16_t* sink = nullptr;          // fp16 [2L][S][C]
  const float* mean = nullptr;             // [2L][C]
  const float* basis = nullptr;            // the kept components of every row, row after row: [sum kept][C]
  const uint64_t* basis_start = nullptr;   // [2L]: row r's first float in `basis`
};

struct GpuTransformDecodeResult {
  std::vector<float> values;            // canonical [L][2][T][C]
  bool corrupt = false;                 // a rANS group did not end in its final states
  bool bad_escape = false;              // an escaped q out of range
  uint64_t low_bits_used = 0, escapes_used = 0;  // stage 2's totals, for TransformPayload::check_totals
  bool coefficients_skipped = false;    // the totals ran past LOWB or ESCP: stages 3-4 did not run
  float entropy_ms = 0, dequantize_ms = 0, copy_ms = 0;  // rANS; stages 2-4; D2D of the chunk's fp16 bytes
  std::string device;
};

// Returns false with `error` set when no GPU can be used or the chunk has more symbols than one
// scan takes (2^31 - 1). Never throws for a missing device.
bool gpu_transform_decode_chunk(const GpuTransformDecodeJob& job, GpuTransformDecodeResult& result, std::string& error);

}  // namespace kvstream::codec
