// Encoding a transform chunk on the GPU: the stages of transform_encode_stages.h, a launch each.
//   1. project   the coded tokens go up; a thread per key pair undoes RoPE, then a thread per (row,
//                token, component) sums y_i = W_r[i] . (x - mu_r) in channel order;
//   2. quantize  a thread per symbol (transform_quantize, the CPU encoder's);
//   3. place     CUB's exclusive scans of the low-bit counts and escape flags, then a thread per
//                symbol ORs its low bits into LOWB's 32-bit words and writes its escape into ESCP;
//   4. entropy   a block of one warp per rANS group (a sub-chunk of a row's coded tokens), a lane per
//                state (warp_rans.cuh), with the row's tables staged as the decoder stages them.
// The host writes the bitstream (write_transform_bitstream, the CPU encoder's writer). Every stage
// computes what the CPU encoder does (its projections sum in the same order: projection.h), so the
// bytes equal the CPU stage launcher's (tests/codec/transform/transform_stage_launcher.h) and the CPU
// encoder's.
#include <cuda_runtime.h>

#include <algorithm>

#include "codec/cuda/device_buffers.cuh"
#include "codec/entropy/warp_rans.cuh"
#include "codec/transform/gpu_transform_kernels.h"
#include "codec/transform/transform_encode_stages.h"
#include "codec/transform/transform_model.cuh"

namespace kvstream::codec {
namespace {

struct EncodeStages {
  GpuTransformModel m;  // device pointers
  float* x;             // the coded tokens, canonical [L][2][T - S][C]; the keys get RoPE undone in place
  float* y;             // [symbols]
  uint8_t* symbols;     // [symbols]
  uint32_t* low;        // [symbols] low bits' value
  int32_t* escaped;     // [symbols] q of an escaped symbol
  uint64_t* bit_at;     // [symbols + 1]: low-bit counts, then their exclusive scan
  uint64_t* escape_at;  // [symbols + 1]: escape flags, then their exclusive scan
  uint32_t* low_words;  // LOWB as little-endian 32-bit words, zeroed
  uint32_t* escapes;    // ESCP
  uint8_t* scratch;     // group g's slot at scratch_start[g], rans_group_capacity bytes
  const uint64_t* scratch_start;
  uint32_t* head;       // [groups]: where group g's bytes begin in its slot

