// Quality of decoded KV (`kvstream quality`): for each text window, prefill the context, round its
// KV to fp16 (the wire dtype: the reference), encode/decode it with every codec and level, then feed
// the next K real tokens attending to the decoded KV and compare with the reference KV.
// Protocol (the one of the independent stories260K reference outputs): window i is characters [stride·i, stride·i + window) of
// the text, tokenized with BOS; ids [0, T) are the context, ids [T, T+K-1) are fed at positions T..,
// and their next-token distributions are scored against ids [T+1, T+K).
// The reference and decoded KV come from eval/decoded_kv.h, the metrics from eval/metrics.h.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "eval/decoded_kv.h"
#include "models/model_catalog.h"

namespace kvstream::eval {

struct QualityOptions {
  std::string text_path = "text/tinystories/tinystories_val.txt";  // data-resolved
  int contexts = 8;
  int context_tokens = 384;                  // T
  int continuation_tokens = 64;              // K
  int window_chars = 2400;
  int stride_chars = 3000;
  int greedy_tokens = 16;                    // for greedy_match_tokens
  std::vector<std::string> codecs = {"cachegen"};
  std::vector<int> levels;                   // empty = every level of each codec
};

// The defaults of `kvstream quality --model NAME`: stories260K and llama2.c .bin checkpoints get
// the struct's TinyStories protocol above (8 windows, T = 384); smollm2, GGUF files and Hugging Face
// directories get the long-context WikiText-2 protocol of tests/golden/quality_smollm2.json
// (text/wikitext2/wiki.test.raw, 2 windows of 6000 characters every 20000, T = 1024, K = 64,
// 8 greedy tokens).
QualityOptions quality_defaults(const std::string& model_name);

struct QualityRow : CodecLevelBytes {
  double ppl_ref = 0, ppl = 0, kl_mean = 0, top1_agree = 0, greedy_match_tokens = 0;
  nlohmann::json to_json() const;
};

std::vector<QualityRow> run_quality(const models::LoadedModel& model, const QualityOptions& options,
                                    const std::function<void(const QualityRow&)>& on_row = {});

}  // namespace kvstream::eval
