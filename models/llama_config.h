// Shape and conventions of a Llama-family decoder (RMSNorm, RoPE, GQA, SwiGLU), as loaders read
// them from a checkpoint (llama2.c header, HF config.json, GGUF metadata) or from a named
// architecture for random-weight timing runs.
#pragma once
#include <cstdint>
#include <string>

namespace kvstream::models {

// How RoPE pairs the dimensions of a head: llama2.c / Meta rotate adjacent pairs (2i, 2i+1);
// Hugging Face rotates dimension i with i + head_dim/2 ("rotate_half").
enum class RopeLayout { kInterleavedPairs, kRotateHalf };

struct LlamaConfig {
  std::string name;          // e.g. "stories260K"
  int dim = 0;               // hidden size
  int hidden_dim = 0;        // FFN inner size
  int n_layers = 0;
  int n_heads = 0;           // query heads
  int n_kv_heads = 0;        // KV heads (GQA when < n_heads)
  int vocab_size = 0;
  int max_seq_len = 0;
  float rope_theta = 10000.0f;
  float norm_eps = 1e-5f;
  RopeLayout rope_layout = RopeLayout::kInterleavedPairs;
  bool tied_embeddings = true;  // classifier = token embedding

  int head_dim() const { return dim / n_heads; }
  int kv_channels() const { return n_kv_heads * head_dim(); }  // C of the KV cache
  // fp16 KV bytes per token: 2 (K, V) x layers x C x 2 bytes (docs/CACHEGEN.md §2).
  double fp16_kv_bytes_per_token() const { return 2.0 * n_layers * kv_channels() * 2.0; }
};

}  // namespace kvstream::models
