// SentencePiece .model files (real Llama / Mistral checkpoints, and stories260K's tok512.model)
// through libsentencepiece, reached via a small C shim loaded with deep binding (see
// sentencepiece_shim/sentencepiece_shim.cpp for why it cannot be linked next to LibTorch).
#pragma once
#include <filesystem>
#include <memory>

#include "models/tokenizer.h"

namespace kvstream::models {

class SentencePieceTokenizer final : public Tokenizer {
 public:
  explicit SentencePieceTokenizer(const std::filesystem::path& path);  // throws naming the file
  ~SentencePieceTokenizer() override;

  std::vector<int32_t> encode(const std::string& text, bool add_bos) const override;
  std::string decode(const std::vector<int32_t>& ids) const override;
  int32_t vocab_size() const override;
  int32_t bos_id() const override;
  int32_t eos_id() const override;

 private:
  struct Shim;
  const Shim& shim_;
  void* handle_;
};

}  // namespace kvstream::models
