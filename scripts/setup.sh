#!/usr/bin/env bash
# Installs everything the build and the tests need, skipping what is already present.
# Debian packages (apt-get update at most once) and a pinned Python virtualenv in .venv whose
# pyarrow wheel provides Arrow C++ / Parquet C++.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

DEB_PACKAGES=(g++ make cmake ninja-build ccache pkg-config python3-venv
  libsimdjson-dev rapidjson-dev libroaring-dev libcli11-dev libfmt-dev
  libgtest-dev libgmock-dev libbenchmark-dev)

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

STAMP=".venv/.deltacpp-requirements"
WANT="$(cat requirements.txt constraints.txt | sha256sum | cut -d' ' -f1)"
if [[ ! -f "$STAMP" || "$(cat "$STAMP")" != "$WANT" ]]; then
  echo "setup: creating .venv from requirements.txt (constraints.txt)"
  if [[ ! -x .venv/bin/python ]]; then python3 -m venv .venv; fi
  .venv/bin/python -m pip install -q --disable-pip-version-check -r requirements.txt -c constraints.txt
  # The wheel ships only versioned sonames (libarrow.so.2600); make the unversioned names the
  # linker looks for.
  .venv/bin/python -c "import pyarrow; pyarrow.create_library_symlinks()"
  echo "$WANT" > "$STAMP"
fi
