// The model side of `kvstream emulate --model` (emulation/real_kv_context.h): loads the model,
// takes the context window from the text, measures its profile as `run` does while keeping every
// chunk's bitstreams, and emulates runs whose client decodes, recomputes and prefills for real
// (emulation/model/model_job_runner.h). Needs LibTorch.
#pragma once
#include <functional>
#include <memory>
#include <string>

#include "emulation/real_kv_context.h"

namespace kvstream::emulation {

// Throws std::invalid_argument / std::runtime_error for a model, text or codec that cannot be
// loaded or used (as `run`'s context sets do: profiling/context_profiler.h), naming it.
std::unique_ptr<RealKvContext> prepare_model_context(const RealKvOptions& options,
                                                     const std::function<void(const std::string&)>& log);

}  // namespace kvstream::emulation
