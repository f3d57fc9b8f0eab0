"""``faultdriver validate``: check rules or a nova.conf before deploying."""

from cliff import lister

from faultdriver import exception


class Validate(lister.Lister):
    """Validate fault rules, or the [fault_injection] section of a file.

    Each argument is either a path to a nova.conf-style file or a rule.
    Exit code 2 and a message naming the rule if anything is wrong.
    """

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('sources', nargs='+', metavar='FILE|RULE')
        return parser

    def take_action(self, parsed_args):
        import os
        from oslo_config import cfg
        from faultdriver import conf
        from faultdriver import inner
        from faultdriver.tracker import patches as tracker_patches
        rows = []
        rule_type = conf.RuleType()
        for source in parsed_args.sources:
            if not os.path.isfile(source):
                rows.append(('argument', str(rule_type(source))))
                continue
            config = cfg.ConfigOpts()
            conf.register_opts(config)
            config([], default_config_files=[source])
            try:
                rules = list(config.fault_injection.rules or ())
            except (ValueError, cfg.Error) as exc:
                raise exception.ConfigError('%s: invalid [fault_injection] '
                                            'rules: %s' % (source, exc))
            if config.fault_injection.inner_driver:
                inner.load_class(config.fault_injection.inner_driver)
            tracker_patches.load(config.fault_injection.tracker_patches)
            rows.extend((source, str(rule)) for rule in rules)
        return ('Source', 'Rule (canonical form)'), rows
