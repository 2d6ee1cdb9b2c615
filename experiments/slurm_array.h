// Which shard of a sweep a Slurm array task runs (`kvstream run` inside `sbatch --array=0-(N-1)`): task
// i of N runs Shard{i, N}, so the tasks of one array cover the grid exactly once (experiment_grid.h).
// Slurm describes the task in its environment: SLURM_ARRAY_TASK_ID, _MIN, _MAX, _COUNT and, for
// --array=A-B:S, _STEP. A task counts from _MIN by _STEP; an array given as a list with holes
// (--array=0,3,7) cannot say which shards the missing ids would have run, so it is refused.
#pragma once
#include <filesystem>
#include <functional>
#include <optional>

#include "experiments/experiment_grid.h"

namespace kvstream::experiments {

// The environment lookup (std::getenv in use; a map in tests): null when a variable is unset.
using EnvLookup = std::function<const char*(const char*)>;

// Nullopt outside an array task (SLURM_ARRAY_TASK_ID unset). Throws std::invalid_argument naming the
// variable for values that are not numbers, a task id outside [_MIN, _MAX], or an array whose ids
// are not the whole range _MIN.._MAX by _STEP.
std::optional<Shard> slurm_array_shard(const EnvLookup& env);

// Where shard i/N of a sweep into `out` writes when run as a Slurm task: out/shards/<i>-of-<N>.
std::filesystem::path shard_result_dir(const std::filesystem::path& out, const Shard& shard);

}  // namespace kvstream::experiments
