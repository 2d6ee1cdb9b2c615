#include "codec/cachegen/gpu_decode_kernels.h"

namespace kvstream::codec {

bool gpu_decode_chunk(const GpuDecodeJob&, GpuDecodeResult&, std::string& error) {
  error = "kvstream was built without CUDA (no nvcc at configure time)";
  return false;
}

}  // namespace kvstream::codec
