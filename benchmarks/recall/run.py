"""The recall benchmark: would a sweep have found these known Nova bugs?

Each shape of ``shapes.yaml`` is a small Nova diff that gives Nova 34
back the mechanism of a known, fixed bug (``shapes/*.diff``, each
explained in its header).  For each, this runs the reduced A/B sweep its
entry names (``faultdriver sweep WORKFLOW --ab-nova-patch DIFF``: A is
stock Nova, B Nova with the shape) and says whether it was found: at
least one case that is ``ok`` on stock breaks an invariant with the
shape applied (the A/B's regressions, each replayed on stock Nova first:
one that breaks there too is flaky and does not count).  Counted per
case, not per finding signature, so a shape that breaks a step where a
stock bug already breaks another invariant is not hidden by it.

Shapes of the same workflow and action classes share one stock sweep
(``RESULTS/stock/WORKFLOW--ACTIONS``, linked as each A/B's ``a``: the
sweep's results directory resumes, so a case stock already ran is not
run again).  Each sweep runs as its own command, optionally under a lock
file (``--lock``), so that other heavy work interleaves between shapes.

Prints one line per shape (found or missed, and the case that caught it
with the invariants it broke) and the recall figure; exit 0 when every
shape was found, 1 when one was missed or its sweep failed, 2 for bad
input (naming the file and the key).
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile

import yaml

HERE = os.path.dirname(os.path.abspath(__file__))
INDEX = os.path.join(HERE, 'shapes.yaml')
KEYS = {'bug', 'area', 'diff', 'workflow', 'actions', 'points', 'hosts',
        'finds', 'ci', 'backend'}
#: Tiers a shape may be swept on (``backend``; default embedded): a
#: shape whose mechanism only real RPC shows (an exception carried as a
#: RemoteError, which the embedded Nova's fake transport re-raises as
#: itself) runs on processes.
BACKENDS = ('embedded', 'process')
REQUIRED = ('bug', 'area', 'workflow', 'actions', 'points', 'finds')


class BadInput(Exception):
    """An index entry that names nothing runnable (exit 2)."""


def load(path=INDEX):
    """``{name: entry}`` of the index, each entry with ``diff`` as an
    absolute path; BadInput naming the file and key of anything wrong:
    an unknown key, a diff that is missing, a workflow that is not
    bundled, an action class or point faultdriver does not know, a host
    the workflow does not have, an invariant that is none of the
    sweep's."""
    from faultdriver.scenario import invariants as registry
    from faultdriver.scenario import model
    from faultdriver.sweep import cases
    from faultdriver.sweep import sweep
    with open(path, encoding='utf-8') as stream:
        data = yaml.safe_load(stream)
    if not isinstance(data, dict) or not isinstance(data.get('shapes'),
                                                    dict):
        raise BadInput('%s: expected a mapping with key shapes' % path)
    invariants = registry.names()
    shapes = {}
    for name, entry in data['shapes'].items():
        where = '%s: shapes.%s' % (path, name)
        if not isinstance(entry, dict):
            raise BadInput('%s: expected a mapping' % where)
        unknown = sorted(set(entry) - KEYS)
        missing = [key for key in REQUIRED if key not in entry]
        if unknown or missing:
            raise BadInput('%s: %s' % (where, '; '.join(
                ['unknown key %s' % k for k in unknown] +
                ['missing key %s' % k for k in missing])))
        entry = dict(entry)
        entry['diff'] = os.path.normpath(os.path.join(
            os.path.dirname(path), entry.get('diff') or
            os.path.join('shapes', name + '.diff')))
        if not os.path.isfile(entry['diff']):
            raise BadInput('%s.diff: %s: no such file' % (where,
                                                          entry['diff']))
        if entry['workflow'] not in model.bundled():
            raise BadInput('%s.workflow: %s is not a bundled workflow' % (
                where, entry['workflow']))
        for key in ('actions', 'points', 'hosts'):
            if not isinstance(entry.get(key, []), list):
                raise BadInput('%s.%s: expected a list' % (where, key))
        wrong = sorted(set(entry['actions']) - set(cases.ACTIONS))
        if wrong or not entry['actions']:
            raise BadInput('%s.actions: %s; expected some of %s' % (
                where, ', '.join(wrong) or 'none', ', '.join(cases.ACTIONS)))
        if entry.get('backend', 'embedded') not in BACKENDS:
            raise BadInput('%s.backend: %s; expected one of %s' % (
                where, entry['backend'], ', '.join(BACKENDS)))
        if entry['finds'] not in invariants:
            raise BadInput('%s.finds: %s is none of %s' % (
                where, entry['finds'], ', '.join(invariants)))
        try:
            sweep.check_arguments(entry['workflow'], entry['points'],
                                  entry.get('hosts'))
        except Exception as exc:
            raise BadInput('%s: %s' % (where, exc))
        shapes[name] = entry
    return shapes


