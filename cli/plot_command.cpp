// `kvstream plot DIR`: a result directory's figures drawn again (plotting/plot.py), e.g. after a
// change to the plotting, in other kinds or formats (PDF for a paper).
#include <iostream>

#include "cli/command.h"
#include "experiments/figures.h"

namespace kvstream::cli {
namespace {

struct Options {
  std::string dir;
  std::vector<std::string> kinds, formats;
  std::string width;
};

std::optional<Options> parse(const std::vector<std::string>& args) {
  Options o;
  po::options_description options("options");
  options.add_options()
    ("dir", po::value(&o.dir)->required(), "a result directory of kvstream run, merge, fidelity or rd --out")
    ("kind", po::value(&o.kinds)->multitoken(),
     "figure kinds (default: every kind the directory has data for): size_quality, ttft_vs_bandwidth, "
     "violation_vs_quality, ttft_cdf, ttft_vs_load, fidelity, rd")
    ("format", po::value(&o.formats)->multitoken(), "image formats: png, svg, pdf (default png svg)")
    ("width", po::value(&o.width), "a paper's width with 8 pt text: column (3.33 in, panels stacked) or page (7 in); "
                                   "default 4.8 in per panel");
  po::positional_options_description positional;
  positional.add("dir", 1);
  po::variables_map vm;
  if (!parse_or_help(args,
                     "usage: kvstream plot DIR [--kind K ...] [--format png|svg|pdf ...] [--width column|page]\n\n"
                     "Draws DIR's figures into DIR/figures/<kind>.<format> with plotting/plot.py (matplotlib;\n"
                     "$KVSTREAM_PYTHON, else /usr/bin/python3) and prints each file written. Colours follow\n"
                     "the policies and markers their ladders, the same in every figure of DIR; labels that\n"
                     "would overlap are left out (plotting/README.md).",
                     options, vm, &positional))
    return std::nullopt;
  return o;
}

int run(const Options& o) {
  std::string error, written;
  if (!experiments::render_figures(o.dir, error, o.kinds, o.formats, o.width, &written)) throw std::runtime_error(error);
  std::cout << written;
  return 0;
}

}  // namespace

int plot_main(const std::vector<std::string>& args) { return parse_and_run<Options>(args, parse, run); }

}  // namespace kvstream::cli
