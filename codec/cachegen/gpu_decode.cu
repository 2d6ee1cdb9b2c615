// Decoding a CacheGen chunk on the GPU (DietGPU-style: one format, per-thread code shared
// with the CPU). Up to three launches per chunk:
//   1. lookups (AC; rANS only for rows too wide for shared memory): a thread per CDF row builds
//      its slot -> symbol table (cdf.h, the CPU's code);
//   2. entropy decode, every unit of the chunk (all sub-chunks) in one launch:
//        ac:   a thread per (sub-chunk, row, channel) stream runs ac_decode_unit (arithmetic_coder.h);
//        rans: a warp per (sub-chunk, row) group, a lane per state (warp_rans.cuh), with the row's
//              CDF staged in shared memory;
//   3. dequantize: a block per (token, row), with round-to-nearest intrinsics so that no
//      multiply-add is fused: the values equal the CPU's bit for bit.
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <stdexcept>

#include "codec/cachegen/gpu_decode_kernels.h"
#include "codec/cuda/device_buffers.cuh"
#include "codec/entropy/arithmetic_coder.h"
#include "codec/entropy/rans_coder.h"
#include "codec/entropy/warp_rans.cuh"

namespace kvstream::codec {
namespace {

template <int B>
__global__ void build_lookups_kernel(const uint16_t* cdf, int m, uint64_t rows, SymbolLookup<B>* lookups) {
  const uint64_t i = blockIdx.x * uint64_t(blockDim.x) + threadIdx.x;
  if (i < rows) build_symbol_lookup(cdf + i * (m + 1), m, lookups[i]);
}

__global__ void ac_decode_kernel(GpuDecodeJob job, const uint8_t* data, const uint64_t* offset, const uint8_t* codes,
                                 const uint16_t* cdf, const AcSymbolLookup* lookups, uint8_t* symbols) {
  const uint64_t u = blockIdx.x * uint64_t(blockDim.x) + threadIdx.x;
  if (u >= job.units) return;
  const uint64_t per_sub_chunk = uint64_t(2 * job.layers) * job.channels;
  const int64_t s0 = int64_t(u / per_sub_chunk) * job.sub_tokens;
  const uint64_t stream = u % per_sub_chunk;  // row * C + channel: its CDF row and lookup
  const int row = int(stream / job.channels), c = int(stream % job.channels);
  const auto n = uint32_t(job.tokens - s0 < job.sub_tokens ? job.tokens - s0 : job.sub_tokens);
  ac_decode_unit(data + offset[u], codes[u], n, cdf + stream * (job.alphabet + 1), lookups[stream], job.alphabet,
                 symbols + (uint64_t(row) * job.tokens + s0) * job.channels + c, job.channels);
}

// rANS: a warp per (sub-chunk, row) group, a lane per state, and a block per row and run of up to
// kRansMaxWarpsPerBlock sub-chunks (a warp each), because every group of a row codes with the same C CDF rows: the
// block stages them in shared memory once and finds each symbol by bisection (search_symbol), which
// keeps a lane's dependent chain per symbol (slot -> symbol -> state -> refill) out of global memory.
// Rows too wide for shared memory (C·(M+1)·2 bytes above the device's opt-in limit, e.g. C = 4096
// without grouped-query attention) use the 1 KiB lookups in global memory instead (kStaged false).
// Either way each symbol is what the CPU's lookup_symbol gives.
constexpr int kRansMaxWarpsPerBlock = 16;

template <bool kStaged>
__global__ void rans_decode_kernel(GpuDecodeJob job, const uint8_t* data, const uint64_t* offset, const uint16_t* cdf,
                                   const RansSymbolLookup* lookups, uint8_t* symbols, int* corrupt) {
  extern __shared__ uint16_t staged[];  // kStaged: the row's C CDF rows of M + 1 entries
  const int rows = 2 * job.layers, channels = job.channels, m = job.alphabet, states = job.rans_states;
  const int64_t sub_chunks = (job.tokens + job.sub_tokens - 1) / job.sub_tokens;
  const int warps = int(blockDim.x / 32);
  const int64_t runs = (sub_chunks + warps - 1) / warps;  // blocks per row
  const int row = int(blockIdx.x / runs);
  const int64_t sub = int64_t(blockIdx.x % runs) * warps + threadIdx.x / 32;
  const unsigned lane = threadIdx.x % 32;
  const uint64_t row_cdf_size = uint64_t(channels) * (m + 1);
  const uint16_t* row_cdf = cdf + row * row_cdf_size;
  if (kStaged) {
    for (uint64_t k = threadIdx.x; k < row_cdf_size; k += blockDim.x) staged[k] = row_cdf[k];
    __syncthreads();
    row_cdf = staged;
  }
  if (sub >= sub_chunks) return;  // the whole warp leaves together, after the staging
  const RansSymbolLookup* row_lookups = lookups + uint64_t(row) * channels;  // !kStaged only

  const uint64_t g = uint64_t(sub) * rows + row;  // LENS order: sub-chunk-major, then row
  const int64_t s0 = sub * job.sub_tokens;
  const auto n = uint32_t((job.tokens - s0 < job.sub_tokens ? job.tokens - s0 : job.sub_tokens) * channels);
  const uint8_t* in = data + offset[g];
  const auto length = uint32_t(offset[g + 1] - offset[g]);  // >= 4N, checked by the host parser
  uint8_t* out = symbols + (uint64_t(row) * job.tokens + s0) * channels;

  const auto symbol_at = [&](int c, uint32_t slot, const uint16_t*& channel_cdf) {
    channel_cdf = row_cdf + c * (m + 1);
    return kStaged ? search_symbol(channel_cdf, m, slot) : lookup_symbol(channel_cdf, m, row_lookups[c], slot);
  };
  const bool bad = warp_rans_decode_group(in, length, n, states, channels, m, symbol_at, out);
  if (bad && lane == 0) atomicOr(corrupt, 1);
}

// Launches the rANS decode of every group of the chunk, staged when the row's CDF fits.
void launch_rans_decode(const GpuDecodeJob& job, const uint16_t* cdf, const uint8_t* data, const uint64_t* offset,
                        uint8_t* symbols, int* corrupt) {
  const uint64_t rows = uint64_t(2 * job.layers), cdf_rows = rows * job.channels;
  const uint64_t sub_chunks = (uint64_t(job.tokens) + job.sub_tokens - 1) / job.sub_tokens;
  // More warps per block share one staging (and fit more warps per multiprocessor under the shared
  // memory limit); fewer leave more blocks for the multiprocessors when a row has few sub-chunks.
  const auto warps = unsigned(sub_chunks < uint64_t(kRansMaxWarpsPerBlock) ? sub_chunks : kRansMaxWarpsPerBlock);
  const auto blocks = unsigned(rows * ((sub_chunks + warps - 1) / warps));
  const unsigned threads = 32 * warps;
  const size_t staged_bytes = size_t(job.channels) * (job.alphabet + 1) * sizeof(uint16_t);
  int device = 0, shared_limit = 0;
  check(cudaGetDevice(&device), "cudaGetDevice");
  check(cudaDeviceGetAttribute(&shared_limit, cudaDevAttrMaxSharedMemoryPerBlockOptin, device), "cudaDeviceGetAttribute");
  if (staged_bytes <= size_t(shared_limit)) {
    check(cudaFuncSetAttribute(rans_decode_kernel<true>, cudaFuncAttributeMaxDynamicSharedMemorySize, int(staged_bytes)),
          "cudaFuncSetAttribute");
    rans_decode_kernel<true><<<blocks, threads, staged_bytes>>>(job, data, offset, cdf, nullptr, symbols, corrupt);
  } else {
    const DeviceArray<RansSymbolLookup> lookups(cdf_rows);
    build_lookups_kernel<<<blocks_for(cdf_rows), kBlock>>>(cdf, job.alphabet, cdf_rows, lookups.data());
    rans_decode_kernel<false><<<blocks, threads>>>(job, data, offset, cdf, lookups.data(), symbols, corrupt);
    check(cudaDeviceSynchronize(), "the rANS decode kernel");  // before the lookups are freed
  }
}

// x̂ = (s - Q) / Q · m, plus the decoded anchor in anchor/delta mode: the CPU's dequantize_chunk
// (levels computed by IEEE division, no fused multiply-add). A block per (token, row), its threads
// across the channels: the row's levels (s - Q) / Q are divided once per block into shared memory,
// and no thread divides an index.
__global__ void dequantize_kernel(GpuDecodeJob job, const uint8_t* symbols, const uint16_t* scales, const uint8_t* row_q,
                                  float* out) {
  __shared__ float level[kMaxAlphabet];
  const int64_t t = blockIdx.x;
  const int row = int(blockIdx.y), channels = job.channels;
  const int q = row_q[row];
  for (int s = int(threadIdx.x); s < job.alphabet; s += int(blockDim.x)) level[s] = __fdiv_rn(float(s - q), float(q));
  __syncthreads();
  const uint64_t row_start = uint64_t(row) * job.tokens;
  const uint8_t* token_symbols = symbols + (row_start + t) * channels;
  const float scale = __half2float(__ushort_as_half(scales[row_start + t]));
  const bool delta = job.delta_group > 0 && t % job.delta_group != 0;
  const int64_t anchor = t - (job.delta_group > 0 ? t % job.delta_group : 0);
  const uint8_t* anchor_symbols = symbols + (row_start + anchor) * channels;
  const float anchor_scale = __half2float(__ushort_as_half(scales[row_start + anchor]));
  const int layer = row % job.layers, part = row / job.layers;
  float* token_out = out + ((uint64_t(layer) * 2 + part) * job.tokens + t) * channels;
  const auto value = [&](uint8_t symbol, uint8_t anchor_symbol) {
    const float x = __fmul_rn(level[symbol], scale);
    return delta ? __fadd_rn(x, __fmul_rn(level[anchor_symbol], anchor_scale)) : x;
  };
  if (channels % 4 == 0) {  // 4 channels a thread: one 4-byte load, one 16-byte store (both aligned)
    for (int k = int(threadIdx.x); k < channels / 4; k += int(blockDim.x)) {
      const uchar4 s = reinterpret_cast<const uchar4*>(token_symbols)[k];
      const uchar4 a = reinterpret_cast<const uchar4*>(anchor_symbols)[k];
      reinterpret_cast<float4*>(token_out)[k] = make_float4(value(s.x, a.x), value(s.y, a.y), value(s.z, a.z), value(s.w, a.w));
    }
  } else {
    for (int c = int(threadIdx.x); c < channels; c += int(blockDim.x)) token_out[c] = value(token_symbols[c], anchor_symbols[c]);
  }
}

}  // namespace

bool gpu_decode_chunk(const GpuDecodeJob& job, GpuDecodeResult& result, std::string& error) {
  error = gpu_refusal(job.rans, job.rans_states, result.device);
  if (!error.empty()) return false;

  const uint64_t rows = uint64_t(2 * job.layers), cdf_rows = rows * job.channels;
  const uint64_t elements = rows * uint64_t(job.tokens) * job.channels;
  const DeviceArray<uint16_t> cdf(job.cdf, cdf_rows * (job.alphabet + 1));
  const DeviceArray<uint16_t> scales(job.scales, rows * uint64_t(job.tokens));
  const DeviceArray<uint8_t> row_q(job.row_q, rows);
  const DeviceArray<uint8_t> data(job.data, job.data_bytes);
  const DeviceArray<uint64_t> offset(job.offset, job.units + 1);
  const DeviceArray<uint8_t> symbols(elements);
  const DeviceArray<float> values(elements);
  const DeviceArray<int> corrupt(1);
  check(cudaMemset(corrupt.data(), 0, sizeof(int)), "cudaMemset");

  {
    GpuTimer timer;
    if (job.rans) {
      launch_rans_decode(job, cdf.data(), data.data(), offset.data(), symbols.data(), corrupt.data());
      result.entropy_ms = timer.stop_ms();
    } else {
      const DeviceArray<uint8_t> codes(job.ac_codes, job.units);
      const DeviceArray<AcSymbolLookup> lookups(cdf_rows);
      build_lookups_kernel<<<blocks_for(cdf_rows), kBlock>>>(cdf.data(), job.alphabet, cdf_rows, lookups.data());
      ac_decode_kernel<<<blocks_for(job.units), kBlock>>>(job, data.data(), offset.data(), codes.data(), cdf.data(),
                                                          lookups.data(), symbols.data());
      result.entropy_ms = timer.stop_ms();
    }
    check(cudaGetLastError(), "an entropy decode kernel");
  }
  {
    GpuTimer timer;
    const int lanes = job.channels % 4 == 0 ? job.channels / 4 : job.channels;  // threads with work
    const auto threads = unsigned(lanes < kBlock ? (lanes + 31) / 32 * 32 : kBlock);
    if (job.tokens > 0)
      dequantize_kernel<<<dim3(unsigned(job.tokens), unsigned(rows)), threads>>>(job, symbols.data(), scales.data(),
                                                                                  row_q.data(), values.data());
    result.dequantize_ms = timer.stop_ms();
    check(cudaGetLastError(), "the dequantize kernel");
  }
  result.copy_ms = fp16_copy_ms(elements);  // the reference: a D2D copy of the chunk's fp16 bytes
  std::vector<int> flag;
  corrupt.download(flag);
  result.corrupt = flag.front() != 0;
  symbols.download(result.symbols);
  values.download(result.values);
  return true;
}

}  // namespace kvstream::codec
