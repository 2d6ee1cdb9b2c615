// Google Benchmark for the codecs on the real KV fixture (4 contexts x 512 tokens, stories260K),
// chunk 512, one thread. Throughput is reported in bytes/s of fp16 KV, like `kvstream codec-bench`.
// Run: build/bench/bench_codec [--benchmark_filter=cachegen]
#include <benchmark/benchmark.h>

#include "codec/codec.h"
#include "codec/format/crc32c.h"
#include "codec/format/kv_dump.h"
#include "tests/test_support.h"

namespace {

using namespace kvstream;

const codec::KvFile& fixture() { return test_support::kv_fixture(); }

void encode(benchmark::State& state, const std::string& spec, int level) {
  const auto codec = codec::make_codec(spec);
  int64_t bytes = 0;
  for (auto _ : state)
    for (const auto& ctx : fixture().contexts) {
      benchmark::DoNotOptimize(codec->encode(ctx.all(), level, 0));
      bytes += ctx.shape().fp16_bytes();
    }
  state.SetBytesProcessed(bytes);
}

void decode(benchmark::State& state, const std::string& spec, int level) {
  const auto codec = codec::make_codec(spec);
  std::vector<std::vector<uint8_t>> streams;
  for (const auto& ctx : fixture().contexts) streams.push_back(codec->encode(ctx.all(), level, 0));
  int64_t bytes = 0;
  for (auto _ : state)
    for (size_t i = 0; i < streams.size(); ++i) {
      benchmark::DoNotOptimize(codec::decode_bitstream(streams[i]));
      bytes += fixture().contexts[i].shape().fp16_bytes();
    }
  state.SetBytesProcessed(bytes);
}

// The checksum every bitstream carries, over 1 MiB: the SSE4.2 instruction (where the CPU has it)
// against the tables it falls back to.
void checksum(benchmark::State& state, uint32_t (*crc)(std::span<const uint8_t>, uint32_t)) {
  const std::vector<uint8_t> bytes(size_t(1) << 20, 0x5A);
  for (auto _ : state) benchmark::DoNotOptimize(crc(bytes, 0));
  state.SetBytesProcessed(int64_t(state.iterations()) * int64_t(bytes.size()));
}
BENCHMARK_CAPTURE(checksum, crc32c, &codec::crc32c);
BENCHMARK_CAPTURE(checksum, crc32c_portable, &codec::crc32c_portable);

BENCHMARK_CAPTURE(encode, cachegen_level2, std::string("cachegen"), 2);
BENCHMARK_CAPTURE(decode, cachegen_level2, std::string("cachegen"), 2);
BENCHMARK_CAPTURE(encode, cachegen_level3, std::string("cachegen"), 3);
BENCHMARK_CAPTURE(decode, cachegen_level3, std::string("cachegen"), 3);
BENCHMARK_CAPTURE(encode, cachegen_rans_level2, std::string("cachegen:entropy=rans"), 2);
BENCHMARK_CAPTURE(decode, cachegen_rans_level2, std::string("cachegen:entropy=rans"), 2);
BENCHMARK_CAPTURE(encode, quant8, std::string("quant:bits=8"), 1);
BENCHMARK_CAPTURE(decode, quant8, std::string("quant:bits=8"), 1);
BENCHMARK_CAPTURE(encode, zstd, std::string("zstd"), 1);
BENCHMARK_CAPTURE(decode, zstd, std::string("zstd"), 1);

}  // namespace

BENCHMARK_MAIN();
