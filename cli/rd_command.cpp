// `kvstream rd`: rate–distortion curves of codecs on text windows and their BD-rate against CacheGen
// (eval/rate_distortion.h, docs/RATE_DISTORTION.md).
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <sstream>

#include "cli/command.h"
#include "cli/text_window_flags.h"
#include "codec/rate_sweep.h"
#include "common/atomic_file.h"
#include "eval/rate_distortion.h"
#include "experiments/figures.h"

namespace kvstream::cli {
namespace {

struct Options {
  std::string model_name, out_dir;
  bool json = false, no_figures = false;
  eval::RdOptions rd;
};

constexpr int kDefaultWindows = 8;

std::optional<Options> parse(const std::vector<std::string>& args) {
  Options o;
  eval::QualityOptions& q = o.rd.windows;
  std::string kl_range, calibration_text;
  po::options_description options("options");
  options.add_options()
    ("model", po::value(&o.model_name)->default_value("smollm2"), "stories260K, smollm2, a .gguf, a Hugging Face directory or a llama2.c .bin")
    ("codec", po::value(&o.rd.codecs)->multitoken()->composing(), "codec spec(s), one curve each (default: cachegen quant kivi)")
    ("kl-range", po::value(&kl_range), "LO,HI: the KL range of the BD-rate, within the range both curves cover (default: all of it)")
    ("json", po::bool_switch(&o.json), "one JSON object per point, then one per curve")
    ("out", po::value(&o.out_dir), "also write DIR/rd.jsonl (the --json lines) and draw DIR/figures/rd.png and .svg")
    ("no-figures", po::bool_switch(&o.no_figures), "with --out: do not call plotting/plot.py")
    ("windows", po::value(&q.contexts)->default_value(kDefaultWindows), "text windows scored")
    ("calibration-text", po::value(&calibration_text),
     "fit a `transform` spec without cal= on this text first (as kvstream calibrate; default windows of its own)");
  add_text_window_options(options, q);
  po::variables_map vm;
  if (!parse_or_help(args,
                     "usage: kvstream rd [--model M] [--text FILE] [--windows N] [--codec SPEC ...] [--kl-range LO,HI]\n"
                     "                   [--calibration-text FILE] [--json] [--out DIR [--no-figures]]\n\n"
                     "Rate-distortion curves: each codec spec is swept along its rate knob (a ladder's levels;\n"
                     "quant's bits 2..8 and KIVI's 2 and 4 when the spec leaves bits out; else its one setting)\n"
                     "and every point is scored as `kvstream quality` scores a level: bytes, KL, top-1\n"
                     "agreement and perplexity over the text windows (defaults follow the model as there,\n"
                     "with 8 windows). Each curve's BD-rate against cachegen (its default ladder, always\n"
                     "measured) is the mean log-bytes difference at equal KL over the KL range both cover\n"
                     "(piecewise-cubic interpolation of ln bytes over ln KL): -0.5 = half the bytes.\n\n"
                     "A `transform` spec without cal= is fitted first on --calibration-text (kvstream calibrate's\n"
                     "windows and defaults; give a text the scored one is held out from, e.g. WikiText-2 valid\n"
                     "when scoring test). Else it needs cal=M.kvcal.\n\n"
                     "--json: per point codec (the spec as given), point (e.g. bits=4, level=2), spec, level,\n"
                     "bytes, fp16_bytes, ratio_vs_fp16, kl_mean, top1_agree, ppl_ref, ppl, ppl_delta,\n"
                     "greedy_match_tokens; per curve codec, bd_rate_vs_cachegen (a fraction; null with a\n"
                     "reason when undefined, e.g. a lossless codec), kl_range [lo, hi]. --out DIR writes the\n"
                     "same lines to DIR/rd.jsonl and draws them (plotting/plot.py, kind rd).\n\n" +
                         codec_list_help(),
                     options, vm))
    return std::nullopt;
  apply_text_window_defaults(vm, o.model_name, q);
  q.greedy_tokens = eval::quality_defaults(o.model_name).greedy_tokens;
  if (o.rd.codecs.empty()) o.rd.codecs = {"cachegen", "quant", "kivi"};
  if (vm.count("calibration-text")) {
    // kvstream calibrate's windows for the model, from the start of a text other than its default.
    eval::TextWindows windows = eval::calibration_windows(o.model_name);
    if (calibration_text != windows.text_path) windows.first_char = 0;
    windows.text_path = calibration_text;
    if (calibration_text == q.text_path && windows.first_char < q.first_char + int64_t(q.contexts) * q.stride_chars)
      std::cerr << "kvstream rd: warning: the calibration text is the text scored, so the scores are not held out\n";
    o.rd.calibration = windows;
  }
  if (q.contexts < 1 || q.context_tokens < 1) throw po::error("--windows and --context-tokens must be positive");
  if (vm.count("kl-range")) {
    double lo = 0, hi = 0;
    char comma = 0, extra = 0;
    std::istringstream in(kl_range);
    if (!(in >> lo >> comma >> hi) || comma != ',' || (in >> extra) || !(lo > 0 && hi > lo && hi < 1e300))
      throw po::error("--kl-range must be LO,HI with 0 < LO < HI, got \"" + kl_range + "\"");
    o.rd.kl_range = std::pair{lo, hi};
  }
  return o;
}

std::string percent(double fraction) {
  char text[32];
  std::snprintf(text, sizeof text, "%+.1f %%", 100 * fraction);
  return text;
}

// DIR/rd.jsonl, written whole or not at all, then its figure (a figure that cannot be drawn is a
// warning: the measurements are kept).
void write_out(const std::filesystem::path& dir, const eval::RdResult& result, bool figures) {
  std::error_code error;
  std::filesystem::create_directories(dir, error);
  if (error) throw std::runtime_error(dir.string() + ": cannot create the output directory: " + error.message());
  common::write_file_atomically(dir / "rd.jsonl", [&](std::ostream& out) {
    for (const auto& point : result.points) out << point.to_json().dump() << "\n";
    for (const auto& curve : result.curves) out << curve.to_json().dump() << "\n";
  });
  std::string why;
  if (figures && !experiments::render_figures(dir, why)) std::cerr << "kvstream rd: warning: no figure: " << why << "\n";
}

int run(const Options& o) {
  for (const auto& spec : o.rd.codecs)  // bad specs fail before the model loads
    if (!o.rd.calibration || !codec::transform_needs_calibration(spec)) codec::rate_sweep(spec);
  const auto model = models::load_model(o.model_name, "");
  const auto result = eval::run_rd(model, o.rd, [&](const eval::RdMeasurement& p) {
    if (o.json) {
      std::cout << p.to_json().dump() << std::endl;
      return;
    }
    const auto& q = p.quality;
    std::cout << p.curve << " " << p.point << ": " << q.bytes << " B (" << double(q.fp16_bytes) / double(q.bytes)
              << "x), KL " << q.kl_mean << ", top-1 " << q.top1_agree << ", ppl " << q.ppl - q.ppl_ref << " vs fp16"
              << std::endl;
  });
  if (!o.out_dir.empty()) write_out(o.out_dir, result, !o.no_figures);
  for (const auto& curve : result.curves) {
    if (o.json) std::cout << curve.to_json().dump() << std::endl;
    else if (curve.bd)
      std::cout << curve.curve << ": BD-rate vs " << eval::kRdReferenceCodec << " " << percent(curve.bd->bd_rate)
                << " over KL [" << curve.bd->kl_lo << ", " << curve.bd->kl_hi << "]" << std::endl;
    else std::cout << curve.curve << ": no BD-rate: " << curve.no_bd_reason << std::endl;
  }
  return 0;
}

}  // namespace

int rd_main(const std::vector<std::string>& args) { return parse_and_run<Options>(args, parse, run); }

}  // namespace kvstream::cli
