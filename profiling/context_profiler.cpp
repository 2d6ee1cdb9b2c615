#include "profiling/context_profiler.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <stdexcept>

#include "codec/codec.h"
#include "common/data_resolver.h"
#include "common/file_text.h"
#include "eval/decoded_kv.h"
#include "eval/kv_bridge.h"
#include "eval/metrics.h"

namespace kvstream::profiling {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

// Bytes of one token of text on the wire: its id as a uint32.
constexpr double kTextBytesPerToken = 4;

void check_lengths(const models::LoadedModel& m, int64_t context_tokens, int64_t continuation_tokens) {
  if (context_tokens < 1) throw std::invalid_argument("a context needs at least 1 token, got " + std::to_string(context_tokens));
  if (continuation_tokens < 2)
    throw std::invalid_argument("quality needs at least 2 continuation tokens, got " + std::to_string(continuation_tokens));
  const int64_t max_seq = m.model->config().max_seq_len;
  if (context_tokens + continuation_tokens > max_seq)
    throw std::invalid_argument("context of " + std::to_string(context_tokens) + " tokens + " +
                                std::to_string(continuation_tokens) + " continuation tokens exceed model " + m.name +
                                "'s maximum sequence length " + std::to_string(max_seq) + " (at most " +
                                std::to_string(max_seq - continuation_tokens) + " context tokens)");
}

}  // namespace

nlohmann::json LevelMeasurement::to_json() const {
  return {{"level", level},       {"codec", codec},   {"bytes", bytes},
          {"fp16_bytes", fp16_bytes}, {"ratio_vs_fp16", bytes > 0 ? fp16_bytes / bytes : 0.0},
          {"top1_agree", top1_agree}, {"ppl_ref", ppl_ref}, {"ppl", ppl},
          {"kl_mean", kl_mean},   {"encode_s", encode_s}, {"decode_s", decode_s}};
}

std::vector<ContextTokens> text_contexts(const models::LoadedModel& m, const std::string& text_path, int count,
                                         int context_tokens, int continuation_tokens, int64_t stride_chars) {
  if (count < 1) throw std::invalid_argument("context count must be at least 1, got " + std::to_string(count));
  if (stride_chars < 1) throw std::invalid_argument("stride_chars must be at least 1, got " + std::to_string(stride_chars));
  check_lengths(m, context_tokens, continuation_tokens);
  const std::string text = common::read_file_text(common::resolve_input(text_path));

  const size_t needed = size_t(context_tokens) + size_t(continuation_tokens);
  const std::string stem = std::filesystem::path(text_path).stem().string();
  std::vector<ContextTokens> out;
  for (int i = 0; i < count; ++i) {
    const std::string what = text_path + " (" + std::to_string(text.size()) + " characters): context " +
                             std::to_string(i) + " of " + std::to_string(count) + " (every " +
                             std::to_string(stride_chars) + " characters, " + std::to_string(needed) + " tokens)";
    size_t start = size_t(stride_chars) * size_t(i);
    if (start > 0 && start <= text.size() && text[start - 1] != '\n') {
      const size_t newline = text.find('\n', start);
      start = newline == std::string::npos ? text.size() : newline + 1;
    }
    if (start >= text.size()) throw std::invalid_argument(what + ": the text runs out before it starts");
    // Grow the window until it tokenizes to more than `needed` ids (one spare: the last id used is
    // then not the one the window's end may have cut).
    size_t window = std::min(text.size() - start, needed * 4 + 64);
    std::vector<int32_t> ids;
    while (true) {
      ids = m.tokenizer->encode(text.substr(start, window), true);
      if (ids.size() > needed) break;
      if (start + window >= text.size())
        throw std::invalid_argument(what + ": the text runs out: its remaining " + std::to_string(window) +
                                    " characters give only " + std::to_string(ids.size()) + " tokens");
      const double scale = std::max(1.25, 1.1 * double(needed + 1) / double(std::max<size_t>(ids.size(), 1)));
      window = std::min(text.size() - start, size_t(std::ceil(double(window) * scale)));
    }
    ContextTokens c;
    c.name = stem + "-" + std::to_string(i);
    c.context_ids.assign(ids.begin(), ids.begin() + context_tokens);
    c.continuation_ids.assign(ids.begin() + context_tokens, ids.begin() + std::ptrdiff_t(needed));
    out.push_back(std::move(c));
  }
  return out;
}

ChunkedPrefill chunked_prefill(const models::LlamaModel& model, const std::vector<int32_t>& ids, int64_t chunk_tokens) {
  if (chunk_tokens < 1) throw std::invalid_argument("chunk_tokens must be at least 1, got " + std::to_string(chunk_tokens));
  if (ids.empty()) throw std::invalid_argument("chunked_prefill: no tokens");
  const auto ranges = codec::chunk_ranges(int64_t(ids.size()), chunk_tokens);
  auto slice = [&](int64_t t0, int64_t t1) { return std::vector<int32_t>(ids.begin() + t0, ids.begin() + t1); };
  // Warm-up (untimed): the first forward of a process pays one-off allocations and thread start-up.
  model.forward(slice(ranges[0].first, ranges[0].second), {}, nullptr, true).sum().item<float>();
  ChunkedPrefill out;
  for (const auto& [t0, t1] : ranges) {
    const auto chunk = slice(t0, t1);
    models::KvState next;
    const auto start = Clock::now();
    // Only the last position's logits: recompute needs the KV, not the chunk's predictions.
    model.forward(chunk, out.kv, &next, /*last_logits_only=*/true).sum().item<float>();  // item waits for the device
    out.chunk_seconds.push_back(seconds_since(start));
    out.kv = std::move(next);  // prefix + this chunk
  }
  return out;
}

