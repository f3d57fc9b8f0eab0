"""Writing reStructuredText for the generated parts of the pages (no
Sphinx needed: a unit test regenerates them)."""

import re

_MARKUP = re.compile(r'([\\`*_|<>\[\]])')
_SECTION_CHARS = {1: '-', 2: '~'}


def _one_line(text):
    return ' '.join(str(text).split())


def escape(text):
    """Plain text (Nova's docstrings, YAML) shown as written."""
    return _MARKUP.sub(r'\\\1', _one_line(text))


def literal(text):
    """Inline code; empty text stays empty."""
    text = _one_line(text)
    return '``%s``' % text if text else ''


def inline(text):
    """schema.yaml's prose: `back-quoted` parts become code, the rest is
    plain text.  Each code part is fenced with escaped spaces, which
    render as nothing, so it may touch a letter."""
    parts = _one_line(text).split('`')
    if len(parts) % 2 == 0:         # an odd backquote: all text
        return escape(text)
    return ''.join('\\ %s\\ ' % literal(part) if i % 2
                   else _MARKUP.sub(r'\\\1', part)
                   for i, part in enumerate(parts))


def title(text, level=1):
    """A section title: level 1 under the page title, level 2 below."""
    return [text, _SECTION_CHARS[level] * len(text), '']


def list_table(headers, rows, widths=None):
    """A list-table; every cell is one line of inline markup."""
    lines = ['.. list-table::', '   :header-rows: 1']
    if widths:
        lines.append('   :widths: ' + ' '.join(str(w) for w in widths))
    lines.append('')
    for row in [headers] + list(rows):
        for column, cell in enumerate(row):
            lines.append(('   * -' if column == 0 else '     -')
                         + (' ' + cell if cell else ''))
    return lines + ['']
