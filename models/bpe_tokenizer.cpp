#include "models/bpe_tokenizer.h"

#include <algorithm>
#include <array>
#include <iterator>
#include <limits>
#include <stdexcept>
#include <utility>

namespace kvstream::models {
namespace {

// The classes the pre-tokenizer distinguishes; kNone stands for "past the end of the part".
enum class CodepointClass : uint8_t { kOther, kLetter, kNumber, kWhitespace, kNone };

struct CodepointRange {
  char32_t first, last;
  CodepointClass cls;
};

constexpr CodepointRange kCodepointRanges[] = {
#include "models/unicode_classes_table.inc"
};

CodepointClass classify(char32_t cp) {
  const auto* end = std::end(kCodepointRanges);
  const auto* it = std::upper_bound(std::begin(kCodepointRanges), end, cp,
                                    [](char32_t c, const CodepointRange& r) { return c < r.first; });
  if (it == std::begin(kCodepointRanges)) return CodepointClass::kOther;
  --it;
  return cp <= it->last ? it->cls : CodepointClass::kOther;
}

// Code points of `text`, decoded as llama.cpp does: the lead byte gives the length, continuation
// bytes must be 10xxxxxx, and anything else (or a value above U+10FFFF) is one byte read as U+FFFD.
std::vector<char32_t> decode_utf8(const std::string& text) {
  std::vector<char32_t> cps;
  cps.reserve(text.size());
  const size_t n = text.size();
  for (size_t i = 0; i < n;) {
    const auto lead = static_cast<uint8_t>(text[i]);
    const size_t len = lead < 0x80 ? 1 : lead < 0xC0 ? 0 : lead < 0xE0 ? 2 : lead < 0xF0 ? 3 : lead < 0xF8 ? 4 : 0;
    bool ok = len != 0 && i + len <= n;
    char32_t cp = len == 1 ? lead : len == 2 ? (lead & 0x1Fu) : len == 3 ? (lead & 0x0Fu) : (lead & 0x07u);
    for (size_t k = 1; ok && k < len; ++k) {
      const auto b = static_cast<uint8_t>(text[i + k]);
      ok = (b & 0xC0) == 0x80;
      cp = (cp << 6) | (b & 0x3Fu);
    }
    if (ok && cp <= 0x10FFFF) {
      cps.push_back(cp);
      i += len;
    } else {
      cps.push_back(0xFFFD);
      i += 1;
    }
  }
  return cps;
}

void append_utf8(char32_t cp, std::string& out) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

// GPT-2's byte-to-unicode alphabet: printable Latin-1 bytes stand for themselves, the other 68
// bytes for U+0100.. in byte order. Every mapped code point is below 324.
struct ByteAlphabet {
  std::array<char32_t, 256> to_cp{};
  std::array<int16_t, 324> to_byte{};  // -1: not in the alphabet
  ByteAlphabet() {
    to_byte.fill(-1);
    char32_t next = 256;
    for (int b = 0; b < 256; ++b) {
      const bool printable = (b >= 0x21 && b <= 0x7E) || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE);
      to_cp[static_cast<size_t>(b)] = printable ? static_cast<char32_t>(b) : next++;
      to_byte[to_cp[static_cast<size_t>(b)]] = static_cast<int16_t>(b);
    }
  }
};
const ByteAlphabet kBytes;

using Span = std::pair<size_t, size_t>;  // [first, last) code point indices

// The GPT-2 split of cps[begin, end), appended to `out`.
void split_gpt2(const std::vector<char32_t>& cps, const std::vector<CodepointClass>& cls, size_t begin,
                size_t end, std::vector<Span>& out) {
  const auto class_at = [&](size_t i) { return i < end ? cls[i] : CodepointClass::kNone; };
  for (size_t pos = begin; pos < end;) {
    const char32_t c = cps[pos];
    size_t stop = pos;
    if (c == U'\'' && pos + 1 < end) {  // 's|'t|'m|'d, then 're|'ve|'ll
      const char32_t a = cps[pos + 1];
      const char32_t b = pos + 2 < end ? cps[pos + 2] : 0;
      if (a == U's' || a == U't' || a == U'm' || a == U'd') {
        stop = pos + 2;
      } else if ((a == U'r' && b == U'e') || (a == U'v' && b == U'e') || (a == U'l' && b == U'l')) {
        stop = pos + 3;
      }
    }
    if (stop == pos) {
      size_t p = pos + (c == U' ' ? 1 : 0);
      const CodepointClass k = class_at(p);
      if (k == CodepointClass::kLetter || k == CodepointClass::kNumber || k == CodepointClass::kOther) {
        while (class_at(p) == k) ++p;  // " ?\p{L}+", " ?\p{N}+" or " ?[^\s\p{L}\p{N}]+"
        stop = p;
      } else {  // c is white space: "\s+(?!\S)" leaves the last one to the next word, else "\s+"
        size_t n = 0;
        while (class_at(pos + n) == CodepointClass::kWhitespace) ++n;
        stop = n > 1 && pos + n < end ? pos + n - 1 : pos + n;
      }
    }
    out.emplace_back(pos, stop);
    pos = stop;
  }
}

}  // namespace

