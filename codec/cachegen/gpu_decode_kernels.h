// The GPU side of decoding a CacheGen chunk (gpu_decode.cu), in plain C++17 so that nvcc can
// compile it: the host wrapper (codec/cachegen/gpu_decode.h) parses and checks the bitstream and hands over
// its arrays. Without CUDA, gpu_decode_kernels_stub.cc answers "built without CUDA".
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "codec/cuda/gpu_times.h"

namespace kvstream::codec {

// Host arrays of one parsed chunk (see CacheGenPayload in cachegen_payload.h).
struct GpuDecodeJob {
  bool rans = false;
  int layers = 0, channels = 0, alphabet = 0, sub_tokens = 0, rans_states = 0, delta_group = 0;
  int64_t tokens = 0;
  const uint16_t* cdf = nullptr;       // [2L·C][M + 1]
  const uint16_t* scales = nullptr;    // [2L][T] fp16 bits
  const uint8_t* row_q = nullptr;      // [2L] Q of each row (bins / 2 - 1)
  const uint8_t* data = nullptr;       // DATA
  uint64_t data_bytes = 0;
  const uint64_t* offset = nullptr;    // units + 1 entries
  uint64_t units = 0;
  const uint8_t* ac_codes = nullptr;   // AC: one LENS code per unit
};

struct GpuDecodeResult : GpuDecodeTimes {
  std::vector<uint8_t> symbols;  // [2L][T][C]
  std::vector<float> values;     // canonical [L][2][T][C]
  bool corrupt = false;          // a rANS group did not end in its final state
};

// Returns false with `error` set when no GPU can be used (or the job is one this GPU path does not
// take: rANS groups of more than 32 states). Never throws for a missing device.
bool gpu_decode_chunk(const GpuDecodeJob& job, GpuDecodeResult& result, std::string& error);

}  // namespace kvstream::codec
