// What the CLI does with a model, which needs a build with LibTorch: the commands that run one
// (quality, kv-export, profile-prefill: cli/command.h) and the measurer of the context sets of
// source "model" that `kvstream run` hands to the runner. cli/with_torch.cpp provides them; in a
// build without LibTorch cli/without_torch.cpp stands in: its commands say they need LibTorch, and
// there is no measurer.
#pragma once
#include "profiling/model_contexts.h"

namespace kvstream::cli {

profiling::ModelContextMeasurer model_context_measurer();  // empty without LibTorch

}  // namespace kvstream::cli