MeasuredContext profile_context(const models::LoadedModel& m, const ContextTokens& context, const ProfilingOptions& options,
                                ProfiledBitstreams* keep) {
  const auto planned = plan_levels(options);
  for (const auto& p : planned) codec::check_codec_model(*p.codec, m.name);
  const int64_t T = int64_t(context.context_ids.size());
  const int64_t K = int64_t(context.continuation_ids.size());
  check_lengths(m, T, K);
  const auto& model = *m.model;
  const auto& config = model.config();

  MeasuredContext out;
  out.fp16_bytes_per_token = config.fp16_kv_bytes_per_token();
  auto& profile = out.profile;
  profile.name = context.name;
  profile.model = m.name;
  profile.chunk_tokens = options.chunk_tokens;
  for (const auto& p : planned) profile.levels.push_back(p.info);

  // 1. Chunked prefill: the KV and recompute_s per chunk.
  const auto ranges = codec::chunk_ranges(T, options.chunk_tokens);
  const ChunkedPrefill prefill = chunked_prefill(model, context.context_ids, options.chunk_tokens);
  for (size_t c = 0; c < ranges.size(); ++c) {
    sim::ChunkProfile chunk;
    chunk.start_token = ranges[c].first;
    chunk.tokens = ranges[c].second - ranges[c].first;
    chunk.text_bytes = kTextBytesPerToken * double(chunk.tokens);
    chunk.recompute_s = prefill.chunk_seconds[c];
    chunk.levels.resize(planned.size());
    profile.chunks.push_back(std::move(chunk));
  }

  // 2. The fp16 reference and its next-token predictions on the continuation.
  const eval::ReferenceKv reference = eval::fp16_reference(model, prefill.kv);
  const std::vector<int32_t> fed(context.continuation_ids.begin(), context.continuation_ids.end() - 1);
  const std::vector<int32_t> targets(context.continuation_ids.begin() + 1, context.continuation_ids.end());
  const torch::Tensor reference_log_probs = eval::next_token_log_probs(model, fed, reference.state);
  const double ppl_ref = std::exp(eval::mean_nll(reference_log_probs, targets));
  if (keep) {
    keep->reference_log_probs = reference_log_probs;
    keep->levels.assign(ranges.size(), std::vector<std::vector<uint8_t>>(planned.size()));
  }

  // 3. Per level: every chunk encoded and decoded on its own, then the decoded context scored.
  for (size_t l = 0; l < planned.size(); ++l) {
    const auto& p = planned[l];
    LevelMeasurement measured;
    measured.level = p.info.name;
    measured.codec = p.info.codec;
    measured.ppl_ref = ppl_ref;
    std::vector<codec::KvCache> decoded_chunks;
    decoded_chunks.reserve(ranges.size());
    for (size_t c = 0; c < ranges.size(); ++c) {
      const auto view = reference.cache.chunk(ranges[c].first, ranges[c].second);
      auto start = Clock::now();
      const std::vector<uint8_t> bits = p.codec->encode(view, p.level, view.t0());
      const double encode_s = seconds_since(start);
      start = Clock::now();
      codec::DecodedChunk decoded = codec::decode_bitstream(bits, p.decode_context);
      const double decode_s = seconds_since(start);
      if (decoded.kv.shape() != view.shape())
        throw std::runtime_error("codec " + p.info.name + " decoded chunk " + std::to_string(c) + " as " +
                                 decoded.kv.shape().to_string() + ", encoded " + view.shape().to_string());
      auto& cost = profile.chunks[c].levels[l];
      cost.bytes = double(bits.size());
      cost.encode_s = encode_s;
      cost.decode_s = decode_s;
      measured.bytes += cost.bytes;
      measured.fp16_bytes += double(view.shape().fp16_bytes());
      measured.encode_s += encode_s;
      measured.decode_s += decode_s;
      decoded_chunks.push_back(std::move(decoded.kv));
      if (keep) keep->levels[c][l] = bits;
    }
    const models::KvState decoded_state =
        eval::to_kv_state(codec::KvCache::concat_tokens(decoded_chunks), config, model.device());
    decoded_chunks.clear();
    const auto scores =
        eval::score_continuation(reference_log_probs, eval::next_token_log_probs(model, fed, decoded_state), targets);
    measured.ppl = std::exp(scores.nll);
    measured.kl_mean = scores.kl_mean;
    measured.top1_agree = scores.top1_agree;
    // Whole-context quality, the same for every chunk (see the header).
    for (auto& chunk : profile.chunks) chunk.levels[l].quality = std::clamp(measured.top1_agree, 0.0, 1.0);
    out.levels.push_back(std::move(measured));
  }
  return out;
}

}  // namespace kvstream::profiling
