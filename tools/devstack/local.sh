#!/bin/bash
# devstack runs local.sh at the end of stack.sh (tools/devstack-node.sh
# puts this file there on libvirt nodes).  In a systemd-nspawn container
# the cgroup v1 controllers are mounted read-only, so libvirt cannot make
# a guest's cpu/cpuset groups ("Failed to create v1 controller cpu for
# group: Read-only file system": every boot failed).  Without cgroup
# controllers libvirt still pins vCPUs, by sched_setaffinity.
set -o errexit
if ! sudo grep -q '^cgroup_controllers' /etc/libvirt/qemu.conf; then
    echo 'cgroup_controllers = [ ]' | sudo tee -a /etc/libvirt/qemu.conf
    sudo systemctl restart libvirtd
fi
