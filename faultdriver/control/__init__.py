"""Run-time control of a running FaultDriver through a local socket.

nova.conf rules need a restart to change, and SIGHUP does not reload
Nova's configuration in its default threading mode, so a FaultDriver
with ``[fault_injection] control_socket`` set listens on that AF_UNIX
socket (mode 0600, never a network port) and ``faultdriver ctl`` talks
to it.

* :mod:`.protocol`: the wire format and its errors;
* :mod:`.listen`: creating the socket file safely (mode, stale files);
* :mod:`.ops`: what each request does to the engine;
* :mod:`.server`: the accept loop and connection threads;
* :mod:`.client`: the client ``faultdriver ctl`` and tests use.
"""
