// Whether a CUDA GPU can be used right now. Built from device_info.cu when CUDA is found at
// configure time, else from the stub. A driver error (e.g. cudaGetDeviceCount returning 35,
// "insufficient driver", on machines without a GPU) reads as "no GPU", never as a failure.
#pragma once
#include <string>

namespace kvstream::codec {

struct CudaDeviceInfo {
  bool compiled_with_cuda = false;
  int device_count = 0;
  std::string description;  // "NVIDIA H200 (sm_90)", or "no GPU found, CPU only" (or why none is usable)
};

CudaDeviceInfo cuda_device_info();

}  // namespace kvstream::codec
