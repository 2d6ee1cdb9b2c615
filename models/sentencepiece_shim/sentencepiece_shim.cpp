// A C interface to libsentencepiece, built as its own shared library and loaded with
// dlopen(RTLD_LOCAL | RTLD_DEEPBIND) by sentencepiece_tokenizer.cpp.
//
// Why: Debian's libsentencepiece carries its own copy of protobuf-lite with exported symbols, and
// LibTorch loads the full libprotobuf. Linked into one process, the dynamic linker resolves
// sentencepiece's protobuf calls to libprotobuf and the process crashes while loading. Deep binding
// keeps this library and libsentencepiece on their own protobuf, whatever else is loaded.
#include <sentencepiece_processor.h>

#include <cstring>
#include <string>
#include <vector>

namespace {

void set_error(char* error, size_t error_size, const std::string& message) {
  if (error_size == 0) return;
  std::strncpy(error, message.c_str(), error_size - 1);
  error[error_size - 1] = '\0';
}

}  // namespace

extern "C" {

void* kvstream_spm_load(const char* path, char* error, size_t error_size) {
  auto* processor = new sentencepiece::SentencePieceProcessor();
  if (const auto status = processor->Load(path); !status.ok()) {
    set_error(error, error_size, status.ToString());
    delete processor;
    return nullptr;
  }
  return processor;
}

void kvstream_spm_free(void* handle) { delete static_cast<sentencepiece::SentencePieceProcessor*>(handle); }

// Writes up to `capacity` ids; returns the number of ids the text has (call again if larger), or -1.
long kvstream_spm_encode(void* handle, const char* text, size_t length, int* ids, size_t capacity, char* error,
                         size_t error_size) {
  std::vector<int> out;
  if (const auto status = static_cast<sentencepiece::SentencePieceProcessor*>(handle)->Encode(
          std::string(text, length), &out);
      !status.ok()) {
    set_error(error, error_size, status.ToString());
    return -1;
  }
  for (size_t i = 0; i < out.size() && i < capacity; ++i) ids[i] = out[i];
  return static_cast<long>(out.size());
}

// Writes up to `capacity` bytes of text; returns the text's length (call again if larger), or -1.
long kvstream_spm_decode(void* handle, const int* ids, size_t count, char* text, size_t capacity, char* error,
                         size_t error_size) {
  std::string out;
  if (const auto status =
          static_cast<sentencepiece::SentencePieceProcessor*>(handle)->Decode(std::vector<int>(ids, ids + count), &out);
      !status.ok()) {
    set_error(error, error_size, status.ToString());
    return -1;
  }
  std::memcpy(text, out.data(), out.size() < capacity ? out.size() : capacity);
  return static_cast<long>(out.size());
}

int kvstream_spm_piece_size(void* handle) { return static_cast<sentencepiece::SentencePieceProcessor*>(handle)->GetPieceSize(); }
int kvstream_spm_bos_id(void* handle) { return static_cast<sentencepiece::SentencePieceProcessor*>(handle)->bos_id(); }
int kvstream_spm_eos_id(void* handle) { return static_cast<sentencepiece::SentencePieceProcessor*>(handle)->eos_id(); }

}  // extern "C"
