"""Running faultdriver inside Nova's in-process functional framework.

Built on ``nova.tests.functional`` (real API, conductor, scheduler,
placement and compute services in one process); used by the test
fixture and by the scenario runner.
"""
