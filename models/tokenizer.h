// The tokenizer interface shared by llama2.c .bin vocabularies, SentencePiece .model files and the
// GPT-2-style byte-level BPE carried in GGUF metadata. No torch here.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace kvstream::models {

class Tokenizer {
 public:
  virtual ~Tokenizer() = default;
  // Token ids of `text`, with the beginning-of-sequence id first when `add_bos` (and the model has one).
  virtual std::vector<int32_t> encode(const std::string& text, bool add_bos) const = 0;
  // Text of `ids` (special tokens such as BOS/EOS produce no text).
  virtual std::string decode(const std::vector<int32_t>& ids) const = 0;
  virtual int32_t vocab_size() const = 0;
  virtual int32_t bos_id() const = 0;  // -1 if none
  virtual int32_t eos_id() const = 0;  // -1 if none
};

}  // namespace kvstream::models
