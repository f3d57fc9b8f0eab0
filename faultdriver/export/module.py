"""The exported module around the steps and expectations: Nova's licence
header, the docstrings that state the bug, the imports in Nova's order,
the class on Nova's libvirt functional base with the scenario's hosts,
CPU topology and flavors, and the helpers the test uses."""

import re
import textwrap

from faultdriver import export
from faultdriver.export import expectations
from faultdriver.export import faults
from faultdriver.export import helpers
from faultdriver.export import novafixture
from faultdriver.export import steps
from faultdriver.export import Unsupported
from faultdriver.export import writer as writer_module
from faultdriver.scenario import provisions
from faultdriver.scenario import statuses

LICENCE = '''\
# Licensed under the Apache License, Version 2.0 (the "License"); you may
# not use this file except in compliance with the License. You may obtain
# a copy of the License at
#
#      http://www.apache.org/licenses/LICENSE-2.0
#
# Unless required by applicable law or agreed to in writing, software
# distributed under the License is distributed on an "AS IS" BASIS, WITHOUT
# WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied. See the
# License for the specific language governing permissions and limitations
# under the License.
'''

#: Import key -> (group, line): group 0 the standard library, 1 other
#: libraries, 2 Nova, as Nova's modules group them; sorted within.
IMPORTS = {
    'logging': (0, 'import logging'),
    'threading': (0, 'import threading'),
    'time': (0, 'import time'),
    'unittest.mock': (0, 'from unittest import mock'),
    'urllib.parse': (0, 'import urllib.parse'),
    'fixtures': (1, 'import fixtures'),
    'oslo_messaging': (1, 'import oslo_messaging as messaging'),
    'nova.compute.rpcapi': (2, 'from nova.compute import rpcapi as '
                               'compute_rpcapi'),
    'nova.conf': (2, 'import nova.conf'),
    'nova.context': (2, 'from nova import context as nova_context'),
    'nova.exception': (2, 'from nova import exception'),
    'nova.objects': (2, 'from nova import objects'),
    'nova.test': (2, 'from nova import test'),
    'nova.tests.fixtures': (2, 'from nova.tests import fixtures as '
                               'nova_fixtures'),
    'compute_fault': (2, novafixture.IMPORT),
    'fakelibvirt': (2, 'from nova.tests.fixtures import libvirt as '
                       'fakelibvirt'),
    'integrated_helpers': (2, 'from nova.tests.functional import '
                              'integrated_helpers'),
    'api_client': (2, 'from nova.tests.functional.api import client'),
    'base': (2, 'from nova.tests.functional.libvirt import base'),
}
#: RPC timeouts of the exported test (seconds): a call to a dead compute
#: times out after these.  Long enough for a live compute of a loaded
#: machine, short enough that a test waits seconds for a dead one.
RPC_TIMEOUT = 3
LONG_RPC_TIMEOUT = 6


def render(scenario, variant=None, fixed=False, bug=None, run=None):
    """The module's text; ``bug``: the Launchpad bug it reproduces (the
    module and class are then named as Nova names them); ``run``: a run
    of the variant (its VariantReport: ``scenario run -f json``'s
    ``variants[V]``), whose values the bug's assertions state exactly."""
    variant = _variant(scenario, variant)
    for key, needed in provisions.topology_needs(scenario):
        why = export.lacking(needed)
        if why:
            raise Unsupported('topology `%s`' % key, why)
    writer = writer_module.Writer(scenario, variant, fixed)
    writer.bug = bug
    for result in (run.expectations or ()) if run is not None else ():
        if result.kind:
            writer.found.setdefault(result.kind, result.actual)
    writer.finding = finding_of(scenario.description)
    writer.need('fixtures', 'fakelibvirt', 'integrated_helpers', 'base')
    _flavors(writer)
    writer.asserts = {e.kind for e, _ in expectations.asserted_items(
        writer, scenario.common_expectations(),
        scenario.own_expectations(variant))}
    for host, texts in scenario.data.get('rules', {}).items():
        if host == '*':
            raise Unsupported('rules `*`', 'a rule for every host has no '
                              'one service to patch; give each host its '
                              'rules')
        for text in texts:
            faults.install(writer, host, text, 'rules `%s`' % host,
                           at_start=True)
    writer.setup, writer.lines = writer.lines, []
    for index, step in enumerate(scenario.steps, 1):
        steps.write(writer, index, step)
    expectations.write(writer, scenario.common_expectations(),
                       scenario.own_expectations(variant))
    if not writer.lines:
        raise Unsupported('scenario %s' % scenario.name, 'no steps')
    return _text(writer)


