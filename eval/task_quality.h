// Task quality of decoded KV (`kvstream quality --tasks FILE.jsonl`): CacheGen's accuracy
// evaluation (docs/CACHEGEN.md §12) with local metrics (task_metrics.h). For each LongChat or
// LongBench record: tokenize the prompt (with BOS), prefill all but its last token, round that KV to
// fp16 (the reference), encode/decode it per codec and level (one chunk, as `kvstream quality`
// does), then feed the last prompt token and greedy-generate up to G tokens (stopping at EOS) from
// the reference KV and from each decoded KV, detokenize, and score: LongChat with
// longchat_correct(prediction, label[0]) (accuracy), LongBench with token_f1(prediction, answers).
//
// Prompts must fit the model: prompt tokens + G <= its maximum sequence length. A longer prompt is
// an error unless max_prompt_tokens = N is given; then prompts over N tokens are cut to N tokens,
// by default LongBench's way, from the middle (the first ceil(N/2) and the last floor(N/2) tokens:
// the instructions and, for LongChat, the first topic stay, and so does the question at the end), or
// from the left (BOS and the last N-1 tokens). Small models such as stories260K (512 tokens) or
// SmolLM2-135M (8K, and not trained for this) score about 0 on CacheGen's ~10K-token LongChat
// prompts: the mode is meant for real long-context checkpoints.
#pragma once
#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "eval/decoded_kv.h"
#include "models/model_catalog.h"

namespace kvstream::eval {

enum class PromptTruncation { kMiddle, kLeft };

struct TaskQualityOptions {
  std::string tasks_path = "text/cachegen/longchat.jsonl";  // data-resolved JSONL (task_metrics.h)
  int records = 0;               // the first N records; 0 = all
  int generate_tokens = 32;      // G: at most this many generated tokens per prediction
  int max_prompt_tokens = 0;     // 0: a prompt that does not fit is an error; N: cut longer prompts to N tokens
  PromptTruncation truncation = PromptTruncation::kMiddle;
  std::vector<std::string> codecs = {"cachegen"};
  std::vector<int> levels;       // empty = every level of each codec
};

struct TaskQualityRow : CodecLevelBytes {
  double task_score = 0;      // mean accuracy (LongChat) or token F1 (LongBench) on the decoded KV
  double task_score_ref = 0;  // the same on the reference (fp16) KV
  std::string task_metric;    // "longchat_accuracy" or "token_f1"
  int records = 0;
  int truncated_records = 0;  // prompts cut to max_prompt_tokens
  double prompt_tokens = 0;   // mean prompt tokens after truncation
  nlohmann::json to_json() const;
};

// What happened to one record (for progress output), after all its codecs and levels ran.
struct TaskRecordReport {
  size_t index = 0;          // 0-based, in the file
  int64_t test_id = -1;      // LongChat test_id, -1 for LongBench
  size_t prompt_tokens = 0;  // after truncation
  size_t original_tokens = 0;
  std::string reference_prediction;
  double reference_score = 0;
};

// Throws std::invalid_argument for bad options, a prompt that does not fit or a file mixing LongChat
// and LongBench records, before any prefill; std::runtime_error (file:line) for a bad file.
std::vector<TaskQualityRow> run_task_quality(const models::LoadedModel& model, const TaskQualityOptions& options,
                                             const std::function<void(const TaskRecordReport&)>& on_record = {});

}  // namespace kvstream::eval
