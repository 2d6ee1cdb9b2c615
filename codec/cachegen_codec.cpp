#include "cachegen_codec.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdio>
#include <stdexcept>

#include "arithmetic_coder.h"
#include "rans_coder.h"
#include "byte_io.h"
#include "cachegen_quantizer.h"
#include "cdf.h"
#include "offline_cdf.h"
#include "vector_quantizer.h"

namespace kvstream::codec {
namespace {

using K = BitstreamErrorKind;

enum class CdfSource : uint8_t { kChunk = 0, kOffline = 1 };
constexpr uint8_t kCoderAc = 1;    // the artifact's arithmetic coder, one stream per (sub-chunk, row, channel)
constexpr uint8_t kCoderRans = 2;  // interleaved rANS, one group per (sub-chunk, row) (rans_coder.h)
constexpr size_t kParamsFixedBytes = 8;

// Default rANS states per group: 8 (fewer for C < 16). Measured on the fixture (level 2), decode
// speed is flat from 4 to 64 states while every state adds a 4-byte flush: 4 / 8 / 16 / 32 states
// are 0.43 / 0.70 / 1.20 / 2.22 % above the ideal size (the AC: 1.02 %). A GPU wants more states
// per group (states=32), or more groups (sub=64).
int default_rans_states(int channels) {
  int states = 1;
  while (states * 2 <= std::min(8, std::max(1, channels / 2))) states *= 2;
  return states;
}

struct Params {
  int level = 0;
  TokenMode mode;
  CdfSource cdf_source = CdfSource::kChunk;
  int alphabet = 0;  // M
  int sub_tokens = kMaxSubChunkTokens;
  LevelSpec spec;
  uint64_t table_id = 0;
  uint8_t coder = kCoderAc;
  int rans_states = 0;  // with kCoderRans: a power of two in [1, kRansMaxStates]

