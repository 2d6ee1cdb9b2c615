#include "experiments/result_dir_claim.h"

#include <exception>

namespace kvstream::experiments {

namespace fs = std::filesystem;

ResultDirClaim::ResultDirClaim(fs::path dir, std::string command, std::function<void()> check)
    : dir_(std::move(dir)), command_(std::move(command)), check_(std::move(check)) {
  check_();
}

void ResultDirClaim::lock() {
  std::error_code ec;
  made_dir_ = !fs::exists(dir_, ec);
  lock_ = std::make_unique<common::DirectoryLock>(dir_, command_);
  check_();
}

ResultDirClaim::~ResultDirClaim() {
  if (!lock_ || keep_ || !made_dir_ || std::uncaught_exceptions() == 0) return;
  lock_.reset();  // released before its file goes
  std::error_code ec;
  fs::remove(dir_ / ".lock", ec);
  fs::remove(dir_, ec);  // only when nothing else is in it
}

}  // namespace kvstream::experiments
