#!/bin/sh
# SPDX-License-Identifier: MIT
# After the queryd package is removed: make systemd forget the unit.
set -e
if [ -d /run/systemd/system ]; then
	systemctl daemon-reload || true
fi
