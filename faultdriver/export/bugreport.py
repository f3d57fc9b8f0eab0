"""A finding as the bug report a Nova developer files upstream
(Launchpad): title, what happens, steps to reproduce (the scenario, and
its devstack form), expected vs actual with a run's values, the Nova
under test, the exported regression test, the candidate fix.

The values come from one run of the scenario's bug variant: a saved run
(``scenario run -f json``), or a run on the embedded tier made for the
report.  A report is written only from a run that showed the bug
(:class:`NotShown` otherwise): a report whose "actual" is not what the
run saw would send a Nova developer after the wrong thing.

What the repository says of the finding (``doc/findings.rst``'s entry,
``nova-fixes/``, ``nova-regressions/``) is read from a faultdriver
checkout, ``repository``: an installed faultdriver has no such files.
"""

import dataclasses
import glob
import os
import re
import textwrap
import time

from faultdriver import exception
from faultdriver.export import devstack
from faultdriver.export import module
from faultdriver.export import shipped
from faultdriver.export import Unsupported
from faultdriver import novaundertest
from faultdriver.scenario import invariants
from faultdriver.scenario import model
from faultdriver.scenario import report as report_module
from faultdriver.scenario import variant_report

FINDINGS = os.path.join('doc', 'findings.rst')
FIXES = 'nova-fixes'
REGRESSIONS = 'nova-regressions'
#: The label of the devstack form until a devstack run is recorded.
NOT_RUN = 'not yet run on devstack'
WIDTH = 72


class NotShown(exception.FaultDriverError):
    """The run did not show the bug (exit 1): no report from it."""


@dataclasses.dataclass(frozen=True)
class Finding:
    """An entry of doc/findings.rst, as plain text."""
    number: str
    title: str
    fields: dict            # 'Code path', 'Upstream', ... -> text
    happens: list           # paragraphs before the candidate fix
    fix: list               # the candidate fix's paragraphs


def _plain(text):
    """reStructuredText's inline markup as a plain-text reader sees it."""
    text = re.sub(r':\w+:`([^`]*)`', r'`\1`', text)
    return text.replace('``', '`')


def _is_heading(lines, i):
    return (i + 1 < len(lines) and lines[i].strip() and
            re.fullmatch(r'([=\-~^])\1{2,}', lines[i + 1].strip()) is not None)


def finding(path, number):
    """The :class:`Finding` ``number`` (``F5``) of the findings file;
    ScenarioError naming the file when it or the entry is missing."""
    try:
        with open(path, encoding='utf-8') as stream:
            lines = stream.read().splitlines()
    except OSError as exc:
        raise exception.ScenarioError(
            '%s: cannot read the findings (%s); give --repository, a '
            'faultdriver checkout' % (path, exc.strerror or exc))
    starts = [i for i in range(len(lines)) if _is_heading(lines, i) and
              lines[i].startswith(number + '. ')]
    if not starts:
        raise exception.ScenarioError('%s: no entry %s (a heading "%s. '
                                      '...")' % (path, number, number))
    start = starts[0]
    end = next((i for i in range(start + 2, len(lines))
                if _is_heading(lines, i)), len(lines))
    paragraphs = [[]]
    for line in lines[start + 2:end]:
        if line.strip():
            paragraphs[-1].append(line)
        elif paragraphs[-1]:
            paragraphs.append([])
    fields, prose = {}, []
    for paragraph in filter(None, paragraphs):
        if re.match(r':[^:]+:', paragraph[0]):
            name = None
            for line in paragraph:
                found = re.match(r':([^:]+):\s*(.*)', line)
                if found:
                    name = found.group(1)
                    fields[name] = found.group(2)
                elif name:
                    fields[name] += ' ' + line.strip()
        else:
            prose.append(_plain(' '.join(line.strip() for line in
                                         paragraph)))
    fixes = [i for i, text in enumerate(prose)
             if text.startswith('Candidate fix')]
    cut = fixes[0] if fixes else len(prose)
    return Finding(number, _plain(lines[start][len(number) + 2:].strip()),
                   {k: _plain(v) for k, v in fields.items()},
                   prose[:cut], prose[cut:])


def bug_variant(scenario, variant=None):
    """The variant whose run the report quotes: ``variant``, else
    ``stock`` if it expects the bug, else the first that does."""
    bugs = [v for v in scenario.variants if scenario.expects_bug(v)]
    if variant is None:
        if not bugs:
            raise exception.ScenarioError(
                '%s: no variant expects the bug (expect: bug); a report '
                'quotes a run that shows one' % scenario.path)
        return 'stock' if 'stock' in bugs else bugs[0]
    if variant not in scenario.variants:
        raise exception.ScenarioError('%s: no variant %r; it has %s' % (
            scenario.path, variant, ', '.join(scenario.variants)))
    if variant not in bugs:
        raise exception.ScenarioError(
            '%s: variant %s does not expect the bug (expect: %s); a report '
            'quotes a variant written expect: bug' % (
                scenario.path, variant,
                scenario.variants[variant].get('expect', 'ok')))
    return variant


