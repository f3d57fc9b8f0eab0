pytest_plugins = ['tests.pytest_nova_compat']
