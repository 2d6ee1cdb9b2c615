#include <iostream>

#include "cli/command.h"
#include "common/atomic_file.h"
#include "models/architecture_table.h"
#include "models/random_model.h"
#include "models/model_catalog.h"
#include "profiling/prefill_profiler.h"

namespace kvstream::cli {

Command profile_prefill_command() {
  return {"profile-prefill", "time prefill over a (prefix, chunk) grid and fit the simulator's cost model",
          [](const std::vector<std::string>& args) {
            std::string model_name, arch, device_name, dtype_name, analytic, prefix, chunk, out_path;
            int layers = 0, reps = 3;
            po::options_description options("options");
            options.add_options()
              ("model", po::value(&model_name)->default_value(""), "a model with real weights (see kvstream quality --help)")
              ("arch", po::value(&arch)->default_value(""), "or a named architecture with random weights")
              ("layers", po::value(&layers)->default_value(0), "time only this many layers and scale to the full depth (--arch)")
              ("device", po::value(&device_name)->default_value("cpu"), "cpu, or cuda (a CUDA-enabled LibTorch and a visible GPU)")
              ("dtype", po::value(&dtype_name)->default_value("fp32"), "fp32, bf16 or fp16: the weights, KV and activations (not --analytic)")
              ("analytic", po::value(&analytic)->default_value(""), "no timing: FLOPs / (peak x efficiency) of a40, a100 or h100 (--arch)")
              ("prefix", po::value(&prefix)->default_value("0,128,512"), "prefix tokens p, comma-separated")
              ("chunk", po::value(&chunk)->default_value("16,64,256"), "chunk tokens n, comma-separated")
              ("reps", po::value(&reps)->default_value(3), "timed repetitions per point (median), after one warm-up")
              ("out", po::value(&out_path)->required(), "hardware profile JSON (written atomically)");
            po::variables_map vm;
            if (!parse_or_help(args,
                               "usage: kvstream profile-prefill (--model M | --arch NAME [--layers K] | --arch NAME --analytic GPU)\n"
                               "                                [--device cpu|cuda] [--dtype fp32|bf16|fp16] [--prefix P,...] [--chunk N,...]\n"
                               "                                --out PROFILE.json\n\n"
                               "Fits seconds = a + b*n + c*n*(p + n/2) and stores it with the raw points. A measured profile's\n"
                               "device names the CPU or GPU and the dtype, e.g. \"NVIDIA H200 (bf16)\".\narchitectures: " + models::architecture_list(),
                               options, vm))
              return 0;
            if (model_name.empty() == arch.empty()) throw po::error("give exactly one of --model and --arch");
            if (reps < 1) throw po::error("--reps must be positive");
            profiling::ProfileGrid grid;
            grid.prefix_tokens = parse_int_list("prefix", prefix, 0);
            grid.chunk_tokens = parse_int_list("chunk", chunk, 1);
            grid.repetitions = reps;
            nlohmann::json profile;
            if (!analytic.empty()) {
              if (arch.empty()) throw po::error("--analytic needs --arch");
              const auto& gpus = profiling::analytic_gpus();
              const auto gpu = std::find_if(gpus.begin(), gpus.end(), [&](const auto& g) { return g.name == analytic; });
              if (gpu == gpus.end()) throw po::error("--analytic must be a40, a100 or h100, got \"" + analytic + "\"");
              const auto config = models::architecture(arch);
              profile = profiling::prefill_profile_json(
                  "analytic", gpu->name, config, 0, profiling::analytic_prefill(config, *gpu, grid),
                  "analytic: FLOPs / (" + std::to_string(gpu->peak_flops / 1e12) + " TFLOP/s dense fp16 peak x " +
                      std::to_string(gpu->efficiency) + " efficiency); not measured");
            } else {
              if (device_name != "cpu" && device_name != "cuda") throw po::error("--device must be cpu or cuda");
              if (device_name == "cuda" && !torch::cuda::is_available())
                throw std::runtime_error("--device cuda: LibTorch sees no CUDA device (this LibTorch may be CPU-only)");
              const torch::ScalarType dtype = [&] {
                try {
                  return profiling::parse_dtype(dtype_name);
                } catch (const std::invalid_argument& e) {
                  throw po::error(std::string("--") + e.what());  // bad usage: exit 2
                }
              }();
              const auto tensor_options = torch::TensorOptions()
                                       .device(device_name == "cuda" ? torch::Device(torch::kCUDA) : torch::Device(torch::kCPU))
                                       .dtype(dtype);
              std::unique_ptr<models::LlamaModel> model;
              int full_layers = 0;
              if (!arch.empty()) {
                const auto config = models::architecture(arch);
                full_layers = config.n_layers;
                model = std::make_unique<models::LlamaModel>(models::random_model(config, 1, layers, tensor_options));
              } else {
                model = std::move(models::load_model(model_name).model);
                full_layers = model->config().n_layers;
                model->to(tensor_options);
              }
              profile = profiling::measured_prefill_profile(*model, grid, full_layers,
                                                              arch.empty() ? "real weights" : "random weights");
            }
            common::write_file_atomically(out_path, [&](std::ostream& out) { out << profile.dump(2) << "\n"; });
            const auto& fit = profile["prefill_cost_model"];
            std::cout << out_path << ": " << profile["points"].size() << " points; a = " << fit["a"].get<double>()
                      << " s, b = " << fit["b"].get<double>() << " s/token, c = " << fit["c"].get<double>()
                      << " s/token^2, rms relative error " << fit["rms_relative_error"].get<double>() << "\n";
            return 0;
          }};
}

}  // namespace kvstream::cli
