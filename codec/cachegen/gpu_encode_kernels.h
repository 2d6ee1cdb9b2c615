// The GPU side of encoding a CacheGen chunk (gpu_encode.cu), in plain C++17 so that nvcc can
// compile it: the host wrapper (codec/cachegen/gpu_encode.h) plans the parameters and writes the bitstream
// from what comes back. Without CUDA, gpu_encode_kernels_stub.cc answers "built without CUDA".
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "codec/cachegen/cachegen_encode_stages.h"
#include "codec/cuda/gpu_times.h"

namespace kvstream::codec {

struct GpuEncodeResult : GpuEncodeTimes {
  std::vector<uint16_t> scales;      // [2L][T] fp16 bits
  std::vector<uint16_t> cdf;         // [2L·C][M + 1], when the chunk's own CDFs were built
  std::vector<uint32_t> unit_bytes;  // per unit
  std::vector<uint8_t> ac_codes;     // ac: the LENS code per stream
  std::vector<uint8_t> data;         // DATA: the units, packed in order
  int64_t bad_token = -1;            // the first token (row·T + t) that is not quantizable, else -1
  int bad_channel = -1;              //   and its channel
};

// `job` holds host pointers: the chunk's KV (its layout), row_q, and with an offline table
// (`chunk_cdf` false) its CDF rows in job.cdf; the buffers are the GPU's own. Returns false with
// `error` set when no GPU can be used, or for rANS groups of more than 32 states (a warp).
bool gpu_encode_chunk(const CacheGenEncodeJob& job, bool chunk_cdf, GpuEncodeResult& result, std::string& error);

}  // namespace kvstream::codec
