// `kvstream kv-export`: prefill text windows with a model and write their KV cache (safetensors), the
// layout of the KV fixture: kv [N,L,2,T,C] fp16 and tokens [N,T].
#include <iostream>

#include "cli/command.h"
#include "codec/format/kv_dump.h"
#include "eval/text_windows.h"
#include "models/model_catalog.h"

namespace kvstream::cli {
namespace {

struct Options {
  std::string model_name, tokenizer, text_path, out_path;
  int contexts = 4, context_tokens = 512, window_chars = 4000, stride_chars = 3000;
};

std::optional<Options> parse(const std::vector<std::string>& args) {
  Options o;
  po::options_description options("options");
  options.add_options()
    ("model", po::value(&o.model_name)->default_value("stories260K"), "model name or path (see kvstream quality --help)")
    ("tokenizer", po::value(&o.tokenizer)->default_value(""), "tokenizer for a llama2.c .bin model")
    ("text", po::value(&o.text_path)->default_value("text/tinystories/tinystories_val.txt"), "text file (data-resolved)")
    ("contexts", po::value(&o.contexts)->default_value(4), "number of windows")
    ("context-tokens", po::value(&o.context_tokens)->default_value(512), "tokens per context (BOS included)")
    ("window-chars", po::value(&o.window_chars)->default_value(4000), "characters per window")
    ("stride-chars", po::value(&o.stride_chars)->default_value(3000), "characters between window starts")
    ("out", po::value(&o.out_path)->required(), "output KV dump: kv [N,L,2,T,C] fp16 + tokens [N,T] (atomic)");
  po::variables_map vm;
  if (!parse_or_help(args, "usage: kvstream kv-export [--model M] [--text FILE] [--contexts N] [--context-tokens T] --out KV.safetensors",
                     options, vm))
    return std::nullopt;
  if (o.contexts < 1 || o.context_tokens < 1) throw po::error("--contexts and --context-tokens must be positive");
  return o;
}

int run(const Options& o) {
  const auto model = models::load_model(o.model_name, o.tokenizer);
  auto windows = eval::window_kv(model, {o.text_path, o.contexts, o.context_tokens, o.window_chars, o.stride_chars});
  codec::KvFile file;
  file.metadata = {{"model", o.model_name}, {"text", o.text_path}};
  file.contexts = std::move(windows.kv);
  file.tokens = std::move(windows.tokens);
  codec::save_kv(o.out_path, file);
  std::cout << o.out_path << ": " << o.contexts << " context(s), " << file.contexts.front().shape().to_string() << ", fp16\n";
  return 0;
}

}  // namespace

int kv_export_main(const std::vector<std::string>& args) { return parse_and_run<Options>(args, parse, run); }

}  // namespace kvstream::cli
