// `kvstream decode`: a .kvs file back to a KV dump (safetensors).
#include <iostream>
#include <memory>

#include "cli/command.h"
#include "codec/cachegen/offline_cdf.h"
#include "codec/format/kv_dump.h"
#include "codec/format/kvs_file.h"
#include "codec/transform/transform_calibration.h"

namespace kvstream::cli {
namespace {

struct Options {
  std::string in_path, out_path;
  std::optional<codec::SourceDtype> dtype;  // empty: as encoded
  std::vector<std::string> tables;          // offline CDF tables the bitstreams reference
  std::vector<std::string> calibrations;    // transform calibrations they reference
  bool strict = true;                       // check the decoded values (codec/decoded_values.h)
};

std::optional<Options> parse(const std::vector<std::string>& args) {
  Options o;
  std::string dtype;
  po::options_description options("options");
  options.add_options()
    ("in", po::value(&o.in_path)->required(), "input .kvs file (also the first positional argument)")
    ("out", po::value(&o.out_path)->required(), "output safetensors file (written atomically)")
    ("dtype", po::value(&dtype)->default_value("source"), "output dtype: source (as encoded), f16, bf16 or f32")
    ("cdf-table", po::value(&o.tables)->composing(), "offline CDF table(s) the bitstreams reference (.kvcdf)")
    ("calibration", po::value(&o.calibrations)->composing(), "transform calibration(s) they reference (.kvcal)")
    ("no-strict", "skip the check that every decoded value is finite and fits the source dtype (to look at a\n"
                  "corrupt chunk's values; the container, CRC and payload checks still apply)");
  po::positional_options_description positional;
  positional.add("in", 1);
  po::variables_map vm;
  if (!parse_or_help(args,
                     "usage: kvstream decode IN.kvs --out OUT.safetensors [--cdf-table T.kvcdf] [--calibration M.kvcal]\n\n"
                     "Decodes every chunk of a .kvs file (codec/FORMAT.md). A file that is cut, or whose chunks are\n"
                     "not the ones its header records (one missing, duplicated or out of order), or a corrupt\n"
                     "chunk, is an error naming the file and where; nothing is written then. Decoding is strict:\n"
                     "a chunk whose CRC matches but which decodes to a NaN, an infinity or a value beyond the\n"
                     "source dtype's range (no encoder writes one) is an error too, and an encoder's rounding\n"
                     "just past the largest value is set back to it (codec/FORMAT.md §1).",
                     options, vm, &positional))
    return std::nullopt;
  o.strict = vm.count("no-strict") == 0;
  if (dtype == "f16") o.dtype = codec::SourceDtype::kFp16;
  else if (dtype == "bf16") o.dtype = codec::SourceDtype::kBf16;
  else if (dtype == "f32") o.dtype = codec::SourceDtype::kFp32;
  else if (dtype != "source") throw po::error("--dtype must be source, f16, bf16 or f32, got \"" + dtype + "\"");
  return o;
}

int run(const Options& o) {
  codec::DecodeContext context;
  context.strict = o.strict;
  for (const auto& t : o.tables)
    context.cdf_tables.push_back(std::make_shared<codec::OfflineCdfTable>(codec::OfflineCdfTable::load(input_path(t))));
  for (const auto& c : o.calibrations)
    context.transform_calibrations.push_back(
        std::make_shared<codec::TransformCalibration>(codec::TransformCalibration::load(input_path(c))));
  const auto decoded = codec::decode_kvs(input_path(o.in_path), context);
  const codec::SourceDtype dtype = o.dtype.value_or(decoded.dtype);
  codec::save_kv(o.out_path, decoded.kv, dtype, {{"decoded_from", o.in_path}, {"t0", std::to_string(decoded.t0)}});
  std::cout << o.out_path << ": " << decoded.kv.shape().to_string() << " from " << decoded.chunks << " chunk(s), "
            << codec::dtype_name(dtype) << "\n";
  return 0;
}

}  // namespace

int decode_main(const std::vector<std::string>& args) { return parse_and_run<Options>(args, parse, run); }

}  // namespace kvstream::cli
