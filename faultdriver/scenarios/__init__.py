"""Bundled scenario files."""