  std::vector<uint8_t> serialize() const {
    std::vector<uint8_t> out;
    ByteWriter w(out);
    w.put<uint8_t>(static_cast<uint8_t>(level));
    w.put<uint8_t>(coder);
    w.put<uint8_t>(mode.is_delta() ? 1 : 0);
    w.put<uint8_t>(static_cast<uint8_t>(mode.delta_group));
    w.put<uint8_t>(static_cast<uint8_t>(cdf_source));
    w.put<uint8_t>(static_cast<uint8_t>(alphabet));
    w.put<uint16_t>(static_cast<uint16_t>(sub_tokens));
    for (int b : spec.key_bins) w.put<uint8_t>(static_cast<uint8_t>(b));
    for (int b : spec.value_bins) w.put<uint8_t>(static_cast<uint8_t>(b));
    if (cdf_source == CdfSource::kOffline) w.put<uint64_t>(table_id);
    if (coder == kCoderRans) w.put<uint8_t>(static_cast<uint8_t>(std::countr_zero(unsigned(rans_states))));
    return out;
  }
};

int64_t sub_chunk_count(int64_t tokens, int sub_tokens) { return (tokens + sub_tokens - 1) / sub_tokens; }

// The chunk's CDF rows [2L][C][M+1], from its own histograms or from the offline table.
std::vector<uint16_t> chunk_cdf(const QuantizedChunk& q, int alphabet) {
  const int rows = q.shape.rows(), channels = q.shape.channels();
  std::vector<uint16_t> cdf(size_t(rows) * channels * (alphabet + 1));
  std::vector<uint64_t> counts(size_t(channels) * alphabet);
  for (int row = 0; row < rows; ++row) {
    std::fill(counts.begin(), counts.end(), 0);
    for (int64_t t = 0; t < q.shape.tokens; ++t) {
      const uint8_t* s = q.row_token(row, t);
      for (int c = 0; c < channels; ++c) ++counts[size_t(c) * alphabet + s[c]];
    }
    for (int c = 0; c < channels; ++c)
      build_cdf16(counts.data() + size_t(c) * alphabet, alphabet, cdf.data() + (size_t(row) * channels + c) * (alphabet + 1));
  }
  return cdf;
}

// The artifact's layout: one arithmetic-coded stream per (sub-chunk, row, channel), LENS one code per
// stream. Returns the number of streams stored raw.
uint64_t encode_ac_streams(const QuantizedChunk& q, const Params& p, const std::vector<uint16_t>& cdf,
                           std::vector<uint8_t>& lens, std::vector<uint8_t>& data) {
  const int rows = q.shape.rows(), channels = q.shape.channels();
  uint8_t buffer[kMaxSubChunkTokens];
  uint64_t raw_streams = 0;
  for (int64_t s0 = 0; s0 < q.shape.tokens; s0 += p.sub_tokens) {
    const auto n = static_cast<uint32_t>(std::min<int64_t>(p.sub_tokens, q.shape.tokens - s0));
    for (int row = 0; row < rows; ++row)
      for (int c = 0; c < channels; ++c) {
        const uint8_t* symbols = q.row_token(row, s0) + c;
        const uint16_t* row_cdf = cdf.data() + (size_t(row) * channels + c) * (p.alphabet + 1);
        // Arithmetic code only if strictly shorter than the raw symbols (so <= 255 bytes). Trailing
        // zero bytes are dropped: the decoder reads zeros past a stream's end (as the artifact's
        // decoder, which zero-fills each stream to 256 bytes), so they carry no information.
        uint32_t length = ac_encode_stream(symbols, channels, n, row_cdf, p.alphabet, buffer, n - 1);
        if (length < n)
          while (length > 1 && buffer[length - 1] == 0) --length;
        if (length < n) {
          lens.push_back(static_cast<uint8_t>(length - 1));
          data.insert(data.end(), buffer, buffer + length);
        } else {
          lens.push_back(kRawStreamCode);
          for (uint32_t t = 0; t < n; ++t) data.push_back(symbols[size_t(t) * channels]);
          ++raw_streams;
        }
      }
  }
  return raw_streams;
}

// The rANS layout: one group per (sub-chunk, row) of n x C symbols in (token, channel) order, LENS
// its byte length as u32.
void encode_rans_groups(const QuantizedChunk& q, const Params& p, const std::vector<uint16_t>& cdf,
                        std::vector<uint8_t>& lens, std::vector<uint8_t>& data) {
  const int rows = q.shape.rows(), channels = q.shape.channels();
  ByteWriter lengths(lens);
  for (int64_t s0 = 0; s0 < q.shape.tokens; s0 += p.sub_tokens) {
    const auto n = static_cast<uint32_t>(std::min<int64_t>(p.sub_tokens, q.shape.tokens - s0)) * uint32_t(channels);
    for (int row = 0; row < rows; ++row) {
      const size_t at = data.size();
      data.resize(at + rans_group_capacity(n, p.rans_states));
      const uint32_t bytes = rans_encode_group(q.row_token(row, s0), n, channels,
                                               cdf.data() + size_t(row) * channels * (p.alphabet + 1), p.alphabet,
                                               p.rans_states, data.data() + at);
      data.resize(at + bytes);
      lengths.put<uint32_t>(bytes);
    }
  }
}

class CacheGenCodec final : public Codec {
 public:
  CacheGenCodec(const CodecSpec& spec, std::shared_ptr<const OfflineCdfTable> table) : spec_(spec), table_(std::move(table)) {
    spec.check_known({"ladder", "delta", "cdf", "table", "sub", "entropy", "states"});
    const std::string entropy = spec.string_option("entropy", "ac");
    if (entropy == "rans") {
      coder_ = kCoderRans;
    } else if (entropy != "ac") {
      throw std::invalid_argument("codec cachegen: option entropy=\"" + entropy + "\": expected ac or rans");
    }
    if (spec.options.count("states")) {
      if (coder_ != kCoderRans) throw std::invalid_argument("codec cachegen: states=N only applies with entropy=rans");
      rans_states_ = spec.int_option("states", 0, 1, kRansMaxStates);
      if (std::popcount(unsigned(rans_states_)) != 1)
        throw std::invalid_argument("codec cachegen: states=" + std::to_string(rans_states_) + " is not a power of two");
    }
    ladder_ = Ladder::from_name_or_path(spec.string_option("ladder", "generic"));
    if (spec.options.count("delta"))
      mode_.delta_group = spec.options.at("delta").empty() ? 10 : spec.int_option("delta", 10, 2, 255);
    sub_tokens_ = spec.int_option("sub", kMaxSubChunkTokens, 1, kMaxSubChunkTokens);
    const std::string cdf = spec.string_option("cdf", "chunk");
    if (cdf == "offline") {
      if (!table_ && !spec.options.count("table"))
        throw std::invalid_argument("codec cachegen: cdf=offline needs table=PATH (build one with kvstream cdf-build)");
      if (!table_) table_ = std::make_shared<OfflineCdfTable>(OfflineCdfTable::load(spec.options.at("table")));
      if (table_->token_mode().delta_group != mode_.delta_group)
        throw std::invalid_argument("codec cachegen: the offline table was built with delta group " +
                                    std::to_string(table_->token_mode().delta_group) + ", the codec uses " +
                                    std::to_string(mode_.delta_group));
    } else if (cdf != "chunk") {
      throw std::invalid_argument("codec cachegen: option cdf=\"" + cdf + "\": expected chunk or offline");
    } else if (spec.options.count("table") || table_) {
      throw std::invalid_argument("codec cachegen: table=PATH only applies with cdf=offline");
    }
  }

