// Llama-architecture models from GGUF files (llama.cpp's format), e.g. SmolLM2-135M-Instruct Q4_1.
// Tensors are dequantized to float32 at load (gguf_file.h). llama.cpp's converter permutes the rows
// of Q and K so that RoPE on adjacent pairs reproduces Hugging Face's rotate-half; the weights are
// therefore used as stored, with RopeLayout::kInterleavedPairs.
#pragma once
#include <filesystem>

#include "models/gguf_file.h"
#include "models/llama_model.h"

namespace kvstream::models {

// Throws std::runtime_error naming the file and the key or tensor that is missing or malformed.
LlamaModel load_gguf_checkpoint(const GgufFile& file);

}  // namespace kvstream::models
