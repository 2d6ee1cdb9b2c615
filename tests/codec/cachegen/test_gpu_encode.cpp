// The encode stages (codec/cachegen/cachegen_encode_stages.h) and the GPU encoder (codec/cachegen/gpu_encode.h).
//
// Without a GPU: the CPU encoder runs the stages' per-thread code one thread after another, so every
// codec test exercises it; here a launcher that runs each stage's threads in a shuffled order (as a
// GPU may) must give the same bitstream, which is what makes a parallel launch of the stages valid.
// With a GPU: GPU bitstreams equal the CPU's byte for byte (scripts/gpu-check.sh runs these).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>

#include "codec/cachegen/cachegen_encode_stages.h"
#include "codec/cachegen/cachegen_payload.h"
#include "codec/cachegen/cachegen_quantizer.h"
#include "codec/cachegen/gpu_encode.h"
#include "codec/cachegen/offline_cdf.h"
#include "codec/codec.h"
#include "codec/cuda/device_info.h"
#include "codec/ladder.h"
#include "tests/test_support.h"

namespace kvstream::codec {
namespace {

bool have_gpu() { return cuda_device_info().device_count > 0; }

const char* const kSpecs[] = {"cachegen",          "cachegen:entropy=rans",   "cachegen:entropy=rans,states=32",
                              "cachegen:entropy=rans,states=1", "cachegen:delta=10", "cachegen:delta=4,entropy=rans",
                              "cachegen:sub=64",   "cachegen:sub=7,entropy=rans,states=4"};

// Each stage's threads in a random order; stage 4 from the exclusive scan of the unit sizes.
std::vector<uint8_t> shuffled_launch(const std::string& spec, const KvChunkView& chunk, int level, int64_t t0,
                                     std::mt19937& rng) {
  const KvShape shape = chunk.shape();
  const CacheGenEncodePlan plan = plan_cachegen_encode(spec, shape, level);
  const CacheGenParams& p = plan.params;
  const std::vector<uint8_t> row_q = row_q_values(p.spec, shape.rows());
  CacheGenEncodeJob job = encode_job(chunk, row_q.data(), p);
  HostEncodeBuffers buffers;
  buffers.attach(job);

  const auto in_random_order = [&rng](uint64_t threads, const auto& thread) {
    std::vector<uint64_t> order(threads);
    std::iota(order.begin(), order.end(), 0);
    std::shuffle(order.begin(), order.end(), rng);
    for (const uint64_t i : order) thread(i);
  };
  for (const bool anchors : {true, false})
    in_random_order(uint64_t(shape.rows() * shape.tokens), [&](uint64_t i) { EXPECT_EQ(quantize_thread(job, i, anchors), -1); });
  in_random_order(uint64_t(shape.rows()) * uint64_t(shape.channels()), [&](uint64_t rc) { cdf_thread(job, rc); });
  in_random_order(job.units(), [&](uint64_t u) { job.rans ? rans_group_thread(job, u) : ac_unit_thread(job, u); });
  std::vector<uint64_t> offset(job.units());
  std::exclusive_scan(buffers.unit_bytes.begin(), buffers.unit_bytes.end(), offset.begin(), uint64_t(0));
  std::vector<uint8_t> data(offset.back() + buffers.unit_bytes.back());
  in_random_order(job.units(), [&](uint64_t u) {
    for (uint32_t lane = 0; lane < 4; ++lane) copy_unit_bytes(job, u, offset[u], data.data(), lane, 4);
  });
  return write_cachegen_bitstream({CodecId::kCacheGen, shape, t0, SourceDtype::kFp16}, p, buffers.scales,
                                  buffers.cdf, buffers.unit_bytes, buffers.ac_codes, std::move(data));
}

TEST(EncodeStages, AnyThreadOrderGivesTheCpuBitstream) {
  std::mt19937 rng(7);
  const auto& context = test_support::kv_fixture().contexts[1];
  for (const std::string spec : kSpecs)
    for (int level : {1, 3}) {
      SCOPED_TRACE(spec + " level " + std::to_string(level));
      const auto chunk = context.chunk(100, 430);  // inside the context: the layout's t0 offset matters
      EXPECT_EQ(shuffled_launch(spec, chunk, level, 100, rng), make_codec(spec)->encode(chunk, level, 100));
    }
}

TEST(EncodeStages, ANonFiniteValueNamesItsTokenInBothPasses) {
  KvCache kv = test_support::kv_fixture().contexts[0];
  kv.row_token(3, 12)[5] = std::nanf("");
  try {
    make_codec("cachegen:delta=10")->encode(kv.all(), 2, 0);
    ADD_FAILURE() << "a NaN must be refused";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("at channel 5 is not a finite fp16 number (row 3, token 12)"), std::string::npos)
        << e.what();
  }
  kv = test_support::kv_fixture().contexts[0];
  kv.row_token(0, 20)[1] = 60000.0f;  // an anchor of 60000 and a delta of -120000: not fp16
  kv.row_token(0, 21)[1] = -60000.0f;
  try {
    make_codec("cachegen:delta=10")->encode(kv.all(), 2, 0);
    ADD_FAILURE() << "a delta beyond fp16 must be refused";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("minus its decoded anchor (token 20) is not a finite fp16 number (row 0, token 21)"),
              std::string::npos)
        << e.what();
  }
}

