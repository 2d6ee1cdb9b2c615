// A CacheGen bitstream's parameters (PARM) and its parsed, checked payload (codec/FORMAT.md §2): what
// every decoder of the format needs, the CPU one in cachegen_codec.cpp and the GPU one in
// gpu_decode.cu. Parsing checks every section against the shape and the level spec, so decoders
// index the arrays below without further checks.
#pragma once
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "codec/cachegen/cachegen_codec.h"
#include "codec/cachegen/cachegen_quantizer.h"
#include "codec/codec.h"
#include "codec/format/bitstream.h"
#include "codec/ladder.h"

namespace kvstream::codec {

enum class CdfSource : uint8_t { kChunk = 0, kOffline = 1 };
inline constexpr uint8_t kCoderAc = 1;    // the artifact's arithmetic coder, one stream per (sub-chunk, row, channel)
inline constexpr uint8_t kCoderRans = 2;  // interleaved rANS, one group per (sub-chunk, row) (rans_coder.h)

// PARM.
struct CacheGenParams {
  int level = 0;
  TokenMode mode;
  CdfSource cdf_source = CdfSource::kChunk;
  int alphabet = 0;  // M
  int sub_tokens = kMaxSubChunkTokens;
  LevelSpec spec;
  uint64_t table_id = 0;
  uint8_t coder = kCoderAc;
  int rans_states = 0;  // with kCoderRans: a power of two in [1, kRansMaxStates]

  std::vector<uint8_t> serialize() const;
  static CacheGenParams parse(const ParsedBitstream& parsed);  // throws BitstreamError
};

inline int64_t sub_chunk_count(int64_t tokens, int sub_tokens) { return (tokens + sub_tokens - 1) / sub_tokens; }

// The coded units of a chunk: AC streams in (sub-chunk, row, channel) order, or rANS groups in
// (sub-chunk, row) order; unit u occupies data[offset[u], offset[u + 1]).
struct CacheGenPayload {
  KvShape shape;
  CacheGenParams params;
  std::vector<uint16_t> cdf;      // [2L·C][M + 1] rows, strictly increasing from 0 to 65535
  std::vector<uint16_t> scales;   // fp16 bits, [2L][T], finite and >= 0
  std::span<const uint8_t> data;  // DATA (a view into the bitstream)
  std::vector<uint64_t> offset;   // per unit, plus the end (= DATA size)
  std::vector<uint8_t> ac_codes;  // AC: the LENS code of each stream (kRawStreamCode: raw symbols)

  int rows() const { return shape.rows(); }
  int64_t sub_chunks() const { return sub_chunk_count(shape.tokens, params.sub_tokens); }
  // Tokens of sub-chunk j.
  uint32_t sub_chunk_tokens(int64_t j) const {
    return static_cast<uint32_t>(std::min<int64_t>(params.sub_tokens, shape.tokens - j * params.sub_tokens));
  }
};

// Throws BitstreamError naming the section for anything the format does not allow (sizes, tables,
// scales, unit lengths that do not add up to DATA or exceed what a unit can take).
CacheGenPayload parse_cachegen_payload(const ParsedBitstream& parsed, const DecodeContext& context);

// What each of the 2L rows' bins cost: its DATA bytes, summed over sub-chunks (and, for AC,
// channels), plus its CDF_ entries (C·2Q·2 bytes, with per-chunk tables). SCAL and LENS cost the
// same whatever the bins.
std::vector<uint64_t> row_coded_bytes(const CacheGenPayload& payload);

// The writing side, shared by the CPU and GPU encoders.
// What an encoder needs besides the KV: the parameters for this shape and level, and the offline
// table's CDF rows when cdf=offline (empty: the chunk's own CDF). Defined in cachegen_codec.cpp;
// throws std::invalid_argument for a bad spec or a table that does not fit the shape.
struct CacheGenEncodePlan {
  CacheGenParams params;
  std::vector<uint16_t> offline_cdf;
};
CacheGenEncodePlan plan_cachegen_encode(const std::string& spec, const KvShape& shape, int level,
                                        std::shared_ptr<const OfflineCdfTable> table = nullptr);

// An encode job (cachegen_encode_stages.h) for `chunk` under `params`, without buffers.
CacheGenEncodeJob encode_job(const KvChunkView& chunk, const uint8_t* row_q, const CacheGenParams& params);

// Host memory for every buffer of an encode job (the CPU encoder's and the tests').
struct HostEncodeBuffers {
  std::vector<uint8_t> symbols, scratch, ac_codes;
  std::vector<uint16_t> scales, cdf;
  std::vector<uint32_t> unit_start, unit_bytes;
  // Sizes the buffers for `job` and points it at them; `cdf` keeps rows already in it (an offline table).
  void attach(CacheGenEncodeJob& job);
};

// The bitstream of one encoded chunk: PARM, SCAL, CDF_ (chunk CDFs only: interior entries), LENS
// (ac: each stream's code; rans: each group's bytes as u32) and DATA (the units in order).
std::vector<uint8_t> write_cachegen_bitstream(const BitstreamHeader& header, const CacheGenParams& params,
                                              std::span<const uint16_t> scales, std::span<const uint16_t> cdf,
                                              std::span<const uint32_t> unit_bytes, std::span<const uint8_t> ac_codes,
                                              std::vector<uint8_t> data);

// Throws BitstreamError (corrupt payload, DATA) for a symbol outside its row's [0, 2Q]; `symbols` is
// [2L][T][C] as decoded.
void check_symbols(const CacheGenPayload& payload, const std::vector<uint8_t>& symbols);

}  // namespace kvstream::codec
