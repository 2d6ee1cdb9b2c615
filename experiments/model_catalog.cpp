#include "model_catalog.h"

#include <stdexcept>

#include "data_resolver.h"
#include "llama2c_checkpoint.h"
#include "llama2c_tokenizer.h"
#include "sentencepiece_tokenizer.h"

namespace kvstream::experiments {
namespace {

std::unique_ptr<models::Tokenizer> load_tokenizer(const std::string& path, int32_t vocab_size) {
  const auto resolved = data::resolve_input(path);
  if (resolved.extension() == ".model") return std::make_unique<models::SentencePieceTokenizer>(resolved);
  return std::make_unique<models::Llama2cTokenizer>(resolved, vocab_size);
}

}  // namespace

std::vector<std::string> model_names() { return {"stories260K"}; }

LoadedModel load_model(const std::string& name_or_path, const std::string& tokenizer_path) {
  LoadedModel loaded;
  loaded.name = name_or_path;
  if (name_or_path == "stories260K") {
    loaded.model = std::make_unique<models::LlamaModel>(
        models::load_llama2c_checkpoint(data::resolve_data("models/stories260K/stories260K.bin")));
    loaded.tokenizer = load_tokenizer(tokenizer_path.empty() ? "models/stories260K/tok512.bin" : tokenizer_path,
                                      loaded.model->config().vocab_size);
    return loaded;
  }
  if (name_or_path.size() > 4 && name_or_path.substr(name_or_path.size() - 4) == ".bin") {
    if (tokenizer_path.empty())
      throw std::invalid_argument("model " + name_or_path + ": a llama2.c checkpoint needs --tokenizer (.bin or .model)");
    loaded.model = std::make_unique<models::LlamaModel>(models::load_llama2c_checkpoint(data::resolve_input(name_or_path)));
    loaded.tokenizer = load_tokenizer(tokenizer_path, loaded.model->config().vocab_size);
    return loaded;
  }
  std::string names;
  for (const auto& n : model_names()) names += (names.empty() ? "" : ", ") + n;
  throw std::invalid_argument("unknown model \"" + name_or_path + "\" (known: " + names + ", or a llama2.c .bin path)");
}

}  // namespace kvstream::experiments
