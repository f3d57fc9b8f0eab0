"""How a sweep's case or finding is named in words: its step and what
the process tier's replay said of it (the text report, the HTML, the
causes and the A/B comparison all name them alike)."""

import typing

from faultdriver.sweep import records


CONFIRMED: typing.Dict[typing.Optional[bool], str] = {
    True: 'confirmed', False: 'harness-only', None: '-'}


def confirmation(finding: records.Finding) -> str:
    """What the process-tier replay said of a finding, in words."""
    text = CONFIRMED[finding.get('confirmed')]
    if finding.get('confirmed_on'):
        text += ' on %s' % finding['confirmed_on']
    return text


def step_label(case: typing.Mapping[str, object]) -> str:
    """A case's or a finding's step, after its first fault's case id
    where it is a second fault; the clean run's has none."""
    if case.get('point') is None:
        return 'the clean run (no fault)'
    step = '%s.%s@%s' % (case['point'], case['phase'], case['host'])
    return '%s then %s' % (case['first'], step) if case.get('first') \
        else step
