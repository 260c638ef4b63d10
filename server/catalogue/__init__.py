"""catalogue: the @imqueue packages as compiled in, with nothing read at run time.

packages.py  the catalogue, the exclusive pairs and their advisories, status shaping

Their facts from imqueue.org/status.json are read by docs (package_facts.py, package_status.py),
beside the corpus that stores a copy of it: catalogue sits below docs, and imports none of it.
"""
