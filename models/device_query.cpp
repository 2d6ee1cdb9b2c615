#include "models/device_query.h"

#include <fstream>
#include <stdexcept>

#if KVSTREAM_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

namespace kvstream::models {
namespace {

// The value after "key:" of the first line of a /proc file that starts with `key`, or "".
std::string proc_field(const std::string& file, const std::string& key) {
  std::ifstream in(file);
  for (std::string line; std::getline(in, line);)
    if (line.rfind(key, 0) == 0 && line.find(':') != std::string::npos) {
      const auto value = line.find_first_not_of(" \t", line.find(':') + 1);
      return value == std::string::npos ? "" : line.substr(value);
    }
  return "";
}

DeviceInfo cpu_info() {
  DeviceInfo info;
  info.name = proc_field("/proc/cpuinfo", "model name");
  if (info.name.empty()) info.name = "unknown CPU";
  const std::string available_kb = proc_field("/proc/meminfo", "MemAvailable");  // "123456 kB"
  if (available_kb.empty()) throw std::runtime_error("/proc/meminfo has no MemAvailable");
  info.free_bytes = std::stoll(available_kb) * 1024;
  return info;
}

DeviceInfo cuda_info(int index) {
#if KVSTREAM_HAVE_CUDA
  auto check = [&](cudaError_t status, const char* what) {
    if (status != cudaSuccess)
      throw std::runtime_error(std::string(what) + " of CUDA device " + std::to_string(index) + ": " + cudaGetErrorString(status));
  };
  cudaDeviceProp prop{};
  check(cudaGetDeviceProperties(&prop, index), "cudaGetDeviceProperties");
  check(cudaSetDevice(index), "cudaSetDevice");
  size_t free = 0, total = 0;
  check(cudaMemGetInfo(&free, &total), "cudaMemGetInfo");
  return {prop.name, static_cast<int64_t>(free)};
#else
  throw std::runtime_error("CUDA device " + std::to_string(index) +
                           ": this build has no CUDA runtime to query it (CUDA was not found at configure time)");
#endif
}

}  // namespace

DeviceInfo query_device(const c10::Device& device) {
  if (device.is_cpu()) return cpu_info();
  if (device.is_cuda()) return cuda_info(device.has_index() ? device.index() : 0);
  throw std::runtime_error("device " + device.str() + ": only cpu and cuda are supported");
}

}  // namespace kvstream::models
