// Named Llama-family architectures (shapes only), from the models' published config.json files: one
// table, one spelling per architecture, read by KV scaling (a config's kv_scale, profiling/kv_scale.h),
// the prefill profiler (random weights of a named shape, models/random_model.h) and the GPU prefill
// tool. No torch.
#pragma once
#include <string>
#include <vector>

#include "models/llama_config.h"

namespace kvstream::models {

// Throws std::invalid_argument for an unknown name, listing the known ones.
LlamaConfig architecture(const std::string& name);
std::vector<std::string> architecture_names();
std::string architecture_list();  // the names, comma-separated, for messages

}  // namespace kvstream::models
