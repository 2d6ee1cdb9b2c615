// Encoding a CacheGen chunk on the GPU: the stages of cachegen_encode_stages.h, each a
// launch over all sub-chunks of the chunk, with the per-thread code the CPU encoder runs:
//   1. quantize: a thread per (row, token), the anchors' pass, then in anchor/delta mode the others';
//   2. cdf:      a thread per (row, channel) CDF row (skipped with an offline table);
//   3. entropy:  ac: a thread per stream (ac_unit_thread); rans: a warp per group, a lane per state
//                (warp_rans.cuh), words placed by a ballot and a popcount of the higher lanes, which
//                is exactly the CPU encoder's order;
//   4. compact:  an exclusive scan (CUB) of the unit sizes, then a block per unit copies it into DATA.
// The host writes the bitstream (cachegen_payload.h), so it equals the CPU encoder's byte for byte.
#include <cub/device/device_scan.cuh>
#include <cuda_runtime.h>

#include <limits>

#include "codec/cachegen/cachegen_encode_stages.h"
#include "codec/cachegen/gpu_encode_kernels.h"
#include "codec/cuda/device_buffers.cuh"
#include "codec/entropy/warp_rans.cuh"

namespace kvstream::codec {
namespace {

// Device memory for the outputs of the stages (HostEncodeBuffers' counterpart, point_at_buffers).
struct DeviceEncodeBuffers {
  DeviceArray<uint8_t> symbols;
  DeviceArray<uint16_t> scales, cdf;
  DeviceArray<uint8_t> scratch;
  DeviceArray<uint32_t> unit_start, unit_bytes;
  DeviceArray<uint8_t> ac_codes;
};

// The first failing token and channel, packed so that atomicMin finds the first token of the pass.
constexpr unsigned long long kNoBadToken = std::numeric_limits<unsigned long long>::max();
constexpr int kChannelBits = 24;

__global__ void quantize_kernel(CacheGenEncodeJob job, bool anchors, unsigned long long* first_bad) {
  const uint64_t i = blockIdx.x * uint64_t(blockDim.x) + threadIdx.x;
  if (i >= uint64_t(job.rows()) * uint64_t(job.tokens)) return;
  const int bad = quantize_thread(job, i, anchors);
  if (bad >= 0) atomicMin(first_bad, (static_cast<unsigned long long>(i) << kChannelBits) | unsigned(bad));
}

__global__ void cdf_kernel(CacheGenEncodeJob job) {
  const uint64_t rc = blockIdx.x * uint64_t(blockDim.x) + threadIdx.x;
  if (rc < uint64_t(job.rows()) * uint64_t(job.channels)) cdf_thread(job, rc);
}

__global__ void ac_encode_kernel(CacheGenEncodeJob job) {
  const uint64_t u = blockIdx.x * uint64_t(blockDim.x) + threadIdx.x;
  if (u < job.units()) ac_unit_thread(job, u);
}

// A warp per group g = sub-chunk·2L + row (warp_rans.cuh); the group ends up at slot[head, capacity).
__global__ void rans_encode_kernel(CacheGenEncodeJob job) {
  const uint64_t g = (blockIdx.x * uint64_t(blockDim.x) + threadIdx.x) / 32;
  const unsigned lane = threadIdx.x % 32;
  if (g >= job.units()) return;  // the whole warp leaves together
  const int64_t j = static_cast<int64_t>(g / uint64_t(job.rows()));
  const uint64_t row = g % uint64_t(job.rows());
  const uint32_t n = job.sub_chunk_tokens(j) * unsigned(job.channels);
  const uint8_t* symbols =
      job.symbols + (row * uint64_t(job.tokens) + uint64_t(j) * uint64_t(job.sub_tokens)) * uint64_t(job.channels);
  const uint16_t* row_cdf = job.cdf + row * uint64_t(job.channels) * uint64_t(job.alphabet + 1);
  const auto cdf_row = [&](int c) { return row_cdf + uint64_t(c) * uint64_t(job.alphabet + 1); };
  const uint32_t head = warp_rans_encode_group(symbols, n, job.rans_states, job.channels, job.alphabet, cdf_row,
                                               job.scratch + g * job.unit_capacity());
  if (lane == 0) {
    job.unit_start[g] = head;
    job.unit_bytes[g] = rans_group_capacity(n, job.rans_states) - head;
  }
}

__global__ void compact_kernel(CacheGenEncodeJob job, const uint64_t* offset, uint8_t* data) {
  const uint64_t u = blockIdx.x;
  copy_unit_bytes(job, u, offset[u], data, threadIdx.x, blockDim.x);
}

}  // namespace

bool gpu_encode_chunk(const CacheGenEncodeJob& host, bool chunk_cdf, GpuEncodeResult& result, std::string& error) {
  error = gpu_refusal(host.rans, host.rans_states, result.device);
  if (!error.empty()) return false;

  CacheGenEncodeJob job = host;
  const uint64_t rows = uint64_t(job.rows()), channels = uint64_t(job.channels), tokens = uint64_t(job.tokens);
  const uint64_t elements = rows * tokens * channels, cdf_entries = rows * channels * uint64_t(job.alphabet + 1);
  const uint64_t units = job.units();

  // The chunk's tokens of every (layer, part), packed: [L][2][T][C].
  const DeviceArray<float> kv(elements);
  {
    GpuTimer timer;
    const size_t row_bytes = tokens * channels * sizeof(float);
    check(cudaMemcpy2D(kv.data(), row_bytes, host.kv + uint64_t(host.kv_t0) * channels,
                       uint64_t(host.kv_tokens) * channels * sizeof(float), row_bytes, rows, cudaMemcpyHostToDevice),
          "cudaMemcpy2D of the KV to the GPU");
    result.upload_ms = timer.stop_ms();
  }
  const DeviceArray<uint8_t> row_q(host.row_q, rows);
  DeviceEncodeBuffers buffers{
      DeviceArray<uint8_t>(elements),
      DeviceArray<uint16_t>(rows * tokens),
      chunk_cdf ? DeviceArray<uint16_t>(cdf_entries) : DeviceArray<uint16_t>(host.cdf, cdf_entries),
      DeviceArray<uint8_t>(units * job.unit_capacity()),
      DeviceArray<uint32_t>(units),
      DeviceArray<uint32_t>(units),
      DeviceArray<uint8_t>(units)};
  const DeviceArray<uint64_t> offset(units);
  const DeviceArray<unsigned long long> first_bad(1);
  job.kv = kv.data();
  job.kv_tokens = job.tokens;
  job.kv_t0 = 0;
  job.row_q = row_q.data();
  point_at_buffers(job, buffers);

  {
    std::vector<unsigned long long> bad(1, kNoBadToken);
    GpuTimer timer;
    for (const bool anchors : {true, false}) {
      if (!anchors && job.delta_group == 0) break;
      check(cudaMemcpy(first_bad.data(), bad.data(), sizeof bad[0], cudaMemcpyHostToDevice), "cudaMemcpy");
      quantize_kernel<<<blocks_for(rows * tokens), kBlock>>>(job, anchors, first_bad.data());
      check(cudaGetLastError(), "the quantize kernel");
      first_bad.download(bad);
      if (bad[0] != kNoBadToken) {  // the CPU stops at the same token: the first of the pass
        result.bad_token = static_cast<int64_t>(bad[0] >> kChannelBits);
        result.bad_channel = static_cast<int>(bad[0] & ((1u << kChannelBits) - 1));
        return true;
      }
    }
    result.quantize_ms = timer.stop_ms();
  }
  if (chunk_cdf) {
    GpuTimer timer;
    cdf_kernel<<<blocks_for(rows * channels), kBlock>>>(job);
    check(cudaGetLastError(), "the CDF kernel");
    result.cdf_ms = timer.stop_ms();
  }
  {
    GpuTimer timer;
    if (job.rans)
      rans_encode_kernel<<<blocks_for(units * 32), kBlock>>>(job);
    else
      ac_encode_kernel<<<blocks_for(units), kBlock>>>(job);
    check(cudaGetLastError(), "an entropy encode kernel");
    result.entropy_ms = timer.stop_ms();
  }
  buffers.unit_bytes.download(result.unit_bytes);
  uint64_t total = 0;
  for (const uint32_t bytes : result.unit_bytes) total += bytes;
  const DeviceArray<uint8_t> data(total);
  {
    size_t temp_bytes = 0;
    check(cub::DeviceScan::ExclusiveSum(nullptr, temp_bytes, buffers.unit_bytes.data(), offset.data(), units), "CUB scan size");
    const DeviceArray<uint8_t> temp(temp_bytes);
    GpuTimer timer;
    check(cub::DeviceScan::ExclusiveSum(temp.data(), temp_bytes, buffers.unit_bytes.data(), offset.data(), units), "CUB scan");
    compact_kernel<<<static_cast<unsigned>(units), kBlock>>>(job, offset.data(), data.data());
    check(cudaGetLastError(), "the compact kernel");
    result.compact_ms = timer.stop_ms();
  }
  result.copy_ms = fp16_copy_ms(elements);  // the reference: a D2D copy of the chunk's fp16 bytes
  buffers.scales.download(result.scales);
  if (chunk_cdf) buffers.cdf.download(result.cdf);
  if (!job.rans) buffers.ac_codes.download(result.ac_codes);
  data.download(result.data);
  return true;
}

}  // namespace kvstream::codec
