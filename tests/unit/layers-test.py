#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""The device's layers (qemu-device/README.md): every file of qemu-device/
is in one layer, and no file calls a function defined in a higher layer by
name.  Functions are found as text: a definition is a line that starts a
non-static function; a call is its name followed by "(" outside comments.

    tests/unit/layers-test.py [QEMU_DEVICE_DIR]
"""
import os
import re
import sys

here = os.path.dirname(os.path.abspath(__file__))
dev = sys.argv[1] if len(sys.argv) > 1 else os.path.join(here, '..', '..',
                                                         'qemu-device')


def layers():
    """The README's table, top layer first: [(name, [files])]."""
    rows = []
    with open(os.path.join(dev, 'README.md')) as f:
        for line in f:
            cells = [c.strip() for c in line.strip().strip('|').split('|')]
            if len(cells) == 3 and cells[2].startswith('`'):
                rows.append((cells[0], re.findall(r'`([^`]+\.c)`', cells[2])))
    return rows


def source(path):
    with open(path) as f:
        text = f.read()
    return re.sub(r'/\*.*?\*/', ' ', text, flags=re.S)


DEF = re.compile(r'^(?!static)[A-Za-z_][\w \*]*?\b(softhca_\w+)\s*\([^;{]*\)'
                 r'\s*\{', re.M)


def main():
    rank, failed = {}, 0
    table = layers()
    for i, (name, files) in enumerate(table):
        for f in files:
            rank[f] = (i, name)
    files = sorted(f for f in os.listdir(dev) if f.endswith('.c'))
    for f in files:
        if f not in rank:
            print(f'FAIL unit/layers: qemu-device/{f} is in no layer')
            failed += 1
    defs = {}
    texts = {f: source(os.path.join(dev, f)) for f in files}
    for f, text in texts.items():
        for m in DEF.finditer(text):
            defs[m.group(1)] = f
    for f, text in texts.items():
        for fn, where in sorted(defs.items()):
            if where == f or f not in rank or where not in rank:
                continue
            if rank[where][0] < rank[f][0] and \
                    re.search(r'\b' + fn + r'\s*\(', text):
                print(f'FAIL unit/layers: {f} ({rank[f][1]}) calls {fn} of '
                      f'{where} ({rank[where][1]})')
                failed += 1
    if not table:
        print('FAIL unit/layers: no layer table in qemu-device/README.md')
        failed += 1
    if not failed:
        print(f'PASS unit/layers: {len(files)} files in {len(table)} layers, '
              f'no call upwards')
    return 1 if failed else 0


sys.exit(main())
