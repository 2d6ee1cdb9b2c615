// Task-quality metrics of CacheGen's evaluation (docs/CACHEGEN.md §12 "Metrics"), computed
// locally: LongBench's token F1 (TriviaQA, NarrativeQA) and LongChat first-topic accuracy, with a
// normalised-containment check standing in for the artifact's gpt-3.5-turbo judge. Plus the JSONL
// readers for both record schemas.
#pragma once
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace kvstream::eval {

// LongBench's normalize_answer: lowercase, drop ASCII punctuation, drop the words a/an/the, collapse
// whitespace. ASCII only: bytes >= 0x80 are kept as they are (part of words).
std::string normalize_answer(const std::string& text);

// LongBench qa_f1_score: F1 of the multisets of whitespace tokens of the normalised prediction and
// answer, maximised over `answers`. 0 when no token is shared (so also for an empty prediction) or
// when `answers` is empty.
double token_f1(const std::string& prediction, const std::vector<std::string>& answers);

// True when the normalised label occurs in the normalised prediction as whole words (a run of its
// tokens); an empty normalised label matches nothing.
bool longchat_correct(const std::string& prediction, const std::string& label);

enum class TaskSchema { kLongChat, kLongBench };

struct TaskRecord {
  TaskSchema schema = TaskSchema::kLongChat;
  int64_t test_id = -1;                  // LongChat `test_id`; -1 for LongBench
  std::string prompt;
  // LongChat `label` (all topics in order; answers[0], the first topic, is what is asked for), or
  // LongBench `answers` (any of them is correct). Never empty.
  std::vector<std::string> answers;
  std::vector<std::string> all_classes;  // LongBench `all_classes`; empty when null or absent
};

// One record per non-blank line. A line with `label` is LongChat ({test_id: int, prompt: str,
// label: [str, ...]}), else LongBench ({prompt: str, answers: [str, ...], all_classes: null or
// [str, ...]}). Throws std::runtime_error "file:line: ..." naming the bad JSON or the missing or
// mistyped key.
std::vector<TaskRecord> read_task_jsonl(const std::filesystem::path& path);

}  // namespace kvstream::eval
