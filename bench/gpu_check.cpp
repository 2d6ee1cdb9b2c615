// scripts/gpu-check.sh's table: the GPU codec on a Mistral-7B-shaped chunk (L = 32, 8 KV heads x 128,
// 1,024 tokens of synthetic KV: normal values with outlier channels), per entropy backend and level:
// encode and decode kernel time as GB/s of fp16 KV, each against a device-to-device copy of the same
// fp16 bytes, and the GPU-vs-CPU identity (bitstream bytes; decoded values). Then the transform
// codec's GPU encoder and decoder on a SmolLM2-shaped chunk (time_transform). With a path argument it
// also writes the decode throughputs as a hardware profile's "decode" object (sim/README.md), for
// `kvstream profile-decode --from`. Without a GPU it says so and exits 0 (the checks it would run are
// the GpuDecode / GpuEncode tests).
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <vector>

#include "codec/cachegen/gpu_decode.h"
#include "codec/cachegen/gpu_encode.h"
#include "codec/codec.h"
#include "codec/cuda/device_info.h"
#include "codec/transform/gpu_transform_decode.h"
#include "codec/transform/gpu_transform_encode.h"
#include "codec/transform/transform_calibration.h"
#include "codec/transform/transform_payload.h"

using namespace kvstream::codec;

