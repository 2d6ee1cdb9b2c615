// The KV that stories260K produces, exported through the bridge in the canonical [L][2][T][C]
// layout, equals the shared fixture kv/stories260K_tinystories_4x512.safetensors, which was made
// independently from the same model and the token ids stored beside it.
#include <gtest/gtest.h>

#include "common/half.h"
#include "eval/kv_bridge.h"
#include "models/model_catalog.h"
#include "tests/test_support.h"

namespace kvstream::eval {
namespace {

TEST(KvBridge, ExportedKvEqualsTheIndependentFixture) {
  const models::LoadedModel m = models::load_model("stories260K");
  const codec::KvFile& fixture = test_support::kv_fixture();
  ASSERT_EQ(fixture.tokens.size(), fixture.contexts.size());
  for (size_t i = 0; i < fixture.contexts.size(); ++i) {
    models::KvState kv;
    m.model->forward(fixture.tokens[i], {}, &kv);
    const codec::KvCache exported = to_kv_cache(kv, m.model->config());
    ASSERT_EQ(exported.shape(), fixture.contexts[i].shape());
    double max_err = 0;
    for (size_t k = 0; k < exported.values().size(); ++k) {
      const float want = fixture.contexts[i].values()[k];
      // fp16 rounding of the fixture plus float32 differences between implementations
      max_err = std::max(max_err, double(std::fabs(exported.values()[k] - want)) / (std::fabs(want) * 1e-3 + 1e-3));
    }
    EXPECT_LE(max_err, 1.0) << "context " << i;
    // And back: the cache becomes the same per-layer tensors.
    const models::KvState back = to_kv_state(exported, m.model->config(), torch::kCPU);
    for (size_t l = 0; l < kv.keys.size(); ++l) {
      EXPECT_TRUE(torch::equal(back.keys[l], kv.keys[l])) << l;
      EXPECT_TRUE(torch::equal(back.values[l], kv.values[l])) << l;
    }
  }
}

}  // namespace
}  // namespace kvstream::eval
