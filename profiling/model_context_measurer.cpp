#include "profiling/model_context_measurer.h"

#include <chrono>
#include <cstdio>
#include <stdexcept>

#include "codec/codec.h"
#include "codec/format/bitstream.h"
#include "common/content_hash.h"
#include "common/error_text.h"
#include "models/model_catalog.h"
#include "profiling/context_profiler.h"
#include "profiling/fitted_transform.h"

namespace kvstream::profiling {

namespace {

// Bumped whenever profile_context measures differently, so old cache entries are not reused.
constexpr int kProfilerVersion = 2;  // 2: the default rANS sub-chunk of wide rows

std::string ids_hash(const std::vector<int32_t>& ids) {
  return common::hex64(common::fnv1a64(ids.data(), ids.size() * sizeof(int32_t)));
}

// What identifies the model's numbers without hashing every weight: its shape and checksums of the
// embedding and final norm.
nlohmann::json model_fingerprint(const models::LoadedModel& loaded) {
  const auto& c = loaded.model->config();
  const auto& w = loaded.model->weights();
  char sums[96];
  std::snprintf(sums, sizeof sums, "%.17g/%.17g/%.17g", w.token_embedding.to(torch::kDouble).sum().item<double>(),
                w.token_embedding.to(torch::kDouble).abs().sum().item<double>(),
                w.final_norm.to(torch::kDouble).sum().item<double>());
  return {{"name", loaded.name}, {"dim", c.dim}, {"hidden_dim", c.hidden_dim}, {"layers", c.n_layers},
          {"heads", c.n_heads}, {"kv_heads", c.n_kv_heads}, {"vocab", c.vocab_size}, {"checksums", sums}};
}

struct Loaded {
  models::LoadedModel model;
  ModelContexts used;
  bool fallback = false;
};

// The set's model, else its fallback when the model's files are missing.
Loaded load_set_model(const ModelContextsRequest& request, const ProgressLog& log) {
  const std::string& path = request.where;
  try {
    return {models::load_model(request.contexts.model), request.contexts, false};
  } catch (const std::invalid_argument& e) {
    throw std::runtime_error(path + ".model: " + e.what());
  } catch (const std::runtime_error& e) {
    if (!request.fallback) throw std::runtime_error(path + ".model: " + e.what());
    log("context set " + request.set_name + ": model " + request.contexts.model + " is not available (" +
        common::first_line(e) + "); using the fallback " + request.fallback->model);
  }
  try {
    return {models::load_model(request.fallback->model), *request.fallback, true};
  } catch (const std::exception& e) {
    throw std::runtime_error(path + ".fallback.model: " + e.what());
  }
}

// levels.csv rows of one measured set: sums over its contexts.
std::vector<nlohmann::json> measured_level_rows(const std::string& set, const std::string& model,
                                                const std::vector<nlohmann::json>& results) {
  std::vector<nlohmann::json> rows;
  const auto& first = results.front().at("levels");
  for (size_t l = 0; l < first.size(); ++l) {
    double tokens = 0, bytes = 0, fp16 = 0, top1 = 0, ppl_ref = 0, ppl = 0, kl = 0, encode_s = 0, decode_s = 0;
    for (const auto& r : results) {
      const auto& m = r.at("levels").at(l);
      for (const auto& chunk : r.at("profile").at("chunks")) tokens += chunk.at("tokens").get<double>();
      bytes += m.at("bytes").get<double>();
      fp16 += m.at("fp16_bytes").get<double>();
      top1 += m.at("top1_agree").get<double>();
      ppl_ref += m.at("ppl_ref").get<double>();
      ppl += m.at("ppl").get<double>();
      kl += m.at("kl_mean").get<double>();
      encode_s += m.at("encode_s").get<double>();
      decode_s += m.at("decode_s").get<double>();
    }
    const double n = static_cast<double>(results.size());
    rows.push_back({{"context_set", set}, {"model", model}, {"level", first.at(l).at("level")},
                    {"codec", first.at(l).at("codec")}, {"contexts", results.size()}, {"tokens", tokens},
                    {"bytes", bytes / n}, {"bytes_per_token", bytes / tokens}, {"ratio_vs_fp16", fp16 / bytes},
                    {"quality", top1 / n}, {"ppl_ref", ppl_ref / n}, {"ppl", ppl / n}, {"kl_mean", kl / n},
                    {"encode_mb_per_s", fp16 / encode_s / 1e6}, {"decode_mb_per_s", fp16 / decode_s / 1e6}});
  }
  return rows;
}

}  // namespace

MeasuredContextSet measure_model_contexts(const ModelContextsRequest& request, const ProfileCache& cache,
                                          const ProgressLog& log) {
  const std::string& path = request.where;
  const Loaded loaded = load_set_model(request, log);
  const ModelContexts& m = loaded.used;
  std::vector<ContextTokens> contexts;
  try {
    contexts = text_contexts(loaded.model, m.dataset, m.count, m.tokens, m.continuation_tokens, m.stride_chars);
  } catch (const std::exception& e) {
    throw std::runtime_error(path + (loaded.fallback ? ".fallback" : "") + ": " + e.what());
  }
  const nlohmann::json fingerprint = model_fingerprint(loaded.model);
  ProfilingOptions options{m.chunk_tokens, request.codecs, request.levels};
  nlohmann::json codec_contents = nlohmann::json::array();  // the files the specs name, by content
  nlohmann::json codecs_used = nlohmann::json::array();     // the same for manifest.json, spec by spec
  try {
    options.runs_as = fit_transform_specs(request.codecs, loaded.model, m.transform_fit, fingerprint, cache.dir(), log);
    for (const auto& spec : request.codecs) {
      const auto codec = codec::make_codec(options.runnable(spec));
      codec::check_codec_model(*codec, loaded.model.name);
      codec_contents.push_back(codec->content_id());
      codecs_used.push_back({{"spec", spec}, {"runs_as", options.runnable(spec)}, {"content_id", codec->content_id()}});
    }
  } catch (const std::exception& e) {
    throw std::runtime_error(path + (loaded.fallback ? ".fallback" : "") + ": " + e.what());
  }
  MeasuredContextSet out;
  out.fp16_bytes_per_token = loaded.model.model->config().fp16_kv_bytes_per_token();
  std::vector<nlohmann::json> results;
  nlohmann::json keys = nlohmann::json::array();
  for (const auto& context : contexts) {
    const nlohmann::json inputs = {{"profiler_version", kProfilerVersion},
                                   {"bitstream_version", codec::kBitstreamVersion}, {"model", fingerprint},
                                   {"context", context.name}, {"context_ids", ids_hash(context.context_ids)},
                                   {"continuation_ids", ids_hash(context.continuation_ids)},
                                   {"chunk_tokens", m.chunk_tokens}, {"codecs", request.codecs},
                                   {"codec_contents", codec_contents}, {"levels", request.levels}};
    const std::string name = request.set_name + "/" + context.name;
    const auto entry = cache.path(ProfileCache::key(inputs));
    auto result = cache.load(inputs);
    if (result) {
      log("context " + name + ": profile from the cache (" + entry.string() + ")");
    } else {
      const auto start = std::chrono::steady_clock::now();
      MeasuredContext measured;
      try {
        measured = profile_context(loaded.model, context, options);
      } catch (const std::exception& e) {
        throw std::runtime_error(path + ": " + context.name + ": " + e.what());
      }
      nlohmann::json levels = nlohmann::json::array();
      for (const auto& level : measured.levels) levels.push_back(level.to_json());
      result = nlohmann::json{{"profile", sim::to_json(measured.profile)}, {"levels", levels}};
      cache.store(inputs, *result);
      log("context " + name + ": profiled " + std::to_string(context.context_ids.size()) + " tokens x " +
          std::to_string(measured.levels.size()) + " levels in " +
          std::to_string(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count()) + " s");
    }
    out.profiles.push_back(sim::context_profile_from_json(result->at("profile"), entry.string()));
    results.push_back(*result);
    keys.push_back(ProfileCache::key(inputs));
  }
  out.level_rows = measured_level_rows(request.set_name, loaded.model.name, results);
  out.provenance = {{"model_requested", request.contexts.model}, {"model_used", loaded.model.name},
                    {"fallback_used", loaded.fallback}, {"dataset", m.dataset}, {"tokens", m.tokens},
                    {"chunk_tokens", m.chunk_tokens}, {"codecs", codecs_used}, {"profile_cache_keys", keys}};
  return out;
}

}  // namespace kvstream::profiling
