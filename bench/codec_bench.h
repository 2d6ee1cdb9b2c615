// `kvstream codec-bench`: size, error and single-thread speed of every (codec, level) on a KV file.
// Sizes and errors are exact over all chunks of all contexts; speeds are MB/s of fp16 KV (1 MB =
// 1e6 bytes of the chunk as fp16), timed over repeated passes until min_time_s has elapsed.
#pragma once
#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "codec/format/kv_dump.h"

namespace kvstream::bench {

struct CodecBenchOptions {
  std::vector<std::string> codecs;  // codec specs; empty = default_bench_codecs()
  int64_t chunk_tokens = 512;
  double min_time_s = 0.3;
  // For "cachegen:cdf=offline" specs without table=PATH: tables are built leave-one-out, i.e. the
  // table for context i is profiled on every other context of the file (on itself if there is one).
};

struct CodecBenchRow {
  std::string codec;
  int level = 1;
  int64_t chunk_tokens = 0;
  size_t contexts = 0, chunks = 0;
  uint64_t bytes = 0, fp16_bytes = 0, quant8_bytes = 0;
  double rel_mse = 0, max_abs_err = 0;
  double encode_mb_s = 0, decode_mb_s = 0;
  std::optional<uint64_t> ideal_bytes;  // cachegen: same side info, payload at exactly -log2 p bits
  std::string offline_table;            // "leave-one-out", "in-sample" or a path, for cdf=offline
  std::string entropy;                  // cachegen: its entropy coder, "ac" or "rans"; empty for other codecs

  nlohmann::json to_json() const;
};

std::vector<std::string> default_bench_codecs();

std::vector<CodecBenchRow> run_codec_bench(const codec::KvFile& kv, const CodecBenchOptions& options,
                                           const std::function<void(const CodecBenchRow&)>& on_row = {});

}  // namespace kvstream::bench