  std::string spec() const override { return spec_.to_string(); }
  std::vector<int> levels() const override { return ladder_.levels(); }

  std::vector<uint8_t> encode(const KvChunkView& chunk, int level, int64_t t0, SourceDtype dtype) const override {
    return encode_with_report(chunk, level, t0, dtype, nullptr);
  }

  std::vector<uint8_t> encode_with_report(const KvChunkView& chunk, int level, int64_t t0, SourceDtype dtype,
                                          CacheGenSizeReport* report) const {
    const KvShape shape = chunk.shape();
    Params p;
    p.level = level;
    p.mode = mode_;
    p.spec = ladder_.level_spec(level, shape.layers);
    p.alphabet = p.spec.alphabet();
    p.sub_tokens = sub_tokens_;
    p.coder = coder_;
    if (coder_ == kCoderRans) p.rans_states = rans_states_ ? rans_states_ : default_rans_states(shape.channels());
    const QuantizedChunk q = quantize_chunk(chunk, p.spec, mode_);

    std::vector<Section> sections;
    std::vector<uint16_t> cdf;
    if (table_) {
      const auto* lt = table_->level(level);
      if (!lt || lt->spec != p.spec || table_->channels() != shape.channels())
        throw std::invalid_argument("codec cachegen: the offline table has no level " + std::to_string(level) +
                                    " for this ladder and shape (L=" + std::to_string(shape.layers) +
                                    ", C=" + std::to_string(shape.channels()) + ")");
      p.cdf_source = CdfSource::kOffline;
      p.table_id = table_->id();
      cdf = lt->cdf;
    } else {
      cdf = chunk_cdf(q, p.alphabet);
    }
    sections.push_back({section_tag("PARM"), p.serialize()});

    std::vector<uint8_t> scales;
    ByteWriter(scales).u16_array(q.scales);
    sections.push_back({section_tag("SCAL"), std::move(scales)});

    if (p.cdf_source == CdfSource::kChunk) {  // interior entries only: cdf[0] = 0 and cdf[M] = 65535 always
      std::vector<uint8_t> table;
      ByteWriter w(table);
      for (size_t stream = 0; stream < cdf.size() / (p.alphabet + 1); ++stream)
        for (int k = 1; k < p.alphabet; ++k) w.put<uint16_t>(cdf[stream * (p.alphabet + 1) + k]);
      sections.push_back({section_tag("CDF_"), std::move(table)});
    }

    const int rows = shape.rows(), channels = shape.channels();
    std::vector<uint8_t> lens, data;
    double ideal_bits = 0;
    uint64_t raw_streams = 0;
    if (p.coder == kCoderRans)
      encode_rans_groups(q, p, cdf, lens, data);
    else
      raw_streams = encode_ac_streams(q, p, cdf, lens, data);
    if (report)
      for (int64_t t = 0; t < shape.tokens; ++t)
        for (int row = 0; row < rows; ++row)
          for (int c = 0; c < channels; ++c)
            ideal_bits += symbol_bits(cdf.data() + (size_t(row) * channels + c) * (p.alphabet + 1), p.alphabet,
                                      q.row_token(row, t)[c]);
    const uint64_t payload = data.size();
    const uint64_t lens_bytes = lens.size();
    sections.push_back({section_tag("LENS"), std::move(lens)});
    sections.push_back({section_tag("DATA"), std::move(data)});
    auto bytes = write_bitstream({CodecId::kCacheGen, shape, t0, dtype}, sections);
    if (report) {
      report->total_bytes = bytes.size();
      report->payload_bytes = payload;
      report->side_bytes = bytes.size() - payload;
      report->ideal_bytes = bytes.size() - payload - lens_bytes + static_cast<uint64_t>(std::ceil(ideal_bits / 8));
      report->raw_streams = raw_streams;
    }
    return bytes;
  }

