#include "experiments/results_merge.h"

#include <algorithm>
#include <ostream>
#include <stdexcept>
#include <thread>

#include "common/atomic_file.h"
#include "common/file_text.h"
#include "common/json_reader.h"
#include "experiments/result_dir.h"
#include "experiments/result_dir_claim.h"
#include "experiments/run_log_sort.h"

namespace kvstream::experiments {

namespace fs = std::filesystem;

MergeReport merge_results(const std::vector<fs::path>& dirs, const fs::path& out, bool figures, RunLogFormat format,
                          std::ostream& log) {
  if (dirs.empty()) throw std::invalid_argument("merge needs at least one result directory");
  std::error_code ec;
  ResultDirClaim claim(out, "kvstream merge", [&] {
    if (find_run_log(out))
      throw std::runtime_error(out.string() + " already holds results; merge into a new directory");
  });
  const nlohmann::json config = common::read_json_file((dirs.front() / "config.json").string());
  const std::string levels = common::read_file_text(dirs.front() / "levels.csv");  // equal in every shard: same profiles_hash
  std::vector<RunLogSource> sources;
  nlohmann::json merged_from = nlohmann::json::array();
  size_t grid_runs = 0;
  nlohmann::json manifest;
  for (const auto& dir : dirs) {
    if (fs::equivalent(dir, out, ec)) throw std::runtime_error("--out must differ from the merged directories");
    if (common::read_json_file((dir / "config.json").string()) != config)
      throw std::runtime_error((dir / "config.json").string() + " differs from " + (dirs.front() / "config.json").string() +
                               ": only shards of one experiment can be merged");
    const auto shard_manifest = common::read_json_file((dir / "manifest.json").string());
    const std::string state = shard_manifest.value("state", std::string("?"));
    if (state != "complete")
      throw std::runtime_error(dir.string() + " is not finished (state \"" + state +
                               "\"): run it again with --resume first");
    if (manifest.is_null()) {
      manifest = shard_manifest;
      grid_runs = shard_manifest.at("grid_runs").get<size_t>();
    }
    for (const char* key : {"grid_runs", "profiles_hash"})
      if (shard_manifest.value(key, nlohmann::json()) != manifest.value(key, nlohmann::json()))
        throw std::runtime_error(dir.string() + "/manifest.json: " + key + " " + shard_manifest.value(key, nlohmann::json()).dump() +
                                 " differs from " + dirs.front().string() + "'s " + manifest.value(key, nlohmann::json()).dump() +
                                 (std::string(key) == "profiles_hash"
                                      ? ": the shards ran on different context profiles (share one --profile-cache)"
                                      : ": not shards of one grid"));
    merged_from.push_back({{"dir", dir.string()}, {"shard", shard_manifest.at("shard")},
                           {"sessions", shard_manifest.at("sessions")}});
    if (const auto runs = find_run_log(dir)) sources.push_back({*runs, dir.string()});
  }
  // Every run once: found while the runs are sorted into the new log, which is then not committed.
  const auto check_covered = [&](size_t runs) {
    if (runs == grid_runs) return;
    std::string shards;
    for (const auto& m : merged_from) shards += (shards.empty() ? "" : ", ") + m.at("shard").get<std::string>();
    throw std::runtime_error("the directories hold " + std::to_string(runs) + " of the grid's " +
                             std::to_string(grid_runs) + " runs (shards given: " + shards + "): a shard is missing");
  };

  // The run log comes first: a run that differs between shards or a missing shard stops the merge
  // before any file is written.
  claim.lock();
  const ResultDir result(out);
  const SortedRunLog sorted = write_sorted_run_log(sources, run_log_path(out, format),
                                                   int(std::max(1u, std::thread::hardware_concurrency())), check_covered);
  claim.keep();
  result.write_json("config.json", config);
  common::write_file_atomically(result.file("levels.csv"), [&](std::ostream& o) { o << levels; });
  fs::copy(dirs.front() / "profiles", result.file("profiles"),
           fs::copy_options::recursive | fs::copy_options::overwrite_existing);
  manifest["shard"] = "0/1";
  manifest["shard_runs"] = grid_runs;
  manifest["merged_from"] = merged_from;
  manifest.erase("sessions");
  return result.finish(sorted.runs, sorted.summary, std::move(manifest), figures, log);
}

}  // namespace kvstream::experiments