def stock_key(entry):
    """The stock sweep a shape's A/B shares with the shapes of the same
    workflow and action classes."""
    key = '%s--%s' % (entry['workflow'], '-'.join(sorted(entry['actions'])))
    backend = entry.get('backend', 'embedded')
    return key if backend == 'embedded' else '%s--%s' % (key, backend)


def command(entry, folder, mode, workers=None, lock=None):
    """The ``faultdriver sweep`` command line of a shape's A/B."""
    argv = [sys.executable, '-m', 'faultdriver.cmd.main', 'sweep',
            entry['workflow'], '--actions', ','.join(entry['actions']),
            '--points', ','.join(entry['points']),
            '--ab-nova-patch', entry['diff'], '--results', folder,
            '--mode', mode, '-f', 'json']
    if entry.get('hosts'):
        argv[7:7] = ['--hosts', ','.join(entry['hosts'])]
    if entry.get('backend', 'embedded') != 'embedded':
        argv += ['--backend', entry['backend']]
    if workers:
        argv += ['--workers', str(workers)]
    if lock:
        argv = ['nice', '-n', '5', 'flock', lock] + argv
    return argv


def verdict(doc):
    """``(found, caught, flaky)`` of an A/B sweep's document: the
    regressions (cases ok on stock, broken with the shape, not broken when
    replayed on stock) with the invariants each broke on B; then B's
    cases at a step only the shape takes that broke there (``new``: a
    call the fix took out, as 1879787's Neutron read; no stock case to
    compare, the fault cannot happen on stock Nova)."""
    broken = {case['id']: case['broken'] for case in doc['b']['cases']}
    caught = [{'case': case, 'broken': broken.get(case, [])}
              for case in doc['ab']['regressions']]
    caught += [{'case': case, 'broken': broken.get(case, []), 'new': True}
               for case in doc['ab'].get('new_steps', ())]
    return bool(caught), caught, doc['ab'].get('flaky', [])


def unreadable(doc):
    """Why an A/B document cannot be read here (None where it can): a
    side of a sweep format this benchmark does not read (it reads the
    cases and the A/B's regressions, the same in versions 1 and 2)."""
    from faultdriver.sweep import findings
    versions = sorted({doc[side].get('format_version', 1)
                       for side in ('a', 'b')} - set(findings.READS))
    if versions:
        return 'sweep format version %s; this benchmark reads %s' % (
            ', '.join(map(str, versions)),
            ', '.join(map(str, findings.READS)))
    return None


