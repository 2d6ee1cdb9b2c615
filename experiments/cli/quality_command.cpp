#include <iostream>

#include "codec.h"
#include "command.h"
#include "quality.h"

namespace kvstream::cli {
Command quality_command() {
  return {"quality", "perplexity, KL and top-1 agreement of the model on decoded KV, per codec and level",
          [](const std::vector<std::string>& args) {
            std::string model_name, tokenizer, levels;
            std::vector<std::string> codecs;
            experiments::QualityOptions q;
            bool json = false;
            po::options_description options("options");
            options.add_options()
              ("model", po::value(&model_name)->default_value("stories260K"), "model name or llama2.c .bin path")
              ("tokenizer", po::value(&tokenizer)->default_value(""), "tokenizer for a .bin model (.bin or .model)")
              ("text", po::value(&q.text_path)->default_value("text/tinystories/tinystories_val.txt"), "text file (data-resolved)")
              ("codec", po::value(&codecs)->multitoken()->composing(), "codec spec(s) (default: cachegen)")
              ("levels", po::value(&levels)->default_value(""), "comma-separated levels (default: all)")
              ("contexts", po::value(&q.contexts)->default_value(8), "number of text windows")
              ("context-tokens", po::value(&q.context_tokens)->default_value(384), "context tokens T (prefilled, then encoded)")
              ("continuation-tokens", po::value(&q.continuation_tokens)->default_value(64), "real tokens K scored after the context")
              ("window-chars", po::value(&q.window_chars)->default_value(2400), "characters per window")
              ("stride-chars", po::value(&q.stride_chars)->default_value(3000), "characters between window starts")
              ("greedy-tokens", po::value(&q.greedy_tokens)->default_value(16), "greedy tokens compared for greedy_match_tokens")
              ("json", po::bool_switch(&json), "one JSON object per (codec, level)");
            po::variables_map vm;
            if (!parse_or_help(args,
                               "usage: kvstream quality [--model M] [--text FILE] [--codec SPEC ...] [--levels 1,2,3]\n"
                               "                        [--contexts N] [--context-tokens T] [--continuation-tokens K] [--json]\n\n"
                               "For each window: prefill T tokens, round the KV to fp16 (the reference), encode/decode it,\n"
                               "feed the next K-1 real tokens on the decoded KV. Fields: bytes, ratio_vs_fp16, ppl_ref, ppl,\n"
                               "ppl_delta, kl_mean (KL(reference || decoded) per position), top1_agree, greedy_match_tokens.\n\n" +
                                   codec_list_help(),
                               options, vm))
              return 0;
            if (!codecs.empty()) q.codecs = codecs;
            if (!levels.empty())
              for (int64_t level : parse_int_list("levels", levels, 1)) q.levels.push_back(static_cast<int>(level));
            if (q.contexts < 1 || q.context_tokens < 1) throw po::error("--contexts and --context-tokens must be positive");
            for (const auto& spec : q.codecs) codec::make_codec(spec);  // bad specs fail before the model loads
            const auto model = experiments::load_model(model_name, tokenizer);
            experiments::run_quality(model, q, [&](const experiments::QualityRow& row) {
              if (json) {
                std::cout << row.to_json().dump() << std::endl;
              } else {
                std::cout << row.codec << " level " << row.level << ": " << row.bytes << " B ("
                          << double(row.fp16_bytes) / double(row.bytes) << "x), ppl " << row.ppl << " (ref " << row.ppl_ref
                          << "), KL " << row.kl_mean << ", top-1 " << row.top1_agree << ", greedy match "
                          << row.greedy_match_tokens << std::endl;
              }
            });
            return 0;
          }};
}

}  // namespace kvstream::cli
