#include "eval/task_quality.h"

#include <stdexcept>

#include "common/data_resolver.h"
#include "eval/decoded_kv.h"
#include "eval/task_metrics.h"

namespace kvstream::eval {
namespace {

std::string record_name(const TaskQualityOptions& o, size_t index, const TaskRecord& r) {
  return o.tasks_path + " record " + std::to_string(index + 1) +
         (r.test_id >= 0 ? " (test_id " + std::to_string(r.test_id) + ")" : "");
}

// The prompt's token ids, cut to o.max_prompt_tokens when that is set; throws when they do not fit.
std::vector<int32_t> prompt_ids(const models::LoadedModel& m, const TaskQualityOptions& o, size_t index, const TaskRecord& r,
                                size_t* original_tokens) {
  auto ids = m.tokenizer->encode(r.prompt, true);
  *original_tokens = ids.size();
  const size_t max_seq = size_t(m.model->config().max_seq_len), g = size_t(o.generate_tokens);
  if (o.max_prompt_tokens > 0 && ids.size() > size_t(o.max_prompt_tokens)) {
    const size_t n = size_t(o.max_prompt_tokens);
    if (o.truncation == PromptTruncation::kMiddle) {
      const size_t head = (n + 1) / 2, tail = n / 2;
      ids.erase(ids.begin() + ptrdiff_t(head), ids.end() - ptrdiff_t(tail));
    } else {
      const bool bos = m.tokenizer->bos_id() >= 0 && ids.front() == m.tokenizer->bos_id();
      ids.erase(ids.begin() + (bos ? 1 : 0), ids.end() - ptrdiff_t(n - (bos ? 1 : 0)));
    }
  }
  if (ids.size() + g > max_seq)
    throw std::invalid_argument(record_name(o, index, r) + ": the prompt is " + std::to_string(ids.size()) +
                                " tokens; with " + std::to_string(g) + " generated tokens that exceeds model " + m.name +
                                "'s maximum sequence length " + std::to_string(max_seq) +
                                " (pass --max-prompt-tokens N, N <= " + std::to_string(max_seq - g) +
                                ", to cut prompts to N tokens)");
  if (ids.size() < 2)
    throw std::invalid_argument(record_name(o, index, r) + ": the prompt has " + std::to_string(ids.size()) +
                                " token(s), at least 2 are needed (a context and the token that starts generation)");
  return ids;
}

double score(const TaskRecord& r, const std::string& prediction) {
  return r.schema == TaskSchema::kLongChat ? (longchat_correct(prediction, r.answers.front()) ? 1.0 : 0.0)
                                           : token_f1(prediction, r.answers);
}

}  // namespace

nlohmann::json TaskQualityRow::to_json() const {
  nlohmann::json j = CodecLevelBytes::to_json();
  j.update({{"task_score", task_score}, {"task_score_ref", task_score_ref}, {"task_metric", task_metric},
            {"records", records}, {"truncated_records", truncated_records}, {"prompt_tokens", prompt_tokens}});
  return j;
}

std::vector<TaskQualityRow> run_task_quality(const models::LoadedModel& m, const TaskQualityOptions& o,
                                             const std::function<void(const TaskRecordReport&)>& on_record) {
  if (o.records < 0) throw std::invalid_argument("--records must be 0 (all) or positive");
  if (o.generate_tokens < 1) throw std::invalid_argument("--generate-tokens must be positive");
  const int max_seq = m.model->config().max_seq_len;
  if (o.max_prompt_tokens < 0 || o.max_prompt_tokens == 1 ||
      (o.max_prompt_tokens > 0 && o.max_prompt_tokens + o.generate_tokens > max_seq))
    throw std::invalid_argument("--max-prompt-tokens " + std::to_string(o.max_prompt_tokens) + " must be 0 (no cut) or 2.." +
                                std::to_string(max_seq - o.generate_tokens) + " (model " + m.name +
                                "'s maximum sequence length " + std::to_string(max_seq) + " minus --generate-tokens " +
                                std::to_string(o.generate_tokens) + ")");
  const auto levels = codec::codec_levels(o.codecs, o.levels);
  if (levels.empty()) throw std::invalid_argument("no codec has any of the requested levels");
  for (const auto& level : levels) codec::check_codec_model(*level.codec, m.name);

  auto records = read_task_jsonl(common::resolve_input(o.tasks_path));
  if (records.empty()) throw std::invalid_argument(o.tasks_path + " holds no records");
  if (o.records > 0 && size_t(o.records) < records.size()) records.resize(size_t(o.records));
  const TaskSchema schema = records.front().schema;
  for (size_t i = 0; i < records.size(); ++i)
    if (records[i].schema != schema)
      throw std::invalid_argument(record_name(o, i, records[i]) + " is a " +
                                  (records[i].schema == TaskSchema::kLongChat ? "LongChat" : "LongBench") +
                                  " record after records of the other schema: one metric per file");

  // Every prompt is tokenized and checked before the first prefill, so bad input costs no compute.
  std::vector<std::vector<int32_t>> prompts;
  std::vector<size_t> original_tokens(records.size());
  for (size_t i = 0; i < records.size(); ++i) prompts.push_back(prompt_ids(m, o, i, records[i], &original_tokens[i]));

  std::vector<TaskQualityRow> rows;
  for (const auto& cl : levels) {
    TaskQualityRow row;
    row.codec = cl.codec->spec();
    row.level = cl.level;
    row.task_metric = schema == TaskSchema::kLongChat ? "longchat_accuracy" : "token_f1";
    rows.push_back(row);
  }
  const auto& model = *m.model;
  const int32_t eos = m.tokenizer->eos_id();
  double ref_total = 0, prompt_total = 0;
  int truncated = 0;
  for (size_t i = 0; i < records.size(); ++i) {
    const auto& ids = prompts[i];
    const std::vector<int32_t> context(ids.begin(), ids.end() - 1);
    models::KvState kv;
    model.forward(context, {}, &kv, true);
    const auto reference = fp16_reference(model, kv);
    kv = {};
    auto predict = [&](const models::KvState& state) {
      return m.tokenizer->decode(greedy_after(model, state, ids.back(), o.generate_tokens, eos));
    };
    TaskRecordReport report{i, records[i].test_id, ids.size(), original_tokens[i], predict(reference.state), 0};
    report.reference_score = score(records[i], report.reference_prediction);
    ref_total += report.reference_score;
    prompt_total += double(ids.size());
    truncated += ids.size() < original_tokens[i] ? 1 : 0;
    for (size_t k = 0; k < levels.size(); ++k) {
      const auto decoded = encode_decode(levels[k], reference.cache, model);
      rows[k].bytes += decoded.bytes;
      rows[k].fp16_bytes += uint64_t(reference.cache.shape().fp16_bytes());
      rows[k].task_score += score(records[i], predict(decoded.state));
    }
    if (on_record) on_record(report);
  }
  const double n = double(records.size());
  for (auto& row : rows) {
    row.task_score /= n;
    row.task_score_ref = ref_total / n;
    row.records = int(records.size());
    row.truncated_records = truncated;
    row.prompt_tokens = prompt_total / n;
  }
  return rows;
}

}  // namespace kvstream::eval
