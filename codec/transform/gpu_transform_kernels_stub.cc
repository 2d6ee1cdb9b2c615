#include "codec/transform/gpu_transform_kernels.h"

namespace kvstream::codec {

bool gpu_transform_decode_chunk(const GpuTransformDecodeJob&, GpuTransformDecodeResult&, std::string& error) {
  error = "kvstream was built without CUDA (no nvcc at configure time)";
  return false;
}

bool gpu_transform_encode_chunk(const GpuTransformEncodeJob&, GpuTransformEncodeResult&, std::string& error) {
  error = "kvstream was built without CUDA (no nvcc at configure time)";
  return false;
}

}  // namespace kvstream::codec
