"""The log texts scenario expectations count, and whose line each is.

A ``log: {text: ..., count: 0}`` expectation passes silently if the line
it counts is reworded, or misspelt.  Every text a bundled scenario
counts is either declared in :mod:`faultdriver.novacompat.declared` (an
assumption whose ``counted`` lists it: Nova logs it, checked in Nova's
source) or faultdriver's own (a string constant in faultdriver's code).
``faultdriver doctor`` shows each; a unit test keeps new scenarios
honest.

Any other scenario's text is checked when it loads
(:func:`unlogged`): it must be one the Nova under test can log -- part
of a string or a class name (an exception in a traceback) in its
``nova`` package, or of a line one of its format strings makes -- or
one the variant's own ``nova-patches`` add.  A text another program
logs (a library, libvirt) says so with ``logged-elsewhere: true``.
"""

import ast
import difflib
import functools
import importlib.resources
import os
import pathlib
import re
import typing

import yaml

from faultdriver import novacompat

#: The key of a ``log`` expectation whose text is logged by neither
#: Nova nor faultdriver (a library, libvirt): not checked.
ELSEWHERE = 'logged-elsewhere'
#: A placeholder of a format string: ``%s``, ``%(name)s``, ``{}``.
PLACEHOLDER = re.compile(
    r'%(?:\([^)]*\))?[-#0 +]*\d*(?:\.\d+)?[sdrifxXeEgGcou]|\{[^{}]*\}')
#: A string literal on a line of a diff (the lines a change adds).
_LITERAL = re.compile(r"""(['"])((?:\\.|(?!\1).)*)\1""")
_CLASS = re.compile(r'^\s*class\s+(\w+)', re.M)


def counted_texts(paths):
    """``{text: [scenario file names]}`` of the ``log`` expectations in
    the scenario files at ``paths`` (read as plain YAML)."""
    found = {}
    for path in paths:
        with open(path, encoding='utf-8') as stream:
            data = yaml.safe_load(stream) or {}
        expectations = list(data.get('expectations') or ())
        for variant in (data.get('variants') or {}).values():
            expectations += list((variant or {}).get('expectations') or ())
        for expectation in expectations:
            args = (expectation or {}).get('log')
            if isinstance(args, dict) and 'text' in args:
                found.setdefault(str(args['text']), []).append(
                    pathlib.Path(path).stem)
    return found


def bundled_paths():
    folder = importlib.resources.files('faultdriver').joinpath('scenarios')
    return sorted(str(p) for p in folder.iterdir()
                  if p.name.endswith(('.yaml', '.yml')))


@functools.lru_cache(maxsize=None)
def own_constants():
    """Every string constant in faultdriver's own modules."""
    root = pathlib.Path(__file__).resolve().parent.parent
    constants = []
    for path in sorted(root.rglob('*.py')):
        tree = ast.parse(path.read_text(encoding='utf-8'))
        constants += [n.value for n in ast.walk(tree)
                      if isinstance(n, ast.Constant)
                      and isinstance(n.value, str)]
    return tuple(constants)


def origin(text):
    """``(assumption or None, 'nova'|'faultdriver'|None)`` for a counted
    text: who logs it."""
    for assumption in novacompat.assumptions():
        if text in assumption.counted:
            return assumption, 'nova'
    if any(text in constant for constant in own_constants()):
        return None, 'faultdriver'
    return None, None


def _package(tree):
    """The ``nova`` folder of a variant's Nova: its ``nova-tree``'s, else
    the one this process imports (in a variant's runner, the Nova under
    test with the run's changes)."""
    from faultdriver.novaundertest import tree as tree_module
    if tree:
        return tree_module.source_package(tree)
    return tree_module.installed_package()


@functools.lru_cache(maxsize=4)
def package_strings(package):
    """Every string constant and class name of the ``nova`` package at
    ``package`` (its tests left out): what its log lines and tracebacks
    are made of."""
    found = set()
    for folder, dirs, files in os.walk(package):
        dirs[:] = sorted(d for d in dirs if d not in ('tests',
                                                      '__pycache__'))
        for name in sorted(files):
            if not name.endswith('.py'):
                continue
            with open(os.path.join(folder, name), encoding='utf-8',
                      errors='replace') as stream:
                try:
                    tree = ast.parse(stream.read())
                except (SyntaxError, ValueError):
                    continue
            for node in ast.walk(tree):
                if isinstance(node, ast.Constant) and isinstance(
                        node.value, str):
                    found.add(node.value)
                elif isinstance(node, ast.ClassDef):
                    found.add(node.name)
    return frozenset(found)


