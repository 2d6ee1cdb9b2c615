// Context profiles measured on a real model (docs/ARCHITECTURE.md §1 step 1, "Offline, per context"):
// prefill the context chunk by chunk, encode every chunk at every level of every codec, decode it
// again, time both, and score the decoded KV. The result is the simulator's input
// (sim/context_profile.h, JSON in sim/README.md "Context profile JSON") plus per-level measurements
// for reports. `kvstream run` calls this once per (model, context, chunk size, codecs).
//
// What profile_context measures, and the modelling choices behind it:
//  - Prefill. Chunk c covers tokens [c·chunk_tokens, min(T, (c+1)·chunk_tokens)) (the last chunk may
//    be shorter). Its forward attends to the KV of chunks 0..c-1 (the cached prefix) and to itself,
//    so the concatenated KV equals one full-context prefill up to float rounding. The wall time of
//    that forward (steady_clock, after an untimed warm-up forward, waiting for the device) is the
//    chunk's `recompute_s`: what recomputing the chunk from text costs once its prefix is cached.
//  - Reference. The full KV rounded to fp16 (the wire dtype, `fp16_reference`) is what every codec
//    encodes and what decoded KV is compared with.
//  - Codec costs. Every chunk is encoded at every level as its own bitstream (CacheGen chunks are
//    decoded independently); `bytes` is the bitstream size, `encode_s` / `decode_s` the wall times
//    of encode and of decode_bitstream (steady_clock, one thread of this process; the decode time
//    excludes the copy back into torch tensors).
//  - Quality. The decoded chunks of one level, concatenated along tokens, are the context's decoded
//    KV at that level. The K continuation tokens are scored the `kvstream quality` way
//    (eval/text_quality.h, eval/metrics.h): continuation_ids[0, K-1) are fed after the KV at positions T..T+K-2
//    and their next-token distributions are compared with those after the reference KV:
//      top1_agree  share of the K-1 positions whose argmax equals the reference's   (in [0, 1])
//      ppl, ppl_ref perplexity of continuation_ids[1, K) after the decoded / reference KV
//      kl_mean     mean over positions of KL(reference || decoded)
//    The profile's per-(chunk, level) `quality` is the WHOLE-CONTEXT top-1 agreement of the level,
//    the same for every chunk (one model forward per level, not per chunk × level). A plan that
//    mixes levels across chunks is then valued by the simulator at the token-weighted mean of the
//    chunks' qualities: an interpolation between measured whole-context levels, not a measurement
//    of the mixed KV.
//  - Text. A chunk's `text_bytes` is 4 bytes per token: token ids sent as uint32 on the wire.
//  - Levels and their names: profiling/level_plan.h.
#pragma once
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "models/llama_model.h"
#include "models/model_catalog.h"
#include "profiling/level_plan.h"
#include "sim/context_profile.h"

namespace kvstream::profiling {

// One context to profile, as tokens: the context itself and the K real tokens that follow it.
struct ContextTokens {
  std::string name;
  std::vector<int32_t> context_ids;       // T tokens, BOS first
  std::vector<int32_t> continuation_ids;  // the K tokens that follow (for quality)
};

// `count` contexts from a text file (a data-resolved path, common::resolve_input). Context i starts at
// character stride_chars·i, moved forward to the next line start (unless already at one); it takes
// the shortest window of characters (grown geometrically) whose tokenization, with BOS, gives more
// than context_tokens + continuation_tokens tokens (one spare, so that the last token used is not cut
// by the window's end); the first context_tokens ids are the context, the next continuation_tokens the
// continuation. Named "<file stem>-<i>".
// Throws std::invalid_argument naming the file when the text runs out before a context has enough
// tokens, and for count < 1, stride_chars < 1, context_tokens < 1, continuation_tokens < 2, or
// context_tokens + continuation_tokens beyond the model's max_seq_len.
std::vector<ContextTokens> text_contexts(const models::LoadedModel& model, const std::string& text_path, int count,
                                         int context_tokens, int continuation_tokens, int64_t stride_chars);

// One profile level measured on the whole context (all chunks at that level): for reports
// (levels.csv of the runner). bytes / fp16_bytes / encode_s / decode_s are sums over the chunks.
struct LevelMeasurement {
  std::string level, codec;  // LevelInfo::name and ::codec
  double bytes = 0, fp16_bytes = 0;
  double top1_agree = 0, ppl_ref = 0, ppl = 0, kl_mean = 0;
  double encode_s = 0, decode_s = 0;
  nlohmann::json to_json() const;  // the fields above, plus ratio_vs_fp16
};

struct MeasuredContext {
  sim::ContextProfile profile;           // the simulator's input
  std::vector<LevelMeasurement> levels;  // aligned with profile.levels
  double fp16_bytes_per_token = 0;       // of this model: 2 (K, V) · n_layers · n_kv_heads·head_dim · 2 bytes
};

// What profiling made that a client receiving real KV needs too (`kvstream emulate --model`,
// emulation/model/): every chunk's bitstream at every level, and the fp16 reference's next-token
// log-probabilities on the continuation, which a request's KV is scored against.
struct ProfiledBitstreams {
  std::vector<std::vector<std::vector<uint8_t>>> levels;  // [chunk][level]
  torch::Tensor reference_log_probs;                      // [K-1, vocab]
};

// Measures `context` on `model` (see the top of this file); with `keep`, also fills it. Throws
// std::invalid_argument for chunk_tokens < 1, an empty context, fewer than 2 continuation tokens, a
// context longer than the model's max_seq_len minus K, no codecs, an unknown or malformed codec
// spec, a levels filter that leaves a ladder codec without levels, and duplicate level names.
MeasuredContext profile_context(const models::LoadedModel& model, const ContextTokens& context, const ProfilingOptions& options,
                                ProfiledBitstreams* keep = nullptr);

// Chunked prefill (the first bullet above): the KV of all of `ids` and the wall time of each chunk's
// forward after its prefix.
struct ChunkedPrefill {
  models::KvState kv;
  std::vector<double> chunk_seconds;
};
ChunkedPrefill chunked_prefill(const models::LlamaModel& model, const std::vector<int32_t>& ids, int64_t chunk_tokens);

}  // namespace kvstream::profiling
