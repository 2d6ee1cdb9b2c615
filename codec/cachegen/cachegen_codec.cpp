#include "codec/cachegen/cachegen_codec.h"
#include "codec/cachegen/cachegen_payload.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <stdexcept>

#include "codec/cachegen/cachegen_encode_stages.h"
#include "codec/cachegen/cachegen_quantizer.h"
#include "codec/cachegen/offline_cdf.h"
#include "codec/entropy/arithmetic_coder.h"
#include "codec/entropy/cdf.h"
#include "codec/entropy/rans_coder.h"
#include "codec/entropy/rans_decode_x8.h"
#include "codec/format/bitstream_error.h"
#include "codec/vector_quantizer.h"
#include "common/content_hash.h"

namespace kvstream::codec {
namespace {

using K = BitstreamErrorKind;

// Default rANS states per group: 8 (fewer for C < 16). Measured on the fixture (level 2), decode
// speed is flat from 4 to 64 states while every state adds a 4-byte flush: 4 / 8 / 16 / 32 states
// are 0.43 / 0.70 / 1.20 / 2.22 % above the ideal size (the AC: 1.02 %). A GPU wants more states
// per group (states=32), or more groups (sub=64).
int default_rans_states(int channels) {
  int states = 1;
  while (states * 2 <= std::min(8, std::max(1, channels / 2))) states *= 2;
  return states;
}

// Default rANS sub-chunk (rans_sub_tokens, up to 256 tokens): a Mistral-7B chunk (C = 1,024) of
// 1,024 tokens gets sub = 16, 64 · 64 · 8 = 32,768 chains instead of 2,048 (+0.3–0.6 % bytes on KV
// tiled from stories260K; docs/CODECS.md "Parallelism of rANS"); the CPU decodes it as fast. Narrow
// models keep 256 (stories260K, C = 32).
int default_rans_sub_tokens(int channels, int states) { return rans_sub_tokens(channels, states, kMaxSubChunkTokens); }

// The CPU launcher of the encode stages (cachegen_encode_stages.h): stage 1 has run; the CDF rows
// (stage 2, unless an offline table gave them), every unit into the scratch slots (stage 3), then the
// units packed in order (stage 4). Returns DATA; the job's unit_bytes and ac_codes describe it.
std::vector<uint8_t> run_coding_stages(const CacheGenEncodeJob& job, bool chunk_cdf) {
  if (chunk_cdf)
    for (uint64_t rc = 0; rc < uint64_t(job.rows()) * uint64_t(job.channels); ++rc) cdf_thread(job, rc);
  const uint64_t units = job.units();
  for (uint64_t u = 0; u < units; ++u) job.rans ? rans_group_thread(job, u) : ac_unit_thread(job, u);
  uint64_t total = 0;
  for (uint64_t u = 0; u < units; ++u) total += job.unit_bytes[u];
  std::vector<uint8_t> data(total);
  uint64_t offset = 0;  // the exclusive prefix sum of the unit sizes
  for (uint64_t u = 0; u < units; ++u) {
    copy_unit_bytes(job, u, offset, data.data(), 0, 1);
    offset += job.unit_bytes[u];
  }
  return data;
}

class CacheGenCodec final : public Codec {
 public:
  CacheGenCodec(const common::Spec& spec, std::shared_ptr<const OfflineCdfTable> table)
      : spec_(spec), options_(cachegen_options(spec)), table_(std::move(table)) {
    if (options_.offline_cdf) {
      if (!table_ && !spec.has("table")) spec.fail("cdf=offline needs table=PATH (build one with kvstream cdf-build)");
      if (!table_) table_ = std::make_shared<OfflineCdfTable>(OfflineCdfTable::load(spec.string("table", "")));
      if (table_->token_mode().delta_group != options_.mode.delta_group)
        spec.fail("the offline table was built with delta group " + std::to_string(table_->token_mode().delta_group) +
                  ", the codec uses " + std::to_string(options_.mode.delta_group));
    } else if (table_) {
      spec.fail("an offline table only applies with cdf=offline");
    }
  }

