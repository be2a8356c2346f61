#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The README's libvirt domain XML is what scripts/libvirt-domain writes for
# the command the README shows (the libvirt VM cases define their domains
# with it), and that XML is well formed.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$here/../..
readme=$(awk '/^### libvirt$/ { s = 1 } s && /^```xml$/ { x = 1; next }
	x && /^```$/ { exit } x { print }' "$top/README.md")
made=$(env -u SOFTHCA_CACHE -u SOFTHCA_QEMU -u SOFTHCA_IMAGES "$top/scripts/libvirt-domain" \
	--vmstate /var/lib/libvirt/images/node1-vmstate.qcow2 node1 1 10001 10002)
fail=0
if [ -n "$readme" ] && [ "$readme" = "$made" ]; then
	echo "PASS unit/readme-libvirt/same-xml"
else
	echo "FAIL unit/readme-libvirt/same-xml: the README's XML differs from scripts/libvirt-domain's"
	diff <(echo "$readme") <(echo "$made") | sed 's/^/    /'
	fail=1
fi
if /usr/bin/python3 -c 'import sys, xml.dom.minidom; xml.dom.minidom.parseString(sys.stdin.read())' <<< "$made"; then
	echo "PASS unit/readme-libvirt/well-formed"
else
	echo "FAIL unit/readme-libvirt/well-formed"
	fail=1
fi
exit "$fail"
