// `kvstream calibrate-ladder`: levels of cachegen or transform chosen per model to land on requested
// KLs on calibration text (eval/ladder_calibration.h), written as a ladder file; with --check, each
// level measured again on the held-out windows `kvstream rd` scores on.
#include <iostream>
#include <sstream>

#include "cli/command.h"
#include "cli/text_window_flags.h"
#include "codec/codec.h"
#include "common/atomic_file.h"
#include "eval/ladder_calibration.h"
#include "eval/text_windows.h"

namespace kvstream::cli {
namespace {

struct Options {
  std::string model_name, tokenizer, kl, out_path;
  eval::LadderCalibrationOptions calibration;
  bool check = false, json = false;
  int check_windows = 8;
};

std::vector<double> parse_kl(const std::string& text) {
  std::vector<double> out;
  std::istringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) {
    size_t used = 0;
    double kl = 0;
    try {
      kl = std::stod(item, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used == 0 || used != item.size() || !(kl > 0 && kl <= eval::kMaxTargetKl))
      throw po::error("--kl: \"" + item + "\" is not a KL in (0, " + std::to_string(int(eval::kMaxTargetKl)) +
                      "] nats per token");
    out.push_back(kl);
  }
  if (out.empty()) throw po::error("--kl: no target given");
  return out;
}

std::optional<Options> parse(const std::vector<std::string>& args) {
  Options o;
  auto& c = o.calibration;
  eval::QualityOptions& q = c.windows;
  po::options_description options("options");
  options.add_options()
    ("model", po::value(&o.model_name)->default_value("smollm2"), "stories260K, smollm2, a .gguf, a Hugging Face directory or a llama2.c .bin")
    ("tokenizer", po::value(&o.tokenizer)->default_value(""), "tokenizer for a llama2.c .bin model")
    ("codec", po::value(&c.codec)->required(), "cachegen[:options] or transform:cal=M.kvcal (without ladder= or d=)")
    ("kl", po::value(&o.kl)->required(), "target KL of each level, comma-separated (e.g. 0.002,0.01,0.05)")
    ("out", po::value(&o.out_path)->required(), "the ladder file to write (JSON, atomically)")
    ("name", po::value(&c.name), "the ladder's name (default: the file name without .json)")
    ("windows", po::value(&q.contexts), "calibration text windows (default: kvstream calibrate's, 32 | 16)")
    ("max-probes", po::value(&c.max_probes)->default_value(6), "measurements per level at most")
    ("tolerance", po::value(&c.tolerance)->default_value(0.1), "a level's search stops within this fraction of its target KL")
    ("sensitivity-windows", po::value(&c.sensitivity_windows)->default_value(2), "cachegen: windows for the per-layer rate-distortion curves")
    ("check", po::bool_switch(&o.check), "measure each level again on the held-out windows kvstream rd scores on")
    ("check-windows", po::value(&o.check_windows)->default_value(8), "held-out windows of --check")
    ("json", po::bool_switch(&o.json), "print one JSON object per level");
  add_text_window_options(options, q);
  po::variables_map vm;
  if (!parse_or_help(args,
                     "usage: kvstream calibrate-ladder [--model M] --codec SPEC --kl KL1,KL2,... --out LADDER.json\n"
                     "                                 [--text FILE] [--windows N] [--check] [--json]\n\n"
                     "Chooses each level of a codec so that it lands on a target KL (kvstream quality's mean KL of\n"
                     "the next-token distributions) on calibration text, and writes a ladder file: level 1 the\n"
                     "largest KL. cachegen: per-layer K and V bins from each one's measured bytes and KL at 4 to\n"
                     "64 bins, a Lagrangian choice (use the file as cachegen:ladder=LADDER.json); transform: the\n"
                     "relative distortion of each level (use it as transform:cal=M.kvcal,ladder=LADDER.json).\n"
                     "Each level is a secant search of at most --max-probes measurements. The default text is\n"
                     "the held-out text of kvstream calibrate (WikiText-2 validation for SmolLM2 and other\n"
                     "models; the second half of TinyStories' validation file for llama2.c models), as many\n"
                     "windows as there; --check then scores every level on the windows kvstream rd uses\n"
                     "(WikiText-2 test; TinyStories' first windows) and prints the KL found there against its\n"
                     "target.\n\n" +
                         codec_list_help(),
                     options, vm))
    return std::nullopt;
  c.target_kl = parse_kl(o.kl);
  // Window defaults: the calibration text of `kvstream calibrate`, with the scoring protocol's
  // continuation; options given on the command line win.
  const eval::TextWindows defaults = eval::calibration_windows(o.model_name);
  apply_text_window_defaults(vm, o.model_name, q);
  if (!vm.count("text")) q.text_path = defaults.text_path;
  if (!vm.count("first-char")) q.first_char = defaults.first_char;
  if (!vm.count("context-tokens")) q.context_tokens = defaults.context_tokens;
  if (!vm.count("stride-chars")) q.stride_chars = defaults.stride_chars;
  if (!vm.count("windows")) q.contexts = defaults.contexts;
  if (q.contexts < 1 || o.check_windows < 1) throw po::error("--windows and --check-windows must be positive");
  if (c.max_probes < 1 || !(c.tolerance > 0)) throw po::error("--max-probes and --tolerance must be positive");
  if (!vm.count("name")) c.name = std::filesystem::path(o.out_path).stem().string();
  return o;
}

void print_level(const eval::CalibratedLevel& l, bool json) {
  const auto& m = l.measured;
  if (json) {
    std::cout << nlohmann::json{{"level", l.level}, {"target_kl", l.target_kl}, {"kl_mean", m.kl_mean},
                                {"ratio_vs_fp16", double(m.fp16_bytes) / double(m.bytes)}, {"knob", l.knob},
                                {"probes", l.probes}}
                     .dump()
              << std::endl;
    return;
  }
  std::cout << "level " << l.level << ": target KL " << l.target_kl << ", calibration KL " << m.kl_mean << " ("
            << double(m.fp16_bytes) / double(m.bytes) << "x smaller than fp16, " << l.probes << " probe(s), knob "
            << l.knob << ")" << std::endl;
}

int run(const Options& o) {
  const auto model = models::load_model(o.model_name, o.tokenizer);
  auto result = eval::calibrate_ladder(model, o.calibration, [&](const eval::CalibratedLevel& l) { print_level(l, o.json); });
  if (o.check) {
    eval::QualityOptions held_out = eval::quality_defaults(o.model_name);
    held_out.contexts = o.check_windows;
    const eval::QualityProbe probe(model, held_out);
    auto& record = result.ladder["calibration"];
    record["held_out"] = {{"text", held_out.text_path}, {"windows", held_out.contexts}};
    // The ladder as the codec will read it: from a scratch copy of the file about to be written.
    const auto scratch = std::filesystem::path(o.out_path).concat(".check");
    common::write_file_atomically(scratch, [&](std::ostream& out) { out << result.ladder.dump(1) << "\n"; });
    const std::string spec = o.calibration.codec + (o.calibration.codec.find(':') == std::string::npos ? ":" : ",") +
                             "ladder=" + scratch.string();
    const std::shared_ptr<const codec::Codec> codec = codec::make_codec(spec);
    std::filesystem::remove(scratch);
    for (auto& l : result.levels) {
      const auto m = probe.measure({codec, l.level}, /*greedy=*/false);
      const double ratio = m.kl_mean / l.target_kl;
      record["levels"][size_t(l.level - 1)]["held_out_kl"] = m.kl_mean;
      if (o.json)
        std::cout << nlohmann::json{{"level", l.level}, {"target_kl", l.target_kl}, {"held_out_kl", m.kl_mean},
                                    {"held_out_ratio", ratio}}.dump() << std::endl;
      else
        std::cout << "level " << l.level << " held out (" << held_out.text_path << ", " << held_out.contexts
                  << " windows): KL " << m.kl_mean << " = " << ratio << " x its target" << std::endl;
    }
  }
  common::write_file_atomically(o.out_path, [&](std::ostream& out) { out << result.ladder.dump(1) << "\n"; });
  if (!o.json) std::cout << o.out_path << ": ladder \"" << o.calibration.name << "\" of " << result.levels.size() << " level(s)\n";
  return 0;
}

}  // namespace

int calibrate_ladder_main(const std::vector<std::string>& args) { return parse_and_run<Options>(args, parse, run); }

}  // namespace kvstream::cli