def chosen_variant(scenario, variant=None):
    """The variant an export asserts (``variant``, checked, or the
    default)."""
    return _variant(scenario, variant)


def _variant(scenario, variant):
    if variant is None:
        bugs = [v for v in scenario.variants if scenario.expects_bug(v)]
        variant = 'stock' if 'stock' in scenario.variants else (
            bugs[0] if bugs else next(iter(scenario.variants)))
    if variant not in scenario.variants:
        raise Unsupported('--variant %s' % variant, 'no such variant; '
                          'the scenario has %s'
                          % ', '.join(scenario.variants))
    data = scenario.variants[variant]
    for key in ('patches', 'nova-patches', 'nova-tree'):
        if data.get(key):
            raise Unsupported('variant %s' % variant, '%s %s change the '
                              'Nova the test runs on; export the stock '
                              'variant and run it on the changed Nova'
                              % (key, data[key]))
    return variant


def finding_of(description):
    """The finding a description names first (``F6``), or None."""
    found = re.search(r'\bF\d+\b', description)
    return found.group(0) if found else None


def _flavors(writer):
    for name in writer.scenario.data.get('flavors', {}):
        writer.flavors[name] = 'self.flavors[%r]' % name


# -- text --------------------------------------------------------------------

#: A sweep reproducer's name cut to 64 characters ends in a hash of its
#: case (faultdriver.sweep.cases.scenario_name): not a name to read.
HASHED = re.compile(r'-[0-9a-f]{8}$')
#: ``def test_...(self):`` in a class fits 79 columns with this many.
METHOD_MAX = 79 - len('    def (self):')


def readable(scenario):
    """The scenario's name, or where it ends in a hash (a long sweep
    reproducer's), its one rule's point, phase, action and host."""
    name = scenario.name
    rules = [(host, text) for host, texts in
             scenario.data.get('rules', {}).items() for text in texts]
    if HASHED.search(name) and rules:
        host, text = rules[0]
        point, _, chain = text.partition(':')
        action = re.sub(r'\(.*', '', chain.split('->')[-1]).strip()
        name = '%s %s on %s' % (point.strip(), action.split('*')[-1],
                                host)
    return re.sub(r'[^a-z0-9]+', '_', name.lower()).strip('_')


def class_name(scenario, bug=None):
    if bug:
        return 'TestBug%d' % bug
    return 'Test' + ''.join(part.capitalize()
                            for part in readable(scenario).split('_'))


def method_name(scenario):
    words = readable(scenario).split('_')
    name = 'test_' + '_'.join(words)
    while len(name) > METHOD_MAX and len(words) > 1:
        words.pop()
        name = 'test_' + '_'.join(words)
    return name


def file_name(scenario, bug=None):
    if bug:
        return 'test_bug_%d.py' % bug
    return 'test_%s.py' % readable(scenario)


def commit_message(scenario, bug=None, fixture=False):
    """The commit message Nova expects of a reproducer: "Add functional
    reproducer for bug N", what the test shows, ``Related-Bug: #N``;
    ``fixture``: the test imports the proposed fixture, which the same
    change adds (said in the body)."""
    subject = 'Add functional reproducer for %s' % (
        'bug %d' % bug if bug else readable(scenario).replace('_', ' '))
    if len(subject) > 72:
        subject = subject[:72].rsplit(' ', 1)[0]
    first = ' '.join(scenario.description.split())
    body = [textwrap.fill(first, 72, break_long_words=False,
                          break_on_hyphens=False),
            textwrap.fill(
                'The test asserts what Nova does today, the assertions of '
                'the bug marked FIXME; the fix flips them.', 72)]
    if fixture:
        body.append(textwrap.fill(
            'It adds %s, a fixture that makes a compute service crash, '
            'raise or run its periodic at the N-th call of a driver or '
            'resource tracker method and restarts a crashed one: Nova\'s '
            'functional tests can stop a compute between operations but '
            'not kill one in the middle of one.' % novafixture.NOVA_PATH,
            72, break_long_words=False, break_on_hyphens=False))
    trailer = ('Related-Bug: #%d' % bug if bug else
               'Related-Bug: #NNNNNNN (file the bug, then export with '
               '--bug N)')
    return '%s\n\n%s\n\n%s\n' % (subject, '\n\n'.join(body), trailer)


