// Decoding a transform chunk on the GPU: the stages of transform_decode_stages.h, a launch each.
//   1. entropy       a block of one warp per rANS group (a sub-chunk of a row's coded tokens), a lane
//                    per state (warp_rans.cuh), with the part's 64 class CDFs and the row's component
//                    classes staged in shared memory (8.3 KiB + C bytes whatever the model); the default
//                    sub-chunks give each state >= 2,048 symbols, so a Mistral-7B chunk of 1,024 tokens
//                    at full rank runs 4,096 warps of 8 busy lanes;
//   2. counts + scan a thread per symbol, then CUB's exclusive scans give every symbol its LOWB bit
//                    offset and ESCP index; the totals come back to the host, and stages 3-4 run only
//                    when they stay inside LOWB and ESCP (the host checks them exactly afterwards);
//   3. coefficients  a thread per symbol;
//   4. values        a thread per (row, coded token, channel), the components summed in order; a thread
//                    per (sink token, row, channel) from fp16; a thread per (layer, token, head, pair)
//                    redoes RoPE on the keys with the host's angles.
// Stages 1-3 equal the CPU's symbols and coefficients; stage 4 equals the CPU stage launcher's ordered
// sums bit for bit, and so the CPU decoder's (projection.h sums in the same order).
#include <cuda_runtime.h>

#include <algorithm>
#include <cub/device/device_scan.cuh>

#include "codec/cuda/device_buffers.cuh"
#include "codec/entropy/warp_rans.cuh"
#include "codec/transform/gpu_transform_kernels.h"
#include "codec/transform/rope.h"
#include "codec/transform/transform_decode_stages.h"
#include "codec/transform/transform_model.cuh"
#include "common/half.h"

namespace kvstream::codec {
namespace {

// The model and the job's arrays on the device, and the stages' outputs.
struct Stages {
  GpuTransformModel m;  // device pointers
  const uint8_t* rans;
  const uint64_t* group_offset;
  const uint8_t *low_bits, *escapes;
  const uint16_t* sink;
  uint8_t* symbols;      // [symbols]
  uint64_t* bit_at;      // [symbols + 1]: low bits, then their exclusive scan
  uint64_t* escape_at;   // [symbols + 1]: escape flags, then their exclusive scan
  float* y;              // [symbols]
  float* out;            // canonical [L][2][T][C]

