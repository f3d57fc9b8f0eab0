"""No vacuous ``log`` expectation, in any scenario (Nova's source is
read, nothing runs).

Invariants: a text the Nova under test never logs is refused when the
scenario loads, exit 2 naming the key and the closest text Nova has; a
text Nova's format strings make (values in its placeholders), a class
name (an exception in a traceback) and faultdriver's own lines are
accepted; a text a variant's ``nova-patches`` add is accepted for that
variant only (a common expectation must be logged by every variant's
Nova); ``logged-elsewhere: true`` is the opt-out for texts from other
programs.
"""

import pytest
import yaml

from faultdriver import exception
from faultdriver.novacompat import logtexts
from faultdriver.scenario import model

from tests.unit import badinput

ADDED = 'Frobnicated the stale claim of %s'
#: A change that adds a log line (parsed, not applied: loading reads it).
DIFF = """\
--- a/nova/compute/manager.py
+++ b/nova/compute/manager.py
@@ -1,3 +1,4 @@
 # Copyright
+LOG.info('%s', instance.uuid)
 #
 # All Rights Reserved.
""" % ADDED


def scenario(tmp_path, common=(), stock=(), patched=()):
    (tmp_path / 'frob.diff').write_text(DIFF)
    data = {
        'name': 'texts', 'description': 'log texts',
        'variants': {
            'stock': {'expectations': [{'log': e} for e in stock]},
            'patched': {'nova-patches': ['frob.diff'],
                        'expectations': [{'log': e} for e in patched]}},
        'expectations': [{'log': e} for e in common],
        'steps': [{'boot': {'server': 's1', 'host': 'src'}}]}
    path = tmp_path / 'texts.yaml'
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return str(path)


def refusal(path):
    with pytest.raises(exception.ScenarioError) as caught:
        model.load(path)
    return str(caught.value)


def test_a_misspelt_text_is_refused_with_the_closest_one(tmp_path):
    path = scenario(tmp_path, common=[{'text': 'CPUPinningInvaild',
                                       'count': 0}])
    message = refusal(path)
    assert message.startswith(
        "%s: expectations[0].log.text: 'CPUPinningInvaild' is logged by "
        "neither the Nova under test (nova " % path)
    assert "did you mean 'CPUPinningInvalid'?" in message
    assert '"logged-elsewhere: true"' in message


def test_the_command_line_says_it_with_exit_2(tmp_path, capsys):
    path = scenario(tmp_path, stock=[{'text': 'Migraton status is error',
                                      'count': 0}])
    code, out, err = badinput.cli(capsys, 'scenario', 'show', path)
    assert code == 2 and out == ''
    assert ('variants.stock.expectations[0].log.text: '
            "'Migraton status is error'") in err
    assert "did you mean 'Migration status is error'? A text" in err


@pytest.mark.parametrize('text', [
    'Migration status is error',            # a format string, its value
    'Error updating resources for node dest',
    'CPUPinningInvalid',                    # an exception's class name
    'Instance failed to spawn',
    'not applying the migration context',   # faultdriver's own line
])
def test_texts_nova_or_faultdriver_log_are_accepted(tmp_path, text):
    model.load(scenario(tmp_path, common=[{'text': text, 'count': 0}]))


def test_a_text_a_variants_change_adds_is_its_own(tmp_path):
    added = 'Frobnicated the stale claim of'
    model.load(scenario(tmp_path, patched=[{'text': added, 'min': 1}]))
    message = refusal(scenario(tmp_path, stock=[{'text': added,
                                                 'count': 0}]))
    assert 'variants.stock.expectations[0].log.text' in message
    # Common: the stock variant's Nova would never log it.
    message = refusal(scenario(tmp_path, common=[{'text': added,
                                                  'count': 0}]))
    assert 'expectations[0].log.text' in message
    assert '(nova ' in message and 'frob.diff' not in message


def test_logged_elsewhere_is_the_opt_out(tmp_path):
    model.load(scenario(tmp_path, common=[{
        'text': 'AMQP server on rabbit is unreachable', 'count': 0,
        'logged-elsewhere': True}]))
    refusal(scenario(tmp_path, common=[{
        'text': 'AMQP server on rabbit is unreachable', 'count': 0,
        'logged-elsewhere': False}]))


@pytest.mark.parametrize('text, fmt, logged', [
    ('Migration status is error', 'Migration status is %s', True),
    ('status is error', 'Migration status is %s', True),
    ('node dest failed: boom', 'node %(n)s failed: %(e)s', True),
    ('s1 moved to dest', '%s moved to {host}', True),
    ('Migraton status is error', 'Migration status is %s', False),
    # Mostly a placeholder's value: proves nothing.
    ('anything at all: x', '%s: %s', False),
    # Past the end of the line.
    ('Status of s1 is ok, says Nova', 'Status of %s is ok', False),
])
def test_format_strings(text, fmt, logged):
    assert logtexts.logs(text, {fmt}) is logged