BpeTokenizer::BpeTokenizer(const GgufFile& gguf) {
  const std::string where = "GGUF file " + gguf.path().string() + ": ";
  const auto fail = [&](const std::string& message) { throw std::runtime_error(where + message); };

  if (gguf.get_string("tokenizer.ggml.model") != "gpt2") fail("tokenizer.ggml.model is not 'gpt2'");
  const std::optional<std::string> pre = gguf.get_string("tokenizer.ggml.pre");
  if (!pre) fail("tokenizer.ggml.pre is missing; supported pre-tokenizers: smollm, gpt-2");
  pre_ = *pre;
  if (pre_ == "smollm") {
    split_digits_ = true;
  } else if (pre_ != "gpt-2") {
    fail("pre-tokenizer '" + pre_ + "' (tokenizer.ggml.pre) is not supported; supported: smollm, gpt-2");
  }

  auto tokens = gguf.get_string_array("tokenizer.ggml.tokens");
  if (!tokens || tokens->empty()) fail("tokenizer.ggml.tokens is missing or empty");
  if (tokens->size() > static_cast<size_t>(std::numeric_limits<int32_t>::max())) fail("too many tokens");
  const auto n_tokens = static_cast<int32_t>(tokens->size());
  const std::vector<int64_t> types =
      gguf.get_int_array("tokenizer.ggml.token_type").value_or(std::vector<int64_t>(tokens->size(), 1));  // NORMAL
  if (types.size() != tokens->size()) fail("tokenizer.ggml.token_type and tokenizer.ggml.tokens differ in length");

  const auto special_id = [&](const std::string& key) -> int32_t {
    const std::optional<int64_t> id = gguf.get_integer(key);
    if (!id) return -1;
    if (*id < 0 || *id >= n_tokens) fail(key + " " + std::to_string(*id) + " is outside the vocabulary");
    return static_cast<int32_t>(*id);
  };
  bos_id_ = special_id("tokenizer.ggml.bos_token_id");
  eos_id_ = special_id("tokenizer.ggml.eos_token_id");
  add_bos_by_default_ = gguf.get_bool("tokenizer.ggml.add_bos_token").value_or(false);

  // Token texts are in the byte alphabet; a repeated text maps to its last id, as in llama.cpp.
  std::unordered_map<std::string, int32_t> id_of;
  id_of.reserve(tokens->size());
  token_text_.resize(tokens->size());
  for (int32_t id = 0; id < n_tokens; ++id) {
    const std::string& text = (*tokens)[static_cast<size_t>(id)];
    id_of[text] = id;
    switch (types[static_cast<size_t>(id)]) {
      case 2: case 3: case 5: break;                           // UNKNOWN, CONTROL, UNUSED: no text
      case 4: token_text_[static_cast<size_t>(id)] = text; break;  // USER_DEFINED: literal text
      default:
        for (char32_t cp : decode_utf8(text)) {
          if (cp >= kBytes.to_byte.size() || kBytes.to_byte[cp] < 0) {
            fail("token " + std::to_string(id) + " '" + text + "' is not in the byte-level alphabet");
          }
          token_text_[static_cast<size_t>(id)] += static_cast<char>(kBytes.to_byte[cp]);
        }
    }
  }
  for (size_t b = 0; b < 256; ++b) {
    std::string s;
    append_utf8(kBytes.to_cp[b], s);
    const auto it = id_of.find(s);
    byte_token_[b] = it == id_of.end() ? -1 : it->second;
  }

  // Merge "left right" of rank r joins the tokens left and right into the token left+right. The
  // vocabulary must hold all three (it does for every trained BPE vocabulary): then merging ids, as
  // bpe() does, gives what llama.cpp gets by merging strings.
  const auto merges = gguf.get_string_array("tokenizer.ggml.merges");
  if (!merges) fail("tokenizer.ggml.merges is missing");
  merges_.reserve(merges->size());
  for (size_t rank = 0; rank < merges->size(); ++rank) {
    const std::string& line = (*merges)[rank];
    const size_t space = line.find(' ', 1);
    const auto bad_merge = [&](const char* why) {
      fail("tokenizer.ggml.merges[" + std::to_string(rank) + "] '" + line + "' " + why);
    };
    if (space == std::string::npos) bad_merge("has no space");
    const std::string left = line.substr(0, space), right = line.substr(space + 1);
    const auto l = id_of.find(left), r = id_of.find(right), m = id_of.find(left + right);
    if (l == id_of.end() || r == id_of.end() || m == id_of.end()) {
      bad_merge("joins or makes a string that is not a token");
    }
    const uint64_t key = static_cast<uint64_t>(l->second) << 32 | static_cast<uint32_t>(r->second);
    merges_.emplace(key, Merge{static_cast<int32_t>(rank), m->second});  // a repeated pair keeps its first rank
  }
}

