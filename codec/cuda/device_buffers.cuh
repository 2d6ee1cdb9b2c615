// Small CUDA helpers shared by every codec's kernels (codec/cachegen/, codec/transform/): a
// checked call, a device array that frees itself, a kernel timer, and launch sizes.
#pragma once
#include <cuda_runtime.h>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace kvstream::codec {

inline void check(cudaError_t status, const char* what) {
  if (status != cudaSuccess) throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(status));
}

// A device array that frees itself.
template <class T>
class DeviceArray {
 public:
  explicit DeviceArray(size_t count) : count_(count) {
    if (count_) check(cudaMalloc(&ptr_, count_ * sizeof(T)), "cudaMalloc");
  }
  DeviceArray(const T* host, size_t count) : DeviceArray(count) {
    if (count_) check(cudaMemcpy(ptr_, host, count_ * sizeof(T), cudaMemcpyHostToDevice), "cudaMemcpy to the GPU");
  }
  ~DeviceArray() {
    if (ptr_) cudaFree(ptr_);
  }
  DeviceArray(const DeviceArray&) = delete;
  DeviceArray& operator=(const DeviceArray&) = delete;
  T* data() const { return ptr_; }
  void download(std::vector<T>& host) const {
    host.resize(count_);
    if (count_) check(cudaMemcpy(host.data(), ptr_, count_ * sizeof(T), cudaMemcpyDeviceToHost), "cudaMemcpy from the GPU");
  }

 private:
  T* ptr_ = nullptr;
  size_t count_;
};

// Times the work between construction and stop() on the default stream.
class GpuTimer {
 public:
  GpuTimer() {
    check(cudaEventCreate(&start_), "cudaEventCreate");
    check(cudaEventCreate(&stop_), "cudaEventCreate");
    check(cudaEventRecord(start_), "cudaEventRecord");
  }
  ~GpuTimer() {
    cudaEventDestroy(start_);
    cudaEventDestroy(stop_);
  }
  float stop_ms() {
    check(cudaEventRecord(stop_), "cudaEventRecord");
    check(cudaEventSynchronize(stop_), "a kernel");
    float ms = 0;
    check(cudaEventElapsedTime(&ms, start_, stop_), "cudaEventElapsedTime");
    return ms;
  }

 private:
  cudaEvent_t start_, stop_;
};

// The scale every kernel time is shown against: a device-to-device copy of `elements` fp16 values
// (2 bytes each) between two arrays of its own, in ms.
inline float fp16_copy_ms(uint64_t elements) {
  const DeviceArray<uint16_t> from(elements), to(elements);
  GpuTimer timer;
  if (elements > 0)
    check(cudaMemcpy(to.data(), from.data(), elements * sizeof(uint16_t), cudaMemcpyDeviceToDevice), "cudaMemcpy D2D");
  return timer.stop_ms();
}

constexpr int kBlock = 256;

inline unsigned blocks_for(uint64_t threads) { return static_cast<unsigned>((threads + kBlock - 1) / kBlock); }

// "no GPU (...)" when no device can be used (a driver error such as 35 on machines without one reads
// so too); empty when device 0 is usable, with its name in `device`.
inline std::string usable_gpu(std::string& device) {
  int devices = 0;
  const cudaError_t status = cudaGetDeviceCount(&devices);
  if (status != cudaSuccess || devices == 0)
    return std::string("no GPU (") + (status != cudaSuccess ? cudaGetErrorString(status) : "0 devices") + ")";
  cudaDeviceProp prop{};
  check(cudaGetDeviceProperties(&prop, 0), "cudaGetDeviceProperties");
  device = prop.name;
  return "";
}

// Why a chunk cannot go to the GPU kernels, or "" when it can: the rANS kernels run a group in one
// warp, a lane per state, so at most 32 states; and a GPU must be usable (usable_gpu).
inline std::string gpu_refusal(bool rans, int rans_states, std::string& device) {
  if (rans && rans_states > 32)
    return "the GPU kernels take rANS groups of at most 32 states (a warp); this chunk has " + std::to_string(rans_states);
  return usable_gpu(device);
}

}  // namespace kvstream::codec
