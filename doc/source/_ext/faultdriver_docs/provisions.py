"""What each tier provides, and what needs each provision, from the
declarations (``faultdriver.scenario.tiers``: ``Provision`` and each
tier's ``provides``; ``tiers.needs`` on the steps, expectations and
scenario keys; ``needs`` on the action classes; the exporter's
``PROVIDES``)."""

import inspect

from faultdriver_docs import rst


def _needs(function):
    """``always, given`` of a ``tiers.needs`` declaration, or None."""
    declared = getattr(function, 'needs', None)
    if declared is None:
        return None
    return declared.always, dict(declared.given)


def _users(provision):
    """What needs ``provision``: ``[text]``, each reStructuredText."""
    from faultdriver import actions
    from faultdriver.actions import base
    from faultdriver.scenario import expect
    from faultdriver.scenario import model
    from faultdriver.scenario import stepkinds
    from faultdriver.scenario import steps

    found = ['a rule at a point of family %s' % rst.literal(family)
             for family in provision.points]
    # dir: the steps' methods include the recovery mixin's.
    kinds = [('step', name[3:].replace('_', '-'),
              getattr(steps.Steps, name))
             for name in sorted(dir(steps.Steps)) if name.startswith('do_')]
    kinds += [('step', kind.name, kind.run)
              for kind in stepkinds.registered()]
    kinds += [('expectation', name, check)
              for name, check in sorted(expect.KINDS.items())]
    kinds += [('topology key', name.replace('_', '-'), value.fget)
              for name, value in sorted(vars(model.Scenario).items())
              if isinstance(value, property)]
    for what, name, function in kinds:
        declared = _needs(function)
        if declared is None:
            continue
        always, given = declared
        if provision in always:
            found.append('%s %s' % (what, rst.literal(name)))
        found += ['%s %s with %s' % (what, rst.literal(name),
                                     rst.literal(argument.replace('_', '-')))
                  for argument, needed in given.items()
                  if needed is provision]
    for name, plugin in sorted(actions.load_all().items()):
        if plugin.needs.__func__ is base.Action.needs.__func__:
            continue
        source = inspect.getsource(plugin.needs)
        if 'Provision.%s' % provision.name in source:
            # The docstring is reStructuredText, as the actions page's.
            found.append('action %s (%s)' % (rst.literal(name), ' '.join(
                inspect.getdoc(plugin.needs).split()).rstrip('.')))
    return found


def tiers():
    """A table of what each tier (and an exported test) provides, then
    what needs each provision."""
    from faultdriver import export
    from faultdriver.scenario import tiers as tiers_module

    names = list(tiers_module.NAMES)
    rows = [[rst.escape(p.text)] + [
        'yes' if p in tiers_module.get(name).provides else ''
        for name in names] + ['yes' if p in export.PROVIDES else '']
        for p in tiers_module.Provision]
    lines = rst.list_table(
        ['Provision'] + [rst.literal(name) for name in names]
        + ['exported test'], rows)
    for provision in tiers_module.Provision:
        lines += rst.title(provision.text[0].upper() + provision.text[1:])
        why = provision.why[0].upper() + provision.why[1:]
        lines += [rst.inline(why.replace('``', '`')) + '.', '']
        users = _users(provision)
        lines += ['Needed by: %s.' % ('; '.join(users) or 'nothing yet'),
                  '']
    return lines
