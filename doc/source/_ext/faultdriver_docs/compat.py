"""What faultdriver assumes about Nova's internals, by when it is checked."""

from faultdriver_docs import rst

#: When each group of assumptions is checked (see faultdriver.novacompat).
GROUPS = {
    'driver': 'At every FaultDriver start',
    'fake_numa': 'When fake_numa is the inner driver',
    'harness': 'In the test harness (fixture, embedded Nova)',
    'scenario': 'Log lines scenario expectations count',
}


def assumptions():
    """One table per group: the Nova symbol, what is assumed of it, and
    the faultdriver feature that needs it."""
    from faultdriver import novacompat

    lines = []
    for group in novacompat.GROUPS:
        rows = [[rst.literal(a.symbol), rst.escape(a.shape.what),
                 rst.escape(a.feature)]
                for a in novacompat.assumptions((group,))]
        if not rows:
            continue
        lines += rst.title('%s (%s)' % (GROUPS[group], group))
        lines += rst.list_table(['Nova symbol', 'Assumed', 'Needed by'],
                                rows, widths=[35, 35, 30])
    return lines
