#include "experiments/slurm_array.h"

#include <cstdint>
#include <stdexcept>
#include <string>

namespace kvstream::experiments {
namespace {

// A non-negative integer variable, or nullopt when unset.
std::optional<uint64_t> number(const EnvLookup& env, const char* name) {
  const char* text = env(name);
  if (text == nullptr) return std::nullopt;
  const std::string value = text;
  if (value.empty() || value.size() > 9 || value.find_first_not_of("0123456789") != std::string::npos)
    throw std::invalid_argument(std::string(name) + "=\"" + value + "\" is not a task number (0..999999999)");
  return std::stoull(value);
}

}  // namespace

std::optional<Shard> slurm_array_shard(const EnvLookup& env) {
  const auto id = number(env, "SLURM_ARRAY_TASK_ID");
  if (!id) return std::nullopt;
  const uint64_t min = number(env, "SLURM_ARRAY_TASK_MIN").value_or(0);
  const auto max = number(env, "SLURM_ARRAY_TASK_MAX");
  const uint64_t step = number(env, "SLURM_ARRAY_TASK_STEP").value_or(1);
  if (!max) throw std::invalid_argument("SLURM_ARRAY_TASK_ID is set but SLURM_ARRAY_TASK_MAX is not: not a Slurm array task?");
  if (step == 0) throw std::invalid_argument("SLURM_ARRAY_TASK_STEP=0");
  if (*id < min || *id > *max || (*id - min) % step != 0)
    throw std::invalid_argument("SLURM_ARRAY_TASK_ID=" + std::to_string(*id) + " is not in the array " +
                                std::to_string(min) + "-" + std::to_string(*max) + ":" + std::to_string(step));
  const uint64_t count = (*max - min) / step + 1;
  if (const auto listed = number(env, "SLURM_ARRAY_TASK_COUNT"); listed && *listed != count)
    throw std::invalid_argument("the Slurm array has " + std::to_string(*listed) + " tasks with ids " + std::to_string(min) +
                                ".." + std::to_string(*max) + ": give it as a whole range (--array=0-" +
                                std::to_string(*listed - 1) + "), so that its tasks cover every shard");
  return Shard{(*id - min) / step, count};
}

std::filesystem::path shard_result_dir(const std::filesystem::path& out, const Shard& shard) {
  return out / "shards" / (std::to_string(shard.index) + "-of-" + std::to_string(shard.count));
}

}  // namespace kvstream::experiments
