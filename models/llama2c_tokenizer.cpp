#include "models/llama2c_tokenizer.h"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <stdexcept>

namespace kvstream::models {
namespace {

constexpr int32_t kByteFallbackBase = 3;  // byte b is id b + 3 ("<0xHH>")

// Length of the UTF-8 sequence starting with byte `lead` (1 for invalid lead bytes).
size_t utf8_length(unsigned char lead) {
  if (lead >= 0xF0) return 4;
  if (lead >= 0xE0) return 3;
  if (lead >= 0xC0) return 2;
  return 1;
}

}  // namespace

Llama2cTokenizer::Llama2cTokenizer(const std::filesystem::path& path, int32_t vocab_size) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot open tokenizer " + path.string());
  int32_t max_token_length = 0;
  if (!in.read(reinterpret_cast<char*>(&max_token_length), 4) || max_token_length <= 0)
    throw std::runtime_error(path.string() + ": missing max_token_length header");
  for (int32_t id = 0; id < vocab_size; ++id) {
    float score = 0;
    int32_t length = 0;
    if (!in.read(reinterpret_cast<char*>(&score), 4) || !in.read(reinterpret_cast<char*>(&length), 4) || length < 0 ||
        length > 4 * max_token_length)
      throw std::runtime_error(path.string() + ": truncated or malformed at token id " + std::to_string(id));
    std::string piece(static_cast<size_t>(length), '\0');
    if (!in.read(piece.data(), length)) throw std::runtime_error(path.string() + ": truncated in token id " + std::to_string(id));
    ids_.emplace(piece, id);
    pieces_.push_back(std::move(piece));
    scores_.push_back(score);
  }
}

std::vector<int32_t> Llama2cTokenizer::encode(const std::string& text, bool add_bos) const {
  std::vector<int32_t> tokens;
  if (!text.empty()) tokens.push_back(ids_.at(" "));  // dummy prefix
  for (size_t i = 0; i < text.size();) {
    const size_t n = std::min(utf8_length(static_cast<unsigned char>(text[i])), text.size() - i);
    const auto it = ids_.find(text.substr(i, n));
    if (it != ids_.end()) {
      tokens.push_back(it->second);
    } else {
      for (size_t b = 0; b < n; ++b) tokens.push_back(static_cast<unsigned char>(text[i + b]) + kByteFallbackBase);
    }
    i += n;
  }
  for (;;) {  // merge the best-scoring adjacent pair until none is a piece
    float best_score = -1e10f;
    int32_t best_id = -1;
    size_t best_at = 0;
    for (size_t i = 0; i + 1 < tokens.size(); ++i) {
      const auto it = ids_.find(pieces_[static_cast<size_t>(tokens[i])] + pieces_[static_cast<size_t>(tokens[i + 1])]);
      if (it != ids_.end() && scores_[static_cast<size_t>(it->second)] > best_score) {
        best_score = scores_[static_cast<size_t>(it->second)];
        best_id = it->second;
        best_at = i;
      }
    }
    if (best_id < 0) break;
    tokens[best_at] = best_id;
    tokens.erase(tokens.begin() + static_cast<std::ptrdiff_t>(best_at) + 1);
  }
  if (add_bos) tokens.insert(tokens.begin(), bos_id());
  return tokens;
}

std::string Llama2cTokenizer::decode(const std::vector<int32_t>& ids) const {
  std::string text;
  int32_t previous = -1;
  for (int32_t id : ids) {
    if (id < 0 || id >= vocab_size()) throw std::out_of_range("token id " + std::to_string(id) + " outside the vocabulary");
    if (id == bos_id() || id == eos_id()) {
      previous = id;
      continue;
    }
    std::string piece = pieces_[static_cast<size_t>(id)];
    if (previous == bos_id() && !piece.empty() && piece[0] == ' ') piece.erase(0, 1);
    unsigned int byte = 0;
    if (piece.size() == 6 && std::sscanf(piece.c_str(), "<0x%02X>", &byte) == 1) piece = std::string(1, static_cast<char>(byte));
    text += piece;
    previous = id;
  }
  return text;
}

}  // namespace kvstream::models
