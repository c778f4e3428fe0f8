#!/bin/sh
# The system programs the tests use as real peers, checked before `bun test` (npm test) and by CI:
#   mosquitto      external broker (scale-out, external-broker tests)
#   poppler-utils  pdftotext reads the PDFs we write
#   qpdf           encrypts the synthetic M-PESA statement PDFs
#   fiu-utils      fiu-run injects storage faults
#   chromium       dashboard tests driven by playwright-core
#   nginx, wrk     the gateway benchmark; nginx -t checks docs/deploy/nginx.conf
#   caddy          caddy validate checks docs/deploy/Caddyfile
# Missing ones are installed when this runs as root (or with password-less sudo) on a system with
# apt-get; otherwise it stops at once with the one command that installs them.
# MMP_SKIP_PEERS=1 skips the check (a machine that runs only the tests needing none of them).
set -u
[ "${MMP_SKIP_PEERS:-}" = 1 ] && exit 0

has() { command -v "$1" >/dev/null 2>&1 || [ -x "/usr/sbin/$1" ] || [ -x "/usr/bin/$1" ]; }

missing=""
has mosquitto || missing="$missing mosquitto"
has pdftotext || missing="$missing poppler-utils"
has qpdf || missing="$missing qpdf"
has fiu-run || missing="$missing fiu-utils"
[ -x /usr/bin/chromium ] || missing="$missing chromium"
has nginx || missing="$missing nginx"
has wrk || missing="$missing wrk"
has caddy || missing="$missing caddy"
missing="${missing# }"
[ -z "$missing" ] && exit 0

command_line="apt-get update && apt-get install -y --no-install-recommends $missing"
if ! command -v apt-get >/dev/null 2>&1; then
  echo "test peers missing: $missing (Debian package names); install them, then run npm test again" >&2
  exit 1
fi
if [ "$(id -u)" = 0 ]; then
  sudo=""
elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
  sudo="sudo"
else
  echo "test peers missing: $missing; install them with: sudo sh -c '$command_line'" >&2
  exit 1
fi

echo "installing the test peers: $missing" >&2
if ! { $sudo apt-get update -qq >/dev/null &&
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends $missing >/dev/null; }; then
  echo "could not install the test peers; run: sudo sh -c '$command_line'" >&2
  exit 1
fi
# Debian starts these as services on install; the tests run their own instances on their own ports.
for service in mosquitto nginx caddy; do
  $sudo service "$service" stop >/dev/null 2>&1 || true
done
exit 0