TEST(GpuEncode, WithoutAGpuTheErrorSaysWhy) {
  if (have_gpu()) GTEST_SKIP() << "a GPU is present: " << cuda_device_info().description;
  try {
    gpu_encode_cachegen("cachegen:entropy=rans", test_support::kv_fixture().contexts[0].all(), 2, 0);
    ADD_FAILURE() << "encoding without a GPU must fail";
  } catch (const std::runtime_error& e) {
    const std::string message = e.what();
    EXPECT_TRUE(message.find("no GPU") != std::string::npos || message.find("built without CUDA") != std::string::npos)
        << message;
  }
}

TEST(GpuEncode, MoreThan32RansStatesAreRefused) {
  EXPECT_THROW(gpu_encode_cachegen("cachegen:entropy=rans,states=64", test_support::kv_fixture().contexts[0].all(), 2, 0),
               std::runtime_error);
  EXPECT_THROW(gpu_encode_cachegen("quant:bits=8", test_support::kv_fixture().contexts[0].all(), 2, 0),
               std::invalid_argument);
}

TEST(GpuEncode, EqualsTheCpuEncoderByteForByte) {
  if (!have_gpu()) GTEST_SKIP() << "needs a GPU (" << cuda_device_info().description << "); scripts/gpu-check.sh runs it";
  for (const std::string spec : kSpecs)
    for (const auto& context : test_support::kv_fixture().contexts)
      for (int level : {1, 2, 3})
        for (const auto& [t0, t1] : chunk_ranges(context.shape().tokens, 200)) {
          SCOPED_TRACE(spec + " level " + std::to_string(level) + " tokens " + std::to_string(t0));
          const auto chunk = context.chunk(t0, t1);
          ASSERT_EQ(gpu_encode_cachegen(spec, chunk, level, t0).bitstream, make_codec(spec)->encode(chunk, level, t0));
        }
}

TEST(GpuEncode, OfflineTablesAndErrorsMatchTheCpu) {
  if (!have_gpu()) GTEST_SKIP() << "needs a GPU (" << cuda_device_info().description << ")";
  const auto& contexts = test_support::kv_fixture().contexts;
  const auto table = std::make_shared<const OfflineCdfTable>(OfflineCdfTable::build(
      {contexts[0].all(), contexts[1].all()}, Ladder::from_name_or_path("generic"), TokenMode{}));
  for (const std::string spec : {"cachegen:cdf=offline", "cachegen:cdf=offline,entropy=rans"}) {
    const auto chunk = contexts[2].chunk(0, 256);
    EXPECT_EQ(gpu_encode_cachegen(spec, chunk, 2, 0, SourceDtype::kFp16, table).bitstream,
              make_cachegen_codec(spec, table)->encode(chunk, 2, 0));
  }
  KvCache kv = contexts[0];
  kv.row_token(3, 12)[5] = std::nanf("");
  std::string cpu_error, gpu_error;
  try {
    make_codec("cachegen")->encode(kv.all(), 2, 0);
  } catch (const std::invalid_argument& e) {
    cpu_error = e.what();
  }
  try {
    gpu_encode_cachegen("cachegen", kv.all(), 2, 0);
  } catch (const std::invalid_argument& e) {
    gpu_error = e.what();
  }
  EXPECT_FALSE(cpu_error.empty());
  EXPECT_EQ(cpu_error, gpu_error);
}

}  // namespace
}  // namespace kvstream::codec
