#!/usr/bin/env bash
# promtool checks deploy/prometheus/alerts.yml in `make lint`. Debian ships it only inside the
# prometheus package, so that is installed, without its recommends (node exporter, ...), and
# with service starts refused: CI needs the binary, not a Prometheus on :9090. Idempotent.
set -euo pipefail

if command -v promtool >/dev/null; then
  promtool --version 2>&1 | head -1
  exit 0
fi

export DEBIAN_FRONTEND=noninteractive
# policy-rc.d answering 101 tells the package's maintainer scripts not to start the service.
# An existing one (container images often have it) is left as it was.
own_policy=false
if [ ! -e /usr/sbin/policy-rc.d ]; then
  printf '#!/bin/sh\nexit 101\n' >/usr/sbin/policy-rc.d
  chmod +x /usr/sbin/policy-rc.d
  own_policy=true
fi
cleanup() { if $own_policy; then rm -f /usr/sbin/policy-rc.d; fi; }
trap cleanup EXIT

apt-get update -q
apt-get install -y -q --no-install-recommends prometheus

# Where systemd runs, a unit may still have been enabled or started; nothing may listen on
# :9090 beside the tests, and nothing should start at boot.
if command -v systemctl >/dev/null && [ -d /run/systemd/system ]; then
  systemctl disable --now prometheus >/dev/null 2>&1 || true
fi
if pidof prometheus >/dev/null 2>&1; then
  # Started by a sysvinit script despite the policy: stop it through the same script.
  service prometheus stop >/dev/null 2>&1 || true
fi

promtool --version 2>&1 | head -1
