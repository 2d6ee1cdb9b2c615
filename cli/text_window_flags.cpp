#include "cli/text_window_flags.h"

namespace kvstream::cli {

void add_text_window_options(po::options_description& options, eval::QualityOptions& q) {
  options.add_options()
    ("text", po::value(&q.text_path), "text file, data-resolved (tinystories_val.txt | wikitext2/wiki.test.raw)")
    ("context-tokens", po::value(&q.context_tokens), "context tokens T, prefilled then encoded (384 | 1024)")
    ("continuation-tokens", po::value(&q.continuation_tokens), "real tokens K scored after the context (64 | 64)")
    ("window-chars", po::value(&q.window_chars), "characters per window (2400 | 6000)")
    ("stride-chars", po::value(&q.stride_chars), "characters between window starts (3000 | 20000)")
    ("first-char", po::value(&q.first_char), "character where the first window starts (0 | 0)");
}

void apply_text_window_defaults(const po::variables_map& vm, const std::string& model_name, eval::QualityOptions& q) {
  const eval::QualityOptions defaults = eval::quality_defaults(model_name);
  if (!vm.count("text")) q.text_path = defaults.text_path;
  if (!vm.count("context-tokens")) q.context_tokens = defaults.context_tokens;
  if (!vm.count("continuation-tokens")) q.continuation_tokens = defaults.continuation_tokens;
  if (!vm.count("window-chars")) q.window_chars = defaults.window_chars;
  if (!vm.count("stride-chars")) q.stride_chars = defaults.stride_chars;
  if (!vm.count("first-char")) q.first_char = defaults.first_char;
}

}  // namespace kvstream::cli
