// What the repository ships must load: every run config in experiments/configs/ parses,
// every hardware profile in profiling/hardware/ (and measured/) reads, and the measured GPU profiles
// carry the decode throughputs that scripts/gpu-check.sh measured with them.
#include <gtest/gtest.h>

#include <filesystem>

#include "common/json_reader.h"
#include "experiments/experiment_config.h"
#include "profiling/shipped_profiles.h"
#include "sim/hardware_profile.h"

namespace kvstream {
namespace {

TEST(ShippedFiles, EveryExperimentConfigParses) {
  const auto dir = std::filesystem::path(__FILE__).parent_path().parent_path().parent_path() / "experiments/configs";
  int configs = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    // fidelity*.json are `kvstream fidelity` matrices (emulation/fidelity_config.h), not run configs.
    if (entry.path().extension() != ".json" || entry.path().filename().string().starts_with("fidelity")) continue;
    SCOPED_TRACE(entry.path().string());
    EXPECT_NO_THROW(experiments::parse_experiment_config(common::read_json_file(entry.path().string()),
                                                         entry.path().string()));
    ++configs;
  }
  EXPECT_GE(configs, 8);  // the folder was found and read
}

TEST(ShippedFiles, EveryHardwareProfileReads) {
  for (const auto& name : profiling::shipped_hardware_profiles()) {
    SCOPED_TRACE(name);
    EXPECT_NO_THROW(sim::read_hardware_profile(profiling::resolve_hardware_profile(name)));
  }
}

TEST(ShippedFiles, MeasuredH200ProfilesCarryTheirGpuDecoders) {
  for (const std::string name : {"h200_mistral-7b", "h200_llama-2-70b"}) {
    SCOPED_TRACE(name);
    const auto choice = profiling::choose_hardware_profile(name);
    EXPECT_NE(choice.file.find("measured"), std::string::npos) << choice.file;
    const auto profile = sim::read_hardware_profile(choice.file);
    EXPECT_EQ(profile.kind, "measured");
    ASSERT_TRUE(profile.decode.has_value());
    EXPECT_EQ(profile.decode->device, "cuda: NVIDIA H200");
    for (const std::string codec : {"cachegen", "cachegen:entropy=rans,states=32,sub=16"})
      for (int level : {1, 2, 3}) {
        const auto* throughput = profile.decode->find(codec, level);
        ASSERT_NE(throughput, nullptr) << codec << " level " << level;
        EXPECT_GT(throughput->fp16_bytes_per_s, 1e10) << codec << " level " << level;
      }
  }
}

}  // namespace
}  // namespace kvstream
