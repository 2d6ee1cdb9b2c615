// Task metrics (eval/task_metrics.h): LongBench token F1 against hand-computed values,
// LongChat containment, and the JSONL reader on the real CacheGen longchat.jsonl and on broken files.
#include <gtest/gtest.h>

#include <fstream>

#include "common/data_resolver.h"
#include "eval/task_metrics.h"
#include "tests/test_support.h"

namespace kvstream::eval {
namespace {

TEST(TokenF1, NormalisesLikeLongBench) {
  EXPECT_EQ(normalize_answer("  The  Quick,   brown FOX's an\ta \n"), "quick brown foxs");
  EXPECT_EQ(normalize_answer("banana theme, anthem"), "banana theme anthem");  // articles only as words
  EXPECT_EQ(normalize_answer("The Eiffel-Tower!"), "eiffeltower");              // punctuation joins
  EXPECT_EQ(normalize_answer("the a an"), "");
}

TEST(TokenF1, MatchesHandComputedScores) {
  EXPECT_DOUBLE_EQ(token_f1("Paris", {"Paris"}), 1.0);
  // [cat sat on mat] vs [cat on hat]: 2 shared, P = 2/4, R = 2/3, F1 = 4/7.
  EXPECT_DOUBLE_EQ(token_f1("the cat sat on the mat", {"a cat on a hat"}), 4.0 / 7.0);
  EXPECT_DOUBLE_EQ(token_f1("The EIFFEL-tower!", {"eiffeltower"}), 1.0);
  EXPECT_DOUBLE_EQ(token_f1("An apple.", {"apple"}), 1.0);
  // Multisets: [go go go] vs [go] share one token, P = 1/3, R = 1, F1 = 1/2.
  EXPECT_DOUBLE_EQ(token_f1("go go go", {"go"}), 0.5);
  // The best answer counts: [new york city] vs [new york] gives P = 2/3, R = 1, F1 = 4/5.
  EXPECT_DOUBLE_EQ(token_f1("New York City", {"Boston", "new york", "city of london"}), 0.8);
  EXPECT_DOUBLE_EQ(token_f1("", {"Paris"}), 0.0);
  EXPECT_DOUBLE_EQ(token_f1("the", {"the"}), 0.0);  // nothing left to share after normalisation
  EXPECT_DOUBLE_EQ(token_f1("Paris", {}), 0.0);
  EXPECT_DOUBLE_EQ(token_f1("London", {"Paris"}), 0.0);
}

TEST(LongChat, ContainmentOfTheNormalisedLabel) {
  const std::string label = "The role of art in society";
  EXPECT_TRUE(longchat_correct("The first topic we discussed was the role of art in society.", label));
  EXPECT_TRUE(longchat_correct("ROLE OF ART IN SOCIETY!!", label));
  EXPECT_FALSE(longchat_correct("The benefits of mindfulness meditation", label));
  EXPECT_FALSE(longchat_correct("The role of art", label));  // only part of the label
  EXPECT_FALSE(longchat_correct("Let's go to the party", "art"));  // whole words only
  EXPECT_TRUE(longchat_correct("It was about the art of war", "art"));
  EXPECT_FALSE(longchat_correct("anything at all", "The ."));  // empty after normalisation
}

TEST(TaskJsonl, ReadsTheRealLongChatFile) {
  const auto records = read_task_jsonl(common::resolve_data("text/cachegen/longchat.jsonl"));
  ASSERT_EQ(records.size(), 50u);
  for (size_t i = 0; i < records.size(); ++i) {
    const TaskRecord& r = records[i];
    EXPECT_EQ(r.schema, TaskSchema::kLongChat);
    EXPECT_EQ(r.test_id, static_cast<int64_t>(i));
    ASSERT_EQ(r.answers.size(), 15u) << i;
    EXPECT_TRUE(r.prompt.ends_with("ASSISTANT:")) << i;
    // Every topic is named in its conversation, so a model echoing the prompt would be "correct".
    for (const auto& topic : r.answers) EXPECT_TRUE(longchat_correct(r.prompt, topic)) << i << ": " << topic;
  }
  EXPECT_EQ(records[0].answers[0], "The role of art in society");
}

class TaskJsonlFiles : public test_support::TempDirTest {
 protected:
  std::filesystem::path write(const std::string& name, const std::string& text) {
    const auto path = dir_ / name;
    std::ofstream(path) << text;
    return path;
  }

  // The message of the std::runtime_error that reading `path` throws.
  static std::string error_of(const std::filesystem::path& path) {
    try {
      read_task_jsonl(path);
    } catch (const std::runtime_error& e) {
      return e.what();
    }
    ADD_FAILURE() << path << " was read without error";
    return "";
  }
};

TEST_F(TaskJsonlFiles, ReadsTheLongBenchSchema) {
  const auto path = write("qa.jsonl",
                          R"({"prompt": "Q1", "answers": ["a", "b"], "all_classes": null})"
                          "\n\n"
                          R"({"prompt": "Q2", "answers": ["c"], "all_classes": ["x", "y"]})"
                          "\n");
  const auto records = read_task_jsonl(path);
  ASSERT_EQ(records.size(), 2u);
  EXPECT_EQ(records[0].schema, TaskSchema::kLongBench);
  EXPECT_EQ(records[0].prompt, "Q1");
  EXPECT_EQ(records[0].answers, (std::vector<std::string>{"a", "b"}));
  EXPECT_TRUE(records[0].all_classes.empty());
  EXPECT_EQ(records[1].all_classes, (std::vector<std::string>{"x", "y"}));
}

TEST_F(TaskJsonlFiles, ErrorsNameTheFileLineAndKey) {
  const std::string good = R"({"test_id": 0, "prompt": "p", "label": ["t"]})";
  auto expect_error = [&](const std::string& name, const std::string& text, const std::string& line_part,
                          const std::string& what) {
    const auto path = write(name, text);
    const std::string message = error_of(path);
    EXPECT_NE(message.find(path.string() + line_part), std::string::npos) << message;
    EXPECT_NE(message.find(what), std::string::npos) << message;
  };
  expect_error("bad_json.jsonl", good + "\n" + good + "\n{\"test_id\": 2, \"prompt\": \n", ":3:", "invalid JSON");
  expect_error("no_prompt.jsonl", good + "\n" + R"({"test_id": 1, "label": ["t"]})" + "\n", ":2:",
               "missing key \"prompt\"");
  expect_error("no_answers.jsonl", R"({"prompt": "p"})", ":1:", "missing key \"answers\"");
  expect_error("no_test_id.jsonl", R"({"prompt": "p", "label": ["t"]})", ":1:", "missing key \"test_id\"");
  expect_error("label_type.jsonl", R"({"test_id": 0, "prompt": "p", "label": "t"})", ":1:",
               "\"label\" is not a list of strings");
  expect_error("empty_label.jsonl", R"({"test_id": 0, "prompt": "p", "label": []})", ":1:", "empty list");
  expect_error("id_type.jsonl", R"({"test_id": "0", "prompt": "p", "label": ["t"]})", ":1:",
               "\"test_id\" is not an integer");
  expect_error("classes_type.jsonl", R"({"prompt": "p", "answers": ["a"], "all_classes": 3})", ":1:",
               "\"all_classes\" is not a list of strings");
  expect_error("array.jsonl", "[1, 2]\n", ":1:", "not a JSON object");
  EXPECT_NE(error_of(dir_ / "absent.jsonl").find("absent.jsonl"), std::string::npos);
}

}  // namespace
}  // namespace kvstream::eval
