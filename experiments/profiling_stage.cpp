#include "experiments/profiling_stage.h"

#include <stdexcept>

#include "codec/codec.h"
#include "common/data_resolver.h"
#include "profiling/kv_scale.h"
#include "profiling/level_plan.h"
#include "profiling/profile_cache.h"

namespace kvstream::experiments {

namespace {

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
                                                const std::filesystem::path& cache_dir,
                                                const profiling::ModelContextMeasurer& measure_model,
                                                const profiling::ProgressLog& log) {
  try {
    std::vector<std::string> plannable;  // transform specs without cal= are planned once fitted to a model
    for (const auto& spec : config.codecs)
      if (!codec::transform_needs_calibration(spec)) plannable.push_back(spec);
    if (!plannable.empty()) profiling::profile_levels(profiling::ProfilingOptions{1, plannable, config.levels});
  } catch (const std::invalid_argument& e) {
    throw std::runtime_error(where + ": $.codecs / $.levels: " + e.what());
  }
  const profiling::ProfileCache cache(cache_dir);
  for (const auto& set : config.context_sets)
    if (set.source == ContextSource::kModel && !measure_model)
      throw std::runtime_error(where + ": " + set.json_path + ": context set \"" + set.name + "\" measures model " +
                               set.measured.model + ", but this kvstream was built without LibTorch "
                               "(-DWITH_TORCH=OFF): build it with LibTorch, or give profile files (\"source\": "
                               "\"files\", e.g. the profiles/ of an earlier run)");
  std::vector<LoadedContextSet> sets;
  for (size_t i = 0; i < config.context_sets.size(); ++i) {
    const ContextSetConfig& set = config.context_sets[i];
    const std::string path = where + ": " + set.json_path;
    LoadedContextSet loaded;
    std::optional<double> fp16_bytes_per_token;
    if (set.source == ContextSource::kModel) {
      auto measured = measure_model({set.name, path, set.measured, set.fallback, config.codecs, config.levels}, cache, log);
      loaded.measured = std::move(measured.profiles);
      loaded.level_rows = std::move(measured.level_rows);
      loaded.provenance = std::move(measured.provenance);
      fp16_bytes_per_token = measured.fp16_bytes_per_token;
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
                                 {"note", config.decode->profile.empty()
                                              ? "per codec and level from each hardware profile's decode section "
                                                "(manifest hardware_profiles[].decode)"
                                              : "per codec and level from hardware profile " + config.decode->profile +
                                                "'s decode section, for every hardware profile's runs (manifest "
                                                "hardware_profiles[].decode and .decode_profile)"}}
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
