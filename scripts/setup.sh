#!/usr/bin/env bash
# Installs what the build and the tests need, skipping what is already present.
# Debian packages (apt-get update at most once) and a pinned Python virtualenv in .venv whose
# pyarrow wheel provides Arrow C++ / Parquet C++, plus the peers of the interoperability suite
# (delta-rs, pyspark + delta-spark; Spark fetches Delta's jars from Maven Central into ~/.ivy2
# on its first start and reuses them after).
#   scripts/setup.sh            everything (make test)
#   scripts/setup.sh --runtime  only what building the library and the CLI needs (make run):
#                               compilers and C++ libraries, and pyarrow alone in .venv
#   scripts/setup.sh --fuzz     everything plus clang for the fuzzers
#   scripts/setup.sh --bench    everything plus matplotlib for the benchmark suite's chart
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

DEB_PACKAGES=(g++ make cmake ninja-build ccache pkg-config python3-venv
  libsimdjson-dev rapidjson-dev libroaring-dev libcli11-dev libfmt-dev)
RUNTIME_ONLY=0
BENCH=0
case "${1:-}" in
  "") ;;
  --runtime) RUNTIME_ONLY=1 ;;
  --fuzz) DEB_PACKAGES+=(clang-16 libclang-rt-16-dev) ;;  # sanitizer and libFuzzer runtimes
  --bench) BENCH=1 ;;
  *)
    echo "setup: unknown option '$1' (--runtime, --fuzz, --bench or nothing)" >&2
    exit 2
    ;;
esac
if ((!RUNTIME_ONLY)); then
  DEB_PACKAGES+=(libgtest-dev libgmock-dev libbenchmark-dev
    tzdata  # zone files for the CLI tests that run in other local time zones
    openjdk-17-jre-headless)  # Java for Spark in the interoperability suite (tests/interop)
fi

missing=()
for p in "${DEB_PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
if ((${#missing[@]})); then
  echo "setup: installing Debian packages: ${missing[*]}"
  SUDO=""
  if [[ $(id -u) -ne 0 ]]; then SUDO="sudo"; fi
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

# The full set satisfies the runtime one: a .venv made for `make test` serves `make run` as is.
FULL_STAMP=".venv/.deltacpp-requirements"
FULL_WANT="$(cat requirements.txt constraints.txt | sha256sum | cut -d' ' -f1)"
STAMP="$FULL_STAMP"
WANT="$FULL_WANT"
REQUIREMENTS=(-r requirements.txt)
if ((BENCH)); then
  FULL_STAMP=".venv/.deltacpp-bench-requirements"
  FULL_WANT="$(cat requirements.txt bench/requirements.txt constraints.txt | sha256sum | cut -d' ' -f1)"
  STAMP="$FULL_STAMP"
  WANT="$FULL_WANT"
  REQUIREMENTS+=(-r bench/requirements.txt)
fi
if ((RUNTIME_ONLY)); then
  STAMP=".venv/.deltacpp-runtime"
  WANT="$(cat constraints.txt | sha256sum | cut -d' ' -f1)"
  REQUIREMENTS=(pyarrow)
  if [[ -f "$FULL_STAMP" && "$(cat "$FULL_STAMP")" == "$FULL_WANT" ]]; then
    STAMP="$FULL_STAMP"
    WANT="$FULL_WANT"
  fi
fi
if [[ ! -f "$STAMP" || "$(cat "$STAMP")" != "$WANT" ]]; then
  echo "setup: installing ${REQUIREMENTS[*]} into .venv (pinned by constraints.txt)"
  if [[ ! -x .venv/bin/python ]]; then python3 -m venv .venv; fi
  .venv/bin/python -m pip install -q --disable-pip-version-check "${REQUIREMENTS[@]}" -c constraints.txt
  # Nothing may have moved pyarrow (constraints.txt pins it; check anyway).
  want_pa="$(sed -n 's/^pyarrow==//p' constraints.txt)"
  have_pa="$(.venv/bin/python -c 'import pyarrow; print(pyarrow.__version__)')"
  if [[ "$have_pa" != "$want_pa" ]]; then
    echo "setup: pyarrow is $have_pa, constraints.txt pins $want_pa" >&2
    exit 1
  fi
  # The wheel ships only versioned sonames (libarrow.so.2600); make the unversioned names the
  # linker looks for.
  .venv/bin/python -c "import pyarrow; pyarrow.create_library_symlinks()"
  echo "$WANT" > "$STAMP"
fi
