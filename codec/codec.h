// The Codec interface and the registry that names every codec (docs/ARCHITECTURE.md §4 codec/).
// A codec encodes one chunk at one level of its ladder into a bitstream (bitstream.h); decoding needs
// nothing but the bitstream (and, for CacheGen's offline-CDF option, the referenced table).
//
// Codecs are chosen by a spec "name[:key=value,...]" (common/spec.h), e.g. "cachegen", "cachegen:delta=10",
// "quant:bits=4", "kivi:bits=2", "zstd:level=3". `kvstream codec-bench --help` lists them.
#pragma once
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "codec/format/bitstream.h"
#include "codec/kv_cache.h"
#include "common/spec.h"

namespace kvstream::codec {

class OfflineCdfTable;
class TransformCalibration;

// What a decoder may need beyond the bitstream itself.
struct DecodeContext {
  std::vector<std::shared_ptr<const OfflineCdfTable>> cdf_tables;
  // Strict decoding (the default): the decoded values are checked (codec/decoded_values.h). Off
  // only to look at a corrupt chunk's values (`kvstream decode --no-strict`).
  bool strict = true;
  // The calibrations transform bitstreams reference (transform_calibration.h), matched by id.
  std::vector<std::shared_ptr<const TransformCalibration>> transform_calibrations = {};
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
  // Whether the levels form a quality ladder (CacheGen's levels, even a ladder of one level) rather
  // than the one setting of a single-level codec. Context profiles name a ladder's levels
  // "<spec>:<level>" and a single-level codec's level "<spec>" (sim/level_name.h).
  virtual bool ladder() const { return false; }
  // What a decoder of this codec's bitstreams needs besides them (the offline CDF table of
  // cachegen:cdf=offline,table=PATH); nothing for most codecs.
  virtual DecodeContext decode_context() const { return {}; }
  // What decides this codec's bitstreams beyond its spec string: the contents of the files the spec
  // names (a ladder, an offline CDF table, a transform calibration), as a short text of their ids;
  // "" when the spec says it all. Caches keyed by the spec (the experiment profile cache) include
  // it, so a file edited under the same name is measured again rather than served stale.
  virtual std::string content_id() const { return ""; }
  // The entropy coder, for reports ("ac" or "rans" for CacheGen); "" for codecs without one.
  virtual std::string entropy_coder() const { return ""; }
  // The model this codec was fitted to (a transform calibration's, as `kvstream calibrate --model`
  // named it); "" for a codec that fits any model. check_codec_model holds it against a run's model.
  virtual std::string fitted_model() const { return ""; }
  // Encodes one chunk. `source_dtype` is recorded so a decoder can write the KV back in its dtype.
  virtual std::vector<uint8_t> encode(const KvChunkView& chunk, int level, int64_t t0,
                                      SourceDtype source_dtype = SourceDtype::kFp16) const = 0;
};

// A codec with one setting, its only level 1 (the baselines): it encodes a chunk with encode_chunk;
// asking for another level is an error naming the codec.
class SingleLevelCodec : public Codec {
 public:
  explicit SingleLevelCodec(std::string spec) : spec_(std::move(spec)) {}
  std::string spec() const final { return spec_; }
  std::vector<int> levels() const final { return {1}; }
  std::vector<uint8_t> encode(const KvChunkView& chunk, int level, int64_t t0, SourceDtype source_dtype) const final;

 protected:
  virtual std::vector<uint8_t> encode_chunk(const KvChunkView& chunk, int64_t t0, SourceDtype source_dtype) const = 0;

 private:
  std::string spec_;  // canonical
};

// The option that sets a single-level codec's rate (quant's and KIVI's bits), and the values a
// rate–distortion sweep measures when a spec leaves it out (codec/rate_sweep.h).
struct RateKnob {
  std::string key;
  std::vector<std::string> values;  // fewest bytes first
};

struct CodecEntry {
  std::string name;
  CodecId id;
  std::string summary;  // one line for --help
  std::function<std::unique_ptr<Codec>(const common::Spec&)> make;
  std::function<KvCache(const ParsedBitstream&, const DecodeContext&)> decode;
  std::optional<RateKnob> rate_knob = std::nullopt;  // none: a ladder's levels, or lossless
};

const std::vector<CodecEntry>& codec_registry();
// The codec of `spec`; throws std::invalid_argument for an unknown name or a bad option.
std::unique_ptr<Codec> make_codec(const std::string& spec);
common::Spec parse_codec_spec(const std::string& spec);  // syntax only, for messages naming a codec

// `transform` specs and their calibration (transform_codec.cpp). A transform spec without cal= is
// one a caller fits a calibration for (`kvstream rd --calibration-text`, experiment configs) and then
// runs as with_calibration(spec, fitted); make_codec refuses it.
bool transform_needs_calibration(const std::string& spec);
std::string with_calibration(const std::string& spec, const std::string& kvcal_path);
// The level distortions a transform spec sets itself (d=D, or ladder=PATH of a transform ladder),
// after checking its options; empty when it leaves them to its calibration. Throws
// std::invalid_argument naming the option, so a spec is checked before its calibration exists.
std::vector<double> transform_spec_distortions(const common::Spec& spec);

// Throws std::invalid_argument when `codec` was fitted to another model than `model` (the name or path
// a run loads it by): a calibration applied to another model's KV decodes with errors no shape check
// sees. Names compare by their last path component, so "m.gguf", "./m.gguf" and "/data/m.gguf" are
// one model.
void check_codec_model(const Codec& codec, const std::string& model);

// Parses and validates the container, then dispatches on the codec id.
DecodedChunk decode_bitstream(std::span<const uint8_t> bytes, const DecodeContext& context = {});

// Per-codec entry points (one file each), collected by codec_registry().
CodecEntry fp16_codec_entry();
CodecEntry quant_codec_entry();
CodecEntry kivi_codec_entry();
CodecEntry zstd_codec_entry();
CodecEntry cachegen_codec_entry();
CodecEntry transform_codec_entry();

}  // namespace kvstream::codec
