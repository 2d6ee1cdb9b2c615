#include "codec/cachegen/cachegen_payload.h"

#include <algorithm>
#include <bit>
#include <cstdio>
#include <stdexcept>

#include "codec/cachegen/offline_cdf.h"
#include "codec/entropy/cdf.h"
#include "codec/entropy/rans_coder.h"
#include "codec/format/bitstream_error.h"
#include "codec/format/byte_io.h"
#include "codec/vector_quantizer.h"

namespace kvstream::codec {

namespace {
using K = BitstreamErrorKind;
constexpr size_t kParamsFixedBytes = 8;

// The largest symbol a row can hold, 2Q: its CDF entries above it are fixed by the +k rule
// (cum[k] = T there, so cdf[k] = 65535 - M + k) and are not stored (FORMAT.md, CDF_).
int largest_symbol(const LevelSpec& spec, int row) { return 2 * bins_to_q(spec.bins_of_row(row)); }

uint16_t cdf_above_largest_symbol(int alphabet, int k) { return static_cast<uint16_t>(65535 - alphabet + k); }
}  // namespace

std::vector<uint8_t> CacheGenParams::serialize() const {
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

CacheGenParams CacheGenParams::parse(const ParsedBitstream& parsed) {
  const int layers = parsed.header.shape.layers;
  const auto bytes = parsed.section("PARM");
  ByteReader r(bytes, "PARM");
  CacheGenParams p;
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

namespace {

std::vector<uint16_t> read_cdf(const ParsedBitstream& parsed, const CacheGenParams& p, const DecodeContext& context) {
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
  const int channels = shape.channels(), m = p.alphabet;
  size_t stored = 0;
  for (int row = 0; row < shape.rows(); ++row) stored += size_t(channels) * size_t(largest_symbol(p.spec, row));
  const auto bytes = parsed.section_of_size("CDF_", stored * 2);
  std::vector<uint16_t> cdf(streams * (size_t(m) + 1));
  const uint8_t* next = bytes.data();
  for (size_t s = 0; s < streams; ++s) {
    const int top = largest_symbol(p.spec, int(s / size_t(channels)));
    uint16_t* row = cdf.data() + s * (size_t(m) + 1);
    row[0] = 0;
    for (int k = 1; k <= top; ++k, next += 2) row[k] = load_u16(next);
    for (int k = top + 1; k < m; ++k) row[k] = cdf_above_largest_symbol(m, k);
    row[m] = 65535;
    if (!cdf16_is_valid(row, m))
      throw BitstreamError(K::kCorruptPayload, "CDF_", "table of stream " + std::to_string(s) + " is not strictly increasing");
  }
  return cdf;
}

}  // namespace

CacheGenPayload parse_cachegen_payload(const ParsedBitstream& parsed, const DecodeContext& context) {
  CacheGenPayload pl;
  pl.shape = parsed.header.shape;
  pl.params = CacheGenParams::parse(parsed);
  const CacheGenParams& p = pl.params;
  const int rows = pl.rows(), channels = pl.shape.channels();
  pl.cdf = read_cdf(parsed, p, context);
  const int64_t n_sub = pl.sub_chunks();
  const bool rans = p.coder == kCoderRans;
  const auto lens = parsed.section_of_size("LENS", uint64_t(n_sub) * rows * (rans ? 4 : channels));
  pl.data = parsed.section("DATA");

  // AC: every stream takes >= 1 byte, so the decoded size is bounded by 256x the DATA section.
  // rANS: a group of n symbols takes 4N..4N + 2n bytes. Check the lengths before anything is allocated.
  pl.offset.push_back(0);
  for (int64_t j = 0; j < n_sub; ++j) {
    const uint64_t n = pl.sub_chunk_tokens(j);
    if (rans) {
      for (int row = 0; row < rows; ++row) {
        const uint32_t bytes = load_u32(lens.data() + 4 * (size_t(j) * rows + row));
        if (bytes < 4u * p.rans_states || bytes > rans_group_capacity(uint32_t(n * channels), p.rans_states))
          throw BitstreamError(K::kBadSection, "LENS",
                               "rANS group of sub-chunk " + std::to_string(j) + ", row " + std::to_string(row) +
                                   " claims " + std::to_string(bytes) + " bytes");
        pl.offset.push_back(pl.offset.back() + bytes);
      }
      continue;
    }
    for (int64_t i = 0; i < int64_t(rows) * channels; ++i) {
      const uint8_t code = lens[size_t(j * rows * channels + i)];
      pl.ac_codes.push_back(code);
      pl.offset.push_back(pl.offset.back() + (code == kRawStreamCode ? n : uint64_t(code) + 1));
    }
  }
  if (pl.offset.back() != pl.data.size())
    throw BitstreamError(K::kBadSection, "DATA",
                         "holds " + std::to_string(pl.data.size()) + " bytes, LENS adds up to " +
                             std::to_string(pl.offset.back()));

  const auto scales = parsed.section_of_size("SCAL", uint64_t(rows) * pl.shape.tokens * 2);
  pl.scales.resize(size_t(rows) * size_t(pl.shape.tokens));
  for (size_t i = 0; i < pl.scales.size(); ++i) {
    pl.scales[i] = load_u16(scales.data() + 2 * i);
    if ((pl.scales[i] & 0x8000u) || (pl.scales[i] & 0x7C00u) == 0x7C00u)
      throw BitstreamError(K::kCorruptPayload, "SCAL", "scale " + std::to_string(i) + " is negative, inf or NaN");
  }
  return pl;
}

std::vector<uint64_t> row_coded_bytes(const CacheGenPayload& payload) {
  const int rows = payload.rows();
  // Units per (sub-chunk, row): one rANS group, or one AC stream per channel.
  const int64_t per_row = payload.params.coder == kCoderRans ? 1 : payload.shape.channels();
  std::vector<uint64_t> bytes(size_t(rows), 0);
  for (int r = 0; r < rows; ++r)
    if (payload.params.cdf_source == CdfSource::kChunk)
      bytes[size_t(r)] = uint64_t(payload.shape.channels()) * uint64_t(largest_symbol(payload.params.spec, r)) * 2;
  for (int64_t j = 0; j < payload.sub_chunks(); ++j)
    for (int r = 0; r < rows; ++r) {
      const int64_t first = (j * rows + r) * per_row;
      bytes[size_t(r)] += payload.offset[size_t(first + per_row)] - payload.offset[size_t(first)];
    }
  return bytes;
}

CacheGenEncodeJob encode_job(const KvChunkView& chunk, const uint8_t* row_q, const CacheGenParams& params) {
  CacheGenEncodeJob job = encode_job(chunk, row_q, params.mode);
  job.alphabet = params.alphabet;
  job.sub_tokens = params.sub_tokens;
  job.rans = params.coder == kCoderRans;
  job.rans_states = params.rans_states;
  return job;
}

void HostEncodeBuffers::attach(CacheGenEncodeJob& job) {
  const uint64_t tokens = uint64_t(job.rows()) * uint64_t(job.tokens), units = job.units();
  symbols.resize(tokens * uint64_t(job.channels));
  scales.resize(tokens);
  cdf.resize(uint64_t(job.rows()) * uint64_t(job.channels) * uint64_t(job.alphabet + 1));
  scratch.resize(units * job.unit_capacity());
  unit_start.resize(units);
  unit_bytes.resize(units);
  ac_codes.resize(units);
  point_at_buffers(job, *this);
}

std::vector<uint8_t> write_cachegen_bitstream(const BitstreamHeader& header, const CacheGenParams& params,
                                              std::span<const uint16_t> scales, std::span<const uint16_t> cdf,
                                              std::span<const uint32_t> unit_bytes, std::span<const uint8_t> ac_codes,
                                              std::vector<uint8_t> data) {
  std::vector<Section> sections;
  sections.push_back({section_tag("PARM"), params.serialize()});
  std::vector<uint8_t> scale_bytes;
  ByteWriter(scale_bytes).u16_array(scales);
  sections.push_back({section_tag("SCAL"), std::move(scale_bytes)});
  if (params.cdf_source == CdfSource::kChunk) {  // cdf[1..2Q] per stream; cdf[0], cdf[2Q+1..M] are implied
    std::vector<uint8_t> table;
    ByteWriter w(table);
    const int m = params.alphabet, channels = header.shape.channels();
    const size_t row_size = size_t(m) + 1;
    for (size_t s = 0; s < cdf.size() / row_size; ++s) {
      const uint16_t* row = cdf.data() + s * row_size;
      const int top = largest_symbol(params.spec, int(s / size_t(channels)));
      for (int k = 1; k <= top; ++k) w.put<uint16_t>(row[k]);
      for (int k = top + 1; k < m; ++k)
        if (row[k] != cdf_above_largest_symbol(m, k))
          throw std::logic_error("CDF entry " + std::to_string(k) + " of stream " + std::to_string(s) +
                                 " above its row's largest symbol breaks the +k rule");
    }
    sections.push_back({section_tag("CDF_"), std::move(table)});
  }
  std::vector<uint8_t> lens;
  if (params.coder == kCoderRans) {
    ByteWriter w(lens);
    for (uint32_t bytes : unit_bytes) w.put<uint32_t>(bytes);
  } else {
    lens.assign(ac_codes.begin(), ac_codes.end());
  }
  sections.push_back({section_tag("LENS"), std::move(lens)});
  sections.push_back({section_tag("DATA"), std::move(data)});
  return write_bitstream(header, sections);
}

void check_symbols(const CacheGenPayload& payload, const std::vector<uint8_t>& symbols) {
  const int channels = payload.shape.channels();
  const size_t per_row = size_t(payload.shape.tokens) * size_t(channels);
  for (int row = 0; row < payload.rows(); ++row) {  // beyond the row's [0, 2Q] would dequantize out of range
    const auto top = static_cast<uint8_t>(2 * bins_to_q(payload.params.spec.bins_of_row(row)));
    const uint8_t* s = symbols.data() + size_t(row) * per_row;
    uint8_t largest = 0;  // one vectorised pass; the search below names the first symbol out of range
    for (size_t i = 0; i < per_row; ++i) largest = std::max(largest, s[i]);
    if (largest <= top) continue;
    for (size_t i = 0; i < per_row; ++i)
      if (s[i] > top)
        throw BitstreamError(K::kCorruptPayload, "DATA",
                             "symbol " + std::to_string(s[i]) + " outside [0, " + std::to_string(top) + "] in row " +
                                 std::to_string(row) + ", channel " + std::to_string(i % channels) + ", token " +
                                 std::to_string(i / channels));
  }
}

}  // namespace kvstream::codec
