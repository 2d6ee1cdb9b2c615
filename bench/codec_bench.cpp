#include "bench/codec_bench.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <optional>

#include "codec/cachegen/cachegen_codec.h"
#include "codec/cachegen/offline_cdf.h"
#include "codec/codec.h"

namespace kvstream::bench {
namespace {

using Clock = std::chrono::steady_clock;
using codec::KvChunkView;

struct Chunk {
  size_t context;
  KvChunkView view;
};

std::vector<Chunk> split(const codec::KvFile& kv, int64_t chunk_tokens) {
  std::vector<Chunk> chunks;
  for (size_t i = 0; i < kv.contexts.size(); ++i)
    for (const auto& [t0, t1] : codec::chunk_ranges(kv.contexts[i].shape().tokens, chunk_tokens))
      chunks.push_back({i, kv.contexts[i].chunk(t0, t1)});
  return chunks;
}

// Runs `pass` until min_time_s has elapsed (at least once); returns seconds per pass.
double time_per_pass(double min_time_s, const std::function<void()>& pass) {
  int passes = 0;
  const auto start = Clock::now();
  double elapsed = 0;
  do {
    pass();
    ++passes;
    elapsed = std::chrono::duration<double>(Clock::now() - start).count();
  } while (elapsed < min_time_s);
  return elapsed / passes;
}

// One codec object per context: the same codec for all, except "cachegen:cdf=offline" without
// table=PATH, whose tables are built here leave-one-out.
std::vector<std::unique_ptr<codec::Codec>> make_codecs(const std::string& spec_text, const std::vector<Chunk>& chunks,
                                                       size_t contexts, codec::DecodeContext& decode_context,
                                                       std::string& table_note) {
  const common::Spec spec = codec::parse_codec_spec(spec_text);
  std::vector<std::unique_ptr<codec::Codec>> codecs;
  const auto options = codec::offline_tables_to_build(spec_text);
  if (!options) {
    codecs.push_back(codec::make_codec(spec_text));
    decode_context = codecs.back()->decode_context();
    table_note = spec.string("table", "");
    return codecs;
  }
  table_note = contexts > 1 ? "leave-one-out" : "in-sample";
  for (size_t i = 0; i < contexts; ++i) {
    std::vector<KvChunkView> profile;
    for (const auto& c : chunks)
      if (c.context != i || contexts == 1) profile.push_back(c.view);
    auto table = std::make_shared<const codec::OfflineCdfTable>(codec::OfflineCdfTable::build(profile, options->ladder, options->mode));
    decode_context.cdf_tables.push_back(table);
    codecs.push_back(codec::make_cachegen_codec(spec_text, table));
  }
  return codecs;
}

}  // namespace

std::vector<std::string> default_bench_codecs() {
  return {"fp16",     "quant:bits=8",         "quant:bits=4",      "kivi:bits=4",
          "kivi:bits=2",  "zstd",             "cachegen",          "cachegen:entropy=rans",
          "cachegen:delta=10", "cachegen:cdf=offline"};
}

nlohmann::json CodecBenchRow::to_json() const {
  auto round3 = [](double v) { return std::round(v * 1000.0) / 1000.0; };
  nlohmann::json j = {{"codec", codec},
                      {"level", level},
                      {"chunk_tokens", chunk_tokens},
                      {"contexts", contexts},
                      {"chunks", chunks},
                      {"bytes", bytes},
                      {"ratio_vs_fp16", round3(double(fp16_bytes) / double(bytes))},
                      {"ratio_vs_quant8", round3(double(quant8_bytes) / double(bytes))},
                      {"rel_mse", rel_mse},
                      {"max_abs_err", max_abs_err},
                      {"encode_mb_s", round3(encode_mb_s)},
                      {"decode_mb_s", round3(decode_mb_s)}};
  if (ideal_bytes) {
    j["ideal_bytes"] = *ideal_bytes;
    j["bytes_vs_ideal"] = round3(double(bytes) / double(*ideal_bytes));
  }
  if (!offline_table.empty()) j["offline_table"] = offline_table;
  j["entropy"] = entropy.empty() ? nlohmann::json(nullptr) : nlohmann::json(entropy);
  return j;
}

std::vector<CodecBenchRow> run_codec_bench(const codec::KvFile& kv, const CodecBenchOptions& options,
                                           const std::function<void(const CodecBenchRow&)>& on_row) {
  if (kv.contexts.empty()) throw std::invalid_argument("codec-bench: the KV file holds no context");
  const std::vector<Chunk> chunks = split(kv, options.chunk_tokens);
  uint64_t fp16_bytes = 0;
  for (const auto& c : chunks) fp16_bytes += uint64_t(c.view.shape().fp16_bytes());

  uint64_t quant8_bytes = 0;
  const auto quant8 = codec::make_codec("quant:bits=8");
  for (const auto& c : chunks) quant8_bytes += quant8->encode(c.view, 1, c.view.t0()).size();

  std::vector<CodecBenchRow> rows;
  for (const auto& spec_text : options.codecs.empty() ? default_bench_codecs() : options.codecs) {
    codec::DecodeContext decode_context;
    std::string table_note;
    const auto codecs = make_codecs(spec_text, chunks, kv.contexts.size(), decode_context, table_note);
    auto codec_for = [&](const Chunk& c) -> const codec::Codec& { return *codecs[codecs.size() == 1 ? 0 : c.context]; };
    for (int level : codecs.front()->levels()) {
      CodecBenchRow row;
      row.codec = codecs.front()->spec();
      row.level = level;
      row.chunk_tokens = options.chunk_tokens;
      row.contexts = kv.contexts.size();
      row.chunks = chunks.size();
      row.fp16_bytes = fp16_bytes;
      row.quant8_bytes = quant8_bytes;
      row.offline_table = table_note;
      row.entropy = codecs.front()->entropy_coder();

      std::vector<std::vector<uint8_t>> streams(chunks.size());
      const double encode_s = time_per_pass(options.min_time_s, [&] {
        for (size_t i = 0; i < chunks.size(); ++i) streams[i] = codec_for(chunks[i]).encode(chunks[i].view, level, chunks[i].view.t0());
      });
      std::vector<codec::KvCache> decoded(chunks.size());
      const double decode_s = time_per_pass(options.min_time_s, [&] {
        for (size_t i = 0; i < chunks.size(); ++i) decoded[i] = codec::decode_bitstream(streams[i], decode_context).kv;
      });
      double err2 = 0, ref2 = 0;
      uint64_t ideal = 0;
      for (size_t i = 0; i < chunks.size(); ++i) {
        row.bytes += streams[i].size();
        const auto original = codec::KvCache::from_view(chunks[i].view);
        for (size_t k = 0; k < original.values().size(); ++k) {
          const double x = original.values()[k], d = x - decoded[i].values()[k];
          err2 += d * d;
          ref2 += x * x;
          row.max_abs_err = std::max(row.max_abs_err, std::fabs(d));
        }
        // CacheGen's entropy-coded size against the ideal one under its shipped CDF.
        if (!row.entropy.empty() && table_note.empty() && codec::parse_codec_spec(row.codec).name() == "cachegen")
          ideal += codec::cachegen_size_report(row.codec, chunks[i].view, level).ideal_bytes;
      }
      if (ideal > 0) row.ideal_bytes = ideal;
      row.rel_mse = ref2 > 0 ? err2 / ref2 : 0;
      row.encode_mb_s = double(fp16_bytes) / 1e6 / encode_s;
      row.decode_mb_s = double(fp16_bytes) / 1e6 / decode_s;
      if (on_row) on_row(row);
      rows.push_back(std::move(row));
    }
  }
  return rows;
}

}  // namespace kvstream::bench
