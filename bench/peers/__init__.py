"""Builders of the kernels the static SASS profile compares flashc with.

Peer code is fetched into a cache directory outside the repository
(cache.cache_dir()) and compiled there; none of it is committed.
"""
