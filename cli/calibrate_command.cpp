// `kvstream calibrate`: fit the transform codec (codec/transform/transform_calibration.h) to a model on
// calibration text and write its .kvcal file. The default text is never the text `quality` and `rd`
// score on by default: WikiText-2's validation split for SmolLM2 and other long-context models (they
// score on the test split), the second half of TinyStories' validation file for llama2.c models
// (they score on its first windows).
#include <iostream>
#include <sstream>

#include "cli/command.h"
#include "codec/transform/transform_calibration.h"
#include "codec/transform/transform_distortion.h"
#include "common/content_hash.h"
#include "eval/transform_fit.h"
#include "models/model_catalog.h"

namespace kvstream::cli {
namespace {

struct Options {
  std::string model_name, tokenizer, out_path, levels;
  eval::TextWindows windows;
  int sink_tokens = 4;
  int sensitivity_windows = eval::kTransformSensitivityWindows;
  int key_windows = eval::kTransformKeyWindows;
  double key_floor = codec::TransformCalibration::Options{}.key_metric_floor;
  bool keep_rope = false;
};

std::vector<double> parse_levels(const std::string& text) {
  std::vector<double> out;
  std::istringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) {
    size_t used = 0;
    double d = 0;
    try {
      d = std::stod(item, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used == 0 || used != item.size()) throw po::error("--levels: \"" + item + "\" is not a number");
    if (const std::string error = codec::transform_distortion_error(d); !error.empty())
      throw po::error("--levels: level " + std::to_string(out.size() + 1) + ": " + error);
    if (!out.empty() && !(d < out.back()))
      throw po::error("--levels: distortions must decrease (lowest quality first), level " +
                      std::to_string(out.size() + 1) + " does not");
    out.push_back(d);
  }
  if (out.size() > size_t(codec::kTransformMaxLevels))
    throw po::error("--levels: at most " + std::to_string(codec::kTransformMaxLevels) + " levels");
  return out;
}

std::optional<Options> parse(const std::vector<std::string>& args) {
  Options o;
  auto& w = o.windows;
  po::options_description options("options");
  options.add_options()
    ("model", po::value(&o.model_name)->default_value("smollm2"), "stories260K, smollm2, a .gguf, a Hugging Face directory or a llama2.c .bin")
    ("tokenizer", po::value(&o.tokenizer)->default_value(""), "tokenizer for a llama2.c .bin model")
    ("text", po::value(&w.text_path), "calibration text (data-resolved; default: see above)")
    ("first-char", po::value(&w.first_char), "character where the first window starts")
    ("windows", po::value(&w.contexts), "text windows")
    ("context-tokens", po::value(&w.context_tokens), "tokens per window (BOS included)")
    ("window-chars", po::value(&w.window_chars), "characters per window")
    ("stride-chars", po::value(&w.stride_chars), "characters between window starts")
    ("sink-tokens", po::value(&o.sink_tokens)->default_value(4), "positions the codec keeps in fp16 (attention sinks)")
    ("levels", po::value(&o.levels), "the ladder: relative distortions d, largest (lowest quality) first, comma-separated")
    ("sensitivity-windows", po::value(&o.sensitivity_windows)->default_value(eval::kTransformSensitivityWindows),
     "windows on which each row's effect on KL is measured to weigh its distortion (0: equal weights)")
    ("key-windows", po::value(&o.key_windows)->default_value(eval::kTransformKeyWindows),
     "windows whose queries weigh the keys' basis (0: the plain PCA of the keys)")
    ("key-floor", po::value(&o.key_floor)->default_value(o.key_floor, codec::distortion_text(o.key_floor)),
     "weight, relative to the mean, added to every key direction before weighing, in (0, 1]")
    ("keep-rope", po::bool_switch(&o.keep_rope), "fit the keys as stored, RoPE applied (for comparison)")
    ("out", po::value(&o.out_path)->required(), "output calibration (.kvcal, written atomically)");
  po::variables_map vm;
  if (!parse_or_help(args,
                     "usage: kvstream calibrate [--model M] [--text FILE] [--windows N] [--levels D1,D2,...] --out M.kvcal\n\n"
                     "Fits the transform codec to a model: prefills text windows, and per layer, K and V, fits a PCA\n"
                     "basis (keys with RoPE undone, and weighed by what the queries of --key-windows windows read of\n"
                     "them), the component variances and the offline rANS tables. Encode with\n"
                     "--codec transform:cal=M.kvcal (its levels are the ladder of --levels; transform:cal=M.kvcal,d=D\n"
                     "for one distortion), decode with --calibration M.kvcal. Default text: WikiText-2 validation\n"
                     "(16 windows of 1024 tokens) for SmolLM2 and other models, the second half of TinyStories'\n"
                     "validation file (32 windows of 384 tokens from character 240000) for llama2.c models: never\n"
                     "what kvstream quality and rd score on by default.",
                     options, vm))
    return std::nullopt;
  if (!o.levels.empty()) parse_levels(o.levels);  // checked before the model runs
  if (o.key_windows < 0) throw po::error("--key-windows: " + std::to_string(o.key_windows) + " is negative");
  if (!(o.key_floor > 0 && o.key_floor <= 1))
    throw po::error("--key-floor: " + codec::distortion_text(o.key_floor) + " is outside (0, 1]");
  const auto defaults = eval::calibration_windows(o.model_name);
  if (!vm.count("text")) w.text_path = defaults.text_path;
  if (!vm.count("first-char")) w.first_char = defaults.first_char;
  if (!vm.count("windows")) w.contexts = defaults.contexts;
  if (!vm.count("context-tokens")) w.context_tokens = defaults.context_tokens;
  if (!vm.count("window-chars")) w.window_chars = defaults.window_chars;
  if (!vm.count("stride-chars")) w.stride_chars = defaults.stride_chars;
  return o;
}

int run(const Options& o) {
  codec::TransformCalibration::Options options;
  if (!o.levels.empty()) options.level_distortions = parse_levels(o.levels);
  options.sink_tokens = o.sink_tokens;
  options.key_metric_floor = o.key_floor;
  const auto model = models::load_model(o.model_name, o.tokenizer);
  const auto cal = eval::fit_transform(model, o.windows, options, o.sensitivity_windows, o.key_windows, o.keep_rope);
  cal.save(o.out_path);
  std::cout << o.out_path << ": calibration " << common::hex64(cal.id()) << " of " << o.model_name << ", "
            << o.windows.contexts << " window(s) of " << o.windows.context_tokens << " tokens from " << o.windows.text_path
            << "\n";
  for (size_t i = 0; i < cal.level_distortions().size(); ++i) {
    const double d = cal.level_distortions()[i];
    double kept[2] = {0, 0};
    for (int r = 0; r < 2 * cal.layers(); ++r)
      for (int c : cal.classes(r, cal.step(r, d))) kept[r < cal.layers() ? 0 : 1] += c >= 0;
    std::cout << "  level " << i + 1 << ": d = " << d << ", components kept per layer: K "
              << kept[0] / cal.layers() << ", V " << kept[1] / cal.layers() << " of " << cal.channels() << "\n";
  }
  return 0;
}

}  // namespace

int calibrate_main(const std::vector<std::string>& args) { return parse_and_run<Options>(args, parse, run); }

}  // namespace kvstream::cli
