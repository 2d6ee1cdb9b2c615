// The prefill cost model: the fit recovers known coefficients, the analytic profile follows its
// FLOP formula, a measured profile of stories260K is complete and positive, in bf16 too; the layers
// that fit in a device's memory; `kvstream profile-prefill --dtype/--device` and the gpu_prefill
// tool (on the CPU here) write profiles the simulator reads.
#include <gtest/gtest.h>

#include "models/architecture_table.h"
#include "models/model_catalog.h"
#include "models/random_model.h"
#include "profiling/prefill_profiler.h"
#include "sim/hardware_profile.h"
#include "tests/cli/cli_test.h"

namespace kvstream::profiling {
namespace {

TEST(PrefillProfiler, FitRecoversKnownCoefficients) {
  const PrefillCostModel truth{0.002, 3e-4, 5e-8, 0};
  std::vector<PrefillPoint> points;
  for (int64_t p : {0, 500, 2000})
    for (int64_t n : {10, 100, 1000}) points.push_back({p, n, truth.seconds(double(p), double(n))});
  const auto fit = fit_prefill_cost(points);
  EXPECT_NEAR(fit.a, truth.a, 1e-9);
  EXPECT_NEAR(fit.b, truth.b, 1e-11);
  EXPECT_NEAR(fit.c, truth.c, 1e-14);
  EXPECT_LT(fit.rms_relative_error, 1e-9);
  EXPECT_THROW(fit_prefill_cost({points[0], points[1]}), std::invalid_argument);

  // Timing noise that would make the attention term negative leaves it at 0 instead.
  std::vector<PrefillPoint> noisy;
  for (int64_t p : {0, 500, 2000})
    for (int64_t n : {10, 100, 1000}) noisy.push_back({p, n, (0.002 + 3e-4 * double(n)) * (p == 2000 ? 0.97 : 1.0)});
  const auto clamped = fit_prefill_cost(noisy);
  EXPECT_EQ(clamped.c, 0);
  EXPECT_GT(clamped.a, 0);
  EXPECT_NEAR(clamped.b, 3e-4, 2e-5);
}

TEST(PrefillProfiler, AnalyticProfileFollowsTheFlopCount) {
  const auto config = models::architecture("mistral-7b");
  const GpuSpec gpu{"test", 100e12, 0.5};
  ProfileGrid grid;
  grid.prefix_tokens = {0, 1000};
  grid.chunk_tokens = {100};
  const auto points = analytic_prefill(config, gpu, grid);
  ASSERT_EQ(points.size(), 2u);
  // 32 layers x 2 x 100 tokens x ~218M weights per layer / 50 TFLOP/s ~ 28 ms without a prefix.
  EXPECT_NEAR(points[0].seconds, 0.028, 0.002);
  // The prefix adds 32 x 4 x 100 x 1000 x 4096 FLOPs of attention.
  EXPECT_NEAR(points[1].seconds - points[0].seconds, 32 * 4.0 * 100 * 1000 * 4096 / 50e12, 1e-6);
  EXPECT_THROW(models::architecture("gpt-5"), std::invalid_argument);
}

TEST(PrefillProfiler, MeasuredProfileOfStories260K) {
  const auto model = models::load_model("stories260K");
  ProfileGrid grid;
  grid.prefix_tokens = {0, 128, 480};
  grid.chunk_tokens = {8, 64};
  grid.repetitions = 1;
  const auto points = measure_prefill(*model.model, grid, model.model->config().n_layers);
  EXPECT_EQ(points.size(), 5u);  // 480 + 64 > 512 is skipped
  for (const auto& p : points) EXPECT_GT(p.seconds, 0);
  const auto json = prefill_profile_json("measured", "cpu", model.model->config(), 5, points, "test");
  EXPECT_EQ(json["points"].size(), 5u);
  EXPECT_TRUE(json["prefill_cost_model"].contains("c"));
}

TEST(PrefillProfiler, MeasuredBf16ProfileSaysSo) {
  const auto config = models::architecture("stories260K");
  const auto model = models::random_model(config, 1, 2, torch::TensorOptions().dtype(torch::kBFloat16));
  ProfileGrid grid;
  grid.prefix_tokens = {0, 64};
  grid.chunk_tokens = {8, 32};
  grid.repetitions = 1;
  const auto json = measured_prefill_profile(model, grid, config.n_layers, "random weights");
  const auto profile = sim::hardware_profile_from_json(json);
  EXPECT_EQ(profile.kind, "measured");
  EXPECT_EQ(profile.model, "stories260K");
  EXPECT_EQ(profile.device.rfind("cpu: ", 0), 0u) << profile.device;
  EXPECT_NE(profile.device.find("(bf16)"), std::string::npos) << profile.device;
  EXPECT_EQ(json["layers_timed"], 2);
  EXPECT_EQ(json["architecture"]["layers"], 5);
  const std::string notes = json["notes"];
  EXPECT_NE(notes.find("random weights; bf16 on cpu; timed 2 of 5 layers and scaled by 5/2"), std::string::npos) << notes;
}

TEST(PrefillProfiler, DtypeNames) {
  for (const char* name : {"fp32", "bf16", "fp16"}) EXPECT_EQ(dtype_name(parse_dtype(name)), name);
  EXPECT_EQ(parse_dtype("bf16"), torch::kBFloat16);
  EXPECT_THROW(parse_dtype("int8"), std::invalid_argument);
  EXPECT_THROW(dtype_name(torch::kInt8), std::invalid_argument);
}

TEST(PrefillProfiler, DeviceSlugs) {
  EXPECT_EQ(device_slug("NVIDIA H200"), "h200");
  EXPECT_EQ(device_slug("NVIDIA H100 80GB HBM3"), "h100");
  EXPECT_EQ(device_slug("NVIDIA A100-SXM4-80GB"), "a100");
  EXPECT_EQ(device_slug("Tesla V100-SXM2-16GB"), "v100");
  EXPECT_EQ(device_slug("NVIDIA GeForce RTX 4090"), "rtx4090");
  EXPECT_EQ(device_slug("NVIDIA A40"), "a40");
  EXPECT_THROW(device_slug("NVIDIA"), std::invalid_argument);
}

TEST(PrefillProfiler, LayersThatFitInDeviceMemory) {
  ProfileGrid grid;
  grid.prefix_tokens = {0, 1500, 6000, 15000};
  grid.chunk_tokens = {100, 500, 1500};
  const auto mistral = models::architecture("mistral-7b"), llama70 = models::architecture("llama-2-70b");
  constexpr int64_t kGB = 1000 * 1000 * 1000;
  EXPECT_EQ(layers_that_fit(mistral, grid, torch::kBFloat16, 141 * kGB), 32);
  // 70B in bf16: 1.71 GB of weights per layer, 80 layers (137 GB) do not fit in an H200's 141 GB.
  const int h200 = layers_that_fit(llama70, grid, torch::kBFloat16, 141 * kGB);
  EXPECT_GE(h200, 65);
  EXPECT_LT(h200, 80);
  const int h100 = layers_that_fit(llama70, grid, torch::kBFloat16, 80 * kGB);
  EXPECT_GE(h100, 35);
  EXPECT_LT(h100, 45);
  EXPECT_LT(layers_that_fit(llama70, grid, torch::kFloat32, 80 * kGB), h100);
  EXPECT_THROW(layers_that_fit(llama70, grid, torch::kBFloat16, 2 * kGB), std::runtime_error);
}

class PrefillCli : public test_support::CliTest {
 protected:
  // Runs the gpu_prefill tool in the temporary directory.
  Result tool(const std::string& args) {
    const std::string command =
        "cd '" + dir_.string() + "' && '" KVSTREAM_GPU_PREFILL "' " + args + " > stdout.txt 2> stderr.txt";
    const int status = std::system(command.c_str());
    return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, test_support::read_text(dir_ / "stdout.txt"),
            test_support::read_text(dir_ / "stderr.txt")};
  }
};

TEST_F(PrefillCli, ProfilePrefillTakesDtypeAndDevice) {
  ok("profile-prefill --arch stories260K --layers 2 --dtype bf16 --prefix 0,64 --chunk 8,32 --reps 1 --out p.json");
  const auto profile = sim::read_hardware_profile((dir_ / "p.json").string());
  EXPECT_NE(profile.device.find("(bf16)"), std::string::npos) << profile.device;
  const auto bad = run("profile-prefill --arch stories260K --dtype int8 --out p.json");
  EXPECT_EQ(bad.rc, 2);
  EXPECT_NE(bad.err.find("--dtype must be fp32, bf16 or fp16, got \"int8\""), std::string::npos) << bad.err;
  EXPECT_NE(run("profile-prefill --help").out.find("--dtype"), std::string::npos);
  if (torch::cuda::is_available()) GTEST_SKIP() << "a CUDA device is visible";
  const auto cuda = run("profile-prefill --arch stories260K --device cuda --out p.json");
  EXPECT_EQ(cuda.rc, 1);
  EXPECT_NE(cuda.err.find("LibTorch sees no CUDA device"), std::string::npos) << cuda.err;
}

TEST_F(PrefillCli, GpuPrefillToolWritesProfilesTheSimulatorReads) {
  const auto r = tool("--device cpu --dtype bf16 --arch stories260K --layers 2 --prefix 0,128 --chunk 8,64,256 --reps 1 --out-dir out");
  ASSERT_EQ(r.rc, 0) << r.out << r.err;
  const auto profile = sim::read_hardware_profile((dir_ / "out" / "cpu_stories260K.json").string());
  EXPECT_EQ(profile.kind, "measured");
  EXPECT_EQ(profile.model, "stories260K");
  EXPECT_NE(profile.device.find("(bf16)"), std::string::npos) << profile.device;
  EXPECT_GT(profile.prefill.b + profile.prefill.c, 0);
  EXPECT_NE(r.out.find("stories260K: timing 2 of 5 layers"), std::string::npos) << r.out;

  // Without --layers, as many as fit in the CPU's available memory: all 5 of stories260K.
  ASSERT_EQ(tool("--device cpu --arch stories260K --prefix 0,64 --chunk 8,32 --reps 1 --slug here --out-dir out").rc, 0);
  EXPECT_EQ(nlohmann::json::parse(test_support::read_text(dir_ / "out" / "here_stories260K.json"))["layers_timed"], 5);

  const auto bad = tool("--device tpu --out-dir out");
  EXPECT_EQ(bad.rc, 2);
  EXPECT_NE(bad.err.find("--device must be cuda or cpu"), std::string::npos) << bad.err;
  EXPECT_EQ(tool("--arch gpt-5 --out-dir out").rc, 2);
  EXPECT_EQ(tool("--device cpu").rc, 2);  // no --out-dir
  if (torch::cuda::is_available()) GTEST_SKIP() << "a CUDA device is visible";
  const auto cuda = tool("--out-dir out");
  EXPECT_EQ(cuda.rc, 1);
  EXPECT_NE(cuda.err.find("LibTorch sees no CUDA device"), std::string::npos) << cuda.err;
}

}  // namespace
}  // namespace kvstream::profiling
