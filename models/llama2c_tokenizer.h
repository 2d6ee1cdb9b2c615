// The llama2.c tokenizer (.bin: int32 max_token_length, then per id: float32 score, int32 length,
// bytes). Encoding as llama2.c's run.c: BOS, a dummy-prefix " " when the text is non-empty, one
// piece per UTF-8 code point (or its bytes as ids byte + 3 when absent), then repeatedly merge the
// adjacent pair whose concatenation is a piece with the highest score.
#pragma once
#include <filesystem>
#include <string>
#include <unordered_map>
#include <vector>

#include "models/tokenizer.h"

namespace kvstream::models {

class Llama2cTokenizer final : public Tokenizer {
 public:
  // Throws std::runtime_error naming the file and the id being read when it is malformed.
  Llama2cTokenizer(const std::filesystem::path& path, int32_t vocab_size);

  std::vector<int32_t> encode(const std::string& text, bool add_bos) const override;
  std::string decode(const std::vector<int32_t>& ids) const override;
  int32_t vocab_size() const override { return static_cast<int32_t>(pieces_.size()); }
  int32_t bos_id() const override { return 1; }
  int32_t eos_id() const override { return 2; }

 private:
  std::vector<std::string> pieces_;
  std::vector<float> scores_;
  std::unordered_map<std::string, int32_t> ids_;
};

}  // namespace kvstream::models
