#include <cstdio>
#include <iostream>

#include "cli/command.h"
#include "codec/offline_cdf.h"
#include "codec/safetensors.h"

namespace kvstream::cli {

Command cdf_build_command() {
  return {"cdf-build", "build an offline per-model CDF table from profiling contexts", [](const std::vector<std::string>& args) {
            std::vector<std::string> kv_paths;
            std::string ladder_name, out_path;
            int delta = 0;
            int64_t chunk_tokens = 0;
            po::options_description options("options");
            options.add_options()
              ("kv", po::value(&kv_paths)->required()->composing(), "profiling KV dump(s); every context of each is used")
              ("ladder", po::value(&ladder_name)->default_value("generic"), "ladder name or JSON path")
              ("delta", po::value(&delta)->default_value(0), "anchor/delta group size the table is for (0 = raw tokens)")
              ("chunk-tokens", po::value(&chunk_tokens)->default_value(0), "profile in chunks of this many tokens (0 = whole contexts)")
              ("out", po::value(&out_path)->required(), "output table (.kvcdf)");
            po::variables_map vm;
            if (!parse_or_help(args,
                               "usage: kvstream cdf-build --kv PROFILE.safetensors [--kv ...] [--ladder NAME] [--delta G] --out T.kvcdf\n"
                               "Encode with --codec cachegen:cdf=offline,table=T.kvcdf; decode with --cdf-table T.kvcdf.",
                               options, vm))
              return 0;
            if (delta != 0 && (delta < 2 || delta > 255)) throw po::error("--delta must be 0 or in [2, 255]");
            std::vector<codec::KvFile> files;
            std::vector<codec::KvChunkView> views;
            for (const auto& p : kv_paths) files.push_back(codec::load_kv(input_path(p)));
            for (const auto& f : files)
              for (const auto& ctx : f.contexts)
                for (const auto& [t0, t1] : codec::chunk_ranges(ctx.shape().tokens, chunk_tokens > 0 ? chunk_tokens : ctx.shape().tokens))
                  views.push_back(ctx.chunk(t0, t1));
            const auto table = codec::OfflineCdfTable::build(views, codec::Ladder::from_name_or_path(ladder_name), codec::TokenMode{delta});
            table.save(out_path);
            char id[17];
            std::snprintf(id, sizeof id, "%016llx", static_cast<unsigned long long>(table.id()));
            std::cout << out_path << ": table " << id << " from " << views.size() << " chunk(s)\n";
            return 0;
          }};
}

}  // namespace kvstream::cli
