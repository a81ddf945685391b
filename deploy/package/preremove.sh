#!/bin/sh
# SPDX-License-Identifier: MIT
# Before the queryd package is removed (not upgraded): stop and disable the
# service. dpkg passes "remove", rpm passes 0.
set -e
if [ -d /run/systemd/system ] && { [ "$1" = remove ] || [ "$1" = 0 ]; }; then
	systemctl disable --now queryd.service || true
fi