  std::string spec() const override { return spec_.canonical(); }
  std::vector<int> levels() const override { return options_.ladder.levels(); }
  bool ladder() const override { return true; }
  DecodeContext decode_context() const override {
    DecodeContext context;
    if (table_) context.cdf_tables.push_back(table_);
    return context;
  }
  std::string content_id() const override {
    return "ladder=" + common::hex64(options_.ladder.id()) + (table_ ? ",table=" + common::hex64(table_->id()) : "");
  }
  std::string entropy_coder() const override { return options_.rans ? "rans" : "ac"; }

  std::vector<uint8_t> encode(const KvChunkView& chunk, int level, int64_t t0, SourceDtype dtype) const override {
    return encode_with_report(chunk, level, t0, dtype, nullptr);
  }

  std::vector<uint8_t> encode_with_report(const KvChunkView& chunk, int level, int64_t t0, SourceDtype dtype,
                                          CacheGenSizeReport* report) const {
    const KvShape shape = chunk.shape();
    const CacheGenEncodePlan plan = this->plan(shape, level);
    const CacheGenParams& p = plan.params;
    const std::vector<uint8_t> row_q = row_q_values(p.spec, shape.rows());
    CacheGenEncodeJob job = encode_job(chunk, row_q.data(), p);
    HostEncodeBuffers buffers;
    buffers.cdf = plan.offline_cdf;
    buffers.attach(job);
    quantize_stage(job);
    std::vector<uint8_t> data = run_coding_stages(job, p.cdf_source == CdfSource::kChunk);

    const uint64_t payload = data.size();
    auto bytes = write_cachegen_bitstream({CodecId::kCacheGen, shape, t0, dtype}, p, buffers.scales, buffers.cdf,
                                          buffers.unit_bytes, buffers.ac_codes, std::move(data));
    if (report) {
      double ideal_bits = 0;
      const int rows = shape.rows(), channels = shape.channels();
      for (int64_t t = 0; t < shape.tokens; ++t)
        for (int row = 0; row < rows; ++row)
          for (int c = 0; c < channels; ++c)
            ideal_bits += symbol_bits(buffers.cdf.data() + (size_t(row) * channels + c) * (p.alphabet + 1), p.alphabet,
                                      buffers.symbols[(size_t(row) * size_t(shape.tokens) + size_t(t)) * channels + c]);
      const uint64_t lens_bytes = job.rans ? 4 * job.units() : job.units();
      report->total_bytes = bytes.size();
      report->payload_bytes = payload;
      report->side_bytes = bytes.size() - payload;
      report->ideal_bytes = bytes.size() - payload - lens_bytes + static_cast<uint64_t>(std::ceil(ideal_bits / 8));
      report->raw_streams =
          job.rans ? 0 : uint64_t(std::count(buffers.ac_codes.begin(), buffers.ac_codes.end(), kRawStreamCode));
    }
    return bytes;
  }

  // The parameters for this shape and level; an offline table's CDF rows when cdf=offline.
  CacheGenEncodePlan plan(const KvShape& shape, int level) const {
    CacheGenEncodePlan plan;
    CacheGenParams& p = plan.params;
    p.level = level;
    p.mode = options_.mode;
    p.spec = options_.ladder.level_spec(level, shape.layers);
    p.alphabet = p.spec.alphabet();
    p.coder = options_.rans ? kCoderRans : kCoderAc;
    if (options_.rans)
      p.rans_states = options_.rans_states ? options_.rans_states : default_rans_states(shape.channels());
    p.sub_tokens = options_.sub_tokens          ? options_.sub_tokens
                   : options_.rans ? default_rans_sub_tokens(shape.channels(), p.rans_states)
                                   : kMaxSubChunkTokens;
    if (table_) {
      const auto* lt = table_->level(level);
      if (!lt || lt->spec != p.spec || table_->channels() != shape.channels())
        throw std::invalid_argument("codec cachegen: the offline table has no level " + std::to_string(level) +
                                    " for this ladder and shape (L=" + std::to_string(shape.layers) +
                                    ", C=" + std::to_string(shape.channels()) + ")");
      p.cdf_source = CdfSource::kOffline;
      p.table_id = table_->id();
      plan.offline_cdf = lt->cdf;
    }
    return plan;
  }