 private:
  CodecSpec spec_;
  Ladder ladder_;
  TokenMode mode_;
  int sub_tokens_ = kMaxSubChunkTokens;
  uint8_t coder_ = kCoderAc;
  int rans_states_ = 0;  // 0: default_rans_states(C)
  std::shared_ptr<const OfflineCdfTable> table_;
};

Params parse_params(const ParsedBitstream& parsed) {
  const int layers = parsed.header.shape.layers;
  const auto bytes = parsed.section("PARM");
  ByteReader r(bytes, "PARM");
  Params p;
  p.level = r.get<uint8_t>();
  const auto coder = r.get<uint8_t>();
  const auto token_mode = r.get<uint8_t>();
  const auto group = r.get<uint8_t>();
  const auto source = r.get<uint8_t>();
  p.alphabet = r.get<uint8_t>();
  p.sub_tokens = r.get<uint16_t>();
  auto bad = [](const std::string& what) { throw BitstreamError(K::kBadLevelSpec, "PARM", what); };
  if (coder != kCoderAc && coder != kCoderRans)
    bad("entropy coder " + std::to_string(coder) + " (this build knows 1 = ac, 2 = rans)");
  p.coder = coder;
  if (token_mode > 1) bad("token mode " + std::to_string(token_mode));
  if (token_mode == 1 && group < 2) bad("anchor/delta group size " + std::to_string(group));
  if (token_mode == 0 && group != 0) bad("group size set in raw token mode");
  p.mode.delta_group = token_mode == 1 ? group : 0;
  if (source > 1) bad("CDF source " + std::to_string(source));
  p.cdf_source = static_cast<CdfSource>(source);
  if (p.sub_tokens < 1 || p.sub_tokens > kMaxSubChunkTokens) bad("sub-chunk of " + std::to_string(p.sub_tokens) + " tokens");
  const size_t expected = kParamsFixedBytes + 2 * size_t(layers) + (p.cdf_source == CdfSource::kOffline ? 8 : 0) +
                          (coder == kCoderRans ? 1 : 0);
  if (bytes.size() != expected)
    bad("holds " + std::to_string(bytes.size()) + " bytes; the level spec for L=" + std::to_string(layers) +
        " needs " + std::to_string(expected));
  for (auto* list : {&p.spec.key_bins, &p.spec.value_bins})
    for (int l = 0; l < layers; ++l) list->push_back(r.get<uint8_t>());
  p.spec.level = p.level;
  try {
    p.spec.validate(layers);
  } catch (const std::invalid_argument& e) {
    bad(e.what());
  }
  if (p.alphabet != p.spec.alphabet())
    bad("alphabet " + std::to_string(p.alphabet) + " but the largest bin count is " + std::to_string(p.spec.alphabet()));
  if (p.cdf_source == CdfSource::kOffline) p.table_id = r.get<uint64_t>();
  if (coder == kCoderRans) {
    const int log2_states = r.get<uint8_t>();
    if ((1 << std::min(log2_states, 7)) > kRansMaxStates) bad("rANS with 2^" + std::to_string(log2_states) + " states");
    p.rans_states = 1 << log2_states;
  }
  return p;
}

std::vector<uint16_t> read_cdf(const ParsedBitstream& parsed, const Params& p, const DecodeContext& context) {
  const KvShape& shape = parsed.header.shape;
  const size_t streams = size_t(shape.rows()) * shape.channels();
  if (p.cdf_source == CdfSource::kOffline) {
    for (const auto& table : context.cdf_tables) {
      if (!table || table->id() != p.table_id) continue;
      const auto* lt = table->level(p.level);
      if (!lt || lt->spec != p.spec || table->channels() != shape.channels())
        throw BitstreamError(K::kBadLevelSpec, "PARM", "the offline CDF table's level spec differs from the bitstream's");
      return lt->cdf;
    }
    char id[17];
    std::snprintf(id, sizeof id, "%016llx", static_cast<unsigned long long>(p.table_id));
    throw BitstreamError(K::kMissingCdfTable, "PARM", std::string("table id ") + id + " (pass it with --cdf-table)");
  }
  const auto bytes = parsed.section_of_size("CDF_", streams * (p.alphabet - 1) * 2);
  std::vector<uint16_t> cdf(streams * (p.alphabet + 1));
  for (size_t s = 0; s < streams; ++s) {
    uint16_t* row = cdf.data() + s * (p.alphabet + 1);
    row[0] = 0;
    for (int k = 1; k < p.alphabet; ++k) row[k] = load_u16(bytes.data() + (s * (p.alphabet - 1) + k - 1) * 2);
    row[p.alphabet] = 65535;
    if (!cdf16_is_valid(row, p.alphabet))
      throw BitstreamError(K::kCorruptPayload, "CDF_", "table of stream " + std::to_string(s) + " is not strictly increasing");
  }
  return cdf;
}

// Decodes the C streams of one (sub-chunk, row) into symbols[t * C + c], advancing `offset` through DATA.
void decode_row_streams(const uint8_t* data, size_t& offset, const uint8_t* codes, int channels, uint32_t n,
                        const uint16_t* row_cdf, const AcSymbolLookup* row_lookup, int alphabet, uint8_t* symbols) {
  for (int c = 0; c < channels; ++c) {
    uint8_t* out = symbols + c;
    if (codes[c] == kRawStreamCode) {
      for (uint32_t t = 0; t < n; ++t) out[size_t(t) * channels] = data[offset + t];
      offset += n;
      continue;
    }
    const uint32_t length = uint32_t(codes[c]) + 1;
    AcDecoder decoder(data + offset, length);
    const uint16_t* cdf = row_cdf + size_t(c) * (alphabet + 1);
    for (uint32_t t = 0; t < n; ++t)
      out[size_t(t) * channels] = static_cast<uint8_t>(decoder.next(cdf, row_lookup[c], alphabet, t + 1 < n));
    offset += length;
  }
}

// AC payload: the streams in LENS order (sub-chunk, row, channel), lookups shared by the sub-chunks.
void decode_ac_streams(std::span<const uint8_t> data, std::span<const uint8_t> lens, const std::vector<uint16_t>& cdf,
                       const Params& p, QuantizedChunk& q) {
  const int rows = q.shape.rows(), channels = q.shape.channels();
  std::vector<AcSymbolLookup> lookups(size_t(rows) * channels);
  for (size_t i = 0; i < lookups.size(); ++i) build_symbol_lookup(cdf.data() + i * (p.alphabet + 1), p.alphabet, lookups[i]);
  size_t offset = 0, stream = 0;
  for (int64_t s0 = 0; s0 < q.shape.tokens; s0 += p.sub_tokens) {
    const auto n = static_cast<uint32_t>(std::min<int64_t>(p.sub_tokens, q.shape.tokens - s0));
    for (int row = 0; row < rows; ++row, stream += channels)
      decode_row_streams(data.data(), offset, lens.data() + stream, channels, n,
                         cdf.data() + size_t(row) * channels * (p.alphabet + 1), lookups.data() + size_t(row) * channels,
                         p.alphabet, q.row_token(row, s0));
  }
}

// rANS payload: groups in (sub-chunk, row) order with the byte lengths `group_bytes`, decoded row by
// row so that one row's lookups (C KiB) stay in cache for all its sub-chunks.
void decode_rans_groups(std::span<const uint8_t> data, const std::vector<uint32_t>& group_bytes,
                        const std::vector<uint16_t>& cdf, const Params& p, QuantizedChunk& q) {
  const int rows = q.shape.rows(), channels = q.shape.channels();
  std::vector<uint64_t> group_offset(group_bytes.size() + 1, 0);
  for (size_t g = 0; g < group_bytes.size(); ++g) group_offset[g + 1] = group_offset[g] + group_bytes[g];
  std::vector<RansSymbolLookup> lookups(static_cast<size_t>(channels));
  for (int row = 0; row < rows; ++row) {
    const uint16_t* row_cdf = cdf.data() + size_t(row) * channels * (p.alphabet + 1);
    for (int c = 0; c < channels; ++c) build_symbol_lookup(row_cdf + size_t(c) * (p.alphabet + 1), p.alphabet, lookups[size_t(c)]);
    for (int64_t s0 = 0, j = 0; s0 < q.shape.tokens; s0 += p.sub_tokens, ++j) {
      const auto n = static_cast<uint32_t>(std::min<int64_t>(p.sub_tokens, q.shape.tokens - s0)) * uint32_t(channels);
      const size_t g = size_t(j) * rows + row;
      if (!rans_decode_group(data.data() + group_offset[g], group_bytes[g], n, channels, row_cdf, lookups.data(),
                             p.alphabet, p.rans_states, q.row_token(row, s0)))
        throw BitstreamError(K::kCorruptPayload, "DATA",
                             "rANS group of sub-chunk " + std::to_string(j) + ", row " + std::to_string(row) +
                                 " does not decode to its end state");
    }
  }
}

KvCache decode(const ParsedBitstream& parsed, const DecodeContext& context) {
  const KvShape& shape = parsed.header.shape;
  const Params p = parse_params(parsed);
  const int rows = shape.rows(), channels = shape.channels();
  const std::vector<uint16_t> cdf = read_cdf(parsed, p, context);
  const int64_t n_sub = sub_chunk_count(shape.tokens, p.sub_tokens);
  const bool rans = p.coder == kCoderRans;
  const auto lens = parsed.section_of_size("LENS", uint64_t(n_sub) * rows * (rans ? 4 : channels));
  const auto data = parsed.section("DATA");

  // AC: every stream takes >= 1 byte, so the decoded size is bounded by 256x the DATA section.
  // rANS: a group of n symbols takes 4N..4N + 2n bytes. Check the lengths before allocating the output.
  uint64_t total = 0;
  std::vector<uint32_t> group_bytes;
  for (int64_t j = 0; j < n_sub; ++j) {
    const uint64_t n = std::min<int64_t>(p.sub_tokens, shape.tokens - j * p.sub_tokens);
    if (rans) {
      for (int row = 0; row < rows; ++row) {
        const uint32_t bytes = load_u32(lens.data() + 4 * (size_t(j) * rows + row));
        if (bytes < 4u * p.rans_states || bytes > rans_group_capacity(uint32_t(n * channels), p.rans_states))
          throw BitstreamError(K::kBadSection, "LENS",
                               "rANS group of sub-chunk " + std::to_string(j) + ", row " + std::to_string(row) +
                                   " claims " + std::to_string(bytes) + " bytes");
        group_bytes.push_back(bytes);
        total += bytes;
      }
      continue;
    }
    for (int64_t i = 0; i < int64_t(rows) * channels; ++i) {
      const uint8_t code = lens[size_t(j * rows * channels + i)];
      total += code == kRawStreamCode ? n : uint64_t(code) + 1;
    }
  }
  if (total != data.size())
    throw BitstreamError(K::kBadSection, "DATA",
                         "holds " + std::to_string(data.size()) + " bytes, LENS adds up to " + std::to_string(total));

  QuantizedChunk q{shape, std::vector<uint8_t>(size_t(shape.elements())), std::vector<uint16_t>(size_t(rows * shape.tokens))};
  const auto scales = parsed.section_of_size("SCAL", uint64_t(rows) * shape.tokens * 2);
  for (size_t i = 0; i < q.scales.size(); ++i) {
    q.scales[i] = load_u16(scales.data() + 2 * i);
    if ((q.scales[i] & 0x8000u) || (q.scales[i] & 0x7C00u) == 0x7C00u)
      throw BitstreamError(K::kCorruptPayload, "SCAL", "scale " + std::to_string(i) + " is negative, inf or NaN");
  }

  if (rans)
    decode_rans_groups(data, group_bytes, cdf, p, q);
  else
    decode_ac_streams(data, lens, cdf, p, q);
  for (int row = 0; row < rows; ++row) {  // symbols beyond the row's [0, 2Q] would dequantize out of range
    const auto top = static_cast<uint8_t>(2 * bins_to_q(p.spec.bins_of_row(row)));
    const uint8_t* symbols = q.row_token(row, 0);
    for (size_t i = 0; i < size_t(shape.tokens) * channels; ++i)
      if (symbols[i] > top)
        throw BitstreamError(K::kCorruptPayload, "DATA",
                             "symbol " + std::to_string(symbols[i]) + " outside [0, " + std::to_string(top) +
                                 "] in row " + std::to_string(row) + ", channel " + std::to_string(i % channels) +
                                 ", token " + std::to_string(i / channels));
  }
  KvCache out(shape);
  dequantize_chunk(q, p.spec, p.mode, out);
  return out;
}

}  // namespace

CacheGenSizeReport cachegen_size_report(const std::string& spec, const KvChunkView& chunk, int level) {
  const CodecSpec parsed = CodecSpec::parse(spec);
  if (parsed.name != "cachegen") throw std::invalid_argument("cachegen_size_report: not a cachegen spec: " + spec);
  CacheGenCodec codec(parsed, nullptr);
  CacheGenSizeReport report;
  codec.encode_with_report(chunk, level, 0, SourceDtype::kFp16, &report);
  return report;
}

std::unique_ptr<Codec> make_cachegen_codec(const std::string& spec, std::shared_ptr<const OfflineCdfTable> table) {
  const CodecSpec parsed = CodecSpec::parse(spec);
  if (parsed.name != "cachegen") throw std::invalid_argument("make_cachegen_codec: not a cachegen spec: " + spec);
  return std::make_unique<CacheGenCodec>(parsed, std::move(table));
}

CodecEntry cachegen_codec_entry() {
  return {"cachegen", CodecId::kCacheGen,
          "CacheGen: per-token quantization with per-layer bins, per-channel 16-bit CDF, arithmetic or rANS coding "
          "(options: ladder=NAME|PATH, delta[=G], cdf=chunk|offline, table=PATH, sub=N, entropy=ac|rans, states=N)",
          [](const CodecSpec& spec) { return std::unique_ptr<Codec>(new CacheGenCodec(spec, nullptr)); }, decode};
}

}  // namespace kvstream::codec
