"""Arms in their own Python environments: an engine version, a patched wheel or a stack whose pins
clash with the main one, measured beside the main environment's arms in one session.

An environment is a list of pip requirements (pins, local wheels or folders) plus packages to remove
after installing. edgebench creates each distinct one once with `uv`, in a folder named by the digest
of its spec (`spec`), and every process of an arm that names it runs under its interpreter
(`record`, `call`), with edgebench's own package importable.
"""
