#include <iostream>

#include "cli/command.h"
#include "codec/codec.h"
#include "codec/kvs_file.h"
#include "codec/safetensors.h"

namespace kvstream::cli {

Command encode_command() {
  return {"encode", "encode a KV dump (safetensors) into a .kvs file of chunk bitstreams", [](const std::vector<std::string>& args) {
            std::string kv_path, codec_spec, out_path;
            int level = 0;
            int64_t chunk_tokens = 0;
            size_t context = 0;
            po::options_description options("options");
            options.add_options()
              ("kv", po::value(&kv_path)->required(), "input KV dump: tensor kv [L,2,T,C] or [N,L,2,T,C]")
              ("codec", po::value(&codec_spec)->default_value("cachegen"), "codec spec (see the list above)")
              ("level", po::value(&level)->default_value(0), "ladder level; 0 = the codec's highest")
              ("chunk-tokens", po::value(&chunk_tokens)->default_value(0), "tokens per chunk; 0 = the whole context")
              ("context", po::value(&context)->default_value(0), "which context of an [N,...] dump")
              ("out", po::value(&out_path)->required(), "output .kvs file (written atomically)");
            po::variables_map vm;
            if (!parse_or_help(args,
                               "usage: kvstream encode --kv IN.safetensors --codec SPEC [--level N] [--chunk-tokens N] --out OUT.kvs\n\n" +
                                   codec_list_help(),
                               options, vm))
              return 0;
            const auto kv = codec::load_kv(input_path(kv_path));
            if (context >= kv.contexts.size())
              throw std::invalid_argument("--context " + std::to_string(context) + ": the file holds " +
                                          std::to_string(kv.contexts.size()) + " context(s)");
            const auto codec = codec::make_codec(codec_spec);
            if (level == 0) level = codec->levels().back();
            const auto& cache = kv.contexts[context];
            std::vector<std::vector<uint8_t>> bitstreams;
            uint64_t bytes = 0;
            for (const auto& [t0, t1] : codec::chunk_ranges(cache.shape().tokens, chunk_tokens > 0 ? chunk_tokens : cache.shape().tokens)) {
              bitstreams.push_back(codec->encode(cache.chunk(t0, t1), level, t0, kv.dtype));
              bytes += bitstreams.back().size();
            }
            codec::write_kvs(out_path, bitstreams);
            std::cout << out_path << ": " << bitstreams.size() << " chunk(s), " << bytes << " bytes, "
                      << double(cache.shape().fp16_bytes()) / double(bytes) << "x smaller than fp16 (" << codec->spec()
                      << ", level " << level << ")\n";
            return 0;
          }};
}

}  // namespace kvstream::cli
