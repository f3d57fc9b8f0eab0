"""What FaultDriver adds to a driver call, against the least any Python
delegation costs.

For cheap inner calls (the fake driver's ``list_instance_uuids`` and
``get_available_nodes``) it times, in one run:

* ``direct``: the inner driver's bound method;
* ``forwarder``: a plain function forwarding ``*args, **kwargs`` to the
  inner driver's method, looked up at call time as any delegation must
  (one bound once would miss a method patched later): the floor for any
  wrapper;
* ``wrapped``: FaultDriver with no rules;
* ``wrapped+100``: FaultDriver with 100 enabled rules on other points.

and reports each wrapper's *added* cost (its time minus ``direct``) as a
multiple of the forwarder's added cost.  Targets: no rules <= 2x, 100
non-matching rules <= 3x.  Exit status 1 if a target is missed.

Run: ``tox -e bench`` or ``python benchmarks/overhead.py [--json]``.
"""

import argparse
import json
import os
import sys
import timeit
import warnings

os.environ.setdefault('OS_NOVA_DISABLE_EVENTLET_PATCHING', 'True')
warnings.simplefilter('ignore')

TARGETS = {'wrapped': 2.0, 'wrapped+100': 3.0}
METHODS = ('list_instance_uuids', 'get_available_nodes')


def make_driver(rules):
    from nova import conf as nova_conf
    from nova.virt import fake

    from faultdriver import conf
    from faultdriver import driver
    CONF = nova_conf.CONF
    conf.register_opts(CONF)
    if not CONF._args:
        CONF([], project='nova', default_config_files=[])
    CONF.set_override('inner_driver', 'fake_small', 'fault_injection')
    CONF.set_override('enabled', True, 'fault_injection')
    CONF.set_override('rules', rules, 'fault_injection')
    return driver.FaultDriver(fake.FakeVirtAPI())


def other_rules(count):
    from faultdriver import points
    names = [p for p in points.catalogue() if p not in METHODS]
    return ['%s%s: log(bench)' % (names[i % len(names)],
                                  '' if i < len(names) else '.after')
            for i in range(count)]


def forwarders(inner):
    """The plain forwarders: each looks the method up on the inner driver
    at call time, as any delegation must (a wrapper that bound it once
    would miss a method patched later), then forwards the arguments."""
    def list_instance_uuids(*args, **kwargs):
        return inner.list_instance_uuids(*args, **kwargs)

    def get_available_nodes(*args, **kwargs):
        return inner.get_available_nodes(*args, **kwargs)

    return {'list_instance_uuids': list_instance_uuids,
            'get_available_nodes': get_available_nodes}


def best(calls, number, repeat):
    """Fastest time per call of each callable, measured interleaved so
    that drift in machine load hits every label alike."""
    fastest = dict.fromkeys(calls, float('inf'))
    for _ in range(repeat):
        for label, call in calls.items():
            fastest[label] = min(fastest[label],
                                 timeit.timeit(call, number=number) / number)
    return fastest


def measure(number, repeat):
    plain = make_driver([])
    loaded = make_driver(other_rules(100))
    inner = plain.inner
    assert len(loaded.engine.rules()) == 100
    results = {}
    for name, forwarder in forwarders(inner).items():
        method = getattr(inner, name)
        calls = {'direct': method, 'forwarder': forwarder,
                 'wrapped': getattr(plain, name),
                 'wrapped+100': getattr(loaded, name)}
        seconds = best(calls, number, repeat)
        floor = seconds['forwarder'] - seconds['direct']
        results[name] = {
            'ns_per_call': {k: round(v * 1e9, 1) for k, v in seconds.items()},
            'added_vs_forwarder': {
                label: round((seconds[label] - seconds['direct']) / floor, 2)
                for label in TARGETS}}
    return results


def main():
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--number', type=int, default=200000)
    parser.add_argument('--repeat', type=int, default=7)
    parser.add_argument('--json', action='store_true')
    args = parser.parse_args()
    results = measure(args.number, args.repeat)
    missed = [(m, label) for m, r in results.items()
              for label, ratio in r['added_vs_forwarder'].items()
              if ratio > TARGETS[label]]
    if args.json:
        print(json.dumps(results, indent=2))
    else:
        for method, result in results.items():
            ns = result['ns_per_call']
            print('%-20s direct %6.1f ns  forwarder %6.1f ns  wrapped %6.1f '
                  'ns  wrapped+100 %6.1f ns' % (
                      method, ns['direct'], ns['forwarder'], ns['wrapped'],
                      ns['wrapped+100']))
            for label, ratio in result['added_vs_forwarder'].items():
                print('%20s added cost %s = %.2fx the forwarder\'s '
                      '(target <= %.0fx)' % ('', label, ratio,
                                             TARGETS[label]))
    for method, label in missed:
        print('MISSED: %s %s' % (method, label))
    return 1 if missed else 0


if __name__ == '__main__':
    sys.exit(main())