def diff_strings(paths):
    """The string literals and class names on the lines Nova diffs
    (``paths``) leave in the ``nova`` package."""
    from faultdriver.novaundertest import diffs
    found = set()
    for path in paths:
        try:
            with open(path, encoding='utf-8', errors='replace') as stream:
                changes = diffs.parse(stream.read(), path)
        except OSError:
            continue        # the variant's Nova is refused when it is made
        for change in changes:
            if not change.path.startswith(diffs.PACKAGE):
                continue
            text = ''.join(line for hunk in change.hunks
                           for line in hunk.new)
            found.update(match.group(2) for match in
                         _LITERAL.finditer(text))
            found.update(_CLASS.findall(text))
    return found


def _covered(text, pieces):
    """How many characters of ``text`` are the fixed parts of a line the
    format string split into ``pieces`` (at its placeholders) can make,
    at best; -1 if no such line holds ``text``."""
    best = -1
    last = len(pieces) - 1
    for i, piece in enumerate(pieces):
        for k in range(len(piece) + 1):
            head = piece[k:]
            if not text.startswith(head):
                continue
            covered, rest, j = len(head), text[len(head):], i + 1
            if rest and i == last:
                continue            # past the end of the line
            while rest and j <= last:
                following = pieces[j]
                if not following:
                    if j == last:
                        rest = ''   # ends in the last placeholder
                    j += 1
                    continue
                at = rest.find(following)
                if at < 0:
                    covered += max(m for m in range(len(following) + 1)
                                   if rest.endswith(following[:m]))
                    rest = ''
                    break
                covered += len(following)
                rest = rest[at + len(following):]
                if rest and j == last:
                    break           # past the end of the line
                j += 1
            if not rest:
                best = max(best, covered)
    return best


def logs(text, strings):
    """Whether a log line with ``text`` in it can be made of ``strings``:
    ``text`` is part of one, or of a line one of them formats with at
    least half of ``text`` its own words (a placeholder's value may be
    anything, so a text of mostly values proves nothing)."""
    if any(text in string for string in strings):
        return True
    for string in strings:
        pieces = PLACEHOLDER.split(string)
        if len(pieces) > 1 and 2 * _covered(text, pieces) >= len(text):
            return True
    return False


def closest(text, strings):
    """The part of ``strings`` most like ``text`` (did you mean), or
    None."""
    words = set(re.findall(r'\w{4,}', text))
    size = len(text)
    candidates = set()
    for string in strings:
        if size * 0.7 <= len(string) <= size * 1.3:
            candidates.add(string)
        if len(string) > size and len(string) < 400 and any(
                word in string for word in words):
            starts = [0] + [m.end() for m in re.finditer(r'\W+', string)]
            candidates.update(string[start:start + size]
                              for start in starts)
    found = difflib.get_close_matches(text, candidates, n=1, cutoff=0.75)
    return found[0] if found else None


def unlogged(text: str,
             novas: typing.Iterable[typing.Tuple[typing.Optional[str],
                                                 typing.List[str]]],
             names: typing.Iterable[str]) -> typing.Optional[str]:
    """Why ``text`` makes a vacuous ``log`` expectation, or None when
    a variant's Nova can log it.  ``novas``: ``(nova-tree or None, [Nova
    diffs])`` of each variant the expectation is checked in; ``names``:
    each one's name, for the message.  Declared texts and faultdriver's
    own lines are accepted without reading Nova."""
    if origin(text)[1] is not None:
        return None
    for (tree, patches), name in zip(novas, names):
        strings = package_strings(_package(tree)) | diff_strings(patches)
        if logs(text, strings):
            continue
        close = closest(text, strings | set(own_constants()))
        return ('%r is logged by neither the Nova under test (%s) nor '
                'faultdriver, so counting it proves nothing%s A text '
                'another program logs takes "%s: true"' % (
                    text, name, '; did you mean %r?' % close if close
                    else '.', ELSEWHERE))
    return None
