#include "eval/text_quality.h"

#include <cmath>
#include <stdexcept>

#include "codec/codec_levels.h"
#include "common/data_resolver.h"
#include "common/file_text.h"
#include "eval/decoded_kv.h"
#include "eval/metrics.h"

namespace kvstream::eval {
namespace {

struct Context {
  std::vector<int32_t> context_ids, fed_ids, target_ids;
  models::KvState reference_kv;
  codec::KvCache reference_cache;  // fp16-rounded
  torch::Tensor reference_log_probs;  // [K-1, vocab]
  std::vector<int32_t> reference_greedy;
};

std::vector<Context> prepare(const models::LoadedModel& m, const QualityOptions& o) {
  const std::string text = common::read_file_text(common::resolve_input(o.text_path));
  const auto& model = *m.model;
  const int needed = o.context_tokens + o.continuation_tokens;
  if (needed > model.config().max_seq_len)
    throw std::invalid_argument("context + continuation = " + std::to_string(needed) + " tokens exceed model " + m.name +
                                "'s maximum sequence length " + std::to_string(model.config().max_seq_len));
  if (o.continuation_tokens < 2) throw std::invalid_argument("--continuation-tokens must be at least 2");
  std::vector<Context> contexts;
  for (int i = 0; i < o.contexts; ++i) {
    const size_t start = size_t(i) * size_t(o.stride_chars);
    if (start + size_t(o.window_chars) > text.size())
      throw std::invalid_argument(o.text_path + " has " + std::to_string(text.size()) + " characters, too few for " +
                                  std::to_string(o.contexts) + " windows of " + std::to_string(o.window_chars) +
                                  " every " + std::to_string(o.stride_chars));
    auto ids = m.tokenizer->encode(text.substr(start, size_t(o.window_chars)), true);
    if (static_cast<int>(ids.size()) < needed)
      throw std::invalid_argument("text window " + std::to_string(i) + " gives " + std::to_string(ids.size()) +
                                  " tokens, " + std::to_string(needed) + " needed (raise --window-chars)");
    Context c;
    c.context_ids.assign(ids.begin(), ids.begin() + o.context_tokens);
    c.fed_ids.assign(ids.begin() + o.context_tokens, ids.begin() + needed - 1);
    c.target_ids.assign(ids.begin() + o.context_tokens + 1, ids.begin() + needed);
    models::KvState kv;
    model.forward(c.context_ids, {}, &kv);
    auto reference = fp16_reference(model, kv);
    c.reference_cache = std::move(reference.cache);
    c.reference_kv = std::move(reference.state);
    c.reference_log_probs = next_token_log_probs(model, c.fed_ids, c.reference_kv);
    c.reference_greedy = greedy_after(model, c.reference_kv, c.fed_ids.front(), o.greedy_tokens);
    contexts.push_back(std::move(c));
  }
  return contexts;
}

}  // namespace

nlohmann::json QualityRow::to_json() const {
  nlohmann::json j = CodecLevelBytes::to_json();
  j.update({{"ppl_ref", ppl_ref},
            {"ppl", ppl},
            {"ppl_delta", ppl - ppl_ref},
            {"kl_mean", kl_mean},
            {"top1_agree", top1_agree},
            {"greedy_match_tokens", greedy_match_tokens}});
  return j;
}

std::vector<QualityRow> run_quality(const models::LoadedModel& m, const QualityOptions& o,
                                    const std::function<void(const QualityRow&)>& on_row) {
  const auto contexts = prepare(m, o);
  const auto& model = *m.model;
  double ref_nll = 0;
  for (const auto& c : contexts) ref_nll += mean_nll(c.reference_log_probs, c.target_ids);
  const double ppl_ref = std::exp(ref_nll / double(contexts.size()));

  std::vector<QualityRow> rows;
  for (const auto& codec_level : codec::codec_levels(o.codecs, o.levels)) {
    QualityRow row;
    row.codec = codec_level.codec->spec();
    row.level = codec_level.level;
    row.ppl_ref = ppl_ref;
    double nll = 0, kl = 0, agree = 0, greedy = 0;
    for (const auto& c : contexts) {
      const auto [bytes, decoded] = encode_decode(codec_level, c.reference_cache, model);
      row.bytes += bytes;
      row.fp16_bytes += uint64_t(c.reference_cache.shape().fp16_bytes());
      const auto scores =
          score_continuation(c.reference_log_probs, next_token_log_probs(model, c.fed_ids, decoded), c.target_ids);
      nll += scores.nll;
      kl += scores.kl_mean;
      agree += scores.top1_agree;
      greedy += double(greedy_match_tokens(c.reference_greedy, greedy_after(model, decoded, c.fed_ids.front(), o.greedy_tokens)));
    }
    const double n = double(contexts.size());
    row.ppl = std::exp(nll / n);
    row.kl_mean = kl / n;
    row.top1_agree = agree / n;
    row.greedy_match_tokens = greedy / n;
    if (on_row) on_row(row);
    rows.push_back(row);
  }
  return rows;
}

QualityOptions quality_defaults(const std::string& model_name) {
  QualityOptions o;
  const bool llama2c = model_name == "stories260K" || model_name.ends_with(".bin");
  if (!llama2c) {  // smollm2, GGUF, Hugging Face: the long-context protocol of tests/golden/quality_smollm2.json
    o.text_path = "text/wikitext2/wiki.test.raw";
    o.contexts = 2;
    o.context_tokens = 1024;
    o.continuation_tokens = 64;
    o.window_chars = 6000;
    o.stride_chars = 20000;
    o.greedy_tokens = 8;
  }
  return o;
}

}  // namespace kvstream::eval
