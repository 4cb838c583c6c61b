#!/usr/bin/env bash
# Installs the Gate Pass server as a systemd service on this machine (run as root from the
# repository root after `swift build -c release`).
set -euo pipefail
cd "$(dirname "$0")/.."
binary=.build/release/gatepass
[ -x "$binary" ] || { echo "build first: swift build -c release" >&2; exit 1; }
install -m 0755 "$binary" /usr/local/bin/gatepass
id gatepass >/dev/null 2>&1 || useradd --system --home-dir /var/lib/gatepass --shell /usr/sbin/nologin gatepass
install -d -m 0755 /etc/gatepass
[ -f /etc/gatepass/server.json ] || install -m 0644 Config/server.json /etc/gatepass/server.json
install -d -o gatepass -g gatepass -m 0700 /var/lib/gatepass
install -m 0644 Kiosk/gatepass-server.service /etc/systemd/system/gatepass-server.service
systemctl daemon-reload
systemctl enable --now gatepass-server.service
echo "gatepass-server is running; add the first user with:"
echo "  sudo -u gatepass gatepass user add --db /var/lib/gatepass/gatepass.db --email you@example.com --name 'Your Name' --role OWNER --organization 'Your Site'"
