#include <iostream>
#include <memory>
#include <optional>

#include "cli/command.h"
#include "codec/kvs_file.h"
#include "codec/offline_cdf.h"
#include "codec/safetensors.h"

namespace kvstream::cli {

Command decode_command() {
  return {"decode", "decode a .kvs file back to a KV dump (safetensors)", [](const std::vector<std::string>& args) {
            std::string in_path, out_path, dtype;
            std::vector<std::string> tables;
            po::options_description options("options");
            options.add_options()
              ("in", po::value(&in_path)->required(), "input .kvs file (also the first positional argument)")
              ("out", po::value(&out_path)->required(), "output safetensors file (written atomically)")
              ("dtype", po::value(&dtype)->default_value("source"), "output dtype: source (as encoded), f16, bf16 or f32")
              ("cdf-table", po::value(&tables)->composing(), "offline CDF table(s) the bitstreams reference (.kvcdf)");
            po::positional_options_description positional;
            positional.add("in", 1);
            po::variables_map vm;
            if (!parse_or_help(args, "usage: kvstream decode IN.kvs --out OUT.safetensors [--cdf-table T.kvcdf]", options, vm,
                               &positional))
              return 0;
            std::optional<codec::SourceDtype> out_dtype;  // empty = as encoded
            if (dtype == "f16") out_dtype = codec::SourceDtype::kFp16;
            else if (dtype == "bf16") out_dtype = codec::SourceDtype::kBf16;
            else if (dtype == "f32") out_dtype = codec::SourceDtype::kFp32;
            else if (dtype != "source") throw po::error("--dtype must be source, f16, bf16 or f32, got \"" + dtype + "\"");
            codec::DecodeContext context;
            for (const auto& t : tables)
              context.cdf_tables.push_back(std::make_shared<codec::OfflineCdfTable>(codec::OfflineCdfTable::load(input_path(t))));
            const auto decoded = codec::decode_kvs(input_path(in_path), context);
            if (!out_dtype) out_dtype = decoded.dtype;
            codec::save_kv(out_path, decoded.kv, *out_dtype, {{"decoded_from", in_path}, {"t0", std::to_string(decoded.t0)}});
            std::cout << out_path << ": " << decoded.kv.shape().to_string() << " from " << decoded.chunks << " chunk(s), "
                      << codec::dtype_name(*out_dtype) << "\n";
            return 0;
          }};
}

}  // namespace kvstream::cli
