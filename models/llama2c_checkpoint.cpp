#include "models/llama2c_checkpoint.h"

#include <cstdlib>
#include <fstream>
#include <stdexcept>

namespace kvstream::models {

LlamaModel load_llama2c_checkpoint(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot open llama2.c checkpoint " + path.string());
  const auto file_bytes = static_cast<int64_t>(std::filesystem::file_size(path));
  int32_t header[7];
  if (!in.read(reinterpret_cast<char*>(header), sizeof header))
    throw std::runtime_error(path.string() + ": shorter than the 28-byte llama2.c header");
  LlamaConfig c;
  c.name = path.stem().string();
  c.dim = header[0];
  c.hidden_dim = header[1];
  c.n_layers = header[2];
  c.n_heads = header[3];
  c.n_kv_heads = header[4];
  c.vocab_size = std::abs(header[5]);
  c.max_seq_len = header[6];
  c.tied_embeddings = header[5] > 0;
  c.rope_layout = RopeLayout::kInterleavedPairs;
  for (int v : {c.dim, c.hidden_dim, c.n_layers, c.n_heads, c.n_kv_heads, c.vocab_size, c.max_seq_len})
    if (v <= 0 || v > (1 << 20))
      throw std::runtime_error(path.string() + ": implausible llama2.c header (dim " + std::to_string(c.dim) +
                               ", layers " + std::to_string(c.n_layers) + ", vocab " + std::to_string(header[5]) + ")");
  if (c.dim % c.n_heads != 0 || c.n_heads % c.n_kv_heads != 0)
    throw std::runtime_error(path.string() + ": dim must divide into heads and heads into KV heads");

  int64_t offset = sizeof header;
  auto read = [&](const std::string& name, std::vector<int64_t> shape) {
    auto t = torch::empty(shape, torch::kFloat32);
    const int64_t bytes = t.numel() * 4;
    if (offset + bytes > file_bytes)
      throw std::runtime_error(path.string() + ": truncated in tensor " + name + " (needs bytes [" +
                               std::to_string(offset) + ", " + std::to_string(offset + bytes) + "), file has " +
                               std::to_string(file_bytes) + ")");
    in.read(reinterpret_cast<char*>(t.data_ptr<float>()), bytes);
    offset += bytes;
    return t;
  };
  const int64_t dim = c.dim, hidden = c.hidden_dim, kv_dim = c.kv_channels(), layers = c.n_layers;
  LlamaWeights w;
  w.token_embedding = read("token_embedding", {c.vocab_size, dim});
  const auto rms_att = read("rms_att", {layers, dim});
  const auto wq = read("wq", {layers, dim, dim});
  const auto wk = read("wk", {layers, kv_dim, dim});
  const auto wv = read("wv", {layers, kv_dim, dim});
  const auto wo = read("wo", {layers, dim, dim});
  const auto rms_ffn = read("rms_ffn", {layers, dim});
  const auto w1 = read("w1", {layers, hidden, dim});
  const auto w2 = read("w2", {layers, dim, hidden});
  const auto w3 = read("w3", {layers, hidden, dim});
  w.final_norm = read("rms_final", {dim});
  read("freq_cis", {2, c.max_seq_len, c.head_dim() / 2});  // legacy RoPE tables: recomputed instead
  w.classifier = c.tied_embeddings ? w.token_embedding : read("wcls", {c.vocab_size, dim});
  if (offset != file_bytes)
    throw std::runtime_error(path.string() + ": " + std::to_string(file_bytes - offset) +
                             " bytes after the last tensor (not a version-0 llama2.c checkpoint?)");
  for (int64_t l = 0; l < layers; ++l)
    w.layers.push_back({.attn_norm = rms_att[l], .wq = wq[l], .wk = wk[l], .wv = wv[l], .wo = wo[l],
                        .ffn_norm = rms_ffn[l], .w1 = w1[l], .w3 = w3[l], .w2 = w2[l]});
  return LlamaModel(c, std::move(w));
}

}  // namespace kvstream::models
