// The KV cache of text windows: window i is `window_chars` characters of a text starting at
// first_char + i * stride_chars, tokenized (BOS first), cut to `context_tokens` tokens and prefilled by
// the model. What `kvstream kv-export` writes and `kvstream calibrate` fits the transform codec on.
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "codec/kv_cache.h"
#include "models/llama_model.h"
#include "models/model_catalog.h"

namespace kvstream::eval {

struct TextWindows {
  std::string text_path;  // data-resolved
  int contexts = 4;
  int context_tokens = 512;
  int window_chars = 4000;
  int stride_chars = 3000;
  int64_t first_char = 0;
};

struct WindowKv {
  std::vector<codec::KvCache> kv;            // as the model computed it, [L][2][T][C] each
  std::vector<std::vector<int32_t>> tokens;  // the context tokens of each window
};

// The default calibration text of `kvstream calibrate` and `calibrate-ladder`, never what `quality`
// and `rd` score on by default: for llama2.c models (stories260K, .bin) 32 windows of 384 tokens of
// TinyStories' validation file from character 240000 (they score on its first windows); for SmolLM2
// and other models 16 windows of 1024 tokens of WikiText-2's validation split (they score on test).
TextWindows calibration_windows(const std::string& model_name);

// Throws std::invalid_argument naming the text and the window when the text is too short for the
// windows or a window gives fewer tokens than needed.
// `observe(i)`, if given, is what window i's forward pass reports its attention to (may be empty).
WindowKv window_kv(const models::LoadedModel& model, const TextWindows& windows,
                   const std::function<models::AttentionObserver(int window)>& observe = {});

}  // namespace kvstream::eval
