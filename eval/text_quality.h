// Quality of decoded KV (`kvstream quality`): for each text window, prefill the context, round its
// KV to fp16 (the wire dtype: the reference), encode/decode it with every codec and level, then feed
// the next K real tokens attending to the decoded KV and compare with the reference KV.
// Protocol (the one of the independent stories260K reference outputs): window i is characters [first + stride·i, ... + window) of
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
  int64_t first_char = 0;                    // window i starts at first_char + stride_chars * i
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

// The windows of `options` prefilled once (reference KV, log-probabilities and greedy tokens), so that
// any number of (codec, level) can be measured against them: what run_quality does for a list, and
// `kvstream calibrate-ladder` for the candidates of its search (eval/ladder_calibration.h).
class QualityProbe {
 public:
  // Throws std::invalid_argument naming the text and the window when the text is too short.
  QualityProbe(const models::LoadedModel& model, const QualityOptions& options);
  // Every window encoded and decoded at the level; greedy_match_tokens only with `greedy` (it costs
  // greedy_tokens steps per window). Throws std::invalid_argument for a codec fitted to another model
  // (codec::check_codec_model).
  QualityRow measure(const codec::CodecLevel& codec_level, bool greedy = true) const;

 private:
  struct Window {
    std::vector<int32_t> context_ids, fed_ids, target_ids;
    models::KvState reference_kv;
    codec::KvCache reference_cache;  // fp16-rounded
    torch::Tensor reference_log_probs;  // [K-1, vocab]
    std::vector<int32_t> reference_greedy;
  };
  const models::LlamaModel& model_;
  std::string model_name_;
  int greedy_tokens_;
  std::vector<Window> windows_;
  double ppl_ref_ = 0;
};

std::vector<QualityRow> run_quality(const models::LoadedModel& model, const QualityOptions& options,
                                    const std::function<void(const QualityRow&)>& on_row = {});

}  // namespace kvstream::eval
