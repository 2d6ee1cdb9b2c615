// Baseline "zstd": the fp16 payload of fp16_payload.h ([L][2][T][C], little-endian) compressed as one
// zstd frame in section "ZSTD". Lossless with respect to fp16. The decoder reads the frame's declared
// content size and requires it to equal the header's fp16 size before allocating anything.
#include <zstd.h>

#include <stdexcept>

#include "codec/baselines/fp16_payload.h"
#include "codec/codec.h"

namespace kvstream::codec {
namespace {

class ZstdCodec final : public SingleLevelCodec {
 public:
  explicit ZstdCodec(int level) : SingleLevelCodec("zstd:level=" + std::to_string(level)), level_(level) {}

 protected:
  std::vector<uint8_t> encode_chunk(const KvChunkView& chunk, int64_t t0, SourceDtype source_dtype) const override {
    const std::vector<uint8_t> payload = pack_fp16(chunk);
    std::vector<uint8_t> frame(ZSTD_compressBound(payload.size()));
    // ZSTD_compress writes the content size into the frame header, which decode relies on.
    const size_t n = ZSTD_compress(frame.data(), frame.size(), payload.data(), payload.size(), level_);
    if (ZSTD_isError(n)) throw std::runtime_error(std::string("zstd compression failed: ") + ZSTD_getErrorName(n));
    frame.resize(n);
    BitstreamHeader header{CodecId::kZstd, chunk.shape(), t0, source_dtype};
    return write_bitstream(header, {Section{section_tag("ZSTD"), std::move(frame)}});
  }

 private:
  int level_;
};

KvCache decode(const ParsedBitstream& parsed, const DecodeContext&) {
  const auto corrupt = [](const std::string& detail) {
    return BitstreamError(BitstreamErrorKind::kCorruptPayload, "ZSTD", detail);
  };
  const KvShape& shape = parsed.header.shape;
  const auto frame = parsed.section("ZSTD");
  const unsigned long long content = ZSTD_getFrameContentSize(frame.data(), frame.size());
  if (content == ZSTD_CONTENTSIZE_ERROR) throw corrupt("not a zstd frame");
  if (content == ZSTD_CONTENTSIZE_UNKNOWN) throw corrupt("the frame does not declare its content size");
  const uint64_t expected = uint64_t(shape.fp16_bytes());
  if (content != expected)
    throw corrupt("frame holds " + std::to_string(content) + " bytes, the header implies " + std::to_string(expected));
  // Exactly one frame fills the section (ZSTD_decompress would also accept concatenated frames).
  const size_t frame_bytes = ZSTD_findFrameCompressedSize(frame.data(), frame.size());
  if (ZSTD_isError(frame_bytes) || frame_bytes != frame.size())
    throw corrupt("the section is not exactly one zstd frame");

  std::vector<uint8_t> payload(static_cast<size_t>(expected));
  const size_t n = ZSTD_decompress(payload.data(), payload.size(), frame.data(), frame.size());
  if (ZSTD_isError(n)) throw corrupt(std::string("zstd: ") + ZSTD_getErrorName(n));
  if (n != payload.size()) throw corrupt("frame decompressed to " + std::to_string(n) + " bytes");
  return unpack_fp16(payload, shape, "ZSTD");
}

}  // namespace

CodecEntry zstd_codec_entry() {
  return {"zstd", CodecId::kZstd, "zstd over the fp16 values (lossless for fp16 KV), level=1..19",
          [](const common::Spec& spec) {
            spec.only({"level"});
            return std::unique_ptr<Codec>(new ZstdCodec(spec.integer("level", 3, 1, 19)));
          },
          decode};
}

}  // namespace kvstream::codec
