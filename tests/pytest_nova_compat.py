"""Let pytest run tests built on Nova's test base classes.

pytest binds the test method onto the TestCase instance while it runs and
deletes it afterwards; ``nova.test.TestCase._clear_attrs`` (a cleanup)
has already deleted every public instance attribute by then, so pytest's
``delattr`` fails every test.  Keep that one attribute.  Only applied once
collection has imported ``nova.test``, so nova-free tests stay nova-free.
"""

import sys


def _keep_test_method(clear_attrs):
    def clear_attrs_but_the_test_method(self):
        name = self._testMethodName
        bound = self.__dict__.get(name)
        clear_attrs(self)
        if bound is not None:
            self.__dict__[name] = bound
    clear_attrs_but_the_test_method.faultdriver_compat = True
    return clear_attrs_but_the_test_method


def pytest_collection_finish(session):
    test = sys.modules.get('nova.test')
    if test is None:
        return
    if not getattr(test.TestCase._clear_attrs, 'faultdriver_compat', False):
        test.TestCase._clear_attrs = _keep_test_method(
            test.TestCase._clear_attrs)
