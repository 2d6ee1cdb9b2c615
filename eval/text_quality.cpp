#include "eval/text_quality.h"

#include <cmath>
#include <stdexcept>

#include "codec/codec_levels.h"
#include "common/data_resolver.h"
#include "common/file_text.h"
#include "eval/decoded_kv.h"
#include "eval/metrics.h"

namespace kvstream::eval {

QualityProbe::QualityProbe(const models::LoadedModel& m, const QualityOptions& o)
    : model_(*m.model), model_name_(m.name), greedy_tokens_(o.greedy_tokens) {
  const std::string text = common::read_file_text(common::resolve_input(o.text_path));
  const int needed = o.context_tokens + o.continuation_tokens;
  if (needed > model_.config().max_seq_len)
    throw std::invalid_argument("context + continuation = " + std::to_string(needed) + " tokens exceed model " + m.name +
                                "'s maximum sequence length " + std::to_string(model_.config().max_seq_len));
  if (o.continuation_tokens < 2) throw std::invalid_argument("--continuation-tokens must be at least 2");
  if (o.contexts < 1 || o.window_chars < 1 || o.stride_chars < 1 || o.first_char < 0)
    throw std::invalid_argument("windows, characters per window and stride must be positive, the first character >= 0");
  double ref_nll = 0;
  for (int i = 0; i < o.contexts; ++i) {
    const size_t start = size_t(o.first_char) + size_t(i) * size_t(o.stride_chars);
    if (start + size_t(o.window_chars) > text.size())
      throw std::invalid_argument(o.text_path + " has " + std::to_string(text.size()) + " characters, too few for " +
                                  std::to_string(o.contexts) + " windows of " + std::to_string(o.window_chars) +
                                  " every " + std::to_string(o.stride_chars) + " from character " +
                                  std::to_string(o.first_char));
    auto ids = m.tokenizer->encode(text.substr(start, size_t(o.window_chars)), true);
    if (static_cast<int>(ids.size()) < needed)
      throw std::invalid_argument("text window " + std::to_string(i) + " gives " + std::to_string(ids.size()) +
                                  " tokens, " + std::to_string(needed) + " needed (raise --window-chars)");
    Window w;
    w.context_ids.assign(ids.begin(), ids.begin() + o.context_tokens);
    w.fed_ids.assign(ids.begin() + o.context_tokens, ids.begin() + needed - 1);
    w.target_ids.assign(ids.begin() + o.context_tokens + 1, ids.begin() + needed);
    models::KvState kv;
    model_.forward(w.context_ids, {}, &kv);
    auto reference = fp16_reference(model_, kv);
    w.reference_cache = std::move(reference.cache);
    w.reference_kv = std::move(reference.state);
    w.reference_log_probs = next_token_log_probs(model_, w.fed_ids, w.reference_kv);
    w.reference_greedy = greedy_after(model_, w.reference_kv, w.fed_ids.front(), o.greedy_tokens);
    ref_nll += mean_nll(w.reference_log_probs, w.target_ids);
    windows_.push_back(std::move(w));
  }
  ppl_ref_ = std::exp(ref_nll / double(windows_.size()));
}

QualityRow QualityProbe::measure(const codec::CodecLevel& codec_level, bool greedy) const {
  codec::check_codec_model(*codec_level.codec, model_name_);
  QualityRow row;
  row.codec = codec_level.codec->spec();
  row.level = codec_level.level;
  row.ppl_ref = ppl_ref_;
  double nll = 0, kl = 0, agree = 0, matched = 0;
  for (const auto& w : windows_) {
    const auto [bytes, decoded] = encode_decode(codec_level, w.reference_cache, model_);
    row.bytes += bytes;
    row.fp16_bytes += uint64_t(w.reference_cache.shape().fp16_bytes());
    const auto scores =
        score_continuation(w.reference_log_probs, next_token_log_probs(model_, w.fed_ids, decoded), w.target_ids);
    nll += scores.nll;
    kl += scores.kl_mean;
    agree += scores.top1_agree;
    if (greedy)
      matched += double(greedy_match_tokens(w.reference_greedy, greedy_after(model_, decoded, w.fed_ids.front(), greedy_tokens_)));
  }
  const double n = double(windows_.size());
  row.ppl = std::exp(nll / n);
  row.kl_mean = kl / n;
  row.top1_agree = agree / n;
  row.greedy_match_tokens = matched / n;
  return row;
}

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
  const auto levels = codec::codec_levels(o.codecs, o.levels);
  for (const auto& codec_level : levels) codec::check_codec_model(*codec_level.codec, m.name);  // before the prefills
  const QualityProbe probe(m, o);
  std::vector<QualityRow> rows;
  for (const auto& codec_level : levels) {
    rows.push_back(probe.measure(codec_level));
    if (on_row) on_row(rows.back());
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
