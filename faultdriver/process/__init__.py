"""The process tier: faultdriver inside real nova-compute processes.

Everything runs on 127.0.0.1 of this machine: MariaDB and RabbitMQ from
the distribution's packages, placement and nova-api under gunicorn,
nova-conductor, nova-scheduler and two or more nova-compute processes
whose ``compute_driver`` is ``faultdriver.FaultDriver``.  A crash here is
a real process exit; a restart is a new process reading the same
nova.conf and state path.
"""
