// Task mode of `kvstream quality` (eval/task_quality.h) on stories260K with hand-made JSONL:
// each record's label is a word the model itself generates from the reference (fp16) KV, computed
// here, so the reference score is 1 and a lossless codec (fp16) must score the same. Plus prompt
// truncation, bad input, the model-dependent defaults and the CLI (including the hint when the
// default model smollm2 has not been fetched).
#include <gtest/gtest.h>

#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <sstream>

#include "common/data_resolver.h"
#include "eval/decoded_kv.h"
#include "eval/task_metrics.h"
#include "eval/task_quality.h"
#include "eval/text_quality.h"
#include "tests/cli/cli_test.h"
#include "tests/test_support.h"

namespace kvstream::eval {
namespace {

namespace fs = std::filesystem;

const models::LoadedModel& stories() {
  static const models::LoadedModel model = models::load_model("stories260K");
  return model;
}

std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

std::string tinystories(size_t start, size_t chars) {
  return read_file(common::resolve_data("text/tinystories/tinystories_val.txt")).substr(start, chars);
}

constexpr int kGenerate = 16;

// What the model answers to prompt token ids: prefill all but the last, round the KV to fp16, then
// greedy tokens (up to EOS) after the last one, as text.
std::string answer(const std::vector<int32_t>& ids) {
  const auto& m = stories();
  models::KvState kv;
  m.model->forward(std::vector<int32_t>(ids.begin(), ids.end() - 1), {}, &kv);
  const auto reference = fp16_reference(*m.model, kv);
  return m.tokenizer->decode(greedy_after(*m.model, reference.state, ids.back(), kGenerate, m.tokenizer->eos_id()));
}

std::string answer(const std::string& prompt) { return answer(stories().tokenizer->encode(prompt, true)); }

// Three prompts cut from the middle of TinyStories text (about 200 tokens each).
std::vector<std::string> prompts() { return {tinystories(1000, 500), tinystories(5000, 450), tinystories(9000, 520)}; }

class TaskQuality : public test_support::TempDirTest {
 protected:
  std::string write(const std::string& name, const std::vector<nlohmann::json>& records) {
    std::ofstream out(dir_ / name);
    for (const auto& r : records) out << r.dump() << "\n";
    return (dir_ / name).string();
  }

  // LongChat records whose label[0] is the first word of the model's own reference answer.
  std::string longchat_file() {
    std::vector<nlohmann::json> records;
    int id = 0;
    for (const auto& prompt : prompts()) {
      const std::string normalized = normalize_answer(answer(prompt));
      const std::string word = normalized.substr(0, normalized.find(' '));
      EXPECT_FALSE(word.empty()) << "the model answers nothing to: " << prompt;
      records.push_back({{"test_id", id++}, {"prompt", prompt}, {"label", {word, "an unrelated topic"}}});
    }
    return write("longchat.jsonl", records);
  }

  TaskQualityOptions options(const std::string& path, std::vector<std::string> codecs) {
    TaskQualityOptions o;
    o.tasks_path = path;
    o.generate_tokens = kGenerate;
    o.codecs = std::move(codecs);
    return o;
  }