namespace {

float median(std::vector<float> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

constexpr int kRepetitions = 5;  // after one warm-up

// Synthetic KV of SmolLM2-135M's shape (L = 30, 3 KV heads x 64) with structure a basis can find:
// every row mixes 48 latent factors of falling variance, plus a little noise.
KvCache correlated_kv(int64_t tokens, unsigned seed) {
  const KvShape shape{30, 3, 64, tokens};
  constexpr int kFactors = 48;
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::mt19937 mixing_rng(7);  // the same mixing in every context, as a model's weights are
  std::vector<float> mixing(size_t(shape.channels()) * kFactors);
  for (auto& m : mixing) m = normal(mixing_rng) / 7.0f;
  KvCache kv(shape);
  std::vector<float> z(kFactors);
  for (int row = 0; row < shape.rows(); ++row)
    for (int64_t t = 0; t < tokens; ++t) {
      for (int k = 0; k < kFactors; ++k) z[size_t(k)] = normal(rng) * 4.0f / float(k + 1);
      float* x = kv.row_token(row, t);
      for (int c = 0; c < shape.channels(); ++c) {
        float sum = 0.05f * normal(rng);
        for (int k = 0; k < kFactors; ++k) sum += mixing[size_t(c) * kFactors + size_t(k)] * z[size_t(k)];
        x[c] = sum;
      }
    }
  return kv;
}

// The transform codec's GPU encoder and decoder on a SmolLM2-shaped chunk, calibrated on another synthetic
// context: its rANS chains (groups x 8 states), kernel times, the largest decoded difference from the
// CPU decoder relative to max(1, |x|), which must be 0 (both sum each value's components in order).
int time_transform() {
  const KvCache calibration_kv = correlated_kv(2048, 2), kv = correlated_kv(1024, 3);
  TransformCalibration::Options options;
  options.model = "synthetic SmolLM2-135M shape";
  options.rope = RopeSpec{RopePairs::kRotateHalf, 100000.0};
  const auto cal = std::make_shared<const TransformCalibration>(TransformCalibration::build({calibration_kv.all()}, options));
  const auto path = std::filesystem::temp_directory_path() / "kvstream_gpu_check.kvcal";
  cal->save(path);
  const auto codec = make_codec("transform:cal=" + path.string());
  std::filesystem::remove(path);
  const double fp16_bytes = double(kv.shape().elements()) * 2;
  std::printf("\ntransform, SmolLM2-135M shape (L = 30, 3 KV heads x 64, 1,024 tokens of synthetic KV)\n");
  std::printf("%5s %11s %7s %9s %9s %8s %7s %7s %14s %10s\n", "level", "bytes", "chains", "enc GB/s", "dec GB/s", "x D2D",
              "ent ms", "deq ms", "max diff CPU", "enc = CPU");
  int failures = 0;
  for (int level : {1, 4, 8, 12}) {
    const auto bytes = codec->encode(kv.all(), level, 0);
    const double d = cal->level_distortions()[size_t(level - 1)];
    std::vector<float> encode_ms, decode_ms, copy_ms, entropy_ms, dequantize_ms;
    GpuEncoded encoded;
    GpuDecoded decoded;
    for (int rep = 0; rep <= kRepetitions; ++rep) {
      encoded = gpu_encode_transform(*cal, d, /*sub_tokens=*/0, kv.all(), 0);
      decoded = gpu_decode_transform(bytes, codec->decode_context());
      if (rep == 0) continue;
      encode_ms.push_back(encoded.encode_ms());
      decode_ms.push_back(decoded.entropy_ms + decoded.dequantize_ms);
      entropy_ms.push_back(decoded.entropy_ms);
      dequantize_ms.push_back(decoded.dequantize_ms);
      copy_ms.push_back(decoded.copy_ms);
    }
    const auto cpu = decode_bitstream(bytes, codec->decode_context()).kv.values();
    double worst = 0;
    for (size_t i = 0; i < cpu.size(); ++i)
      worst = std::max(worst, std::abs(double(decoded.kv.values()[i]) - cpu[i]) / std::max(1.0, std::abs(double(cpu[i]))));
    failures += worst != 0 || encoded.bitstream != bytes;
    const size_t chains = parse_transform_payload(parse_bitstream(bytes), codec->decode_context()).groups.size() *
                          size_t(kTransformRansStates);
    std::printf("%5d %11zu %7zu %9.1f %9.1f %8.1f %7.3f %7.3f %14.2e %10s\n", level, bytes.size(), chains,
                fp16_bytes / (median(encode_ms) * 1e-3) / 1e9, fp16_bytes / (median(decode_ms) * 1e-3) / 1e9,
                median(decode_ms) / median(copy_ms), median(entropy_ms), median(dequantize_ms), worst,
                encoded.bitstream == bytes ? "yes" : "no");
  }
  std::printf("x D2D and ent/deq ms are the decoder's. ent ms: the rANS groups (a warp per group, a row's coded tokens\n"
              "in sub-chunks); deq ms: counts, scans, coefficients, the inverse projection and RoPE. enc = CPU: the GPU\n"
              "bitstream equals the CPU encoder's; a failure is any decoded difference from the CPU decoder or any\n"
              "encoded byte that differs (both sum the projections in the stages' order, projection.h).\n");
  return failures;
}

}  // namespace

int main(int argc, char** argv) {
  const CudaDeviceInfo info = cuda_device_info();
  std::printf("GPU: %s\n", info.description.c_str());
  if (info.device_count == 0) {
    std::printf("no GPU: nothing to time (the CPU launcher checks ran in test_codec)\n");
    return 0;
  }
  const KvShape shape{32, 8, 128, 1024};
  KvCache kv(shape);
  std::mt19937 rng(1);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  for (auto& v : kv.values()) v = normal(rng);
  for (int row = 0; row < shape.rows(); ++row)
    for (int64_t t = 0; t < shape.tokens; ++t) kv.row_token(row, t)[(row * 7) % shape.channels()] *= 8.0f;
  const double fp16_bytes = double(shape.elements()) * 2;
  const auto gb_per_s = [fp16_bytes](double ms) { return fp16_bytes / (ms * 1e-3) / 1e9; };

  std::printf("%-38s %5s %11s %9s %8s %9s %8s %7s %7s %9s %8s\n", "backend", "level", "bytes", "enc GB/s", "x D2D",
              "dec GB/s", "x D2D", "ent ms", "deq ms", "same bits", "same KV");
  nlohmann::json throughputs = nlohmann::json::array();
  std::string device;
  int failures = 0;
  // rANS decodes (sub-chunks x rows x states) chains in parallel, each of S·C/N symbols in sequence:
  // the rows below trade a few bytes of state flushes for more, shorter chains.
  for (const std::string spec : {"cachegen", "cachegen:entropy=rans", "cachegen:entropy=rans,states=32",
                                 "cachegen:entropy=rans,states=32,sub=64", "cachegen:entropy=rans,states=32,sub=32",
                                 "cachegen:entropy=rans,states=32,sub=16"})
    for (int level : {1, 2, 3}) {
      const auto cpu_bytes = make_codec(spec)->encode(kv.all(), level, 0);
      std::vector<float> encode_ms, encode_copy_ms, decode_ms, decode_copy_ms, entropy_ms, dequantize_ms;
      GpuEncoded encoded;
      GpuDecoded decoded;
      for (int rep = 0; rep <= kRepetitions; ++rep) {
        encoded = gpu_encode_cachegen(spec, kv.all(), level, 0);
        decoded = gpu_decode_cachegen(cpu_bytes);
        if (rep == 0) continue;
        encode_ms.push_back(encoded.encode_ms());
        encode_copy_ms.push_back(encoded.copy_ms);
        decode_ms.push_back(decoded.entropy_ms + decoded.dequantize_ms);
        entropy_ms.push_back(decoded.entropy_ms);
        dequantize_ms.push_back(decoded.dequantize_ms);
        decode_copy_ms.push_back(decoded.copy_ms);
      }
      device = decoded.device;
      const auto cpu_kv = decode_bitstream(cpu_bytes).kv.values();
      const bool same_bits = encoded.bitstream == cpu_bytes;
      const bool same_kv = cpu_kv.size() == decoded.kv.values().size() &&
                           std::memcmp(cpu_kv.data(), decoded.kv.values().data(), cpu_kv.size() * sizeof(float)) == 0;
      failures += !same_bits + !same_kv;
      std::printf("%-38s %5d %11zu %9.1f %8.1f %9.1f %8.1f %7.3f %7.3f %9s %8s\n", spec.c_str(), level, cpu_bytes.size(),
                  gb_per_s(median(encode_ms)), median(encode_ms) / median(encode_copy_ms), gb_per_s(median(decode_ms)),
                  median(decode_ms) / median(decode_copy_ms), median(entropy_ms), median(dequantize_ms),
                  same_bits ? "yes" : "NO", same_kv ? "yes" : "NO");
      throughputs.push_back({{"codec", spec}, {"level", level}, {"fp16_bytes_per_s", gb_per_s(median(decode_ms)) * 1e9}});
    }
  std::printf("GB/s: fp16 KV bytes over the kernel time (encode: quantize + CDF + entropy + compaction; decode:\n"
              "lookups + entropy + dequantize, also shown apart as ent ms and deq ms), median of %d after a\n"
              "warm-up; x D2D: kernel time over a device-to-device copy of the same fp16 bytes. Transfers\n"
              "between host and GPU are not included.\n",
              kRepetitions);
  failures += time_transform();
  if (argc > 1) {
    const nlohmann::json decode = {
        {"source", "measured: scripts/gpu-check.sh (bench/gpu_check.cpp) on " + device +
                       ", a Mistral-7B-shaped chunk of 1024 tokens of synthetic KV, kernel time, median of " +
                       std::to_string(kRepetitions)},
        {"device", "cuda: " + device},
        {"throughputs", throughputs}};
    std::ofstream(argv[1]) << decode.dump(2) << "\n";
    std::printf("decode throughputs written to %s\n", argv[1]);
  }
  return failures == 0 ? 0 : 1;
}