std::vector<std::string> BpeTokenizer::pre_tokenize(const std::string& text) const {
  const std::vector<char32_t> cps = decode_utf8(text);
  std::vector<CodepointClass> cls(cps.size());
  std::transform(cps.begin(), cps.end(), cls.begin(), classify);

  std::vector<Span> spans;
  for (size_t i = 0; i < cps.size();) {
    size_t j = cps.size();  // "gpt-2": one part; "smollm": one \p{N} code point or a run without any
    if (split_digits_) {
      j = i + 1;
      if (cls[i] != CodepointClass::kNumber) {
        while (j < cps.size() && cls[j] != CodepointClass::kNumber) ++j;
      }
    }
    split_gpt2(cps, cls, i, j, spans);
    i = j;
  }

  std::vector<std::string> pieces(spans.size());
  for (size_t k = 0; k < spans.size(); ++k) {
    for (size_t i = spans[k].first; i < spans[k].second; ++i) append_utf8(cps[i], pieces[k]);
  }
  return pieces;
}

void BpeTokenizer::bpe(const std::string& piece, std::vector<int32_t>& out) const {
  std::vector<int32_t> symbols;
  symbols.reserve(piece.size());
  for (char c : piece) symbols.push_back(byte_token_[static_cast<uint8_t>(c)]);
  while (symbols.size() > 1) {
    size_t best = symbols.size();
    Merge best_merge{std::numeric_limits<int32_t>::max(), -1};
    for (size_t i = 0; i + 1 < symbols.size(); ++i) {
      if (symbols[i] < 0 || symbols[i + 1] < 0) continue;  // a byte without a token never merges
      const uint64_t key = static_cast<uint64_t>(symbols[i]) << 32 | static_cast<uint32_t>(symbols[i + 1]);
      const auto it = merges_.find(key);
      if (it != merges_.end() && it->second.rank < best_merge.rank) {
        best = i;
        best_merge = it->second;
      }
    }
    if (best == symbols.size()) break;
    symbols[best] = best_merge.result;
    symbols.erase(symbols.begin() + static_cast<std::ptrdiff_t>(best) + 1);
  }
  std::copy_if(symbols.begin(), symbols.end(), std::back_inserter(out), [](int32_t id) { return id >= 0; });
}

std::vector<int32_t> BpeTokenizer::encode(const std::string& text, bool add_bos) const {
  std::vector<int32_t> ids;
  if (add_bos && bos_id_ >= 0) ids.push_back(bos_id_);
  for (const std::string& piece : pre_tokenize(text)) bpe(piece, ids);
  return ids;
}

std::string BpeTokenizer::decode(const std::vector<int32_t>& ids) const {
  std::string text;
  for (int32_t id : ids) {
    if (id < 0 || id >= vocab_size()) {
      throw std::out_of_range("BPE decode: token id " + std::to_string(id) + " is outside the vocabulary of " +
                              std::to_string(vocab_size()));
    }
    text += token_text_[static_cast<size_t>(id)];
  }
  return text;
}

std::unique_ptr<Tokenizer> make_gguf_tokenizer(const GgufFile& gguf) {
  const std::optional<std::string> model = gguf.get_string("tokenizer.ggml.model");
  if (model == "gpt2") return std::make_unique<BpeTokenizer>(gguf);
  throw std::runtime_error("GGUF file " + gguf.path().string() + ": tokenizer.ggml.model " +
                           (model ? "'" + *model + "'" : std::string("(missing)")) +
                           " is not supported; supported: gpt2");
}

}  // namespace kvstream::models
