#include "codec/cachegen/gpu_encode_kernels.h"

namespace kvstream::codec {

bool gpu_encode_chunk(const CacheGenEncodeJob&, bool, GpuEncodeResult&, std::string& error) {
  error = "kvstream was built without CUDA (no nvcc at configure time)";
  return false;
}

}  // namespace kvstream::codec
