// gpu_prefill: measured prefill profiles of large architectures on a GPU, for the simulator (README
// "Prefill timing profiles"). For each architecture it builds a model with random weights (timing
// does not depend on values) directly on the device in the chosen dtype, with as many layers as fit
// in the device's free memory, times it over the grid (profiling/prefill_profiler.h: warm-up, median,
// scaled to the full depth) and writes <device slug>_<architecture>.json into --out-dir.
//
// It needs only LibTorch and the header-only nlohmann/json and Eigen, so that a GPU machine with
// nothing but a CUDA PyTorch, CMake and a compiler builds it (profiling/gpu_prefill/CMakeLists.txt,
// driven by scripts/gpu-prefill.sh); the main build builds it too, for its CPU test.
#include <filesystem>
#include <iostream>
#include <stdexcept>
#include <string>
#include <vector>

#include "common/atomic_file.h"
#include "models/architecture_table.h"
#include "models/device_query.h"
#include "models/random_model.h"
#include "profiling/prefill_profiler.h"

namespace {

using namespace kvstream;

constexpr const char* kUsage =
    "usage: gpu_prefill --out-dir DIR [--device cuda|cpu] [--dtype bf16|fp16|fp32] [--arch NAME]...\n"
    "                   [--prefix P,...] [--chunk N,...] [--reps R] [--layers K] [--slug NAME]\n"
    "\n"
    "Times prefill of n chunk tokens after p prefix tokens for each architecture (random weights) and\n"
    "writes the hardware profile <slug>_<arch>.json (kind \"measured\") into DIR.\n"
    "  --device   cuda (default) or cpu\n"
    "  --dtype    bf16 (default), fp16 or fp32\n"
    "  --arch     an architecture, repeatable (default: mistral-7b and llama-2-70b)\n"
    "  --prefix   prefix tokens p (default 0,1500,6000,15000: the grid of the analytic profiles)\n"
    "  --chunk    chunk tokens n (default 100,500,1500); points beyond an architecture's context are skipped\n"
    "  --reps     timed repetitions per point, median taken after one warm-up (default 3)\n"
    "  --layers   time this many layers and scale to the full depth (default 0: as many as fit in the\n"
    "             device's free memory)\n"
    "  --slug     the device part of the file names (default: from the device name, e.g. h200; cpu on the CPU)\n";

struct Options {
  std::filesystem::path out_dir;
  torch::Device device = torch::kCUDA;
  torch::ScalarType dtype = torch::kBFloat16;
  std::vector<std::string> archs;
  profiling::ProfileGrid grid;
  int layers = 0;
  std::string slug;
};

std::vector<int64_t> parse_list(const std::string& option, const std::string& text, int64_t minimum) {
  std::vector<int64_t> values;
  size_t start = 0;
  while (start <= text.size()) {
    const size_t end = std::min(text.find(',', start), text.size());
    const std::string item = text.substr(start, end - start);
    size_t used = 0;
    int64_t value = 0;
    try {
      value = std::stoll(item, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (item.empty() || used != item.size() || value < minimum)
      throw std::invalid_argument(option + ": \"" + item + "\" is not an integer >= " + std::to_string(minimum));
    values.push_back(value);
    start = end + 1;
  }
  return values;
}

// Throws std::invalid_argument on bad usage; returns false after printing the help.
bool parse(int argc, char** argv, Options& o) {
  o.grid.prefix_tokens = {0, 1500, 6000, 15000};
  o.grid.chunk_tokens = {100, 500, 1500};
  for (int i = 1; i < argc; ++i) {
    const std::string option = argv[i];
    if (option == "--help" || option == "-h") {
      std::cout << kUsage;
      return false;
    }
    if (i + 1 >= argc) throw std::invalid_argument(option + " needs a value (or unknown option)");
    const std::string value = argv[++i];
    if (option == "--out-dir") o.out_dir = value;
    else if (option == "--device" && (value == "cuda" || value == "cpu")) o.device = value == "cuda" ? torch::kCUDA : torch::kCPU;
    else if (option == "--device") throw std::invalid_argument("--device must be cuda or cpu, got \"" + value + "\"");
    else if (option == "--dtype") o.dtype = profiling::parse_dtype(value);
    else if (option == "--arch") o.archs.push_back(models::architecture(value).name);
    else if (option == "--prefix") o.grid.prefix_tokens = parse_list(option, value, 0);
    else if (option == "--chunk") o.grid.chunk_tokens = parse_list(option, value, 1);
    else if (option == "--reps") o.grid.repetitions = int(parse_list(option, value, 1).at(0));
    else if (option == "--layers") o.layers = int(parse_list(option, value, 0).at(0));
    else if (option == "--slug") o.slug = value;
    else throw std::invalid_argument("unknown option " + option);
  }
  if (o.out_dir.empty()) throw std::invalid_argument("--out-dir is required");
  if (o.archs.empty()) o.archs = {"mistral-7b", "llama-2-70b"};
  return true;
}

int run(const Options& o) {
  if (o.device.is_cuda() && !torch::cuda::is_available())
    throw std::runtime_error("--device cuda: LibTorch sees no CUDA device (a CPU-only LibTorch, or no GPU visible)");
  // Queried once, before any model: the caching allocator keeps one model's memory for the next.
  const models::DeviceInfo device = models::query_device(o.device);
  const std::string slug = !o.slug.empty() ? o.slug : o.device.is_cpu() ? "cpu" : profiling::device_slug(device.name);
  std::cout << "gpu_prefill: " << device.name << ", " << (device.free_bytes >> 20) << " MiB free; "
            << profiling::dtype_name(o.dtype) << "; profiles go to " << o.out_dir.string() << std::endl;
  std::filesystem::create_directories(o.out_dir);
  for (const auto& arch : o.archs) {
    const auto config = models::architecture(arch);
    const int layers = o.layers > 0 ? std::min(o.layers, config.n_layers)
                                    : profiling::layers_that_fit(config, o.grid, o.dtype, device.free_bytes);
    std::cout << arch << ": timing " << layers << " of " << config.n_layers << " layers" << std::endl;
    const auto model = models::random_model(config, 1, layers, torch::TensorOptions().device(o.device).dtype(o.dtype));
    const auto profile = profiling::measured_prefill_profile(model, o.grid, config.n_layers, "random weights");
    const auto path = o.out_dir / (slug + "_" + arch + ".json");
    common::write_file_atomically(path, [&](std::ostream& out) { out << profile.dump(2) << "\n"; });
    const auto& fit = profile["prefill_cost_model"];
    std::cout << path.string() << ": " << profile["points"].size() << " points; a = " << fit["a"].get<double>()
              << " s, b = " << fit["b"].get<double>() << " s/token, c = " << fit["c"].get<double>()
              << " s/token^2, rms relative error " << fit["rms_relative_error"].get<double>() << std::endl;
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  Options options;
  try {
    if (!parse(argc, argv, options)) return 0;
  } catch (const std::exception& e) {
    std::cerr << "gpu_prefill: " << e.what() << "\n" << kUsage;
    return 2;
  }
  try {
    return run(options);
  } catch (const std::exception& e) {
    std::cerr << "gpu_prefill: error: " << e.what() << "\n";
    return 1;
  }
}
