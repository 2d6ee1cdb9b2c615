// What prefill timing needs to know of the device it runs on: its name, for the profile, and its
// free memory, to choose how many layers fit. CUDA is queried through the CUDA runtime when the
// build has it (KVSTREAM_HAVE_CUDA); torch's C++ API offers neither the name nor the free memory.
#pragma once
#include <c10/core/Device.h>

#include <cstdint>
#include <string>

namespace kvstream::models {

struct DeviceInfo {
  std::string name;        // "NVIDIA H200" (cudaDeviceProp::name), or /proc/cpuinfo's model name
  int64_t free_bytes = 0;  // what new allocations may use now: cudaMemGetInfo's free, or MemAvailable
};

// Throws std::runtime_error, saying why, for a CUDA device that this build cannot query (no CUDA
// runtime compiled in) or that the runtime does not see.
DeviceInfo query_device(const c10::Device& device);

}  // namespace kvstream::models