  __device__ int channels() const { return m.kv_heads * m.head_dim; }
  __device__ int64_t coded_tokens() const { return m.tokens - m.sinks; }
};

// Stages 1b-3 share the grid: blockIdx.y the row, x its symbols (token-major, then component).
// Returns false past the row's end.
__device__ bool row_symbol(const EncodeStages& st, int& row, uint64_t& g, int64_t& t, int& i) {
  row = int(blockIdx.y);
  const uint64_t start = st.m.symbol_start[row], j = blockIdx.x * uint64_t(blockDim.x) + threadIdx.x;
  if (j >= st.m.symbol_start[row + 1] - start) return false;
  g = start + j;
  t = int64_t(j / uint64_t(st.m.kept[row]));
  i = int(j % uint64_t(st.m.kept[row]));
  return true;
}

__global__ void project_kernel(EncodeStages st) {
  int row, i;
  uint64_t g;
  int64_t t;
  if (!row_symbol(st, row, g, t, i)) return;
  const int channels = st.channels();
  const float* x = canonical_token(st.x, st.m, row, t, st.coded_tokens());
  st.y[g] = transform_component(x, st.m.mean + int64_t(row) * channels,
                                st.m.basis + st.m.basis_start[row] + uint64_t(i) * channels, channels);
}

__global__ void quantize_kernel(EncodeStages st) {
  int row, i;
  uint64_t g;
  int64_t t;
  if (!row_symbol(st, row, g, t, i)) return;
  const TransformQuantized q =
      transform_quantize(st.y[g], st.m.step[row], st.m.classes[int64_t(row) * st.channels() + i]);
  st.symbols[g] = uint8_t(q.symbol);
  st.low[g] = q.low;
  st.escaped[g] = q.escaped;
  st.bit_at[g] = uint64_t(q.low_bits);
  st.escape_at[g] = q.symbol == kTransformEscape ? 1u : 0u;
}

// After the scans: bit_at[g + 1] - bit_at[g] is the symbol's low-bit count (at most 11), so its bits
// touch at most two words.
__global__ void place_kernel(EncodeStages st) {
  int row, i;
  uint64_t g;
  int64_t t;
  if (!row_symbol(st, row, g, t, i)) return;
  if (st.symbols[g] == kTransformEscape) {
    st.escapes[st.escape_at[g]] = uint32_t(st.escaped[g]);
    return;
  }
  const uint64_t at = st.bit_at[g];
  const auto bits = int(st.bit_at[g + 1] - at);
  if (bits == 0) return;
  const uint64_t word = at / 32;
  const auto shift = unsigned(at % 32);
  atomicOr(st.low_words + word, st.low[g] << shift);
  if (shift + unsigned(bits) > 32) atomicOr(st.low_words + word + 1, st.low[g] >> (32 - shift));
}

__global__ void rans_groups_encode_kernel(EncodeStages st) {
  extern __shared__ uint16_t staged[];
  const int group = int(blockIdx.x), row = st.m.group_row[group], kept = st.m.kept[row];
  const uint8_t* classes = stage_row_tables(st.m, row, staged);
  const uint64_t start = st.m.group_start[group];
  const auto n = uint32_t(st.m.group_start[group + 1] - start);
  const auto cdf_row = [&](int c) { return staged + classes[c] * kTransformCdfStride; };
  const uint32_t head = warp_rans_encode_group(st.symbols + start, n, kTransformRansStates, kept, kTransformAlphabet,
                                               cdf_row, st.scratch + st.scratch_start[group]);
  if (threadIdx.x == 0) st.head[group] = head;
}

}  // namespace

bool gpu_transform_encode_chunk(const GpuTransformEncodeJob& job, GpuTransformEncodeResult& result, std::string& error) {
  const GpuTransformModel& host = job.model;
  error = transform_gpu_refusal(host, result.device);
  if (!error.empty()) return false;
  const int rows = host.rows(), channels = host.channels();
  const uint64_t symbols = host.symbols();
  const auto coded = uint64_t(host.tokens - host.sinks);
  const DeviceTransformModel model(host);

  // The coded tokens of every (layer, part), packed: [L][2][T - S][C].
  const DeviceArray<float> x(uint64_t(rows) * coded * channels);
  {
    GpuTimer timer;
    const size_t row_bytes = coded * channels * sizeof(float);
    if (row_bytes > 0)
      check(cudaMemcpy2D(x.data(), row_bytes, job.kv + uint64_t(job.kv_t0 + host.sinks) * channels,
                         uint64_t(job.kv_tokens) * channels * sizeof(float), row_bytes, size_t(rows), cudaMemcpyHostToDevice),
            "cudaMemcpy2D of the KV to the GPU");
    result.upload_ms = timer.stop_ms();
  }
  uint64_t widest_row = 0;
  for (int r = 0; r < rows; ++r) widest_row = std::max(widest_row, host.symbol_start[r + 1] - host.symbol_start[r]);
  std::vector<uint64_t> scratch_start(1, 0);  // every group of the encoder's layout codes symbols (transform_groups)
  for (int g = 0; g < host.groups; ++g)
    scratch_start.push_back(scratch_start.back() +
                            rans_group_capacity(uint32_t(host.group_start[g + 1] - host.group_start[g]), kTransformRansStates));
  const DeviceArray<float> y(symbols);
  const DeviceArray<uint8_t> symbol_array(symbols);
  const DeviceArray<uint32_t> low(symbols);
  const DeviceArray<int32_t> escaped(symbols);
  const DeviceArray<uint64_t> bit_at(symbols + 1), escape_at(symbols + 1);
  const DeviceArray<uint8_t> scratch(scratch_start.back());
  const DeviceArray<uint64_t> scratch_start_device(scratch_start.data(), scratch_start.size());
  const DeviceArray<uint32_t> head(static_cast<size_t>(host.groups));
  check(cudaMemset(bit_at.data(), 0, (symbols + 1) * sizeof(uint64_t)), "cudaMemset");
  check(cudaMemset(escape_at.data(), 0, (symbols + 1) * sizeof(uint64_t)), "cudaMemset");
  EncodeStages st{model.view(), x.data(),      y.data(),  symbol_array.data(), low.data(),
                  escaped.data(), bit_at.data(), escape_at.data(), nullptr, nullptr,
                  scratch.data(), scratch_start_device.data(), head.data()};
  const dim3 symbol_grid(blocks_for(widest_row), unsigned(rows));

  {
    GpuTimer timer;
    launch_transform_rope(model.view(), x.data(), int64_t(coded), host.sinks, /*undo=*/true);
    if (symbol_grid.x > 0) {
      project_kernel<<<symbol_grid, kBlock>>>(st);
      quantize_kernel<<<symbol_grid, kBlock>>>(st);
    }
    check(cudaGetLastError(), "the project and quantize kernels");
    result.quantize_ms = timer.stop_ms();
  }
  GpuTimer place_timer;
  exclusive_scan_in_place(bit_at.data(), symbols);
  exclusive_scan_in_place(escape_at.data(), symbols);
  const uint64_t bits_total = device_value(bit_at.data() + symbols), escapes_total = device_value(escape_at.data() + symbols);
  const DeviceArray<uint32_t> low_words(bits_total / 32 + 1), escapes(escapes_total);
  check(cudaMemset(low_words.data(), 0, (bits_total / 32 + 1) * sizeof(uint32_t)), "cudaMemset");
  st.low_words = low_words.data();
  st.escapes = escapes.data();
  if (symbol_grid.x > 0) place_kernel<<<symbol_grid, kBlock>>>(st);
  check(cudaGetLastError(), "the place kernel");
  result.compact_ms = place_timer.stop_ms();
  {
    GpuTimer timer;
    if (host.groups > 0) rans_groups_encode_kernel<<<unsigned(host.groups), 32, staged_row_table_bytes(channels)>>>(st);
    check(cudaGetLastError(), "the rANS groups kernel");
    result.entropy_ms = timer.stop_ms();
  }
  result.copy_ms = fp16_copy_ms(uint64_t(rows) * uint64_t(host.tokens) * channels);  // the reference

  std::vector<uint8_t> slots;
  std::vector<uint32_t> heads, words, escape_values;
  scratch.download(slots);
  head.download(heads);
  low_words.download(words);
  escapes.download(escape_values);
  for (size_t g = 0; g < size_t(host.groups); ++g) {
    const uint64_t bytes = scratch_start[g + 1] - scratch_start[g] - heads[g];
    result.group_bytes.push_back(uint32_t(bytes));
    const auto from = slots.begin() + int64_t(scratch_start[g + 1] - bytes);
    result.rans.insert(result.rans.end(), from, from + int64_t(bytes));
  }
  for (uint64_t b = 0; b < (bits_total + 7) / 8; ++b) result.low_bits.push_back(uint8_t(words[b / 4] >> (8 * (b % 4))));
  for (const uint32_t e : escape_values)
    for (int b = 0; b < 4; ++b) result.escapes.push_back(uint8_t(e >> (8 * b)));
  return true;
}

}  // namespace kvstream::codec
