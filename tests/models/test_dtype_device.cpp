// LlamaModel in a chosen dtype and on a chosen device: bf16 prefill on the CPU follows the float32
// model, random_model creates its weights in the requested dtype, and query_device describes the CPU
// and refuses a CUDA device it cannot see.
#include <gtest/gtest.h>

#include "models/architecture_table.h"
#include "models/device_query.h"
#include "models/random_model.h"

namespace kvstream::models {
namespace {

const std::vector<int32_t> kTokens = {1, 5, 9, 42, 7, 300, 12, 64};

TEST(ModelDtype, Bf16PrefillFollowsFloat32) {
  auto model = random_model(architecture("stories260K"), 3);
  ASSERT_EQ(model.dtype(), torch::kFloat32);
  KvState kv32;
  const auto logits32 = model.forward(kTokens, {}, &kv32);
  model.to(torch::kBFloat16);
  EXPECT_EQ(model.dtype(), torch::kBFloat16);
  EXPECT_EQ(model.device(), torch::Device(torch::kCPU));
  KvState kv16;
  const auto logits16 = model.forward(kTokens, {}, &kv16);
  ASSERT_EQ(logits16.scalar_type(), torch::kBFloat16);
  ASSERT_EQ(kv16.keys.front().scalar_type(), torch::kBFloat16);
  // bf16 keeps 8 bits of mantissa: within a few percent of the logits' range after 5 layers.
  const double range = logits32.abs().max().item<double>();
  EXPECT_LT((logits16.to(torch::kFloat32) - logits32).abs().max().item<double>(), 0.05 * range);
  EXPECT_LT((kv16.keys[4].to(torch::kFloat32) - kv32.keys[4]).abs().max().item<double>(),
            0.05 * kv32.keys[4].abs().max().item<double>());

  // A bf16 prefix continues a bf16 prefill like the whole sequence at once.
  KvState prefix;
  model.forward({kTokens.begin(), kTokens.begin() + 5}, {}, &prefix);
  const auto rest = model.forward({kTokens.begin() + 5, kTokens.end()}, prefix, nullptr);
  EXPECT_LT((rest.to(torch::kFloat32) - logits16.narrow(0, 5, 3).to(torch::kFloat32)).abs().max().item<double>(),
            0.05 * range);
}

TEST(ModelDtype, RandomModelIsCreatedInTheRequestedDtype) {
  auto config = architecture("stories260K");
  config.tied_embeddings = true;
  auto model = random_model(config, 1, 2, torch::TensorOptions().dtype(torch::kBFloat16));
  EXPECT_EQ(model.config().n_layers, 2);
  EXPECT_EQ(model.dtype(), torch::kBFloat16);
  EXPECT_EQ(model.weights().layers[1].w2.scalar_type(), torch::kBFloat16);
  EXPECT_EQ(model.weights().layers[1].ffn_norm.scalar_type(), torch::kBFloat16);
  EXPECT_EQ(model.forward(kTokens, {}, nullptr, true).sizes(), (std::vector<int64_t>{1, 512}));
  model.to(torch::kFloat32);  // converting keeps a tied classifier tied
  EXPECT_TRUE(model.weights().classifier.is_same(model.weights().token_embedding));
  EXPECT_EQ(model.weights().classifier.scalar_type(), torch::kFloat32);
}

TEST(DeviceInfo, DescribesTheCpuAndRefusesAnUnseenGpu) {
  const auto cpu = query_device(torch::kCPU);
  EXPECT_FALSE(cpu.name.empty());
  EXPECT_GT(cpu.free_bytes, 0);
  if (torch::cuda::is_available()) GTEST_SKIP() << "a CUDA device is visible: nothing to refuse";
  EXPECT_THROW(query_device(torch::Device(torch::kCUDA, 0)), std::runtime_error);
}

}  // namespace
}  // namespace kvstream::models
