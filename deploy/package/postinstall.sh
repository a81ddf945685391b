#!/bin/sh
# SPDX-License-Identifier: MIT
# After the queryd package (.deb or .rpm, .goreleaser.yaml) is installed or
# upgraded: create the queryd user and group (sysusers.d), make systemd read
# the units, and restart a running queryd (and running queryd@NAME instances)
# on an upgrade. A new install is not started: edit /etc/queryd/queryd.toml,
# then `systemctl enable --now queryd` (or queryd@NAME, docs/deploy.md).
set -e
if command -v systemd-sysusers >/dev/null 2>&1; then
	systemd-sysusers queryd.conf
fi
if [ -d /run/systemd/system ]; then
	systemctl daemon-reload
	# Upgrade: dpkg passes "configure <old version>", rpm passes 2.
	if { [ "$1" = configure ] && [ -n "$2" ]; } || [ "$1" = 2 ]; then
		systemctl try-restart queryd.service 'queryd@*.service'
	fi
fi
