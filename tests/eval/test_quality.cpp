// Quality regression: `run_quality` on each model of tests/golden/quality_*.json, with the options
// stored there, must stay within the golden limits: a level fails if its kl_mean worsens by more than
// the relative tolerance, its ppl_delta by more than the absolute one, or its bytes grow by more
// than 1%. The stories260K values are those of the independent reference in docs/DATA.md §2.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "codec/transform/transform_calibration.h"
#include "common/data_resolver.h"
#include "eval/kv_bridge.h"
#include "eval/kv_sensitivity.h"
#include "eval/text_quality.h"
#include "eval/text_windows.h"
#include "eval/transform_fit.h"
#include "tests/test_support.h"

namespace kvstream::eval {
namespace {

nlohmann::json golden(const std::string& model) { return test_support::golden_json("quality_" + model + ".json"); }

QualityOptions golden_options(const nlohmann::json& o) {
  QualityOptions options;
  options.text_path = o["text"].get<std::string>();
  options.contexts = o["contexts"].get<int>();
  options.context_tokens = o["context_tokens"].get<int>();
  options.continuation_tokens = o["continuation_tokens"].get<int>();
  options.window_chars = o["window_chars"].get<int>();
  options.stride_chars = o["stride_chars"].get<int>();
  options.greedy_tokens = o["greedy_tokens"].get<int>();
  return options;
}

// Every row of golden `g` against the measured rows; a row's codec is compared with `path` (a
// calibration file of this test) written as CAL.
void check_rows(const nlohmann::json& g, const std::vector<QualityRow>& rows, const std::string& model_name,
                const std::string& path = "") {
  const auto& tol = g["tolerance"];
  ASSERT_EQ(rows.size(), g["rows"].size());
  for (const auto& want : g["rows"]) {
    const auto it = std::find_if(rows.begin(), rows.end(), [&](const QualityRow& r) {
      std::string codec = r.codec;
      if (!path.empty() && codec.find(path) != std::string::npos) codec.replace(codec.find(path), path.size(), "CAL");
      return codec == want["codec"].get<std::string>() && r.level == want["level"].get<int>();
    });
    ASSERT_NE(it, rows.end()) << want.dump();
    const std::string what = model_name + " " + want["codec"].get<std::string>() + " level " + std::to_string(it->level);
    EXPECT_LE(it->kl_mean, want["kl_mean"].get<double>() * (1 + tol["kl_mean_relative"].get<double>())) << what;
    EXPECT_LE(it->ppl - it->ppl_ref, want["ppl_delta"].get<double>() + tol["ppl_delta_absolute"].get<double>()) << what;
    EXPECT_LE(double(it->bytes), want["bytes"].get<double>() * (1 + tol["bytes_relative"].get<double>())) << what;
    EXPECT_NEAR(it->top1_agree, want["top1_agree"].get<double>(), 0.01) << what;
  }
}

void check_against_golden(const std::string& model_name) {
  const auto g = golden(model_name);
  QualityOptions options = golden_options(g["options"]);
  options.codecs = {"cachegen", "quant:bits=8"};
  check_rows(g, run_quality(models::load_model(model_name), options), model_name);
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

// The transform codec, calibrated here as `kvstream calibrate` does it (eval::fit_transform, on the
// second half of TinyStories' validation file, never the windows scored), at the golden's levels:
// with keys weighed by the queries (the default) and without (`--key-windows 0`).
class TransformQuality : public test_support::TempDirTest {
 protected:
  void check(const std::string& golden_file) {
    const auto g = test_support::golden_json(golden_file);
    const auto& c = g["calibration"];
    const auto model = models::load_model("stories260K");
    codec::TransformCalibration::Options cal_options;
    cal_options.level_distortions = c["levels"].get<std::vector<double>>();
    const auto cal = fit_transform(model,
                                   {c["text"].get<std::string>(), c["contexts"].get<int>(), c["context_tokens"].get<int>(),
                                    c["window_chars"].get<int>(), c["stride_chars"].get<int>(), c["first_char"].get<int64_t>()},
                                   cal_options, c["sensitivity_windows"].get<int>(), c["key_windows"].get<int>());
    const auto path = (dir_ / "stories.kvcal").string();
    cal.save(path);
    QualityOptions options = golden_options(g["options"]);
    options.codecs = {"transform:cal=" + path};
    check_rows(g, run_quality(model, options), "stories260K", path);
  }
};

TEST_F(TransformQuality, Stories260KStaysWithinTheGoldenLimits) { check("quality_transform_stories260K.json"); }
TEST_F(TransformQuality, Stories260KWithPlainKeysStaysWithinTheGoldenLimits) {
  check("quality_transform_plain_keys_stories260K.json");
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
