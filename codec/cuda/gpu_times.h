// What the GPU path of every codec times (plain C++17, so that the kernels' headers and nvcc can
// include it): the kernel results carry these, and the host wrappers hand them on whole
// (codec/cuda/gpu_results.h), so a time added here reaches every user without a copy per field.
#pragma once
#include <string>

namespace kvstream::codec {

struct GpuDecodeTimes {
  float entropy_ms = 0;     // lookups + entropy decode
  float dequantize_ms = 0;  // the values from the symbols (CacheGen: dequantize; transform: stages 2-4)
  float copy_ms = 0;        // a device-to-device copy of the chunk's fp16 bytes, for scale
  std::string device;
};

struct GpuEncodeTimes {
  float upload_ms = 0;    // the KV to the GPU (not part of encoding: in use it is there already)
  float quantize_ms = 0;  // CacheGen: quantize; transform: project + quantize
  float cdf_ms = 0;       // CacheGen's chunk CDFs (0 with an offline table, and for the transform codec)
  float entropy_ms = 0;   // rANS or arithmetic coding
  float compact_ms = 0;   // the coded units packed in order (transform: scans, LOWB and ESCP)
  float copy_ms = 0;      // a device-to-device copy of the chunk's fp16 bytes, for scale
  std::string device;
  float encode_ms() const { return quantize_ms + cdf_ms + entropy_ms + compact_ms; }
};

}  // namespace kvstream::codec
