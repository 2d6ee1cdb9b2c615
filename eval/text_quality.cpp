#include "eval/text_quality.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "codec/codec.h"
#include "codec/half.h"
#include "common/data_resolver.h"
#include "eval/kv_bridge.h"

namespace kvstream::eval {
namespace {

struct Context {
  std::vector<int32_t> context_ids, fed_ids, target_ids;
  models::KvState reference_kv;
  codec::KvCache reference_cache;  // fp16-rounded
  torch::Tensor reference_log_probs;  // [K-1, vocab]
  std::vector<int32_t> reference_greedy;
};

std::string read_text(const std::string& path) {
  std::ifstream in(common::resolve_input(path), std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

std::vector<Context> prepare(const models::LoadedModel& m, const QualityOptions& o) {
  const std::string text = read_text(o.text_path);
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
    c.reference_log_probs = torch::log_softmax(model.forward(c.fed_ids, c.reference_kv, nullptr), -1).to(torch::kFloat64);
    c.reference_greedy = greedy_after(model, c.reference_kv, c.fed_ids.front(), o.greedy_tokens);
    contexts.push_back(std::move(c));
  }
  return contexts;
}

double mean_nll(const torch::Tensor& log_probs, const std::vector<int32_t>& targets) {
  const auto t = torch::tensor(std::vector<int64_t>(targets.begin(), targets.end())).unsqueeze(1);
  return -log_probs.gather(1, t).mean().item<double>();
}

}  // namespace

nlohmann::json QualityRow::to_json() const {
  return {{"codec", codec},
          {"level", level},
          {"bytes", bytes},
          {"ratio_vs_fp16", double(fp16_bytes) / double(bytes)},
          {"ppl_ref", ppl_ref},
          {"ppl", ppl},
          {"ppl_delta", ppl - ppl_ref},
          {"kl_mean", kl_mean},
          {"top1_agree", top1_agree},
          {"greedy_match_tokens", greedy_match_tokens}};
}

std::vector<QualityRow> run_quality(const models::LoadedModel& m, const QualityOptions& o,
                                    const std::function<void(const QualityRow&)>& on_row) {
  const auto contexts = prepare(m, o);
  const auto& model = *m.model;
  double ref_nll = 0;
  for (const auto& c : contexts) ref_nll += mean_nll(c.reference_log_probs, c.target_ids);
  const double ppl_ref = std::exp(ref_nll / double(contexts.size()));

  std::vector<QualityRow> rows;
  for (const auto& codec_level : codec_levels(o.codecs, o.levels)) {
    QualityRow row;
    row.codec = codec_level.codec->spec();
    row.level = codec_level.level;
    row.ppl_ref = ppl_ref;
    double nll = 0, kl = 0, agree = 0, greedy = 0;
    for (const auto& c : contexts) {
      const auto [bytes, decoded] = encode_decode(codec_level, c.reference_cache, model);
      row.bytes += bytes;
      row.fp16_bytes += uint64_t(c.reference_cache.shape().fp16_bytes());
      const auto log_probs = torch::log_softmax(model.forward(c.fed_ids, decoded, nullptr), -1).to(torch::kFloat64);
      nll += mean_nll(log_probs, c.target_ids);
      // KL(reference || decoded) per position, averaged.
      kl += (c.reference_log_probs.exp() * (c.reference_log_probs - log_probs)).sum(-1).mean().item<double>();
      agree += (c.reference_log_probs.argmax(-1) == log_probs.argmax(-1)).to(torch::kFloat64).mean().item<double>();
      const auto g = greedy_after(model, decoded, c.fed_ids.front(), o.greedy_tokens);
      size_t same = 0;
      while (same < g.size() && g[same] == c.reference_greedy[same]) ++same;
      greedy += double(same);
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

std::vector<CodecLevel> codec_levels(const std::vector<std::string>& codecs, const std::vector<int>& levels) {
  std::vector<CodecLevel> out;
  for (const auto& spec : codecs) {
    const std::shared_ptr<const codec::Codec> codec = codec::make_codec(spec);
    for (int level : codec->levels())
      if (levels.empty() || std::find(levels.begin(), levels.end(), level) != levels.end()) out.push_back({codec, level});
  }
  return out;
}

ReferenceKv fp16_reference(const models::LlamaModel& model, const models::KvState& kv) {
  ReferenceKv r;
  r.cache = to_kv_cache(kv, model.config());
  for (float& v : r.cache.values()) v = codec::round_to_half(v);
  r.state = to_kv_state(r.cache, model.config(), model.device());
  return r;
}

DecodedKv encode_decode(const CodecLevel& codec_level, const codec::KvCache& reference, const models::LlamaModel& model) {
  const auto bits = codec_level.codec->encode(reference.all(), codec_level.level, 0);
  return {bits.size(), to_kv_state(codec::decode_bitstream(bits).kv, model.config(), model.device())};
}

std::vector<int32_t> greedy_after(const models::LlamaModel& model, const models::KvState& kv, int32_t first, int steps,
                                  int32_t stop) {
  std::vector<int32_t> out;
  models::KvState state = kv;
  int32_t token = first;
  for (int i = 0; i < steps; ++i) {
    models::KvState next;
    const auto logits = model.forward({token}, state, &next, true);
    token = static_cast<int32_t>(logits[-1].argmax().item<int64_t>());
    if (token == stop) break;
    out.push_back(token);
    state = std::move(next);
  }
  return out;
}

}  // namespace kvstream::eval
