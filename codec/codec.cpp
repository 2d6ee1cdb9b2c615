#include "codec/codec.h"

#include <algorithm>
#include <sstream>
#include <stdexcept>

#include "codec/bitstream_error.h"

namespace kvstream::codec {

CodecSpec CodecSpec::parse(const std::string& text) {
  CodecSpec spec;
  const auto colon = text.find(':');
  spec.name = text.substr(0, colon);
  if (spec.name.empty()) throw std::invalid_argument("codec spec \"" + text + "\": missing codec name");
  if (colon == std::string::npos) return spec;
  std::stringstream options(text.substr(colon + 1));
  std::string item;
  while (std::getline(options, item, ',')) {
    if (item.empty()) throw std::invalid_argument("codec spec \"" + text + "\": empty option");
    const auto eq = item.find('=');
    const std::string key = item.substr(0, eq);
    if (key.empty()) throw std::invalid_argument("codec spec \"" + text + "\": option without a name");
    if (spec.options.count(key)) throw std::invalid_argument("codec spec \"" + text + "\": option " + key + " twice");
    spec.options[key] = eq == std::string::npos ? "" : item.substr(eq + 1);
  }
  return spec;
}

std::string CodecSpec::to_string() const {
  std::string out = name;
  char sep = ':';
  for (const auto& [k, v] : options) {
    out += sep + k + (v.empty() ? "" : "=" + v);
    sep = ',';
  }
  return out;
}

int CodecSpec::int_option(const std::string& key, int fallback, int lo, int hi) const {
  const auto it = options.find(key);
  if (it == options.end()) return fallback;
  const std::string range = "expected an integer in [" + std::to_string(lo) + ", " + std::to_string(hi) + "]";
  size_t used = 0;
  int value = 0;
  try {
    value = std::stoi(it->second, &used);
  } catch (const std::exception&) {
    throw std::invalid_argument("codec " + name + ": option " + key + "=\"" + it->second + "\": " + range);
  }
  if (used != it->second.size() || value < lo || value > hi)
    throw std::invalid_argument("codec " + name + ": option " + key + "=\"" + it->second + "\": " + range);
  return value;
}

std::string CodecSpec::string_option(const std::string& key, const std::string& fallback) const {
  const auto it = options.find(key);
  return it == options.end() ? fallback : it->second;
}

void CodecSpec::check_known(const std::vector<std::string>& known) const {
  for (const auto& [k, v] : options) {
    if (std::find(known.begin(), known.end(), k) != known.end()) continue;
    std::string list;
    for (const auto& option : known) list += (list.empty() ? "" : ", ") + option;
    throw std::invalid_argument("codec " + name + ": unknown option \"" + k + "\" (known: " +
                                (list.empty() ? "none" : list) + ")");
  }
}

const std::vector<CodecEntry>& codec_registry() {
  static const std::vector<CodecEntry> registry = {fp16_codec_entry(), quant_codec_entry(), kivi_codec_entry(),
                                                   zstd_codec_entry(), cachegen_codec_entry()};
  return registry;
}

std::unique_ptr<Codec> make_codec(const std::string& text) {
  const CodecSpec spec = CodecSpec::parse(text);
  for (const auto& entry : codec_registry())
    if (entry.name == spec.name) return entry.make(spec);
  std::string names;
  for (const auto& entry : codec_registry()) names += (names.empty() ? "" : ", ") + entry.name;
  throw std::invalid_argument("unknown codec \"" + spec.name + "\" (known: " + names + ")");
}

DecodedChunk decode_bitstream(std::span<const uint8_t> bytes, const DecodeContext& context) {
  const ParsedBitstream parsed = parse_bitstream(bytes);
  for (const auto& entry : codec_registry())
    if (entry.id == parsed.header.codec) {
      DecodedChunk out{parsed.header, entry.decode(parsed, context)};
      return out;
    }
  throw BitstreamError(BitstreamErrorKind::kUnknownCodec, "header",
                       "codec id " + std::to_string(static_cast<int>(parsed.header.codec)));
}

}  // namespace kvstream::codec
