"""The scenario schema, and the check of a scenario's data against it.

The schema is ``schema.yaml`` with what is declared elsewhere filled in:
the tier names (:mod:`faultdriver.scenario.tiers`) and the registered
invariants' expectations (:mod:`faultdriver.scenario.invariants`).  An
error names the key path (``steps[3].boot.host``) and what was
expected.
"""

import functools
import importlib.resources
import math
import re
import typing

import jsonschema
import yaml

from faultdriver import exception
from faultdriver import rules as rules_module
from faultdriver.scenario import invariants
from faultdriver.scenario import stepkinds
from faultdriver.scenario import tiers

#: Longest error message a scenario file gets (values in it are cut).
MAX_MESSAGE = 300


def schema() -> typing.Dict[str, typing.Any]:
    """schema.yaml, with the tier names of the one list of them
    (:mod:`faultdriver.scenario.tiers`), the expectations of the
    registered invariants (:mod:`faultdriver.scenario.invariants`) and
    the registered step kinds (:mod:`faultdriver.scenario.stepkinds`),
    read again whenever a registry changed."""
    return _schema(invariants.version(), stepkinds.version())


@functools.lru_cache(maxsize=2)
def _schema(invariant_version: int,
            step_version: int) -> typing.Dict[str, typing.Any]:
    text = importlib.resources.files('faultdriver.scenario').joinpath(
        'schema.yaml').read_text(encoding='utf-8')
    data: typing.Dict[str, typing.Any] = yaml.safe_load(text)
    data['$defs']['tier']['enum'] = list(tiers.NAMES)
    kinds = data['$defs']['expectation']['properties']
    for invariant in invariants.registered():
        kinds[invariant.name] = invariant.schema()
    steps = data['$defs']['step']['properties']
    for step in stepkinds.registered():
        if step.name in steps:
            raise ValueError('step kind %r: a bundled kind has that name'
                             % step.name)
        steps[step.name] = dict(step.schema)
    data['properties']['recognises']['items']['properties'][
        'invariant']['enum'] = list(invariants.names())
    return data


def _integer(checker: object, instance: object) -> bool:
    """JSON Schema counts 2.0 as an integer; a scenario does not."""
    return isinstance(instance, int) and not isinstance(instance, bool)


def _number(checker: object, instance: object) -> bool:
    """NaN and infinity compare false with every bound: not numbers."""
    return (isinstance(instance, (int, float))
            and not isinstance(instance, bool) and math.isfinite(instance))


def _pattern(validator: object, pattern: str, instance: object,
             schema: object
             ) -> typing.Iterator[jsonschema.ValidationError]:
    """Names match their pattern whole: Python's ``$`` would also let a
    trailing newline through."""
    if isinstance(instance, str) and (not re.search(pattern, instance)
                                      or '\n' in instance):
        yield jsonschema.ValidationError('%s does not match %s' % (
            clip(repr(instance), 60), pattern))


Validator = jsonschema.validators.extend(
    jsonschema.Draft202012Validator,
    validators={'pattern': _pattern},
    type_checker=jsonschema.Draft202012Validator.TYPE_CHECKER.redefine_many(
        {'integer': _integer, 'number': _number}))


def clip(text: str, size: int = MAX_MESSAGE) -> str:
    return text if len(text) <= size else text[:size] + '...'


def check(data: object, path: object) -> None:
    """ScenarioError naming ``path``, the key path and what was expected
    at the first place where ``data`` does not match the schema."""
    try:
        errors = sorted(Validator(schema()).iter_errors(data), key=lambda e: (
            list(map(str, e.absolute_path)), e.validator))
    except RecursionError:
        raise exception.ScenarioError('%s: nested too deeply' % path)
    if errors:
        raise exception.ScenarioError('%s: %s' % (
            path, clip(_describe(errors[0]))))


def key_path(parts: typing.Iterable[typing.Union[str, int]]) -> str:
    text = ''
    for part in parts:
        if isinstance(part, int):
            text += '[%d]' % part
        else:
            text += ('.' if text else '') + str(part)
    return text or '(top level)'


def _describe(error: typing.Any) -> str:
    # A jsonschema.ValidationError from iter_errors (its stubs allow an
    # unset schema and instance, which such an error always has).
    where = key_path(error.absolute_path)
    if error.validator == 'additionalProperties':
        known = list(error.schema.get('properties', ()))
        unknown = [k for k in error.instance if k not in known]
        if known:
            return ('%s: unknown key %r%s; expected one of %s'
                    % (where, unknown[0],
                       rules_module.suggest(str(unknown[0]), known),
                       ', '.join(known)))
    if error.validator in ('minProperties', 'maxProperties') and \
            'properties' in error.schema:
        return ('%s: expected exactly one key, the kind (one of %s); got %s'
                % (where, ', '.join(error.schema['properties']),
                   ', '.join(map(str, error.instance)) or 'none'))
    if error.validator == 'required':
        return '%s: %s' % (where, error.message)
    if error.validator == 'type':
        return '%s: %s is not of type %s' % (
            where, clip(repr(error.instance), 60),
            ' or '.join(map(repr, error.validator_value
                            if isinstance(error.validator_value, list)
                            else [error.validator_value])))
    return '%s: %s' % (where, error.message)
