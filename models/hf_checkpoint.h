// Hugging Face checkpoints of Llama-architecture models (LlamaForCausalLM, MistralForCausalLM,
// Qwen2ForCausalLM without biases): a directory holding config.json and either model.safetensors or
// shards listed by model.safetensors.index.json ("weight_map": tensor name -> shard file).
// Tensors (F32, F16 or BF16) are converted to float32 at load. HF's converter permuted Q and K rows
// so that RoPE rotates dimension i with i + head_dim/2; the weights are used as stored, with
// RopeLayout::kRotateHalf.
#pragma once
#include <filesystem>

#include "models/llama_model.h"

namespace kvstream::models {

// Throws std::runtime_error naming the file and the JSON key or tensor that is missing or
// malformed, and for what LlamaModel cannot run: biases, rope_scaling, a hidden_act other than
// silu, a head_dim other than hidden_size / num_attention_heads. With a sliding window,
// max_seq_len is capped at the window (longer sequences would need windowed attention).
LlamaModel load_hf_checkpoint(const std::filesystem::path& dir);

}  // namespace kvstream::models