  static std::string error_of(const std::function<void()>& f) {
    try {
      f();
    } catch (const std::exception& e) {
      return e.what();
    }
    ADD_FAILURE() << "no error";
    return "";
  }
};

TEST_F(TaskQuality, LongChatLosslessCodecScoresLikeTheReference) {
  const auto path = longchat_file();
  std::vector<TaskRecordReport> reports;
  const auto rows = run_task_quality(stories(), options(path, {"fp16", "cachegen"}),
                                     [&](const TaskRecordReport& r) { reports.push_back(r); });
  ASSERT_EQ(rows.size(), 4u);  // fp16, cachegen levels 1-3
  ASSERT_EQ(reports.size(), 3u);
  for (const auto& r : reports) {
    EXPECT_EQ(r.reference_score, 1.0) << r.reference_prediction;
    EXPECT_EQ(r.prompt_tokens, r.original_tokens);
    EXPECT_EQ(r.test_id, int64_t(r.index));
  }
  EXPECT_EQ(rows[0].codec, "fp16");
  for (const auto& row : rows) {
    EXPECT_EQ(row.task_metric, "longchat_accuracy");
    EXPECT_EQ(row.records, 3);
    EXPECT_EQ(row.truncated_records, 0);
    EXPECT_DOUBLE_EQ(row.task_score_ref, 1.0);
    EXPECT_GE(row.task_score, 0.0);
    EXPECT_LE(row.task_score, 1.0);
    EXPECT_GT(row.prompt_tokens, 100.0);
  }
  EXPECT_DOUBLE_EQ(rows[0].task_score, rows[0].task_score_ref);
  EXPECT_NEAR(double(rows[0].fp16_bytes) / double(rows[0].bytes), 1.0, 0.01);
  for (size_t k = 1; k < rows.size(); ++k) {
    EXPECT_EQ(rows[k].codec, "cachegen");
    EXPECT_EQ(rows[k].level, int(k));
    EXPECT_LT(rows[k].bytes, rows[0].bytes / 2);
  }
  const auto j = rows[1].to_json();
  for (const char* key : {"codec", "level", "bytes", "ratio_vs_fp16", "task_score", "task_score_ref", "task_metric",
                          "records"})
    EXPECT_TRUE(j.contains(key)) << key;
}

TEST_F(TaskQuality, LongBenchIsScoredByTokenF1) {
  std::vector<nlohmann::json> records;
  for (const auto& prompt : prompts())
    records.push_back({{"prompt", prompt}, {"answers", {"zebra", answer(prompt)}}, {"all_classes", nullptr}});
  auto o = options(write("qa.jsonl", records), {"fp16", "quant:bits=4"});
  o.records = 2;
  const auto rows = run_task_quality(stories(), o);
  ASSERT_EQ(rows.size(), 2u);
  for (const auto& row : rows) {
    EXPECT_EQ(row.task_metric, "token_f1");
    EXPECT_EQ(row.records, 2);
    EXPECT_DOUBLE_EQ(row.task_score_ref, 1.0);
  }
  EXPECT_DOUBLE_EQ(rows[0].task_score, 1.0);
}

TEST_F(TaskQuality, LongPromptsAreCutOnlyWhenAsked) {
  const std::string prompt = tinystories(20000, 3000);  // well over 512 tokens
  const auto ids = stories().tokenizer->encode(prompt, true);
  ASSERT_GT(ids.size(), 600u);
  const auto path = write("long.jsonl", {{{"test_id", 7}, {"prompt", prompt}, {"label", {"x"}}}});
  auto o = options(path, {"fp16"});
  const std::string message = error_of([&] { run_task_quality(stories(), o); });
  EXPECT_NE(message.find("record 1 (test_id 7)"), std::string::npos) << message;
  EXPECT_NE(message.find(std::to_string(ids.size()) + " tokens"), std::string::npos) << message;
  EXPECT_NE(message.find("512"), std::string::npos) << message;
  EXPECT_NE(message.find("--max-prompt-tokens"), std::string::npos) << message;

  o.max_prompt_tokens = 201;
  for (const auto truncation : {PromptTruncation::kMiddle, PromptTruncation::kLeft}) {
    o.truncation = truncation;
    std::vector<int32_t> kept;
    if (truncation == PromptTruncation::kMiddle) {  // the first 101 and the last 100 tokens
      kept.assign(ids.begin(), ids.begin() + 101);
      kept.insert(kept.end(), ids.end() - 100, ids.end());
    } else {  // BOS and the last 200 tokens
      kept.assign(1, ids.front());
      kept.insert(kept.end(), ids.end() - 200, ids.end());
    }
    std::vector<TaskRecordReport> reports;
    const auto rows = run_task_quality(stories(), o, [&](const TaskRecordReport& r) { reports.push_back(r); });
    ASSERT_EQ(reports.size(), 1u);
    EXPECT_EQ(reports[0].prompt_tokens, 201u);
    EXPECT_EQ(reports[0].original_tokens, ids.size());
    EXPECT_EQ(reports[0].reference_prediction, answer(kept));
    EXPECT_EQ(rows.at(0).truncated_records, 1);
    EXPECT_DOUBLE_EQ(rows.at(0).prompt_tokens, 201.0);
  }
}

TEST_F(TaskQuality, BadInputIsAClearError) {
  const auto good = nlohmann::json{{"test_id", 0}, {"prompt", tinystories(0, 300)}, {"label", {"x"}}};
  // A missing file names itself.
  EXPECT_NE(error_of([&] { run_task_quality(stories(), options((dir_ / "absent.jsonl").string(), {"fp16"})); })
                .find("absent.jsonl"),
            std::string::npos);
  // Malformed JSONL: file:line.
  {
    std::ofstream(dir_ / "bad.jsonl") << good.dump() << "\n{\"test_id\": 1, \"prompt\": \n";
    const auto message = error_of([&] { run_task_quality(stories(), options((dir_ / "bad.jsonl").string(), {"fp16"})); });
    EXPECT_NE(message.find((dir_ / "bad.jsonl").string() + ":2:"), std::string::npos) << message;
  }
  // Mixed schemas, a prompt too short to generate from, out-of-range options, no matching level.
  const nlohmann::json qa = {{"prompt", "Once upon a time"}, {"answers", {"x"}}};
  EXPECT_NE(error_of([&] { run_task_quality(stories(), options(write("mixed.jsonl", {good, qa}), {"fp16"})); })
                .find("record 2"),
            std::string::npos);
  EXPECT_NE(error_of([&] {
              run_task_quality(stories(), options(write("empty.jsonl", {{{"test_id", 0}, {"prompt", ""}, {"label", {"x"}}}}),
                                                  {"fp16"}));
            }).find("at least 2"),
            std::string::npos);
  const auto path = write("good.jsonl", {good});
  auto o = options(path, {"fp16"});
  o.max_prompt_tokens = 512 - kGenerate + 1;
  EXPECT_NE(error_of([&] { run_task_quality(stories(), o); }).find("--max-prompt-tokens"), std::string::npos);
  o = options(path, {"fp16"});
  o.generate_tokens = 0;
  EXPECT_THROW(run_task_quality(stories(), o), std::invalid_argument);
  o = options(path, {"cachegen"});
  o.levels = {7};
  EXPECT_THROW(run_task_quality(stories(), o), std::invalid_argument);
}

TEST(TaskQualityRealFile, SmolLM2MustCutTheFirstLongChatRecord) {
  // CacheGen's longchat.jsonl prompts are ~10K tokens; record 1 is 8244 SmolLM2 tokens, over its 8K.
  for (const char* file : {"text/cachegen/longchat.jsonl", "models/smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"}) {
    try {
      common::resolve_data(file);
    } catch (const common::DataNotFound&) {
      GTEST_SKIP() << file << " not found: run scripts/fetch-data.sh";
    }
  }
  const models::LoadedModel smollm2 = models::load_model("smollm2");
  TaskQualityOptions o;
  o.records = 1;
  o.generate_tokens = 8;
  o.codecs = {"fp16"};
  try {
    run_task_quality(smollm2, o);
    ADD_FAILURE() << "an 8244-token prompt ran on an 8192-token model";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("the prompt is 8244 tokens"), std::string::npos) << e.what();
  }
  o.max_prompt_tokens = 256;
  const auto rows = run_task_quality(smollm2, o);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].records, 1);
  EXPECT_EQ(rows[0].truncated_records, 1);
  EXPECT_DOUBLE_EQ(rows[0].prompt_tokens, 256.0);
  EXPECT_EQ(rows[0].task_metric, "longchat_accuracy");
  EXPECT_DOUBLE_EQ(rows[0].task_score, rows[0].task_score_ref);
}

