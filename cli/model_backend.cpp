// The binary's side of cli/model_backend.h: finds kvstream-models.so beside /proc/self/exe and
// loads it (dlopen) the first time a model is needed. The plugin's symbols stay local to it
// (RTLD_LOCAL), so its copies of the kvstream libraries never stand in for the binary's.
#include "cli/model_backend.h"

#include <dlfcn.h>

#include <filesystem>
#include <mutex>
#include <stdexcept>

#include "cli/command.h"

namespace kvstream::cli {

namespace {

std::filesystem::path plugin_path() {
  std::error_code error;
  const std::filesystem::path binary = std::filesystem::read_symlink("/proc/self/exe", error);
  return error ? std::filesystem::path(kModelPluginFile) : binary.parent_path() / kModelPluginFile;
}

bool plugin_present() { return std::filesystem::exists(plugin_path()); }

// The plugin's table, loaded once; `user` names what needs it in the error of a build without it.
const ModelBackend& backend(const std::string& user) {
  static std::once_flag once;
  static const ModelBackend* loaded = nullptr;
  const std::filesystem::path path = plugin_path();
  if (!std::filesystem::exists(path))
    throw std::runtime_error(user + " runs a model: this kvstream was built without LibTorch (-DWITH_TORCH=OFF; no " +
                             path.string() + "); build it with LibTorch (bash scripts/setup.sh)");
  std::call_once(once, [&] {
    void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!handle) throw std::runtime_error("cannot load the model plugin " + path.string() + ": " + dlerror());
    using Entry = const ModelBackend* (*)();
    const auto entry = reinterpret_cast<Entry>(dlsym(handle, kModelBackendSymbol));
    if (!entry) throw std::runtime_error(path.string() + " is not a kvstream model plugin: no " + kModelBackendSymbol);
    const ModelBackend* table = entry();
    if (table->version != kModelBackendVersion)
      throw std::runtime_error(path.string() + " is model plugin version " + std::to_string(table->version) +
                               ", this kvstream needs " + std::to_string(kModelBackendVersion) + ": rebuild both");
    loaded = table;  // the handle stays open until the process ends
  });
  return *loaded;
}

}  // namespace

int quality_main(const std::vector<std::string>& args) { return backend("kvstream quality").quality_main(args); }
int rd_main(const std::vector<std::string>& args) { return backend("kvstream rd").rd_main(args); }
int kv_export_main(const std::vector<std::string>& args) { return backend("kvstream kv-export").kv_export_main(args); }
int calibrate_main(const std::vector<std::string>& args) { return backend("kvstream calibrate").calibrate_main(args); }
int calibrate_ladder_main(const std::vector<std::string>& args) {
  return backend("kvstream calibrate-ladder").calibrate_ladder_main(args);
}
int profile_prefill_main(const std::vector<std::string>& args) {
  return backend("kvstream profile-prefill").profile_prefill_main(args);
}

profiling::ModelContextMeasurer model_context_measurer() {
  if (!plugin_present()) return {};
  return [](const profiling::ModelContextsRequest& request, const profiling::ProfileCache& cache,
            const profiling::ProgressLog& log) {
    return backend("a context set of source \"model\"").measure_model_contexts(request, cache, log);
  };
}

RealKvPreparer real_kv_preparer() {
  if (!plugin_present()) return {};
  return [](const emulation::RealKvOptions& options, const std::function<void(const std::string&)>& log) {
    return backend("emulate --model").prepare_real_kv(options, log);
  };
}

}  // namespace kvstream::cli
