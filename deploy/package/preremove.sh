#!/bin/sh
# SPDX-License-Identifier: MIT
# Before the queryd package is removed (not upgraded): stop and disable the
# service and every queryd@NAME instance (enabled or running). dpkg passes
# "remove", rpm passes 0.
set -e
if [ -d /run/systemd/system ] && { [ "$1" = remove ] || [ "$1" = 0 ]; }; then
	systemctl disable --now queryd.service || true
	# Enabled instances are links in /etc/systemd/system/*.wants/; running
	# ones are loaded units (systemctl stop takes a glob for those).
	for link in /etc/systemd/system/*.wants/queryd@*.service; do
		[ -e "$link" ] || [ -L "$link" ] || continue
		systemctl disable "${link##*/}" || true
	done
	systemctl stop 'queryd@*.service' || true
fi