TEST(QualityDefaults, FollowTheModel) {
  const auto s = quality_defaults("stories260K");
  EXPECT_EQ(s.text_path, "text/tinystories/tinystories_val.txt");
  EXPECT_EQ(s.context_tokens, 384);
  EXPECT_EQ(s.contexts, 8);
  EXPECT_EQ(quality_defaults("my/model.bin").context_tokens, 384);
  for (const std::string name : {"smollm2", "x.gguf", "some/hf_dir"}) {
    const auto d = quality_defaults(name);
    EXPECT_EQ(d.text_path, "text/wikitext2/wiki.test.raw") << name;
    EXPECT_EQ(d.context_tokens, 1024) << name;
    EXPECT_EQ(d.window_chars, 6000) << name;
  }
  // The smollm2 defaults are the protocol of its golden file.
  const auto g = test_support::golden_json("quality_smollm2.json")["options"];
  const auto d = quality_defaults("smollm2");
  EXPECT_EQ(d.text_path, g["text"].get<std::string>());
  EXPECT_EQ(d.contexts, g["contexts"].get<int>());
  EXPECT_EQ(d.context_tokens, g["context_tokens"].get<int>());
  EXPECT_EQ(d.continuation_tokens, g["continuation_tokens"].get<int>());
  EXPECT_EQ(d.window_chars, g["window_chars"].get<int>());
  EXPECT_EQ(d.stride_chars, g["stride_chars"].get<int>());
  EXPECT_EQ(d.greedy_tokens, g["greedy_tokens"].get<int>());
}

