#include "codec/codec.h"

#include <filesystem>
#include <stdexcept>

#include "codec/decoded_values.h"
#include "codec/format/bitstream_error.h"

namespace kvstream::codec {

common::Spec parse_codec_spec(const std::string& spec) { return common::Spec::parse(spec, "codec"); }

std::vector<uint8_t> SingleLevelCodec::encode(const KvChunkView& chunk, int level, int64_t t0,
                                              SourceDtype source_dtype) const {
  if (level != 1)
    throw std::invalid_argument("codec " + spec() + " has a single level (1), asked for level " + std::to_string(level));
  return encode_chunk(chunk, t0, source_dtype);
}

const std::vector<CodecEntry>& codec_registry() {
  static const std::vector<CodecEntry> registry = {fp16_codec_entry(), quant_codec_entry(), kivi_codec_entry(),
                                                   zstd_codec_entry(), cachegen_codec_entry(),
                                                   transform_codec_entry()};
  return registry;
}

std::unique_ptr<Codec> make_codec(const std::string& text) {
  const common::Spec spec = parse_codec_spec(text);
  for (const auto& entry : codec_registry())
    if (entry.name == spec.name()) return entry.make(spec);
  std::string names;
  for (const auto& entry : codec_registry()) names += (names.empty() ? "" : ", ") + entry.name;
  throw std::invalid_argument("unknown codec \"" + spec.name() + "\" (known: " + names + ")");
}

void check_codec_model(const Codec& codec, const std::string& model) {
  const auto last_component = [](std::string name) {
    while (name.size() > 1 && name.back() == '/') name.pop_back();
    return std::filesystem::path(name).filename().string();
  };
  const std::string fitted = codec.fitted_model();
  if (fitted.empty() || last_component(fitted) == last_component(model)) return;
  throw std::invalid_argument("codec " + codec.spec() + " was fitted to model \"" + fitted + "\", not to \"" + model +
                              "\", whose KV this run encodes: fit it to that model (kvstream calibrate --model " + model +
                              ")");
}

DecodedChunk decode_bitstream(std::span<const uint8_t> bytes, const DecodeContext& context) {
  const ParsedBitstream parsed = parse_bitstream(bytes);
  for (const auto& entry : codec_registry())
    if (entry.id == parsed.header.codec) {
      DecodedChunk out{parsed.header, entry.decode(parsed, context)};
      if (context.strict) check_decoded_values(out.kv, parsed.header.source_dtype);
      return out;
    }
  throw BitstreamError(BitstreamErrorKind::kUnknownCodec, "header",
                       "codec id " + std::to_string(static_cast<int>(parsed.header.codec)));
}

}  // namespace kvstream::codec
