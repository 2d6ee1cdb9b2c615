// `kvstream profile-prefill`: prefill timed over a (prefix, chunk) grid, or computed analytically, and
// fitted to the simulator's cost model (profiling/prefill_cost.h, profiling/prefill_profiler.h).
#include <algorithm>
#include <iostream>

#include "cli/command.h"
#include "common/atomic_file.h"
#include "models/architecture_table.h"
#include "models/model_catalog.h"
#include "models/random_model.h"
#include "profiling/prefill_profiler.h"

namespace kvstream::cli {
namespace {

struct Options {
  std::string model_name, arch, device_name, dtype_name, analytic, out_path;
  int layers = 0;
  profiling::ProfileGrid grid;
};

std::optional<Options> parse(const std::vector<std::string>& args) {
  Options o;
  std::string prefix, chunk;
  po::options_description options("options");
  options.add_options()
    ("model", po::value(&o.model_name)->default_value(""), "a model with real weights (see kvstream quality --help)")
    ("arch", po::value(&o.arch)->default_value(""), "or a named architecture with random weights")
    ("layers", po::value(&o.layers)->default_value(0), "time only this many layers and scale to the full depth (--arch)")
    ("device", po::value(&o.device_name)->default_value("cpu"), "cpu, or cuda (a CUDA-enabled LibTorch and a visible GPU)")
    ("dtype", po::value(&o.dtype_name)->default_value("fp32"), "fp32, bf16 or fp16: the weights, KV and activations (not --analytic)")
    ("analytic", po::value(&o.analytic)->default_value(""), "no timing: FLOPs / (peak x efficiency) of a40, a100 or h100 (--arch)")
    ("prefix", po::value(&prefix)->default_value("0,128,512"), "prefix tokens p, comma-separated")
    ("chunk", po::value(&chunk)->default_value("16,64,256"), "chunk tokens n, comma-separated")
    ("reps", po::value(&o.grid.repetitions)->default_value(3), "timed repetitions per point (median), after one warm-up")
    ("out", po::value(&o.out_path)->required(), "hardware profile JSON (written atomically)");
  po::variables_map vm;
  if (!parse_or_help(args,
                     "usage: kvstream profile-prefill (--model M | --arch NAME [--layers K] | --arch NAME --analytic GPU)\n"
                     "                                [--device cpu|cuda] [--dtype fp32|bf16|fp16] [--prefix P,...] [--chunk N,...]\n"
                     "                                --out PROFILE.json\n\n"
                     "Fits seconds = a + b*n + c*n*(p + n/2) and stores it with the raw points. A measured profile's\n"
                     "device names the CPU or GPU and the dtype, e.g. \"NVIDIA H200 (bf16)\".\narchitectures: " +
                         models::architecture_list(),
                     options, vm))
    return std::nullopt;
  if (o.model_name.empty() == o.arch.empty()) throw po::error("give exactly one of --model and --arch");
  if (o.grid.repetitions < 1) throw po::error("--reps must be positive");
  o.grid.prefix_tokens = parse_int_list("prefix", prefix, 0);
  o.grid.chunk_tokens = parse_int_list("chunk", chunk, 1);
  if (!o.analytic.empty()) {
    if (o.arch.empty()) throw po::error("--analytic needs --arch");
    const auto& gpus = profiling::analytic_gpus();
    if (std::none_of(gpus.begin(), gpus.end(), [&](const auto& g) { return g.name == o.analytic; }))
      throw po::error("--analytic must be a40, a100 or h100, got \"" + o.analytic + "\"");
    return o;
  }
  if (o.device_name != "cpu" && o.device_name != "cuda") throw po::error("--device must be cpu or cuda");
  try {
    profiling::parse_dtype(o.dtype_name);
  } catch (const std::invalid_argument& e) {
    throw po::error(std::string("--") + e.what());  // bad usage: exit 2
  }
  return o;
}

nlohmann::json analytic_profile(const Options& o) {
  const auto& gpus = profiling::analytic_gpus();
  const auto gpu = *std::find_if(gpus.begin(), gpus.end(), [&](const auto& g) { return g.name == o.analytic; });
  const auto config = models::architecture(o.arch);
  return profiling::prefill_profile_json("analytic", gpu.name, config, 0, profiling::analytic_prefill(config, gpu, o.grid),
                                         "analytic: FLOPs / (" + std::to_string(gpu.peak_flops / 1e12) +
                                             " TFLOP/s dense fp16 peak x " + std::to_string(gpu.efficiency) +
                                             " efficiency); not measured");
}

nlohmann::json measured_profile(const Options& o) {
  if (o.device_name == "cuda" && !torch::cuda::is_available())
    throw std::runtime_error("--device cuda: LibTorch sees no CUDA device (this LibTorch may be CPU-only)");
  const auto tensor_options =
      torch::TensorOptions()
          .device(o.device_name == "cuda" ? torch::Device(torch::kCUDA) : torch::Device(torch::kCPU))
          .dtype(profiling::parse_dtype(o.dtype_name));
  std::unique_ptr<models::LlamaModel> model;
  int full_layers = 0;
  if (!o.arch.empty()) {
    const auto config = models::architecture(o.arch);
    full_layers = config.n_layers;
    model = std::make_unique<models::LlamaModel>(models::random_model(config, 1, o.layers, tensor_options));
  } else {
    model = std::move(models::load_model(o.model_name).model);
    full_layers = model->config().n_layers;
    model->to(tensor_options);
  }
  return profiling::measured_prefill_profile(*model, o.grid, full_layers, o.arch.empty() ? "real weights" : "random weights");
}

int run(const Options& o) {
  const nlohmann::json profile = o.analytic.empty() ? measured_profile(o) : analytic_profile(o);
  common::write_file_atomically(o.out_path, [&](std::ostream& out) { out << profile.dump(2) << "\n"; });
  const auto& fit = profile["prefill_cost_model"];
  std::cout << o.out_path << ": " << profile["points"].size() << " points; a = " << fit["a"].get<double>()
            << " s, b = " << fit["b"].get<double>() << " s/token, c = " << fit["c"].get<double>()
            << " s/token^2, rms relative error " << fit["rms_relative_error"].get<double>() << "\n";
  return 0;
}

}  // namespace

int profile_prefill_main(const std::vector<std::string>& args) { return parse_and_run<Options>(args, parse, run); }

}  // namespace kvstream::cli
