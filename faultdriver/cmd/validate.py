"""``faultdriver validate``: check rules or a nova.conf before deploying,
or a scenario or sweep workflow before running it."""

import difflib
import os
import re
import socket
import stat
import sys

from cliff import lister

from faultdriver import exception

#: Largest file ``validate`` reads (a nova.conf is a few tens of KiB).
MAX_FILE = 4 * 1024 * 1024
SECTION = 'fault_injection'


def read_config_text(path):
    """The text of a nova.conf-style file; ConfigError naming the file
    when it is missing, not a regular file, too large, binary or not
    UTF-8."""
    try:
        mode = os.stat(path).st_mode
    except OSError as exc:
        raise exception.ConfigError('%s: cannot read: %s'
                                    % (path, exc.strerror or exc))
    if stat.S_ISDIR(mode):
        raise exception.ConfigError('%s: is a directory; expected a '
                                    'nova.conf file' % path)
    if not stat.S_ISREG(mode):
        raise exception.ConfigError('%s: not a regular file' % path)
    try:
        with open(path, 'rb') as stream:
            data = stream.read(MAX_FILE + 1)
    except OSError as exc:
        raise exception.ConfigError('%s: cannot read: %s'
                                    % (path, exc.strerror or exc))
    if len(data) > MAX_FILE:
        raise exception.ConfigError('%s: larger than %d bytes; not a '
                                    'nova.conf' % (path, MAX_FILE))
    if b'\0' in data:
        raise exception.ConfigError('%s: a binary file (NUL byte at %d); '
                                    'expected a nova.conf (INI) file'
                                    % (path, data.index(b'\0')))
    try:
        return data.decode('utf-8')
    except UnicodeDecodeError as exc:
        line = data[:exc.start].count(b'\n') + 1
        raise exception.ConfigError('%s: line %d is not UTF-8 text (byte '
                                    '%d); expected a nova.conf (INI) file'
                                    % (path, line, exc.start)) from None


def check_sections(path, text):
    """Refuse a section that looks like a misspelt [fault_injection]:
    oslo.config ignores unknown sections, so its options would silently
    do nothing."""
    for number, line in enumerate(text.splitlines(), 1):
        found = re.fullmatch(r'\s*\[([^\]]*)\]\s*', line)
        if not found or found.group(1) == SECTION:
            continue
        name = found.group(1)
        squashed = re.sub('[^a-z]', '', name.lower())
        if squashed == SECTION.replace('_', '') or difflib.SequenceMatcher(
                None, name.lower(), SECTION).ratio() >= 0.8:
            raise exception.ConfigError(
                '%s: line %d: section [%s] is not [%s]; did you mean [%s]? '
                'oslo.config ignores unknown sections, so its options would '
                'do nothing' % (path, number, name, SECTION, SECTION))


def is_file_argument(source):
    """A path (existing, or with no ':' that every rule has)."""
    return os.path.lexists(source) or ':' not in source


#: Files ``validate`` reads as scenarios (or workflows), not nova.conf.
SCENARIO_SUFFIXES = ('.yaml', '.yml')


def is_scenario_argument(source):
    """A scenario file (``.yaml``), or a bundled scenario's name."""
    from faultdriver.scenario import model
    return source.endswith(SCENARIO_SUFFIXES) or (
        not os.path.lexists(source) and source in model.bundled())


def scenario_kind(scenario):
    """``sweep workflow`` for a scenario whose steps end in ``recover``
    (what ``faultdriver sweep`` sweeps), else ``scenario``."""
    steps = scenario.steps
    return 'sweep workflow' if steps and steps[-1].kind == 'recover' \
        else 'scenario'


def scenario_rules(scenario):
    """Every rule text of a scenario: its ``rules`` and its steps'."""
    texts = [t for texts in scenario.data.get('rules', {}).values()
             for t in texts]
    for step in scenario.steps:
        if 'rule' in step.args:
            texts.append(step.args['rule'])
        rules = step.args.get('rules') or ()
        if isinstance(rules, dict):
            texts += [t for each in rules.values() for t in each]
        else:
            texts += list(rules)
    return texts


