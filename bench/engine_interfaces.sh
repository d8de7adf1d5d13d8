#!/usr/bin/env bash
# The integration tests against vLLM's and SGLang's own abstract classes, without installing
# either engine (their wheels need CUDA builds): the wheels are unpacked into a folder and the
# few modules their base classes import are installed beside them, with --no-deps.
# tests/integrations then runs with GrammaskBackend and GrammaskGrammarBackend subclassing vLLM's
# StructuredOutputBackend/StructuredOutputGrammar and SGLang's BaseGrammarBackend/
# BaseGrammarObject, and register() entering SGLang's registry. The drivers make each
# scheduler's calls in its order; a whole engine serving requests is not run.
#   bash bench/engine_interfaces.sh [FOLDER]     (default /tmp/grammask-engines; ~1 GB)
set -euo pipefail
cd "$(dirname "$0")/.."
dir="${1:-/tmp/grammask-engines}"
mkdir -p "$dir/wheels" "$dir/site"
python -m pip download -q --no-deps -d "$dir/wheels" vllm==0.34.0 sglang==0.5.23
for w in "$dir"/wheels/*.whl; do python -m zipfile -e "$w" "$dir/site"; done
python -m pip install -q --no-deps --target "$dir/site" psutil pybase64 triton pillow starlette \
  msgspec pyzmq aiohttp multidict yarl propcache aiohappyeyeballs aiosignal frozenlist openai \
  partial_json_parser cachetools uvloop
PYTHONPATH="$dir/site" GRAMMASK_REQUIRE_ENGINES=1 python -m pytest -q -p no:cacheprovider \
  tests/integrations
