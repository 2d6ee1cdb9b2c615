// `kvstream cdf-build`: an offline per-model CDF table (codec/cachegen/offline_cdf.h) from profiling contexts.
#include <iostream>

#include "cli/command.h"
#include "codec/cachegen/offline_cdf.h"
#include "codec/format/kv_dump.h"
#include "common/content_hash.h"

namespace kvstream::cli {
namespace {

struct Options {
  std::vector<std::string> kv_paths;
  std::string ladder_name, out_path;
  int delta = 0;
  int64_t chunk_tokens = 0;
};

std::optional<Options> parse(const std::vector<std::string>& args) {
  Options o;
  po::options_description options("options");
  options.add_options()
    ("kv", po::value(&o.kv_paths)->required()->composing(), "profiling KV dump(s); every context of each is used")
    ("ladder", po::value(&o.ladder_name)->default_value("generic"), "ladder name or JSON path")
    ("delta", po::value(&o.delta)->default_value(0), "anchor/delta group size the table is for (0 = raw tokens)")
    ("chunk-tokens", po::value(&o.chunk_tokens)->default_value(0), "profile in chunks of this many tokens (0 = whole contexts)")
    ("out", po::value(&o.out_path)->required(), "output table (.kvcdf)");
  po::variables_map vm;
  if (!parse_or_help(args,
                     "usage: kvstream cdf-build --kv PROFILE.safetensors [--kv ...] [--ladder NAME] [--delta G] --out T.kvcdf\n"
                     "Encode with --codec cachegen:cdf=offline,table=T.kvcdf; decode with --cdf-table T.kvcdf.",
                     options, vm))
    return std::nullopt;
  if (o.delta != 0 && (o.delta < 2 || o.delta > 255)) throw po::error("--delta must be 0 or in [2, 255]");
  return o;
}

int run(const Options& o) {
  std::vector<codec::KvFile> files;
  std::vector<codec::KvChunkView> views;
  for (const auto& p : o.kv_paths) files.push_back(codec::load_kv(input_path(p)));
  for (const auto& f : files)
    for (const auto& ctx : f.contexts) {
      const int64_t tokens = ctx.shape().tokens;
      for (const auto& [t0, t1] : codec::chunk_ranges(tokens, o.chunk_tokens > 0 ? o.chunk_tokens : tokens))
        views.push_back(ctx.chunk(t0, t1));
    }
  const auto table =
      codec::OfflineCdfTable::build(views, codec::Ladder::from_name_or_path(o.ladder_name), codec::TokenMode{o.delta});
  table.save(o.out_path);
  std::cout << o.out_path << ": table " << common::hex64(table.id()) << " from " << views.size() << " chunk(s)\n";
  return 0;
}

}  // namespace

int cdf_build_main(const std::vector<std::string>& args) { return parse_and_run<Options>(args, parse, run); }

}  // namespace kvstream::cli
