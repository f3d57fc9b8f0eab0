"""The HTML report of a scenario run (no Nova needed).

Invariants: the page is one self-contained file (no scripts, nothing
fetched); each variant's sequence diagram has one lane for the API and
one per host, and draws the crash on the lane of the host that died; any
text from the run is escaped; an A/B run starts with the side-by-side
table.  The fixture is a real run of the stale-context seed (``faultdriver
scenario run stale-error-migration-context -f json``).
"""

import copy
import html.parser
import json
import os
import re
import xml.etree.ElementTree as ET

import pytest

from faultdriver.scenario import htmlreport
from faultdriver.scenario import rundoc
from faultdriver.scenario import svg
from faultdriver.scenario import timeline
from faultdriver.scenario import variant_report
from tests import runstates

Report = variant_report.VariantReport

FIXTURE = os.path.join(os.path.dirname(__file__), 'data',
                       'stale-context-run.json')
HOSTILE = '<script>alert("x")</script>&'


def records(doc):
    """``doc`` (a run's JSON, as a test changed it) with its reports
    read as the records the renderers take."""
    rundoc.check(FIXTURE, doc)
    return doc


@pytest.fixture
def run():
    with open(FIXTURE, encoding='utf-8') as stream:
        return json.load(stream)


class Page(html.parser.HTMLParser):
    """Every tag with its attributes, and each table's rows of cell text."""

    def __init__(self, text):
        super().__init__()
        self.tags, self.tables, self._cell = [], [], None
        self.feed(text)

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))
        if tag == 'table':
            self.tables.append([])
        elif tag == 'tr':
            self.tables[-1].append([])
        elif tag in ('td', 'th'):
            self._cell = []

    def handle_endtag(self, tag):
        if tag in ('td', 'th'):
            self.tables[-1][-1].append(''.join(self._cell))
            self._cell = None

    def handle_data(self, data):
        if self._cell is not None:
            self._cell.append(data)


def diagrams(page):
    """The sequence diagrams of a page, parsed (they are well-formed XML)."""
    found = re.findall(r'<svg class="sequence-diagram".*?</svg>', page,
                       re.S)
    return [ET.fromstring(text) for text in found]


def lane_x(diagram):
    return {line.get('data-lane'): float(line.get('x1'))
            for line in diagram.iter('line') if line.get('data-lane')}


def test_page_is_self_contained(run):
    page = htmlreport.render(records(run))
    tags = Page(page).tags
    names = {tag for tag, _ in tags}
    assert not names & {'script', 'link', 'img', 'iframe', 'object'}
    for tag, attrs in tags:
        for name in ('src', 'href', 'xlink:href', 'action'):
            assert attrs.get(name, '#').startswith('#'), (tag, attrs)
    assert not re.search(r'url\(|@import|https?://', page)
    assert '<style>' in page


def test_one_lane_per_host_and_the_crash_on_dest(run):
    page = htmlreport.render(records(run))
    stock, fix = diagrams(page)
    for diagram in (stock, fix):
        lanes = [g.get('data-lane') for g in diagram.iter('g')
                 if g.get('class') == 'lane']
        assert lanes == ['API', 'src', 'dest']
        [crash] = [g for g in diagram.iter('g')
                   if g.get('class') == 'event crash']
        assert crash.get('data-lane') == 'dest'
        [circle] = crash.iter('circle')
        assert float(circle.get('cx')) == lane_x(diagram)['dest']
        assert 'CRASH' in ''.join(crash.itertext())


def test_events_in_time_order_with_faults_and_migrations(run):
    events = timeline.events(Report.from_json(run['variants']['stock']))
    assert [e.at for e in events] == sorted(e.at for e in events)
    kinds = [e.kind for e in events]
    assert kinds.count('migration') == 3
    assert kinds.count('migration-status') == 3
    [crash] = [e for e in events if e.kind == 'crash']
    [error] = [e for e in events if e.tag == 'error']
    [restart] = [e for e in events if e.text.startswith('restart')]
    # The source gives up on dead dest, then dest is restarted.
    assert crash.at < error.at < restart.at
    assert (error.lane, error.to) == ('src', 'dest')
    periodics = [e for e in events if e.text.startswith('periodic')]
    assert [e.style for e in periodics] == ['ok', 'ok', 'bad']


def test_dest_is_down_from_the_crash_until_the_restart(run):
    events = timeline.events(Report.from_json(run['variants']['stock']))
    [(first, last)] = [(first, last) for lanes, first, last, kind
                       in svg._intervals(events) if kind == 'down']
    assert events[first].kind == 'crash'
    assert events[last].text.startswith('restart')


