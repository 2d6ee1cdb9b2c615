// `kvstream codec-bench`: size, error and single-thread speed of codecs and levels (bench/codec_bench.h).
#include <iomanip>
#include <iostream>

#include "bench/codec_bench.h"
#include "cli/command.h"
#include "codec/cuda/device_info.h"

namespace kvstream::cli {
namespace {

struct Options {
  std::string kv_path;
  bench::CodecBenchOptions bench;
  bool json = false;
};

std::optional<Options> parse(const std::vector<std::string>& args) {
  Options o;
  po::options_description options("options");
  options.add_options()
    ("kv", po::value(&o.kv_path)->default_value("kv/stories260K_tinystories_4x512.safetensors"), "KV dump (every context is used)")
    ("codecs", po::value(&o.bench.codecs)->multitoken()->composing(), "codec specs (default: all baselines and CacheGen variants)")
    ("chunk-tokens", po::value(&o.bench.chunk_tokens)->default_value(512), "tokens per chunk")
    ("min-time", po::value(&o.bench.min_time_s)->default_value(0.3), "seconds to time each (codec, level) for")
    ("json", po::bool_switch(&o.json), "one JSON object per (codec, level) instead of a table");
  po::variables_map vm;
  if (!parse_or_help(args,
                     "usage: kvstream codec-bench [--kv IN.safetensors] [--codecs SPEC ...] [--chunk-tokens N] [--json]\n\n"
                     "Fields: codec, level, chunk_tokens, bytes, ratio_vs_fp16, ratio_vs_quant8 (quant:bits=8),\n"
                     "rel_mse = sum (x - x^)^2 / sum x^2, max_abs_err, encode_mb_s / decode_mb_s (MB/s of fp16 KV,\n"
                     "one thread), and for cachegen entropy (ac | rans) and ideal_bytes (same side info, payload at\n"
                     "exactly -log2 p bits).\n"
                     "cachegen:cdf=offline without table= builds its tables leave-one-out over the file's contexts.\n\n" +
                         codec_list_help(),
                     options, vm))
    return std::nullopt;
  if (o.bench.chunk_tokens <= 0) throw po::error("--chunk-tokens must be positive");
  return o;
}

void print_header(const Options& o, const codec::KvFile& kv) {
  std::cout << o.kv_path << ": " << kv.contexts.size() << " context(s), " << kv.contexts.front().shape().to_string()
            << "; " << codec::cuda_device_info().description << "\n"
            << std::left << std::setw(26) << "codec" << std::right << std::setw(6) << "level" << std::setw(10)
            << "bytes" << std::setw(8) << "x fp16" << std::setw(8) << "x q8" << std::setw(11) << "rel_mse"
            << std::setw(10) << "max_err" << std::setw(10) << "enc MB/s" << std::setw(10) << "dec MB/s"
            << std::setw(9) << "vs ideal" << std::setw(8) << "entropy" << "\n";
}

void print_row(const bench::CodecBenchRow& row) {
  std::cout << std::left << std::setw(26) << row.codec << std::right << std::setw(6) << row.level << std::setw(10)
            << row.bytes << std::fixed << std::setprecision(2) << std::setw(8) << double(row.fp16_bytes) / double(row.bytes)
            << std::setw(8) << double(row.quant8_bytes) / double(row.bytes) << std::scientific << std::setprecision(2)
            << std::setw(11) << row.rel_mse << std::setw(10) << row.max_abs_err << std::fixed << std::setprecision(1)
            << std::setw(10) << row.encode_mb_s << std::setw(10) << row.decode_mb_s;
  std::cout << std::setprecision(4) << std::setw(9);
  if (row.ideal_bytes) std::cout << double(row.bytes) / double(*row.ideal_bytes);
  else std::cout << "";
  std::cout << std::setw(8) << (row.entropy.empty() ? "-" : row.entropy) << std::defaultfloat << std::endl;
}

int run(const Options& o) {
  const auto kv = codec::load_kv(input_path(o.kv_path));
  if (!o.json) print_header(o, kv);
  bench::run_codec_bench(kv, o.bench, [&](const bench::CodecBenchRow& row) {
    if (o.json) std::cout << row.to_json().dump() << std::endl;
    else print_row(row);
  });
  return 0;
}

}  // namespace

int codec_bench_main(const std::vector<std::string>& args) { return parse_and_run<Options>(args, parse, run); }

}  // namespace kvstream::cli