 private:
  common::Spec spec_;
  CacheGenOptions options_;
  std::shared_ptr<const OfflineCdfTable> table_;
};


// AC payload: every stream of the chunk, lookups shared by the sub-chunks.
void decode_ac_streams(const CacheGenPayload& pl, std::vector<uint8_t>& symbols) {
  const int rows = pl.rows(), channels = pl.shape.channels(), m = pl.params.alphabet;
  std::vector<AcSymbolLookup> lookups(size_t(rows) * channels);
  for (size_t i = 0; i < lookups.size(); ++i) build_symbol_lookup(pl.cdf.data() + i * (m + 1), m, lookups[i]);
  size_t unit = 0;
  for (int64_t j = 0; j < pl.sub_chunks(); ++j) {
    const uint32_t n = pl.sub_chunk_tokens(j);
    for (int row = 0; row < rows; ++row)
      for (int c = 0; c < channels; ++c, ++unit)
        ac_decode_unit(pl.data.data() + pl.offset[unit], pl.ac_codes[unit], n,
                       pl.cdf.data() + (size_t(row) * channels + c) * (m + 1), lookups[size_t(row) * channels + c], m,
                       symbols.data() + (size_t(row) * pl.shape.tokens + size_t(j) * pl.params.sub_tokens) * channels + c,
                       channels);
  }
}

// rANS payload: groups decoded a batch of rows at a time, so that the batch's lookups (C KiB per row)
// stay in cache for all its sub-chunks; with the AVX2 decoder, kRansX8MaxGroups groups at a time
// (rows enough in a batch for that many).
void decode_rans_groups(const CacheGenPayload& pl, std::vector<uint8_t>& symbols) {
  const int rows = pl.rows(), channels = pl.shape.channels(), m = pl.params.alphabet;
  const int64_t subs = pl.sub_chunks();
  const bool x8 = pl.params.rans_states == 8 && channels % 8 == 0 && rans_x8_available();
  const int batch_rows = x8 ? int(std::min<int64_t>(rows, (kRansX8MaxGroups + subs - 1) / subs)) : 1;
  // + 1: the AVX2 gathers read past the last
  std::vector<RansSymbolLookup> lookups(size_t(batch_rows) * size_t(channels) + 1);
  std::vector<RansGroup> batch;  // row by row, sub-chunk by sub-chunk
  for (int first = 0; first < rows; first += batch_rows) {
    const int end = std::min(rows, first + batch_rows);
    batch.clear();
    for (int row = first; row < end; ++row) {
      const uint16_t* row_cdf = pl.cdf.data() + size_t(row) * channels * (m + 1);
      RansSymbolLookup* row_lookups = lookups.data() + size_t(row - first) * channels;
      for (int c = 0; c < channels; ++c) build_symbol_lookup(row_cdf + size_t(c) * (m + 1), m, row_lookups[c]);
      for (int64_t j = 0; j < subs; ++j) {
        const size_t g = size_t(j) * rows + row;
        batch.push_back({pl.data.data() + pl.offset[g], uint32_t(pl.offset[g + 1] - pl.offset[g]),
                         pl.sub_chunk_tokens(j) * uint32_t(channels), channels, row_cdf, row_lookups,
                         symbols.data() + (size_t(row) * pl.shape.tokens + size_t(j) * pl.params.sub_tokens) * channels});
      }
    }
    for (size_t i = 0; i < batch.size(); i += kRansX8MaxGroups) {
      const int count = int(std::min<size_t>(kRansX8MaxGroups, batch.size() - i));
      uint32_t valid = 0;
      if (x8) {
        valid = rans_decode_groups_x8(&batch[i], count, m);
      } else {
        for (int k = 0; k < count; ++k) {
          const RansGroup& g = batch[i + size_t(k)];
          valid |= uint32_t(rans_decode_group(g.in, g.length, g.n, channels, g.cdf, g.lookups, m,
                                              pl.params.rans_states, g.symbols))
                   << k;
        }
      }
      if (valid == (1u << count) - 1) continue;
      const int64_t corrupt = int64_t(i) + std::countr_one(valid);  // the first, in batch order
      throw BitstreamError(K::kCorruptPayload, "DATA",
                           "rANS group of sub-chunk " + std::to_string(corrupt % subs) + ", row " +
                               std::to_string(first + corrupt / subs) + " does not decode to its end state");
    }
  }
}

KvCache decode(const ParsedBitstream& parsed, const DecodeContext& context) {
  const CacheGenPayload payload = parse_cachegen_payload(parsed, context);
  QuantizedChunk q{payload.shape, std::vector<uint8_t>(size_t(payload.shape.elements())), payload.scales};
  if (payload.params.coder == kCoderRans)
    decode_rans_groups(payload, q.symbols);
  else
    decode_ac_streams(payload, q.symbols);
  check_symbols(payload, q.symbols);
  KvCache out(payload.shape);
  dequantize_chunk(q, payload.params.spec, payload.params.mode, out);
  return out;
}

}  // namespace

CacheGenOptions cachegen_options(const common::Spec& spec) {
  if (spec.name() != "cachegen") spec.fail("not a cachegen spec");
  spec.only({"ladder", "delta", "cdf", "table", "sub", "entropy", "states"});
  CacheGenOptions o;
  const std::string entropy = spec.string("entropy", "ac");
  if (entropy != "ac" && entropy != "rans") spec.fail("option entropy=" + entropy + ": expected ac or rans");
  o.rans = entropy == "rans";
  if (spec.has("states")) {
    if (!o.rans) spec.fail("states=N only applies with entropy=rans");
    o.rans_states = spec.integer("states", 0, 1, kRansMaxStates);
    if (std::popcount(unsigned(o.rans_states)) != 1) spec.fail("states=" + std::to_string(o.rans_states) + " is not a power of two");
  }
  o.ladder = Ladder::from_name_or_path(spec.string("ladder", "generic"));
  if (o.ladder.codec() != "cachegen")
    spec.fail("ladder=" + spec.string("ladder", "") + " holds the transform codec's levels (use it with transform:ladder=)");
  if (spec.has("delta")) o.mode.delta_group = spec.string("delta", "").empty() ? 10 : spec.integer("delta", 10, 2, 255);
  if (spec.has("sub")) o.sub_tokens = spec.integer("sub", kMaxSubChunkTokens, 1, kMaxSubChunkTokens);
  const std::string cdf = spec.string("cdf", "chunk");
  if (cdf != "chunk" && cdf != "offline") spec.fail("option cdf=" + cdf + ": expected chunk or offline");
  o.offline_cdf = cdf == "offline";
  if (spec.has("table") && !o.offline_cdf) spec.fail("table=PATH only applies with cdf=offline");
  o.table_path = spec.string("table", "");
  return o;
}

std::optional<CacheGenOptions> offline_tables_to_build(const std::string& spec) {
  const common::Spec parsed = parse_codec_spec(spec);
  if (parsed.name() != "cachegen") return std::nullopt;
  CacheGenOptions options = cachegen_options(parsed);
  if (!options.offline_cdf || !options.table_path.empty()) return std::nullopt;
  return options;
}

CacheGenEncodePlan plan_cachegen_encode(const std::string& spec, const KvShape& shape, int level,
                                        std::shared_ptr<const OfflineCdfTable> table) {
  return CacheGenCodec(parse_codec_spec(spec), std::move(table)).plan(shape, level);
}

CacheGenSizeReport cachegen_size_report(const std::string& spec, const KvChunkView& chunk, int level) {
  CacheGenCodec codec(parse_codec_spec(spec), nullptr);
  CacheGenSizeReport report;
  codec.encode_with_report(chunk, level, 0, SourceDtype::kFp16, &report);
  return report;
}

std::unique_ptr<Codec> make_cachegen_codec(const std::string& spec, std::shared_ptr<const OfflineCdfTable> table) {
  return std::make_unique<CacheGenCodec>(parse_codec_spec(spec), std::move(table));
}

CodecEntry cachegen_codec_entry() {
  return {"cachegen", CodecId::kCacheGen,
          "CacheGen: per-token quantization with per-layer bins, per-channel 16-bit CDF, arithmetic or rANS coding "
          "(options: ladder=NAME|PATH, delta[=G], cdf=chunk|offline, table=PATH, sub=N, entropy=ac|rans, states=N)",
          [](const common::Spec& spec) { return std::unique_ptr<Codec>(new CacheGenCodec(spec, nullptr)); }, decode};
}

}  // namespace kvstream::codec
