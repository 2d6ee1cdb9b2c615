// The CacheGen codec (docs/CACHEGEN.md §4–§5), faithful to the artifact by default:
//   quantize (per-token absmax, per-layer bins from the ladder level) -> per-(row, channel) 16-bit
//   CDF over the chunk -> the 32-bit arithmetic coder, one stream per (row, channel) per sub-chunk of
//   <= 256 tokens.
// Spec options ("cachegen:key=value,..."):
//   ladder=NAME|PATH   level ladder (default generic; see codec/ladders/)
//   delta[=G]          anchor/delta token groups of G tokens (G = 10 when given without a value)
//   cdf=chunk|offline  per-chunk CDF shipped in the bitstream (default), or an offline table
//   table=PATH         the offline table (.kvcdf, `kvstream cdf-build`) used with cdf=offline
//   sub=N              tokens per sub-chunk, 1..256 (default 256; with rANS, fewer for wide rows, see
//                      default_rans_sub_tokens in cachegen_codec.cpp)
// Streams never exceed 256 bytes: a stream whose arithmetic code would not be shorter than its raw
// symbols is stored raw (one byte per symbol), so a fixed 256-byte decode buffer always suffices.
#pragma once
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "codec/cachegen/cachegen_quantizer.h"
#include "codec/codec.h"
#include "codec/ladder.h"

namespace kvstream::codec {

class OfflineCdfTable;

inline constexpr int kMaxSubChunkTokens = 256;
inline constexpr uint8_t kRawStreamCode = 255;  // LENS code of a stream stored as raw symbols

// What the entropy coder spends, next to its ideal: the bench reports both.
struct CacheGenSizeReport {
  uint64_t total_bytes = 0;
  uint64_t ideal_bytes = 0;    // same container and side info, payload at exactly -log2 p(s) bits
  uint64_t payload_bytes = 0;  // DATA section
  uint64_t side_bytes = 0;     // everything else (header, PARM, SCAL, CDF, LENS, CRC)
  uint64_t raw_streams = 0;    // streams stored raw (arithmetic code did not pay off)
};

// Encodes like the codec and reports the sizes above (used by codec-bench and the size tests).
CacheGenSizeReport cachegen_size_report(const std::string& spec, const KvChunkView& chunk, int level);

// The options of a cachegen spec, checked (the list at the top of this file).
struct CacheGenOptions {
  Ladder ladder = Ladder::from_name_or_path("generic");
  TokenMode mode;                    // delta[=G]
  int sub_tokens = 0;                // sub=N; 0: the default for the coder and the chunk's channels
  bool rans = false;                 // entropy=rans (else ac: the arithmetic coder)
  int rans_states = 0;               // states=N; 0: the default for the chunk's channels
  bool offline_cdf = false;          // cdf=offline
  std::string table_path;            // table=PATH, or "" (cdf=offline then needs a table given in memory)
};
// Throws std::invalid_argument naming the spec and the bad option.
CacheGenOptions cachegen_options(const common::Spec& spec);
// For "cachegen:cdf=offline" without table=PATH, whose tables a caller builds itself (codec-bench
// builds them leave-one-out): the options the tables are for (ladder, token mode); std::nullopt for
// every other spec. Throws like cachegen_options.
std::optional<CacheGenOptions> offline_tables_to_build(const std::string& spec);

}  // namespace kvstream::codec

namespace kvstream::codec {
// A cachegen codec whose cdf=offline table is given in memory instead of by table=PATH.
std::unique_ptr<Codec> make_cachegen_codec(const std::string& spec, std::shared_ptr<const OfflineCdfTable> table);
}  // namespace kvstream::codec
