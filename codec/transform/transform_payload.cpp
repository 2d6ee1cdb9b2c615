#include "codec/transform/transform_payload.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdio>
#include <stdexcept>

#include "codec/entropy/rans_coder.h"
#include "codec/format/bitstream_error.h"
#include "codec/format/byte_io.h"
#include "codec/transform/transform_decode_stages.h"
#include "codec/transform/transform_distortion.h"
#include "common/half.h"

namespace kvstream::codec {
namespace {

using K = BitstreamErrorKind;
constexpr int kMaxLog2SubTokens = std::countr_zero(uint64_t(kMaxTransformChunkTokens));  // TPRM's largest sub-chunk

const TransformCalibration& find_calibration(const DecodeContext& context, uint64_t id) {
  for (const auto& cal : context.transform_calibrations)
    if (cal && cal->id() == id) return *cal;
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(id));
  throw BitstreamError(K::kMissingCdfTable, "TPRM",
                       std::string("transform calibration id ") + hex + " (pass its .kvcal with --calibration)");
}

}  // namespace

TransformRowPlan::TransformRowPlan(const TransformCalibration& cal, int row, double d, int sub)
    : step(cal.step(row, d)) {
  for (int c : cal.classes(row, step))
    if (c >= 0) classes.push_back(c);
  const int part = row < cal.layers() ? 0 : 1;
  cdf.reserve(classes.size() * (kTransformAlphabet + 1));
  for (int c : classes) cdf.insert(cdf.end(), cal.cdf(part, c), cal.cdf(part, c) + kTransformAlphabet + 1);
  sub_tokens = sub > 0 ? sub : transform_default_sub_tokens(kept());
}

int transform_default_sub_tokens(int kept) {
  return rans_sub_tokens(kept, kTransformRansStates, static_cast<int>(kMaxTransformChunkTokens));
}

TransformGroups transform_groups(const std::vector<TransformRowPlan>& plans, int64_t coded_tokens, bool one_per_row) {
  TransformGroups groups;
  groups.symbol_start.push_back(0);
  const auto add = [&groups](size_t r, int64_t tokens, int kept) {
    groups.row.push_back(static_cast<int>(r));
    groups.symbol_start.push_back(groups.symbol_start.back() + uint64_t(tokens) * uint64_t(kept));
  };
  for (size_t r = 0; r < plans.size(); ++r) {
    const int kept = plans[r].kept(), sub = plans[r].sub_tokens;
    if (one_per_row) add(r, coded_tokens, kept);
    else if (kept > 0)
      for (int64_t t = 0; t < coded_tokens; t += sub) add(r, std::min<int64_t>(sub, coded_tokens - t), kept);
  }
  return groups;
}

int transform_sinks_in_chunk(const TransformCalibration& cal, int64_t t0, int64_t tokens) {
  return static_cast<int>(std::clamp<int64_t>(cal.sink_tokens() - t0, 0, tokens));
}

void check_transform_shape(const TransformCalibration& cal, const KvShape& s, const std::string& what) {
  if (s.tokens > kMaxTransformChunkTokens)
    throw std::invalid_argument(what + " has " + std::to_string(s.tokens) + " tokens, more than the transform codec's " +
                                std::to_string(kMaxTransformChunkTokens) + " per chunk (use smaller chunks)");
  if (s.layers != cal.layers() || s.kv_heads != cal.kv_heads() || s.head_dim != cal.head_dim())
    throw std::invalid_argument(what + " has shape " + s.to_string() + ", the transform calibration (model \"" +
                                cal.model() + "\") is for L=" + std::to_string(cal.layers()) +
                                " H=" + std::to_string(cal.kv_heads()) + " D=" + std::to_string(cal.head_dim()));
}

void TransformPayload::check_totals(uint64_t low_bits_used, uint64_t escapes_used) const {
  if (escapes_used > escape_count()) throw BitstreamError(K::kTruncated, "ESCP", "fewer escapes than the symbols need");
  if (escapes_used < escape_count()) throw BitstreamError(K::kBadSection, "ESCP", "escapes left after the last symbol");
  if (low_bits_used > 8 * uint64_t(low_bits.size()))
    throw BitstreamError(K::kTruncated, "LOWB", "fewer low bits than the symbols need");
  const bool tail_clear = low_bits_used % 8 == 0 || (low_bits.back() >> (low_bits_used % 8)) == 0;
  if ((low_bits_used + 7) / 8 != low_bits.size() || !tail_clear)
    throw BitstreamError(K::kBadSection, "LOWB", "low bits left after the last symbol");
}

