#include "eval/text_windows.h"

#include <stdexcept>

#include "common/data_resolver.h"
#include "common/file_text.h"
#include "eval/kv_bridge.h"

namespace kvstream::eval {

TextWindows calibration_windows(const std::string& model_name) {
  const bool llama2c = model_name == "stories260K" || model_name.ends_with(".bin");
  if (llama2c) return {"text/tinystories/tinystories_val.txt", 32, 384, 2400, 3000, 240000};
  return {"text/wikitext2/valid.txt", 16, 1024, 6000, 20000, 0};
}

WindowKv window_kv(const models::LoadedModel& model, const TextWindows& w,
                   const std::function<models::AttentionObserver(int window)>& observe) {
  if (w.contexts < 1 || w.context_tokens < 1 || w.window_chars < 1 || w.stride_chars < 1 || w.first_char < 0)
    throw std::invalid_argument("text windows: contexts, context tokens, window and stride characters must be positive");
  const std::string text = common::read_file_text(common::resolve_input(w.text_path));
  WindowKv out;
  for (int i = 0; i < w.contexts; ++i) {
    const auto start = static_cast<size_t>(w.first_char) + size_t(i) * size_t(w.stride_chars);
    if (start >= text.size())
      throw std::invalid_argument(w.text_path + " has " + std::to_string(text.size()) + " characters, too few for " +
                                  std::to_string(w.contexts) + " windows every " + std::to_string(w.stride_chars) +
                                  " from character " + std::to_string(w.first_char));
    auto ids = model.tokenizer->encode(text.substr(start, size_t(w.window_chars)), true);
    if (static_cast<int>(ids.size()) < w.context_tokens)
      throw std::invalid_argument(w.text_path + ": window " + std::to_string(i) + " gives " + std::to_string(ids.size()) +
                                  " tokens, " + std::to_string(w.context_tokens) + " needed (raise --window-chars)");
    ids.resize(static_cast<size_t>(w.context_tokens));
    models::KvState kv;
    model.model->forward(ids, {}, &kv, /*last_logits_only=*/true, observe ? observe(i) : models::AttentionObserver{});
    out.kv.push_back(to_kv_cache(kv, model.model->config()));
    out.tokens.push_back(std::move(ids));
  }
  return out;
}

}  // namespace kvstream::eval
