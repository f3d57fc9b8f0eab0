"""Bad input, surface 3: scenario files (``scenario run|show FILE``).

Invariant: a scenario file is read within fixed bounds before any work
(size, aliases, nesting, expansion, CPU numbers), and whatever decides a
verdict can fail (points and actions from the catalogues the rules use,
coherent bounds, finite numbers, one value per key, names that are
names); anything else is exit 2 with one short line naming the file and
the key or line, and nothing is written anywhere (a variant's name never
becomes a path outside the run's temporary directory).
"""

import copy
import os

import hypothesis
from hypothesis import strategies as st
import pytest
import yaml

from faultdriver import exception
from faultdriver.scenario import bounded_yaml
from faultdriver.scenario import model
from tests.unit import badinput

VALID = {
    'name': 'tiny',
    'description': 'A server boots and live-migrates.',
    'topology': {'hosts': ['src', 'dest'], 'pinned': True},
    'flavors': {'small': {'vcpus': 1}},
    'variants': {'stock': {}},
    'steps': [{'boot': {'server': 's1', 'host': 'src'}},
              {'live-migrate': {'server': 's1', 'host': 'dest'}},
              {'wait-migration': {'server': 's1', 'status': 'completed'}},
              {'wait-point': {'host': 'dest',
                              'point': 'pre_live_migration'}}],
    'expectations': [{'server': {'server': 's1', 'host': 'dest'}},
                     {'faults': {'host': 'dest', 'count': 0}}],
}


def changed(path, value):
    data = copy.deepcopy(VALID)
    *parents, last = path
    node = data
    for key in parents:
        node = node[key]
    node[last] = value
    return data


def refused(data, where=''):
    with pytest.raises(exception.ScenarioError) as caught:
        model.validate(data, 'bad.yaml')
    message = str(caught.value)
    assert message.startswith('bad.yaml: ' + where), message
    assert len(message) < 500, message[:300]
    return message


# (key path, value, message after "bad.yaml: ")
REFUSED = [
    # Names that become paths, or would not match what they name.
    (['variants'], {'../../x': {}}, "variants: '../../x' does not match"),
    (['variants'], {'/abs/x': {}}, "variants: '/abs/x' does not match"),
    (['variants'], {'stock\n': {}}, "variants: 'stock\\n' does not match"),
    (['variants'], {'a' * 41: {}}, 'variants: '),
    (['name'], 'tiny\n', "name: 'tiny\\n' does not match"),
    (['topology', 'hosts'], ['src', 'dest\n'],
     "topology.hosts[1]: 'dest\\n' does not match"),
    (['steps', 0, 'boot', 'server'], 's1\n',
     "steps[0].boot.server: 's1\\n' does not match"),
    (['steps', 0, 'boot', 'server'], '../s1', 'steps[0].boot.server: '),
    (['flavors'], {'../f': {'vcpus': 1}}, "flavors: '../f' does not match"),
    # Expectations and waits that could never fail or never end right.
    (['expectations', 1], {'faults': {'point': 'pre_live_migrate',
                                      'count': 0}},
     "expectations[1].faults.point: unknown point 'pre_live_migrate'; did "
     "you mean 'pre_live_migration'? (faultdriver points lists them); it "
     'would never match'),
    (['expectations', 1], {'faults': {'action': 'crahs', 'count': 0}},
     "expectations[1].faults.action: unknown action 'crahs'; did you mean "
     "'crash'? (faultdriver actions lists them)"),
    (['steps', 3], {'wait-point': {'host': 'dest', 'point': 'spwan'}},
     "steps[3].wait-point.point: unknown point 'spwan'"),
    (['expectations', 1], {'faults': {'min': 5, 'max': 1}},
     'expectations[1].faults: min 5 is more than max 1: no count meets '
     'both'),
    (['expectations', 1], {'log': {'text': 'x', 'count': 3, 'max': 1}},
     'expectations[1].log: count 3 is outside min/max'),
    (['expectations', 1], {'log': {'text': ''}}, 'expectations[1].log.text'),
    (['expectations', 0], {'server': {'server': 's1'}},
     'expectations[0].server: '),
    (['expectations', 1], {'servers-share-pcpus': {
        'servers': ['s1', 's1'], 'count': 0}},
     'expectations[1].servers-share-pcpus.servers: '),
    # Numbers: finite, integral where counted, bounded.
    (['steps', 2, 'wait-migration', 'timeout'], float('nan'),
     'steps[2].wait-migration.timeout: '),
    (['steps', 2, 'wait-migration', 'timeout'], float('inf'),
     'steps[2].wait-migration.timeout: '),
    (['steps', 2, 'wait-migration', 'timeout'], 86401,
     'steps[2].wait-migration.timeout: 86401 is greater than the maximum'),
    (['steps', 3], {'sleep': {'seconds': 3601}}, 'steps[3].sleep.seconds: '),
    (['steps', 2, 'wait-migration', 'index'], 10 ** 30,
     'steps[2].wait-migration.index: '),
    (['expectations', 1], {'faults': {'count': 10 ** 30}},
     'expectations[1].faults.count: '),
    (['topology', 'defaults'], {'cpu_nodes': 2.0},
     "topology.defaults.cpu_nodes: 2.0 is not of type 'integer'"),
    (['topology', 'defaults'], {'memory_mb': 10 ** 12},
     'topology.defaults.memory_mb: '),
    (['flavors', 'small', 'vcpus'], 10 ** 6, 'flavors.small.vcpus: '),
    (['steps'], [{'periodic': {'host': 'src'}}] * 1001, 'steps: '),
    # CPU sets: refused before Nova builds them.
    (['topology', 'defaults'], {'cpu_dedicated_set': '0-999999999'},
     "topology.defaults.cpu_dedicated_set: '0-999999999' names CPU "
     '999999999, which host src does not have: its CPUs are 0-3'),
    (['topology', 'defaults'], {'cpu_dedicated_set': '0-1024'},
     "names CPU 1024, which host src does not have"),
    (['topology', 'defaults'], {'cpu_dedicated_set': '0-\u0663'},
     "topology.defaults.cpu_dedicated_set: '0-\u0663' has non-ASCII "
     'digits'),
    (['topology', 'defaults'], {'cpu_dedicated_set': '0-3,' * 100},
     'topology.defaults.cpu_dedicated_set: '),
]


