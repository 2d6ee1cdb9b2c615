// A transform bitstream's parsed, checked payload (codec/FORMAT.md §3a), and the writer both encoders
// use. The payload is what both decoders of the format need, the CPU one in transform_codec.cpp and the GPU one in gpu_transform_decode.cpp.
// Parsing checks the parameters against the calibration and every section's size that can be known
// before entropy decoding, so decoders index the arrays below without further checks; what only the
// symbols tell (low bits and escapes used up exactly) the decoders check after stage 2 of
// transform_decode_stages.h.
#pragma once
#include <cstdint>
#include <span>
#include <vector>

#include "codec/codec.h"
#include "codec/format/bitstream.h"
#include "codec/transform/transform_calibration.h"

namespace kvstream::codec {

// A row whose components are all dropped decodes to its mean at no bytes per token, so a transform
// chunk's decoded size is not bounded by its payload as every other codec's is. The token count is
// capped instead (FORMAT.md §3a), so that a small bitstream cannot demand gigabytes: 2^16 tokens is
// dozens of CacheGen-sized chunks (1.5 K tokens) and longer than most contexts.
inline constexpr int64_t kMaxTransformChunkTokens = int64_t(1) << 16;

// The kept components of a row at one step: their classes (a prefix of the components) and the
// rANS tables in component order, and the tokens of each of its rANS groups. The encoder builds the
// same plan.
struct TransformRowPlan {
  double step = 0;
  std::vector<int> classes;   // kept components only
  std::vector<uint16_t> cdf;  // [kept][kTransformAlphabet + 1]
  int sub_tokens = 0;         // coded tokens per rANS group: a power of two, 1 .. kMaxTransformChunkTokens

  // sub: the sub_tokens, or 0 for the default for the row's kept components (transform_default_sub_tokens).
  TransformRowPlan(const TransformCalibration& cal, int row, double d, int sub);
  int kept() const { return static_cast<int>(classes.size()); }
};

// A row's default sub-chunk: the smallest power of two of tokens giving each of its groups' states
// at least kRansSymbolsPerState symbols (rans_sub_tokens): 16 tokens for a Mistral-7B row at full
// rank (C = 1,024), more as the row keeps fewer components, one group for a row that keeps nothing.
int transform_default_sub_tokens(int kept);

// The chunk's rANS groups in bitstream order: row after row, each row's coded tokens in sub-chunks of
// its plan's sub_tokens (the last one shorter); a row that keeps nothing has none. A version-2
// bitstream has one group per row instead, whatever the row keeps (`one_per_row`).
struct TransformGroups {
  std::vector<int> row;                // [groups]
  std::vector<uint64_t> symbol_start;  // [groups + 1]: group g codes the chunk's symbols [start[g], start[g + 1])

  size_t size() const { return row.size(); }
  uint32_t symbols(size_t g) const { return static_cast<uint32_t>(symbol_start[g + 1] - symbol_start[g]); }
};
TransformGroups transform_groups(const std::vector<TransformRowPlan>& plans, int64_t coded_tokens, bool one_per_row);

// Tokens of a chunk starting at t0 that go as fp16 (positions below the calibration's sink_tokens).
int transform_sinks_in_chunk(const TransformCalibration& cal, int64_t t0, int64_t tokens);

// Throws std::invalid_argument, saying `what` ("the chunk", "the bitstream") and the shapes, for more
// than kMaxTransformChunkTokens tokens or a shape other than the calibration's.
void check_transform_shape(const TransformCalibration& cal, const KvShape& shape, const std::string& what);

struct TransformPayload {
  const TransformCalibration* cal = nullptr;  // from the DecodeContext, which outlives the payload
  KvShape shape;
  int64_t t0 = 0;
  double d = 0;
  int sinks = 0;  // S
  std::vector<TransformRowPlan> rows;  // 2L
  TransformGroups groups;
  std::span<const uint8_t> sink;       // fp16 [2L][S][C]
  std::span<const uint8_t> rans;       // RANS; group g is rans[group_offset[g], group_offset[g + 1])
  std::vector<uint64_t> group_offset;  // groups + 1, ends at rans.size(); a row that keeps nothing has no bytes
  std::span<const uint8_t> low_bits;   // LOWB
  std::span<const uint8_t> escapes;    // ESCP, int32 each

  int64_t coded_tokens() const { return shape.tokens - sinks; }
  uint64_t escape_count() const { return escapes.size() / 4; }
  // Symbols of row r: coded tokens x kept components, in (token, component) order.
  uint64_t row_symbols(int r) const { return uint64_t(coded_tokens()) * uint64_t(rows[size_t(r)].kept()); }
  // Throws BitstreamError unless the stage-2 totals use up LOWB (every byte, and the unused bits of
  // the last one zero, as the writer leaves them) and ESCP exactly.
  void check_totals(uint64_t low_bits_used, uint64_t escapes_used) const;
};

// Throws BitstreamError naming the section: a calibration missing from the context (its id), a
// shape, distortion, sink count or sub-chunk that disagrees with the calibration or the format,
// section sizes that do not add up, a group for a row that keeps nothing.
TransformPayload parse_transform_payload(const ParsedBitstream& parsed, const DecodeContext& context);

// The writing side, shared by the CPU and GPU encoders.
struct TransformSections {
  std::vector<uint8_t> sink;          // SINK: fp16 [2L][S][C]
  std::vector<uint32_t> group_bytes;  // GRPS: per group (TransformGroups)
  std::vector<uint8_t> rans, low_bits, escapes;
};

// Throws std::invalid_argument naming layer, K or V, position and channel for a value fp16 cannot
// hold (NaN, infinity, beyond 65504), as the other codecs refuse them.
void check_transform_token_finite(const float* token, int channels, int row, int layers, int64_t position);
// SINK: the chunk's first `sinks` tokens of every row as fp16 (checked finite).
std::vector<uint8_t> transform_sink_bytes(const KvChunkView& chunk, int sinks);
// TPRM from the calibration's id, d, S and the plans' sub-chunks, then the sections in FORMAT.md
// §3a's order. Throws
// std::invalid_argument when an escape holds a q beyond kTransformMaxQ (transform_quantize's mark of
// a coefficient the format cannot hold), for the CPU and the GPU encoder alike.
std::vector<uint8_t> write_transform_bitstream(const BitstreamHeader& header, const TransformCalibration& cal, double d,
                                               int sinks, const std::vector<TransformRowPlan>& plans,
                                               TransformSections sections);

}  // namespace kvstream::codec
