#include <cuda_runtime.h>

#include "codec/cuda/device_info.h"

namespace kvstream::codec {

CudaDeviceInfo cuda_device_info() {
  CudaDeviceInfo info;
  info.compiled_with_cuda = true;
  int count = 0;
  const cudaError_t status = cudaGetDeviceCount(&count);
  // No driver (35) or no device (100) is a machine without a GPU; another error is a GPU that
  // cannot be used, said with CUDA's words.
  if (status == cudaErrorInsufficientDriver || status == cudaErrorNoDevice || (status == cudaSuccess && count == 0)) {
    info.description = "no GPU found, CPU only";
    return info;
  }
  if (status != cudaSuccess) {
    info.description = std::string("no GPU usable (CUDA: ") + cudaGetErrorString(status) + "), CPU only";
    return info;
  }
  cudaDeviceProp prop{};
  cudaGetDeviceProperties(&prop, 0);
  info.device_count = count;
  info.description = std::string(prop.name) + " (sm_" + std::to_string(prop.major) + std::to_string(prop.minor) + ")";
  return info;
}

}  // namespace kvstream::codec