@pytest.mark.parametrize('path, value, problem', REFUSED,
                         ids=[str(i) for i in range(len(REFUSED))])
def test_refused_naming_the_key(path, value, problem):
    assert problem in refused(changed(path, value))


def test_the_valid_base_is_valid():
    scenario = model.validate(copy.deepcopy(VALID), 'ok.yaml')
    assert scenario.variants == {'stock': {}}


# -- the file itself: bounds before any work -------------------------------

BOMB = ('name: tiny\ndescription: x\na: &a ["lol","lol","lol","lol","lol",'
        '"lol","lol","lol","lol"]\n' + ''.join(
            '%s: &%s [%s]\n' % (n, n, ','.join(['*' + p] * 9))
            for p, n in zip('abcdefgh', 'bcdefghi')))

# (file content, message after "<file>: ")
FILES = [
    (BOMB, 'expands to more than 100000 values (through aliases)'),
    ('a: &a [*a]\n', 'line 1: an alias refers to a value that contains it'),
    ('a: &a "%s"\nb: [%s]\n' % ('x' * 100000, ', '.join(['*a'] * 99)),
     'expands to more than 100000 values (through aliases)'),
    ('x: &x 1\n' + ''.join('k%d: *x\n' % i for i in range(101)),
     'line 102: more than 100 aliases'),
    ('x: ' + '[' * 200 + ']' * 200 + '\n', 'line 1: nested deeper than 40'),
    ('x: ' + '[' * 100000 + '\n', 'nested deeper than 40'),
    ('name: tiny\nname: other\n', "line 2: key 'name' given twice in one "
     'mapping (first on line 1)'),
    ('steps:\n  - boot: {server: s1, server: s2}\n',
     "line 2: key 'server' given twice"),
    ('1: x\n', 'line 1: key 1 is not a string; quote it'),
    ('yes: x\n', 'line 1: key yes is not a string'),
    ('? [a, b]\n: x\n', 'line 1: key a sequence is not a string'),
    ('x: %s\n' % ('9' * 5000), 'line 1: integer 9999999999999999999999999'
     '999999999999999... has more than 18 digits'),
    ('x: .nan\n', 'line 1: .nan is not a finite number'),
    ('x: -.inf\n', 'line 1: -.inf is not a finite number'),
    (b'name: \xff\xfe\n', 'not UTF-8 text (byte 6)'),
    (b'\x00\x01binary', 'not valid YAML'),
    ('x: !!python/object/apply:os.system [echo hi]\n', 'not valid YAML'),
    ('- just\n- a list\n', "(top level): ['just', 'a list'] is not of type "
     "'object'"),
    ('', "(top level): None is not of type 'object'"),
    ('a: 1\n---\nb: 2\n', 'not valid YAML'),
]


@pytest.mark.parametrize('content, problem', FILES,
                         ids=[str(i) for i in range(len(FILES))])
def test_file_refused_naming_the_file(tmp_path, content, problem):
    path = tmp_path / 's.yaml'
    if isinstance(content, str):
        content = content.encode('utf-8')
    path.write_bytes(content)
    with pytest.raises(exception.ScenarioError) as caught:
        model.load(str(path))
    message = str(caught.value)
    assert message.startswith('%s: ' % path)
    assert problem in message
    assert len(message) < 500, message[:300]