def from_run_file(path, scenario, variant):
    """``(VariantReport, where)`` of a saved run (``scenario run -f
    json``) of ``scenario``; ScenarioError naming the file if it is not
    one, or of another scenario, or lacks the variant."""
    from faultdriver.scenario import rundoc
    doc = rundoc.load(path)
    if doc.get('scenario') != scenario.name:
        raise exception.ScenarioError(
            '%s: a run of scenario %r, not of %r' % (
                path, doc.get('scenario'), scenario.name))
    if variant not in doc['variants']:
        raise exception.ScenarioError(
            '%s: no run of variant %s; it has %s' % (
                path, variant, ', '.join(doc['variants'])))
    return doc['variants'][variant], path


def run_embedded(scenario, variant, mode):
    """``(VariantReport, where)`` of a run of the variant on the
    embedded tier, now (progress on stderr)."""
    from faultdriver.scenario import launch
    report = launch.run(scenario, [variant], mode, backend='embedded')
    return report[variant], 'a run made for this report on %s' % (
        time.strftime('%Y-%m-%d', time.gmtime()))


def paired(scenario, variant, report, where):
    """``[(ExpectationSpec, ExpectationResult, of the bug)]``: the
    run's expectation results (:mod:`faultdriver.scenario.runstate`)
    with the scenario's expectations they check, paired in the order
    the run checked them (:func:`faultdriver.scenario.expect.evaluate`);
    ScenarioError if the run checked other expectations (a
    run of another version of the scenario).

    An expectation is the bug's when it is one of the bug variant's own,
    or an invariant written ``broken: true`` (what the exporter marks
    FIXME)."""
    common = scenario.common_expectations()
    tagged = [(spec, bool(spec.args.get('broken')))
              for spec in common] + \
        [(spec, True) for spec in scenario.own_expectations(variant)]
    tagged.sort(key=lambda item: invariants.rank(item[0].kind))
    results = report.expectations or []
    kinds = ([s.kind for s, _bug in tagged], [r.kind for r in results])
    if kinds[0] != kinds[1]:
        raise exception.ScenarioError(
            '%s: variant %s checked %s, the scenario has %s: a run of '
            'another version of %s' % (where, variant, ', '.join(
                map(str, kinds[1])) or 'nothing', ', '.join(kinds[0]),
                scenario.path))
    return [(spec, result, bug)
            for (spec, bug), result in zip(tagged, results)]


def _value(actual):
    if isinstance(actual, dict):
        return '; '.join('%s: %s' % (k, _value(v)) for k, v in
                         actual.items()) or 'none'
    if isinstance(actual, list):
        return ', '.join(map(_value, actual)) or 'none'
    return str(actual)


def _wrap(text):
    return textwrap.fill(text, WIDTH, break_on_hyphens=False,
                         break_long_words=False)


def _item(text):
    return textwrap.fill(text, WIDTH, initial_indent='- ',
                         subsequent_indent='  ', break_on_hyphens=False,
                         break_long_words=False)


def _block(lines):
    return ['    ' + line if line else '' for line in lines]


def _relative(path, repository):
    path = os.path.abspath(path)
    root = os.path.abspath(repository)
    return os.path.relpath(path, root) if path.startswith(root + os.sep) \
        else path


def _scenario_argument(scenario, repository):
    """How ``faultdriver scenario run`` names it: a bundled name, else
    the file (relative to the checkout)."""
    bundled = model.bundled().get(scenario.name)
    if bundled and os.path.realpath(bundled) == os.path.realpath(
            scenario.path):
        return scenario.name
    return _relative(scenario.path, repository)


def _consumers(state):
    """Consumer uuid -> what it is (a server alias, a migration)."""
    names = {s.id: 'server %s' % alias for alias, s in state.servers.items()}
    names.update((m.uuid, 'migration %s of %s (%s)'
                  % (m.id, m.server, m.type)) for m in state.migrations)
    return names


