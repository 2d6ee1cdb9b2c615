// Byte-level BPE from GGUF metadata: a tiny vocabulary built here (merge order, ties, the
// pre-tokenizers' splits, errors), and the real SmolLM2 tokenizer against llama.cpp's ids
// (tests/golden/smollm2_reference.json, written by scripts/dev/smollm2_reference.py).
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "common/data_resolver.h"
#include "models/bpe_tokenizer.h"
#include "tests/models/gguf_builder.h"
#include "tests/test_support.h"

namespace kvstream::models {
namespace {

using test_support::GgufBuilder;

// GPT-2's byte alphabet, written out independently of models/bpe_tokenizer.cpp.
std::string byte_symbol(int b) {
  int cp = b;
  if (!((b >= 0x21 && b <= 0x7E) || (b >= 0xA1 && b <= 0xAC) || b >= 0xAE)) {
    int n = 0;
    for (int c = 0; c < b; ++c) n += !((c >= 0x21 && c <= 0x7E) || (c >= 0xA1 && c <= 0xAC) || c >= 0xAE);
    cp = 256 + n;
  }
  std::string s;
  if (cp < 0x80) {
    s += static_cast<char>(cp);
  } else {
    s += static_cast<char>(0xC0 | (cp >> 6));
    s += static_cast<char>(0x80 | (cp & 0x3F));
  }
  return s;
}

// Vocabulary: ids 0..255 the bytes, 256 "<s>" and 257 "</s>" (CONTROL), then the merge results.
constexpr int32_t kBos = 256, kEos = 257, kGt = 258, kAb = 259, kBc = 260, kAbc = 261, kAa = 262;

std::string tiny_gguf(const std::string& pre, const std::string& model = "gpt2") {
  std::vector<std::string> tokens;
  for (int b = 0; b < 256; ++b) tokens.push_back(byte_symbol(b));
  const std::string space_t = byte_symbol(' ') + "t";
  tokens.insert(tokens.end(), {"<s>", "</s>", space_t, "ab", "bc", "abc", "aa"});
  std::vector<int32_t> types(tokens.size(), 1);
  types[kBos] = types[kEos] = 3;
  GgufBuilder b;
  b.header(3, 0, 7);
  b.kv_string("tokenizer.ggml.model", model);
  b.kv_string("tokenizer.ggml.pre", pre);
  b.kv_strings("tokenizer.ggml.tokens", tokens);
  b.kv_array<int32_t>("tokenizer.ggml.token_type", GgufType::kI32, types);
  b.kv_strings("tokenizer.ggml.merges", {byte_symbol(' ') + " t", "a b", "b c", "ab c", "a a"});
  b.kv<uint32_t>("tokenizer.ggml.bos_token_id", GgufType::kU32, kBos);
  b.kv<uint32_t>("tokenizer.ggml.eos_token_id", GgufType::kU32, kEos);
  return b.bytes;
}

class BpeTokenizerTest : public test_support::TempDirTest {
 protected:
  BpeTokenizer tokenizer(const std::string& pre) { return BpeTokenizer(open(tiny_gguf(pre))); }
  GgufFile open(const std::string& bytes) {
    const auto path = dir_ / "tok.gguf";
    std::ofstream(path, std::ios::binary) << bytes;
    return GgufFile::open(path);
  }
  using Pieces = std::vector<std::string>;
};

TEST_F(BpeTokenizerTest, MergesLowestRankFirstAndLeftmostOnTies) {
  const BpeTokenizer tok = tokenizer("gpt-2");
  EXPECT_EQ(tok.vocab_size(), 263);
  EXPECT_EQ(tok.encode("abc", false), (std::vector<int32_t>{kAbc}));  // a b (rank 1), then ab c (rank 3)
  EXPECT_EQ(tok.encode("abbc", false), (std::vector<int32_t>{kAb, kBc}));
  EXPECT_EQ(tok.encode("aaa", false), (std::vector<int32_t>{kAa, 'a'}));
  EXPECT_EQ(tok.encode(" t", false), (std::vector<int32_t>{kGt}));
  EXPECT_EQ(tok.encode("xy", false), (std::vector<int32_t>{'x', 'y'}));
  EXPECT_EQ(tok.encode("", false), (std::vector<int32_t>{}));
  EXPECT_EQ(tok.encode("ab", true), (std::vector<int32_t>{kBos, kAb}));
  EXPECT_EQ(tok.encode("\n", false), (std::vector<int32_t>{'\n'}));  // bytes are ids 0..255 here
}

TEST_F(BpeTokenizerTest, DecodesBytesAndDropsControlTokens) {
  const BpeTokenizer tok = tokenizer("gpt-2");
  EXPECT_EQ(tok.decode({kBos, kAbc, ' ', 0xC3, 0xA9, kGt, kEos}), "abc \xC3\xA9 t");
  EXPECT_THROW(tok.decode({263}), std::out_of_range);
  EXPECT_THROW(tok.decode({-1}), std::out_of_range);
  const std::string text = "any bytes: \x01\x7F\xC3\xA9\xF0\x9F\xA6\x99 \r\n\t end";
  EXPECT_EQ(tok.decode(tok.encode(text, false)), text);
  // Invalid UTF-8 is read as U+FFFD, as llama.cpp does.
  EXPECT_EQ(tok.decode(tok.encode("a\xFF" "b", false)), "a\xEF\xBF\xBD" "b");
}

TEST_F(BpeTokenizerTest, Gpt2PreTokenizer) {
  const BpeTokenizer tok = tokenizer("gpt-2");
  EXPECT_EQ(tok.pre_tokenize("Hello world"), (Pieces{"Hello", " world"}));
  EXPECT_EQ(tok.pre_tokenize("I'm sure you're DON'T"), (Pieces{"I", "'m", " sure", " you", "'re", " DON", "'", "T"}));
  EXPECT_EQ(tok.pre_tokenize("x=12345 7"), (Pieces{"x", "=", "12345", " 7"}));
  EXPECT_EQ(tok.pre_tokenize("a  b"), (Pieces{"a", " ", " b"}));
  EXPECT_EQ(tok.pre_tokenize("a   "), (Pieces{"a", "   "}));
  EXPECT_EQ(tok.pre_tokenize("a\n\nb\r\n"), (Pieces{"a", "\n", "\n", "b", "\r\n"}));
  EXPECT_EQ(tok.pre_tokenize("hi 🦙!? ok"), (Pieces{"hi", " 🦙!?", " ok"}));
  EXPECT_EQ(tok.pre_tokenize("Ünï e\u0301"), (Pieces{"Ünï", " e", "\u0301"}));  // a combining mark is not \p{L}
  EXPECT_EQ(tok.pre_tokenize("日本語 ١٢٣"), (Pieces{"日本語", " ١٢٣"}));
}

TEST_F(BpeTokenizerTest, SmolLmPreTokenizerIsolatesDigits) {
  const BpeTokenizer tok = tokenizer("smollm");
  EXPECT_EQ(tok.pre_tokenizer(), "smollm");
  EXPECT_EQ(tok.pre_tokenize("x=12345"), (Pieces{"x", "=", "1", "2", "3", "4", "5"}));
  EXPECT_EQ(tok.pre_tokenize("abc123def"), (Pieces{"abc", "1", "2", "3", "def"}));
  EXPECT_EQ(tok.pre_tokenize("€100 ²"), (Pieces{"€", "1", "0", "0", " ", "²"}));
  // The digits end the part before them, so white space before a digit is not left to the digit.
  EXPECT_EQ(tok.pre_tokenize("ab  1"), (Pieces{"ab", "  ", "1"}));
  EXPECT_EQ(tok.pre_tokenize("ab  c"), (Pieces{"ab", " ", " c"}));
}

TEST_F(BpeTokenizerTest, RejectsUnsupportedTokenizers) {
  const auto error = [&](const std::string& bytes) {
    try {
      make_gguf_tokenizer(open(bytes));
    } catch (const std::runtime_error& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  EXPECT_NE(error(tiny_gguf("llama3")).find("pre-tokenizer 'llama3' (tokenizer.ggml.pre) is not supported"),
            std::string::npos);
  EXPECT_NE(error(tiny_gguf("gpt-2", "llama")).find("tokenizer.ggml.model 'llama' is not supported"),
            std::string::npos);
  EXPECT_EQ(error(tiny_gguf("gpt-2")), "");
}

// ---- The real SmolLM2 tokenizer against llama.cpp --------------------------------------------

const nlohmann::json& reference() {
  static const nlohmann::json json = test_support::golden_json("smollm2_reference.json");
  return json;
}

const BpeTokenizer* smollm2() {
  static const std::unique_ptr<BpeTokenizer> tokenizer = []() -> std::unique_ptr<BpeTokenizer> {
    try {
      const std::string file = reference()["gguf_file"];
      return std::make_unique<BpeTokenizer>(GgufFile::open(common::resolve_data(file)));
    } catch (const common::DataNotFound&) {
      return nullptr;
    }
  }();
  return tokenizer.get();
}

std::string unhex(const std::string& hex) {
  std::string bytes;
  for (size_t i = 0; i + 1 < hex.size(); i += 2) bytes += static_cast<char>(std::stoi(hex.substr(i, 2), nullptr, 16));
  return bytes;
}

#define REQUIRE_SMOLLM2()                                                                              \
  if (!smollm2()) GTEST_SKIP() << reference()["gguf_file"].get<std::string>()                       \
                               << " not found: run scripts/fetch-data.sh to fetch it"

TEST(SmolLm2Tokenizer, SpecialIdsMatchLlamaCpp) {
  REQUIRE_SMOLLM2();
  const nlohmann::json& ref = reference()["tokenizer"];
  EXPECT_EQ(smollm2()->vocab_size(), 49152);
  EXPECT_EQ(smollm2()->bos_id(), ref["bos_id"].get<int32_t>());
  EXPECT_EQ(smollm2()->eos_id(), ref["eos_id"].get<int32_t>());
  EXPECT_EQ(smollm2()->add_bos_by_default(), ref["llama_cpp_adds_bos"].get<bool>());
  EXPECT_EQ(smollm2()->decode({smollm2()->bos_id(), smollm2()->eos_id()}), "");
}

TEST(SmolLm2Tokenizer, IdsMatchLlamaCpp) {
  REQUIRE_SMOLLM2();
  for (const nlohmann::json& c : reference()["tokenizer"]["cases"]) {
    const std::string text = c["text"];
    const std::vector<int32_t> ids = smollm2()->encode(text, false);
    EXPECT_EQ(ids, c["ids"].get<std::vector<int32_t>>()) << c["name"];
    EXPECT_EQ(smollm2()->decode(ids), c.contains("detokenized_hex") ? unhex(c["detokenized_hex"]) : text) << c["name"];
  }
}

TEST(SmolLm2Tokenizer, PerplexityWindowIdsMatchLlamaCpp) {
  REQUIRE_SMOLLM2();
  const nlohmann::json& ref = reference()["perplexity"];
  std::ifstream in(common::resolve_data(ref["source"].get<std::string>()), std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  // The window's characters are UTF-8 code points: cut the bytes after end_char code points.
  const std::string all = text.str();
  size_t bytes = 0;
  for (size_t chars = 0; chars < ref["end_char"].get<size_t>(); ++chars) {
    do ++bytes;
    while (bytes < all.size() && (static_cast<uint8_t>(all[bytes]) & 0xC0) == 0x80);
  }
  std::vector<int32_t> ids = smollm2()->encode(all.substr(0, bytes), false);
  ids.resize(ref["ids"].size());
  EXPECT_EQ(ids, ref["ids"].get<std::vector<int32_t>>());
}

TEST(SmolLm2Tokenizer, RoundTripsAllOfWikiText) {
  REQUIRE_SMOLLM2();
  std::ifstream in(common::resolve_data("text/wikitext2/wiki.test.raw"), std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  const std::vector<int32_t> ids = smollm2()->encode(text.str(), false);
  EXPECT_GT(ids.size(), text.str().size() / 6);
  EXPECT_EQ(smollm2()->decode(ids), text.str());
}

}  // namespace
}  // namespace kvstream::models
