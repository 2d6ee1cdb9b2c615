#include <fstream>
#include <iostream>
#include <sstream>

#include "cli/command.h"
#include "codec/safetensors.h"
#include "common/data_resolver.h"
#include "eval/kv_bridge.h"
#include "models/model_catalog.h"

namespace kvstream::cli {

Command kv_export_command() {
  return {"kv-export", "prefill text windows with a model and write their KV cache (safetensors)",
          [](const std::vector<std::string>& args) {
            std::string model_name, tokenizer, text_path, out_path;
            int contexts = 4, context_tokens = 512, window_chars = 4000, stride_chars = 3000;
            po::options_description options("options");
            options.add_options()
              ("model", po::value(&model_name)->default_value("stories260K"), "model name or path (see kvstream quality --help)")
              ("tokenizer", po::value(&tokenizer)->default_value(""), "tokenizer for a llama2.c .bin model")
              ("text", po::value(&text_path)->default_value("text/tinystories/tinystories_val.txt"), "text file (data-resolved)")
              ("contexts", po::value(&contexts)->default_value(4), "number of windows")
              ("context-tokens", po::value(&context_tokens)->default_value(512), "tokens per context (BOS included)")
              ("window-chars", po::value(&window_chars)->default_value(4000), "characters per window")
              ("stride-chars", po::value(&stride_chars)->default_value(3000), "characters between window starts")
              ("out", po::value(&out_path)->required(), "output KV dump: kv [N,L,2,T,C] fp16 + tokens [N,T] (atomic)");
            po::variables_map vm;
            if (!parse_or_help(args, "usage: kvstream kv-export [--model M] [--text FILE] [--contexts N] [--context-tokens T] --out KV.safetensors",
                               options, vm))
              return 0;
            if (contexts < 1 || context_tokens < 1) throw po::error("--contexts and --context-tokens must be positive");
            const auto model = models::load_model(model_name, tokenizer);
            std::ifstream in(common::resolve_input(text_path), std::ios::binary);
            std::stringstream buffer;
            buffer << in.rdbuf();
            const std::string text = buffer.str();
            codec::KvFile file;
            file.metadata = {{"model", model_name}, {"text", text_path}};
            for (int i = 0; i < contexts; ++i) {
              const size_t start = size_t(i) * size_t(stride_chars);
              if (start >= text.size())
                throw std::invalid_argument(text_path + " has " + std::to_string(text.size()) + " characters, too few for " +
                                            std::to_string(contexts) + " windows every " + std::to_string(stride_chars));
              auto ids = model.tokenizer->encode(text.substr(start, size_t(window_chars)), true);
              if (static_cast<int>(ids.size()) < context_tokens)
                throw std::invalid_argument("window " + std::to_string(i) + " gives " + std::to_string(ids.size()) + " tokens, " +
                                            std::to_string(context_tokens) + " needed (raise --window-chars)");
              ids.resize(static_cast<size_t>(context_tokens));
              models::KvState kv;
              model.model->forward(ids, {}, &kv, /*last_logits_only=*/true);
              file.contexts.push_back(eval::to_kv_cache(kv, model.model->config()));
              file.tokens.push_back(ids);
            }
            codec::save_kv(out_path, file);
            std::cout << out_path << ": " << contexts << " context(s), " << file.contexts.front().shape().to_string() << ", fp16\n";
            return 0;
          }};
}

}  // namespace kvstream::cli
