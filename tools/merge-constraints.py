#!/usr/bin/env python3
"""Merge this project's constraints over openstack/requirements'
upper-constraints.txt, in place (tools/devstack-node.sh).

Why: the requirements snapshot (2026-08-22) predates the 2026.2 releases
(Nova 34.0.0 ...); a package pinned in both takes this project's pin,
which a passing run froze; one only in ours is added.  Lines keep the
``name===version`` form upper-constraints uses, with its markers.
"""

import re
import sys

NAME = re.compile(r'^([A-Za-z0-9_.\-]+)\s*[=<>!~]')


def key(line):
    match = NAME.match(line)
    return re.sub(r'[-_.]+', '-', match.group(1)).lower() if match else None


def main(upper_path, ours_path):
    ours = {}
    for line in open(ours_path):
        line = line.split('#')[0].strip()
        if key(line):
            ours[key(line)] = line.replace('==', '===', 1) \
                if '===' not in line else line
    merged, seen = [], set()
    for line in open(upper_path).read().splitlines():
        name = key(line)
        if name in ours:
            if name not in seen:
                merged.append(ours[name])
            seen.add(name)
        else:
            merged.append(line)
    merged.extend(line for name, line in sorted(ours.items())
                  if name not in seen)
    with open(upper_path, 'w') as out:
        out.write('\n'.join(merged) + '\n')


if __name__ == '__main__':
    main(*sys.argv[1:3])
