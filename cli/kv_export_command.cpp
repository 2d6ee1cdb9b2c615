// `kvstream kv-export`: prefill text windows with a model and write their KV cache (safetensors), the
// layout of the KV fixture: kv [N,L,2,T,C] fp16 and tokens [N,T].
#include <iostream>

#include "cli/command.h"
#include "codec/safetensors.h"
#include "common/data_resolver.h"
#include "common/file_text.h"
#include "eval/kv_bridge.h"
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
  const std::string text = common::read_file_text(common::resolve_input(o.text_path));
  codec::KvFile file;
  file.metadata = {{"model", o.model_name}, {"text", o.text_path}};
  for (int i = 0; i < o.contexts; ++i) {
    const size_t start = size_t(i) * size_t(o.stride_chars);
    if (start >= text.size())
      throw std::invalid_argument(o.text_path + " has " + std::to_string(text.size()) + " characters, too few for " +
                                  std::to_string(o.contexts) + " windows every " + std::to_string(o.stride_chars));
    auto ids = model.tokenizer->encode(text.substr(start, size_t(o.window_chars)), true);
    if (static_cast<int>(ids.size()) < o.context_tokens)
      throw std::invalid_argument("window " + std::to_string(i) + " gives " + std::to_string(ids.size()) + " tokens, " +
                                  std::to_string(o.context_tokens) + " needed (raise --window-chars)");
    ids.resize(static_cast<size_t>(o.context_tokens));
    models::KvState kv;
    model.model->forward(ids, {}, &kv, /*last_logits_only=*/true);
    file.contexts.push_back(eval::to_kv_cache(kv, model.model->config()));
    file.tokens.push_back(ids);
  }
  codec::save_kv(o.out_path, file);
  std::cout << o.out_path << ": " << o.contexts << " context(s), " << file.contexts.front().shape().to_string() << ", fp16\n";
  return 0;
}

}  // namespace

int kv_export_main(const std::vector<std::string>& args) { return parse_and_run<Options>(args, parse, run); }

}  // namespace kvstream::cli
