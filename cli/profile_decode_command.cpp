// `kvstream profile-decode`: a hardware profile's "decode" section (sim/hardware_profile.h), the
// throughput of a decoder per codec and level, measured on this CPU with codec-bench's code or taken
// from a file measured elsewhere (scripts/gpu-check.sh on a GPU).
#include <cstdio>
#include <iomanip>
#include <iostream>
#include <map>
#include <utility>

#include "bench/codec_bench.h"
#include "cli/command.h"
#include "codec/codec.h"
#include "common/atomic_file.h"
#include "common/json_reader.h"
#include "experiments/build_info.h"
#include "profiling/shipped_profiles.h"
#include "sim/hardware_profile.h"

namespace kvstream::cli {
namespace {

struct Options {
  std::string hardware_arg, out_path, from_path, kv_path;
  bench::CodecBenchOptions bench;
  std::map<std::string, std::string> name_of_spec;  // --codecs NAME=SPEC: SPEC's entries are recorded as NAME
};

// "NAME=SPEC" (an '=' before any ':'): the name a config gives the codec, e.g. "transform" for the
// transform codec fitted to a model, whose measured spec names a calibration file. Else no name.
std::pair<std::string, std::string> split_named_spec(const std::string& arg) {
  const size_t eq = arg.find('='), colon = arg.find(':');
  if (eq == std::string::npos || (colon != std::string::npos && colon < eq)) return {"", arg};
  if (eq == 0 || eq + 1 == arg.size())
    throw po::error("--codecs " + arg + ": expected NAME=SPEC with a name and a spec");
  return {arg.substr(0, eq), arg.substr(eq + 1)};
}

std::optional<Options> parse(const std::vector<std::string>& args) {
  Options o;
  po::options_description options("options");
  options.add_options()
    ("hardware", po::value(&o.hardware_arg)->required(), "hardware profile to add the decode section to (a path, or a shipped name such as cpu_stories260K)")
    ("out", po::value(&o.out_path), "where to write the profile (written atomically; default: over --hardware)")
    ("from", po::value(&o.from_path), "take the decode section from this JSON file (e.g. scripts/gpu-check.sh's) instead of measuring")
    ("kv", po::value(&o.kv_path)->default_value("kv/stories260K_tinystories_4x512.safetensors"), "KV dump to decode (every context is used)")
    ("codecs", po::value(&o.bench.codecs)->multitoken()->composing(), "codec specs (default: codec-bench's list); NAME=SPEC records SPEC's throughputs as codec NAME")
    ("chunk-tokens", po::value(&o.bench.chunk_tokens)->default_value(512), "tokens per chunk")
    ("min-time", po::value(&o.bench.min_time_s)->default_value(0.3), "seconds to time each (codec, level) for");
  po::variables_map vm;
  if (!parse_or_help(args,
                     "usage: kvstream profile-decode --hardware PROFILE [--out NEW.json]\n"
                     "                               [--kv IN.safetensors] [--codecs SPEC ...] [--chunk-tokens N] [--min-time S]\n"
                     "       kvstream profile-decode --hardware PROFILE [--out NEW.json] --from DECODE.json\n\n"
                     "Writes the profile's \"decode\" section (replacing any earlier one), which config decode \"hardware\"\n"
                     "times every level's decode from (experiments/SCHEMA.md section 4):\n"
                     "  {\"source\", \"device\", \"throughputs\": [{\"codec\", \"level\", \"fp16_bytes_per_s\"}, ...]}\n"
                     "Measuring runs codec-bench's measurement on this CPU, one thread: fp16 KV bytes delivered per\n"
                     "second per (codec, level); codec is the spec as codec-bench prints it (options sorted, e.g.\n"
                     "zstd:level=3), level its level (1 for a single-level codec). --from takes a file holding that\n"
                     "object, or an object with a \"decode\" member (another hardware profile).\n"
                     "A config names the transform codec fitted to its model \"transform\": measure it as\n"
                     "--codecs transform=transform:cal=M.kvcal so that its levels are found under that name.\n\n" +
                         codec_list_help(),
                     options, vm))
    return std::nullopt;
  const bool measure_options = !vm["kv"].defaulted() || vm.count("codecs") || !vm["chunk-tokens"].defaulted() ||
                               !vm["min-time"].defaulted();
  if (!o.from_path.empty() && measure_options)
    throw po::error("--from takes the decode section from a file: it measures nothing, so give no --kv, "
                    "--codecs, --chunk-tokens or --min-time with it");
  if (o.bench.chunk_tokens <= 0) throw po::error("--chunk-tokens must be positive");
  for (auto& spec : o.bench.codecs) {
    auto [name, measured] = split_named_spec(spec);
    spec = measured;
    if (!name.empty()) o.name_of_spec[codec::make_codec(spec)->spec()] = name;
  }
  if (!(o.bench.min_time_s >= 0)) throw po::error("--min-time must be >= 0");
  return o;
}

// This CPU's single-thread decode throughputs: codec-bench's measurement, one entry per row.
sim::DecodeThroughputs measure_cpu_decode(const std::string& kv_arg, const bench::CodecBenchOptions& bench,
                                          const std::map<std::string, std::string>& name_of_spec) {
  const auto kv = codec::load_kv(input_path(kv_arg));
  const auto host = experiments::build_and_host_info();
  std::string cpu = host.at("cpu").get<std::string>();
  if (cpu.empty()) cpu = "unknown CPU";
  char min_time[32];
  std::snprintf(min_time, sizeof min_time, "%g", bench.min_time_s);
  sim::DecodeThroughputs decode;
  decode.device = "cpu: " + cpu;
  decode.source = "measured: kvstream profile-decode on " + cpu + ", 1 thread, " + kv_arg + " (" +
                  std::to_string(kv.contexts.size()) + " contexts), chunk " + std::to_string(bench.chunk_tokens) +
                  " tokens, min-time " + min_time + " s, " + experiments::utc_date() + ", git " +
                  host.at("git_revision").get<std::string>();
  for (const auto& [spec, name] : name_of_spec) decode.source += "; codec " + name + " is " + spec;
  bench::run_codec_bench(kv, bench, [&](const bench::CodecBenchRow& row) {
    const auto named = name_of_spec.find(row.codec);
    const std::string codec = named == name_of_spec.end() ? row.codec : named->second;
    // decode_mb_s is fp16 MB (1e6 bytes) delivered per second.
    decode.throughputs.push_back({codec, row.level, row.decode_mb_s * 1e6});
    std::cout << std::left << std::setw(26) << codec << std::right << " level " << row.level << ": decode "
              << std::fixed << std::setprecision(1) << row.decode_mb_s << std::defaultfloat << " MB/s of fp16 KV"
              << std::endl;
  });
  return decode;
}

// A decode section produced elsewhere (scripts/gpu-check.sh): a file holding the decode object
// itself, or any JSON object with a "decode" member (e.g. another hardware profile).
sim::DecodeThroughputs read_decode_file(const std::string& path) {
  const nlohmann::json json = common::read_json_file(path);
  if (json.is_object() && json.contains("decode")) return sim::decode_throughputs_from_json(json["decode"], path, "$.decode");
  return sim::decode_throughputs_from_json(json, path);
}

int run(const Options& o) {
  const std::string hardware_path = profiling::resolve_hardware_profile(o.hardware_arg);
  nlohmann::json profile = common::read_json_file(hardware_path);
  sim::hardware_profile_from_json(profile, hardware_path);  // refuse to extend a profile the simulator rejects
  const sim::DecodeThroughputs decode =
      o.from_path.empty() ? measure_cpu_decode(o.kv_path, o.bench, o.name_of_spec) : read_decode_file(input_path(o.from_path));
  profile["decode"] = sim::to_json(decode);
  const std::string out_path = o.out_path.empty() ? hardware_path : o.out_path;
  common::write_file_atomically(out_path, [&](std::ostream& out) { out << profile.dump(2) << "\n"; });
  std::cout << out_path << ": decode section with " << decode.throughputs.size() << " throughput(s) on " << decode.device
            << "; source: " << decode.source << "\n";
  return 0;
}

}  // namespace

int profile_decode_main(const std::vector<std::string>& args) { return parse_and_run<Options>(args, parse, run); }

}  // namespace kvstream::cli