def _text(writer):
    kinds = {step.kind for step in writer.scenario.steps}
    if 'live-migrate' in kinds or 'moves-again' in writer.asserts:
        writer.use('migrate_stub')
    used = helpers.closure(sorted(writer.helpers))
    for name in used:
        writer.need(*helpers.HELPERS[name].imports)
    uses_conf = any(name in helpers.CONF_USERS for name in used)
    uses_terminal = any(name in helpers.TERMINAL_USERS for name in used)
    if uses_conf:
        writer.need('nova.conf')
    body = _class(writer, used)
    if not re.search(r'(?<![\w.])fixtures\.', body):
        # The fixture holds what used it (a fault's patch).
        writer.imports.discard('fixtures')
    parts = [LICENCE, '\n', _imports(writer)]
    constants = []
    if uses_conf:
        constants.append('CONF = nova.conf.CONF')
    if uses_terminal:
        constants.append('#: Migration statuses Nova never leaves by '
                         'itself.\nTERMINAL = (\n%s)' % textwrap.fill(
                             ', '.join(repr(s) for s in _terminal()), 75,
                             initial_indent='    ',
                             subsequent_indent='    '))
    if constants:
        parts.append('\n' + '\n'.join(constants) + '\n')
    parts.append('\n\n' + body)
    return ''.join(parts)


def _terminal():
    return statuses.TERMINAL


def _docstring(writer):
    """The test class's docstring: the bug, as Nova's regression tests
    say it (the module has none of its own)."""
    scenario = writer.scenario
    variant = scenario.variants[writer.variant]
    title = 'Regression test for %s' % (
        'finding %s of faultdriver (scenario %s)' % (writer.finding,
                                                     scenario.name)
        if writer.finding else 'faultdriver scenario %s' % scenario.name)
    paragraphs = [title + '.', scenario.description]
    if variant.get('description'):
        paragraphs.append('Variant %s: %s' % (writer.variant,
                                              variant['description']))
    # The stock form's FIXME comments say what the bug is, and its
    # commit message what the proposed fixture is: no paragraph on
    # either (they spoke of faultdriver, which a Nova tree has not).
    if scenario.expects_bug(writer.variant) and writer.fixed:
        paragraphs.append(
            'This form asserts the correct state: it fails while the bug '
            'is there.')
    return '\n\n'.join(paragraphs)


def _imports(writer):
    groups = {}
    for key in writer.imports:
        group, line = IMPORTS[key]
        groups.setdefault(group, []).append(line)
    return '\n'.join('\n'.join(sorted(lines, key=_import_key)) + '\n'
                     for _group, lines in sorted(groups.items()))


def _import_key(line):
    """hacking's H306 order: the module path, lower case."""
    words = line.split()
    module = words[1] if words[0] == 'import' else '%s.%s' % (words[1],
                                                              words[3])
    return module.lower()


def _class(writer, used):
    scenario = writer.scenario
    lines = ['class %s(' % class_name(scenario, writer.bug),
             '        base.ServersTestBase,'
             ' integrated_helpers.InstanceHelperMixin):']
    lines.append(_class_docstring(_docstring(writer)))
    lines += ['',
              "    ADMIN_API = True",
              "    microversion = 'latest'",
              "    ADDITIONAL_FILTERS = ['NUMATopologyFilter']",
              '    # Casts stay casts, as in a cloud: nothing waits for one.',
              '    CAST_AS_CALL = False',
              '']
    body = _unused_names_dropped(writer)
    while body and not body[0]:
        body = body[1:]
    methods = []
    for name in used:
        if helpers.HELPERS[name].methods:
            methods += ['', helpers.HELPERS[name].source.rstrip('\n')]
    lines += _setup(writer, used, '\n'.join(body + methods))
    lines += ['', '    def %s(self):' % method_name(scenario)]
    lines += body
    lines += methods
    return '\n'.join(lines) + '\n'


def _unused_names_dropped(writer):
    """The body, a server that no later line names booted without a
    name (flake8's F841)."""
    body = list(writer.lines)
    text = '\n'.join(line for line in body
                     if not line.lstrip().startswith('#'))
    for name in writer.servers.values():
        if len(re.findall(r'\b%s\b' % re.escape(name), text)) == 1:
            body = [re.sub(r'^(\s*)%s = ' % re.escape(name), r'\1', line)
                    for line in body]
    return body


def _class_docstring(text):
    out = []
    for index, paragraph in enumerate(re.split(r'\n\s*\n', text.strip())):
        out.append(textwrap.fill(
            ' '.join(paragraph.split()), 79, subsequent_indent='    ',
            initial_indent='    """' if index == 0 else '    ',
            break_long_words=False, break_on_hyphens=False))
    return '\n\n'.join(out) + '\n    """'


