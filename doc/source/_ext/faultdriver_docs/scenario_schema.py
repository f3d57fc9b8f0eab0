"""The scenario reference, from ``faultdriver/scenario/schema.yaml``.

One part of it at a time:

* ``scenario``: the top-level keys, then one section for each key whose
  value has keys of its own (topology, flavors, variants, ...);
* ``host-shape``: the keys of a host's shape;
* ``steps`` / ``expectations``: one section per kind, with its arguments.
"""

from faultdriver_docs import rst

PARTS = ('scenario', 'host-shape', 'steps', 'expectations')
#: Top-level keys documented in a part of their own.
OWN_PART = {'steps': 'steps', 'expectations': 'expectations'}
#: Definitions named rather than spelt out where they are used: each has
#: its own part of the page (or page).
NAMED = {'host-shape': 'a host shape (below)', 'step': 'a step',
         'expectation': 'an expectation',
         'expectations': 'list of expectations',
         'rule': 'a rule (:doc:`rules`)'}


class Schema:
    """schema.yaml with its local ``$ref`` resolved on demand."""

    def __init__(self, data):
        self.data = data

    def resolve(self, node):
        """``node`` with its ``$ref`` merged in (its own keys win)."""
        while isinstance(node, dict) and '$ref' in node:
            ref = node['$ref']
            if not ref.startswith('#/$defs/'):
                raise ValueError('schema.yaml: unsupported $ref %r' % ref)
            target = self.data['$defs'][ref[len('#/$defs/'):]]
            node = dict(target, **{k: v for k, v in node.items()
                                   if k != '$ref'})
        return node

    def value(self, node):
        """What a value may be, in words."""
        name = node.get('$ref', '').rpartition('/')[2]
        if name in NAMED:
            return NAMED[name]
        node = self.resolve(node)
        if 'enum' in node:
            return 'one of ' + ', '.join(rst.literal(_yaml(v))
                                         for v in node['enum'])
        if 'const' in node:
            return rst.literal(_yaml(node['const']))
        if 'oneOf' in node:
            return ' or '.join(self.value(each) for each in node['oneOf'])
        kinds = node.get('type', 'object')
        if isinstance(kinds, list):
            return ' or '.join(self.value(dict(node, type=kind))
                               for kind in kinds)
        if kinds == 'array':
            each = self.value(node.get('items', {}))
            text = ('list, each ' + each if each.startswith('one of')
                    else 'list of ' + _plural(each))
            return text + _bounds(node, 'minItems', 'maxItems', 'item')
        if kinds == 'object':
            if 'properties' in node:
                return 'mapping (keys below)'
            extra = node.get('additionalProperties')
            if isinstance(extra, dict):
                return 'mapping of names to ' + self.value(extra)
            return 'mapping'
        if kinds in ('integer', 'number'):
            return kinds + _range(node)
        if kinds == 'string':
            text = 'text'
            if 'pattern' in node:
                text += ' matching ' + rst.literal(node['pattern'])
            return text + _bounds(node, 'minLength', 'maxLength',
                                  'character')
        return {'boolean': '``true`` or ``false``',
                'null': '``null``'}.get(kinds, kinds)

    def properties(self, node):
        """(name, schema, required) of an object's keys, or of the keys
        of the objects it maps names to or lists."""
        node = self.resolve(node)
        if node.get('type') == 'array':
            node = self.resolve(node.get('items', {}))
        if 'properties' not in node and isinstance(
                node.get('additionalProperties'), dict):
            node = self.resolve(node['additionalProperties'])
        required = set(node.get('required', ()))
        return [(name, spec, name in required)
                for name, spec in node.get('properties', {}).items()]

    def table(self, node):
        rows = []
        for name, spec, required in self.properties(node):
            rows.append([rst.literal(name), 'yes' if required else '',
                         self.value(spec), rst.inline(
                             self.resolve(spec).get('description', ''))])
        return rst.list_table(['Key', 'Required', 'Value', 'Description'],
                              rows, widths=[16, 8, 26, 50])


def _yaml(value):
    return 'null' if value is None else str(value).lower() if isinstance(
        value, bool) else str(value)


def _range(node):
    low = node.get('minimum')
    high = node.get('maximum')
    if 'exclusiveMinimum' in node:
        text = ' above %s' % node['exclusiveMinimum']
        return text + (', at most %s' % high if high is not None else '')
    if low is not None and high is not None:
        return ' from %s to %s' % (low, high)
    if low is not None:
        return ' of at least %s' % low
    if high is not None:
        return ' of at most %s' % high
    return ''


def _bounds(node, low_key, high_key, unit):
    low, high = node.get(low_key), node.get(high_key)
    if low and low == high:
        return ', exactly %s %s%s' % (low, unit, 's' * (low != 1))
    if low and high:
        return ', %s to %s %ss' % (low, high, unit)
    if high:
        return ', at most %s %s%s' % (high, unit, 's' * (high != 1))
    if low:
        return ', at least %s %s%s' % (low, unit, 's' * (low != 1))
    return ''


def _plural(words):
    """'a rule (...)' -> 'rules (...)'; 'mapping' -> 'mappings'."""
    for article in ('a ', 'an '):
        if words.startswith(article):
            words = words[len(article):]
    head, space, rest = words.partition(' ')
    word = head.rstrip(',')
    if word in ('text', 'list', 'true', 'one') or word.startswith('`'):
        return words
    return word + 's' + head[len(word):] + space + rest


def part(name):
    """The reStructuredText lines of one part of the reference (one of
    ``PARTS``), from the schema as the model loads it (the tier names
    filled in from faultdriver.scenario.tiers)."""
    from faultdriver.scenario import model
    if name not in PARTS:
        raise ValueError('unknown part %r; expected one of %s'
                         % (name, ', '.join(PARTS)))
    schema = Schema(model.schema())
    return globals()['_' + name.replace('-', '_')](schema)


def _scenario(schema):
    root = schema.data
    lines = [rst.inline(root['description']), ''] + schema.table(root)
    for name, spec, _required in schema.properties(root):
        if name in OWN_PART or not schema.properties(spec):
            continue
        spec = schema.resolve(spec)
        lines += rst.title(name)
        lines += [rst.inline(spec.get('description', '')), '']
        lines += schema.table(spec)
    return lines


def _host_shape(schema):
    shape = schema.data['$defs']['host-shape']
    return [rst.inline(shape['description']), ''] + schema.table(shape)


def _steps(schema):
    return _kinds(schema, schema.data['$defs']['step'])


def _expectations(schema):
    return _kinds(schema, schema.data['$defs']['expectation'])


def _kinds(schema, node):
    lines = []
    for name, spec, _required in schema.properties(node):
        spec = schema.resolve(spec)
        lines += rst.title(name)
        lines += [rst.inline(spec.get('description', '')), '']
        if schema.properties(spec):
            lines += schema.table(spec)
        else:
            lines += ['No arguments: ``{%s: {}}``.' % name, '']
    return lines
