"""Compute drivers of faultdriver's own, to wrap where Nova's fakes fall
short (see ``numa_fake``)."""