  __device__ int channels() const { return m.kv_heads * m.head_dim; }
  __device__ int64_t coded_tokens() const { return m.tokens - m.sinks; }
};

__global__ void rans_groups_kernel(Stages st, int* corrupt) {
  extern __shared__ uint16_t staged[];
  const int group = int(blockIdx.x), row = st.m.group_row[group], kept = st.m.kept[row];
  const uint8_t* classes = stage_row_tables(st.m, row, staged);
  if (kept == 0) return;  // a version-2 row's group, which the host checked is empty
  const uint64_t start = st.m.group_start[group];
  const auto n = uint32_t(st.m.group_start[group + 1] - start);
  const uint8_t* in = st.rans + st.group_offset[group];
  const auto length = uint32_t(st.group_offset[group + 1] - st.group_offset[group]);
  if (length < 4u * kTransformRansStates) {  // too short for the states: the warp leaves together
    if (threadIdx.x == 0) atomicOr(corrupt, 1);
    return;
  }
  const auto symbol_at = [&](int c, uint32_t slot, const uint16_t*& cdf_row) {
    cdf_row = staged + classes[c] * kTransformCdfStride;
    return search_symbol(cdf_row, kTransformAlphabet, slot);
  };
  const bool bad = warp_rans_decode_group(in, length, n, kTransformRansStates, kept, kTransformAlphabet, symbol_at,
                                          st.symbols + start);
  if (bad && threadIdx.x == 0) atomicOr(corrupt, 1);
}

// Stages 2 and 3 share the grid: blockIdx.y the row, x its symbols. Returns false past the row's end.
__device__ bool row_symbol(const Stages& st, int& row, uint64_t& g, int& c) {
  row = int(blockIdx.y);
  const uint64_t start = st.m.symbol_start[row], j = blockIdx.x * uint64_t(blockDim.x) + threadIdx.x;
  if (j >= st.m.symbol_start[row + 1] - start) return false;
  g = start + j;
  c = st.m.classes[int64_t(row) * st.channels() + int64_t(j % uint64_t(st.m.kept[row]))];
  return true;
}

__global__ void counts_kernel(Stages st) {
  int row, c;
  uint64_t g;
  if (!row_symbol(st, row, g, c)) return;
  const int symbol = st.symbols[g];
  st.bit_at[g] = uint64_t(transform_symbol_low_bits(symbol, c));
  st.escape_at[g] = symbol == kTransformEscape ? 1u : 0u;
}

__global__ void coefficients_kernel(Stages st, int* bad_escape) {
  int row, c;
  uint64_t g;
  if (!row_symbol(st, row, g, c)) return;
  if (!transform_coefficient(st.symbols[g], c, st.low_bits, st.bit_at[g], st.escapes, st.escape_at[g], st.m.step[row], st.y[g]))
    atomicOr(bad_escape, 1);
}

__global__ void values_kernel(Stages st) {
  const int row = int(blockIdx.y), channels = st.channels(), kept = st.m.kept[row];
  const uint64_t k = blockIdx.x * uint64_t(blockDim.x) + threadIdx.x;
  if (k >= uint64_t(st.coded_tokens()) * channels) return;
  const int64_t t = int64_t(k / channels);
  const int c = int(k % channels);
  const float* y = st.y + st.m.symbol_start[row] + uint64_t(t) * kept;
  canonical_token(st.out, st.m, row, st.m.sinks + t, st.m.tokens)[c] =
      transform_value(y, kept, st.m.synthesis + st.m.basis_start[row], channels, c, st.m.mean[int64_t(row) * channels + c]);
}

__global__ void sinks_kernel(Stages st) {
  const int row = int(blockIdx.y), channels = st.channels();
  const uint64_t k = blockIdx.x * uint64_t(blockDim.x) + threadIdx.x;
  if (k >= uint64_t(st.m.sinks) * channels) return;
  const int t = int(k / channels), c = int(k % channels);
  canonical_token(st.out, st.m, row, t, st.m.tokens)[c] = common::half_to_float(st.sink[(uint64_t(row) * st.m.sinks + t) * channels + c]);
}

}  // namespace

bool gpu_transform_decode_chunk(const GpuTransformDecodeJob& job, GpuTransformDecodeResult& result, std::string& error) {
  const GpuTransformModel& host = job.model;
  error = transform_gpu_refusal(host, result.device);
  if (!error.empty()) return false;
  const int rows = host.rows(), channels = host.channels();
  const uint64_t symbols = host.symbols();
  const uint64_t elements = uint64_t(rows) * uint64_t(host.tokens) * channels;
  const DeviceTransformModel model(host);
  const DeviceArray<uint8_t> rans(job.rans, job.rans_bytes);
  const DeviceArray<uint64_t> group_offset(job.group_offset, size_t(host.groups) + 1);
  const DeviceArray<uint8_t> low_bits(job.low_bits, job.low_bits_bytes);
  const DeviceArray<uint8_t> escapes(job.escapes, 4 * job.escape_count);
  const DeviceArray<uint16_t> sink(job.sink, uint64_t(rows) * host.sinks * channels);
  const DeviceArray<uint8_t> symbol_array(symbols);
  const DeviceArray<uint64_t> bit_at(symbols + 1), escape_at(symbols + 1);
  const DeviceArray<float> y(symbols), values(elements);
  const DeviceArray<int> flags(2);  // corrupt, bad escape
  check(cudaMemset(flags.data(), 0, 2 * sizeof(int)), "cudaMemset");
  check(cudaMemset(bit_at.data(), 0, (symbols + 1) * sizeof(uint64_t)), "cudaMemset");
  check(cudaMemset(escape_at.data(), 0, (symbols + 1) * sizeof(uint64_t)), "cudaMemset");
  const Stages st{model.view(),        rans.data(),   group_offset.data(), low_bits.data(), escapes.data(), sink.data(),
                  symbol_array.data(), bit_at.data(), escape_at.data(),    y.data(),        values.data()};
  uint64_t widest_row = 0;
  for (int r = 0; r < rows; ++r) widest_row = std::max(widest_row, host.symbol_start[r + 1] - host.symbol_start[r]);
  const int64_t coded = host.tokens - host.sinks;

  {
    GpuTimer timer;
    if (host.groups > 0)
      rans_groups_kernel<<<unsigned(host.groups), 32, staged_row_table_bytes(channels)>>>(st, flags.data());
    check(cudaGetLastError(), "the rANS groups kernel");
    result.entropy_ms = timer.stop_ms();
  }
  {
    GpuTimer timer;
    const dim3 symbol_grid(blocks_for(widest_row), unsigned(rows));
    if (symbol_grid.x > 0) counts_kernel<<<symbol_grid, kBlock>>>(st);
    check(cudaGetLastError(), "the counts kernel");
    exclusive_scan_in_place(bit_at.data(), symbols);
    exclusive_scan_in_place(escape_at.data(), symbols);
    result.low_bits_used = device_value(bit_at.data() + symbols);
    result.escapes_used = device_value(escape_at.data() + symbols);
    result.coefficients_skipped = result.low_bits_used > 8 * job.low_bits_bytes || result.escapes_used > job.escape_count;
    if (!result.coefficients_skipped) {
      if (symbol_grid.x > 0) coefficients_kernel<<<symbol_grid, kBlock>>>(st, flags.data() + 1);
      check(cudaGetLastError(), "the coefficients kernel");
      const unsigned value_blocks = blocks_for(uint64_t(coded) * channels), sink_blocks = blocks_for(uint64_t(host.sinks) * channels);
      if (value_blocks > 0 && rows > 0) values_kernel<<<dim3(value_blocks, unsigned(rows)), kBlock>>>(st);
      if (sink_blocks > 0 && rows > 0) sinks_kernel<<<dim3(sink_blocks, unsigned(rows)), kBlock>>>(st);
      check(cudaGetLastError(), "the values kernels");
      launch_transform_rope(model.view(), values.data(), host.tokens, 0, /*undo=*/false);
    }
    result.dequantize_ms = timer.stop_ms();
  }
  result.copy_ms = fp16_copy_ms(elements);  // the reference: a D2D copy of the chunk's fp16 bytes
  std::vector<int> flag;
  flags.download(flag);
  result.corrupt = flag[0] != 0;
  result.bad_escape = flag[1] != 0;
  values.download(result.values);
  return true;
}

}  // namespace kvstream::codec
