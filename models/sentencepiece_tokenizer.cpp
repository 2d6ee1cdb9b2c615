#include "models/sentencepiece_tokenizer.h"

#include <dlfcn.h>

#include <stdexcept>
#include <string>
#include <vector>

namespace kvstream::models {

// The shim's entry points, resolved once per process.
struct SentencePieceTokenizer::Shim {
  void* (*load)(const char*, char*, size_t);
  void (*free)(void*);
  long (*encode)(void*, const char*, size_t, int*, size_t, char*, size_t);
  long (*decode)(void*, const int*, size_t, char*, size_t, char*, size_t);
  int (*piece_size)(void*);
  int (*bos_id)(void*);
  int (*eos_id)(void*);

  static const Shim& get() {
    static const Shim shim = [] {
      void* lib = dlopen(KVSTREAM_SPM_SHIM, RTLD_NOW | RTLD_LOCAL | RTLD_DEEPBIND);
      if (!lib) throw std::runtime_error(std::string("cannot load the SentencePiece shim: ") + dlerror());
      auto symbol = [&](const char* name) {
        void* f = dlsym(lib, name);
        if (!f) throw std::runtime_error(std::string("SentencePiece shim lacks ") + name);
        return f;
      };
      Shim s;
      s.load = reinterpret_cast<decltype(s.load)>(symbol("kvstream_spm_load"));
      s.free = reinterpret_cast<decltype(s.free)>(symbol("kvstream_spm_free"));
      s.encode = reinterpret_cast<decltype(s.encode)>(symbol("kvstream_spm_encode"));
      s.decode = reinterpret_cast<decltype(s.decode)>(symbol("kvstream_spm_decode"));
      s.piece_size = reinterpret_cast<decltype(s.piece_size)>(symbol("kvstream_spm_piece_size"));
      s.bos_id = reinterpret_cast<decltype(s.bos_id)>(symbol("kvstream_spm_bos_id"));
      s.eos_id = reinterpret_cast<decltype(s.eos_id)>(symbol("kvstream_spm_eos_id"));
      return s;
    }();
    return shim;
  }
};

SentencePieceTokenizer::SentencePieceTokenizer(const std::filesystem::path& path) : shim_(Shim::get()) {
  char error[512] = {0};
  handle_ = shim_.load(path.c_str(), error, sizeof error);
  if (!handle_) throw std::runtime_error("cannot load SentencePiece model " + path.string() + ": " + error);
}

SentencePieceTokenizer::~SentencePieceTokenizer() { shim_.free(handle_); }

std::vector<int32_t> SentencePieceTokenizer::encode(const std::string& text, bool add_bos) const {
  char error[512] = {0};
  std::vector<int> ids(text.size() + 16);  // a piece covers at least one byte
  const long n = shim_.encode(handle_, text.data(), text.size(), ids.data(), ids.size(), error, sizeof error);
  if (n < 0 || static_cast<size_t>(n) > ids.size()) throw std::runtime_error(std::string("SentencePiece encode failed: ") + error);
  std::vector<int32_t> out;
  if (add_bos && bos_id() >= 0) out.push_back(bos_id());
  out.insert(out.end(), ids.begin(), ids.begin() + n);
  return out;
}

std::string SentencePieceTokenizer::decode(const std::vector<int32_t>& ids) const {
  char error[512] = {0};
  const std::vector<int> in(ids.begin(), ids.end());
  std::string text(64 + 16 * ids.size(), '\0');
  long n = shim_.decode(handle_, in.data(), in.size(), text.data(), text.size(), error, sizeof error);
  if (n > static_cast<long>(text.size())) {
    text.resize(static_cast<size_t>(n));
    n = shim_.decode(handle_, in.data(), in.size(), text.data(), text.size(), error, sizeof error);
  }
  if (n < 0) throw std::runtime_error(std::string("SentencePiece decode failed: ") + error);
  text.resize(static_cast<size_t>(n));
  return text;
}

int32_t SentencePieceTokenizer::vocab_size() const { return shim_.piece_size(handle_); }
int32_t SentencePieceTokenizer::bos_id() const { return shim_.bos_id(handle_); }
int32_t SentencePieceTokenizer::eos_id() const { return shim_.eos_id(handle_); }

}  // namespace kvstream::models
