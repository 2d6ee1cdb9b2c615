#include "emulation/model/model_emulation.h"

#include <stdexcept>

#include "codec/format/byte_io.h"
#include "common/data_resolver.h"
#include "emulation/model/model_job_runner.h"
#include "models/model_catalog.h"
#include "profiling/context_profiler.h"
#include "profiling/level_plan.h"
#include "profiling/model_context_request.h"

namespace kvstream::emulation {

namespace {

// A chunk's text on the wire: its token ids as uint32 little-endian (the profile's text_bytes).
std::vector<uint8_t> token_bytes(const std::vector<int32_t>& ids, int64_t t0, int64_t t1) {
  std::vector<uint8_t> bytes;
  codec::ByteWriter out(bytes);
  for (int64_t t = t0; t < t1; ++t) out.put<uint32_t>(uint32_t(ids[size_t(t)]));
  return bytes;
}

class ModelContext final : public RealKvContext {
 public:
  ModelContext(const RealKvOptions& options, const std::function<void(const std::string&)>& log) {
    if (options.context < 0) throw std::invalid_argument("the context index must be >= 0");
    log("loading model " + options.model);
    model_ = models::load_model(options.model);
    const std::string text = common::resolve_input(options.text).string();
    auto contexts = profiling::text_contexts(model_, text, options.context + 1, options.tokens,
                                             options.continuation_tokens, profiling::ModelContexts{}.stride_chars);
    const profiling::ContextTokens context = std::move(contexts.back());
    const profiling::ProfilingOptions profiling{options.chunk_tokens, options.codecs, options.levels};
    log("profiling " + context.name + " (" + std::to_string(options.tokens) + " tokens) on " + model_.name);
    profiling::ProfiledBitstreams kept;
    profile_ = profiling::profile_context(model_, context, profiling, &kept).profile;

    payloads_.levels = std::move(kept.levels);
    client_.model = model_.model.get();
    for (const auto& chunk : profile_.chunks) {
      client_.chunk_ranges.emplace_back(chunk.start_token, chunk.start_token + chunk.tokens);
      payloads_.text.push_back(token_bytes(context.context_ids, chunk.start_token, chunk.start_token + chunk.tokens));
    }
    for (const auto& level : profiling::plan_levels(profiling)) client_.decode_contexts.push_back(level.decode_context);
    const auto& continuation = context.continuation_ids;
    client_.query_ids.assign(continuation.begin(), continuation.end() - 1);
    client_.targets.assign(continuation.begin() + 1, continuation.end());
    client_.reference_log_probs = kept.reference_log_probs;
  }

  const sim::ContextProfile& profile() const override { return profile_; }

  EmulationReport emulate(const sim::SimulationInputs& inputs, const EmulatorOptions& options) override {
    if (inputs.contexts.size() != 1 || inputs.contexts[0].name != profile_.name ||
        inputs.contexts[0].chunks.size() != profile_.chunks.size())
      throw std::invalid_argument("an emulation with real KV streams its own context, " + profile_.name + ", alone");
    ReceivedChunks received;
    ModelJobRunner runner(client_, received);
    EmulationReport report = emulation::emulate(inputs, RealKv{payloads_, received, runner}, options);
    for (auto& result : report.results) result.quality = runner.scores(result.request).top1_agree;
    return report;
  }

 private:
  models::LoadedModel model_;
  sim::ContextProfile profile_;
  ChunkPayloads payloads_;
  ClientContext client_;
};

}  // namespace

std::unique_ptr<RealKvContext> prepare_model_context(const RealKvOptions& options,
                                                     const std::function<void(const std::string&)>& log) {
  return std::make_unique<ModelContext>(options, log);
}

}  // namespace kvstream::emulation
