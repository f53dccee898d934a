#!/usr/bin/env bash
# Install the Debian packages hyphys needs (as root), only those missing.
set -euo pipefail
# libsuitesparse-dev: CHOLMOD, the cloth solve's coarsest multigrid level (solvers/spchol.c)
PKGS=(build-essential make cmake pkg-config libopenblas-serial-dev libmetis-dev libsuitesparse-dev libglpk-dev libcjson-dev
      libglfw3-dev libepoxy-dev libstb-dev libgl1-mesa-dri xvfb xauth gnuplot-nox python3 clang
      valgrind)
missing=()
for p in "${PKGS[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  SUDO=""
  [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  echo "installing: ${missing[*]}"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
