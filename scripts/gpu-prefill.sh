#!/usr/bin/env bash
# Measured GPU prefill profiles, for a machine that has only a CUDA PyTorch, the CUDA
# toolkit, CMake and a C++ compiler: no Debian -dev packages, no package registry. Two steps:
#
#   bash scripts/gpu-prefill.sh --prepare   here (a machine with scripts/setup.sh's packages): copies the
#                                           header-only nlohmann/json and Eigen into .gpu-deps/include
#                                           (git-ignored, never committed); run it after gpu-check.sh
#                                           --prepare, which empties .gpu-deps/ first
#   bash scripts/gpu-prefill.sh             on the GPU machine (with .gpu-deps/ carried along): builds
#                                           profiling/gpu_prefill against PyTorch's LibTorch with CMake into
#                                           build-gpu-prefill/, then times Mistral-7B- and Llama-2-70B-
#                                           shaped models in bf16 and writes <gpu>_<model>.json profiles
#                                           into ${OUT:-build-gpu-prefill/profiles}
#
# Copy the profiles into profiling/hardware/measured/ to ship them: there they replace the analytic
# profile of the same name (docs/PROFILES.md).
# Variables: PYTHON (default python3), CUDA_ARCHS (default "80 90", as gpu-check.sh; sets
# TORCH_CUDA_ARCH_LIST), OUT (where the profiles go), GPU_PREFILL_ARGS (extra options of
# the tool, e.g. "--reps 5"; see build-gpu-prefill/gpu_prefill --help).
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
deps=$repo/.gpu-deps
cd "$repo"

if [[ ${1:-} == --prepare ]]; then
  mkdir -p "$deps/include"
  [[ -d $deps/include/nlohmann ]] || cp -r /usr/include/nlohmann "$deps/include/"
  rm -rf "$deps/include/Eigen" && cp -r /usr/include/eigen3/Eigen "$deps/include/"
  echo "gpu-prefill: prepared nlohmann/json and Eigen in $deps/include"
  exit 0
fi
[[ $# -eq 0 ]] || { echo "usage: bash scripts/gpu-prefill.sh [--prepare]" >&2; exit 2; }

for header in nlohmann/json.hpp Eigen/Dense; do
  [[ -f $deps/include/$header ]] || {
    echo "gpu-prefill: $deps/include/$header is missing: run 'bash scripts/gpu-prefill.sh --prepare' where the packages are" >&2
    exit 1
  }
done
python=${PYTHON:-python3}
# One line: the CMake prefix of PyTorch's LibTorch, or why it cannot be used.
torch_info=$("$python" - <<'EOF' 2>&1
import sys
try:
    import torch
except Exception as e:
    sys.exit(f"cannot import torch ({e})")
if not torch.cuda.is_available():
    sys.exit(f"torch {torch.__version__} sees no CUDA device (CUDA build: {torch.version.cuda or 'none, CPU-only'})")
print(torch.utils.cmake_prefix_path)
EOF
) || { echo "gpu-prefill: no CUDA PyTorch with $python: $torch_info" >&2; exit 1; }

build=$repo/build-gpu-prefill
out=${OUT:-$build/profiles}
echo "gpu-prefill: configuring with LibTorch from $torch_info"
# The architectures Torch's CMake config names in its flags; set, it skips probing the GPU.
arch_list=""
for a in ${CUDA_ARCHS:-80 90}; do arch_list+="${arch_list:+;}${a:0:-1}.${a: -1}"; done
export TORCH_CUDA_ARCH_LIST=${TORCH_CUDA_ARCH_LIST:-$arch_list}
mkdir -p "$build"
generator=()
if command -v ninja > /dev/null; then generator=(-G Ninja); fi  # else CMake's default (make)
cmake "${generator[@]}" -S "$repo/profiling/gpu_prefill" -B "$build" -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH="$torch_info" \
      -DKVSTREAM_DEPS_INCLUDE="$deps/include" > "$build/configure.log" 2>&1 ||
  { cat "$build/configure.log" >&2; echo "gpu-prefill: CMake could not configure profiling/gpu_prefill (log above)" >&2; exit 1; }
grep -E "^-- (gpu_prefill|Found CUDA|Caffe2: CUDA detected)" "$build/configure.log" || true
cmake --build "$build" -j "$(nproc)"
# shellcheck disable=SC2086
"$build/gpu_prefill" --device cuda --dtype bf16 --out-dir "$out" ${GPU_PREFILL_ARGS:-}
echo "gpu-prefill: profiles in $out (copy them into profiling/hardware/measured/ to ship them)"