def _state_lines(state):
    """The run's end state: what a Nova developer reads the bug from."""
    consumers = _consumers(state)
    out = ['Hosts:', '']
    for host, seen in state.hosts.items():
        out.append(_item('%s (service %s): pinned pCPUs %s, placement PCPU '
                         'used %s' % (host, seen.service, seen.pinned_cpus,
                                      seen.placement_pcpu)))
        for uuid, resources in sorted(
                (seen.allocations or {}).items(),
                key=lambda item: (consumers.get(item[0], '~'), item[0])):
            out.append(textwrap.fill(
                'allocation of %s, consumer %s: %s' % (
                    consumers.get(uuid, 'an unknown consumer'), uuid,
                    ', '.join('%s %s' % item
                              for item in sorted(resources.items()))),
                WIDTH, initial_indent='  - ', subsequent_indent='    ',
                break_on_hyphens=False))
    out += ['', 'Servers:', '']
    out += [_item('%s: %s on %s, task state %s, pinned pCPUs %s (%s)' % (
        alias, s.status, s.host, s.task_state, s.pinned_cpus, s.id))
        for alias, s in state.servers.items()]
    out += ['', 'Migrations:', '']
    out += [_item('%s #%s %s %s -> %s: %s (%s)' % (
        m.server, m.id, m.type, m.source_compute, m.dest_compute, m.status,
        m.uuid)) for m in state.migrations] or ['- none']
    return out


def _expected_actual(pairs):
    out = ['## Expected result', '']
    bug = [(spec, result) for spec, result, of_bug in pairs if of_bug]
    for spec, result in bug:
        invariant = invariants.get(spec.kind)
        if invariant is not None:
            text = invariant.description
            out.append(_item(text[0].upper() + text[1:] + '.'))
        else:
            out.append(_item('Not: %s.' % result.expectation))
    out += ['', '## Actual result', '']
    for spec, result in bug:
        text = result.expectation
        if text.startswith('BROKEN: '):
            text = '%s broken (%s)' % (spec.kind, text[len('BROKEN: '):])
        out.append(_item('%s: %s' % (text, _value(result.actual))))
    held = [result for _spec, result, of_bug in pairs if not of_bug]
    if held:
        out += ['', 'Held as on a correct Nova:', '']
        out += [_item('%s (%s)' % (r.expectation, _value(r.actual)))
                for r in held]
    return out


def _title(scenario, entry):
    if entry:
        return entry.title
    text = ' '.join(scenario.description.split())
    end = text.find('. ')
    return text if end < 0 else text[:end]


def _what_happens(scenario, entry):
    out = ['## What happens', '']
    if not entry:
        return out + [_wrap(' '.join(scenario.description.split())), '']
    if 'Code path' in entry.fields:
        out += [_wrap('In Nova: ' + entry.fields['Code path']), '']
    for paragraph in entry.happens:
        out += [_wrap(paragraph), '']
    return out


def _steps(scenario, variant, report, name, settings, commands,
           devstack_run):
    rules = scenario.data.get('rules', {})
    out = ['## Steps to reproduce', '',
           '### With faultdriver (the run quoted below)', '',
           _wrap('The scenario %s, variant %s, on faultdriver\'s %s:' % (
               name, variant, report_module.tier_description(report))),
           '']
    out += _block(['faultdriver scenario run %s --variant %s'
                   % (name, variant)])
    out += ['', 'Fault rules (faultdriver\'s rule syntax), by host:', '']
    out += [_item('%s: `%s`' % (host, text)) for host, texts in rules.items()
            for text in texts] or ['- none']
    out += ['', 'Steps, with what each did in the run:', '']
    details = {e.index: e for e in report.timeline}
    for index, step in enumerate(scenario.steps, 1):
        done = details.get(index)
        outcome = ' '.join(filter(None, (done.status, done.detail))) \
            if done else ''
        out.append(textwrap.fill(
            '%d. %s%s' % (index, step.describe().strip(),
                          ' -> %s' % outcome if outcome else ''),
            WIDTH, subsequent_indent='   ', break_on_hyphens=False))
    out += ['', 'The scenario file:', '']
    with open(scenario.path, encoding='utf-8') as stream:
        out += _block(stream.read().rstrip('\n').splitlines())
    label = ('run on devstack: see %s' % devstack_run if devstack_run
             else NOT_RUN)
    out += ['', '### On devstack (%s)' % label, '',
            _wrap('Derived from the steps above, one mapping per step kind '
                  '(`faultdriver export --report`).  Each compute node\'s '
                  '`local.conf` (the faultdriver devstack plugin; '
                  'FAULTDRIVER_GIT_URL: a git URL of faultdriver):'), '']
    for host, lines in settings.items():
        out += ['%s:' % host, ''] + _block(lines) + ['']
    out += ['Then, with admin credentials:', ''] + _block(commands)
    return out