def run_shape(name, entry, results, mode, workers=None, lock=None,
              progress=None):
    """Run one shape's A/B sweep; its row of the summary."""
    progress = progress or _stderr
    folder = os.path.join(results, 'shapes', name)
    os.makedirs(folder, exist_ok=True)
    stock = os.path.join(results, 'stock', stock_key(entry))
    os.makedirs(stock, exist_ok=True)
    link = os.path.join(folder, 'a')
    if not os.path.lexists(link):
        os.symlink(os.path.relpath(stock, folder), link)
    argv = command(entry, folder, mode, workers, lock)
    progress('%s: %s' % (name, ' '.join(argv)))
    with open(os.path.join(folder, 'sweep.log'), 'w',
              encoding='utf-8') as log:
        done = subprocess.run(argv, stdout=subprocess.PIPE, stderr=log,
                              text=True)
    row = {'shape': name, 'bug': entry['bug'], 'area': entry['area'],
           'workflow': entry['workflow'], 'expected': entry['finds'],
           'exit': done.returncode, 'results': folder}
    try:
        doc = json.loads(done.stdout)
    except ValueError:
        return dict(row, status='error', caught=[], flaky=[],
                    error='no sweep document (exit %d); see %s' % (
                        done.returncode,
                        os.path.join(folder, 'sweep.log')))
    with open(os.path.join(folder, 'ab.json'), 'w', encoding='utf-8') as out:
        json.dump(doc, out, indent=2)
    wrong = unreadable(doc)
    if wrong:
        return dict(row, status='error', caught=[], flaky=[], error=wrong)
    found, caught, flaky = verdict(doc)
    failed = doc['ab'].get('internal_errors', [])
    status = 'found' if found else 'error' if failed else 'missed'
    return dict(row, status=status, caught=caught,
                flaky=flaky, cases=len(doc['a']['cases']),
                internal_errors=failed,
                error='cases that did not run to their checks: %s; see %s' %
                (', '.join(failed), folder) if failed else None)


def table(rows):
    lines = []
    for row in rows:
        if row['caught']:
            first = row['caught'][0]
            how = '%s%s (%s)%s' % (first['case'],
                                   ' [a step only the shape takes]'
                                   if first.get('new') else '',
                                   ', '.join(first['broken']),
                                   ' +%d more' % (len(row['caught']) - 1)
                                   if len(row['caught']) > 1 else '')
        else:
            how = row.get('error') or 'no case ok on stock broke%s' % (
                ' (flaky: %s)' % ', '.join(row['flaky'])
                if row['flaky'] else '')
        lines.append('%-6s %-66s %s' % (row['status'].upper(), row['shape'],
                                        how))
    found = sum(row['status'] == 'found' for row in rows)
    lines.append('recall: %d/%d shapes found (%.0f%%)' % (
        found, len(rows), 100.0 * found / len(rows) if rows else 0))
    return '\n'.join(lines) + '\n'


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--index', default=INDEX)
    parser.add_argument('--only', help='these shapes (comma-separated)')
    parser.add_argument('--ci', action='store_true',
                        help='only the shapes marked ci: true')
    parser.add_argument('--results', help='results directory (default: a '
                        'new temporary one); an existing one resumes')
    parser.add_argument('--lock', metavar='FILE', help='run each sweep '
                        'under flock FILE (and nice 5)')
    parser.add_argument('--mode', choices=('eventlet', 'threading'),
                        default='threading')
    parser.add_argument('--workers', type=int)
    args = parser.parse_args(argv)
    try:
        shapes = load(args.index)
        if args.only:
            wanted = [n for n in args.only.split(',') if n]
            unknown = [n for n in wanted if n not in shapes]
            if unknown:
                raise BadInput('--only %s: not in %s' % (
                    ', '.join(unknown), args.index))
            shapes = {n: shapes[n] for n in wanted}
        if args.ci:
            shapes = {n: e for n, e in shapes.items() if e.get('ci')}
        if not shapes:
            raise BadInput('no shape selected from %s' % args.index)
    except BadInput as exc:
        sys.stderr.write('recall: %s\n' % exc)
        return 2
    results = args.results or tempfile.mkdtemp(prefix='faultdriver-recall-')
    _stderr('recall: %d shape(s), results in %s' % (len(shapes), results))
    rows = [run_shape(name, entry, results, args.mode, args.workers,
                      args.lock) for name, entry in shapes.items()]
    with open(os.path.join(results, 'summary.json'), 'w',
              encoding='utf-8') as out:
        json.dump(rows, out, indent=2)
    sys.stdout.write(table(rows))
    return 0 if all(row['status'] == 'found' for row in rows) else 1


def _stderr(text):
    sys.stderr.write(text + '\n')
    sys.stderr.flush()


if __name__ == '__main__':
    sys.exit(main())
