#!/usr/bin/env bash
# profiling/gpu_prefill as the GPU machine builds it (scripts/gpu-prefill.sh): a CMake project of its own
# against a LibTorch found by find_package(Torch), with the header-only nlohmann/json and Eigen from
# KVSTREAM_DEPS_INCLUDE. Here it builds against this machine's LibTorch and times one layer of a
# Mistral-7B shape on the CPU, so that a source the tool needs cannot go missing from its list unseen.
# Usage: gpu_prefill_standalone.sh REPOSITORY BUILD_DIR
set -euo pipefail
repo=$1
build=$2
deps=$build/deps
# A folder configured from another source folder (the tool was tools/gpu_prefill before) is made anew.
if [ -f "$build/CMakeCache.txt" ] &&
   ! grep -qxF "CMAKE_HOME_DIRECTORY:INTERNAL=$repo/profiling/gpu_prefill" "$build/CMakeCache.txt"; then
  rm -rf "$build"
fi
mkdir -p "$deps"
ln -sfn /usr/include/nlohmann "$deps/nlohmann"
ln -sfn /usr/include/eigen3/Eigen "$deps/Eigen"
generator=()
if command -v ninja > /dev/null; then generator=(-G Ninja); fi
cmake "${generator[@]}" -S "$repo/profiling/gpu_prefill" -B "$build" -DCMAKE_BUILD_TYPE=Release -DKVSTREAM_DEPS_INCLUDE="$deps" \
  > "$build/configure.log" 2>&1 || { cat "$build/configure.log"; exit 1; }
cmake --build "$build" -j "$(nproc)"
rm -rf "$build/profiles"
"$build/gpu_prefill" --device cpu --dtype fp32 --arch mistral-7b --layers 1 --prefix 0 --chunk 8,16,32 --reps 1 \
  --out-dir "$build/profiles"
profile=$(ls "$build"/profiles/*_mistral-7b.json)
grep -q '"prefill_cost_model"' "$profile" || { echo "gpu_prefill_standalone: $profile has no prefill_cost_model" >&2; exit 1; }
echo "gpu_prefill_standalone: passed ($profile)"
