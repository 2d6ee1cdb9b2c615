// Quality regression: `run_quality` on each model of tests/golden/quality_*.json, with the options
// stored there, must stay within the golden limits: a level fails if its kl_mean worsens by more than
// the relative tolerance, its ppl_delta by more than the absolute one, or its bytes grow by more
// than 1%. The stories260K values are those of the independent reference in SOURCES.md §2a′.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "common/data_resolver.h"
#include "eval/text_quality.h"
#include "tests/test_support.h"

namespace kvstream::eval {
namespace {

nlohmann::json golden(const std::string& model) { return test_support::golden_json("quality_" + model + ".json"); }

void check_against_golden(const std::string& model_name) {
  const auto g = golden(model_name);
  const auto& tol = g["tolerance"];
  const auto& o = g["options"];
  QualityOptions options;
  options.text_path = o["text"].get<std::string>();
  options.contexts = o["contexts"].get<int>();
  options.context_tokens = o["context_tokens"].get<int>();
  options.continuation_tokens = o["continuation_tokens"].get<int>();
  options.window_chars = o["window_chars"].get<int>();
  options.stride_chars = o["stride_chars"].get<int>();
  options.greedy_tokens = o["greedy_tokens"].get<int>();
  options.codecs = {"cachegen", "quant:bits=8"};
  const auto rows = run_quality(models::load_model(model_name), options);
  ASSERT_EQ(rows.size(), g["rows"].size());
  for (const auto& want : g["rows"]) {
    const auto it = std::find_if(rows.begin(), rows.end(), [&](const QualityRow& r) {
      return r.codec == want["codec"].get<std::string>() && r.level == want["level"].get<int>();
    });
    ASSERT_NE(it, rows.end()) << want.dump();
    const std::string what = model_name + " " + it->codec + " level " + std::to_string(it->level);
    EXPECT_LE(it->kl_mean, want["kl_mean"].get<double>() * (1 + tol["kl_mean_relative"].get<double>())) << what;
    EXPECT_LE(it->ppl - it->ppl_ref, want["ppl_delta"].get<double>() + tol["ppl_delta_absolute"].get<double>()) << what;
    EXPECT_LE(double(it->bytes), want["bytes"].get<double>() * (1 + tol["bytes_relative"].get<double>())) << what;
    EXPECT_NEAR(it->top1_agree, want["top1_agree"].get<double>(), 0.01) << what;
  }
}

TEST(QualityRegression, Stories260KStaysWithinTheGoldenLimits) { check_against_golden("stories260K"); }

TEST(QualityRegression, SmolLM2StaysWithinTheGoldenLimits) {
  try {
    common::resolve_data("models/smollm2/SmolLM2-135M-Instruct.Q4_1.gguf");
  } catch (const common::DataNotFound&) {
    GTEST_SKIP() << "SmolLM2 GGUF not fetched: run scripts/fetch-data.sh";
  }
  check_against_golden("smollm2");
}

TEST(QualityRegression, BadInputIsAClearError) {
  const models::LoadedModel model = models::load_model("stories260K");
  QualityOptions too_long;
  too_long.context_tokens = 500;  // 500 + 64 > 512 = max_seq_len
  EXPECT_THROW(run_quality(model, too_long), std::invalid_argument);
  QualityOptions too_many;
  too_many.contexts = 1000;  // the text is shorter than 1000 windows
  EXPECT_THROW(run_quality(model, too_many), std::invalid_argument);
  EXPECT_THROW(models::load_model("no-such-model"), std::invalid_argument);
}

}  // namespace
}  // namespace kvstream::eval
