// The text-window options that `quality` and `rd` share (eval/text_quality.h): the text and how it
// is cut into windows. Their defaults follow the model (eval::quality_defaults).
#pragma once
#include <string>

#include "cli/command.h"
#include "eval/text_quality.h"

namespace kvstream::cli {

// --text, --context-tokens, --continuation-tokens, --window-chars, --stride-chars into `q`.
void add_text_window_options(po::options_description& options, eval::QualityOptions& q);
// Sets each of those options that the command line left out from `model_name`'s defaults.
void apply_text_window_defaults(const po::variables_map& vm, const std::string& model_name, eval::QualityOptions& q);

}  // namespace kvstream::cli