def test_a_large_file_is_refused_unread(tmp_path):
    path = tmp_path / 'big.yaml'
    with open(path, 'wb') as stream:
        stream.write(b'name: x\ndescription: "')
        stream.truncate(50 * 1024 * 1024)     # sparse: cheap to make
    with pytest.raises(exception.ScenarioError) as caught:
        model.load(str(path))
    assert str(caught.value) == '%s: larger than %d bytes' % (
        path, bounded_yaml.MAX_BYTES)


@pytest.mark.parametrize('make, problem', [
    (lambda tmp: tmp, 'not a regular file'),
    (lambda tmp: os.mkfifo(tmp / 'f.yaml') or tmp / 'f.yaml',
     'not a regular file'),
])
def test_not_a_file(tmp_path, make, problem):
    path = make(tmp_path)
    with pytest.raises(exception.ScenarioError) as caught:
        model.load(str(path))
    assert str(caught.value) == '%s: %s' % (path, problem)


def test_merge_keys_still_work():
    assert bounded_yaml.load_bytes(b'a: &x {k: 1}\nb: {<<: *x, k: 2}\n') == \
        {'a': {'k': 1}, 'b': {'k': 2}}


# -- through the command line: exit 2, nothing written ---------------------

@pytest.mark.parametrize('variant', ['../../x', '/abs/x', 'x/../../y'])
def test_scenario_run_refuses_a_variant_name_that_is_a_path(
        capsys, tmp_path, variant, monkeypatch):
    work = tmp_path / 'a' / 'b'
    work.mkdir(parents=True)
    data = changed(['variants'], {variant: {}})
    path = work / 's.yaml'
    path.write_text(yaml.safe_dump(data))
    monkeypatch.chdir(work)
    message = badinput.refused(capsys, 'scenario', 'run', path,
                               root=tmp_path)
    assert message.startswith('%s: variants: %r does not match' % (
        path, variant))


@pytest.mark.parametrize('command', ['run', 'show'])
def test_scenario_commands_refuse_an_alias_bomb(capsys, tmp_path, command):
    path = tmp_path / 'bomb.yaml'
    path.write_text(BOMB)
    message = badinput.refused(capsys, 'scenario', command, path,
                               root=tmp_path)
    assert message == ('%s: expands to more than 100000 values (through '
                       'aliases)' % path)


# -- property: any scenario document is a Scenario or a ScenarioError -------

_scalars = st.one_of(
    st.none(), st.booleans(), st.integers(-10 ** 30, 10 ** 30),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=12),
    st.sampled_from(['src', 'dest', 's1', 'stock', 'pre_live_migration',
                     'crash', '0-3', '0-999999999', '../x', 'x\n', '']))
_values = st.recursive(
    _scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4),
        st.dictionaries(st.text(max_size=10) | st.sampled_from(
            ['server', 'host', 'count', 'min', 'max', 'point', 'timeout']),
            inner, max_size=4)),
    max_leaves=12)


def _paths(data, prefix=()):
    yield prefix
    if isinstance(data, dict):
        for key, value in data.items():
            yield from _paths(value, prefix + (key,))
    elif isinstance(data, list):
        for index, value in enumerate(data):
            yield from _paths(value, prefix + (index,))


_PATHS = [p for p in _paths(VALID) if p]


@hypothesis.settings(max_examples=150, deadline=None, database=None,
                     derandomize=True)
@hypothesis.given(st.lists(st.tuples(st.sampled_from(_PATHS), _values),
                           min_size=1, max_size=3))
def test_any_change_is_valid_or_refused_by_name(changes):
    data = copy.deepcopy(VALID)
    for path, value in changes:
        node = data
        try:
            for key in path[:-1]:
                node = node[key]
            node[path[-1]] = value
        except (KeyError, IndexError, TypeError):
            continue          # an earlier change removed this path
    try:
        scenario = model.validate(data, 'p.yaml')
    except exception.ScenarioError as exc:
        assert str(exc).startswith('p.yaml: ')
        assert len(str(exc)) < 500
    else:
        assert set(scenario.variants) <= set(data['variants'])
        for name in scenario.variants:
            assert '/' not in name and '..' not in name


@hypothesis.settings(max_examples=150, deadline=None, database=None,
                     derandomize=True)
@hypothesis.given(st.one_of(
    st.binary(max_size=200),
    st.text(alphabet='ab:- &*[]{}\n\t?!<>\'"0.', max_size=120)))
def test_any_bytes_are_a_scenario_or_refused(tmp_path_factory, content):
    path = tmp_path_factory.mktemp('p') / 's.yaml'
    path.write_bytes(content if isinstance(content, bytes)
                     else content.encode('utf-8'))
    try:
        model.load(str(path))
    except exception.ScenarioError as exc:
        assert str(exc).startswith('%s: ' % path)
        assert len(str(exc)) < 500