def test_a_crash_step_marks_its_host_down():
    report = {'timeline': [
        {'index': 1, 'step': 'crash host=b', 'kind': 'crash',
         'args': {'host': 'b'}, 'start': 0.0, 'seconds': 0.1,
         'status': 'ok', 'detail': ''}],
        'state': {'hosts': {'a': {}, 'b': {}}}}
    [event] = timeline.events(Report.from_json(dict(
        report, variant='v', mode='threading', state=runstates.state(
            report['state']).to_json())))
    assert (event.lane, event.to, event.down) == ('API', 'b', True)
    [down] = svg._intervals([event])
    assert down == (('b',), 0, 0, 'down')


def test_reports_without_step_kinds_still_draw(run):
    stock = run['variants']['stock']
    for entry in stock['timeline']:
        del entry['kind'], entry['args']
    [boot] = [e for e in timeline.events(Report.from_json(stock))
              if e.text.startswith('boot s1')]
    assert (boot.lane, boot.to) == ('API', 'src')


def test_hostile_text_is_escaped(run):
    stock = run['variants']['stock']
    stock['timeline'][0]['detail'] = HOSTILE
    stock['state']['faults'][0]['point'] = HOSTILE
    stock['expectations'][0]['expectation'] = HOSTILE
    run['description'] = HOSTILE
    fix = run['variants'].pop('fix')
    fix['variant'] = HOSTILE
    run['variants'][HOSTILE] = fix
    page = htmlreport.render(records(run))
    assert '<script>' not in page
    assert HOSTILE not in page
    assert 'alert(&quot;x&quot;)' in page
    assert not {tag for tag, _ in Page(page).tags} & {'script'}
    diagram = diagrams(page)[0]          # still well-formed
    assert HOSTILE in ''.join(diagram.itertext())


def test_a_b_run_starts_with_the_side_by_side_table(run):
    page = htmlreport.render(records(run))
    first = Page(page).tables[0]
    assert first[0] == ['Expectation', 'stock', 'fix']
    rows = {row[0]: row[1:] for row in first[1:]}
    assert rows['VERDICT'] == ['bug reproduced', 'ok']
    assert rows['tracker fixes'] == ['none', 'stale_migration_context']
    assert rows['Nova under test'] == ['unknown', 'unknown']
    # The variant that expects the bug says what it shows, not "met".
    assert rows['periodic errors on dest >= 1'] == [
        'shows the bug: 1 periodic error on dest', '-']
    assert rows["log 'CPUPinningInvalid' count >= 1"] == [
        "shows the bug: 'CPUPinningInvalid' logged 2 times", '-']
    assert rows['periodic errors on dest == 0'] == ['-', 'met (0)']
    # What the fix's variant meets too is the setup, not the bug.
    assert rows["s1 migrations ['error', 'completed', 'completed']"] == [
        "met (['error', 'completed', 'completed'])"] * 2
    assert rows["log 'Migration status is error' count >= 2"] == [
        'met (3)'] * 2
    assert page.index('Side by side') < page.index('Variant stock')


def test_one_variant_has_no_side_by_side_table(run):
    del run['variants']['fix']
    page = htmlreport.render(records(run))
    assert 'Side by side' not in page
    assert len(diagrams(page)) == 1


def test_variant_that_did_not_run_shows_its_error(run):
    run['variants']['fix'] = {'variant': 'fix', 'mode': 'threading',
                              'internal_error': 'Traceback: <boom>',
                              'verdict': 'internal error'}
    page = htmlreport.render(records(copy.deepcopy(run)))
    assert 'Variant fix: INTERNAL ERROR' in page
    assert 'Traceback: &lt;boom&gt;' in page
    assert len(diagrams(page)) == 1


def test_a_migration_without_destination_and_a_stand_ins_fault_draw(run):
    """A live migration the conductor's pre-check ended before choosing
    a destination has none (dest_compute None: once a KeyError that
    ended ``scenario run``'s page); a stand-in's fault sits on a lane of
    its own (its pseudo-host)."""
    stock = run['variants']['stock']
    stock['state']['migrations'][0]['dest_compute'] = None
    fault = dict(stock['state']['faults'][0], host='neutron',
                 point='network.bind_ports_to_host', action='http')
    stock['state']['faults'].append(fault)
    page = htmlreport.render(records(run))
    assert 'neutron' in lane_x(diagrams(page)[0])
