"""Reaching the computes of a cloud faultdriver did not build (issue 42).

The pieces of the future ``cloud`` tier that reach a compute from
another machine, over SSH only -- never a network listener:

* :mod:`.errors`: the refusals, each naming the host and the fact;
* :mod:`.transport`: OpenSSH with a ControlMaster per host and the
  compute's control socket forwarded to a private local socket (or,
  where sshd forbids that, relayed through ``faultdriver ctl relay``);
* :mod:`.relay`: that relay, stdio to the control socket and back;
* :mod:`.hosthelper`: a stdlib-only script piped to ``python3 -`` on
  the host, for what must work while nova-compute is down;
* :mod:`.helper`: the runner's side of it;
* :mod:`.services`: the systemd and docker/podman drivers;
* :mod:`.audit`: every change made to a host, and its undoing.

Nothing here imports another tier (``faultdriver.process``,
``faultdriver.harness``): a cloud is reached, never started.
"""
