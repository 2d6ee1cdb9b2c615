// Which shard a Slurm array task runs (experiments/slurm_array.h), from the variables Slurm sets.
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "experiments/slurm_array.h"

namespace kvstream::experiments {
namespace {

std::optional<Shard> shard_of(const std::map<std::string, std::string>& vars) {
  return slurm_array_shard([&vars](const char* name) -> const char* {
    const auto it = vars.find(name);
    return it == vars.end() ? nullptr : it->second.c_str();
  });
}

TEST(SlurmArray, OutsideAnArrayThereIsNoShard) { EXPECT_FALSE(shard_of({{"SLURM_JOB_ID", "7"}}).has_value()); }

TEST(SlurmArray, TaskIOfARangeRunsShardIOfN) {
  // --array=0-3: the four tasks are shards 0/4 .. 3/4.
  for (int id = 0; id < 4; ++id) {
    const auto shard = shard_of({{"SLURM_ARRAY_TASK_ID", std::to_string(id)}, {"SLURM_ARRAY_TASK_MIN", "0"},
                                 {"SLURM_ARRAY_TASK_MAX", "3"}, {"SLURM_ARRAY_TASK_COUNT", "4"}});
    ASSERT_TRUE(shard.has_value());
    EXPECT_EQ(shard->index, size_t(id));
    EXPECT_EQ(shard->count, 4u);
  }
  // --array=5-11:3 has ids 5, 8, 11: three shards, counted from the first id.
  const auto stepped = shard_of({{"SLURM_ARRAY_TASK_ID", "11"}, {"SLURM_ARRAY_TASK_MIN", "5"}, {"SLURM_ARRAY_TASK_MAX", "11"},
                                 {"SLURM_ARRAY_TASK_STEP", "3"}, {"SLURM_ARRAY_TASK_COUNT", "3"}});
  ASSERT_TRUE(stepped.has_value());
  EXPECT_EQ(stepped->to_string(), "2/3");
}

TEST(SlurmArray, ListsWithHolesAndBadValuesAreRefusedNamingTheVariable) {
  const auto message = [](const std::map<std::string, std::string>& vars) {
    try {
      shard_of(vars);
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  // --array=0,3,7: ids 0..7 but only three tasks.
  EXPECT_NE(message({{"SLURM_ARRAY_TASK_ID", "3"}, {"SLURM_ARRAY_TASK_MIN", "0"}, {"SLURM_ARRAY_TASK_MAX", "7"},
                     {"SLURM_ARRAY_TASK_COUNT", "3"}})
                .find("--array=0-2"),
            std::string::npos);
  EXPECT_NE(message({{"SLURM_ARRAY_TASK_ID", "x1"}, {"SLURM_ARRAY_TASK_MAX", "3"}}).find("SLURM_ARRAY_TASK_ID=\"x1\""),
            std::string::npos);
  EXPECT_NE(message({{"SLURM_ARRAY_TASK_ID", "9"}, {"SLURM_ARRAY_TASK_MIN", "0"}, {"SLURM_ARRAY_TASK_MAX", "3"}})
                .find("not in the array"),
            std::string::npos);
  EXPECT_NE(message({{"SLURM_ARRAY_TASK_ID", "1"}}).find("SLURM_ARRAY_TASK_MAX"), std::string::npos);
}

}  // namespace
}  // namespace kvstream::experiments
