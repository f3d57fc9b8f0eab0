"""What an exported test accumulates while its steps and expectations
are written: the test method's lines, the helpers and imports they use,
and what the steps know statically (servers, moves, faults, holds)."""

import keyword
import re
import textwrap

#: The exported method's body is indented this much.
BODY = ' ' * 8
WIDTH = 79


class Writer:

    def __init__(self, scenario, variant, fixed):
        self.scenario = scenario
        self.variant = variant
        self.fixed = fixed
        self.bug = None             # the Launchpad bug it reproduces
        self.asserts = set()        # kinds of the expectations asserted
        self.last_step = None       # the kind of the step written last
        #: invariant -> what a run of the variant found (its ``actual``):
        #: the bug's exact values
        self.found = {}
        self.lines = []             # the test method's body
        self.setup = []             # setUp lines after the computes start
        self.helpers = set()
        self.imports = set()
        self.servers = {}           # alias -> Python name
        self.moves = {}             # alias -> moves asked
        self.moved = []             # aliases moved, in order
        self.holds = {}             # (host, barrier) -> Python name
        self.released = set()       # holds a release step let go
        self.hits = {}              # (host, point) -> Python name (held)
        #: (host, point) -> phase of a crash or raise at its first hit
        self.faulted = {}
        self.flavors = {}           # scenario flavor name -> Python name
        self.watched = []           # RPC methods whose timeouts we watch
        self.crashes = False        # a fault kills a compute
        self.volume_booted = False  # a server boots from a volume
        self.notes = []             # module docstring paragraphs

    # -- text ---------------------------------------------------------------

    def line(self, text=''):
        """Body lines: ``text``'s lines indented as the method body (its
        continuation lines carry their indentation relative to it)."""
        text = fit(text)
        self.lines.extend(BODY + part if part else ''
                          for part in (text.split('\n') if text else ['']))

    def paragraph(self, start, always=False):
        """End the lines written since ``start`` off from those before
        with a blank line when they open with a comment (a new
        paragraph) or ``always``; plain statements run on, as in Nova's
        tests."""
        if 0 < start < len(self.lines) and self.lines[start - 1] and (
                always or self.lines[start].lstrip().startswith('#')):
            self.lines.insert(start, '')

    def comment(self, text, lines=None):
        """``text`` as # comment lines of the body, wrapped."""
        target = self.lines if lines is None else lines
        target.extend(wrap_comment(text, BODY))

    def use(self, *helpers):
        self.helpers.update(helpers)

    def need(self, *imports):
        self.imports.update(imports)

    # -- names --------------------------------------------------------------

    def server(self, alias, where):
        if alias not in self.servers:
            from faultdriver.export import Unsupported
            raise Unsupported(where, 'no server %r was booted before'
                              % alias)
        return self.servers[alias]

    def new_server(self, alias, where):
        name = identifier(alias)
        if name in self.servers.values() and self.servers.get(alias) != name:
            from faultdriver.export import Unsupported
            raise Unsupported(where, 'server %r has the same Python name '
                              'as another server' % alias)
        self.servers[alias] = name
        return name

    def server_dict(self):
        """The booted servers as a dict literal ``{'s1': s1, ...}``."""
        return '{%s}' % ', '.join('%r: %s' % (alias, name)
                                  for alias, name in self.servers.items())

    def move_list(self):
        """``[(s1, moves), ...]`` of every booted server."""
        return '[%s]' % ', '.join('(%s, %d)' % (name, self.moves.get(
            alias, 0)) for alias, name in self.servers.items())


def identifier(text):
    """A Python name for an alias (letters, digits, ``_``)."""
    name = re.sub(r'\W', '_', text)
    if name[0].isdigit() or keyword.iskeyword(name):
        name = 'server_' + name
    return name


def wrap_comment(text, indent):
    width = WIDTH - len(indent) - 2
    out = []
    for paragraph in text.split('\n'):
        out.extend(indent + '# ' + line for line in
                   textwrap.wrap(paragraph, width, break_long_words=False,
                                 break_on_hyphens=False) or [''])
    return out


def call(head, args, indent=BODY):
    """``head(args...)`` on as many lines as it takes (at most 79 columns
    at ``indent``): all on one line, else the arguments on the next
    lines, indented 4 more (relative to the first line)."""
    one = '%s(%s)' % (head, ', '.join(args))
    if len(indent) + len(one) <= WIDTH:
        return one
    rest = ', '.join(args)
    if len(indent) + 4 + len(rest) + 3 <= WIDTH:
        return '%s(\n    %s)' % (head, rest)
    if len(args) == 1:
        return '%s(\n    %s)' % (head, '\n    '.join(
            fit(args[0], len(indent) + 4).split('\n')))
    nested = [fit(arg, len(indent) + 4) for arg in args]
    return '%s(\n%s)' % (head, ',\n'.join(
        '\n'.join('    ' + part for part in arg.split('\n'))
        for arg in nested))


def fit(text, indent=len(BODY)):
    """One statement ``head(args)`` within 79 columns at ``indent``: as
    it is, else its arguments on the next line, else one a line (split
    at the top-level commas)."""
    if indent + len(text) <= WIDTH or '(' not in text or '\n' in text:
        return text
    if ' = ' in text.split('(', 1)[0]:
        target, _, value = text.partition(' = ')
        return '%s = %s' % (target, fit(value, indent + len(target) + 3))
    head, _, rest = text.partition('(')
    if not rest.endswith(')'):
        return text
    args = _split_args(rest[:-1])
    return call(head, args, ' ' * indent)


def _split_args(text):
    parts, depth, current, quote = [], 0, '', None
    for char in text:
        if quote:
            quote = None if char == quote else quote
        elif char in '\'"':
            quote = char
        elif char in '([{':
            depth += 1
        elif char in ')]}':
            depth -= 1
        elif char == ',' and depth == 0:
            parts.append(current.strip())
            current = ''
            continue
        current += char
    parts.append(current.strip())
    return parts
