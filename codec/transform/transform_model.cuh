// The transform calibration packed for a chunk (GpuTransformModel, gpu_transform_kernels.h) on the
// device, and what the transform encoder's and decoder's kernels share: the rANS tables of a row staged
// in shared memory, and the canonical place of a token's values.
#pragma once
#include <cstdint>
#include <cub/device/device_scan.cuh>
#include <string>

#include "codec/cuda/device_buffers.cuh"
#include "codec/transform/gpu_transform_kernels.h"
#include "codec/transform/rope.h"
#include "codec/transform/transform_decode_stages.h"

namespace kvstream::codec {

// Owns device copies of a host model's arrays; view() points at them.
class DeviceTransformModel {
 public:
  explicit DeviceTransformModel(const GpuTransformModel& host)
      : rope_cos_(host.rope_cos, host.rope_pairs ? angles(host) : 0),
        rope_sin_(host.rope_sin, host.rope_pairs ? angles(host) : 0),
        kept_(host.kept, size_t(host.rows())),
        step_(host.step, size_t(host.rows())),
        classes_(host.classes, size_t(host.rows()) * size_t(host.channels())),
        class_cdf_(host.class_cdf, size_t(2) * kTransformClasses * (kTransformAlphabet + 1)),
        symbol_start_(host.symbol_start, size_t(host.rows()) + 1),
        group_row_(host.group_row, size_t(host.groups)),
        group_start_(host.group_start, size_t(host.groups) + 1),
        mean_(host.mean, size_t(host.rows()) * size_t(host.channels())),
        basis_(host.basis, host.basis_floats),
        synthesis_(host.synthesis, host.synthesis == host.basis ? 0 : host.basis_floats),
        basis_start_(host.basis_start, size_t(host.rows())),
        view_(host) {
    view_.rope_cos = rope_cos_.data();
    view_.rope_sin = rope_sin_.data();
    view_.kept = kept_.data();
    view_.step = step_.data();
    view_.classes = classes_.data();
    view_.class_cdf = class_cdf_.data();
    view_.symbol_start = symbol_start_.data();
    view_.group_row = group_row_.data();
    view_.group_start = group_start_.data();
    view_.mean = mean_.data();
    view_.basis = basis_.data();
    view_.synthesis = host.synthesis == host.basis ? basis_.data() : synthesis_.data();
    view_.basis_start = basis_start_.data();
  }
  const GpuTransformModel& view() const { return view_; }