TransformPayload parse_transform_payload(const ParsedBitstream& parsed, const DecodeContext& context) {
  TransformPayload p;
  p.shape = parsed.header.shape;
  p.t0 = parsed.header.t0;
  const int rows = p.shape.rows();
  const bool one_group_per_row = parsed.version == 2;  // version 2 had no sub-chunks
  ByteReader tprm(parsed.section_of_size("TPRM", 20 + (one_group_per_row ? 0 : uint64_t(rows))), "TPRM");
  p.cal = &find_calibration(context, tprm.get<uint64_t>());
  p.d = std::bit_cast<double>(tprm.get<uint64_t>());
  const uint32_t sinks = tprm.get<uint32_t>();
  try {
    check_transform_shape(*p.cal, p.shape, "the bitstream");
  } catch (const std::invalid_argument& e) {
    throw BitstreamError(K::kBadLevelSpec, "TPRM", e.what());
  }
  if (const std::string error = transform_distortion_error(p.d); !error.empty())
    throw BitstreamError(K::kBadLevelSpec, "TPRM", error);
  if (int64_t(sinks) != transform_sinks_in_chunk(*p.cal, p.t0, p.shape.tokens))
    throw BitstreamError(K::kBadLevelSpec, "TPRM", "sink tokens " + std::to_string(sinks) + " differ from the calibration's");
  p.sinks = static_cast<int>(sinks);
  p.rows.reserve(size_t(rows));
  for (int r = 0; r < rows; ++r) {
    const int log2_sub = one_group_per_row ? kMaxLog2SubTokens : tprm.get<uint8_t>();
    if (log2_sub > kMaxLog2SubTokens)
      throw BitstreamError(K::kBadLevelSpec, "TPRM", "row " + std::to_string(r) + "'s sub-chunk of 2^" + std::to_string(log2_sub) +
                                                         " tokens is beyond the format's 2^" + std::to_string(kMaxLog2SubTokens));
    p.rows.emplace_back(*p.cal, r, p.d, 1 << log2_sub);
  }
  p.groups = transform_groups(p.rows, p.coded_tokens(), one_group_per_row);
  p.sink = parsed.section_of_size("SINK", uint64_t(2) * rows * sinks * p.shape.channels());
  const auto grps = parsed.section_of_size("GRPS", uint64_t(4) * p.groups.size());
  p.rans = parsed.section("RANS");
  p.low_bits = parsed.section("LOWB");
  p.escapes = parsed.section("ESCP");
  if (p.escapes.size() % 4 != 0) throw BitstreamError(K::kBadSection, "ESCP", "size not a multiple of 4");

  p.group_offset.assign(1, 0);
  for (size_t g = 0; g < p.groups.size(); ++g) {
    const int r = p.groups.row[g];
    const uint32_t bytes = load_u32(grps.data() + 4 * g);
    if (bytes > p.rans.size() - p.group_offset.back())
      throw BitstreamError(K::kBadSection, "GRPS", "group " + std::to_string(g) + " (row " + std::to_string(r) +
                                                       ") runs past the RANS section");
    if (p.rows[size_t(r)].kept() == 0 && bytes != 0)
      throw BitstreamError(K::kCorruptPayload, "GRPS", "row " + std::to_string(r) + " keeps no component but has a group");
    p.group_offset.push_back(p.group_offset.back() + bytes);
  }
  if (p.group_offset.back() != p.rans.size())
    throw BitstreamError(K::kBadSection, "RANS", "bytes left after the last group");
  return p;
}

void check_transform_token_finite(const float* token, int channels, int row, int layers, int64_t position) {
  for (int c = 0; c < channels; ++c)
    if (!(std::fabs(token[c]) <= common::kHalfMax))
      throw std::invalid_argument("KV value " + std::to_string(token[c]) + " (layer " + std::to_string(row % layers) +
                                  (row < layers ? " K" : " V") + ", token " + std::to_string(position) + ", channel " +
                                  std::to_string(c) + ") is not a finite fp16 number");
}

std::vector<uint8_t> transform_sink_bytes(const KvChunkView& chunk, int sinks) {
  const KvShape s = chunk.shape();
  std::vector<uint8_t> out;
  out.reserve(size_t(2) * size_t(s.rows()) * size_t(sinks) * size_t(s.channels()));
  for (int r = 0; r < s.rows(); ++r)
    for (int t = 0; t < sinks; ++t) {
      const float* token = chunk.token(r, t);
      check_transform_token_finite(token, s.channels(), r, s.layers, chunk.t0() + t);
      for (int c = 0; c < s.channels(); ++c) ByteWriter(out).put<uint16_t>(common::float_to_half(token[c]));
    }
  return out;
}

std::vector<uint8_t> write_transform_bitstream(const BitstreamHeader& header, const TransformCalibration& cal, double d,
                                               int sinks, const std::vector<TransformRowPlan>& plans,
                                               TransformSections sections) {
  for (size_t i = 0; i + 4 <= sections.escapes.size(); i += 4) {
    const auto q = static_cast<int32_t>(load_u32(sections.escapes.data() + i));
    if (q < -kTransformMaxQ || q > kTransformMaxQ)
      throw std::invalid_argument("transform codec: at relative distortion " + distortion_text(d) +
                                  " a coefficient of this chunk is more than 2^30 quantizer steps from its row's mean, " +
                                  "beyond the format's range (codec/transform/transform_distortion.h): code it at a larger distortion");
  }
  std::vector<uint8_t> tprm, grps;
  ByteWriter(tprm).put<uint64_t>(cal.id());
  ByteWriter(tprm).put<uint64_t>(std::bit_cast<uint64_t>(d));
  ByteWriter(tprm).put<uint32_t>(static_cast<uint32_t>(sinks));
  for (const TransformRowPlan& plan : plans)
    ByteWriter(tprm).put<uint8_t>(static_cast<uint8_t>(std::countr_zero(unsigned(plan.sub_tokens))));
  for (const uint32_t bytes : sections.group_bytes) ByteWriter(grps).put<uint32_t>(bytes);
  return write_bitstream(header, {Section{section_tag("TPRM"), std::move(tprm)}, Section{section_tag("SINK"), std::move(sections.sink)},
                                  Section{section_tag("GRPS"), std::move(grps)}, Section{section_tag("RANS"), std::move(sections.rans)},
                                  Section{section_tag("LOWB"), std::move(sections.low_bits)},
                                  Section{section_tag("ESCP"), std::move(sections.escapes)}});
}

}  // namespace kvstream::codec
