// What the CLI does with a model, which needs a build with LibTorch: the commands that run one
// (quality, kv-export, profile-prefill: cli/command.h), the measurer of the context sets of
// source "model" that `kvstream run` hands to the runner, and the real KV of `emulate --model`.
// cli/with_torch.cpp provides them; in a build without LibTorch cli/without_torch.cpp stands in:
// its commands say they need LibTorch, and there is no measurer and no real KV.
#pragma once
#include <functional>
#include <memory>
#include <string>

#include "emulation/real_kv_context.h"
#include "profiling/model_contexts.h"

namespace kvstream::cli {

profiling::ModelContextMeasurer model_context_measurer();  // empty without LibTorch

using RealKvPreparer = std::function<std::unique_ptr<emulation::RealKvContext>(
    const emulation::RealKvOptions& options, const std::function<void(const std::string&)>& log)>;
RealKvPreparer real_kv_preparer();  // empty without LibTorch

}  // namespace kvstream::cli
