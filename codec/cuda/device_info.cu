#include <cuda_runtime.h>

#include "codec/cuda/device_info.h"

namespace kvstream::codec {

CudaDeviceInfo cuda_device_info() {
  CudaDeviceInfo info;
  info.compiled_with_cuda = true;
  int count = 0;
  const cudaError_t status = cudaGetDeviceCount(&count);
  if (status != cudaSuccess || count == 0) {
    info.description = std::string("no GPU (") + (status != cudaSuccess ? cudaGetErrorString(status) : "0 devices") + ")";
    return info;
  }
  cudaDeviceProp prop{};
  cudaGetDeviceProperties(&prop, 0);
  info.device_count = count;
  info.description = std::string(prop.name) + " (sm_" + std::to_string(prop.major) + std::to_string(prop.minor) + ")";
  return info;
}

}  // namespace kvstream::codec
