// llama2.c checkpoints, legacy version-0 format (run.c): a header of 7 int32
//   dim, hidden_dim, n_layers, n_heads, n_kv_heads, vocab_size, seq_len
// (vocab_size < 0 means a separate classifier follows the weights), then float32 tensors back to
// back: token_embedding[vocab][dim], rms_att[L][dim], wq[L][dim][dim], wk[L][kv_dim][dim],
// wv[L][kv_dim][dim], wo[L][dim][dim], rms_ffn[L][dim], w1[L][hidden][dim], w2[L][dim][hidden],
// w3[L][hidden][dim], rms_final[dim], freq_cis_real/imag[seq_len][head_dim/2] (recomputed, skipped),
// [wcls[vocab][dim]]. RoPE on adjacent pairs.
#pragma once
#include <filesystem>

#include "models/llama_model.h"

namespace kvstream::models {

// Throws std::runtime_error naming the file and the tensor that is missing or truncated.
LlamaModel load_llama2c_checkpoint(const std::filesystem::path& path);

}  // namespace kvstream::models
