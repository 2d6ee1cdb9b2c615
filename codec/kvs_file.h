// .kvs files: the bitstreams of a context's chunks, back to back, in token order. Each bitstream is
// self-delimiting (its header carries its total length), so no extra framing is needed.
#pragma once
#include <cstdint>
#include <filesystem>
#include <vector>

#include "codec/codec.h"

namespace kvstream::codec {

// Atomic: written to PATH.tmp, then renamed, so a failure never leaves a half-written file.
void write_kvs(const std::filesystem::path& path, const std::vector<std::vector<uint8_t>>& bitstreams);

struct DecodedContext {
  KvCache kv;  // chunks concatenated on tokens
  SourceDtype dtype = SourceDtype::kFp16;
  int64_t t0 = 0;     // first token of the first chunk
  size_t chunks = 0;
};

// Decodes every chunk; chunks must be contiguous ([t0, t1) follows the previous t1) with equal L/H/D.
// Errors name the file and the chunk index (BitstreamError messages keep their section).
DecodedContext decode_kvs(const std::filesystem::path& path, const DecodeContext& context = {});

}  // namespace kvstream::codec
