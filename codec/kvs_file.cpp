#include "codec/kvs_file.h"

#include <fstream>
#include <iterator>
#include <stdexcept>

#include "common/atomic_file.h"

namespace kvstream::codec {

void write_kvs(const std::filesystem::path& path, const std::vector<std::vector<uint8_t>>& bitstreams) {
  common::write_file_atomically(path, [&](std::ostream& out) {
    for (const auto& b : bitstreams) out.write(reinterpret_cast<const char*>(b.data()), static_cast<std::streamsize>(b.size()));
  });
}

DecodedContext decode_kvs(const std::filesystem::path& path, const DecodeContext& context) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot open " + path.string());
  const std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (bytes.empty()) throw std::runtime_error(path.string() + ": empty file, no bitstream");
  std::vector<KvCache> parts;
  DecodedContext out;
  size_t offset = 0;
  int64_t next_t0 = 0;
  while (offset < bytes.size()) {
    const std::string where = path.string() + ": chunk " + std::to_string(parts.size()) + " at byte " + std::to_string(offset);
    try {
      const std::span<const uint8_t> rest(bytes.data() + offset, bytes.size() - offset);
      const size_t length = parse_bitstream(rest).total_bytes;
      DecodedChunk chunk = decode_bitstream(rest.first(length), context);
      if (parts.empty()) {
        out.t0 = chunk.header.t0;
        out.dtype = chunk.header.source_dtype;
      } else if (chunk.header.t0 != next_t0) {
        throw std::runtime_error("starts at token " + std::to_string(chunk.header.t0) + ", expected " + std::to_string(next_t0));
      } else if (const KvShape& first = parts.front().shape(), &shape = chunk.header.shape;
                 shape.layers != first.layers || shape.kv_heads != first.kv_heads || shape.head_dim != first.head_dim) {
        throw std::runtime_error("has shape " + shape.to_string() + ", chunk 0 has " + first.to_string());
      }
      next_t0 = chunk.header.t0 + chunk.header.shape.tokens;
      parts.push_back(std::move(chunk.kv));
      offset += length;
    } catch (const std::exception& e) {
      throw std::runtime_error(where + ": " + e.what());
    }
  }
  out.chunks = parts.size();
  out.kv = parts.size() == 1 ? std::move(parts.front()) : KvCache::concat_tokens(parts);
  return out;
}

}  // namespace kvstream::codec
