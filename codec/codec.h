// The Codec interface and the registry that names every codec (ARCHITECTURE.md §4 codec/).
// A codec encodes one chunk at one level of its ladder into a bitstream (bitstream.h); decoding needs
// nothing but the bitstream (and, for CacheGen's offline-CDF option, the referenced table).
//
// Codecs are chosen by a spec string "name[:key=value,...]", e.g. "cachegen", "cachegen:delta=10",
// "quant:bits=4", "kivi:bits=2", "zstd:level=3". `kvstream codec-bench --help` lists them.
#pragma once
#include <functional>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "codec/bitstream.h"
#include "codec/kv_cache.h"

namespace kvstream::codec {

class OfflineCdfTable;

struct CodecSpec {
  std::string name;
  std::map<std::string, std::string> options;

  // Parses "name[:key=value,...]"; throws std::invalid_argument with the offending part.
  static CodecSpec parse(const std::string& text);
  std::string to_string() const;  // canonical: options sorted by key
  // Typed option access; throws std::invalid_argument naming the option and the expected range.
  int int_option(const std::string& key, int fallback, int lo, int hi) const;
  std::string string_option(const std::string& key, const std::string& fallback) const;
  // Throws if any option is not in `known`.
  void check_known(const std::vector<std::string>& known) const;
};

// What a decoder may need beyond the bitstream itself.
struct DecodeContext {
  std::vector<std::shared_ptr<const OfflineCdfTable>> cdf_tables;
};

struct DecodedChunk {
  BitstreamHeader header;
  KvCache kv;  // fp32 values of the decoded chunk, shape == header.shape
};

class Codec {
 public:
  virtual ~Codec() = default;
  virtual std::string spec() const = 0;              // canonical spec string
  virtual std::vector<int> levels() const = 0;       // ladder levels, lowest quality first; {1} if single-level
  // Encodes one chunk. `source_dtype` is recorded so a decoder can write the KV back in its dtype.
  virtual std::vector<uint8_t> encode(const KvChunkView& chunk, int level, int64_t t0,
                                      SourceDtype source_dtype = SourceDtype::kFp16) const = 0;
};

struct CodecEntry {
  std::string name;
  CodecId id;
  std::string summary;  // one line for --help
  std::function<std::unique_ptr<Codec>(const CodecSpec&)> make;
  std::function<KvCache(const ParsedBitstream&, const DecodeContext&)> decode;
};

const std::vector<CodecEntry>& codec_registry();
std::unique_ptr<Codec> make_codec(const std::string& spec);

// Parses and validates the container, then dispatches on the codec id.
DecodedChunk decode_bitstream(std::span<const uint8_t> bytes, const DecodeContext& context = {});

// Per-codec entry points (one file each), collected by codec_registry().
CodecEntry fp16_codec_entry();
CodecEntry quant_codec_entry();
CodecEntry kivi_codec_entry();
CodecEntry zstd_codec_entry();
CodecEntry cachegen_codec_entry();

}  // namespace kvstream::codec
