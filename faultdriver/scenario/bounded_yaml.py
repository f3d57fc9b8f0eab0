"""Read a YAML file within fixed bounds, before any work on its content.

A few hundred bytes of YAML can stand for gigabytes ("billion laughs":
aliases of aliases) and a deep nesting can exhaust Python's stack, so
the file is refused, with the line and the limit, when it is larger than
:data:`MAX_BYTES`, uses more than :data:`MAX_ALIASES` aliases, nests
deeper than :data:`MAX_DEPTH` or would expand to more than
:data:`MAX_NODES` values.  The expansion is counted on the composed node
graph (each shared node once per use, memoised), never by expanding it.

Also refused, since each would silently change what a file means: a key
given twice in one mapping (YAML keeps the last), a key that is not a
string (``1:``, ``yes:``, ``null:``), a number that is not finite
(``.nan``, ``.inf``) and an integer of more than :data:`MAX_DIGITS`
digits.
"""

import math
import typing

import yaml

MAX_BYTES = 1024 * 1024
MAX_ALIASES = 100
MAX_DEPTH = 40
MAX_NODES = 100000
MAX_DIGITS = 18

_STR = 'tag:yaml.org,2002:str'
_MERGE = 'tag:yaml.org,2002:merge'


class LimitError(ValueError):
    """The file is beyond a bound or means something else than it says;
    the message names the line and what was expected."""


def _line(node_or_mark: typing.Any) -> str:
    # A yaml node or mark (each untyped in yaml's stubs), or None.
    mark = getattr(node_or_mark, 'start_mark', node_or_mark)
    return 'line %d' % (mark.line + 1) if mark is not None else 'somewhere'


class _Loader(yaml.SafeLoader):

    def __init__(self, stream: str) -> None:
        super().__init__(stream)
        self._depth = 0
        self._aliases = 0

    def compose_node(self, parent: typing.Optional[yaml.Node],
                     index: int) -> typing.Optional[yaml.Node]:
        if self.check_event(yaml.AliasEvent):
            self._aliases += 1
            if self._aliases > MAX_ALIASES:
                raise LimitError('%s: more than %d aliases (*name); expand '
                                 'them or simplify the file' % (
                                     _line(self.peek_event()), MAX_ALIASES))
        self._depth += 1
        try:
            if self._depth > MAX_DEPTH:
                raise LimitError('%s: nested deeper than %d levels' % (
                    _line(self.peek_event()), MAX_DEPTH))
            return super().compose_node(parent, index)
        finally:
            self._depth -= 1

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False
                          ) -> typing.Dict[typing.Hashable, typing.Any]:
        if isinstance(node, yaml.MappingNode):
            seen: typing.Dict[str, str] = {}
            for key, _value in node.value:
                if key.tag == _MERGE:
                    continue
                if not isinstance(key, yaml.ScalarNode) or key.tag != _STR:
                    shown = key.value if isinstance(key, yaml.ScalarNode) \
                        else 'a %s' % type(key).__name__[:-4].lower()
                    raise LimitError('%s: key %s is not a string; quote it '
                                     '(keys are names)' % (
                                         _line(key), _short(shown)))
                if key.value in seen:
                    raise LimitError('%s: key %r given twice in one mapping '
                                     '(first on %s); YAML would keep only '
                                     'the last' % (_line(key),
                                                   _short(key.value),
                                                   seen[key.value]))
                seen[key.value] = _line(key)
        return super().construct_mapping(node, deep)

    def construct_yaml_float(self, node: yaml.ScalarNode) -> float:
        value = super().construct_yaml_float(node)
        if not math.isfinite(value):
            raise LimitError('%s: %s is not a finite number' % (
                _line(node), _short(node.value)))
        return value

    def construct_yaml_int(self, node: yaml.ScalarNode) -> int:
        if sum(c.isdigit() for c in node.value) > MAX_DIGITS:
            raise LimitError('%s: integer %s has more than %d digits' % (
                _line(node), _short(node.value), MAX_DIGITS))
        return super().construct_yaml_int(node)


_Loader.add_constructor('tag:yaml.org,2002:float',
                        _Loader.construct_yaml_float)
_Loader.add_constructor('tag:yaml.org,2002:int', _Loader.construct_yaml_int)


def _short(text: object, size: int = 40) -> str:
    text = str(text)
    return text if len(text) <= size else text[:size] + '...'


#: Characters of a scalar that count as one more value in the expansion
#: (a long string behind many aliases is large too).
CHARS_PER_VALUE = 16


def _expanded_size(root: yaml.Node) -> int:
    """How many values ``root`` stands for with every alias expanded (a
    scalar counts one per :data:`CHARS_PER_VALUE` characters too); stops
    counting past :data:`MAX_NODES`."""
    sizes: typing.Dict[int, int] = {}
    active: typing.Set[int] = set()

    def size(node: yaml.Node) -> int:
        key = id(node)
        if key in sizes:
            return sizes[key]
        if key in active:
            raise LimitError('%s: an alias refers to a value that contains '
                             'it (an endless structure)' % _line(node))
        active.add(key)
        total = 1
        if isinstance(node, yaml.ScalarNode):
            total += len(node.value) // CHARS_PER_VALUE
        if isinstance(node, yaml.SequenceNode):
            children: typing.Iterable[yaml.Node] = node.value
        elif isinstance(node, yaml.MappingNode):
            children = [n for pair in node.value for n in pair]
        else:
            children = ()
        for child in children:
            total += size(child)
            if total > MAX_NODES:
                break
        active.discard(key)
        sizes[key] = total
        return total

    return size(root)


def load_bytes(data: bytes) -> typing.Any:
    """The one document in ``data`` (bytes), within the bounds."""
    if len(data) > MAX_BYTES:
        raise LimitError('%d bytes; at most %d' % (len(data), MAX_BYTES))
    try:
        text = data.decode('utf-8')
    except UnicodeDecodeError as exc:
        raise LimitError('not UTF-8 text (byte %d)' % exc.start) from None
    loader = _Loader(text)
    try:
        try:
            node = loader.get_single_node()
            if node is None:
                return None
            if _expanded_size(node) > MAX_NODES:
                raise LimitError('expands to more than %d values (through '
                                 'aliases)' % MAX_NODES)
            return loader.construct_document(node)
        except RecursionError:
            raise LimitError('nested too deeply (through aliases)') from None
    finally:
        loader.dispose()


def load_file(path: str) -> typing.Any:
    """The document of the file at ``path``, within the bounds.  OSError
    if it cannot be read; :class:`LimitError` or ``yaml.YAMLError`` if
    its content is refused."""
    with open(path, 'rb') as stream:
        data = stream.read(MAX_BYTES + 1)
    if len(data) > MAX_BYTES:
        raise LimitError('larger than %d bytes' % MAX_BYTES)
    return load_bytes(data)
