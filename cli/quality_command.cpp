// `kvstream quality`: what a lossy KV costs the model, per codec and level: perplexity, KL and top-1
// agreement on text windows (eval/text_quality.h), or task accuracy/F1 (eval/task_quality.h).
#include <iostream>
#include <sstream>

#include "cli/command.h"
#include "cli/text_window_flags.h"
#include "codec/codec.h"
#include "eval/task_quality.h"
#include "eval/text_quality.h"

namespace kvstream::cli {
namespace {

struct Options {
  std::string model_name, tokenizer;
  bool json = false;
  bool task_mode = false;  // --tasks given
  eval::QualityOptions window;
  eval::TaskQualityOptions task;
};

std::optional<Options> parse(const std::vector<std::string>& args) {
  Options o;
  std::string levels, truncate;
  std::vector<std::string> codecs;
  eval::QualityOptions& q = o.window;  // its fields are set from quality_defaults(model) below
  eval::TaskQualityOptions& t = o.task;
  po::options_description options("options");
  options.add_options()
    ("model", po::value(&o.model_name)->default_value("smollm2"), "stories260K, smollm2, a .gguf, a Hugging Face directory or a llama2.c .bin")
    ("tokenizer", po::value(&o.tokenizer)->default_value(""), "tokenizer for a .bin model (.bin or .model)")
    ("codec", po::value(&codecs)->multitoken()->composing(), "codec spec(s) (default: cachegen)")
    ("levels", po::value(&levels)->default_value(""), "comma-separated levels (default: all)")
    ("json", po::bool_switch(&o.json), "one JSON object per (codec, level)");
  po::options_description window("text-window mode (defaults: stories260K and .bin models | smollm2, .gguf, HF)");
  window.add_options()
    ("contexts", po::value(&q.contexts), "number of text windows (8 | 2)")
    ("greedy-tokens", po::value(&q.greedy_tokens), "greedy tokens compared for greedy_match_tokens (16 | 8)");
  add_text_window_options(window, q);
  po::options_description task("task mode");
  task.add_options()
    ("tasks", po::value(&t.tasks_path), "LongChat or LongBench JSONL, data-resolved (e.g. text/cachegen/longchat.jsonl)")
    ("records", po::value(&t.records)->default_value(0), "first N records (0 = all)")
    ("generate-tokens", po::value(&t.generate_tokens)->default_value(32), "greedy tokens G generated per answer (stops at EOS)")
    ("max-prompt-tokens", po::value(&t.max_prompt_tokens)->default_value(0),
     "cut prompts longer than N tokens to N (0 = a prompt over the model's maximum sequence length - G is an error)")
    ("truncate", po::value(&truncate)->default_value("middle"),
     "how --max-prompt-tokens cuts: middle (LongBench: first N/2 and last N/2 tokens) or left (BOS + last N-1)");
  options.add(window).add(task);
  po::variables_map vm;
  if (!parse_or_help(args,
                     "usage: kvstream quality [--model M] [--text FILE] [--codec SPEC ...] [--levels 1,2,3]\n"
                     "                        [--contexts N] [--context-tokens T] [--continuation-tokens K] [--json]\n"
                     "       kvstream quality [--model M] --tasks FILE.jsonl [--codec SPEC ...] [--levels 1,2,3]\n"
                     "                        [--records N] [--generate-tokens G] [--max-prompt-tokens N] [--json]\n\n"
                     "The default model is smollm2 (SmolLM2-135M-Instruct: scripts/fetch-data.sh fetches it) with\n"
                     "1024-token WikiText-2 contexts; --model stories260K uses TinyStories and T = 384.\n\n"
                     "Text windows: for each window prefill T tokens, round the KV to fp16 (the reference),\n"
                     "encode/decode it, feed the next K-1 real tokens on the decoded KV. Fields: bytes,\n"
                     "ratio_vs_fp16, ppl_ref, ppl, ppl_delta, kl_mean (KL(reference || decoded) per position),\n"
                     "top1_agree, greedy_match_tokens.\n\n"
                     "Tasks (--tasks): per record prefill all but the prompt's last token, round to fp16,\n"
                     "encode/decode, then greedy-generate up to G tokens from the reference and each decoded KV\n"
                     "and score the text: LongChat records by containment of label[0] (longchat_accuracy),\n"
                     "LongBench records by token F1 against answers (token_f1). Fields: bytes, ratio_vs_fp16,\n"
                     "task_score, task_score_ref, task_metric, records, truncated_records, prompt_tokens.\n"
                     "A prompt longer than the model's maximum sequence minus G is an error unless\n"
                     "--max-prompt-tokens cuts it. CacheGen's longchat.jsonl prompts are ~10K tokens:\n"
                     "stories260K (512) and smollm2 (8K) must cut them and score about 0; the mode is meant\n"
                     "for real long-context checkpoints.\n\n" +
                         codec_list_help(),
                     options, vm))
    return std::nullopt;
  o.task_mode = vm.count("tasks") > 0;
  for (const char* name : {"text", "contexts", "context-tokens", "continuation-tokens", "window-chars", "stride-chars", "first-char",
                           "greedy-tokens"})
    if (o.task_mode && vm.count(name)) throw po::error(std::string("--") + name + " does not apply with --tasks");
  for (const char* name : {"records", "generate-tokens", "max-prompt-tokens", "truncate"})
    if (!o.task_mode && !vm[name].defaulted()) throw po::error(std::string("--") + name + " needs --tasks");
  if (truncate != "middle" && truncate != "left") throw po::error("--truncate must be middle or left");
  t.truncation = truncate == "left" ? eval::PromptTruncation::kLeft : eval::PromptTruncation::kMiddle;

  // Defaults follow the model; options given on the command line win.
  apply_text_window_defaults(vm, o.model_name, q);
  const eval::QualityOptions defaults = eval::quality_defaults(o.model_name);
  if (!vm.count("contexts")) q.contexts = defaults.contexts;
  if (!vm.count("greedy-tokens")) q.greedy_tokens = defaults.greedy_tokens;
  if (!codecs.empty()) q.codecs = t.codecs = codecs;
  if (!levels.empty())
    for (int64_t level : parse_int_list("levels", levels, 1)) q.levels.push_back(static_cast<int>(level));
  t.levels = q.levels;
  if (q.contexts < 1 || q.context_tokens < 1) throw po::error("--contexts and --context-tokens must be positive");
  if (t.records < 0 || t.generate_tokens < 1 || t.max_prompt_tokens < 0)
    throw po::error("--records and --max-prompt-tokens must be >= 0, --generate-tokens positive");
  return o;
}

std::string quality_text(const eval::QualityRow& row) {
  std::ostringstream text;
  text << "ppl " << row.ppl << " (ref " << row.ppl_ref << "), KL " << row.kl_mean << ", top-1 " << row.top1_agree
       << ", greedy match " << row.greedy_match_tokens;
  return text.str();
}

std::string quality_text(const eval::TaskQualityRow& row) {
  std::ostringstream text;
  text << row.task_metric << " " << row.task_score << " (ref " << row.task_score_ref << ") over " << row.records
       << " record(s)";
  return text.str();
}

// A row as JSON, or as "<codec> level <level>: <bytes> B (<ratio>x), <its quality>".
template <class Row>
void print_row(const Row& row, bool json) {
  if (json) std::cout << row.to_json().dump() << std::endl;
  else std::cout << row.codec << " level " << row.level << ": " << row.bytes << " B ("
                 << double(row.fp16_bytes) / double(row.bytes) << "x), " << quality_text(row) << std::endl;
}

void print_record(const eval::TaskRecordReport& r) {
  std::cerr << "record " << r.index + 1 << (r.test_id >= 0 ? " (test_id " + std::to_string(r.test_id) + ")" : "") << ": "
            << r.prompt_tokens << " prompt tokens"
            << (r.prompt_tokens < r.original_tokens ? " (cut from " + std::to_string(r.original_tokens) + ")" : "")
            << ", reference answer " << nlohmann::json(r.reference_prediction).dump() << " scores " << r.reference_score
            << std::endl;
}

int run(const Options& o) {
  for (const auto& spec : o.window.codecs) codec::make_codec(spec);  // bad specs fail before the model loads
  const auto model = models::load_model(o.model_name, o.tokenizer);
  if (o.task_mode) {
    for (const auto& row : eval::run_task_quality(model, o.task, print_record)) print_row(row, o.json);
    return 0;
  }
  eval::run_quality(model, o.window, [&](const eval::QualityRow& row) { print_row(row, o.json); });
  return 0;
}

}  // namespace

int quality_main(const std::vector<std::string>& args) { return parse_and_run<Options>(args, parse, run); }

}  // namespace kvstream::cli
