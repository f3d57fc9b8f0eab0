"""A sweep's broken cases grouped by cause, as a user reads them: each
case once under each cause it shows, with the invariants it broke
listed under it (not one finding per invariant), the known causes named
by their finding of doc/findings.rst (``F5``), the unrecognised ones
first.

A case's invariant is known where a recogniser takes it
(:mod:`faultdriver.sweep.recognisers`, through the findings' ``known``);
a case shows each known finding one of its invariants is, and an
unrecognised cause too where an invariant is no known finding's.
Unrecognised invariants of one step and action (both phases of the
step, which the sweep runs as two cases) make one cause: what a user
would look into as one thing.
"""

import collections
import dataclasses
import typing

from faultdriver.sweep import casetext
from faultdriver.sweep import records


@dataclasses.dataclass(frozen=True)
class BrokenInvariant:
    invariant: str
    #: ``'F5'`` (``'F5, F15'`` where two recognisers take it), or None.
    known: typing.Optional[str]
    #: The finding's reproducing scenario (the case's file before the
    #: findings were written).
    reproducer: typing.Optional[str]
    #: What the process-tier replay said of it, in words (``-`` where
    #: none ran).
    confirmed: str = '-'


@dataclasses.dataclass(frozen=True)
class BrokenCase:
    id: str
    point: typing.Optional[str]
    host: typing.Optional[str]
    phase: typing.Optional[str]
    action: str
    first: typing.Optional[str]
    invariants: typing.Tuple[BrokenInvariant, ...]

    @property
    def known(self) -> typing.List[str]:
        """The findings this case shows, in finding order."""
        return sorted({name.strip() for i in self.invariants if i.known
                       for name in i.known.split(',')},
                      key=lambda n: int(n[1:]) if n[1:].isdigit() else 0)

    @property
    def unrecognised(self) -> typing.Tuple[str, ...]:
        return tuple(i.invariant for i in self.invariants if not i.known)

    def to_json(self) -> records.BrokenCaseJSON:
        return {'id': self.id, 'point': self.point, 'host': self.host,
                'phase': self.phase, 'action': self.action,
                'first': self.first,
                'invariants': [{'invariant': i.invariant, 'known': i.known,
                                'reproducer': i.reproducer,
                                'confirmed': i.confirmed}
                               for i in self.invariants],
                'step': casetext.step_label(self._step()),
                'where': where(self._step())}

    def _step(self) -> typing.Dict[str, object]:
        """Its step and action as :func:`where` and
        :func:`faultdriver.sweep.casetext.step_label` read them."""
        return {'point': self.point, 'host': self.host,
                'phase': self.phase, 'action': self.action,
                'first': self.first}


@dataclasses.dataclass(frozen=True)
class Cause:
    #: The finding (``'F5'``), or None: unrecognised.
    known: typing.Optional[str]
    #: What a user reads: the finding, or where the unrecognised one is.
    label: str
    #: What an A/B matches causes by: the finding, or the unrecognised
    #: cause's step, action and invariants.
    key: str
    cases: typing.Tuple[BrokenCase, ...]

    def to_json(self) -> records.CauseJSON:
        return {'known': self.known, 'label': self.label, 'key': self.key,
                'cases': [case.to_json() for case in self.cases]}


def broken_cases(findings: typing.Iterable[records.Finding]
                 ) -> typing.List[BrokenCase]:
    """``[BrokenCase]`` of a sweep's findings (one per invariant and
    case), in case order."""
    by_case: typing.Dict[
        str, typing.Tuple[records.Finding, typing.List[BrokenInvariant]]] = \
        collections.OrderedDict()
    for finding in findings:
        for case_id in finding['cases']:
            by_case.setdefault(case_id, (finding, []))[1].append(
                BrokenInvariant(finding['invariant'], finding.get('known'),
                                finding.get('scenario'),
                                casetext.confirmation(finding)))
    return [BrokenCase(case_id, f['point'], f['host'], f['phase'],
                       f['action'], f.get('first'), tuple(invariants))
            for case_id, (f, invariants) in sorted(by_case.items())]


def _unrecognised_key(case: BrokenCase) -> str:
    return '%s: %s' % (where(dict(case._step(), phase='*')),
                       ', '.join(sorted(case.unrecognised)))


def where(case: typing.Mapping[str, object]) -> str:
    """A case's step and action (JSON or record fields), in words."""
    step = casetext.step_label(case)
    return step if case['point'] is None else '%s (%s)' % (
        step, case['action'])


def group(findings: typing.Iterable[records.Finding]) -> typing.List[Cause]:
    """``[Cause]``: the unrecognised first, then the known in finding
    order."""
    known: typing.Dict[str, typing.List[BrokenCase]] = \
        collections.OrderedDict()
    unknown: typing.Dict[str, typing.List[BrokenCase]] = \
        collections.OrderedDict()
    for case in broken_cases(findings):
        for name in case.known:
            known.setdefault(name, []).append(case)
        if case.unrecognised:
            unknown.setdefault(_unrecognised_key(case), []).append(case)
    return ([Cause(None, 'unrecognised: %s' % key, key, tuple(cases))
             for key, cases in sorted(unknown.items())] +
            [Cause(name, name, name, tuple(cases)) for name, cases in
             sorted(known.items(), key=lambda item: int(item[0][1:])
                    if item[0][1:].isdigit() else 0)])


def summary(causes: typing.Sequence[Cause]) -> str:
    """``6 broken cases: 2 known (F1: 2, F5: 4), 0 unrecognised`` (a
    case is counted once, under every cause it shows)."""
    cases = {case.id for cause in causes for case in cause.cases}
    known = [c for c in causes if c.known]
    unknown = [c for c in causes if not c.known]
    unknown_cases = {case.id for c in unknown for case in c.cases}
    return '%d broken %s: %d known%s, %d unrecognised%s' % (
        len(cases), _plural(len(cases), 'case'), len(known),
        ' (%s)' % ', '.join('%s: %d' % (c.known, len(c.cases))
                            for c in known) if known else '',
        len(unknown), ' (%d %s)' % (
            len(unknown_cases), _plural(len(unknown_cases), 'case'))
        if unknown else '')


def _plural(count: int, word: str) -> str:
    return word if count == 1 else word + 's'
