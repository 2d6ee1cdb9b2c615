#include "eval/task_metrics.h"

#include <algorithm>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "common/json_reader.h"

namespace kvstream::eval {
namespace {

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r'; }

bool is_punctuation(char c) {  // Python's string.punctuation
  return std::string_view("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~").find(c) != std::string_view::npos;
}

// Whitespace tokens of normalize_answer(text).
std::vector<std::string> normalized_tokens(const std::string& text) {
  std::vector<std::string> tokens;
  std::string word;
  auto flush = [&] {
    if (!word.empty() && word != "a" && word != "an" && word != "the") tokens.push_back(word);
    word.clear();
  };
  for (const char c : text) {
    if (is_space(c)) {
      flush();
    } else if (!is_punctuation(c)) {  // punctuation is deleted, joining its neighbours ("don't" -> "dont")
      word += (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
    }
  }
  flush();
  return tokens;
}

std::string join(const std::vector<std::string>& tokens) {
  std::string out;
  for (const auto& t : tokens) out += (out.empty() ? "" : " ") + t;
  return out;
}

double f1(const std::vector<std::string>& prediction, const std::vector<std::string>& answer) {
  std::map<std::string, int> unmatched;  // answer tokens not yet paired with a prediction token
  for (const auto& t : answer) ++unmatched[t];
  int same = 0;
  for (const auto& t : prediction)
    if (auto it = unmatched.find(t); it != unmatched.end() && it->second > 0) {
      --it->second;
      ++same;
    }
  if (same == 0) return 0.0;
  const double precision = double(same) / double(prediction.size()), recall = double(same) / double(answer.size());
  return 2 * precision * recall / (precision + recall);
}

}  // namespace

std::string normalize_answer(const std::string& text) { return join(normalized_tokens(text)); }

double token_f1(const std::string& prediction, const std::vector<std::string>& answers) {
  const auto predicted = normalized_tokens(prediction);
  double best = 0.0;
  for (const auto& answer : answers) best = std::max(best, f1(predicted, normalized_tokens(answer)));
  return best;
}

bool longchat_correct(const std::string& prediction, const std::string& label) {
  const auto needle = normalized_tokens(label), text = normalized_tokens(prediction);
  return !needle.empty() && std::search(text.begin(), text.end(), needle.begin(), needle.end()) != text.end();
}

std::vector<TaskRecord> read_task_jsonl(const std::filesystem::path& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot open task file " + path.string());
  std::vector<TaskRecord> records;
  std::string line;
  for (int line_no = 1; std::getline(in, line); ++line_no) {
    if (std::all_of(line.begin(), line.end(), is_space)) continue;
    auto fail = [&](const std::string& what) {
      return std::runtime_error(path.string() + ":" + std::to_string(line_no) + ": " + what);
    };
    const nlohmann::json j = common::parse_json(line, path.string() + ":" + std::to_string(line_no));
    if (!j.is_object()) throw fail("record is not a JSON object");
    auto require = [&](const std::string& key) -> const nlohmann::json& {
      if (!j.contains(key)) throw fail("missing key \"" + key + "\"");
      return j.at(key);
    };
    auto strings = [&](const std::string& key) {
      const auto& v = require(key);
      if (!v.is_array() || !std::all_of(v.begin(), v.end(), [](const auto& s) { return s.is_string(); }))
        throw fail("key \"" + key + "\" is not a list of strings");
      return v.get<std::vector<std::string>>();
    };

    TaskRecord r;
    r.schema = j.contains("label") ? TaskSchema::kLongChat : TaskSchema::kLongBench;
    if (!require("prompt").is_string()) throw fail("key \"prompt\" is not a string");
    r.prompt = j.at("prompt").get<std::string>();
    const std::string answers_key = r.schema == TaskSchema::kLongChat ? "label" : "answers";
    r.answers = strings(answers_key);
    if (r.answers.empty()) throw fail("key \"" + answers_key + "\" is an empty list");
    if (r.schema == TaskSchema::kLongChat) {
      if (!require("test_id").is_number_integer()) throw fail("key \"test_id\" is not an integer");
      r.test_id = j.at("test_id").get<int64_t>();
    } else if (j.contains("all_classes") && !j.at("all_classes").is_null()) {
      r.all_classes = strings("all_classes");
    }
    records.push_back(std::move(r));
  }
  return records;
}

}  // namespace kvstream::eval