 private:
  static size_t angles(const GpuTransformModel& m) { return size_t(m.tokens) * size_t(m.head_dim / 2); }
  DeviceArray<double> rope_cos_, rope_sin_;
  DeviceArray<int> kept_;
  DeviceArray<double> step_;
  DeviceArray<uint8_t> classes_;
  DeviceArray<uint16_t> class_cdf_;
  DeviceArray<uint64_t> symbol_start_;
  DeviceArray<int> group_row_;
  DeviceArray<uint64_t> group_start_;
  DeviceArray<float> mean_, basis_, synthesis_;  // synthesis_: empty when it is the basis
  DeviceArray<uint64_t> basis_start_;
  GpuTransformModel view_;  // device pointers
};

constexpr int kTransformCdfStride = kTransformAlphabet + 1;
constexpr int kTransformPartCdfEntries = kTransformClasses * kTransformCdfStride;

// Shared memory a block needs to stage a row's tables (stage_row_tables).
inline size_t staged_row_table_bytes(int channels) { return kTransformPartCdfEntries * sizeof(uint16_t) + size_t(channels); }

// The row's part's class CDFs, then its kept components' classes (bytes), into `staged`; every thread
// of the block must call it. Returns where the classes are.
__device__ inline const uint8_t* stage_row_tables(const GpuTransformModel& m, int row, uint16_t* staged) {
  const int part = row < m.layers ? 0 : 1, kept = m.kept[row];
  uint8_t* classes = reinterpret_cast<uint8_t*>(staged + kTransformPartCdfEntries);
  for (int k = int(threadIdx.x); k < kTransformPartCdfEntries; k += int(blockDim.x))
    staged[k] = m.class_cdf[part * kTransformPartCdfEntries + k];
  const int64_t channels = int64_t(m.kv_heads) * m.head_dim;
  for (int i = int(threadIdx.x); i < kept; i += int(blockDim.x)) classes[i] = m.classes[row * channels + i];
  __syncthreads();
  return classes;
}

// Token t's C values of CacheGen row r in a canonical [L][2][tokens][C] array.
__device__ inline float* canonical_token(float* base, const GpuTransformModel& m, int row, int64_t t, int64_t tokens) {
  const int layer = row % m.layers, part = row / m.layers;
  return base + ((int64_t(layer) * 2 + part) * tokens + t) * (int64_t(m.kv_heads) * m.head_dim);
}

// A thread per (layer, coded token, head, pair) turns a pair of the keys in `values`, canonical
// [L][2][tokens][C] holding the chunk's positions first, first + 1, ...: forwards (decode, all T
// tokens, first = 0) or backwards (encode, the coded tokens only, first = S).
static __global__ void transform_rope_kernel(GpuTransformModel m, float* values, int64_t tokens, int64_t first, bool undo) {
  const int layer = int(blockIdx.y), half = m.head_dim / 2;
  const uint64_t k = blockIdx.x * uint64_t(blockDim.x) + threadIdx.x;
  const uint64_t pairs_per_token = uint64_t(m.kv_heads) * half;
  if (k >= uint64_t(m.tokens - m.sinks) * pairs_per_token) return;
  const int64_t t = m.sinks + int64_t(k / pairs_per_token);  // position in the chunk
  const int h = int(k % pairs_per_token) / half, j = int(k % pairs_per_token) % half;
  const auto pairs = static_cast<RopePairs>(m.rope_pairs);
  float* key = canonical_token(values, m, layer, t - first, tokens) + h * m.head_dim;
  rope_turn_pair(key[rope_pair_first(pairs, j)], key[rope_pair_second(pairs, j, half)], m.rope_cos[uint64_t(t) * half + j],
                 m.rope_sin[uint64_t(t) * half + j], undo);
}

inline void launch_transform_rope(const GpuTransformModel& m, float* values, int64_t tokens, int64_t first, bool undo) {
  const unsigned blocks = blocks_for(uint64_t(m.tokens - m.sinks) * m.kv_heads * (m.head_dim / 2));
  if (m.rope_pairs && blocks > 0 && m.layers > 0)
    transform_rope_kernel<<<dim3(blocks, unsigned(m.layers)), kBlock>>>(m, values, tokens, first, undo);
  check(cudaGetLastError(), "the RoPE kernel");
}

// The exclusive scan of counts[0..n] in place (counts[n] = 0 on entry, the total on exit).
inline void exclusive_scan_in_place(uint64_t* counts, uint64_t n) {
  size_t temp_bytes = 0;
  check(cub::DeviceScan::ExclusiveSum(nullptr, temp_bytes, counts, counts, int(n + 1)), "CUB scan size");
  const DeviceArray<uint8_t> temp(temp_bytes);
  check(cub::DeviceScan::ExclusiveSum(temp.data(), temp_bytes, counts, counts, int(n + 1)), "CUB scan");
}

inline uint64_t device_value(const uint64_t* at) {
  uint64_t value = 0;
  check(cudaMemcpy(&value, at, sizeof value, cudaMemcpyDeviceToHost), "cudaMemcpy from the GPU");
  return value;
}

// Why a chunk cannot go to the transform kernels, or "" when it can (usable_gpu).
inline std::string transform_gpu_refusal(const GpuTransformModel& m, std::string& device) {
  if (m.symbols() + 1 > uint64_t(INT32_MAX))
    return "the chunk has " + std::to_string(m.symbols()) + " symbols, more than one GPU scan takes (2^31 - 1)";
  return usable_gpu(device);
}

}  // namespace kvstream::codec