// The CLI: `kvstream quality --tasks` end to end, usage errors, and the hint for a missing smollm2.
class QualityCli : public TaskQuality {
 protected:
  test_support::CliResult run(const std::string& args, const std::string& env = "") {
    return test_support::run_kvstream(dir_, "quality " + args, env);
  }
};

TEST_F(QualityCli, TaskModeWritesOneJsonRowPerCodecLevel) {
  const auto path = longchat_file();
  const auto r = run("--model stories260K --tasks " + path + " --codec fp16 quant:bits=8 --generate-tokens 16 --json");
  ASSERT_EQ(r.rc, 0) << r.err;
  std::istringstream lines(r.out);
  std::vector<nlohmann::json> rows;
  for (std::string line; std::getline(lines, line);) rows.push_back(nlohmann::json::parse(line));
  ASSERT_EQ(rows.size(), 2u) << r.out;
  EXPECT_EQ(rows[0]["codec"], "fp16");
  EXPECT_EQ(rows[0]["task_score"], 1.0);
  EXPECT_EQ(rows[0]["task_score_ref"], 1.0);
  EXPECT_EQ(rows[0]["task_metric"], "longchat_accuracy");
  EXPECT_EQ(rows[0]["records"], 3);
  EXPECT_EQ(rows[1]["codec"], "quant:bits=8");
  EXPECT_GT(rows[1]["ratio_vs_fp16"].get<double>(), 1.8);
  EXPECT_NE(r.err.find("record 3 (test_id 2)"), std::string::npos) << r.err;
}

TEST_F(QualityCli, BadUsageAndBadFiles) {
  std::ofstream(dir_ / "bad.jsonl") << "{\"test_id\": 0, \"prompt\": \"p\", \"label\": [\"t\"]}\nnot json\n";
  test_support::expect_failure(run("--model stories260K --tasks bad.jsonl --codec fp16"), 1, "bad.jsonl:2: invalid JSON");
  test_support::expect_failure(run("--model stories260K --tasks absent.jsonl"), 1, "absent.jsonl");
  test_support::expect_failure(run("--model stories260K --tasks bad.jsonl --contexts 2"), 2,
                               "--contexts does not apply with --tasks");
  test_support::expect_failure(run("--model stories260K --records 3"), 2, "--records needs --tasks");
  test_support::expect_failure(run("--model stories260K --tasks bad.jsonl --truncate right"), 2, "--truncate");
  auto r = run("--help");
  EXPECT_EQ(r.rc, 0);
  EXPECT_NE(r.out.find("default model is smollm2"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("--max-prompt-tokens"), std::string::npos) << r.out;
}

TEST_F(QualityCli, MissingDefaultModelSaysHowToFetchIt) {
  // Hide the user cache (where scripts/fetch-data.sh puts SmolLM2) and $KVSTREAM_DATA; the repository's
  // ../shared/data stays searched, so skip if SmolLM2 is there.
  const std::string gguf = "models/smollm2/SmolLM2-135M-Instruct.Q4_1.gguf";
  for (const auto& root : common::data_search_roots())
    if (root != common::data_cache_dir() && fs::exists(root / gguf) &&
        root.string() != (std::getenv("KVSTREAM_DATA") ? std::getenv("KVSTREAM_DATA") : ""))
      GTEST_SKIP() << "SmolLM2 is in " << root << ", which this test cannot hide";
  const auto r = run("--levels 1", "env KVSTREAM_DATA= XDG_CACHE_HOME='" + (dir_ / "empty_cache").string() + "'");
  EXPECT_EQ(r.rc, 1);
  EXPECT_NE(r.err.find("model smollm2"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("scripts/fetch-data.sh --only smollm2"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("--model stories260K"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace kvstream::eval
