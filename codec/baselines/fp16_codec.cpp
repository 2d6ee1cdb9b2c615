// Baseline "fp16": the chunk's values as raw little-endian fp16, [L][2][T][C] order. Lossless for
// KV that came from fp16 (the wire dtype); the reference every ratio is measured against.
#include "codec/baselines/fp16_payload.h"
#include "codec/codec.h"

namespace kvstream::codec {
namespace {

class Fp16Codec final : public SingleLevelCodec {
 public:
  Fp16Codec() : SingleLevelCodec("fp16") {}

 protected:
  std::vector<uint8_t> encode_chunk(const KvChunkView& chunk, int64_t t0, SourceDtype source_dtype) const override {
    BitstreamHeader header{CodecId::kFp16, chunk.shape(), t0, source_dtype};
    return write_bitstream(header, {Section{section_tag("FP16"), pack_fp16(chunk)}});
  }
};

KvCache decode(const ParsedBitstream& parsed, const DecodeContext&) {
  const KvShape& shape = parsed.header.shape;
  return unpack_fp16(parsed.section_of_size("FP16", uint64_t(shape.fp16_bytes())), shape, "FP16");
}

}  // namespace

CodecEntry fp16_codec_entry() {
  return {"fp16", CodecId::kFp16, "raw fp16 values (lossless for fp16 KV; the size reference)",
          [](const common::Spec& spec) {
            spec.only({});
            return std::unique_ptr<Codec>(new Fp16Codec());
          },
          decode};
}

}  // namespace kvstream::codec
