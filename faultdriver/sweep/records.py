"""The records a sweep writes and reads back, as TypedDicts: a case's
result (a line of ``results.jsonl``), a finding, the clean run's
breaks, a depth-2 sweep's pruning figures and a sweep's identity
(``sweep.json``).

Why TypedDicts and not dataclasses: these are the sweep's file format
(format version 2, read back by ``sweep merge``, the A/B and the
reports, also from sweeps written before a key existed, which readers
take with ``.get``).  A TypedDict is the dict that is written, so the
JSON stays what it was to the byte, and a reader names a key the type
checker knows.  What the sweep keeps as objects are its own values:
:class:`faultdriver.sweep.cases.Case`,
:class:`faultdriver.sweep.trace.TracedStep`, the causes
(:mod:`faultdriver.sweep.causes`) and what a recogniser reads
(:class:`faultdriver.sweep.recognisers.Seen`).

A scenario run's report and a scenario's data stay JSON here
(:data:`Report`, :data:`ScenarioData`): the sweep reads the report's
own format (:meth:`faultdriver.scenario.variant_report.VariantReport
.to_json`) as a runner process wrote it.
"""

import typing

#: A JSON value as a report or a scenario holds it (what an invariant
#: saw, a Nova under test's record).
JSON = typing.Any
#: A scenario run's report as JSON (``VariantReport.to_json()``).
Report = typing.Dict[str, JSON]
#: A scenario's data (what a scenario file holds).
ScenarioData = typing.Dict[str, JSON]
#: A sweep's document (``faultdriver sweep -f json``), also one of
#: format version 1, or an A/B's (``a``, ``b`` and ``ab``).
Document = typing.Dict[str, JSON]
#: A :class:`faultdriver.sweep.trace.TracedStep` as JSON.
StepJSON = typing.Dict[str, JSON]


class Detail(typing.TypedDict):
    """A broken expectation and what it saw."""
    kind: str
    actual: JSON


class CaseResult(typing.TypedDict):
    """What the results keep of one case's run (a line of
    ``results.jsonl``, :func:`faultdriver.sweep.execute.summarize`)."""
    id: str
    point: str
    host: str
    phase: str
    action: str
    in_periodic: bool
    first: typing.Optional[str]
    recovery_trace: typing.List[StepJSON]
    verdict: typing.Optional[str]
    broken: typing.List[str]
    details: typing.List[Detail]
    step_failed: typing.Optional[str]
    step_error: typing.Optional[str]
    recovery: typing.List[JSON]
    internal_error: bool
    error: typing.Optional[str]
    scenario: str
    seconds: float
    setup_seconds: typing.Optional[float]
    steps_seconds: typing.Optional[float]
    step_seconds: typing.Dict[str, float]
    expectation_seconds: typing.Dict[str, typing.Optional[float]]
    cpu_seconds: typing.Dict[str, float]
    #: ``second-call`` cases: each call made while the step was held,
    #: its answer and the hold around it; why the case was not reached
    #: (then also ``internal_error``).  Absent from older results.
    second_call: typing.NotRequired[typing.List[typing.Dict[str, JSON]]]
    not_reached: typing.NotRequired[typing.Optional[str]]


class Finding(typing.TypedDict):
    """A broken invariant at one step and action, with every case that
    shows it (:func:`faultdriver.sweep.findings.group`)."""
    invariant: str
    point: typing.Optional[str]
    host: typing.Optional[str]
    phase: typing.Optional[str]
    action: str
    first: typing.Optional[str]
    cases: typing.List[str]
    case_scenario: str
    case_broken: typing.List[str]
    #: Its reproducing scenario, once written.
    scenario: typing.Optional[str]
    #: The finding of doc/findings.rst it is (``'F5'``), or None.
    known: typing.Optional[str]
    #: What the process-tier replay said (None: no replay, or none ran).
    confirmed: typing.Optional[bool]
    actual: JSON
    #: The tier the replay ran on (where one was asked for).
    confirmed_on: typing.NotRequired[str]


class CleanRun(typing.TypedDict):
    """What the sweep keeps of a clean run that broke something
    (``trace/clean.json``, :func:`faultdriver.sweep.clean.record`)."""
    verdict: str
    broken: typing.List[str]
    details: typing.List[Detail]
    step_failed: typing.Optional[str]
    log: str
    #: An A/B's B judged against A's clean run: A's results directory.
    shared: typing.NotRequired[str]


class Pruning(typing.TypedDict):
    """What a depth-2 sweep's pruning did
    (:func:`faultdriver.sweep.recovery.second_faults`)."""
    first_faults_recovered: int
    recovery_paths: int
    cases: int
    cases_without_pruning: int
    pruned: int
    #: Seconds the pruned cases would have cost, once they ran.
    pruned_seconds_estimate: typing.NotRequired[typing.Optional[float]]


class Identity(typing.TypedDict):
    """What a results directory is a sweep of (``sweep.json``,
    :func:`faultdriver.sweep.identity.of`)."""
    format_version: int
    workflow: str
    workflow_sha256: str
    backend: str
    mode: str
    actions: typing.List[str]
    patches: typing.List[str]
    nova: JSON
    points: typing.Optional[typing.List[str]]
    hosts: typing.Optional[typing.List[str]]
    depth: int
    recovery_points: typing.Optional[typing.List[str]]


class BrokenInvariantJSON(typing.TypedDict):
    """:class:`faultdriver.sweep.causes.BrokenInvariant` as JSON."""
    invariant: str
    known: typing.Optional[str]
    reproducer: typing.Optional[str]
    confirmed: str


class BrokenCaseJSON(typing.TypedDict):
    """:class:`faultdriver.sweep.causes.BrokenCase` as JSON, with its
    step and where it is in words."""
    id: str
    point: typing.Optional[str]
    host: typing.Optional[str]
    phase: typing.Optional[str]
    action: str
    first: typing.Optional[str]
    invariants: typing.List[BrokenInvariantJSON]
    step: str
    where: str


class CauseJSON(typing.TypedDict):
    """:class:`faultdriver.sweep.causes.Cause` as JSON."""
    known: typing.Optional[str]
    label: str
    key: str
    cases: typing.List[BrokenCaseJSON]


class Workflow(typing.Protocol):
    """What the sweep reads of the workflow it sweeps (a
    :class:`faultdriver.scenario.model.Scenario`, which is not annotated
    yet): its name, file, data and hosts."""

    @property
    def name(self) -> str: ...

    @property
    def path(self) -> str: ...

    @property
    def data(self) -> ScenarioData: ...

    @property
    def hosts(self) -> typing.List[str]: ...
