// GPT-2-style byte-level BPE, built from the tokenizer carried in GGUF metadata
// (tokenizer.ggml.model == "gpt2"), producing the same ids as llama.cpp's tokenize(text,
// add_special=false, parse_special=false):
//   1. invalid UTF-8 bytes become U+FFFD;
//   2. the pre-tokenizer named by tokenizer.ggml.pre splits the text into pieces:
//        "gpt-2":  's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
//        "smollm": first every \p{N} code point on its own, then the "gpt-2" split inside each part
//      (as in llama.cpp, the (?!\S) look-ahead does not see past the end of a part);
//   3. each piece's bytes map to the GPT-2 byte-to-unicode alphabet, one symbol per byte;
//   4. adjacent symbols merge by rank (tokenizer.ggml.merges), lowest rank first, leftmost on ties;
//      a byte whose symbol is not in the vocabulary never merges and is dropped, as llama.cpp drops
//      it (SmolLM2 lacks 21: the controls U+0004, U+0006, U+0013, U+0014, U+0016, U+001D and bytes
//      0xC0, 0xC1, 0xF1, 0xF2, 0xF5..0xFF), so decode(encode(x)) == x only for text without them.
// Special tokens (token_type CONTROL, e.g. "<|im_start|>") written in the text are NOT recognised:
// they are encoded as plain text, as llama.cpp does with parse_special=false. Callers that need them
// insert their ids directly.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "models/gguf_file.h"
#include "models/tokenizer.h"

namespace kvstream::models {

class BpeTokenizer : public Tokenizer {
 public:
  // Throws std::runtime_error naming the GGUF key on missing or inconsistent metadata, and naming
  // the pre-tokenizer when tokenizer.ggml.pre is not one of those above.
  explicit BpeTokenizer(const GgufFile& gguf);

  std::vector<int32_t> encode(const std::string& text, bool add_bos) const override;
  // CONTROL, UNKNOWN and UNUSED tokens produce no text; an id outside the vocabulary throws.
  std::string decode(const std::vector<int32_t>& ids) const override;
  int32_t vocab_size() const override { return static_cast<int32_t>(token_text_.size()); }
  int32_t bos_id() const override { return bos_id_; }
  int32_t eos_id() const override { return eos_id_; }

  const std::string& pre_tokenizer() const { return pre_; }
  // tokenizer.ggml.add_bos_token (false when absent): whether llama.cpp adds BOS for this model.
  bool add_bos_by_default() const { return add_bos_by_default_; }
  // The pieces of step 2 (UTF-8, after step 1), which step 3 encodes independently.
  std::vector<std::string> pre_tokenize(const std::string& text) const;

 private:
  struct Merge {
    int32_t rank;
    int32_t result;  // token id of the merged symbol
  };
  void bpe(const std::string& piece, std::vector<int32_t>& out) const;

  std::string pre_;
  bool split_digits_ = false;  // "smollm": \p{N} code points are pieces of their own
  bool add_bos_by_default_ = false;
  int32_t bos_id_ = -1, eos_id_ = -1;
  std::vector<std::string> token_text_;  // decoded bytes of each token ("" for CONTROL etc.)
  int32_t byte_token_[256] = {};         // token of each single byte, -1 if none
  std::unordered_map<uint64_t, Merge> merges_;  // key: left id << 32 | right id
};

// The tokenizer that a GGUF file describes; only tokenizer.ggml.model "gpt2" is supported.
std::unique_ptr<Tokenizer> make_gguf_tokenizer(const GgufFile& gguf);

}  // namespace kvstream::models
