// A context whose KV really travels in `kvstream emulate --model` (docs/EMULATION.md "Real KV"): a
// text window prefilled on a model, every chunk encoded at every level by the real codec (the
// profile `run` would measure), then streamed as those bitstreams and token ids, decoded by the real
// decoder, recomputed and prefilled by the model. The interface is free of LibTorch; the model side
// is emulation/model/model_emulation.h, in builds with it.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "emulation/emulate.h"
#include "sim/context_profile.h"

namespace kvstream::emulation {

struct RealKvOptions {
  std::string model;                 // catalog name or checkpoint path (models/model_catalog.h)
  std::string text;                  // text file, data-resolved (common/data_resolver.h)
  int tokens = 512;                  // context tokens T (BOS first)
  int continuation_tokens = 32;      // K: the query is the first K-1, scored against the next K-1
  int context = 0;                   // which window of the text: the i-th that `run` takes (profiling/context_profiler.h)
  int64_t chunk_tokens = 256;
  std::vector<std::string> codecs = {"cachegen"};  // the profile's levels (profiling/level_plan.h)
  std::vector<int> levels;                         // ladder levels to keep; empty: all
};

class RealKvContext {
 public:
  virtual ~RealKvContext() = default;
  // As measured while preparing: sizes, encode and decode times, recompute times, whole-context
  // quality per level. The simulator's view of this context, and what the policies plan with.
  virtual const sim::ContextProfile& profile() const = 0;
  // emulate(inputs, RealKv, options) with this context's bytes and a fresh client; inputs.contexts must be
  // {profile()}. Every result's `quality` is measured: the top-1 agreement of the query's next-token
  // predictions after the request's own KV (as decoded and recomputed) with those after the fp16
  // reference KV. Throws std::invalid_argument for other contexts.
  virtual EmulationReport emulate(const sim::SimulationInputs& inputs, const EmulatorOptions& options) = 0;
};

}  // namespace kvstream::emulation
