#include "experiments/context_sets.h"

#include <chrono>
#include <cstdio>
#include <stdexcept>

#include "common/content_hash.h"
#include "common/data_resolver.h"
#include "common/error_text.h"
#include "models/model_catalog.h"
#include "profiling/context_profiler.h"
#include "profiling/kv_scale.h"
#include "profiling/profile_cache.h"

namespace kvstream::experiments {

namespace {

// Bumped whenever profiling::profile_context measures differently, so old cache entries are not reused.
constexpr int kProfilerVersion = 1;

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
Loaded load_set_model(const ContextSetConfig& set, const std::string& path, const ProgressLog& log) {
  try {
    return {models::load_model(set.measured.model), set.measured, false};
  } catch (const std::invalid_argument& e) {
    throw std::runtime_error(path + ".model: " + e.what());
  } catch (const std::runtime_error& e) {
    if (!set.fallback) throw std::runtime_error(path + ".model: " + e.what());
    log("context set " + set.name + ": model " + set.measured.model + " is not available (" + common::first_line(e) +
        "); using the fallback " + set.fallback->model);
  }
  try {
    return {models::load_model(set.fallback->model), *set.fallback, true};
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

// levels.csv rows of profiles that were not measured here (synthetic, files): sizes and quality only.
std::vector<nlohmann::json> profile_level_rows(const std::string& set, const std::vector<sim::ContextProfile>& profiles,
                                               std::optional<double> fp16_bytes_per_token) {
  std::vector<nlohmann::json> rows;
  for (size_t l = 0; l < profiles.front().levels.size(); ++l) {
    double tokens = 0, bytes = 0, quality = 0;
    for (const auto& p : profiles)
      for (const auto& chunk : p.chunks) {
        tokens += static_cast<double>(chunk.tokens);
        bytes += chunk.levels.at(l).bytes;
        quality += chunk.levels.at(l).quality * static_cast<double>(chunk.tokens);
      }
    const auto fp16 = fp16_bytes_per_token ? nlohmann::json(*fp16_bytes_per_token * tokens / bytes) : nlohmann::json();
    rows.push_back({{"context_set", set}, {"model", profiles.front().model}, {"level", profiles.front().levels[l].name},
                    {"codec", profiles.front().levels[l].codec}, {"contexts", profiles.size()}, {"tokens", tokens},
                    {"bytes", bytes / static_cast<double>(profiles.size())}, {"bytes_per_token", bytes / tokens},
                    {"ratio_vs_fp16", fp16}, {"quality", quality / tokens}});
  }
  return rows;
}

LoadedContextSet measure_set(const ExperimentConfig& config, const ContextSetConfig& set, const std::string& path,
                             const profiling::ProfileCache& cache, const ProgressLog& log, double& fp16_bytes_per_token) {
  Loaded loaded = load_set_model(set, path, log);
  const ModelContexts& m = loaded.used;
  std::vector<profiling::ContextTokens> contexts;
  try {
    contexts = profiling::text_contexts(loaded.model, m.dataset, m.count, m.tokens, m.continuation_tokens, m.stride_chars);
  } catch (const std::exception& e) {
    throw std::runtime_error(path + (loaded.fallback ? ".fallback" : "") + ": " + e.what());
  }
  const auto& c = loaded.model.model->config();
  fp16_bytes_per_token = 2.0 * c.n_layers * c.kv_channels() * 2;
  const nlohmann::json fingerprint = model_fingerprint(loaded.model);
  LoadedContextSet out;
  std::vector<nlohmann::json> results;
  nlohmann::json keys = nlohmann::json::array();
  for (const auto& context : contexts) {
    const nlohmann::json inputs = {{"profiler_version", kProfilerVersion}, {"model", fingerprint},
                                   {"context", context.name}, {"context_ids", ids_hash(context.context_ids)},
                                   {"continuation_ids", ids_hash(context.continuation_ids)},
                                   {"chunk_tokens", m.chunk_tokens}, {"codecs", config.codecs}, {"levels", config.levels}};
    auto result = cache.load(inputs);
    if (result) {
      log("context " + set.name + "/" + context.name + ": profile from the cache (" + cache.path(profiling::ProfileCache::key(inputs)).string() + ")");
    } else {
      const auto start = std::chrono::steady_clock::now();
      profiling::MeasuredContext measured;
      try {
        measured = profiling::profile_context(loaded.model, context, profiling::ProfilingOptions{m.chunk_tokens, config.codecs, config.levels});
      } catch (const std::exception& e) {
        throw std::runtime_error(path + ": " + context.name + ": " + e.what());
      }
      nlohmann::json levels = nlohmann::json::array();
      for (const auto& level : measured.levels) levels.push_back(level.to_json());
      result = nlohmann::json{{"profile", sim::to_json(measured.profile)}, {"levels", levels}};
      cache.store(inputs, *result);
      log("context " + set.name + "/" + context.name + ": profiled " + std::to_string(context.context_ids.size()) +
          " tokens x " + std::to_string(measured.levels.size()) + " levels in " +
          std::to_string(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count()) + " s");
    }
    out.measured.push_back(sim::context_profile_from_json(result->at("profile"), cache.path(profiling::ProfileCache::key(inputs)).string()));
    results.push_back(*result);
    keys.push_back(profiling::ProfileCache::key(inputs));
  }
  out.level_rows = measured_level_rows(set.name, loaded.model.name, results);
  out.provenance = {{"model_requested", set.measured.model}, {"model_used", loaded.model.name},
                    {"fallback_used", loaded.fallback}, {"dataset", m.dataset}, {"tokens", m.tokens},
                    {"chunk_tokens", m.chunk_tokens}, {"profile_cache_keys", keys}};
  return out;
}

// Every profile of a set must offer the same levels (policies and levels.csv treat them alike).
void check_same_levels(const std::vector<sim::ContextProfile>& profiles, const std::vector<std::string>& files,
                       const std::string& path) {
  for (size_t i = 1; i < profiles.size(); ++i) {
    bool same = profiles[i].levels.size() == profiles[0].levels.size();
    for (size_t l = 0; same && l < profiles[i].levels.size(); ++l)
      same = profiles[i].levels[l].name == profiles[0].levels[l].name;
    if (!same)
      throw std::runtime_error(path + ".files[" + std::to_string(i) + "]: " + files[i] + " has other levels than " +
                               files[0] + "; a context set's profiles must share one ladder");
  }
}

}  // namespace

std::vector<LoadedContextSet> load_context_sets(const ExperimentConfig& config, const std::string& where,
                                                const std::filesystem::path& cache_dir, const ProgressLog& log) {
  try {
    profiling::profile_levels(profiling::ProfilingOptions{1, config.codecs, config.levels});
  } catch (const std::invalid_argument& e) {
    throw std::runtime_error(where + ": $.codecs / $.levels: " + e.what());
  }
  const profiling::ProfileCache cache(cache_dir);
  std::vector<LoadedContextSet> sets;
  for (size_t i = 0; i < config.context_sets.size(); ++i) {
    const ContextSetConfig& set = config.context_sets[i];
    const std::string path = where + ": " + set.json_path;
    LoadedContextSet loaded;
    std::optional<double> fp16_bytes_per_token;
    if (set.source == ContextSource::kModel) {
      double bytes = 0;
      loaded = measure_set(config, set, path, cache, log, bytes);
      fp16_bytes_per_token = bytes;
    } else if (set.source == ContextSource::kSynthetic) {
      sim::SyntheticProfileSpec spec;
      spec.n_chunks = set.synthetic_chunks;
      spec.chunk_tokens = set.synthetic_chunk_tokens;
      auto profile = sim::synthetic_profile(spec);
      profile.name = set.name;
      loaded.measured = {profile};
      fp16_bytes_per_token = 131072;  // the synthetic profile is Mistral-7B-shaped
      loaded.level_rows = profile_level_rows(set.name, loaded.measured, fp16_bytes_per_token);
      loaded.provenance = {{"synthetic", {{"chunks", spec.n_chunks}, {"chunk_tokens", spec.chunk_tokens}}}};
    } else {
      for (const auto& file : set.files) {
        try {
          loaded.measured.push_back(sim::read_context_profile(common::resolve_input(file).string()));
        } catch (const std::exception& e) {
          throw std::runtime_error(path + ".files: " + e.what());
        }
      }
      check_same_levels(loaded.measured, set.files, path);
      fp16_bytes_per_token = set.fp16_bytes_per_token;
      loaded.level_rows = profile_level_rows(set.name, loaded.measured, fp16_bytes_per_token);
      loaded.provenance = {{"files", set.files}};
    }
    loaded.provenance["source"] = to_string(set.source);
    loaded.provenance["context_set"] = set.name;
    for (const auto& profile : loaded.measured) {
      sim::ContextProfile simulated = profile;
      if (set.extrapolate) {
        simulated = profiling::extrapolate_context(profile, set.extrapolate->chunks, set.extrapolate->chunk_tokens);
        loaded.provenance["extrapolated"] = {{"chunks", set.extrapolate->chunks},
                                             {"chunk_tokens", set.extrapolate->chunk_tokens},
                                             {"note", "measured per-token costs and quality laid out on a longer context"}};
      }
      double kv_bytes_per_token = fp16_bytes_per_token.value_or(0);
      if (config.kv_scale) {
        const double factor = config.kv_scale->fp16_bytes_per_token / *fp16_bytes_per_token;
        simulated = profiling::scale_kv(std::move(simulated), factor);
        kv_bytes_per_token = config.kv_scale->fp16_bytes_per_token;
        loaded.provenance["kv_scale"] = {{"architecture", config.kv_scale->name}, {"factor", factor},
                                         {"fp16_bytes_per_token", kv_bytes_per_token}};
      }
      // The simulator times decode from a throughput and these bytes (sim::CostModel) when the config
      // asks; a profile file may carry its own.
      if (kv_bytes_per_token > 0) simulated.fp16_bytes_per_token = kv_bytes_per_token;
      if (config.decode) {
        if (!simulated.fp16_bytes_per_token)
          throw std::runtime_error(path + ": a decode throughput needs the profiles' fp16_bytes_per_token");
        loaded.provenance["decode"] =
            config.decode->from_hardware
                ? nlohmann::json{{"source", "hardware"},
                                 {"note", "per codec and level from each hardware profile's decode section "
                                          "(manifest hardware_profiles[].decode)"}}
                : nlohmann::json{{"fp16_bytes_per_s", config.decode->fp16_bytes_per_s},
                                 {"source", config.decode->source}};
      }
      loaded.simulated.push_back(std::move(simulated));
    }
    loaded.provenance["fp16_bytes_per_token"] = fp16_bytes_per_token ? nlohmann::json(*fp16_bytes_per_token) : nlohmann::json();
    sets.push_back(std::move(loaded));
  }
  return sets;
}

}  // namespace kvstream::experiments