def _regression_test(scenario, name, repository):
    out = ['## Regression test', '']
    try:
        module.render(scenario)
    except Unsupported as exc:
        return out + [_wrap('Not exportable as a Nova functional test yet: '
                            '%s' % exc), '']
    file_name = module.file_name(scenario)
    out += [_wrap('A Nova functional test in the shape of nova/tests/'
                  'functional/regressions (it imports nothing of '
                  'faultdriver): the stock form asserts what Nova does '
                  'today, the bug marked FIXME; `--fixed` asserts the '
                  'correct state (fails while the bug is there):'), '']
    out += _block(['faultdriver export %s -o %s' % (name, file_name),
                   'faultdriver export %s --fixed  # the fixed form' % name])
    folder = os.path.join(repository, REGRESSIONS)
    listed = shipped.listed(folder) if os.path.isfile(
        os.path.join(folder, 'exports.txt')) else []
    wanted = {scenario.name, os.path.realpath(scenario.path)}
    if any(entry in wanted or os.path.realpath(entry) in wanted
           for entry in listed):
        out += ['', 'Shipped: `%s/%s`.' % (REGRESSIONS, file_name)]
    return out + ['']


def _patch_subject(path):
    """The patch's Subject header (unfolded), or None."""
    subject = None
    with open(path, encoding='utf-8', errors='replace') as stream:
        for line in stream:
            if not line.strip():
                break
            if subject is not None and line[0] in ' \t':
                subject += ' ' + line.strip()
            elif subject is not None:
                break
            elif line.startswith('Subject:'):
                subject = line[len('Subject:'):].strip()
    if subject is None:
        return None
    return re.sub(r'^(\[PATCH[^]]*\]\s*)', '', subject)


def _candidate_fix(entry, name, repository):
    out = ['## Candidate fix', '']
    patches = sorted(glob.glob(os.path.join(
        repository, FIXES, '%s-*.patch' % entry.number))) if entry else []
    if not patches:
        return out + ['None yet.', '']
    for path in patches:
        subject = _patch_subject(path)
        relative = _relative(path, repository)
        out.append(_item('`%s`%s' % (relative, ': "%s"' % subject
                                     if subject else '')))
    out.append('')
    for paragraph in entry.fix:
        out += [_wrap(paragraph), '']
    out += ['Check it on the scenario (the stock variant no longer shows '
            'the bug):', '']
    out += _block(['faultdriver scenario run %s --nova-patch %s' % (
        name, _relative(path, repository)) for path in patches])
    return out + ['']


def compose(scenario, variant, run_file=None, mode='threading',
           repository='.', devstack_run=None):
    """The report's text, quoting the run saved in ``run_file``, else a
    run of ``variant`` on the embedded tier in ``mode`` made now.  A step
    with no devstack form is refused (Unsupported) before any run."""
    if devstack_run and not os.path.isfile(devstack_run):
        raise exception.ScenarioError(
            '--devstack-run %s: no such file (expected the record of a run '
            'of the devstack form)' % devstack_run)
    devstack.recipe(scenario)
    if run_file:
        found, where = from_run_file(run_file, scenario, variant)
    else:
        found, where = run_embedded(scenario, variant, mode)
    return write(scenario, variant, found, where, repository, devstack_run)


def write(scenario, variant, report, where, repository='.',
          devstack_run=None):
    """The report's text (Markdown that reads as plain text) from the
    VariantReport ``report`` of a run (``where``: where the run comes from)."""
    settings, commands = devstack.recipe(scenario)
    if report.verdict != variant_report.BUG_REPRODUCED:
        raise NotShown('%s: variant %s did not show the bug (verdict: %s%s)'
                       '; a report quotes a run that does' % (
                           where, variant, report.verdict,
                           ', step failed: %s' % report.step_failed
                           if report.step_failed else ''))
    pairs = paired(scenario, variant, report, where)
    number = module.finding_of(scenario.description)
    entry = finding(os.path.join(repository, FINDINGS), number) \
        if number else None
    name = _scenario_argument(scenario, repository)
    title = _title(scenario, entry)
    out = ['# %s' % title, '',
           '<!-- written by faultdriver export --report %s from %s; '
           'check it before filing -->' % (name, where if where.startswith(
               'a run') else _relative(where, repository)), '']
    if entry:
        out += ['faultdriver finding %s (doc/findings.rst).' % entry.number,
                '']
    out += _what_happens(scenario, entry)
    out += _steps(scenario, variant, report, name, settings, commands,
                  devstack_run)
    out += [''] + _expected_actual(pairs)
    out += ['', 'State at the end of the run:', '']
    out += _state_lines(report.state)
    out += ['', '## Environment', '',
            _item('Nova under test: %s' % novaundertest.describe(
                report.nova)),
            _item('faultdriver %s tier, %s mode; run verdict: %s' % (
                report.backend, report.mode, report.verdict)), '']
    if entry and entry.fields.get('Upstream'):
        out += ['## Upstream', '', _wrap(entry.fields['Upstream']), '']
    out += _regression_test(scenario, name, repository)
    out += _candidate_fix(entry, name, repository)
    return '\n'.join(out).rstrip('\n') + '\n'