class Validate(lister.Lister):
    """Validate fault rules, a nova.conf, or a scenario or workflow file.

    Each argument is a path to a nova.conf-style file, a scenario or
    sweep workflow file (``.yaml``, or a bundled scenario's name), or a
    rule (a rule always has a ':').  A nova.conf is checked as
    FaultDriver checks it at start: every option's value, the rules, the
    journal and control socket paths, the inner driver and tracker
    fixes; also a misspelt [fault_injection] section.  A scenario or
    workflow is checked as ``scenario run`` and ``sweep`` check it
    before anything starts (keys, hosts, servers, rules, points, log
    texts, CPU sets, each variant's Nova changes applying); the kind of
    file it was is said on stderr.  Each rule is listed in its canonical
    form.  Exit code 2 and a message naming the file, the key, the
    option or the rule if anything is wrong.
    """

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('sources', nargs='+', metavar='FILE|RULE')
        return parser

    def take_action(self, parsed_args):
        from faultdriver import conf
        rows = []
        rule_type = conf.RuleType()
        for source in parsed_args.sources:
            if is_file_argument(source) and is_scenario_argument(source):
                rows.extend(self.check_scenario(source))
            elif is_file_argument(source):
                rows.extend(self.check_file(source))
            else:
                rows.append(('argument', str(rule_type(source))))
        return ('Source', 'Rule (canonical form)'), rows

    def check_scenario(self, source):
        from faultdriver import novaundertest
        from faultdriver.scenario import model
        scenario = model.load(source)
        # What scenario run does before any variant starts: each
        # variant's changes to Nova must apply.
        for variant in scenario.variants:
            try:
                novaundertest.prepare(scenario.nova_patches(variant),
                                      scenario.nova_tree(variant))
            except exception.ScenarioError as exc:
                raise exception.ScenarioError('%s: variants.%s: %s' % (
                    scenario.path, variant, exc)) from None
        variants, steps = len(scenario.variants), len(scenario.steps)
        self.app.stderr.write('%s: a valid %s (%s: %d variant%s, %d step%s)'
                              '\n' % (source, scenario_kind(scenario),
                                      scenario.name, variants,
                                      's' * (variants != 1), steps,
                                      's' * (steps != 1)))
        rule_type = self._rule_type()
        return [(source, str(rule_type(text)))
                for text in scenario_rules(scenario)]

    @staticmethod
    def _rule_type():
        from faultdriver import conf
        return conf.RuleType()

    def check_file(self, source):
        from oslo_config import cfg

        from faultdriver import conf
        from faultdriver import confcheck
        from faultdriver import inner
        from faultdriver.tracker import patches as tracker_patches
        check_sections(source, read_config_text(source))
        config = cfg.ConfigOpts()
        conf.register_opts(config)
        # Nova's [DEFAULT] host (its default too): a periodic(host=...)
        # naming this host needs no peer socket.
        config.register_opt(cfg.StrOpt('host', default=socket.gethostname()))
        try:
            config([], default_config_files=[source])
        except (cfg.Error, ValueError, OSError) as exc:
            raise exception.ConfigError('%s: not a nova.conf (INI) file: %s'
                                        % (source, exc)) from None
        group = config.fault_injection
        try:
            rules = list(group.rules or ())
        except (ValueError, cfg.Error) as exc:
            raise exception.ConfigError('%s: invalid [fault_injection] '
                                        'rules: %s' % (
                                            source,
                                            confcheck.oslo_message(exc)))
        try:
            warnings = confcheck.check(group, access=False,
                                       host=config.host)
        except exception.ConfigError as exc:
            raise exception.ConfigError('%s: %s' % (source, exc)) from None
        for warning in warnings:
            sys.stderr.write('%s: warning: %s\n' % (source, warning))
        if group.inner_driver:
            inner.load_class(group.inner_driver)
        tracker_patches.load(group.tracker_patches)
        return [(source, str(rule)) for rule in rules]
