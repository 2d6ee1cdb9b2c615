#include "codec/format/kvs_file.h"

#include <cstring>
#include <stdexcept>
#include <string>

#include "codec/format/bitstream.h"
#include "codec/format/byte_io.h"
#include "codec/format/crc32c.h"
#include "common/atomic_file.h"
#include "common/file_text.h"

namespace kvstream::codec {

namespace {

constexpr char kMagic[4] = {'K', 'V', 'S', 'F'};
constexpr size_t kCrcOffset = 40;  // the CRC32C of bytes [0, 40)

struct KvsHeader {
  uint32_t chunks = 0;
  uint64_t t0 = 0, tokens = 0, file_bytes = 0;
};

std::vector<uint8_t> header_bytes(const KvsHeader& h) {
  std::vector<uint8_t> out;
  ByteWriter w(out);
  w.bytes({reinterpret_cast<const uint8_t*>(kMagic), 4});
  w.put<uint16_t>(kKvsFileVersion);
  w.put<uint16_t>(0);
  w.put<uint32_t>(h.chunks);
  w.put<uint32_t>(0);
  w.put<uint64_t>(h.t0);
  w.put<uint64_t>(h.tokens);
  w.put<uint64_t>(h.file_bytes);
  w.put<uint32_t>(crc32c(out));
  return out;
}

// The header of `bytes` (the whole file); throws std::runtime_error naming the field at fault.
KvsHeader read_header(std::span<const uint8_t> bytes) {
  if (bytes.size() >= 4 && std::memcmp(bytes.data(), "KVST", 4) == 0)
    throw std::runtime_error("file header: the file starts with a bare bitstream: a .kvs of format 1, without the "
                             "header that records its chunks and tokens, so a cut or a missing chunk cannot be told; "
                             "encode it again with `kvstream encode`");
  if (bytes.size() < kKvsHeaderBytes)
    throw std::runtime_error("file header: " + std::to_string(bytes.size()) + " bytes, a .kvs header needs " +
                             std::to_string(kKvsHeaderBytes));
  if (std::memcmp(bytes.data(), kMagic, 4) != 0) throw std::runtime_error("file header: not a .kvs file (magic)");
  ByteReader r(bytes.first(kKvsHeaderBytes), "file header");
  r.take(4);
  const uint16_t version = r.get<uint16_t>();
  if (r.get<uint16_t>() != 0) throw std::runtime_error("file header: reserved bytes 6-7 are not 0");
  KvsHeader h;
  h.chunks = r.get<uint32_t>();
  if (r.get<uint32_t>() != 0) throw std::runtime_error("file header: reserved bytes 12-15 are not 0");
  h.t0 = r.get<uint64_t>();
  h.tokens = r.get<uint64_t>();
  h.file_bytes = r.get<uint64_t>();
  const uint32_t crc = r.get<uint32_t>();
  if (crc != crc32c(bytes.first(kCrcOffset))) throw std::runtime_error("file header: checksum mismatch");
  if (version != kKvsFileVersion)
    throw std::runtime_error("file header: .kvs version " + std::to_string(version) + ", this kvstream reads version " +
                             std::to_string(kKvsFileVersion));
  if (h.chunks == 0 || h.tokens == 0) throw std::runtime_error("file header: no chunks or no tokens");
  if (bytes.size() < h.file_bytes)
    throw std::runtime_error("the file is cut: " + std::to_string(bytes.size()) + " of its " +
                             std::to_string(h.file_bytes) + " bytes (" + std::to_string(h.chunks) + " chunks, " +
                             std::to_string(h.tokens) + " tokens)");
  if (bytes.size() > h.file_bytes)
    throw std::runtime_error(std::to_string(bytes.size() - h.file_bytes) + " bytes after its end at byte " +
                             std::to_string(h.file_bytes));
  return h;
}

}  // namespace

void write_kvs(const std::filesystem::path& path, const std::vector<std::vector<uint8_t>>& bitstreams) {
  if (bitstreams.empty()) throw std::invalid_argument(path.string() + ": no chunks to write");
  KvsHeader h;
  h.chunks = uint32_t(bitstreams.size());
  h.file_bytes = kKvsHeaderBytes;
  KvShape first;
  for (size_t c = 0; c < bitstreams.size(); ++c) {
    const BitstreamHeader b = parse_bitstream(bitstreams[c]).header;
    if (c == 0) {
      h.t0 = uint64_t(b.t0);
      first = b.shape;
    } else if (uint64_t(b.t0) != h.t0 + h.tokens || b.shape.layers != first.layers ||
               b.shape.kv_heads != first.kv_heads || b.shape.head_dim != first.head_dim) {
      throw std::invalid_argument(path.string() + ": chunk " + std::to_string(c) + " (" + b.shape.to_string() +
                                  " from token " + std::to_string(b.t0) + ") does not follow chunk " +
                                  std::to_string(c - 1));
    }
    h.tokens += uint64_t(b.shape.tokens);
    h.file_bytes += bitstreams[c].size();
  }
  common::write_file_atomically(path, [&](std::ostream& out) {
    const auto header = header_bytes(h);
    out.write(reinterpret_cast<const char*>(header.data()), std::streamsize(header.size()));
    for (const auto& b : bitstreams) out.write(reinterpret_cast<const char*>(b.data()), std::streamsize(b.size()));
  });
}

DecodedContext decode_kvs(const std::filesystem::path& path, const DecodeContext& context) {
  const auto text = common::read_file_if_open(path);
  if (!text) throw std::runtime_error("cannot open " + path.string());
  const std::vector<uint8_t> bytes(text->begin(), text->end());
  KvsHeader header;
  try {
    header = read_header(bytes);
  } catch (const std::exception& e) {
    throw std::runtime_error(path.string() + ": " + e.what());
  }
  std::vector<KvCache> parts;
  DecodedContext out;
  out.t0 = int64_t(header.t0);
  size_t offset = kKvsHeaderBytes;
  uint64_t next_t0 = header.t0;
  while (offset < bytes.size()) {
    const std::string where = path.string() + ": chunk " + std::to_string(parts.size()) + " at byte " + std::to_string(offset);
    try {
      if (parts.size() == header.chunks)
        throw std::runtime_error("the header says the file holds " + std::to_string(header.chunks) + " chunks");
      const std::span<const uint8_t> rest(bytes.data() + offset, bytes.size() - offset);
      const size_t length = parse_bitstream(rest).total_bytes;
      DecodedChunk chunk = decode_bitstream(rest.first(length), context);
      if (uint64_t(chunk.header.t0) != next_t0)
        throw std::runtime_error("starts at token " + std::to_string(chunk.header.t0) + ", expected " +
                                 std::to_string(next_t0) + ": a chunk is missing, duplicated or out of order");
      if (parts.empty()) {
        out.dtype = chunk.header.source_dtype;
      } else if (const KvShape& first = parts.front().shape(), &shape = chunk.header.shape;
                 shape.layers != first.layers || shape.kv_heads != first.kv_heads || shape.head_dim != first.head_dim) {
        throw std::runtime_error("has shape " + shape.to_string() + ", chunk 0 has " + first.to_string());
      }
      next_t0 = uint64_t(chunk.header.t0 + chunk.header.shape.tokens);
      parts.push_back(std::move(chunk.kv));
      offset += length;
    } catch (const std::exception& e) {
      throw std::runtime_error(where + ": " + e.what());
    }
  }
  // The byte count matched the header, so fewer chunks or tokens means a header that lies.
  if (parts.size() != header.chunks || next_t0 != header.t0 + header.tokens)
    throw std::runtime_error(path.string() + ": holds " + std::to_string(parts.size()) + " chunks and " +
                             std::to_string(next_t0 - header.t0) + " tokens, its header says " +
                             std::to_string(header.chunks) + " and " + std::to_string(header.tokens));
  out.chunks = parts.size();
  out.kv = parts.size() == 1 ? std::move(parts.front()) : KvCache::concat_tokens(parts);
  return out;
}

}  // namespace kvstream::codec
