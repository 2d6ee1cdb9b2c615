// Quality of decoded KV (`kvstream quality`): for each text window, prefill the context, round its
// KV to fp16 (the wire dtype: the reference), encode/decode it with every codec and level, then feed
// the next K real tokens attending to the decoded KV and compare with the reference KV.
// Protocol (shared/data/SOURCES.md §2a′): window i is characters [stride·i, stride·i + window) of
// the text, tokenized with BOS; ids [0, T) are the context, ids [T, T+K-1) are fed at positions T..,
// and their next-token distributions are scored against ids [T+1, T+K).
// The building blocks at the end are shared with the task mode (task_quality.h).
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "codec/codec.h"
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

struct QualityRow {
  std::string codec;
  int level = 1;
  uint64_t bytes = 0, fp16_bytes = 0;
  double ppl_ref = 0, ppl = 0, kl_mean = 0, top1_agree = 0, greedy_match_tokens = 0;
  nlohmann::json to_json() const;
};

std::vector<QualityRow> run_quality(const models::LoadedModel& model, const QualityOptions& options,
                                    const std::function<void(const QualityRow&)>& on_row = {});

// --- Building blocks shared with the task mode ---

// One (codec, level) to evaluate.
struct CodecLevel {
  std::shared_ptr<const codec::Codec> codec;
  int level = 1;
};

// Every level of every codec spec, in order, kept when `levels` is empty or lists it. Throws
// std::invalid_argument for a bad spec.
std::vector<CodecLevel> codec_levels(const std::vector<std::string>& codecs, const std::vector<int>& levels);

// The model's KV rounded to fp16 (the wire dtype), as a codec input and as model state: the
// reference every decoded KV is compared with.
struct ReferenceKv {
  codec::KvCache cache;
  models::KvState state;
};
ReferenceKv fp16_reference(const models::LlamaModel& model, const models::KvState& kv);

// `reference` encoded as one chunk at `level` and decoded again: the bitstream size and the decoded
// KV as model state.
struct DecodedKv {
  uint64_t bytes = 0;
  models::KvState state;
};
DecodedKv encode_decode(const CodecLevel& codec_level, const codec::KvCache& reference, const models::LlamaModel& model);

// Greedy continuation: feeds `first` after `kv`, then each argmax, `steps` tokens in all. With
// `stop` >= 0, ends early when `stop` is produced (it is not included).
std::vector<int32_t> greedy_after(const models::LlamaModel& model, const models::KvState& kv, int32_t first, int steps,
                                  int32_t stop = -1);

}  // namespace kvstream::eval
