#!/usr/bin/env bash
# The GPU checks of the codec, for a machine that has only the CUDA toolkit and a C++20
# compiler: no Debian -dev packages, no package registry. Two steps:
#
#   bash scripts/gpu-check.sh --prepare   here (a machine with scripts/setup.sh's packages): copies what
#                                          the build needs into .gpu-deps/ (git-ignored, never committed):
#                                          nlohmann/json and zstd headers, libzstd.a, the GoogleTest
#                                          sources Debian installs under /usr/src/googletest, and the KV fixture
#   bash scripts/gpu-check.sh [--no-prefill]
#                                          on the GPU machine (with .gpu-deps/ carried along): builds the
#                                          codec with nvcc + g++ (no CMake needed), runs the GPU-vs-CPU
#                                          identity tests (encode: same bytes; decode: same values; the
#                                          transform decoder: the stage launcher's values), then
#                                          prints the encode/decode table (bench/gpu_check.cpp) and
#                                          writes the decode throughputs to $OUT (or build-gpu-check/)
#                                          gpu_decode.json, for `kvstream profile-decode --from`; then
#                                          scripts/gpu-prefill.sh: prefill profiles with the CUDA LibTorch of
#                                          the machine's PyTorch (needs CMake and torch there), into $OUT,
#                                          unless --no-prefill (the codec checks alone)
#
# Variables: NVCC (default /usr/local/cuda/bin/nvcc), CXX (default g++), CUDA_ARCHS (default "80 90").
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
deps=$repo/.gpu-deps
cd "$repo"

if [[ ${1:-} == --prepare ]]; then
  rm -rf "$deps" && mkdir -p "$deps/include" "$deps/lib" "$deps/data/kv"
  cp -r /usr/include/nlohmann "$deps/include/"
  cp /usr/include/zstd.h /usr/include/zstd_errors.h "$deps/include/"
  cp /usr/lib/x86_64-linux-gnu/libzstd.a "$deps/lib/"
  cp -r /usr/src/googletest/googletest "$deps/googletest"
  fixture=kv/stories260K_tinystories_4x512.safetensors
  kvstream=${KVSTREAM_BUILD_DIR:-$repo/build}/kvstream
  [[ -x $kvstream ]] || { echo "gpu-check: --prepare needs $kvstream (bash scripts/setup.sh --main)" >&2; exit 1; }
  found=$("$kvstream" data which "$fixture") || exit 1  # its error names the roots searched
  cp "$found" "$deps/data/kv/"
  bash "$repo/scripts/gpu-prefill.sh" --prepare
  echo "gpu-check: prepared $deps ($(du -sh "$deps" | cut -f1)); carry it to the GPU machine and run scripts/gpu-check.sh"
  exit 0
fi

prefill=true
case ${1:-} in
  --no-prefill) prefill=false ;;
  "") ;;
  *) echo "usage: bash scripts/gpu-check.sh [--prepare | --no-prefill]" >&2; exit 2 ;;
esac
[[ -d $deps ]] || { echo "gpu-check: $deps is missing: run 'bash scripts/gpu-check.sh --prepare' where the packages are" >&2; exit 1; }
nvcc=${NVCC:-/usr/local/cuda/bin/nvcc}
cxx=${CXX:-g++}
cuda_home=$(dirname "$(dirname "$nvcc")")
build=$repo/build-gpu-check
mkdir -p "$build"
archs=""
for a in ${CUDA_ARCHS:-80 90}; do archs+=" -gencode arch=compute_$a,code=sm_$a"; done
common=(-O3 -DNDEBUG -DKVSTREAM_HAVE_CUDA=1 "-DKVSTREAM_LADDER_DIR=\"$repo/codec/ladders\""
        "-DKVSTREAM_SOURCE_DIR=\"$repo\"" -I"$repo"
        -I"$deps/include" -I"$deps/googletest/include" -I"$deps/googletest")

echo "gpu-check: compiling with $($nvcc --version | tail -1) and $($cxx --version | head -1)"
jobs=$(nproc)
sources=(codec/*.cpp codec/*/*.cpp common/*.cpp tests/codec/cachegen/test_gpu_decode.cpp tests/codec/cachegen/test_gpu_encode.cpp
         tests/codec/transform/test_gpu_transform.cpp
         "$deps/googletest/src/gtest-all.cc" "$deps/googletest/src/gtest_main.cc" bench/gpu_check.cpp)
for src in "${sources[@]}"; do
  "$cxx" -std=c++20 "${common[@]}" -c "$src" -o "$build/$(basename "$src").o" &
  while (( $(jobs -r | wc -l) >= jobs )); do wait -n; done
done
for cu in codec/*/*.cu; do
  # shellcheck disable=SC2086
  "$nvcc" -std=c++17 -O3 $archs "${common[@]}" -c "$cu" -o "$build/$(basename "$cu").o" &
done
wait
objects=()
for o in "$build"/*.o; do
  case $(basename "$o") in gtest_main.cc.o|gpu_check.cpp.o|test_gpu_*.cpp.o) ;; *) objects+=("$o") ;; esac
done
libs=(-L"$cuda_home/lib64" -lcudart_static -ldl -lrt -lpthread "$deps/lib/libzstd.a")
"$cxx" -o "$build/test_gpu_codec" "$build/test_gpu_decode.cpp.o" "$build/test_gpu_encode.cpp.o" \
  "$build/test_gpu_transform.cpp.o" "$build/gtest_main.cc.o" \
  "${objects[@]}" "${libs[@]}"
"$cxx" -o "$build/gpu_check" "$build/gpu_check.cpp.o" "${objects[@]}" "${libs[@]}"

# Every step runs even when an earlier one fails (device time is scarce); the exit status says
# whether all passed.
failed=()
echo "gpu-check: GPU-vs-CPU identity tests"
KVSTREAM_DATA="$deps/data" "$build/test_gpu_codec" || failed+=("identity tests")
echo "gpu-check: encode/decode table"
"$build/gpu_check" "${OUT:-$build}/gpu_decode.json" || failed+=("table (a GPU result differs from the CPU's)")
if $prefill; then
  echo "gpu-check: GPU prefill profiles"
  bash "$repo/scripts/gpu-prefill.sh" || failed+=("prefill profiles")
fi
if ((${#failed[@]})); then
  echo "gpu-check: FAILED: ${failed[*]}" >&2
  exit 1
fi
echo "gpu-check: all passed"
