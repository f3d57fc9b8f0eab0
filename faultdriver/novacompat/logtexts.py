"""The log texts scenario expectations count, and whose line each is.

A ``log: {text: ..., count: 0}`` expectation passes silently if the line
it counts is reworded.  Every text a bundled scenario counts must
therefore be either declared in :mod:`faultdriver.novacompat.declared`
(an assumption whose ``counted`` lists it: Nova logs it, checked in
Nova's source) or faultdriver's own (a string constant in faultdriver's
code).  ``faultdriver doctor`` shows each; a unit test keeps new
scenarios honest.
"""

import ast
import functools
import importlib.resources
import pathlib

import yaml

from faultdriver import novacompat


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