def _setup(writer, used, rest):
    """setUp's lines; ``rest``: the text of the methods after it (what
    of setUp's state they read)."""
    scenario = writer.scenario
    shapes = scenario.host_shapes()
    sets = {tuple(sorted(shape.cpu_sets().items()))
            for shape in shapes.values()}
    if len(sets) > 1:
        raise Unsupported('topology', 'the hosts have different CPU sets; '
                          'Nova\'s tests set [compute] options for every '
                          'host of the test at once')
    lines = ['    def setUp(self):', '        super().setUp()']
    if 'faults' in used:
        # Before the computes start: it shortens the RPC timeouts and
        # the service down time (a dead compute's callers give up and
        # Nova sees it down within seconds, as faultdriver's embedded
        # Nova does).
        lines += ['        self.faults = self.useFixture(',
                  '            compute_fault.ComputeFaultFixture(self))']
    elif writer.holds or 'watch_rpc' in used:
        lines += ['        # Calls to a held compute time out in seconds.',
                  '        self.flags(rpc_response_timeout=%d, '
                  'long_rpc_timeout=%d)' % (RPC_TIMEOUT, LONG_RPC_TIMEOUT)]
    if scenario.shelved_offload_time is not None:
        lines.append('        self.flags(shelved_offload_time=%d)'
                     % scenario.shelved_offload_time)
    first = next(iter(shapes.values()))
    if first.cpu_sets():
        lines += ['        self.flags(',
                  '            %s,' % ', '.join(
                      '%s=%r' % (option, getattr(first, option)) for option
                      in ('cpu_dedicated_set', 'cpu_shared_set')),
                  "            group='compute')"]
        lines.append('        self.flags(vcpu_pin_set=None)')
    if 'migrate_stub' in used:
        lines += [
            '        self.useFixture(fixtures.MonkeyPatch(',
            "            'nova.tests.fixtures.libvirt.Domain.migrateToURI3',",
            '            self._migrate_stub))']
    if {'migrate', 'resize'} & {step.kind for step in scenario.steps}:
        lines += [
            "        # fakelibvirt cannot copy disks (as in Nova's resize "
            "tests).",
            '        self.useFixture(fixtures.MockPatch(',
            "            'nova.virt.libvirt.driver.LibvirtDriver.'",
            "            'migrate_disk_and_power_off', return_value='{}'))"]
    if 'self.compute_log' in rest:
        writer.need('logging')
        lines += [
            '        self.compute_log = self.useFixture(fixtures.FakeLogger(',
            "            name='nova.compute', level=logging.DEBUG))"]
    if 'self.ctxt' in rest:
        writer.need('nova.context')
        lines.append('        self.ctxt = nova_context.get_admin_context()')
    if 'watch_rpc' in used:
        lines.append('        self.gave_up = {}')
    lines += _hosts(writer, shapes)
    if scenario.dedicated_cpus:
        lines += ['        self.flavor_id = self._create_flavor(',
                  "            vcpu=2, extra_spec={'hw:cpu_policy': "
                  "'dedicated'})"]
    else:
        lines.append("        self.flavor_id = self.api.get_flavors()[0]"
                     "['id']")
    flavors = scenario.data.get('flavors', {})
    if flavors:
        lines.append('        self.flavors = {')
        for name, spec in flavors.items():
            specs = spec.get('extra_specs')
            lines.append('            %r: self._create_flavor(' % name)
            lines.append('                vcpu=%d%s),' % (
                spec['vcpus'], ', extra_spec=%r' % (specs,) if specs else ''))
        lines.append('        }')
    for method in writer.watched:
        lines.append('        self._watch_rpc(%r)' % method)
    lines += writer.setup
    for line in '\n'.join(lines).split('\n'):
        if len(line) > 79:
            raise Unsupported('setUp', 'line too long: %s' % line.strip())
    return lines


def _hosts(writer, shapes):
    """Start the computes, hosts of one shape in one loop."""
    lines = []
    by_shape = {}
    for host, shape in shapes.items():
        by_shape.setdefault(shape, []).append(host)
    for shape, hosts in by_shape.items():
        info = ('cpu_nodes=%d, cpu_sockets=%d, cpu_cores=%d, cpu_threads=%d'
                % (shape.cpu_nodes, shape.cpu_sockets, shape.cpu_cores,
                   shape.cpu_threads))
        if shape.memory_mb is not None:
            info += ',\n%skB_mem=%d' % (' ' * 16, shape.memory_mb * 1024)
        if len(hosts) == 1:
            lines.append('        self.start_compute(%r, host_info=('
                         % hosts[0])
            lines.append('            fakelibvirt.HostInfo(')
            lines.append('                %s)))' % info)
            continue
        lines.append('        for hostname in %r:' % (tuple(hosts),))
        lines.append('            self.start_compute(hostname, '
                     'host_info=fakelibvirt.HostInfo(')
        lines.append('                %s))' % info)
    return lines
