// The GPU decoder (codec/cachegen/gpu_decode.h) against the CPU decoder: bit-identical KV for both entropy
// coders, delta mode and sub-chunks on the real fixture, and corrupt groups reported. Needs a GPU;
// without one the comparisons are skipped saying why, and the error a caller sees is checked instead.
// The kernels' per-thread code (ac_decode_unit, rans_decode_symbol, build_symbol_lookup) is the CPU
// decoder's, which every other codec test exercises.
#include <gtest/gtest.h>

#include <cstring>
#include <random>

#include "codec/cachegen/gpu_decode.h"
#include "codec/codec.h"
#include "codec/cuda/device_info.h"
#include "codec/format/bitstream.h"
#include "codec/format/bitstream_error.h"
#include "tests/test_support.h"

namespace kvstream::codec {
namespace {

bool have_gpu() { return cuda_device_info().device_count > 0; }

std::vector<uint8_t> fixture_bitstream(const std::string& spec, int level, int64_t tokens = 512) {
  return make_codec(spec)->encode(test_support::kv_fixture().contexts[0].chunk(0, tokens), level, 0);
}

TEST(GpuDecode, WithoutAGpuTheErrorSaysWhy) {
  if (have_gpu()) GTEST_SKIP() << "a GPU is present: " << cuda_device_info().description;
  try {
    gpu_decode_cachegen(fixture_bitstream("cachegen:entropy=rans", 2));
    ADD_FAILURE() << "decoding without a GPU must fail";
  } catch (const std::runtime_error& e) {
    const std::string message = e.what();
    EXPECT_TRUE(message.find("no GPU") != std::string::npos || message.find("built without CUDA") != std::string::npos)
        << message;
  }
}

TEST(GpuDecode, NotCachegenIsRefused) {
  EXPECT_THROW(gpu_decode_cachegen(fixture_bitstream("quant:bits=8", 1)), std::runtime_error);
}

TEST(GpuDecode, EqualsTheCpuDecoderBitForBit) {
  if (!have_gpu()) GTEST_SKIP() << "needs a GPU (" << cuda_device_info().description << "); scripts/gpu-check.sh runs it";
  for (const std::string spec : {"cachegen", "cachegen:entropy=rans", "cachegen:entropy=rans,states=32",
                                 "cachegen:entropy=rans,states=1", "cachegen:delta=10,entropy=rans", "cachegen:sub=64",
                                 "cachegen:delta=10"})
    for (const auto& context : test_support::kv_fixture().contexts)
      for (int level : {1, 2, 3})
        for (const auto& [t0, t1] : chunk_ranges(context.shape().tokens, 200)) {
          SCOPED_TRACE(spec + " level " + std::to_string(level) + " tokens " + std::to_string(t0));
          const auto bytes = make_codec(spec)->encode(context.chunk(t0, t1), level, t0);
          const auto cpu = decode_bitstream(bytes).kv.values();
          const auto gpu = gpu_decode_cachegen(bytes).kv.values();
          ASSERT_EQ(cpu.size(), gpu.size());
          ASSERT_EQ(std::memcmp(cpu.data(), gpu.data(), cpu.size() * sizeof(float)), 0);
        }
}

// The rANS kernel stages a row's C CDF rows in shared memory when they fit (C·(M+1)·2 bytes: 66 KiB
// at C = 1024, M = 32) and uses global lookups when they do not (264 KiB at C = 4096, as Llama-2-7B
// without grouped-query attention): both paths on synthetic KV, for default and 32 states.
TEST(GpuDecode, RansEqualsTheCpuWithRowsStagedOrTooWideToStage) {
  if (!have_gpu()) GTEST_SKIP() << "needs a GPU (" << cuda_device_info().description << ")";
  std::mt19937 rng(3);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  for (const int heads : {8, 32}) {
    KvCache kv(KvShape{2, heads, 128, 80});
    for (auto& v : kv.values()) v = normal(rng);
    for (const std::string spec : {"cachegen:entropy=rans", "cachegen:entropy=rans,states=32,sub=32"}) {
      SCOPED_TRACE(spec + ", C = " + std::to_string(heads * 128));
      const auto bytes = make_codec(spec)->encode(kv.all(), 3, 0);
      const auto cpu = decode_bitstream(bytes).kv.values();
      const auto gpu = gpu_decode_cachegen(bytes).kv.values();
      ASSERT_EQ(cpu.size(), gpu.size());
      ASSERT_EQ(std::memcmp(cpu.data(), gpu.data(), cpu.size() * sizeof(float)), 0);
    }
  }
}

TEST(GpuDecode, ACorruptRansGroupIsAnError) {
  if (!have_gpu()) GTEST_SKIP() << "needs a GPU (" << cuda_device_info().description << ")";
  const auto bytes = fixture_bitstream("cachegen:entropy=rans", 2);
  const auto parsed = parse_bitstream(bytes);
  std::vector<Section> sections;
  for (const auto& section : parsed.sections) {
    sections.push_back({section.tag, std::vector<uint8_t>(section.bytes.begin(), section.bytes.end())});
    if (section.name() == "DATA") sections.back().bytes[40] ^= 0x5A;  // inside the first group's words
  }
  const auto corrupt = write_bitstream(parsed.header, sections);  // a valid checksum over corrupt data
  EXPECT_THROW(decode_bitstream(corrupt), BitstreamError);
  EXPECT_THROW(gpu_decode_cachegen(corrupt), BitstreamError);
}

}  // namespace
}  // namespace kvstream::codec
