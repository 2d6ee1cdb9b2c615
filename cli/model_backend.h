// What the CLI does with a model, which needs LibTorch: the commands that run one (quality, rd,
// kv-export, profile-prefill, calibrate, calibrate-ladder: cli/command.h), the measurer of the context sets of source "model"
// that `kvstream run` hands to the runner, and the real KV of `emulate --model`.
//
// They live in a plugin, kvstream-models.so beside the kvstream binary (cli/model_plugin.cpp, built
// only with LibTorch), which the binary loads on first use: every other command starts without
// loading LibTorch (~0.6 s and ~160 MB at every start otherwise). Without the plugin (a build
// without LibTorch) the model commands say so, and the measurer and the real KV are empty.
#pragma once
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "emulation/real_kv_context.h"
#include "profiling/model_context_request.h"

namespace kvstream::cli {

using RealKvPreparer = std::function<std::unique_ptr<emulation::RealKvContext>(
    const emulation::RealKvOptions& options, const std::function<void(const std::string&)>& log)>;

profiling::ModelContextMeasurer model_context_measurer();  // empty without the plugin
RealKvPreparer real_kv_preparer();                          // empty without the plugin

// The table the plugin exports under the C name kModelBackendSymbol. Plugin and binary are built
// together from one tree, so the C++ types agree; kModelBackendVersion guards a stale plugin.
struct ModelBackend {
  int version;
  int (*quality_main)(const std::vector<std::string>& args);
  int (*rd_main)(const std::vector<std::string>& args);
  int (*kv_export_main)(const std::vector<std::string>& args);
  int (*profile_prefill_main)(const std::vector<std::string>& args);
  int (*calibrate_main)(const std::vector<std::string>& args);
  int (*calibrate_ladder_main)(const std::vector<std::string>& args);
  profiling::ModelContextMeasurer measure_model_contexts;
  RealKvPreparer prepare_real_kv;
};
inline constexpr int kModelBackendVersion = 4;
inline constexpr const char* kModelBackendSymbol = "kvstream_model_backend";
inline constexpr const char* kModelPluginFile = "kvstream-models.so";

}  // namespace kvstream::cli
