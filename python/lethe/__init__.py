"""Python helpers for Lethe: thin wrappers over its tools.

Runs on Debian's /usr/bin/python3 with Debian's packages only.
"""
