// Quality regression on stories260K: `run_quality` with the CLI's defaults must stay within the
// committed golden limits (tests/golden/quality_stories260K.json), whose values are those of the
// independent reference in shared/data/SOURCES.md §2a′. A level fails if its kl_mean worsens by
// more than the relative tolerance, its ppl_delta by more than the absolute one, or its bytes grow
// by more than 1%.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "quality.h"

namespace kvstream::experiments {
namespace {

TEST(QualityRegression, Stories260KStaysWithinTheGoldenLimits) {
  std::ifstream in(std::string(KVSTREAM_TESTS_DIR) + "/golden/quality_stories260K.json");
  ASSERT_TRUE(in) << "golden file missing";
  const auto golden = nlohmann::json::parse(in);
  const auto& tol = golden["tolerance"];

  const LoadedModel model = load_model("stories260K");
  QualityOptions options;
  options.codecs = {"cachegen", "quant:bits=8"};
  const auto rows = run_quality(model, options);
  ASSERT_EQ(rows.size(), golden["rows"].size());
  EXPECT_NEAR(rows.front().ppl_ref, 4.232, 0.001);  // the reference perplexity of the fp16 KV

  for (const auto& g : golden["rows"]) {
    const auto it = std::find_if(rows.begin(), rows.end(), [&](const QualityRow& r) {
      return r.codec == g["codec"].get<std::string>() && r.level == g["level"].get<int>();
    });
    ASSERT_NE(it, rows.end()) << g.dump();
    const std::string what = it->codec + " level " + std::to_string(it->level);
    EXPECT_LE(it->kl_mean, g["kl_mean"].get<double>() * (1 + tol["kl_mean_relative"].get<double>())) << what;
    EXPECT_LE(it->ppl - it->ppl_ref, g["ppl_delta"].get<double>() + tol["ppl_delta_absolute"].get<double>()) << what;
    EXPECT_LE(double(it->bytes), g["bytes"].get<double>() * (1 + tol["bytes_relative"].get<double>())) << what;
    EXPECT_NEAR(it->top1_agree, g["top1_agree"].get<double>(), 0.005) << what;  // agrees with the reference
  }
}

TEST(QualityRegression, BadInputIsAClearError) {
  const LoadedModel model = load_model("stories260K");
  QualityOptions too_long;
  too_long.context_tokens = 500;  // 500 + 64 > 512 = max_seq_len
  EXPECT_THROW(run_quality(model, too_long), std::invalid_argument);
  QualityOptions too_many;
  too_many.contexts = 1000;  // the text is shorter than 1000 windows
  EXPECT_THROW(run_quality(model, too_many), std::invalid_argument);
  EXPECT_THROW(load_model("no-such-model"), std::invalid_argument);
}

}  // namespace
}  // namespace kvstream::experiments
