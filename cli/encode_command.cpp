// `kvstream encode`: a KV dump (safetensors) into a .kvs file of chunk bitstreams.
#include <iostream>

#include "cli/command.h"
#include "codec/codec.h"
#include "codec/format/kv_dump.h"
#include "codec/format/kvs_file.h"

namespace kvstream::cli {
namespace {

struct Options {
  std::string kv_path, codec_spec, out_path;
  int level = 0;  // 0: the codec's highest
  int64_t chunk_tokens = 0;
  size_t context = 0;
};

std::optional<Options> parse(const std::vector<std::string>& args) {
  Options o;
  po::options_description options("options");
  options.add_options()
    ("kv", po::value(&o.kv_path)->required(), "input KV dump: tensor kv [L,2,T,C] or [N,L,2,T,C]")
    ("codec", po::value(&o.codec_spec)->default_value("cachegen"), "codec spec (see the list above)")
    ("level", po::value(&o.level)->default_value(0), "ladder level; 0 = the codec's highest")
    ("chunk-tokens", po::value(&o.chunk_tokens)->default_value(0), "tokens per chunk; 0 = the whole context")
    ("context", po::value(&o.context)->default_value(0), "which context of an [N,...] dump")
    ("out", po::value(&o.out_path)->required(), "output .kvs file (written atomically)");
  po::variables_map vm;
  if (!parse_or_help(args,
                     "usage: kvstream encode --kv IN.safetensors --codec SPEC [--level N] [--chunk-tokens N] --out OUT.kvs\n\n" +
                         codec_list_help(),
                     options, vm))
    return std::nullopt;
  return o;
}

int run(const Options& o) {
  const auto kv = codec::load_kv(input_path(o.kv_path));
  if (o.context >= kv.contexts.size())
    throw std::invalid_argument("--context " + std::to_string(o.context) + ": the file holds " +
                                std::to_string(kv.contexts.size()) + " context(s)");
  const auto codec = codec::make_codec(o.codec_spec);
  if (const auto model = kv.metadata.find("model"); model != kv.metadata.end()) {  // kv-export records it
    try {
      codec::check_codec_model(*codec, model->second);
    } catch (const std::invalid_argument& e) {
      throw std::invalid_argument(o.kv_path + " holds the KV of model " + model->second + ": " + e.what());
    }
  }
  const int level = o.level == 0 ? codec->levels().back() : o.level;
  const auto& cache = kv.contexts[o.context];
  const int64_t tokens = cache.shape().tokens;
  std::vector<std::vector<uint8_t>> bitstreams;
  uint64_t bytes = 0;
  for (const auto& [t0, t1] : codec::chunk_ranges(tokens, o.chunk_tokens > 0 ? o.chunk_tokens : tokens)) {
    try {
      bitstreams.push_back(codec->encode(cache.chunk(t0, t1), level, t0, kv.dtype));
    } catch (const std::invalid_argument& e) {  // a value the codec cannot encode (NaN, inf)
      throw std::invalid_argument(o.kv_path + ": context " + std::to_string(o.context) + ", tokens [" +
                                  std::to_string(t0) + ", " + std::to_string(t1) + "): " + e.what());
    }
    bytes += bitstreams.back().size();
  }
  codec::write_kvs(o.out_path, bitstreams);
  std::cout << o.out_path << ": " << bitstreams.size() << " chunk(s), " << bytes << " bytes, "
            << double(cache.shape().fp16_bytes()) / double(bytes) << "x smaller than fp16 (" << codec->spec()
            << ", level " << level << ")\n";
  return 0;
}

}  // namespace

int encode_main(const std::vector<std::string>& args) { return parse_and_run<Options>(args, parse, run); }

}  // namespace kvstream::cli
