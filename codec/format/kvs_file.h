// .kvs files (codec/FORMAT.md §4): a 44-byte file header that says how many chunks and tokens the
// file holds and how long it is (CRC32C-guarded), then the bitstreams of a context's chunks, back
// to back, in token order (each self-delimiting: its header carries its total length). The file
// header is what makes a cut, a missing, duplicated or reordered chunk an error instead of a
// shorter KV.
#pragma once
#include <cstdint>
#include <filesystem>
#include <vector>

#include "codec/codec.h"

namespace kvstream::codec {

inline constexpr uint16_t kKvsFileVersion = 2;  // 1: bitstreams without a file header (refused)
inline constexpr size_t kKvsHeaderBytes = 44;

// Atomic: written to a temporary PATH.tmp.<host>.<pid>.<n>, then renamed, so a failure never leaves a half-written file. Throws
// std::invalid_argument for no bitstreams, one that does not parse, or chunks that do not follow
// each other in token order with equal L/H/D (a file must be decodable).
void write_kvs(const std::filesystem::path& path, const std::vector<std::vector<uint8_t>>& bitstreams);

struct DecodedContext {
  KvCache kv;  // chunks concatenated on tokens
  SourceDtype dtype = SourceDtype::kFp16;
  int64_t t0 = 0;     // first token of the first chunk
  size_t chunks = 0;
};

// Checks the file header, then decodes every chunk; they must be exactly the header's chunks and
// tokens, contiguous ([t0, t1) follows the previous t1), with equal L/H/D. Errors name the file and
// the header field or the chunk index and byte offset (BitstreamError messages keep their section).
DecodedContext decode_kvs(const std::filesystem::path& path, const DecodeContext& context = {});

}  // namespace kvstream::codec
