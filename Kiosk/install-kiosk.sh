#!/usr/bin/env bash
# Installs the Gate Pass kiosk as a systemd service on the gate machine (run as root from the
# repository root after `swift build -c release`, or with gatepass already in /usr/local/bin):
#     sudo bash Kiosk/install-kiosk.sh [VENDOR:PRODUCT]
# VENDOR:PRODUCT is the camera's USB id as `lsusb` shows it (e.g. 046d:0825); it is written
# into the udev rule. Without it, an installed rule is kept as it is (it may have been edited
# by hand) and a new one keeps its XXXX/YYYY placeholders. Safe to run again, e.g. after an
# upgrade: a running kiosk is restarted on the new binary.
set -euo pipefail
cd "$(dirname "$0")/.."
[ "$(id -u)" -eq 0 ] || { echo "run as root: sudo bash Kiosk/install-kiosk.sh [VENDOR:PRODUCT]" >&2; exit 1; }
camera_id=${1:-}
if [ -n "$camera_id" ] && ! [[ "$camera_id" =~ ^[0-9a-fA-F]{4}:[0-9a-fA-F]{4}$ ]]; then
    echo "the camera id must be VENDOR:PRODUCT in hex as lsusb shows it, e.g. 046d:0825" >&2
    exit 2
fi

binary=.build/release/gatepass
if [ -x "$binary" ]; then
    install -m 0755 "$binary" /usr/local/bin/gatepass
elif [ ! -x /usr/local/bin/gatepass ]; then
    echo "no gatepass binary: build first (swift build -c release) or copy it to /usr/local/bin/gatepass" >&2
    exit 1
fi

# The kiosk user: no login shell, its own group, and group video for the camera.
getent group video >/dev/null || groupadd --system video
if id gatepass-kiosk >/dev/null 2>&1; then
    usermod --append --groups video gatepass-kiosk
else
    useradd --system --user-group --groups video --home-dir /var/lib/gatepass-kiosk \
            --shell /usr/sbin/nologin gatepass-kiosk
fi
# systemd creates it too (StateDirectory=), but the login below runs before the service does.
install -d -o gatepass-kiosk -g gatepass-kiosk -m 0700 /var/lib/gatepass-kiosk

rule=/etc/udev/rules.d/99-gate-camera.rules
if [ -n "$camera_id" ]; then
    vendor=${camera_id%%:*}
    product=${camera_id##*:}
    # udev compares the sysfs text, which is lower-case hex. Only the rule line is edited, not
    # the comments that mention the placeholders.
    tmp=$(mktemp)
    sed -e "/^SUBSYSTEM==/ { s/\"XXXX\"/\"${vendor,,}\"/; s/\"YYYY\"/\"${product,,}\"/; }" Kiosk/99-gate-camera.rules >"$tmp"
    install -m 0644 "$tmp" "$rule"
    rm -f "$tmp"
elif [ ! -f "$rule" ]; then
    install -m 0644 Kiosk/99-gate-camera.rules "$rule"
fi
udevadm control --reload
# Only video devices need their rules applied again; a plugged-in camera gets its symlink now.
udevadm trigger --subsystem-match=video4linux --action=change

install -m 0644 Kiosk/gatepass-kiosk.service /etc/systemd/system/gatepass-kiosk.service
systemctl daemon-reload
# Not enabled here: it needs a login first. If it is already running, move it to the new binary.
systemctl try-restart gatepass-kiosk.service

echo "gatepass-kiosk is installed."
if grep -q '^SUBSYSTEM==.*"XXXX"' "$rule"; then
    echo "First, set the camera's ids in $rule (see the comments in it), or run again with them:"
    echo "  sudo bash Kiosk/install-kiosk.sh VENDOR:PRODUCT      # from lsusb, e.g. 046d:0825"
fi
if [ ! -e /dev/gate-camera ]; then
    echo "(/dev/gate-camera is not there yet: plug the camera in, or check the ids in $rule.)"
fi
echo "Next steps:"
echo "  1. Log the kiosk in once, as the kiosk user, with a guard account of this gate's organization:"
echo "       sudo -u gatepass-kiosk GATEPASS_STATE_DIR=/var/lib/gatepass-kiosk gatepass login --server https://gatepass.example.com --email guard@example.com"
echo "  2. Start it now and at every boot:"
echo "       systemctl enable --now gatepass-kiosk"
echo "  3. Watch it:"
echo "       journalctl -u gatepass-kiosk -f"
