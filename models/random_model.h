// A Llama model of a given shape (e.g. a named architecture, models/architecture_table.h) with random
// weights, for timing runs: prefill time does not depend on weight values.
#pragma once
#include <cstdint>

#include "models/llama_model.h"

namespace kvstream::models {

// Random weights (normal, std 0.02; norms 1) for `config`, keeping only the first `layers` layers
// when 0 < layers < config.n_layers (the config then says so in n_layers). The weights are created
// directly with `options` (device and dtype; default float32 on the CPU), so a model that fits only
// in GPU memory never passes through the host.
LlamaModel random_model(LlamaConfig config, uint64_t seed, int layers = 0, const torch::TensorOptions& options = {});

}  // namespace kvstream::models
