"""Files included from outside ``doc/source`` (``doc/findings.rst``,
``doc/inner-driver.rst``) are kept where they are and edited on their own
schedule.  The one slip in them that docutils reports as a warning, a
section underline shorter than its title, would fail the ``-W`` build of
every page; such an underline is lengthened as the file is read, and the
build log names the line, so it still gets fixed at the source.
"""

import re

from sphinx.util import logging

LOG = logging.getLogger(__name__)
#: A title line, then an underline of one punctuation character.
_TITLE = re.compile(r'^(?P<title>\S.*)\n(?P<line>([=\-~^"\'`#*+.:_])\3{2,})$',
                    re.M)


def lengthen_underlines(app, relative_path, parent_docname, content):
    if not str(relative_path).startswith('..'):
        return      # doc/source's own pages are held to -W as written
    text = content[0]

    def fix(match):
        title, line = match.group('title'), match.group('line')
        if len(line) >= len(title) or set(title) == set(line[0]):
            return match.group(0)
        number = text.count('\n', 0, match.start('line')) + 1
        LOG.info('%s:%d: section underline shorter than its title; '
                 'lengthened for this build', relative_path, number)
        return '%s\n%s' % (title, line[0] * len(title))

    content[0] = _TITLE.sub(fix, text)
